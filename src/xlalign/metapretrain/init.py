"""A cross-lingual masked-LM model initialised from a monolingual (meta-pretrained) one:
004 section 3.2 and the variants of section 5.5 / Table 5.

The cross-lingual model has the monolingual model's architecture and the cross-lingual
vocabulary. Every weight is first drawn at random (seeded, as
:func:`xlalign.encoders.scratch.fresh_masked_lm` draws a new model), then:

* ``body`` (004's "Transformer body"): every weight whose shape does not depend on the
  vocabulary is copied: the Transformer layers, the position and token-type embeddings
  and the embedding LayerNorm, and the MLM head's transform (dense + LayerNorm). 004 calls
  the two components of Table 5 "the Transformer body and the word embeddings" and its
  "Both" row is METAXLM, which initialises everything it can, so everything but the word
  embeddings belongs to the body here.
* ``embeddings`` (004's "word embeddings"): the rows of the word-embedding matrix of the
  cross-lingual pieces that :func:`xlalign.metapretrain.vocab_match.match_vocabularies`
  matched are copied from the monolingual rows they matched, and so are those rows of the
  MLM output bias (and of the output matrix when it is not tied to the embeddings).

The four combinations are 004 Table 5's rows ``none``, ``body``, ``emb`` and ``both``
(``+dict`` when bilingual dictionaries extend the matching).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike
from xlalign.metapretrain.vocab_match import VocabMatch, match_vocabularies

log = logging.getLogger(__name__)

#: The JSON record written beside the initialised checkpoint.
RECORD = "xlalign-init.json"


def variant_name(*, body: bool, embeddings: bool, dictionaries: bool = False) -> str:
    """004 Table 5's row name: ``none``, ``body``, ``emb`` or ``both`` (``+dict`` when
    dictionaries extended the matched embeddings)."""
    name = {(False, False): "none", (True, False): "body", (False, True): "emb"}.get(
        (body, embeddings), "both"
    )
    return f"{name}+dict" if dictionaries and embeddings else name


def vocabulary_tensors(model: Any) -> dict[str, str]:
    """Names (in ``model.state_dict()``) of the vocabulary-sized tensors: ``input`` (word
    embeddings), ``output`` (the MLM output matrix, absent when tied to the input) and
    ``bias`` (the MLM output bias, when there is one)."""
    ids = {id(t): name for name, t in model.named_parameters(remove_duplicate=False)}
    emb = model.get_input_embeddings()
    out = model.get_output_embeddings()
    names: dict[str, str] = {"input": ids[id(emb.weight)]}
    if out is not None:
        if out.weight is not emb.weight:
            names["output"] = ids[id(out.weight)]
        bias = getattr(out, "bias", None)
        if bias is not None:
            names["bias"] = ids[id(bias)]
    return names


def _vocab_names(model: Any) -> set[str]:
    """Every state-dict name of a vocabulary-sized tensor (tied copies included)."""
    targets = {id(t) for t in _vocab_tensor_objects(model)}
    return {n for n, t in model.named_parameters(remove_duplicate=False) if id(t) in targets}


def _vocab_tensor_objects(model: Any) -> list[Any]:
    emb = model.get_input_embeddings()
    out = model.get_output_embeddings()
    found = [emb.weight]
    if out is not None:
        found.append(out.weight)
        if getattr(out, "bias", None) is not None:
            found.append(out.bias)
    return found


def copy_body(source: Any, target: Any) -> list[str]:
    """Copy every parameter and buffer of ``source`` into ``target`` except the
    vocabulary-sized ones (module docstring: the body); returns the names copied, sorted.
    A shape mismatch (another architecture) raises :class:`ConfigError`."""
    import torch

    skip = _vocab_names(target) | _vocab_names(source)
    src = source.state_dict()
    copied: list[str] = []
    with torch.no_grad():
        for name, tensor in target.state_dict().items():
            if name in skip:
                continue
            if name not in src or src[name].shape != tensor.shape:
                raise ConfigError(
                    f"the monolingual model has no weight {name!r} of shape "
                    f"{tuple(tensor.shape)}; expected the same architecture"
                )
            tensor.copy_(src[name])
            copied.append(name)
    return sorted(copied)


def copy_rows(source: Any, target: Any, pairs: list[tuple[int, int]]) -> int:
    """Copy, for each ``(target id, source id)``, the source's row into the target's word
    embeddings, MLM output bias and untied output matrix; returns the rows copied."""
    import torch

    if not pairs:
        return 0
    dst = torch.tensor([t for t, _ in pairs], dtype=torch.long)
    src = torch.tensor([s for _, s in pairs], dtype=torch.long)
    s_names, t_names = vocabulary_tensors(source), vocabulary_tensors(target)
    s_state = dict(source.named_parameters(remove_duplicate=False))
    t_state = dict(target.named_parameters(remove_duplicate=False))
    with torch.no_grad():
        for kind, t_name in t_names.items():
            s_name = s_names.get(kind)
            if s_name is None and kind == "output":
                s_name = s_names["input"]  # a tied source: its output matrix is the embeddings
            if s_name is None:
                continue
            t_state[t_name][dst] = s_state[s_name][src].to(t_state[t_name].dtype)
    return len(pairs)


def initialise_cross_lingual(
    mono_dir: PathLike,
    cross_tokenizer: Any,
    out_dir: PathLike,
    *,
    body: bool,
    embeddings: bool,
    dictionaries: Mapping[str, Mapping[str, list[str]]] | None = None,
    seed: int,
) -> dict[str, Any]:
    """Build the cross-lingual model of one Table 5 variant from the checkpoint at
    ``mono_dir`` (module docstring) over ``cross_tokenizer``'s vocabulary, and save it with
    the tokenizer and :data:`RECORD` into ``out_dir`` atomically. Returns the record:
    ``variant``, ``counts`` (embedding rows initialised per rule: all ``fresh`` without
    ``embeddings``), ``vocabulary_match`` (what the matching found), ``rows_initialised``,
    ``body_params_copied`` (tensors) and ``body_values_copied`` (numbers)."""
    import copy

    from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer

    from xlalign.encoders.scratch import fresh_masked_lm, save_checkpoint

    mono_path = Path(mono_dir)
    if not (mono_path / "config.json").is_file():
        raise InputError(f"{mono_path}: not a transformers checkpoint (no config.json)")
    mono_tok = AutoTokenizer.from_pretrained(str(mono_path), local_files_only=True)
    mono = AutoModelForMaskedLM.from_pretrained(str(mono_path), local_files_only=True)
    mono.eval()
    if cross_tokenizer.pad_token_id is None:
        raise InputError(
            f"tokenizer {getattr(cross_tokenizer, 'name_or_path', '?')!r}: no padding token"
        )
    config = copy.deepcopy(AutoConfig.from_pretrained(str(mono_path), local_files_only=True))
    config.vocab_size = len(cross_tokenizer)
    config.pad_token_id = int(cross_tokenizer.pad_token_id)
    model = fresh_masked_lm(config, seed=int(seed))

    match: VocabMatch = match_vocabularies(
        cross_tokenizer.get_vocab(), mono_tok.get_vocab(), dictionaries=dictionaries
    )
    body_names = copy_body(mono, model) if body else []
    state = model.state_dict()
    body_values = sum(int(state[n].numel()) for n in body_names)
    rows = copy_rows(mono, model, match.pairs()) if embeddings else 0
    found = match.counts()
    counts = found if embeddings else {**dict.fromkeys(found, 0), "fresh": found["total"]}
    counts["total"] = found["total"]
    record = {
        "variant": variant_name(body=body, embeddings=embeddings, dictionaries=bool(dictionaries)),
        "body": bool(body),
        "embeddings": bool(embeddings),
        "dictionaries": sorted(dictionaries or {}),
        "seed": int(seed),
        "mono": str(mono_path),
        "vocabulary": {"cross": len(cross_tokenizer), "mono": len(mono_tok)},
        "counts": counts,
        "vocabulary_match": found,
        "rows_initialised": rows,
        "body_params_copied": len(body_names),
        "body_values_copied": body_values,
        "body_params": body_names,
    }
    cross_tokenizer.model_max_length = mono_tok.model_max_length
    out = save_checkpoint(model, cross_tokenizer, out_dir, records={RECORD: record})
    log.info(
        "%s: variant %s, %d embedding rows and %d body tensors from %s",
        out,
        record["variant"],
        rows,
        len(body_names),
        mono_path,
    )
    return record
