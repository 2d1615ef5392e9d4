"""The alignment losses against hand-computed values, closed forms, independent float64
restatements (numpy / scipy) and finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg
import torch

from xlalign.core.errors import ConfigError
from xlalign.pretrain.losses import (
    ContrastiveAlignment,
    DCCALoss,
    GCCALoss,
    align_mlm_loss,
    check_batch,
    check_mse_dims,
    hidden_regulariser,
    l2_align_loss,
    min_batch,
    mse_loss,
    parameter_drift,
)

F64 = torch.float64
SQRT2 = math.sqrt(2.0)


def rand(gen: torch.Generator, *shape: int, requires_grad: bool = False) -> torch.Tensor:
    return torch.randn(*shape, generator=gen, dtype=F64, requires_grad=requires_grad)


@pytest.fixture
def gen() -> torch.Generator:
    return torch.Generator().manual_seed(1234)


def finite_grads(*tensors: torch.Tensor) -> bool:
    return all(t.grad is not None and bool(torch.isfinite(t.grad).all()) for t in tensors)


# ---------------------------------------------------------------------------------- MSE


def test_mse_hand_computed() -> None:
    pred = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    target = torch.tensor([[0.0, 2.0], [1.0, 1.0]])
    # squared differences 1, 0, 4, 9 -> mean 14 / 4
    assert mse_loss(pred, target).item() == pytest.approx(3.5)


def test_mse_dimension_mismatch_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"static dimension 300 and hidden size 384"):
        mse_loss(torch.zeros(2, 384), torch.zeros(2, 300))
    with pytest.raises(ValueError, match="differ in shape"):
        mse_loss(torch.zeros(2, 4), torch.zeros(3, 4))


def test_check_mse_dims_names_the_key() -> None:
    check_mse_dims(384, 384, "pretrain.mse.static")
    with pytest.raises(ConfigError, match=r"pretrain\.mse\.static.*300.*384"):
        check_mse_dims(300, 384, "pretrain.mse.static")


def test_mse_gradcheck(gen: torch.Generator) -> None:
    pred = rand(gen, 3, 4, requires_grad=True)
    target = rand(gen, 3, 4)
    assert torch.autograd.gradcheck(lambda p: mse_loss(p, target), (pred,))


# ------------------------------------------------------------------- batch-size rule


def test_min_batch_and_check_batch_name_the_key() -> None:
    assert min_batch(10) == 40
    check_batch(40, 10, "pretrain.objectives.dcca.batch_size")
    with pytest.raises(ConfigError, match=r"pretrain\.objectives\.dcca\.batch_size.*39.*k = 10"):
        check_batch(39, 10, "pretrain.objectives.dcca.batch_size")
    with pytest.raises(ConfigError, match=r"my\.key"):
        check_batch(100, 0, "my.key")


def test_batch_of_k_plus_one_rows_is_trivial(gen: torch.Generator) -> None:
    """Why check_batch exists: k + 1 rows make two unrelated views look perfectly related."""
    k = 4
    out = GCCALoss(k)([rand(gen, k + 1, 9), rand(gen, k + 1, 7)])
    assert out.loss.item() == pytest.approx(-k * SQRT2, abs=1e-8)


# ---------------------------------------------------------------------------------- GCCA


def test_gcca_hand_computed() -> None:
    # View 1 (centred): its top direction is column 2 (variance 8 vs 2), u1 = (0,0,1,-1)/sqrt2.
    x = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]], dtype=F64)
    # View 2: one column, u2 = (1,-1,1,-1)/2. cos theta = u1.u2 = 1/sqrt2.
    y = torch.tensor([[1.0], [-1.0], [1.0], [-1.0]], dtype=F64)
    out = GCCALoss(k=1)([x, y])
    # (up to the original's scaling T = s / sqrt(s^2 + eps), 1 - 1e-9 here)
    assert out.loss.item() == pytest.approx(-math.sqrt(1.0 + 1.0 / SQRT2), abs=1e-8)
    assert out.correlations.tolist() == pytest.approx([math.sqrt(1.0 + 1.0 / SQRT2)], abs=1e-8)
    assert GCCALoss(k=1, eps=1e-20)([x, y]).loss.item() == pytest.approx(
        -math.sqrt(1.0 + 1.0 / SQRT2), abs=1e-14
    )


@pytest.mark.parametrize("seed", range(5))
def test_gcca_two_views_within_analytic_range(seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    k = 3
    loss = GCCALoss(k)([rand(g, 40, 8), rand(g, 40, 5) + 3.0]).loss.item()
    assert -k * SQRT2 - 1e-9 <= loss <= -k + 1e-9


def test_gcca_identical_views_reach_minus_k_sqrt2(gen: torch.Generator) -> None:
    x = rand(gen, 40, 8)
    for k in (1, 3, 8):
        assert GCCALoss(k)([x, x]).loss.item() == pytest.approx(-k * SQRT2, abs=1e-8)
    # three identical views: every top singular value is sqrt(3)
    assert GCCALoss(3)([x, x, x]).loss.item() == pytest.approx(-3 * math.sqrt(3.0), abs=1e-8)


def _orthonormal_centred(gen: torch.Generator, n: int, m: int) -> torch.Tensor:
    """m orthonormal columns of length n, each orthogonal to the all-ones vector."""
    a = rand(gen, n, m + 1)
    a[:, 0] = 1.0
    q, _ = torch.linalg.qr(a)
    return q[:, 1:]


def test_gcca_orthogonal_top_k_subspaces_give_minus_k(gen: torch.Generator) -> None:
    k, n = 3, 40
    q = _orthonormal_centred(gen, n, 2 * k + 1)
    shared_weak = q[:, 2 * k : 2 * k + 1] * 0.01  # shared, but outside both top-k subspaces
    x = torch.cat([q[:, :k] * torch.tensor([5.0, 4.0, 3.0], dtype=F64), shared_weak], dim=1)
    y = torch.cat([q[:, k : 2 * k] * torch.tensor([6.0, 2.0, 1.0], dtype=F64), shared_weak], 1)
    assert GCCALoss(k)([x, y]).loss.item() == pytest.approx(-k, abs=1e-8)


def test_gcca_two_views_equals_principal_angle_closed_form(gen: torch.Generator) -> None:
    k = 4
    x = rand(gen, 60, 9) * torch.linspace(0.5, 3.0, 9, dtype=F64) + 1.0
    y = rand(gen, 60, 7) + x[:, :7] * 0.5
    bases = []
    for v in (x.numpy(), y.numpy()):
        u, _, _ = np.linalg.svd(v - v.mean(axis=0), full_matrices=False)
        bases.append(u[:, :k])
    theta = scipy.linalg.subspace_angles(bases[0], bases[1])
    expected = -np.sum(np.sqrt(1.0 + np.cos(theta)))
    out = GCCALoss(k)([x, y])
    assert out.loss.item() == pytest.approx(expected, abs=1e-8)
    assert np.sort(out.correlations.numpy()) == pytest.approx(
        np.sort(np.sqrt(1.0 + np.cos(theta))), abs=1e-8
    )


def _reference_gcca(views: list[np.ndarray], k: int, eps: float = 1e-8) -> float:
    """DeepGCCA-pytorch's GCCA_loss restated in numpy, centring included."""
    blocks = []
    for h in views:
        m = h.shape[1]
        hbar = h - np.tile(h.mean(axis=1), (m, 1)).reshape(-1, m)
        a, s, _ = np.linalg.svd(hbar, full_matrices=False)
        a, s = a[:, :k], s[:k]
        t2 = s * (1.0 / (s * s + eps)) * s
        t2 = np.where(t2 > eps, t2, eps)
        blocks.append(a @ np.diag(np.sqrt(t2)))
    sv = np.linalg.svd(np.concatenate(blocks, axis=1), compute_uv=False)
    return -float(sv[:k].sum())


