"""Seeds aggregated and models tested against their baselines: the statistics tables.

What is compared with what (the paper's argument, 000 section 4.1):

* every zero-shot model against the original encoder, and every continued-pre-training
  row but ``mlm`` against ``+MLM`` (same text, same steps, no alignment loss), so that a
  gain of an alignment row is not just specialisation on the languages; a continual
  variant ``<encoder>+<name>`` against ``<encoder>``;
* every BLI space against ``results.bli_baseline`` (Bommasani et al.'s aggregation by
  default, the static baseline X2Static is measured against).

Seeds: a pre-training row's checkpoints ``<run>.s<k>`` are its pre-training seeds, each
fine-tuned with every fine-tuning seed. A cell is the mean over pre-training seeds of each
seed's mean over fine-tuning seeds, ``± sd (pt n)`` the sample std over pre-training
seeds and ``± sd (ft n)`` the mean over pre-training seeds of the std over fine-tuning
seeds: the two sources of variance are kept apart and both shown.

Tests (:mod:`xlalign.reporting.significance`), chosen per metric as 003 does:

* token accuracy (POS), QA F1, classification accuracy: each example's score averaged
  over every seed of the model, then a paired t-test over examples;
* span F1 (NER): approximate randomisation over the concatenation of per-seed predictions
  (seed ``i`` of one model paired with seed ``i`` of the other), 1,000 permutations;
* BLI P@1 and retrieval accuracy@1: a paired bootstrap over queries (a query is one
  (seed, language, word) or (language, sentence)).

Each test pools the examples of all test languages of a task (the Table 3 column), and is
run again per language (the per-language p-values of Tables 5 and 8-12, in the CSV). The
p-values of one table are corrected together (Holm by default, named in the caption).
Resampling tests are seeded: the same inputs and seed give the same p-values.
"""

from __future__ import annotations

import logging
import math
import re
import statistics as st
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, atomic_open, write_json
from xlalign.evaluation.tasks.registry import task_info
from xlalign.reporting import examples as ex
from xlalign.reporting import significance as sig
from xlalign.reporting.formats import best_cells, bold_markdown, to_latex
from xlalign.reporting.tables import MISSING, display_names, to_markdown

log = logging.getLogger(__name__)

DECIMALS = 2
UP, DOWN = "▲", "▼"
CORRECTIONS: dict[str, Callable[[Sequence[float]], list[float]]] = {
    "holm": lambda p: list(sig.holm(p)),
    "benjamini-hochberg": lambda p: list(sig.benjamini_hochberg(p)),
    "none": lambda p: [float(v) for v in p],
}
CORRECTION_NAMES = {
    "holm": "Holm's step-down correction",
    "benjamini-hochberg": "Benjamini-Hochberg's false-discovery-rate correction",
    "none": "no correction for multiple comparisons",
}
_CHECKPOINT = re.compile(r"^(?P<run>.+)\.s(?P<seed>\d+)$")


# --------------------------------------------------------------------------- models


@dataclass(frozen=True)
class Model:
    """A table row: an encoder, or a pre-training row with its seeds' checkpoints."""

    name: str
    encoders: tuple[str, ...]  # the zero-shot encoder ids whose results it pools
    pretrain_seeds: tuple[int, ...] = ()


def group_models(encoders: Sequence[str], pretrain_runs: Sequence[str]) -> list[Model]:
    """Rows in first-seen order: ``<run>.s<k>`` of a pre-training run pooled under
    ``<run>`` (continual variants ``<run>.s<k>+<c>`` under ``<run>+<c>``), others alone."""
    groups: dict[str, list[tuple[str, int | None]]] = {}
    for enc in encoders:
        base, plus, cont = enc.partition("+")
        m = _CHECKPOINT.match(base)
        if m and m["run"] in pretrain_runs:
            key = m["run"] + (plus + cont if plus else "")
            groups.setdefault(key, []).append((enc, int(m["seed"])))
        else:
            groups.setdefault(enc, []).append((enc, None))
    out = []
    for name, members in groups.items():
        seeds = tuple(s for _, s in members if s is not None)
        out.append(Model(name, tuple(e for e, _ in members), seeds))
    return out


