"""End to end: `snakemake` as a subprocess, downloading real data (rebuilt archives) from a loopback mirror; then,
on that run, `snakemake --report` (docs/usage.md, "The report"): without the run's --configfile files it stops with one
line naming them (and the command it gives works); with them the report's first page holds the headline figure and
the table of the largest m as HTML, and every table is a page of its own; a dry run records nothing, an edited config
file is named. One run for both: a Snakemake run of this size is most of what a file like this costs."""

import base64
import json
import re
import shlex
import subprocess
import sys
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
import yaml

from support import REPO, RUN_TIMEOUT, LoopbackServer, free_port
from workflow_runner import NO_EXTRAS, TINY_MAP, config_error, run_workflow

pytestmark = pytest.mark.e2e

M = [200, 2000, 20000]
REPS = 6
METHODS = ["ols", "noisy_gd", "noisy_truncated_ols"]


def override(base, archives, **housing):
    zsha, tsha = archives["statlib"][1], archives["figshare"][1]
    return {
        **NO_EXTRAS,  # intervals and targeted attacks: test_small_config.py
        "datasets": ["housing"],
        "reps": REPS,
        "download": {"max_tries": 2, "backoff": 0.0, "timeout": 10},
        "housing": {
            "sources": [
                {"url": f"{base}/datasets/houses.zip", "format": "statlib", "filename": "houses.zip", "sha256": zsha},
                {"url": f"{base}/files/5976036", "format": "figshare", "filename": "cal_housing.tgz", "sha256": tsha},
            ],
            "m": M,
            "methods": METHODS,
            "peers": "never",
            "tuning_mode": "fixed",  # the config's constants as written (decoy tuning: test_small_config.py)
            "map": TINY_MAP["housing"],
            **housing,
        },
    }


@pytest.fixture(scope="module")
def mirror(housing_archives):
    with LoopbackServer() as srv:
        # StatLib answers 500 to the start-up check (an answer: the download retries 5xx) and to the download's first
        # attempt (retried), then serves the archive; figshare serves its own layout
        srv.add("/datasets/houses.zip", housing_archives["statlib"][0], actions=["status:500", "status:500", "ok"])
        srv.add("/files/5976036", housing_archives["figshare"][0])
        yield srv


