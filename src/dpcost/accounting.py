"""Privacy accounting: what each private estimator spends, and how the noise is calibrated to it.

Every private estimator asks a *plan* function here for its noise scales. A plan is computed from public parameters
only (n, ε, δ, tuning constants), never from the data, and it records each release: mechanism, sensitivity and its
norm, noise scale, count, and the budget charged. The privacy ledger of a results table is made of the same plans, so
the ledger and the estimator cannot disagree.

Two calibrations, same total (ε, δ):
  ``paper``  the papers' own formulas and basic composition, for reproduction;
  ``tight``  exact accounting with Google's dp-accounting: the privacy-loss distribution (PLD) of composed Gaussian
             steps, the analytic Gaussian mechanism for single releases, and Rényi/zCDP accounting for compositions of
             pure-DP selections. The guarantee is the same; the noise is what shrinks.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import asdict, dataclass, field

from .errors import PrivacyError
from .mechanisms import check_epsilon_delta, check_sensitivity, gaussian_delta, gaussian_sigma

CALIBRATIONS = ("paper", "tight")
NEIGHBOURS = "replace one record"


@dataclass(frozen=True)
class Release:
    """One kind of noisy release, made ``count`` times."""

    mechanism: str
    sensitivity: float
    norm: str
    noise_scale: float
    count: int = 1
    epsilon: float | None = None  # budget charged per release, where the calibration assigns one
    delta: float | None = None


@dataclass(frozen=True)
class PrivacyPlan:
    method: str
    epsilon: float
    delta: float
    calibration: str
    composition: str
    assumption: str
    releases: tuple[Release, ...] = field(default_factory=tuple)
    neighbours: str = NEIGHBOURS

    def to_dict(self) -> dict:
        return asdict(self)


def check_calibration(calibration: str) -> str:
    if calibration not in CALIBRATIONS:
        raise PrivacyError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}")
    return calibration


def _outside_validity(message: str, on_invalid: str) -> None:
    if on_invalid == "refuse":
        raise PrivacyError(message + "; use calibration 'tight', or on_invalid 'warn' to run it anyway")
    if on_invalid != "warn":
        raise PrivacyError(f"on_invalid must be 'refuse' or 'warn', got {on_invalid!r}")
    warnings.warn("PRIVACY WARNING: " + message, RuntimeWarning, stacklevel=3)


# ---------------------------------------------------------------------------------------------------------------
# Tight calibrations with dp-accounting (cached: they depend on (T, ε, δ) only)
# ---------------------------------------------------------------------------------------------------------------


def _dpa():
    # imported on first use: dp-accounting takes about a second to import, which every job and every
    # `snakemake` start would otherwise pay even with the paper calibration
    import dp_accounting
    from dp_accounting import pld, rdp

    return dp_accounting, pld, rdp


@functools.lru_cache(maxsize=4096)
def gaussian_noise_multiplier(T: int, epsilon: float, delta: float) -> float:
    """Smallest σ/Δ such that T Gaussian mechanisms of ℓ2-sensitivity Δ compose to (ε, δ)-DP.

    T = 1: the analytic Gaussian mechanism (Balle & Wang 2018). T > 1: dp-accounting's PLD accountant, whose
    pessimistic discretisation over-estimates ε, so the σ returned is valid.
    """
    check_epsilon_delta(epsilon, delta)
    if T == 1:
        return gaussian_sigma(1.0, epsilon, delta, "analytic")
    dpa, pld, _ = _dpa()
    sigma = dpa.calibrate_dp_mechanism(
        # a coarser grid than the default 1e-4 is 10x faster and gives the same σ to 4 decimals; the
        # discretisation stays pessimistic, so the guarantee holds
        lambda: pld.PLDAccountant(value_discretization_interval=1e-3),
        lambda s: dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(s), T),
        epsilon,
        delta,
    )
    return float(sigma) * (1 + 1e-6)  # the root finder may stop just inside; step out


def _rdp_epsilon(events: list, delta: float) -> float:
    _, _, rdp = _dpa()
    acc = rdp.RdpAccountant()
    for ev in events:
        acc.compose(ev)
    return acc.get_epsilon(delta)


def _largest_below(f, target: float, lo: float, hi: float) -> float:
    """Largest x in [lo, hi] with increasing f(x) ≤ target, by bisection (returns a point that satisfies it)."""
    for _ in range(100):
        mid = (lo + hi) / 2
        if f(mid) <= target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return lo


@functools.lru_cache(maxsize=4096)
def pure_steps_epsilon0(T: int, epsilon: float, delta: float) -> float:
    """Largest ε₀ such that T ε₀-DP mechanisms compose to (ε, δ)-DP, by the better of two valid bounds: basic
    composition (T ε₀ ≤ ε) and zCDP — each step is (ε₀²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4) — composed and
    converted by dp-accounting's RDP accountant (better from a handful of steps on)."""
    check_epsilon_delta(epsilon, delta)
    dpa = _dpa()[0]
    rdp_e0 = _largest_below(
        lambda e0: _rdp_epsilon([dpa.SelfComposedDpEvent(dpa.ZCDpEvent(e0**2 / 2), T)], delta), epsilon, 0.0, epsilon
    )
    return max(epsilon / T, rdp_e0)


