"""The privacy ledger, built from records as the estimate jobs write them (run_grid's plans, wrapped and saved)."""

import json
import warnings
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import yaml

from dpcost.analysis.designs import RegressionDesign
from dpcost.analysis.engine import run_grid
from dpcost.analysis.ledger import build_ledger, method_entry, release_terms, table_entry
from dpcost.dp.accountant import gaussian_epsilon
from dpcost.dp.mechanisms import gaussian_delta, gaussian_sigma
from dpcost.dp.plan import Release
from dpcost.dp.privacy import Privacy
from dpcost.dp.samplers import FLOAT_NOISE
from dpcost.estimators.objpert import NOISE as OBJPERT_NOISE
from dpcost.estimators.peers import DIFFPRIVLIB_NOISE
from dpcost.estimators.posterior import POSTERIOR_NOISE
from dpcost.estimators.registry import METHODS
from dpcost.run.config import with_defaults

M_GRID = [100, 1000]
PRIVACY = Privacy(0.5, "10/n^1.1")
TUNING = {
    "ols": {},
    "adassp": {"B_X": 1.0, "B_Y": 1.0},
    "noisy_truncated_ols": {"R": 1.0, "C": 2.0, "c_x": 1.0, "kappa": 0.1, "noise": "printed"},
}


def _design():
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(2000, 3))
    beta = np.array([0.5, -0.3, 0.2])
    return RegressionDesign(X, X @ beta + 0.1 * rng.normal(size=2000), beta)


def _record(name, privacy=PRIVACY, tuning=None):
    """What dpcost.jobs.estimate.estimate writes to its plans file, read back from JSON."""
    spec = METHODS[name]
    tuning = spec.resolve_tuning(TUNING[name] if tuning is None else tuning)
    _, plans = run_grid(
        _design(), spec, tuning=tuning, params={}, m_grid=M_GRID, reps=2, seed=0, privacy=privacy, dataset="housing"
    )
    record = {
        "dataset": "housing",
        "method": name,
        "label": spec.label,
        "private": spec.private,
        "privacy": privacy.to_dict(),
        "tuning": tuning,
        "params": {},
        "plans": plans,
    }
    return json.loads(json.dumps(record, allow_nan=False))


@pytest.fixture(scope="module")
def ledger():
    return build_ledger(
        dataset="housing",
        records=[_record(name) for name in TUNING],
        privacy=PRIVACY.to_dict(),
        not_private=["standardization with full-sample statistics"],
        notes=["a note"],
    )


def test_header_states_the_specification(ledger):
    assert ledger["dataset"] == "housing" and ledger["neighbours"] == "replace one record"
    assert ledger["epsilon"] == 0.5 and ledger["delta"] == "10/n^1.1"
    assert ledger["delta_is_evaluated_at"].startswith("n = m")
    assert ledger["calibration"] == "paper" and ledger["on_invalid"] == "refuse"
    assert ledger["not_private"] == ["standardization with full-sample statistics"] and ledger["notes"] == ["a note"]
    assert ledger["sampler"] == "exact"
    assert list(ledger["methods"]) == list(TUNING) and "per_m" in ledger["table"]
    json.dumps(ledger, allow_nan=False)  # JSON-ready


def test_nonprivate_baseline_says_so(ledger):
    assert ledger["methods"]["ols"] == {
        "label": METHODS["ols"].label,
        "private": False,
        "guarantee": "none (non-private baseline)",
    }


def test_private_entry_lists_every_m(ledger):
    e = ledger["methods"]["adassp"]
    assert e["private"] is True and e["label"] == METHODS["adassp"].label
    assert e["guarantee"] == "(0.5, delta(n = m))-DP, neighbours: replace one record"
    assert e["calibration"] == "paper" and e["tuning"] == {"B_X": 1.0, "B_Y": 1.0, "rho": 0.05}
    assert "3 Gaussian releases" in e["composition"] and "B_X = 1.0" in e["assumption (enforced in code)"]
    assert e["warnings"] == []
    assert [p["m"] for p in e["per_m"]] == M_GRID
    assert [p["delta"] for p in e["per_m"]] == pytest.approx([10 / m**1.1 for m in M_GRID])
    for p in e["per_m"]:
        assert p["epsilon"] == 0.5 and p["parameters"] == {}
        assert len(p["releases"]) == 3 and all(r["mechanism"].startswith("gaussian") for r in p["releases"])
        assert sum(r["epsilon"] * r["count"] for r in p["releases"]) == pytest.approx(0.5)
        assert sum(r["delta"] * r["count"] for r in p["releases"]) == pytest.approx(p["delta"])
    # less noise at the larger m
    assert e["per_m"][1]["releases"][2]["noise_scale"] != e["per_m"][0]["releases"][2]["noise_scale"]