@pytest.fixture(scope="module")
def run(mirror, housing_archives, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("run")
    # with the default workflow profile, as docs/usage.md shows: the run checks the profile too
    profile = REPO / "workflow/profiles/local"
    res = run_workflow(workdir, override(mirror.base, housing_archives), "--workflow-profile", str(profile))
    assert res.returncode == 0, res.stderr[-3000:]
    return workdir


def test_outputs_exist_and_are_tidy(run):
    errors = pd.read_parquet(run / "results/housing/errors.parquet")
    assert {"method", "m", "rep", "epsilon", "delta", "error"} <= set(errors.columns)
    assert len(errors) == len(METHODS) * len(M) * REPS
    assert not errors.duplicated(["method", "m", "rep"]).any()
    summary = pd.read_csv(run / "results/housing/summary.csv")
    assert list(summary.columns) == ["method", "m", "n_reps", "mean", "se", "median", "q05", "q95", "sp_rmse",
                                     "sp_rmse_se", "r2_mean", "r2_se", "rmse_mean", "abstain_rate", "private",
                                     "proven", "epsilon", "delta", "calibration", "tuning_mode",
                                     "end_to_end"]  # fmt: skip
    # the yardstick never falls below the full-data fit's sampling error; prediction scored outside the subsample
    tau = np.sqrt(json.loads((run / "results/housing/preprocessing.json").read_text())["truth_sampling_variance"])
    assert (summary.sp_rmse >= tau).all() and (summary.sp_rmse > summary["mean"] * 0.5).all()
    # held-out R² has no lower bound (a noisy fit predicts worse than the mean); OLS's is housing's, about 0.57
    assert (summary.r2_mean <= 1).all() and (summary.abstain_rate == 0).all()
    assert summary.set_index("method").loc["ols", "r2_mean"].between(0.45, 0.7).all()
    assert set(summary.tuning_mode) == {"fixed"} and set(summary[summary.private].calibration) == {"tight"}
    assert (summary.n_reps == REPS).all()
    assert (run / "results/housing/error_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (run / "results/housing/error_curves.pdf").read_bytes()[:5] == b"%PDF-"
    for m in METHODS:
        plans = json.loads((run / f"results/housing/estimates/{m}.plans.json").read_text())
        assert plans["method"] == m and plans["privacy"]["calibration"] == "tight"
        assert [p["m"] for p in plans["plans"]] == (M if plans["private"] else [])
    for log in (
        "housing/download",
        "housing/preprocess",
        "housing/aggregate",
        "housing/plot",
        *(f"housing/estimate_{m}" for m in METHODS),
    ):
        assert (run / "logs" / f"{log}.log").exists()


def test_score_attack_table_and_figure(run):
    attack = pd.read_csv(run / "results/housing/attack.csv")
    assert {"method", "m", "auc", "auc_se", "tpr_fpr01", "tpr_fpr05", "epsilon_lb", "auc_ceiling"} <= set(attack)
    assert sorted(attack.method.unique()) == sorted(METHODS) and sorted(attack.m.unique()) == M
    assert (attack.n_reps == REPS).all()  # attack.reps 20 is capped at the run's reps
    # at m = 20,000 only 640 rows lie outside: 320 non-members (and members), the other 320 fit the reference
    assert attack.set_index("m").loc[20000, "n_candidates"].eq(320).all()
    assert attack.auc.between(0, 1).all() and (attack.auc[attack.private] < attack.auc_ceiling[attack.private]).all()
    assert (run / "results/housing/attack.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (run / "results/housing/attack.pdf").read_bytes()[:5] == b"%PDF-"
    stats = pd.read_parquet(run / "results/housing/attack/noisy_gd.parquet")
    assert list(stats.columns) == ["method", "m", "rep", "member", "statistic"]
    assert (run / "logs/housing/attack.log").exists()
    assert "attack statistics" in (run / "logs/housing/estimate_ols.log").read_text()  # scored in the estimate job


def test_results_make_sense(run):
    s = pd.read_csv(run / "results/housing/summary.csv").set_index(["method", "m"])["mean"]
    for m in M:
        for dp in ("noisy_gd", "noisy_truncated_ols"):
            assert s[(dp, m)] > 3 * s[("ols", m)], (dp, m)  # privacy costs accuracy at ε = 0.5
    for method in METHODS:
        assert s[(method, M[-1])] < s[(method, M[0])], method  # more data, smaller error
    errors = pd.read_parquet(run / "results/housing/errors.parquet")
    private = errors[errors.method != "ols"]
    assert (private.epsilon == 0.5).all()
    assert (private.delta - 10 / private.m**1.1).abs().max() < 1e-15


def test_provenance_is_recorded(run, housing_archives):
    manifest = json.loads((run / "resources/housing/download.json").read_text())
    assert manifest["sha256"] == housing_archives["statlib"][1] and manifest["format"] == "statlib"
    meta = json.loads((run / "results/housing/preprocessing.json").read_text())
    assert meta["private"] is False and meta["intercept"] is False
    assert meta["source"]["content_sha256"] == "b8d40ce656d5c12e4da5119d5dcb268e2b4219bbed5592a219429e58021b4b69"
    assert meta["source"]["url"].endswith("/datasets/houses.zip")


def test_other_mirror_and_one_core_give_identical_tables(run, mirror, housing_archives, tmp_path):
    # The StatLib copy is gone: the figshare layout is parsed instead; with one core and another job order the
    # tables must still be identical bit for bit. The run makes those two tables and what they need (download,
    # preprocess, tune, estimate, aggregate), one job at a time; the attack, map and plot jobs change neither.
    cfg = override(mirror.base, housing_archives)
    cfg["housing"]["sources"][0]["url"] = mirror.base + "/gone/houses.zip"
    tables = ("errors.parquet", "data.parquet")
    res = run_workflow(tmp_path, cfg, *(f"results/housing/{t}" for t in tables), cores=1)
    assert res.returncode == 0, res.stderr[-3000:]
    assert json.loads((tmp_path / "resources/housing/download.json").read_text())["format"] == "figshare"
    for table in tables:
        a = pd.read_parquet(run / "results/housing" / table)
        b = pd.read_parquet(tmp_path / "results/housing" / table)
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def _one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.startswith("ERROR [")]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize("check", [True, False], ids=["at start-up", "in the download job"])
def test_no_network_fails_clearly(housing_archives, tmp_path, check):
    base = f"http://127.0.0.1:{free_port()}"
    cfg = override(base, housing_archives)
    cfg["download"]["check_sources"] = check
    if check:  # one message before any job: the workflow's start-up check, without Snakemake (test_offline.py
        # starts it, and has every line of the message)
        message = config_error(cfg, data=tmp_path)
        assert message.startswith("missing data: "), message
        assert "  housing: " in message and "resources/housing/manual" in message and "ERROR [" not in message
        assert not (tmp_path / "logs").exists()
    else:  # without the check, the download job fails, in one line
        res = run_workflow(tmp_path, cfg)
        assert res.returncode != 0 and "Traceback" not in res.stderr
        line = _one_error_line(res.stderr)
        assert "no source delivered a verified table" in line and "resources/housing/manual" in line
        assert "dpcost: the run stopped: a job failed" in res.stderr  # and the run's closing lines say so
        # the run's last line is the failing job's own, read from its log: dpcost's closing block comes after
        # Snakemake's own closing lines (where its log is, the time, "WorkflowError:", ...)
        lines = res.stderr.strip().splitlines()
        assert lines[-1].startswith("dpcost: job failed: download_table: housing: no source delivered a verified table")
        assert lines[-1].endswith("(logs/housing/download.log)")
        assert any(ln.startswith("Complete log(s): ") for ln in lines[:-1])
    assert not (tmp_path / "resources/housing/download.json").exists()
    assert not list((tmp_path / "resources/housing").glob("*.zip"))


def test_bad_checksum_fails_clearly(mirror, housing_archives, tmp_path):
    cfg = override(mirror.base, housing_archives)
    for src in cfg["housing"]["sources"]:
        src["sha256"] = "ab" * 32
    res = run_workflow(tmp_path, cfg)
    assert res.returncode != 0
    assert "sha256 mismatch: expected " + "ab" * 32 in _one_error_line(res.stderr)
    assert not (tmp_path / "resources/housing/download.json").exists()


def test_privacy_ledger(run):
    ledger = json.loads((run / "results/housing/privacy_ledger.json").read_text())
    assert ledger["neighbours"] == "replace one record" and ledger["calibration"] == "tight"
    assert any("NOT PRIVATE" in note for note in ledger["not_private"])
    assert any("tuning constants" in note for note in ledger["not_private"])
    assert ledger["methods"]["ols"]["private"] is False
    gd = ledger["methods"]["noisy_gd"]
    assert gd["private"] is True and "clipped" in gd["assumption (enforced in code)"]
    assert [e["m"] for e in gd["per_m"]] == M
    rel = gd["per_m"][0]["releases"][0]
    assert rel["mechanism"] == "gaussian" and rel["count"] == 5 and rel["noise_scale"] > rel["sensitivity"] > 0
    assert gd["per_m"][0]["delta"] == pytest.approx(10 / M[0] ** 1.1)


def test_the_ledger_is_the_plans_the_jobs_used(run):
    # built from the estimate jobs' plans files, not recomputed: the releases are those files' releases
    ledger = json.loads((run / "results/housing/privacy_ledger.json").read_text())
    for m in ("noisy_gd", "noisy_truncated_ols"):
        plans = json.loads((run / f"results/housing/estimates/{m}.plans.json").read_text())
        assert [e["releases"] for e in ledger["methods"][m]["per_m"]] == [p["releases"] for p in plans["plans"]]
        assert ledger["methods"][m]["tuning"] == plans["tuning"]
    assert any("delta=" in note and ">= 1/n" in note for note in ledger["notes"])


def test_comparison_table(run):
    c = pd.read_csv(run / "results/housing/comparison.csv")
    assert list(c.columns) == [
        "method", "m", "sp_rmse", "best_dp_method", "ratio_to_best_dp", "ratio_to_adassp", "ratio_to_diffprivlib",
        "mean", "r2_mean", "rmse_mean", "abstain_rate", "private", "proven", "epsilon", "delta", "calibration",
        "tuning_mode", "end_to_end", "note",
    ]  # fmt: skip
    assert set(c.method) == set(METHODS) and len(c) == len(METHODS) * len(M)
    for _, g in c.groupby("m"):
        best = g.set_index("method").loc[g.best_dp_method.iloc[0]]
        assert best.ratio_to_best_dp == 1.0 and best.name in ("noisy_gd", "noisy_truncated_ols")
    assert c.ratio_to_diffprivlib.isna().all() and c.ratio_to_adassp.isna().all()  # neither ran here, and it says why
    assert c.note.str.contains("adassp did not run (not among the methods)", regex=False).all()
    assert c.note.str.contains("ratio_to_diffprivlib empty: diffprivlib did not run (", regex=False).all()


def test_slurm_profile_plans_the_run(tmp_path):
    # where no Slurm runs test_slurm.py (the default profile is used by the run above)
    res = run_workflow(tmp_path, {}, "-n", "--workflow-profile", str(REPO / "workflow/profiles/slurm"))
    assert res.returncode == 0, res.stderr[-2000:]


# ------------------------------------------------------------------------------------------------ the report
def snakemake(workdir, *args):
    """Snakemake in ``workdir`` with these arguments alone (run_workflow adds the config files)."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "workflow/Snakefile"), "--directory", str(workdir)]
    return subprocess.run([*cmd, "--cores", "1", *args], capture_output=True, text=True, timeout=RUN_TIMEOUT)


def the_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.startswith("report error:")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_the_run_is_recorded(run):
    record = json.loads((run / "results/run.json").read_text())
    assert record["configfiles"] == [str(REPO / "config/config.yaml"), str(run / "override.yaml")]
    assert record["config_args"] == [] and record["targets"] == [] and len(record["config_sha256"]) == 64


def test_a_dry_run_with_another_config_records_nothing(run):
    before = (run / "results/run.json").read_text()
    res = snakemake(run, "-n", "--configfile", str(REPO / "config/config.yaml"), "--config", "reps=3")
    assert res.returncode == 0, res.stderr[-2000:]
    assert (run / "results/run.json").read_text() == before


def test_report_without_the_runs_config_files_names_them_and_the_command_works(run):
    res = snakemake(run, "--report", "results/report.html")
    assert res.returncode != 0 and not (run / "results/report.html").exists()
    line = the_error_line(res.stderr)
    command = line.split("rerun as: ", 1)[1]
    assert shlex.split(command) == ["snakemake", "--report", "results/report.html", "--configfile",
                                    str(REPO / "config/config.yaml"), str(run / "override.yaml")]  # fmt: skip
    res = snakemake(run, *shlex.split(command)[1:])  # the line's command, as it says
    assert res.returncode == 0, res.stderr[-3000:]


class Page(HTMLParser):
    """The images and table rows (their cells' text) of an HTML text."""

    def __init__(self, text):
        super().__init__()
        self.images, self.rows, self._row, self._cell = [], [], None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs).get("src", ""))
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None


def _script_var(html: str, name: str):
    """A variable the report's page defines in a script of its own (JSON)."""
    tag = name.replace("_", "-")  # <script id="workflow-desc"> var workflow_desc = …
    match = re.search(rf'<script id="{tag}">\s*var {name} = (.*?);\n\s*</script>', html, flags=re.S)
    assert match, name
    return json.loads(match.group(1))


@pytest.fixture(scope="module")
def report(run):
    if not (run / "results/report.html").exists():
        pytest.skip("the report was not made (see the test before)")
    return (run / "results/report.html").read_text()


def test_report_builds_with_figures_tables_ledger_config_and_provenance(run, report):
    for name in ("error_curves.png", "summary.csv", "privacy_ledger.json", "preprocessing.json", "config_used.yaml"):
        assert f'"filename": "{name}"' in report, name
    assert report.count("base64,") >= 5  # the files are embedded: the report is self-contained
    assert "replace one record" in report and "not private" in report.lower()
    used = (run / "results/config_used.yaml").read_text()
    assert "calibration: tight" in used and "reps: 6" in used


def test_the_first_page_holds_the_headline_figure_and_the_largest_m(run, report):
    desc = _script_var(report, "workflow_desc")
    first = Page(desc)  # the page the report opens on
    # the headline note once read "error_curves_all.. Every": one sentence ended twice
    assert not re.search(r"\w\.\.\s", desc), "a sentence ends twice"
    png = (run / "results/housing/error_curves.png").read_bytes()
    assert f"data:image/png;base64,{base64.b64encode(png).decode()}" in first.images
    summary = pd.read_csv(run / "results/housing/summary.csv")
    header = next(r for r in first.rows if r[:3] == ["method", "mean", "se"])
    rows = {r[0]: dict(zip(header, r, strict=True)) for r in first.rows if r and r[0] in set(summary.method)}
    top = summary[summary.m == max(M)].set_index("method")
    assert set(rows) == set(top.index)  # every method shown in the figure (both here), at the largest m alone
    for method, row in rows.items():
        assert float(row["mean"]) == pytest.approx(top.loc[method, "mean"], rel=1e-3)
        assert float(row["se"]) == pytest.approx(top.loc[method, "se"], rel=1e-3)
    # the headline is also the first category's item
    categories = _script_var(report, "categories")
    assert sorted(categories)[0] == "1. The answer"


def test_every_table_is_a_page_and_the_raw_files_stay(run, report):
    pages = _script_var(report, "results")  # by path
    for name in ("summary", "attack", "ledger", "provenance", "comparison", "privacy_map"):
        entry = pages[f"results/housing/report/{name}.html"]
        assert entry["mime_type"] == "text/html", name
    for name in ("summary.csv", "attack.csv", "comparison.csv", "epsilon_needed.csv", "privacy_ledger.json"):
        assert f"results/housing/{name}" in pages, name  # still downloadable

    def page(name):
        uri = pages[f"results/housing/report/{name}.html"]["data_uri"]
        return base64.b64decode(uri.split("base64,", 1)[1]).decode("ascii")

    summary = pd.read_csv(run / "results/housing/summary.csv")
    rows = Page(page("summary")).rows
    assert rows[0] == list(summary.columns) and len(rows) == len(summary) + 1
    ledger = page("ledger")
    assert "replace one record" in ledger and "What is not private" in ledger and "noisy_gd" in ledger
    meta = json.loads((run / "results/housing/preprocessing.json").read_text())
    assert meta["source"]["content_sha256"] in page("provenance")
    needed = pd.read_csv(run / "results/housing/epsilon_needed.csv", keep_default_na=False).astype(str)
    assert needed.values.tolist()[0] in Page(page("privacy_map")).rows


def test_an_edited_config_file_is_named(run):
    override = run / "override.yaml"
    text = override.read_text()
    try:
        override.write_text(yaml.safe_dump({**yaml.safe_load(text), "reps": 3}))
        res = snakemake(run, "--report", "results/other.html", "--configfile", str(REPO / "config/config.yaml"),
                        str(override))  # fmt: skip
        assert res.returncode != 0 and not (run / "results/other.html").exists()
        assert "the configuration changed since the run started" in the_error_line(res.stderr)
    finally:
        override.write_text(text)
