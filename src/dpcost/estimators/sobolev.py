"""Private nonparametric regression over a periodic Sobolev class — Cai, Wang & Zhang, *Score Attack*, §6.2 and
App. D.4: the truncated Fourier projection estimator (6.8) released with the K-norm mechanism (Thm 6.2) or with the
Gaussian or Laplace mechanism on its ℓ2 / ℓ1 sensitivity, the non-private baseline, and what measures them (basis,
evaluation, MISE, Sobolev test functions, a design sampler).

Model (§6): Y = f(X) + ξ, X ~ U[0, 1], ξ ~ N(0, σ²), f ∈ W̃(α, C) ⇔ its Fourier coefficients lie in the ellipsoid
(6.1) Σ τ_j²θ_j² < C²/π^{2α}. Neighbours: replace one record (X_i, Y_i); n is public (add/remove is refused).

Where this departs from the print (derivations: docs/proofs.md, "Fourier projection: departures from the print"):
* the K-norm density is printed ∝ exp(−2nε‖t‖_S/T). With ‖Δ‖_S ≤ 2T/n the K-norm mechanism needs
  exp(−(nε/2T)‖t‖_S): the printed scale is a quarter of that, and the release is only 4ε-DP. The corrected scale
  is used (:func:`knorm_scale`); :func:`printed_knorm_scale` is kept for the audit that catches the misprint;
* Thm 6.2 prints K = c₁ min(n^{−1/(2α+1)}, (nε)^{−1/(α+1)}), which shrinks as n grows; the proof's bound
  K/n + K² log n/(nε)² + K^{−2α} is balanced by the positive exponents, which are used here;
* Y·1(|Y| ≤ T) drops every response beyond T (an indicator, not a clip), as the bias analysis assumes.

Public tuning. T = 4σ√log n (Thm 6.2) needs a public bound σ on the noise sd (``sigma``); the default K needs the
smoothness α of the class (``alpha``), a modelling choice fixed before the data are seen, like σ. They set the query
and the noise scale from public numbers only, so the guarantee holds whatever they are: a wrong α or σ costs
accuracy, never privacy.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np

from ..dp.mechanisms import check_positive, gaussian_delta, gaussian_sigma
from ..dp.plan import PrivacyPlan, Release, grid_release, grid_rounding, noise_of
from ..dp.privacy import Privacy
from ..dp.samplers import GRID_BITS, MARGIN, GridNoise, add_noise, bernoulli_exp, discrete_laplace, grid_scale
from ..dp.samplers import T as GRID_T
from ..errors import DataError, PrivacyError
from .base import check_count, require_replace

SQRT2 = math.sqrt(2.0)
MECHANISMS = {"gaussian": "Gaussian", "laplace": "Laplace", "knorm": "K-norm"}  # the noise of the release, in words
KNORM_MAX_K = 3  # S = conv{±φ(x)} is an interval, a rectangle or a cylinder up to K = 3; beyond, no exact sampler here
# K = 3: the disc of the cylinder is replaced by the polygon {ρ ≤ 1}, ρ(a, b) = max (p|a| + q|b|)/c over these
# rational unit normals (Pythagorean triples) and their reflections: 28 tangents to the unit circle, ≤ 16.3° apart,
# so ρ ≤ ‖·‖₂ ≤ 1.0102 ρ and ρ is rational on integer points (the sampler's exponents stay exact)
_POLYGON = ((1, 0, 1), (24, 7, 25), (12, 5, 13), (4, 3, 5), (3, 4, 5), (5, 12, 13), (7, 24, 25), (0, 1, 1))
_L = 325  # lcm of the c's: 325·ρ is an integer on integer points
_D = 6 * _L  # common denominator of the gauge and of the proposal exponents (proposal scales 1, 2, 3)
_PROPOSAL = {1: (1,), 2: (2, 2), 3: (2, 3, 3)}  # discrete Laplace scales s_j (in units of t): Σ|z_j|/s_j ≤ N(z)
_ACCEPT = {1: 1.0, 2: 0.5, 3: 0.26}  # acceptance rates K!·vol{N ≤ 1}/Π 2s_j (for batch sizes only)


# ---- basis, estimator, measures -----------------------------------------------------------------------------------


def _check_K(K) -> int:
    if not (isinstance(K, numbers.Integral) and not isinstance(K, bool) and K >= 1):
        raise DataError(f"K, the number of Fourier terms, must be an integer >= 1, got {K!r}")
    return int(K)


def _check_T(T) -> float:
    if not (isinstance(T, numbers.Real) and not isinstance(T, bool) and math.isfinite(T) and T > 0):
        raise DataError(f"the truncation level T must be a finite number > 0, got {T!r}")
    return float(T)


def fourier_basis(x, K: int) -> np.ndarray:
    """φ(x) = (φ₁(x), …, φ_K(x)) (§6.1): φ₁ = 1, φ_{2k} = √2 cos(2πkx), φ_{2k+1} = √2 sin(2πkx); shape
    x.shape + (K,)."""
    K = _check_K(K)
    x = np.asarray(x, dtype=float)
    angle = 2 * np.pi * x[..., None] * np.arange(1, K // 2 + 1)
    out = np.empty(x.shape + (K,))
    out[..., 0] = 1.0
    out[..., 1::2] = SQRT2 * np.cos(angle)  # φ₂, φ₄, …: K // 2 of them
    out[..., 2::2] = SQRT2 * np.sin(angle[..., : (K - 1) // 2])  # φ₃, φ₅, …
    return out


def sup_phi_l2(K: int) -> float:
    """sup_x ‖φ(x)‖₂: √K for odd K (cos² + sin² = 1 in every pair), √(K + 1) for even K (the last cosine alone:
    ‖φ(x)‖₂² = K − 1 + 2cos²(πKx), largest at x = 0)."""
    K = _check_K(K)
    return math.sqrt(K if K % 2 else K + 1)


def sup_phi_l1_bound(K: int) -> float:
    """A proven bound on sup_x ‖φ(x)‖₁: 1 + Σ_pairs √2(|cos| + |sin|) ≤ 1 + 2·⌊(K − 1)/2⌋, plus √2 for the lone cosine
    of an even K: K (odd K), K − 1 + √2 (even K). Attained for K ≤ 3 (x = 0, 1/8); loose beyond."""
    K = _check_K(K)
    return float(K) if K % 2 else K - 1 + SQRT2


def check_fourier_data(X, Y) -> tuple[np.ndarray, np.ndarray]:
    """X of shape (n,) or (n, 1) with values in [0, 1], Y of shape (n,), both finite, n ≥ 2."""
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    if X.ndim == 2 and X.shape[1] == 1:
        X = X[:, 0]
    if X.ndim != 1 or Y.ndim != 1 or X.shape != Y.shape:
        raise DataError(f"expected X of shape (n,) or (n, 1) and Y of shape (n,), got {X.shape} and {Y.shape}")
    if X.size < 2:
        raise DataError(f"need at least 2 observations, got {X.size}")
    if not (np.isfinite(X).all() and np.isfinite(Y).all()):
        raise DataError("X and Y must be finite (found NaN or inf)")
    if X.min() < 0 or X.max() > 1:
        raise DataError("the design X must lie in [0, 1] (§6: X ~ U[0, 1] on the periodic interval)")
    return X, Y


def projection_coefficients(X, Y, *, K: int, T: float | None = None) -> np.ndarray:
    """θ̂_{K,T} = (1/n) Σ Y_i 1(|Y_i| ≤ T) φ(X_i) (§6.2, App. D.4); T = None: no truncation (the plain θ̂_K)."""
    X, Y = check_fourier_data(X, Y)
    if T is not None:
        Y = np.where(np.abs(Y) <= _check_T(T), Y, 0.0)  # the indicator drops |Y| > T; it does not clip
    return fourier_basis(X, K).T @ Y / Y.size


def fourier_regression(X, Y, *, K: int, T: float | None = None) -> np.ndarray:
    """The non-private projection estimator: the coefficients θ̂_{K,T} of f̂ = Σ_{j ≤ K} θ̂_j φ_j (§6.2)."""
    return projection_coefficients(X, Y, K=K, T=T)


def evaluate(theta, grid) -> np.ndarray:
    """f̂(x) = Σ_j θ_j φ_j(x) at the points ``grid`` (eq. (6.8) for θ = θ̃_{K,T}), for a vector θ. Horner's scheme in
    z = e^{2πix}: f̂ = θ₁ + √2 Re Σ_k (θ_{2k} − iθ_{2k+1}) z^k, O(nK) without the n × K basis."""
    theta = np.asarray(theta, dtype=float)
    cos, sin = theta[1::2], theta[2::2]
    z, acc = np.exp(2j * np.pi * np.asarray(grid, dtype=float)), 0j
    for k in range(cos.size - 1, -1, -1):
        acc = (acc + (cos[k] - 1j * (sin[k] if k < sin.size else 0.0))) * z
    return theta[0] + SQRT2 * np.real(acc)


def mise(theta_hat, f, grid=4096) -> float:
    """∫₀¹ (f̂ − f)² for f̂ = Σ θ̂_j φ_j. ``f`` given by its coefficients: exact, by Parseval, Σ_j (θ̂_j − θ_j)² (the
    shorter vector padded with zeros). ``f`` a vectorised function: the mean over ``grid`` — an integer m means the
    points i/m, i < m, where the rectangle rule is exact for trigonometric polynomials of degree < m — or an array."""
    theta_hat = np.asarray(theta_hat, dtype=float)
    if not callable(f):
        f = np.asarray(f, dtype=float)
        m = max(f.size, theta_hat.size)
        return float(np.sum((np.pad(theta_hat, (0, m - theta_hat.size)) - np.pad(f, (0, m - f.size))) ** 2))
    x = np.arange(grid) / grid if isinstance(grid, numbers.Integral) else np.asarray(grid, dtype=float)
    return float(np.mean((evaluate(theta_hat, x) - f(x)) ** 2))


def sobolev_coefficients(alpha: int, J: int, *, C: float = 1.0, eta: float = 0.1, mean: float = 0.0) -> np.ndarray:
    """θ ∈ Θ(α, C) (6.1): θ₁ = ``mean`` (τ₁ = 0), θ_j = a·j^{−α−1/2−η} for 2 ≤ j ≤ J, a set so that Σ τ_j²θ_j² is 0.9
    of C²/π^{2α}. Its tail Σ_{j>K} θ_j² ≍ K^{−2α−2η} is near the class's worst case, so the projection estimator with
    K ≍ n^{1/(2α+1)} has MISE ≍ n^{−2α/(2α+1)} (the variance K/n; the bias is smaller by n^{−2η/(2α+1)})."""
    alpha, J = check_count("alpha", alpha), check_count("J", J)
    j = np.arange(1, J + 1, dtype=float)
    tau = np.where(j % 2 == 0, j, j - 1) ** alpha
    theta = j ** (-alpha - 0.5 - eta)
    theta[0] = 0.0
    theta *= math.sqrt(0.9 * C**2 / math.pi ** (2 * alpha) / np.sum(tau**2 * theta**2))
    theta[0] = mean
    return theta


def fourier_design(theta, n: int, *, sigma: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(X, Y) of the model of §6: X_i ~ U[0, 1], Y_i = f(X_i) + σξ_i, f = Σ θ_j φ_j, ξ_i ~ N(0, 1)."""
    X = rng.uniform(0.0, 1.0, check_count("n", n))
    return X, evaluate(theta, X) + sigma * rng.normal(size=X.size)