def test_unproven_calibration_is_not_called_private(ledger):
    e = ledger["methods"]["noisy_truncated_ols"]
    assert e["guarantee"].startswith("NONE PROVEN") and e["private"] is False
    assert e["composition"].startswith("NONE PROVEN")
    assert [p["m"] for p in e["per_m"]] == M_GRID


def test_one_unproven_m_makes_the_whole_entry_unproven():
    rec = _record("adassp")
    rec["plans"][1]["proven"] = False
    e = build_ledger(dataset="housing", records=[rec], privacy=PRIVACY.to_dict(), not_private=[])["methods"]["adassp"]
    assert e["private"] is False and e["guarantee"].startswith("NONE PROVEN")


def test_privacy_warnings_of_the_plans_are_collected():
    """paper calibration outside its proven range, run anyway (on_invalid "warn"): proven plans, loud warnings."""
    spec = Privacy(2.0, 1e-5, "paper", "warn")
    rec = _record("noisy_truncated_ols", spec, {**TUNING["noisy_truncated_ols"], "noise": "derived"})
    per_m = [p["warnings"] for p in rec["plans"]]
    assert per_m[0] and all(w == per_m[0] for w in per_m)  # the same warnings at every m
    e = build_ledger(dataset="housing", records=[rec], privacy=spec.to_dict(), not_private=[])
    assert e["on_invalid"] == "warn"
    entry = e["methods"]["noisy_truncated_ols"]
    assert entry["private"] is True and entry["guarantee"].startswith("(2.0, delta(n = m))-DP")
    assert entry["warnings"] == sorted(per_m[0])  # said once, not once per m
    assert all(w.startswith("PRIVACY WARNING") and "proven only for epsilon < 1" in w for w in entry["warnings"])


# ---------------------------------------------------------------------------------------------------------------
# per-m δ ≥ 1/m flags and the table-level composition, on small hand-built records
# ---------------------------------------------------------------------------------------------------------------

EXACT_SAMPLER = "exact discrete gaussian on a grid of scale/2^20"
SIGMA0 = gaussian_sigma(1.0, 0.5, 1e-5)  # one Gaussian release of sensitivity 1 at (0.5, 1e-5), analytic
MU0 = 1 / SIGMA0


def _rel(mechanism, sensitivity, scale, count=1, norm="l2", kind="gaussian", noise="exact", sampler=EXACT_SAMPLER):
    """A release as a plans file holds it: the fields of :class:`Release`, validated by it."""
    return asdict(Release(mechanism, sensitivity, norm, scale, count, sampler=sampler, kind=kind, noise=noise))


def _plan(m, releases, epsilon=0.5, delta=1e-5, proven=True, why=None):
    """A plan whose releases are its whole mechanism, or, given ``why``, are not (and why)."""
    return {
        "m": m,
        "method": "x",
        "epsilon": epsilon,
        "delta": delta,
        "calibration": "tight",
        "composition": "as built by hand",
        "assumption": "none",
        "releases": releases,
        "neighbours": "replace one record",
        "parameters": {},
        "proven": proven,
        "whole_mechanism": why is None,
        "whole_mechanism_why": why or "built by hand: its releases are all there is",
        "warnings": [],
    }


def _hand(method, plans, private=True):
    privacy = {"epsilon": 0.5, "delta": 1e-5, "calibration": "tight", "on_invalid": "refuse", "neighbours": "replace"}
    return {
        "dataset": "toy",
        "method": method,
        "label": method,
        "private": private,
        "privacy": {**privacy, "sampler": "exact"},
        "tuning": {},
        "params": {},
        "plans": plans if private else [],
    }


