"""The zero-shot tables: the paper's Table 3 shape and per-language Tables 8-12, from the
results of the fine-tuning and retrieval jobs (xlalign.evaluation.tasks.run).

* **Summary** (Table 3 shape): encoders as rows, tasks as columns (each task's metric,
  averaged over its test languages, then mean ± std over fine-tuning seeds), retrieval
  sets (accuracy@1 en→xx, XTREME's Tatoeba direction: English queries, the other
  language's sentences indexed; at the configured layer), and their average.
* **Per task** (Tables 8-12 shape): one column per language, English first (its test
  split, or its dev split where the data has no English test, marked ``en (dev)``), and
  the transfer gap (English minus the mean of the others).
* **Retrieval by layer**: accuracy@1 at every Hugging Face ``hidden_states`` index (0 =
  the embeddings), from the one forward pass of the retrieval job.
* **MTEB bitext mining** (sets listed in ``zeroshot.retrieval.mteb.sets``): per language
  and encoder, MTEB's accuracy and F1 (its main score; xx→en queries, cosine, top-1,
  weighted F1) with the encoder's prompt and last-layer pooling; named MTEB only where
  every language was scored on MTEB's whole Tatoeba data.

Names follow :mod:`xlalign.evaluation.tasks.registry`: only tasks run on XTREME's data
with XTREME's protocol carry XTREME's names; silver labels are marked where they appear.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, atomic_open, read_json, write_json
from xlalign.evaluation.tasks.registry import task_info
from xlalign.reporting.formats import (
    best_cells,
    bold_markdown,
    finite_number,
    leading_numbers,
    required_key,
    to_latex,
)
from xlalign.reporting.tables import MISSING, to_markdown

DECIMALS = 2
OTHER_METRICS = ("f1", "accuracy", "exact_match", "precision", "recall", "uas", "las")


def _fmt(vals: Sequence[float]) -> str:
    vals = [v for v in vals if v is not None and not math.isnan(v)]
    if not vals:
        return MISSING
    mean = statistics.fmean(vals)
    if len(vals) == 1:
        return f"{mean:.{DECIMALS}f}"
    return f"{mean:.{DECIMALS}f} ± {statistics.stdev(vals):.{DECIMALS}f}"


def _mean(vals: Sequence[float | None]) -> float | None:
    vals = [v for v in vals if v is not None]
    return statistics.fmean(vals) if vals else None


def _load(
    paths: Sequence[PathLike], what: str, check: Callable[[Mapping[str, Any], str], None]
) -> list[dict[str, Any]]:
    """JSON objects, each passed through ``check`` and remembering its file (``_source``)."""
    out = []
    for p in paths:
        rec = read_json(p)
        if not isinstance(rec, dict):
            raise InputError(f"{p}: a JSON {type(rec).__name__}; expected a {what} (an object)")
        check(rec, str(p))
        rec["_source"] = str(p)
        out.append(rec)
    return out


def _name(rec: Mapping[str, Any], key: str, at: str, what: str) -> str:
    value = required_key(rec, key, str, at, what)
    if not value:
        raise InputError(f"{at}: key {key!r}: expected {what}, got ''")
    return value


def check_run(rec: Mapping[str, Any], where: str) -> None:
    """Refuse a fine-tuning result (``ft<seed>.json``) the tables cannot read: ``task``,
    ``encoder`` (non-empty strings), ``seed`` (an integer), ``scores`` (an object) and
    ``summary`` with ``per_language`` (language -> a number or null); ``summary.english``
    and ``summary.transfer.gap``, when there, numbers or null. The error names the file
    and the key."""
    _name(rec, "task", where, "the task id, a string")
    _name(rec, "encoder", where, "the encoder's name, a string")
    required_key(rec, "seed", int, where, "the fine-tuning seed, an integer")
    required_key(rec, "scores", Mapping, where, "an object: language -> metrics")
    summary = required_key(rec, "summary", Mapping, where, "an object with per_language")
    at = f"{where}: summary"
    per = required_key(summary, "per_language", Mapping, at, "an object: language -> score")
    for lang, value in per.items():
        finite_number(value, f"{at}.per_language.{lang}")
    if "english" in summary:
        finite_number(summary["english"], f"{at}.english")
    if "transfer" in summary:
        transfer = required_key(summary, "transfer", Mapping, at, "an object with gap")
        finite_number(transfer.get("gap"), f"{at}.transfer.gap")


def load_runs(paths: Sequence[PathLike]) -> list[dict[str, Any]]:
    """Fine-tuning results, each checked (:func:`check_run`) and remembering its file
    (``_source``)."""
    return _load(paths, "fine-tuning result", check_run)


def check_retrieval(rec: Mapping[str, Any], where: str) -> None:
    """Refuse a retrieval result (``retrieval/<set>.json``) the tables cannot read: ``set``,
    ``encoder`` (non-empty strings), ``languages`` (language -> an object whose
    ``accuracy`` maps a direction to a number or null, ``test.f1`` a number, ``sweep`` a
    direction to a list of numbers, each when there) and ``layer`` (an integer or null,
    when there). The error names the file and the key."""
    _name(rec, "set", where, "the retrieval set id, a string")
    _name(rec, "encoder", where, "the encoder's name, a string")
    if rec.get("layer") is not None:
        required_key(rec, "layer", int, where, "the layer scored, an integer or null")
    langs = required_key(rec, "languages", Mapping, where, "an object: language -> result")
    for lang, res in langs.items():
        at = f"{where}: languages.{lang}"
        if not isinstance(res, Mapping):
            raise InputError(f"{at}: expected an object (a language's result), got {res!r:.80}")
        if "accuracy" in res:
            acc = required_key(res, "accuracy", Mapping, at, "an object: direction -> accuracy")
            for direction, value in acc.items():
                finite_number(value, f"{at}.accuracy.{direction}")
        if "test" in res:
            test = required_key(res, "test", Mapping, at, "an object with f1")
            if "f1" in test and finite_number(test["f1"], f"{at}.test.f1") is None:
                raise InputError(f"{at}.test.f1: expected a number, got {test['f1']!r}")
        if res.get("mteb") is not None:
            mteb = required_key(res, "mteb", Mapping, at, "an object: MTEB's scores")
            for key in ("accuracy", "f1"):
                if finite_number(mteb.get(key), f"{at}.mteb.{key}") is None:
                    raise InputError(f"{at}.mteb.{key}: expected a number, got {mteb.get(key)!r}")
        if "sweep" in res:
            sweep = required_key(res, "sweep", Mapping, at, "an object: direction -> list by layer")
            for direction, values in sweep.items():
                if not isinstance(values, list):
                    raise InputError(
                        f"{at}.sweep.{direction}: expected a list of accuracies by layer, "
                        f"got {values!r:.80}"
                    )
                for i, value in enumerate(values):
                    # NaN (no pair scored) is a number here; null is not
                    if (
                        value is None
                        or isinstance(value, bool)
                        or not isinstance(value, int | float)
                    ):
                        raise InputError(
                            f"{at}.sweep.{direction}[{i}]: expected a number, got {value!r:.80}"
                        )


def load_retrieval(paths: Sequence[PathLike]) -> list[dict[str, Any]]:
    """Retrieval results, each checked (:func:`check_retrieval`) and remembering its file
    (``_source``)."""
    return _load(paths, "retrieval result", check_retrieval)


def retrieval_accuracy(res: Mapping[str, Any], direction: str = "en->xx") -> float | None:
    """Accuracy@1 (0-100) of one language's retrieval result in one direction (BUCC:
    the test F1 of bitext mining)."""
    if isinstance(res.get("test"), Mapping) and "f1" in res["test"]:
        return float(res["test"]["f1"])
    acc = res.get("accuracy", {})
    value = acc.get(direction) if isinstance(acc, Mapping) else None
    return None if value is None else float(value)


def retrieval_sweep(res: Mapping[str, Any], direction: str = "en->xx") -> list[float]:
    sweep = res.get("sweep", {})
    vals = sweep.get(direction, []) if isinstance(sweep, Mapping) else []
    return [float(v) for v in vals]


def _english_label(runs: Sequence[Mapping[str, Any]]) -> str:
    splits = {r["summary"].get("english_split") for r in runs}
    return "en (dev)" if splits == {"dev"} else "en"


def _protocol_note(task: str) -> list[str]:
    info = task_info(task)
    return [f"{info.title}: {info.protocol_note}."] if info.protocol_note else []


def _notes_for(task: str, runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The protocol, silver labels and labels unseen in training of a task's runs."""
    notes = _protocol_note(task)
    # what a run's recipe changed from the protocol (a class-weighted loss, an entity-dense
    # sample: xlalign.evaluation.tasks.tagging), as its results record it
    deviations = sorted(
        {d for r in runs for d in ((r.get("recipe") or {}).get("deviations") or [])}
    )
    if deviations:
        notes.append(f"Not the protocol's recipe: {'; '.join(deviations)}.")
    silver = sorted({s for r in runs for s in r.get("silver", [])})
    if silver:
        notes.append(f"Silver labels (from a tagger, not annotators): {', '.join(silver)}.")
    unseen: dict[str, int] = defaultdict(int)
    for r in runs:
        for lang, counts in (r.get("counts", {}) or {}).items():
            if isinstance(counts, Mapping):
                for key, n in counts.items():
                    if key == "unseen_label_words" and n:
                        unseen[lang] += int(n)
    if unseen:
        items = ", ".join(f"{lang} {n}" for lang, n in sorted(unseen.items()))
        notes.append(
            f"Test words whose gold label training never saw (scored as errors), summed over "
            f"seeds: {items}."
        )
    return notes


