"""Word alignment of a tokenised parallel corpus with eflomal, in chunks, then symmetrised.

eflomal (Östling & Tiedemann 2017) is a Bayesian IBM-1 -> HMM -> HMM+fertility aligner
sampled with Gibbs sampling; it replaces fast_align (its authors report AER 0.081 against
fast_align's 0.153 on 1.13M en-fr sentences). It aligns both directions; both link files
are written in source-target order (``i-j`` = source token i, target token j, 0-based).

Pipeline (:func:`align_corpus`), over the TSV of :mod:`xlalign.corpus.parallel`:

1. **Chunks.** The corpus is streamed in chunks of ``chunk_size`` pairs, each aligned on
   its own (eflomal keeps a whole chunk and its vocabulary in memory; its statistics stop
   improving long before a chunk of a few hundred thousand pairs is full). With a
   checkpoint directory, every finished chunk is kept there with a fingerprint of the
   corpus and the options, and a re-run after a crash resumes at the first missing chunk.
   The finished chunks are the checkpoint: SIGTERM (Slurm pre-emption, see
   :mod:`xlalign.core.interrupt`) stops the job at once (eflomal's process is killed and
   only the chunk it was aligning is lost). eflomal samples both directions of a chunk in
   one process, from one seeded random state, so a chunk is kept whole (forward and
   reverse) or not at all: aligning the directions apart would change the links.
2. **Temporary files** (eflomal's binary inputs, link files) go to a private directory
   under ``tmpdir`` (the job's ``resources.tmpdir``), removed on success and on failure; a
   full disk there is reported as such.
3. **Checks.** Every chunk's link files must have one line per pair and links inside the
   sentence lengths; anything else is an error, never a silently shifted alignment.
4. **Shared priors** (``shared_priors``, off by default). Chunks aligned apart each start
   from nothing, and their links differ from what one run over the whole corpus gives.
   With it, when the corpus has more than one chunk, a seeded random sample of
   ``shared_priors_sample`` pairs (at most one chunk) is aligned first (both directions,
   one eflomal run), priors are counted on its links (:mod:`xlalign.wordalign.priors`,
   what ``eflomal-makepriors`` computes) and every chunk's run is given them. A user's
   ``priors`` file guides the sample's run, and the chunks get the sum of the two (the
   alphas of a record in both added). The learnt priors are kept beside the chunks
   (``shared-priors.txt`` in the checkpoint directory, its checksum in the manifest): a
   resumed job reuses them, and chunks are never mixed with priors they were not aligned
   with. A one-chunk corpus is aligned as without the option.
5. **Memory.** One chunk is held at a time (its sentences as text, then eflomal's arrays;
   the binary runs in a subprocess on the chunk's files), the corpus and the link files
   are streamed, so a job's memory grows with ``chunk_size``, not with the corpus.
   ``chunk_size`` is not derived from ``memory.block_mb``: it changes the links (eflomal
   learns its statistics per chunk), and a memory setting must not change results.
6. **Symmetrisation** (``wordalign.symmetrize``, grow-diag-final-and by default), then, as
   Wu & Dredze (2020), only one-to-one links, and no link whose two words are identical
   (both switchable).

Outputs: the ``forward``, ``reverse`` and ``symmetrized`` Pharaoh files (one line per
corpus pair, the symmetrised one before the one-to-one / identical filters), the table of
aligned word pairs after the filters (``pair_id sentence source_pos target_pos source
target``, what contextual alignment losses need), and a stats JSON.

**Determinism.** eflomal has no seed option: its binary seeds itself from ``/dev/urandom``,
and its samplers draw their random states in thread-arrival order. With ``seed`` set (the
default), the binary runs with a tiny ``LD_PRELOAD`` shim (compiled on first use with the
system C compiler) that answers its one read of ``/dev/urandom`` with bytes derived from
the seed and the chunk number, and with OpenMP limited to the two directions in parallel
and the samplers of a direction in order (``OMP_NUM_THREADS=2,1``): the same corpus,
options and seed then give byte-identical links. ``seed=None`` is eflomal's own behaviour
(samplers in parallel on all threads, a different alignment at every run).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import json
import logging
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from xlalign.core import interrupt
from xlalign.core.errors import ConfigError, InputError, ToolError
from xlalign.core.formats.parallel import (  # noqa: F401 (the format, re-exported here)
    PAIRS_COLUMNS,
    count_pairs,
    format_pairs_row,
    format_parallel_row,
    pairs_header,
    parallel_header,
    read_aligned_pairs,
    read_parallel,
)
from xlalign.core.formats.priors import PriorCounts, check_priors, read_priors, write_priors
from xlalign.core.io import PathLike, atomic_open, file_sha256, iter_lines, write_json
from xlalign.wordalign.priors import count_priors
from xlalign.wordalign.symmetrize import (
    HEURISTICS,
    filter_links,
    format_pharaoh,
    parse_pharaoh,
    symmetrize,
)

log = logging.getLogger(__name__)

_CHECKPOINT_FORMAT = 1


@dataclass(frozen=True)
class AlignOptions:
    """eflomal's settings, the chunk size and the symmetrisation.

    ``model``: 1 = IBM1, 2 = + HMM, 3 = + fertility (eflomal's default). ``samplers``:
    independent Gibbs samplers whose counts are averaged (run in parallel, one thread
    each). ``iterations``: (IBM1, HMM, fertility) iteration counts, or None for eflomal's
    automatic numbers scaled by ``rel_iterations``. ``null_prior``: prior probability of a
    NULL link. ``*_prefix_len`` / ``*_suffix_len``: align on word prefixes / suffixes of
    that length (crude stemming; 0 = whole words). ``shared_priors``: learn priors on a
    seeded sample of ``shared_priors_sample`` pairs (at most ``chunk_size``) and give them
    to every chunk's run, when there is more than one (module docstring).
    """

    model: int = 3
    samplers: int = 3
    iterations: tuple[int, int, int] | None = None
    rel_iterations: float = 1.0
    null_prior: float = 0.2
    source_prefix_len: int = 0
    source_suffix_len: int = 0
    target_prefix_len: int = 0
    target_suffix_len: int = 0
    chunk_size: int = 200_000
    shared_priors: bool = False
    shared_priors_sample: int = 200_000
    seed: int | None = 0
    symmetrization: str = "grow-diag-final-and"
    one_to_one: bool = True
    drop_identical: bool = True

    def __post_init__(self) -> None:
        checks = [
            ("model", self.model in (1, 2, 3), "1, 2 or 3"),
            ("samplers", self.samplers >= 1, "an integer >= 1"),
            ("rel_iterations", self.rel_iterations > 0, "a number > 0"),
            ("null_prior", 0 <= self.null_prior < 1, "a number in [0, 1)"),
            ("chunk_size", self.chunk_size >= 1, "an integer >= 1"),
            ("shared_priors_sample", self.shared_priors_sample >= 1, "an integer >= 1"),
            ("seed", self.seed is None or self.seed >= 0, "an integer >= 0 or null"),
            ("symmetrization", self.symmetrization in HEURISTICS, f"one of {HEURISTICS}"),
        ]
        for name in ("source_prefix_len", "source_suffix_len"):
            checks.append((name, getattr(self, name) >= 0, "an integer >= 0"))
        for name in ("target_prefix_len", "target_suffix_len"):
            checks.append((name, getattr(self, name) >= 0, "an integer >= 0"))
        if self.iterations is not None:
            ok = len(self.iterations) == 3 and all(int(n) >= 0 for n in self.iterations)
            checks.append(("iterations", ok, "three integers >= 0 (IBM1, HMM, fertility)"))
        for name, ok, expected in checks:
            if not ok:
                raise ConfigError(
                    f"word alignment option {name} = {getattr(self, name)!r}; expected {expected}"
                )

    @classmethod
    def from_config(cls, cfg: dict[str, Any]) -> AlignOptions:
        """From the ``wordalign`` section of a validated config (unknown keys ignored;
        ``shared_priors: {enabled, sample_pairs}`` becomes the two flat fields)."""
        fields = {k: v for k, v in cfg.items() if k in cls.__dataclass_fields__}
        shared = cfg.get("shared_priors")
        if isinstance(shared, dict):
            fields["shared_priors"] = bool(shared.get("enabled", False))
            if "sample_pairs" in shared:
                fields["shared_priors_sample"] = int(shared["sample_pairs"])
        if fields.get("iterations") is not None:
            fields["iterations"] = tuple(int(n) for n in fields["iterations"])
        return cls(**fields)

    def eflomal_fingerprint(self) -> dict[str, Any]:
        """What the links of a chunk depend on (not the symmetrisation)."""
        out = asdict(self)
        for key in ("symmetrization", "one_to_one", "drop_identical"):
            out.pop(key)
        return out


@dataclass(frozen=True)
class AlignmentPaths:
    """Where :func:`align_corpus` writes."""

    forward: Path
    reverse: Path
    symmetrized: Path
    pairs: Path
    stats: Path

    @classmethod
    def in_dir(cls, directory: PathLike) -> AlignmentPaths:
        d = Path(directory)
        return cls(
            d / "forward.txt",
            d / "reverse.txt",
            d / "symmetrized.txt",
            d / "pairs.tsv",
            d / "stats.json",
        )


# ------------------------------------------------------------------------------ eflomal


def eflomal_version() -> str:
    from importlib.metadata import version

    return version("eflomal")


@contextlib.contextmanager
def _private_tmpdir(tmpdir: PathLike | None) -> Iterator[Path]:
    """A fresh directory under ``tmpdir`` (default: the system's), removed in any case.

    eflomal's Python wrapper writes its binary inputs with ``tempfile``; pointing
    ``tempfile.tempdir`` here for the duration keeps them in the job's tmpdir too.
    """
    base = Path(tmpdir) if tmpdir is not None else None
    if base is not None:
        base.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix="xlalign-eflomal-", dir=base))
    saved = tempfile.tempdir
    tempfile.tempdir = str(path)
    try:
        yield path
    finally:
        tempfile.tempdir = saved
        shutil.rmtree(path, ignore_errors=True)


#: Answers eflomal's read of /dev/urandom (its only source of randomness) with splitmix64
#: bytes of $XLALIGN_EFLOMAL_SEED; every other fopen goes to the C library.
_SEED_SHIM_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

FILE *fopen(const char *path, const char *mode) {
    static FILE *(*real_fopen)(const char *, const char *) = NULL;
    const char *seed = getenv("XLALIGN_EFLOMAL_SEED");
    if (seed != NULL && path != NULL && strcmp(path, "/dev/urandom") == 0) {
        static __thread unsigned char bytes[256];
        uint64_t x = strtoull(seed, NULL, 10);
        for (size_t i = 0; i < sizeof(bytes); i += 8) {
            uint64_t v = splitmix64(&x);
            memcpy(bytes + i, &v, 8);
        }
        return fmemopen(bytes, sizeof(bytes), "rb");
    }
    if (real_fopen == NULL)
        real_fopen = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen");
    return real_fopen(path, mode);
}
"""


def seed_shim(directory: PathLike) -> Path:
    """Compile the seeding shim into ``directory`` (once); ToolError without a C compiler."""
    out = Path(directory) / "xlalign-eflomal-seed.so"
    if out.exists():
        return out
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise ToolError(
            "wordalign.seed: seeding eflomal needs a C compiler (cc or gcc, or $CC) to build a "
            "40-line LD_PRELOAD shim; install one, or set wordalign.seed: null for eflomal's "
            "own (unseeded) randomness"
        )
    src = Path(directory) / "xlalign-eflomal-seed.c"
    src.write_text(_SEED_SHIM_C, encoding="utf-8")
    try:
        r = subprocess.run(
            [cc, "-shared", "-fPIC", "-O2", "-o", str(out), str(src), "-ldl"],
            capture_output=True,
            text=True,
        )
        problem = r.stderr.strip() if r.returncode != 0 else None
    except OSError as exc:
        problem = str(exc)
    if problem is not None:
        out.unlink(missing_ok=True)
        raise ToolError(
            f"wordalign.seed: {cc} could not build the eflomal seeding shim:\n{problem}"
            "\n(set wordalign.seed: null to run eflomal unseeded)"
        )
    return out


def chunk_seed(seed: int, chunk: int | str) -> int:
    """The seed eflomal sees for one chunk (distinct chunks, distinct random streams);
    ``chunk="priors"`` is the shared-priors sample's run (and its choice of pairs)."""
    digest = hashlib.blake2b(f"{seed}:{chunk}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


@contextlib.contextmanager
def _environ(**values: str | None) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def _align_chunk(
    src: Sequence[str],
    tgt: Sequence[str],
    options: AlignOptions,
    workdir: Path,
    *,
    priors: PathLike | None,
    threads: int,
    where: str,
    seed: int | None = None,
    shim: Path | None = None,
) -> tuple[list[str], list[str]]:
    """Forward and reverse Pharaoh lines of one chunk (eflomal in a subprocess).

    With ``seed`` (and the ``shim`` of :func:`seed_shim`) the run is deterministic.
    """
    import eflomal

    aligner = eflomal.Aligner(
        model=options.model,
        n_iterations=options.iterations,
        n_samplers=options.samplers,
        rel_iterations=options.rel_iterations,
        null_prior=options.null_prior,
        source_prefix_len=options.source_prefix_len,
        source_suffix_len=options.source_suffix_len,
        target_prefix_len=options.target_prefix_len,
        target_suffix_len=options.target_suffix_len,
    )
    fwd, rev = workdir / "forward.links", workdir / "reverse.links"
    if seed is None:
        env: dict[str, str | None] = {"OMP_NUM_THREADS": str(max(1, threads))}
    else:
        if shim is None:
            raise ValueError("a seeded run needs the shim")
        preload = os.environ.get("LD_PRELOAD")
        env = {
            # the two directions in parallel, the samplers of each in order
            "OMP_NUM_THREADS": "2,1" if threads >= 2 else "1",
            "OMP_MAX_ACTIVE_LEVELS": "2",
            "LD_PRELOAD": f"{shim}:{preload}" if preload else str(shim),
            "XLALIGN_EFLOMAL_SEED": str(seed),
        }
    try:
        with _environ(**env), contextlib.ExitStack() as stack:
            prior_fh = (
                stack.enter_context(open(priors, encoding="utf-8")) if priors is not None else None
            )
            aligner.align(
                list(src),
                list(tgt),
                links_filename_fwd=str(fwd),
                links_filename_rev=str(rev),
                priors_input=prior_fh,
                quiet=True,
            )
    except subprocess.CalledProcessError as exc:
        interrupt.raise_if_requested(where)  # eflomal killed by the same SIGTERM
        free = shutil.disk_usage(workdir).free
        raise ToolError(
            f"{where}: eflomal failed ({exc}); its temporary files were in {workdir} "
            f"({free / 2**20:.0f} MiB free there)"
        ) from exc
    except OSError as exc:
        if _disk_full(exc):
            raise ToolError(
                f"{where}: no space left in the temporary directory {workdir.parent} while "
                f"preparing eflomal's input ({exc}); point resources.tmpdir (or TMPDIR) at a "
                f"larger disk or lower wordalign.chunk_size"
            ) from exc
        raise
    out = []
    for name, path in (("forward", fwd), ("reverse", rev)):
        if not path.exists():
            raise ToolError(f"{where}: eflomal wrote no {name} links file")
        lines = path.read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) != len(src):
            free = shutil.disk_usage(workdir).free
            raise ToolError(
                f"{where}: eflomal's {name} links have {len(lines)} lines for {len(src)} "
                f"sentence pairs ({free / 2**20:.0f} MiB free in {workdir}); refusing a "
                "shifted alignment"
            )
        out.append(lines)
    return out[0], out[1]


# --------------------------------------------------------------------------- checkpoints


def _fingerprint(corpus: PathLike, options: AlignOptions, priors: PathLike | None) -> str:
    blob = {
        "format": _CHECKPOINT_FORMAT,
        "corpus": file_sha256(corpus),
        "priors": file_sha256(priors) if priors is not None else None,
        "options": options.eflomal_fingerprint(),
        "eflomal": eflomal_version(),
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()


class _ChunkStore:
    """Finished chunks' link files, in a checkpoint directory or a private temp dir."""

    def __init__(self, directory: Path, fingerprint: str, *, resume: bool) -> None:
        self.dir = directory
        self.fingerprint = fingerprint
        manifest = directory / "manifest.json"
        old: dict[str, Any] = {}
        if directory.exists():
            try:
                old = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):  # no (readable) manifest: nothing to trust
                old = {}
            kept = resume and old.get("fingerprint") == fingerprint
            if not kept:
                if resume:
                    log.warning(
                        "%s: checkpoint is for another corpus, priors or options (or has no "
                        "manifest); starting afresh",
                        directory,
                    )
                shutil.rmtree(directory)
                old = {}
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob(".*.tmp"):  # a writer killed mid-save
            stale.unlink(missing_ok=True)
        self.manifest: dict[str, Any] = {"fingerprint": fingerprint}
        if isinstance(old.get("shared_priors"), str):
            self.manifest["shared_priors"] = old["shared_priors"]
        write_json(manifest, self.manifest)

    @property
    def priors_path(self) -> Path:
        """The shared priors the chunks here were (or are to be) aligned with."""
        return self.dir / "shared-priors.txt"

    def kept_priors(self) -> Path | None:
        """The shared priors kept here, if their checksum is the manifest's."""
        want = self.manifest.get("shared_priors")
        if want is None or not self.priors_path.exists():
            return None
        return self.priors_path if file_sha256(self.priors_path) == want else None

    def set_priors(self, priors: PriorCounts) -> Path:
        """Keep new shared priors: the chunks aligned with any others are removed first."""
        self.manifest.pop("shared_priors", None)
        write_json(self.dir / "manifest.json", self.manifest)
        for old in self.dir.glob("chunk-*"):
            old.unlink()
        write_priors(self.priors_path, priors)
        self.manifest["shared_priors"] = file_sha256(self.priors_path)
        write_json(self.dir / "manifest.json", self.manifest)
        return self.priors_path

    def path(self, k: int, direction: str) -> Path:
        return self.dir / f"chunk-{k:05d}.{direction}"

    def done(self, k: int, n: int) -> bool:
        for direction in ("fwd", "rev"):
            p = self.path(k, direction)
            if not p.exists():
                return False
            if sum(1 for _ in p.open(encoding="utf-8")) != n:
                return False
        return True

    def save(self, k: int, fwd: list[str], rev: list[str]) -> None:
        for direction, lines in (("fwd", fwd), ("rev", rev)):
            with atomic_open(self.path(k, direction)) as fh:
                for line in lines:
                    fh.write(line + "\n")

    def lines(self, k: int, direction: str) -> Iterator[str]:
        with self.path(k, direction).open(encoding="utf-8") as fh:
            for line in fh:
                yield line.rstrip("\n")


@contextlib.contextmanager
def _log_preempted(store: _ChunkStore, n_chunks: int, *, resumable: bool) -> Iterator[None]:
    try:
        yield
    except interrupt.Preempted:
        if resumable:
            kept = sum(1 for _ in store.dir.glob("chunk-*.rev"))
            log.warning(
                "%s: stopped with %d of %d chunks aligned; a re-run resumes there",
                store.dir,
                kept,
                n_chunks,
            )
        raise


# ------------------------------------------------------------------------------ corpus


def _chunks(corpus: PathLike, size: int) -> Iterator[tuple[list[str], list[str]]]:
    """The corpus in chunks of ``size`` pairs: (source lines, target lines), tokens joined
    by spaces (a line of text holds a sentence in a few times less memory than its list of
    token strings)."""
    src: list[str] = []
    tgt: list[str] = []
    for _, s, t in read_parallel(corpus):
        src.append(" ".join(s))
        tgt.append(" ".join(t))
        if len(src) == size:
            yield src, tgt
            src, tgt = [], []
    if src:
        yield src, tgt


def _sample(corpus: PathLike, n_pairs: int, k: int, seed: int) -> tuple[list[str], list[str]]:
    """``k`` pairs of the corpus drawn at random (seeded), in corpus order, as in
    :func:`_chunks`; the corpus is streamed."""
    chosen = sorted(random.Random(seed).sample(range(n_pairs), k))
    src: list[str] = []
    tgt: list[str] = []
    at = 0
    for index, (_, s, t) in enumerate(read_parallel(corpus)):
        if at == len(chosen):
            break
        if index == chosen[at]:
            src.append(" ".join(s))
            tgt.append(" ".join(t))
            at += 1
    return src, tgt


def _shared_priors(
    corpus: PathLike,
    n_pairs: int,
    options: AlignOptions,
    store: _ChunkStore,
    work: Path,
    *,
    user_priors: PathLike | None,
    threads: int,
    shim: Path | None,
) -> tuple[Path, dict[str, Any]]:
    """The priors every chunk is aligned with: kept ones of an interrupted run, or learnt
    on a sample (plus the user's ``user_priors``). Returns the file and its stats."""
    k = min(options.shared_priors_sample, options.chunk_size, n_pairs)
    kept = store.kept_priors()
    if kept is not None:
        log.info("%s: reusing the shared priors of the interrupted run", kept)
        return kept, {"sample_pairs": k, "reused": True, "seconds": 0.0}
    t0 = time.perf_counter()
    base_seed = options.seed if options.seed is not None else 0
    src, tgt = _sample(corpus, n_pairs, k, chunk_seed(base_seed, "priors"))
    where = f"{corpus}: shared-priors sample ({k} of {n_pairs} pairs)"
    sample_dir = work / "priors-sample"
    sample_dir.mkdir()
    try:
        fwd, rev = _align_chunk(
            src,
            tgt,
            options,
            sample_dir,
            priors=user_priors,
            threads=threads,
            where=where,
            seed=None if options.seed is None else chunk_seed(options.seed, "priors"),
            shim=shim,
        )
    finally:
        shutil.rmtree(sample_dir, ignore_errors=True)
    learnt = count_priors(
        ((s.split(), t.split(), f, r) for s, t, f, r in zip(src, tgt, fwd, rev, strict=True)),
        where=f"{where}: ",
    )
    del src, tgt, fwd, rev
    n_learnt = len(learnt)
    if user_priors is not None:
        learnt.add(read_priors(user_priors))
    path = store.set_priors(learnt)
    seconds = time.perf_counter() - t0
    log.info(
        "%s: %d prior records learnt in %.1f s%s",
        where,
        n_learnt,
        seconds,
        f", added to the {user_priors} ones" if user_priors is not None else "",
    )
    return path, {
        "sample_pairs": k,
        "reused": False,
        "seconds": seconds,
        "learnt_records": n_learnt,
        "records": len(learnt),
    }


def align_corpus(
    corpus: PathLike,
    out: AlignmentPaths,
    options: AlignOptions | None = None,
    *,
    tmpdir: PathLike | None = None,
    checkpoint_dir: PathLike | None = None,
    priors: PathLike | None = None,
    threads: int = 1,
    keep_checkpoint: bool = False,
    progress: bool = True,
    first_chunks: int | None = None,
) -> dict[str, Any]:
    """Align a parallel corpus TSV (:func:`xlalign.corpus.parallel.read_parallel`); write ``out``.

    Returns the stats also written to ``out.stats``. See the module docstring.
    ``first_chunks`` (None: all) aligns only the corpus's first chunks, exactly as a run
    over the whole corpus aligns them (its shared priors are learnt on the whole
    corpus's sample, its chunk seeds are theirs); ``out`` then holds those pairs only.
    """
    if first_chunks is not None and first_chunks < 1:
        raise ValueError(f"first_chunks: {first_chunks}; expected at least 1 (or None: all)")
    options = options or AlignOptions()
    start = time.perf_counter()
    # Validates every row too: read_parallel refuses an empty id or side.
    n_pairs = count_pairs(corpus)
    if n_pairs == 0:
        raise InputError(f"{corpus}: no sentence pairs to align")
    if priors is not None:
        check_priors(priors)  # eflomal reads it per chunk and fails with a traceback
    n_chunks = -(-n_pairs // options.chunk_size)
    n_aligned = n_chunks if first_chunks is None else min(first_chunks, n_chunks)
    fingerprint = _fingerprint(corpus, options, priors)
    align_seconds = 0.0
    shared: dict[str, Any] | None = None
    with _private_tmpdir(tmpdir) as work:
        store_dir = Path(checkpoint_dir) if checkpoint_dir is not None else work / "chunks"
        store = _ChunkStore(store_dir, fingerprint, resume=checkpoint_dir is not None)
        resumed = 0
        shim = seed_shim(work) if options.seed is not None else None
        chunk_priors: PathLike | None = priors
        if options.shared_priors and n_chunks > 1:
            with _log_preempted(store, n_chunks, resumable=checkpoint_dir is not None):
                chunk_priors, shared = _shared_priors(
                    corpus,
                    n_pairs,
                    options,
                    store,
                    work,
                    user_priors=priors,
                    threads=threads,
                    shim=shim,
                )
        bar = tqdm(
            total=min(n_pairs, n_aligned * options.chunk_size),
            desc=f"eflomal {Path(corpus).parent.name}",
            unit=" pairs",
            file=sys.stderr,
            disable=not progress,
            mininterval=1.0,
        )
        with bar, _log_preempted(store, n_chunks, resumable=checkpoint_dir is not None):
            chunks = itertools.islice(_chunks(corpus, options.chunk_size), n_aligned)
            for k, (src_lines, tgt_lines) in enumerate(chunks):
                size = len(src_lines)
                if store.done(k, size):
                    resumed += 1
                    bar.update(size)
                    continue
                if resumed and resumed == k:
                    log.info("%s: resuming at chunk %d of %d", store.dir, k + 1, n_chunks)
                where = f"{corpus}: chunk {k + 1}/{n_chunks} ({size} pairs)"
                chunk_dir = work / f"chunk-{k:05d}"
                chunk_dir.mkdir()
                t0 = time.perf_counter()
                try:
                    fwd, rev = _align_chunk(
                        src_lines,
                        tgt_lines,
                        options,
                        chunk_dir,
                        priors=chunk_priors,
                        threads=threads,
                        where=where,
                        seed=None if options.seed is None else chunk_seed(options.seed, k),
                        shim=shim,
                    )
                    store.save(k, fwd, rev)
                except OSError as exc:
                    if _disk_full(exc):
                        raise ToolError(f"{where}: no space left on device ({exc})") from exc
                    raise
                finally:
                    shutil.rmtree(chunk_dir, ignore_errors=True)
                align_seconds += time.perf_counter() - t0
                log.info("%s aligned in %.1f s", where, time.perf_counter() - t0)
                del src_lines, tgt_lines, fwd, rev
                bar.update(size)
        if resumed:
            log.info("resumed: %d of %d chunks were already aligned", resumed, n_chunks)
        stats = _write_outputs(corpus, out, options, store, n_aligned)
    if checkpoint_dir is not None and not keep_checkpoint:
        shutil.rmtree(checkpoint_dir, ignore_errors=True)
    seconds = time.perf_counter() - start
    stats.update(
        {
            "corpus": str(corpus),
            "options": asdict(options),
            "priors": str(priors) if priors is not None else None,
            "shared_priors": shared,
            "eflomal": eflomal_version(),
            "threads": threads,
            "chunks": n_chunks,
            "chunks_aligned": n_aligned,
            "chunks_resumed": resumed,
            "align_seconds": align_seconds,
            "seconds": seconds,
            "sentences_per_s": (n_pairs / align_seconds) if align_seconds > 0 else None,
            "seeded": options.seed is not None,
        }
    )
    write_json(out.stats, stats)
    log.info(
        "%d pairs aligned (%.0f pairs/s); %.2f links per pair kept after %s + filters",
        n_pairs,
        stats["sentences_per_s"] or 0.0,
        stats["kept_links_per_sentence"],
        options.symmetrization,
    )
    return stats


def _write_outputs(
    corpus: PathLike,
    out: AlignmentPaths,
    options: AlignOptions,
    store: _ChunkStore,
    n_chunks: int,
) -> dict[str, Any]:
    """Symmetrise and filter every pair of the first ``n_chunks`` chunks; write the
    Pharaoh files and the pairs table."""
    counts = {
        "sentences": 0,
        "source_tokens": 0,
        "target_tokens": 0,
        "forward_links": 0,
        "reverse_links": 0,
        "symmetrized_links": 0,
        "kept_links": 0,
        "dropped_not_one_to_one": 0,
        "dropped_identical": 0,
        "sentences_without_links": 0,
        "source_tokens_aligned": 0,
        "target_tokens_aligned": 0,
    }

    def links_iter(direction: str) -> Iterator[str]:
        for k in range(n_chunks):
            yield from store.lines(k, direction)

    with contextlib.ExitStack() as stack:
        files: dict[str, TextIO] = {
            name: stack.enter_context(atomic_open(getattr(out, name)))
            for name in ("forward", "reverse", "symmetrized", "pairs")
        }
        files["pairs"].write(pairs_header())
        pairs = itertools.islice(read_parallel(corpus), n_chunks * options.chunk_size)
        rows = zip(pairs, links_iter("fwd"), links_iter("rev"), strict=True)
        for sent, ((pid, src, tgt), fline, rline) in enumerate(rows):
            where = f"{corpus}: pair {pid!r} (line {sent + 2})"
            fwd = parse_pharaoh(
                fline, where=f"{where}, forward links", n_src=len(src), n_tgt=len(tgt)
            )
            rev = parse_pharaoh(
                rline, where=f"{where}, reverse links", n_src=len(src), n_tgt=len(tgt)
            )
            sym = symmetrize(fwd, rev, options.symmetrization, len(src), len(tgt))
            kept, dropped = filter_links(
                sym, src, tgt, one_to_one=options.one_to_one, drop_identical=options.drop_identical
            )
            files["forward"].write(format_pharaoh(fwd) + "\n")
            files["reverse"].write(format_pharaoh(rev) + "\n")
            files["symmetrized"].write(format_pharaoh(sym) + "\n")
            for i, j in sorted(kept):
                files["pairs"].write(format_pairs_row(pid, sent, i, j, src[i], tgt[j]))
            counts["sentences"] += 1
            counts["source_tokens"] += len(src)
            counts["target_tokens"] += len(tgt)
            counts["forward_links"] += len(fwd)
            counts["reverse_links"] += len(rev)
            counts["symmetrized_links"] += len(sym)
            counts["kept_links"] += len(kept)
            counts["dropped_not_one_to_one"] += dropped.get("not_one_to_one", 0)
            counts["dropped_identical"] += dropped.get("identical", 0)
            counts["sentences_without_links"] += not kept
            counts["source_tokens_aligned"] += len({i for i, _ in sym})
            counts["target_tokens_aligned"] += len({j for _, j in sym})
    n = counts["sentences"]
    stats: dict[str, Any] = dict(counts)
    for key in ("forward", "reverse", "symmetrized", "kept"):
        stats[f"{key}_links_per_sentence"] = counts[f"{key}_links"] / n
    stats["source_coverage"] = counts["source_tokens_aligned"] / max(1, counts["source_tokens"])
    stats["target_coverage"] = counts["target_tokens_aligned"] / max(1, counts["target_tokens"])
    stats["outputs"] = {k: str(v) for k, v in asdict(out).items()}
    return stats


def corpus_from_token_files(source: PathLike, target: PathLike, out_path: PathLike) -> int:
    """A corpus TSV from two pre-tokenised, line-aligned files (one sentence per line).

    Different line counts, or a line whose one side is empty, are an :class:`InputError`
    naming the files and line: an alignment must never shift. Returns the pair count.
    """
    n = n_src = n_tgt = 0
    with atomic_open(out_path) as fh:
        fh.write(parallel_header())
        for s, t in itertools.zip_longest(iter_lines(source), iter_lines(target)):
            n_src += s is not None
            n_tgt += t is not None
            if s is None or t is None:
                continue  # count the rest of the longer file for the message
            n += 1
            s_tok, t_tok = s.split(), t.split()
            if not s_tok or not t_tok:
                empty, other = (source, target) if not s_tok else (target, source)
                raise InputError(
                    f"{empty}: line {n} is empty (paired with line {n} of {other}); expected "
                    "a tokenised sentence on every line of both files"
                )
            fh.write(format_parallel_row(str(n), s_tok, t_tok))
        if n_src != n_tgt:
            raise InputError(
                f"{source} has {n_src} lines but {target} has {n_tgt}; expected line-aligned files"
            )
    if n == 0:
        raise InputError(f"{source}, {target}: no lines to align")
    return n