def _gaussian_methods(m=1000, delta=1e-5):
    """Three methods, each exactly (0.5, 1e-5)-DP by its releases: 1, 2 and 4 Gaussians of μ² summing to μ₀²."""
    return [
        _hand("noisy_truncated_ols", [_plan(m, [_rel("gaussian", 1.0, SIGMA0)], delta=delta)]),
        _hand(
            "ssp",
            [
                _plan(
                    m,
                    [_rel("gaussian: X'X", 2.0, 2 * SIGMA0 * 2**0.5), _rel("gaussian: X'y", 3.0, 3 * SIGMA0 * 2**0.5)],
                    delta=delta,
                )
            ],
        ),
        _hand("noisy_gd", [_plan(m, [_rel("gaussian", 0.1, 0.2 * SIGMA0, count=4)], delta=delta)]),
    ]


def _table(records):
    t = build_ledger(dataset="toy", records=records, privacy=records[0]["privacy"], not_private=[])["table"]
    json.dumps(t, allow_nan=False)
    return t


def _pld_epsilon(noise_multiplier, delta):
    """Independent reference: dp-accounting's own PLD accountant on one Gaussian event (pessimistic)."""
    import dp_accounting
    from dp_accounting import pld

    acc = pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier))
    return acc.get_epsilon(delta)


def test_per_m_flags_delta_at_least_one_over_m():
    rec = _hand("ssp", [_plan(10, [], delta=0.2), _plan(1000, [], delta=1e-4)])
    e = method_entry(rec)
    assert [p["delta_ge_1_over_m"] for p in e["per_m"]] == [True, False]
    assert e["delta_warning"].startswith("PRIVACY WARNING: delta >= 1/m at m = 10 (delta = 0.2)")
    assert "m = 1000" not in e["delta_warning"]
    rec["plans"] = rec["plans"][1:]
    assert method_entry(rec)["delta_warning"] is None
    # the table names the methods flagged at each m
    t = _table([rec, _hand("adassp", [_plan(1000, [], delta=2e-3)])])
    assert [p["delta_ge_1_over_m"] for p in t["per_m"]] == [["adassp"]]
    assert any("delta >= 1/m = 0.001 for adassp" in w for w in t["per_m"][0]["warnings"])


def test_composed_delta_at_least_one_over_m_is_flagged_even_when_no_method_is():
    recs = [_hand(k, [_plan(1000, [], delta=4e-4, why="stated")]) for k in ("ops", "adaops", "objpert")]
    (p,) = _table(recs)["per_m"]
    assert p["delta_ge_1_over_m"] == [] and p["basic"]["delta"] == pytest.approx(1.2e-3)
    assert p["basic"]["delta_ge_1_over_m"] is True
    assert any("composed delta 0.0012 is >= 1/m" in w for w in p["warnings"])
    # and a sum of deltas >= 1 says basic composition is vacuous
    recs = [_hand(k, [_plan(10, [], delta=0.4, why="stated")]) for k in ("ops", "adaops", "objpert")]
    assert any("vacuous" in w for w in _table(recs)["per_m"][0]["warnings"])


def test_table_composes_gaussian_methods_exactly():
    recs = [*_gaussian_methods(), _hand("ols", [], private=False)]
    t = _table(recs)
    assert t["methods"] == ["noisy_truncated_ols", "ssp", "noisy_gd"]
    assert t["not_included"] == {"ols": "not private (non-private baseline): no guarantee, nothing to compose"}
    assert t["void"] == {} and t["guarantee"].startswith("all private outputs published together")
    (p,) = t["per_m"]
    assert p["m"] == 1000 and p["warnings"] == [] and p["note"] is None and p["not_run"] == []
    assert p["basic"] == {"epsilon": 1.5, "delta": pytest.approx(3e-5), "delta_ge_1_over_m": False}
    tight = p["tight"]
    assert tight["accounting"].startswith("exact") and tight["delta"] == 1e-5  # the largest delta of the table
    assert (
        tight["from_releases"] == ["noisy_truncated_ols", "ssp", "noisy_gd"] and tight["at_stated_epsilon_delta"] == []
    )
    # 3 methods of mu0 each are one sqrt(3) mu0-GDP mechanism: its exact epsilon, and the smallest one
    mu = 3**0.5 * MU0
    assert gaussian_delta(1.0, mu, tight["epsilon"]) <= 1e-5 < gaussian_delta(1.0, mu, tight["epsilon"] - 1e-6)
    ref = _pld_epsilon(1 / mu, 1e-5)
    assert tight["epsilon"] <= ref <= tight["epsilon"] + 1e-2
    assert 0.5 < tight["epsilon"] < 1.0 < p["basic"]["epsilon"]  # far below basic composition's 1.5