def baselines_of(model: Model, names: Sequence[str], base_encoder: str) -> list[str]:
    """The rows ``model`` is tested against (see the module docstring)."""
    if model.name == base_encoder:
        return []
    name, plus, _ = model.name.partition("+")
    if plus:
        return [name] if name in names else []
    out = [base_encoder] if base_encoder in names else []
    if model.pretrain_seeds and name != "mlm" and "mlm" in names:
        out.append("mlm")
    return out


# --------------------------------------------------------------------------- cells


@dataclass
class Cell:
    """One model's value in one column: per pre-training seed, the fine-tuning values."""

    per_pt: dict[int | None, list[float]] = field(default_factory=dict)

    @property
    def mean(self) -> float | None:
        means = [st.fmean(v) for v in self.per_pt.values() if v]
        return st.fmean(means) if means else None

    @property
    def sd_pt(self) -> float | None:
        means = [st.fmean(v) for v in self.per_pt.values() if v]
        return st.stdev(means) if len(means) > 1 else None

    @property
    def sd_ft(self) -> float | None:
        sds = [st.stdev(v) for v in self.per_pt.values() if len(v) > 1]
        return st.fmean(sds) if sds else None

    @property
    def n_pt(self) -> int:
        return sum(1 for v in self.per_pt.values() if v)

    @property
    def n_ft(self) -> int:
        return max((len(v) for v in self.per_pt.values()), default=0)

    def text(self) -> str:
        m = self.mean
        if m is None:
            return MISSING
        out = f"{m:.{DECIMALS}f}"
        if self.sd_pt is not None:
            out += f" ± {self.sd_pt:.{DECIMALS}f} (pt {self.n_pt})"
        if self.sd_ft is not None:
            out += f" ± {self.sd_ft:.{DECIMALS}f} (ft {self.n_ft})"
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "mean": self.mean,
            "sd_pretrain": self.sd_pt,
            "n_pretrain": self.n_pt,
            "sd_finetune": self.sd_ft,
            "n_finetune": self.n_ft,
            "values": {str(k): v for k, v in self.per_pt.items()},
        }


def _pt_seed(encoder: str) -> int | None:
    m = _CHECKPOINT.match(encoder.partition("+")[0])
    return int(m["seed"]) if m else None


# --------------------------------------------------------------------------- tests


@dataclass
class Comparison:
    """One test of a model against a baseline on one column (and language, or all)."""

    table: str
    column: str
    language: str  # "all" = every test language pooled
    model: str
    baseline: str
    test: str
    n: int
    difference: float  # model minus baseline, in the column's unit
    p_value: float
    p_adjusted: float = math.nan

    def marker(self, alpha: float) -> str:
        if math.isnan(self.p_adjusted) or self.p_adjusted >= alpha:
            return ""
        return UP if self.difference > 0 else DOWN


class _Examples:
    """The per-example scores of one statistics job, each predictions file read and scored
    once: the pooled test and every language's test reuse them, and so does every model
    tested against the same baseline."""

    def __init__(self) -> None:
        self._scores: dict[tuple[str, str], ex.ExampleScores] = {}

    def _get(self, source: str, language: str, read: Callable[[], ex.ExampleScores]):
        key = (source, language)
        if key not in self._scores:
            self._scores[key] = read()
        return self._scores[key]

    def finetune(
        self, runs: Sequence[Mapping[str, Any]], language: str, task: str
    ) -> list[ex.ExampleScores]:
        """One set of scores of ``language`` per run (fine-tuning seed), where it exists."""
        return [
            self._get(
                r["_source"],
                language,
                lambda r=r: ex.finetune_examples(ex.predictions_file(r["_source"], language), task),
            )
            for r in runs
            if language in r["summary"]["per_language"]
        ]

    def retrieval(
        self, records: Sequence[Mapping[str, Any]], language: str
    ) -> list[ex.ExampleScores]:
        """Per-query hits en→xx of ``language``, one set per checkpoint."""
        return [
            self._get(
                r["_source"],
                language,
                lambda r=r: ex.retrieval_hits(
                    ex.retrieval_predictions_file(r["_source"], language), "en->xx"
                ),
            )
            for r in records
            if language in r["languages"]
        ]


