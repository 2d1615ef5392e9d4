"""benchmarks/profile_run.py on a hand-made run dir: a Snakemake log in the format of
Snakemake 9 (trimmed from a real `make run`) and hand-written benchmark TSVs.

The fixture's DAG, wall times in seconds (benchmark ``s``, or the log for `report`):

    fetch (2) --> left (10) ---> join (0.3, an NA row) --> report (3, no benchmark)
              \\-> right (3) --/
    encoder (5, a directory() output) --> use_model (20, reads a file inside it;
                                                      two benchmark rows: 12 + 8)

use_model also reads fetch's output. Critical path: encoder -> use_model (25 s); without
the directory edge it would be fetch -> use_model (22 s); the diamond's longest chain,
fetch -> left -> join -> report, is 15.3 s.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from xlalign.core.errors import InputError

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "profile_run.py"
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("profile_run", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["profile_run"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


pr = _load()

LOG_HEAD = """\
Assuming unrestricted shared filesystem usage.

SNAKEMAKE
=========
  Date: 2026-11-27 18:00:00
  Workflow ID: 075b8770-4385-48c4-9989-0336c6982708
  Host: vm
  Snakemake version: 9.27.1
  Command: .venv/bin/snakemake all --profile profiles/laptop --cores 2
  Working directory: /somewhere/else

Building DAG of jobs...
Provided cores: 2
Job stats:
job         count
--------  -------
fetch           1
total           8

Select jobs to execute...
Execute 2 jobs...
"""


def _start(t: str, rule: str, jobid: int, inp: str, out: str, wc: str, bench: str | None) -> str:
    lines = [f"[Fri Nov 27 {t} 2026]", f"localrule {rule}:"]
    if inp:
        lines.append(f"    input: {inp}")
    lines += [f"    output: {out}", f"    log: logs/{rule}.log", f"    jobid: {jobid}"]
    if bench:
        lines.append(f"    benchmark: {bench}")
    lines.append(f"    reason: Missing output files: {out}")
    if wc:
        lines.append(f"    wildcards: {wc}")
    lines += [
        "    resources: tmpdir=/tmp, runtime=15, mem_mb=1000, mem=1 GB, mem_mib=954",
        "Shell command: None",
    ]
    return "\n".join(lines) + "\n"


def _finish(t: str, jobid: int, rule: str, done: int, total: int = 8) -> str:
    pct = f"{100 * done // total}%"
    return (
        f"[Fri Nov 27 {t} 2026]\nFinished jobid: {jobid} (Rule: {rule})\n"
        f"{done} of {total} steps ({pct}) done\nSelect jobs to execute...\n"
    )


def _bench(run: Path, rel: str, *rows: str) -> str:
    path = run / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    return rel


def _row(s: float, rss: str, io_in: str, io_out: str, cpu: str) -> str:
    return f"{s:.2f}\t0:00:{int(s):02d}\t{rss}\t900.0\t{rss}\t{rss}\t{io_in}\t{io_out}\t1.0\t{cpu}"


def make_run(run: Path, right_s: float = 3.0, finish: bool = True) -> Path:
    """The fixture run dir (see the module docstring); ``right_s`` is right's wall."""
    b = "results/x/benchmarks"
    fetch = _bench(
        run, "logs/resources/fetch.benchmark.tsv", _row(2.0, "50.0", "0.0", "100.00", "1.00")
    )
    encoder = _bench(run, f"{b}/encoder/m.tsv", _row(5.0, "300.0", "1.0", "900.00", "4.50"))
    left = _bench(run, f"{b}/left/en.tsv", _row(10.0, "80.0", "0.5", "12.00", "9.00"))
    right = _bench(run, f"{b}/right/en.tsv", _row(right_s, "90.0", "0.5", "12.00", "3.00"))
    use = _bench(
        run,
        f"{b}/use_model/en.tsv",
        _row(12.0, "500.0", "2.0", "500.00", "11.00"),
        _row(8.0, "700.0", "2.0", "500.00", "7.50"),
    )
    join = _bench(run, f"{b}/join/en.tsv", "0.30\t0:00:00\tNA\tNA\tNA\tNA\tNA\tNA\tNA\tNA")
    log = LOG_HEAD
    log += _start("18:00:00", "fetch", 1, "", "resources/a.txt", "", fetch)
    log += _start("18:00:00", "encoder", 5, "", "results/x/model", "model=m", encoder)
    log += _finish("18:00:02", 1, "fetch", 1)
    log += _start("18:00:02", "left", 2, "resources/a.txt", "results/x/left.txt", "lang=en", left)
    log += _finish("18:00:05", 5, "encoder", 2)
    log += _start(
        "18:00:05", "right", 3, "./resources/a.txt", "results/x/right.txt", "lang=en", right
    )
    log += _finish("18:00:08", 3, "right", 3)
    log += _start(
        "18:00:08",
        "use_model",
        6,
        "results/x/model/config.json, /somewhere/else/resources/a.txt",
        "results/x/use.txt",
        "lang=en",
        use,
    )
    log += _finish("18:00:12", 2, "left", 4)
    log += _start(
        "18:00:12",
        "join",
        4,
        "results/x/left.txt, results/x/right.txt",
        "results/x/j.txt",
        "lang=en",
        join,
    )
    log += _finish("18:00:13", 4, "join", 5)
    log += _start("18:00:13", "report", 7, "results/x/j.txt", "results/x/report.md", "", None)
    log += _finish("18:00:16", 7, "report", 6)
    if finish:
        log += _finish("18:00:28", 6, "use_model", 7)
        log += _start("18:00:28", "all", 8, "results/x/report.md, results/x/use.txt", "", "", None)
        log += _finish("18:00:28", 8, "all", 8)
        log += "Complete log(s): .snakemake/log/2026-11-27T180000.000000.snakemake.log\n"
    logs = run / ".snakemake" / "log"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "2026-11-27T180000.000000.snakemake.log").write_text(log)
    return run


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return make_run(tmp_path / "run")


