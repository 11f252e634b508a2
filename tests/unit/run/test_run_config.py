"""The run's configuration resolved without Snakemake (dpcost.run.config): tables laid over their defaults, every
start-up check's one line naming the key, and the facts the rules read."""

import copy

import pytest
import yaml
from snakemake.utils import update_config, validate

from dpcost.analysis.checks import delta_notes
from dpcost.errors import DPCostError
from dpcost.run import args
from dpcost.run.args import PREPARATION_KEYS
from dpcost.run.config import resolve, with_defaults

from support import REPO

DEFAULT = yaml.safe_load((REPO / "config/config.yaml").read_text())
SCHEMA = str(REPO / "workflow/schemas/config.schema.yaml")


def _config(**changes) -> dict:
    """The default config with top-level blocks changed (a block's mapping laid over the default's, one level),
    laid over table_defaults and validated as the workflow does."""
    config = copy.deepcopy(DEFAULT)
    for key, value in changes.items():
        config[key] = {**config[key], **value} if isinstance(value, dict) and key in config else value
    config = with_defaults(config)
    validate(config, SCHEMA)
    return config


def _refused(config: dict) -> str:
    with pytest.raises(DPCostError) as info:
        resolve(config, run_checks=False)
    return str(info.value)


# ---- tables over table_defaults ---------------------------------------------------------------------------------


def test_a_table_is_laid_over_the_defaults_key_by_key_at_every_depth():
    config = {
        "table_defaults": {
            "privacy": {"epsilon": 0.5, "delta": "10/n^1.1"},
            "methods": ["ols", "ssp"],
            "tuning": {"ssp": {"B_X": 3.0, "B_Y": 3.0}, "adassp": {"B_X": 3.0}},
        },  # fmt: skip
        "wages": {"kind": "table", "privacy": {"epsilon": 2}, "methods": ["ols"], "tuning": {"ssp": {"B_Y": 1.0}}},
        "snp": {"privacy": {"epsilon": 1}},  # not a table: untouched
    }
    before = copy.deepcopy(config)
    out = with_defaults(config)
    wages = out["wages"]
    assert wages["privacy"] == {"epsilon": 2, "delta": "10/n^1.1"}  # the default delta kept
    assert wages["methods"] == ["ols"]  # a list replaces the default's whole
    assert wages["tuning"] == {"ssp": {"B_X": 3.0, "B_Y": 1.0}, "adassp": {"B_X": 3.0}}
    assert out["snp"] == {"privacy": {"epsilon": 1}} and config == before  # the input is not changed


def test_housing_is_a_table_with_the_default_constants():
    housing = with_defaults(DEFAULT)["housing"]
    assert housing["kind"] == "table" and housing["reader"] == "housing"
    assert housing["tuning"] == DEFAULT["table_defaults"]["tuning"] and housing["y_scale"] == 100000


# ---- the resolved run -------------------------------------------------------------------------------------------


def test_the_default_run():
    run = resolve(_config(), run_checks=False)
    assert run.analyses == ("housing", "snp", "snp_logistic") and "housing" in run.tables and run.libsvm == ()
    assert run.methods["housing"][: len(DEFAULT["table_defaults"]["methods"])] == tuple(
        DEFAULT["table_defaults"]["methods"]
    )
    p = run.privacy("housing")
    assert (p.epsilon, p.calibration) == (0.5, "tight") and p.at(20000).delta == pytest.approx(10 / 20000**1.1)
    assert run.tuning_mode("housing") == "decoy" and run.tuning_mode("snp") == "fixed"
    assert set(args.preparation(run, "housing")) <= set(PREPARATION_KEYS)
    assert args.preparation(run, "housing")["y_scale"] == 1e5
    assert run.simulation is not None and run.benchmark is None


BENCHMARK = yaml.safe_load((REPO / "config/presets/benchmark.yaml").read_text())