def test_gcca_reference_centring_matches_the_original_and_differs_from_columns(
    gen: torch.Generator,
) -> None:
    k = 3
    # not centred, and d (7, 5) not a multiple of N (30): the reference centring scrambles
    x = rand(gen, 30, 7) * 2.0 + torch.arange(7, dtype=F64)
    y = rand(gen, 30, 5) + x[:, :5] - 4.0
    ref = GCCALoss(k, centring="reference")([x, y]).loss.item()
    col = GCCALoss(k, centring="columns")([x, y]).loss.item()
    assert ref == pytest.approx(_reference_gcca([x.numpy(), y.numpy()], k), abs=1e-8)
    assert abs(ref - col) > 1e-3
    # column centring is what CCA means: invariant to a per-feature offset
    assert GCCALoss(k)([x + 100.0, y]).loss.item() == pytest.approx(col, abs=1e-8)


def test_gcca_dtype_device_and_detached_correlations(gen: torch.Generator) -> None:
    x = torch.randn(40, 6, generator=gen, requires_grad=True)  # float32
    y = rand(gen, 40, 5)  # a fixed float64 view
    out = GCCALoss(3)([x, y])
    assert out.loss.dtype == torch.float32 and out.loss.dim() == 0
    assert out.correlations.dtype == F64 and not out.correlations.requires_grad
    assert out.correlations.shape == (3,)
    out.loss.backward()
    assert x.grad is not None and x.grad.dtype == torch.float32


