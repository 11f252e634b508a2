"""The code is formatted and linted as the README asks: ruff for Python, snakefmt and snakemake --lint for rules."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import QUICK_TIMEOUT, REPO

SNAKE_FILES = ["Snakefile", "workflow/Snakefile", "workflow/rules"]


def _tool(name: str) -> str:
    # the tools of the environment running the tests, whether or not it is activated
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else (shutil.which(name) or name)


def _run(tool, *args):
    return subprocess.run([_tool(tool), *args], cwd=REPO, capture_output=True, text=True, timeout=QUICK_TIMEOUT)


@pytest.mark.parametrize("tool", ["ruff", "snakefmt"])
def test_tools_are_installed(tool):
    # they come with the test extra; a missing one must fail, not skip, or the checks below would vanish
    assert Path(_tool(tool)).exists(), f"{tool} not found: install with pip install -e '.[test]'"


def test_ruff_lint_and_format():
    lint = _run("ruff", "check", ".")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = _run("ruff", "format", "--check", ".")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_snakefmt():
    res = _run("snakefmt", "--check", *SNAKE_FILES)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("snakefile", [[], ["-s", "workflow/Snakefile"]], ids=["root", "workflow"])
def test_snakemake_lint_is_clean(snakefile):
    res = subprocess.run([sys.executable, "-m", "snakemake", *snakefile, "--lint"], cwd=REPO, capture_output=True,
                         text=True, timeout=QUICK_TIMEOUT)  # fmt: skip
    assert res.returncode == 0 and "Congratulations" in res.stdout + res.stderr, res.stdout + res.stderr


def test_the_root_snakefile_plans_the_workflows_default_target(tmp_path):
    # both conventions: `snakemake` from the root (Snakefile, an include) and the catalog's workflow/Snakefile plan
    # the same jobs, the root's `default` rule (whose input is `all`'s) standing for the workflow's `all`
    def jobs(snakefile):
        res = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / snakefile), "-n", "--cores", "1",
                              "--directory", str(tmp_path), "--configfile", str(REPO / "config/config.yaml")],
                             capture_output=True, text=True, timeout=QUICK_TIMEOUT)  # fmt: skip
        assert res.returncode == 0, res.stderr[-2000:]
        table = res.stdout.split("Job stats:", 1)[1].split("\n\n", 1)[0]
        return dict(line.split()[:2] for line in table.splitlines()[3:] if line.strip() and line.split()[0] != "total")

    root, workflow = jobs("Snakefile"), jobs("workflow/Snakefile")
    assert root.pop("default") == workflow.pop("all") == "1" and root == workflow and len(root) > 20
