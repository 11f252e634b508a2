"""The start-up estimate of a run's work (dpcost.run.workload): what it counts, how it scales, and when it warns."""

import copy

import pytest
import yaml
from snakemake.utils import validate

from dpcost.run import workload
from dpcost.run.config import resolve, with_defaults

from support import REPO

DEFAULT = yaml.safe_load((REPO / "config/config.yaml").read_text())
BENCHMARK = yaml.safe_load((REPO / "config/presets/benchmark.yaml").read_text())


def _run(*overrides):
    config = copy.deepcopy(DEFAULT)
    for override in overrides:
        for key, value in copy.deepcopy(override).items():
            config[key] = {**config[key], **value} if isinstance(value, dict) and key in config else value
    config = with_defaults(config)
    validate(config, str(REPO / "workflow/schemas/config.schema.yaml"))
    return resolve(config, run_checks=False)


LEAN = {
    "methods": ["ols", "adassp"],
    "m": [1000, 2000],
    "map": {"epsilon": [1.0, 2.0], "m": [1000], "reps": 3, "methods": ["ols", "adassp"]},
    "inference": {"enabled": False},
    "targeted": {"enabled": False},
    "tuning_mode": "fixed",
    "peers": "never",
    "attack": {"reps": 5},
}


def test_a_lean_analysis_counts_its_fits_and_its_jobs():
    run = _run({"datasets": ["housing"], "reps": 10, "housing": LEAN})
    work = workload.of_run(run, [])
    c = workload.COST
    assert work.seconds["estimate"] == pytest.approx(10 * 3000 * (c["ols"] + c["adassp"]))
    assert work.seconds["score attack"] == pytest.approx(5 * 3000 * 2 * c["ols"])  # scored, not refitted
    # the map: 3 reps x 1000 rows x 2 epsilons
    assert work.seconds["map"] == pytest.approx(3 * 1000 * 2 * (c["ols"] + c["adassp"]))
    assert set(work.seconds) == {"estimate", "score attack", "map"}
    assert work.jobs == 2 * (1 + 1) + 10  # estimate (the attack in it; fixed: no tune job), map; the analysis's own
    assert work.cpu == pytest.approx(sum(work.seconds.values()) + workload.STARTUP * work.jobs)
    # decoy tuning: a tune job for AdaSSP, whose search looks at data, none for OLS
    assert workload.of_run(_run({"datasets": ["housing"], "reps": 10, "housing": {**LEAN, "tuning_mode": "decoy"}}),
                           []).jobs == work.jobs + 1  # fmt: skip
    # twice the repetitions: twice the estimate's fits, the attack's unchanged
    twice = workload.of_run(_run({"datasets": ["housing"], "reps": 20, "housing": LEAN}), [])
    assert twice.seconds["estimate"] == pytest.approx(2 * work.seconds["estimate"])
    assert twice.seconds["score attack"] == pytest.approx(work.seconds["score attack"])


def test_the_default_steps_are_all_counted_and_nothing_is_asked_of_a_target_outside_the_analyses():
    run = _run()
    work = workload.of_run(run, [])
    assert {"estimate", "score attack", "tuning", "map", "intervals", "targeted attacks"} <= set(work.seconds)
    assert workload.of_run(run, ["results/config_used.yaml"]).cpu == 0


def test_a_run_of_hours_is_warned_about_with_its_knobs_and_a_short_one_is_not():
    big = workload.of_run(_run(BENCHMARK, {"datasets": ["flights"], "reps": 1000}), [])
    text = workload.warning(big, 2)
    assert text is not None and "h " in text and "reps" in text and "targeted.m" in text
    assert workload.warning(big, 10_000) is None  # on enough cores it is not hours
    small = workload.of_run(_run({"datasets": ["housing"], "reps": 10, "housing": LEAN}), [])
    assert workload.warning(small, 2) is None
    assert workload.describe(small, 2).startswith("about ") and "on 2 cores" in workload.describe(small, 2)


def test_the_benchmark_counts_every_table_method_and_epsilon():
    run = _run(BENCHMARK)
    work = workload.of_run(run, ["benchmark"])
    b = BENCHMARK["benchmark"]
    fits = sum(
        b["reps"] * len(b["epsilon"]) * max(BENCHMARK.get(n, DEFAULT.get(n, {})).get("m") or DEFAULT["housing"]["m"])
        * workload.COST.get(k, workload.DEFAULT_COST) for n in b["datasets"] for k in b["methods"]
    )  # fmt: skip
    assert work.seconds["benchmark"] == pytest.approx(fits)


def test_targeted_releases_from_sums_count_a_quarter_of_a_refit():
    """OLS's and AdaSSP's shadows come from sums, precond_gd's are refits: measured on flights, a release from sums
    costs about a quarter of a fit (workload.SUMS_SHADOW)."""
    target = {"enabled": True, "methods": ["ols", "adassp", "precond_gd"], "k_top": 1, "k_random": 1, "shadows": 10,
              "test_releases": 20, "m": None}  # fmt: skip
    block = {**LEAN, "methods": ["ols", "adassp", "precond_gd"], "targeted": target}
    work = workload.of_run(_run({"datasets": ["housing"], "housing": block}), [])
    fits, c = 2 * (10 + 20) * (1 + 1) * (1000 + 2000), workload.COST  # at the smallest and largest m
    expected = fits * (workload.SUMS_SHADOW * (c["ols"] + c["adassp"]) + c["precond_gd"])
    assert work.seconds["targeted attacks"] == pytest.approx(expected)
