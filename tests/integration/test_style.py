"""The code is formatted and linted as the README asks: ruff for Python, snakefmt and snakemake --lint for rules."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import QUICK_TIMEOUT, REPO

SNAKE_FILES = ["workflow/Snakefile", "workflow/rules"]


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


def test_snakemake_lint_is_clean():
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "--lint"], cwd=REPO, capture_output=True, text=True, timeout=QUICK_TIMEOUT
    )
    assert res.returncode == 0 and "Congratulations" in res.stdout + res.stderr, res.stdout + res.stderr