@pytest.mark.parametrize("centring", ["columns", "reference"])
def test_gcca_gradcheck(gen: torch.Generator, centring: str) -> None:
    x = rand(gen, 12, 4, requires_grad=True)
    y = rand(gen, 12, 3, requires_grad=True)
    z = rand(gen, 12, 5, requires_grad=True)
    loss = GCCALoss(2, centring=centring)
    assert torch.autograd.gradcheck(lambda a, b: loss([a, b]).loss, (x, y))
    assert torch.autograd.gradcheck(lambda a, b, c: loss([a, b, c]).loss, (x, y, z))


def test_gcca_gradient_at_repeated_singular_values_matches_finite_differences(
    gen: torch.Generator,
) -> None:
    """A view whose top singular values are equal: an SVD's U derivative divides by their
    difference (NaN); the loss itself is smooth there, and so is ours."""
    k, n = 3, 30
    q = _orthonormal_centred(gen, n, 4)
    x = (q * torch.tensor([3.0, 3.0, 3.0, 1.0], dtype=F64)).requires_grad_()
    y = rand(gen, n, 5)
    loss = GCCALoss(k)
    loss([x, y]).loss.backward()
    assert finite_grads(x)
    direction = rand(gen, n, 4)
    h = 1e-6
    numeric = (
        loss([x.detach() + h * direction, y]).loss - loss([x.detach() - h * direction, y]).loss
    ) / (2 * h)
    assert (x.grad * direction).sum().item() == pytest.approx(numeric.item(), rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("centring", ["columns", "reference"])
def test_gcca_degenerate_batches_give_finite_gradients(gen: torch.Generator, centring: str) -> None:
    loss = GCCALoss(3, centring=centring)
    distinct = rand(gen, 3, 6)
    dup = distinct[torch.arange(40) % 3].clone().requires_grad_()  # rank 2 < k
    other = rand(gen, 40, 5)
    constant = torch.ones(40, 6, dtype=F64, requires_grad=True)  # zero after centring
    same = rand(gen, 40, 6, requires_grad=True)
    for views, leaves in (
        ([dup, other], [dup]),
        ([dup, dup.detach()], [dup]),
        ([constant, other], [constant]),
        ([same, same], [same]),  # every singular value of the stack repeated
    ):
        for leaf in leaves:
            leaf.grad = None
        out = loss(views)
        out.loss.backward()
        assert torch.isfinite(out.loss) and finite_grads(*leaves)


def test_gcca_rejects_bad_views(gen: torch.Generator) -> None:
    with pytest.raises(ValueError, match="two views"):
        GCCALoss(2)([rand(gen, 10, 3)])
    with pytest.raises(ValueError, match="same batch size"):
        GCCALoss(2)([rand(gen, 10, 3), rand(gen, 11, 3)])
    with pytest.raises(ValueError, match="fewer than k"):
        GCCALoss(4)([rand(gen, 20, 3), rand(gen, 20, 5)])
    with pytest.raises(ValueError, match="cannot carry"):
        GCCALoss(4)([rand(gen, 4, 5), rand(gen, 4, 5)])
    with pytest.raises(ValueError, match="centring"):
        GCCALoss(2, centring="rows")


# ---------------------------------------------------------------------------------- DCCA


def test_dcca_hand_computed_one_dimensional_views() -> None:
    h1 = torch.tensor([[1.0], [2.0], [3.0]], dtype=F64)
    h2 = torch.tensor([[1.0], [3.0], [2.0]], dtype=F64)
    # centred (-1,0,1) and (-1,1,0): covariance 1/2, variances 1 -> Pearson 0.5
    assert DCCALoss(1, r1=0.0, r2=0.0)(h1, h2).loss.item() == pytest.approx(-0.5, abs=1e-12)
    # ridge 1: 0.5 / sqrt((1 + 1)(1 + 1))
    assert DCCALoss(1, r1=1.0, r2=1.0)(h1, h2).loss.item() == pytest.approx(-0.25, abs=1e-12)


def _canonical_correlations(h1: np.ndarray, h2: np.ndarray, r1: float, r2: float) -> np.ndarray:
    """Direct float64 CCA: whiten each view by the Cholesky factor of its regularised
    covariance, then the singular values of the whitened cross-covariance."""
    m = h1.shape[0]
    a, b = h1 - h1.mean(axis=0), h2 - h2.mean(axis=0)
    s11 = a.T @ a / (m - 1) + r1 * np.eye(a.shape[1])
    s22 = b.T @ b / (m - 1) + r2 * np.eye(b.shape[1])
    s12 = a.T @ b / (m - 1)
    l1, l2 = np.linalg.cholesky(s11), np.linalg.cholesky(s22)
    t = scipy.linalg.solve_triangular(l1, s12, lower=True)
    t = scipy.linalg.solve_triangular(l2, t.T, lower=True).T
    return np.linalg.svd(t, compute_uv=False)


def test_dcca_matches_direct_canonical_correlations(gen: torch.Generator) -> None:
    h1 = rand(gen, 80, 6) * torch.linspace(0.2, 2.0, 6, dtype=F64) + 2.0
    h2 = rand(gen, 80, 4) + h1[:, :4] @ rand(gen, 4, 4)
    corr = _canonical_correlations(h1.numpy(), h2.numpy(), 1e-3, 1e-2)
    out = DCCALoss(3, r1=1e-3, r2=1e-2)(h1, h2)
    assert out.loss.item() == pytest.approx(-corr[:3].sum(), abs=1e-9)
    assert out.correlations.numpy() == pytest.approx(corr[:3], abs=1e-9)
    assert (out.correlations <= 1.0).all()
    # k=None: T's trace norm (Andrew et al. eq. 10), not the reference's Frobenius norm
    full = DCCALoss(None, r1=1e-3, r2=1e-2)(h1, h2).loss.item()
    assert full == pytest.approx(-corr.sum(), abs=1e-9)
    assert abs(full + math.sqrt(float((corr**2).sum()))) > 1e-2


def test_dcca_dtype_and_result(gen: torch.Generator) -> None:
    h1 = torch.randn(50, 5, generator=gen, requires_grad=True)
    out = DCCALoss(2)(h1, rand(gen, 50, 3))
    assert out.loss.dtype == torch.float32 and out.correlations.dtype == F64
    assert not out.correlations.requires_grad and out.correlations.shape == (2,)


@pytest.mark.parametrize("k", [2, None])
def test_dcca_gradcheck(gen: torch.Generator, k: int | None) -> None:
    h1 = rand(gen, 15, 4, requires_grad=True)
    h2 = rand(gen, 15, 3, requires_grad=True)
    loss = DCCALoss(k, r1=1e-2, r2=1e-2)
    assert torch.autograd.gradcheck(lambda a, b: loss(a, b).loss, (h1, h2))


def test_dcca_degenerate_batches_give_finite_gradients(gen: torch.Generator) -> None:
    distinct = rand(gen, 3, 6)
    dup = distinct[torch.arange(40) % 3].clone().requires_grad_()
    same = rand(gen, 40, 5, requires_grad=True)
    constant = torch.zeros(40, 5, dtype=F64, requires_grad=True)
    for k in (3, None):
        for a, b, leaf in (
            (dup, rand(gen, 40, 5), dup),
            (same, same, same),
            (constant, same, constant),
        ):
            leaf.grad = None
            out = DCCALoss(k)(a, b)
            out.loss.backward()
            assert torch.isfinite(out.loss) and finite_grads(leaf)


def test_dcca_rejects_bad_input(gen: torch.Generator) -> None:
    with pytest.raises(ValueError, match="exceeds the smaller view dimension 3"):
        DCCALoss(4)(rand(gen, 20, 5), rand(gen, 20, 3))
    with pytest.raises(ValueError, match="same batch size"):
        DCCALoss(2)(rand(gen, 20, 5), rand(gen, 21, 3))


# --------------------------------------------------------------------------- ALIGN-MLM


def test_align_mlm_hand_computed() -> None:
    emb = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]])
    pairs = torch.tensor([[0, 2], [0, 3]])
    # cos = 1/sqrt2 and -1: loss = -(1/sqrt2 - 1) / 2
    assert align_mlm_loss(emb, pairs).item() == pytest.approx(-(1 / SQRT2 - 1) / 2, abs=1e-6)


