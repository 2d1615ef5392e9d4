"""Derived-language data (001 G.1): the pre-training text of English and its derived copy,
and task data transformed the same way, from files to files.

* :func:`build_derived_text`: each English paragraph split into sentences and words by
  spaCy, each sentence transformed (001: "we perform the transformation on each sentence
  individually"), written as ``natural.txt`` / ``derived.txt`` (line ``i`` of one is line
  ``i`` of the other), ``parallel.tsv`` (sentence pairs for TLM), ``dictionary.txt`` (a
  seeded share of the natural word types with their derived forms, for DICT-MLM and
  ALIGN-MLM; 001 G.1, 25 % by default) and ``stats.json``; for 001's Tables 1-2, also
  ``parallel.p<pct>.tsv`` (a seeded subset of the sentence pairs) and
  ``dictionary.d<pct>.txt`` (other shares; the dictionaries are nested: a larger one holds
  every pair of a smaller one).
* :func:`build_derived_task`: a task's English train/dev files, a seeded held-out English
  test set taken from train, and the same records transformed: a tagging task's words
  with their tags (tags moved with their words, IOB2 repaired) and the exact natural ->
  derived test links (``gold.test.pharaoh``); a sentence-pair task's (XNLI, PAWS-X) two
  texts, each split into sentences and words by spaCy and transformed sentence by sentence
  (001 G.1: "In XNLI, we also transform the second sentence"), the label kept.

The derived side's language code in pre-training files and task results is
:data:`xlalign.derived.experiment.DERIVED` (``"xx"``).
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.formats.parallel import write_parallel
from xlalign.core.io import PathLike, atomic_open, write_json
from xlalign.derived.naming import dictionary_file, parallel_file
from xlalign.derived.transforms import SyntaxParams, apply, parse_spec, transliterate
from xlalign.dictionaries.split import write_pairs
from xlalign.evaluation.tasks.data import (
    PairExample,
    TaggedSentence,
    read_records,
    write_records,
)
from xlalign.wordalign.symmetrize import write_pharaoh

log = logging.getLogger(__name__)

#: The task kinds :func:`build_derived_task` transforms, by the zero-shot task family.
TASK_KINDS = {"tagging": "tagging", "classification": "pair"}
SPLITS = ("train", "dev", "test")


def task_kind(task: str) -> str:
    """The derived-task kind of zero-shot task ``task`` (its registry family); a family
    without a transformation (QA spans, parsing, retrieval) is a :class:`ConfigError`."""
    from xlalign.evaluation.tasks.registry import task_info

    family = task_info(task).family
    if family not in TASK_KINDS:
        raise ConfigError(
            f"derived.tasks.{task}: a {family} task; derived languages transform tagging "
            "(POS, NER) and sentence-pair classification (XNLI, PAWS-X) data"
        )
    return TASK_KINDS[family]


def _sizes(fraction: float, n: int) -> int:
    return min(n, max(1, round(float(fraction) * n)))


def _rng(seed: int, name: str) -> np.random.Generator:
    """A generator for one use (syntax draws, dictionary, test split) of one seed."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(name.encode())]))


def _syntax(syntax: SyntaxParams | Mapping[str, Any] | None) -> SyntaxParams:
    return syntax if isinstance(syntax, SyntaxParams) else SyntaxParams.from_mapping(syntax)


def _word_map(parts: Sequence[str]) -> Any:
    return transliterate if "trans" in parts else (lambda w: w)


def _add(total: dict[str, int], moved: Mapping[str, int]) -> None:
    for k, v in moved.items():
        total[k] = total.get(k, 0) + int(v)


