"""Add/remove neighbours make n private, so no release may depend on it.

Every route of every private interval refuses add/remove alike on each side of the review's pairs (200 housing rows
against the same plus their mean record, once and twice); with the SSP family's refusal taken out, the review's
σ̂²-floor event is shown to catch the leak.

Every registered private method either refuses ``neighbours="add_remove"`` with one line naming it, or makes the same
releases at n and n + 1: the same plan, and noise of the same scale on the same grid (a release's grid step that
moved with n would tell the data sets apart by the lattice its output lies on). The attack that found the hole — on
precond_gd, β̂·n·√w/(ηg) is an integer under the true n only — is run with the refusal taken out, to show that it
would catch the leak, and a planted n-dependent noise scale in SSP is caught by the grid comparison.
"""

import dataclasses
import math

import numpy as np
import pytest

from dpcost.dp import samplers
from dpcost.dp.audit import event_epsilon
from dpcost.dp.privacy import Privacy
from dpcost.errors import PrivacyError
from dpcost.estimators import precond_gd as pgd
from dpcost.estimators import ssp as ssp_module
from dpcost.estimators.registry import METHODS
from dpcost.estimators.ssp import noise_norm_bound
from dpcost.inference import ssp_family
from dpcost.inference.procedures import PROCEDURES, interval

from registry_cases import INTERVALS, PARAMS, PLAN_SIZE, TUNING, needs_missing_peer, tiny
from support import housing_design

AR = Privacy(1.0, 1e-5, "tight", neighbours="add_remove")
# no release, noise scale or step of post-processing uses n (read from the code; checked below on the grid)
ACCEPTS = {"ssp", "adassp", "joint_ssp", "opendp_ssp", "objpert", "adaops"}
# proven for add/remove in the paper, but with n public: refused, or run as unproven with on_invalid="warn"
GAP = {"ops"}
PRIVATE = [name for name, m in METHODS.items() if m.private]


def _grown(data):
    """The data with one more record: the first record repeated (add/remove neighbours of sizes n and n + 1)."""
    return tuple(np.concatenate([a, a[:1]]) for a in data)


class GridSpy:
    """Records the grid step and released value of every exact-sampler release (``GridNoise.add``)."""

    def __init__(self, monkeypatch):
        self.releases = []
        add = samplers.GridNoise.add

        def spy(noise, value):
            out = add(noise, value)
            self.releases.append((noise.step, out))
            return out

        monkeypatch.setattr(samplers.GridNoise, "add", spy)

    def steps(self, fn) -> list[float]:
        self.releases.clear()
        fn()
        assert all(np.allclose(out / step, np.rint(out / step), rtol=0, atol=1e-6) for step, out in self.releases)
        return [step for step, _ in self.releases]


def _run(m, data, privacy, seed=3):
    tuning = m.resolve_tuning(TUNING[m.name])
    return m.estimate(*data, privacy=privacy, rng=np.random.default_rng(seed), tuning=tuning, params=PARAMS)


def test_a_delta_formula_in_n_is_refused_under_add_remove():
    with pytest.raises(PrivacyError, match="formula in n.*n is private"):
        Privacy(1.0, "10/n^1.1", neighbours="add_remove").at(1000)
    assert Privacy(1.0, "10/n^1.1").at(1000).delta == pytest.approx(10 / 1000**1.1)


