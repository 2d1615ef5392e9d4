"""The alignment losses of continued pre-training, as pure tensor functions and small modules.

Each loss is the published definition restated, with the equation it comes from:

* :func:`mse_loss` - 000 section 4.1 (MSE between a word's contextual and static vectors);
* :class:`GCCALoss` - the correlation loss the paper actually uses (000 section 4.1 cites
  "Arjmand 2020", arminarj/DeepGCCA-pytorch ``GCCA_loss``): generalised CCA over the top-k
  left singular vectors of each centred view;
* :class:`DCCALoss` - Andrew et al. (2013) deep CCA with ridge-regularised covariances
  (Michaelvll/DeepCCA ``cca_loss``), offered next to it under its own name;
* :func:`align_mlm_loss` - 001 section 3, :math:`L_{ALIGN}`;
* :func:`l2_align_loss`, :func:`parameter_drift`, :func:`hidden_regulariser` - Cao et al.
  (2020) as restated in 002 eq. 3-5 and 003 eq. 1;
* :class:`ContrastiveAlignment` - 002 eq. 7 (weak) and eq. 8 (strong).

The correlation losses run in float64 with autocast disabled (so mixed precision never
reaches them) and have a backward that stays finite on degenerate batches: the only
eigenvector derivative they need is that of a spectral matrix function, taken with the
Daleckii-Krein formula (:func:`_spectral`), which is exact for distinct eigenvalues and
needs no division by a zero eigen-gap inside a block of equal ones; singular values are
differentiated through ``torch.linalg.svdvals``, whose backward never divides by a gap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from xlalign.core.errors import ConfigError

__all__ = [
    "MIN_BATCH_FACTOR",
    "ContrastiveAlignment",
    "CorrelationResult",
    "DCCALoss",
    "DCCAResult",
    "GCCALoss",
    "GCCAResult",
    "align_mlm_loss",
    "check_batch",
    "check_mse_dims",
    "hidden_regulariser",
    "l2_align_loss",
    "min_batch",
    "mse_loss",
    "parameter_drift",
]

# --------------------------------------------------------------------------------------
# MSE (000 section 4.1)


def check_mse_dims(static_dim: int, hidden_size: int, key: str) -> None:
    """Raise :class:`ConfigError` naming ``key`` unless ``static_dim == hidden_size``.

    000 section 4.1: the MSE objective compares static and contextual vectors element by
    element, so "this works only if the static vector dimension matches the model's hidden
    size" (300-d fastText needs the correlation loss instead). Called before training.
    """
    if static_dim != hidden_size:
        raise ConfigError(
            f"{key}: the MSE objective compares vectors element-wise, so the static vectors' "
            f"dimension must equal the encoder's hidden size; got static dimension "
            f"{static_dim} and hidden size {hidden_size} (use the correlation objective, "
            "which takes views of any dimension)"
        )


def mse_loss(pred: Tensor, target: Tensor) -> Tensor:
    """Mean squared error over all elements (000 section 4.1, "MSE").

    ``pred``: the contextual vectors ``[..., hidden]``; ``target``: the static vectors of
    the same shape (no gradient is wanted through them: pass them detached). A last
    dimension that differs is the configuration error of :func:`check_mse_dims`.
    """
    if pred.shape[-1:] != target.shape[-1:]:
        raise ConfigError(
            "MSE objective: the static dimension must equal the hidden size; got static "
            f"dimension {target.shape[-1] if target.dim() else 0} and hidden size "
            f"{pred.shape[-1] if pred.dim() else 0}"
        )
    if pred.shape != target.shape:
        raise ValueError(
            f"mse_loss: predictions {tuple(pred.shape)} and targets {tuple(target.shape)} "
            "differ in shape"
        )
    return F.mse_loss(pred, target.to(pred.dtype))


# --------------------------------------------------------------------------------------
# Batch-size rule of the correlation losses

#: A correlation batch must hold at least this many rows per component (see min_batch).
MIN_BATCH_FACTOR = 4


def min_batch(k: int) -> int:
    """The smallest batch the correlation losses accept for ``k`` components: ``4 k``.

    Why: centring leaves a batch of N rows spanning at most N - 1 dimensions, and both
    views' top-k subspaces live in that space. Two k-dimensional subspaces of an
    (N-1)-dimensional space share at least 2k - (N-1) dimensions, whose correlations are 1
    whatever the encoder does; at N = k + 1 both subspaces are the whole space and the GCCA
    loss is -k*sqrt(2) with no learning signal at all. Above 2k + 1 the forced overlap is
    gone, but unrelated views still correlate by chance: random k-dimensional subspaces of
    an n-dimensional space have mean squared canonical correlation k / n. At N >= 4k that
    chance level is at most about 1/4, which leaves room for a real signal (the paper's
    protocol, 1,024 pairs for k = 10, is far above it). For DCCA the same rule applies to
    its k; its covariance estimates also want the batch well above each view's dimension.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1; got {k}")
    return MIN_BATCH_FACTOR * k


