"""Monte-Carlo privacy audits with stated power: every closed-form mechanism and every audited estimator, on a
neighbouring pair (replace one record) that is worst case for the output looked at, with one event fixed before
the draws. The Clopper–Pearson 95 % lower bound on ε (dpcost.dp.audit) must stay at or below the claimed ε; the
same audit with the noise divided by 1.5 (a planted bug) must exceed it.

How the power was obtained (measurements/audit_power.py measures it over 40 seeds for each case in CASES):
* pairs whose output is not saturated — no projection binds, no clipping — and whose shift is ≥ 95 % of the
  sensitivity the plan pays for (the pairs of the former tests moved the output by 13 % of it, or saturated at the
  projection C);
* one event, a threshold on the output (for a one-dimensional location family the threshold is the optimal
  likelihood-ratio event), placed by a power analysis from the *claim* (never from the code under audit), so every
  draw bounds it and no draws are spent on choosing it;
* claims audited where the bug's excess loss is large against the Monte-Carlo error: Gaussian estimators at
  (ε, δ) = (0.9, 0.03), whose extreme events have probabilities a few thousand draws resolve; selection mechanisms
  at ε = 1–2, where the ÷1.5 bug adds 0.2–0.5 to the loss of an event of probability > 1 %;
* vectorised mechanisms (one call, leading axis = independent releases) get 10⁵–10⁶ draws.
The audits at δ = 0.03 test the calibration code (sensitivity, σ formula, accounting), which does not depend on δ;
no Monte-Carlo audit can resolve events of probability 10⁻⁵ — the exact checks (test_audit_exact.py) do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import contextmanager
from unittest import mock

import numpy as np
import pytest

from dpcost.dp import mechanisms
from dpcost.dp.audit import (
    Event,
    check_numpy_laplace_inverse,
    clopper_pearson,
    epsilon_lower_bound,
    floating_point_epsilon_lower_bound,
    numpy_laplace_reachable,
)
from dpcost.dp.mechanisms import gaussian_sigma
from dpcost.dp.privacy import Privacy
from dpcost.estimators import frank_wolfe, noisy_gd, sparse_mean, truncated_ols

BUG = 1 / 1.5  # the planted bug: the noise divided by 1.5


# ---- planting the bug: scale the noise of the code under audit, leaving everything else as shipped ----------------


def _scaled_plan(plan_fn, factor):
    def planted(*args, **kw):
        plan = plan_fn(*args, **kw)
        rels = tuple(dataclasses.replace(r, noise_scale=r.noise_scale * factor) for r in plan.releases)
        return dataclasses.replace(plan, releases=rels)

    return planted


def _scaled_fn(fn, factor):
    return lambda *a, **kw: fn(*a, **kw) * factor


@contextmanager
def noise_times(factor, module, name, scale=_scaled_plan):
    """Within the block, ``module.name`` (a plan, or a function returning a noise scale) gives the noise × factor."""
    if factor == 1:
        yield
        return
    with mock.patch.object(module, name, scale(getattr(module, name), factor)):
        yield


# ---- the cases ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    """One audit: ``sample(n, rng, factor)`` returns n scalar outputs of M(D) and of M(D′) with the noise × factor;
    ``event`` is fixed in advance; the claim is (epsilon, delta); ``n`` draws a side."""

    name: str
    sample: Callable
    epsilon: float
    delta: float
    event: Event
    n: int

    def epsilon_lb(self, seed: int, factor: float = 1.0, n: int | None = None) -> float:
        a, b = self.sample(n or self.n, np.random.default_rng(seed), factor)
        return epsilon_lower_bound(a, b, self.delta, event=self.event)


def _calls(fn, data, data2, stat):
    """Draws of an estimator that is not vectorised: one call per draw, one stream per side."""

    def sample(n, rng, factor):
        return tuple(np.array([stat(fn(d, rng, factor)) for _ in range(n)]) for d in (data, data2))

    return sample


def _gaussian_event(center, sensitivity, epsilon, delta, z):
    """{x > center + z σ}, σ the analytic Gaussian σ that the claim allows for the stated sensitivity (from the claim,
    not from the code under audit, so a planted bug does not move the event); z from the power analysis."""
    return Event(center + z * gaussian_sigma(sensitivity, epsilon, delta), 1, 0)


# Gaussian mechanism: f(D) = 1, f(D′) = 0, Δ₂ = 1, at (0.5, 1e-5), 10⁶ draws a side in one call.
def _gaussian_mechanism(calibration):
    def sample(n, rng, factor):
        kw = dict(sensitivity=1.0, epsilon=0.5, delta=1e-5, rng=rng, calibration=calibration)
        with noise_times(factor, mechanisms, "gaussian_sigma", _scaled_fn):
            return tuple(mechanisms.gaussian_mechanism(np.full((n, 1), f), **kw).ravel() for f in (1.0, 0.0))

    return Case(
        f"gaussian_mechanism[{calibration}]", sample, 0.5, 1e-5, _gaussian_event(1.0, 1.0, 0.5, 1e-5, 1.8), 10**6
    )


# Laplace mechanism: f(D) = 1, f(D′) = 0, Δ₁ = 1, ε = 1. Beyond both centres the loss is Δ/b: the event {x > 1}.
def _laplace_sample(n, rng, factor):
    with noise_times(factor, mechanisms, "laplace_scale", _scaled_fn):
        return tuple(
            mechanisms.laplace_mechanism(np.full((n, 1), f), sensitivity=1.0, epsilon=1.0, rng=rng).ravel()
            for f in (1.0, 0.0)
        )


# PrivateMax, ‖f(D) − f(D′)‖∞ = B = 1, ε = 1: f(D) = (1, 3), f(D′) = (0, 4) — index 0 loses score B and index 1 gains
# B (the selection's worst case, 2B/b), and the released f₀ moves by B. Event {index 0, value > 1}. Vectorised.
def _private_max_sample(n, rng, factor):
    out = []
    for f in ((1.0, 3.0), (0.0, 4.0)):
        j, v = sparse_mean.private_max(np.tile(f, (n, 1)), B=1.0 * factor, epsilon=1.0, rng=rng)
        out.append(np.where(j == 0, v, -np.inf))
    return tuple(out)


# Noisy GD (Alg. 4.1), T = 1, d = 1, n = 1000: every row but the last has x = 0; the last is (1, 1) in D and
# (1, −1) in D′. The step moves by 2η⁰R/n = 0.002 against the sensitivity 2η⁰(R + C c_x)c_x/n = 0.00204 (98 %);
# C = 0.02 is 6σ from the output, so the projection never binds.
GD = dict(T=1, R=1.0, C=0.02, c_x=1.0, eta0=1.0)
N_GD = 1000
X_GD = np.zeros((N_GD, 1))
X_GD[-1] = 1.0
Y_GD, Y2_GD = np.zeros(N_GD), np.zeros(N_GD)
Y_GD[-1], Y2_GD[-1] = 1.0, -1.0
GD_PRIVACY = (0.9, 0.03)


def _gd(y, rng, factor=1.0, calibration="tight", X=X_GD):
    with noise_times(factor, noisy_gd, "noisy_gd_plan"):
        return noisy_gd.noisy_gradient_descent_ols(X, y, privacy=Privacy(*GD_PRIVACY, calibration), rng=rng, **GD)


def _gd_case(calibration):
    sens = noisy_gd.noisy_gd_step_sensitivity(R=1.0, C=0.02, c_x=1.0, eta0=1.0, n=N_GD)
    sample = _calls(lambda y, rng, f: _gd(y, rng, f, calibration), Y_GD, Y2_GD, lambda out: out[0])
    event = _gaussian_event(1e-3, sens, *GD_PRIVACY, 0.6)
    return Case(f"noisy_gd[{calibration}]", sample, *GD_PRIVACY, event, 3000 if calibration == "tight" else 2000)


# Noisy truncated OLS, d = 1, n = 200, κ = 1: rows but the last have x = 0; the last is (1, 1) against (1, −1).
# The fit moves 1/201 → −1/201 (inside C = 0.005), 99 % of the sensitivity 2c_x(R + c_x C)/(nκ).
TOLS = dict(R=1.0, C=0.005, c_x=1.0, kappa=1.0)
N_TOLS = 200
X_OLS = np.zeros((N_TOLS, 1))
X_OLS[-1] = 1.0
Y_OLS, Y2_OLS = np.zeros(N_TOLS), np.zeros(N_TOLS)
Y_OLS[-1], Y2_OLS[-1] = 1.0, -1.0


def _tols(y, rng, factor=1.0, calibration="tight", X=X_OLS, privacy=GD_PRIVACY, **kw):
    with noise_times(factor, truncated_ols, "noisy_truncated_ols_plan"):
        p = Privacy(*privacy, calibration)
        return truncated_ols.noisy_truncated_ols(X, y, privacy=p, rng=rng, **{**TOLS, **kw})


def _tols_case(calibration):
    sens = truncated_ols.noisy_truncated_ols_sensitivity(**TOLS, n=N_TOLS)
    sample = _calls(lambda y, rng, f: _tols(y, rng, f, calibration), Y_OLS, Y2_OLS, lambda out: out[0])
    event = _gaussian_event(1 / 201, sens, *GD_PRIVACY, 0.6)
    return Case(
        f"noisy_truncated_ols[{calibration}]", sample, *GD_PRIVACY, event, 4000 if calibration == "tight" else 2000
    )


# DP sparse mean (Peeling, s = 1, d = 2, R = 1, n = 10, λ = 2R/n = 0.2) at (2, 1e-5): the last row (1, −1) becomes
# (−1, 1), so the truncated mean goes (0.4, 0.6) → (0.2, 0.8): coordinate 0 loses λ of score and coordinate 1
# gains λ (the selection's worst case), and the released v₀ moves by λ. Event {index 0 chosen, value > 0.4}.
D_MEAN = np.vstack([np.tile([1 / 3, 7 / 9], (9, 1)), [1.0, -1.0]])
D2_MEAN = np.vstack([np.tile([1 / 3, 7 / 9], (9, 1)), [-1.0, 1.0]])


def _peel(D, rng, factor=1.0, calibration="tight"):
    with noise_times(factor, sparse_mean, "peeling_plan"):
        est, chosen = sparse_mean.dp_sparse_mean(D, privacy=Privacy(2.0, 1e-5, calibration), rng=rng, s=1, R=1.0)
    return est[0] if chosen[0] == 0 else -np.inf


def _peel_case(calibration):
    sample = _calls(lambda D, rng, f: _peel(D, rng, f, calibration), D_MEAN, D2_MEAN, lambda v: v)
    return Case(
        f"peeling[{calibration}]", sample, 2.0, 1e-5, Event(0.4, 1, 0), 10_000 if calibration == "tight" else 3000
    )


# Private Frank-Wolfe, T = 1, d = 1 (two vertices ±1), R = 1, n = 10: score sensitivity Δ = 2R/n = 0.2. The last
# record 1 becomes −1: the mean goes −0.1 → −0.3, the score gap 2m from −Δ to −3Δ (both scores move, in opposite
# directions: the selection's worst case). The output is ±2/3; the event {θ > 0}.
FW = dict(R=1.0, radius=1.0, T=1)
D_FW = np.array([[-2 / 9]] * 9 + [[1.0]])
D2_FW = np.array([[-2 / 9]] * 9 + [[-1.0]])


def _fw(D, rng, factor=1.0, calibration="tight"):
    with noise_times(factor, frank_wolfe, "frank_wolfe_plan"):
        return frank_wolfe.private_frank_wolfe_mean(D, privacy=Privacy(2.0, 1e-5, calibration), rng=rng, **FW)


def _fw_case(calibration):
    sample = _calls(lambda D, rng, f: _fw(D, rng, f, calibration), D_FW, D2_FW, lambda out: out[0])
    return Case(
        f"frank_wolfe[{calibration}]", sample, 2.0, 1e-5, Event(0.0, 1, 0), 10_000 if calibration == "tight" else 3000
    )


CASES = {
    c.name: c
    for c in (
        _gaussian_mechanism("analytic"),
        _gaussian_mechanism("classic"),
        Case("laplace_mechanism", _laplace_sample, 1.0, 0.0, Event(1.0, 1, 0), 200_000),
        Case("private_max", _private_max_sample, 1.0, 0.0, Event(1.0, 1, 0), 100_000),
        *(f(cal) for f in (_gd_case, _tols_case, _peel_case, _fw_case) for cal in ("tight", "paper")),
    )
}
# the calibrations a ÷1.5 bug makes non-private (the others are noisier than needed: ÷1.5 leaves them private)
PLANTED = [
    "gaussian_mechanism[analytic]",
    "laplace_mechanism",
    "private_max",
    "noisy_gd[tight]",
    "noisy_truncated_ols[tight]",
    "peeling[tight]",
    "frank_wolfe[tight]",
]


def test_clopper_pearson_is_exact():
    lo, hi = clopper_pearson(5, 100, 0.05)
    assert lo == pytest.approx(0.016432, abs=1e-6) and hi == pytest.approx(0.112835, abs=1e-6)
    assert clopper_pearson(0, 10, 0.05)[0] == 0.0 and clopper_pearson(10, 10, 0.05)[1] == 1.0


# ---- measured power ---------------------------------------------------------------------------------------------
# measurements/audit_power.py, 40 seeds a case (0–39 at ÷1.5, 1000–1039 at ÷1), this 2-core machine, 25 min in all:
#
#   case                          draws a side  claim (ε, δ)  caught at ÷1.5  false alarms  ε_lb at ÷1.5: median (min)
#                                                                             at ÷1         at ÷1: median (max)
#   gaussian_mechanism[analytic]  1,000,000     (0.5, 1e-5)   40/40           0/40          0.583 (0.519)  0.298 (0.309)
#   gaussian_mechanism[classic]   1,000,000     (0.5, 1e-5)   -               0/40          -              0.174 (0.186)
#   laplace_mechanism               200,000     (1, 0)        40/40           0/40          1.486 (1.476)  0.986 (1.000)
#   private_max                     100,000     (1, 0)        40/40           0/40          1.164 (1.141)  0.743 (0.765)
#   noisy_gd[tight]                   3,000     (0.9, 0.03)   40/40           0/40          1.156 (0.991)  0.592 (0.681)
#   noisy_gd[paper]                   2,000     (0.9, 0.03)   -               0/40          -              0.000 (0.064)
#   noisy_truncated_ols[tight]        4,000     (0.9, 0.03)   40/40           0/40          1.251 (1.022)  0.614 (0.727)
#   noisy_truncated_ols[paper]        2,000     (0.9, 0.03)   -               0/40          -              0.130 (0.229)
#   peeling[tight]                   10,000     (2, 1e-5)     40/40           0/40          2.263 (2.088)  1.452 (1.569)
#   peeling[paper]                    3,000     (2, 1e-5)     -               0/40          -              0.229 (0.320)
#   frank_wolfe[tight]               10,000     (2, 1e-5)     40/40           0/40          2.201 (2.057)  1.376 (1.475)
#   frank_wolfe[paper]                3,000     (2, 1e-5)     -               0/40          -              0.130 (0.212)
#   former audit (Gaussian, split-half selection, 3·10⁴ draws)  0/40 (1/40 in another run)  0.272 (0.070)
#
# A ÷1.5 bug leaves the paper calibrations private (they are 1.3–6 times noisier than needed): only their passing is
# audited. The Laplace audit is tight by construction — on {x > 1} the loss is exactly ε — so its false-alarm rate is
# the Clopper–Pearson error, ≤ 2.5 %, not ~0 as for the others. The tests below run seed 1 (÷1) and seed 2 (÷1.5).

# ---- closed-form (vectorised) mechanisms ---------------------------------------------------------------------------

FAST = ["gaussian_mechanism[analytic]", "gaussian_mechanism[classic]", "laplace_mechanism", "private_max"]


@pytest.mark.parametrize("name", FAST)
def test_mechanism_passes(name):
    case = CASES[name]
    assert case.epsilon_lb(seed=1) <= case.epsilon


@pytest.mark.parametrize("name", [n for n in FAST if n in PLANTED])
def test_mechanism_with_two_thirds_of_its_noise_is_caught(name):
    case = CASES[name]
    assert case.epsilon_lb(seed=2, factor=BUG) > case.epsilon


# ---- estimators, one call per draw (slow: 2–12 s each) -------------------------------------------------------------

SLOW = [n for n in CASES if n not in FAST]


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_estimator_passes(name):
    case = CASES[name]
    assert case.epsilon_lb(seed=1) <= case.epsilon


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in SLOW if n in PLANTED])
def test_estimator_with_two_thirds_of_its_noise_is_caught(name):
    case = CASES[name]
    assert case.epsilon_lb(seed=2, factor=BUG) > case.epsilon


@pytest.mark.slow
def test_audit_catches_noisy_gd_without_row_clipping(monkeypatch):
    # planted bug: the estimator forgets to clip rows, and D′'s last row is x = 30 (once clipped, the same data as D)
    monkeypatch.setattr(noisy_gd, "clip_rows", lambda X, c_x: X)
    X2 = X_GD.copy()
    X2[-1] = 30.0
    rng = np.random.default_rng(3)
    a = np.array([_gd(Y_GD, rng)[0] for _ in range(2000)])
    b = np.array([_gd(Y_GD, rng, X=X2)[0] for _ in range(2000)])
    assert epsilon_lower_bound(b, a, GD_PRIVACY[1], event=Event(0.01, 1, 0)) > GD_PRIVACY[0]


def test_audit_catches_the_papers_printed_ols_noise():
    # The printed variance d T² log(1.25/δ)/(n²ε²) of 000 §4.3.1 shrinks like 1/n, but the OLS fit of a design with
    # one large row among small ones moves by ≈ 2R when that row's y flips: far beyond ε.
    X = np.full((50, 1), 0.01)
    X[-1] = 1.0
    y, y2 = np.ones(50), np.ones(50)
    y2[-1] = -1.0
    rng = np.random.default_rng(5)
    with pytest.warns(RuntimeWarning, match="not a proven DP guarantee"):
        kw = dict(rng=rng, X=X, noise="printed", privacy=(0.5, 1e-5), calibration="paper")
        a = np.array([_tols(y, **kw)[0] for _ in range(1000)])
        b = np.array([_tols(y2, **kw)[0] for _ in range(1000)])
    assert epsilon_lower_bound(a, b, 1e-5, event=Event(0.0, 1, 0)) > 0.5


def test_the_original_split_rule_is_kept():
    # epsilon_lower_bound without an event chooses one on the first half, exactly as before this module grew events
    # (other tests rely on it): the value the previous implementation gave on this sample
    rng = np.random.default_rng(6)
    a, b = rng.normal(1.0, 1.0, 20_000), rng.normal(0.0, 1.0, 20_000)
    legacy = epsilon_lower_bound(a, b, 1e-5)
    assert legacy == pytest.approx(1.9763094070261529, rel=1e-12)
    # choosing by the predicted bound on a fifth of the draws leaves more draws to bound the event, and a better one
    assert epsilon_lower_bound(a, b, 1e-5, select="bound", select_fraction=0.2) > legacy


# ---- the floating-point attack (Mironov 2012) -----------------------------------------------------------------------
# Guarantee audited: the Laplace mechanism's ε = 1 for f(D) = 0, f(D′) = 1, scale b = 1. Event, fixed in advance:
# {o is reachable as 0 + Generator.laplace(0, 1), not as 1 + Generator.laplace(0, 1)}, decided exactly by inverting
# numpy's sampler. No Gaussian analogue: numpy's normal is a 256-layer ziggurat (x = r·w_i for a 52-bit r and a
# table w_i numpy does not expose, plus exp/log rejection paths for the wedges and the tail), which leaves no clean
# exact membership test; and its 256 interleaved lattices make the reachable floats dense where most mass lies.


@pytest.mark.parametrize("scale", [1.0, 0.37, 3.0])
def test_numpys_laplace_sampler_is_inverted_exactly(scale):
    check_numpy_laplace_inverse(scale, n=50_000, seed=7)  # raises unless bit for bit, and no value missed
    rng = np.random.default_rng(8)
    x = rng.laplace(0.0, scale, 20_000)
    assert numpy_laplace_reachable(x, 0.0, scale).all()
    assert numpy_laplace_reachable(2.5 + x, 2.5, scale).all()  # loc + X, as a mechanism computes it
    # most floats are not reachable: the 2⁵³ uniforms are sparse among the floats near 0 and in the tails
    assert numpy_laplace_reachable(np.nextafter(x, np.inf), 0.0, scale).mean() < 0.5


def test_float_laplace_noise_is_caught_by_the_floating_point_attack():
    # planted bug: value + rng.laplace(0, b), the textbook mechanism. Measured with 200,000 draws a side: ε_lb = 10.70
    # against the claimed 1 (no output of D′ is in the event; 80 % of D's are), 2.2 s.
    rng = np.random.default_rng(9)
    n = 200_000
    out_0, out_1 = 0.0 + rng.laplace(0.0, 1.0, n), 1.0 + rng.laplace(0.0, 1.0, n)
    assert floating_point_epsilon_lower_bound(out_0, out_1, 1.0) > 10.0


def test_the_exact_laplace_sampler_resists_the_floating_point_attack():
    # laplace_mechanism releases g·(round(f/g) + Z) on a grid both f reach (dpcost.dp.samplers). Measured with
    # 200,000 draws a side: ε_lb = 0.14 ≤ 1 (grid points are numpy-reachable by chance, as often from 0 as from 1).
    rng = np.random.default_rng(10)
    n = 200_000
    kw = dict(sensitivity=1.0, epsilon=1.0, rng=rng)
    out_0 = mechanisms.laplace_mechanism(np.zeros((n, 1)), **kw).ravel()
    out_1 = mechanisms.laplace_mechanism(np.ones((n, 1)), **kw).ravel()
    assert floating_point_epsilon_lower_bound(out_0, out_1, 1.0) <= 1.0
