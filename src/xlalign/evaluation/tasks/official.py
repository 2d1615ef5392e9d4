"""The official full-scale data of the zero-shot tasks: which files each task needs, where
they come from, and how a task's records are built from them.

The XTREME task ids (``panx``, ``udpos``, ``udparse``, ``xnli``, ``pawsx``, ``xquad``,
``mlqa``, ``tydiqa``, ``tatoeba``, ``bucc``) read the files google-research/xtreme's
``scripts/download_data.sh`` fetches (the Hugging Face ``xtreme`` script where XTREME has
no direct URL). Each file is one download, ``resources/download/tasks/<dataset>/<file>``,
from the URL template ``downloads.tasks.<dataset>.url`` of the configuration (``{file}``
is replaced by the file name), checked against ``downloads.tasks.<dataset>.sha256`` where
a checksum is known (the values of the Hugging Face ``xtreme`` and TFDS checksum lists).

:func:`prepare_task` unpacks what a (task, language) needs into a temporary directory,
reads it with :mod:`.formats` and writes ``<split>.jsonl`` + ``stats.json`` into the
task's directory (atomically, as a whole). English, the training language, gets
``train``, ``dev`` and ``test``; every other language ``test`` and, where the dataset has
one, ``dev``.

Importing this module is light (standard library only at module level): the workflow
reads :func:`source_files` and :func:`download_spec` while it builds its job graph.
"""

from __future__ import annotations

import logging
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from xlalign.core.errors import ConfigError, DownloadError, InputError
from xlalign.core.io import PathLike

logger = logging.getLogger(__name__)

#: The language every XTREME task trains (and selects models) on.
SOURCE_LANGUAGE = "en"

TASKS = (
    "panx", "udpos", "udparse", "xnli", "pawsx", "xquad", "mlqa", "tydiqa", "tatoeba", "bucc",
    "tatoeba-laser",
)  # fmt: skip


@dataclass(frozen=True)
class Dataset:
    """A download source: what it is, its licence, how to get it by hand if need be."""

    title: str
    licence: str
    hint: str = ""


_PANX_HINT = (
    "PAN-X (WikiANN in the train/dev/test splits of Rahimi et al. 2019) has no official "
    "direct URL: XTREME asks for AmazonPhotos.zip from https://www.amazon.com/clouddrive/"
    "share/d3KGCRCIYwhKJF0H3eWA26hjg2ZCRhjpEQtDL70FSBN (it holds panx_dataset/<lang>.tar.gz); "
    "TFDS and the Hugging Face 'wikiann' script use https://www.dropbox.com/s/12h3qqog6q4bjve/"
    "panx_dataset.tar?dl=1. Save either file and set downloads.tasks.panx.url to "
    "file:///<absolute path to it> (its sha256 under downloads.tasks.panx.sha256.<file name>)"
)

#: Keys of ``downloads.tasks`` in the configuration.
DATASETS: dict[str, Dataset] = {
    "squad": Dataset("SQuAD v1.1 (Rajpurkar et al. 2016)", "CC BY-SA 4.0"),
    "xquad": Dataset("XQuAD (Artetxe et al. 2020)", "CC BY-SA 4.0"),
    "mlqa": Dataset("MLQA v1 (Lewis et al. 2020)", "CC BY-SA 3.0"),
    "tydiqa": Dataset("TyDiQA-GoldP v1.1 (Clark et al. 2020)", "Apache 2.0"),
    "xnli": Dataset(
        "XNLI-1.0 (Conneau et al. 2018); English training pairs from XNLI-MT-1.0 (MultiNLI)",
        "CC BY-NC 4.0 (XNLI); MultiNLI: OANC and CC BY-SA 3.0 parts",
    ),
    "pawsx": Dataset(
        "PAWS-X (Yang et al. 2019)",
        "free for any purpose, acknowledgement of Google LLC appreciated",
    ),
    "tatoeba": Dataset("Tatoeba test sets of LASER (Artetxe & Schwenk 2019)", "CC BY 2.0 FR"),
    "bucc": Dataset("BUCC 2018 shared task (Zweigenbaum et al. 2018)", "see comparable.limsi.fr"),
    "ud25": Dataset("Universal Dependencies v2.5", "per treebank (see each LICENSE.txt)"),
    "ud27": Dataset("Universal Dependencies v2.7", "per treebank (see each LICENSE.txt)"),
    "panx": Dataset("PAN-X / WikiANN (Pan et al. 2017; Rahimi et al. 2019 splits)",
                    "see github.com/afshinrahimi/mmner", _PANX_HINT),
}  # fmt: skip

