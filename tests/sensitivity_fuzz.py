"""The sensitivity fuzzer (issue 35): Hypothesis draws a data set and replace-one neighbours for a registered private
method, and :func:`check` runs the method on both under the same released history
(:mod:`dpcost.dp.sensitivity`) and asserts every release moved by at most its stated sensitivity and both estimates
are finite. Shared by tests/unit/dp/test_sensitivity_fuzz.py (a bounded budget) and benchmarks/sensitivity_fuzz.py
(the long run).

The records. A fixed list of hostile rows missed the underflow hole, which needed a row of tiny entries *and* a huge
response; so a record's x and y get independent scales, each 10^e with e drawn uniformly over the whole float range
(−323 … 308) or from the extremes where norms underflow or overflow, or an entry is an arbitrary float Hypothesis
picks (its floats favour 0, −0, subnormals and the largest finite), or a value on or just past one of the method's
public bounds (its tuning constants and its plan's parameters: B_X, C, R, B0, …), a row scaled to norm exactly that
bound or to the next float above it, or a response that puts |y|·‖x‖ on or past a bound (a joint clip's). A data
set is the family's tiny well-formed one (tests/registry_cases.py) with columns optionally rescaled to different
magnitudes, one to three rows replaced by records, optionally every row the same record; each neighbour replaces one
of those rows or any row (or, for BTL, one item's outcomes) by another record. Values stay in a family's public
domain (logistic y in {0, 1}, Fourier x in [0, 1], BTL outcomes 0/1), where a DataError is the public answer.

A plan marked unproven (``proven=False``: a paper's procedure kept for reproduction whose guarantee has a gap) makes
no claim to check: its runs must still be total, and :func:`check` returns its observations without asserting them.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from dpcost.dp.privacy import Privacy
from dpcost.dp.sensitivity import Observation, compare, trace_runs
from dpcost.estimators.registry import METHODS

from registry_cases import INTERVALS, PARAMS, TUNING, tiny
from support import synthetic_regression

NEIGHBOURS = 4  # neighbours per example: one recorded run on D is replayed into each
EPSILONS = (0.5, 8.0)  # 8: where TukeyEM's test runs at n = 60, and the tuning-free bounds are widest
DELTA = 1e-5
TOL = 1e-9  # relative slack for floating-point rounding of the pre-noise values (the grid pays ~1e-6 of the scale)
# exponents where squares underflow (< −154) or overflow (> 154), and the ends of the float range
EXTREMES = (-323, -320, -308, -300, -250, -200, -170, -160, -155, 155, 160, 170, 200, 250, 300, 308)
TINY = float(np.nextafter(0.0, 1.0))
PRIVATE = [name for name, m in METHODS.items() if m.private]
# rows of the base data where the family's 60 are too few for the method to release anything (TukeyEM's blocks at
# n = 60 are 3 rows each: the test fails on every data set and L stays 0; at 200 it passes at epsilon 8, L = 5-6)
ROWS = {"tukey_em": 200}


def base(name: str) -> tuple:
    """The well-formed data set the records go into: the family's tiny one, or more rows of the same design."""
    if name in ROWS:
        return synthetic_regression(n=ROWS[name], d=3, seed=4)[:2]
    return tiny(METHODS[name].family)


@dataclass(frozen=True)
class Case:
    epsilon: float
    seed: int
    D: tuple
    neighbours: tuple


def bounds_of(name: str, calibration: str, epsilon: float, D: tuple) -> list[float]:
    """The public bounds a record can sit on: every positive finite number among the method's tuning constants and
    its plan's parameters (tuning-free bounds are there), and 1."""
    m = METHODS[name]
    tuning = m.resolve_tuning(TUNING[name])
    n, d = size(m.family, D)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = m.make_plan(privacy(calibration, epsilon), n, d, tuning, PARAMS)
    values = [*tuning.values(), *plan.parameters.values(), *INTERVALS.get(name, {}).values()]
    out = {1.0}
    for v in values:
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and 0 < v < 1e300:
            out.add(float(v))
    return sorted(out)


