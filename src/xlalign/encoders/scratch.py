"""Small BERT encoders trained from scratch: a WordPiece tokenizer and a randomly
initialised ``BertForMaskedLM``.

No monolingual checkpoint of a size that runs on 2 cores exists offline, so the derived-
language experiment (001) and meta-pretraining (004) start from a model of their own:
:func:`train_tokenizer` learns a WordPiece vocabulary (BERT's format: ``[PAD] [UNK] [CLS]
[SEP] [MASK]`` at ids 0-4, ``##`` continuation pieces, ``[CLS] x [SEP]`` /
``[CLS] a [SEP] b [SEP]`` templates), :func:`init_encoder` saves a randomly initialised
masked-LM model with it as an ordinary ``transformers`` checkpoint directory. The model has
its own MLM head (output layer tied to the input embeddings), so
:func:`xlalign.pretrain.heads.load_masked_lm` reports ``head="pretrained"`` and no head
warm-up runs; ``AutoModel`` loads the encoder for fine-tuning and retrieval.

Pre-tokenizers (``pre_tokenizer``):

* ``"bert"``: NFKC, then BERT's normaliser (control characters removed, whitespace
  unified, every CJK ideograph its own word, accents kept, lowercased only with
  ``lowercase=True``), then BERT's pre-tokenizer (split at whitespace and punctuation).
  NFKC folds compatibility forms (full-width Latin letters and digits of Chinese and
  Japanese text, ligatures) onto their ordinary forms, so the languages share those pieces.
* ``"whitespace"``: words are the whitespace-separated strings exactly as written: no
  normaliser, punctuation stays attached, case kept (``lowercase`` must be False). The
  derived languages need characters to reach WordPiece unchanged
  (:mod:`xlalign.derived.vocab`).
"""

from __future__ import annotations

import dataclasses
import heapq
import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, atomic_dir, write_json

log = logging.getLogger(__name__)

#: BERT's special tokens, in id order (0..4) of a tokenizer from :func:`train_tokenizer`.
SPECIAL_TOKENS: tuple[str, ...] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
#: WordPiece's continuation prefix.
CONTINUATION = "##"
PRE_TOKENIZERS = ("bert", "whitespace")


@dataclasses.dataclass
class ScratchArch:
    """Size of a from-scratch BERT (BERT-base is 12 / 768 / 12 / 3072 / 512)."""

    layers: int = 4
    hidden: int = 128
    heads: int = 2
    intermediate: int = 512
    max_position: int = 128

    def check(self) -> ScratchArch:
        """Raise :class:`ConfigError` naming the key of an impossible size; return self."""
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"arch.{f.name}: expected a positive integer, got {v!r}")
        if self.hidden % self.heads:
            raise ConfigError(
                f"arch.hidden ({self.hidden}) must be a multiple of arch.heads ({self.heads})"
            )
        if self.max_position < 4:
            raise ConfigError(
                f"arch.max_position: {self.max_position}; expected >= 4 (room for [CLS] and "
                "[SEP] around a text)"
            )
        return self


