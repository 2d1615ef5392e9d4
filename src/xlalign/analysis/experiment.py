"""The alignment analyses of one encoder, from files to a record (what the workflow rules
and ``xlalign analyse`` call).

* Word alignment from the encoder's layer-l representations (004 section 4.4: argmax and
  optimal transport) scored by AER against gold links, at every layer (0 = embeddings),
  with the word alignment score by layer (share of linked source words whose
  cosine-nearest target word of the sample is their counterpart).
* L2 distances between the representations of related (word-aligned) and unrelated
  (from different sentences) word pairs (003 section 5.4: last layer).
* :func:`run_eflomal_reference`: the alignment stage's aligner (eflomal) on the same gold
  sentences, the reference point of the AER figure.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from xlalign.core.errors import InputError
from xlalign.core.formats.parallel import read_parallel
from xlalign.core.io import PathLike, local_model_dir, write_json
from xlalign.wordalign.symmetrize import Link, read_pharaoh

log = logging.getLogger(__name__)


def read_gold_set(
    source: str, *, fmt: str = "auto", base: int | None = None
) -> tuple[list[list[str]], list[list[str]], Any, str]:
    """(source sentences, target sentences, gold, description) of ``analysis.gold.source``:
    ``handmade`` (the package's English-German set) or a path stem with ``.src``, ``.tgt``
    (one tokenised sentence per line, words split on ASCII spaces only) and ``.gold``
    (Pharaoh or NAACL links, ``fmt``; a Pharaoh file ``base``-indexed, 0 unless declared),
    every link checked against its sentence pair."""
    from xlalign.analysis.gold import load_handmade_gold
    from xlalign.core.formats.goldsets import split_words
    from xlalign.wordalign.aer import read_gold

    if source == "handmade":
        src, tgt, gold = load_handmade_gold()
        return src, tgt, gold, "handmade en-de (xlalign.analysis/data)"
    stem = Path(source)
    files = [stem.with_name(stem.name + ext) for ext in (".src", ".tgt", ".gold")]
    for f in files:
        if not f.is_file():
            raise InputError(f"analysis.gold.source: {f} not found (expected .src/.tgt/.gold)")
    src = [split_words(line) for line in files[0].read_text(encoding="utf-8").split("\n")]
    tgt = [split_words(line) for line in files[1].read_text(encoding="utf-8").split("\n")]
    for side in (src, tgt):
        if side and not side[-1]:
            side.pop()  # the final newline
    if len(src) != len(tgt):
        raise InputError(f"{files[0]} and {files[1]}: {len(src)} and {len(tgt)} lines")
    gold = read_gold(files[2], fmt, base=base, sentences=(src, tgt))
    return src, tgt, gold, str(stem)


def gold_sets(
    gold_source: str,
    sets: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    fmt: str = "auto",
    base: int | None = None,
) -> dict[str, tuple[list[list[str]], list[list[str]], Any, str, str | None]]:
    """Set id -> (source sentences, target sentences, gold, description, pair): the
    configured public sets (:func:`xlalign.analysis.gold.configured_sets`, read in their
    published formats), or the one set of ``analysis.gold.source`` (id ``"gold"``; a
    stem's links in ``fmt``, ``base``-indexed: :func:`read_gold_set`)."""
    from xlalign.analysis.gold import load_set

    if not sets:
        src, tgt, gold, described = read_gold_set(gold_source, fmt=fmt, base=base)
        return {"gold": (src, tgt, gold, described, None)}
    out = {}
    for sid, spec in sets.items():
        g = load_set(spec)
        for where, line, link in g.dropped:
            log.warning(
                "%s line %d: link %r outside its sentence pair dropped (declared "
                "erratum of the published file)",
                where,
                line,
                link,
            )
        out[sid] = (g.src, g.tgt, g.gold, g.description, str(spec.get("pair")))
    return out


def read_aligned_sample(
    corpus_tsv: PathLike, links: PathLike, n: int
) -> tuple[list[list[str]], list[list[str]], list[set[Link]]]:
    """The first ``n`` sentence pairs of the alignment stage's corpus (TSV ``id, source,
    target``) with their symmetrised links (one Pharaoh line per row)."""
    src: list[list[str]] = []
    tgt: list[list[str]] = []
    for _pid, s, t in read_parallel(corpus_tsv):
        if len(src) >= n:
            break
        src.append(s)
        tgt.append(t)
    out_links: list[set[Link]] = []
    for i, ls in enumerate(read_pharaoh(links)):
        if i >= len(src):
            break
        out_links.append(set(ls))
    if len(out_links) != len(src):
        raise InputError(
            f"{links}: {len(out_links)} link lines for {len(src)} pairs of {corpus_tsv}"
        )
    return src, tgt, out_links


def run_encoder_analysis(
    *,
    encoder: PathLike,
    name: str,
    gold_source: str,
    methods: Sequence[str],
    distances: Mapping[str, tuple[PathLike, PathLike]],
    settings: Mapping[str, Any],
    output: PathLike,
    batch_size: int = 16,
    device: str | None = None,
    sets: Mapping[str, Mapping[str, Any]] | None = None,
    gold_format: str = "auto",
    gold_base: int | None = None,
) -> dict[str, Any]:
    """AER and the word alignment score by layer on the gold set, and the L2 distances of
    related and unrelated pairs of each ``distances`` pair (pair -> (corpus.tsv, links)).

    With ``sets`` (``analysis.gold.sets`` as :func:`xlalign.analysis.gold.configured_sets`
    resolves it), every set is scored and recorded under ``gold_sets`` (set id -> its
    pair, sentences and the by-layer series); the top-level series are the first set's."""
    from transformers import AutoModel, AutoTokenizer

    from xlalign.analysis import alignment_score as al
    from xlalign.analysis import distances as dist
    from xlalign.analysis import repr_align

    where = local_model_dir(encoder, what="encoder")
    tokenizer = AutoTokenizer.from_pretrained(where, local_files_only=True)
    model = AutoModel.from_pretrained(where, local_files_only=True)
    per_set: dict[str, dict[str, Any]] = {}
    read = gold_sets(gold_source, sets, fmt=gold_format, base=gold_base)
    for sid, (src, tgt, gold, described, pair) in read.items():
        s_states = al.layer_states(model, tokenizer, src, batch_size=batch_size, device=device)
        t_states = al.layer_states(model, tokenizer, tgt, batch_size=batch_size, device=device)
        depth = s_states[0].shape[0]
        sure = [sorted(gold.get(i, (set(), set()))[0]) for i in range(len(src))]
        aer = repr_align.aer_by_layer(s_states, t_states, gold, methods=methods)
        per_set[sid] = {
            "source": described,
            "pair": pair,
            "sentences": len(src),
            "layers": depth,
            "aer_by_layer": {m: [r.aer for r in rs] for m, rs in aer.items()},
            "precision_by_layer": {m: [r.precision for r in rs] for m, rs in aer.items()},
            "recall_by_layer": {m: [r.recall for r in rs] for m, rs in aer.items()},
            "word_score_by_layer": [
                al.contextual_alignment_score(
                    [s[k] for s in s_states], [t[k] for t in t_states], sure
                )
                for k in range(depth)
            ],
        }
        del s_states, t_states  # one set's states at a time
    first = next(iter(per_set.values()))
    depth = first["layers"]
    out: dict[str, Any] = {
        "encoder": name,
        "gold": {"source": first["source"], "sentences": first["sentences"]},
        "layers": depth,
        **{
            k: first[k]
            for k in (
                "aer_by_layer",
                "precision_by_layer",
                "recall_by_layer",
                "word_score_by_layer",
            )
        },
        "distances": {},
    }
    if sets:
        out["gold_sets"] = per_set
    for pair, (corpus_tsv, links) in sorted(distances.items()):
        psrc, ptgt, plinks = read_aligned_sample(corpus_tsv, links, int(settings["sentences"]))
        layer = settings.get("layer")
        layer = depth - 1 if layer is None else int(layer)
        ps = al.layer_states(model, tokenizer, psrc, batch_size=batch_size, device=device)
        pt = al.layer_states(model, tokenizer, ptgt, batch_size=batch_size, device=device)
        pairs = dist.sample_word_pairs(
            plinks,
            n_related=int(settings["related"]),
            n_unrelated=int(settings["unrelated"]),
            seed=int(settings.get("seed", 0)),
        )
        related = dist.l2_distances(ps, pt, pairs.related, layer)
        unrelated = dist.l2_distances(ps, pt, pairs.unrelated, layer)
        out["distances"][pair] = {
            "layer": layer,
            "sentences": len(psrc),
            **dist.summarise(related, unrelated),
        }
    write_json(output, out)
    return out


class _Bitext:
    """The training pairs of one gold set, streamed from the alignment stage's
    corpus.tsv in the set's direction (``swap``: its columns are the set's target and
    source), at most ``max_pairs`` (None: all); ``count`` = the pairs read so far."""

    def __init__(self, corpus_tsv: PathLike, max_pairs: int | None, *, swap: bool = False):
        self.corpus_tsv = corpus_tsv
        self.max_pairs = max_pairs
        self.swap = swap
        self.count = 0

    def __iter__(self) -> Iterator[tuple[list[str], list[str]]]:
        self.count = 0
        if self.max_pairs is not None and self.max_pairs <= 0:
            return
        for _pid, s, t in read_parallel(self.corpus_tsv):
            self.count += 1
            yield (t, s) if self.swap else (s, t)
            if self.max_pairs is not None and self.count >= self.max_pairs:
                return


def run_eflomal_reference(
    *,
    gold_source: str,
    corpus_tsv: PathLike | None,
    output: PathLike,
    max_pairs: int | None = None,
    wordalign: Mapping[str, Any] | None = None,
    seed: int = 0,
    threads: int = 1,
    sets: Mapping[str, Mapping[str, Any]] | None = None,
    corpora: Mapping[str, tuple[PathLike, bool]] | None = None,
    gold_format: str = "auto",
    gold_base: int | None = None,
    tmpdir: PathLike | None = None,
) -> dict[str, Any]:
    """AER of eflomal's symmetrised links on the gold sentences, aligned together with the
    alignment stage's training pairs with its settings (``wordalign``: the config section).

    With ``sets`` (as :func:`run_encoder_analysis`), each set is aligned with the corpus
    ``corpora`` gives for it (set id -> (corpus.tsv, whether its columns are the set's
    target and source)), or with its own sentences alone where it has none (recorded as
    0 training pairs); each set is recorded under ``gold_sets``, the first at the top.

    The bitext (its first ``max_pairs`` pairs; None: all) is streamed and aligned in the
    stage's chunks with its shared priors (:mod:`xlalign.analysis.reference`), so memory
    is one chunk's whatever its length; temporary files go under ``tmpdir``."""
    from xlalign.analysis.reference import eflomal_reference
    from xlalign.wordalign.aer import score
    from xlalign.wordalign.eflomal import AlignOptions

    options = AlignOptions.from_config(dict(wordalign)) if wordalign else None
    per_set: dict[str, dict[str, Any]] = {}
    read = gold_sets(gold_source, sets, fmt=gold_format, base=gold_base)
    for sid, (src, tgt, gold, described, pair) in read.items():
        bitext: _Bitext | None
        if sets:
            corpus = (corpora or {}).get(sid)
            bitext = _Bitext(corpus[0], max_pairs, swap=corpus[1]) if corpus else None
        else:
            if corpus_tsv is None:
                raise InputError("eflomal reference: no corpus.tsv for the gold set")
            bitext = _Bitext(corpus_tsv, max_pairs)
            if max_pairs != 0 and next(iter(bitext), None) is None:
                raise InputError(
                    f"{corpus_tsv}: no sentence pair to train eflomal on; expected the "
                    "alignment stage's corpus.tsv (a header 'id, source, target', then one "
                    "tab-separated pair per line)"
                )
        links = eflomal_reference(
            src,
            tgt,
            bitext=bitext if bitext is not None else (),
            options=options,
            seed=seed,
            threads=threads,
            tmpdir=tmpdir,
        )
        n_train = bitext.count if bitext is not None else 0
        res = score(links, gold, sentences=(src, tgt))
        per_set[sid] = {
            "source": described,
            "pair": pair,
            "sentences": len(src),
            "training_pairs": n_train,
            "aer": res.aer,
            "precision": res.precision,
            "recall": res.recall,
        }
    first = next(iter(per_set.values()))
    used = options if options is not None else AlignOptions()
    out: dict[str, Any] = {
        "aligner": f"eflomal ({used.symmetrization})",
        # the alignment stage's chunking, as the reference used it (module reference)
        "chunk_size": used.chunk_size,
        "shared_priors": used.shared_priors,
        "max_pairs": max_pairs,
        "gold": {"source": first["source"], "sentences": first["sentences"]},
        "training_pairs": first["training_pairs"],
        "aer": first["aer"],
        "precision": first["precision"],
        "recall": first["recall"],
    }
    if sets:
        out["gold_sets"] = per_set
    write_json(output, out)
    return out
