"""The non-private reference: OLS intervals on a subsample of m of n rows, for the full-data OLS on n rows.

Target and sampling design. The m rows are a simple random sample without replacement from a finite population of
n rows, and the target is β_N, OLS on all n rows (the yardstick of the papers' §6 protocol). Linearised,
β̂_m − β_N ≈ (X'X/m)⁻¹·(mean over the sample of x_i e_i), e_i the population residuals (Σ_N x_i e_i = 0), and the
mean of an SRSWOR sample of m of n zero-mean vectors has covariance (1 − m/n)·S/m (Cochran 1977, Thm 2.2): the
finite-population correction (FPC) multiplies the variance by 1 − m/n. At m = n it is 0 and β̂_m = β_N exactly, so the
interval is the point β_N, correctly. Without the FPC (``population=None``) the target is the superpopulation β of
a linear model the rows are drawn from.

Variance: ``classical`` σ̂²(X'X)⁻¹ with σ̂² = RSS/(m − d) (homoscedastic errors), ``hc3`` the sandwich
(X'X)⁻¹X'diag(e_i²/(1 − h_i)²)X(X'X)⁻¹ (MacKinnon & White 1985; robust to heteroscedasticity). Both with Student t
quantiles on m − d degrees of freedom (exact for the classical interval under Gaussian errors; for HC3 the usual
small-sample choice, the normal quantile's limit).
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from ..estimators.base import check_design
from .base import check_level, check_rows, make_interval

COVARIANCES = ("classical", "hc3")


def ols_interval(X, y, *, level: float = 0.95, covariance: str = "classical", population: int | None = None):
    """OLS intervals from the m rows (X, y) (module docstring); ``population`` n ≥ m applies the FPC (1 − m/n)."""
    return ols_intervals(X, y, level=level, routes=[(covariance, population)])[0]


def ols_intervals(X, y, *, level: float = 0.95, routes) -> list:
    """:func:`ols_interval` for each (covariance, population) of ``routes``, from one fit: the QR, the residuals, the
    leverages and each covariance matrix are computed once and shared, so each interval is the single call's, bit for
    bit (the reference intervals of :func:`dpcost.analysis.intervals.run_reference` are three per subsample)."""
    X, y = check_design(X, y)
    level = check_level(level)
    m, d = X.shape
    for covariance, _ in routes:
        if covariance not in COVARIANCES:
            raise DataError(f"covariance must be one of {COVARIANCES}, got {covariance!r}")
    check_rows(m, d, 1)
    fpcs = [_fpc(population, m) for _, population in routes]
    Q, Rf = np.linalg.qr(X)
    beta = np.linalg.solve(Rf, Q.T @ y)
    e = y - X @ beta
    R_inv = np.linalg.inv(Rf)
    XtX_inv = R_inv @ R_inv.T
    covs: dict[str, np.ndarray] = {}
    for covariance, _ in routes:
        if covariance in covs:
            continue
        if covariance == "classical":
            covs[covariance] = (e @ e) / (m - d) * XtX_inv
        else:
            h = np.einsum("ij,ij->i", Q, Q)  # leverages
            w = e / (1 - np.minimum(h, 1 - 1e-12))
            Z = X * w[:, None]
            covs[covariance] = XtX_inv @ (Z.T @ Z) @ XtX_inv
    from scipy import special  # here: slow to import; scipy.stats's quantiles are these functions, at 3x its import

    t = special.stdtrit(m - d, 0.5 + level / 2)
    out = []
    for (covariance, _), fpc in zip(routes, fpcs, strict=True):
        se = np.sqrt(np.maximum(np.diag(covs[covariance]), 0.0) * fpc)
        out.append(
            make_interval(
                beta - t * se,
                beta + t * se,
                beta,
                level=level,
                method="ols",
                route=covariance,
                quantile=f"t({m - d})",
                plan=None,
                details={"se": se, "fpc": fpc},
            )
        )
    return out


def _fpc(population, m: int) -> float:
    """1 − m/n for a population of n ≥ m rows; 1 without one."""
    if population is None:
        return 1.0
    if not (isinstance(population, (int, np.integer)) and population >= m):
        raise DataError(f"population must be an integer >= m = {m}, got {population!r}")
    return 1 - m / population