def test_methods_known_only_by_their_guarantee_enter_as_stated():
    # objpert's release is a Gaussian, yet not its whole mechanism; ops releases a posterior sample: their plans say
    # so, and why (noise drawn exactly here, so that the float-noise rule does not take them out first)
    b = _rel("gaussian: linear term b", 2.0, 5.0, kind="objective", sampler=None)
    objpert = _hand("objpert", [_plan(1000, [b], why="the regulariser carries part of the guarantee")])
    sample = _rel("posterior sample", None, None, norm="none", kind="posterior", sampler=None)
    ops = _hand("ops", [_plan(1000, [sample], 0.25, why="a posterior sample is not an additive-noise release")])
    t = _table([*_gaussian_methods(), objpert, ops])
    assert set(t["as_stated"]) == {"objpert", "ops"} and "regulariser" in t["as_stated"]["objpert"]
    (p,) = t["per_m"]
    tight = p["tight"]
    assert tight["at_stated_epsilon_delta"] == ["objpert", "ops"] and tight["accounting"].startswith("PLD")
    assert tight["delta"] == pytest.approx(3e-5)  # the exact methods' largest delta + the stated ones' deltas
    assert p["basic"] == {"epsilon": 2.25, "delta": pytest.approx(5e-5), "delta_ge_1_over_m": False}
    # bounded below by the Gaussian part alone, above by basic composition of the Gaussian part and the others
    gauss = gaussian_epsilon(3**0.5 * MU0, 1e-5)
    assert gaussian_epsilon(3**0.5 * MU0, 3e-5) < tight["epsilon"] <= gauss + 0.75 + 1e-2
    assert tight["epsilon"] < p["basic"]["epsilon"]


def test_a_release_the_ledger_cannot_compose_or_a_plan_not_whole_is_taken_at_its_stated_guarantee():
    # what decides is the plan's typed fields, whatever the method's name or its texts say
    odd = _hand("ssp", [_plan(1000, [_rel("gaussian: X'X", 2.0, 5.0), _rel("gaussian", 1.0, 1.0, kind="exponential")])])
    not_whole = _hand("brand_new", [_plan(1000, [_rel("gaussian", 1.0, SIGMA0)], why="its sampling is not recorded")])
    no_sens = _hand("adassp", [_plan(1000, [_rel("gaussian: X'y", None, 5.0)])])
    laplace_l2 = _hand("noisy_gd", [_plan(1000, [_rel("laplace", 1.0, 5.0, norm="l2", kind="laplace")])])
    gauss_l1 = _hand("dp_mean", [_plan(1000, [_rel("gaussian", 1.0, 5.0, norm="l1")])])
    t = _table([_gaussian_methods()[0], odd, not_whole, no_sens, laplace_l2, gauss_l1])
    assert (
        t["as_stated"]["ssp"]
        == "release 'gaussian' (exponential, l2) is not additive Gaussian (l2) or Laplace (l1) noise"
    )
    assert t["as_stated"]["brand_new"] == "its sampling is not recorded"
    assert "does not record a sensitivity, noise scale and count" in t["as_stated"]["adassp"]
    assert "(laplace, l2) is not additive Gaussian (l2) or Laplace (l1)" in t["as_stated"]["noisy_gd"]
    assert "(gaussian, l1) is not additive" in t["as_stated"]["dp_mean"]
    assert t["per_m"][0]["tight"]["from_releases"] == ["noisy_truncated_ols"]