def build_derived_text(
    paragraphs_path: PathLike,
    out_dir: PathLike,
    *,
    spec: str,
    seed: int,
    max_paragraphs: int | None,
    dictionary_fraction: float = 0.25,
    syntax: SyntaxParams | Mapping[str, Any] | None = None,
    nlp: Any = None,
    batch_size: int = 64,
    dictionary_fractions: Sequence[float] = (),
    parallel_fractions: Sequence[float] = (),
) -> dict[str, Any]:
    """Write the pre-training files of the derived language ``spec`` into ``out_dir``
    (module docstring) from the English paragraphs of ``paragraphs_path`` (one per line,
    :func:`xlalign.pretrain.text.read_paragraphs`); returns the stats also written.

    ``nlp``: a spaCy pipeline (default :func:`~xlalign.derived.parse.load_parser`). A
    paragraph with a word that cannot be transliterated (a character outside Unicode planes
    0-1) is left out of every file and counted (``paragraphs_skipped``). Syntax moves with
    a probability below 1 draw from a generator of (``seed``, "syntax"); the dictionary's
    ``round(dictionary_fraction * types)`` word types (at least 1) are the first of a
    permutation of the sorted types drawn by a generator of (``seed``, "dictionary").

    001's Tables 1-2: each of ``dictionary_fractions`` gets ``dictionary.d<pct>.txt``, the
    first ``round(f * types)`` types of the same permutation (so the dictionaries are
    nested), and each of ``parallel_fractions`` ``parallel.p<pct>.tsv``, the first
    ``round(f * sentences)`` sentence pairs of a permutation drawn by (``seed``,
    "parallel"), in file order: parallel sentences relative to the sentences of the MLM
    text, as 001 counts them.
    """
    from xlalign.derived.parse import load_parser, parse_paragraphs, parser_info
    from xlalign.pretrain.text import read_paragraphs

    parts = parse_spec(spec)
    for key, fractions in (
        ("derived.dictionary_fraction", [dictionary_fraction]),
        ("derived.sweeps.dictionary", dictionary_fractions),
        ("derived.sweeps.parallel", parallel_fractions),
    ):
        for f in fractions:
            if not 0.0 < float(f) <= 1.0:
                raise ConfigError(f"{key}: {f}; expected a number in (0, 1]")
    params = _syntax(syntax)
    paragraphs = read_paragraphs(Path(paragraphs_path), "en", max_paragraphs=max_paragraphs)
    nlp = nlp if nlp is not None else load_parser()
    rng = _rng(seed, "syntax")
    natural_lines: list[str] = []
    derived_lines: list[str] = []
    pairs: list[tuple[str, str, str]] = []
    moved: dict[str, int] = {}
    skipped: list[str] = []
    sentences = words = 0
    for k, parses in enumerate(parse_paragraphs(nlp, paragraphs, batch_size=batch_size)):
        try:
            derived = [apply(parts, p.words, parse=p, rng=rng, syntax=params) for p in parses]
        except InputError as exc:
            skipped.append(f"paragraph {k + 1}: {exc}")
            continue
        if not parses:
            skipped.append(f"paragraph {k + 1}: no word")
            continue
        line = len(natural_lines)
        for s, (p, d) in enumerate(zip(parses, derived, strict=True)):
            pairs.append((f"{line + 1}.{s + 1}", " ".join(p.words), " ".join(d.words)))
            _add(moved, d.moved)
            words += len(p.words)
        sentences += len(parses)
        natural_lines.append(" ".join(w for p in parses for w in p.words))
        derived_lines.append(" ".join(w for d in derived for w in d.words))
    for why in skipped[:5]:
        log.warning("%s: left out %s", paragraphs_path, why)
    if not natural_lines:
        raise InputError(f"{paragraphs_path}: no paragraph could be transformed ({skipped[:1]})")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, lines in (("natural.txt", natural_lines), ("derived.txt", derived_lines)):
        with atomic_open(out / name) as fh:
            fh.writelines(f"{x}\n" for x in lines)
    _write_parallel(out / parallel_file(), pairs)
    parallel_sizes = {}
    order = _rng(seed, "parallel").permutation(len(pairs))
    for f in parallel_fractions:
        keep = np.sort(order[: _sizes(f, len(pairs))])
        _write_parallel(out / parallel_file(f), [pairs[i] for i in keep])
        parallel_sizes[parallel_file(f)] = len(keep)
    types = sorted({w for x in natural_lines for w in x.split(" ")})
    form = _word_map(parts)
    order = _rng(seed, "dictionary").permutation(len(types))
    dictionary_sizes = {}
    for name, f in [
        (dictionary_file(), dictionary_fraction),
        *((dictionary_file(f), f) for f in dictionary_fractions),
    ]:
        chosen = np.sort(order[: _sizes(f, len(types))])
        dictionary_sizes[name] = write_pairs(
            ((types[i], form(types[i])) for i in chosen), out / name
        )
    n_dict = dictionary_sizes[dictionary_file()]
    stats = {
        "spec": spec,
        "parts": list(parts),
        "seed": int(seed),
        "source": str(paragraphs_path),
        "max_paragraphs": max_paragraphs,
        "paragraphs": len(natural_lines),
        "paragraphs_skipped": len(skipped),
        "sentences": sentences,
        "words": words,
        "word_types": len(types),
        "dictionary_fraction": float(dictionary_fraction),
        "dictionary_pairs": n_dict,
        "dictionaries": dictionary_sizes,
        "parallel_subsets": parallel_sizes,
        "syntax": {"object_verb": params.object_verb, "noun_adjective": params.noun_adjective},
        "moved": moved,
        "parser": parser_info(nlp),
    }
    write_json(out / "stats.json", stats)
    log.info(
        "derived text %s: %d paragraphs, %d sentences, %d words, %d dictionary pairs",
        spec,
        len(natural_lines),
        sentences,
        words,
        n_dict,
    )
    return stats


