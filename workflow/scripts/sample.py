"""Snakemake job: stage `sample` for one language (see xlalign.corpus.sample)."""

from xlalign.corpus.sample import sample_corpus
from xlalign.corpus.sources import iter_sources
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    specs = list(zip([s["type"] for s in snakemake.params.sources], snakemake.input, strict=True))
    sample_corpus(
        iter_sources(specs, language=snakemake.wildcards.lang),
        snakemake.output.txt,
        snakemake.output.stats,
        language=snakemake.wildcards.lang,
        max_sentences=snakemake.params.max_sentences,
        seed=int(snakemake.wildcards.sseed),
        strategy=snakemake.params.strategy,
        max_paragraphs_scanned=snakemake.params.max_paragraphs_scanned,
        sources=[
            {**s, "path": str(p)}
            for s, p in zip(snakemake.params.sources, snakemake.input, strict=True)
        ],
    )