def summary_table(
    runs: Sequence[Mapping[str, Any]],
    retrieval: Sequence[Mapping[str, Any]],
    *,
    encoders: Sequence[str],
    tasks: Sequence[str],
    retrieval_sets: Sequence[str],
) -> tuple[pd.DataFrame, list[str], dict[str, Any]]:
    """Table 3 shape: per encoder, each task's cross-language mean, over seeds."""
    columns: list[str] = []
    cells: dict[str, dict[str, str]] = {e: {} for e in encoders}
    values: dict[str, dict[str, float | None]] = {e: {} for e in encoders}
    notes: list[str] = []
    for task in tasks:
        info = task_info(task)
        col = f"{info.title} ({info.metric})"
        columns.append(col)
        for enc in encoders:
            per_seed = [
                _mean(list(r["summary"]["per_language"].values()))
                for r in runs
                if r["task"] == task and r["encoder"] == enc
            ]
            per_seed = [v for v in per_seed if v is not None]
            n = len(per_seed)
            cells[enc][col] = _fmt(per_seed) + (f" (n={n})" if n > 1 else "")
            values[enc][col] = _mean(per_seed)
        notes += _protocol_note(task)
    for rset in retrieval_sets:
        info = task_info(rset)
        col = f"{info.title} ({'F1' if info.metric == 'f1' else 'acc@1'})"
        columns.append(col)
        for enc in encoders:
            res = [r for r in retrieval if r["set"] == rset and r["encoder"] == enc]
            accs = [
                retrieval_accuracy(lang_res) for r in res for lang_res in r["languages"].values()
            ]
            v = _mean(accs)
            values[enc][col] = v
            cells[enc][col] = _fmt([v] if v is not None else [])
        notes += _protocol_note(rset)
    for enc in encoders:
        present = [v for v in values[enc].values() if v is not None]
        values[enc]["avg"] = _mean(present) if len(present) == len(columns) else None
        cells[enc]["avg"] = _fmt([values[enc]["avg"]] if values[enc]["avg"] is not None else [])
    frame = pd.DataFrame([[cells[e].get(c, MISSING) for c in [*columns, "avg"]] for e in encoders])
    frame.columns = [*columns, "avg"]
    frame.index = pd.Index(list(encoders), name="Model")
    notes.insert(
        0,
        "Fine-tuned tasks: each task's metric averaged over its test languages (English not "
        "included), mean ± std over fine-tuning seeds (n = seeds). Retrieval: accuracy@1 of "
        "an English sentence retrieving its translation among all the other language's "
        "sentences of the set (XTREME's Tatoeba direction, en→xx; xx→en is in the JSON), "
        "averaged over languages (BUCC: F1 of mining). avg: mean of the columns, only when "
        "every column has a value.",
    )
    return frame, notes, {"columns": [*columns, "avg"], "values": values}


