"""Tiny random encoders for tests, built on the spot (no real encoder, no network).

- :func:`make_tiny_encoder`: a WordPiece tokenizer covering given texts (whole words and
  single characters), for workflow and CLI runs on small corpora.
- :func:`make_fixed_vocab_encoder`: a hand-written WordPiece vocabulary (:data:`TINY_VOCAB`)
  whose subword splits are known, with :func:`reference_vectors`, the brute-force word
  vectors of the full model, for the contextual, teacher and aggregation unit tests.
- :func:`make_static_world`: a corpus file, its vocabulary and that encoder, the inputs of
  the teacher, aggregation and learning-curve unit tests.
- :func:`make_arch_encoder`: a tiny random model of one of :data:`ARCHITECTURES` (BERT,
  XLM-R, DistilBERT, DeBERTa-v2, ELECTRA, ModernBERT) with a fast tokenizer of that
  architecture's kind and special tokens, for tests/encoders/test_architectures.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

#: WordPiece vocabulary of :func:`make_fixed_vocab_encoder` (ids = positions).
TINY_VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
    "the", "cat", "dog", "sat", "on", "mat", "a", "big", "small", "red", "sun",
    "moon", "run", "ran", "and", "un", "##believ", "##able", "##s", "##ing", ".", ",",
]  # fmt: skip
TINY_LAYERS = 3
TINY_DIM = 16


def make_tiny_encoder(out_dir: Path, texts: Iterable[str], *, layers: int = 2) -> Path:
    """Write a loadable checkpoint (config, weights, tokenizer) into ``out_dir``."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words: set[str] = set()
    chars: set[str] = set()
    for text in texts:
        for w in text.lower().split():
            words.add(w)
            chars.update(w)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = sorted(chars) + [f"##{c}" for c in sorted(chars)]
    vocab = specials + pieces + sorted(w for w in words if len(w) > 1)[:500]
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    # transformers 5 reads the vocabulary from ``vocab`` (a path or a dict) and silently
    # ignores ``vocab_file``, which left a tokenizer of the five special tokens only
    tok = BertTokenizerFast(vocab=str(out_dir / "vocab.txt"), do_lower_case=True)
    tok.save_pretrained(out_dir)
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=256,
    )
    BertModel(cfg, add_pooling_layer=False).save_pretrained(out_dir)
    return out_dir


def make_fixed_vocab_encoder(path: Path, *, seed: int = 0) -> Path:
    """Write a random 3-layer BertModel and a lowercasing WordPiece tokenizer over
    :data:`TINY_VOCAB` to ``path``."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(TINY_VOCAB),
        hidden_size=TINY_DIM,
        num_hidden_layers=TINY_LAYERS,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    BertModel(config, add_pooling_layer=False).save_pretrained(path)
    tok = BertTokenizer(vocab={w: i for i, w in enumerate(TINY_VOCAB)}, do_lower_case=True)
    tok.model_max_length = 64
    tok.save_pretrained(path)
    return path


def reference_vectors(
    encoder_dir: Path, words: list[str], layer: int, pooling: str = "mean"
) -> np.ndarray:
    """Brute force: the *full* model on one sentence, ``hidden_states[layer]``, pooled by hand."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(encoder_dir, local_files_only=True)
    model = AutoModel.from_pretrained(encoder_dir, local_files_only=True).eval()
    enc = tok([words], is_split_into_words=True, return_tensors="pt")
    with torch.inference_mode():
        hidden = model(**enc, output_hidden_states=True).hidden_states[layer][0].numpy()
    wid = enc.word_ids(0)
    out = np.full((len(words), hidden.shape[1]), np.nan, dtype=np.float32)
    for j in range(len(words)):
        rows = [t for t, w in enumerate(wid) if w == j]
        if rows:
            pick = {"mean": rows, "first": rows[:1], "last": rows[-1:]}[pooling]
            out[j] = hidden[pick].mean(axis=0)
    return out


def make_static_world(out_dir: Path, corpus: list[str]) -> dict[str, Path]:
    """``corpus`` as ``xx.txt`` (a line each), its vocabulary (``build_vocab`` with
    ``min_count=1``) as ``vocab.tsv`` and :func:`make_fixed_vocab_encoder` as ``enc``."""
    from xlalign.corpus.vocab import build_vocab, write_vocab

    txt = out_dir / "xx.txt"
    txt.write_text("".join(line + "\n" for line in corpus), encoding="utf-8")
    vocab = out_dir / "vocab.tsv"
    write_vocab(build_vocab(txt, min_count=1, max_size=None, language="xx"), vocab)
    return {"txt": txt, "vocab": vocab, "enc": make_fixed_vocab_encoder(out_dir / "enc")}