def test_laplace_releases_compose_as_pure_dp():
    lap = [_rel("laplace", 2.0, 40.0, count=5, norm="each", kind="laplace")]  # 5 x (0.05, 0)
    t = _table([_hand("toy_laplace", [_plan(1000, lap, epsilon=0.25, delta=1e-5)])])
    (p,) = t["per_m"]
    assert p["warnings"] == [] and p["tight"]["accounting"].startswith("PLD")
    assert p["tight"]["epsilon"] <= 0.25 + 5e-3
    # a plan that claims less than its releases spend is flagged
    t = _table([_hand("toy_laplace", [_plan(1000, lap, epsilon=0.2, delta=1e-5)])])
    assert any("the releases of toy_laplace compose to epsilon = 0.24" in w for w in t["per_m"][0]["warnings"])


def test_releases_spending_more_than_stated_are_flagged():
    short = _hand("noisy_truncated_ols", [_plan(1000, [_rel("gaussian", 1.0, 0.8 * SIGMA0)])])
    (p,) = _table([short])["per_m"]
    (w,) = p["warnings"]
    assert w.startswith("PRIVACY WARNING: the releases of noisy_truncated_ols compose to epsilon = 0.6")
    assert "more than its stated epsilon = 0.5" in w
    assert p["tight"]["epsilon"] == pytest.approx(gaussian_epsilon(1 / (0.8 * SIGMA0), 1e-5))


def test_unproven_or_float_unsafe_methods_void_the_composed_guarantee():
    printed = _hand(
        "noisy_truncated_ols",
        [_plan(1000, [_rel("gaussian (printed variance, no proven sensitivity)", None, 0.1)], proven=False)],
    )
    unsafe = _gaussian_methods()[1]
    unsafe["plans"][0]["releases"][0]["noise"] = "float-unsafe"
    t = _table([printed, unsafe, _gaussian_methods()[2]])
    assert t["void"] == {
        "noisy_truncated_ols": "no proven guarantee (proven: false)",
        "ssp": "noise drawn by the float-unsafe sampler: not private on a computer",
    }
    assert t["guarantee"].startswith("VOID: publishing noisy_truncated_ols, ssp with the others voids")
    assert t["per_m"][0]["void"] == ["noisy_truncated_ols", "ssp"]
    assert "does not record a sensitivity" in t["as_stated"]["noisy_truncated_ols"]
    assert t["per_m"][0]["basic"]["epsilon"] == 1.5  # counted at its nominal budget


def test_only_basic_composition_when_no_method_composes_from_its_releases():
    rnm = _rel("report-noisy-max (Laplace)", 1.0, 9.0, 20, "linf", kind="selection")
    peeling = _hand("peeling", [_plan(m, [rnm], why="report-noisy-max selections are not additive") for m in (50, 100)])
    rnm = _rel("report-noisy-min (Laplace)", 1.0, 9.0, 20, "linf", kind="selection")
    fw = _hand("frank_wolfe", [_plan(100, [rnm])])  # even a plan claiming to be whole: a selection is not composed
    t = _table([peeling, fw])
    assert [p["m"] for p in t["per_m"]] == [50, 100]
    assert t["per_m"][0]["not_run"] == ["frank_wolfe"] and t["per_m"][0]["basic"]["epsilon"] == 0.5
    for p in t["per_m"]:
        assert p["tight"] is None and p["note"].startswith("only basic composition")
    assert "report-noisy-max" in t["as_stated"]["peeling"]