def _test_task(
    task: str,
    model_runs: Mapping[int | None, list[Mapping[str, Any]]],
    base_runs: Mapping[int | None, list[Mapping[str, Any]]],
    languages: Sequence[str],
    examples: _Examples,
    *,
    iterations: int,
    seed: int,
    budget_mb: float | None = None,
) -> tuple[str, int, float, float] | None:
    """(test, n, difference, p) of a fine-tuned task over ``languages`` pooled, or None
    when either model has no predictions there (or the task has no per-example test)."""
    info = task_info(task)
    if info.family not in ("tagging", "qa", "classification"):
        return None
    mine = [r for rs in model_runs.values() for r in rs]
    base = [r for rs in base_runs.values() for r in rs]
    if info.family == "tagging" and info.scheme == "ner":
        # 003: the per-seed predictions concatenated, seed i of one model with seed i of
        # the other (the model with fewer runs cycled: the original encoder has one run
        # per fine-tuning seed, a pre-training row one per pre-training x fine-tuning seed).
        rows_a, rows_b = [], []
        for lang in languages:
            sa, sb = examples.finetune(mine, lang, task), examples.finetune(base, lang, task)
            if not sa or not sb:
                return None
            for i in range(max(len(sa), len(sb))):
                a, b = ex.align(sa[i % len(sa)], sb[i % len(sb)])
                rows_a.append(a.counts)
                rows_b.append(b.counts)
        res = sig.permutation_test_span_f1(
            np.concatenate(rows_a),
            np.concatenate(rows_b),
            iterations=iterations,
            seed=seed,
            budget_mb=budget_mb,
        )
        return res.test, res.n, res.difference, res.p_value
    metric = "f1" if info.family == "qa" else "accuracy"
    xs, ys = [], []
    for lang in languages:
        sa, sb = examples.finetune(mine, lang, task), examples.finetune(base, lang, task)
        if not sa or not sb:
            return None
        a, b = ex.paired_means(sa, sb, metric)
        xs.append(a)
        ys.append(b)
    x, y = np.concatenate(xs), np.concatenate(ys)
    if x.size < 2:
        return None
    res = sig.paired_ttest(x, y)
    return f"{res.test} ({metric} per example)", res.n, res.difference, res.p_value


def _test_retrieval(
    mine: Sequence[Mapping[str, Any]],
    base: Sequence[Mapping[str, Any]],
    languages: Sequence[str],
    examples: _Examples,
    *,
    iterations: int,
    seed: int,
    budget_mb: float | None = None,
) -> tuple[str, int, float, float] | None:
    """Paired bootstrap of accuracy@1 en→xx over the queries of ``languages`` pooled, each
    query's hit averaged over the model's checkpoints (pre-training seeds)."""
    xs, ys = [], []
    for lang in languages:
        a, b = examples.retrieval(mine, lang), examples.retrieval(base, lang)
        if not a or not b:
            return None
        x, y = ex.paired_means(a, b, "hits")
        xs.append(x)
        ys.append(y)
    return _bootstrap(
        np.concatenate(xs),
        np.concatenate(ys),
        iterations=iterations,
        seed=seed,
        budget_mb=budget_mb,
    )


def _bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    *,
    iterations: int,
    seed: int,
    budget_mb: float | None = None,
) -> tuple[str, int, float, float] | None:
    """Paired bootstrap of hits (0/1 or means of them), the difference in points; the
    resamples drawn in blocks of ``budget_mb`` (the same p-value for any budget)."""
    if a.size < 2:
        return None
    res = sig.paired_bootstrap(a, b, iterations=iterations, seed=seed, budget_mb=budget_mb)
    return res.test, res.n, 100.0 * res.difference, res.p_value


def _compare(
    models: Sequence[Model],
    base_encoder: str,
    column: str,
    languages: Sequence[str],
    test: Callable[[str, str, Sequence[str]], tuple[str, int, float, float] | None],
) -> list[Comparison]:
    """Every model against each of its baselines on one column: ``test(model, baseline,
    languages)`` over all ``languages`` pooled, then over each language alone."""
    names = [m.name for m in models]
    out = []
    for m in models:
        for base in baselines_of(m, names, base_encoder):
            for language in [None, *languages]:
                done = test(m.name, base, languages if language is None else [language])
                if done:
                    out.append(Comparison("table3", column, language or "all", m.name, base, *done))
    return out


def correct(comparisons: list[Comparison], method: str) -> None:
    """Adjust the p-values of one table's comparisons together, in place."""
    if not comparisons:
        return
    adjusted = CORRECTIONS[method]([c.p_value for c in comparisons])
    for c, p in zip(comparisons, adjusted, strict=True):
        c.p_adjusted = float(p)


# --------------------------------------------------------------------------- Table 3


