"""``xlalign derive``, ``derived-pretrain``, ``derived-evaluate``, ``meta-mono``,
``meta-cross``, ``analyse`` and ``eflomal-reference``: issue 17's stages on explicit files.

Settings come from the sections ``derived``, ``metapretrain`` and ``analysis`` of a
configuration file (``--config``, validated as the workflow validates it; default the
embedded default), so a command run by hand trains and scores what the workflow's job
would.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from xlalign.cli.common import (
    add_checkpoint_minutes,
    check_arg,
    check_paths,
    checkpoint_minutes_of,
    fraction,
    input_dir,
    input_file,
    nonnegative_int,
    output_dir,
    output_file,
    report,
    unique_keys,
)


def _config(path: str) -> dict[str, Any]:
    import yaml

    from xlalign.config import validate

    with open(path, encoding="utf-8") as fh:
        return validate(yaml.safe_load(fh), origin=path)


def _add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config", default="config/config.yaml", type=input_file, help="configuration file"
    )
    p.add_argument("--seed", type=nonnegative_int, default=1)
    p.add_argument("--device", default=None)


_GOLD_SET_HELP = (
    "a public word-alignment gold set, scored in place of the config's: its id, language "
    "pair (as its links are written), format (awesome: TEXT LINKS, 'src ||| tgt' lines; "
    "wpt: SOURCE TARGET LINKS, '<s snum=N>' lines), index base (0 or 1, as the set ships; "
    "a wrong one is an error) and files (repeat per set; default: the config's "
    "analysis.gold.sets, read where the download rule puts them)"
)


def _add_gold_sets(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--gold-set", nargs="+", action="append", default=[],
        metavar="ID PAIR FORMAT BASE FILE", help=_GOLD_SET_HELP,
    )  # fmt: skip
    p.add_argument(
        "--drop-lines", nargs="+", action="append", default=[], metavar="ID LINE",
        help="lines of a --gold-set's links file holding a published erratum (a link "
        "outside its sentence) to drop, e.g. wpt05-en-hi 678",
    )  # fmt: skip


def _gold_sets(args: argparse.Namespace, cfg: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Set id -> spec (pair, format, base, paths, drop_lines) of ``--gold-set``, or the
    configuration's ``analysis.gold.sets`` (at the download rule's paths); empty: the
    configuration's ``analysis.gold.source`` is scored."""
    from xlalign.analysis.gold import SET_FORMATS, configured_sets

    if not args.gold_set:
        if args.drop_lines:
            raise argparse.ArgumentTypeError("argument --drop-lines: needs a --gold-set")
        sets = configured_sets(cfg)
        for sid, spec in sets.items():
            for path in spec["paths"]:
                check_arg(f"analysis.gold.sets.{sid} (the config's)", input_file, path)
        return sets
    out: dict[str, dict[str, Any]] = {}
    for values in args.gold_set:
        if len(values) < 4:
            raise argparse.ArgumentTypeError(
                f"argument --gold-set: {' '.join(values)!r}: expected ID PAIR FORMAT BASE FILE..."
            )
        sid, pair, fmt, base, *files = values
        if sid in out:
            raise argparse.ArgumentTypeError(f"argument --gold-set: {sid!r} given twice")
        where = f"argument --gold-set {sid}"
        a, dash, b = pair.partition("-")
        if not (dash and a and b and a != b):
            raise argparse.ArgumentTypeError(
                f"{where}: pair {pair!r}; expected two languages, e.g. ro-en"
            )
        if fmt not in SET_FORMATS:
            raise argparse.ArgumentTypeError(
                f"{where}: format {fmt!r}; expected one of {', '.join(SET_FORMATS)}"
            )
        if base not in ("0", "1"):
            raise argparse.ArgumentTypeError(f"{where}: index base {base!r}; expected 0 or 1")
        if len(files) != len(SET_FORMATS[fmt]):
            raise argparse.ArgumentTypeError(
                f"{where}: the {fmt} format reads {len(SET_FORMATS[fmt])} files "
                f"({', '.join(SET_FORMATS[fmt])}), got {len(files)}"
            )
        for f in files:
            check_arg("--gold-set", input_file, f)
        out[sid] = {"pair": pair, "format": fmt, "base": int(base), "paths": files}
    unique_keys("--drop-lines", (v[0] for v in args.drop_lines))
    for sid, *lines in args.drop_lines:
        if sid not in out:
            raise argparse.ArgumentTypeError(
                f"argument --drop-lines: {sid!r} is not a --gold-set ({', '.join(out)})"
            )
        if not lines or not all(n.isdigit() and int(n) >= 1 for n in lines):
            raise argparse.ArgumentTypeError(
                f"argument --drop-lines {sid}: {lines}; expected line numbers >= 1"
            )
        out[sid]["drop_lines"] = [int(n) for n in lines]
    return out


