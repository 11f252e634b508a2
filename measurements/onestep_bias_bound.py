"""Can a one-step private influence mean carry its own clipping bias into a valid interval? A measurement, not a method.

    python measurements/onestep_bias_bound.py [--design housing|heavy] [--m 20000] [--eps 1] [--reps 30]

The design (issue 52's second route: a private pilot, then the mean of clipped per-row influences, with a released
clipped mass bounding the bias that clipping leaves, and an Armstrong–Kolesár bias-aware critical value):

1. pilot: preconditioned clipped noisy GD (precond_gd's algorithm at the share ``fp`` of μ²; its released Gram of rows
   clipped to B0 gives the whitening M, public from then on), u_i = M x_i, pilot b̃;
2. the bread: K̃ = Σ clip_B(u_i) clip_B(u_i)' + E (sensitivity √2·B²), its eigenvalues floored at E's norm bound;
3. the step: g̃ = Σ clip_C(φ_i) + w, φ_i = u_i (y_i − u_i'b̃) (sensitivity 2C); centre β₁ = M(b̃ + K̂⁻¹g̃);
4. the sandwich: Ṽ = Σ clip_C(φ_i) clip_C(φ_i)' + E' (sensitivity √2·C²), se from M K̂⁻¹ (Ṽ + σ_g² I) K̂⁻¹ M;
5. the masses: Σ min((‖φ_i‖ − C)₊/(KC), 1) and Σ min((‖u_i‖² − B²)₊/(KB²), 1), one Gaussian release (sensitivity √2);
   with probability 1 − γ, ‖Σ(φ_i − clip_C φ_i)‖ ≤ their upper bound × KC and ‖U'U − K̂‖ ≤ a = (u-mass bound) + 2‖E‖,
   so |bias_j| ≤ ‖(MK̂⁻¹)_j‖ (a‖g‖/λ + φ-mass)/(1 − a/λ), λ = λ_min(K̂), and infinite when a ≥ λ — for rows whose
   excess stays under the caps (KC, KB²): beyond them nothing released sees it.

Every constant is a data-free rule of (n, d, μ) (the shares, B, C ∝ √d (nμ)^(1/4), K = 4). Noise here is numpy's
float Gaussian: the measurement is of utility (the releases' noise laws are the Gaussians a private version would
draw from the exact samplers). Prints, per coefficient: the bias-aware interval's coverage and median width over the
superpopulation HC3 interval, the same without the bias bound ("naive"), the error in OLS standard errors, and the
bias bound's parts.

Measured (2 cores, Intel Xeon, 2026-12-02; 30 repetitions a cell): the bias bound is infinite in every repetition on
both designs — the released u-mass and the bread's noise bound exceed λ_min(K̂) (median a/λ 1.5–4.2) — so the
interval covers by being the whole line. Without the bound ("naive") the one-step is nearly valid on the heavy-tailed
known truth (coverage 0.90–1.00 at 1.95–2.46× the HC3 width; m = 2,000 and 20,000, ε = 1); on housing (m = 20,000)
it is biased by 2.3–3.8 standard errors on income, population, households and total_rooms at ε = 1 (2.0–2.4 on
population and households at ε = 8), and the sandwich of clipped influences puts population's interval at 0.33–0.47×
OLS's (its variance under-stated 5–9×): coverage 0.00 there. The heavy rows carry both the bias and the variance, and
a private bound on either costs noise proportional to the largest influence it must see (the bias–accuracy–privacy
trilemma of Kamath, Mouzakis, Regehr, Singhal, Steinke & Ullman 2023). docs/results.md says what this
means for the cost reported on housing.
"""

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from dpcost.estimators.boosted_adassp import gdp_mu  # noqa: E402
from dpcost.estimators.precond_gd import preconditioner  # noqa: E402
from dpcost.estimators.ssp import noise_norm_bound  # noqa: E402
from dpcost.inference.reference import ols_interval  # noqa: E402
from dpcost.inference.ssp_family import critical_value  # noqa: E402

SHARES = {"pilot": 0.35, "bread": 0.15, "step": 0.35, "sandwich": 0.05, "mass": 0.1}  # of μ², summing to 1
CAP = 4.0  # K: a row's excess counts up to K times its bound


def _sym(d: int, s: float, rng) -> np.ndarray:
    E = rng.normal(0, s, (d, d))
    return np.triu(E) + np.triu(E, 1).T


def _w(norms: np.ndarray, c: float) -> np.ndarray:
    return np.minimum(1.0, c / np.maximum(norms, 1e-300))


