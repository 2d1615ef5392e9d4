"""Zero-shot cross-lingual evaluation of encoders, XTREME style (Hu et al. 2020).

Fine-tune on English, evaluate on every other language: token classification (NER, POS),
extractive QA, sentence-pair classification and dependency parsing, plus retrieval
without fine-tuning. One module per task family; :mod:`.data` holds the records every
loader writes and every task reads, :mod:`.base` the interface a task family implements,
:mod:`.finetune` the one fine-tuning loop.
"""
