"""The registry: tuning keys and defaults read from the estimators' signatures, config checks that name the bad key,
one plan per private method under its registry name, and Method.estimate's (estimate, support) contract."""

import inspect
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from dpcost.analysis.ledger import float_noise_reason
from dpcost.dp.plan import KINDS, NOISE, NORMS, PrivacyPlan
from dpcost.dp.plan import noise_of as plan_noise
from dpcost.dp.privacy import CALIBRATIONS, Privacy
from dpcost.dp.samplers import FLOAT_NOISE, SAMPLERS, T, add_noise, rounding_steps
from dpcost.errors import ConfigError, PrivacyError
from dpcost.estimators.method import Abstention
from dpcost.estimators.ols import ols
from dpcost.estimators.registry import ANALYSIS_PARAMS, CALIBRATION_PARAMS, FLOAT, METHODS, Method, get, methods_of
from dpcost.estimators.truncated_ols import noisy_truncated_ols, noisy_truncated_ols_plan
from dpcost.run.config import with_defaults

from registry_cases import (
    DEFAULTS,
    GIVEN_OPTIONAL,
    NEIGHBOURS,
    PARAMS,
    PLAN_SIZE,
    TUNING,
    UNPROVEN,
    estimate_shape,
    needs_missing_peer,
    tiny,
)
from support import synthetic_regression

PRIVATE = [name for name, m in METHODS.items() if m.private]


def test_the_tuning_table_covers_the_registry():
    assert set(TUNING) == set(METHODS)
    families = ("regression", "mean", "glm", "ranking", "nonparametric", "sparse_learning")
    assert set().union(*(methods_of(f, simulation=True) for f in families)) == set(METHODS)
    assert not {"iht", "dp_iht", "frank_wolfe_lasso", "dp_mean", "karwa_vadhan"} & set(methods_of("regression"))
    for family in ("ranking", "nonparametric"):  # simulation only: the designs give the graph, K
        assert methods_of(family, simulation=True) and not methods_of(family)
    # the real-data logistic analysis runs the sparse GLMs; the dense ones (d > m there) are the simulation's
    assert set(methods_of("glm")) == {"sparse_glm_iht", "dp_sparse_glm"}
    assert get("noisy_gd") is METHODS["noisy_gd"] and get("peeling", "mean") is METHODS["peeling"]
    with pytest.raises(ConfigError, match="unknown method 'noisy_gd'"):
        get("noisy_gd", "mean")
    with pytest.raises(ConfigError, match="unknown method family"):
        methods_of("classification")