@dataclass
class StatTable:
    """A statistics table: display frame, numbers, caption, notes and its tests."""

    name: str
    caption: str
    frame: pd.DataFrame
    values: pd.DataFrame
    footnotes: list[str]
    comparisons: list[Comparison]
    cells: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def best(self) -> set[tuple[object, object]]:
        return best_cells(self.values)

    def markdown(self) -> str:
        return to_markdown(bold_markdown(self.frame, self.best()), self.caption, self.footnotes)

    def latex(self) -> str:
        return to_latex(
            self.frame, self.caption, self.footnotes, best=self.best(), label=f"tab:{self.name}"
        )

    def pvalue_frame(self) -> pd.DataFrame:
        rows = [
            {
                "table": c.table,
                "column": c.column,
                "language": c.language,
                "model": c.model,
                "baseline": c.baseline,
                "test": c.test,
                "n": c.n,
                "difference": c.difference,
                "p": c.p_value,
                "p_adjusted": c.p_adjusted,
            }
            for c in self.comparisons
        ]
        return pd.DataFrame(rows)


def zeroshot_statistics(
    runs: Sequence[Mapping[str, Any]],
    retrieval: Sequence[Mapping[str, Any]],
    *,
    encoders: Sequence[str],
    base_encoder: str,
    pretrain_runs: Sequence[str],
    tasks: Sequence[str],
    retrieval_sets: Sequence[str],
    iterations: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    correction: str = "holm",
    budget_mb: float | None = None,
) -> tuple[StatTable, StatTable]:
    """The Table 3 analogue with seeds aggregated and significance markers, and the table
    of its tests (difference and corrected p per model, baseline and column).
    ``budget_mb`` (``memory.block_mb``): the randomised tests' block memory."""
    models = group_models(encoders, pretrain_runs)
    examples = _Examples()
    names = [m.name for m in models]
    columns: list[str] = []
    cells: dict[str, dict[str, Cell]] = {m.name: {} for m in models}
    comparisons: list[Comparison] = []
    col_langs: dict[str, list[str]] = {}
    for task in tasks:
        info = task_info(task)
        col = f"{info.title} ({info.metric})"
        columns.append(col)
        mine = [r for r in runs if r["task"] == task]
        col_langs[col] = sorted({lang for r in mine for lang in r["summary"]["per_language"]})
        by_model: dict[str, dict[int | None, list[Mapping[str, Any]]]] = {}
        for m in models:
            per: dict[int | None, list[Mapping[str, Any]]] = defaultdict(list)
            for r in mine:
                if r["encoder"] in m.encoders:
                    per[_pt_seed(r["encoder"])].append(r)
            by_model[m.name] = per
            cell = Cell()
            for pt, rs in per.items():
                vals = [_lang_mean(r["summary"]["per_language"]) for r in rs]
                cell.per_pt[pt] = [v for v in vals if v is not None]
            cells[m.name][col] = cell
        comparisons += _compare(
            models,
            base_encoder,
            col,
            col_langs[col],
            lambda m, b, langs, task=task, by_model=by_model: _test_task(
                task,
                by_model[m],
                by_model[b],
                langs,
                examples,
                iterations=iterations,
                seed=seed,
                budget_mb=budget_mb,
            ),
        )
    for rset in retrieval_sets:
        info = task_info(rset)
        col = f"{info.title} (acc@1)"
        columns.append(col)
        recs_of: dict[str, list[Mapping[str, Any]]] = {}
        langs: set[str] = set()
        for m in models:
            recs = [r for r in retrieval if r["set"] == rset and r["encoder"] in m.encoders]
            cell = Cell()
            for r in recs:
                accs = [_retrieval_acc(res) for res in r["languages"].values()]
                accs = [a for a in accs if a is not None]
                if accs:
                    cell.per_pt.setdefault(_pt_seed(r["encoder"]), []).append(st.fmean(accs))
                langs |= set(r["languages"])
            cells[m.name][col] = cell
            recs_of[m.name] = recs
        col_langs[col] = sorted(langs)
        comparisons += _compare(
            models,
            base_encoder,
            col,
            col_langs[col],
            lambda m, b, langs, recs_of=recs_of: _test_retrieval(
                recs_of[m],
                recs_of[b],
                langs,
                examples,
                iterations=iterations,
                seed=seed,
                budget_mb=budget_mb,
            ),
        )
    correct([c for c in comparisons if c.language == "all"], correction)
    correct([c for c in comparisons if c.language != "all"], correction)
    main = [c for c in comparisons if c.language == "all"]

    rows, numbers = [], []
    for m in models:
        row, nums = [], []
        for col in columns:
            cell = cells[m.name][col]
            marks = "".join(
                f"{c.marker(alpha)}{_base_tag(c.baseline, base_encoder)}"
                for c in main
                if c.model == m.name and c.column == col and c.marker(alpha)
            )
            row.append(cell.text() + (f" {marks}" if marks else ""))
            nums.append(math.nan if cell.mean is None else cell.mean)
        present = [v for v in nums if not math.isnan(v)]
        avg = st.fmean(present) if present and len(present) == len(columns) else math.nan
        row.append(MISSING if math.isnan(avg) else f"{avg:.{DECIMALS}f}")
        nums.append(avg)
        rows.append(row)
        numbers.append(nums)
    index = pd.Index(names, name="Model")
    frame = pd.DataFrame(rows, index=index, columns=[*columns, "avg"])
    values = pd.DataFrame(numbers, index=index, columns=[*columns, "avg"], dtype=float)
    caption = (
        "Zero-shot results with seeds aggregated and significance against the baselines "
        "(the paper's Table 3 shape)."
    )
    notes = [
        "A cell: the mean over pre-training seeds of each seed's mean over fine-tuning "
        "seeds; ± sd (pt n): sample std over the n pre-training seeds; ± sd (ft n): mean over "
        "pre-training seeds of the sample std over the n fine-tuning seeds (shown only when "
        "n > 1). Fine-tuned tasks: each task's metric averaged over its test languages; "
        "retrieval: accuracy@1 en→xx averaged over languages. avg: mean of the columns when "
        "every column has a value. Best value per column in bold.",
        f"{UP}/{DOWN}: better/worse than the baseline named by the letter (o = {base_encoder}, "
        "the original encoder; m = +MLM, continued MLM without an alignment loss) with "
        f"p < {alpha} after {CORRECTION_NAMES[correction]} over this table's "
        f"{len(main)} tests. {_tests_note(iterations)}",
    ]
    if not main:
        notes.append("No test ran: no model has a baseline row among the models of this run.")
    stats = StatTable(
        "table3_statistics",
        caption,
        frame,
        values,
        notes,
        comparisons,
        cells={m: {c: cell.as_dict() for c, cell in cs.items()} for m, cs in cells.items()},
    )
    return stats, pvalue_table("table3_pvalues", main, columns, alpha, correction, base_encoder)


