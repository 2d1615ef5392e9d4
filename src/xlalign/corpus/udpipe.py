"""UDPipe models: where the paper's ones come from, and how to train a small real one offline.

The paper tokenises 27 of its languages with UDPipe through spacy-udpipe, whose UD 2.5
models live on LINDAT. :func:`model_filename` and :func:`model_url` read spacy-udpipe's
own language table so a download rule fetches exactly the file spacy-udpipe would; nothing
is downloaded here. Where LINDAT is unreachable, :func:`train_udpipe_model` trains a real
(small) model from CoNLL-U text, e.g. the Turkish treebank of the ``turkish-treebanks``
package (:func:`turkish_treebank_path`).
"""

from __future__ import annotations

import importlib.util
import json
import logging
from functools import cache
from pathlib import Path

from xlalign.core.errors import InputError, ToolError
from xlalign.core.formats import conllu as conllu_format
from xlalign.core.io import PathLike, atomic_open

log = logging.getLogger(__name__)

#: LINDAT handle of the UD 2.5 UDPipe models (the value spacy-udpipe 1.0.0 downloads from).
UD25_BASE_URL = "https://lindat.mff.cuni.cz/repository/xmlui/bitstream/handle/11234/1-3131"

#: Tiny training options: a real model (tokenizer, tagger, parser) in seconds, not hours.
#: spacy-udpipe needs the tagger and parser too: a tokenizer-only model fails with E190.
FAST_TOKENIZER_OPTS = "epochs=2"
FAST_TAGGER_OPTS = "models=1;templates_1=tagger;iterations_1=1"
FAST_PARSER_OPTS = "iterations=1;hidden_layer=20"