def _gold_inputs(sets: dict[str, dict[str, Any]]) -> list[str]:
    return [p for spec in sets.values() for p in spec["paths"]]


def add_derive(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("derive", help="English and a derived language (001): text and task data")
    _add_config(p)
    p.add_argument("--spec", required=True, help="composition, e.g. trans+inv")
    p.add_argument(
        "--text", required=True, type=input_file, help="English paragraphs, one per line"
    )
    p.add_argument(
        "--task", nargs=3, action="append", default=[], metavar=("TASK", "TRAIN", "DEV"),
        help="a tagging or sentence-pair task's English train and dev JSONL",
    )  # fmt: skip
    p.add_argument(
        "--parallel-shares", nargs="*", type=fraction, default=None, metavar="SHARE",
        help="001 Table 1: parallel.p<pct>.tsv subsets (default: derived.sweeps for its spec)",
    )  # fmt: skip
    p.add_argument(
        "--dictionary-shares", nargs="*", type=fraction, default=None, metavar="SHARE",
        help="001 Table 2: dictionary.d<pct>.txt shares (default: derived.sweeps for its spec)",
    )  # fmt: skip
    p.add_argument("--output-dir", "-o", required=True, type=output_dir)
    p.set_defaults(func=_cmd_derive)


def _cmd_derive(args: argparse.Namespace) -> None:
    from xlalign.derived.experiment import build_derived_data

    unique_keys("--task", (t for t, _, _ in args.task))
    for _, train, dev in args.task:
        check_arg("--task", input_file, train)
        check_arg("--task", input_file, dev)
    out = Path(args.output_dir)
    check_paths(
        inputs=[args.config, args.text, *(f for _, tr, dv_ in args.task for f in (tr, dv_))],
        outputs=[out.with_suffix(".json")],
        args=args,
    )
    dv = _config(args.config)["derived"]
    tasks = {t: {"train": tr, "dev": dv_} for t, tr, dv_ in args.task}
    sweeps = dv["sweeps"] if dv["sweeps"]["spec"] == args.spec else {}
    stats = build_derived_data(
        spec=args.spec,
        text=args.text,
        tasks=tasks,
        task_settings={t: dv["tasks"].get(t, {"test_size": 200}) for t in tasks},
        out_dir=out,
        stats_path=out.with_suffix(".json"),
        max_paragraphs=dv["max_paragraphs"],
        dictionary_fraction=dv["dictionary_fraction"],
        syntax=dv["syntax"],
        seed=args.seed,
        dictionary_fractions=(
            sweeps.get("dictionary", [])
            if args.dictionary_shares is None
            else args.dictionary_shares
        ),
        parallel_fractions=(
            sweeps.get("parallel", []) if args.parallel_shares is None else args.parallel_shares
        ),
    )
    report(stats, args)


def add_derived_pretrain(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "derived-pretrain", help="a small BERT from scratch on English + a derived language"
    )
    _add_config(p)
    p.add_argument(
        "run",
        help="pre-training row (mlm, tlm, dict-mlm, align-mlm), or a row with a share of "
        "001's Tables 1-2 (tlm-p10, dict-mlm-d50) built by `xlalign derive`",
    )
    p.add_argument("--spec", required=True)
    p.add_argument(
        "--data", required=True, type=input_dir, help="the directory of `xlalign derive`"
    )
    p.add_argument("--output-dir", "-o", required=True, type=output_dir)
    add_checkpoint_minutes(p, from_config=True)
    p.set_defaults(func=_cmd_derived_pretrain)


def _cmd_derived_pretrain(args: argparse.Namespace) -> None:
    from xlalign.derived.experiment import run_derived_pretrain

    out = Path(args.output_dir)
    check_paths(
        inputs=[args.config, args.data],
        outputs=[out.with_suffix(".json")],
        replaced_dirs=[out, out.with_suffix(".work")],
        args=args,
    )
    cfg = _config(args.config)
    dv = cfg["derived"]
    stats = run_derived_pretrain(
        args.run,
        spec=args.spec,
        data_dir=args.data,
        output_dir=out,
        stats_path=out.with_suffix(".json"),
        work_dir=out.with_suffix(".work"),
        vocab_size=dv["vocab_size"],
        arch=dv["arch"],
        section=dv["pretrain"],
        seed=args.seed,
        device=args.device,
        progress=not args.quiet,
        checkpoint_minutes=checkpoint_minutes_of(args, cfg),
    )
    report({k: stats.get(k) for k in ("row", "spec", "selection", "vocabulary")}, args)


def add_derived_evaluate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("derived-evaluate", help="ZS, SUP, Delta and alignment of a derived model")
    _add_config(p)
    p.add_argument("--model", required=True, type=input_dir)
    p.add_argument("--run", required=True)
    p.add_argument("--spec", required=True)
    p.add_argument(
        "--data", required=True, type=input_dir, help="the directory of `xlalign derive`"
    )
    p.add_argument("--output", "-o", required=True, type=output_file, help="record JSON")
    p.add_argument(
        "--pretrain-stats",
        type=input_file,
        help="the model's pre-training record (default: the .json `derived-pretrain` wrote "
        "beside the model, when there is one)",
    )
    p.set_defaults(func=_cmd_derived_evaluate)


def _cmd_derived_evaluate(args: argparse.Namespace) -> None:
    from xlalign.derived.experiment import run_derived_evaluate

    out = Path(args.output)
    beside = Path(args.model).with_suffix(".json")
    pre = args.pretrain_stats or (beside if beside.is_file() else None)
    check_paths(
        inputs=[args.config, args.model, args.data, pre],
        outputs=[out],
        replaced_dirs=[out.with_suffix(".work")],
        args=args,
    )
    dv = _config(args.config)["derived"]
    stats = run_derived_evaluate(
        model_dir=args.model,
        model_name=Path(args.model).name,
        run=args.run,
        spec=args.spec,
        tasks={t: Path(args.data) / "tasks" / t for t in dv["tasks"]},
        task_settings=dv["tasks"],
        seed=args.seed,
        output=out,
        work_dir=out.with_suffix(".work"),
        pretrain_stats=pre,
        device=args.device,
    )
    report({k: stats[k] for k in ("model", "tasks", "alignment") if k in stats}, args)


def add_meta_mono(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("meta-mono", help="meta-pretraining: an English BERT from scratch (004)")
    _add_config(p)
    p.add_argument(
        "--text", required=True, type=input_file, help="English paragraphs, one per line"
    )
    p.add_argument("--output-dir", "-o", required=True, type=output_dir)
    add_checkpoint_minutes(p, from_config=True)
    p.set_defaults(func=_cmd_meta_mono)


def _cmd_meta_mono(args: argparse.Namespace) -> None:
    from xlalign.metapretrain.experiment import run_meta_mono

    out = Path(args.output_dir)
    check_paths(
        inputs=[args.config, args.text],
        outputs=[out.with_suffix(".json")],
        replaced_dirs=[out, out.with_suffix(".work")],
        args=args,
    )
    cfg = _config(args.config)
    mp = cfg["metapretrain"]
    stats = run_meta_mono(
        text=args.text,
        output_dir=out,
        stats_path=out.with_suffix(".json"),
        work_dir=out.with_suffix(".work"),
        vocab_size=mp["mono"]["vocab_size"],
        arch=mp["arch"],
        section=mp["pretrain"],
        steps=mp["mono"]["steps"],
        seed=args.seed,
        device=args.device,
        progress=not args.quiet,
        checkpoint_minutes=checkpoint_minutes_of(args, cfg),
    )
    report({k: stats.get(k) for k in ("selection", "vocabulary")}, args)


def add_meta_cross(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "meta-cross", help="a cross-lingual BERT initialised from the meta-pretrained one (004)"
    )
    _add_config(p)
    p.add_argument("variant", choices=["none", "body", "emb", "both", "both+dict"])
    p.add_argument(
        "--mono", required=True, type=input_dir, help="the directory of `xlalign meta-mono`"
    )
    p.add_argument(
        "--text", nargs=2, action="append", required=True, metavar=("LANG", "FILE"),
        help="a language's paragraphs (repeat per language)",
    )  # fmt: skip
    p.add_argument(
        "--dictionary", nargs=2, action="append", default=[], metavar=("LANG", "FILE"),
        help="an English-LANG dictionary ('en_word xx_word' lines), for both+dict",
    )  # fmt: skip
    p.add_argument("--output-dir", "-o", required=True, type=output_dir)
    add_checkpoint_minutes(p, from_config=True)
    p.set_defaults(func=_cmd_meta_cross)


def _cmd_meta_cross(args: argparse.Namespace) -> None:
    from xlalign.metapretrain.experiment import run_meta_cross

    for option, items in (("--text", args.text), ("--dictionary", args.dictionary)):
        unique_keys(option, (lang for lang, _ in items))
        for _, path in items:
            check_arg(option, input_file, path)
    out = Path(args.output_dir)
    check_paths(
        inputs=[args.config, args.mono, *(f for _, f in [*args.text, *args.dictionary])],
        outputs=[out.with_suffix(".json")],
        replaced_dirs=[out, out.with_suffix(".work")],
        args=args,
    )
    cfg = _config(args.config)
    mp = cfg["metapretrain"]
    stats = run_meta_cross(
        args.variant,
        mono_dir=args.mono,
        texts=dict(args.text),
        dictionaries=dict(args.dictionary) or None,
        output_dir=out,
        stats_path=out.with_suffix(".json"),
        work_dir=out.with_suffix(".work"),
        vocab_size=mp["cross"]["vocab_size"],
        section=mp["pretrain"],
        steps=mp["cross"]["steps"],
        language_alpha=mp["cross"]["language_alpha"],
        seed=args.seed,
        device=args.device,
        progress=not args.quiet,
        checkpoint_minutes=checkpoint_minutes_of(args, cfg),
    )
    report({k: stats.get(k) for k in ("variant", "initialisation", "selection")}, args)


def add_analyse(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "analyse", help="AER and word alignment score by layer, L2 distances of an encoder"
    )
    _add_config(p)
    p.add_argument(
        "--encoder", required=True, type=input_dir, help="a transformers checkpoint directory"
    )
    p.add_argument("--name", default=None)
    p.add_argument(
        "--distances", nargs=3, action="append", default=[],
        metavar=("PAIR", "CORPUS_TSV", "LINKS"),
        help="a word-aligned pair of the alignment stage (corpus.tsv, symmetrized.txt)",
    )  # fmt: skip
    _add_gold_sets(p)
    p.add_argument("--output", "-o", required=True, type=output_file)
    p.set_defaults(func=_cmd_analyse)


def _cmd_analyse(args: argparse.Namespace) -> None:
    from xlalign.analysis.experiment import run_encoder_analysis

    unique_keys("--distances", (pair for pair, _, _ in args.distances))
    for _, tsv, links in args.distances:
        check_arg("--distances", input_file, tsv)
        check_arg("--distances", input_file, links)
    cfg = _config(args.config)
    an = cfg["analysis"]
    sets = _gold_sets(args, cfg)
    check_paths(
        inputs=[
            args.config,
            args.encoder,
            *(f for _, *pair in args.distances for f in pair),
            *_gold_inputs(sets),
        ],
        outputs=[args.output],
        args=args,
    )
    stats = run_encoder_analysis(
        encoder=args.encoder,
        name=args.name or Path(args.encoder).name,
        gold_source=an["gold"]["source"],
        sets=sets or None,
        gold_format=an["gold"]["format"],
        gold_base=an["gold"]["base"],
        methods=an["methods"],
        distances={pair: (tsv, links) for pair, tsv, links in args.distances},
        settings=an["distances"],
        output=args.output,
        device=args.device,
    )
    keys = ("encoder", "aer_by_layer", "word_score_by_layer", "gold_sets")
    report({k: stats[k] for k in keys if k in stats}, args)


def add_eflomal_reference(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eflomal-reference", help="eflomal's AER on the analyses' gold sets")
    _add_config(p)
    p.add_argument(
        "--corpus", type=input_file,
        help="the alignment stage's corpus.tsv of analysis.gold.pair (the config's one "
        "gold set, without gold sets)",
    )  # fmt: skip
    _add_gold_sets(p)
    p.add_argument(
        "--bitext", nargs=3, action="append", default=[], metavar=("ID", "PAIR", "CORPUS_TSV"),
        help="the alignment stage's corpus.tsv of gold set ID's pair, its columns in PAIR's "
        "order (the set's or the reverse); a set without one is aligned alone",
    )  # fmt: skip
    p.add_argument(
        "--max-pairs",
        type=nonnegative_int,
        default=None,
        help="bitext pairs aligned with each set (default: analysis.eflomal.max_pairs)",
    )
    p.add_argument("--output", "-o", required=True, type=output_file)
    p.set_defaults(func=_cmd_eflomal_reference)


def _bitexts(
    args: argparse.Namespace, sets: dict[str, dict[str, Any]]
) -> dict[str, tuple[str, bool]]:
    """Set id -> (corpus.tsv, whether its columns are the set's target and source)."""
    unique_keys("--bitext", (sid for sid, _, _ in args.bitext))
    out: dict[str, tuple[str, bool]] = {}
    for sid, pair, tsv in args.bitext:
        if sid not in sets:
            raise argparse.ArgumentTypeError(
                f"argument --bitext: {sid!r} is not a gold set ({', '.join(sets) or 'none'})"
            )
        a, _, b = str(sets[sid]["pair"]).partition("-")
        if pair not in (f"{a}-{b}", f"{b}-{a}"):
            raise argparse.ArgumentTypeError(
                f"argument --bitext {sid}: pair {pair!r}; the set is {a}-{b} (give {a}-{b} "
                f"or {b}-{a}, the corpus's column order)"
            )
        check_arg("--bitext", input_file, tsv)
        out[sid] = (tsv, pair != f"{a}-{b}")
    return out


def _cmd_eflomal_reference(args: argparse.Namespace) -> None:
    from xlalign.analysis.experiment import run_eflomal_reference

    cfg = _config(args.config)
    an = cfg["analysis"]
    sets = _gold_sets(args, cfg)
    corpora = _bitexts(args, sets)
    if sets and args.corpus:
        raise argparse.ArgumentTypeError(
            "argument --corpus: with gold sets, give each set's bitext with --bitext"
        )
    if not sets and args.corpus is None:
        raise argparse.ArgumentTypeError(
            "argument --corpus: required without gold sets (--gold-set or the config's "
            "analysis.gold.sets)"
        )
    check_paths(
        inputs=[args.config, args.corpus, *_gold_inputs(sets), *(c for c, _ in corpora.values())],
        outputs=[args.output],
        args=args,
    )
    wa = cfg["wordalign"]
    report(
        run_eflomal_reference(
            gold_source=an["gold"]["source"],
            corpus_tsv=args.corpus,
            sets=sets or None,
            corpora=corpora,
            gold_format=an["gold"]["format"],
            gold_base=an["gold"]["base"],
            output=args.output,
            max_pairs=an["eflomal"]["max_pairs"] if args.max_pairs is None else args.max_pairs,
            wordalign=wa,
            # as the workflow's job: wordalign.seed (eflomal's own randomness is not
            # reproducible), not --seed
            seed=wa["seed"] if wa["seed"] is not None else 0,
        ),
        args,
    )
