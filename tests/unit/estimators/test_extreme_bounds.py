"""A release is total at every public bound (issue 51). Every positive constant of every private method, and the
bounds of every interval route, set anywhere in the float range — subnormal, the ends 2^±484 of what
:func:`~dpcost.dp.mechanisms.check_positive` accepts and the floats just past them, the float maximum — on a data
set and a neighbour of it (the sensitivity fuzzer's hostile records, tests/sensitivity_fuzz.py), must give the same
outcome on both sides: both refused with a PrivacyError or ConfigError, or both a finite release. Never another
exception, never a non-finite estimate. What it guards: B_Y = 1e306 made SSP's sum overflow on one neighbour only
(one side released, the other refused: δ = 1 for that pair), and every interval raised a bare OverflowError for
B_Y ≥ 2e153. Hypothesis draws the constant, its value and the pair (derandomized, a fixed budget per method)."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcost.dp.mechanisms import BOUND_MAX, BOUND_MIN
from dpcost.dp.privacy import CALIBRATIONS, Privacy
from dpcost.errors import ConfigError, PrivacyError
from dpcost.estimators.registry import METHODS
from dpcost.inference.procedures import PROCEDURES, interval

from registry_cases import INTERVALS, PARAMS, TUNING, needs_missing_peer
from sensitivity_fuzz import cases

FMAX = float(np.finfo(float).max)
EDGES = (5e-324, 1e-300, math.nextafter(BOUND_MIN, 0), BOUND_MIN, 1e-100, 1e100, BOUND_MAX,
         math.nextafter(BOUND_MAX, math.inf), 2e153, 1e306, FMAX)  # fmt: skip
PRIVATE = [n for n, m in METHODS.items() if m.private and not needs_missing_peer(m)]
SETTINGS = dict(max_examples=8, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))  # fmt: skip


def extreme(draw) -> float:
    """A positive float at an edge above, or anywhere in the float range (2^e · [1, 2), e over every exponent)."""
    if draw(st.booleans()):
        return draw(st.sampled_from(EDGES))
    e = draw(st.integers(-1074, 1023))
    return min(FMAX, math.ldexp(draw(st.floats(1.0, 2.0, exclude_max=True)), e))


def outcome(run) -> str:
    """``refused`` (a PrivacyError or ConfigError: one line, public) or ``finite``; anything else fails the test."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = run()
    except (PrivacyError, ConfigError) as err:
        assert "\n" not in str(err).strip(), str(err)
        return "refused"
    values = [out.lower, out.upper, out.centre] if hasattr(out, "lower") else [np.asarray(out[0], dtype=float)]
    assert all(np.isfinite(v).all() for v in values), "a non-finite release"
    return "finite"


def _float_constants(tuning: dict) -> list[str]:
    return [k for k, v in tuning.items() if isinstance(v, float) and v > 0]


@pytest.mark.parametrize("name", [n for n in PRIVATE if _float_constants(METHODS[n].resolve_tuning(TUNING[n]))])
@settings(**SETTINGS)
@given(data=st.data())
def test_every_constant_at_any_scale_gives_one_outcome_on_both_neighbours(name, data):
    m = METHODS[name]
    tuning = m.resolve_tuning(TUNING[name])
    key = data.draw(st.sampled_from(_float_constants(tuning)), label="constant")
    tuning[key] = data.draw(st.composite(lambda draw: extreme(draw))(), label="value")
    calibration = data.draw(st.sampled_from(CALIBRATIONS), label="calibration")
    case = data.draw(cases(name, calibration), label="case")
    privacy = Privacy(case.epsilon, 1e-5, calibration, on_invalid="warn")

    def run(D):
        return lambda: m.estimate(*D, privacy=privacy, rng=np.random.default_rng(case.seed), tuning=tuning,
                                  params=PARAMS)  # fmt: skip

    assert outcome(run(case.D)) == outcome(run(case.neighbours[0])), (key, tuning[key])


# blocks_ols's censored route has no public bound to set (its bounds are rules; extreme data: test_blocks_ols.py)
@pytest.mark.parametrize(("name", "route"), [(n, r) for n, routes in PROCEDURES.items() for r in routes
                                             if r != "censored"])  # fmt: skip
@settings(**SETTINGS)
@given(data=st.data())
def test_every_interval_bound_at_any_scale_gives_one_outcome_on_both_neighbours(name, route, data):
    m = METHODS[name]
    tuning = {**m.resolve_tuning(TUNING[name]), **(INTERVALS.get(name, {}) if route != "blocks" else {})}
    keys = [k for k in ("B_X", "B_Y", "R") if k in tuning or (k == "R" and route != "blocks" and name in INTERVALS)]
    keys = keys or _float_constants(tuning)
    key = data.draw(st.sampled_from(keys), label="bound")
    tuning[key] = data.draw(st.composite(lambda draw: extreme(draw))(), label="value")
    calibration = data.draw(st.sampled_from(CALIBRATIONS), label="calibration")
    case = data.draw(cases(name, calibration), label="case")
    privacy = Privacy(case.epsilon, 1e-5, calibration, on_invalid="warn")

    def run(D):
        return lambda: interval(name, *D, privacy=privacy, rng=np.random.default_rng(case.seed), route=route,
                                **tuning)  # fmt: skip

    assert outcome(run(case.D)) == outcome(run(case.neighbours[0])), (key, tuning[key])


@pytest.mark.parametrize("value", [math.nextafter(BOUND_MAX, math.inf), 1e306, math.nextafter(BOUND_MIN, 0), 5e-324])
def test_a_bound_past_either_end_is_refused_in_one_line_naming_it(value):
    from dpcost.dp.mechanisms import check_positive

    with pytest.raises(PrivacyError, match="^B_Y = .*2\\^-?484"):
        check_positive("B_Y", value)
    assert check_positive("B_Y", BOUND_MAX) == BOUND_MAX and check_positive("B_Y", BOUND_MIN) == BOUND_MIN


def test_the_reviews_float_maximum_pairs_are_refused_alike():
    """The review's pairs: SSP at B_Y = 1e306 (the sum overflowed on one neighbour only) and the residual release at
    R = 3e152; and B_Y = 2e153, where every interval raised a bare OverflowError."""
    g = np.random.default_rng(0)
    X = g.standard_normal((200, 3))
    y = X @ [1.0, 2.0, 3.0] + g.standard_normal(200)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = 1e150, 1e306
    p = Privacy(1.0, 1e-5)

    def sides(release) -> set[str]:
        return {outcome(lambda D=D: release(*D)) for D in ((X, y), (X2, y2))}

    for kw in (dict(B_X=1.0, B_Y=1e306), dict(B_X=1.0, B_Y=2e153), dict(B_X=1.0, B_Y=3.0, R=3e152)):
        for route in ("delta", "bootstrap"):
            got = sides(lambda X, y, r=route, kw=kw: interval("ssp", X, y, privacy=p, rng=np.random.default_rng(1),
                                                              route=r, **kw))  # fmt: skip
            assert got == {"refused"}, (kw, route, got)
        if "R" not in kw:
            got = sides(lambda X, y, kw=kw: METHODS["ssp"].estimate(X, y, privacy=p, rng=np.random.default_rng(1),
                                                                    tuning=kw, params={}))  # fmt: skip
            assert got == {"refused"}, (kw, got)