def privacy(calibration: str, epsilon: float) -> Privacy:
    # the paper calibration is outside its proven range for a few methods at n = 60: run with a warning
    return Privacy(epsilon, DELTA, calibration, on_invalid="warn")


def size(family: str, D: tuple) -> tuple[int, int]:
    """The (n, d) a plan takes: BTL's n and d are the items; the Fourier design is one-dimensional."""
    if family == "ranking":
        return PARAMS["n_items"], PARAMS["n_items"]
    if family == "nonparametric":
        return len(D[1]), 1
    return D[0].shape


# ---- records -------------------------------------------------------------------------------------------------


def _sign(draw) -> float:
    return -1.0 if draw(st.booleans()) else 1.0


def scale(draw) -> float:
    """10^e·m, m in [1, 10), e over the whole float range or at its extremes, or 0, the smallest subnormal or the
    largest finite float (a product that would overflow is the largest finite)."""
    kind = draw(st.sampled_from(("range", "extreme", "extreme", "ordinary", "edge")))
    if kind == "edge":
        return draw(st.sampled_from((0.0, TINY, float(np.finfo(float).max))))
    e = draw(st.integers(-323, 308) if kind == "range" else st.sampled_from(EXTREMES) if kind == "extreme"
             else st.integers(-3, 3))  # fmt: skip
    return min(float(10.0**e) * draw(st.floats(1.0, 9.99)), float(np.finfo(float).max))


def scalar(draw, bounds) -> float:
    """An entry: at a drawn scale, any finite float Hypothesis picks, or on or just past a public bound."""
    kind = draw(st.sampled_from(("scale", "float", "bound")))
    if kind == "float":
        return draw(st.floats(allow_nan=False, allow_infinity=False))
    if kind == "bound":
        return _sign(draw) * near(draw, draw(st.sampled_from(bounds)))
    return _sign(draw) * scale(draw)


def near(draw, b: float) -> float:
    """b, the next float above it, b·(1 + 1e-9) or 2b: on and just past a bound."""
    return draw(st.sampled_from((b, float(np.nextafter(b, math.inf)), b * (1 + 1e-9), 2 * b)))


def direction(draw, d: int) -> np.ndarray:
    v = np.array(draw(st.lists(st.integers(-3, 3), min_size=d, max_size=d)), dtype=float)
    if not v.any():
        v[draw(st.integers(0, d - 1))] = 1.0
    return v / np.abs(v).max()


def row(draw, d: int, bounds) -> np.ndarray:
    """A row of d entries: each its own scalar, one direction at one scale, or of norm on or just past a bound."""
    kind = draw(st.sampled_from(("mixed", "scaled", "scaled", "on_bound")))
    if kind == "mixed":
        return np.array([scalar(draw, bounds) for _ in range(d)])
    v = direction(draw, d)
    if kind == "scaled":
        with np.errstate(under="ignore"):
            return v * scale(draw)  # entries within ±scale: finite
    return v / np.linalg.norm(v) * near(draw, draw(st.sampled_from(bounds)))


