"""A linear-chain conditional random field over per-position tag scores (Lafferty et al.
2001), the NER output layer of 002's feature-based evaluation (Wu & Dredze 2020, section 3:
"a CRF instead of a linear classifier for NER").

A tag sequence ``y_1..y_n`` over emissions ``e`` scores

    s(y) = start[y_1] + sum_t e[t, y_t] + sum_{t>1} trans[y_{t-1}, y_t] + end[y_n]

and ``p(y | e) = exp s(y) / Z`` with ``Z`` summed over all ``K^n`` sequences (the forward
algorithm, in log space). Training minimises ``log Z - s(gold)`` (mean over the batch);
decoding is Viterbi's ``argmax_y s(y)``.

Masks: the chain runs over the positions where ``mask`` is true, in order, whatever lies
between them (a tagger's chain is its words' first subwords, with the other subwords and
the special tokens in between): the unmasked positions are packed to the front first, so
``[1, 0, 1]`` is the chain of length two over positions 0 and 2. A sequence with no
position in its mask has loss 0 and an empty path.

Differences from crosslingual-nlp's ``ChainCRF`` (002's code): its transition scores are
computed from each position's features (a ``bigram`` linear layer giving a K x K matrix
per position) and a padding tag stands for the start; here transitions, start and end
scores are plain parameters (the textbook CRF). Its predictions are repaired into valid
BIO afterwards; here :func:`bio_constraints` can forbid invalid transitions in decoding
instead (off by default; the loss is never constrained, so training data with an invalid
transition cannot give an infinite loss).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


def bio_constraints(labels: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Which IOB2 tags may start a sequence (``[K]``) and follow each other (``[K, K]``,
    ``[i, j]``: ``j`` after ``i``): ``I-X`` only after ``B-X`` or ``I-X``, every other tag
    anywhere."""
    k = len(labels)
    start = torch.ones(k, dtype=torch.bool)
    trans = torch.ones(k, k, dtype=torch.bool)
    for j, tag in enumerate(labels):
        if tag.startswith("I-"):
            start[j] = False
            for i, prev in enumerate(labels):
                trans[i, j] = prev in (f"B-{tag[2:]}", tag)
    return start, trans


