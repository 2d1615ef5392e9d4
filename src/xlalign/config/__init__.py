"""The workflow configuration: JSON Schema validation with defaults, semantic checks and
derived views of a validated config. Imports nothing heavy: the Snakefile imports it.
"""

from xlalign.config.validate import (
    ALIGNED_NAMES,
    SCHEMA_PATH,
    aligned_name,
    available_spaces,
    bible_translation,
    compared_spaces,
    config_hash,
    induction_space_name,
    load,
    load_schema,
    max_sentences_for,
    parallel_pairs,
    sample_seed_for,
    sample_seeds,
    segment_filter,
    segment_tool,
    sources_for,
    static_methods,
    validate,
)

__all__ = [
    "ALIGNED_NAMES",
    "SCHEMA_PATH",
    "aligned_name",
    "available_spaces",
    "bible_translation",
    "compared_spaces",
    "config_hash",
    "induction_space_name",
    "load",
    "load_schema",
    "max_sentences_for",
    "parallel_pairs",
    "sample_seed_for",
    "sample_seeds",
    "segment_filter",
    "segment_tool",
    "sources_for",
    "static_methods",
    "validate",
]