def record(draw, family: str, D: tuple, bounds) -> tuple:
    """One record of the family: (x, y) with x a row (regression, GLM, sparse learning) or a point of [0, 1]
    (Fourier), y a scalar (0/1 for the GLM); a row for the mean. The row and the response are drawn independently,
    or (a third of the records) on or past a bound b of their product, |y|·‖x‖ ∈ {b, …, 10^10·b} with the row at
    any scale: the bound of a joint clip, which a row of tiny entries with a huge response sits beyond."""
    if family == "mean":
        return (row(draw, D[0].shape[1], bounds),)
    if family == "nonparametric":
        x = draw(st.one_of(st.floats(0.0, 1.0), st.sampled_from((0.0, 1.0, TINY, 1 - 2**-53))))
        return x, scalar(draw, bounds)
    if family == "glm":
        return row(draw, D[0].shape[1], bounds), float(draw(st.integers(0, 1)))
    if draw(st.integers(0, 2)) == 0:  # on or past a joint bound: |y|·‖x‖ ≈ b, the row at any scale
        v, size = direction(draw, D[0].shape[1]), scale(draw)
        target = near(draw, draw(st.sampled_from(bounds))) * draw(st.sampled_from((1.0, 1e3, 1e10)))
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            x, y = v * size, np.float64(target) / np.linalg.norm(v) / np.float64(size)  # ‖x‖ = size·‖v‖
        return x, _sign(draw) * float(min(y, np.finfo(float).max))
    return row(draw, D[0].shape[1], bounds), scalar(draw, bounds)


def _put(D: tuple, i: int, rec: tuple) -> tuple:
    out = tuple(a.copy() for a in D)
    for a, v in zip(out, rec, strict=True):
        a[i] = v
    return out


@st.composite
def cases(draw, name: str, calibration: str) -> Case:
    """A data set and NEIGHBOURS replace-one neighbours of it for ``name`` (see the module docstring)."""
    m = METHODS[name]
    family = m.family
    epsilon = draw(st.sampled_from(EPSILONS))
    D = base(name)
    if family == "ranking":  # the record is one item's outcomes on the public graph
        edges, y = D
        y = np.array(draw(st.lists(st.integers(0, 1), min_size=len(y), max_size=len(y))), dtype=float)
        nbrs = []
        for _ in range(NEIGHBOURS):
            item = draw(st.integers(0, PARAMS["n_items"] - 1))
            touch = np.flatnonzero((edges == item).any(axis=1))
            y2 = y.copy()
            y2[touch] = draw(st.lists(st.integers(0, 1), min_size=touch.size, max_size=touch.size))
            nbrs.append((edges, y2))
        return Case(epsilon, draw(st.integers(0, 2**32 - 1)), (edges, y), tuple(nbrs))
    bounds = bounds_of(name, calibration, epsilon, D)
    n = len(D[0])
    if family != "nonparametric" and draw(st.booleans()):  # columns of different magnitudes
        X = D[0] * np.array([10.0 ** draw(st.sampled_from((-200, -160, -3, 0, 3, 160, 200))) for _ in D[0][0]])
        D = (X, *D[1:])
    hostile = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True))
    for i in hostile:  # hostile rows in D itself
        D = _put(D, i, record(draw, family, D, bounds))
    if draw(st.integers(0, 4)) == 0:  # every row the same record
        rec = record(draw, family, D, bounds)
        D = tuple(np.broadcast_to(np.asarray(v, dtype=float), a.shape).copy() for a, v in zip(D, rec, strict=True))
    # a neighbour replaces one of D's hostile rows (both records of the pair then hostile) or any row
    where = st.one_of(st.sampled_from(hostile), st.integers(0, n - 1))
    nbrs = tuple(_put(D, draw(where), record(draw, family, D, bounds)) for _ in range(NEIGHBOURS))
    return Case(epsilon, draw(st.integers(0, 2**32 - 1)), D, nbrs)


# ---- the check -----------------------------------------------------------------------------------------------