@pytest.mark.parametrize("name", PRIVATE)
def test_every_private_method_refuses_add_remove_or_releases_alike_at_n_and_n_plus_1(name, monkeypatch):
    m = METHODS[name]
    if needs_missing_peer(m):
        pytest.skip(f"{m.peer} not usable here")
    tuning = m.resolve_tuning(TUNING[name])
    n, d = PLAN_SIZE.get(m.family, (1000, 5))
    data = tiny(m.family)
    if name in ACCEPTS:
        assert m.make_plan(AR, n, d, tuning, PARAMS) == m.make_plan(AR, n + 1, d, tuning, PARAMS)
        spy = GridSpy(monkeypatch)
        small = spy.steps(lambda: _run(m, data, AR))
        large = spy.steps(lambda: _run(m, _grown(data), AR))
        assert small == large
        assert np.isfinite(_run(m, _grown(data), AR)[0]).all()
        return
    with pytest.raises(PrivacyError, match=name):
        m.make_plan(AR, n, d, tuning, PARAMS)
    with pytest.raises(PrivacyError, match=name):
        _run(m, data, AR)
    if name in GAP:  # kept for reproduction with a warning, and recorded as unproven
        with pytest.warns(RuntimeWarning, match="PRIVACY WARNING.*n is private"):
            plan = m.make_plan(Privacy(1.0, 1e-5, "tight", "warn", "add_remove"), n, d, tuning, PARAMS)
        assert plan.proven is False


def test_the_grid_comparison_catches_a_noise_scale_that_depends_on_n(monkeypatch):
    """Planted: SSP's X'y noise scale raised by 1/n (what a δ or a sensitivity in n would do)."""
    m = METHODS["ssp"]
    data = tiny("regression")
    spy = GridSpy(monkeypatch)
    honest = spy.steps(lambda: _run(m, data, AR)), spy.steps(lambda: _run(m, _grown(data), AR))
    assert honest[0] == honest[1]
    plan = ssp_module.ssp_plan

    def leaky(privacy, n, d, **kw):
        p = plan(privacy, n, d, **kw)
        rels = p.releases[:1] + (dataclasses.replace(p.releases[1], noise_scale=1.0 + 1 / n),)
        return dataclasses.replace(p, releases=rels)

    monkeypatch.setattr(ssp_module, "ssp_plan", leaky)
    planted = spy.steps(lambda: _run(m, data, AR)), spy.steps(lambda: _run(m, _grown(data), AR))
    assert planted[0] != planted[1]


def _integrality_flags(X, y, runs: int, seed: int, n_claimed: int, **tuning) -> np.ndarray:
    """Whether β̂·n·√w/(ηg) is an integer (to 1e-6) for each run of precond_gd at d = 1, T = 1, α = 1, with n the
    size the attacker tests for: then β̂ = ηg(round(s/g) + Z)/(n√w), w the floored eigenvalue, and w is the floor
    max(floor, σ₁√(log(2/ρ))/n) — a function of n alone — unless the noisy Gram matrix exceeds it."""
    plan = pgd.precond_gd_plan(AR, n_claimed, 1, B0=tuning["B0"], C=tuning["C"], R=None, T=1, f0=0.2)
    sig1, sig2 = (r.noise_scale for r in plan.releases)
    w = max(0.1, noise_norm_bound(sig1, 1, 0.05) / n_claimed)
    g = sig2 / samplers.T
    flags = np.empty(runs, dtype=bool)
    for i in range(runs):
        beta = pgd.precond_gd(X, y, privacy=AR, rng=np.random.default_rng([seed, i]), T=1, **tuning)[0]
        k = beta * n_claimed * math.sqrt(w) / g
        flags[i] = abs(k - round(k)) < 1e-6
    return flags


def test_precond_gd_refuses_add_remove_and_the_integrality_attack_would_catch_it(monkeypatch):
    """The review's pair: 40 rows x = 0.01 against the same rows plus one. precond_gd refuses add/remove; with the
    refusal taken out (the planted bug: the code as it was), the attack's event {β̂·40·√w/(ηg) ∈ ℤ} has probability
    ≈ 0.97 on the 40-row data and ≈ 0 on the 41-row data: ε_lb ≫ 1 at a claimed ε = 1, with 95 % confidence."""
    X, y = np.full((40, 1), 0.01), np.full(40, 0.01)
    X2, y2 = np.full((41, 1), 0.01), np.full(41, 0.01)
    tuning = dict(B0=1.0, C=1.0)
    with pytest.raises(PrivacyError, match="precond_gd is analysed under replace-one"):
        pgd.precond_gd(X, y, privacy=AR, rng=np.random.default_rng(0), T=1, **tuning)
    monkeypatch.setattr(pgd, "require_replace", lambda *a: None)
    runs = 300
    hi = _integrality_flags(X, y, runs, 1, 40, **tuning).sum()
    lo = _integrality_flags(X2, y2, runs, 2, 40, **tuning).sum()
    eps_lb = event_epsilon(int(hi), runs, int(lo), runs, AR.delta)
    assert eps_lb > 3.0, (hi, lo, eps_lb)