def check_batch(batch_size: int, k: int, key: str) -> None:
    """Raise :class:`ConfigError` naming ``key`` when ``batch_size < min_batch(k)``."""
    if k < 1:
        raise ConfigError(f"{key}: the number of correlation components k must be >= 1; got {k}")
    need = min_batch(k)
    if batch_size < need:
        raise ConfigError(
            f"{key}: a correlation batch of {batch_size} rows is too small for k = {k} "
            f"components; it must hold at least {need} rows ({MIN_BATCH_FACTOR} x k): with "
            f"fewer the top-{k} subspaces overlap by construction and the loss carries little "
            "or no signal"
        )


# --------------------------------------------------------------------------------------
# Spectral matrix functions with a safe backward

_SpectralFn = Callable[[Tensor], tuple[Tensor, Tensor]]

#: Eigenvalues closer than this fraction of the largest one count as equal in the backward.
_TIE_TOL = 1e-8


class _Spectral(torch.autograd.Function):
    """``F = V diag(h(lambda)) V^T`` for a symmetric ``C = V diag(lambda) V^T``, with ``h``
    set to 0 beyond the ``keep`` largest eigenvalues; also returns those eigenvectors
    (without gradient).

    Backward (Daleckii-Krein): ``dC = V (Gamma o (V^T sym(dF) V)) V^T`` with ``Gamma_ij``
    the divided difference ``(h_i - h_j) / (lambda_i - lambda_j)``, and for (numerically)
    equal eigenvalues on the same side of the cut the derivative ``(h'_i + h'_j) / 2``: the
    limit of the divided difference, so a block of repeated eigenvalues (duplicate rows,
    rank-deficient batches) costs nothing. A tie across the cut (the k-th and (k+1)-th
    eigenvalue equal) leaves the top-k subspace undefined; its term is set to 0, i.e. the
    subspace is held fixed, rather than dividing by zero.
    """

    @staticmethod
    def forward(ctx: Any, c: Tensor, fn: _SpectralFn, keep: int) -> tuple[Tensor, Tensor]:
        lam, vec = torch.linalg.eigh(c)
        lam, vec = lam.flip(-1), vec.flip(-1)  # descending
        h, dh = fn(lam)
        kept = torch.arange(lam.shape[0], device=lam.device) < keep
        h = torch.where(kept, h, torch.zeros_like(h))
        dh = torch.where(kept, dh, torch.zeros_like(dh))
        out = (vec * h) @ vec.T
        top = vec[:, :keep].clone()
        ctx.save_for_backward(lam, vec, h, dh, kept)
        ctx.mark_non_differentiable(top)
        return out, top

    @staticmethod
    def backward(ctx: Any, g_out: Tensor, _g_top: Tensor) -> tuple[Tensor, None, None]:
        lam, vec, h, dh, kept = ctx.saved_tensors
        inner = vec.T @ (0.5 * (g_out + g_out.T)) @ vec
        diff = lam[:, None] - lam[None, :]
        scale = lam.abs().max().clamp_min(torch.finfo(lam.dtype).tiny)
        close = diff.abs() <= _TIE_TOL * scale
        same_side = kept[:, None] == kept[None, :]
        divided = (h[:, None] - h[None, :]) / torch.where(close, torch.ones_like(diff), diff)
        tied = torch.where(same_side, 0.5 * (dh[:, None] + dh[None, :]), torch.zeros_like(diff))
        gamma = torch.where(close, tied, divided)
        return vec @ (gamma * inner) @ vec.T, None, None


