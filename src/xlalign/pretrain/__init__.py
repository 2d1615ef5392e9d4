"""Continued pre-training of a multilingual encoder with MLM and alignment objectives.

The paper's own contribution (000 section 4.1, Appendix C) and the objectives it is compared
with (001 ALIGN-MLM / DICT-MLM / TLM, 002 linear mapping / L2 / contrastive alignment, 003
Cao et al.'s adjustment and continual learning). One training loop (:mod:`.trainer`)
combines objectives (:mod:`.objectives`) built from data (:mod:`.text`, :mod:`.pairs`) and
losses (:mod:`.losses`, :mod:`.linear_maps`); named recipes (:mod:`.recipes`) are the rows of
the papers' tables.
"""
