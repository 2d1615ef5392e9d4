"""Hugging Face encoders: loading, layer access, word pooling, distributed launch."""
