"""Batching of task features (the collate function every task family shares)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def pad_batch(batch: Sequence[Mapping[str, Any]], pads: Mapping[str, int]) -> dict[str, Any]:
    """Features into a batch of ``torch.long`` tensors (a :meth:`Task.collate`): each key
    of ``pads`` whose values are lists is padded on the right with ``pads[key]`` to the
    longest of the batch, one whose values are numbers becomes a vector; keys absent from
    the first feature are left out. ``input_ids`` also gives ``attention_mask`` (1 on the
    real tokens)."""
    import torch

    out: dict[str, Any] = {}
    for key, pad in pads.items():
        if key not in batch[0]:
            continue
        values = [f[key] for f in batch]
        if not isinstance(values[0], list | tuple):
            out[key] = torch.tensor(values, dtype=torch.long)
            continue
        tensor = torch.full((len(batch), max(len(v) for v in values)), pad, dtype=torch.long)
        for i, v in enumerate(values):
            tensor[i, : len(v)] = torch.tensor(v, dtype=torch.long)
        out[key] = tensor
        if key == "input_ids":
            mask = torch.zeros_like(tensor)
            for i, v in enumerate(values):
                mask[i, : len(v)] = 1
            out["attention_mask"] = mask
    return out
