"""VecMap's options and the public tool's presets, as plain data (no torch).

:class:`VecMapArgs` holds the options of :func:`xlalign.mapping.vecmap.map_embeddings` and
checks them; :func:`recipe_args` builds them from a recipe. The configuration validates
``align.recipe`` and ``align.options`` with them, so this module imports nothing heavy.

:data:`RECIPES` are the tool's presets, written as the flags they set:

==================  =====================================================================
recipe              public flags
==================  =====================================================================
``supervised``      ``--supervised DICT``: ``-d DICT --normalize unit center unit --whiten
                    --src_reweight 0.5 --trg_reweight 0.5 --src_dewhiten src
                    --trg_dewhiten trg --batch_size 1000``
``semi-supervised`` ``--semi_supervised DICT``: the supervised flags (batch size 10000) plus
                    ``--self_learning --vocabulary_cutoff 20000 --csls 10``
``identical``       ``--identical``: ``--init_identical`` plus the semi-supervised flags
``unsupervised``    ``--unsupervised``: ``--init_unsupervised --unsupervised_vocab 4000``
                    plus the semi-supervised flags
``acl2018``         ``--acl2018``: the same as ``unsupervised``
``aaai2018``        ``--aaai2018 DICT``: ``-d DICT --normalize unit center --whiten
                    --trg_reweight 1 --src_dewhiten src --trg_dewhiten trg --batch_size 1000``
``acl2017``         ``--acl2017``: ``--init_numerals --orthogonal --normalize unit center
                    --self_learning --direction forward --stochastic_initial 1.0
                    --stochastic_interval 1 --batch_size 1000``
``acl2017-seed``    ``--acl2017_seed DICT``: as ``acl2017`` with ``-d DICT``
``orthogonal``      ``--emnlp2016 DICT``: ``-d DICT --orthogonal --normalize unit center
                    --batch_size 1000`` (plain Procrustes, no self-learning)
``emnlp2016``       the same as ``orthogonal``
==================  =====================================================================

The presets' ``--batch_size`` is not carried over: it only sets memory (rows per
similarity block), which here comes from the memory budget (``budget_mb`` of
:func:`xlalign.mapping.vecmap.map_embeddings`, the configuration's ``memory.block_mb``)
unless ``batch_size`` is given as an option; a given ``batch_size`` wins over the budget
(:func:`induction_block_rows`).

Recipe names may be written with ``_`` for ``-`` (``semi_supervised``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from xlalign.core.errors import ConfigError

#: xlalign.core.memory.DEFAULT_BLOCK_MB (the schema's memory.block_mb default).
_DEFAULT_BLOCK_MB = 256
NORMALIZE_STEPS = ("unit", "center", "unitdim", "centeremb", "none")
INITS = ("dictionary", "identical", "unsupervised", "numerals")
DIRECTIONS = ("union", "forward", "backward")
DEWHITEN = (None, "src", "trg")
#: Names of the precisions of the n x n work (``VecMapArgs.dtype``).
DTYPE_NAMES = ("float32", "float64")


def check_steps(steps: Sequence[str], where: str = "normalize") -> tuple[str, ...]:
    """``steps`` (one name or several) as a tuple, each one of :data:`NORMALIZE_STEPS`."""
    if isinstance(steps, str):
        steps = [steps]
    bad = [s for s in steps if s not in NORMALIZE_STEPS]
    if bad:
        raise ConfigError(
            f"{where}: unknown normalisation step(s) {bad}; expected a list of {NORMALIZE_STEPS}"
        )
    return tuple(steps)


@dataclass(frozen=True)
class VecMapArgs:
    """VecMap's options with the public tool's defaults (``map_embeddings.py --help``).

    ``max_iterations`` is ours: a safety cap on self-learning iterations (0 = none, as in
    the tool, which has no cap). ``recipe`` only records where the options came from.
    """

    normalize: tuple[str, ...] = ()  # --normalize: steps of NORMALIZE_STEPS, in order
    init: str = "dictionary"  # seed dictionary: given, identical words, unsupervised, numerals
    whiten: bool = False  # --whiten (advanced mapping, step 1)
    src_reweight: float = 0.0  # --src_reweight: columns scaled by s**src_reweight (step 3)
    trg_reweight: float = 0.0  # --trg_reweight
    src_dewhiten: str | None = None  # --src_dewhiten src|trg (step 4; needs whiten)
    trg_dewhiten: str | None = None  # --trg_dewhiten src|trg
    dim_reduction: int = 0  # --dim_reduction: keep the first k dimensions (step 5; 0 = all)
    orthogonal: bool = False  # -c: final mapping orthogonal (Procrustes) instead of advanced
    unconstrained: bool = False  # -u: final mapping by least squares
    self_learning: bool = False  # --self_learning
    vocabulary_cutoff: int = 0  # induction over the k most frequent words per side (0 = all)
    csls_neighborhood: int = 0  # --csls k for induction (0 = nearest neighbour)
    direction: str = "union"  # induction: forward, backward, or both concatenated
    unsupervised_vocab: int = 0  # words per side for init="unsupervised" (0 = all)
    stochastic_initial: float = 0.1  # initial keep probability of the similarities
    stochastic_multiplier: float = 2.0  # keep probability growth factor
    stochastic_interval: int = 50  # iterations without improvement before it grows
    threshold: float = 1e-6  # objective gain that counts as an improvement
    batch_size: int | None = None  # rows per similarity block (memory, not results);
    # None: as many as fit the memory budget (induction_block_rows); a number wins over it
    seed: int = 0  # dropout masks
    max_iterations: int = 0  # ours: cap on self-learning iterations (0 = none, as the tool)
    dtype: str = "float32"  # --precision of the n x n work (d x d algebra is float64)
    recipe: str | None = None  # informational: the recipe these came from

    def __post_init__(self) -> None:
        object.__setattr__(self, "normalize", check_steps(self.normalize))

        def choose(name: str, allowed: Sequence[Any]) -> None:
            if getattr(self, name) not in allowed:
                raise ConfigError(
                    f"vecmap.{name}: {getattr(self, name)!r} is not one of {list(allowed)}"
                )

        def at_least(name: str, low: float, *, strict: bool = False) -> None:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"vecmap.{name}: expected a number, got {value!r}")
            if value < low or (strict and value == low):
                rel = ">" if strict else ">="
                raise ConfigError(f"vecmap.{name}: expected a value {rel} {low}, got {value!r}")

        choose("init", INITS)
        choose("direction", DIRECTIONS)
        choose("src_dewhiten", DEWHITEN)
        choose("trg_dewhiten", DEWHITEN)
        choose("dtype", DTYPE_NAMES)
        for name in ("dim_reduction", "vocabulary_cutoff", "csls_neighborhood"):
            at_least(name, 0)
        for name in ("unsupervised_vocab", "max_iterations", "seed"):
            at_least(name, 0)
        if self.batch_size is not None:
            at_least("batch_size", 1)
        at_least("stochastic_interval", 1)
        at_least("stochastic_initial", 0, strict=True)
        at_least("stochastic_multiplier", 1, strict=True)
        at_least("threshold", 0)
        at_least("src_reweight", 0)
        at_least("trg_reweight", 0)
        if self.stochastic_initial > 1:
            raise ConfigError(
                f"vecmap.stochastic_initial: a keep probability in (0, 1], "
                f"got {self.stochastic_initial!r}"
            )
        if self.orthogonal and self.unconstrained:
            raise ConfigError("vecmap: orthogonal and unconstrained exclude each other")
        if (self.src_dewhiten or self.trg_dewhiten) and not self.whiten:
            raise ConfigError("vecmap: src_dewhiten/trg_dewhiten need whiten=True")
        if self.orthogonal or self.unconstrained:
            advanced = {
                "whiten": self.whiten,
                "src_reweight": self.src_reweight,
                "trg_reweight": self.trg_reweight,
                "dim_reduction": self.dim_reduction,
            }
            used = [k for k, v in advanced.items() if v]
            if used:
                mode = "orthogonal" if self.orthogonal else "unconstrained"
                raise ConfigError(
                    f"vecmap: {used} only apply to the advanced mapping and would be ignored "
                    f"with {mode}=True; set them to their defaults (False/0)"
                )


_ADVANCED = {
    "normalize": ("unit", "center", "unit"),
    "whiten": True,
    "src_reweight": 0.5,
    "trg_reweight": 0.5,
    "src_dewhiten": "src",
    "trg_dewhiten": "trg",
}
_SELF_LEARNING = {"self_learning": True, "vocabulary_cutoff": 20000, "csls_neighborhood": 10}
_ACL2017 = {
    "orthogonal": True,
    "normalize": ("unit", "center"),
    "self_learning": True,
    "direction": "forward",
    "stochastic_initial": 1.0,
    "stochastic_interval": 1,
}
_ORTHOGONAL = {
    "init": "dictionary",
    "orthogonal": True,
    "normalize": ("unit", "center"),
}

#: The public tool's presets (see the module docstring for the flags of each).
RECIPES: dict[str, dict[str, Any]] = {
    "supervised": {"init": "dictionary", **_ADVANCED},
    "semi-supervised": {"init": "dictionary", **_ADVANCED, **_SELF_LEARNING},
    "identical": {"init": "identical", **_ADVANCED, **_SELF_LEARNING},
    "unsupervised": {
        "init": "unsupervised",
        "unsupervised_vocab": 4000,
        **_ADVANCED,
        **_SELF_LEARNING,
    },
    "aaai2018": {
        "init": "dictionary",
        "normalize": ("unit", "center"),
        "whiten": True,
        "trg_reweight": 1.0,
        "src_dewhiten": "src",
        "trg_dewhiten": "trg",
    },
    "acl2017": {"init": "numerals", **_ACL2017},
    "acl2017-seed": {"init": "dictionary", **_ACL2017},
    "orthogonal": _ORTHOGONAL,
}
RECIPES["acl2018"] = RECIPES["unsupervised"]
RECIPES["emnlp2016"] = RECIPES["orthogonal"]


def value_bytes(args: VecMapArgs) -> int:
    """Bytes per value of the n x n work (``args.dtype``)."""
    return 8 if args.dtype == "float64" else 4


def induction_bytes_per_row(args: VecMapArgs, columns: int, *, gpu: bool = False) -> int:
    """Working bytes per row of a self-learning similarity block over ``columns`` keys.

    The block itself (``s`` bytes per value), the dropout's float32 random numbers (on the
    CPU; plus a byte mask on the CPU and its copy on a GPU) and the top-k of the CSLS term
    (``k`` values and int64 indices per row)."""
    k = min(args.csls_neighborhood, columns)
    return columns * (value_bytes(args) + 4 + (2 if gpu else 0)) + k * (value_bytes(args) + 8)


def induction_block_rows(
    args: VecMapArgs, columns: int, budget_mb: float | None, *, gpu: bool = False
) -> int:
    """Rows per self-learning similarity block: ``args.batch_size`` when given (the public
    tool's option keeps its meaning and wins over the budget), else as many rows as fit
    ``budget_mb`` (:func:`induction_bytes_per_row`); never more than ``columns``."""
    columns = max(1, columns)
    if args.batch_size is not None:
        return max(1, min(int(args.batch_size), columns))
    per_row = induction_bytes_per_row(args, columns, gpu=gpu)
    # xlalign.core.memory.rows_per_block's rule, restated: config validation imports this
    # module, which therefore uses the standard library only (tests/core/test_layering.py).
    budget = (_DEFAULT_BLOCK_MB if budget_mb is None else budget_mb) * (1 << 20)
    return max(1, min(columns, int(budget // per_row)))


def unsupervised_init_bytes(args: VecMapArgs, words: int) -> int:
    """Bytes of the unsupervised initialisation's two sorted similarity matrices of the
    ``words`` (``U``) most frequent words per side, ``2 s U^2``: the part of VecMap's
    memory that the budget does not bound (each row is a word's whole sorted similarity
    distribution over the ``U`` words, and retrieval compares every row of one with every
    row of the other). The rest of the initialisation works in blocks of the budget."""
    return 2 * value_bytes(args) * words * words


def recipe_args(name: str, **overrides: Any) -> VecMapArgs:
    """The options of recipe ``name`` with ``overrides`` on top (``ConfigError`` if unknown)."""
    key = name.replace("_", "-")
    if key not in RECIPES:
        raise ConfigError(f"vecmap recipe {name!r} is unknown; expected one of {sorted(RECIPES)}")
    valid = {f.name for f in fields(VecMapArgs)}
    bad = sorted(set(overrides) - valid)
    if bad:
        raise ConfigError(
            f"vecmap recipe {name!r}: unknown option(s) {bad}; expected some of {sorted(valid)}"
        )
    return VecMapArgs(**{**RECIPES[key], "recipe": key, **overrides})
