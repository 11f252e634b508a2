"""The One Posterior Sample family — OPS-Balanced (Wang 2018, *Revisiting differentially private linear regression*,
§3.2 and App. F) and AdaOPS (Alg. 1): the algorithms, their privacy calibrations and plans.

Both are proven for add/remove neighbours only; under replace-one (the default) the whole algorithm runs at the
group-privacy budget (:func:`dpcost.dp.plan.add_remove_budget`).
"""

from __future__ import annotations

import math

import numpy as np

from ..dp.mechanisms import check_probability, gaussian_delta, gaussian_sigma
from ..dp.plan import PrivacyPlan, Release, add_remove_budget, check_bounds, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import T, add_noise, describe_float, grid_scale
from ..errors import PrivacyError
from .base import clip_design, proven_under

# θ_λ + L'⁻¹z/√γ: a covariance that depends on the data, so no grid sampler applies
POSTERIOR_NOISE = describe_float("posterior sample by numpy standard_normal (covariance (gamma (X'X + lambda I))^-1)")
# why OPS and AdaOPS enter a table's composition at their stated (ε, δ)
POSTERIOR_WHY = "a posterior sample is not an additive-noise release"
# AdaOPS's noisy bounds are shifted by this many more grid steps than bias·σ: they cover rounding to the grid (½ step)
# and the discrete Gaussian's tail, P(Z ≥ k) ≤ Φ̄((k − 1)/t)·t√(2π)/(t√(2π) − 1), so that each bound fails with
# probability ≤ Φ̄(bias) whenever bias ≥ 0.27 (adaops_plan's docstring)
TAIL_STEPS = 3


def budget_for(p: Privacy) -> tuple[float, float]:
    """The add/remove budget (ε, δ) a mechanism proven for add/remove neighbours must run at (δ a number)."""
    return (p.epsilon, p.delta) if p.neighbours == "add_remove" else add_remove_budget(p.epsilon, p.delta)


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
    rho = check_probability("rho", rho)
    return (d / 2 + math.sqrt(d * math.log(1 / rho)) + math.log(1 / rho)) * log_term / eps**2


def ops_plan(privacy: Privacy, n: int, d: int, *, B_X: float, B_Y: float, B: float, rho: float) -> PrivacyPlan:
    """OPS-Balanced (Wang 2018, App. F; the "OPS" of its Tables 3–4): one sample of N(θ_λ, (γ(X'X + λI))⁻¹).

    λ minimises the utility bound (24) for a guess B of ‖θ*‖ (Prop. 18: λ = (C₁ B_X⁴ B_Y² n / B²)^{1/3}), at least
    (1 + log(2/δ))B_X²/ε so that a γ exists; γ from the pDP bound (Remark 11) with λ_min = 0 and the data-independent
    bound (23) on ‖θ_λ‖. Proven for add/remove neighbours with n public — but λ and the bound use n, which add/remove
    makes private, so ``neighbours="add_remove"`` is refused (``on_invalid="warn"``: run for reproduction, plan marked
    unproven); under replace-one the budget is converted by group privacy (:func:`dpcost.dp.plan.add_remove_budget`),
    which is proven. paper: the reference code's constants (bound √n B_Y/√(2λ),
    a = L²/(λ+B_X²)); tight: the formula's a = L²/(2(λ+B_X²)) and the valid ‖θ_λ‖ ≤ ‖y‖/(2√λ) ≤ √n B_Y/(2√λ).
    """
    p = privacy.at(n)
    proven = proven_under(p, "ops", "its lambda and its bound on ||theta_lambda|| use the sample size n")
    calibration = p.calibration
    e_a, d_a = budget_for(p)
    check_bounds(B_X=B_X, B_Y=B_Y, B=B)
    log_term = math.log(2 / d_a)
    c1 = _c1(d, rho, log_term, min(e_a, math.sqrt(e_a)))
    try:
        lam = max((c1 * B_X**4 * B_Y**2 * n / B**2) ** (1 / 3), (1 + log_term) * B_X**2 / e_a)
    except OverflowError:  # public constants only: refused alike on every data set
        msg = f"ops: its ridge lambda overflows at B_X = {B_X!r}, B_Y = {B_Y!r}: use smaller bounds"
        raise PrivacyError(msg) from None
    root = math.sqrt(2 * lam) if calibration == "paper" else 2 * math.sqrt(lam)
    theta_bound = min(math.sqrt(n) * B_Y / root, n * B_X * B_Y / lam)
    L = B_X * (B_X * theta_bound + B_Y)
    gamma = ops_gamma(L=L, h=lam, B_X=B_X, epsilon=e_a, log_term=log_term, exact=calibration == "tight")
    rel = Release(
        "posterior sample N(theta_lambda, (gamma (X'X + lambda I))^-1)",
        L,
        "none",
        1 / math.sqrt(gamma),
        1,
        e_a,
        d_a,
        POSTERIOR_NOISE,
        kind="posterior",
        noise="float",
        norm_words="Lipschitz bound L(lambda)",
    )
    comp = "per-instance DP of one posterior sample (Wang 2018, Remark 11) with lambda_min = 0"
    if p.neighbours == "replace":
        comp += f"; proven for add/remove: run at ({e_a:.4g}, {d_a:.3g}), group privacy gives replace-one (eps, delta)"
    return PrivacyPlan(
        "ops",
        p.epsilon,
        p.delta,
        calibration,
        comp,
        f"rows clipped to ||x||_2 <= B_X = {B_X}, y clipped to [-{B_Y}, {B_Y}]",
        (rel,),
        p.relation,
        {"lambda": lam, "gamma": gamma, "L": L},
        proven=proven,
        releases_stated_for="add_remove" if p.neighbours == "replace" else None,
        whole_mechanism=False,
        whole_mechanism_why=POSTERIOR_WHY,
    )


