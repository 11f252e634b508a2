"""The offline route of docs/usage.md, as printed there: the housing data from a local copy, no network."""

import json
import re

import pytest
import yaml

from support import CONTENT_SHA256, HOUSING_PARQUET, REPO
from workflow_runner import run_workflow

pytestmark = pytest.mark.e2e


def _documented_offline_config() -> dict:
    usage = (REPO / "docs/usage.md").read_text()
    blocks = re.findall(r"```yaml\n(# offline\.yaml.*?)```", usage, flags=re.S)
    assert len(blocks) == 1, "docs/usage.md should show one offline.yaml"
    return yaml.safe_load(blocks[0])


def test_the_documented_offline_config_reads_scikit_learns_copy(tmp_path):
    if not HOUSING_PARQUET.exists():
        pytest.skip(f"real housing data not found at {HOUSING_PARQUET} (set DPCOST_SHARED to the shared/ folder)")
    cfg = _documented_offline_config()
    assert cfg["datasets"] == ["housing"] and [set(s) for s in cfg["housing"]["sources"]] == [{"path"}]
    cfg["housing"]["sources"][0]["path"] = str(HOUSING_PARQUET)  # scikit-learn's columns, not a published archive
    res = run_workflow(tmp_path, cfg, "results/housing/data.parquet", "results/config_used.yaml")
    assert res.returncode == 0, res.stderr[-3000:]
    used = yaml.safe_load((tmp_path / "results/config_used.yaml").read_text())
    assert used["housing"]["sources"] == cfg["housing"]["sources"]  # lists replace: the default URLs are gone
    assert used["housing"]["m"] == yaml.safe_load((REPO / "config/config.yaml").read_text())["housing"]["m"]  # merged
    manifest = json.loads((tmp_path / "resources/housing/download.json").read_text())
    assert manifest["format"] == "parquet" and manifest["path"] == str(HOUSING_PARQUET)
    meta = json.loads((tmp_path / "results/housing/preprocessing.json").read_text())
    assert meta["source"]["content_sha256"] == CONTENT_SHA256 and meta["source"]["path"] == str(HOUSING_PARQUET)
