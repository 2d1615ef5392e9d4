"""Alignment analyses of encoders: alignment scores, L2 distances, word alignment by layer."""