def _spectral(c: Tensor, fn: _SpectralFn, keep: int) -> tuple[Tensor, Tensor]:
    result: tuple[Tensor, Tensor] = _Spectral.apply(c, fn, keep)
    return result


def _no_autocast(device: torch.device) -> torch.autocast:
    return torch.autocast(device_type=device.type, enabled=False)


# --------------------------------------------------------------------------------------
# Generalised CCA (the loss the paper cites)


class CorrelationResult(NamedTuple):
    """A correlation loss and what to log with it."""

    #: minus the sum of the top-k singular values; scalar, the first view's dtype and device
    loss: Tensor
    #: the top-k singular values (descending), float64, detached
    correlations: Tensor


GCCAResult = CorrelationResult
DCCAResult = CorrelationResult

_CENTRINGS = ("columns", "reference")


def _centre(x: Tensor, centring: str) -> Tensor:
    if centring == "columns":
        return x - x.mean(dim=0, keepdim=True)
    # DeepGCCA-pytorch: Hbar = H - H.mean(dim=1).repeat(m, 1).view(-1, m)
    n, m = x.shape
    tiled = x.mean(dim=1).repeat(m)  # the N row means, m times over: length N*m
    return x - tiled.view(n, m)


class GCCALoss(nn.Module):
    """Generalised CCA loss over two or more views (DeepGCCA-pytorch ``GCCA_loss``).

    For each view ``H_v`` (``[N, d_v]``, one row per example, any d_v): centre it, take
    its thin SVD ``H_v = U S V^T``, keep the top-k left singular vectors ``U_k`` (scaled,
    as the original does, by ``T = diag(s / sqrt(s^2 + eps))``, which is 1 up to
    ``eps / s^2`` and sends directions of zero variance to 0 instead of to an arbitrary
    unit vector), stack ``M = [U_1 T_1 | U_2 T_2 | ...]`` (``[N, V k]``) and return minus the
    sum of the top-k singular values of M. For two views those are
    ``sqrt(1 + cos theta_i)`` over the principal angles between the two top-k subspaces,
    so the loss lies in ``[-k sqrt(2), -k]``: ``-k sqrt(2)`` for identical subspaces, ``-k``
    for orthogonal ones; the canonical correlations are ``sigma_i^2 - 1``.

    ``U_k T`` is computed as ``Hbar V_k (S_k^2 + eps)^(-1/2)`` from the eigendecomposition of
    the ``d_v x d_v`` Gram matrix ``Hbar^T Hbar`` (the same quantity; its backward is the
    Daleckii-Krein one of :class:`_Spectral`, finite when singular values repeat, whereas
    an SVD's U derivative divides by their differences). Everything runs in float64; the
    loss is cast back to the first view's dtype, and gradients flow to the inputs in their
    own dtypes. A fixed view (the static vectors) is passed detached.

    ``centring``:

    * ``"columns"`` (default): subtract each feature's mean over the batch, as CCA needs;
    * ``"reference"``: the original's centring, reproduced exactly: with ``r`` the vector of
      the N per-row means, it subtracts from ``H[i, c]`` the value ``r[(i*d + c) mod N]``
      (``H.mean(dim=1).repeat(d, 1).view(-1, d)``: the row means tiled d times and reshaped
      row-major to ``[N, d]``), which is neither a row nor a column centring unless d is a
      multiple of N. (The original also floors ``T^2`` at eps, which differs from this one
      only for singular values below 1e-8, where its U column is arbitrary anyway.)

    The original's ``r = 1e-4`` is unused there and has no counterpart here.
    """

    def __init__(self, k: int = 10, *, centring: str = "columns", eps: float = 1e-8) -> None:
        super().__init__()
        if k < 1:
            raise ValueError(f"GCCALoss: k must be at least 1; got {k}")
        if centring not in _CENTRINGS:
            raise ValueError(f"GCCALoss: centring must be one of {_CENTRINGS}; got {centring!r}")
        if not eps > 0:
            raise ValueError(f"GCCALoss: eps must be positive; got {eps}")
        self.k = k
        self.centring = centring
        self.eps = eps

    def extra_repr(self) -> str:
        return f"k={self.k}, centring={self.centring!r}, eps={self.eps}"

    def _whiten_inv_sqrt(self, lam: Tensor) -> tuple[Tensor, Tensor]:
        lam = lam.clamp_min(0.0)
        h = (lam + self.eps).rsqrt()
        dh = torch.where(lam > 0, -0.5 * h**3, torch.zeros_like(h))
        return h, dh

    def forward(self, views: Sequence[Tensor]) -> CorrelationResult:
        if len(views) < 2:
            raise ValueError(f"GCCALoss needs at least two views; got {len(views)}")
        n = views[0].shape[0] if views[0].dim() == 2 else -1
        for i, v in enumerate(views):
            if v.dim() != 2:
                raise ValueError(
                    f"GCCALoss: view {i} must be a [batch, features] matrix; got shape "
                    f"{tuple(v.shape)}"
                )
            if v.shape[0] != n:
                raise ValueError(
                    f"GCCALoss: all views need the same batch size; view 0 has {n} rows, "
                    f"view {i} has {v.shape[0]}"
                )
            if v.shape[1] < self.k:
                raise ValueError(
                    f"GCCALoss: view {i} has {v.shape[1]} features, fewer than k = {self.k}"
                )
        if n <= self.k:
            raise ValueError(
                f"GCCALoss: a batch of {n} rows cannot carry k = {self.k} components "
                f"(need at least {min_batch(self.k)}; see check_batch)"
            )
        first = views[0]
        with _no_autocast(first.device):
            blocks = []
            for v in views:
                x = _centre(v.to(torch.float64), self.centring)
                h, top = _spectral(x.T @ x, self._whiten_inv_sqrt, self.k)
                blocks.append(x @ (h @ top))  # = U_k T, [N, k]
            sv = torch.linalg.svdvals(torch.cat(blocks, dim=1))[: self.k]
            loss = -sv.sum()
        return CorrelationResult(loss.to(first.dtype), sv.detach())