def adaops_plan(privacy: Privacy, n: int, d: int, *, B_X: float, B_Y: float, rho: float) -> PrivacyPlan:
    """AdaOPS (Wang 2018, Alg. 1): the data-independent part of its calibration.

    Three releases at (ε/4, ε/4, ε/2) of the add/remove budget: λ_min(X'X) (Gaussian, sensitivity B_X²), the log of
    B_Y + B_X‖θ_λ‖ (Gaussian, sensitivity log(1 + B_X²/(λ + λ̃_min)) on the event λ̃_min ≤ λ_min — set from the
    released λ̃_min, propose-test-release style) and one posterior sample (pDP bound of Remark 11). The two noisy
    bounds are shifted by ``bias × σ`` so that they hold except with the probability charged to δ. The norm's
    sensitivity (and the posterior's pDP) need λ̃_min below the λ_min of the neighbour without one row too, up to
    B_X² lower: Wang's proof conditions on the data set at hand only, so its λ_min bound fails with probability
    Φ̄(bias − B_X²/σ₁) > Φ̄(bias); tight shifts λ̃_min down by B_X² more (``margin``), paper keeps the print
    (docs/proofs.md, "AdaOPS: the norm release and the cap").

    paper: as printed — δ/3 per release, Wang's σ = Δ√(log(6/δ))/ε′ and shifts of √log(6/δ) σ. Those shifts fail
    with probability Φ̄(√log(6/δ)) (3.9·10⁻⁵ at δ = 10⁻⁶), 117× the δ/3 the proof charges, so the printed calibration
    is not (ε, δ)-DP: refused or warned about. tight: δ split in five (two releases, two failure events, the
    sample), the analytic Gaussian for both releases and shifts Φ⁻¹(1 − δ/5) σ. Under replace-one the budget is
    converted by group privacy (:func:`dpcost.dp.plan.add_remove_budget`).

    Noise: both bounds are released on the exact discrete Gaussian's grid (:mod:`dpcost.dp.samplers`), σ paid for
    rounding, and shifted by ``shift`` = bias + TAIL_STEPS/2^20 noise units. A bound fails when the integer noise Z
    (scale t = 2^20 steps) exceeds bias·t + TAIL_STEPS − ½; since Σ_{z≥k} e^{−z²/2t²} ≤ ∫_{k−1}^∞ and the normaliser
    is ≥ t√(2π) − 1, that has probability ≤ Φ̄(bias + 1.5/t)·(1 + 1/(t√(2π) − 1)) ≤ Φ̄(bias), as Φ̄(b + h) ≤
    Φ̄(b)e^{−bh} and bias ≥ Φ⁻¹(0.8) > 0.27. The posterior sample stays float: NOT PROVEN (floating point).
    """
    p = privacy.at(n)
    calibration = p.calibration
    e_a, d_a = budget_for(p)
    check_bounds(B_X=B_X, B_Y=B_Y)
    mult, bias, post_log, d_each, comp, problems = _adaops_calibration(p, e_a, d_a)
    if problems:
        p.outside_validity("AdaOPS as printed (Wang 2018, Alg. 1) is not (eps, delta)-DP: " + "; ".join(problems))
    if p.neighbours == "replace":
        comp += f"; proven for add/remove: run at ({e_a:.4g}, {d_a:.3g}), group privacy gives replace-one (eps, delta)"
    ell6 = math.log(6 / d_a)
    eps_bar = ell6 * (math.sqrt(1 + e_a / (2 * ell6)) - 1)
    # the Gaussian calibrations are linear in the sensitivity: the grid's σ per unit of the log bound's sensitivity
    grid_mult = grid_scale(mult, 1.0, 1, "l2", "gaussian", p.sampler)
    params = {
        "sigma_lambda_min": grid_scale(mult * B_X**2, B_X**2, 1, "l2", "gaussian", p.sampler),
        "bias": bias,
        "shift": bias + TAIL_STEPS / T,
        # λ̃_min must lie below the λ_min of both data sets of a pair, the one without a row up to B_X² lower (Weyl):
        # tight shifts it down by B_X² more (docs/proofs.md, "AdaOPS: the norm release and the cap"); paper as printed
        "margin": B_X**2 if calibration == "tight" else 0.0,
        "norm_multiplier": grid_mult,
        "posterior_epsilon": e_a / 2,
        "posterior_log_term": post_log,
        # the choice of λ (eq. 7): utility only, from the paper's constants
        "C1": _c1(d, rho, ell6, eps_bar),
        "C2": ell6 / (e_a / 4),
        "t_floor": 2 * (1 + post_log) * B_X**2 / e_a,
    }
    rels = _adaops_releases(params, B_X, e_a, d_each, p.sampler)
    return PrivacyPlan(
        "adaops",
        p.epsilon,
        p.delta,
        calibration,
        comp,
        f"rows clipped to ||x||_2 <= B_X = {B_X}, y clipped to [-{B_Y}, {B_Y}]",
        rels,
        p.relation,
        params,
        proven=calibration == "tight",
        releases_stated_for="add_remove" if p.neighbours == "replace" else None,
        whole_mechanism=False,
        whole_mechanism_why=POSTERIOR_WHY,
    )


