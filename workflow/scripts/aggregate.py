"""Snakemake job: the aggregation baseline (Bommasani et al. 2020) of one language and seed,
from the sums the teacher's encoder pass left (or, without them, its own encoder pass)."""

import time
from pathlib import Path

from xlalign.corpus.vocab import read_vocab
from xlalign.static.aggregation import (
    aggregate_vectors,
    remove_checkpoint,
    save_aggregated,
    vectors_from_teacher,
)
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    out, p = snakemake.output, snakemake.params
    vocab = read_vocab(snakemake.input.vocab)
    seed = int(snakemake.wildcards.seed)
    settings = {
        "layer": p.layer,
        "pooling": p.pooling,
        "max_contexts": p.max_contexts,
        "seed": seed,
        "max_length": p.max_length,
        "language": snakemake.wildcards.lang,
        "missing": "zero",
    }
    start = time.perf_counter()
    resume = {}
    record = {}  # the teacher's forward, when its sums are used
    vectors = None
    cache = snakemake.input.get("cache", [])  # the teacher cache directory, or none
    if cache:
        cache_dir = Path(cache if isinstance(cache, str) else cache[0])
        vectors = vectors_from_teacher(
            cache_dir, snakemake.input.txt, vocab, snakemake.input.encoder, **settings,
            stats_out=record,
        )  # fmt: skip
    if vectors is None:
        vectors = aggregate_vectors(
            snakemake.input.txt,
            vocab,
            snakemake.input.encoder,
            batch_tokens=p.batch_tokens,
            threads=snakemake.threads,
            checkpoint_dir=snakemake.params.checkpoint,
            keep_checkpoint=True,  # until the space is written
            stats_out=resume,
            budget_mb=snakemake.config["memory"]["block_mb"],
            **settings,
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
            "seed": seed,
            "seconds": time.perf_counter() - start,
            # whose encoder pass gave the vectors: the teacher cache's, or this job's own
            "encoder_pass": "aggregate" if resume else "teacher",
            # how the layer was computed: "truncated" or "full (why)"
            "forward": resume.get("forward", record.get("forward")),
            # resumed_from_chunk and chunks only when resumed (otherwise as before)
            **(
                {}
                if resume.get("resumed_from_chunk") is None
                else {k: v for k, v in resume.items() if k != "forward"}
            ),
        },
        language=snakemake.wildcards.lang,
    )
    remove_checkpoint(snakemake.params.checkpoint)
