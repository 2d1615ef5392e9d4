"""Snakemake job: one bilingual dictionary in MUSE format.

See xlalign.resources.embedded.dictionaries.
"""

from xlalign.resources.embedded import dictionaries as d
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    src, tgt = snakemake.wildcards.src, snakemake.wildcards.tgt
    out, stats = snakemake.output.dic, snakemake.output.stats
    kind = snakemake.rule.rsplit("_", 1)[-1]
    if kind == "freedict":
        d.build_freedict(snakemake.input[0], src, tgt, out, stats)
    elif snakemake.wildcards.kind == "cedict":
        d.build_cedict(out, stats, direction=f"{src}-{tgt}")
    else:
        other = tgt if src == "en" else src
        d.build_cldr(other, out, stats, direction="en-xx" if src == "en" else "xx-en")
