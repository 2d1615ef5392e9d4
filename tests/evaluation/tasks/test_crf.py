"""The linear-chain CRF against brute force: the log partition and the Viterbi path by
enumerating every tag sequence, ragged and gapped masks, the BIO decoding constraints, and
a float64 gradient check of the negative log-likelihood."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from xlalign.evaluation.tasks.crf import LinearChainCRF, bio_constraints


def random_crf(k: int, seed: int, dtype: torch.dtype = torch.float64) -> LinearChainCRF:
    gen = torch.Generator().manual_seed(seed)
    crf = LinearChainCRF(k).to(dtype)
    with torch.no_grad():
        crf.transitions.copy_(torch.randn(k, k, generator=gen, dtype=dtype))
        crf.start.copy_(torch.randn(k, generator=gen, dtype=dtype))
        crf.end.copy_(torch.randn(k, generator=gen, dtype=dtype))
    return crf


def path_score(crf: LinearChainCRF, e: torch.Tensor, y: list[int]) -> float:
    """The definition: start + emissions + transitions + end, written out."""
    start, end, trans = crf.start.detach(), crf.end.detach(), crf.transitions.detach()
    s = float(start[y[0]]) + float(end[y[-1]])
    s += sum(float(e[t, tag]) for t, tag in enumerate(y))
    s += sum(float(trans[a, b]) for a, b in itertools.pairwise(y))
    return s


def brute(crf: LinearChainCRF, e: torch.Tensor, allowed=None) -> tuple[float, list[int]]:
    """log Z and the best path by enumerating all K^n sequences of emissions e [n, K]."""
    n, k = e.shape
    scores, best, best_path = [], -math.inf, None
    for y in itertools.product(range(k), repeat=n):
        s = path_score(crf, e, list(y))
        scores.append(s)
        if allowed is not None and not allowed(list(y)):
            continue
        if s > best:
            best, best_path = s, list(y)
    m = max(scores)
    return m + math.log(sum(math.exp(s - m) for s in scores)), best_path


def test_log_partition_and_viterbi_against_enumeration_with_ragged_masks() -> None:
    k, t = 3, 5
    crf = random_crf(k, 0)
    gen = torch.Generator().manual_seed(1)
    e = torch.randn(3, t, k, generator=gen, dtype=torch.float64)
    mask = torch.tensor(
        [[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [0, 1, 0, 1, 1]], dtype=torch.bool
    )  # full, ragged, gapped (a tagger's first subwords)
    log_z = crf.log_partition(e, mask)
    paths = crf.viterbi(e, mask)
    for b in range(3):
        chain = e[b, mask[b]]
        want_z, want_path = brute(crf, chain)
        assert float(log_z[b]) == pytest.approx(want_z, abs=1e-9)
        assert paths[b] == want_path
        # the score of a gold path is the definition, and the NLL is log Z - s
        gold = torch.zeros(t, dtype=torch.long)
        gold[mask[b]] = torch.tensor(want_path[::-1])
        s = crf.score(e[b : b + 1], gold.unsqueeze(0), mask[b : b + 1])
        assert float(s) == pytest.approx(path_score(crf, chain, want_path[::-1]), abs=1e-9)


def test_probabilities_sum_to_one_and_padding_is_ignored() -> None:
    crf = random_crf(2, 3)
    e = torch.randn(1, 3, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    mask = torch.ones(1, 3, dtype=torch.bool)
    total = sum(
        math.exp(-float(crf.neg_log_likelihood(e, torch.tensor([y]), mask)))
        for y in itertools.product(range(2), repeat=3)
    )
    assert total == pytest.approx(1.0, abs=1e-12)
    # padding after the chain, with arbitrary emissions and -100 tags, changes nothing
    padded = torch.cat([e, torch.full((1, 2, 2), 50.0, dtype=torch.float64)], dim=1)
    pmask = torch.tensor([[1, 1, 1, 0, 0]], dtype=torch.bool)
    tags = torch.tensor([[1, 0, 1, -100, -100]])
    assert float(crf.neg_log_likelihood(padded, tags, pmask)) == pytest.approx(
        float(crf.neg_log_likelihood(e, tags[:, :3], mask)), abs=1e-12
    )


def test_empty_chain_and_batch_mean() -> None:
    crf = random_crf(2, 5)
    e = torch.randn(2, 3, 2, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    mask = torch.tensor([[1, 1, 0], [0, 0, 0]], dtype=torch.bool)
    tags = torch.tensor([[0, 1, -100], [-100, -100, -100]])
    one = crf.neg_log_likelihood(e[:1], tags[:1], mask[:1])
    assert float(crf.neg_log_likelihood(e, tags, mask)) == pytest.approx(float(one) / 2)
    assert crf.viterbi(e, mask)[1] == []
    assert crf.viterbi(e[:, :0], mask[:, :0]) == [[], []]


def test_nll_gradcheck_float64() -> None:
    """Gradients of the NLL in the emissions and in all three parameter sets."""
    crf = random_crf(3, 7)
    gen = torch.Generator().manual_seed(8)
    e = torch.randn(2, 4, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[1, 0, 1, 1], [1, 1, 0, 0]], dtype=torch.bool)
    tags = torch.tensor([[2, -100, 0, 1], [1, 1, -100, -100]])

    def nll(e, trans, start, end):
        values = {"transitions": trans, "start": start, "end": end}
        return torch.func.functional_call(crf, values, (e, tags, mask))

    params = [p.detach().clone().requires_grad_(True) for p in crf.parameters()]
    assert torch.autograd.gradcheck(nll, (e, *params))


def test_bio_constraints_in_decoding_only() -> None:
    labels = ["B-PER", "I-LOC", "I-PER", "O"]
    start, trans = bio_constraints(labels)
    assert start.tolist() == [True, False, False, True]
    assert trans[:, 2].tolist() == [True, False, True, False]  # I-PER after B-PER, I-PER
    assert trans[:, 1].tolist() == [False, True, False, False]  # I-LOC after I-LOC only
    assert trans[:, 0].all() and trans[:, 3].all()

    def valid(y: list[int]) -> bool:
        return bool(start[y[0]]) and all(bool(trans[a, b]) for a, b in itertools.pairwise(y))

    free = random_crf(4, 9)
    tied = LinearChainCRF(4, allowed_start=start, allowed_transitions=trans).double()
    tied.load_state_dict(free.state_dict())
    gen = torch.Generator().manual_seed(10)
    e = torch.randn(6, 4, 4, generator=gen, dtype=torch.float64)
    e[:, :, 1] += 2.0  # I-LOC everywhere would win without the constraints
    mask = torch.ones(6, 4, dtype=torch.bool)
    free_paths, tied_paths = free.viterbi(e, mask), tied.viterbi(e, mask)
    assert any(not valid(p) for p in free_paths)
    for b in range(6):
        assert tied_paths[b] == brute(tied, e[b], allowed=valid)[1]
    # the likelihood is not constrained: an invalid gold path has a finite loss
    bad = torch.full((1, 4), 1)
    assert torch.isfinite(tied.neg_log_likelihood(e[:1], bad, mask[:1]))
    assert float(tied.neg_log_likelihood(e[:1], bad, mask[:1])) == pytest.approx(
        float(free.neg_log_likelihood(e[:1], bad, mask[:1]))
    )


def test_bad_shapes_are_refused() -> None:
    crf = LinearChainCRF(3)
    with pytest.raises(ValueError, match="emissions"):
        crf.viterbi(torch.zeros(2, 4, 2), torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask"):
        crf.log_partition(torch.zeros(2, 4, 3), torch.ones(2, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="tag outside"):
        crf.score(torch.zeros(1, 2, 3), torch.tensor([[0, 3]]), torch.ones(1, 2, dtype=torch.bool))
    with pytest.raises(ValueError, match="no next tag"):
        LinearChainCRF(2, allowed_transitions=torch.tensor([[True, True], [False, False]]))
