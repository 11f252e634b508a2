"""One source of truth: the registry's method names and tuning keys, the schema, the default config and the config
documentation agree — a method or key added in one place and forgotten in another fails here."""

import inspect
import re

import pytest
import yaml

from dpcost.analysis.datasets import ANALYSES
from dpcost.data import download
from dpcost.estimators.registry import METHODS, methods_of
from dpcost.run.config import with_defaults

from support import REPO

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
CONFIG = yaml.safe_load((REPO / "config/config.yaml").read_text())
CONFIG_DOC = (REPO / "config/README.md").read_text()


def _tuned_blocks():
    """(config block, family) of every analysis whose tuning constants config/README.md documents key by key:
    ``table_defaults`` for the tables (housing included), else the analysis's own block."""
    for name, analysis in sorted(ANALYSES.items()):
        yield ("table_defaults" if CONFIG[name].get("kind") == "table" else name), analysis.family


def _registry_rows():
    """The config/README.md rows the registry implies: ``<block>.tuning.<method>`` and one per tuning key."""
    rows = set()
    for block, family in _tuned_blocks():
        for name, method in methods_of(family).items():
            if method.tuning_keys():
                rows |= {f"{block}.tuning.{name}", *(f"{block}.tuning.{name}.{k}" for k in method.tuning_keys())}
    return rows


def _names(node):
    """Every property name and enum value of a schema node, at every depth."""
    if isinstance(node, dict):
        yield from node.get("properties", {})
        yield from (v for v in node.get("enum", ()) if isinstance(v, str))
        for value in node.values():
            yield from _names(value)
    elif isinstance(node, list):
        for value in node:
            yield from _names(value)


def test_method_names_live_in_the_registry_alone():
    # the schema takes any name and start-up checks it against the registry (test_config.py's "unknown method"):
    # a new estimator adds no line to the schema. "ols" is also a simulation problem's name.
    named = sorted(set(_names(SCHEMA)) & set(METHODS) - {"ols"})
    assert named == [], f"workflow/schemas/config.schema.yaml names methods {named}; the registry is their one home"


@pytest.mark.parametrize("dataset", sorted(ANALYSES))
def test_default_config_states_every_required_key_and_the_code_defaults(dataset):
    block = with_defaults(CONFIG)[dataset]["tuning"]
    for name, method in methods_of(ANALYSES[dataset].family).items():
        given = block.get(name, {})
        method.resolve_tuning(given)  # no unknown key, no missing one
        for key, default in method.tuning_defaults().items():
            if key in given:  # a default restated in the config must be the code's, or it is a second truth
                assert given[key] == default, (name, key)


def test_every_tuning_key_of_the_registry_is_documented():
    documented = set(re.findall(r"^\| `([^`]+)`", CONFIG_DOC, flags=re.M))
    missing = sorted(_registry_rows() - documented)
    assert missing == [], f"config/README.md lacks the rows {missing} (one per method and per tuning key)"


def _resolve(node, prefix=""):
    """The schema a ``$ref`` names: an entry of ``$defs``; None for a table block's keys (``<name>.privacy`` …),
    documented once under ``table_defaults``, but for its sources."""
    ref = node["$ref"]
    if prefix.startswith("<name>.") and ref.split("/")[-1] != "table_source":
        return None
    target = SCHEMA
    for part in ref.removeprefix("#/").split("/"):  # a JSON pointer into this file
        target = target[part]
    return target


def _schema_paths(node, prefix=""):
    """Every key path of the schema, e.g. table_defaults.privacy.epsilon; array items as name[]; the keys of a table
    block (the schema's other top-level keys) as <name>.key."""
    if "$ref" in node:
        node = _resolve(node)
    for key, sub in node.get("properties", {}).items():
        path = f"{prefix}{key}"
        yield path
        if "$ref" in sub:
            sub = _resolve(sub, prefix) or {}
        if sub.get("type") == "array" and isinstance(sub.get("items"), dict):
            items = sub["items"]
            if "$ref" in items:
                items = _resolve(items, prefix) or {}
            yield from _schema_paths(items, f"{path}[].")
        else:
            yield from _schema_paths(sub, f"{path}.")
        named = sub.get("additionalProperties")
        if isinstance(named, dict) and "properties" in named:  # a map of named entries, e.g. experiments.<name>
            yield from _schema_paths(named, f"{path}.<name>.")
    if not prefix and isinstance(node.get("additionalProperties"), dict):
        yield from _schema_paths(node["additionalProperties"], "<name>.")