@pytest.mark.parametrize("name", METHODS)
def test_tuning_keys_and_defaults_come_from_the_estimator_signature(name):
    m = METHODS[name]
    kw = {k: p for k, p in inspect.signature(m.fn).parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    tuning = [k for k in kw if k not in ("privacy", "rng", *ANALYSIS_PARAMS, *CALIBRATION_PARAMS)]
    assert m.tuning_keys() == tuple(tuning)
    assert m.tuning_defaults() == {k: kw[k].default for k in tuning if kw[k].default is not inspect.Parameter.empty}
    assert m.tuning_defaults() == DEFAULTS.get(name, {})
    assert set(m.required_tuning()) == set(TUNING[name]) - GIVEN_OPTIONAL.get(name, set())
    assert m.analysis_params() == tuple(k for k in kw if k in ANALYSIS_PARAMS)
    assert m.resolve_tuning(TUNING[name]) == {**DEFAULTS.get(name, {}), **TUNING[name]}


@pytest.mark.parametrize("name", PRIVATE)
def test_plans_take_privacy_n_d_and_tuning_keys_without_defaults(name):
    m = METHODS[name]
    params = inspect.signature(m.plan).parameters
    assert list(params)[:3] == ["privacy", "n", "d"]
    kw = {k: p for k, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert set(kw) <= set(m.tuning_keys()) | set(m.analysis_params()) | set(m.calibration_params())
    assert set(m.calibration_params()) <= set(kw)  # what calibrates the noise must reach the plan
    tuning = [p for k, p in kw.items() if k not in CALIBRATION_PARAMS and k not in ANALYSIS_PARAMS]
    assert all(p.default is inspect.Parameter.empty for p in tuning), "defaults live in the estimator only"
    # an optional analysis parameter (one an analysis may not give, e.g. loss) has the estimator's default
    fn_kw = inspect.signature(m.fn).parameters
    for k in set(kw) & set(ANALYSIS_PARAMS):
        assert kw[k].default == fn_kw[k].default, k


@pytest.mark.parametrize("name", METHODS)
def test_resolve_tuning_refuses_an_unknown_key_naming_it(name):
    m = METHODS[name]
    with pytest.raises(ConfigError, match=rf"tuning\.{name}: unknown key\(s\) \['not_a_key'\]"):
        m.resolve_tuning({**TUNING[name], "not_a_key": 1.0})
    with pytest.raises(ConfigError, match="somewhere: unknown"):
        m.resolve_tuning({"not_a_key": 1.0}, where="somewhere")


@pytest.mark.parametrize("name", [n for n in METHODS if TUNING[n]])
def test_resolve_tuning_refuses_a_missing_required_key_naming_it(name):
    m = METHODS[name]
    for key in set(TUNING[name]) - GIVEN_OPTIONAL.get(name, set()):
        partial = {k: v for k, v in TUNING[name].items() if k != key}
        with pytest.raises(ConfigError, match=rf"{name} is missing required key\(s\) \['{key}'\]"):
            m.resolve_tuning(partial)


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("name", PRIVATE)
def test_every_private_method_has_a_plan_under_its_own_name(name, calibration):
    m = METHODS[name]
    if needs_missing_peer(m):
        pytest.skip(f"{m.peer} not usable here")
    tuning = m.resolve_tuning(TUNING[name])
    privacy = Privacy(0.5, 1e-5, calibration)
    n, d = PLAN_SIZE.get(m.family, (1000, 5))
    unproven = {
        "adaops": "AdaOPS as printed",
        "dp_mean": "Alg. 3.1's printed noise variance",
        "tukey_em": "the paper's split",
    }
    if name in unproven and calibration == "paper":
        # AdaOPS as printed is never (ε, δ)-DP, Alg. 3.1's printed σ not at δ = 1e-5: refused, or made with a
        # warning and recorded as unproven
        with pytest.raises(PrivacyError, match=unproven[name]):
            m.make_plan(privacy, n, d, tuning, PARAMS)
        with pytest.warns(RuntimeWarning, match="PRIVACY WARNING"):
            plan = m.make_plan(Privacy(0.5, 1e-5, calibration, on_invalid="warn"), n, d, tuning, PARAMS)
        assert isinstance(plan, PrivacyPlan) and plan.method == name and plan.proven is False
        return
    plan = m.make_plan(privacy, n, d, tuning, PARAMS)
    assert isinstance(plan, PrivacyPlan)
    assert plan.method == name
    assert plan.epsilon == 0.5 and plan.neighbours == NEIGHBOURS.get(name, "replace one record")
    assert plan.calibration == ("library" if m.peer else calibration)
    assert plan.delta == (0.0 if name == "diffprivlib" else 1e-5)  # diffprivlib is pure ε-DP
    assert plan.proven is (name not in UNPROVEN)


@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("name", PRIVATE)
def test_every_release_documents_itself_in_typed_fields(name, calibration, sampler):
    """What an accountant needs is in typed fields, never in the texts: the kind, the norm, the coordinates, what the
    grid's rounding adds and how the noise is drawn; and the plan says whether its releases are the whole mechanism.
    The texts are read here only to check that they say the same."""
    m = METHODS[name]
    if needs_missing_peer(m):
        pytest.skip(f"{m.peer} not usable here")
    n, d = PLAN_SIZE.get(m.family, (1000, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a paper calibration outside its range, made anyway
        plan = m.make_plan(Privacy(0.5, 1e-5, calibration, "warn", sampler=sampler), n, d,
                           m.resolve_tuning(TUNING[name]), PARAMS)  # fmt: skip
    assert isinstance(plan.whole_mechanism, bool) and plan.whole_mechanism_why.strip()
    assert plan.releases
    for r in plan.releases:
        assert r.kind in KINDS and r.norm in NORMS and r.noise in NOISE, r
        assert r.noise == "float" if FLOAT_NOISE in (r.sampler or "") else r.noise == plan_noise(sampler), r
        if r.norm in ("l1", "l2") and r.kind in ("gaussian", "laplace", "knorm", "objective"):
            assert isinstance(r.coordinates, int) and r.coordinates >= 1, r
        grid = r.noise == "exact" and r.sensitivity is not None and r.kind in ("gaussian", "laplace", "selection")
        if grid:  # the rounding the scale was paid for, as the sampler text states it
            k, norm = (r.coordinates, r.norm) if r.norm in ("l1", "l2") else (1, "linf")
            assert r.rounding == rounding_steps(k, norm) * r.noise_scale / T > 0, r
            assert f"inflated by {rounding_steps(k, norm)!r} grid steps for rounding {k} coordinate(s)" in r.sampler
        elif r.kind != "knorm":
            assert r.rounding == 0.0, r
    json.loads(json.dumps(plan.to_dict(), allow_nan=False))  # what the plans file holds


@pytest.mark.parametrize("name", PRIVATE)
def test_plans_resolve_a_delta_formula_at_n(name):
    m = METHODS[name]
    if needs_missing_peer(m):
        pytest.skip(f"{m.peer} not usable here")
    tuning = m.resolve_tuning(TUNING[name])
    n, d = PLAN_SIZE.get(m.family, (1000, 5))
    formula = m.make_plan(Privacy(0.5, "10/n^1.1", "tight"), n, d, tuning, PARAMS)
    number = m.make_plan(Privacy(0.5, 10 / n**1.1, "tight"), n, d, tuning, PARAMS)
    assert formula == number


@pytest.mark.parametrize("name", METHODS)
def test_estimate_returns_the_estimate_and_its_support(name):
    m = METHODS[name]
    if needs_missing_peer(m):
        pytest.skip(f"{m.peer} not usable here")
    data = tiny(m.family)
    privacy = Privacy(0.5, 1e-5, "tight") if m.private else None
    tuning = m.resolve_tuning(TUNING[name])
    est, support = m.estimate(*data, privacy=privacy, rng=np.random.default_rng(9), tuning=tuning, params=PARAMS)
    assert est.shape == estimate_shape(m, data, privacy, tuning) and np.isfinite(est).all()
    if m.support is None:
        assert support is None
    elif m.support == "returned":
        assert len(support) == PARAMS["s"] == len(set(support.tolist()))
        assert set(np.flatnonzero(est).tolist()) <= set(support.tolist())
    else:
        assert m.support == "nonzero" and np.array_equal(support, np.flatnonzero(est))
    # the same call made directly: Method.estimate adds nothing but the analysis parameters it takes
    kw = {**tuning, **{k: PARAMS[k] for k in m.analysis_params() if k in PARAMS}}
    direct = m.fn(*data, privacy=privacy, rng=np.random.default_rng(9), **kw) if m.private else m.fn(*data, **kw)
    if isinstance(direct, Abstention):  # a released fallback: the same numbers, counted as an abstention
        direct = direct.fallback
    assert np.array_equal(est, direct[0] if isinstance(direct, tuple) else direct)


def test_printed_noise_is_the_noise_the_plan_records():
    # The ledger once showed a σ for noise="printed" that the estimator did not use: the plan must record the noise
    # actually drawn, and say that it is not a proven guarantee.
    n, d = 200, 5
    X, y, _ = synthetic_regression(n=n, d=d, seed=3)
    privacy = Privacy(0.5, 1e-5)
    tuning = dict(R=2.0, C=3.0, c_x=1.0, kappa=0.01, noise="printed")
    with pytest.warns(RuntimeWarning, match="not a proven DP guarantee"):
        plan = METHODS["noisy_truncated_ols"].make_plan(privacy, n, d, tuning, {})
    with pytest.warns(RuntimeWarning, match="not a proven DP guarantee"):
        assert plan == noisy_truncated_ols_plan(privacy, n, d, **tuning)
    assert plan.method == "noisy_truncated_ols" and plan.proven is False
    (rel,) = plan.releases
    sd = rel.noise_scale
    assert sd == pytest.approx(math.sqrt(d * 2.0**2 * math.log(1.25 / 1e-5)) / (n * 0.5), rel=1e-15)
    with pytest.warns(RuntimeWarning, match="not a proven DP guarantee"):
        est = noisy_truncated_ols(X, y, privacy=privacy, rng=np.random.default_rng(11), **tuning)
    # the estimate is the OLS of the truncated y plus N(0, sd²) drawn from the stream: with the recorded sd the draw
    # is reproduced bit for bit, with any other it is not
    base = ols(X, np.clip(y, -2.0, 2.0))
    assert np.array_equal(est, add_noise(base, "gaussian", sd, np.random.default_rng(11)))
    assert not np.array_equal(est, add_noise(base, "gaussian", sd * (1 + 1e-9), np.random.default_rng(11)))
    derived = METHODS["noisy_truncated_ols"].make_plan(privacy, n, d, {**tuning, "noise": "derived"}, {})
    assert derived.proven is True and derived.releases[0].noise_scale != sd


def _default_runs():
    """The private methods of the default housing, snp and snp_logistic runs with their config.yaml tuning."""
    config = with_defaults(yaml.safe_load((Path(__file__).parents[3] / "config" / "config.yaml").read_text()))
    for dataset in ("housing", "snp", "snp_logistic"):
        for name, tuning in (config[dataset].get("tuning") or {}).items():
            if METHODS[name].private:
                yield name, tuning


def test_labels_of_the_default_runs_say_not_proven_exactly_when_the_plan_has_float_noise():
    pytest.importorskip("opendp")  # opendp_ssp's plan asks OpenDP for its scale
    runs = dict(_default_runs())
    assert {"ops", "adaops", "objpert", "sheffet_jl", "diffprivlib", "opendp_ssp", "noisy_sgd", "peeling"} <= set(runs)
    floating = set()
    for name, tuning in runs.items():
        spec = METHODS[name]
        plan = spec.make_plan(Privacy(0.5, 1e-6, "tight"), 500, 8, spec.resolve_tuning(tuning), {"s": 5}).to_dict()
        if float_noise_reason(plan):
            floating.add(name)
        assert (FLOAT in spec.label) == (name in floating), name
    assert floating == {"ops", "adaops", "objpert", "sheffet_jl", "diffprivlib"}


def test_every_method_says_what_it_does_in_one_short_phrase():
    """The legends print ``label — what``: the phrase exists, is one line's worth, and adds to the label (it does not
    repeat the name). A method without one (Method's default, e.g. docs/development.md's example) prints its label."""
    for name, m in METHODS.items():
        assert m.what and len(m.what) <= 80 and "\n" not in m.what, name
        assert m.label.split(" (")[0].lower() not in m.what.lower(), name
    assert Method(name="x", family="regression", label="X", fn=ols).what == ""


@pytest.mark.parametrize("name", sorted(k for k, m in METHODS.items() if m.tuning_free))
def test_a_tuning_free_method_runs_with_no_constant_given(name):
    # tuning_mode none reads nothing from the config: every key must have its rule in code
    method = METHODS[name]
    assert method.private and method.required_tuning() == () and method.resolve_tuning(None) == method.tuning_defaults()
