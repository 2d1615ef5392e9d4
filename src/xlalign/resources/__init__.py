"""Downloads, package-registry fetches, and the embedded offline default built from them."""