# --------------------------------------------------------------------------------------
# Andrew et al. (2013) deep CCA


class DCCALoss(nn.Module):
    """Deep CCA loss of Andrew et al. (2013), as Michaelvll/DeepCCA ``cca_loss``.

    With ``h1`` ``[m, o1]`` and ``h2`` ``[m, o2]`` (one row per example) centred per column:
    ``S11 = H1bar^T H1bar / (m-1) + r1 I``, ``S22`` likewise with ``r2``,
    ``S12 = H1bar^T H2bar / (m-1)`` and ``T = S11^(-1/2) S12 S22^(-1/2)``; the loss is minus
    the sum of the top-k singular values of T (the canonical correlations), or of all of
    them (T's trace norm, Andrew et al. eq. 10) when ``k`` is None. The inverse square roots
    come from ``torch.linalg.eigh`` with every eigenvalue floored at ``eps``.

    Differences from the reference, all fixes: ``torch.symeig`` (removed from torch) is
    ``torch.linalg.eigh``; with all singular values the reference returns
    ``sqrt(trace(T^T T))``, the Frobenius norm, not the trace norm (DeepCCA issue #8), here
    it is the sum of singular values; the top-k path takes ``sqrt`` of eigenvalues of
    ``T^T T``, which are negative or zero up to rounding and give NaN (issue #4): here the
    singular values come from ``svdvals`` directly; eigenvalues at or below eps are floored
    rather than dropped (equal with the ridge terms, whose eigenvalues are >= r > eps).
    Computed in float64; no gradient is taken through a repeated eigenvalue's eigenvectors
    (see :class:`_Spectral`).
    """

    def __init__(
        self, k: int | None = 10, *, r1: float = 1e-3, r2: float = 1e-3, eps: float = 1e-9
    ) -> None:
        super().__init__()
        if k is not None and k < 1:
            raise ValueError(f"DCCALoss: k must be at least 1 or None; got {k}")
        if r1 < 0 or r2 < 0:
            raise ValueError(f"DCCALoss: r1 and r2 must be >= 0; got {r1}, {r2}")
        if not eps > 0:
            raise ValueError(f"DCCALoss: eps must be positive; got {eps}")
        self.k = k
        self.r1 = r1
        self.r2 = r2
        self.eps = eps

    def extra_repr(self) -> str:
        return f"k={self.k}, r1={self.r1}, r2={self.r2}, eps={self.eps}"

    def _inv_sqrt(self, lam: Tensor) -> tuple[Tensor, Tensor]:
        floored = lam.clamp_min(self.eps)
        h = floored.rsqrt()
        dh = torch.where(lam > self.eps, -0.5 * h**3, torch.zeros_like(h))
        return h, dh

    def forward(self, h1: Tensor, h2: Tensor) -> CorrelationResult:
        for i, v in enumerate((h1, h2), start=1):
            if v.dim() != 2:
                raise ValueError(
                    f"DCCALoss: view {i} must be a [batch, features] matrix; got shape "
                    f"{tuple(v.shape)}"
                )
        m = h1.shape[0]
        if h2.shape[0] != m:
            raise ValueError(
                f"DCCALoss: both views need the same batch size; got {m} and {h2.shape[0]}"
            )
        if m < 2:
            raise ValueError(f"DCCALoss: covariances need at least 2 rows; got {m}")
        o1, o2 = h1.shape[1], h2.shape[1]
        if self.k is not None and self.k > min(o1, o2):
            raise ValueError(
                f"DCCALoss: k = {self.k} exceeds the smaller view dimension {min(o1, o2)}"
            )
        with _no_autocast(h1.device):
            x1 = h1.to(torch.float64)
            x2 = h2.to(torch.float64)
            x1 = x1 - x1.mean(dim=0, keepdim=True)
            x2 = x2 - x2.mean(dim=0, keepdim=True)
            s11 = x1.T @ x1 / (m - 1) + self.r1 * torch.eye(o1, dtype=x1.dtype, device=x1.device)
            s22 = x2.T @ x2 / (m - 1) + self.r2 * torch.eye(o2, dtype=x2.dtype, device=x2.device)
            s12 = x1.T @ x2 / (m - 1)
            w1, _ = _spectral(s11, self._inv_sqrt, o1)
            w2, _ = _spectral(s22, self._inv_sqrt, o2)
            sv = torch.linalg.svdvals(w1 @ s12 @ w2)
            if self.k is not None:
                sv = sv[: self.k]
            loss = -sv.sum()
        return CorrelationResult(loss.to(h1.dtype), sv.detach())