def task_table(
    task: str, runs: Sequence[Mapping[str, Any]], *, encoders: Sequence[str]
) -> tuple[pd.DataFrame, str, list[str], dict[str, Any]]:
    """Tables 8-12 shape for one task: per-language scores, mean ± std over seeds."""
    info = task_info(task)
    mine = [r for r in runs if r["task"] == task]
    en_label = _english_label(mine)
    langs: list[str] = []
    for r in mine:
        for lang in r["summary"]["per_language"]:
            if lang not in langs:
                langs.append(lang)
    columns = [en_label, *langs, "avg", "gap"]
    rows = []
    numbers: dict[str, dict[str, float | None]] = {}
    for enc in encoders:
        er = [r for r in mine if r["encoder"] == enc]
        english = [r["summary"].get("english") for r in er]
        row = [_fmt([v for v in english if v is not None])]
        numbers[enc] = {"en": _mean(english)}
        for lang in langs:
            vals = [r["summary"]["per_language"].get(lang) for r in er]
            vals = [v for v in vals if v is not None]
            row.append(_fmt(vals))
            numbers[enc][lang] = _mean(vals)
        row.append(
            _fmt([_mean(list(r["summary"]["per_language"].values())) or math.nan for r in er])
        )
        gaps = [(r["summary"].get("transfer") or {}).get("gap") for r in er]
        row.append(_fmt([v for v in gaps if v is not None]))
        rows.append(row)
    frame = pd.DataFrame(rows, columns=columns, index=pd.Index(list(encoders), name="Model"))
    seeds = sorted({int(r["seed"]) for r in mine})
    caption = (
        f"{info.title} ({info.metric}) per language, mean ± std over fine-tuning seeds "
        f"{', '.join(map(str, seeds))}."
    )
    notes = [
        f"{en_label}: the English figure"
        + (
            " on the English dev split (the data has no English test split)"
            if "dev" in en_label
            else ""
        )
        + "; avg: mean over the other languages; gap: English minus that mean (XTREME's "
        "cross-lingual transfer gap).",
        *_notes_for(task, mine),
    ]
    changed = _changed_params(task, mine)
    if changed:
        notes.append(f"Changed from the recipe: {changed}.")
    extra = _other_metrics_note(task, mine)
    if extra:
        notes.append(extra)
    return frame, caption, notes, {"columns": columns, "values": numbers, "seeds": seeds}


