"""Where tensors live: the torch device and dtype a job asked for, or the defaults.

torch is imported when a function runs, not with this module, so that importing
:mod:`xlalign.core` stays cheap.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from xlalign.core.errors import ConfigError

if TYPE_CHECKING:
    import torch


def resolve_device(device: Any = None, local_rank: int | None = None) -> torch.device:
    """``device`` as a ``torch.device``; ``None`` or ``"auto"``: CUDA when torch sees a
    GPU, else the CPU.

    With ``local_rank`` (one process of a data-parallel run), a CUDA device without an
    index (``"cuda"``) becomes ``cuda:local_rank``.
    """
    import torch

    if device is None or device == "auto":
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        dev = torch.device(device)
    if local_rank is not None and dev.type == "cuda" and dev.index is None:
        dev = torch.device("cuda", local_rank)
    return dev


def resolve_dtype(dtype: Any, device: Any) -> torch.dtype:
    """``dtype`` as a torch dtype (a name such as ``"float32"`` or a dtype); ``None``:
    bfloat16 on CUDA, float32 elsewhere."""
    import torch

    if dtype is None:
        return torch.bfloat16 if torch.device(device).type == "cuda" else torch.float32
    if isinstance(dtype, str):
        named = getattr(torch, dtype, None)
        if not isinstance(named, torch.dtype):
            raise ConfigError(f"dtype: unknown torch dtype {dtype!r}; expected e.g. 'float32'")
        return named
    return dtype  # type: ignore[no-any-return]


#: Training precisions a job may ask for ("auto": see :func:`resolve_precision`).
PRECISIONS = ("auto", "fp32", "bf16", "fp16")


def resolve_precision(precision: str, device: Any, *, key: str = "precision") -> str:
    """``"fp32"``, ``"bf16"`` or ``"fp16"`` for training on ``device``: ``"auto"`` is bf16 on
    a GPU that supports it, else fp16 on a GPU, fp32 on the CPU. ``key`` names the config
    key in the errors (fp16 asked for on the CPU, an unknown value)."""
    import torch

    if precision not in PRECISIONS:
        raise ConfigError(f"{key} must be one of {PRECISIONS}, not {precision!r}")
    if torch.device(device).type != "cuda":
        if precision == "fp16":
            raise ConfigError(f"{key} fp16 needs a GPU; use fp32 or bf16 on the CPU")
        return "fp32" if precision == "auto" else precision
    if precision == "auto":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return precision


@contextlib.contextmanager
def deterministic_algorithms() -> Iterator[None]:
    """Run the block under ``torch.use_deterministic_algorithms(True, warn_only=True)``
    (an op without a deterministic kernel warns instead of failing); the previous setting
    is restored afterwards."""
    import torch

    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)
