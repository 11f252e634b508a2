"""The bootstrap engine: subsample, estimate, score, summarize — reproducibly.

Random streams are derived from (master seed, dataset, purpose, method, m, rep) through numpy's SeedSequence, so a
result depends only on its identity, never on job order, core count or executor. The subsample of (dataset, m, rep)
does not depend on the method: every method is scored on exactly the same subsamples.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import accounting, housing, peers, regression, sparse_mean
from .errors import ConfigError, DataError
from .privacy import resolve_delta


def rng_for(seed: int, *identity: str | int) -> np.random.Generator:
    """A generator for one identity, e.g. ``rng_for(seed, "housing", "noise", "noisy_gd", 2000, 7)``."""
    text = "\x1f".join(str(part) for part in identity).encode()
    key = np.frombuffer(hashlib.sha256(text).digest(), dtype=np.uint32)
    return np.random.default_rng(np.random.SeedSequence(entropy=int(seed), spawn_key=tuple(int(k) for k in key)))


def subsample_indices(n_total: int, m: int, *, seed: int, dataset: str, rep: int, group: str = "") -> np.ndarray:
    """m distinct row indices out of n_total, the same for every method."""
    if not 2 <= m <= n_total:
        raise ConfigError(f"sample size m={m} must lie between 2 and the {n_total} rows available")
    return rng_for(seed, dataset, "subsample", group, m, rep).choice(n_total, size=m, replace=False)


@dataclass(frozen=True)
class Method:
    """An estimator as the engine sees it: fn(data, *, epsilon, delta, rng, **options, **params) -> estimate.

    ``plan(n, epsilon, delta, calibration, on_invalid, **params)`` gives its :class:`~dpcost.accounting.PrivacyPlan`
    (the same function the estimator calls); ``options`` are the privacy options it accepts.
    """

    name: str
    fn: Callable
    private: bool
    label: str
    plan: Callable | None = None
    options: tuple[str, ...] = ()


def _grid_rows(
    spec: Method,
    *,
    m_grid,
    reps: int,
    seed: int,
    epsilon,
    delta,
    dataset: str,
    calibration: str,
    on_invalid: str,
    one_rep: Callable,
) -> list[tuple]:
    """The loop both analyses share: for every m and rep, the method's noise stream and privacy arguments, then
    ``one_rep(m, rep, rng, kw)`` (draw the subsample, estimate, score) → extra columns of the row."""
    if reps < 1:
        raise ConfigError(f"reps must be >= 1, got {reps}")
    rows = []
    for m in m_grid:
        d_m = resolve_delta(delta, m) if spec.private else np.nan
        eps_m = epsilon if spec.private else np.nan
        kw = privacy_kwargs(spec, epsilon, d_m, calibration, on_invalid)
        for rep in range(reps):
            rng = rng_for(seed, dataset, "noise", spec.name, m, rep)
            rows.append((spec.name, m, rep, eps_m, d_m, *one_rep(m, rep, rng, kw)))
    return rows


def privacy_kwargs(spec: Method, epsilon, delta, calibration: str, on_invalid: str) -> dict:
    if not spec.private:
        return {"epsilon": None, "delta": None}
    opts = {"calibration": calibration, "on_invalid": on_invalid}
    return {"epsilon": epsilon, "delta": delta, **{k: opts[k] for k in spec.options}}


# The plans of OPS and AdaOPS depend on the dimension (public: the housing design's five covariates); the
# estimators take it from the data they are given.
HOUSING_D = len(housing.COVARIATES)

REGRESSION_METHODS: dict[str, Method] = {
    "ols": Method("ols", lambda X, y, *, epsilon, delta, rng: regression.ols(X, y), False, "OLS (non-private)"),
    "noisy_gd": Method(
        "noisy_gd",
        regression.noisy_gradient_descent_ols,
        True,
        "Noisy GD (004 Alg. 4.1)",
        lambda n, *, epsilon, delta, calibration, on_invalid, **p: accounting.noisy_gd_plan(
            n=n, epsilon=epsilon, delta=delta, calibration=calibration, on_invalid=on_invalid, **p
        ),
        ("calibration", "on_invalid"),
    ),
    "noisy_truncated_ols": Method(
        "noisy_truncated_ols",
        regression.noisy_truncated_ols,
        True,
        "Noisy truncated OLS (000 §4.3.1)",
        lambda n, *, epsilon, delta, calibration, on_invalid, noise="derived", **p: accounting.noisy_truncated_ols_plan(
            n=n, epsilon=epsilon, delta=delta, calibration=calibration, on_invalid=on_invalid, **p
        ),
        ("calibration", "on_invalid"),
    ),
    "ssp": Method(
        "ssp",
        regression.ssp,
        True,
        "SSP (Wang 2018)",
        lambda n, *, epsilon, delta, calibration, on_invalid, B_X, B_Y: accounting.ssp_plan(
            epsilon=epsilon, delta=delta, B_X=B_X, B_Y=B_Y, calibration=calibration, on_invalid=on_invalid
        ),
        ("calibration", "on_invalid"),
    ),
    "adassp": Method(
        "adassp",
        regression.adassp,
        True,
        "AdaSSP (Wang 2018, Alg. 2)",
        lambda n, *, epsilon, delta, calibration, on_invalid, B_X, B_Y, rho=0.05: accounting.adassp_plan(
            epsilon=epsilon, delta=delta, B_X=B_X, B_Y=B_Y, calibration=calibration, on_invalid=on_invalid
        ),
        ("calibration", "on_invalid"),
    ),
    "ops": Method(
        "ops",
        regression.ops,
        True,
        "OPS-Balanced (Wang 2018, App. F)",
        lambda n, *, epsilon, delta, calibration, on_invalid, B_X, B_Y, B=1.0, rho=0.05, d=HOUSING_D: (
            accounting.ops_balanced_plan(
                n=n,
                d=d,
                epsilon=epsilon,
                delta=delta,
                B_X=B_X,
                B_Y=B_Y,
                B=B,
                rho=rho,
                calibration=calibration,
                on_invalid=on_invalid,
            )
        ),
        ("calibration", "on_invalid"),
    ),
    "adaops": Method(
        "adaops",
        regression.adaops,
        True,
        "AdaOPS (Wang 2018, Alg. 1)",
        lambda n, *, epsilon, delta, calibration, on_invalid, B_X, B_Y, rho=0.05, d=HOUSING_D: accounting.adaops_plan(
            d=d, epsilon=epsilon, delta=delta, B_X=B_X, B_Y=B_Y, rho=rho, calibration=calibration, on_invalid=on_invalid
        ),
        ("calibration", "on_invalid"),
    ),
    "objpert": Method(
        "objpert",
        regression.objpert,
        True,
        "ObjPert (Kifer et al. 2012)",
        lambda n, *, epsilon, delta, calibration, on_invalid, B_X, B_Y, C: accounting.objpert_plan(
            epsilon=epsilon, delta=delta, B_X=B_X, B_Y=B_Y, C=C, calibration=calibration, on_invalid=on_invalid
        ),
        ("calibration", "on_invalid"),
    ),
    "noisy_sgd": Method(
        "noisy_sgd",
        regression.noisy_sgd_ols,
        True,
        "Noisy SGD (Bassily et al. 2014)",
        lambda n, *, epsilon, delta, calibration, on_invalid, **p: accounting.noisy_sgd_plan(
            n=n, epsilon=epsilon, delta=delta, calibration=calibration, on_invalid=on_invalid, **p
        ),
        ("calibration", "on_invalid"),
    ),
    "sheffet_jl": Method(
        "sheffet_jl",
        regression.sheffet_jl_ols,
        True,
        "JL projection OLS (Sheffet 2017, Alg. 1)",
        lambda n, *, epsilon, delta, calibration, on_invalid, B_X, B_Y, r: accounting.sheffet_jl_plan(
            epsilon=epsilon, delta=delta, B_X=B_X, B_Y=B_Y, r=r, calibration=calibration, on_invalid=on_invalid
        ),
        ("calibration", "on_invalid"),
    ),
    "diffprivlib": Method(
        "diffprivlib",
        peers.diffprivlib_ols,
        True,
        "diffprivlib LinearRegression (peer)",
        lambda n, *, epsilon, delta, calibration, on_invalid, B_X, B_Y: accounting.diffprivlib_plan(
            epsilon=epsilon, delta=delta, B_X=B_X, B_Y=B_Y
        ),
    ),
    "opendp_ssp": Method(
        "opendp_ssp",
        peers.opendp_ssp_ols,
        True,
        "OpenDP-calibrated SSP (peer)",
        lambda n, *, epsilon, delta, calibration, on_invalid, B_X, B_Y: accounting.opendp_ssp_plan(
            epsilon=epsilon, delta=delta, B_X=B_X, B_Y=B_Y
        ),
    ),
}


def run_regression_grid(
    X: np.ndarray,
    y: np.ndarray,
    beta_true: np.ndarray,
    *,
    method: str,
    params: dict,
    m_grid: Sequence[int],
    reps: int,
    seed: int,
    epsilon: float,
    delta: float | str,
    dataset: str = "housing",
    calibration: str = "paper",
    on_invalid: str = "refuse",
) -> pd.DataFrame:
    """Error ‖β̂ − β_true‖₂ of ``method`` on ``reps`` subsamples of each size m; one tidy row per (m, rep).

    δ is resolved with n = m (the subsample the estimator sees), as in 004 §6.
    """
    if method not in REGRESSION_METHODS:
        raise ConfigError(f"unknown regression method {method!r}; available: {sorted(REGRESSION_METHODS)}")
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise DataError("the design or response holds NaN or infinite values")
    spec = REGRESSION_METHODS[method]

    def one_rep(m, rep, rng, kw):
        idx = subsample_indices(len(y), m, seed=seed, dataset=dataset, rep=rep)
        beta = spec.fn(X[idx], y[idx], rng=rng, **kw, **params)
        return (float(np.linalg.norm(beta - beta_true)),)

    rows = _grid_rows(
        spec,
        m_grid=m_grid,
        reps=reps,
        seed=seed,
        epsilon=epsilon,
        delta=delta,
        dataset=dataset,
        calibration=calibration,
        on_invalid=on_invalid,
        one_rep=one_rep,
    )
    return pd.DataFrame(rows, columns=["method", "m", "rep", "epsilon", "delta", "error"])


def _frank_wolfe(D, *, epsilon, delta, rng, s=None, **params):
    theta = sparse_mean.private_frank_wolfe_mean(D, epsilon=epsilon, delta=delta, rng=rng, **params)
    return theta, np.flatnonzero(theta)


# Sparse mean methods: fn(D, *, epsilon, delta, rng, s, **params) -> (estimate, selected support or None).
MEAN_METHODS: dict[str, Method] = {
    "sample_mean": Method(
        "sample_mean",
        lambda D, *, epsilon, delta, rng, s: (sparse_mean.sample_mean(D), None),
        False,
        "Sample mean (non-private)",
    ),
    "top_s_mean": Method(
        "top_s_mean",
        lambda D, *, epsilon, delta, rng, s: sparse_mean.top_s_sample_mean(D, s=s),
        False,
        "Top-s sample mean (non-private)",
    ),
    "peeling": Method(
        "peeling",
        sparse_mean.dp_sparse_mean,
        True,
        "DP sparse mean, peeling (004 Alg. 3.3)",
        lambda n, *, epsilon, delta, calibration, on_invalid, s, R: accounting.peeling_plan(
            s=s, epsilon=epsilon, delta=delta, lam=2 * R / n, calibration=calibration
        ),
        ("calibration",),
    ),
    "frank_wolfe": Method(
        "frank_wolfe",
        _frank_wolfe,
        True,
        "Private Frank-Wolfe (Talwar et al. 2015)",
        lambda n, *, epsilon, delta, calibration, on_invalid, s=None, **p: accounting.frank_wolfe_plan(
            n=n, epsilon=epsilon, delta=delta, calibration=calibration, **p
        ),
        ("calibration",),
    ),
}


def top_support(mu: np.ndarray, s: int) -> np.ndarray:
    """Indices of the s largest |μ_j| (ties: lowest index): the support a sparse estimate should find."""
    return np.argsort(-np.abs(mu), kind="stable")[:s]


def run_mean_grid(
    A: np.ndarray,
    B: np.ndarray,
    mu_true: np.ndarray,
    *,
    method: str,
    s: int,
    params: dict,
    m_grid: Sequence[int],
    reps: int,
    seed: int,
    epsilon: float,
    delta: float | str,
    dataset: str = "snp",
    calibration: str = "paper",
    on_invalid: str = "refuse",
) -> pd.DataFrame:
    """The two-group design of 004 §6.1: draw m rows of A and m rows of B without replacement, pair them, estimate
    the mean of the m differences; error ‖μ̂ − μ‖₂ and how many of the true top-s coordinates the estimate selected.

    δ is resolved with n = m, the number of differences the estimator sees.
    """
    if method not in MEAN_METHODS:
        raise ConfigError(f"unknown sparse mean method {method!r}; available: {sorted(MEAN_METHODS)}")
    if not (np.isfinite(A).all() and np.isfinite(B).all()):
        raise DataError("the genotype matrices hold NaN or infinite values")
    spec = MEAN_METHODS[method]
    truth_support = set(top_support(mu_true, s).tolist())

    def one_rep(m, rep, rng, kw):
        ia = subsample_indices(len(A), m, seed=seed, dataset=dataset, rep=rep, group="A")
        ib = subsample_indices(len(B), m, seed=seed, dataset=dataset, rep=rep, group="B")
        est, support = spec.fn(A[ia].astype(float) - B[ib], rng=rng, s=s, **kw, **params)
        found = np.nan if support is None else len(truth_support.intersection(np.asarray(support).tolist()))
        return float(np.linalg.norm(est - mu_true)), found

    rows = _grid_rows(
        spec,
        m_grid=m_grid,
        reps=reps,
        seed=seed,
        epsilon=epsilon,
        delta=delta,
        dataset=dataset,
        calibration=calibration,
        on_invalid=on_invalid,
        one_rep=one_rep,
    )
    return pd.DataFrame(rows, columns=["method", "m", "rep", "epsilon", "delta", "error", "support_recovered"])


PEER_METHODS = ("diffprivlib", "opendp_ssp")


def compare(summary: pd.DataFrame, private: Sequence[str]) -> pd.DataFrame:
    """Per m, each method's mean error divided by the best (lowest mean) non-peer DP method's, and by diffprivlib's.

    ``private`` names the methods with a DP guarantee; peers are the methods of :data:`PEER_METHODS`.
    """
    rows = []
    for m, g in summary.groupby("m", sort=True):
        means = g.set_index("method")["mean"]
        ours = means[[k for k in means.index if k in private and k not in PEER_METHODS]]
        best = ours.idxmin() if len(ours) else None
        dpl = means.get("diffprivlib", np.nan)
        for method, mean in means.items():
            rows.append((method, m, mean, best, mean / ours.min() if best else np.nan, mean / dpl))
    return pd.DataFrame(
        rows, columns=["method", "m", "mean", "best_dp_method", "ratio_to_best_dp", "ratio_to_diffprivlib"]
    )


def summarize(errors: pd.DataFrame) -> pd.DataFrame:
    """Per (method, m): number of reps, mean error, its standard error, median and the 5 % / 95 % quantiles
    (and the mean number of true top-s coordinates recovered, where the table records it)."""
    g = errors.groupby(["method", "m"], sort=True)
    e = g["error"]
    out = pd.DataFrame(
        {
            "n_reps": e.size(),
            "mean": e.mean(),
            "se": e.std(ddof=1) / np.sqrt(e.size()),
            "median": e.median(),
            "q05": e.quantile(0.05),
            "q95": e.quantile(0.95),
        }
    )
    if "support_recovered" in errors:
        out["support_recovered"] = g["support_recovered"].mean()
    return out.reset_index()