def test_table_of_the_run_grid_records(ledger):
    t = ledger["table"]
    assert t["methods"] == ["adassp", "noisy_truncated_ols"] and list(t["not_included"]) == ["ols"]
    assert t["void"] == {"noisy_truncated_ols": "no proven guarantee (proven: false)"}
    assert t["guarantee"].startswith("VOID: publishing noisy_truncated_ols")
    assert [p["m"] for p in t["per_m"]] == M_GRID
    for p in t["per_m"]:
        # delta = 10/m^1.1 >= 1/m at both m, for both methods
        assert p["delta_ge_1_over_m"] == ["adassp", "noisy_truncated_ols"]
        assert p["basic"]["epsilon"] == 1.0 and p["basic"]["delta"] == pytest.approx(2 * 10 / p["m"] ** 1.1)
        assert p["tight"]["from_releases"] == ["adassp"] and p["tight"]["at_stated_epsilon_delta"] == [
            "noisy_truncated_ols"
        ]
        assert p["tight"]["epsilon"] < p["basic"]["epsilon"]
    assert [p["delta_ge_1_over_m"] for p in ledger["methods"]["adassp"]["per_m"]] == [True, True]


# the methods whose plans say their releases are their whole mechanism: a new estimator is placed deliberately
WHOLE = {"noisy_gd", "dpsl_kt", "dp_ight", "two_stage", "noisy_truncated_ols", "ssp", "adassp", "joint_ssp",
         "precond_gd", "subsample_aggregate", "precond_gd_free", "precond_gd_adaptive", "boosted_adassp", "opendp_ssp",
         "dp_mean", "dp_glm", "dp_btl", "dp_fourier", "dp_fourier_laplace", "blocks_ols"}  # fmt: skip


@pytest.mark.parametrize("calibration", ["tight", "paper"])
def test_every_private_method_says_whether_its_releases_compose(calibration):
    """Each registered private method's plan says whether its releases are its whole mechanism, and why (or why not);
    those that say so are composed from their releases by the ledger (all Gaussian or Laplace), the others not."""
    from registry_cases import PARAMS, PLAN_SIZE, TUNING, needs_missing_peer

    for name, m in METHODS.items():
        if not m.private or needs_missing_peer(m):
            continue
        n, d = PLAN_SIZE.get(m.family, (1000, 5))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a paper calibration out of its range, made anyway
            plan = m.make_plan(Privacy(0.5, 1e-5, calibration, "warn"), n, d, m.resolve_tuning(TUNING[name]), PARAMS)
        assert plan.whole_mechanism is (name in WHOLE) and plan.whole_mechanism_why.strip(), name
        terms = release_terms(json.loads(json.dumps(plan.to_dict())))
        if plan.whole_mechanism:
            assert isinstance(terms, tuple) and (terms[0] > 0 or terms[1]), (name, terms)
        else:
            assert terms == plan.whole_mechanism_why, name


def test_plans_that_do_not_say_how_they_compose_are_refused():
    # a plans file written before the plans typed their releases: its estimate job must be rerun
    old = _gaussian_methods()[1]
    del old["plans"][0]["whole_mechanism"]
    with pytest.raises(ValueError, match="rerun its estimate job"):
        _table([old])
    old = _gaussian_methods()[1]
    del old["plans"][0]["releases"][0]["kind"]
    with pytest.raises(ValueError, match="do not say how they compose"):
        method_entry(old)


# the table-level composition of the default housing methods (config.yaml, m = 200, 2000, 20000, d = 8), in full
# precision, computed on the commit before the releases were typed (6af47ca, when the ledger read the kind and the
# rounding from the texts): typing them must leave every composed number as it was, bit for bit
PINNED_HOUSING = {  # the default housing methods, blocks_ols among them (its five Gaussian releases compose)
    "tight": {200: (6.0, 3.176452608365916, 0.05887040186524744),
              2000: (6.0, 2.5603110235667343, 0.004676242239113103),
              20000: (6.0, 2.393450167708553, 0.0003714471242937832)},
    "paper": {200: (7.0, 1.8628754062640815, 0.11774080373049488),
              2000: (7.0, 2.2456540813105166, 0.009352484478226206),
              20000: (7.0, 2.382353127252863, 0.0007428942485875663)},
}  # fmt: skip
HOUSING_FROM_RELEASES = ["noisy_gd", "noisy_truncated_ols", "ssp", "adassp", "joint_ssp", "precond_gd",
                         "subsample_aggregate", "boosted_adassp", "precond_gd_free", "precond_gd_adaptive",
                         "blocks_ols"]  # fmt: skip


