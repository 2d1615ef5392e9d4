"""Two result trees compared file by file: same files, same numbers (within a tolerance).

Used to check that a change which must not alter results (a refactoring, a new
dependency version, another machine) gives the same outputs as before: run the workflow
twice, then ``python -m xlalign.reporting.compare RUN_A/results/NAME RUN_B/results/NAME``.

What counts as the same, per kind of file:

* ``.npy``: same shape and dtype; floating-point values within ``atol`` (+ ``rtol``
  times the reference), everything else equal;
* ``.json``: the same structure and keys; numbers within the tolerance; keys that hold
  timings or speeds (``seconds``, ``*_per_s``, ...; see :data:`TIMING_KEY`) are skipped;
  strings equal once each tree's own absolute root is replaced by ``<root>``;
* text (``.vec``, ``.tsv``, ``.txt``, ``.md``, ``.csv``, ...): the same lines; a line
  that differs is compared token by token, numbers within the tolerance;
* anything else: the same bytes (SHA-256).

Benchmarks, logs, the MLflow store and training checkpoints are timings or run
bookkeeping, not results: they are left out unless ``ignore`` says otherwise.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from xlalign.core.errors import InputError
from xlalign.core.io import file_sha256

#: Keys of stats JSON whose values are timings or throughputs, different at every run.
TIMING_KEY = re.compile(
    r"(^|_)(seconds|secs|elapsed|duration|time|timestamp|started|finished)($|_)"
    r"|_per_s(ec(ond)?)?$|^per_s(ec(ond)?)?$"
)
#: Paths (relative to a tree, glob syntax) left out by default: timings and bookkeeping.
DEFAULT_IGNORE = (
    "benchmarks/*",
    "*.log",
    "mlflow/*",
    "mlflow.db",
    "*.checkpoint/*",
    "*/checkpoint/*",
)
TEXT_SUFFIXES = frozenset(
    {".vec", ".tsv", ".txt", ".md", ".csv", ".tex", ".conllu", ".yaml", ".yml", ".html", ".svg"}
)
_FLOAT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?(nan|inf)$", re.I)


@dataclass
class Comparison:
    """Differences between two trees; empty lists mean the trees hold the same results."""

    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    different: list[str] = field(default_factory=list)
    compared: int = 0
    ignored: int = 0

    @property
    def same(self) -> bool:
        return not (self.only_a or self.only_b or self.different)

    def report(self) -> str:
        lines = [f"{self.compared} files compared, {self.ignored} left out (timings, logs)"]
        lines += [f"only in A: {p}" for p in self.only_a]
        lines += [f"only in B: {p}" for p in self.only_b]
        lines += [f"differs:   {d}" for d in self.different]
        lines.append("same results" if self.same else "DIFFERENT")
        return "\n".join(lines)


def _files(root: Path, ignore: Sequence[str]) -> tuple[set[str], int]:
    kept, ignored = set(), 0
    for p in root.rglob("*"):
        if not p.is_file():
            continue
        rel = p.relative_to(root).as_posix()
        if any(fnmatch.fnmatch(rel, pat) for pat in ignore):
            ignored += 1
        else:
            kept.add(rel)
    return kept, ignored


def _close(a: float, b: float, atol: float, rtol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= atol + rtol * abs(b)


def _json_diff(
    a: Any, b: Any, where: str, roots: tuple[str, str], tol: tuple[float, float]
) -> Iterator[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if TIMING_KEY.search(str(key)):
                continue
            if key not in a or key not in b:
                yield f"{where}.{key}: only in {'B' if key not in a else 'A'}"
                continue
            yield from _json_diff(a[key], b[key], f"{where}.{key}", roots, tol)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{where}: {len(a)} items vs {len(b)}"
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _json_diff(x, y, f"{where}[{i}]", roots, tol)
    elif isinstance(a, bool) or isinstance(b, bool):
        if a is not b:
            yield f"{where}: {a!r} vs {b!r}"
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if not _close(float(a), float(b), *tol):
            yield f"{where}: {a!r} vs {b!r}"
    elif isinstance(a, str) and isinstance(b, str):
        if a.replace(roots[0], "<root>") != b.replace(roots[1], "<root>"):
            yield f"{where}: {a!r} vs {b!r}"
    elif a != b:
        yield f"{where}: {a!r} vs {b!r}"


def _tokens_close(a: str, b: str, tol: tuple[float, float]) -> bool:
    ta, tb = re.split(r"[\s|,]+", a.strip()), re.split(r"[\s|,]+", b.strip())
    if len(ta) != len(tb):
        return False
    for x, y in zip(ta, tb, strict=True):
        if x == y:
            continue
        if not (_FLOAT.match(x) and _FLOAT.match(y) and _close(float(x), float(y), *tol)):
            return False
    return True


def _text_diff(pa: Path, pb: Path, roots: tuple[str, str], tol: tuple[float, float]) -> str | None:
    la = pa.read_text(encoding="utf-8", errors="replace").replace(roots[0], "<root>").splitlines()
    lb = pb.read_text(encoding="utf-8", errors="replace").replace(roots[1], "<root>").splitlines()
    if len(la) != len(lb):
        return f"{len(la)} lines vs {len(lb)}"
    for i, (x, y) in enumerate(zip(la, lb, strict=True), start=1):
        if x != y and not _tokens_close(x, y, tol):
            return f"line {i}: {x[:80]!r} vs {y[:80]!r}"
    return None


def _npy_diff(pa: Path, pb: Path, tol: tuple[float, float]) -> str | None:
    a, b = np.load(pa, allow_pickle=False), np.load(pb, allow_pickle=False)
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"shape/dtype {a.shape} {a.dtype} vs {b.shape} {b.dtype}"
    if np.issubdtype(a.dtype, np.floating):
        x, y = a.astype(np.float64), b.astype(np.float64)
        ok = np.isclose(x, y, atol=tol[0], rtol=tol[1], equal_nan=True)
        if not ok.all():
            worst = float(np.nanmax(np.abs(x - y)))
            return f"{int((~ok).sum())} values differ (max |a-b| = {worst:.3g})"
        return None
    return None if np.array_equal(a, b) else "values differ"


def _run_roots(a: Path, b: Path) -> tuple[str, str]:
    """The parts of two tree paths before their common tail (``/x/run1``, ``/y/run2`` for
    ``/x/run1/results/embedded`` and ``/y/run2/results/embedded``): the run directories,
    whose absolute paths may appear inside stats files and are not a difference."""
    pa, pb = a.parts, b.parts
    n = 0
    while n < min(len(pa), len(pb)) - 1 and pa[-1 - n] == pb[-1 - n]:
        n += 1
    return str(Path(*pa[: len(pa) - n])), str(Path(*pb[: len(pb) - n]))


def compare_trees(
    a: str | Path,
    b: str | Path,
    *,
    atol: float = 1e-6,
    rtol: float = 0.0,
    ignore: Sequence[str] = DEFAULT_IGNORE,
) -> Comparison:
    """Compare every file below ``a`` with the file of the same relative path below ``b``."""
    root_a, root_b = Path(a).resolve(), Path(b).resolve()
    for root in (root_a, root_b):
        if not root.is_dir():
            raise InputError(f"{root}: not a directory (expected a result tree to compare)")
    files_a, ign_a = _files(root_a, ignore)
    files_b, _ = _files(root_b, ignore)
    out = Comparison(
        only_a=sorted(files_a - files_b), only_b=sorted(files_b - files_a), ignored=ign_a
    )
    roots = _run_roots(root_a, root_b)
    tol = (atol, rtol)
    for rel in sorted(files_a & files_b):
        pa, pb = root_a / rel, root_b / rel
        out.compared += 1
        suffix = pa.suffix.lower()
        try:
            if suffix == ".npy":
                diff = _npy_diff(pa, pb, tol)
            elif suffix == ".json":
                ja = json.loads(pa.read_text(encoding="utf-8"))
                jb = json.loads(pb.read_text(encoding="utf-8"))
                diffs = list(_json_diff(ja, jb, "", roots, tol))
                diff = "; ".join(diffs[:5]) + (" ..." if len(diffs) > 5 else "") or None
            elif suffix in TEXT_SUFFIXES:
                diff = _text_diff(pa, pb, roots, tol)
            else:
                diff = None if file_sha256(pa) == file_sha256(pb) else "bytes differ"
        except (ValueError, OSError) as exc:
            diff = f"unreadable: {exc}"
        if diff:
            out.different.append(f"{rel}: {diff}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m xlalign.reporting.compare",
        description="Compare two result trees: same files, numbers within a tolerance, "
        "timings left out. Exit status 1 when they differ.",
    )
    p.add_argument("a", help="reference tree (e.g. RUN_A/results/embedded)")
    p.add_argument("b", help="tree to check (e.g. RUN_B/results/embedded)")
    p.add_argument("--atol", type=float, default=1e-6, help="absolute tolerance (1e-6)")
    p.add_argument("--rtol", type=float, default=0.0, help="relative tolerance (0)")
    p.add_argument(
        "--ignore",
        action="append",
        default=None,
        metavar="GLOB",
        help=f"relative paths to leave out (repeatable; default: {' '.join(DEFAULT_IGNORE)})",
    )
    args = p.parse_args(argv)
    try:
        result = compare_trees(
            args.a, args.b, atol=args.atol, rtol=args.rtol, ignore=args.ignore or DEFAULT_IGNORE
        )
    except InputError as exc:
        print(f"compare: error: {exc}", file=sys.stderr)
        return 2
    print(result.report())
    return 0 if result.same else 1


if __name__ == "__main__":
    raise SystemExit(main())