# --------------------------------------------------------------------------- architectures

#: The architectures :func:`make_arch_encoder` builds (Hugging Face ``model_type`` names).
ARCHITECTURES = ("bert", "xlm-roberta", "distilbert", "deberta-v2", "electra", "modernbert")
#: Whole words of the tiny tokenizers (other words split into characters / bytes).
ARCH_WORDS = [
    "the", "cat", "dog", "sat", "on", "mat", "a", "big", "small", "red", "sun", "moon",
    "run", "ran", "and", "house", "die", "der", "hund", "katze", "haus", "ein",
]  # fmt: skip
ARCH_LAYERS = 3
ARCH_DIM = 32
_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'-()\"äöüß"


def _wordpiece(specials: dict[str, str]) -> tuple[object, list[str]]:
    """A lowercasing BERT-style WordPiece tokenizer: ``[CLS] $A [SEP]`` (pair: ``$B:1``)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    pieces = list(dict.fromkeys([*specials.values(), *_CHARS, *("##" + c for c in _CHARS)]))
    pieces += [w for w in ARCH_WORDS if w not in pieces] + ["##ing", "##s", "##able"]
    vocab = {p: i for i, p in enumerate(pieces)}
    tok = Tokenizer(models.WordPiece(vocab, unk_token=specials["unk"]))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls, sep = specials["cls"], specials["sep"]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}",
        pair=f"{cls} $A {sep} $B:1 {sep}:1",
        special_tokens=[(cls, vocab[cls]), (sep, vocab[sep])],
    )
    return tok, pieces


def _unigram(specials: dict[str, str], pair: str) -> tuple[object, list[str]]:
    """A SentencePiece-style Unigram tokenizer (``▁`` word starts, Metaspace), as XLM-R's
    and mDeBERTa's; ``pair`` is ``"roberta"`` (``<s> A </s></s> B </s>``) or ``"bert"``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    order = ("pad", "cls", "sep", "unk") if pair == "bert" else ("cls", "pad", "sep", "unk")
    pieces = [specials[k] for k in order]
    body = ["▁" + w for w in ARCH_WORDS] + ["▁", *_CHARS, "ing", "s", "able"]
    pieces += list(dict.fromkeys(body))
    pieces.append(specials["mask"])
    scores = [(p, 0.0 if i < 4 or p == specials["mask"] else -1.0 - len(p) ** -1)
              for i, p in enumerate(pieces)]  # fmt: skip
    tok = Tokenizer(models.Unigram(scores, unk_id=pieces.index(specials["unk"])))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    cls, sep = specials["cls"], specials["sep"]
    ids = [(cls, pieces.index(cls)), (sep, pieces.index(sep))]
    if pair == "roberta":
        tok.post_processor = processors.TemplateProcessing(
            single=f"{cls} $A {sep}", pair=f"{cls} $A {sep} {sep} $B {sep}", special_tokens=ids
        )
    else:
        tok.post_processor = processors.TemplateProcessing(
            single=f"{cls} $A {sep}", pair=f"{cls} $A {sep} $B:1 {sep}:1", special_tokens=ids
        )
    return tok, pieces


