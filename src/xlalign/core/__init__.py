"""Shared foundations: errors, atomic file I/O, languages, devices (no other xlalign import)."""