def test_every_config_key_is_documented():
    documented = set(re.findall(r"^\| `([^`]+)`", CONFIG_DOC, flags=re.M))
    paths = set(_schema_paths(SCHEMA))
    assert len(paths) > 80
    assert paths - documented == set()
    # nothing documented that does not exist: a schema path, a tuning key of the registry, or the simulation's
    # constants of a registered method
    simulated = {f"simulation.tuning.{m}" for m in METHODS}
    assert documented - paths - _registry_rows() - simulated == set()


def test_download_defaults_live_in_one_place():
    props = SCHEMA["properties"]["download"]["properties"]
    assert {k: props[k]["default"] for k in download.DEFAULTS} == download.DEFAULTS
    sig = inspect.signature(download.download).parameters
    assert sig["max_tries"].default == download.DEFAULTS["max_tries"]
    assert sig["backoff"].default == download.DEFAULTS["backoff"]
    assert sig["timeout"].default[1] == download.DEFAULTS["timeout"]


def test_readme_is_short_and_docs_cite_papers_not_codes():
    assert len((REPO / "README.md").read_bytes()) <= 6144
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "config/README.md"]:
        text = path.read_text()
        # the papers' file codes (000, 001, 004 …) mean nothing to a reader; "session" is history
        assert not re.search(r"(?<![\d.,])00[0-4](?![\d.,])", text), path
        assert not re.search(r"\bsession \d", text, flags=re.I), path


def test_every_method_is_in_the_methods_table():
    rows = set(re.findall(r"^\| `([a-z_]+)`", (REPO / "docs/methods.md").read_text(), flags=re.M))
    assert set(METHODS) <= rows, set(METHODS) - rows


def test_the_development_guide_names_files_that_exist():
    guide = (REPO / "docs/development.md").read_text()
    named = set(re.findall(r"`((?:src|workflow|config|tests|docs)/[\w./-]+)`", guide))
    assert len(named) >= 10
    assert sorted(p for p in named if not (REPO / p).exists()) == []


def test_the_catalog_finds_a_standardized_workflow():
    # the snakemake-workflow-catalog's "standardized usage": workflow/Snakefile, config/README.md and its usage file
    usage = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())["usage"]
    assert (REPO / "workflow/Snakefile").is_file() and (REPO / "config/README.md").is_file()
    assert set(usage) == {"mandatory-flags", "software-stack-deployment", "report"}
    deploy = usage["software-stack-deployment"]
    assert set(deploy) == {"conda", "singularity", "singularity+conda"} and any(deploy.values())
    assert deploy["conda"] and (REPO / "workflow/envs/dpcost.yaml").is_file()  # the environment every rule declares
    assert usage["report"] is True and (REPO / "workflow/report/workflow.rst").is_file()


KEYWORDS = {"$defs", "$ref", "$schema", "additionalProperties", "default", "description", "enum", "const",
            "exclusiveMaximum", "exclusiveMinimum", "items", "maxItems", "maxProperties", "maximum", "minItems",
            "minLength", "minProperties", "minimum", "oneOf", "pattern", "properties", "propertyNames", "required",
            "type", "uniqueItems"}  # fmt: skip


def _stray_keys(node, path="schema"):
    """Keys of a schema node that are no JSON-schema keyword: e.g. a flow mapping's description with a comma, which
    YAML splits into keys of its own."""
    if isinstance(node, list):
        for k, item in enumerate(node):
            yield from _stray_keys(item, f"{path}[{k}]")
    elif isinstance(node, dict):
        yield from (f"{path}.{k}" for k in node if k not in KEYWORDS)
        for key, value in node.items():
            if key in ("properties", "$defs"):
                for name, sub in value.items():
                    yield from _stray_keys(sub, f"{path}.{name}")
            elif key != "default":
                yield from _stray_keys(value, f"{path}.{key}")


def test_the_schema_uses_json_schema_keywords_only():
    assert list(_stray_keys(SCHEMA)) == []