def test_totals_and_per_rule_sums(run: Path) -> None:
    p = pr.profile(run)
    t = p["totals"]
    assert p["finished"] is True
    assert t["jobs"] == 8
    # 2 + 5 + 10 + 3 + (12 + 8) + 0.3 + 3 (report, from the log) + 0 (all, from the log)
    assert t["wall_s_sum"] == pytest.approx(43.3)
    # CPU known for fetch, encoder, left, right, use_model: 1 + 4.5 + 9 + 3 + 18.5 over 40 s
    assert t["cpu_s_sum"] == pytest.approx(36.0)
    assert t["cpu_pct"] == pytest.approx(90.0)
    assert t["cpu_pct_sampled"] == pytest.approx(90.0)  # every job sampled to its end
    assert t["cpu_known_wall_pct"] == pytest.approx(100 * 40 / 43.3)
    assert t["io_out_mb_sum"] == pytest.approx(2024.0)
    assert t["io_out_gib"] == pytest.approx(2024.0 / 1024)
    assert t["max_rss_mb"] == pytest.approx(700.0)
    assert t["span_s"] == pytest.approx(28.0)
    assert t["concurrency"] == pytest.approx(43.3 / 28.0)
    assert t["cores"] == 2 and t["core_use_pct"] == pytest.approx(100 * 43.3 / 56.0)
    # from the log's times: join's 0.3 s shows as 1 s there
    assert t["log_wall_s_sum"] == pytest.approx(2 + 5 + 10 + 3 + 20 + 1 + 3 + 0)
    use = p["rules"]["use_model"]
    assert (use["jobs"], use["wall_s_sum"], use["cpu_s_sum"]) == (1, 20.0, 18.5)
    assert use["io_out_mb_sum"] == pytest.approx(1000.0)
    assert use["max_rss_mb"] == pytest.approx(700.0)  # the larger of its two rows
    report = p["rules"]["report"]
    assert report["wall_s_sum"] == pytest.approx(3.0)  # from the log's timestamps
    assert report["cpu_s_sum"] is None and report["jobs_without_cpu"] == 1
    join = p["rules"]["join"]
    assert join["cpu_pct"] is None and join["max_rss_mb"] is None  # an all-NA row
    jobs = {j["jobid"]: j for j in p["jobs"]}
    assert jobs[7]["wall_source"] == "log" and jobs[2]["wall_source"] == "benchmark"
    assert [j["jobid"] for j in p["jobs"]][:2] == [6, 2]  # by wall, largest first


