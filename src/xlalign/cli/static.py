"""Static-embedding commands: ``extract`` (a corpus to X2S-M or aggregated vectors) and
``x2static`` (X2S-M from a teacher cache, data-parallel with ``--gpus``)."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from xlalign.cli.common import (
    add_space_reading,
    check_paths,
    checkpoint_minutes,
    input_dir,
    input_file,
    input_space,
    nonnegative_float,
    nonnegative_int,
    output_dir,
    output_file,
    positive_float,
    positive_int,
    report,
    space_sides,
)
from xlalign.core.cadence import DEFAULT_INTERVAL_MINUTES

if TYPE_CHECKING:
    from xlalign.static.x2static import X2StaticJob


def add_extract(sub: argparse._SubParsersAction) -> None:
    """The ``extract`` command."""
    p = sub.add_parser(
        "extract", help="static embeddings from an encoder: X2S-M or the aggregation baseline"
    )
    p.add_argument("--lang", required=True)
    p.add_argument(
        "--corpus", required=True, type=input_file, help="segmented: one sentence per line, tokens"
    )
    p.add_argument(
        "--encoder", required=True, type=input_dir, help="a local Hugging Face checkpoint directory"
    )
    p.add_argument("--output-dir", "-o", required=True, type=output_dir)
    p.add_argument("--method", choices=["x2s-m", "aggregate"], default="x2s-m")
    p.add_argument("--layer", type=nonnegative_int, default=6)
    p.add_argument("--pooling", choices=["mean", "first", "last"], default="mean")
    p.add_argument(
        "--context",
        choices=["others", "all-words", "x2static-code"],
        default="others",
        help="others: the paper's wording; x2static-code: X2Static's public code",
    )
    p.add_argument("--min-count", type=positive_int, default=10)
    p.add_argument("--max-vocab", type=positive_int, default=200_000)
    p.add_argument("--keep-case", action="store_true", help="do not lowercase the vocabulary")
    p.add_argument("--epochs", type=positive_int, default=5)
    p.add_argument("--batch-sentences", type=positive_int, default=128)
    p.add_argument("--negatives", type=positive_int, default=10)
    p.add_argument("--subsample-t", type=nonnegative_float, default=5e-6)
    p.add_argument("--lr", type=positive_float, default=1e-3)
    p.add_argument("--max-contexts", type=positive_int, default=10, help="aggregation: K contexts")
    p.add_argument("--max-length", type=positive_int, default=200)
    p.add_argument("--batch-tokens", type=positive_int, default=8192)
    p.add_argument("--seed", type=nonnegative_int, default=1)
    p.set_defaults(func=_cmd_extract)


def _cmd_extract(args: argparse.Namespace) -> None:
    """Vocabulary -> teacher cache -> X2S-M (or the aggregation baseline) for one corpus."""
    from xlalign.core.languages import get_language
    from xlalign.corpus.vocab import build_vocab, write_vocab

    get_language(args.lang, key="--lang")
    out = Path(args.output_dir)
    stem = out / f"{args.lang}.{args.method}"
    check_paths(
        inputs=[args.corpus, args.encoder],
        outputs=[
            out / f"{args.lang}.vocab.tsv",
            f"{stem}.vec",
            *space_sides(f"{stem}.npy"),
            f"{stem}.json",
        ],
        replaced_dirs=[out / f"{args.lang}.teacher", out / f"{args.lang}.checkpoint"],
        args=args,
    )
    vocab = build_vocab(
        args.corpus,
        min_count=args.min_count,
        max_size=args.max_vocab,
        lowercase=not args.keep_case,
        language=args.lang,
    )
    vocab_path = out / f"{args.lang}.vocab.tsv"
    write_vocab(vocab, vocab_path)
    if args.method == "x2s-m":
        from xlalign.static.teacher import build_teacher_cache
        from xlalign.static.x2static import X2StaticArgs, X2StaticJob, train_and_save

        cache_dir = build_teacher_cache(
            args.corpus,
            vocab,
            args.encoder,
            out / f"{args.lang}.teacher",
            layer=args.layer,
            pooling=args.pooling,
            context=args.context,
            max_length=args.max_length,
            batch_tokens=args.batch_tokens,
            progress=not args.quiet,
            language=args.lang,
        )
        job = X2StaticJob(
            cache_dir=cache_dir,
            vocab_path=vocab_path,
            vec_path=Path(f"{stem}.vec"),
            npy_path=Path(f"{stem}.npy"),
            stats_path=Path(f"{stem}.json"),
            checkpoint_dir=out / f"{args.lang}.checkpoint",
            language=args.lang,
            args=X2StaticArgs(
                epochs=args.epochs,
                batch_sentences=args.batch_sentences,
                negatives=args.negatives,
                subsample_t=args.subsample_t,
                lr=args.lr,
                seed=args.seed,
            ),
        )
        train_and_save(job, progress=not args.quiet, stats={"method": args.method})
    else:
        from xlalign.static.aggregation import aggregate_vectors, save_aggregated

        vectors = aggregate_vectors(
            args.corpus,
            vocab,
            args.encoder,
            layer=args.layer,
            pooling=args.pooling,
            max_contexts=args.max_contexts,
            seed=args.seed,
            max_length=args.max_length,
            batch_tokens=args.batch_tokens,
            language=args.lang,
            missing="zero",
        )
        save_aggregated(
            vocab.words,
            vectors,
            vec_path=f"{stem}.vec",
            npy_stem=stem,
            stats_path=f"{stem}.json",
            stats={"max_contexts": args.max_contexts, "method": args.method},
            language=args.lang,
        )
    print(f"{stem}.vec")


def _optional_float(text: str) -> float | None:
    return None if text.strip().lower() == "none" else nonnegative_float(text)


def add_x2static(sub: argparse._SubParsersAction) -> None:
    """The ``x2static`` command."""
    p = sub.add_parser(
        "x2static",
        help="X2S-M static vectors from a teacher cache (data-parallel over GPUs with --gpus)",
    )
    p.add_argument(
        "cache", type=input_dir, help="teacher cache directory (the one holding meta.json)"
    )
    p.add_argument("vocab", type=input_file, help="the vocabulary TSV the cache was built with")
    p.add_argument("--lang", required=True)
    p.add_argument(
        "--vec",
        required=True,
        type=output_file,
        help="output .vec; other outputs default to its stem",
    )
    p.add_argument(
        "--npy", type=output_file, help="output .npy, with STEM.vocab.txt (default: STEM.npy)"
    )
    p.add_argument("--stats", type=output_file, help="stats JSON (default: STEM.json)")
    p.add_argument(
        "--checkpoint-dir",
        type=output_dir,
        help="resumable checkpoints (default: STEM.checkpoint)",
    )
    p.add_argument(
        "--gpus",
        type=nonnegative_int,
        default=0,
        help="N > 1: data-parallel, one process per GPU under torchrun (as many as are "
        "visible; a single process when fewer than 2)",
    )
    t = p.add_argument_group(
        "training (defaults: X2Static's, see xlalign.static.x2static.X2StaticArgs)"
    )
    unset = argparse.SUPPRESS  # an option not given keeps X2StaticArgs' default
    t.add_argument("--epochs", type=positive_int, default=unset)
    t.add_argument("--batch-sentences", type=positive_int, default=unset)
    t.add_argument("--negatives", type=positive_int, default=unset)
    t.add_argument(
        "--subsample-t", type=_optional_float, default=unset, help="0 or none: keep every word"
    )
    t.add_argument("--lr", type=positive_float, default=unset)
    t.add_argument("--seed", type=nonnegative_int, default=unset)
    t.add_argument(
        "--checkpoint-every-batches",
        type=nonnegative_int,
        default=unset,
        help="batches between chances to checkpoint (0: epoch ends only)",
    )
    t.add_argument(
        "--checkpoint-minutes",
        type=checkpoint_minutes,
        default=unset,
        metavar="M",
        help="minutes of work between two checkpoints, taken at the next chance (0: every "
        "chance; none: on SIGTERM only; a shorter run writes none; default: "
        f"{DEFAULT_INTERVAL_MINUTES:g})",
    )
    t.add_argument(
        "--log-every", type=positive_int, default=unset, help="batches per loss-curve point"
    )
    t.add_argument("--init", choices=["uniform", "vectors"], default=unset)
    t.add_argument(
        "--init-vectors",
        type=input_space,
        default=unset,
        help="with --init vectors: the space whose rows start",
    )
    add_space_reading(t, suppress=True)  # of --init-vectors
    t.add_argument("--device", default=unset, help="torch device (default: cuda if visible)")
    t.add_argument("--keep-checkpoint", action="store_true", default=unset)
    p.set_defaults(func=_cmd_x2static)


def x2static_job(args: argparse.Namespace) -> X2StaticJob:
    """The job that parsed ``xlalign x2static`` arguments describe (the inverse of
    :func:`xlalign.static.x2static.x2static_argv`)."""
    from xlalign.static.x2static import X2StaticArgs, X2StaticJob

    vec = Path(args.vec)
    stem = vec.with_suffix("") if vec.suffix == ".vec" else vec
    given = {f.name for f in dataclasses.fields(X2StaticArgs)} & set(vars(args))
    return X2StaticJob(
        cache_dir=args.cache,
        vocab_path=args.vocab,
        vec_path=vec,
        npy_path=args.npy or f"{stem}.npy",
        stats_path=args.stats or f"{stem}.json",
        checkpoint_dir=args.checkpoint_dir or f"{stem}.checkpoint",
        language=args.lang,
        args=X2StaticArgs(**{k: getattr(args, k) for k in given}),
    )


def _cmd_x2static(args: argparse.Namespace) -> None:
    """Teacher cache + vocabulary -> X2S-M vectors, in one process or one per GPU."""
    from xlalign.encoders import distributed
    from xlalign.static.x2static import run_x2static_job

    job = x2static_job(args)
    npy = str(job.npy_path)
    check_paths(
        inputs=[job.cache_dir, job.vocab_path, getattr(args, "init_vectors", None)],
        outputs=[job.vec_path, *space_sides(npy), job.stats_path],
        replaced_dirs=[job.checkpoint_dir],
        args=args,
    )
    worker = distributed.in_torchrun()
    if worker and int(os.environ["RANK"]) > 0:
        logging.getLogger().setLevel(logging.ERROR)  # rank 0 speaks for the run
    stats = run_x2static_job(job, gpus=args.gpus, progress=not args.quiet)
    if stats is not None and not worker:  # torchrun's rank 0 leaves it to its launcher
        report(stats, args)