def _write_parallel(path: Path, pairs: Sequence[tuple[str, str, str]]) -> None:
    write_parallel(path, ((pid, s.split(" "), t.split(" ")) for pid, s, t in pairs))


def read_task_inputs(
    train: PathLike, dev: PathLike, *, test_size: int, kind: str = "tagging"
) -> tuple[list[Any], list[Any]]:
    """The English train and dev records of a task (:class:`TaggedSentence` for ``kind``
    ``"tagging"``, else :class:`PairExample`); :class:`InputError` naming the file (and
    line) for a malformed record, or for a train file too small to hold out ``test_size``.
    :func:`~xlalign.derived.experiment.build_derived_data` calls it for every task before
    it writes anything."""
    record_type = TaggedSentence if kind == "tagging" else PairExample
    train_records = read_records(train, record_type)
    dev_records = read_records(dev, record_type)
    if int(test_size) >= len(train_records):
        raise InputError(
            f"{train}: {len(train_records)} training records; cannot hold out {test_size} "
            "as the test set and keep any for training"
        )
    return train_records, dev_records


def build_derived_task(
    train: PathLike,
    dev: PathLike,
    out_dir: PathLike,
    *,
    spec: str,
    seed: int,
    test_size: int,
    kind: str = "tagging",
    syntax: SyntaxParams | Mapping[str, Any] | None = None,
    nlp: Any = None,
) -> dict[str, Any]:
    """Write ``natural/{train,dev,test}.jsonl``, ``derived/{train,dev,test}.jsonl``,
    ``gold.test.pharaoh`` (tagging only) and ``stats.json`` into ``out_dir``; returns the
    stats.

    The English test set is ``test_size`` records of ``train`` drawn uniformly without
    replacement by a generator of (``seed``, "test"), kept in file order; the rest of
    ``train`` is the training set. ``kind`` ``"tagging"`` (:class:`TaggedSentence`
    records): every record is transformed with its tags (IOB2 tags repaired after moving:
    :func:`~xlalign.derived.transforms.move_tags`), and line ``k`` of
    ``gold.test.pharaoh`` links natural test record ``k`` (source) to derived test record
    ``k`` (target), ``i-j`` for natural word ``i`` at derived position ``j``. ``kind``
    ``"pair"`` (:class:`PairExample` records): both texts are split into sentences and
    words by spaCy and transformed sentence by sentence; the natural side is written with
    the same words (space-separated), the label kept. Ids are kept. A record with a word
    that cannot be transliterated is left out of both sides (counted). The parser
    (``nlp``, default :func:`~xlalign.derived.parse.load_parser`) is loaded for a syntax
    transformation or a sentence-pair task.
    """
    from xlalign.derived.parse import load_parser, parse_paragraphs, parse_words, parser_info

    parts = parse_spec(spec)
    kinds = sorted(set(TASK_KINDS.values()))
    if kind not in kinds:
        raise ConfigError(f"derived task kind {kind!r}: expected one of {kinds}")
    if int(test_size) < 1:
        raise ConfigError(f"derived.tasks.<task>.test_size: {test_size}; expected >= 1")
    params = _syntax(syntax)
    train_records, dev_records = read_task_inputs(train, dev, test_size=test_size, kind=kind)
    held = set(_rng(seed, "test").choice(len(train_records), size=int(test_size), replace=False))
    natural = {
        "train": [r for i, r in enumerate(train_records) if i not in held],
        "dev": dev_records,
        "test": [r for i, r in enumerate(train_records) if i in held],
    }
    parser = None
    if "syn" in parts or kind == "pair":
        nlp = nlp if nlp is not None else load_parser()
        parser = parser_info(nlp)
    rng = _rng(seed, "syntax")
    derived: dict[str, list[Any]] = {}
    kept: dict[str, list[Any]] = {}
    links: list[list[tuple[int, int]]] = []
    moved: dict[str, int] = {}
    skipped: dict[str, int] = {}

    def transform(words: Sequence[str], parse: Any, tags: Any = None) -> Any:
        d = apply(parts, words, parse=parse, tags=tags, rng=rng, syntax=params)
        _add(moved, d.moved)
        return d

    for split in SPLITS:
        records = natural[split]
        kept[split], derived[split], skipped[split] = [], [], 0
        if kind == "tagging":
            parses = parse_words(nlp, [r.tokens for r in records]) if "syn" in parts else None
        else:
            texts = [t for r in records for t in (r.sentence1, r.sentence2)]
            parsed = list(parse_paragraphs(nlp, texts))
        for k, rec in enumerate(records):
            try:
                if kind == "tagging":
                    d = transform(rec.tokens, None if parses is None else parses[k], rec.tags)
                    out_rec = TaggedSentence(id=rec.id, tokens=d.words, tags=list(d.tags or []))
                    nat_rec = rec
                else:
                    texts_k = (parsed[2 * k], parsed[2 * k + 1])
                    if not all(texts_k):
                        raise InputError("a text without a word")
                    nat = [" ".join(w for p in ps for w in p.words) for ps in texts_k]
                    der = [
                        " ".join(w for p in ps for w in transform(p.words, p).words)
                        for ps in texts_k
                    ]
                    nat_rec = PairExample(rec.id, nat[0], nat[1], rec.label)
                    out_rec = PairExample(rec.id, der[0], der[1], rec.label)
            except InputError as exc:
                log.warning("%s record %r: left out: %s", split, rec.id, exc)
                skipped[split] += 1
                continue
            kept[split].append(nat_rec)
            derived[split].append(out_rec)
            if split == "test" and kind == "tagging":
                links.append(d.links())
        if not kept[split]:
            raise InputError(f"derived task {spec}: no {split} record could be transformed")
    out = Path(out_dir)
    for side, data in (("natural", kept), ("derived", derived)):
        for split in SPLITS:
            write_records(out / side / f"{split}.jsonl", data[split])
    if kind == "tagging":
        write_pharaoh(links, out / "gold.test.pharaoh")
    words = {
        s: sum(
            len(r.tokens) if kind == "tagging" else len(f"{r.sentence1} {r.sentence2}".split())
            for r in kept[s]
        )
        for s in SPLITS
    }
    stats = {
        "spec": spec,
        "parts": list(parts),
        "seed": int(seed),
        "kind": kind,
        "test_size": int(test_size),
        "sources": {"train": str(train), "dev": str(dev)},
        "records": {s: len(kept[s]) for s in SPLITS},
        "skipped": skipped,
        "words": words,
        "syntax": {"object_verb": params.object_verb, "noun_adjective": params.noun_adjective},
        "moved": moved,
        "parser": parser,
    }
    write_json(out / "stats.json", stats)
    return stats
