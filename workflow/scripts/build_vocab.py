"""Snakemake job: the vocabulary of one language's segmented corpus (see xlalign.corpus.vocab)."""

from xlalign.core.io import write_json
from xlalign.corpus.vocab import build_vocab, write_vocab
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake) as log:
    opts = snakemake.params.vocab
    vocab = build_vocab(
        snakemake.input[0],
        min_count=opts["min_count"],
        max_size=opts["max_size"],
        lowercase=opts["lowercase"],
        language=snakemake.wildcards.lang,
    )
    write_vocab(vocab, snakemake.output.tsv)
    stats = {
        "language": snakemake.wildcards.lang,
        "words": len(vocab),
        "tokens_covered": int(vocab.counts.sum()),
        "min_count_in_vocab": int(vocab.counts.min()),
        **{f"param.{k}": v for k, v in opts.items()},
    }
    write_json(snakemake.output.stats, stats)
    log.info("%d words", len(vocab))
