"""Bilingual dictionaries: MUSE's format and gold splits with disjoint source words."""
