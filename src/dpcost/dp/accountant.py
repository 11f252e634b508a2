"""Wrappers around Google's dp-accounting: the numerics every tight calibration shares.

Composed Gaussian mechanisms in closed form (Gaussian DP), the analytic Gaussian for a single release, zCDP/RDP
accounting of pure-DP steps, advanced composition, RDP accounting of sampled Gaussian steps, and the composition of
a whole table's releases that the privacy ledger reports. Results are cached: they depend on public parameters only.
Which of them an estimator uses is its plan's business (in its own module).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import numpy as np

from ..errors import PrivacyError
from . import rdp_wor
from .mechanisms import check_epsilon_delta, gaussian_delta, gaussian_sigma

# PLD grid of the ledger's composition of a whole table (pessimistic: ε over-estimated, never under)
PLD_INTERVAL = 1e-3


def dpa():
    # imported on first use: dp-accounting takes about a second to import, which every job and every
    # `snakemake` start would otherwise pay even with the paper calibration
    import dp_accounting
    from dp_accounting import pld, rdp

    return dp_accounting, pld, rdp


@functools.lru_cache(maxsize=4096)
def gaussian_noise_multiplier(T: int, epsilon: float, delta: float) -> float:
    """Smallest σ/Δ such that T Gaussian mechanisms of ℓ2-sensitivity Δ compose to (ε, δ)-DP.

    Exact, in closed form: each mechanism is (Δ/σ)-GDP and T of them compose to exactly (√T·Δ/σ)-GDP (Dong, Roth &
    Su 2019, Cor. 3.3: the privacy loss of a Gaussian is Gaussian, and T of them add), i.e. to the one Gaussian
    mechanism of sensitivity √T·Δ, whose exact δ(ε) is Balle & Wang (2018)'s; :func:`gaussian_sigma` inverts it and
    checks the result in floating point. dp-accounting's PLD accountant gave the same σ within 1e-6 relative (its
    grid is pessimistic), at ~0.5 s a call and a second of import; the tests check the two against each other.
    """
    check_epsilon_delta(epsilon, delta)
    if T == 1:
        return gaussian_sigma(1.0, epsilon, delta, "analytic")
    # a relative 1e-9 out: √T's rounding and the inverse's (ε of μ, as the ledger reads it) stay on the safe side
    return gaussian_sigma(math.sqrt(T), epsilon, delta, "analytic") * (1 + 1e-9)


def rdp_epsilon(events: list, delta: float) -> float:
    _, _, rdp = dpa()
    acc = rdp.RdpAccountant()
    for ev in events:
        acc.compose(ev)
    return acc.get_epsilon(delta)


def pure_releases_event(plans, extra: tuple = ()):
    """One dp-accounting event whose RDP bounds that of every plan in ``plans`` (and ``extra`` events composed with
    it): the mechanism "run one of these plans", whichever it is.

    Plans made of pure releases only — selections (``kind`` selection: report-noisy-max or -min), each (ε_r)-DP and
    so (ε_r²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4), and Laplace releases of ε_r = Δ/b (exact Laplace RDP) — with
    ε_r the budget each release's plan charges (:class:`dpcost.dp.plan.Release`). For each kind the count and the
    per-release ε are the largest over the plans; RDP grows with both, so the event dominates each plan's. Any other
    release is refused.
    """
    lib = dpa()[0]
    worst: dict[str, tuple[int, float]] = {}
    for plan in plans:
        for r in plan.releases:
            if r.kind not in ("selection", "laplace") or not (r.epsilon and r.epsilon > 0):
                raise PrivacyError(f"{plan.method}: release {r.mechanism!r} is not a pure release with a budget")
            count, eps = worst.get(r.kind, (0, 0.0))
            worst[r.kind] = (max(count, r.count), max(eps, r.epsilon))
    events = list(extra)
    if "selection" in worst:
        events.append(lib.SelfComposedDpEvent(lib.ZCDpEvent(worst["selection"][1] ** 2 / 2), worst["selection"][0]))
    if "laplace" in worst:
        events.append(lib.SelfComposedDpEvent(lib.LaplaceDpEvent(1 / worst["laplace"][1]), worst["laplace"][0]))
    return lib.ComposedDpEvent(events)


def _brentq(*args, **kwargs) -> float:
    """scipy's brentq, imported on first use: scipy.optimize is slow to import and most jobs never account."""
    from scipy.optimize import brentq

    return brentq(*args, **kwargs)


