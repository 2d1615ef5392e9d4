"""Cross-lingual mapping: VecMap, dictionary induction, mapping into the hub, selection."""
