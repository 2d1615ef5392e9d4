"""Objectives: each binds its data (:mod:`.text`, :mod:`.pairs`) to its loss
(:mod:`.losses`, :mod:`.linear_maps`) behind the :class:`~.base.Objective` interface, so
that the training loop (:mod:`.trainer`) and continual learning during fine-tuning
(:mod:`xlalign.evaluation.tasks.finetune`) combine any of them with weights from config.

=============  ==========================================================================
name           what it computes (paper)
=============  ==========================================================================
mlm            masked language modelling on multilingual text (000's "+MLM" row)
dict_mlm       MLM whose masked tokens are code-switched to dictionary translations (001)
tlm            MLM over concatenated parallel sentences (XLM's TLM; 001's XLM baseline)
mse            MSE between a word's mean-pooled subword states (the word encoded alone)
               and its static vector (000 section 4.1)
gcca           the generalised-CCA loss of the implementation 000 cites (Arjmand 2020):
               the static side a fixed view, of any dimension
dcca           Andrew et al. (2013)'s deep CCA loss (ridge-regularised covariances)
align_mlm      minus the mean cosine of dictionary token pairs' input embeddings (001)
l2_align       L2 between contextual vectors of aligned words + parameter drift (002 eq.
               3-6; Cao et al. 2020)
contrastive    weak or strong contrastive alignment with a projection (002 eq. 7-8) +
               parameter drift
linear_map     per-layer linear maps T W ~ S with the orthogonality update, encoder
               frozen (002 eq. 1-2)
=============  ==========================================================================

The layer feeding an alignment loss is ``layer`` (a Hugging Face ``hidden_states``
index: 0 = embeddings, ``num_hidden_layers`` = the last layer).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from xlalign.core.errors import ConfigError
from xlalign.pretrain.base import Objective, encoder_of

log = logging.getLogger(__name__)

#: Every objective name, in the order the losses are computed and logged.
OBJECTIVES = (
    "mlm",
    "dict_mlm",
    "tlm",
    "mse",
    "gcca",
    "dcca",
    "align_mlm",
    "l2_align",
    "contrastive",
    "linear_map",
)
#: Objectives whose data is text to mask (their losses are MLM losses).
TEXT_OBJECTIVES = ("mlm", "dict_mlm", "tlm")
#: Objectives reading static word vectors.
STATIC_OBJECTIVES = ("mse", "gcca", "dcca")
#: Objectives reading word-aligned bitext.
BITEXT_OBJECTIVES = ("l2_align", "contrastive", "linear_map")


def _torch_generator(rng: np.random.Generator) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(int(rng.integers(0, 2**62)))
    return g


def _to(batch: Any, device: torch.device) -> Any:
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, dict):
        return {k: _to(v, device) for k, v in batch.items()}
    return batch


def _device(model: Any) -> torch.device:
    return next(model.parameters()).device


def _layer_states(model: Any, inputs: Mapping[str, torch.Tensor], layer: int) -> torch.Tensor:
    """``hidden_states[layer]`` of ``model``'s encoder; only layers 1..``layer`` run where
    the architecture allows (:func:`~xlalign.encoders.contextual.running_layers`)."""
    from xlalign.encoders.contextual import running_layers

    enc = encoder_of(model)
    kwargs = {k: inputs[k] for k in ("input_ids", "inputs_embeds", "attention_mask") if k in inputs}
    with running_layers(enc, layer) as shortened:
        if shortened:
            return enc(**kwargs).last_hidden_state
    return enc(**kwargs, output_hidden_states=True).hidden_states[layer]


#: A batch of words encoded alone runs as this many forward passes over its rows sorted by
#: length, each padded to its own longest word: on the embedded encoder's static spaces
#: this cuts the padded tokens of a 1,024-word batch by a third (7,782 -> 5,069; 4,144 real).
LENGTH_CHUNKS = 4


def _pooled_words(model: Any, batch: Any, layer: int, device: torch.device) -> torch.Tensor:
    """Mean-pooled layer-``layer`` states of a :class:`~.pairs.StaticBatch`'s words (each
    encoded alone), row ``b`` for word ``b``; computed in :data:`LENGTH_CHUNKS` length-
    sorted chunks with less padding (the same vectors up to float rounding)."""
    from xlalign.pretrain.pairs import mean_pool

    # One lookup of the whole batch: on the CPU, each lookup's backward fills a dense
    # gradient of the whole embedding table (250k x 384 for e5: ~0.15 s a lookup).
    embedded = encoder_of(model).get_input_embeddings()(batch.input_ids.to(device))
    lengths = batch.attention_mask.sum(1)
    order = torch.argsort(lengths, stable=True)
    parts = []
    for rows in order.tensor_split(min(LENGTH_CHUNKS, len(order))):
        width = int(lengths[rows].max())
        inputs = {
            "inputs_embeds": embedded[rows.to(device), :width],
            "attention_mask": batch.attention_mask[rows, :width].to(device),
        }
        states = _layer_states(model, inputs, layer)
        parts.append(mean_pool(states, batch.word_mask[rows, :width].to(device, states.dtype)))
    back = torch.empty_like(order)
    back[order] = torch.arange(len(order))
    return torch.cat(parts)[back.to(device)]


class _Module(Objective, torch.nn.Module):
    def __init__(self) -> None:
        torch.nn.Module.__init__(self)


# --------------------------------------------------------------------------- text


class MLM(_Module):
    """Masked language modelling (``mlm``, ``dict_mlm`` and ``tlm`` differ in their data
    and collator only)."""

    def __init__(self, name: str, corpus: Any, collator: Any, *, alpha: float = 1.0) -> None:
        super().__init__()
        self.name = name
        self.corpus = corpus
        self.collator = collator
        self.alpha = alpha

    def sample(self, rng: np.random.Generator, batch_size: int) -> dict[str, torch.Tensor]:
        if self.name == "mlm":
            seqs = self.corpus.sample(rng, batch_size, alpha=self.alpha)
        else:
            seqs = self.corpus.sample(rng, batch_size)
        return self.collator(seqs, _torch_generator(rng))

    def loss(self, model: Any, batch: Any) -> tuple[torch.Tensor, dict[str, float]]:
        from xlalign.pretrain.heads import mlm_loss

        loss, n = mlm_loss(model, _to(batch, _device(model)))
        return loss, {f"{self.name}/tokens": float(n)}


# --------------------------------------------------------------------------- static vectors


class StaticAlignment(_Module):
    """A word's mean-pooled subword states (the word encoded alone) against its static
    vector: ``mse`` (element-wise; same dimension), ``gcca`` or ``dcca`` (correlation; any
    dimension, the static side a fixed view without gradient)."""

    def __init__(self, name: str, pairs: Any, *, layer: int, loss: torch.nn.Module | None) -> None:
        super().__init__()
        self.name = name
        self.pairs = pairs
        self.layer = layer
        self.correlation = loss  # GCCALoss / DCCALoss, None for mse

    def sample(self, rng: np.random.Generator, batch_size: int) -> Any:
        return self.pairs.sample(rng, batch_size)

    def loss(self, model: Any, batch: Any) -> tuple[torch.Tensor, dict[str, float]]:
        from xlalign.pretrain import losses

        dev = _device(model)
        pooled = _pooled_words(model, batch, self.layer, dev)
        target = batch.vectors.to(dev)
        if self.correlation is None:
            return losses.mse_loss(pooled.float(), target.float()), {}
        if isinstance(self.correlation, losses.GCCALoss):
            res = self.correlation([pooled, target.detach()])
        else:
            res = self.correlation(pooled, target.detach())
        corr = res.correlations.detach().cpu().tolist()
        logs = {f"{self.name}/corr_{i + 1}": float(c) for i, c in enumerate(corr)}
        logs[f"{self.name}/corr_sum"] = float(sum(corr))
        return res.loss, logs


# --------------------------------------------------------------------------- dictionaries


class AlignMLM(_Module):
    """001's ALIGN-MLM term: minus the mean cosine between the input embeddings of the
    dictionary's token pairs (all pairs every step, as 001's code; the weight alpha comes
    from config). The dictionary was sampled once by seed and is saved with the
    checkpoint (:meth:`state`)."""

    name = "align_mlm"

    def __init__(self, dictionary: Any) -> None:
        super().__init__()
        self.dictionary = dictionary

    def sample(self, rng: np.random.Generator, batch_size: int) -> torch.Tensor:
        return self.dictionary.pairs

    def loss(self, model: Any, batch: Any) -> tuple[torch.Tensor, dict[str, float]]:
        from xlalign.pretrain import losses

        emb = model.get_input_embeddings().weight
        loss = losses.align_mlm_loss(emb, batch.to(emb.device))
        return loss, {"align_mlm/mean_cos": float(-loss.detach())}

    def state(self) -> dict[str, Any]:
        return {"pairs": len(self.dictionary.pairs)}


# --------------------------------------------------------------------------- bitext


class _Drift(_Module):
    """Parameter drift ``lambda * ||theta - theta0||^2`` (002 eq. 5) over the encoder."""

    def __init__(self, model: Any, drift: float, *, squared: bool = True) -> None:
        super().__init__()
        self.drift = float(drift)
        self.squared = squared
        # theta0 as non-persistent buffers: they follow the module across devices and stay
        # out of checkpoints (the starting encoder is an input of the run)
        self._names: dict[str, str] = {}
        if self.drift > 0:
            for i, (n, p) in enumerate(encoder_of(model).named_parameters()):
                if p.requires_grad:
                    self._names[n] = f"theta0_{i}"
                    self.register_buffer(f"theta0_{i}", p.detach().clone(), persistent=False)

    def drift_term(self, model: Any) -> tuple[torch.Tensor | None, dict[str, float]]:
        if self.drift <= 0:
            return None, {}
        from xlalign.pretrain import losses

        enc = encoder_of(model)
        named = [(n, p) for n, p in enc.named_parameters() if n in self._names]
        reference = {n: getattr(self, b) for n, b in self._names.items()}
        term = losses.parameter_drift(named, reference, squared=self.squared)
        return self.drift * term, {f"{self.name}/drift": float(term.detach())}


class L2Align(_Drift):
    """Cao et al. (2020)'s L2 alignment of aligned words' contextual vectors (first
    subword, ``layer``), with parameter drift (002 eq. 6) and optionally the source-hidden
    regulariser (002 eq. 4) against the states of the encoder as it started."""

    name = "l2_align"

    def __init__(
        self,
        aligned: Any,
        model: Any,
        *,
        layer: int,
        drift: float,
        squared_drift: bool = True,
        hidden_regulariser: float = 0.0,
    ) -> None:
        super().__init__(model, drift, squared=squared_drift)
        self.aligned = aligned
        self.layer = layer
        self.hidden_weight = float(hidden_regulariser)
        self._frozen = None
        if self.hidden_weight > 0:
            import copy

            self._frozen = copy.deepcopy(encoder_of(model)).eval()
            for p in self._frozen.parameters():
                p.requires_grad_(False)

    def sample(self, rng: np.random.Generator, batch_size: int) -> Any:
        return self.aligned.sample(rng, batch_size)

    def loss(self, model: Any, batch: Any) -> tuple[torch.Tensor, dict[str, float]]:
        from xlalign.pretrain import losses
        from xlalign.pretrain.pairs import gather_states

        dev = _device(model)
        src = _to(batch.source, dev)
        s_states = _layer_states(model, src, self.layer)
        t_states = _layer_states(model, _to(batch.target, dev), self.layer)
        s = gather_states(s_states, batch.source_index.to(dev))
        t = gather_states(t_states, batch.target_index.to(dev))
        loss = losses.l2_align_loss(s.float(), t.float())
        logs = {"l2_align/l2": float(loss.detach()), "l2_align/links": float(len(s))}
        if self._frozen is not None:
            with torch.no_grad():
                ref = self._frozen(
                    input_ids=src["input_ids"],
                    attention_mask=src["attention_mask"],
                    output_hidden_states=True,
                ).hidden_states[self.layer]
            reg = losses.hidden_regulariser(s_states.float(), ref.float(), src["attention_mask"])
            logs["l2_align/hidden_reg"] = float(reg.detach())
            loss = loss + self.hidden_weight * reg
        drift, dlogs = self.drift_term(model)
        logs.update(dlogs)
        return (loss if drift is None else loss + drift), logs


class Contrastive(_Drift):
    """002's weak or strong contrastive alignment (eq. 7-8) of aligned words' first
    subwords, through a learned projection (H-H-128, ReLU; discarded afterwards), with
    parameter drift."""

    def __init__(
        self,
        aligned: Any,
        model: Any,
        *,
        layer: int,
        strong: bool,
        temperature: float,
        projection_dim: int,
        drift: float,
        squared_drift: bool = True,
    ) -> None:
        super().__init__(model, drift, squared=squared_drift)
        from xlalign.pretrain.losses import ContrastiveAlignment

        self.name = "contrastive"
        self.aligned = aligned
        self.layer = layer
        self.strong = strong
        self.head = ContrastiveAlignment(
            int(model.config.hidden_size),
            projection_dim=projection_dim,
            temperature=temperature,
            strong=strong,
        )

    def sample(self, rng: np.random.Generator, batch_size: int) -> Any:
        return self.aligned.sample(rng, batch_size)

    def loss(self, model: Any, batch: Any) -> tuple[torch.Tensor, dict[str, float]]:
        from xlalign.pretrain.pairs import gather_states

        dev = _device(model)
        s = gather_states(
            _layer_states(model, _to(batch.source, dev), self.layer), batch.source_index.to(dev)
        )
        t = gather_states(
            _layer_states(model, _to(batch.target, dev), self.layer), batch.target_index.to(dev)
        )
        loss = self.head(s.float(), t.float())
        logs = {"contrastive/nce": float(loss.detach()), "contrastive/links": float(len(s))}
        drift, dlogs = self.drift_term(model)
        logs.update(dlogs)
        return (loss if drift is None else loss + drift), logs

    def state(self) -> dict[str, Any]:
        return {"strong": self.strong}


class LinearMap(_Module):
    """002's linear mapping: per target language and layer a map W (identity at start)
    with T W ~ S over aligned words' first-subword states of the FROZEN encoder; after
    each optimiser step W <- (1 + beta) W - beta (W W^T) W (:meth:`after_step`)."""

    name = "linear_map"
    freezes_encoder = True

    def __init__(
        self, aligned: Any, *, languages: list[str], layers: list[int], dim: int, beta: float
    ) -> None:
        super().__init__()
        from xlalign.pretrain.linear_maps import LinearMaps

        self.aligned = aligned
        self.layers = list(layers)
        self.beta = float(beta)
        self.maps = LinearMaps(languages, self.layers, dim)

    def sample(self, rng: np.random.Generator, batch_size: int) -> Any:
        return self.aligned.sample(rng, batch_size)

    def loss(self, model: Any, batch: Any) -> tuple[torch.Tensor, dict[str, float]]:
        from xlalign.pretrain.pairs import gather_states

        dev = _device(model)
        enc = encoder_of(model)
        with torch.no_grad():
            s_all = enc(**_to(batch.source, dev), output_hidden_states=True).hidden_states
            t_all = enc(**_to(batch.target, dev), output_hidden_states=True).hidden_states
        # batch.languages holds each sentence row's pair ("en-de"): the target language
        langs = [batch.languages[int(r)].split("-", 1)[1] for r in batch.target_index[:, 0]]
        total = torch.zeros((), device=dev)
        logs: dict[str, float] = {}
        for layer in self.layers:
            s = gather_states(s_all[layer], batch.source_index.to(dev)).float()
            t = gather_states(t_all[layer], batch.target_index.to(dev)).float()
            for lang in sorted(set(langs)):
                rows = torch.tensor([i for i, x in enumerate(langs) if x == lang], device=dev)
                part = self.maps.loss(s[rows], t[rows], lang, layer)
                total = total + part * (len(rows) / len(langs))
            logs[f"linear_map/layer_{layer}"] = float(total.detach())
        return total / len(self.layers), logs

    def after_step(self) -> None:
        self.maps.orthogonalize_(self.beta)


# --------------------------------------------------------------------------- factory


def build_objective(
    name: str,
    settings: Mapping[str, Any],
    *,
    model: Any,
    tokenizer: Any,
    files: Mapping[str, Any],
    seed: int,
    hub: str = "en",
    max_length: int = 128,
) -> Objective:
    """The objective ``name`` with its ``settings`` (config ``pretrain.objectives.<name>``)
    over the data in ``files``:

    * text objectives: ``files["text"]`` (language -> paragraphs file; ``mlm``,
      ``dict_mlm``), ``files["parallel"]`` (pair -> corpus.tsv; ``tlm``),
      ``files["dictionaries"]`` (language -> dictionary file; ``dict_mlm``, ``align_mlm``);
    * static objectives: ``files["static"]`` (language -> space stem);
    * bitext objectives: ``files["aligned"]`` (pair -> (pairs.tsv, corpus.tsv)).

    Every check that can fail on the data or the configuration runs here, before the
    first step.
    """
    key = f"pretrain.objectives.{name}"
    layer = _layer(settings.get("layer"), model, key)
    if name in TEXT_OBJECTIVES:
        return _text_objective(
            name,
            settings,
            tokenizer=tokenizer,
            files=files,
            seed=seed,
            max_length=max_length,
            key=key,
        )
    if name in STATIC_OBJECTIVES:
        from xlalign.pretrain import losses
        from xlalign.pretrain.pairs import StaticPairs

        spaces = _need(files, "static", key)
        pairs = StaticPairs.load(
            {lang: Path(p) for lang, p in spaces.items()},
            tokenizer,
            max_subwords=int(settings.get("max_subwords", 8)),
            min_coverage=float(settings.get("min_coverage", 0.5)),
        )
        hidden = int(model.config.hidden_size)
        batch = int(settings.get("batch_size", 1024))
        if name == "mse":
            losses.check_mse_dims(
                pairs.dim, hidden, f"{key} (static space {settings.get('static')})"
            )
            return StaticAlignment(name, pairs, layer=layer, loss=None)
        k = int(settings.get("k", 10))
        losses.check_batch(batch, k, f"{key}.batch_size")
        if name == "gcca":
            corr = losses.GCCALoss(k, centring=str(settings.get("centring", "columns")))
        else:
            # Andrew et al.'s covariances are views' dimension squared: a batch not larger than
            # a view's dimension whitens anything into correlations of 1 (the ridge terms
            # only keep the inverse finite)
            widest = max(hidden, pairs.dim)
            if batch < 2 * widest:
                raise ConfigError(
                    f"{key}.batch_size: {batch} word-vector pairs for views of {hidden} and "
                    f"{pairs.dim} dimensions; DCCA's covariance estimates need at least "
                    f"{2 * widest} (twice the widest view)"
                )
            corr = losses.DCCALoss(
                k,
                r1=float(settings.get("r1", 1e-3)),
                r2=float(settings.get("r2", 1e-3)),
                eps=float(settings.get("eps", 1e-9)),
            )
        return StaticAlignment(name, pairs, layer=layer, loss=corr)
    if name == "align_mlm":
        from xlalign.pretrain.pairs import TokenDictionary

        saved = files.get("token_dictionary")
        if saved is not None and Path(saved).is_file():
            dictionary = TokenDictionary.load(Path(saved))  # a resumed run: never resample
        else:
            dictionary = TokenDictionary.build(
                {lang: Path(p) for lang, p in _need(files, "dictionaries", key).items()},
                tokenizer,
                max_pairs=settings.get("max_pairs"),
                seed=seed,
                hub=hub,
            )
            if saved is not None:
                dictionary.save(Path(saved))
        return AlignMLM(dictionary)
    if name in BITEXT_OBJECTIVES:
        from xlalign.pretrain.pairs import AlignedPairs

        aligned = AlignedPairs.load(
            {pair: (Path(a), Path(b)) for pair, (a, b) in _need(files, "aligned", key).items()},
            tokenizer,
            max_length=int(settings.get("max_length", 96)),
            drop_identical=bool(settings.get("drop_identical", True)),
            seed=seed,
        )
        drift = float(settings.get("drift", 1.0))
        squared = not bool(settings.get("reproduce_sqrt_drift", False))
        if name == "l2_align":
            return L2Align(
                aligned,
                model,
                layer=layer,
                drift=drift,
                squared_drift=squared,
                hidden_regulariser=float(settings.get("hidden_regulariser", 0.0)),
            )
        if name == "contrastive":
            mode = str(settings.get("mode", "weak"))
            if mode not in ("weak", "strong"):
                raise ConfigError(f"{key}.mode must be 'weak' or 'strong', not {mode!r}")
            return Contrastive(
                aligned,
                model,
                layer=layer,
                strong=mode == "strong",
                temperature=float(settings.get("temperature", 0.1)),
                projection_dim=int(settings.get("projection_dim", 128)),
                drift=drift,
                squared_drift=squared,
            )
        depth = int(model.config.num_hidden_layers)
        layers = settings.get("layers") or list(range(1, depth + 1))
        langs = sorted({p.split("-", 1)[1] for p in _need(files, "aligned", key)})
        return LinearMap(
            aligned,
            languages=langs,
            layers=[int(x) for x in layers],
            dim=int(model.config.hidden_size),
            beta=float(settings.get("beta", 0.01)),
        )
    raise ConfigError(f"{key}: unknown objective {name!r}; expected one of {list(OBJECTIVES)}")


def _need(files: Mapping[str, Any], what: str, key: str) -> Mapping[str, Any]:
    got = files.get(what)
    if not got:
        raise ConfigError(f"{key}: needs {what} files, none given")
    return got


def _layer(value: Any, model: Any, key: str) -> int:
    depth = int(model.config.num_hidden_layers)
    if value is None or value == "last":
        return depth
    layer = int(value)
    if not 0 <= layer <= depth:
        raise ConfigError(f"{key}.layer: {layer} is outside 0..{depth} (0 = embeddings)")
    return layer


def _text_objective(
    name: str,
    settings: Mapping[str, Any],
    *,
    tokenizer: Any,
    files: Mapping[str, Any],
    seed: int,
    max_length: int,
    key: str,
) -> Objective:
    from xlalign.pretrain import text

    masking = {"probability": float(settings.get("mlm_probability", 0.15))}
    if name == "tlm":
        pairs = _need(files, "parallel", key)
        corpus, _ = text.ParallelCorpus.from_tsv(
            {p: Path(f) for p, f in pairs.items()}, tokenizer, max_length=max_length, seed=seed
        )
        return MLM(name, corpus, text.MaskingCollator(tokenizer, **masking))
    corpus = files.get("train_corpus")
    if corpus is None:
        raise ConfigError(f"{key}: needs the tokenised text corpus (files['train_corpus'])")
    alpha = float(settings.get("language_alpha", 1.0))
    if name == "mlm":
        return MLM(name, corpus, text.MaskingCollator(tokenizer, **masking), alpha=alpha)
    from xlalign.pretrain.pairs import TokenDictionary

    saved = files.get("token_dictionary")
    if saved is not None and Path(saved).is_file():
        dictionary = TokenDictionary.load(Path(saved))
    else:
        dictionary = TokenDictionary.build(
            {lang: Path(p) for lang, p in _need(files, "dictionaries", key).items()},
            tokenizer,
            max_pairs=settings.get("max_pairs"),
            seed=seed,
        )
        if saved is not None:
            dictionary.save(Path(saved))
    collator = text.DictMLMCollator(
        tokenizer,
        dictionary.translations(),
        switch_probability=float(settings.get("switch_probability", 0.5)),
        reproduce_label_leak=bool(settings.get("reproduce_label_leak", False)),
        **masking,
    )
    return MLM(name, corpus, collator)
