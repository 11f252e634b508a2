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
import numbers
import warnings
from dataclasses import asdict, dataclass, field

from scipy import optimize, special

from .errors import PrivacyError
from .mechanisms import check_epsilon_delta, check_positive, check_sensitivity, gaussian_delta, gaussian_sigma

CALIBRATIONS = ("paper", "tight")
NEIGHBOURS = "replace one record"
ADD_REMOVE = "add or remove one record"
NEIGHBOUR_RELATIONS = {"replace": NEIGHBOURS, "add_remove": ADD_REMOVE}


@dataclass(frozen=True)
class Release:
    """One kind of noisy release, made ``count`` times."""

    mechanism: str
    sensitivity: float | None  # None where the mechanism has none (a posterior sample calibrated to the data)
    norm: str
    noise_scale: float | None
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
    parameters: dict = field(default_factory=dict)  # public constants the estimator derives from the budget

    def to_dict(self) -> dict:
        return asdict(self)


def check_neighbours(neighbours: str) -> str:
    if neighbours not in NEIGHBOUR_RELATIONS:
        raise PrivacyError(f"neighbours must be one of {tuple(NEIGHBOUR_RELATIONS)}, got {neighbours!r}")
    return neighbours


def add_remove_budget(epsilon: float, delta: float) -> tuple[float, float]:
    """(ε₀, δ₀) such that an (ε₀, δ₀)-DP mechanism under add/remove-one neighbours is (ε, δ)-DP under replace-one.

    Replacing a record is removing it and adding another: group privacy over the path Z → Z⁻ → Z′ gives
    (2ε₀, (1 + e^{ε₀})δ₀). Used for the mechanisms whose proofs exist only for add/remove (OPS, AdaOPS) and whose
    sensitivities cannot simply be doubled.
    """
    check_epsilon_delta(epsilon, delta)
    e0 = epsilon / 2
    return e0, delta / (1 + math.exp(e0))


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
    neighbours: str = "replace",
) -> PrivacyPlan:
    """k Gaussian releases (name, sensitivity under ``neighbours``, norm) sharing (ε, δ).

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
    return PrivacyPlan(method, epsilon, delta, calibration, comp, assumption, rels, NEIGHBOUR_RELATIONS[neighbours])


def _xx_xy_sensitivities(B_X: float, B_Y: float, neighbours: str) -> tuple[float, float]:
    """ℓ2 sensitivities of (X'X upper triangle, X'y): B_X², B_X B_Y under add/remove (Wang 2018), twice that under
    replace-one (‖xx' − x'x''‖_F ≤ 2B_X², ‖xy − x'y'‖ ≤ 2B_X B_Y)."""
    k = 2 if check_neighbours(neighbours) == "replace" else 1
    return k * B_X**2, k * B_X * B_Y


def ssp_plan(
    *,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    calibration: str = "paper",
    on_invalid: str = "refuse",
    neighbours: str = "replace",
) -> PrivacyPlan:
    """SSP: releases X'X (upper triangle, symmetric noise) and X'y. Wang's relation is add/remove one row; under
    replace-one (the default here) the sensitivities double: ‖xx' − x'x''‖_F ≤ 2B_X², ‖xy − x'y'‖ ≤ 2B_X B_Y."""
    s_xx, s_xy = _xx_xy_sensitivities(B_X, B_Y, neighbours)
    return _ssp_family_plan(
        "ssp",
        [("X'X upper triangle", s_xx, "l2 (Frobenius)"), ("X'y", s_xy, "l2")],
        epsilon=epsilon,
        delta=delta,
        calibration=calibration,
        on_invalid=on_invalid,
        assumption=f"rows clipped to ||x||_2 <= B_X = {B_X}, y clipped to [-{B_Y}, {B_Y}]",
        neighbours=neighbours,
    )


def adassp_plan(
    *,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    calibration: str = "paper",
    on_invalid: str = "refuse",
    neighbours: str = "replace",
) -> PrivacyPlan:
    """AdaSSP (Wang 2018, Alg. 2): releases λ_min(X'X) (sensitivity B_X² under either relation, by Weyl: one
    rank-one PSD term leaves and one enters), X'X and X'y (as in :func:`ssp_plan`), a third of the budget each
    under the paper calibration."""
    s_xx, s_xy = _xx_xy_sensitivities(B_X, B_Y, neighbours)
    return _ssp_family_plan(
        "adassp",
        [
            ("lambda_min(X'X)", B_X**2, "absolute"),
            ("X'X upper triangle", s_xx, "l2 (Frobenius)"),
            ("X'y", s_xy, "l2"),
        ],
        epsilon=epsilon,
        delta=delta,
        calibration=calibration,
        on_invalid=on_invalid,
        assumption=f"rows clipped to ||x||_2 <= B_X = {B_X}, y clipped to [-{B_Y}, {B_Y}]",
        neighbours=neighbours,
    )


# ---------------------------------------------------------------------------------------------------------------
# One Posterior Sample (Wang 2018 §3.2, App. F; Alg. 1 AdaOPS) and objective perturbation (Kifer et al. 2012)
# ---------------------------------------------------------------------------------------------------------------


def _check_positive(**bounds: float) -> None:
    # a zero bound must never mean zero noise (cf. diffprivlib issue #105)
    for name, v in bounds.items():
        check_positive(name, v)


def _budget_for(epsilon: float, delta: float, neighbours: str) -> tuple[float, float]:
    """The add/remove budget a mechanism proven for add/remove neighbours must run at."""
    check_epsilon_delta(epsilon, delta)
    return (epsilon, delta) if check_neighbours(neighbours) == "add_remove" else add_remove_budget(epsilon, delta)


def ops_gamma(*, L: float, h: float, B_X: float, epsilon: float, log_term: float, exact: bool = True) -> float:
    """Largest inverse temperature γ whose uniform per-instance DP bound (Wang 2018, Remark 11) is at most ε:

        √(γ L² log(2/δ) / h) + γ L² / (2(h + B_X²)) + (1 + log(2/δ)) B_X² / (2h) ≤ ε,   h = λ + λ_min,

    a quadratic in u = √γ. ``exact=False`` takes the reference code's a = L²/(h + B_X²), twice the formula's
    (conservative). The last term does not depend on γ: if it is ≥ ε no γ > 0 is private, and this refuses.
    """
    c = (1 + log_term) * B_X**2 / (2 * h) - epsilon
    if not c < 0:
        raise PrivacyError(
            f"no posterior temperature is ({epsilon:.3g}, ...)-DP: lambda + lambda_min = {h:.4g} must exceed "
            f"(1 + log(2/delta)) B_X^2 / (2 epsilon) = {(1 + log_term) * B_X**2 / (2 * epsilon):.4g}"
        )
    a = L**2 / ((2.0 if exact else 1.0) * (h + B_X**2))
    b = math.sqrt(L**2 * log_term / h)
    u = 2 * -c / (b + math.sqrt(b * b - 4 * a * c))  # the positive root, in the form that does not cancel
    return u * u


def _c1(d: int, rho: float, log_term: float, eps: float) -> float:
    """C₁ of Wang (2018) eq. (18): [d/2 + √(d log(1/ρ)) + log(1/ρ)] log(2/δ) / ε²."""
    return (d / 2 + math.sqrt(d * math.log(1 / rho)) + math.log(1 / rho)) * log_term / eps**2


def ops_balanced_plan(
    *,
    n: int,
    d: int,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    B: float = 1.0,
    rho: float = 0.05,
    calibration: str = "paper",
    on_invalid: str = "refuse",
    neighbours: str = "replace",
) -> PrivacyPlan:
    """OPS-Balanced (Wang 2018, App. F; the "OPS" of its Tables 3–4): one sample of N(θ_λ, (γ(X'X + λI))⁻¹).

    λ minimises the utility bound (24) for a guess B of ‖θ*‖ (Prop. 18: λ = (C₁ B_X⁴ B_Y² n / B²)^{1/3}), at least
    (1 + log(2/δ))B_X²/ε so that a γ exists; γ from the pDP bound (Remark 11) with λ_min = 0 and the data-independent
    bound (23) on ‖θ_λ‖. Proven for add/remove neighbours; under replace-one the budget is converted by group
    privacy (:func:`add_remove_budget`). paper: the reference code's constants (bound √n B_Y/√(2λ), a = L²/(λ+B_X²));
    tight: the formula's a = L²/(2(λ+B_X²)) and the valid ‖θ_λ‖ ≤ ‖y‖/(2√λ) ≤ √n B_Y/(2√λ).
    """
    check_calibration(calibration)
    e_a, d_a = _budget_for(epsilon, delta, neighbours)
    _check_positive(B_X=B_X, B_Y=B_Y, B=B)
    log_term = math.log(2 / d_a)
    c1 = _c1(d, rho, log_term, min(e_a, math.sqrt(e_a)))
    lam = max((c1 * B_X**4 * B_Y**2 * n / B**2) ** (1 / 3), (1 + log_term) * B_X**2 / e_a)
    root = math.sqrt(2 * lam) if calibration == "paper" else 2 * math.sqrt(lam)
    theta_bound = min(math.sqrt(n) * B_Y / root, n * B_X * B_Y / lam)
    L = B_X * (B_X * theta_bound + B_Y)
    gamma = ops_gamma(L=L, h=lam, B_X=B_X, epsilon=e_a, log_term=log_term, exact=calibration == "tight")
    rel = Release(
        "posterior sample N(theta_lambda, (gamma (X'X + lambda I))^-1)",
        L,
        "Lipschitz bound L(lambda)",
        1 / math.sqrt(gamma),
        1,
        e_a,
        d_a,
    )
    comp = "per-instance DP of one posterior sample (Wang 2018, Remark 11) with lambda_min = 0"
    if neighbours == "replace":
        comp += f"; proven for add/remove: run at ({e_a:.4g}, {d_a:.3g}), group privacy gives replace-one (eps, delta)"
    return PrivacyPlan(
        "ops",
        epsilon,
        delta,
        calibration,
        comp,
        f"rows clipped to ||x||_2 <= B_X = {B_X}, y clipped to [-{B_Y}, {B_Y}]",
        (rel,),
        NEIGHBOUR_RELATIONS[neighbours],
        {"lambda": lam, "gamma": gamma, "L": L},
    )


def adaops_plan(
    *,
    d: int,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    rho: float = 0.05,
    calibration: str = "paper",
    on_invalid: str = "refuse",
    neighbours: str = "replace",
) -> PrivacyPlan:
    """AdaOPS (Wang 2018, Alg. 1): the data-independent part of its calibration.

    Three releases at (ε/4, ε/4, ε/2) of the add/remove budget: λ_min(X'X) (Gaussian, sensitivity B_X²), the log of
    B_Y + B_X‖θ_λ‖ (Gaussian, sensitivity log(1 + B_X²/(λ + λ̃_min)) on the event λ̃_min ≤ λ_min — set from the
    released λ̃_min, propose-test-release style) and one posterior sample (pDP bound of Remark 11). The two noisy
    bounds are shifted by ``bias × σ`` so that they hold except with the probability charged to δ.

    paper: as printed — δ/3 per release, Wang's σ = Δ√(log(6/δ))/ε′ and shifts of √log(6/δ) σ. Those shifts fail
    with probability Φ̄(√log(6/δ)) (3.9·10⁻⁵ at δ = 10⁻⁶), 117× the δ/3 the proof charges, so the printed calibration
    is not (ε, δ)-DP: refused or warned about. tight: δ split in five (two releases, two failure events, the
    sample), the analytic Gaussian for both releases and shifts Φ⁻¹(1 − δ/5) σ. Under replace-one the budget is
    converted by group privacy (:func:`add_remove_budget`).
    """
    check_calibration(calibration)
    e_a, d_a = _budget_for(epsilon, delta, neighbours)
    _check_positive(B_X=B_X, B_Y=B_Y)
    if calibration == "paper":
        ell = math.log(6 / d_a)
        mult = math.sqrt(ell) / (e_a / 4)  # Wang's σ/Δ at (ε/4, δ/3)
        bias = math.sqrt(ell)
        fail = float(special.ndtr(-bias))
        problems = []
        if fail > d_a / 3:
            problems.append(
                f"its lower bound on lambda_min fails with probability {fail:.3g} > delta/3 = {d_a / 3:.3g}"
            )
        actual = gaussian_delta(mult, 1.0, e_a / 4)
        if actual > d_a / 3:
            problems.append(f"sigma = sqrt(log(6/delta))/(eps/4) has exact delta {actual:.3g} > delta/3")
        if problems:
            _outside_validity(
                "AdaOPS as printed (Wang 2018, Alg. 1) is not (eps, delta)-DP: " + "; ".join(problems), on_invalid
            )
        post_log, d_each = ell, d_a / 3
        comp = "basic composition of 3 releases at (eps/4, delta/3), (eps/4, delta/3), (eps/2, delta/3) as printed"
    else:
        d_each = d_a / 5
        mult = gaussian_sigma(1.0, e_a / 4, d_each, "analytic")
        bias = -float(special.ndtri(d_each))  # Φ⁻¹(1 − δ/5), without rounding 1 − δ/5 to 1
        post_log = math.log(2 / d_each)
        comp = (
            "basic composition of (eps/4, delta/5) x 2 analytic Gaussian releases, 2 failure events of "
            "probability delta/5 and a posterior sample at (eps/2, delta/5)"
        )
    if neighbours == "replace":
        comp += f"; proven for add/remove: run at ({e_a:.4g}, {d_a:.3g}), group privacy gives replace-one (eps, delta)"
    ell6 = math.log(6 / d_a)
    eps_bar = ell6 * (math.sqrt(1 + e_a / (2 * ell6)) - 1)
    params = {
        "sigma_lambda_min": mult * B_X**2,
        "bias": bias,
        "norm_multiplier": mult,
        "posterior_epsilon": e_a / 2,
        "posterior_log_term": post_log,
        # the choice of λ (eq. 7): utility only, from the paper's constants
        "C1": _c1(d, rho, ell6, eps_bar),
        "C2": ell6 / (e_a / 4),
        "t_floor": 2 * (1 + post_log) * B_X**2 / e_a,
    }
    rels = (
        Release("gaussian: lambda_min(X'X)", B_X**2, "absolute", mult * B_X**2, 1, e_a / 4, d_each),
        Release(
            "gaussian: log(B_Y + B_X ||theta_lambda||), sensitivity from the released lambda_min",
            1.0,
            "absolute, per unit of log(1 + B_X^2/(lambda + lambda_min~))",
            mult,
            1,
            e_a / 4,
            d_each,
        ),
        # γ depends on the released bounds: no fixed sensitivity or noise scale to record
        Release(
            "posterior sample, gamma from Remark 11 at the released bounds",
            None,
            "per-instance DP bound (Wang 2018, Remark 11)",
            None,
            1,
            e_a / 2,
            d_each,
        ),
    )
    return PrivacyPlan(
        "adaops",
        epsilon,
        delta,
        calibration,
        comp,
        f"rows clipped to ||x||_2 <= B_X = {B_X}, y clipped to [-{B_Y}, {B_Y}]",
        rels,
        NEIGHBOUR_RELATIONS[neighbours],
        params,
    )


def objpert_plan(
    *,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    C: float,
    calibration: str = "paper",
    on_invalid: str = "refuse",
    neighbours: str = "replace",
) -> PrivacyPlan:
    """Objective perturbation, Kifer, Smith & Thakurta (2012) Alg. 1 (Gaussian version), for ½(y − x'θ)² on ‖θ‖ ≤ C.

    Per-record gradient bound ζ = B_X(B_X C + B_Y) on the ball, Hessian bound λ_H = B_X² (rank one), ridge
    Δ = 2λ_H/ε, b ~ N(0, ζ²(8 log(2/δ) + 4ε)/ε² I). KST's neighbours differ in one entry (replace-one). Under
    add/remove the reference code of Wang (2018) halves the noise std (one gradient changes instead of two); we do
    the same only when asked for add/remove. No tighter analysis is implemented: both calibrations use KST's.
    """
    check_calibration(calibration)
    check_epsilon_delta(epsilon, delta)
    _check_positive(B_X=B_X, B_Y=B_Y, C=C)
    zeta = B_X * (B_X * C + B_Y)
    std = zeta * math.sqrt(8 * math.log(2 / delta) + 4 * epsilon) / epsilon
    k = 2 if check_neighbours(neighbours) == "replace" else 1
    if k == 1:
        std /= 2
    Delta = 2 * B_X**2 / epsilon
    rel = Release("gaussian: linear term b of the objective", k * zeta, "l2 (gradient)", std, 1, epsilon, delta)
    return PrivacyPlan(
        "objpert",
        epsilon,
        delta,
        calibration,
        "Kifer, Smith & Thakurta (2012) Theorem 2, Gaussian objective perturbation (both calibrations)",
        f"rows clipped to ||x||_2 <= B_X = {B_X}, y clipped to [-{B_Y}, {B_Y}], estimate in ||theta||_2 <= {C}",
        (rel,),
        NEIGHBOUR_RELATIONS[neighbours],
        {"Delta": Delta, "zeta": zeta},
    )


# ---------------------------------------------------------------------------------------------------------------
# The papers' comparators: Bassily, Smith & Thakurta (2014) noisy SGD (000), Sheffet (2017) JL OLS (004)
# ---------------------------------------------------------------------------------------------------------------


def _sampled_gaussian_epsilon(n: int, b: int, T: int, z: float, delta: float) -> float:
    """ε of T steps that each use b records drawn without replacement from n, Gaussian noise multiplier z (noise std
    over the replace-one sensitivity of the batch sum), by dp-accounting's RDP accountant (replace-one)."""
    dpa, _, rdp = _dpa()
    acc = rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(dpa.SelfComposedDpEvent(dpa.SampledWithoutReplacementDpEvent(n, b, dpa.GaussianDpEvent(z)), T))
    return acc.get_epsilon(delta)


@functools.lru_cache(maxsize=256)
def sampled_gaussian_multiplier(n: int, b: int, T: int, epsilon: float, delta: float) -> float:
    """Smallest noise multiplier z (to 0.3 %) such that :func:`_sampled_gaussian_epsilon` ≤ ε.

    log ε is nearly linear in log z, so Brent's method on that scale needs about 6 accountant calls (each ≈ 0.25 s
    at n = 20,000) where bisection needed 13; the answer is then checked, and stepped up until it is valid.
    """
    check_epsilon_delta(epsilon, delta)
    f = lambda log_z: math.log(_sampled_gaussian_epsilon(n, b, T, math.exp(log_z), delta) / epsilon)  # noqa: E731
    lo, hi = math.log(0.25), math.log(4.0)
    while f(hi) > 0:
        lo, hi = hi, hi + math.log(4.0)
        if hi > math.log(1e6):
            raise PrivacyError(f"no noise multiplier reaches epsilon={epsilon} for n={n}, batch={b}, T={T}")
    if f(lo) <= 0:  # very little noise suffices; the smallest multiplier searched is 0.25
        return math.exp(lo)
    z = math.exp(optimize.brentq(f, lo, hi, xtol=1e-3) + 2e-3)
    while _sampled_gaussian_epsilon(n, b, T, z, delta) > epsilon:
        z *= 1.002
    return z


def noisy_sgd_plan(
    *,
    n: int,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    C: float,
    passes: float,
    batch: int,
    calibration: str = "paper",
    on_invalid: str = "refuse",
) -> PrivacyPlan:
    """Bassily, Smith & Thakurta (2014) Alg. 1 (noisy SGD): T = ⌈passes·n/b⌉ steps, each on b = min(batch, n)
    records drawn without replacement (BST: one), per-record gradient norm ≤ L = B_X(B_X C + B_Y) on the C ball, so
    the batch sum has replace-one sensitivity 2L. The noise std recorded is that of the batch-*mean* gradient; T, b
    and L are returned in ``parameters`` for the estimator.

    paper: BST's σ² = 32 L² T log(T/δ) log(1/δ) q² / ε² on the sum, q = batch/n (their Lemma for one record per
    step, T = n²; per-record units), checked here with the RDP accountant and refused (or warned about) if it does
    not certify (ε, δ); tight: the smallest σ the RDP accountant (sampling without replacement, replace-one)
    certifies.
    """
    check_calibration(calibration)
    check_epsilon_delta(epsilon, delta)
    _check_positive(B_X=B_X, B_Y=B_Y, C=C, passes=passes)
    if not (isinstance(batch, numbers.Integral) and batch >= 1):
        raise PrivacyError(f"batch must be an integer >= 1, got {batch!r}")
    batch = min(int(batch), n)  # a subsample smaller than the batch is used whole at every step
    T = max(1, math.ceil(passes * n / batch))
    L = B_X * (B_X * C + B_Y)
    if calibration == "paper":
        sd_sum = L * math.sqrt(32 * T * math.log(T / delta) * math.log(1 / delta)) * (batch / n) / epsilon
        actual = _sampled_gaussian_epsilon(n, batch, T, sd_sum / (2 * L), delta)
        if actual > epsilon:
            _outside_validity(f"BST14's sigma gives epsilon = {actual:.3g} > {epsilon} by RDP accounting", on_invalid)
        comp = "Bassily, Smith & Thakurta (2014): amplification by sampling and advanced composition"
    else:
        sd_sum = 2 * L * sampled_gaussian_multiplier(n, batch, T, epsilon, delta)
        comp = f"RDP accounting of {T} sampled Gaussian steps ({batch} of {n} records each; dp-accounting)"
    rel = Release(f"gaussian: mean gradient of {batch} sampled records", 2 * L / batch, "l2", sd_sum / batch, T)
    return PrivacyPlan(
        "noisy_sgd",
        epsilon,
        delta,
        calibration,
        comp,
        f"rows clipped to ||x||_2 <= {B_X}, y to [-{B_Y}, {B_Y}], iterates in ||theta||_2 <= {C}: per-record "
        f"gradient norm <= L = {L:.4g}",
        (rel,),
        parameters={"T": T, "batch": batch, "L": L},
    )


def sheffet_jl_plan(
    *,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    r: int,
    calibration: str = "paper",
    on_invalid: str = "refuse",
) -> PrivacyPlan:
    """Sheffet (2017) Alg. 1: a private Johnson–Lindenstrauss projection RA of A = [X, y], rows ‖a‖ ≤ B.

    w² = (8B²/ε)(√(2r ln(8/δ)) + 2 ln(8/δ)); the test σ_min(A)² > w² + Z + 4B² ln(1/δ)/ε with Z ~ Lap(4B²/ε)
    (σ_min² has replace-one sensitivity B²); if it fails, A is augmented with wI (ridge fallback). Constants from
    Sheffet's Algorithm 1 (ICML 2017 / arXiv 1507.02482) as we read it; that paper is not in ../shared/papers and
    could not be re-checked here — the audit in the tests passes, which is necessary, not sufficient. Both
    calibrations use them (no tighter analysis is implemented).
    """
    check_calibration(calibration)
    check_epsilon_delta(epsilon, delta)
    if not (isinstance(r, (int,)) and r >= 1):
        raise PrivacyError(f"r must be an integer >= 1, got {r!r}")
    B2 = B_X**2 + B_Y**2
    check_sensitivity(B2)
    lt = math.log(8 / delta)
    w2 = 8 * B2 / epsilon * (math.sqrt(2 * r * lt) + 2 * lt)
    rels = (
        Release("laplace: sigma_min(A)^2 test", B2, "absolute", 4 * B2 / epsilon, 1, epsilon / 4),
        Release(
            f"Gaussian JL projection R A, R of {r} x n i.i.d. N(0, 1), sigma_min(A') >= w",
            B2,
            "row norm^2",
            math.sqrt(w2),
            1,
        ),
    )
    return PrivacyPlan(
        "sheffet_jl",
        epsilon,
        delta,
        calibration,
        "Sheffet (2017) Theorem 3.1 (JL analysis of Blocki et al. 2012 behind a Laplace test)",
        f"rows of [X, y] clipped: ||x||_2 <= {B_X}, |y| <= {B_Y}",
        rels,
        parameters={"w2": w2, "test_offset": 4 * B2 * math.log(1 / delta) / epsilon, "laplace_scale": 4 * B2 / epsilon},
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