def _changed_params(task: str, runs: Sequence[Mapping[str, Any]]) -> str:
    """The fine-tuning parameters of the runs that differ from the task's recipe."""
    from xlalign.evaluation.tasks.base import TaskParams

    recipe = dataclasses.asdict(TaskParams.from_mapping(dict(task_info(task).protocol), where=task))
    used: dict[str, Any] = {}
    for r in runs:
        for key, value in (r.get("params") or {}).items():
            if key in recipe and value != recipe[key]:
                used[key] = value
    return ", ".join(f"{k} {v} (recipe: {recipe[k]})" for k, v in sorted(used.items()))


def _other_metrics_note(task: str, runs: Sequence[Mapping[str, Any]]) -> str:
    """The metrics reported beside the table's (token accuracy beside XTREME's POS "F1",
    precision and recall beside span F1, EM beside F1), averaged over seeds."""
    info = task_info(task)
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in runs:
        for lang, s in r["scores"].items():
            if not isinstance(s, Mapping):
                continue
            for key, v in s.items():
                numeric = isinstance(v, int | float) and not isinstance(v, bool)
                if key != info.metric and numeric and key in OTHER_METRICS:
                    per[key][lang].append(float(v))
    if not per:
        return ""
    parts = []
    for key, langs in sorted(per.items()):
        items = ", ".join(f"{lang} {statistics.fmean(v):.{DECIMALS}f}" for lang, v in langs.items())
        parts.append(f"{key}: {items}")
    return "Other metrics (mean over seeds): " + "; ".join(parts) + "."


