"""Snakemake job: stage `segment` for one language (see xlalign.corpus.segment)."""

from xlalign.corpus.segment import make_segmenter, segment_file
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    lang = snakemake.wildcards.lang
    segmenter, info = make_segmenter(
        lang,
        tool=snakemake.params.tool,
        udpipe_model=snakemake.input.model[0] if snakemake.input.model else None,
        fallback=snakemake.params.fallback,
    )
    segment_file(
        snakemake.input.txt,
        snakemake.output.txt,
        snakemake.output.stats,
        lang,
        segmenter,
        info,
        min_tokens=snakemake.params.min_tokens,
        min_paragraph_sentences=snakemake.params.min_paragraph_sentences,
        max_sentences=snakemake.params.max_sentences,
    )
