"""One source of truth: the registry's method names and tuning keys, the schema, the default config and the config
documentation agree — a method or key added in one place and forgotten in another fails here."""

import inspect
import re

import pytest
import yaml

from dpcost.analysis.datasets import ANALYSES
from dpcost.data import download
from dpcost.estimators.registry import methods_of

from support import REPO

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
CONFIG = yaml.safe_load((REPO / "config/config.yaml").read_text())
CONFIG_DOC = (REPO / "config/README.md").read_text()


@pytest.mark.parametrize("dataset", sorted(ANALYSES))
def test_schema_method_enum_is_the_registry(dataset):
    enum = SCHEMA["properties"][dataset]["properties"]["methods"]["items"]["enum"]
    assert enum == list(methods_of(ANALYSES[dataset].family))


@pytest.mark.parametrize("dataset", sorted(ANALYSES))
def test_schema_tuning_keys_are_the_estimator_keywords(dataset):
    tuning = SCHEMA["properties"][dataset]["properties"]["tuning"]["properties"]
    for name, method in methods_of(ANALYSES[dataset].family).items():
        keys = method.tuning_keys()
        if not keys:
            assert name not in tuning, name
            continue
        assert set(tuning[name]["properties"]) == set(keys), name
        assert tuning[name].get("additionalProperties") is False, name


@pytest.mark.parametrize("dataset", sorted(ANALYSES))
def test_default_config_states_every_required_key_and_the_code_defaults(dataset):
    block = CONFIG[dataset]["tuning"]
    for name, method in methods_of(ANALYSES[dataset].family).items():
        given = block.get(name, {})
        method.resolve_tuning(given)  # no unknown key, no missing one
        for key, default in method.tuning_defaults().items():
            if key in given:  # a default restated in the config must be the code's, or it is a second truth
                assert given[key] == default, (name, key)


def _resolve(node, prefix=""):
    """The schema a ``$ref`` names: an entry of ``$defs``; None for a block documented once at housing's place and
    reused by the table blocks (``#/properties/housing/properties/tuning``, and their privacy, decoys, map, attack)."""
    ref = node["$ref"]
    if prefix.startswith(("<name>.", "table_defaults.")) and ref.split("/")[-1] != "table_source":
        return None
    return SCHEMA["$defs"][ref.split("/")[-1]] if ref.startswith("#/$defs/") else None


def _schema_paths(node, prefix=""):
    """Every key path of the schema, e.g. housing.tuning.adassp.rho; array items as name[]; the keys of a table
    block (the schema's other top-level keys) as <name>.key."""
    if "$ref" in node:
        node = SCHEMA["$defs"][node["$ref"].split("/")[-1]]
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
    assert documented - paths == set()  # nothing documented that does not exist


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
    from dpcost.estimators.registry import METHODS

    rows = set(re.findall(r"^\| `([a-z_]+)`", (REPO / "docs/methods.md").read_text(), flags=re.M))
    assert set(METHODS) <= rows, set(METHODS) - rows
