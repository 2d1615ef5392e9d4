"""Meta-pretraining (004): a cross-lingual model initialised from a monolingual one."""