class LinearChainCRF(nn.Module):
    """Transition, start and end scores over ``num_tags`` tags (all zero at start: the
    emissions alone decide until training moves them). ``allowed_start`` (``[K]``) and
    ``allowed_transitions`` (``[K, K]``), boolean, restrict Viterbi decoding (see
    :func:`bio_constraints`); the likelihood ignores them."""

    def __init__(
        self,
        num_tags: int,
        *,
        allowed_start: torch.Tensor | None = None,
        allowed_transitions: torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        if num_tags < 1:
            raise ValueError(f"LinearChainCRF: num_tags must be >= 1, got {num_tags}")
        self.num_tags = num_tags
        self.transitions = nn.Parameter(torch.zeros(num_tags, num_tags))
        self.start = nn.Parameter(torch.zeros(num_tags))
        self.end = nn.Parameter(torch.zeros(num_tags))
        start_ok = torch.ones(num_tags, dtype=torch.bool)
        trans_ok = torch.ones(num_tags, num_tags, dtype=torch.bool)
        if allowed_start is not None:
            start_ok = torch.as_tensor(allowed_start, dtype=torch.bool)
        if allowed_transitions is not None:
            trans_ok = torch.as_tensor(allowed_transitions, dtype=torch.bool)
        if start_ok.shape != (num_tags,) or trans_ok.shape != (num_tags, num_tags):
            raise ValueError(
                f"LinearChainCRF: constraints of shape {tuple(start_ok.shape)} and "
                f"{tuple(trans_ok.shape)} for {num_tags} tags"
            )
        if not start_ok.any() or not trans_ok.any(dim=1).all():
            raise ValueError("LinearChainCRF: the constraints leave some path no next tag")
        self.register_buffer("allowed_start", start_ok, persistent=False)
        self.register_buffer("allowed_transitions", trans_ok, persistent=False)

    # ------------------------------------------------------------------ helpers

    def _check(self, emissions: torch.Tensor, mask: torch.Tensor) -> None:
        if emissions.dim() != 3 or emissions.shape[-1] != self.num_tags:
            raise ValueError(
                f"LinearChainCRF: emissions must be [batch, length, {self.num_tags}], got "
                f"{tuple(emissions.shape)}"
            )
        if mask.shape != emissions.shape[:2]:
            raise ValueError(
                f"LinearChainCRF: mask {tuple(mask.shape)} does not match emissions "
                f"{tuple(emissions.shape[:2])}"
            )

    def _scores(self, emissions: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Emissions and parameters in one floating dtype (float32 at least: the sums
        over a chain in half precision lose the differences that decide)."""
        dtype = torch.promote_types(emissions.dtype, torch.float32)
        return (
            emissions.to(dtype),
            self.transitions.to(dtype),
            self.start.to(dtype),
            self.end.to(dtype),
        )

    @staticmethod
    def _pack(mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``order`` (the unmasked positions first, in order), the chain ``lengths`` and
        the packed prefix mask."""
        mask = mask.bool()
        order = torch.argsort((~mask).to(torch.int8), dim=1, stable=True)
        lengths = mask.sum(dim=1)
        steps = torch.arange(mask.shape[1], device=mask.device)
        return order, lengths, steps.unsqueeze(0) < lengths.unsqueeze(1)

    # ------------------------------------------------------------------ likelihood

    def log_partition(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``log Z`` per sequence ``[B]`` (0 for an empty chain)."""
        self._check(emissions, mask)
        e, trans, start, end = self._scores(emissions)
        order, lengths, packed = self._pack(mask)
        e = e.gather(1, order.unsqueeze(-1).expand_as(e))
        if e.shape[1] == 0:
            return e.new_zeros(e.shape[0])
        alpha = start + e[:, 0]  # [B, K]: log-sum of all prefixes ending in each tag
        for t in range(1, e.shape[1]):
            step = torch.logsumexp(alpha.unsqueeze(2) + trans.unsqueeze(0), dim=1) + e[:, t]
            alpha = torch.where(packed[:, t : t + 1], step, alpha)
        log_z = torch.logsumexp(alpha + end, dim=1)
        return torch.where(lengths > 0, log_z, torch.zeros_like(log_z))

    def score(
        self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """``s(tags)`` per sequence ``[B]``; tags at masked positions are ignored."""
        self._check(emissions, mask)
        if tags.shape != mask.shape:
            raise ValueError(
                f"LinearChainCRF: tags {tuple(tags.shape)} do not match mask {tuple(mask.shape)}"
            )
        e, trans, start, end = self._scores(emissions)
        order, lengths, packed = self._pack(mask)
        e = e.gather(1, order.unsqueeze(-1).expand_as(e))
        y = tags.gather(1, order).masked_fill(~packed, 0)
        if ((y < 0) | (y >= self.num_tags)).any():
            raise ValueError(
                f"LinearChainCRF: a tag outside [0, {self.num_tags}) at an unmasked position"
            )
        if e.shape[1] == 0:
            return e.new_zeros(e.shape[0])
        w = packed.to(e.dtype)
        total = (e.gather(2, y.unsqueeze(-1)).squeeze(-1) * w).sum(dim=1)
        total = total + (trans[y[:, :-1], y[:, 1:]] * w[:, 1:]).sum(dim=1)
        last = y.gather(1, (lengths - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
        total = total + start[y[:, 0]] + end[last]
        return torch.where(lengths > 0, total, torch.zeros_like(total))

    def neg_log_likelihood(
        self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """``mean_b (log Z_b - s_b(tags_b))``, the loss (emissions ``[B, T, K]``, tags and
        mask ``[B, T]``)."""
        return (self.log_partition(emissions, mask) - self.score(emissions, tags, mask)).mean()

    def forward(
        self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """The loss, :meth:`neg_log_likelihood`."""
        return self.neg_log_likelihood(emissions, tags, mask)

    # ------------------------------------------------------------------ decoding

    @torch.no_grad()
    def viterbi(self, emissions: torch.Tensor, mask: torch.Tensor) -> list[list[int]]:
        """The best tag sequence of each chain (one tag per unmasked position, in order),
        under the decoding constraints."""
        self._check(emissions, mask)
        e, trans, start, end = self._scores(emissions)
        order, lengths, packed = self._pack(mask)
        e = e.gather(1, order.unsqueeze(-1).expand_as(e))
        batch, length, k = e.shape
        if length == 0:
            return [[] for _ in range(batch)]
        forbid = torch.finfo(e.dtype).min / 4  # never wins, never overflows when added
        trans = trans.masked_fill(~self.allowed_transitions, forbid)
        start = start.masked_fill(~self.allowed_start, forbid)
        best = start + e[:, 0]
        back = torch.zeros(batch, length, k, dtype=torch.long, device=e.device)
        for t in range(1, length):
            cand, arg = (best.unsqueeze(2) + trans.unsqueeze(0)).max(dim=1)
            best = torch.where(packed[:, t : t + 1], cand + e[:, t], best)
            back[:, t] = arg
        last = (best + end).argmax(dim=1)
        back_cpu, last_cpu, n_cpu = back.cpu(), last.cpu().tolist(), lengths.cpu().tolist()
        paths: list[list[int]] = []
        for b in range(batch):
            n = int(n_cpu[b])
            if n == 0:
                paths.append([])
                continue
            path = [int(last_cpu[b])]
            for t in range(n - 1, 0, -1):
                path.append(int(back_cpu[b, t, path[-1]]))
            paths.append(path[::-1])
        return paths