# ---- the K-norm mechanism ----------------------------------------------------------------------------------------


def s_norm(v) -> np.ndarray:
    """‖v‖_S, the gauge of S = conv{±φ(x)} for K ≤ 3 (last axis): S is [−1, 1] (K = 1), [−1, 1] × [−√2, √2]
    (K = 2), and the cylinder {|t₁| ≤ 1, ‖(t₂, t₃)‖₂ ≤ √2} (K = 3: the two circles ±(1, √2u), ‖u‖ = 1, span it)."""
    v = np.asarray(v, dtype=float)
    return np.maximum(np.abs(v[..., 0]), np.linalg.norm(v[..., 1:], axis=-1) / SQRT2)


def _gauge325(z: np.ndarray, K: int) -> np.ndarray:
    """325·N_K(z), N_K the gauge of the body in step coordinates: |z₁| (K = 1), max |z_j| (K = 2), max(|z₁|, ρ(z₂, z₃))
    (K = 3). An exact integer for integer z (int64), a float otherwise."""
    a = np.abs(z)
    m = _L * a[..., 0]
    if K == 2:
        m = np.maximum(m, _L * a[..., 1])
    elif K == 3:
        for p, q, c in _POLYGON:
            m = np.maximum(m, (_L // c) * (p * a[..., 1] + q * a[..., 2]))
    return m


def q_norm(v) -> np.ndarray:
    """‖v‖_Q, the gauge of the body Q the mechanism uses (real units, K ≤ 3): Q = S for K ≤ 2; for K = 3 the prism
    [−1, 1] × √2·polygon ⊇ S, so ‖v‖_Q ≤ ‖v‖_S ≤ 1.0102 ‖v‖_Q."""
    v = np.asarray(v, dtype=float)
    return _gauge325(v / knorm_steps(v.shape[-1], 1.0), v.shape[-1]) / _L


def knorm_steps(K: int, g: float) -> np.ndarray:
    """Lattice steps g·(1, √2, √2)[:K]: one step of every coordinate is one unit of N_K over g."""
    return g * np.array([1.0, SQRT2, SQRT2][:K])


def lattice_knorm(K: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of Z ∈ ℤ^K with P(z) ∝ exp(−N_K(z)/t), t = 2^GRID_BITS (shape (size, K)).

    Rejection: z_j ~ discrete Laplace of scale s_j·t, independent and exact (:func:`discrete_laplace`); accept with
    probability exp(−(N(z) − Σ_j |z_j|/s_j)/t) = exp(−(G − H)/(D t)), G = D·N(z) and H = D·Σ|z_j|/s_j integers,
    by the exact Bernoulli(exp(−rational)) of Canonne, Kamath & Steinke (2020, Alg. 1). The exponent is ≥ 0:
    N ≥ (|z₁| + |z₂|)/2 (K = 2), N ≥ (|z₁| + ρ)/2 and ρ ≥ ((4|a| + 3|b|) + (3|a| + 4|b|))/10 ≥ (2/3)(|a| + |b|) (K = 3).
    An accepted z has probability ∝ Π exp(−|z_j|/(s_j t))·exp(−(N(z) − Σ|z_j|/s_j)/t) = exp(−N(z)/t): exact, with
    integer arithmetic only (int64: G < 3900 max|z|, and |z| < 2^40 is checked).
    """
    s = _PROPOSAL[K]
    weights = np.array([_D // sj for sj in s], dtype=np.int64)
    parts, have = [], 0
    while have < size:
        k = int((size - have) / _ACCEPT[K]) + 16
        z = np.stack([discrete_laplace(sj * GRID_T, k, rng) for sj in s], axis=1)
        if np.abs(z).max() >= 2**40:  # probability below exp(−2^18)
            raise RuntimeError("K-norm sampler: a discrete Laplace proposal beyond 2^40")
        excess = 6 * _gauge325(z, K) - np.abs(z) @ weights
        parts.append(z[bernoulli_exp(excess, _D * GRID_T, rng)][: size - have])
        have += len(parts[-1])
    return np.concatenate(parts) if parts else np.zeros((0, K), dtype=np.int64)


def continuous_knorm(K: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """The textbook K-norm sampler in step units, numpy floats (``sampler="float-unsafe"``): r·u with r ~ Gamma(K + 1,
    scale t) and u uniform on {N_K ≤ 1} (rejection from [−1, 1]^K); density ∝ exp(−N_K(w)/t) (Hardt & Talwar 2010)."""
    r = rng.gamma(K + 1, GRID_T, size)
    u = np.zeros((0, K))
    while len(u) < size:
        cand = rng.uniform(-1.0, 1.0, size=(int(1.3 * (size - len(u))) + 8, K))
        u = np.concatenate([u, cand[_gauge325(cand, K) <= _L]])
    return r[:, None] * u[:size]


def knorm_noise(K: int, b: float, shape, rng: np.random.Generator, sampler: str = "exact") -> GridNoise:
    """K-norm noise of scale b (density ∝ exp(−‖w‖_Q/b)) for ``shape`` releases of K coefficients: on the lattice of
    steps g·(1, √2, √2), g = b/2^GRID_BITS (exact: :func:`lattice_knorm`), or in floats (:func:`continuous_knorm`).
    Its radial law: ‖w‖_Q/b ~ Gamma(K, 1), so E‖w‖_Q = K·b (Gamma(K + 1) is the radius r of w = r·u, u uniform in
    Q, whose own gauge is Beta(K, 1))."""
    shape = (int(shape),) if isinstance(shape, numbers.Integral) else tuple(shape)
    size, steps = math.prod(shape), knorm_steps(K, b / GRID_T)
    if sampler == "float-unsafe":
        return GridNoise(continuous_knorm(K, size, rng).reshape(*shape, K), steps, False)
    return GridNoise(lattice_knorm(K, size, rng).reshape(*shape, K).astype(float), steps, True)


def knorm_scale(n: int, T: float, epsilon: float) -> float:
    """b = 2T/(nε): the K-norm density exp(−‖t‖_S/b) = exp(−(nε/2T)‖t‖_S) for ‖Δ‖_S ≤ 2T/n (the corrected constant)."""
    return 2 * T / (n * epsilon)


def printed_knorm_scale(n: int, T: float, epsilon: float) -> float:
    """b = T/(2nε), the density exp(−(2nε/T)‖t‖_S) printed in §6.2: a quarter of :func:`knorm_scale`, so 4ε-DP."""
    return T / (2 * n * epsilon)


def _polygon_moments() -> tuple[float, float]:
    """Area A and polar second moment J of the polygon {ρ ≤ 1}: every edge touches the unit circle, so each gap d
    between consecutive normals adds two right triangles of legs 1 and a = tan(d/2): area a, moment a/2 + a³/6."""
    angles = sorted(math.atan2(q, p) for p, q, _ in _POLYGON)
    a = np.tan(np.tile(np.diff(angles), 4) / 2)  # the 28 normals: four reflections of the first quadrant's gaps
    return float(a.sum()), float(np.sum(a / 2 + a**3 / 6))


def knorm_noise_moment(K: int) -> float:
    """E‖w‖₂²/b² of :func:`knorm_noise`: E r²·E‖u‖² = (K + 1)(K + 2)·E[u₁² + 2(u₂² + u₃²)], u uniform on {N_K ≤ 1}
    (a step of coordinates 2, 3 is √2 long): 1/3, 1/3 + 2/3 and 1/3 + 2J/A (polygon) for K = 1, 2, 3."""
    A, J = _polygon_moments()
    return (K + 1) * (K + 2) * (1 / 3 + (0.0, 0.0, 2 / 3, 2 * J / A)[K])


# ---- tuning, plan, estimator -------------------------------------------------------------------------------------


def fourier_tuning(n: int, epsilon: float, *, K=None, T=None, alpha=1, c1=1.0, sigma=1.0) -> tuple[int, float]:
    """(K, T) from public quantities only. T = 4σ√log n (Thm 6.2, σ a public bound on the noise sd). K = the odd
    integer nearest to c₁ min(n^{1/(2α+1)}, (nε)^{1/(α+1)}) (Thm 6.2, exponents' signs corrected), at least 1: odd,
    because an even K adds a cosine without its sine, which raises sup‖φ‖₂² from K to K + 1."""
    alpha, c1, sigma = check_count("alpha", alpha), check_positive("c1", c1), check_positive("sigma", sigma)
    if K is None:
        k = c1 * min(n ** (1 / (2 * alpha + 1)), (n * epsilon) ** (1 / (alpha + 1)))
        K = max(1, 2 * round((k - 1) / 2) + 1)
    return _check_K(K), _check_T(4 * sigma * math.sqrt(math.log(n)) if T is None else T)


def dp_fourier_regression_plan(privacy: Privacy, n: int, d: int, *, K, T, mechanism, alpha, c1, sigma) -> PrivacyPlan:
    """One noisy release of θ̂_{K,T} ∈ ℝ^K (§6.2), recorded as ``dp_fourier``; d must be 1 (a one-dimensional design;
    tuning as :func:`dp_fourier_regression`, which holds the defaults; K, T None: :func:`fourier_tuning`). Replace-one
    sensitivity: Δ = (ỹφ(x) − ỹ′φ(x′))/n with |ỹ|, |ỹ′| ≤ T (the indicator truncation), so
    gaussian: ‖Δ‖₂ ≤ 2T sup‖φ‖₂/n = 2T√K/n (odd K; √(K+1) even). paper: σ = Δ√(2 log(2/δ))/ε, the Gaussian
              mechanism of Example 2.1, certified by the exact privacy curve (Balle & Wang 2018, Thm 8) and refused
              or warned about (``on_invalid``) where it fails; tight: the analytic Gaussian, exact.
    laplace:  ‖Δ‖₁ ≤ 2T·B₁/n, B₁ = :func:`sup_phi_l1_bound`; b = Δ/ε, pure ε-DP (both calibrations).
    knorm:    ‖Δ‖_Q ≤ ‖Δ‖_S ≤ 2T/n; b = 2T/(nε) (:func:`knorm_scale`), pure ε-DP (both calibrations); K ≤ 3 only.
    Every scale is raised for the grid's rounding (:func:`grid_scale`; K-norm: r = 1 step, √2 for K = 3)."""
    p = privacy.at(n)
    name = "dp_fourier" if mechanism == "gaussian" else f"dp_fourier_{mechanism}"  # the registry's names
    require_replace(p, name, "it divides by the public sample size n")
    n = check_count("n", n)
    if d != 1:
        raise DataError(f"the Fourier projection estimator of §6 is for a one-dimensional design: d must be 1, got {d}")
    if mechanism not in MECHANISMS:
        raise PrivacyError(f"mechanism must be one of {tuple(MECHANISMS)}, got {mechanism!r}")
    eps, delta = p.epsilon, p.delta
    K, T = fourier_tuning(n, eps, K=K, T=T, alpha=alpha, c1=c1, sigma=sigma)
    params = {"K": K, "T": T, "alpha": alpha, "c1": c1, "sigma": sigma, "mechanism": mechanism}
    assumption = f"Y_i 1(|Y_i| <= T), T = {T:.6g}, inside the estimator (phi is bounded, so X needs no clipping)"
    proven = True
    if mechanism == "gaussian":
        sens = 2 * T * sup_phi_l2(K) / n
        if p.calibration == "paper":
            sigma0 = sens * math.sqrt(2 * math.log(2 / delta)) / eps
            exact = gaussian_delta(sigma0, sens, eps)
            params["exact_delta_at_epsilon"] = exact
            comp = f"one Gaussian release, Example 2.1's sigma, exact delta(eps) = {exact:.3g} (Balle & Wang 2018)"
            if exact > delta:
                proven, comp = False, "NOT PROVEN: " + comp
                p.outside_validity(
                    f"Example 2.1's Gaussian noise is not ({eps:.3g}, {delta:.3g})-DP (exact delta {exact:.3g})"
                )
        else:
            sigma0, comp = gaussian_sigma(sens, eps, delta, "analytic"), "one analytic Gaussian release, exact"
        scale = grid_scale(sigma0, sens, K, "l2", "gaussian", p.sampler)
        rel = grid_release("gaussian", "gaussian", sens, "l2", scale, 1, eps, delta, coordinates=K, sampler=p.sampler)
        params["expected_noise_sq"] = K * scale**2
    elif mechanism == "laplace":
        sens = 2 * T * sup_phi_l1_bound(K) / n
        scale = grid_scale(sens / eps, sens, K, "l1", "laplace", p.sampler)
        rel = grid_release("laplace", "laplace", sens, "l1", scale, 1, eps, 0.0, coordinates=K, sampler=p.sampler)
        comp, params["expected_noise_sq"] = "one Laplace release, pure eps-DP", 2 * K * scale**2
    else:
        rel, comp, knorm_params = _knorm_release(p, n, K, T)
        params |= knorm_params
    why = f"one {MECHANISMS[mechanism]} release of the truncated Fourier coefficients"
    return PrivacyPlan(
        "dp_fourier",
        eps,
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


def _knorm_release(p: Privacy, n: int, K: int, T: float) -> tuple[Release, str, dict]:
    """(release, composition, parameters) of :func:`dp_fourier_regression_plan`'s K-norm mechanism: the exact
    lattice sampler of :mod:`dpcost.dp.samplers` (or numpy's, float-unsafe) at b = 2T/(nε), K ≤ 3 only, with the
    scale the paper printed beside it."""
    eps = p.epsilon
    if K > KNORM_MAX_K:
        raise PrivacyError(
            f"the K-norm mechanism is sampled exactly for K <= {KNORM_MAX_K} only, got K = {K}: "
            "use mechanism='gaussian' (same K^2 noise order, (eps, delta)-DP) or 'laplace'"
        )
    sens = 2 * T / n
    r_k, r_norm = (1, "linf") if K <= 2 else (2, "l2")  # N(e) ≤ 1 resp. √2 for a rounding error |e_j| ≤ 1
    scale = grid_scale(knorm_scale(n, T, eps), sens, r_k, r_norm, "laplace", p.sampler)
    body = "S" if K <= 2 else "Q = [-1,1] x sqrt2*polygon (28 rational tangents), Q contains S"
    how = (
        "float-unsafe numpy K-norm: gamma radius x uniform point of the body (NOT private on a computer: Mironov 2012)"
        if p.sampler == "float-unsafe"
        else f"exact lattice K-norm on steps scale/2^{GRID_BITS} x (1, sqrt2, sqrt2): rejection from exact "
        "discrete Laplace proposals, exact Bernoulli(exp(-rational)) acceptance; sensitivity inflated by "
        f"{math.sqrt(r_k):.3g} grid steps for rounding; scale raised by a relative {MARGIN:g}"
    )
    rel = Release(
        f"knorm: K-norm mechanism on {body}",
        sens,
        "gauge",
        scale,
        1,
        eps,
        0.0,
        how,
        kind="knorm",
        noise=noise_of(p.sampler),
        coordinates=K,
        rounding=grid_rounding(r_k, r_norm, scale, p.sampler),
        norm_words="S-gauge (conv of +-phi(x))",
    )
    comp = "one K-norm release, density exp(-||t||_Q/b), b = 2T/(n eps) (Hardt & Talwar 2010), pure eps-DP"
    printed = printed_knorm_scale(n, T, eps)
    params = {
        "printed_scale": printed,
        "printed_epsilon": sens / printed,
        "expected_noise_sq": knorm_noise_moment(K) * scale**2,
    }
    return rel, comp, params


def release(theta_hat, plan: PrivacyPlan, rng: np.random.Generator, sampler: str = "exact") -> np.ndarray:
    """θ̂ plus the noise ``plan`` prescribes, drawn by ``sampler`` (the plan's own). The last axis of ``theta_hat``
    holds the K coefficients; leading axes are independent releases (an audit's draws)."""
    theta_hat = np.asarray(theta_hat, dtype=float)
    mech, scale = plan.parameters["mechanism"], plan.releases[0].noise_scale
    if mech != "knorm":
        return add_noise(theta_hat, mech, scale, rng, sampler)
    return knorm_noise(theta_hat.shape[-1], scale, theta_hat.shape[:-1], rng, sampler).add(theta_hat)


def dp_fourier_regression(
    X,
    Y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    K=None,
    T=None,
    mechanism="gaussian",
    alpha=1,
    c1=1.0,
    sigma=1.0,
) -> np.ndarray:
    """DP Fourier projection estimator — Cai, Wang & Zhang, *Score Attack*, §6.2, eq. (6.8), Thm 6.2: the released
    coefficients θ̃_{K,T} = θ̂_{K,T} + w; f̃ = Σ θ̃_j φ_j is post-processing (:func:`evaluate`).

    Tuning (public): K terms (default :func:`fourier_tuning` from ``alpha``, ``c1``, n, ε), truncation T (default
    4σ√log n from the public noise bound ``sigma``), ``mechanism`` "gaussian" | "laplace" | "knorm".

    Privacy, replace-one. θ̂_{K,T} = (1/n)Σ ỹ_iφ(X_i) with ỹ = Y·1(|Y| ≤ T) ∈ [−T, T], so replacing one record moves it
    by Δ = (ỹφ(x) − ỹ′φ(x′))/n ∈ (2T/n)·S, S = conv{±φ(x)} convex and symmetric: ‖Δ‖_S ≤ 2T/n, ‖Δ‖₂ ≤ 2T sup‖φ‖₂/n,
    ‖Δ‖₁ ≤ 2T·B₁/n (:func:`dp_fourier_regression_plan`). Gaussian and Laplace: the package's mechanisms on those
    sensitivities, exact discrete noise on a grid (:mod:`dpcost.dp.samplers`).

    K-norm (Hardt & Talwar 2010), K ≤ 3, with the corrected density ∝ exp(−(nε/2T)‖t‖): S is [−1, 1], a rectangle
    or the cylinder {|t₁| ≤ 1, ‖(t₂, t₃)‖ ≤ √2}; for K = 3 the disc is replaced by a circumscribed polygon (rational
    normals), a body Q ⊇ S with ‖·‖_Q ≤ ‖·‖_S, so ‖Δ‖_Q ≤ 2T/n still (Q = S for K ≤ 2). The release is lattice-valued:
    o = g∘(m + Z), steps g = (g, g√2, g√2)[:K], g = b/t, t = 2^20, m = rint(θ̂/g), Z ~ P(z) ∝ exp(−N(z)/t) with N the
    gauge of Q in step coordinates (N(v/g) = ‖v‖_Q/g), drawn exactly (:func:`lattice_knorm`). Proof of ε-DP:
    (1) between neighbours m − m′ = Δ/g + e, |e_j| ≤ 1 (two roundings), so N(m − m′) ≤ ‖Δ‖_Q(1 + 2^−51)/g + r,
    r = sup N(e) = 1 (K ≤ 2) or 7/5 ≤ √2 (K = 3; 2^−51 covers fl(g√2)); (2) N is a norm and the pmf's normaliser is
    the same for every shift of ℤ^K, so P(o | D)/P(o | D′) = exp((N(z + m − m′) − N(z))/t) ≤ exp(N(m − m′)/t);
    (3) b = :func:`grid_scale` (2T/(nε), r steps) = (1 + 10⁻⁶)(2T/n + r g)/ε, so N(m − m′)/t ≤ ε(1 + 2^−51)/(1 + 10⁻⁶)
    < ε. Everything in the noise is integer arithmetic (exact); g·(…) is post-processing. With
    ``sampler="float-unsafe"`` the noise is the textbook r·u (r ~ Gamma(K + 1, b), u uniform on Q) from numpy's
    float samplers, added without a lattice: not private on a computer (Mironov 2012), for comparison only.
    K > 3 is refused: an exact uniform sampler of the orbitope is not known to us (the paper defers to Hall 2013,
    §4.4.4), and the product of discs that contains S would give E‖w‖² ≍ K³, no better in rate than Laplace.
    """
    X, Y = check_fourier_data(X, Y)
    plan = dp_fourier_regression_plan(
        privacy, Y.size, 1, K=K, T=T, mechanism=mechanism, alpha=alpha, c1=c1, sigma=sigma
    )
    theta_hat = projection_coefficients(X, Y, K=plan.parameters["K"], T=plan.parameters["T"])
    return release(theta_hat, plan, rng, privacy.sampler)


def dp_fourier_laplace_plan(privacy: Privacy, n: int, d: int, *, K, T, alpha, c1, sigma) -> PrivacyPlan:
    """:func:`dp_fourier_regression_plan` with the Laplace mechanism, recorded as ``dp_fourier_laplace``."""
    plan = dp_fourier_regression_plan(privacy, n, d, K=K, T=T, mechanism="laplace", alpha=alpha, c1=c1, sigma=sigma)
    return dataclasses.replace(plan, method="dp_fourier_laplace")


def dp_fourier_laplace(
    X, Y, *, privacy: Privacy, rng: np.random.Generator, K=None, T=None, alpha=1, c1=1.0, sigma=1.0
) -> np.ndarray:
    """:func:`dp_fourier_regression` with ``mechanism="laplace"``, pure ε-DP; plan :func:`dp_fourier_laplace_plan`."""
    kw = dict(K=K, T=T, alpha=alpha, c1=c1, sigma=sigma)
    return dp_fourier_regression(X, Y, privacy=privacy, rng=rng, mechanism="laplace", **kw)