@cache
def _languages_table() -> dict[str, str]:
    """spacy-udpipe's ``languages.json`` (language code -> model file), read without
    importing spacy-udpipe (which would import spaCy)."""
    spec = importlib.util.find_spec("spacy_udpipe")
    if spec is None or not spec.submodule_search_locations:
        raise ToolError("spacy-udpipe is not installed: expected spacy-udpipe==1.0.0")
    table = Path(next(iter(spec.submodule_search_locations))) / "languages.json"
    try:
        data = json.loads(table.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ToolError(f"{table}: cannot read spacy-udpipe's language table ({exc})") from exc
    return {str(k): str(v) for k, v in data.items()}


def model_filename(lang: str) -> str:
    """The UD 2.5 model file spacy-udpipe uses for ``lang`` (e.g. ``en`` ->
    ``english-ewt-ud-2.5-191206.udpipe``); :class:`ToolError` if it has none."""
    table = _languages_table()
    try:
        return table[lang]
    except KeyError:
        raise ToolError(
            f"language {lang!r}: spacy-udpipe has no UDPipe model for it; expected one of "
            f"{', '.join(sorted(k for k in table if '-' not in k))}"
        ) from None


def model_url(lang: str, base_url: str | None = None) -> str:
    """Download URL of the model for ``lang`` under ``base_url`` (default: LINDAT UD 2.5)."""
    base = (base_url or UD25_BASE_URL).rstrip("/")
    return f"{base}/{model_filename(lang)}"


# ---------------------------------------------------------------------------- CoNLL-U


def read_conllu_blocks(path: PathLike, *, max_sentences: int | None = None) -> list[str]:
    """The sentence blocks of a (possibly compressed) CoNLL-U file, in file order.

    A block is the text of one sentence (comments and token lines) without the blank line
    that ends it. Stops after ``max_sentences`` blocks when given. The file is read and
    checked by the project's one CoNLL-U reader (:mod:`xlalign.core.formats.conllu`).
    """
    return [
        conllu_format.format_sentence(s)
        for s in conllu_format.iter_conllu(path, max_sentences=max_sentences)
    ]


def turkish_treebank_path(section: str = "wiki") -> Path:
    """Path of a CoNLL-U file (``wiki`` or ``web``) of the installed ``turkish-treebanks``."""
    from importlib import metadata

    if section not in ("wiki", "web"):
        raise ValueError(f"section must be 'wiki' or 'web', not {section!r}")
    try:
        dist = metadata.distribution("turkish-treebanks")
    except metadata.PackageNotFoundError:
        raise ToolError(
            "the Turkish treebank needs the package turkish-treebanks==1.0.0 (dev extra)"
        ) from None
    path = Path(str(dist.locate_file(f"data/{section}.conllu")))
    if not path.is_file():
        raise ToolError(f"{path}: turkish-treebanks is installed but its {section} file is not")
    return path


#: The treebank's old Google universal tags that UD v2 (and spaCy) name differently.
_GOOGLE_TO_UD_POS = {"CONJ": "CCONJ", "PRT": "PART", "ONOM": "INTJ", "AFFIX": "X"}


def turkish_treebank_blocks(
    max_sentences: int | None = None, *, section: str = "wiki"
) -> list[str]:
    """CoNLL-U blocks of the ``turkish-treebanks`` package with UD v2 part-of-speech tags.

    The treebank uses the old Google tags (``CONJ``, ``PRT``, ``ONOM``, ``AFFIX``); spaCy
    rejects them in a ``Doc``, so a model trained on them would break spacy-udpipe's
    full pipeline. They are renamed here (``CCONJ``, ``PART``, ``INTJ``, ``X``).
    """
    out = []
    for block in read_conllu_blocks(turkish_treebank_path(section), max_sentences=max_sentences):
        lines = []
        for line in block.split("\n"):
            cols = line.split("\t")
            if len(cols) == 10 and cols[3] in _GOOGLE_TO_UD_POS:
                cols[3] = _GOOGLE_TO_UD_POS[cols[3]]
                line = "\t".join(cols)
            lines.append(line)
        out.append("\n".join(lines))
    return out


def _load_sentences(conllu: PathLike | list[str], what: str):  # -> ufal.udpipe.Sentences
    from ufal.udpipe import InputFormat, ProcessingError, Sentence, Sentences

    if isinstance(conllu, list):
        where = f"{what} (list of {len(conllu)} CoNLL-U blocks)"
        text = "\n\n".join(block.strip("\n") for block in conllu) + "\n\n"
    else:
        where = f"{conllu}"
        text = "\n\n".join(read_conllu_blocks(conllu)) + "\n\n"
    reader = InputFormat.newConlluInputFormat()
    reader.setText(text)
    sentences = Sentences()
    error = ProcessingError()
    sentence = Sentence()
    while reader.nextSentence(sentence, error):
        sentences.append(sentence)
        sentence = Sentence()
    if error.occurred():
        raise InputError(f"{where}: invalid CoNLL-U: {error.message}")
    if len(sentences) == 0:
        raise InputError(f"{where}: no sentences; expected CoNLL-U text")
    return sentences


def train_udpipe_model(
    conllu: PathLike | list[str],
    out_path: PathLike,
    *,
    tokenizer_opts: str = FAST_TOKENIZER_OPTS,
    tagger_opts: str = FAST_TAGGER_OPTS,
    parser_opts: str = FAST_PARSER_OPTS,
    heldout: PathLike | list[str] | None = None,
) -> Path:
    """Train a UDPipe 1 model (tokenizer, tagger, parser) and write it atomically.

    ``conllu`` (and ``heldout``) is a CoNLL-U file or a list of CoNLL-U sentence blocks.
    The defaults train a small but real model in seconds; pass UDPipe's own option
    strings for a better one. The tokenizer learns from the ``# text`` comments and the
    ``SpaceAfter=No`` marks, so those should be present.
    """
    from ufal.udpipe import ProcessingError, Sentences, Trainer

    train = _load_sentences(conllu, "training data")
    dev = _load_sentences(heldout, "heldout data") if heldout is not None else Sentences()
    log.info("training a UDPipe model on %d sentences -> %s", len(train), out_path)
    error = ProcessingError()
    model = Trainer.train(
        "morphodita_parsito", train, dev, tokenizer_opts, tagger_opts, parser_opts, error
    )
    if error.occurred() or not model:
        raise ToolError(f"{out_path}: UDPipe training failed: {error.message or 'empty model'}")
    data = model if isinstance(model, bytes) else model.encode("latin-1")
    with atomic_open(out_path, "wb") as fh:
        fh.write(data)
    return Path(out_path)
