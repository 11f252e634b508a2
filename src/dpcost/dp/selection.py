"""Private selection from private candidates: tune a hyper-parameter at a small constant-factor privacy cost.

J configurations are tuned by a random number K of *candidate runs*. Each run draws a configuration j uniformly at
random and runs its mechanism M_j(X) → (output, score), which is itself differentially private (for *everything* it
returns, the score included); only the best run's (output, score, j) is released. Because K is random and hidden,
the cost is a constant multiple of one run's, not K times it.

Theorems used (the statements as found; ε(λ) is a run's Rényi DP at order λ):

* Liu & Talwar, "Private selection from private candidates", STOC 2019 (arXiv:1811.07971): with K geometric and
  ε-DP runs, returning the best run is 3ε-DP ("random stopping"). We do not use their statements numerically;
  Papernot & Steinke's Corollary 3 recovers the 3ε at η = 1.
* Papernot & Steinke, "Hyperparameter tuning with Rényi differential privacy", ICLR 2022 (arXiv:2110.03620v2):

  - Definition 1, the truncated negative binomial D_{η,γ} (η > −1, γ ∈ (0, 1)): for k ≥ 1,
    P[K = k] = (1 − γ)^k / (γ^{−η} − 1) · ∏_{ℓ=0}^{k−1} (ℓ + η)/(ℓ + 1), and for η = 0 (the logarithmic
    distribution) P[K = k] = (1 − γ)^k / (k log(1/γ)). η = 1 is the geometric P[K = k] = γ(1 − γ)^{k−1}.
    E[K] = η(1 − γ)/(γ(1 − γ^η)) for η ≠ 0 and (1/γ − 1)/log(1/γ) for η = 0.
  - Theorem 2: if the run Q is (λ, ε)-RDP and (λ̂, ε̂)-RDP with λ ∈ (1, ∞), λ̂ ∈ [1, ∞), its outputs are totally
    ordered and K ~ D_{η,γ}, then "run Q K times, return the best" is (λ, ε′)-RDP with
    ε′ = ε + (1 + η)(1 − 1/λ̂) ε̂ + (1 + η) log(1/γ)/λ̂ + log(E[K])/(λ − 1).
  - Corollary 3: for ε-DP runs, the selection is ((2 + η)ε)-DP (η = 1: Liu & Talwar's 3ε).
  - Theorem 6: if K ~ Poisson(μ) (K = 0 possible; then nothing is returned) and Q is (λ, ε)-RDP and (ε̂, δ̂)-DP
    with e^{ε̂} ≤ 1 + 1/(λ − 1), the selection is (λ, ε + μ δ̂ + log(μ)/(λ − 1))-RDP.

  Their §3.3 hypotheses: K is random, each run picks its configuration uniformly at random, one RDP bound holds for
  all configurations, and only the best output is released.

The accounting is dp-accounting's ``RepeatAndSelectDpEvent`` in its ``RdpAccountant``, whose semantics were checked
against the paper (dp_accounting 0.6.0, rdp_privacy_accountant._compute_rdp_repeat_and_select): ``mean`` is E[K]
of the *truncated* law above, ``shape`` is η (0 logarithmic, 1 geometric, ∞ Poisson with mean μ = ``mean``); γ is
found from the mean by bisection, keeping the smaller end (a smaller γ only raises the bound); Theorem 2 is applied
with λ̂ minimised over the accountant's orders, Theorem 6 with δ̂ from the RDP→DP conversion, then RDP is made
monotone in the order. The (ε, δ) is the accountant's RDP→DP conversion (Canonne, Kamath & Steinke 2020, Prop. 12).

Why uniform j rather than a deterministic cycle: both theorems are about K i.i.d. runs of *one* mechanism Q (the
proof writes the output law through the probability generating function of K applied to one run's CDF). Choosing j
uniformly makes Q = "pick j, run M_j" one fixed mechanism, and its RDP is at most the largest M_j's. A cycle makes
the runs differently distributed and the count of each configuration depend on K, which the theorems do not cover.
The price: a configuration may be missed (probability E[(1 − 1/J)^K]).

K is drawn exactly: only uniform integers from ``Generator.integers`` (exact, by rejection), never a float
transcendental, from a law whose parameter is a rational number with denominator ≤ 2**62 (:func:`repetition_law`).
That parameter is chosen so that the drawn law is never more expensive than the one accounted for: the sampler's
E[K] ≤ the requested mean and its γ ≥ the accountant's γ (Theorem 2's ε′ decreases in γ and increases in E[K];
Theorem 6's increases in μ). Floats only *choose* the parameter (bisection on the mean); they never touch a draw.
K is not released, so float noise would not be attackable the way additive noise is (Mironov 2012), but the law
must be the one the theorem assumes, and exactness makes that a fact rather than an approximation. Hence η is
restricted to 0, a positive integer, or ∞ (Poisson): the samplers below are exact for those.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import PrivacyError
from .accountant import dpa, gaussian_noise_multiplier
from .mechanisms import check_epsilon_delta

POISSON = math.inf  # eta for a Poisson number of runs (dp-accounting's shape = inf)
MAX_MEAN_K = 1000.0  # E[K] beyond this is not a tuning budget anyone spends; it also bounds the sampler's work
_DEN = 1 << 62  # denominators of the laws' rational parameters stay below this: rng.integers(0, b) is exact int64
_MEAN_MARGIN = 1e-12  # relative margin on a float-evaluated E[K] (float error is ~1e-15)
_MAX_CELLS = 1 << 22  # uniform integers drawn per vectorised round


@functools.cache
def _orders() -> tuple[float, ...]:
    # dp-accounting's default orders (1.1..10.9 by 0.1, 11..63, 128..1024), plus a geometric fill of the 63 → 1024
    # gap and up to 4096: small μ wants high orders (μ = 0.05, E[K] = 10, δ = 1e-5: ε 2.3 % below the defaults').
    # A grid of 0.02 steps up to 100 changed ε by < 0.05 % for μ ∈ [0.05, 0.3], E[K] = 10 (measured), at 1000x cost.
    rdp = dpa()[2]
    extra = [64.0 * 2 ** (i / 8) for i in range(1, 49)]
    return tuple(sorted(set(map(float, rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS)) | set(extra)))


# ---- validation --------------------------------------------------------------------------------------------------


def check_eta(eta: float) -> float:
    """η must be 0 (logarithmic), a positive integer (1: geometric) or :data:`POISSON`: exact samplers exist for
    those (module docstring). Returns η as a float."""
    ok = isinstance(eta, (int, float, np.integer, np.floating)) and not isinstance(eta, bool)
    if ok and (eta == math.inf or (math.isfinite(eta) and eta >= 0 and float(eta).is_integer())):
        return float(eta)
    raise PrivacyError(
        f"eta must be 0 (logarithmic), a positive integer (1 = geometric) or math.inf (Poisson), got {eta!r}; "
        "other shapes have no exact sampler here"
    )


def check_mean_K(mean_K: float) -> float:
    """E[K] must be a finite number in [1, MAX_MEAN_K] (dp-accounting's RepeatAndSelect requires ≥ 1)."""
    ok = isinstance(mean_K, (int, float, np.integer, np.floating)) and not isinstance(mean_K, bool)
    if ok and math.isfinite(mean_K) and 1 <= mean_K <= MAX_MEAN_K:
        return float(mean_K)
    raise PrivacyError(
        f"mean_K (the expected number of candidate runs) must lie in [1, {MAX_MEAN_K:g}], got {mean_K!r}"
    )


def _check_rng(rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise PrivacyError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")


# ---- the law of K ------------------------------------------------------------------------------------------------


def _tnb_mean(gamma: float, eta: float) -> float:
    """E[K] of D_{η,γ} in floats (Papernot & Steinke, Definition 1), stable as γ → 1."""
    if gamma >= 1.0:
        return 1.0
    log_g = math.log1p(gamma - 1.0)  # log γ < 0; γ − 1 is exact
    if eta == 0:
        return (1.0 - gamma) / (gamma * -log_g)
    return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * log_g))


