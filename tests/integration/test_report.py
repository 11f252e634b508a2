"""`snakemake --report` after a tiny housing run made with --configfile: without them it stops with one line naming
them (and the command it gives works); with them the report's first page holds the headline figure and the table
of the largest m as HTML, and every table is a page of its own; a dry run records nothing, an edited config file is
named. docs/usage.md, "The report"."""

import base64
import json
import re
import shlex
import subprocess
import sys
from html.parser import HTMLParser

import pandas as pd
import pytest
import yaml

from support import REPO, RUN_TIMEOUT, LoopbackServer
from workflow_runner import NO_EXTRAS, TINY_MAP, run_workflow

pytestmark = pytest.mark.e2e

M = [200, 1000]


@pytest.fixture(scope="module")
def run(housing_archives, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("report")
    with LoopbackServer() as srv:
        srv.add("/h/houses.zip", housing_archives["statlib"][0])
        override = {
            **NO_EXTRAS,  # intervals and targeted attacks: test_small_config.py
            "datasets": ["housing"],
            "reps": 2,
            "download": {"max_tries": 1, "backoff": 0.0, "timeout": 10},
            "housing": {
                "sources": [
                    {"url": srv.base + "/h/houses.zip", "format": "statlib", "sha256": housing_archives["statlib"][1]}
                ],
                "m": M,
                "methods": ["ols", "noisy_gd"],
                "peers": "never",
                "tuning_mode": "fixed",
                "map": TINY_MAP["housing"],
            },
        }
        res = run_workflow(workdir, override)
    assert res.returncode == 0, res.stderr[-3000:]
    return workdir


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


def test_the_first_page_holds_the_headline_figure_and_the_largest_m(run, report):
    first = Page(_script_var(report, "workflow_desc"))  # the page the report opens on
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
