"""002's feature-based task model: a frozen encoder's (optionally linearly mapped) layer
features, mixed, through extra Transformer layers to a task head.

002 (Wu & Dredze 2020, section 3) evaluates linear mapping (its eq. 1-2) this way: "an
ELMo-style feature-based model with 4 extra Transformer layers, a CRF instead of a linear
classifier for NER", footnote 3: "the weighted average of representations in all layers
of the encoder". Its code (shijie-wu/crosslingual-nlp, ``model/base.py`` with
``--freeze_layer 12 --weighted_feature True --projector transformer
--projector_trm_num_layers 4``) fixes the rest, followed here:

* features: every hidden state the encoder returns (the embedding output and each
  layer's output: 13 for a 12-layer encoder), each multiplied by the test language's map
  of that layer when there is one (``features @ W``: the orientation of eq. 1, ``T W ~
  S``); the hub language (English, the training language) is never mapped;
* the mix: softmax-normalised weights, zero at start (an equal average), times a scalar
  ``gamma`` (ELMo's scalar mix, ``mix: "scalar"``; crosslingual-nlp has no gamma:
  ``mix: "weighted"``); then dropout 0.2 with one mask per sequence shared over its
  positions (its ``InputVariationalDropout``);
* 4 post-norm Transformer encoder layers of the encoder's own width, heads and
  feed-forward size (12 heads and 3072 for a base encoder, crosslingual-nlp's values),
  ReLU, dropout 0.2, padding masked;
* tagging: a linear layer over each position, trained on the labelled first subwords;
  with ``crf`` a linear-chain CRF (:mod:`.crf`) over the first subwords of each window;
  pair classification: a linear layer on the first position of the extra layers' output.

Unlike crosslingual-nlp, the frozen encoder runs in evaluation mode (no dropout inside
it: the Lightning module there leaves the frozen layers in training mode) and under
``torch.no_grad`` (no activations kept for it), and the CRF has plain transition scores
(:mod:`.crf` says how its CRF differs).

The task's features and collate functions are unchanged (:class:`~.tagging.TaggingTask`,
:class:`~.classification.PairClassificationTask`), so are their ``decode``: with a CRF,
the ``logits`` of an evaluation batch are the Viterbi path written as one-hot rows at the
chain's positions (1 at the chosen tag, 0 elsewhere), so ``argmax`` decoding reads the
Viterbi tags; elsewhere they are the emission scores. The chain is the positions whose
label is not -100 (or ``word_mask`` when given): a test word whose gold tag training
never saw (-100 in its features) is left out of the chain and gets its emission's argmax
(it is scored as wrong whatever it gets).

Languages: :meth:`FeatureBasedModel.set_language` picks the maps of the language being
evaluated (:func:`~.finetune.finetune` calls it before each split when the model has it);
a language the maps do not cover passes through unmapped, with a warning.

Saving: the model is a plain ``torch.nn.Module``; the Trainer's ``save_model`` writes its
state dict (``model.safetensors``: ``encoder.*``, ``mix.*``, ``transformer.*``,
``classifier.*``, ``crf.*``) and the tokenizer. The maps are not in it (they are inputs,
named by ``mapping``); :func:`build_feature_model` with the same encoder, labels and spec,
then ``load_state_dict``, gives the model back.

Options, ``params.extra["feature_based"]`` (``true`` for all defaults, or a mapping):
``layers`` ("all" or a list of hidden-state indices, 0 = the embedding output), ``mix``,
``transformer_layers`` (4), ``dropout`` (0.2), ``crf`` (default: true for NER, false
otherwise), ``bio_constraints`` (false: only valid IOB2 transitions in CRF decoding),
``mapping`` (a directory of linear maps, or null: plain frozen features), ``hub`` ("en").
002 trains these models with different hyper-parameters (20 epochs, batch 128, learning
rate 1e-3, 1e-4 for NER and XNLI, 10 % warm-up): those are ``TaskParams`` of the run.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F
from transformers.utils import ModelOutput

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import local_model_dir
from xlalign.evaluation.tasks.crf import LinearChainCRF, bio_constraints

log = logging.getLogger(__name__)

#: the ``params.extra`` key that turns the option on
KEY = "feature_based"
MIXES = ("scalar", "weighted")
HEADS = ("tagging", "classification")
#: the files of a maps directory (:mod:`xlalign.pretrain.linear_maps`)
MAPS_FILES = ("linear_maps.safetensors", "linear_maps.json")


# --------------------------------------------------------------------------- options


@dataclass(frozen=True)
class FeatureSpec:
    """The feature-based model's options (see the module docstring)."""

    layers: tuple[int, ...] | str = "all"
    mix: str = "scalar"
    transformer_layers: int = 4
    dropout: float = 0.2
    crf: bool = False
    bio_constraints: bool = False
    mapping: str | None = None
    hub: str = "en"
    #: the keys given (for error messages and the results)
    given: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def from_extra(
        cls, value: Any, *, head: str, scheme: str = "", where: str = f"extra.{KEY}"
    ) -> FeatureSpec | None:
        """The spec of ``params.extra["feature_based"]`` (``True`` or a mapping) for a
        ``head`` ("tagging" with its ``scheme``, or "classification"); ``None`` when the
        option is off (absent, ``None`` or ``False``). A ``mapping`` directory must hold
        the two map files."""
        if head not in HEADS:
            raise ValueError(f"FeatureSpec: head must be one of {HEADS}, not {head!r}")
        default_crf = head == "tagging" and scheme == "ner"
        if value is None or value is False:
            return None
        if value is True:
            value = {}
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected true or a mapping of options, got {value!r}")
        known = {f.name for f in fields(cls)} - {"given"}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ConfigError(f"{where}: unknown keys {unknown} (known: {sorted(known)})")
        layers = value.get("layers", "all")
        if layers != "all":
            if (
                isinstance(layers, str | bytes)
                or not isinstance(layers, Sequence)
                or not layers
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in layers)
            ):
                raise ConfigError(
                    f"{where}.layers: 'all' or a list of layer numbers, not {layers!r}"
                )
            if len(set(layers)) != len(layers):
                raise ConfigError(f"{where}.layers: {list(layers)} repeats a layer")
            layers = tuple(int(x) for x in layers)
        spec = cls(
            layers=layers,
            mix=value.get("mix", "scalar"),
            transformer_layers=value.get("transformer_layers", 4),
            dropout=value.get("dropout", 0.2),
            crf=value.get("crf", default_crf),
            bio_constraints=value.get("bio_constraints", False),
            mapping=value.get("mapping"),
            hub=value.get("hub", "en"),
            given=tuple(sorted(value)),
        )
        if spec.mix not in MIXES:
            raise ConfigError(f"{where}.mix: one of {MIXES}, not {spec.mix!r}")
        n = spec.transformer_layers
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ConfigError(f"{where}.transformer_layers: an integer >= 0, not {n!r}")
        if not isinstance(spec.dropout, int | float) or not 0 <= spec.dropout < 1:
            raise ConfigError(f"{where}.dropout: a number in [0, 1), not {spec.dropout!r}")
        for key in ("crf", "bio_constraints"):
            if not isinstance(getattr(spec, key), bool):
                raise ConfigError(f"{where}.{key}: true or false, not {getattr(spec, key)!r}")
        if spec.crf and head != "tagging":
            raise ConfigError(f"{where}.crf: a CRF tags sequences; {head} has none")
        if spec.bio_constraints and not spec.crf:
            raise ConfigError(f"{where}.bio_constraints: constrains CRF decoding; set crf")
        if not isinstance(spec.hub, str) or not spec.hub:
            raise ConfigError(f"{where}.hub: a language code, not {spec.hub!r}")
        if spec.mapping is not None:
            if not isinstance(spec.mapping, str | Path) or not str(spec.mapping):
                raise ConfigError(f"{where}.mapping: a directory or null, not {spec.mapping!r}")
            for name in MAPS_FILES:
                if not (Path(spec.mapping) / name).is_file():
                    raise InputError(f"{where}.mapping: {Path(spec.mapping) / name} is missing")
        return spec

    def layer_indices(self, num_hidden_layers: int) -> list[int]:
        """The hidden states mixed, as indices of the encoder's ``hidden_states``."""
        top = num_hidden_layers
        if self.layers == "all":
            return list(range(top + 1))
        bad = [x for x in self.layers if not 0 <= x <= top]
        if bad:
            raise ConfigError(
                f"extra.{KEY}.layers: {bad} outside 0..{top} (0 = the embedding output, "
                f"{top} = the last of the encoder's {top} layers)"
            )
        return list(self.layers)


