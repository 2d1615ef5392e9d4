"""Stage `sample`: up to N sentences per language, drawn as whole paragraphs.

The paper samples 1M sentences per language from CC100 before segmenting (Appendix B).
Paragraphs are the sampling unit so that the paragraph filter of the `segment` stage still
sees real paragraphs. Sentence counts at this point are estimates (terminal punctuation);
the `segment` stage reports exact ones.

Strategies:

* ``reservoir``: a uniform random sample of paragraphs over the whole stream, in one pass
  and memory bounded by N (not by the input size): every paragraph gets a random key; the
  sample is the shortest key-ordered prefix holding N sentences. Paragraphs are written in
  their original order, documents separated by empty lines.
* ``head``: the first paragraphs up to N sentences (stops reading early).

Same input, N and seed give byte-identical output.
"""

from __future__ import annotations

import heapq
import logging
import random
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, atomic_open, write_json
from xlalign.corpus.sources import Paragraph

log = logging.getLogger(__name__)

# Sentence-final punctuation across the scripts of the paper's languages. Western-style
# marks count when followed by a space, a closing quote/bracket or the end of the paragraph;
# full-width CJK marks (written without a following space) count anywhere.
_CLOSE = r"[\"'\u201d\u2019\u300d\u300f\uff09)\]]*"
_TERMINAL = re.compile(
    r"(?:[.!?\u061f\u06d4\u0964\u0965\u1362\u104b\u0f0d\u2026]+" + _CLOSE + r"(?=\s|$))"
    r"|(?:[\u3002\uff01\uff1f]+" + _CLOSE + r")"
)


def estimate_sentences(text: str) -> int:
    """A fast estimate of the number of sentences in a paragraph (at least 1).

    Counts runs of sentence-final punctuation, plus one for trailing text without any.
    """
    n = 0
    end = 0
    for m in _TERMINAL.finditer(text):
        n += 1
        end = m.end()
    if text[end:].strip():
        n += 1
    return max(1, n)


@dataclass
class SampleStats:
    language: str
    strategy: str
    seed: int
    max_sentences: int
    paragraphs_scanned: int = 0
    documents_scanned: int = 0
    characters_scanned: int = 0
    paragraphs_out: int = 0
    documents_out: int = 0
    sentences_out_est: int = 0
    characters_out: int = 0
    scan_stopped_early: bool = False
    seconds: float = 0.0
    sources: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["paragraphs_per_s"] = self.paragraphs_scanned / self.seconds if self.seconds else None
        d["characters_per_s"] = self.characters_scanned / self.seconds if self.seconds else None
        return d


def sample_paragraphs(
    paragraphs: Iterable[Paragraph],
    *,
    max_sentences: int,
    seed: int,
    strategy: str = "reservoir",
    max_paragraphs_scanned: int | None = None,
    stats: SampleStats | None = None,
    progress: bool = False,
) -> list[Paragraph]:
    """Select paragraphs holding up to ``max_sentences`` (estimated) sentences.

    Returns the selection in stream order. Memory is O(selected paragraphs).
    """
    if max_sentences < 1:
        raise ValueError("max_sentences must be >= 1")
    if strategy not in ("reservoir", "head"):
        raise ValueError(f"unknown sampling strategy {strategy!r}; expected 'reservoir' or 'head'")
    rng = random.Random(seed)
    # Max-heap on key (negated): entries (-key, index, n_sentences, paragraph).
    heap: list[tuple[float, int, int, Paragraph]] = []
    total = 0
    head: list[Paragraph] = []
    last_doc = None
    bar = tqdm(desc="sample", unit=" par", disable=not progress, mininterval=2.0)
    for index, par in enumerate(paragraphs):
        if max_paragraphs_scanned is not None and index >= max_paragraphs_scanned:
            if stats:
                stats.scan_stopped_early = True
            break
        if stats:
            stats.paragraphs_scanned += 1
            stats.characters_scanned += len(par.text)
            if par.doc != last_doc:
                stats.documents_scanned += 1
                last_doc = par.doc
        bar.update(1)
        if strategy == "head":
            n = estimate_sentences(par.text)
            if total + n > max_sentences:
                if stats:
                    stats.scan_stopped_early = True
                break
            head.append(par)
            total += n
            continue
        key = rng.random()
        if heap and total >= max_sentences and key > -heap[0][0]:
            # Cannot enter: the kept paragraphs, all with smaller keys, fill the budget.
            # (Checked before estimating sentences: most paragraphs of a big stream stop here.)
            continue
        n = estimate_sentences(par.text)
        heapq.heappush(heap, (-key, index, n, par))
        total += n
        # The largest key is out for good once the others already fill the budget.
        while heap and total - heap[0][2] >= max_sentences:
            total -= heapq.heappop(heap)[2]
    bar.close()
    if strategy == "head":
        return head
    ordered = sorted(heap, key=lambda e: -e[0])
    chosen: list[tuple[int, Paragraph]] = []
    budget = 0
    for _neg, index, n, par in ordered:
        if budget + n > max_sentences:
            break
        chosen.append((index, par))
        budget += n
    chosen.sort(key=lambda e: e[0])
    return [par for _i, par in chosen]


def write_paragraphs(paragraphs: Iterable[Paragraph], out_path: PathLike) -> tuple[int, int, int]:
    """Write one paragraph per line, an empty line between documents (atomically).

    Returns (paragraphs, documents, characters).
    """
    n_par = n_doc = n_chars = 0
    last_doc = None
    with atomic_open(out_path) as fh:
        for par in paragraphs:
            if last_doc is not None and par.doc != last_doc:
                fh.write("\n")
            if par.doc != last_doc:
                n_doc += 1
            last_doc = par.doc
            fh.write(par.text)
            fh.write("\n")
            n_par += 1
            n_chars += len(par.text)
    return n_par, n_doc, n_chars


def sample_corpus(
    paragraphs: Iterable[Paragraph],
    out_path: PathLike,
    stats_path: PathLike,
    *,
    language: str,
    max_sentences: int,
    seed: int,
    strategy: str = "reservoir",
    max_paragraphs_scanned: int | None = None,
    sources: list[dict[str, Any]] | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run the `sample` stage for one language; write the sample and its stats JSON."""
    stats = SampleStats(language, strategy, seed, max_sentences, sources=list(sources or []))
    t0 = time.perf_counter()
    chosen = sample_paragraphs(
        paragraphs,
        max_sentences=max_sentences,
        seed=seed,
        strategy=strategy,
        max_paragraphs_scanned=max_paragraphs_scanned,
        stats=stats,
        progress=progress,
    )
    where = ", ".join(str(s.get("path", s.get("type"))) for s in stats.sources) or "input"
    if stats.paragraphs_scanned == 0:
        raise InputError(f"{where}: no text for language {language!r}; expected a non-empty corpus")
    if not chosen:
        raise InputError(
            f"{where}: language {language!r}: no paragraph fits max_sentences={max_sentences}"
        )
    stats.paragraphs_out, stats.documents_out, stats.characters_out = write_paragraphs(
        chosen, out_path
    )
    stats.sentences_out_est = sum(estimate_sentences(p.text) for p in chosen)
    stats.seconds = time.perf_counter() - t0
    result = stats.as_dict()
    write_json(stats_path, result)
    log.info(
        "%s: sampled %d paragraphs (~%d sentences) of %d scanned in %.1fs",
        language,
        stats.paragraphs_out,
        stats.sentences_out_est,
        stats.paragraphs_scanned,
        stats.seconds,
    )
    return result
