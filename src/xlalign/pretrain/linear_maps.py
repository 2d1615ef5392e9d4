"""Per-layer linear maps into the hub language's feature space (002 section 2, eq. 1-2).

002's "linear mapping" alignment keeps the encoder frozen and learns, for each target
language and layer l, a matrix ``W^l`` with ``T^l W^l ~ S^l``: the target language's
contextual features mapped onto those of the aligned English (hub) words. The maps start at
the identity, are trained by gradient descent on eq. 1 (:meth:`LinearMaps.loss`) and are
pulled towards orthogonality after every optimiser step by eq. 2 (Lample et al. 2018,
:meth:`LinearMaps.orthogonalize_`). The feature-based evaluation reads them back with
:meth:`LinearMaps.load` and maps each language's features before the task layers.

On disk (:meth:`LinearMaps.save`): ``linear_maps.safetensors`` with one float32
``[dim, dim]`` tensor per map under the key ``"<language>.<layer>"``, and
``linear_maps.json`` = ``{"languages", "layers", "dim", "hub", "format": 1}``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from xlalign.core.errors import InputError
from xlalign.core.io import atomic_path, read_json, write_json
from xlalign.pretrain.losses import l2_align_loss

__all__ = ["LINEAR_MAPS_FILE", "LINEAR_MAPS_FORMAT", "LINEAR_MAPS_META", "LinearMaps"]

LINEAR_MAPS_FILE = "linear_maps.safetensors"
LINEAR_MAPS_META = "linear_maps.json"
LINEAR_MAPS_FORMAT = 1


def _param_name(language: str, layer: int) -> str:
    # module parameter names may not contain "."; the file keys use "<language>.<layer>"
    return f"{language}_{layer}"


def _file_key(language: str, layer: int) -> str:
    return f"{language}.{layer}"


class LinearMaps(nn.Module):
    """One ``dim x dim`` map per (language, layer), initialised to the identity.

    ``languages``: the languages that get a map (not the hub, whose features are the
    target space); ``layers``: the encoder layers whose features are mapped (hidden-state
    indices); ``hub``: the language mapped into (002: English).
    """

    def __init__(
        self, languages: Sequence[str], layers: Sequence[int], dim: int, *, hub: str = "en"
    ) -> None:
        super().__init__()
        languages = list(languages)
        layers = list(layers)
        if not languages:
            raise ValueError("LinearMaps: no languages to map")
        if not layers:
            raise ValueError("LinearMaps: no layers to map")
        if len(set(languages)) != len(languages):
            raise ValueError(f"LinearMaps: repeated language in {languages}")
        if len(set(layers)) != len(layers):
            raise ValueError(f"LinearMaps: repeated layer in {layers}")
        for lang in languages:
            if not isinstance(lang, str) or not lang or "." in lang:
                raise ValueError(f"LinearMaps: bad language code {lang!r}")
        for layer in layers:
            if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
                raise ValueError(f"LinearMaps: a layer must be an int >= 0; got {layer!r}")
        if hub in languages:
            raise ValueError(
                f"LinearMaps: the hub language {hub!r} is the target space and gets no map; "
                f"remove it from the languages {languages}"
            )
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"LinearMaps: dim must be a positive int; got {dim!r}")
        self.languages = languages
        self.layers = layers
        self.dim = dim
        self.hub = hub
        self.maps = nn.ParameterDict(
            {
                _param_name(lang, layer): nn.Parameter(torch.eye(dim))
                for lang in languages
                for layer in layers
            }
        )

    def extra_repr(self) -> str:
        return f"languages={self.languages}, layers={self.layers}, dim={self.dim}, hub={self.hub!r}"

    def weight(self, language: str, layer: int) -> Tensor:
        """The map ``W`` of ``language`` at ``layer`` (``KeyError`` when there is none)."""
        if language not in self.languages:
            hint = (
                f"; {language!r} is the hub, the space the others are mapped into (pass "
                f"identity_languages=({language!r},) to map it to itself)"
                if language == self.hub
                else ""
            )
            raise KeyError(
                f"no linear map for language {language!r}: maps exist for {self.languages}" + hint
            )
        if layer not in self.layers:
            raise KeyError(
                f"no linear map for layer {layer} of {language!r}: maps exist for layers "
                f"{self.layers}"
            )
        return self.maps[_param_name(language, layer)]

    def map(
        self,
        features: Tensor,
        language: str,
        layer: int,
        *,
        identity_languages: Collection[str] = (),
    ) -> Tensor:
        """``features @ W`` (002 eq. 1: ``T W``), for ``features`` of shape ``[..., dim]``.

        A language without a map raises ``KeyError``, unless it is listed in
        ``identity_languages`` (the hub: its features are returned unchanged).
        """
        if language not in self.languages and language in identity_languages:
            return features
        w = self.weight(language, layer)
        if features.shape[-1] != self.dim:
            raise ValueError(
                f"LinearMaps.map: features of size {features.shape[-1]}, maps of size {self.dim}"
            )
        return features @ w.to(features.dtype)

    def loss(self, s: Tensor, t: Tensor, language: str, layer: int) -> Tensor:
        """002 eq. 1 as a mean over aligned rows: ``mean_i ||s_i - (t W)_i||^2``.

        ``s``: hub-language features ``[pairs, dim]`` (no gradient wanted: the encoder is
        frozen); ``t``: the aligned ``language`` features.
        """
        return l2_align_loss(s, self.map(t, language, layer))

    @torch.no_grad()
    def orthogonalize_(self, beta: float = 0.01) -> None:
        """002 eq. 2, after each optimiser step: ``W <- (1 + beta) W - beta (W W^T) W``.

        A fixed point for orthogonal W; for a W near orthogonality it moves every singular
        value s towards 1 (``s <- (1 + beta) s - beta s^3``).
        """
        for w in self.maps.values():
            w.copy_((1.0 + beta) * w - beta * (w @ w.T) @ w)

    def save(self, directory: Path) -> None:
        """Write ``linear_maps.safetensors`` and ``linear_maps.json`` into ``directory``,
        each atomically (the JSON last, so its presence means the maps are complete)."""
        from safetensors.torch import save_file

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        tensors = {
            _file_key(lang, layer): self.weight(lang, layer)
            .detach()
            .to(device="cpu", dtype=torch.float32)
            .contiguous()
            for lang in self.languages
            for layer in self.layers
        }
        with atomic_path(directory / LINEAR_MAPS_FILE) as tmp:
            save_file(tensors, str(tmp), metadata={"format": "pt"})
        write_json(directory / LINEAR_MAPS_META, self.meta())

    def meta(self) -> dict[str, Any]:
        """The contents of ``linear_maps.json``."""
        return {
            "languages": list(self.languages),
            "layers": list(self.layers),
            "dim": self.dim,
            "hub": self.hub,
            "format": LINEAR_MAPS_FORMAT,
        }

    @classmethod
    def load(cls, directory: Path) -> LinearMaps:
        """Read maps written by :meth:`save`; ``InputError`` naming the file when either
        file is missing or does not hold what the other describes."""
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        directory = Path(directory)
        meta_path = directory / LINEAR_MAPS_META
        file_path = directory / LINEAR_MAPS_FILE
        for p in (meta_path, file_path):
            if not p.is_file():
                raise InputError(
                    f"{p}: missing; expected linear maps written by LinearMaps.save "
                    f"({LINEAR_MAPS_FILE} and {LINEAR_MAPS_META})"
                )
        meta = read_json(meta_path)
        if not isinstance(meta, dict):
            raise InputError(f"{meta_path}: expected a JSON object")
        missing = {"languages", "layers", "dim", "hub", "format"} - set(meta)
        if missing:
            raise InputError(f"{meta_path}: missing key(s) {sorted(missing)}")
        if meta["format"] != LINEAR_MAPS_FORMAT:
            raise InputError(
                f"{meta_path}: format {meta['format']!r}; this version reads format "
                f"{LINEAR_MAPS_FORMAT}"
            )
        languages, layers = meta["languages"], meta["layers"]
        if not isinstance(languages, list) or not all(isinstance(x, str) for x in languages):
            raise InputError(f"{meta_path}: 'languages' must be a list of language codes")
        if not isinstance(layers, list) or not all(
            isinstance(x, int) and not isinstance(x, bool) for x in layers
        ):
            raise InputError(f"{meta_path}: 'layers' must be a list of layer indices")
        if not isinstance(meta["hub"], str):
            raise InputError(f"{meta_path}: 'hub' must be a language code")
        try:
            maps = cls(languages, layers, meta["dim"], hub=meta["hub"])
        except (TypeError, ValueError) as exc:
            raise InputError(f"{meta_path}: {exc}") from exc
        try:
            tensors = load_file(str(file_path))
        except (SafetensorError, OSError) as exc:
            raise InputError(f"{file_path}: not a readable safetensors file ({exc})") from exc
        expected = {_file_key(lang, layer) for lang in maps.languages for layer in maps.layers}
        if set(tensors) != expected:
            lacking = sorted(expected - set(tensors))
            extra = sorted(set(tensors) - expected)
            raise InputError(
                f"{file_path}: tensors do not match {meta_path.name} (missing {lacking}, "
                f"unexpected {extra})"
            )
        with torch.no_grad():
            for lang in maps.languages:
                for layer in maps.layers:
                    t = tensors[_file_key(lang, layer)]
                    if tuple(t.shape) != (maps.dim, maps.dim) or not t.is_floating_point():
                        raise InputError(
                            f"{file_path}: tensor {_file_key(lang, layer)!r} is "
                            f"{t.dtype} {tuple(t.shape)}; expected float [{maps.dim}, {maps.dim}]"
                        )
                    maps.weight(lang, layer).copy_(t)
        return maps