ABOVE, BELOW = "↑", "↓"


def std_band_table(
    cells: Mapping[str, Mapping[str, Mapping[str, Any]]], base_encoder: str
) -> StatTable:
    """002's Table 1 shape: each model's mean ± sample std over all its runs (every
    pre-training x fine-tuning seed), marked when the mean lies more than one standard
    deviation of the baseline above (↑) or below (↓) the baseline's mean (002: "one
    standard deviation above or below the mean of baseline"); no mark without a baseline
    std (fewer than two baseline runs)."""
    models = list(cells)
    columns = [c for c in next(iter(cells.values()), {})]
    base = cells.get(base_encoder, {})
    rows, numbers = [], []
    for m in models:
        row, nums = [], []
        for col in columns:
            vals = [v for vs in cells[m][col]["values"].values() for v in vs]
            if not vals:
                row.append(MISSING)
                nums.append(math.nan)
                continue
            mean = st.fmean(vals)
            text = f"{mean:.{DECIMALS}f}"
            if len(vals) > 1:
                text += f" ± {st.stdev(vals):.{DECIMALS}f}"
            text += f" (n={len(vals)})"
            bvals = [v for vs in base.get(col, {}).get("values", {}).values() for v in vs]
            if m != base_encoder and len(bvals) > 1:
                bmean, bstd = st.fmean(bvals), st.stdev(bvals)
                text += f" {ABOVE}" if mean > bmean + bstd else ""
                text += f" {BELOW}" if mean < bmean - bstd else ""
            row.append(text)
            nums.append(mean)
        rows.append(row)
        numbers.append(nums)
    index = pd.Index(models, name="Model")
    frame = pd.DataFrame(rows, index=index, columns=columns)
    values = pd.DataFrame(numbers, index=index, columns=columns, dtype=float)
    n_base = max(
        (sum(len(vs) for vs in c.get("values", {}).values()) for c in base.values()), default=0
    )
    notes = [
        "Mean ± sample std over all runs of a model (n = pre-training x fine-tuning seeds, "
        f"pooled, as 002 reports its 5 runs). {ABOVE}/{BELOW}: the mean is more than one "
        f"standard deviation of {base_encoder}'s runs above/below {base_encoder}'s mean. "
        "Best value per column in bold.",
    ]
    if n_base < 2:
        notes.append(
            f"No {ABOVE}/{BELOW} marks: {base_encoder} has fewer than two runs per column, so "
            "no standard deviation to compare with (more `zeroshot.seeds` give one)."
        )
    return StatTable(
        "table002_std",
        "Zero-shot results as 002's Table 1 (mean ± std over runs, one-std differences marked).",
        frame,
        values,
        notes,
        [],
    )


