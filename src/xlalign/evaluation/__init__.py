"""Evaluation of embedding spaces: bilingual lexicon induction and word similarity."""