def test_align_mlm_bad_pairs() -> None:
    emb = torch.zeros(4, 2)
    with pytest.raises(ValueError, match="no dictionary pairs"):
        align_mlm_loss(emb, torch.zeros(0, 2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\[P, 2\]"):
        align_mlm_loss(emb, torch.zeros(3, dtype=torch.long))


def test_align_mlm_gradcheck(gen: torch.Generator) -> None:
    emb = rand(gen, 6, 3, requires_grad=True)
    pairs = torch.tensor([[0, 1], [2, 3], [4, 5], [0, 5]])
    assert torch.autograd.gradcheck(lambda e: align_mlm_loss(e, pairs), (emb,))


# ------------------------------------------------------------------ Cao et al. / 002


def test_l2_align_hand_computed_and_gradcheck(gen: torch.Generator) -> None:
    s = torch.tensor([[1.0, 2.0], [0.0, 0.0]])
    t = torch.tensor([[1.0, 0.0], [3.0, 4.0]])
    assert l2_align_loss(s, t).item() == pytest.approx((4.0 + 25.0) / 2)
    a, b = rand(gen, 4, 3, requires_grad=True), rand(gen, 4, 3, requires_grad=True)
    assert torch.autograd.gradcheck(l2_align_loss, (a, b))
    with pytest.raises(ValueError, match="one shape"):
        l2_align_loss(torch.zeros(2, 3), torch.zeros(2, 4))


def test_parameter_drift_hand_computed() -> None:
    a = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    b = torch.nn.Parameter(torch.tensor([[3.0]]))
    ref = {"a": torch.zeros(2), "b": torch.tensor([[1.0]])}
    assert parameter_drift([("a", a), ("b", b)], ref).item() == pytest.approx(9.0)
    assert parameter_drift([("a", a), ("b", b)], ref, squared=False).item() == pytest.approx(3.0)
    with pytest.raises(KeyError, match="'c'"):
        parameter_drift([("c", a)], ref)
    with pytest.raises(ValueError, match="shape"):
        parameter_drift([("a", b)], ref)


@pytest.mark.parametrize("squared", [True, False])
def test_parameter_drift_gradient_at_the_start_is_zero_not_nan(squared: bool) -> None:
    p = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    out = parameter_drift([("p", p)], {"p": p.detach().clone()}, squared=squared)
    out.backward()
    assert out.item() == 0.0 and p.grad is not None and torch.equal(p.grad, torch.zeros(2))


def test_parameter_drift_gradcheck(gen: torch.Generator) -> None:
    a, b = rand(gen, 3, requires_grad=True), rand(gen, 2, 2, requires_grad=True)
    ref = {"a": rand(gen, 3), "b": rand(gen, 2, 2)}
    for squared in (True, False):
        assert torch.autograd.gradcheck(
            lambda x, y, sq=squared: parameter_drift([("a", x), ("b", y)], ref, squared=sq),
            (a, b),
        )


def test_hidden_regulariser_hand_computed() -> None:
    hidden = torch.tensor([[[1.0, 0.0], [2.0, 2.0]]], requires_grad=True)
    reference = torch.zeros(1, 2, 2, requires_grad=True)
    # squared distances 1 and 8: the mean over the tokens the mask selects
    assert hidden_regulariser(hidden, reference, torch.tensor([[1, 0]])).item() == 1.0
    out = hidden_regulariser(hidden, reference, torch.tensor([[True, True]]))
    assert out.item() == pytest.approx(4.5)
    out.backward()
    assert reference.grad is None  # the pretrained side is fixed
    assert torch.allclose(hidden.grad, torch.tensor([[[1.0, 0.0], [2.0, 2.0]]]))
    with pytest.raises(ValueError, match="no token"):
        hidden_regulariser(hidden, reference, torch.zeros(1, 2))


# ----------------------------------------------------------------------- contrastive


def _restated(zs: list[list[float]], zt: list[list[float]], temp: float, strong: bool) -> float:
    """002 eq. 7 / eq. 8 with plain loops (negated), on projected vectors."""

    def cos(a: list[float], b: list[float]) -> float:
        dot = sum(x * y for x, y in zip(a, b, strict=True))
        return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))

    b = len(zs)
    total = 0.0
    if not strong:
        for i in range(b):
            num = math.exp(cos(zs[i], zt[i]) / temp)
            total += math.log(num / sum(math.exp(cos(zs[i], zt[j]) / temp) for j in range(b)))
            total += math.log(num / sum(math.exp(cos(zs[j], zt[i]) / temp) for j in range(b)))
    else:
        hs = zs + zt
        for i, h in enumerate(hs):
            aligned = hs[(i + b) % (2 * b)]
            den = sum(math.exp(cos(h, o) / temp) for j, o in enumerate(hs) if j != i)
            total += math.log(math.exp(cos(h, aligned) / temp) / den)
    return -total / (2 * b)


