"""The start-up check of every downloaded table's preparation (dpcost.run.data_check): a bad edit is refused with
prepare's one line before any job, and a good config passes having prepared each downloaded table once."""

import copy
import os

import numpy as np
import pandas as pd
import pytest
import yaml
from snakemake.utils import update_config, validate

from dpcost.errors import ConfigError
from dpcost.run.config import resolve, with_defaults
from dpcost.run.data_check import check_preparations

from support import REPO

DEFAULT = yaml.safe_load((REPO / "config/config.yaml").read_text())
SCHEMA = str(REPO / "workflow/schemas/config.schema.yaml")
ROWS = 300
BLOCK = {"kind": "table", "sources": [{"path": "wages.csv"}], "response": "wage", "covariates": ["exper", "sex"],
         "transforms": {"wage": "log"}, "m": [100, 200]}  # fmt: skip


def _run(block: dict):
    config = copy.deepcopy(DEFAULT)
    update_config(config, {"datasets": ["wages"], "wages": copy.deepcopy(block)})
    config = with_defaults(config)
    validate(config, SCHEMA)
    return resolve(config, run_checks=False)


@pytest.fixture
def downloaded(tmp_path):
    """A run directory whose wages table is downloaded (resources/wages/raw.parquet, as the download job writes it)."""
    rng = np.random.default_rng(0)
    raw = pd.DataFrame({"wage": np.exp(rng.normal(2, 0.5, ROWS)), "exper": rng.integers(0, 30, ROWS).astype(float),
                        "sex": rng.choice(["female", "male"], ROWS)})  # fmt: skip
    (tmp_path / "resources/wages").mkdir(parents=True)
    raw.to_parquet(tmp_path / "resources/wages/raw.parquet")
    here = os.getcwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(here)


def test_a_good_config_passes_and_each_downloaded_table_is_prepared(downloaded):
    assert check_preparations(_run(BLOCK), []) == ["wages"]
    assert check_preparations(_run(BLOCK), ["simulation"]) == []  # the targets do not read it


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        ({"m": [100, 5000]}, "wages.m: the largest m is 5000 but the table has 300 complete rows"),
        ({"covariates": ["exper", "tenure"]}, "wages.covariates"),
        ({"levels": {"sex": ["female", "other"]}}, "wages.levels.sex"),
        ({"transforms": {"wage": "log", "exper": "log"}}, "wages.transforms: log of 'exper' needs values"),
    ],
)
def test_a_bad_edit_is_refused_in_one_line_before_any_job(downloaded, edit, says):
    with pytest.raises(ConfigError) as info:
        check_preparations(_run({**BLOCK, **edit}), [])
    message = str(info.value)
    assert says in message and "\n" not in message
    assert message.endswith("before any job ran: nothing was deleted)")


def test_a_table_not_yet_downloaded_is_left_to_its_jobs(tmp_path):
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert check_preparations(_run({**BLOCK, "m": [100, 5000]}), []) == []
    finally:
        os.chdir(here)
