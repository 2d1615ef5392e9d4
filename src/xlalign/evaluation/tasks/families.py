"""The :class:`~xlalign.evaluation.tasks.base.Task` implementation of each task id."""

from __future__ import annotations

from typing import Any

from xlalign.core.errors import ConfigError
from xlalign.evaluation.tasks.registry import task_info


def make_task(task: str) -> Any:
    """The :class:`~xlalign.evaluation.tasks.base.Task` implementation of a task id
    (imports torch and transformers)."""
    info = task_info(task)
    if info.family == "tagging":
        from xlalign.evaluation.tasks.tagging import TaggingTask

        return TaggingTask(scheme=info.scheme)
    if info.family == "classification":
        from xlalign.evaluation.tasks.classification import PairClassificationTask

        return PairClassificationTask()
    if info.family == "qa":
        from xlalign.evaluation.tasks.qa import QATask

        return QATask(style=info.scheme)
    if info.family == "parsing":
        from xlalign.evaluation.tasks.parsing import ParsingTask

        return ParsingTask()
    raise ConfigError(f"task {task!r} is a retrieval set: it is not fine-tuned")