@pytest.mark.parametrize("strong", [False, True])
def test_contrastive_identity_projection_hand_restated(strong: bool) -> None:
    module = ContrastiveAlignment(2, projection_dim=2, temperature=0.5, strong=strong)
    with torch.no_grad():
        for layer in (module.projection[0], module.projection[2]):
            layer.weight.copy_(torch.eye(2))
            layer.bias.zero_()
    s = [[1.0, 0.0], [0.0, 1.0], [2.0, 1.0]]  # non-negative: ReLU keeps them
    t = [[1.0, 0.2], [1.0, 1.0], [0.5, 3.0]]
    out = module(torch.tensor(s), torch.tensor(t))
    assert out.item() == pytest.approx(_restated(s, t, 0.5, strong), abs=1e-5)


@pytest.mark.parametrize("strong", [False, True])
def test_contrastive_learned_projection_restated_and_gradcheck(
    gen: torch.Generator, strong: bool
) -> None:
    module = ContrastiveAlignment(
        5, projection_dim=3, strong=strong, generator=torch.Generator().manual_seed(0)
    ).double()
    s, t = rand(gen, 4, 5, requires_grad=True), rand(gen, 4, 5, requires_grad=True)
    with torch.no_grad():
        zs, zt = module.projection(s).tolist(), module.projection(t).tolist()
    assert module(s, t).item() == pytest.approx(_restated(zs, zt, 0.1, strong), abs=1e-9)
    assert torch.autograd.gradcheck(module, (s, t))


def test_contrastive_shapes_seeded_init_and_small_batch() -> None:
    a = ContrastiveAlignment(8, generator=torch.Generator().manual_seed(3))
    b = ContrastiveAlignment(8, generator=torch.Generator().manual_seed(3))
    assert [tuple(p.shape) for p in a.parameters()] == [(8, 8), (8,), (128, 8), (128,)]
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    with pytest.raises(ValueError, match="no negatives"):
        a(torch.zeros(1, 8), torch.zeros(1, 8))
    with pytest.raises(ValueError, match="one shape"):
        a(torch.zeros(2, 8), torch.zeros(3, 8))