def test_sampled_seconds_follow_snakemakes_schedule() -> None:
    # samples at 0, 0.5, ..., 15 s, then 45, 75, ... s
    cases = {0.3: 0.0, 0.5: 0.5, 10.2: 10.0, 15.0: 15.0, 22.0: 15.0, 44.9: 15.0, 45.0: 45.0}
    for wall, sampled in {**cases, 173.6: 165.0}.items():
        assert pr.sampled_seconds(wall) == pytest.approx(sampled), wall


def test_cpu_over_the_sampled_part_of_long_jobs(tmp_path: Path) -> None:
    p = pr.profile(make_run(tmp_path / "run", right_s=40.0))  # right: 3 CPU s in 40 s
    right = p["rules"]["right"]
    assert right["cpu_pct"] == pytest.approx(100 * 3 / 40)
    assert right["cpu_pct_sampled"] == pytest.approx(100 * 3 / 15)  # last sample at 15 s
    t = p["totals"]
    assert t["cpu_pct"] == pytest.approx(100 * 36 / (2 + 5 + 10 + 40 + 20))
    assert t["cpu_pct_sampled"] == pytest.approx(100 * 36 / (2 + 5 + 10 + 15 + 20))


def test_critical_path_follows_the_directory_output(run: Path) -> None:
    p = pr.profile(run)
    cp = p["critical_path"]
    assert [j["rule"] for j in cp["jobs"]] == ["encoder", "use_model"]
    assert cp["length_s"] == pytest.approx(25.0)
    assert cp["share_of_span"] == pytest.approx(25.0 / 28.0)
    # use_model started at 8 s, 3 s after encoder ended (it waited for a core)
    assert [j["wait_s"] for j in cp["jobs"]] == [0.0, 3.0]


def _diamond(run: Path) -> list[pr.Job]:
    loaded = pr.load_run(run)
    return [j for j in loaded.jobs.values() if j.rule not in ("encoder", "use_model", "all")]


def test_diamond_takes_the_longer_branch(run: Path, tmp_path: Path) -> None:
    jobs = _diamond(run)
    deps = pr.dependencies(jobs)
    assert deps[4] == [2, 3]  # join reads left's and right's outputs
    assert deps[3] == [1]  # "./resources/a.txt" is fetch's "resources/a.txt"
    path = pr.critical_path(jobs)
    assert [j.rule for j in path] == ["fetch", "left", "join", "report"]
    assert sum(j.wall_s for j in path) == pytest.approx(15.3)
    # the same DAG with the right branch longer than the left one
    other = make_run(tmp_path / "other", right_s=11.0)
    path = pr.critical_path(_diamond(other))
    assert [j.rule for j in path] == ["fetch", "right", "join", "report"]
    assert sum(j.wall_s for j in path) == pytest.approx(16.3)


def test_directory_output_counts_for_files_inside_only(run: Path) -> None:
    jobs = list(pr.load_run(run).jobs.values())
    deps = pr.dependencies(jobs)
    # a.txt from fetch (named by its absolute path under the log's working directory),
    # model/config.json inside encoder's directory
    assert deps[6] == [1, 5]
    # a sibling whose name merely starts with the directory's is not inside it
    producers = {"results/x/model": 5}
    assert pr._producer("results/x/model/sub/w.bin", producers) == 5
    assert pr._producer("results/x/model2/w.bin", producers) is None
    assert pr._producer("results/x/model", producers) == 5