# --------------------------------------------------------------------------------------
# ALIGN-MLM (001 section 3)


def align_mlm_loss(embeddings: Tensor, pairs: Tensor) -> Tensor:
    """``L_ALIGN`` of 001 section 3: minus the mean cosine similarity between the input
    embeddings of dictionary token pairs, ``-1/|B| sum_i cos(E[B_i1], E[B_i2])``.

    ``embeddings``: the input embedding matrix ``[vocab, hidden]``; ``pairs``: token ids
    ``[P, 2]``. The weight alpha (001: 10) is applied by the caller.
    """
    if pairs.dim() != 2 or pairs.shape[1] != 2:
        raise ValueError(
            f"align_mlm_loss: pairs must be [P, 2] token ids; got {tuple(pairs.shape)}"
        )
    if pairs.shape[0] == 0:
        raise ValueError("align_mlm_loss: no dictionary pairs (an empty dictionary aligns nothing)")
    if pairs.dtype.is_floating_point or pairs.dtype == torch.bool:
        raise ValueError(f"align_mlm_loss: pairs must be integer token ids; got {pairs.dtype}")
    pairs = pairs.to(embeddings.device)
    cos = F.cosine_similarity(embeddings[pairs[:, 0]], embeddings[pairs[:, 1]], dim=-1)
    return -cos.mean()