def _adaops_calibration(p: Privacy, e_a: float, d_a: float) -> tuple[float, float, float, float, str, list[str]]:
    """(σ per unit of sensitivity, bias, the posterior's log term, δ of each part, composition, problems) of AdaOPS
    at the add/remove budget (``e_a``, ``d_a``), under ``p.calibration``: paper as printed, with the reasons it is
    not (ε, δ)-DP (its shifts fail more often than the δ/3 charged), tight with δ split in five and no problem
    (:func:`adaops_plan`, which refuses or warns)."""
    from scipy import special  # here: slow to import

    calibration, problems = p.calibration, []
    if calibration == "paper":
        ell = math.log(6 / d_a)
        mult = math.sqrt(ell) / (e_a / 4)  # Wang's σ/Δ at (ε/4, δ/3)
        bias = math.sqrt(ell)
        fail = float(special.ndtr(-bias))
        if fail > d_a / 3:
            problems.append(
                f"its lower bound on lambda_min fails with probability {fail:.3g} > delta/3 = {d_a / 3:.3g}"
            )
        actual = gaussian_delta(mult, 1.0, e_a / 4)
        if actual > d_a / 3:
            problems.append(f"sigma = sqrt(log(6/delta))/(eps/4) has exact delta {actual:.3g} > delta/3")
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
    return mult, bias, post_log, d_each, comp, problems


