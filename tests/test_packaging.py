"""The dependency lists in pyproject.toml, environment.yml and the workflow's conda env agree."""

import re
import tomllib

import yaml

from support import REPO


def _spec(s: str) -> tuple[str, str]:
    name, bound = re.match(r"^\s*([A-Za-z0-9_.-]+)\s*(.*)$", s).groups()
    return name.lower(), bound.replace(" ", "")


def _conda(path):
    deps = yaml.safe_load(path.read_text())["dependencies"]
    pip = [d for entry in deps if isinstance(entry, dict) for d in entry.get("pip", [])]
    names = [d for d in deps if isinstance(d, str) and not d.startswith(("python", "pip"))]
    return dict(_spec(d) for d in names + [p for p in pip if not p.startswith("-")])


def _pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return dict(_spec(d) for d in project["dependencies"]), dict(
        _spec(d) for d in project["optional-dependencies"]["test"]
    )


def test_environment_yml_matches_pyproject():
    runtime, test = _pyproject()
    assert _conda(REPO / "environment.yml") == {**runtime, **test}


def test_workflow_env_matches_the_runtime_dependencies():
    runtime, _ = _pyproject()
    runtime.pop("snakemake")
    assert _conda(REPO / "workflow/envs/dpcost.yaml") == runtime


def test_every_rule_declares_its_environment_and_log():
    for smk in (REPO / "workflow/rules").glob("*.smk"):
        text = smk.read_text()
        n_rules = len(re.findall(r"^rule ", text, flags=re.M))
        assert text.count('"../envs/dpcost.yaml"') == n_rules, smk
        assert text.count("    log:") == n_rules, smk


TEST_COMMAND = "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' && pytest"
RUN_COMMAND = "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && snakemake --cores 2"


def test_readme_shows_the_two_commands_and_ci_runs_the_test_one():
    readme = (REPO / "README.md").read_text()
    assert TEST_COMMAND in readme and RUN_COMMAND in readme
    assert TEST_COMMAND in (REPO / ".ci/run").read_text()
