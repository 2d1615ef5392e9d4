"""The embedded offline default: models and data rebuilt from package-registry files."""