def _adaops_releases(params: dict, B_X: float, e_a: float, d_each: float, sampler: str) -> tuple:
    """AdaOPS's three releases (:func:`adaops_plan`): λ_min(X'X) and the log norm bound on the grid at (ε/4, δ
    each), then the posterior sample at (ε/2, δ each), float."""
    return (
        grid_release(
            "gaussian",
            "gaussian: lambda_min(X'X)",
            B_X**2,
            "l2",
            params["sigma_lambda_min"],
            1,
            e_a / 4,
            d_each,
            coordinates=1,
            sampler=sampler,
            norm_words="absolute",
        ),
        grid_release(
            "gaussian",
            "gaussian: log(B_Y + B_X ||theta_lambda||), sensitivity from the released lambda_min",
            1.0,
            "l2",
            params["norm_multiplier"],
            1,
            e_a / 4,
            d_each,
            coordinates=1,
            sampler=sampler,
            norm_words="absolute, per unit of log(1 + B_X^2/(lambda + lambda_min~))",
            per_unit=True,
        ),
        # γ depends on the released bounds: no fixed sensitivity or noise scale to record
        Release(
            "posterior sample, gamma from Remark 11 at the released bounds",
            None,
            "none",
            None,
            1,
            e_a / 2,
            d_each,
            POSTERIOR_NOISE,
            kind="posterior",
            noise="float",
            norm_words="per-instance DP bound (Wang 2018, Remark 11)",
        ),
    )


def posterior_sample(G: np.ndarray, b: np.ndarray, lam: float, gamma: float, rng: np.random.Generator) -> np.ndarray:
    """One draw of N(θ_λ, (γH)⁻¹), H = X'X + λI, θ_λ = H⁻¹X'y.

    With H = LL' (lower Cholesky), θ_λ + L'⁻¹z/√γ has covariance L'⁻¹L⁻¹/γ = H⁻¹/γ. Fix: the reference code takes
    R'⁻¹z with the *upper* factor R (H = R'R), whose covariance (RR')⁻¹ is not H⁻¹ (docs/proofs.md, "Posterior
    sample: the Cholesky factor").
    """
    from scipy import linalg  # here: slow to import

    H = G + lam * np.eye(len(b))
    L = np.linalg.cholesky(H)
    theta = linalg.cho_solve((L, True), b)
    z = rng.standard_normal(len(b))
    return theta + linalg.solve_triangular(L.T, z, lower=False) / math.sqrt(gamma)


def ops(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    B_X: float,
    B_Y: float,
    B: float = 1.0,
    rho: float = 0.05,
) -> np.ndarray:
    """OPS-Balanced — One Posterior Sample with a data-independent calibration, Wang (2018) §3.2 and Appendix F
    (the "OPS" column of its Tables 3–4).

    θ̃ ~ p(θ | X, y) ∝ exp(−γ/2 (‖y − Xθ‖² + λ‖θ‖²)) = N(θ_λ, (γ(X'X + λI))⁻¹), with λ and γ from public
    quantities only (:func:`ops_plan`). Privacy: (ε, δ)-DP by the per-instance bound of
    Remark 11 with λ_min = 0, proven for add/remove neighbours; under replace-one (default) the budget is halved by
    group privacy. Rows are clipped to ‖x‖₂ ≤ B_X and y to [−B_Y, B_Y] here. B is the "optimistic" guess of ‖θ*‖
    that sets λ (utility only; 1 in the paper).
    """
    Xc, yc = clip_design(X, y, B_X, B_Y)
    n, d = Xc.shape
    plan = ops_plan(privacy, n, d, B_X=B_X, B_Y=B_Y, B=B, rho=rho)
    p = plan.parameters
    return posterior_sample(Xc.T @ Xc, Xc.T @ yc, p["lambda"], p["gamma"], rng)


_LOG_MAX = math.log(np.finfo(float).max) - 1.0  # the search's upper end in log t: e^(this) and t + h stay finite


def _adaops_lambda(*, lam_min_t: float, t_min: float, B_X: float, C1: float, C2: float) -> float:
    """argmin_{t ≥ t_min} B_X⁴C₁[1 + B_X²/h]^{2C₂}/h + t with h = t + λ̃_min (Wang 2018, eq. 7).

    The first term is convex and decreasing in t, the second increasing: one minimum. Searched on log t in log
    space, because [1 + B_X²/h]^{2C₂} overflows for small h (C₂ = 4 log(6/δ)/ε is in the hundreds).
    """
    from scipy import optimize  # here: slow to import

    try:
        log_scale = math.log(B_X**4 * C1)
    except (OverflowError, ValueError):  # B_X⁴C₁ past the float range (inf, or 0): its logarithm in parts
        log_scale = 4 * math.log(B_X) + math.log(C1)

    def log_f(log_t: float) -> float:
        t = math.exp(log_t)
        h = t + lam_min_t
        first = log_scale + 2 * C2 * math.log1p(B_X**2 / h) - math.log(h)
        return float(np.logaddexp(first, log_t))

    lo = math.log(max(t_min, 1e-12))
    hi = min(lo + 80.0, _LOG_MAX)  # e^80 above t_min, or the largest t whose exp is finite
    if not hi > lo:  # t_min itself at the float maximum's edge: nothing above it to search
        return t_min
    res = optimize.minimize_scalar(log_f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-9})
    return max(math.exp(res.x), t_min)


