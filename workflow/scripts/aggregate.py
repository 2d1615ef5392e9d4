"""Snakemake job: the aggregation baseline (Bommasani et al. 2020) of one language and seed."""

import time

from xlalign.corpus.vocab import read_vocab
from xlalign.static.aggregation import aggregate_vectors, remove_checkpoint, save_aggregated
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    out, p = snakemake.output, snakemake.params
    vocab = read_vocab(snakemake.input.vocab)
    start = time.perf_counter()
    resume = {}
    vectors = aggregate_vectors(
        snakemake.input.txt,
        vocab,
        snakemake.input.encoder,
        layer=p.layer,
        pooling=p.pooling,
        max_contexts=p.max_contexts,
        seed=int(snakemake.wildcards.seed),
        max_length=p.max_length,
        batch_tokens=p.batch_tokens,
        threads=snakemake.threads,
        language=snakemake.wildcards.lang,
        missing="zero",
        checkpoint_dir=snakemake.params.checkpoint,
        keep_checkpoint=True,  # until the space is written
        stats_out=resume,
    )
    save_aggregated(
        vocab.words,
        vectors,
        vec_path=out.vec,
        npy_stem=str(out.npy)[: -len(".npy")],
        stats_path=out.stats,
        stats={
            "layer": p.layer,
            "pooling": p.pooling,
            "max_contexts": p.max_contexts,
            "seed": int(snakemake.wildcards.seed),
            "seconds": time.perf_counter() - start,
            # resumed_from_chunk and chunks only when resumed (otherwise as before)
            **({} if resume["resumed_from_chunk"] is None else resume),
        },
        language=snakemake.wildcards.lang,
    )
    remove_checkpoint(snakemake.params.checkpoint)