@pytest.mark.parametrize("calibration", ["tight", "paper"])
def test_the_composition_of_the_default_housing_methods_is_as_before(calibration):
    housing = with_defaults(yaml.safe_load((Path(__file__).parents[3] / "config" / "config.yaml").read_text()))[
        "housing"
    ]
    records = []
    for name in housing["methods"]:
        m = METHODS[name]
        record = {"method": name, "private": m.private, "label": m.label, "plans": []}
        if m.private:
            tuning = m.resolve_tuning(housing["tuning"].get(name))
            for size in PINNED_HOUSING[calibration]:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    plan = m.make_plan(Privacy(0.5, "10/n^1.1", calibration, "warn"), size, 8, tuning, {})
                record["plans"].append({"m": size, **plan.to_dict(), "warnings": []})
        records.append(json.loads(json.dumps(record)))
    table = table_entry(records)
    for p in table["per_m"]:
        basic, tight, delta = PINNED_HOUSING[calibration][p["m"]]
        # the tight epsilon comes from dp-accounting's numerics, whose last bits move with its and scipy's releases
        assert p["basic"]["epsilon"] == basic
        assert (p["tight"]["epsilon"], p["tight"]["delta"]) == pytest.approx((tight, delta), rel=1e-12)
        assert p["tight"]["from_releases"] == HOUSING_FROM_RELEASES
    assert [p["m"] for p in table["per_m"]] == list(PINNED_HOUSING[calibration])


def test_choices_outside_the_budget_are_named_in_not_private():
    records = [_record("adassp"), _record("noisy_truncated_ols")]
    records[0]["tuning"] = {"mode": "decoy", "looked_at": "the real full design X", "choices": {}}
    records[1]["tuning"] = {"mode": "private", "looked_at": "only each repetition's own subsample"}
    ledger = build_ledger(
        dataset="housing", records=records, privacy=PRIVACY.to_dict(), not_private=["standardization"], notes=[]
    )
    assert ledger["tuning"] == {
        "adassp": {"mode": "decoy", "looked_at": "the real full design X"},
        "noisy_truncated_ols": {"mode": "private", "looked_at": "only each repetition's own subsample"},
    }
    assert ledger["not_private"] == [
        "standardization",
        "NOT PRIVATE: the constants of adassp were chosen by decoy tuning, which looked at the real full design X",
    ]  # private tuning is paid inside the budget: no note