# --------------------------------------------------------------------------------------
# Cao et al. (2020): L2 alignment and its regularisers (002 eq. 3-5, 003 eq. 1)


def l2_align_loss(s: Tensor, t: Tensor) -> Tensor:
    """002 eq. 3: ``mean_i ||s_i - t_i||_2^2`` over aligned pairs (rows of ``[B, H]``)."""
    if s.shape != t.shape or s.dim() != 2:
        raise ValueError(
            f"l2_align_loss: s and t must be [pairs, hidden] of one shape; got "
            f"{tuple(s.shape)} and {tuple(t.shape)}"
        )
    if s.shape[0] == 0:
        raise ValueError("l2_align_loss: no aligned pairs")
    return (s - t.to(s.dtype)).pow(2).sum(dim=-1).mean()


def parameter_drift(
    named_params: Iterable[tuple[str, Tensor]],
    reference: Mapping[str, Tensor],
    *,
    squared: bool = True,
) -> Tensor:
    """002 eq. 5: ``||theta - theta_pretrained||_2^2``, summed over the given parameters.

    ``reference`` maps each parameter name to its pretrained value (kept on the
    parameters' device, without gradient). ``squared=False`` returns the square root of
    that sum, as crosslingual-nlp's ``l2_param_reg`` does (the paper's equation is
    squared); its gradient at ``theta = theta_pretrained`` is taken as 0, not NaN.
    """
    norms: list[Tensor] = []
    for name, p in named_params:
        if name not in reference:
            raise KeyError(f"parameter_drift: no pretrained value for parameter {name!r}")
        ref = reference[name]
        if ref.shape != p.shape:
            raise ValueError(
                f"parameter_drift: parameter {name!r} has shape {tuple(p.shape)}, its "
                f"pretrained value {tuple(ref.shape)}"
            )
        diff = p - ref.detach().to(device=p.device, dtype=p.dtype)
        norms.append(diff.pow(2).sum() if squared else torch.linalg.vector_norm(diff))
    if not norms:
        raise ValueError("parameter_drift: no parameters given")
    dtype = torch.float32  # at least: half-precision sums of squares overflow
    for n in norms:
        dtype = torch.promote_types(dtype, n.dtype)
    stacked = torch.stack([n.to(dtype) for n in norms])
    return stacked.sum() if squared else torch.linalg.vector_norm(stacked)


def hidden_regulariser(hidden: Tensor, reference: Tensor, mask: Tensor) -> Tensor:
    """002 eq. 4 / 003 eq. 1 (second term): keep the source sentence's hidden states close
    to those of the pretrained encoder, ``||S_bar - S_bar_pretrained||^2``.

    ``hidden``, ``reference``: ``[batch, length, hidden]`` states of the source (English)
    sentences under the model being trained and under the frozen original (no gradient is
    taken through ``reference``); ``mask``: ``[batch, length]``, true for the tokens that
    count (all of the sentence, aligned or not - 002: "all hidden states of the source
    sentence including unaligned words"; padding excluded).

    Returns the mean over those tokens of the squared L2 distance. 003 eq. 1 writes both
    terms as sums; a mean per token, like the mean per pair of :func:`l2_align_loss`, keeps
    the weight independent of batch size and sentence length, and is what Cao et al.'s
    setting is reimplemented as in crosslingual-nlp (``l2_src_reg``: squared norm over the
    masked states divided by their count).
    """
    if hidden.shape != reference.shape or hidden.dim() != 3:
        raise ValueError(
            f"hidden_regulariser: hidden and reference must be [batch, length, hidden] of one "
            f"shape; got {tuple(hidden.shape)} and {tuple(reference.shape)}"
        )
    if mask.shape != hidden.shape[:2]:
        raise ValueError(
            f"hidden_regulariser: mask must be [batch, length] = {tuple(hidden.shape[:2])}; got "
            f"{tuple(mask.shape)}"
        )
    weights = mask.to(device=hidden.device, dtype=hidden.dtype)
    count = weights.sum()
    if count.item() <= 0:
        raise ValueError("hidden_regulariser: the mask selects no token")
    sq = (hidden - reference.detach().to(hidden.dtype)).pow(2).sum(dim=-1)
    return (sq * weights).sum() / count