# ---- intervals: every route of every interval method ------------------------------------------------------------

INTERVAL_ROUTES = [(name, route) for name, routes in PROCEDURES.items() for route in routes]


@pytest.fixture(scope="module")
def housing_pair():
    """The review's pairs: 200 housing rows, the same plus their mean record, and plus it twice (add/remove
    neighbours whose releases have the same law on both sides, so only an n that leaks tells them apart)."""
    X, y = housing_design()[:2]
    X, y = X[:200], y[:200]
    mean = (X.mean(axis=0, keepdims=True), y[:1] * 0 + y.mean())
    once = (np.concatenate([X, mean[0]]), np.concatenate([y, mean[1]]))
    twice = (np.concatenate([once[0], mean[0]]), np.concatenate([once[1], mean[1]]))
    return (X, y), once, twice


def _interval_tuning(name: str) -> dict:
    return {**METHODS[name].resolve_tuning(TUNING[name]), **INTERVALS.get(name, {})}


@pytest.mark.parametrize(("name", "route"), INTERVAL_ROUTES)
def test_every_interval_route_refuses_add_remove_on_every_data_set_alike(name, route, housing_pair):
    """The same refusal, with one line naming the method and route, on each side of the pairs, before any data are
    read: no pair splits into "released" and "refused" and nothing a neighbour sees depends on n."""
    messages = set()
    for X, y in housing_pair:
        with pytest.raises(PrivacyError) as err:
            interval(name, X, y, privacy=AR, rng=np.random.default_rng(0), route=route, **_interval_tuning(name))
        messages.add(str(err.value))
    (message,) = messages
    assert f"{name}'s {route} interval" in message and "replace-one" in message and "\n" not in message


@pytest.mark.parametrize("name", ["ssp", "adassp", "joint_ssp"])
def test_the_sigma2_floor_attack_would_catch_the_interval_without_its_refusal(name, monkeypatch, housing_pair):
    """Planted: the delta route's add/remove refusal taken out (the code as it was). The review's event, fixed in
    advance, "σ̂² equals the floor σ_S over n_D − d", holds on D whenever the floor binds and never on D + one record
    (whose σ̂² divides by n_D + 1 − d). At 300 runs a side the event audit gives ε_lb > 2 at a claimed ε = 1, where a
    sound release gives ≤ 1.25 (measured: SSP 4.0, AdaSSP 2.7, joint SSP 2.6, the floor binding in 74 %, 23 % and
    21 % of the runs on D; the review measured 6.95 for SSP at 5,000 runs a side)."""
    monkeypatch.setattr(ssp_family, "require_replace", lambda *a: None)
    (X, y), (X1, y1), _ = housing_pair
    n, d = X.shape
    runs = 300
    tuning = METHODS[name].resolve_tuning(TUNING[name])  # R = B_Y, the default

    def floor_hits(data, seed):
        hits = 0
        for i in range(runs):
            out = interval(name, *data, privacy=AR, rng=np.random.default_rng([seed, i]), route="delta", **tuning)
            sigma_S = out.plan.releases[-1].noise_scale
            hits += out.details["sigma2"] == sigma_S / (n - d)
        return hits

    hi, lo = floor_hits((X, y), 1), floor_hits((X1, y1), 2)
    eps_lb = event_epsilon(int(hi), runs, int(lo), runs, AR.delta)
    assert lo == 0 and eps_lb > 2.0, (hi, lo, eps_lb)