# --------------------------------------------------------------------------- maps


def load_maps(directory: Path, *, hub: str, dim: int) -> dict[str, dict[int, torch.Tensor]]:
    """The linear maps the pretrain stage wrote into ``directory``
    (:meth:`xlalign.pretrain.linear_maps.LinearMaps.load`), as language -> hidden-state
    index -> W, checked against the hub and the encoder's width."""
    from xlalign.pretrain.linear_maps import LINEAR_MAPS_META, LinearMaps

    maps = LinearMaps.load(Path(directory))
    meta = Path(directory) / LINEAR_MAPS_META
    if maps.hub != hub:
        raise InputError(
            f"{meta}: maps towards hub {maps.hub!r}, but the feature-based model's hub is "
            f"{hub!r} (extra.{KEY}.hub)"
        )
    if maps.dim != dim:
        raise InputError(f"{meta}: maps of dimension {maps.dim}, the encoder has {dim}")
    return {
        lang: {layer: maps.weight(lang, layer).detach().float() for layer in maps.layers}
        for lang in maps.languages
    }


# --------------------------------------------------------------------------- model


@dataclass
class FeatureBasedOutput(ModelOutput):
    """``loss`` (when labels are given) and ``logits`` (tagging ``[B, L, K]``, with a CRF
    in evaluation the one-hot Viterbi path at the chain's positions; classification
    ``[B, K]``)."""

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None


