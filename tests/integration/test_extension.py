"""A new estimator is its module and one registry line; the workflow runs as a Snakemake module from another
directory. One run shows both: a copy of the checkout gets docs/development.md's example estimator (its module and
its registry line, interval route included, taken from that page) and nothing else, and the small configuration runs
it end to end — ledger, summary, figure, intervals, the report's pages — from a fresh directory whose Snakefile only
imports the copy's workflow as a module."""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import zlib

import pandas as pd
import pytest
import yaml

from support import REPO, RUN_TIMEOUT, LoopbackServer
from workflow_runner import NO_EXTRAS

pytestmark = pytest.mark.e2e

GUIDE = (REPO / "docs/development.md").read_text()
REGISTRY = "src/dpcost/estimators/registry.py"
M = [200, 2000]


def _example():
    """The example module (path and code) and its registry line, as docs/development.md prints them."""
    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", GUIDE, flags=re.S)]
    module = next(b for b in blocks if b.startswith("# src/dpcost/estimators/"))
    path = module.splitlines()[0].removeprefix("# ")
    line = next(b for b in blocks if b.startswith("_M(")).strip().rstrip(",") + ","
    return path, module, line


def _copy_checkout(dest):
    """The checkout's files (tracked, and new ones not ignored), as a clone would have them."""
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split("\0")  # fmt: skip
    for name in filter(None, names):
        src = REPO / name
        if src.is_file() and not name.startswith(("tests/", "measurements/", "docs/figures/")):
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


@pytest.fixture(scope="module")
def run(housing_archives, tmp_path_factory):
    root = tmp_path_factory.mktemp("extension")
    checkout, deploy = root / "checkout", root / "deploy"
    _copy_checkout(checkout)
    path, module, line = _example()
    name = re.match(r'_M\("(\w+)"', line).group(1)
    (checkout / path).write_text(module)
    registry = (checkout / REGISTRY).read_text()
    assert registry.count("from . import (\n") == 1 and registry.count("        # linear regression\n") == 1
    registry = registry.replace("from . import (\n", f"from . import (\n    {name},\n")
    registry = registry.replace("        # linear regression\n", f"        # linear regression\n        {line}\n")
    (checkout / REGISTRY).write_text(registry)

    # the deployment: a config/ copy and a Snakefile that uses the copy's workflow as a module, nothing else
    (deploy / "config").mkdir(parents=True)
    shutil.copy2(checkout / "config/config.yaml", deploy / "config/config.yaml")
    snakefile = checkout / "workflow/Snakefile"
    (deploy / "Snakefile").write_text(
        textwrap.dedent(f"""\
        configfile: "config/config.yaml"


        module dpcost:
            snakefile:
                "{snakefile}"
            config:
                config


        use rule * from dpcost
        """)
    )
    with LoopbackServer() as srv:
        srv.add("/h/houses.zip", housing_archives["statlib"][0])
        override = {
            **NO_EXTRAS,  # intervals and targeted attacks: test_small_config.py
            "datasets": ["housing"],
            "download": {"max_tries": 2, "backoff": 0.0, "timeout": 10},
            "housing": {
                "sources": [
                    {"url": srv.base + "/h/houses.zip", "format": "statlib", "sha256": housing_archives["statlib"][1]}
                ],  # fmt: skip
                "methods": ["ols", "adassp", name],
                "peers": "never",
                "tuning_mode": "fixed",
                "m": M,
                "map": {"epsilon": [1.0], "m": [2000], "reps": 1, "methods": ["ols", name]},
                # its interval route, declared in its registry line: its intervals alone, on 2 repetitions
                "inference": {"enabled": True, "reps": 2, "methods": [name]},
            },
        }
        (deploy / "override.yaml").write_text(yaml.safe_dump(override))
        # the report's pages of the analysis (summary, ledger) and of its intervals, made by the report rules
        targets = [f"results/housing/{f}" for f in ("summary.csv", "privacy_ledger.json", "error_curves_all.pdf",
                                                     "inference.csv", "report/ledger.html", "report/summary.html",
                                                     "report/inference.html")]  # fmt: skip
        cmd = [sys.executable, "-m", "snakemake", *targets, "--cores", "2",
               "--configfile", str(checkout / ".test/config.yaml"), "override.yaml"]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        res = subprocess.run(cmd, cwd=deploy, capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env)
    assert res.returncode == 0, res.stderr[-4000:]
    return checkout, deploy, name, path


def test_the_example_touches_its_module_and_the_registry_alone(run):
    checkout, _, _, path = run
    changed = {p.relative_to(checkout).as_posix() for p in checkout.rglob("*") if p.is_file()
               if not (REPO / p.relative_to(checkout)).is_file()
               or (REPO / p.relative_to(checkout)).read_bytes() != p.read_bytes()}  # fmt: skip
    assert changed == {path, REGISTRY}


def test_the_new_estimator_is_in_the_summary_ledger_and_figure(run):
    checkout, deploy, name, _ = run
    out = deploy / "results/housing"
    summary = pd.read_csv(out / "summary.csv")
    rows = summary[summary.method == name]
    assert list(rows.m) == M and rows.private.all() and rows.proven.all() and (rows.n_reps == 5).all()
    assert (rows["mean"] > 0).all() and rows["mean"].notna().all()
    ledger = json.loads((out / "privacy_ledger.json").read_text())
    assert ledger["methods"][name]["private"] is True and ledger["methods"][name]["calibration"] == "tight"
    # the table's composition at every m reads its releases (its plan says they are its whole mechanism)
    per_m = ledger["table"]["per_m"]
    assert [row["m"] for row in per_m] == M and all(name in row["tight"]["from_releases"] for row in per_m)
    # the figure's legend names it (the PDF's text, inflated)
    pdf = (out / "error_curves_all.pdf").read_bytes()
    streams = re.findall(rb"stream\r?\n(.*?)\r?\nendstream", pdf, flags=re.S)
    text = b"".join(zlib.decompressobj().decompress(s) for s in streams if s[:1] == b"x")
    shown = b"".join(re.findall(rb"\(((?:[^()\\]|\\.)*)\)", text))  # the strings of Tj/TJ, kerning dropped
    assert b"One noisy gradient step" in shown
    # the module ran in the deployment's directory and imported the copy's code, not the checkout under test
    assert not (deploy / "workflow").exists() and (deploy / "logs/housing/download.log").exists()
    assert (checkout / "src/dpcost/estimators" / f"{name}.py").exists()


def test_the_new_estimators_interval_route_runs_from_its_registry_line(run):
    _, deploy, name, _ = run
    out = deploy / "results/housing"
    rows = pd.read_csv(out / "inference.csv")
    mine = rows[rows.method == name]
    assert set(mine.route) == {"blocks"} and set(mine.m) == set(M) and (mine.n_reps == 2).all()
    assert mine.coverage.between(0, 1).all() and (mine.mean_width > 0).all()
    ledger = json.loads((out / "privacy_ledger.json").read_text())
    assert name in json.dumps(ledger["intervals"])


def test_the_new_estimator_is_on_the_reports_pages(run):
    _, deploy, name, _ = run
    pages = deploy / "results/housing/report"
    for page in ("summary", "ledger", "inference"):
        assert f">{name}<" in (pages / f"{page}.html").read_text(), page  # a row of its own in each page's table