def largest_below(f, target: float, lo: float, hi: float, *, rtol: float = 1e-12) -> float:
    """Largest x in [lo, hi] with increasing f(x) ≤ target, to a relative ``rtol``: a point x with f(x) ≤ target
    and f(x(1 + rtol)) > target (or hi itself), when lo satisfies it.

    Brent's method on f − target finds the crossing in ~10 evaluations of f (an accountant call each); the two
    points rtol/2 either side of it are then checked, so the returned point is verified to satisfy f ≤ target and
    nothing rests on Brent's tolerance. Where that check fails (f flat or not monotone at that scale), bisection
    from [lo, hi] decides, as it always did (~40–70 evaluations)."""
    f_hi = f(hi)
    if f_hi <= target:
        return hi
    if f(lo) <= target:
        try:
            root = _brentq(lambda x: f(x) - target, lo, hi, xtol=1e-300, rtol=rtol / 4)
        except (ValueError, RuntimeError):  # no sign change seen by Brent, or no convergence: bisect
            root = None
        if root is not None:
            inside, outside = max(lo, root * (1 - rtol / 2)), min(hi, root * (1 + rtol / 2))
            if f(inside) <= target and (outside == hi or f(outside) > target):
                return inside
    for _ in range(100):
        mid = (lo + hi) / 2
        if f(mid) <= target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= rtol * hi:
            break
    return lo


@functools.lru_cache(maxsize=4096)
def pure_steps_epsilon0(T: int, epsilon: float, delta: float) -> float:
    """Largest ε₀ such that T ε₀-DP mechanisms compose to (ε, δ)-DP, by the better of two valid bounds: basic
    composition (T ε₀ ≤ ε) and zCDP — each step is (ε₀²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4) — composed and
    converted by dp-accounting's RDP accountant (better from a handful of steps on)."""
    check_epsilon_delta(epsilon, delta)
    lib = dpa()[0]
    rdp_e0 = largest_below(
        lambda e0: rdp_epsilon([lib.SelfComposedDpEvent(lib.ZCDpEvent(e0**2 / 2), T)], delta), epsilon, 0.0, epsilon
    )
    return max(epsilon / T, rdp_e0)


def advanced_composition_epsilon0(epsilon: float, delta: float, T: int) -> float:
    """Largest ε₀ with √(2T log(1/δ)) ε₀ + T ε₀ (e^{ε₀} − 1) ≤ ε (Dwork, Rothblum & Vadhan 2010)."""
    check_epsilon_delta(epsilon, delta)
    g = lambda e0: math.sqrt(2 * T * math.log(1 / delta)) * e0 + T * e0 * math.expm1(e0)  # noqa: E731
    return largest_below(g, epsilon, 0.0, epsilon)


@functools.lru_cache(maxsize=1024)  # a plan asks it on every fit with the same arguments
def sampled_gaussian_epsilon(n: int, b: int, T: int, z: float, delta: float) -> float:
    """ε of T steps that each use b records drawn without replacement from n, Gaussian noise multiplier z (noise std
    over the replace-one sensitivity of the batch sum), by dp-accounting's RDP accountant (replace-one).

    The per-step RDP comes from :mod:`.rdp_wor`, dp-accounting's computation to the bit in ~12 ms instead of
    ~0.19 s; the composition (T times it, added to zero) and the conversion to ε are dp-accounting's own.
    """
    if not rdp_wor.reproduces_dp_accounting():
        return accountant_sampled_gaussian_epsilon(n, b, T, z, delta)
    _, _, rdp = dpa()
    orders = rdp_wor.default_orders()
    step = rdp_wor.sample_wor_gaussian_rdp(b / n, z, orders)
    return rdp.compute_epsilon(orders, np.zeros(len(orders)) + T * step, delta)[0]


def accountant_sampled_gaussian_epsilon(n: int, b: int, T: int, z: float, delta: float) -> float:
    """:func:`sampled_gaussian_epsilon` through dp-accounting's accountant alone (the reference it must equal)."""
    lib, _, rdp = dpa()
    acc = rdp.RdpAccountant(neighboring_relation=lib.NeighboringRelation.REPLACE_ONE)
    acc.compose(lib.SelfComposedDpEvent(lib.SampledWithoutReplacementDpEvent(n, b, lib.GaussianDpEvent(z)), T))
    return acc.get_epsilon(delta)