def _byte_bpe(specials: dict[str, str]) -> tuple[object, list[str]]:
    """A GPT-style byte-level BPE (ModernBERT's kind) with merges making :data:`ARCH_WORDS`
    whole ``Ġword`` pieces, and BERT's ``[CLS] $A [SEP]`` template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    pieces = list(specials.values()) + alphabet
    merges: list[tuple[str, str]] = []
    for w in ARCH_WORDS:
        chars = ["Ġ", *w]  # ByteLevel's space
        cur = chars[0]
        for c in chars[1:]:
            if cur + c not in pieces:
                merges.append((cur, c))
                pieces.append(cur + c)
            cur += c
    vocab = {p: i for i, p in enumerate(pieces)}
    tok = Tokenizer(models.BPE(vocab, merges, unk_token=specials["unk"]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    cls, sep = specials["cls"], specials["sep"]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}",
        pair=f"{cls} $A {sep} $B {sep}",
        special_tokens=[(cls, vocab[cls]), (sep, vocab[sep])],
    )
    return tok, pieces


_BERT_SPECIALS = {"pad": "[PAD]", "unk": "[UNK]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"}
_ROBERTA_SPECIALS = {"pad": "<pad>", "unk": "<unk>", "cls": "<s>", "sep": "</s>", "mask": "<mask>"}


def make_arch_encoder(path: Path, arch: str, *, seed: int = 0) -> Path:
    """Write a tiny random encoder of ``arch`` (one of :data:`ARCHITECTURES`: 3 layers,
    32 wide, no dropout) with a fast tokenizer of that architecture's kind and special
    tokens to ``path`` (no network).

    BERT, DistilBERT and ELECTRA: WordPiece with ``[CLS]``/``[SEP]``; XLM-R: a
    SentencePiece-style Unigram with ``<s>``/``</s>``/``<pad>``/``<mask>`` (padding index 1,
    so positions are offset as in RoBERTa); DeBERTa-v2: Unigram with ``[CLS]``/``[SEP]``
    and relative attention as mDeBERTa-v3 has it; ModernBERT: byte-level BPE with
    ``[CLS]``/``[SEP]``, rotary positions and its pre-norm layers with a final norm.
    """
    import torch
    import transformers as tf
    from transformers import PreTrainedTokenizerFast

    if arch not in ARCHITECTURES:
        raise ValueError(f"{arch!r}: expected one of {ARCHITECTURES}")
    specials = _ROBERTA_SPECIALS if arch == "xlm-roberta" else _BERT_SPECIALS
    if arch in ("bert", "distilbert", "electra"):
        tok_obj, pieces = _wordpiece(specials)
    elif arch == "xlm-roberta":
        tok_obj, pieces = _unigram(specials, "roberta")
    elif arch == "deberta-v2":
        tok_obj, pieces = _unigram(specials, "bert")
    else:
        tok_obj, pieces = _byte_bpe(specials)
    with_types = arch in ("bert", "electra", "deberta-v2")
    names = ["input_ids", "token_type_ids", "attention_mask"] if with_types else None
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tok_obj,
        **{f"{k}_token": v for k, v in specials.items()},
        model_input_names=names or ["input_ids", "attention_mask"],
        model_max_length=128,
    )
    ids = {k: pieces.index(v) for k, v in specials.items()}
    common = {"vocab_size": len(pieces), "pad_token_id": ids["pad"]}
    bert_like = {
        "hidden_size": ARCH_DIM, "num_hidden_layers": ARCH_LAYERS, "num_attention_heads": 2,
        "intermediate_size": 64, "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0, "max_position_embeddings": 128,
    }  # fmt: skip
    xlmr = {
        **bert_like, "max_position_embeddings": 128 + ids["pad"] + 1, "type_vocab_size": 1,
        "bos_token_id": ids["cls"], "eos_token_id": ids["sep"],
    }  # fmt: skip
    deberta = {
        **bert_like, "relative_attention": True, "position_buckets": 16,
        "max_relative_positions": -1, "pos_att_type": ["p2c", "c2p"],
        "norm_rel_ebd": "layer_norm", "share_att_key": True, "position_biased_input": False,
        "type_vocab_size": 0,
    }  # fmt: skip
    distil = {
        "dim": ARCH_DIM, "n_layers": ARCH_LAYERS, "n_heads": 2, "hidden_dim": 64,
        "dropout": 0.0, "attention_dropout": 0.0, "max_position_embeddings": 128,
    }  # fmt: skip
    modern = {
        "hidden_size": ARCH_DIM, "num_hidden_layers": ARCH_LAYERS, "num_attention_heads": 2,
        "intermediate_size": 64, "max_position_embeddings": 128, "bos_token_id": ids["cls"],
        "eos_token_id": ids["sep"], "cls_token_id": ids["cls"], "sep_token_id": ids["sep"],
        "global_attn_every_n_layers": 2, "local_attention": 8, "attention_dropout": 0.0,
        "mlp_dropout": 0.0, "embedding_dropout": 0.0,
    }  # fmt: skip
    classes, kwargs = {
        "bert": ((tf.BertConfig, tf.BertModel), bert_like),
        "xlm-roberta": ((tf.XLMRobertaConfig, tf.XLMRobertaModel), xlmr),
        "electra": ((tf.ElectraConfig, tf.ElectraModel), {**bert_like, "embedding_size": 8}),
        "deberta-v2": ((tf.DebertaV2Config, tf.DebertaV2Model), deberta),
        "distilbert": ((tf.DistilBertConfig, tf.DistilBertModel), distil),
        "modernbert": ((tf.ModernBertConfig, tf.ModernBertModel), modern),
    }[arch]
    torch.manual_seed(seed)
    model = classes[1](classes[0](**common, **kwargs))
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