def advanced_composition_epsilon0(epsilon: float, delta: float, T: int) -> float:
    """Largest ε₀ with √(2T log(1/δ)) ε₀ + T ε₀ (e^{ε₀} − 1) ≤ ε (Dwork, Rothblum & Vadhan 2010)."""
    check_epsilon_delta(epsilon, delta)
    g = lambda e0: math.sqrt(2 * T * math.log(1 / delta)) * e0 + T * e0 * math.expm1(e0)  # noqa: E731
    return _largest_below(g, epsilon, 0.0, epsilon)


@functools.lru_cache(maxsize=4096)
def peeling_scale_tight(s: int, epsilon: float, delta: float) -> float:
    """Smallest Laplace scale b/λ for Peeling at (ε, δ): s report-noisy-max selections, each (2λ/b)-DP, and s
    one-dimensional Laplace releases of sensitivity λ, composed by the better of two valid bounds — basic composition
    of the 3s·λ/b pure budget, and RDP accounting (dp-accounting; better for larger s)."""
    check_epsilon_delta(epsilon, delta)
    dpa = _dpa()[0]

    def eps_of(scale):
        e_sel = 2 / scale
        return _rdp_epsilon(
            [
                dpa.SelfComposedDpEvent(dpa.ZCDpEvent(e_sel**2 / 2), s),
                dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(scale), s),
            ],
            delta,
        )

    # ε decreases in the scale: the smallest RDP-valid scale is 1 / (largest valid 1/scale)
    rdp_scale = 1 / _largest_below(lambda inv: eps_of(1 / inv) if inv > 0 else 0.0, epsilon, 0.0, 1e6)
    return min(3 * s / epsilon, rdp_scale)


# ---------------------------------------------------------------------------------------------------------------
# Sensitivities (replace-one) and plans, one per private estimator
# ---------------------------------------------------------------------------------------------------------------


def noisy_gd_step_sensitivity(*, R: float, C: float, c_x: float, eta0: float, n: int) -> float:
    """ℓ2 sensitivity of one update of 004 Alg. 4.1 under replace-one neighbours.

    With ‖x‖₂ ≤ c_x, |Π_R(y)| ≤ R and ‖β^t‖₂ ≤ C the per-record gradient (x'β − Π_R(y))x has norm ≤ (R + C c_x) c_x;
    replacing one record moves (η⁰/n)Σ_i of them by at most 2 η⁰ (R + C c_x) c_x / n.
    """
    return 2 * eta0 * (R + C * c_x) * c_x / n


def noisy_truncated_ols_sensitivity(*, R: float, C: float, c_x: float, kappa: float, n: int) -> float:
    """Replace-one ℓ2 sensitivity of the κ-ridge, C-ball-constrained least squares on clipped, truncated data.

    The objective (1/n)Σ_i ½(x_i'β − Π_R(y_i))² + (κ/2)‖β‖² is κ-strongly convex and each per-record gradient is
    bounded on the ball by G = c_x(R + c_x C), so the minimiser moves by at most 2G/(nκ) (Chaudhuri, Monteleoni
    & Sarwate 2011, Lemma 7).
    """
    return 2 * c_x * (R + c_x * C) / (n * kappa)


