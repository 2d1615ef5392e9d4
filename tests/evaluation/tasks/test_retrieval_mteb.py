"""MTEB's bitext-mining scores (embeddings-benchmark/mteb's ``BitextMiningEvaluator``)
against a direct restatement of its definition: ``torch.topk(k=1)`` over float32 cosines
(queries: the non-English side), then scikit-learn's accuracy and weighted precision,
recall and F1 with ``zero_division=0``; duplicate English sentences (tied cosines, one row
retrieved by several queries) included. Then the option's path through a retrieval job
(prompt, pooling, which numbers carry MTEB's name) and the table; and LASER's Tatoeba
languages as xlalign names them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score
from tiny_encoder import make_tiny_encoder

from xlalign.core.errors import ConfigError
from xlalign.evaluation.tasks.data import RetrievalPair, write_records
from xlalign.evaluation.tasks.retrieval import (
    evaluate_mteb,
    mteb_bitext_scores,
    pooled_hidden_states,
)
from xlalign.evaluation.tasks.run import RetrievalSet, run_retrieval_sets


def mteb_restated(sentences1: np.ndarray, sentences2: np.ndarray) -> dict[str, float]:
    """MTEB's ``_compute_metrics`` as published: cos_sim (normalize, mm) in float32 in
    chunks of 100 queries, ``torch.topk(k=1, largest=True, sorted=False)``, gold = the
    query's own index, sklearn's metrics with ``average="weighted"`` (x100)."""
    import torch

    q = torch.nn.functional.normalize(torch.from_numpy(sentences1.astype(np.float32)), p=2, dim=1)
    c = torch.nn.functional.normalize(torch.from_numpy(sentences2.astype(np.float32)), p=2, dim=1)
    predictions: list[int] = []
    for start in range(0, len(q), 100):
        sims = torch.mm(q[start : start + 100], c.transpose(0, 1))
        _, idx = torch.topk(sims, 1, dim=1, largest=True, sorted=False)
        predictions += idx[:, 0].tolist()
    labels = list(range(len(q)))
    return {
        "precision": 100
        * precision_score(labels, predictions, zero_division=0, average="weighted"),
        "recall": 100 * recall_score(labels, predictions, zero_division=0, average="weighted"),
        "f1": 100 * f1_score(labels, predictions, zero_division=0, average="weighted"),
        "accuracy": 100 * accuracy_score(labels, predictions),
    }


def _compare(src: np.ndarray, tgt: np.ndarray) -> dict:
    ours = mteb_bitext_scores(src, tgt)
    ref = mteb_restated(src, tgt)
    for key in ("accuracy", "precision", "recall", "f1"):
        assert ours[key] == pytest.approx(ref[key], abs=1e-9), key
    assert ours["main_score"] == "f1"
    return ours


def test_hand_made_case_with_a_duplicate_english_sentence() -> None:
    # English rows 1 and 2 are the same sentence (identical vectors): queries 1 and 2
    # tie between them and both retrieve one of the two; query 3 retrieves row 0.
    tgt = np.array([[1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
    src = np.array([[1, 0.1, 0], [0.1, 1, 0], [0, 1, 0.1], [1, 0, 0.9]], dtype=np.float32)
    ours = _compare(src, tgt)
    # one of queries 1/2 is right (its row retrieved twice: precision 1/2, F1 2/3), the
    # other wrong; query 0 right but its row also retrieved by query 3 (F1 2/3); 3 wrong
    assert ours["accuracy"] == pytest.approx(50.0)
    assert ours["f1"] == pytest.approx(100 * (2 / 3 + 2 / 3) / 4)
    assert ours["precision"] == pytest.approx(100 * (1 / 2 + 1 / 2) / 4)
    assert ours["recall"] == ours["accuracy"]


def test_random_sets_with_duplicates_over_several_query_chunks() -> None:
    rng = np.random.default_rng(7)
    for n, dim in ((7, 4), (250, 16)):
        tgt = rng.normal(size=(n, dim)).astype(np.float32)
        tgt[n // 2] = tgt[1]  # a duplicate English sentence
        tgt[n - 1] = tgt[1]
        src = tgt + rng.normal(scale=0.9, size=tgt.shape).astype(np.float32)
        ours = _compare(src, tgt)
        if n == 250:
            assert 0 < ours["f1"] < ours["accuracy"] < 100


def test_mteb_refuses_mismatched_or_broken_vectors() -> None:
    from xlalign.core.errors import InputError

    with pytest.raises(InputError, match="must be"):
        mteb_bitext_scores(np.zeros((3, 2)), np.zeros((2, 2)))
    with pytest.raises(InputError, match="NaN"):
        mteb_bitext_scores(np.full((2, 2), np.nan), np.ones((2, 2)))


WORDS = "the a cat dog sun moon red big small sat ran on mat house tree bird query".split()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_encoder(tmp_path_factory.mktemp("mteb_enc") / "enc", [*WORDS, "query:"])


def _pairs(n: int = 8) -> list[RetrievalPair]:
    rng = np.random.default_rng(3)
    sent = [" ".join(rng.choice(WORDS[:-1], size=4)) for _ in range(2 * n)]
    return [RetrievalPair(str(i), sent[i], sent[n + i]) for i in range(n)]


def test_evaluate_mteb_prompts_both_sides_and_pools_the_last_layer(tiny: Path) -> None:
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny)
    model = AutoModel.from_pretrained(tiny).eval()
    pairs = _pairs()
    for pooling in ("mean", "cls"):
        got = evaluate_mteb(pairs, model, tok, prompt="query: ", pooling=pooling, device="cpu")
        kw = {"pooling": pooling, "layers": [2], "device": "cpu"}
        src = pooled_hidden_states((model, tok), [f"query: {p.source}" for p in pairs], **kw)[0]
        tgt = pooled_hidden_states((model, tok), [f"query: {p.target}" for p in pairs], **kw)[0]
        ref = mteb_restated(src, tgt)
        assert got["f1"] == pytest.approx(ref["f1"]) and got["layer"] == 2
        assert got["accuracy"] == pytest.approx(ref["accuracy"])
        assert got["prompt"] == "query: " and got["direction"] == "xx->en"
        assert got["predictions"]["ids"] == [p.id for p in pairs]
    plain = evaluate_mteb(pairs, model, tok, device="cpu")
    no_prompt = [pooled_hidden_states((model, tok), t, layers=[2])[0] for t in
                 ([p.source for p in pairs], [p.target for p in pairs])]  # fmt: skip
    assert plain["f1"] == pytest.approx(mteb_restated(*no_prompt)["f1"])


def test_a_retrieval_job_scores_mteb_and_names_it_only_for_tatoeba_whole(
    tiny: Path, tmp_path: Path
) -> None:
    from xlalign.reporting.zeroshot import MTEB_TATOEBA, load_retrieval, mteb_table

    path = tmp_path / "de" / "test.jsonl"
    path.parent.mkdir()
    write_records(path, _pairs())
    sets = [
        RetrievalSet("tatoeba-laser", {"de": path}, tmp_path / "t.json", tmp_path / "t"),
        RetrievalSet("udhr", {"de": path}, tmp_path / "u.json", tmp_path / "u", max_pairs=5),
    ]
    mteb = {"sets": ["tatoeba-laser", "udhr"], "prompt": "query: ", "pooling": "mean",
            "include_special": True}  # fmt: skip
    out = run_retrieval_sets(
        sets, encoder=tiny, encoder_name="tiny", layer=1, device="cpu", mteb=mteb
    )
    full, capped = out["tatoeba-laser"]["languages"]["de"], out["udhr"]["languages"]["de"]
    assert full["mteb"]["protocol"] == MTEB_TATOEBA
    assert capped["mteb"]["protocol"].startswith("MTEB's bitext-mining scoring on other data")
    assert full["mteb"]["layer"] == 2 and out["tatoeba-laser"]["layer"] == 1
    # the XTREME-style numbers are still there, at the configured layer and every layer
    assert set(full["accuracy"]) == {"xx->en", "en->xx"} and len(full["sweep"]["xx->en"]) == 3
    assert (tmp_path / "t" / "de.json").is_file()
    recs = load_retrieval([tmp_path / "t.json", tmp_path / "u.json"])
    frame, caption, notes = mteb_table("tatoeba-laser", recs, ["tiny"])
    assert MTEB_TATOEBA in caption and list(frame.index) == ["de", "mean"]
    assert frame.loc["de", "tiny F1"] == f"{full['mteb']['f1']:.2f}"
    assert "prompt 'query: '" in notes[0]
    _, caption, notes = mteb_table("udhr", recs, ["tiny"])
    assert MTEB_TATOEBA not in caption and "Not MTEB's Tatoeba numbers" in notes[-1]
    with pytest.raises(ConfigError, match="'bucc' is mined with margins"):
        run_retrieval_sets(sets, encoder=tiny, encoder_name="tiny", mteb={"sets": ["bucc"]})


def test_laser_tatoeba_codes_follow_xtreme_names_then_langtags() -> None:
    from xlalign.config.taskdata import OFFICIAL_LANGUAGES, mteb_settings
    from xlalign.core import langtags
    from xlalign.evaluation.tasks import official
    from xlalign.evaluation.tasks.formats import (
        LASER_TATOEBA_CODES,
        LASER_TATOEBA_UNNAMED,
        TATOEBA_CODES,
    )

    xtreme = {v: k for k, v in TATOEBA_CODES.items()}
    for ours, laser in LASER_TATOEBA_CODES.items():
        assert ours == xtreme.get(laser) or ours == langtags.canonical(laser), laser
    for laser in LASER_TATOEBA_UNNAMED:
        with pytest.raises(ValueError, match="unknown ISO 639 language"):
            langtags.canonical(laser)
    assert len(set(LASER_TATOEBA_CODES.values()) | set(LASER_TATOEBA_UNNAMED)) == 112
    assert set(TATOEBA_CODES.items()) <= set(LASER_TATOEBA_CODES.items())
    langs = official.task_languages("tatoeba-laser")
    assert langs == tuple(sorted(LASER_TATOEBA_CODES)) == OFFICIAL_LANGUAGES["tatoeba-laser"]
    cfg = {"sets": ["tatoeba-laser"], "prompt": "", "encoders": {"e5": {"prompt": "query: "}}}
    assert mteb_settings(cfg, "e5") == {
        "prompt": "query: ", "pooling": "mean", "include_special": True, "sets": ["tatoeba-laser"]
    }  # fmt: skip
    assert mteb_settings(cfg, "xlmr")["prompt"] == ""


def test_every_laser_file_has_a_checksum_in_the_schema() -> None:
    import yaml

    from xlalign.evaluation.tasks.formats import LASER_TATOEBA_CODES, LASER_TATOEBA_UNNAMED

    schema = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml"
    spec = yaml.safe_load(schema.read_text(encoding="utf-8"))
    tasks = spec["properties"]["downloads"]["properties"]["tasks"]["properties"]
    sums = tasks["tatoeba"]["default"]["sha256"]
    codes = set(LASER_TATOEBA_CODES.values()) | set(LASER_TATOEBA_UNNAMED)
    want = {f"tatoeba.{c}-eng.{side}" for c in codes for side in (c, "eng")}
    assert set(sums) == want and len(want) == 224
    assert all(len(v) == 64 and int(v, 16) >= 0 for v in sums.values())


def test_the_cli_scores_mteb_with_a_prompt(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from xlalign.cli import main

    path = tmp_path / "de.jsonl"
    write_records(path, _pairs())
    argv = ["retrieve", "tatoeba-laser", str(tiny), f"de={path}", "-o", str(tmp_path / "r.json")]
    assert (
        main([*argv, "--layer", "1", "--device", "cpu", "--mteb", "--mteb-prompt", "query: "]) == 0
    )
    brief = json.loads(capsys.readouterr().out)
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(tiny).eval()
    want = evaluate_mteb(_pairs(), model, AutoTokenizer.from_pretrained(tiny), prompt="query: ")
    assert brief["mteb"]["de"]["f1"] == pytest.approx(want["f1"])
    assert brief["mteb"]["de"]["protocol"] == "MTEB (Tatoeba bitext mining)"


def test_the_configuration_refuses_what_cannot_be_scored(tmp_path: Path) -> None:
    import copy

    import yaml

    from xlalign.config import validate

    root = Path(__file__).resolve().parents[3]
    base = yaml.safe_load((root / "config" / "config.yaml").read_text("utf-8"))
    ret = base["zeroshot"]["retrieval"]
    # LASER's languages need not be workflow languages (prepare_task takes any code)
    ret["sets"]["tatoeba-laser"] = {"languages": ["am", "de", "lv"]}
    # the base encoder and a pre-training run's checkpoint, as the zero-shot stage names them
    encoders = {"multilingual-e5-small": {"prompt": "query: "}, "mlm.s1": {"pooling": "cls"}}
    ret["mteb"] = {"sets": ["tatoeba-laser"], "encoders": encoders}
    validate(copy.deepcopy(base), base_dir=tmp_path)
    for change, match in (
        ({"encoders": {"mlm.s2": {}}}, r"mteb.encoders.mlm.s2: no zero-shot encoder of this "
         r"name; the encoders are \['mlm.s1', 'multilingual-e5-small', 'x2s-ma-dcca.s1', "
         r"'x2s-ma-mse.s1'\]"),
        ({"languages": ["ber"]}, r"languages\[0\]: 'tatoeba-laser' has no data for 'ber' "
         r"\(LASER's 'ber' has no xlalign language code: Berber"),
        ({"mteb": ["tatoeba"]}, r"mteb.sets\[0\]: 'tatoeba' is not in zeroshot.retrieval.sets"),
        ({"mteb": ["bucc"]}, r"mteb.sets\[0\]: 'bucc' is mined with margins"),
    ):  # fmt: skip
        cfg = copy.deepcopy(base)
        if "languages" in change:
            cfg["zeroshot"]["retrieval"]["sets"]["tatoeba-laser"] = change
        elif "encoders" in change:
            cfg["zeroshot"]["retrieval"]["mteb"]["encoders"] = change["encoders"]
        else:
            cfg["zeroshot"]["retrieval"]["mteb"]["sets"] = change["mteb"]
            cfg["zeroshot"]["retrieval"]["sets"]["bucc"] = {"languages": ["de"]}
        with pytest.raises(ConfigError, match=match):
            validate(cfg, base_dir=tmp_path)