def _base_tag(baseline: str, base_encoder: str) -> str:
    return "o" if baseline == base_encoder else "m" if baseline == "mlm" else "b"


def _tests_note(iterations: int) -> str:
    return (
        "Tests: token accuracy, QA F1 and classification accuracy: paired t-test over "
        "examples, each example's score averaged over the model's seeds (003); span F1: "
        f"approximate randomisation over the concatenated per-seed predictions, "
        f"{iterations} permutations (003); accuracy@1 of retrieval and BLI P@1: paired "
        f"bootstrap over queries, {iterations} resamples, two-sided. Examples of all test "
        "languages pooled; per-language p-values are in the CSV."
    )


def pvalue_table(
    name: str,
    comparisons: Sequence[Comparison],
    columns: Sequence[str],
    alpha: float,
    correction: str,
    base_encoder: str,
) -> StatTable:
    """Rows ``model vs baseline``, a cell per column: difference, p and corrected p."""
    pairs: list[tuple[str, str]] = []
    for c in comparisons:
        if (c.model, c.baseline) not in pairs:
            pairs.append((c.model, c.baseline))
    rows = []
    for model, base in pairs:
        row = []
        for col in columns:
            c = next(
                (x for x in comparisons if (x.model, x.baseline, x.column) == (model, base, col)),
                None,
            )
            row.append(
                MISSING
                if c is None
                else f"{c.difference:+.{DECIMALS}f} (p {_p(c.p_value)}, adj. {_p(c.p_adjusted)})"
                + (f" {c.marker(alpha)}" if c.marker(alpha) else "")
            )
        rows.append(row)
    index = pd.Index([f"{m} vs {b}" for m, b in pairs], name="Comparison")
    frame = pd.DataFrame(rows, index=index, columns=list(columns))
    values = pd.DataFrame(index=index, columns=list(columns), dtype=float)
    return StatTable(
        name,
        f"Differences against the baselines, with p-values ({CORRECTION_NAMES[correction]}).",
        frame,
        values,
        [
            "Difference: model minus baseline as the test measures it, in points: the mean "
            "per-example difference (t-test: per sentence's token accuracy or per question; "
            "bootstrap: per query) or the difference of pooled span F1 (randomisation); it "
            "can differ a little from the difference of the table's cells, which average "
            f"languages first. p: the test's p-value; adj.: after "
            f"{CORRECTION_NAMES[correction]} over the table's tests; {UP}/{DOWN}: "
            f"significant at {alpha} after correction.",
        ],
        list(comparisons),
    )


def _p(p: float) -> str:
    """``= 0.012`` or ``< 0.001``."""
    if math.isnan(p):
        return MISSING
    return "< 0.001" if p < 0.001 else f"= {p:.3f}"


def _lang_mean(per_language: Mapping[str, float | None]) -> float | None:
    vals = [v for v in per_language.values() if v is not None]
    return st.fmean(vals) if vals else None


def _retrieval_acc(res: Mapping[str, Any]) -> float | None:
    from xlalign.reporting.zeroshot import retrieval_accuracy

    return retrieval_accuracy(res)


# --------------------------------------------------------------------------- Table 1