class ScalarMix(nn.Module):
    """``gamma * sum_j softmax(w)_j h_j`` (Peters et al. 2018, eq. 1); ``gamma`` fixed at 1
    without ``scale`` (crosslingual-nlp's weighted feature)."""

    def __init__(self, n: int, *, scale: bool = True) -> None:
        super().__init__()
        self.weights = nn.Parameter(torch.zeros(n))
        self.gamma = nn.Parameter(torch.ones(())) if scale else None

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        """``states``: ``[n, ...]`` -> ``[...]``."""
        w = torch.softmax(self.weights, dim=0).to(states.dtype)
        mixed = torch.tensordot(w, states, dims=([0], [0]))
        return mixed if self.gamma is None else self.gamma.to(states.dtype) * mixed


class SequenceDropout(nn.Dropout):
    """Dropout with one mask per sequence shared by all its positions (Gal & Ghahramani
    2016; crosslingual-nlp's ``InputVariationalDropout``) on ``[B, L, H]``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        keep = F.dropout(x.new_ones(x.shape[0], 1, x.shape[-1]), self.p, True)
        return x * keep


class FeatureBasedModel(nn.Module):
    """A frozen encoder's mixed features through extra Transformer layers to a tagging or
    pair-classification head (see the module docstring)."""

    def __init__(
        self,
        encoder: nn.Module,
        num_labels: int,
        spec: FeatureSpec,
        *,
        head: str = "tagging",
        labels: Sequence[str] | None = None,
        maps: Mapping[str, Mapping[int, torch.Tensor]] | None = None,
    ) -> None:
        super().__init__()
        if head not in HEADS:
            raise ValueError(f"FeatureBasedModel: head must be one of {HEADS}, not {head!r}")
        if spec.crf and head != "tagging":
            raise ConfigError(f"extra.{KEY}.crf: a CRF tags sequences; {head} has no sequence")
        cfg = encoder.config
        hidden = int(cfg.hidden_size)
        self.encoder = encoder
        self.encoder.requires_grad_(False)
        self.encoder.eval()
        self.spec = spec
        self.head = head
        self.layers = spec.layer_indices(int(cfg.num_hidden_layers))
        self.mix = ScalarMix(len(self.layers), scale=spec.mix == "scalar")
        self.dropout = SequenceDropout(spec.dropout)
        self.transformer: nn.Module | None = None
        if spec.transformer_layers:
            layer = nn.TransformerEncoderLayer(
                hidden,
                int(cfg.num_attention_heads),
                dim_feedforward=int(getattr(cfg, "intermediate_size", 4 * hidden)),
                dropout=spec.dropout,
                activation="relu",
                batch_first=True,
            )
            self.transformer = nn.TransformerEncoder(
                layer, spec.transformer_layers, enable_nested_tensor=False
            )
        self.classifier = nn.Linear(hidden, num_labels)
        self.crf: LinearChainCRF | None = None
        if spec.crf:
            allowed: dict[str, torch.Tensor] = {}
            if spec.bio_constraints:
                if labels is None or len(labels) != num_labels:
                    raise ValueError("FeatureBasedModel: BIO constraints need the label names")
                start, trans = bio_constraints(labels)
                allowed = {"allowed_start": start, "allowed_transitions": trans}
            self.crf = LinearChainCRF(num_labels, **allowed)
        # the maps: non-persistent buffers (they follow .to(device), stay out of the
        # state dict), one per (language, layer) among the mixed layers
        self._maps: dict[str, dict[int, str]] = {}
        for lang, per_layer in sorted((maps or {}).items()):
            if lang == spec.hub:
                continue
            for layer, w in sorted(per_layer.items()):
                if layer in self.layers:
                    name = f"map_{len(self._maps)}_{layer}"
                    self.register_buffer(
                        name, torch.as_tensor(w, dtype=torch.float32), persistent=False
                    )
                    self._maps.setdefault(lang, {})[layer] = name
            self._maps.setdefault(lang, {})
        self.mapped_languages = sorted(self._maps)
        self.language = spec.hub
        self._warned: set[str] = set()

    # ------------------------------------------------------------------ state

    def train(self, mode: bool = True) -> FeatureBasedModel:
        """The head's mode; the frozen encoder stays in evaluation mode (no dropout)."""
        super().train(mode)
        self.encoder.eval()
        return self

    def set_language(self, lang: str) -> None:
        """Map the features of ``lang`` from now on (the hub, or a language without maps:
        unmapped)."""
        self.language = lang
        if (
            self._maps
            and lang != self.spec.hub
            and lang not in self._maps
            and lang not in self._warned
        ):
            self._warned.add(lang)
            log.warning(
                "feature-based model: no linear maps for %r (maps: %s); its features "
                "are not mapped",
                lang,
                ", ".join(self.mapped_languages),
            )

    def layer_map(self, layer: int) -> torch.Tensor | None:
        """The current language's map of hidden state ``layer`` (None: unmapped)."""
        name = self._maps.get(self.language, {}).get(layer)
        return None if name is None else getattr(self, name)

    # ------------------------------------------------------------------ forward

    def features(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The selected hidden states of the frozen encoder, mapped for the current
        language, stacked ``[n_layers, B, L, H]`` (no gradient)."""
        kwargs = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
        with torch.no_grad():
            out = self.encoder(
                input_ids=input_ids,
                attention_mask=attention_mask,
                output_hidden_states=True,
                **kwargs,
            )
            states = []
            for layer in self.layers:
                h = out.hidden_states[layer]
                w = self.layer_map(layer)
                states.append(h if w is None else (h.float() @ w).to(h.dtype))
            return torch.stack(states)

    def hidden(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The extra Transformer layers' output ``[B, L, H]`` over the mixed features."""
        x = self.dropout(self.mix(self.features(input_ids, attention_mask, token_type_ids)))
        if self.transformer is not None:
            x = self.transformer(x, src_key_padding_mask=attention_mask == 0)
        return x

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        word_mask: torch.Tensor | None = None,
    ) -> FeatureBasedOutput:
        """Tagging: ``labels`` ``[B, L]`` (-100: no label); ``word_mask`` ``[B, L]``
        (optional) the CRF chain's positions when labels are not given or should not
        decide. Classification: ``labels`` ``[B]``."""
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        x = self.hidden(input_ids, attention_mask, token_type_ids)
        if self.head == "classification":
            logits = self.classifier(x[:, 0])
            loss = None
            if labels is not None:
                loss = F.cross_entropy(logits.float(), labels.view(-1), ignore_index=-100)
            return FeatureBasedOutput(loss=loss, logits=logits)
        emissions = self.classifier(x)
        if self.crf is None:
            loss = None
            if labels is not None:
                loss = F.cross_entropy(
                    emissions.flatten(0, 1).float(), labels.flatten(), ignore_index=-100
                )
            return FeatureBasedOutput(loss=loss, logits=emissions)
        if word_mask is not None:
            chain = word_mask.bool() & (attention_mask > 0)
        elif labels is not None:
            chain = labels != -100
        else:
            raise ValueError(
                "feature-based CRF tagger: give labels (-100 off the first subwords) or a "
                "word_mask to say which positions form the chain"
            )
        loss = None
        if labels is not None:
            known = chain & (labels != -100)
            loss = self.crf.neg_log_likelihood(emissions, labels.masked_fill(~known, 0), known)
        if self.training:
            return FeatureBasedOutput(loss=loss, logits=emissions)
        return FeatureBasedOutput(loss=loss, logits=self.viterbi_scores(emissions, chain))

    def viterbi_scores(self, emissions: torch.Tensor, chain: torch.Tensor) -> torch.Tensor:
        """``emissions`` with the rows at the chain's positions replaced by the one-hot
        Viterbi path (so that argmax reads the path)."""
        assert self.crf is not None
        paths = self.crf.viterbi(emissions, chain)
        out = emissions.detach().clone()
        rows, cols = chain.nonzero(as_tuple=True)  # row-major: each chain in order
        tags = torch.tensor([t for p in paths for t in p], dtype=torch.long, device=out.device)
        out[rows, cols] = 0
        out[rows, cols, tags] = 1
        return out


def build_feature_model(
    encoder: Path, labels: list[str], spec: FeatureSpec, *, head: str
) -> FeatureBasedModel:
    """The encoder at ``encoder`` (a local checkpoint) frozen inside a
    :class:`FeatureBasedModel` for ``labels``, with the maps ``spec.mapping`` names."""
    from transformers import AutoModel

    model = AutoModel.from_pretrained(
        local_model_dir(encoder, what="encoder"), local_files_only=True
    )
    if getattr(model, "pooler", None) is not None:
        model.pooler = None  # unused: the features are the hidden states
    maps = None
    if spec.mapping is not None:
        maps = load_maps(Path(spec.mapping), hub=spec.hub, dim=int(model.config.hidden_size))
    return FeatureBasedModel(model, len(labels), spec, head=head, labels=labels, maps=maps)