def onestep(X, y, eps: float, delta: float, rng, level: float = 0.95, gamma: float = 0.01, T: int = 6, f0: float = 0.3):
    """(β₁, se, bias bound, critical value, parts) of one run (module docstring)."""
    from scipy.special import ndtri

    n, d = X.shape
    mu = gdp_mu(eps, delta)
    mu_p = mu * math.sqrt(SHARES["pilot"])
    mu0, mus = mu_p * math.sqrt(f0), mu_p * math.sqrt((1 - f0) / T)
    B0, Cp = 0.3 * d**0.375 * (n * mu0) ** 0.25, 0.12 * d**0.3 * (n * mus) ** 0.4
    X0 = X * _w(np.linalg.norm(X, axis=1), B0)[:, None]
    s1 = math.sqrt(2) * B0**2 / mu0
    M, H_inv = preconditioner(X0.T @ X0 + _sym(d, s1, rng), n, s1, 1.0, 0.1, 0.05)
    U, b = X @ M, np.zeros(d)
    for _ in range(T):
        phi = U * (y - U @ b)[:, None]
        b = b + H_inv @ (phi.T @ _w(np.linalg.norm(phi, axis=1), Cp) + rng.normal(0, 2 * Cp / mus, d))
    mu_K = mu * math.sqrt(SHARES["bread"])
    B = 0.6 * math.sqrt(d) * (n * mu_K) ** 0.25
    u2 = np.einsum("ij,ij->i", U, U)
    UB = U * _w(np.sqrt(u2), B)[:, None]
    s_K = math.sqrt(2) * B**2 / mu_K
    E_K = noise_norm_bound(s_K, d, gamma / 4)
    lam, V_K = np.linalg.eigh(UB.T @ UB + _sym(d, s_K, rng))
    lam = np.maximum(lam, E_K)
    K_inv = (V_K / lam) @ V_K.T
    mu_g = mu * math.sqrt(SHARES["step"])
    C = 0.6 * math.sqrt(d) * (n * mu_g) ** 0.25
    phi = U * (y - U @ b)[:, None]
    norms = np.linalg.norm(phi, axis=1)
    phi_c = phi * _w(norms, C)[:, None]
    s_g = 2 * C / mu_g
    g = phi_c.sum(0) + rng.normal(0, s_g, d)
    beta = M @ (b + K_inv @ g)
    s_V = math.sqrt(2) * C**2 / (mu * math.sqrt(SHARES["sandwich"]))
    w_V, Q_V = np.linalg.eigh(phi_c.T @ phi_c + _sym(d, s_V, rng))
    V = (Q_V * np.maximum(w_V, noise_norm_bound(s_V, d, 0.5))) @ Q_V.T
    A = M @ K_inv
    se = np.sqrt(np.diag(A @ (V * n / (n - d) + s_g**2 * np.eye(d)) @ A.T))
    s_m = math.sqrt(2) / (mu * math.sqrt(SHARES["mass"]))
    z = ndtri(1 - gamma / 4)
    phi_mass = np.minimum(np.maximum(norms - C, 0) / (CAP * C), 1).sum() + rng.normal(0, s_m)
    u_mass = np.minimum(np.maximum(u2 - B**2, 0) / (CAP * B**2), 1).sum() + rng.normal(0, s_m)
    phi_bound = max(phi_mass + z * s_m, 0) * CAP * C
    a = max(u_mass + z * s_m, 0) * CAP * B**2 + 2 * E_K
    ratio = a / lam.min()
    if ratio >= 1:
        bias = np.full(d, np.inf)
    else:
        g_norm = np.linalg.norm(g) + s_g * (math.sqrt(d) + math.sqrt(2 * math.log(4 / gamma)))
        bias = np.linalg.norm(A, axis=1) / (1 - ratio) * (a * g_norm / lam.min() + phi_bound)
    cv = critical_value(bias / se, 1 - level - gamma)
    return beta, se, bias, cv, {"a/lambda": ratio, "C": C, "B": B}


def design(name: str, rng):
    if name == "housing":
        from support import housing_design

        X, y, names, _ = housing_design()
        return X, y, names
    N, d = 200_000, 5  # known truth with heavy tails: t₃ errors, correlated x, 0.1 % of rows at 6× leverage
    X = rng.standard_normal((N, d)) @ np.linalg.cholesky(0.5 * np.eye(d) + 0.5).T
    X[rng.random(N) < 0.001] *= 6
    X = np.column_stack([np.ones(N), X])
    y = X @ np.array([0.2, 0.5, -0.3, 0.2, 0.0, 0.1]) + 0.7 * rng.standard_t(3, N) / math.sqrt(3)
    return X, y, ["const", *(f"x{j}" for j in range(1, d + 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", choices=("housing", "heavy"), default="housing")
    ap.add_argument("--m", type=int, nargs="+", default=[20000])
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0])
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args()
    rng = np.random.default_rng(3)
    X, y, names = design(a.design, rng)
    truth = np.linalg.lstsq(X, y, rcond=None)[0]
    for m in a.m:
        for eps in a.eps:
            cov, naive, width, width_naive, err, ratio = [], [], [], [], [], []
            for _ in range(a.reps):
                idx = rng.choice(len(y), m, replace=False)
                ref = ols_interval(X[idx], y[idx], covariance="hc3")
                beta, se, bias, cv, parts = onestep(X[idx], y[idx], eps, 1e-5, rng)
                cov.append(np.abs(beta - truth) <= cv * se)
                naive.append(np.abs(beta - truth) <= 1.96 * se)
                width.append(2 * cv * se / ref.width)
                width_naive.append(2 * 1.96 * se / ref.width)
                err.append((beta - truth) / ref.details["se"])
                ratio.append(parts["a/lambda"])
            print(f"{a.design}, m = {m}, eps = {eps}, {a.reps} reps; a/lambda median {np.median(ratio):.2f}")
            print(f"{'':12s} {'cover':>6s} {'width':>7s} {'naive':>6s} {'width':>6s} {'err/se':>7s}")
            for j, name in enumerate(names):
                c = (np.mean(cov, 0)[j], np.median(width, 0)[j], np.mean(naive, 0)[j], np.median(width_naive, 0)[j])
                print(f"{name:12s} {c[0]:6.2f} {c[1]:7.2f} {c[2]:6.2f} {c[3]:6.2f} {np.mean(err, 0)[j]:7.2f}")


if __name__ == "__main__":
    main()
