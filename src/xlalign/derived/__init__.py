"""Derived languages (001): English transliterated, inverted or re-ordered by its parse."""