def noisy_gd_plan(
    *,
    n: int,
    epsilon: float,
    delta: float,
    T: int,
    R: float,
    C: float,
    c_x: float,
    eta0: float,
    B: float | None = None,
    calibration: str = "paper",
    on_invalid: str = "refuse",
) -> PrivacyPlan:
    """004 Alg. 4.1. Replace-one sensitivity of one update: 2η⁰(R + C c_x)c_x/n (rows clipped to c_x, y truncated
    at R, iterates in the C ball).

    paper: each step a Gaussian mechanism at (ε/T, δ/T) with the paper's B = 4(R + C c_x)c_x (twice the sensitivity)
           and σ = η⁰B√(2 log(2T/δ))/(nε/T), proven for ε/T < 1; basic composition.
    tight: σ = sensitivity × the PLD noise multiplier of T composed Gaussian steps at total (ε, δ).
    """
    check_epsilon_delta(epsilon, delta)
    check_calibration(calibration)
    sens = noisy_gd_step_sensitivity(R=R, C=C, c_x=c_x, eta0=eta0, n=n)
    check_sensitivity(sens)  # a zero bound must never mean zero noise (cf. diffprivlib issue #105)
    assumption = (
        f"rows clipped to ||x||_2 <= c_x = {c_x}, y truncated to [-{R}, {R}], iterates projected on ||b||_2 <= {C}"
    )
    B_min = 2 * (R + C * c_x) * c_x
    B = 4 * (R + C * c_x) * c_x if B is None else B
    if not (math.isfinite(B) and B >= B_min * (1 - 1e-12)):
        raise PrivacyError(f"noise scale B={B} is below the replace-one sensitivity bound 2(R + C c_x)c_x = {B_min}")
    if calibration == "tight":
        sigma = sens * gaussian_noise_multiplier(T, epsilon, delta)
        rel = Release("gaussian", sens, "l2", sigma, T)
        return PrivacyPlan(
            "noisy_gd",
            epsilon,
            delta,
            "tight",
            f"PLD accounting of {T} Gaussian steps (dp-accounting)",
            assumption,
            (rel,),
        )
    if epsilon / T >= 1:
        _outside_validity(
            f"Alg. 4.1's per-step calibration needs epsilon/T < 1, got epsilon={epsilon}, T={T}", on_invalid
        )
    sigma = eta0 * B * math.sqrt(2 * math.log(2 * T / delta)) / (n * epsilon / T)
    rel = Release("gaussian", eta0 * B / n, "l2", sigma, T, epsilon / T, delta / T)
    return PrivacyPlan(
        "noisy_gd", epsilon, delta, "paper", f"basic composition of {T} steps at (eps/T, delta/T)", assumption, (rel,)
    )


def noisy_truncated_ols_plan(
    *,
    n: int,
    epsilon: float,
    delta: float,
    R: float,
    C: float,
    c_x: float,
    kappa: float,
    calibration: str = "paper",
    on_invalid: str = "refuse",
) -> PrivacyPlan:
    """000 §4.3.1 made unconditional (ridge κ, C ball): one Gaussian release of sensitivity 2c_x(R + c_x C)/(nκ).

    paper: the classic σ = Δ√(2 log(1.25/δ))/ε the paper prints, proven for ε < 1. tight: the analytic Gaussian.
    """
    check_epsilon_delta(epsilon, delta)
    check_calibration(calibration)
    sens = noisy_truncated_ols_sensitivity(R=R, C=C, c_x=c_x, kappa=kappa, n=n)
    check_sensitivity(sens)
    if calibration == "paper" and epsilon >= 1:
        _outside_validity(
            f"the classic Gaussian calibration is proven only for epsilon < 1 (got epsilon={epsilon})", on_invalid
        )
    sigma = gaussian_sigma(sens, epsilon, delta, "classic" if calibration == "paper" else "analytic", on_invalid="warn")
    comp = "single Gaussian release, " + ("classic calibration" if calibration == "paper" else "analytic Gaussian")
    assumption = (
        f"rows clipped to ||x||_2 <= c_x = {c_x}, y truncated to [-{R}, {R}], ridge kappa = {kappa}, "
        f"estimate constrained to ||b||_2 <= {C}"
    )
    return PrivacyPlan(
        "noisy_truncated_ols",
        epsilon,
        delta,
        calibration,
        comp,
        assumption,
        (Release("gaussian", sens, "l2", sigma, 1, epsilon, delta),),
    )