@functools.lru_cache(maxsize=256)
def sampled_gaussian_multiplier(n: int, b: int, T: int, epsilon: float, delta: float) -> float:
    """Smallest noise multiplier z (to 0.3 %) such that :func:`sampled_gaussian_epsilon` ≤ ε.

    log ε is nearly linear in log z, so Brent's method on that scale needs about 6 accountant calls where bisection
    needed 13; the answer is then checked, and stepped up until it is valid.
    """
    check_epsilon_delta(epsilon, delta)

    def f(log_z):  # the accountant's ε is 0 where its bound falls below δ already: the far side of the root
        return math.log(max(sampled_gaussian_epsilon(n, b, T, math.exp(log_z), delta), 1e-300) / epsilon)

    lo, hi = math.log(0.25), math.log(4.0)
    while f(hi) > 0:
        lo, hi = hi, hi + math.log(4.0)
        if hi > math.log(1e6):
            raise PrivacyError(f"no noise multiplier reaches epsilon={epsilon} for n={n}, batch={b}, T={T}")
    if f(lo) <= 0:  # very little noise suffices; the smallest multiplier searched is 0.25
        return math.exp(lo)
    z = math.exp(_brentq(f, lo, hi, xtol=1e-3) + 2e-3)
    while sampled_gaussian_epsilon(n, b, T, z, delta) > epsilon:
        z *= 1.002
    return z


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Smallest ε with δ(ε) ≤ ``delta`` for a μ-GDP mechanism (the Gaussian mechanism with Δ/σ = μ), from the exact
    δ(ε) of Balle & Wang (2018); stepped up until it holds."""
    if mu == 0:
        return 0.0
    if delta <= 0:
        return math.inf
    f = lambda e: gaussian_delta(1.0, mu, e) - delta  # noqa: E731
    if f(0.0) <= 0:
        return 0.0
    hi = 1.0
    while f(hi) > 0:
        hi *= 2
    eps = _brentq(f, 0.0, hi, xtol=1e-12, rtol=1e-12)
    while f(eps) > 0:
        eps = eps * (1 + 1e-12) + 1e-15
    return eps


@functools.lru_cache(maxsize=1024)
def _pld(kind: str, a: float, b: float = 0.0):
    """One PLD on the ledger's grid: a Gaussian (σ/Δ = a) or the worst case of an (ε, δ) = (a, b)-DP mechanism."""
    pld = dpa()[1]
    if kind == "gaussian":
        return pld.privacy_loss_distribution.from_gaussian_mechanism(a, value_discretization_interval=PLD_INTERVAL)
    params = pld.common.DifferentialPrivacyParameters(a, b)
    return pld.privacy_loss_distribution.from_privacy_parameters(params, PLD_INTERVAL)


def composed_epsilon(mu2: float, pairs: Mapping[tuple[float, float], int], delta: float) -> tuple[float, bool]:
    """ε at ``delta`` of a μ-GDP mechanism (the Gaussian releases) composed with ``count`` copies of each (ε, δ)-DP
    mechanism in ``pairs`` (Laplace releases as (Δ/b, 0), methods known only by their stated (ε, δ)); and whether
    that ε is exact.

    Gaussians alone: exact (:func:`gaussian_epsilon`). Otherwise dp-accounting's PLD composition on a pessimistic
    grid (ε over-estimated by at most about :data:`PLD_INTERVAL` per composed term): the Gaussian as one PLD, each
    pair as the worst-case privacy-loss distribution of an (ε, δ)-DP mechanism (Kairouz, Oh & Viswanath 2015).
    """
    if not pairs:
        return gaussian_epsilon(math.sqrt(mu2), delta), True
    parts = [_pld("gaussian", 1 / math.sqrt(mu2))] if mu2 > 0 else []
    for (e, d), c in sorted(pairs.items()):
        p = _pld("pair", e, d)
        parts.append(p.self_compose(c) if c > 1 else p)
    total = functools.reduce(lambda x, y: x.compose(y), parts)
    return float(total.get_epsilon_for_delta(delta)), False