def test_the_default_delta_of_tables_and_of_the_benchmark_stays_below_1_over_n():
    # the tool warns at delta >= 1/n (a mechanism that publishes a record in the clear is (0, 1/n)-DP): the defaults a
    # user's table and the benchmark run under never trip it; housing and the SNP analyses keep the papers' delta
    config = copy.deepcopy(DEFAULT)
    update_config(config, copy.deepcopy(BENCHMARK))  # as Snakemake lays the preset over the default, at every level
    config = with_defaults(config)
    validate(config, SCHEMA)
    run = resolve(config, run_checks=False)
    assert DEFAULT["table_defaults"]["privacy"]["delta"] == BENCHMARK["benchmark"]["delta"] == "1/n^1.1"
    for name in BENCHMARK["benchmark"]["datasets"]:
        privacy, grid = run.benchmark_privacy(name), config[name]["m"]
        assert privacy.delta == "1/n^1.1" and delta_notes(privacy, grid) == [], name
        assert args.benchmark(run, name, "adassp")["privacy"]["delta"] == "1/n^1.1"
        if name != "housing":
            assert delta_notes(run.privacy(name), grid) == [], name  # the table's own analysis: table_defaults'
    for name in ("housing", "snp", "snp_logistic"):  # the papers' 10/n^1.1, warned about at every m
        assert config[name]["privacy"]["delta"] == "10/n^1.1"
        assert "at every m" in delta_notes(run.privacy(name), config[name]["m"])[0]
    # the benchmark's delta is checked at every m of every data set, by its key; the schema's default fills it in
    bad = copy.deepcopy(config)
    bad["benchmark"]["delta"] = "1000/n"  # 1 at the smallest m of the preset, 1,000
    with pytest.raises(DPCostError, match=r"^benchmark.delta: delta='1000/n' gives 1.0 at n=1000"):
        resolve(bad, run_checks=False)
    del bad["benchmark"]["delta"]
    validate(bad, SCHEMA)
    assert resolve(bad, run_checks=False).benchmark["delta"] == "1/n^1.1"


def test_m_parts_split_the_grid_in_even_consecutive_parts():
    run = resolve(_config(m_parts={"housing": {"estimate": {"ssp": 3}}}), run_checks=False)
    grid = DEFAULT["housing"]["m"]
    parts = run.parts("housing", "estimate", "ssp")
    assert [m for part in parts for m in part] == grid and [len(p) for p in parts] == [4, 3, 3]
    assert run.is_split("housing", "estimate", "ssp") and not run.is_split("housing", "estimate", "adassp")
    assert run.parts("housing", "estimate", "adassp") == [grid]


def test_the_start_up_checks_run_every_private_method_once():
    # run_checks: the main process's checks (a method's own refusal, e.g. B below the sensitivity) before any job
    config = _config(housing={"tuning": {"noisy_gd": {"T": 5, "R": 2.0, "C": 3.0, "c_x": 1.0, "eta0": 1.0,
                                                      "B": 0.01}}})  # fmt: skip
    resolve(config, run_checks=False)
    with pytest.raises(DPCostError, match="below the replace-one sensitivity"):
        resolve(config)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"datasets": ["housing", "mnist"]}, "datasets lists 'mnist', which is neither built in"),
        ({"m_parts": {"housin": {"tune": {"ssp": 2}}}}, "m_parts.housin: no analysis of that name"),
        ({"m_parts": {"housing": {"tune": {"ada_ssp": 2}}}}, "m_parts.housing.tune.ada_ssp: housing has no method"),
        ({"housing": {"privacy": {"epsilon": 0.5, "delta": "10/n^^2"}}}, "housing.privacy.delta: delta formula"),
        ({"housing": {"reader": "housingg"}}, "housing.reader: unknown reader 'housingg'; built in: ['housing']"),
        ({"housing": {"sources": [{"path": "h.xlsx"}]}}, "housing.sources.0: cannot tell the format of 'h.xlsx'"),
        (
            {"benchmark": {"datasets": ["snp"], "methods": ["ols"], "epsilon": [1], "reps": 2}},
            "benchmark.datasets lists 'snp', which is not a config block with kind: table",
        ),  # fmt: skip
    ],
)
def test_a_bad_value_is_one_line_naming_its_key(changes, message):
    msg = _refused(_config(**changes))
    assert message in msg and "\n" not in msg


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"housing": {"methods": ["ols", "magic"]}}, "housing.methods.1: unknown method 'magic'"),
        ({"housing": {"m": [100, 30000]}}, "housing.m.1: m=30000 must lie between 2 and the 20640 rows"),
    ],
)
def test_the_registry_and_the_data_check_what_the_schema_cannot(changes, message):
    with pytest.raises(DPCostError, match=message):
        resolve(_config(**changes))
