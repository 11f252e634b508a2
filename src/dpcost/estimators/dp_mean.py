"""Low-dimensional private mean estimation — Cai, Wang & Zhang, *The Cost of Privacy* (Ann. Statist. 2021),
Algorithm 3.1 (the noisy coordinate-truncated mean), its closed-form risk, and the low-dimensional comparator the
paper names, Karwa & Vadhan (2018), Algorithm 4 (private range, then a noisy clipped mean), with their privacy plans.

Neighbouring relation throughout: *replace one record* (one row of the data matrix); the sample size n is public.
Both estimators clip inside the function, which is what bounds their sensitivities; add/remove neighbours are
refused (n would no longer be public).
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from ..dp.accountant import dpa
from ..dp.mechanisms import check_epsilon_delta, check_positive, gaussian_delta, gaussian_sigma
from ..dp.plan import PrivacyPlan, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import add_noise, draw, grid_scale
from ..errors import PrivacyError
from .base import check_count, check_matrix, require_replace
from .sparse_mean import truncated_mean

# ---------------------------------------------------------------------------------------------------------------
# Algorithm 3.1: the noisy truncated mean
# ---------------------------------------------------------------------------------------------------------------


def dp_mean_sensitivity(n: int, d: int, R: float) -> float:
    """Replace-one ℓ2 sensitivity 2R√d/n of X̄_R: one clipped row moves by at most 2R in each of d coordinates."""
    return 2 * R * math.sqrt(d) / n


def printed_sigma(n: int, d: int, R: float, epsilon: float, delta: float) -> float:
    """The noise standard deviation printed in 004, Alg. 3.1: σ² = 4R²d log(1/δ)/(n²ε²), i.e. σ = Δ√log(1/δ)/ε."""
    return 2 * R * math.sqrt(d * math.log(1 / delta)) / (n * epsilon)


def dp_mean_plan(privacy: Privacy, n: int, d: int, *, R: float) -> PrivacyPlan:
    """One Gaussian release of X̄_R, replace-one ℓ2 sensitivity Δ = 2R√d/n.

    paper: the variance printed in 004, Alg. 3.1, σ² = 4R²d log(1/δ)/(n²ε²) = Δ² log(1/δ)/ε². The paper justifies it
    by the classic Gaussian mechanism (its Example 2.2: σ² = 2Δ² log(1.25/δ)/ε², proven for ε < 1), but the printed
    variance is less than half of that, so the classic proof does not cover it. Whether it is (ε, δ)-DP is decided
    here exactly, by the Gaussian mechanism's privacy curve (Balle & Wang 2018, Thm 8: necessary and sufficient):
    it is where δ(ε) ≤ δ: at ε = 0.5 for δ ≥ 3.9e-5 only, and at the paper's own (0.5, 10/n^1.1) for n ≤ 81,700 only
    (at n = 100,000 its exact δ is 1.09 times the target); as δ → 0 it always fails. Outside that set the plan
    refuses or warns (``Privacy.on_invalid``) and is marked ``proven=False``. (The earlier version, 000 §3.2.3,
    prints d T² log(1.25/δ)/(n²ε²), a quarter of 004's: at (0.5, 1e-5) its exact ε is 1.10.)
    tight: the analytic Gaussian mechanism (Balle & Wang 2018), the smallest σ with exact (ε, δ)-DP.
    """
    p = privacy.at(n)
    require_replace(p, "dp_mean", "it divides by the public sample size n")
    n, d = check_count("n", n), check_count("d", d)
    R = check_positive("R", R)
    epsilon, delta = p.epsilon, p.delta
    sens = dp_mean_sensitivity(n, d, R)
    proven, params = True, {}
    if p.calibration == "paper":
        sigma = printed_sigma(n, d, R, epsilon, delta)
        exact = gaussian_delta(sigma, sens, epsilon)
        params = {"printed_sigma": sigma, "exact_delta_at_epsilon": exact}
        comp = (
            "one Gaussian release with the variance printed in Alg. 3.1 (4R^2 d log(1/delta)/(n eps)^2), certified "
            f"by the exact Gaussian privacy curve (Balle & Wang 2018, Thm 8): delta(eps) = {exact:.3g}"
        )
        if exact > delta:
            proven = False
            comp = (
                "NOT PROVEN: the variance printed in Alg. 3.1 (4R^2 d log(1/delta)/(n eps)^2) has exact "
                f"delta(eps) = {exact:.3g} > {delta:.3g} (Balle & Wang 2018, Thm 8)"
            )
            p.outside_validity(
                "Alg. 3.1's printed noise variance 4R^2 d log(1/delta)/(n eps)^2 is not "
                f"({epsilon:.3g}, {delta:.3g})-DP: its exact delta at eps={epsilon:.3g} is {exact:.3g}"
            )
    else:
        sigma = gaussian_sigma(sens, epsilon, delta, "analytic")
        comp = "one analytic Gaussian release (Balle & Wang 2018), exact"
    sigma = grid_scale(sigma, sens, d, "l2", "gaussian", p.sampler)
    rel = grid_release("gaussian", "gaussian", sens, "l2", sigma, 1, epsilon, delta, coordinates=d, sampler=p.sampler)
    assumption = f"every coordinate clipped to [-{R}, {R}] inside the estimator"
    why = "one Gaussian release of the coordinate-clipped mean"
    return PrivacyPlan(
        "dp_mean",
        epsilon,
        delta,
        p.calibration,
        comp,
        assumption,
        (rel,),
        p.relation,
        params,
        proven,
        whole_mechanism=True,
        whole_mechanism_why=why,
    )


def dp_mean(X, *, privacy: Privacy, rng: np.random.Generator, R: float) -> np.ndarray:
    """DP mean — Cai, Wang & Zhang (2021), Algorithm 3.1: X̄_R + N_d(0, σ²I).

    X̄_R is the mean of the rows with every coordinate clipped to [−R, R] (here, inside the function).
    Guarantee: (ε, δ)-DP under replace-one neighbours. Sensitivity: replacing one row moves X̄_R by at most 2R/n in
    every coordinate, ‖X̄_R − X̄′_R‖₂ ≤ 2R√d/n, because of that clipping. Noise σ from :func:`dp_mean_plan`:
    calibration "paper" is the variance printed in the paper, which is not (ε, δ)-DP everywhere (the plan refuses or
    warns where it is not); "tight" the analytic Gaussian. Noise is an exact discrete Gaussian on a grid
    (:mod:`dpcost.dp.samplers`). Theorem 3.2: R = the bound T for data with ‖x‖∞ < T; otherwise R = Kσ√log n.
    """
    X = check_matrix(X)
    n, d = X.shape
    R = check_positive("R", R)
    sigma = dp_mean_plan(privacy, n, d, R=R).releases[0].noise_scale
    return add_noise(truncated_mean(X, R), "gaussian", sigma, rng, privacy.sampler)


class MeanRisk(NamedTuple):
    """E‖μ̂ − μ‖² and its parts: Σ_j Var(Π_R(x_j))/n, Σ_j (EΠ_R(x_j) − μ_j)², and d σ² (the noise)."""

    sampling: float
    clipping_bias: float
    noise: float
    total: float


def clipped_normal_moments(m, s, R: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of Π_R(x) = min(max(x, −R), R) for x ~ N(m, s²) (elementwise; s > 0).

    With a = (−R − m)/s, b = (R − m)/s, P = Φ(b) − Φ(a):
    E Π_R(x) = −RΦ(a) + R(1 − Φ(b)) + mP + s(φ(a) − φ(b)),
    E Π_R(x)² = R²(Φ(a) + 1 − Φ(b)) + m²P + 2ms(φ(a) − φ(b)) + s²(P + aφ(a) − bφ(b)).
    """
    m, s = np.broadcast_arrays(np.asarray(m, dtype=float), np.asarray(s, dtype=float))
    a, b = (-R - m) / s, (R - m) / s
    from scipy import special  # here: slow to import

    Fa, Sb = special.ndtr(a), special.ndtr(-b)  # Φ(a), 1 − Φ(b)
    P = special.ndtr(b) - Fa
    pa, pb = np.exp(-a * a / 2) / math.sqrt(2 * math.pi), np.exp(-b * b / 2) / math.sqrt(2 * math.pi)
    mean = -R * Fa + R * Sb + m * P + s * (pa - pb)
    second = R * R * (Fa + Sb) + m * m * P + 2 * m * s * (pa - pb) + s * s * (P + a * pa - b * pb)
    return mean, np.maximum(second - mean * mean, 0.0)


def dp_mean_expected_error(privacy: Privacy, n: int, *, R: float, mu, sd) -> MeanRisk:
    """Closed-form E‖μ̂ − μ‖² of :func:`dp_mean` for i.i.d. rows with Gaussian marginals x_j ~ N(μ_j, sd_j²).

    The squared error is a sum over coordinates, so only the marginals matter (any correlation between coordinates
    leaves it unchanged): Σ_j [Var(Π_R(x_j))/n + (EΠ_R(x_j) − μ_j)²] + d σ², σ the plan's noise scale
    (:func:`clipped_normal_moments`). With nothing clipped (R ≫ |μ_j| + sd_j) this is tr(Σ)/n + dσ². The exact
    discrete Gaussian on the grid has variance σ² to a relative ~1e-12, and rounding the value to the grid adds at
    most (σ/2²⁰)²/4 a coordinate: both negligible.
    """
    mu = np.atleast_1d(np.asarray(mu, dtype=float))
    sd = np.broadcast_to(np.asarray(sd, dtype=float), mu.shape)
    if not (np.all(np.isfinite(mu)) and np.all(np.isfinite(sd)) and np.all(sd > 0)):
        raise PrivacyError("mu must be finite and sd finite and > 0")
    d = mu.size
    sigma = dp_mean_plan(privacy, n, d, R=R).releases[0].noise_scale
    mean, var = clipped_normal_moments(mu, sd, R)
    sampling = float(np.sum(var)) / n
    bias = float(np.sum((mean - mu) ** 2))
    noise = d * sigma**2
    return MeanRisk(sampling, bias, noise, sampling + bias + noise)


# ---------------------------------------------------------------------------------------------------------------
# Karwa & Vadhan (2018), Algorithm 4, coordinate by coordinate
# ---------------------------------------------------------------------------------------------------------------

KV_MAX_BINS = 10_000_000  # d·(2r + 1) noisy counts per call; beyond this R_range/sigma is a configuration mistake


@functools.lru_cache(maxsize=1024)
def laplace_composition_scale(k: int, epsilon: float, delta: float) -> float:
    """Smallest Laplace scale b per unit sensitivity such that k Laplace mechanisms (each sensitivity 1, scale b)
    compose to (ε, δ)-DP: the better of basic composition (b = k/ε, pure) and dp-accounting's PLD accountant
    (pessimistic discretisation, so the b returned is valid; checked and stepped up until the accountant agrees).
    dp-accounting states Laplace PLDs for add/remove only; a Laplace mechanism's PLD depends only on the shift over
    the scale, and the shift used here is the replace-one sensitivity, so the numbers are the replace-one ones."""
    check_epsilon_delta(epsilon, delta)
    lib, pld, _ = dpa()

    def accountant():
        return pld.PLDAccountant(value_discretization_interval=1e-3)

    def eps_of(b: float) -> float:
        acc = accountant()
        acc.compose(lib.SelfComposedDpEvent(lib.LaplaceDpEvent(b), k))
        return acc.get_epsilon(delta)

    b = float(
        lib.calibrate_dp_mechanism(
            accountant, lambda s: lib.SelfComposedDpEvent(lib.LaplaceDpEvent(s), k), epsilon, delta
        )
    )
    b *= 1 + 1e-6
    while eps_of(b) > epsilon:
        b *= 1 + 1e-4
    return min(k / epsilon, b)


def kv_half_width(sigma: float, n: int, beta: float) -> float:
    """Half-width 4σ√log(n/β) of Karwa & Vadhan's private range around the chosen bin centre (KV Alg. 1, as the two
    public implementations we read have it): with probability ≥ 1 − β no point of the coordinate is clipped."""
    return 4 * sigma * math.sqrt(math.log(n / beta))


def _kv_checks(sigma, R_range, beta, range_fraction) -> tuple[float, float, float, float]:
    sigma, R_range = check_positive("sigma", sigma), check_positive("R_range", R_range)
    beta, range_fraction = check_positive("beta", beta), check_positive("range_fraction", range_fraction)
    if not beta < 1:
        raise PrivacyError(f"beta must lie strictly between 0 and 1, got {beta!r}")
    if not range_fraction < 1:
        raise PrivacyError(f"range_fraction must lie strictly between 0 and 1, got {range_fraction!r}")
    return sigma, R_range, beta, range_fraction


def karwa_vadhan_mean_plan(
    privacy: Privacy,
    n: int,
    d: int,
    *,
    sigma: float,
    R_range: float,
    beta: float,
    range_fraction: float,
) -> PrivacyPlan:
    """Karwa & Vadhan's Alg. 4 on each of d coordinates: two steps, ε₁ = range_fraction·ε and ε₂ = ε − ε₁.

    Range step: a noisy histogram per coordinate over K = 2r + 1 bins of width σ (r = ⌈R_range/σ⌉). Replacing one
    record changes at most two counts per coordinate, each by 1: 2d count releases of sensitivity 1 are charged
    (the other counts are identical between neighbours). Mean step: d Laplace releases of sensitivity 2w/n, the
    clipped coordinate means, w = 4σ√log(n/β) (the clipping interval's half-width).
    paper: Karwa & Vadhan's own calibration, pure DP with Laplace noise — b = 2/ε₁ per coordinate histogram and
    2w/(nε₂) per coordinate mean (KV's Laplace histogram learner and Alg. 4 for d = 1) — split evenly over the d
    coordinates by basic
    composition: b_hist = 2d/ε₁, b_mean = (2w/n)·d/ε₂. δ is not used. The paper (004 §5) does not say how it ran the
    one-dimensional algorithm in d = 20; this is the direct reading.
    tight: the same Laplace releases with the smallest scales PLD accounting allows (dp-accounting): 2d count
    releases at (ε₁, δ/2), d mean releases at (ε₂, δ/2), the two steps composed basically.
    """
    p = privacy.at(n)
    require_replace(p, "karwa_vadhan", "it divides by the public sample size n")
    n, d = check_count("n", n), check_count("d", d)
    sigma, R_range, beta, range_fraction = _kv_checks(sigma, R_range, beta, range_fraction)
    epsilon, delta = p.epsilon, p.delta
    ratio = R_range / sigma
    if not d * (2 * ratio + 1) <= KV_MAX_BINS:  # also refuses a ratio that overflowed to inf
        raise PrivacyError(
            f"R_range/sigma = {ratio:.3g} asks for {d} x (2r + 1) histogram bins (more than {KV_MAX_BINS:g})"
        )
    r = math.ceil(ratio)
    K = 2 * r + 1
    w = kv_half_width(sigma, n, beta)
    sens_mean = 2 * w / n
    e1, e2 = range_fraction * epsilon, (1 - range_fraction) * epsilon
    b_hist0, mult_mean, d1, d2, comp = _kv_calibration(p, d, e1, e2)
    b_mean0 = sens_mean * mult_mean
    rels = _kv_releases(p, d, K, sens_mean, b_hist0, b_mean0)
    params = {
        "r": r,
        "bins_per_coordinate": K,
        "half_width": w,
        "epsilon_range": e1,
        "epsilon_mean": e2,
        "delta_range": d1,
        "delta_mean": d2,
    }
    assumption = (
        f"each coordinate clipped inside the estimator to [c - {w:.4g}, c + {w:.4g}] around its privately chosen "
        f"bin centre c (bins of width sigma = {sigma} on [-{R_range}, {R_range}])"
    )
    why = (
        "its noisy histograms choose the clipping range of the mean: entered at the stated composition of its two steps"
    )
    return PrivacyPlan(
        "karwa_vadhan",
        epsilon,
        delta,
        p.calibration,
        comp,
        assumption,
        rels,
        p.relation,
        params,
        whole_mechanism=False,
        whole_mechanism_why=why,
    )


def _kv_calibration(p: Privacy, d: int, e1: float, e2: float) -> tuple[float, float, float, float, str]:
    """(b_hist, b_mean per unit of sensitivity, δ of the range step, δ of the mean step, composition) of
    :func:`karwa_vadhan_mean_plan` at ε₁ = ``e1``, ε₂ = ``e2``: paper basic composition of pure-DP Laplace
    releases, tight the PLD accountant's smallest Laplace scales at δ/2 per step."""
    delta = p.delta
    if p.calibration == "paper":
        b_hist0, mult_mean = 2 * d / e1, d / e2
        d1 = d2 = 0.0
        comp = (
            f"basic composition of pure-DP steps (delta unused): {d} noisy histograms, {2 * d} changing counts "
            f"at Laplace(2d/eps1) (eps1 = {e1:.4g}), then {d} clipped means at Laplace(2w d/(n eps2)) (eps2 = {e2:.4g})"
        )
    else:
        d1 = d2 = delta / 2  # per step; a single release is charged no δ of its own (None below)
        b_hist0, mult_mean = laplace_composition_scale(2 * d, e1, d1), laplace_composition_scale(d, e2, d2)
        comp = (
            f"PLD accounting (dp-accounting) of {2 * d} changing Laplace counts at ({e1:.4g}, {d1:.3g}) and of {d} "
            f"Laplace means at ({e2:.4g}, {d2:.3g}); the two steps composed basically"
        )
    return b_hist0, mult_mean, d1, d2, comp


def _kv_releases(p: Privacy, d: int, K: int, sens_mean: float, b_hist0: float, b_mean0: float) -> tuple:
    """The two steps' releases of :func:`karwa_vadhan_mean_plan` on the grid: 2d histogram counts of
    sensitivity 1, then d clipped means of sensitivity 2w/n, at the scales of :func:`_kv_calibration`."""
    typed = {"coordinates": 1, "sampler": p.sampler}
    return (
        grid_release(
            "laplace",
            f"laplace: noisy histogram counts, {d} coordinates x {K} bins of width sigma (at most 2 counts per "
            "coordinate change between neighbours)",
            1.0,
            "each",
            grid_scale(b_hist0, 1.0, 1, "l1", "laplace", p.sampler),
            2 * d,
            1 / b_hist0,
            0.0 if p.calibration == "paper" else None,
            norm_words="l1 per count",
            **typed,
        ),
        grid_release(
            "laplace",
            "laplace: coordinate means clipped to the private ranges",
            sens_mean,
            "each",
            grid_scale(b_mean0, sens_mean, 1, "l1", "laplace", p.sampler),
            d,
            sens_mean / b_mean0,
            0.0 if p.calibration == "paper" else None,
            norm_words="l1 per coordinate",
            **typed,
        ),
    )


def kv_counts(X: np.ndarray, sigma: float, r: int) -> np.ndarray:
    """Per-coordinate histogram counts (d, 2r + 1) over the bins (σ(k − ½), σ(k + ½)], k = −r … r; points outside
    every bin are not counted."""
    n, d = X.shape
    K = 2 * r + 1
    k = np.ceil(X / sigma - 0.5)  # the bin holding each value; huge values stay floats until filtered
    inside = np.abs(k) <= r
    cols = np.broadcast_to(np.arange(d), X.shape)[inside]
    flat = cols * K + (k[inside].astype(np.int64) + r)
    return np.bincount(flat, minlength=d * K).reshape(d, K).astype(float)


def kv_private_centres(
    X: np.ndarray, *, sigma: float, r: int, scale: float, rng: np.random.Generator, sampler: str
) -> np.ndarray:
    """KV Alg. 1 on every coordinate at once: the centre σ·l̂_j of the bin with the largest noisy count (Laplace of
    ``scale`` on every count; ties: the lowest bin, a post-processing of the noisy histogram)."""
    counts = kv_counts(X, sigma, r)
    noisy = draw("laplace", scale, counts.shape, rng, sampler).add(counts)
    return sigma * (np.argmax(noisy, axis=1) - r)


def kv_clipped_mean(X: np.ndarray, centres: np.ndarray, w: float) -> np.ndarray:
    """Coordinate means after clipping coordinate j to [c_j − w, c_j + w]: replace-one sensitivity 2w/n each."""
    return np.clip(X, centres - w, centres + w).mean(axis=0)


def karwa_vadhan_mean(
    X,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    sigma: float,
    R_range: float,
    beta: float = 0.05,
    range_fraction: float = 0.5,
) -> np.ndarray:
    """Karwa & Vadhan (2018, arXiv:1711.03908), Algorithm 4 — the point estimate of their known-variance private
    confidence interval for a normal mean — applied to each coordinate; the low-dimensional comparator of Cai,
    Wang & Zhang (2021, §5, ref. [29]).

    For every coordinate j (σ known, |μ_j| ≤ R_range public):
    1. private range (KV Alg. 1): counts of the data in the bins (σ(k − ½), σ(k + ½)], k = −r … r, r = ⌈R_range/σ⌉,
       plus Laplace noise; l̂_j = the bin with the largest noisy count; range [σl̂_j − w, σl̂_j + w],
       w = 4σ√log(n/β);
    2. clip the coordinate to that range and release its mean plus Laplace noise of scale (range length)/(n ε₂).
    KV's algorithm goes on to an interval μ̃ ± (σ z_{1−α/2}/√n + b log(1/α)); only the point estimate μ̃ is used here.
    Guarantee: (ε, δ)-DP under replace-one neighbours (calibration "paper": pure ε-DP). Sensitivities: replacing one
    record changes at most two histogram counts per coordinate by 1, and, the ranges being fixed by step 1, each
    clipped mean by at most 2w/n — true because the clipping happens here. Budget: ε₁ = range_fraction·ε for the
    ranges, the rest for the means (:func:`karwa_vadhan_mean_plan`). Noise: exact discrete Laplace on a grid.

    Sources and what is reconstructed. KV's text was not available to us; the algorithm is read from two public
    implementations that agree on it (an R package's ``dp_range``/``dp_confidence_interval``, documented as KV's
    Algorithms 1 and 4, and Wu et al.'s replication ``alg1_Vadhan.R``): the bins, the argmax, the half-width
    4σ√log(n/β), the clipping and the Laplace scale (X_max − X_min)/(nε). Not confirmed against KV: the constant 4;
    KV's split of ε and of the failure probability between the steps (the R package splits ε evenly: the default
    ``range_fraction=0.5``); whether KV's histogram is the pure Laplace one used here or the stability-based one
    (noise on non-empty bins only, with a threshold; (ε, δ)-DP) — with a public range the bins are finite and the
    pure version applies. Beyond KV: d coordinates (KV is one-dimensional) composed as the plan says, σ common to
    all coordinates, and no projection of the estimate back into its range (Wu et al.'s code does that; it would be
    post-processing).
    """
    X = check_matrix(X)
    n, d = X.shape
    plan = karwa_vadhan_mean_plan(privacy, n, d, sigma=sigma, R_range=R_range, beta=beta, range_fraction=range_fraction)
    hist, mean = plan.releases
    centres = kv_private_centres(
        X, sigma=float(sigma), r=plan.parameters["r"], scale=hist.noise_scale, rng=rng, sampler=privacy.sampler
    )
    return add_noise(
        kv_clipped_mean(X, centres, plan.parameters["half_width"]), "laplace", mean.noise_scale, rng, privacy.sampler
    )