def layer_table(
    rset: str, retrieval: Sequence[Mapping[str, Any]], encoder: str
) -> tuple[pd.DataFrame, str, list[str]] | None:
    res = next((r for r in retrieval if r["set"] == rset and r["encoder"] == encoder), None)
    if res is None:
        return None
    info = task_info(rset)
    langs = list(res["languages"])
    sweeps = {lang: retrieval_sweep(res["languages"][lang]) for lang in langs}
    depth = max((len(s) for s in sweeps.values()), default=0)
    if not depth:
        return None  # no sweep (BUCC mines at the configured layer only)
    rows = []
    for layer in range(depth):
        vals = [sweeps[lang][layer] if layer < len(sweeps[lang]) else None for lang in langs]
        rows.append(
            [
                *(MISSING if v is None else f"{v:.{DECIMALS}f}" for v in vals),
                _fmt([v for v in vals if v is not None]),
            ]
        )
    index = [
        f"{i}{' (embeddings)' if i == 0 else ''}{' ←' if i == res['layer'] else ''}"
        for i in range(depth)
    ]
    frame = pd.DataFrame(rows, columns=[*langs, "mean"], index=pd.Index(index, name="layer"))
    caption = (
        f"{info.title}, {encoder}: accuracy@1 (en→xx) by layer (Hugging Face hidden_states "
        f"index, 0 = embeddings; ← the configured layer {res['layer']}, rule: {res['layer_rule']})."
    )
    notes = [
        f"Pooling: {res['pooling']} over the attention mask, special tokens "
        f"{'included' if res['include_special'] else 'excluded'}; one forward pass per sentence "
        "gives every layer."
    ]
    return frame, caption, notes


#: The protocol name :func:`xlalign.evaluation.tasks.run` gives MTEB's Tatoeba scored whole.
MTEB_TATOEBA = "MTEB (Tatoeba bitext mining)"