#: Languages of each task (XTREME's, with XTREME-R's additions where the data has them).
LANGUAGES: dict[str, tuple[str, ...]] = {
    "panx": tuple(
        "ar he vi id jv ms tl eu ml ta te af nl en de el bn hi mr ur fa fr it pt es bg ru ja "
        "ka ko th sw yo my zh kk tr et fi hu qu pl uk az lt pa gu ro".split()
    ),
    "xnli": tuple("ar bg de el en es fr hi ru sw th tr ur vi zh".split()),
    "pawsx": tuple("de en es fr ja ko zh".split()),
    "xquad": tuple("ar de el en es hi ro ru th tr vi zh".split()),
    "mlqa": tuple("ar de en es hi vi zh".split()),
    "tydiqa": ("ar", "bn", "en", "fi", "id", "ko", "ru", "sw", "te"),
    "bucc": ("de", "fr", "ru", "zh"),
}
#: UD-POS (and the parsing task, on the same treebanks): UD v2.5 for XTREME's languages,
#: v2.7 for those XTREME-R added.
_UD25 = tuple(
    "af ar bg de el en es et eu fa fi fr he hi hu id it ja kk ko mr nl pt ru ta te th tl tr "
    "ur vi yo zh".split()
)
_UD27 = ("lt", "pl", "uk", "wo", "ro")
LANGUAGES["udpos"] = LANGUAGES["udparse"] = _UD25 + _UD27
#: Tatoeba: every language with a ``tatoeba.<xxx>-eng`` pair (none for English itself).
LANGUAGES["tatoeba"] = tuple(
    "af ar bg bn de el es et eu fa fi fr he hi hu id it ja jv ka kk ko ml mr nl pt ru sw ta "
    "te th tl tr ur vi zh az lt pl uk ro".split()
)

#: LASER's full Tatoeba (``data/tatoeba/v1``, MTEB's Tatoeba): every language of
#: :data:`.formats.LASER_TATOEBA_CODES` (110 of its 112: ``ber`` and ``kzj`` have no
#: language code, :data:`.formats.LASER_TATOEBA_UNNAMED`), from the same ``tatoeba``
#: downloads as XTREME's subset.
LANGUAGES["tatoeba-laser"] = tuple(
    "af am ang ar arq arz ast awa az be bg bn br bs ca cbk ceb ch cs csb cy da de dsb dtp el "
    "eo es et eu fa fi fo fr fy ga gd gl gsw he hi hr hsb hu hy ia id ie io is it ja jv ka kab "
    "kk km ko ku kw la lfn lt lv max mhr mk ml mn mr ms nb nds nl nn nov oc orv pam pl pms pt "
    "ro ru sk sl sq sr sv sw swg ta te th tk tl tr tt tzl ug uk ur uz vi war wuu xh yi yue "
    "zh".split()
)

#: Options of :func:`prepare_task` per task, and their defaults.
DEFAULT_OPTIONS: dict[str, dict[str, Any]] = {
    "udpos": {"multiword": "words", "xtreme_clean": True, "treebanks": None},
    "udparse": {"universal_deprels": False, "treebanks": None},
}


def task_languages(task: str) -> tuple[str, ...]:
    """The languages a task's official data covers."""
    if task not in LANGUAGES:
        raise ConfigError(f"unknown full-scale task {task!r}; known: {', '.join(TASKS)}")
    return LANGUAGES[task]


def download_name(url: str) -> str:
    """The local file name of a URL: the last path segment, without query (Dropbox's
    ``panx_dataset.tar?dl=1`` -> ``panx_dataset.tar``)."""
    name = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    if not name:
        raise ConfigError(f"{url}: the URL names no file")
    return name