def _backend(pre_tokenizer: str, lowercase: bool) -> Any:
    """An empty ``tokenizers.Tokenizer`` with the normaliser, pre-tokenizer and decoder of
    ``pre_tokenizer`` (module docstring)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

    if pre_tokenizer not in PRE_TOKENIZERS:
        raise ConfigError(f"pre_tokenizer: {pre_tokenizer!r}; expected one of {PRE_TOKENIZERS}")
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", continuing_subword_prefix=CONTINUATION))
    if pre_tokenizer == "bert":
        tok.normalizer = normalizers.Sequence(
            [
                normalizers.NFKC(),
                normalizers.BertNormalizer(
                    clean_text=True,
                    handle_chinese_chars=True,
                    strip_accents=False,
                    lowercase=lowercase,
                ),
            ]
        )
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    else:
        if lowercase:
            raise ConfigError(
                "lowercase: the 'whitespace' pre-tokenizer has no normaliser (characters "
                "reach WordPiece unchanged); expected lowercase=False"
            )
        tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix=CONTINUATION)
    return tok


def word_counts(texts: Iterable[str], backend: Any) -> Counter[str]:
    """How often each word occurs in ``texts``, words as ``backend``'s normaliser and
    pre-tokenizer make them."""
    norm, pre = backend.normalizer, backend.pre_tokenizer
    counts: Counter[str] = Counter()
    for text in texts:
        if norm is not None:
            text = norm.normalize_str(text)
        counts.update(w for w, _ in pre.pre_tokenize_str(text))
    return counts


def learn_wordpiece(
    counts: Mapping[str, int], *, vocab_size: int, min_frequency: int = 2
) -> list[str]:
    """The pieces of a WordPiece vocabulary learnt from word counts, in id order: the
    specials, the alphabet, then merged pieces in merge order.

    The procedure of ``tokenizers``' WordPieceTrainer (BPE merges with a continuation
    prefix): every word starts as its first character followed by ``##``-prefixed
    characters; the alphabet is every such symbol (when it would not fit in
    ``vocab_size``, the most frequent ones, and words with a dropped symbol take no part in
    merging: WordPiece makes them ``[UNK]``); then, until ``vocab_size`` pieces exist, the
    adjacent pair of symbols occurring most often (counts weighted by word frequency) is
    merged everywhere (``a`` + ``##b`` -> ``ab``, ``##a`` + ``##b`` -> ``##ab``); it stops
    when the best pair occurs fewer than ``min_frequency`` times. Reimplemented because
    that trainer numbers the continuation symbols in hash-map order, so equal-count pairs
    are merged in a different order from one run to the next (other pieces, not only other
    ids); here ties go to the smallest ``(left, right)`` in string order and the alphabet is
    sorted, so the same counts always give the same vocabulary.
    """
    specials = list(SPECIAL_TOKENS)
    words: list[tuple[list[str], int]] = []
    symbol_freq: Counter[str] = Counter()
    for word in sorted(counts):
        n = int(counts[word])
        if not word or n <= 0:
            continue
        symbols = [word[0]] + [CONTINUATION + ch for ch in word[1:]]
        words.append((symbols, n))
        for sym in symbols:
            symbol_freq[sym] += n
    budget = vocab_size - len(specials)
    alphabet = sorted(symbol_freq, key=lambda s: (-symbol_freq[s], s))
    if len(alphabet) > budget:
        log.warning(
            "WordPiece: %d symbols do not fit in %d pieces; the %d rarest become [UNK]",
            len(alphabet),
            vocab_size,
            len(alphabet) - budget,
        )
        alphabet = alphabet[:budget]
    kept = set(alphabet) - set(specials)
    vocab = specials + sorted(kept)
    known = set(vocab)
    words = [(syms, n) for syms, n in words if all(s in kept for s in syms)]

    pair_count: dict[tuple[str, str], int] = defaultdict(int)
    where: dict[tuple[str, str], set[int]] = defaultdict(set)
    for i, (syms, n) in enumerate(words):
        for pair in pairwise(syms):
            pair_count[pair] += n
            where[pair].add(i)
    heap = [(-c, a, b) for (a, b), c in pair_count.items()]
    heapq.heapify(heap)
    while len(vocab) < vocab_size and heap:
        neg, a, b = heapq.heappop(heap)
        if pair_count.get((a, b), 0) != -neg or -neg <= 0:
            continue  # a stale entry: the pair's count changed since it was pushed
        if -neg < min_frequency:
            break
        merged = a + b[len(CONTINUATION) :]
        if merged not in known:
            known.add(merged)
            vocab.append(merged)
        changed: set[tuple[str, str]] = set()
        for i in sorted(where.pop((a, b), ())):
            syms, n = words[i]
            out: list[str] = []
            k = 0
            while k < len(syms):
                if k + 1 < len(syms) and syms[k] == a and syms[k + 1] == b:
                    out.append(merged)
                    k += 2
                else:
                    out.append(syms[k])
                    k += 1
            old = Counter(pairwise(syms))
            new = Counter(pairwise(out))
            for pair in old.keys() | new.keys():
                delta = new[pair] - old[pair]
                if delta:
                    pair_count[pair] += delta * n
                    changed.add(pair)
                if pair in new:
                    where[pair].add(i)
                elif pair in where:
                    where[pair].discard(i)
            words[i] = (out, n)
        pair_count.pop((a, b), None)
        for pair in sorted(changed):
            c = pair_count.get(pair, 0)
            if c > 0:
                heapq.heappush(heap, (-c, pair[0], pair[1]))
            else:
                pair_count.pop(pair, None)
    return vocab


def train_tokenizer(
    texts: Iterable[str],
    *,
    vocab_size: int,
    pre_tokenizer: Literal["bert", "whitespace"] = "bert",
    min_frequency: int = 2,
    lowercase: bool = False,
) -> Any:
    """A BERT-style WordPiece tokenizer (``PreTrainedTokenizerFast``) learnt on ``texts``
    (module docstring; vocabulary by :func:`learn_wordpiece`), at most ``vocab_size``
    pieces including the 5 specials (fewer when no pair occurs ``min_frequency`` times).

    Deterministic: the same texts give the same vocabulary and ids. No text, or a
    ``vocab_size`` too small for the specials, raises.
    """
    from tokenizers import Tokenizer, models, processors
    from transformers import PreTrainedTokenizerFast

    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise ConfigError(f"vocab_size: expected an integer, got {vocab_size!r}")
    if vocab_size <= len(SPECIAL_TOKENS):
        raise ConfigError(
            f"vocab_size: {vocab_size}; expected more than the {len(SPECIAL_TOKENS)} special tokens"
        )
    if min_frequency < 1:
        raise ConfigError(f"min_frequency: {min_frequency}; expected >= 1")
    backend = _backend(pre_tokenizer, lowercase)
    counts = word_counts((t for t in texts if t and t.strip()), backend)
    if not counts:
        raise InputError("train_tokenizer: no text to learn a vocabulary from")
    pieces = learn_wordpiece(counts, vocab_size=vocab_size, min_frequency=min_frequency)
    trained = Tokenizer(
        models.WordPiece(
            {p: i for i, p in enumerate(pieces)},
            unk_token="[UNK]",
            continuing_subword_prefix=CONTINUATION,
        )
    )
    trained.normalizer = backend.normalizer
    trained.pre_tokenizer = backend.pre_tokenizer
    trained.decoder = backend.decoder
    trained.add_special_tokens(list(SPECIAL_TOKENS))
    cls, sep = trained.token_to_id("[CLS]"), trained.token_to_id("[SEP]")
    trained.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    out = PreTrainedTokenizerFast(
        tokenizer_object=trained,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )
    log.info(
        "WordPiece vocabulary: %d pieces (%s pre-tokenizer) from %d word types",
        len(out),
        pre_tokenizer,
        len(counts),
    )
    return out


def bert_config(vocab_size: int, arch: ScratchArch, *, pad_token_id: int = 0) -> Any:
    """The ``BertConfig`` of ``arch`` over ``vocab_size`` pieces (BERT's other defaults:
    GELU, dropout 0.1, 2 token types, initializer range 0.02, tied output embeddings)."""
    from transformers import BertConfig

    arch.check()
    return BertConfig(
        vocab_size=int(vocab_size),
        hidden_size=arch.hidden,
        num_hidden_layers=arch.layers,
        num_attention_heads=arch.heads,
        intermediate_size=arch.intermediate,
        max_position_embeddings=arch.max_position,
        type_vocab_size=2,
        pad_token_id=int(pad_token_id),
        tie_word_embeddings=True,
    )


def fresh_masked_lm(config: Any, *, seed: int) -> Any:
    """A masked-LM model of ``config`` (``AutoModelForMaskedLM``: BERT for
    :func:`bert_config`) with random weights drawn from torch seeded with ``seed``: the same
    seed gives the same weights. The global torch generator is left as it was."""
    import torch
    from transformers import AutoModelForMaskedLM

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        model = AutoModelForMaskedLM.from_config(config)
    model.eval()
    return model


def save_checkpoint(
    model: Any, tokenizer: Any, out_dir: PathLike, *, records: Mapping[str, Any] | None = None
) -> Path:
    """``model`` and ``tokenizer`` as a ``transformers`` checkpoint directory, plus one
    JSON file per entry of ``records`` (file name -> object), atomically: written into a
    temporary sibling, then renamed onto ``out_dir``."""
    out = Path(out_dir)
    with atomic_dir(out) as tmp:
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        for name, obj in (records or {}).items():
            write_json(tmp / name, obj)
    return out


def init_encoder(tokenizer: Any, out_dir: PathLike, *, arch: ScratchArch, seed: int) -> Path:
    """Save a randomly initialised ``BertForMaskedLM`` of ``arch`` over the vocabulary of
    ``tokenizer`` (torch seeded with ``seed``), with the tokenizer, into ``out_dir``; the
    tokenizer's ``model_max_length`` becomes ``arch.max_position``. Returns ``out_dir``."""
    arch.check()
    if tokenizer.pad_token_id is None or tokenizer.mask_token_id is None:
        raise InputError(
            f"tokenizer {getattr(tokenizer, 'name_or_path', '?')!r}: no padding or mask "
            "token; expected a tokenizer from train_tokenizer"
        )
    tokenizer.model_max_length = arch.max_position
    config = bert_config(len(tokenizer), arch, pad_token_id=tokenizer.pad_token_id)
    model = fresh_masked_lm(config, seed=seed)
    return save_checkpoint(model, tokenizer, out_dir)


def build_scratch_encoder(
    texts: Iterable[str],
    out_dir: PathLike,
    *,
    vocab_size: int,
    arch: ScratchArch,
    seed: int,
    pre_tokenizer: Literal["bert", "whitespace"] = "bert",
) -> Path:
    """:func:`train_tokenizer` on ``texts`` then :func:`init_encoder` into ``out_dir``."""
    tokenizer = train_tokenizer(texts, vocab_size=vocab_size, pre_tokenizer=pre_tokenizer)
    return init_encoder(tokenizer, out_dir, arch=arch, seed=seed)