def test_releases_named_with_their_calibration_are_composed():
    # "gaussian (analytic Gaussian ...): what" is a Gaussian release: the knowledge-transfer methods name their
    # calibration in the mechanism, and were once left uncomposed because of it
    from dpcost.estimators.dp_ight import dp_ight_plan
    from dpcost.estimators.knowledge_transfer import dpsl_kt_plan
    from dpcost.estimators.two_stage import two_stage_plan

    p = Privacy(1.0, 1e-5, "tight")
    plans = {
        "dpsl_kt": dpsl_kt_plan(p, 100, 20, s=3, X_public=np.eye(20), c_lambda=1.0, c_x=1.0, residual_clip=1.0,
                                tol=0.01),
        "dp_ight": dp_ight_plan(p, 100, 20, s=3, T=5, eta=1.0, c_x=1.0, B_y=1.0, radius=1.0),
        "two_stage": two_stage_plan(p, 100, 20, s=3, blocks=5, block_iters=2, share=0.5, B_X=1.0, residual_clip=1.0,
                                    c_lambda=1.0, tol=0.01),
    }  # fmt: skip
    for name, plan in plans.items():
        terms = release_terms(plan.to_dict())
        assert isinstance(terms, tuple) and terms[0] > 0, (name, terms)
    # a grid release is composed at its sensitivity plus the rounding's r·g: SSP's two releases at their common noise
    # multiplier ρ come back as exactly 2/(ρ(1 + MARGIN))² (Δ/σ alone would understate μ by a relative ~1e-5)
    from dpcost.dp.accountant import gaussian_noise_multiplier
    from dpcost.dp.samplers import MARGIN
    from dpcost.estimators.ssp import ssp_plan

    mu2, _ = release_terms(ssp_plan(p, 1000, 8, B_X=3.0, B_Y=3.0).to_dict())
    assert mu2 == pytest.approx(2 / (gaussian_noise_multiplier(2, 1.0, 1e-5) * (1 + MARGIN)) ** 2, rel=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# floating-point noise


def test_float_noise_methods_are_left_out_of_the_composition_and_say_why():
    # objpert's b (noise inside an argmin) and a peer's own samplers are drawn by float samplers: NOT PROVEN
    b = _rel("gaussian: linear term b", 2.0, 5.0, kind="objective", noise="float", sampler=OBJPERT_NOISE)
    objpert = _hand("objpert", [_plan(1000, [b], why="objective perturbation")])
    own = _rel("laplace", None, None, norm="none", kind="peer", noise="float", sampler=DIFFPRIVLIB_NOISE)
    lib = _hand("diffprivlib", [_plan(1000, [own], delta=0.0, why="its own accounting")])
    records = [*_gaussian_methods(), objpert, lib]
    t = _table(records)
    assert set(t["float_noise"]) == {"objpert", "diffprivlib"}
    why = t["float_noise"]["objpert"]
    why_objpert = why.removesuffix(": left out of the composed guarantee")
    assert why.startswith(f"{FLOAT_NOISE}: the noise of gaussian: linear term b is drawn by") and "left out" in why
    # not composed, not counted, and not voiding the others' guarantee
    assert t["methods"] == ["noisy_truncated_ols", "ssp", "noisy_gd"] and t["void"] == {} and t["as_stated"] == {}
    (p,) = t["per_m"]
    assert p["methods"] == sorted(t["methods"]) and p["basic"]["epsilon"] == 1.5
    assert p["tight"]["from_releases"] == t["methods"] and p["tight"]["at_stated_epsilon_delta"] == []
    assert t["guarantee"].startswith("all private outputs published together")
    assert t["guarantee"].endswith(f"objpert, diffprivlib: {FLOAT_NOISE}, not covered (see float_noise)")
    # the method's own entry: not private, why, and what holds in exact arithmetic only
    entry = build_ledger(dataset="toy", records=records, privacy=records[0]["privacy"], not_private=[])["methods"]
    assert entry["objpert"]["private"] is False and entry["ssp"]["private"] is True
    assert entry["objpert"]["guarantee"] == f"{why_objpert}. In exact arithmetic: {entry['ssp']['guarantee']}"


def test_float_noise_does_not_hide_an_unproven_plan_or_the_float_unsafe_switch():
    # an unproven plan still voids, float noise or not; the global float-unsafe sampler still voids everything
    posterior = _rel("posterior sample", None, None, norm="none", kind="posterior", noise="float",
                     sampler=POSTERIOR_NOISE)  # fmt: skip
    unproven = _hand("adaops", [_plan(1000, [posterior], proven=False, why="a posterior sample")])
    unsafe = _gaussian_methods()[1]
    unsafe["plans"][0]["releases"][0]["noise"] = "float-unsafe"
    t = _table([unproven, unsafe, _gaussian_methods()[2]])
    assert t["float_noise"] == {} and set(t["void"]) == {"adaops", "ssp"}
    assert t["guarantee"].startswith("VOID: publishing adaops, ssp")
    assert method_entry(unproven)["guarantee"].startswith("NONE PROVEN")


def test_a_method_run_under_tuning_none_gets_no_not_private_note():
    # tuning mode none: no constant looked at any data, so nothing to confess beside the preprocessing
    records = [_record("adassp"), _record("noisy_truncated_ols")]
    records[0]["tuning"] = {"mode": "none", "looked_at": "nothing: every constant is a rule", "choices": {}}
    records[1]["tuning"] = {"mode": "fixed", "looked_at": "the config's constants", "choices": {}}
    ledger = build_ledger(
        dataset="housing", records=records, privacy=PRIVACY.to_dict(), not_private=["standardization"], notes=[]
    )
    assert ledger["tuning"]["adassp"]["mode"] == "none"
    assert ledger["not_private"] == [
        "standardization",
        "NOT PRIVATE: the constants of noisy_truncated_ols were chosen by fixed tuning, which looked at the config's "
        "constants",
    ]