def test_partial_run_leaves_running_and_failed_jobs_out(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", finish=False)
    log = next((run / ".snakemake" / "log").glob("*.log"))
    text = log.read_text()
    text += _start("18:00:16", "extra", 9, "results/x/j.txt", "results/x/e.txt", "", None)
    text += (
        "[Fri Nov 27 18:00:19 2026]\nError in rule extra:\n    message: None\n    jobid: 9\n"
        "    input: results/x/j.txt\n    output: results/x/e.txt\n"
        "    log: logs/extra.log (check log file(s) for error details)\n"
        "Shutting down, this might take some time.\n"
    )
    log.write_text(text)
    p = pr.profile(run)
    assert p["finished"] is False
    assert p["progress"] == [6, 8]
    assert p["totals"]["jobs"] == 6
    assert (p["totals"]["running"], p["totals"]["failed"]) == (1, 1)
    status = {j["jobid"]: j["status"] for j in p["unfinished"]}
    assert status == {6: "running", 9: "failed"}
    failed = next(j for j in p["unfinished"] if j["jobid"] == 9)
    assert failed["log_wall_s"] == pytest.approx(3.0)
    running = next(j for j in p["unfinished"] if j["jobid"] == 6)
    assert running["elapsed_s"] == pytest.approx(11.0)  # 18:00:08 to the log's last line
    assert "use_model" not in p["rules"]
    assert [j["rule"] for j in p["critical_path"]["jobs"]] == ["fetch", "left", "join", "report"]
    assert p["totals"]["span_s"] == pytest.approx(19.0)  # to the failure
    assert "**not finished**" in pr.render(p)


def test_malformed_benchmark_names_the_file(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = run / "results/x/benchmarks/left/en.tsv"
    bad.write_text(HEADER + "\n" + _row(10.0, "80.0", "0.5", "12.00", "lots") + "\n")
    with pytest.raises(InputError, match=r"left/en\.tsv: line 2: column 'cpu_time' is 'lots'"):
        pr.profile(run)
    assert pr.main([str(run)]) == 2
    assert f"{bad}: line 2" in capsys.readouterr().err
    bad.write_text(HEADER + "\n" + "10.0\t0:00:10\t80.0\n")
    with pytest.raises(InputError, match=r"en\.tsv: line 2: 3 tab-separated fields; expected 10"):
        pr.profile(run)
    bad.write_text("seconds\tcpu\n10\t9\n")
    with pytest.raises(InputError, match=r"en\.tsv: line 1: header .* has no column 's'"):
        pr.profile(run)
    bad.write_text(HEADER + "\n")
    with pytest.raises(InputError, match=r"en\.tsv: no data row"):
        pr.profile(run)


def test_missing_benchmark_is_a_warning_and_log_wall_is_used(run: Path) -> None:
    (run / "results/x/benchmarks/left/en.tsv").unlink()
    p = pr.profile(run)
    left = next(j for j in p["jobs"] if j["rule"] == "left")
    assert left["wall_source"] == "log" and left["wall_s"] == pytest.approx(10.0)
    assert any("left/en.tsv missing" in w for w in p["warnings"])


def test_latest_log_that_started_a_job(run: Path) -> None:
    logs = run / ".snakemake" / "log"
    (logs / "2026-11-28T090000.000000.snakemake.log").write_text(
        LOG_HEAD.replace("Execute 2 jobs...\n", "")
        + "Nothing to be done (all requested files exist).\n"
    )
    assert pr.latest_log(run).name == "2026-11-27T180000.000000.snakemake.log"


def test_cli_markdown_json_and_compare(run: Path, tmp_path: Path) -> None:
    before_json = tmp_path / "before.json"
    md = tmp_path / "before.md"
    assert pr.main([str(run), "--json", str(before_json), "--out", str(md), "--jobs"]) == 0
    text = md.read_text()
    assert (
        "| use_model | 1 | 20.0 | 20.0 | 20.0 | 18.5 | 92.5 | 92.5 | 4.0 | 1,000.0 | 700.0 | 0 |"
        in text
    )
    assert "## Jobs (by wall)" in text
    saved = json.loads(before_json.read_text())
    assert saved["format"] == pr.FORMAT and saved["totals"]["jobs"] == 8
    # "after": right's branch slower; left unchanged
    after = make_run(tmp_path / "after", right_s=6.0)
    out = tmp_path / "after.md"
    assert pr.main([str(after), "--compare", str(before_json), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| wall s summed over jobs | 43.3 | 46.3 | 1.07 |" in text
    assert "| right | 1 | 1 | 3.0 | 6.0 | 2.00 |" in text
    assert "| left | 1 | 1 | 10.0 | 10.0 | 1.00 |" in text
    not_profile = tmp_path / "x.json"
    not_profile.write_text('{"a": 1}')
    assert pr.main([str(after), "--compare", str(not_profile)]) == 2


def _run_io_json(path: Path, write: int, cancelled: int, cpu: float, wall: float) -> Path:
    rec = {
        "format": "xlalign-run-io/1",
        "command": ["make", "run"],
        "returncode": 0,
        "wall_s": wall,
        "io": {
            "rchar": 1,
            "wchar": write,
            "read_bytes": 2**30,
            "write_bytes": write,
            "cancelled_write_bytes": cancelled,
        },
        "rusage_children": {"user_s": cpu - 10.0, "sys_s": 10.0, "max_rss_kib": 2048},
    }
    path.write_text(json.dumps(rec))
    return path


def test_io_adds_the_process_tree_beside_the_benchmark_sums(run: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain.md"
    assert pr.main([str(run), "--out", str(plain)]) == 0
    assert "Process tree" not in plain.read_text()
    io = _run_io_json(tmp_path / "io.json", 3 * 2**30, 2**29, 120.0, 60.0)
    md, js = tmp_path / "p.md", tmp_path / "p.json"
    assert pr.main([str(run), "--io", str(io), "--out", str(md), "--json", str(js)]) == 0
    text = md.read_text()
    # the fixture's benchmarks sum io_out to 1,100 MB (use_model 700, others 400)
    assert "undercount" in text
    assert "| writes (GiB, write_bytes) | 3.000 |" in text
    assert "| writes net of cancelled (GiB) | 2.500 |" in text
    assert "| reads (GiB, read_bytes) | 1.000 |" in text
    assert "| CPU user + sys (s) | 120.0 |" in text
    assert "| wall (s; benchmark: summed over jobs) | 60.0 | 43.3 |" in text
    saved = json.loads(js.read_text())
    assert saved["process_tree"]["write_net_gib"] == pytest.approx(2.5)
    # compared when both profiles have it
    io2 = _run_io_json(tmp_path / "io2.json", 6 * 2**30, 0, 240.0, 90.0)
    out = tmp_path / "cmp.md"
    args = [str(run), "--io", str(io2), "--compare", str(js), "--out", str(out)]
    assert pr.main(args) == 0
    text = out.read_text()
    assert "| process tree writes GiB | 3.0 | 6.0 | 2.00 |" in text
    assert "| process tree CPU s | 120.0 | 240.0 | 2.00 |" in text
    # not shown when the earlier profile lacks it
    plain_json = tmp_path / "plain.json"
    assert pr.main([str(run), "--json", str(plain_json), "--out", str(plain)]) == 0
    args = [str(run), "--io", str(io2), "--compare", str(plain_json), "--out", str(out)]
    assert pr.main(args) == 0
    assert "process tree writes" not in out.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1}')
    assert pr.main([str(run), "--io", str(bad)]) == 2