def _ceil_to_grid(x: Fraction) -> Fraction:
    return Fraction(-((-x.numerator * _DEN) // x.denominator), _DEN)


@dataclass(frozen=True)
class RepetitionLaw:
    """The exact law K is drawn from. ``gamma`` (truncated negative binomial) or ``mu`` (Poisson) is a rational
    with denominator ≤ 2**62; ``mean`` is its E[K], never above the requested ``mean_K``."""

    mean_K: float
    eta: float
    gamma: Fraction | None
    mu: Fraction | None

    @property
    def mean(self) -> float:
        if self.mu is not None:
            return float(self.mu)
        g = self.gamma
        if g == 1:
            return 1.0
        if self.eta == 0:
            return _tnb_mean(float(g), 0.0)
        n = int(self.eta)  # rational for an integer η: exact
        return float(n * (1 - g) / (g * (1 - g**n)))


def repetition_law(mean_K: float, eta: float) -> RepetitionLaw:
    """The law of K with mean (at most, and within ~1e-12 of) ``mean_K`` and shape ``eta``.

    Poisson: μ = ``mean_K`` exactly. Geometric: γ = 1/``mean_K`` rounded up (to the float the accountant uses, and
    onto the grid below). Other η: γ is found by float bisection on
    E[K](γ) (decreasing), taking the end with E[K] ≤ ``mean_K``·(1 − 1e-12), then rounded *up* to a multiple of
    2**-62: a larger γ only lowers E[K] and log(1/γ), so the drawn law is covered by the accounting's.
    """
    return _repetition_law(check_mean_K(mean_K), check_eta(eta))


@functools.lru_cache(maxsize=256)
def _repetition_law(mean_K: float, eta: float) -> RepetitionLaw:
    if eta == POISSON:
        mu = Fraction(mean_K)  # a float ≥ 1 has a denominator ≤ 2**52
        return RepetitionLaw(mean_K, eta, None, mu)
    if mean_K == 1:
        return RepetitionLaw(mean_K, eta, Fraction(1), None)  # γ = 1: K = 1 always
    if eta == 1:
        # γ = 1/E[K], but never below the float 1/E[K] the accountant uses (0.1 as a float is 0.1 + 5.6e-18)
        return RepetitionLaw(mean_K, eta, _ceil_to_grid(max(1 / Fraction(mean_K), Fraction(1 / mean_K))), None)
    target = mean_K * (1 - _MEAN_MARGIN)
    lo, hi = 0.0, 1.0  # E[K](lo) > target ≥ E[K](hi)
    while hi - lo > 2.0**-64:
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if _tnb_mean(mid, eta) > target else (lo, mid)
    return RepetitionLaw(mean_K, eta, _ceil_to_grid(Fraction(hi)), None)


def _failures(a: int, b: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n draws of the number of failures before the first success of Bernoulli(a/b) trials (0 < a ≤ b ≤ 2**62).

    Each trial is ``integers(0, b) < a``, exact. Trials are drawn in blocks; those after a draw's first success are
    drawn and ignored, which does not change its law.
    """
    out = np.zeros(n, dtype=np.int64)
    if a == b or n == 0:
        return out
    width = int(min(max(4, 2 * (b - a) // a + 1), max(4, _MAX_CELLS // n), 4096))
    live, base = np.arange(n), 0
    while live.size:
        success = rng.integers(0, b, size=(live.size, width), dtype=np.int64) < a
        hit = success.any(axis=1)
        out[live[hit]] = base + np.argmax(success[hit], axis=1)
        live, base = live[~hit], base + width
    return out


def _tnb(gamma: Fraction, eta: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n exact draws from D_{η,γ} for an integer η ≥ 0."""
    a, b = gamma.numerator, gamma.denominator
    if a == b:
        return np.ones(n, dtype=np.int64)
    out, filled = np.empty(n, dtype=np.int64), 0
    while filled < n:
        m = n - filled
        if eta == 0:
            # logarithmic: propose G ≥ 1 geometric, P(G = k) = γ(1 − γ)^{k−1}; accept with probability 1/k. The
            # accepted law is ∝ (1 − γ)^k / k. Acceptance rate γ log(1/γ)/(1 − γ).
            k = 1 + _failures(a, b, m, rng)
            k = k[rng.integers(0, k) == 0]
        else:
            # negative binomial: failures before the η-th success = a sum of η geometric failure counts,
            # P(k) = C(k + η − 1, k) γ^η (1 − γ)^k; truncated at k ≥ 1 by rejection (acceptance 1 − γ^η)
            k = sum(_failures(a, b, m, rng) for _ in range(eta))
            k = k[k >= 1]
        take = min(k.size, n - filled)
        out[filled : filled + take] = k[:take]
        filled += take
    return out


def _poisson(mu: Fraction, n: int, rng: np.random.Generator) -> np.ndarray:
    """n exact draws from Poisson(μ), μ rational.

    Poisson(μ) is the sum of m = ⌊2μ⌋ + 1 Poisson(r), r = μ/m < 1/2. Each Poisson(r) by rejection: propose
    G with P(G = k) = (1 − r) r^k (failures before a Bernoulli(1 − r) success), accept with probability 1/k!, a
    product of Bernoulli(1/i), i = 2..k, each ``integers(0, i) == 0``. The accepted law is ∝ r^k/k!.
    """
    m = math.floor(2 * mu) + 1
    r = mu / m
    if r.denominator > _DEN:  # round r down onto the grid: a smaller mean is covered by the accounting
        r = Fraction((r.numerator * _DEN) // r.denominator, _DEN)
    a, b = r.denominator - r.numerator, r.denominator
    draws, filled = np.empty(n * m, dtype=np.int64), 0
    while filled < n * m:
        g = _failures(a, b, n * m - filled, rng)
        keep = np.ones(g.size, dtype=bool)
        for i in range(2, int(g.max(initial=0)) + 1):
            at = np.flatnonzero(keep & (g >= i))
            keep[at] = rng.integers(0, i, size=at.size) == 0
        g = g[keep]
        draws[filled : filled + g.size] = g
        filled += g.size
    return draws.reshape(n, m).sum(axis=1)


def draw_repetitions(mean_K: float, eta: float, rng: np.random.Generator, size: int | None = None):
    """Draw the number K of candidate runs: truncated negative binomial D_{η,γ} (K ≥ 1; η = 1 geometric, η = 0
    logarithmic) or, for ``eta`` = :data:`POISSON`, Poisson (K ≥ 0), with E[K] = ``mean_K`` (to ~1e-12, never
    above). Papernot & Steinke (2022), Definition 1 and §3.

    Exact: uniform integers only (module docstring; the law is :func:`repetition_law`). Returns an int, or an int64
    array of ``size`` draws.
    """
    law = repetition_law(mean_K, eta)
    _check_rng(rng)
    n = 1 if size is None else int(size)
    if n < 0:
        raise PrivacyError(f"size must be >= 0, got {size!r}")
    k = _poisson(law.mu, n, rng) if law.mu is not None else _tnb(law.gamma, int(law.eta), n, rng)
    return int(k[0]) if size is None else k


# ---- accounting --------------------------------------------------------------------------------------------------


def selection_epsilon(candidate_mu: float, mean_K: float, eta: float, delta: float) -> float:
    """ε at ``delta`` of the whole selection (:func:`select_best`) when every candidate run is μ-GDP, i.e. a
    composition of Gaussian mechanisms with μ = √(Σ (Δᵢ/σᵢ)²) covering all it releases, score included. Its RDP is
    exactly ε(λ) = λμ²/2 at every order λ.

    Papernot & Steinke (2022), Theorem 2 (η finite) or Theorem 6 (Poisson), through dp-accounting's
    ``RepeatAndSelectDpEvent(GaussianDpEvent(1/μ), mean=E[K], shape=η)`` and its ``RdpAccountant`` (RDP→DP by
    Canonne, Kamath & Steinke 2020, Prop. 12). The neighbouring relation is the one μ was computed for.
    """
    if not (isinstance(candidate_mu, (int, float, np.floating)) and math.isfinite(candidate_mu) and candidate_mu > 0):
        raise PrivacyError(f"candidate_mu must be a finite number > 0, got {candidate_mu!r}")
    mean_K, eta = check_mean_K(mean_K), check_eta(eta)
    if not (isinstance(delta, (int, float, np.floating)) and 0 < delta < 1):
        raise PrivacyError(f"delta must lie strictly between 0 and 1, got {delta!r}")
    return _selection_epsilon(float(candidate_mu), mean_K, eta, float(delta))


@functools.lru_cache(maxsize=4096)
def _selection_epsilon(candidate_mu: float, mean_K: float, eta: float, delta: float) -> float:
    return repeat_and_select_epsilon(dpa()[0].GaussianDpEvent(1.0 / candidate_mu), mean_K, eta, delta)


def repeat_and_select_epsilon(candidate_event, mean_K: float, eta: float, delta: float) -> float:
    """ε at ``delta`` of :func:`select_best` when one candidate run — everything it releases, score included — is
    described by the dp-accounting event ``candidate_event`` (an RDP bound valid for every configuration, e.g.
    :func:`dpcost.dp.accountant.pure_releases_event`). Papernot & Steinke (2022), Theorems 2 and 6, as above."""
    mean_K, eta = check_mean_K(mean_K), check_eta(eta)
    lib, _, rdp = dpa()
    acc = rdp.RdpAccountant(orders=_orders())
    acc.compose(lib.dp_event.RepeatAndSelectDpEvent(candidate_event, mean_K, eta))
    return float(acc.get_epsilon(delta))


def candidate_mu_for(epsilon: float, delta: float, mean_K: float, eta: float) -> float:
    """Largest per-candidate μ (Gaussian DP) such that the selection is (ε, δ)-DP by :func:`selection_epsilon`: Brent's
    method on ε(μ) − ε to a relative 1e-7, then stepped down until the bound holds, so the μ returned satisfies it.

    The bracket's top is μ₁ = Δ/σ of a single Gaussian release at (ε, δ) (analytic Gaussian): the selection can be
    no cheaper than one run, and the RDP bound lies above the exact single-release ε (both checked, not assumed).
    """
    check_epsilon_delta(epsilon, delta)
    return _candidate_mu_for(float(epsilon), float(delta), check_mean_K(mean_K), check_eta(eta))


@functools.lru_cache(maxsize=1024)
def _candidate_mu_for(epsilon: float, delta: float, mean_K: float, eta: float) -> float:
    def gap(mu: float) -> float:
        return _selection_epsilon(mu, mean_K, eta, delta) - epsilon

    hi = 1.0 / gaussian_noise_multiplier(1, epsilon, delta)
    lo = hi / 1024
    while gap(hi) <= 0:
        lo, hi = hi, 2 * hi
    while gap(lo) > 0:
        if lo < 1e-12:
            raise PrivacyError(
                f"no candidate mu reaches epsilon={epsilon}, delta={delta} with E[K]={mean_K}, eta={eta}"
            )
        hi, lo = lo, lo / 1024
    from scipy import optimize  # here: slow to import

    mu = optimize.brentq(gap, lo, hi, xtol=1e-12, rtol=1e-7)
    while gap(mu) > 0:
        mu *= 1 - 1e-7
    return mu


# ---- the selection -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """The result of :func:`select_best`.

    Releasable: ``output``, ``score`` and ``j`` of the best run (``None`` for all three if K = 0, Poisson only).
    A record, *not* releasable (the guarantee assumes K is hidden): ``K``, the configurations ``runs`` drawn for the
    runs 0..K−1, and ``best_run``, the index of the winning run.
    """

    output: Any
    score: float | None
    j: int | None
    K: int
    runs: tuple[int, ...]
    best_run: int | None


def select_best(
    run_candidate: Callable[[int, int], tuple[Any, float]],
    J: int,
    mean_K: float,
    eta: float,
    rng: np.random.Generator,
) -> Selection:
    """Private selection from private candidates (Liu & Talwar 2019; Papernot & Steinke 2022, Theorems 2 and 6).

    Draws K (:func:`draw_repetitions`), then for runs k = 0..K−1 a configuration j uniformly from 0..J−1 (exact
    ``integers``; uniform rather than cyclic, module docstring) and calls ``run_candidate(j, k)``, which must
    return ``(output, score)``, larger score better; scores must not be NaN (raised as an error: NaN breaks the total
    order the theorems need). Ties go to the earliest run, which for i.i.d. runs has the law of a uniformly random
    tie-break, i.e. of a strict total order. The guarantee is :func:`selection_epsilon` at the candidates' common μ
    (every configuration must satisfy it).

    ``rng`` drives only K and the j's. Each run's own noise must come from a generator the caller derives from run
    k's identity, e.g. ``rng_for(seed, ..., "tuning", k)`` (:mod:`dpcost.analysis.streams`): fresh per run, so that
    runs are independent; not derived from j alone (two runs of one configuration would then share their noise),
    and better not ``rng`` itself (a run's noise would then depend on the draws consumed before it, so no run could
    be reproduced on its own).
    """
    if not callable(run_candidate):
        raise PrivacyError("run_candidate must be callable as run_candidate(j, k) -> (output, score)")
    if isinstance(J, bool) or not isinstance(J, (int, np.integer)) or J < 1:
        raise PrivacyError(f"J (the number of configurations) must be an integer >= 1, got {J!r}")
    K = draw_repetitions(mean_K, eta, rng)
    runs = tuple(int(j) for j in rng.integers(0, int(J), size=K))
    best, best_run = None, None
    for k, j in enumerate(runs):
        output, score = run_candidate(j, k)
        score = float(score)
        if math.isnan(score):
            raise PrivacyError(f"candidate {j} returned a NaN score in run {k}; scores must be totally ordered")
        if best is None or score > best[1]:
            best, best_run = (output, score, j), k
    if best is None:
        return Selection(None, None, None, K, runs, None)
    return Selection(best[0], best[1], best[2], K, runs, best_run)