def bli_statistics(
    records: Sequence[Mapping[str, Any]],
    *,
    spaces: Sequence[str],
    baseline: str,
    retrieval: str = "csls",
    iterations: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    correction: str = "holm",
    budget_mb: float | None = None,
) -> StatTable:
    """The Table 1 analogue's tests: each space against ``baseline``, per direction (en→xx,
    xx→en), P@1 with ``retrieval``, a paired bootstrap over (seed, language, query) items
    common to both spaces; per language too (the CSV). ``budget_mb``: the bootstrap's
    block memory."""
    hits: dict[str, dict[str, dict[tuple[int, str, str], float]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for rec in records:
        for direction in rec.get("results") or {}:
            group = "en→xx" if direction.startswith(f"{rec['hub']}-") else "xx→en"
            scores = ex.bli_query_hits(rec, direction, retrieval)
            for query, hit in zip(scores.ids, scores.metric("hits"), strict=True):
                key = (int(rec["seed"]), rec["language"], query)
                hits[rec["space"]][group][key] = float(hit)
    comparisons: list[Comparison] = []
    columns = ["en→xx", "xx→en"]
    notes: list[str] = []
    if baseline not in hits:
        notes.append(
            f"No BLI test ran: the baseline space {baseline!r} (results.bli_baseline) is not "
            "among this run's spaces."
        )
    else:
        for space in spaces:
            if space == baseline or space not in hits:
                continue
            for col in columns:
                a, b = hits[space][col], hits[baseline][col]
                langs = sorted({k[1] for k in a} & {k[1] for k in b})
                for language in [None, *langs]:
                    sa = a if language is None else {k: v for k, v in a.items() if k[1] == language}
                    sb = b if language is None else {k: v for k, v in b.items() if k[1] == language}
                    keys = sorted(set(sa) & set(sb))
                    done = _bootstrap(
                        np.array([sa[k] for k in keys]),
                        np.array([sb[k] for k in keys]),
                        iterations=iterations,
                        seed=seed,
                        budget_mb=budget_mb,
                    )
                    if done:
                        comparisons.append(
                            Comparison("table1", col, language or "all", space, baseline, *done)
                        )
    correct([c for c in comparisons if c.language == "all"], correction)
    correct([c for c in comparisons if c.language != "all"], correction)
    main = [c for c in comparisons if c.language == "all"]
    rows, numbers = [], []
    for space in [s for s in spaces if s in hits]:
        row, nums = [], []
        for col in columns:
            vals = _seed_means(hits[space][col])
            mean = st.fmean(vals) * 100 if vals else None
            text = MISSING if mean is None else f"{mean:.{DECIMALS}f}"
            if len(vals) > 1:
                text += f" ± {st.stdev(vals) * 100:.{DECIMALS}f} (n={len(vals)})"
            c = next((x for x in main if x.model == space and x.column == col), None)
            if c is not None:
                text += f" ({c.difference:+.{DECIMALS}f}, p {_p(c.p_adjusted)})"
                text += f" {c.marker(alpha)}" if c.marker(alpha) else ""
            row.append(text)
            nums.append(math.nan if mean is None else mean)
        rows.append(row)
        numbers.append(nums)
    label = display_names([s for s in spaces if s in hits], None)
    index = pd.Index([label[s] for s in spaces if s in hits], name="Model")
    frame = pd.DataFrame(rows, index=index, columns=columns)
    values = pd.DataFrame(numbers, index=index, columns=columns, dtype=float)
    caption = (
        f"BLI P@1 ({retrieval.upper()}) per direction over the test queries of all languages "
        f"with significance against {display_names([baseline], None)[baseline]} (the paper's "
        "Table 1 shape)."
    )
    notes = [
        "A cell: P@1 over all test queries of the languages each seed evaluated (a "
        "micro-average, unlike Table 1's mean over language pairs), mean ± sample std over "
        f"seeds; (difference to {display_names([baseline], None)[baseline]}, p after "
        f"{CORRECTION_NAMES[correction]}) "
        f"{UP}/{DOWN} when p < {alpha}. Paired bootstrap over (seed, language, query) items "
        f"both spaces evaluated, {iterations} resamples, two-sided; per-language p-values in "
        "the CSV.",
        *notes,
    ]
    return StatTable("table1_statistics", caption, frame, values, notes, comparisons)


def _seed_means(hits: Mapping[tuple[int, str, str], float]) -> list[float]:
    per: dict[int, list[float]] = defaultdict(list)
    for (seed, _, _), v in hits.items():
        per[seed].append(v)
    return [st.fmean(v) for _, v in sorted(per.items())]


# --------------------------------------------------------------------------- writing


def write_statistics(
    tables: Sequence[StatTable],
    out_dir: PathLike,
    md_path: PathLike,
    summary_path: PathLike,
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Each table as ``<name>.md``/``.csv``/``.tex`` (and ``<name>_tests.csv``: every test,
    per language included), all in ``md_path``; a summary JSON with every number and the
    ``settings`` the tables were made with."""
    out = Path(out_dir)
    parts = ["# Statistics: seeds aggregated, significance against baselines", ""]
    summary: dict[str, Any] = {"tables": {}}
    for t in tables:
        md = t.markdown()
        parts += [md.rstrip("\n"), ""]
        for suffix, text in ((".md", md), (".tex", t.latex())):
            with atomic_open(out / f"{t.name}{suffix}") as fh:
                fh.write(text)
        with atomic_open(out / f"{t.name}.csv") as fh:
            t.values.to_csv(fh, lineterminator="\n")
        with atomic_open(out / f"{t.name}_tests.csv") as fh:
            t.pvalue_frame().to_csv(fh, index=False, lineterminator="\n")
        summary["tables"][t.name] = {
            "caption": t.caption,
            "footnotes": t.footnotes,
            "rows": list(t.frame.index),
            "columns": list(t.frame.columns),
            "cells": t.cells,
            "tests": t.pvalue_frame().to_dict(orient="records"),
        }
    if settings is not None:
        summary["settings"] = dict(settings)
    with atomic_open(md_path) as fh:
        fh.write("\n".join(parts))
    write_json(summary_path, summary)
    return summary


def load_with_source(paths: Sequence[PathLike], what: str) -> list[dict[str, Any]]:
    """The ``what`` ("BLI", "fine-tuning" or "retrieval") records, each checked by its
    reader (a missing or mistyped key refused naming the file and the key) and
    remembering its file (``_source``)."""
    from xlalign.reporting.tables import load_records
    from xlalign.reporting.zeroshot import load_retrieval, load_runs

    readers: dict[str, Callable[[Sequence[PathLike]], list[dict[str, Any]]]] = {
        "BLI": lambda ps: load_records(ps, kind="bli"),
        "fine-tuning": load_runs,
        "retrieval": load_retrieval,
    }
    if what not in readers:
        raise ValueError(f"what={what!r}: expected one of {sorted(readers)}")
    return readers[what](paths)


def run_statistics(
    *,
    runs: Sequence[PathLike],
    retrieval: Sequence[PathLike],
    bli: Sequence[PathLike],
    md_path: PathLike,
    summary_path: PathLike,
    encoders: Sequence[str],
    base_encoder: str,
    pretrain_runs: Sequence[str],
    tasks: Sequence[str],
    retrieval_sets: Sequence[str],
    spaces: Sequence[str],
    bli_baseline: str,
    bli_retrieval: str = "csls",
    iterations: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    correction: str = "holm",
    budget_mb: float | None = None,
) -> dict[str, Any]:
    """The statistics job: read the results, build the tables, write them. ``budget_mb``
    (``memory.block_mb``) bounds the randomised tests' resampling blocks; it changes no
    number, so it is not among the settings written."""
    if correction not in CORRECTIONS:
        raise InputError(
            f"results.significance.correction: {correction!r}; expected one of "
            f"{', '.join(CORRECTIONS)}"
        )
    opts = {"iterations": iterations, "seed": seed, "alpha": alpha, "correction": correction}
    tables: list[StatTable] = []
    if bli:
        records = load_with_source(bli, "BLI")
        tables.append(
            bli_statistics(
                records,
                spaces=spaces,
                baseline=bli_baseline,
                retrieval=bli_retrieval,
                budget_mb=budget_mb,
                **opts,
            )
        )
    if runs or retrieval:
        t3, t3p = zeroshot_statistics(
            load_with_source(runs, "fine-tuning"),
            load_with_source(retrieval, "retrieval"),
            encoders=encoders,
            base_encoder=base_encoder,
            pretrain_runs=pretrain_runs,
            tasks=tasks,
            retrieval_sets=retrieval_sets,
            budget_mb=budget_mb,
            **opts,
        )
        tables += [t3, t3p, std_band_table(t3.cells, base_encoder)]
    if not tables:
        raise InputError(f"{md_path}: no BLI, fine-tuning or retrieval results to test")
    settings = {**opts, "bli_baseline": bli_baseline, "base_encoder": base_encoder}
    return write_statistics(tables, Path(md_path).parent, md_path, summary_path, settings)