def peeling_plan(
    *, s: int, epsilon: float, delta: float, lam: float, calibration: str = "paper", method: str = "peeling"
) -> PrivacyPlan:
    """004 Alg. 3.2 with ℓ∞ sensitivity λ. paper: b = λ·2√(3s log(1/δ))/ε (Lemma 3.3). tight: the smallest b that
    exact RDP accounting of the s selections and the s released coordinates allows."""
    check_epsilon_delta(epsilon, delta)
    check_calibration(calibration)
    check_sensitivity(lam)
    if calibration == "paper":
        b = lam * 2 * math.sqrt(3 * s * math.log(1 / delta)) / epsilon
        comp = "Lemma 3.3 of Cai, Wang & Zhang (after Dwork, Su & Zhang 2018)"
    else:
        b = lam * peeling_scale_tight(s, epsilon, delta)
        comp = (
            f"{s} report-noisy-max selections and {s} Laplace releases: the better of basic composition and RDP "
            "accounting (dp-accounting)"
        )
    rels = (
        Release("report-noisy-max (Laplace)", lam, "linf", b, s, 2 * lam / b),
        Release("laplace", lam, "l1 per coordinate", b, s, lam / b),
    )
    return PrivacyPlan(method, epsilon, delta, calibration, comp, f"||v(Z) - v(Z')||_inf <= {lam}", rels)


def frank_wolfe_plan(
    *, n: int, epsilon: float, delta: float, R: float, radius: float, T: int, calibration: str = "paper"
) -> PrivacyPlan:
    """Talwar, Thakurta & Zhang (2015) Alg. 2 for the mean: T report-noisy-min selections over the 2d vertices of the
    ℓ1 ball, score sensitivity Δ = radius·2R/n, Laplace(2Δ/ε₀) noise, each selection ε₀-DP.
    paper: ε₀ by advanced composition. tight: ε₀ by zCDP/RDP accounting (dp-accounting)."""
    check_epsilon_delta(epsilon, delta)
    check_calibration(calibration)
    sens = radius * 2 * R / n
    check_sensitivity(sens)
    if calibration == "paper":
        e0, comp = advanced_composition_epsilon0(epsilon, delta, T), f"advanced composition of {T} selections"
    else:
        e0 = pure_steps_epsilon0(T, epsilon, delta)
        comp = f"{T} selections: the better of basic composition and zCDP/RDP accounting (dp-accounting)"
    rel = Release("report-noisy-min (Laplace)", sens, "linf over vertex scores", 2 * sens / e0, T, e0)
    return PrivacyPlan(
        "frank_wolfe",
        epsilon,
        delta,
        calibration,
        comp,
        f"coordinates clipped to [-{R}, {R}], estimate in the l1 ball of radius {radius}",
        (rel,),
    )


# ---------------------------------------------------------------------------------------------------------------
# Sufficient-statistics perturbation (Wang 2018, "Revisiting differentially private linear regression")
# ---------------------------------------------------------------------------------------------------------------


def _ssp_family_plan(
    method: str,
    releases: list[tuple[str, float, str]],
    *,
    epsilon: float,
    delta: float,
    calibration: str,
    on_invalid: str,
    assumption: str,
) -> PrivacyPlan:
    """k Gaussian releases (name, replace-one sensitivity, norm) sharing (ε, δ).

    paper: each at (ε/k, δ/k) with Wang's σ = Δ√(log(2/δ′))/ε′ — which is NOT (ε′, δ′)-DP for moderate ε′ (see
    ../shared/notes/seed-001.md §1); its exact δ is checked here and a violation refused or warned about.
    tight: one noise multiplier ρ for all k, from the PLD of k composed Gaussians (dp-accounting), σ_i = ρ Δ_i.
    """
    check_epsilon_delta(epsilon, delta)
    check_calibration(calibration)
    k = len(releases)
    for _, sens, _ in releases:
        check_sensitivity(sens)
    if calibration == "tight":
        rho = gaussian_noise_multiplier(k, epsilon, delta)
        rels = tuple(Release(f"gaussian: {name}", sens, norm, rho * sens) for name, sens, norm in releases)
        comp = f"PLD accounting of {k} Gaussian releases with a common noise multiplier (dp-accounting)"
    else:
        e_k, d_k = epsilon / k, delta / k
        rels = tuple(
            Release(f"gaussian: {name}", sens, norm, sens * math.sqrt(math.log(2 / d_k)) / e_k, 1, e_k, d_k)
            for name, sens, norm in releases
        )
        actual = gaussian_delta(rels[0].noise_scale / rels[0].sensitivity, 1.0, e_k)
        if actual > d_k:
            _outside_validity(
                f"Wang (2018)'s calibration sqrt(log(2/delta'))/eps' is not ({e_k:.3g}, {d_k:.3g})-DP: its exact "
                f"delta is {actual:.3g}",
                on_invalid,
            )
        comp = f"basic composition of {k} Gaussian releases at (eps/{k}, delta/{k}), Wang (2018) calibration"
    return PrivacyPlan(method, epsilon, delta, calibration, comp, assumption, rels)