# --------------------------------------------------------------------------------------
# Contrastive alignment (002 section 2.1)


def _init_linear(layer: nn.Linear, generator: torch.Generator) -> None:
    # nn.Linear's own default (kaiming_uniform with a = sqrt(5)) is U(-1/sqrt(fan_in), ..)
    bound = 1.0 / math.sqrt(layer.in_features)
    with torch.no_grad():
        layer.weight.uniform_(-bound, bound, generator=generator)
        if layer.bias is not None:
            layer.bias.uniform_(-bound, bound, generator=generator)


class ContrastiveAlignment(nn.Module):
    """Weak (002 eq. 7) and strong (002 eq. 8) contrastive alignment, as losses.

    ``sim(a, b) = cos(f(a), f(b))`` with the learned feature extractor
    ``f = Linear(H, H) -> ReLU -> Linear(H, projection_dim)`` (002: "768-768-128"),
    temperature T (002: 0.1). For B aligned pairs ``(s_i, t_i)``:

    * weak: ``-1/(2B) sum_i [log softmax_j sim(s_i, t_j)/T at j=i
      + log softmax_j sim(s_j, t_i)/T at j=i]`` - negatives from the other language only;
    * strong: over ``H = {s_1..s_B, t_1..t_B}``,
      ``-1/(2B) sum_h log exp(sim(h, aligned(h))/T) / sum_{h' != h} exp(sim(h, h')/T)`` -
      negatives from both languages, h itself excluded from its denominator.

    These are the negatives of the paper's log-likelihood forms, to be minimised. f is
    trained with the encoder and discarded afterwards. ``generator`` draws f's initial
    weights (same distribution as ``nn.Linear``'s default); without it torch's global
    generator is used.
    """

    def __init__(
        self,
        hidden_size: int,
        *,
        projection_dim: int = 128,
        temperature: float = 0.1,
        strong: bool = False,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        if hidden_size < 1 or projection_dim < 1:
            raise ValueError(
                f"ContrastiveAlignment: sizes must be positive; got hidden {hidden_size}, "
                f"projection {projection_dim}"
            )
        if not temperature > 0:
            raise ValueError(f"ContrastiveAlignment: temperature must be > 0; got {temperature}")
        self.hidden_size = hidden_size
        self.projection_dim = projection_dim
        self.temperature = temperature
        self.strong = strong
        self.projection = nn.Sequential(
            nn.Linear(hidden_size, hidden_size), nn.ReLU(), nn.Linear(hidden_size, projection_dim)
        )
        if generator is not None:
            for layer in self.projection:
                if isinstance(layer, nn.Linear):
                    _init_linear(layer, generator)

    def extra_repr(self) -> str:
        return f"temperature={self.temperature}, strong={self.strong}"

    def forward(self, s: Tensor, t: Tensor) -> Tensor:
        if s.dim() != 2 or s.shape != t.shape:
            raise ValueError(
                f"ContrastiveAlignment: s and t must be [pairs, hidden] of one shape; got "
                f"{tuple(s.shape)} and {tuple(t.shape)}"
            )
        b = s.shape[0]
        if b < 2:
            raise ValueError(
                f"ContrastiveAlignment: a batch of {b} pair(s) has no negatives; need at least 2"
            )
        zs = F.normalize(self.projection(s), dim=-1)
        zt = F.normalize(self.projection(t), dim=-1)
        if not self.strong:
            logits = zs @ zt.T / self.temperature
            goal = torch.arange(b, device=logits.device)
            return 0.5 * (F.cross_entropy(logits, goal) + F.cross_entropy(logits.T, goal))
        z = torch.cat([zs, zt], dim=0)
        logits = z @ z.T / self.temperature
        eye = torch.eye(2 * b, dtype=torch.bool, device=logits.device)
        logits = logits.masked_fill(eye, float("-inf"))
        idx = torch.arange(b, device=logits.device)
        goal = torch.cat([idx + b, idx])
        return F.cross_entropy(logits, goal)
