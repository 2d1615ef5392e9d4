"""``xlalign <command>``: the library's stages outside Snakemake.

Each command runs the same function the workflow's job runs, on explicit files, the way
VecMap and MUSE users run their scripts.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from xlalign.core.errors import XlalignError

if TYPE_CHECKING:
    from xlalign.static.x2static import X2StaticJob


def _cmd_sample(args: argparse.Namespace) -> None:
    from xlalign.corpus.sample import sample_corpus
    from xlalign.corpus.sources import SOURCE_TYPES, iter_sources

    specs = []
    for item in args.source:
        kind, sep, path = item.partition(":")
        if not sep or kind not in SOURCE_TYPES:
            raise XlalignError(
                f"--source {item!r}: expected TYPE:PATH with TYPE one of {', '.join(SOURCE_TYPES)}"
            )
        specs.append((kind, path))
    stats = sample_corpus(
        iter_sources(specs, language=args.lang),
        args.output,
        args.stats or _stats_path(args.output),
        language=args.lang,
        max_sentences=args.max_sentences,
        seed=args.seed,
        strategy=args.strategy,
        max_paragraphs_scanned=args.max_paragraphs_scanned,
        sources=[{"type": k, "path": p} for k, p in specs],
        progress=not args.quiet,
    )
    _report(stats, args)


def _cmd_segment(args: argparse.Namespace) -> None:
    from xlalign.core.languages import get_language
    from xlalign.corpus.segment import make_segmenter, segment_file

    get_language(args.lang, key="--lang")
    segmenter, info = make_segmenter(
        args.lang, tool=args.tool, udpipe_model=args.udpipe_model, fallback=args.fallback
    )
    stats = segment_file(
        args.input,
        args.output,
        args.stats or _stats_path(args.output),
        args.lang,
        segmenter,
        info,
        min_tokens=args.min_tokens,
        min_paragraph_sentences=args.min_paragraph_sentences,
        max_sentences=args.max_sentences,
        progress=not args.quiet,
    )
    _report(stats, args)


def _cmd_extract(args: argparse.Namespace) -> None:
    """Vocabulary -> teacher cache -> X2S-M (or the aggregation baseline) for one corpus."""
    import numpy as np

    from xlalign.core.languages import get_language
    from xlalign.corpus.vocab import build_vocab, write_vocab
    from xlalign.static.spaces import save_space

    get_language(args.lang, key="--lang")
    out = Path(args.output_dir)
    vocab = build_vocab(
        args.corpus,
        min_count=args.min_count,
        max_size=args.max_vocab,
        lowercase=not args.keep_case,
        language=args.lang,
    )
    write_vocab(vocab, out / f"{args.lang}.vocab.tsv")
    stem = out / f"{args.lang}.{args.method}"
    if args.method == "x2s-m":
        from xlalign.static.teacher import TeacherCache, build_teacher_cache
        from xlalign.static.x2static import X2StaticArgs, train_x2static

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
        train_args = X2StaticArgs(
            epochs=args.epochs,
            batch_sentences=args.batch_sentences,
            negatives=args.negatives,
            subsample_t=args.subsample_t,
            lr=args.lr,
            seed=args.seed,
        )
        cache = TeacherCache(cache_dir)
        result = train_x2static(
            cache,
            vocab,
            train_args,
            output_dir=out / f"{args.lang}.checkpoint",
            progress=not args.quiet,
        )
        vectors, stats = result.vectors, result.stats
        keep = cache.occurrence_counts(len(vocab)) > 0
        reason = "never a training target (every occurrence lacked a context)"
    else:
        from xlalign.static.aggregation import aggregate_vectors

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
        stats = {"max_contexts": args.max_contexts}
        keep = np.abs(vectors).sum(axis=1) > 0
        reason = "no occurrence within max_length subwords"
    save_space(
        vocab.words,
        vectors,
        keep,
        vec_path=f"{stem}.vec",
        npy_stem=str(stem),
        stats_path=f"{stem}.json",
        stats={**stats, "method": args.method},
        language=args.lang,
        reason=reason,
    )
    print(f"{stem}.vec")


def x2static_argv(job: X2StaticJob, *, quiet: bool = False) -> list[str]:
    """The ``xlalign`` arguments that run ``job`` (what :func:`_cmd_x2static` parses back)."""
    import dataclasses

    from xlalign.static.x2static import X2StaticArgs

    argv = ["-q"] if quiet else []
    argv += [
        "x2static",
        str(job.cache_dir),
        str(job.vocab_path),
        "--lang",
        job.language,
        "--vec",
        str(job.vec_path),
        "--npy",
        str(job.npy_path),
        "--stats",
        str(job.stats_path),
        "--checkpoint-dir",
        str(job.checkpoint_dir),
    ]
    defaults = X2StaticArgs()
    for f in dataclasses.fields(job.args):
        value, flag = getattr(job.args, f.name), "--" + f.name.replace("_", "-")
        if isinstance(value, bool):
            argv += [flag] if value else []
        elif value is None:
            argv += [flag, "none"] if getattr(defaults, f.name) is not None else []
        else:
            argv += [flag, str(value)]
    return argv


def _optional_float(text: str) -> float | None:
    return None if text.strip().lower() == "none" else float(text)


def x2static_job(args: argparse.Namespace) -> X2StaticJob:
    """The job that parsed ``xlalign x2static`` arguments describe."""
    import dataclasses

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
    import os

    from xlalign.encoders import distributed
    from xlalign.static.x2static import run_x2static_job

    job = x2static_job(args)
    worker = distributed.in_torchrun()
    if worker and int(os.environ["RANK"]) > 0:
        logging.getLogger().setLevel(logging.ERROR)  # rank 0 speaks for the run
    stats = run_x2static_job(job, gpus=args.gpus, progress=not args.quiet)
    if stats is not None and not worker:  # torchrun's rank 0 leaves it to its launcher
        _report(stats, args)


def _cmd_check_config(args: argparse.Namespace) -> None:
    from xlalign.config import config_hash, load

    cfg = load(args.configfile)
    if args.show:
        json.dump(cfg, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        print(
            f"{args.configfile}: valid ({len(cfg['languages'])} languages, "
            f"{len(cfg['seeds'])} seeds, config hash {config_hash(cfg)})"
        )


def _cmd_download(args: argparse.Namespace) -> None:
    from xlalign.resources.download import download, download_huggingface_model

    if args.huggingface:
        download_huggingface_model(args.url, args.output, revision=args.revision)
    else:
        download(args.url, args.output, sha256=args.sha256, retries=args.retries)
    print(args.output)


def _options(pairs: list[str] | None) -> dict:
    """``key=value`` pairs (values parsed as YAML scalars) from repeated ``--option``."""
    import yaml

    from xlalign.core.errors import ConfigError

    out: dict = {}
    for item in pairs or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--option {item!r}: expected key=value")
        out[key.strip()] = yaml.safe_load(value)
    return out


def _cmd_map(args: argparse.Namespace) -> None:
    from xlalign.mapping.hub import map_pair

    stats = map_pair(
        src=args.src,
        trg=args.trg,
        src_out=args.src_out,
        trg_out=args.trg_out,
        dictionary=args.dictionary,
        recipe=args.recipe,
        options=_options(args.option),
        seed=args.seed,
        hub=args.hub,
        max_words=args.max_words,
        stats_path=args.stats,
        device=args.device,
    )
    _report(stats, args)


def _cmd_bli(args: argparse.Namespace) -> None:
    from xlalign.evaluation.bli import evaluate_bli, read_dictionary
    from xlalign.static.vectors import load_space

    (sw, sv), _ = load_space(args.src)
    (tw, tv), _ = load_space(args.trg)
    dic = read_dictionary(args.dictionary, lowercase=args.lowercase)
    out = {}
    for retrieval in args.retrieval:
        res = evaluate_bli(
            sw,
            sv,
            tw,
            tv,
            dic,
            retrieval=retrieval,
            csls_k=args.csls_k,
            ks=tuple(args.k),
            oov=args.oov,
            device=args.device,
        )
        out[retrieval] = res.as_dict()
    if args.output:
        from xlalign.core.io import write_json

        write_json(args.output, out)
    json.dump(out, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


def _cmd_induce(args: argparse.Namespace) -> None:
    from xlalign.mapping.induction import induce_dictionary, induction_stats, write_induced
    from xlalign.static.vectors import load_space

    (sw, sv), _ = load_space(args.src)
    (tw, tv), _ = load_space(args.trg)
    pairs = induce_dictionary(
        sw,
        sv,
        tw,
        tv,
        retrieval=args.retrieval,
        csls_k=args.csls_k,
        max_rank=args.max_rank,
        mode=args.mode,
        device=args.device,
    )
    write_induced(pairs, args.output)
    _report(induction_stats(pairs), args)


def _cmd_wordsim(args: argparse.Namespace) -> None:
    from xlalign.core.errors import ConfigError
    from xlalign.evaluation.wordsim import read_similarity_file, wordsim_datasets, wordsim_record

    spaces = {}
    for item in args.space:
        lang, sep, path = item.partition("=")
        if not sep:
            raise ConfigError(f"--space {item!r}: expected LANG=PATH")
        spaces[lang] = path
    datasets = [(Path(p).stem, read_similarity_file(p)) for p in args.dataset or []]
    datasets += wordsim_datasets(languages=sorted(spaces), semeval=args.semeval)
    if not datasets:
        raise ConfigError("give --dataset FILE and/or --semeval ZIP")
    record = wordsim_record(
        space_name=args.name,
        seed=0,
        spaces=spaces,
        datasets=datasets,
        out_path=args.output,
        oov=args.oov,
    )
    json.dump(record, sys.stdout, indent=2, sort_keys=True, ensure_ascii=False)
    sys.stdout.write("\n")


def _cmd_split_dictionary(args: argparse.Namespace) -> None:
    from xlalign.dictionaries.split import build_split

    out = Path(args.output_dir)
    parts = {
        "train": "train.txt",
        "valid": "valid.txt",
        "test": "test.txt",
        "reverse_valid": "valid.reverse.txt",
        "reverse_test": "test.reverse.txt",
    }
    stats = build_split(
        language=args.lang,
        hub=args.hub,
        pool=args.dictionary,
        hub_vocab=args.hub_vocab,
        vocab=args.vocab,
        test=args.test,
        reverse_test=args.reverse_test,
        outputs={k: out / v for k, v in parts.items()},
        stats_path=out / "split.json",
        options={
            "test_fraction": args.test_fraction,
            "test_max_words": args.test_max_words,
            "valid_fraction": args.valid_fraction,
            "valid_max_words": args.valid_max_words,
            "max_rank": args.max_rank,
            "seed": args.seed,
            "overlap": args.overlap,
        },
    )
    _report(stats, args)


def _cmd_tables(args: argparse.Namespace) -> None:
    from xlalign.reporting.tables import read_records, write_tables

    written = write_tables(
        read_records(args.bli),
        read_records(args.wordsim or []),
        args.output_dir,
        spaces=args.spaces,
        metric=args.metric,
        retrieval=args.retrieval,
    )
    _report({"written": written}, args)


def _cmd_parallel(args: argparse.Namespace) -> None:
    from xlalign.corpus.parallel import (
        PairFilter,
        build_parallel,
        make_tokeniser,
        sources_from_specs,
    )

    specs = []
    for i, item in enumerate(args.source):
        kind, sep, rest = item.partition(":")
        paths = rest.split(",")
        if not sep or kind not in ("units", "lines", "wikimatrix"):
            raise XlalignError(
                f"--source {item!r}: expected units:HUB.tsv,OTHER.tsv, lines:HUB.txt,OTHER.txt "
                "or wikimatrix:FILE.tsv.gz"
            )
        specs.append(
            {
                "kind": kind,
                "paths": paths,
                "name": f"{kind}{i}",
                "min_score": args.min_score if kind == "wikimatrix" else None,
            }
        )
    tokenisers, tools = {}, {}
    for lang, tool, model in (
        (args.src, args.src_tool, args.src_udpipe_model),
        (args.tgt, args.tgt_tool, args.tgt_udpipe_model),
    ):
        tokenisers[lang], tools[lang] = make_tokeniser(
            lang, tool=tool, udpipe_model=model, fallback=args.fallback
        )
    stats = build_parallel(
        sources_from_specs(specs),
        args.output,
        args.stats or _stats_path(args.output),
        src_lang=args.src,
        tgt_lang=args.tgt,
        src_tokenise=tokenisers[args.src],
        tgt_tokenise=tokenisers[args.tgt],
        filters=PairFilter(
            min_tokens=args.min_tokens,
            max_tokens=args.max_tokens,
            max_ratio=args.max_ratio,
            dedupe=not args.keep_duplicates,
        ),
        max_pairs=args.max_pairs,
        seed=args.seed,
        oversample=args.oversample,
        progress=not args.quiet,
        info={"tokenisers": tools},
    )
    _report(stats, args)


def _cmd_align(args: argparse.Namespace) -> None:
    import tempfile

    from xlalign.wordalign.eflomal import (
        AlignmentPaths,
        AlignOptions,
        align_corpus,
        corpus_from_token_files,
    )
    from xlalign.wordalign.linkdict import (
        LinkDictOptions,
        dictionary_from_alignment,
        evaluate_against,
    )

    options = AlignOptions(
        model=args.model,
        samplers=args.samplers,
        iterations=tuple(args.iterations) if args.iterations else None,
        rel_iterations=args.rel_iterations,
        null_prior=args.null_prior,
        chunk_size=args.chunk_size,
        symmetrization=args.symmetrization,
        one_to_one=not args.keep_many_to_many,
        drop_identical=not args.keep_identical,
    )
    out = AlignmentPaths.in_dir(args.output_dir)
    with tempfile.TemporaryDirectory(dir=args.tmpdir) as tmp:
        if args.corpus:
            if args.source_text or args.target_text:
                raise XlalignError("give either CORPUS or --source-text/--target-text, not both")
            corpus = args.corpus
        elif args.source_text and args.target_text:
            corpus = str(Path(tmp) / "corpus.tsv")
            corpus_from_token_files(args.source_text, args.target_text, corpus)
        else:
            raise XlalignError(
                "expected CORPUS (a parallel TSV) or --source-text and --target-text"
            )
        stats = align_corpus(
            corpus,
            out,
            options,
            tmpdir=args.tmpdir,
            checkpoint_dir=args.checkpoint_dir,
            priors=args.priors,
            threads=args.threads,
            progress=not args.quiet,
        )
    if args.dictionary:
        stats["dictionary"] = dictionary_from_alignment(
            out.pairs,
            args.dictionary,
            _stats_path(args.dictionary),
            LinkDictOptions(min_count=args.min_count, min_ratio=args.min_ratio),
        )
        if args.gold:
            refs = {Path(p).stem: p for p in args.gold}
            stats["dictionary"]["evaluation"] = evaluate_against(
                args.dictionary, refs, Path(args.output_dir) / "dictionary-eval.json"
            )
    _report(stats, args)


def _cmd_aer(args: argparse.Namespace) -> None:
    from xlalign.wordalign.aer import score_files

    result = score_files(args.predicted, args.gold, args.format, reverse=args.reverse)
    out = result.as_dict()
    if args.output:
        from xlalign.core.io import write_json

        write_json(args.output, out)
    if args.quiet:
        return
    print(
        f"AER {result.aer:.4f}  precision {result.precision:.4f}  recall {result.recall:.4f}  "
        f"F1 {result.f1:.4f}  ({result.sentences} sentences, {result.predicted} predicted, "
        f"{result.sure} sure, {result.possible} possible links)"
    )


def _stats_path(output: str) -> str:
    p = Path(output)
    return str(p.with_name(p.name.rsplit(".", 1)[0] + ".json"))


def _report(stats: dict, args: argparse.Namespace) -> None:
    if not args.quiet:
        json.dump(stats, sys.stdout, indent=2, sort_keys=True, ensure_ascii=False)
        sys.stdout.write("\n")


def build_parser() -> argparse.ArgumentParser:
    from xlalign.wordalign.symmetrize import HEURISTICS

    parser = argparse.ArgumentParser(prog="xlalign", description=__doc__)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress, no report")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("sample", help="sample up to N sentences (whole paragraphs) of a language")
    p.add_argument("--lang", required=True, help="ISO 639-1 code")
    p.add_argument(
        "--source",
        action="append",
        required=True,
        metavar="TYPE:PATH",
        help="cc100|wikipedia|text:FILE (one paragraph per line) or bible|libreoffice-help:TSV; "
        "repeatable, read in order",
    )
    p.add_argument("--output", "-o", required=True)
    p.add_argument("--stats", help="stats JSON (default: OUTPUT with .json)")
    p.add_argument("--max-sentences", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--strategy", choices=["reservoir", "head"], default="reservoir")
    p.add_argument("--max-paragraphs-scanned", type=int, default=None)
    p.set_defaults(func=_cmd_sample)

    p = sub.add_parser("segment", help="segment, tokenise and filter (paper, Appendix B)")
    p.add_argument("--lang", required=True)
    p.add_argument("--input", "-i", required=True, help="one paragraph per line")
    p.add_argument("--output", "-o", required=True, help="one tokenised sentence per line")
    p.add_argument("--stats", help="stats JSON (default: OUTPUT with .json)")
    p.add_argument("--tool", choices=["udpipe", "icu", "icu+jieba", "icu+fugashi"])
    p.add_argument("--udpipe-model", help="UDPipe model file (for tool udpipe)")
    p.add_argument("--fallback", choices=["icu"], help="tool when no UDPipe model is given")
    p.add_argument("--min-tokens", type=int, default=7)
    p.add_argument("--min-paragraph-sentences", type=int, default=2)
    p.add_argument("--max-sentences", type=int, default=None)
    p.set_defaults(func=_cmd_segment)

    p = sub.add_parser(
        "extract", help="static embeddings from an encoder: X2S-M or the aggregation baseline"
    )
    p.add_argument("--lang", required=True)
    p.add_argument("--corpus", required=True, help="segmented: one sentence per line, tokens")
    p.add_argument("--encoder", required=True, help="a local Hugging Face checkpoint directory")
    p.add_argument("--output-dir", "-o", required=True)
    p.add_argument("--method", choices=["x2s-m", "aggregate"], default="x2s-m")
    p.add_argument("--layer", type=int, default=6)
    p.add_argument("--pooling", choices=["mean", "first", "last"], default="mean")
    p.add_argument("--context", choices=["others", "all"], default="others")
    p.add_argument("--min-count", type=int, default=10)
    p.add_argument("--max-vocab", type=int, default=200_000)
    p.add_argument("--keep-case", action="store_true", help="do not lowercase the vocabulary")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-sentences", type=int, default=128)
    p.add_argument("--negatives", type=int, default=10)
    p.add_argument("--subsample-t", type=float, default=5e-6)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--max-contexts", type=int, default=10, help="aggregation: K contexts")
    p.add_argument("--max-length", type=int, default=200)
    p.add_argument("--batch-tokens", type=int, default=8192)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=_cmd_extract)

    p = sub.add_parser(
        "x2static",
        help="X2S-M static vectors from a teacher cache (data-parallel over GPUs with --gpus)",
    )
    p.add_argument("cache", help="teacher cache directory (the one holding meta.json)")
    p.add_argument("vocab", help="the vocabulary TSV the cache was built with")
    p.add_argument("--lang", required=True)
    p.add_argument("--vec", required=True, help="output .vec; other outputs default to its stem")
    p.add_argument("--npy", help="output .npy, with STEM.vocab.txt (default: STEM.npy)")
    p.add_argument("--stats", help="stats JSON (default: STEM.json)")
    p.add_argument("--checkpoint-dir", help="resumable checkpoints (default: STEM.checkpoint)")
    p.add_argument(
        "--gpus",
        type=int,
        default=0,
        help="N > 1: data-parallel, one process per GPU under torchrun (as many as are "
        "visible; a single process when fewer than 2)",
    )
    t = p.add_argument_group(
        "training (defaults: X2Static's, see xlalign.static.x2static.X2StaticArgs)"
    )
    unset = argparse.SUPPRESS  # an option not given keeps X2StaticArgs' default
    t.add_argument("--epochs", type=int, default=unset)
    t.add_argument("--batch-sentences", type=int, default=unset)
    t.add_argument("--negatives", type=int, default=unset)
    t.add_argument(
        "--subsample-t", type=_optional_float, default=unset, help="0 or none: keep every word"
    )
    t.add_argument("--lr", type=float, default=unset)
    t.add_argument("--seed", type=int, default=unset)
    t.add_argument("--checkpoint-every-batches", type=int, default=unset, help="0: epoch ends")
    t.add_argument("--log-every", type=int, default=unset, help="batches per loss-curve point")
    t.add_argument("--init", choices=["uniform"], default=unset)
    t.add_argument("--device", default=unset, help="torch device (default: cuda if visible)")
    t.add_argument("--keep-checkpoint", action="store_true", default=unset)
    p.set_defaults(func=_cmd_x2static)

    p = sub.add_parser(
        "map",
        help="VecMap: map two embedding spaces into a shared one (map_embeddings.py style)",
    )
    p.add_argument("src", help="source embeddings (.vec, .vec.gz or .npy with .vocab.txt)")
    p.add_argument("trg", help="target embeddings")
    p.add_argument("src_out", help="mapped source embeddings (.vec)")
    p.add_argument("trg_out", help="mapped target embeddings (.vec)")
    p.add_argument(
        "--recipe",
        default="supervised",
        help="supervised, semi-supervised, identical, unsupervised (= acl2018), aaai2018, "
        "acl2017 or orthogonal: the public tool's presets",
    )
    p.add_argument("--dictionary", "-d", help="'source target' pairs (supervised, semi-supervised)")
    p.add_argument(
        "--option", action="append", metavar="KEY=VALUE", help="override a recipe option"
    )
    p.add_argument(
        "--hub",
        action="store_true",
        help="keep the target in its own (normalised) space and express the source in it",
    )
    p.add_argument("--max-words", type=int, help="read only the most frequent rows")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--stats", help="write the mapping's stats JSON here")
    p.add_argument("--device", help="torch device (default: cuda if available, else cpu)")
    p.set_defaults(func=_cmd_map)

    p = sub.add_parser("bli", help="bilingual lexicon induction: P@k and MRR, NN and CSLS")
    p.add_argument("src", help="query-side embeddings (already in a shared space)")
    p.add_argument("trg", help="target-side embeddings")
    p.add_argument("--dictionary", "-d", required=True, help="MUSE test dictionary")
    p.add_argument("--retrieval", nargs="+", choices=["nn", "csls"], default=["nn", "csls"])
    p.add_argument("--csls-k", type=int, default=10)
    p.add_argument("--k", type=int, nargs="+", default=[1, 5, 10])
    p.add_argument("--oov", choices=["skip", "miss"], default="skip")
    p.add_argument("--lowercase", action="store_true", help="lowercase the dictionary")
    p.add_argument("--output", "-o", help="also write the results JSON here")
    p.add_argument("--device")
    p.set_defaults(func=_cmd_bli)

    p = sub.add_parser(
        "induce", help="induce a dictionary from two aligned spaces (CSLS, mutual NN)"
    )
    p.add_argument("src")
    p.add_argument("trg")
    p.add_argument("--output", "-o", required=True, help="MUSE-format dictionary")
    p.add_argument("--retrieval", choices=["nn", "csls"], default="csls")
    p.add_argument("--csls-k", type=int, default=10)
    p.add_argument("--max-rank", type=int, default=20000, help="most frequent words only")
    p.add_argument("--mode", choices=["mutual", "forward", "union"], default="mutual")
    p.add_argument("--device")
    p.set_defaults(func=_cmd_induce)

    p = sub.add_parser("wordsim", help="word similarity (SemEval-2017 Task 2, SimLex, WordSim)")
    p.add_argument(
        "--space", action="append", required=True, metavar="LANG=PATH", help="repeatable"
    )
    p.add_argument("--dataset", action="append", help="a similarity file (SimLex/WS353/RG/MEN)")
    p.add_argument("--semeval", help="the SemEval-2017 Task 2 zip")
    p.add_argument("--oov", choices=["skip", "fill"], default="skip")
    p.add_argument("--name", default="space", help="the space's name in the record")
    p.add_argument("--output", "-o", required=True, help="the record JSON")
    p.set_defaults(func=_cmd_wordsim)

    p = sub.add_parser("split-dictionary", help="train/valid/test split with disjoint source words")
    p.add_argument("--lang", required=True)
    p.add_argument("--hub", default="en")
    p.add_argument("--dictionary", action="append", required=True, help="hub-lang pairs")
    p.add_argument("--hub-vocab", required=True, help="vocabulary TSV of the hub language")
    p.add_argument("--vocab", required=True, help="vocabulary TSV of the language")
    p.add_argument("--test", help="a given test dictionary (e.g. MUSE .5000-6500)")
    p.add_argument("--reverse-test", help="a given reverse test dictionary")
    p.add_argument("--output-dir", "-o", required=True)
    p.add_argument("--test-fraction", type=float, default=0.25)
    p.add_argument("--test-max-words", type=int, default=1500)
    p.add_argument("--valid-fraction", type=float, default=0.1)
    p.add_argument("--valid-max-words", type=int, default=500)
    p.add_argument("--max-rank", type=int)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--overlap", choices=["drop", "error"], default="drop")
    p.set_defaults(func=_cmd_split_dictionary)

    p = sub.add_parser("tables", help="the paper's Tables 1, 2, 5, 6, 7 from result records")
    p.add_argument("--bli", nargs="+", required=True, help="BLI record JSON files")
    p.add_argument("--wordsim", nargs="*", help="word-similarity record JSON files")
    p.add_argument("--spaces", nargs="+", help="spaces in table order (default: all)")
    p.add_argument("--metric", default="p@1", choices=["p@1", "p@5", "p@10", "mrr"])
    p.add_argument("--retrieval", default="csls", choices=["nn", "csls"])
    p.add_argument("--output-dir", "-o", required=True)
    p.set_defaults(func=_cmd_tables)

    p = sub.add_parser("parallel", help="a tokenised parallel corpus (for word alignment)")
    p.add_argument("--src", required=True, help="hub-side language (first file of each source)")
    p.add_argument("--tgt", required=True, help="the other language")
    p.add_argument(
        "--source",
        action="append",
        required=True,
        metavar="KIND:PATH[,PATH]",
        help="units:HUB.tsv,OTHER.tsv, lines:HUB.txt,OTHER.txt or wikimatrix:FILE (repeatable)",
    )
    p.add_argument("--output", "-o", required=True, help="the corpus TSV")
    p.add_argument("--stats", help="stats JSON (default: beside the output)")
    p.add_argument("--src-tool", help="segment tool of --src (default: the paper's)")
    p.add_argument("--tgt-tool", help="segment tool of --tgt (default: the paper's)")
    p.add_argument("--src-udpipe-model")
    p.add_argument("--tgt-udpipe-model")
    p.add_argument("--fallback", default="icu", help="tool used when a UDPipe model is missing")
    p.add_argument("--min-score", type=float, help="wikimatrix margin threshold (default 1.04)")
    p.add_argument("--min-tokens", type=int, default=1)
    p.add_argument("--max-tokens", type=int, default=100)
    p.add_argument("--max-ratio", type=float, default=3.0)
    p.add_argument("--keep-duplicates", action="store_true")
    p.add_argument("--max-pairs", type=int)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--oversample", type=float, default=1.5)
    p.set_defaults(func=_cmd_parallel)

    p = sub.add_parser("align", help="eflomal word alignment, symmetrised (Pharaoh + word pairs)")
    p.add_argument("corpus", nargs="?", help="a parallel corpus TSV (xlalign parallel)")
    p.add_argument("--source-text", help="or: tokenised source sentences, one per line")
    p.add_argument("--target-text", help="... and the line-aligned target sentences")
    p.add_argument("--output-dir", "-o", required=True)
    p.add_argument("--model", type=int, choices=[1, 2, 3], default=3)
    p.add_argument("--samplers", type=int, default=3)
    p.add_argument("--iterations", type=int, nargs=3, metavar=("IBM1", "HMM", "FERT"))
    p.add_argument("--rel-iterations", type=float, default=1.0)
    p.add_argument("--null-prior", type=float, default=0.2)
    p.add_argument("--priors", help="an eflomal priors file")
    p.add_argument("--chunk-size", type=int, default=200_000)
    p.add_argument("--checkpoint-dir", help="keep finished chunks here; a re-run resumes")
    p.add_argument("--tmpdir", help="eflomal's temporary files (default: $TMPDIR)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--symmetrization",
        default="grow-diag-final-and",
        choices=HEURISTICS,
    )
    p.add_argument("--keep-many-to-many", action="store_true", help="not only 1-to-1 links")
    p.add_argument("--keep-identical", action="store_true", help="keep links of identical words")
    p.add_argument("--dictionary", help="also write a MUSE dictionary from the link counts")
    p.add_argument("--min-count", type=int, default=3)
    p.add_argument("--min-ratio", type=float, default=0.1)
    p.add_argument("--gold", nargs="+", help="score the dictionary against these MUSE files")
    p.set_defaults(func=_cmd_align)

    p = sub.add_parser("aer", help="alignment error rate, precision, recall vs gold links")
    p.add_argument("predicted", help="Pharaoh file, one line per sentence")
    p.add_argument("gold", help="gold links: Pharaoh (i-j sure, i?j possible) or NAACL format")
    p.add_argument("--format", choices=["auto", "pharaoh", "naacl"], default="auto")
    p.add_argument("--reverse", action="store_true", help="swap i-j of the prediction first")
    p.add_argument("--output", "-o", help="also write the scores as JSON")
    p.set_defaults(func=_cmd_aer)

    p = sub.add_parser("check-config", help="validate a workflow config (defaults filled)")
    p.add_argument("configfile")
    p.add_argument("--show", action="store_true", help="print the validated config as JSON")
    p.set_defaults(func=_cmd_check_config)

    p = sub.add_parser("download", help="resumable, checksummed download (or a Hub model)")
    p.add_argument("url", help="URL, or a Hub model id with --huggingface")
    p.add_argument("output")
    p.add_argument("--sha256")
    p.add_argument("--retries", type=int, default=5)
    p.add_argument("--huggingface", action="store_true")
    p.add_argument("--revision", default="main")
    p.set_defaults(func=_cmd_download)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        args.func(args)
    except XlalignError as exc:
        print(f"xlalign {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