def mteb_table(
    rset: str, retrieval: Sequence[Mapping[str, Any]], encoders: Sequence[str]
) -> tuple[pd.DataFrame, str, list[str]] | None:
    """MTEB's accuracy and F1 of set ``rset`` per language (rows, then their mean) and
    encoder (two columns each); None when no encoder's result has MTEB scores."""
    res = {
        enc: r
        for enc in encoders
        for r in retrieval
        if r["set"] == rset and r["encoder"] == enc and r.get("mteb")
    }
    if not res:
        return None
    langs = list(dict.fromkeys(lang for r in res.values() for lang in r["languages"]))
    scored = {
        (enc, lang): r["languages"][lang].get("mteb")
        for enc, r in res.items()
        for lang in r["languages"]
    }
    cols, rows = [], []
    for enc in res:
        cols += [f"{enc} accuracy", f"{enc} F1"]
    for lang in langs:
        row = []
        for enc in res:
            m = scored.get((enc, lang))
            row += (
                [MISSING, MISSING]
                if not m
                else [f"{m[k]:.{DECIMALS}f}" for k in ("accuracy", "f1")]
            )
        rows.append(row)
    mean_row = []
    for enc in res:
        for key in ("accuracy", "f1"):
            vals = [m[key] for (e, _), m in scored.items() if e == enc and m]
            mean_row.append(_fmt([statistics.fmean(vals)]) if vals else MISSING)
    rows.append(mean_row)
    frame = pd.DataFrame(rows, columns=cols, index=pd.Index([*langs, "mean"], name="language"))
    protocols = {m.get("protocol") for m in scored.values() if m}
    exact = protocols == {MTEB_TATOEBA}
    info = task_info(rset)
    what = MTEB_TATOEBA if exact else "MTEB's bitext-mining scoring"
    caption = (
        f"{info.title}: {what}, accuracy and F1 (MTEB's main score), 0-100, xx→en queries, "
        f"{len(langs)} languages."
    )
    notes = []
    for enc, r in res.items():
        s = r["mteb"]
        notes.append(
            f"{enc}: prompt {s.get('prompt')!r} on both sides, {s.get('pooling')} pooling of the "
            f"last layer (special tokens {'included' if s.get('include_special') else 'excluded'})."
        )
    notes.append(
        "F1, precision and recall are scikit-learn's weighted averages over the retrieved "
        "indices, as MTEB computes them; the mean row averages these languages only."
    )
    if not exact:
        notes.append(
            "Not MTEB's Tatoeba numbers: " + "; ".join(sorted(str(p) for p in protocols)) + "."
        )
    return frame, caption, notes


def write_zeroshot_tables(
    *,
    runs: Sequence[PathLike],
    retrieval: Sequence[PathLike],
    md_path: PathLike,
    summary_path: PathLike,
    encoders: Sequence[str],
    tasks: Sequence[str],
    retrieval_sets: Sequence[str],
) -> dict[str, Any]:
    """Write the zero-shot tables (Markdown with every table, a CSV and a LaTeX file per
    table, each column's best value in bold) and their summary JSON; returns the summary."""
    run_recs = load_runs(runs)
    ret_recs = load_retrieval(retrieval)
    out_dir = Path(md_path).parent
    parts = ["# Zero-shot cross-lingual evaluation", ""]
    summary: dict[str, Any] = {"tables": {}}

    def emit(name: str, frame: pd.DataFrame, caption: str, notes: list[str], meta: Any) -> None:
        best = best_cells(leading_numbers(frame))
        md = to_markdown(bold_markdown(frame, best), caption, notes)
        parts.extend([md.rstrip("\n"), ""])
        with atomic_open(out_dir / f"zeroshot_{name}.csv") as fh:
            frame.to_csv(fh, lineterminator="\n")
        with atomic_open(out_dir / f"zeroshot_{name}.tex") as fh:
            fh.write(to_latex(frame, caption, notes, best=best, label=f"tab:zeroshot-{name}"))
        summary["tables"][name] = {"caption": caption, "footnotes": notes, **(meta or {})}

    frame, notes, meta = summary_table(
        run_recs, ret_recs, encoders=encoders, tasks=tasks, retrieval_sets=retrieval_sets
    )
    emit("summary", frame, "Zero-shot results (the paper's Table 3 shape).", notes, meta)
    for task in tasks:
        frame, caption, notes, meta = task_table(task, run_recs, encoders=encoders)
        emit(task, frame, caption, notes, meta)
    for rset in retrieval_sets:
        for enc in encoders:
            made = layer_table(rset, ret_recs, enc)
            if made:
                emit(f"{rset}_layers_{enc}", *made, None)
        made_mteb = mteb_table(rset, ret_recs, encoders)
        if made_mteb:
            emit(f"{rset}_mteb", *made_mteb, None)
    with atomic_open(md_path) as fh:
        fh.write("\n".join(parts))
    write_json(summary_path, summary)
    return summary