def check(name: str, calibration: str, case: Case) -> list[Observation]:
    """Run ``name`` on the case's D and neighbours under one released history; assert every estimate is finite, the
    runs on D′ made the releases D's did, the plan records every release and counts every changed one, and — for a
    proven plan — each release moved by at most its stated sensitivity (to TOL). Returns the observations."""
    m = METHODS[name]
    p = privacy(calibration, case.epsilon)
    tuning = m.resolve_tuning(TUNING[name])
    if tuning.get("d_max", 0) is None:  # BTL: the plan the estimator makes reads the public graph's maximum degree
        tuning["d_max"] = int(np.bincount(case.D[0].ravel()).max())
    n, d = size(m.family, case.D)

    def run(data):
        return m.estimate(*data, privacy=p, rng=np.random.default_rng(case.seed), tuning=tuning, params=PARAMS)[0]

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PRIVACY WARNING")
        plan = m.make_plan(p, n, d, tuning, PARAMS)
        try:
            rec, out, results = trace_runs(run, case.D, list(case.neighbours))
        except Exception as e:  # a refusal that depends on the data tells neighbours apart
            raise AssertionError(f"{name}: the run on D failed: {e!r}") from e
    return _observed(name, plan, out, rec, results)


def check_interval(name: str, calibration: str, case: Case) -> list[Observation]:
    """As :func:`check`, for the private interval of ``name`` (:func:`dpcost.inference.interval`, default route,
    the options of registry_cases.INTERVALS): the estimator's releases and the interval's own (the residual sum of
    squares) against the interval's plan, which lists both."""
    from dpcost.inference import interval

    p = privacy(calibration, case.epsilon)
    options = {**TUNING[name], **INTERVALS[name]}

    def run(data):
        return interval(name, *data, privacy=p, rng=np.random.default_rng(case.seed), **options)

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PRIVACY WARNING")
        try:
            rec, out, results = trace_runs(run, case.D, list(case.neighbours))
        except Exception as e:
            raise AssertionError(f"{name} interval: the run on D failed: {e!r}") from e
    assert any("sum of squared residuals" in r.mechanism for r in out.plan.releases), out.plan.releases
    results = [r if isinstance(r, BaseException) else (r[0], r[1].centre) for r in results]
    return _observed(f"{name} interval", out.plan, out.centre, rec, results)


def check_blocks(name: str, calibration: str, case: Case, k: int = 2) -> list[Observation]:
    """As :func:`check`, for the method's stacked blocks path (``Method.blocks``, the blocks interval's): D's first
    k·⌊n/k⌋ rows as k blocks, against the plan of one block; a neighbour's replaced row lies in one block, so one
    unit of each stacked release may move (the plan's count), the others must not."""
    m = METHODS[name]
    p = privacy(calibration, case.epsilon)
    tuning = m.resolve_tuning(TUNING[name])
    n, d = size(m.family, case.D)
    nb = n // k

    def run(data):
        X, y = (np.asarray(a, dtype=float)[: k * nb] for a in data)
        return m.blocks(X.reshape(k, nb, d), y.reshape(k, nb), privacy=p, rng=np.random.default_rng(case.seed),
                        **tuning)  # fmt: skip

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PRIVACY WARNING")
        plan = m.make_plan(p, nb, d, tuning, PARAMS)
        try:
            rec, out, results = trace_runs(run, case.D, list(case.neighbours))
        except Exception as e:
            raise AssertionError(f"{name} blocks: the run on D failed: {e!r}") from e
    return _observed(f"{name} blocks", plan, out, rec, results)


def _observed(name: str, plan, out, rec, results) -> list[Observation]:
    """The checks of :func:`check` on traced runs: finite outputs, and each release within its stated sensitivity."""
    assert np.isfinite(out).all(), f"{name}: a non-finite estimate on D: {out}"
    seen = []
    for k, res in enumerate(results):
        if isinstance(res, BaseException):
            raise AssertionError(f"{name}: the run on neighbour {k} failed: {res!r}") from res
        trace, out2 = res
        assert np.isfinite(out2).all(), f"{name}: a non-finite estimate on neighbour {k}: {out2}"
        for o in compare(plan, rec, trace):
            assert not plan.proven or o.observed <= o.stated * (1 + TOL), (
                f"{name}: release {o.index} ({o.release}) moved by {o.observed:.6g} in {o.norm} between neighbours, "
                f"stated sensitivity {o.stated:.6g} (ratio {o.ratio:.4g})"
            )
            seen.append(o)
    return seen