def adaops(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    B_X: float,
    B_Y: float,
    rho: float = 0.05,
) -> np.ndarray:
    """AdaOPS — One Posterior Sample with adaptive regularisation, Wang (2018) Algorithm 1.

    1. λ̃_min = max(λ_min(X'X) + σ₁Z₁ − bias·σ₁ − margin, 0)   (a private lower bound of both neighbours' λ_min,
       failure charged to δ; margin = B_X² under tight, 0 as printed)
    2. ε̄, C₁, C₂ as in the paper; λ = argmin_{t ≥ t_min} of eq. (7)     (post-processing)
       Fix: t_min = 2(1 + log(2/δ′))B_X²/ε − λ̃_min (the reference code's), not the printed B_X²(1 + log)/(2ε) − λ̃_min,
       which leaves no valid γ (docs/proofs.md, "AdaOPS: t_min").
    3. θ_λ = (X'X + λI)⁻¹X'y
    4. Δ = log(B_Y + B_X‖θ_λ‖) + s σ₂Z₂ + s·bias·σ₂,  s = log(1 + B_X²/(λ + λ̃_min)) (Lemma 12);  L̃ = B_X e^Δ
       Fix: no cap on L̃ — the reference code's min(e^Δ, B_Y + B_X√(2√(nB_Y)/(λ + λ_min))) is not a bound on
       ‖θ_λ‖ for large n and can break privacy.
    5. γ: the largest value whose pDP bound (Remark 11) at h = λ + λ̃_min and L̃ is ≤ ε/2 (the exact quadratic).
    output θ̃ ~ N(θ_λ, (γ(X'X + λI))⁻¹)  (correct Cholesky factor, see :func:`posterior_sample`).

    Privacy: (ε, δ)-DP for add/remove neighbours by Wang's Theorem 2 with the corrections above; under replace-one
    (default) the whole algorithm runs at the group-privacy budget (:func:`dpcost.dp.plan.add_remove_budget`).
    Budget split and noise: :func:`adaops_plan`. Rows clipped to ‖x‖₂ ≤ B_X, y to [−B_Y, B_Y].
    """
    Xc, yc = clip_design(X, y, B_X, B_Y)
    n, d = Xc.shape
    plan = adaops_plan(privacy, n, d, B_X=B_X, B_Y=B_Y, rho=rho)
    p = plan.parameters
    G, b = Xc.T @ Xc, Xc.T @ yc
    lam_min = max(np.linalg.eigvalsh(G)[0], 0.0)
    s1 = p["sigma_lambda_min"]
    noisy_min = float(add_noise(lam_min, "gaussian", s1, rng, privacy.sampler))
    lam_min_t = max(noisy_min - p["shift"] * s1 - p["margin"], 0.0)
    t_min = max(p["t_floor"] - lam_min_t, 0.0)
    lam = _adaops_lambda(lam_min_t=lam_min_t, t_min=t_min, B_X=B_X, C1=p["C1"], C2=p["C2"])
    h = lam + lam_min_t
    theta = np.linalg.solve(G + lam * np.eye(d), b)
    sens = math.log1p(B_X**2 / h)
    s2 = sens * p["norm_multiplier"]
    log_bound = float(add_noise(math.log(B_Y + B_X * np.linalg.norm(theta)), "gaussian", s2, rng, privacy.sampler))
    log_bound += p["shift"] * s2
    L_t = B_X * math.exp(log_bound)
    gamma = ops_gamma(L=L_t, h=h, B_X=B_X, epsilon=p["posterior_epsilon"], log_term=p["posterior_log_term"], exact=True)
    return posterior_sample(G, b, lam, gamma, rng)