def _tasks_cfg(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    try:
        return cfg["downloads"]["tasks"]
    except KeyError:
        raise ConfigError("downloads.tasks: missing from the configuration") from None


def _squad(split: str) -> tuple[str, str]:
    return ("squad", f"{split}-v1.1.json")


def source_files(cfg: Mapping[str, Any], task: str, lang: str) -> list[tuple[str, str]]:
    """(dataset, file name) of each download that the records of ``task`` in ``lang`` are
    built from. A language the dataset lacks raises :class:`ConfigError` naming those it has."""
    langs = task_languages(task)
    if lang not in langs:
        raise ConfigError(
            f"zero-shot task {task!r} has no data for language {lang!r}; it has {', '.join(langs)}"
        )
    en = lang == SOURCE_LANGUAGE
    if task == "panx":
        return [("panx", download_name(_tasks_cfg(cfg)["panx"]["url"]))]
    if task in ("udpos", "udparse"):
        return (
            [("ud27", "ud-treebanks-v2.7.tgz")]
            if lang in _UD27
            else [("ud25", "ud-treebanks-v2.5.tgz")]
        )
    if task == "xnli":
        return [("xnli", "XNLI-1.0.zip")] + ([("xnli", "XNLI-MT-1.0.zip")] if en else [])
    if task == "pawsx":
        return [("pawsx", "x-final.tar.gz")]
    if task == "xquad":
        own = [("xquad", f"xquad.{lang}.json")]
        return [_squad("train"), _squad("dev"), *own] if en else own
    if task == "mlqa":
        return (
            [_squad("train"), _squad("dev"), ("mlqa", "MLQA_V1.zip")]
            if en
            else [("mlqa", "MLQA_V1.zip")]
        )
    if task == "tydiqa":
        dev = ("tydiqa", "tydiqa-goldp-v1.1-dev.json")
        return [("tydiqa", "tydiqa-goldp-v1.1-train.json"), dev] if en else [dev]
    if task in ("tatoeba", "tatoeba-laser"):
        from xlalign.evaluation.tasks.formats import tatoeba_files

        return [("tatoeba", name) for name in tatoeba_files(lang, task)]
    if task == "bucc":
        return [
            ("bucc", f"bucc2018-{lang}-en.sample-gold.tar.bz2"),
            ("bucc", f"bucc2018-{lang}-en.training-gold.tar.bz2"),
        ]
    raise ConfigError(f"unknown full-scale task {task!r}")  # pragma: no cover


def download_spec(cfg: Mapping[str, Any], dataset: str, name: str) -> dict[str, Any]:
    """URL, expected sha256 (or None), retries, timeout and the manual-download hint of
    one file, from ``downloads.tasks.<dataset>`` and ``downloads.retries``/``timeout``."""
    tasks = _tasks_cfg(cfg)
    if dataset not in tasks or dataset not in DATASETS:
        raise ConfigError(
            f"downloads.tasks.{dataset}: unknown dataset; known: {', '.join(sorted(DATASETS))}"
        )
    spec = tasks[dataset]
    url = str(spec["url"]).format(file=name)
    if download_name(url) != name:
        raise ConfigError(
            f"downloads.tasks.{dataset}.url gives {url!r}, a file named "
            f"{download_name(url)!r}, not {name!r}"
        )
    return {
        "url": url,
        "sha256": (spec.get("sha256") or {}).get(name),
        "retries": int(cfg["downloads"].get("retries", 5)),
        "timeout": float(cfg["downloads"].get("timeout", 60)),
        "hint": DATASETS[dataset].hint,
    }


def fetch(spec: Mapping[str, Any], dest: PathLike) -> Path:
    """Download one file as :func:`download_spec` describes it (resumable, retried,
    checksummed: :func:`xlalign.resources.download.download`); a failure says how to get
    the file by hand where the dataset has no reliable public URL."""
    from xlalign.resources.download import download

    try:
        return download(
            spec["url"],
            dest,
            sha256=spec.get("sha256"),
            retries=int(spec.get("retries", 5)),
            timeout=float(spec.get("timeout", 60)),
        )
    except DownloadError as exc:
        if spec.get("hint"):
            raise DownloadError(f"{exc}. {spec['hint']}") from exc
        raise


def prepare_options(task: str, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """:data:`DEFAULT_OPTIONS` of a task with ``overrides`` on top (unknown keys raise)."""
    base = dict(DEFAULT_OPTIONS.get(task, {}))
    unknown = set(overrides or {}) - set(base)
    if unknown:
        raise ConfigError(
            f"task {task!r}: unknown data options {sorted(unknown)}; known: {sorted(base)}"
        )
    base.update(overrides or {})
    return base


# ------------------------------------------------------------------------------ archives


def _members(archive: Path) -> list[str]:
    """Member names of a zip or tar archive (for a .tar.gz: one pass over it)."""
    if not archive.is_file():
        raise InputError(f"{archive}: archive not found")
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                return zf.namelist()
        with tarfile.open(archive, "r:*") as tf:
            return tf.getnames()
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        raise InputError(f"{archive}: corrupt or truncated archive ({exc})") from exc


def _find(archive: Path, names: Sequence[str], suffix: str, what: str = "") -> str:
    """The one member named ``suffix`` or ending in ``/suffix`` (macOS ``__MACOSX``
    copies ignored)."""
    hits = [n for n in names if (n == suffix or n.endswith("/" + suffix)) and "__MACOSX" not in n]
    if len(hits) != 1:
        found = "none" if not hits else ", ".join(hits[:5])
        raise InputError(
            f"{archive}: expected one member '{suffix}'{what}; found {found} "
            f"(the archive has {len(names)} members)"
        )
    return hits[0]


def _extract(archive: Path, tmp: Path, members: list[str]) -> Path:
    """Extract ``members`` of ``archive`` into a fresh directory under ``tmp``."""
    from xlalign.resources.download import safe_extract

    dest = tmp / f"{archive.name}.d"
    safe_extract(archive, dest, members=members)
    return dest


# ------------------------------------------------------------------------------ builders

#: split -> (records read, the file(s) they come from)
Splits = dict[str, tuple[Any, str]]


@dataclass
class _Job:
    task: str
    lang: str
    files: dict[str, Path]
    tmp: Path
    options: dict[str, Any]
    notes: list[str]
    #: BUCC: the corpora of each split, written beside the records
    bucc: dict[str, Any] = field(default_factory=dict)

    @property
    def en(self) -> bool:
        return self.lang == SOURCE_LANGUAGE

    def file(self, name: str) -> Path:
        try:
            return self.files[name]
        except KeyError:
            raise InputError(
                f"{self.task}/{self.lang}: input {name!r} missing; given {sorted(self.files)}"
            ) from None


def _build_panx(job: _Job) -> Splits:
    from xlalign.evaluation.tasks.formats import read_panx

    (outer,) = job.files.values()
    names = _members(outer)
    inner_name = f"{job.lang}.tar.gz"
    if not any(n == inner_name or n.endswith("/" + inner_name) for n in names):
        have = sorted(Path(n).name.removesuffix(".tar.gz") for n in names if n.endswith(".tar.gz"))
        raise InputError(f"{outer}: no {inner_name}; its languages: {', '.join(have[:200])}")
    member = _find(outer, names, inner_name)
    inner = _extract(outer, job.tmp, [member]) / member
    inner_names = _members(inner)
    splits = ["train", "dev", "test"] if job.en else ["dev", "test"]
    wanted = {s: _find(inner, inner_names, s, f" ({job.lang} {s} split)") for s in splits}
    root = _extract(inner, job.tmp, list(wanted.values()))
    return {
        s: (read_panx(root / m, lang=job.lang), f"{outer.name}:{member}:{m}")
        for s, m in wanted.items()
    }


def _build_ud(job: _Job) -> Splits:
    from xlalign.evaluation.tasks.formats import ud_treebank_files

    (tgz,) = job.files.values()
    names = [
        n for n in _members(tgz)
        if Path(n).name.startswith(f"{job.lang}_") and n.endswith(".conllu")
    ]  # fmt: skip
    if not names:
        raise InputError(f"{tgz}: no CoNLL-U file of language {job.lang!r} ({job.lang}_*.conllu)")
    root = _extract(tgz, job.tmp, names)
    files = ud_treebank_files(root, job.lang, treebanks=job.options.get("treebanks"))
    wanted = ["train", "dev", "test"] if job.en else ["test", "dev"]
    for split in wanted:
        if split not in files and (job.en or split == "test"):
            raise InputError(f"{tgz}: no {split} file among the {job.lang} treebanks")
    treebanks = sorted({p.parent.name for fs in files.values() for p in fs})
    job.notes.append(f"treebanks merged: {', '.join(treebanks)}")
    if not job.en and "dev" not in files:
        job.notes.append(f"no {job.lang} treebank has a dev split")
    out: Splits = {}
    for split in wanted:
        if split not in files:
            continue
        origin = ", ".join(p.name for p in files[split])
        if job.task == "udpos":
            from xlalign.evaluation.tasks.formats import read_ud_pos

            loaded = read_ud_pos(
                files[split],
                lang=job.lang,
                multiword=job.options["multiword"],
                xtreme_clean=job.options["xtreme_clean"],
            )
        else:
            from xlalign.evaluation.tasks.formats import read_ud_parse

            loaded = read_ud_parse(files[split], universal_deprels=job.options["universal_deprels"])
        out[split] = (loaded, origin)
    if job.task == "udpos" and job.options["multiword"] == "words":
        job.notes.append(
            "multiword tokens: their syntactic words are tagged (Hugging Face 'xtreme' udpos); "
            "XTREME's download_data.sh tags the fused surface form instead "
            "(option multiword: fused)"
        )
    return out


def _build_xnli(job: _Job) -> Splits:
    from xlalign.evaluation.tasks.formats import read_xnli, read_xnli_mt_train

    z = job.file("XNLI-1.0.zip")
    names = _members(z)
    members = {s: _find(z, names, f"XNLI-1.0/xnli.{s}.tsv") for s in ("dev", "test")}
    root = _extract(z, job.tmp, list(members.values()))
    out: Splits = {
        s: (read_xnli(root / m, lang=job.lang), f"{z.name}:{m}") for s, m in members.items()
    }
    if job.en:
        mt = job.file("XNLI-MT-1.0.zip")
        m = _find(mt, _members(mt), "XNLI-MT-1.0/multinli/multinli.train.en.tsv")
        out["train"] = (read_xnli_mt_train(_extract(mt, job.tmp, [m]) / m), f"{mt.name}:{m}")
    return out


def _build_pawsx(job: _Job) -> Splits:
    from xlalign.evaluation.tasks.formats import read_pawsx

    tgz = job.file("x-final.tar.gz")
    names = _members(tgz)
    files = {"dev": "dev_2k.tsv", "test": "test_2k.tsv"} | (
        {"train": "train.tsv"} if job.en else {}
    )
    members = {s: _find(tgz, names, f"x-final/{job.lang}/{f}") for s, f in files.items()}
    root = _extract(tgz, job.tmp, list(members.values()))
    return {s: (read_pawsx(root / m), f"{tgz.name}:{m}") for s, m in members.items()}


def _squad_splits(job: _Job) -> Splits:
    from xlalign.evaluation.tasks.formats import read_squad_json

    return {
        s: (read_squad_json(job.file(f"{s}-v1.1.json")), f"{s}-v1.1.json") for s in ("train", "dev")
    }


def _build_xquad(job: _Job) -> Splits:
    from xlalign.evaluation.tasks.formats import read_squad_json

    name = f"xquad.{job.lang}.json"
    out = _squad_splits(job) if job.en else {}
    out["test"] = (read_squad_json(job.file(name)), name)
    if not job.en:
        job.notes.append("XQuAD has no dev split: test only")
    return out


def _build_mlqa(job: _Job) -> Splits:
    from xlalign.evaluation.tasks.formats import mlqa_file, read_squad_json

    z = job.file("MLQA_V1.zip")
    names = _members(z)
    splits = ["test"] if job.en else ["dev", "test"]
    members = {
        s: _find(z, names, mlqa_file(".", s, job.lang).as_posix().removeprefix("./"))
        for s in splits
    }
    root = _extract(z, job.tmp, list(members.values()))
    out = _squad_splits(job) if job.en else {}
    out.update({s: (read_squad_json(root / m), f"{z.name}:{m}") for s, m in members.items()})
    return out


def _build_tydiqa(job: _Job) -> Splits:
    from xlalign.evaluation.tasks.formats import read_tydiqa

    dev = "tydiqa-goldp-v1.1-dev.json"
    out: Splits = {}
    if job.en:
        train = "tydiqa-goldp-v1.1-train.json"
        out["train"] = (read_tydiqa(job.file(train), job.lang), train)
    out["test"] = (read_tydiqa(job.file(dev), job.lang), dev)
    job.notes.append(
        "test is TyDiQA-GoldP's dev set (its test set is not public; XTREME evaluates on dev); "
        "no dev split"
    )
    return out


def _build_tatoeba(job: _Job) -> Splits:
    from xlalign.evaluation.tasks.formats import read_tatoeba, tatoeba_files

    src, eng = tatoeba_files(job.lang, job.task)
    return {"test": (read_tatoeba(job.file(src), job.file(eng)), f"{src}, {eng}")}


def _build_bucc(job: _Job) -> Splits:
    from xlalign.evaluation.tasks.formats import Loaded, bucc_files, read_bucc

    out: Splits = {}
    # XTREME's convention: BUCC's "training" set (gold public) is the test set, "sample"
    # the dev set; the official test set's gold was never released.
    for split, bucc_split in (("dev", "sample"), ("test", "training")):
        archive = job.file(f"bucc2018-{job.lang}-en.{bucc_split}-gold.tar.bz2")
        paths = bucc_files(".", job.lang, bucc_split)
        names = _members(archive)
        members = [_find(archive, names, p.as_posix().removeprefix("./")) for p in paths if p]
        root = _extract(archive, job.tmp, members)
        src, tgt, gold = bucc_files(root, job.lang, bucc_split)
        corpus = read_bucc(src, tgt, gold, lang=job.lang, split=bucc_split)
        loaded: Loaded[Any] = Loaded(records=corpus.pairs())
        loaded.flagged["source_sentences"] = len(corpus.source)
        loaded.flagged["target_sentences"] = len(corpus.target)
        out[split] = (loaded, archive.name)
        job.bucc[split] = corpus
    job.notes.append(
        "BUCC 2018: test = its 'training' split, dev = its 'sample' split (XTREME's convention; "
        "the official test gold is not public); the full corpora are in <split>.<lang>.tsv, "
        "<split>.en.tsv and the gold in <split>.gold.tsv"
    )
    return out


BUILDERS: dict[str, Callable[[_Job], Splits]] = {
    "panx": _build_panx,
    "udpos": _build_ud,
    "udparse": _build_ud,
    "xnli": _build_xnli,
    "pawsx": _build_pawsx,
    "xquad": _build_xquad,
    "mlqa": _build_mlqa,
    "tydiqa": _build_tydiqa,
    "tatoeba": _build_tatoeba,
    "tatoeba-laser": _build_tatoeba,
    "bucc": _build_bucc,
}


def prepare_task(
    task: str,
    lang: str,
    inputs: Sequence[PathLike],
    out_dir: PathLike,
    *,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build ``out_dir`` (``resources/tasks/<task>/<lang>``): ``<split>.jsonl`` for each
    split and ``stats.json`` (sources with their sha256, per split the records, the
    counts of what was skipped and flagged, the licence, notes), from the downloaded
    ``inputs`` (:func:`source_files`). The directory appears as a whole or not at all; a
    split that ends up empty raises :class:`InputError`. Returns the stats."""
    from xlalign.core.io import atomic_dir, file_sha256, write_json
    from xlalign.evaluation.tasks.data import write_records
    from xlalign.evaluation.tasks.formats import write_bucc

    if task not in BUILDERS:
        raise ConfigError(f"unknown full-scale task {task!r}; known: {', '.join(TASKS)}")
    if lang not in task_languages(task):
        raise InputError(f"task {task!r} has no data for language {lang!r}")
    files = {Path(p).name: Path(p) for p in inputs}
    opts = prepare_options(task, options)
    target = Path(out_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix=f".{task}-{lang}.", dir=target.parent) as tmp:
        job = _Job(task, lang, files, Path(tmp), dict(opts), notes)
        splits = BUILDERS[task](job)
        stats: dict[str, Any] = {
            "task": task,
            "lang": lang,
            "silver": False,
            "sources": [
                {
                    "file": name,
                    "sha256": file_sha256(path),
                    "dataset": _dataset_of(task, name),
                }
                for name, path in sorted(files.items())
            ],
            "licence": "; ".join(sorted({DATASETS[_dataset_of(task, n)].licence for n in files})),
            "options": opts,
            "splits": {},
            "notes": notes,
        }
        with atomic_dir(target) as dst:
            for split, (loaded, origin) in splits.items():
                if not loaded.records:
                    raise InputError(
                        f"{origin}: no {task} records for {lang!r} ({split}); "
                        f"skipped: {dict(loaded.skipped)}"
                    )
                write_records(dst / f"{split}.jsonl", loaded.records)
                stats["splits"][split] = {"from": origin, **loaded.stats()}
                logger.info("%s/%s %s: %s", task, lang, split, stats["splits"][split])
            for split, corpus in job.bucc.items():
                stats["splits"][split]["files"] = write_bucc(corpus, dst, split)
            write_json(dst / "stats.json", stats)
    return stats


def _dataset_of(task: str, name: str) -> str:
    if name.endswith("-v1.1.json") and name.startswith(("train", "dev")):
        return "squad"
    if task in ("udpos", "udparse"):
        return "ud27" if "v2.7" in name else "ud25"
    if task == "tatoeba-laser":
        return "tatoeba"
    return task
