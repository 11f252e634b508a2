"""The code is formatted and linted as the README asks: ruff for Python, snakefmt and snakemake --lint for rules."""

import shutil
import subprocess
import sys

import pytest

from support import REPO

SNAKE_FILES = ["Snakefile", "workflow/rules"]


def _run(*cmd):
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("tool", ["ruff", "snakefmt"])
def test_tools_are_installed(tool):
    # they come with the test extra; a missing one must fail, not skip, or the checks below would vanish
    assert shutil.which(tool), f"{tool} not found: install with pip install -e '.[test]'"


def test_ruff_lint_and_format():
    lint = _run("ruff", "check", ".")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = _run("ruff", "format", "--check", ".")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_snakefmt():
    res = _run("snakefmt", "--check", *SNAKE_FILES)
    assert res.returncode == 0, res.stdout + res.stderr


def test_snakemake_lint_is_clean():
    res = _run(sys.executable, "-m", "snakemake", "--lint")
    assert res.returncode == 0 and "Congratulations" in res.stdout + res.stderr, res.stdout + res.stderr