def ssp_plan(
    *, epsilon: float, delta: float, B_X: float, B_Y: float, calibration: str = "paper", on_invalid: str = "refuse"
) -> PrivacyPlan:
    """SSP: releases X'X (upper triangle, symmetric noise) and X'y. Wang's relation is add/remove one row; under
    replace-one the sensitivities double: ‖xx' − x'x''‖_F ≤ 2B_X², ‖xy − x'y'‖ ≤ 2B_X B_Y."""
    return _ssp_family_plan(
        "ssp",
        [("X'X upper triangle", 2 * B_X**2, "l2 (Frobenius)"), ("X'y", 2 * B_X * B_Y, "l2")],
        epsilon=epsilon,
        delta=delta,
        calibration=calibration,
        on_invalid=on_invalid,
        assumption=f"rows clipped to ||x||_2 <= B_X = {B_X}, y clipped to [-{B_Y}, {B_Y}]",
    )


def adassp_plan(
    *, epsilon: float, delta: float, B_X: float, B_Y: float, calibration: str = "paper", on_invalid: str = "refuse"
) -> PrivacyPlan:
    """AdaSSP (Wang 2018, Alg. 2): releases λ_min(X'X) (replace-one sensitivity B_X², by Weyl), X'X and X'y (as
    in :func:`ssp_plan`), a third of the budget each under the paper calibration."""
    return _ssp_family_plan(
        "adassp",
        [
            ("lambda_min(X'X)", B_X**2, "absolute"),
            ("X'X upper triangle", 2 * B_X**2, "l2 (Frobenius)"),
            ("X'y", 2 * B_X * B_Y, "l2"),
        ],
        epsilon=epsilon,
        delta=delta,
        calibration=calibration,
        on_invalid=on_invalid,
        assumption=f"rows clipped to ||x||_2 <= B_X = {B_X}, y clipped to [-{B_Y}, {B_Y}]",
    )


# ---------------------------------------------------------------------------------------------------------------
# Peer libraries (their own accounting, recorded for the ledger)
# ---------------------------------------------------------------------------------------------------------------


def diffprivlib_plan(*, epsilon: float, delta: float, B_X: float, B_Y: float) -> PrivacyPlan:
    check_epsilon_delta(epsilon, delta)
    return PrivacyPlan(
        "diffprivlib",
        epsilon,
        0.0,
        "library",
        "diffprivlib LinearRegression: functional mechanism (Laplace noise on the objective's coefficients), "
        "epsilon-DP, delta unused; accounting is diffprivlib's own",
        f"rows clipped to ||x||_2 <= {B_X}, every coordinate in [-{B_X}, {B_X}], y in [-{B_Y}, {B_Y}] (public bounds)",
    )


def opendp_ssp_plan(*, epsilon: float, delta: float, B_X: float, B_Y: float) -> PrivacyPlan:
    from .peers import opendp_scale

    check_epsilon_delta(epsilon, delta)
    sens = 2 * B_X * math.sqrt(B_X**2 + B_Y**2)
    scale = opendp_scale(epsilon=epsilon, delta=delta, sensitivity=sens)
    return PrivacyPlan(
        "opendp_ssp",
        epsilon,
        delta,
        "library",
        "one Gaussian release of (X'X upper triangle, X'y), scale certified by OpenDP (zCDP -> approx-DP)",
        f"rows clipped to ||x||_2 <= {B_X}, y clipped to [-{B_Y}, {B_Y}]",
        (Release("gaussian: (X'X upper triangle, X'y)", sens, "l2", scale),),
    )
