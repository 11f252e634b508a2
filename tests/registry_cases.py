"""What every registry-wide test needs: the constants each method takes from the config (TUNING), the analysis
parameters (PARAMS), a tiny well-formed data set per family (:func:`tiny`) and the estimate's shape. A new method
gets its line in TUNING here; test_registry.py checks the table covers the registry."""

import numpy as np

from dpcost.estimators import btl, peers

from support import synthetic_regression

# the constants every method needs from the config (its required tuning keys), at values where both calibrations
# are valid at (0.5, 1e-5) with n = 1000, d = 5 (AdaOPS as printed excepted: it is never valid; BTL: n = d = 1000
# items, Fourier: d = 1, see PLAN_SIZE)
TUNING = {
    "ols": {},
    "noisy_gd": dict(T=20, R=2.0, C=3.0, c_x=1.0, eta0=7.5),
    "noisy_truncated_ols": dict(R=2.0, C=3.0, c_x=1.0, kappa=0.01),
    "ssp": dict(B_X=1.0, B_Y=2.0),
    "adassp": dict(B_X=1.0, B_Y=2.0),
    "joint_ssp": dict(B_X=1.0, B_Y=2.0),
    "precond_gd": dict(B0=1.0, C=1.0, T=10),
    "subsample_aggregate": dict(R_b=1.0, block_size=50),
    "ops": dict(B_X=1.0, B_Y=2.0),
    "adaops": dict(B_X=1.0, B_Y=2.0),
    "objpert": dict(B_X=1.0, B_Y=2.0, C=2.0),
    "noisy_sgd": dict(B_X=1.0, B_Y=2.0, C=2.0, passes=1, batch=1000),  # one full-batch step: a quick accountant call
    "sheffet_jl": dict(B_X=1.0, B_Y=2.0, r=50),
    "boosted_adassp": {},  # tuning-free: the rules of (n, d, ε, δ)
    "precond_gd_free": {},
    "precond_gd_adaptive": {},
    "hessian_mixing": {},
    "tukey_em": {},
    "blocks_ols": {},
    "diffprivlib": dict(B_X=1.0, B_Y=2.0),
    "opendp_ssp": dict(B_X=1.0, B_Y=2.0),
    "sample_mean": {},
    "top_s_mean": {},
    "peeling": dict(R=2.0),
    "frank_wolfe": dict(R=2.0, radius=2.5, T=30),
    "dp_mean": dict(R=2.0),
    "karwa_vadhan": dict(sigma=1.0, R_range=10.0),
    "iht": dict(T=10, eta0=0.5),
    "dp_iht": dict(T=5, eta0=0.5, R=2.0, C=3.0, c_x=1.0),
    "frank_wolfe_lasso": dict(radius=2.0, T=10, c_x=1.0, R=2.0),
    "glm_mle": {},
    "dp_glm": dict(sigma_x=1.0),
    "sparse_glm_iht": dict(T=10, eta0=0.5),
    "dp_sparse_glm": dict(sigma_x=1.0),
    "btl_mle": {},
    "dp_btl": {},
    "fourier": dict(K=5),
    "dp_fourier": {},
    "dp_fourier_laplace": {},
    "dpsl_kt": dict(c_lambda=1.0, c_x=2.0),
    "dpsl_kt_paper": dict(c_lambda=1.0, beta_tilde=1 / 3),
    "dp_ight": dict(T=10, eta=0.5, c_x=2.0, B_y=2.0, radius=2.0),
    "two_stage": {},
}
# the interval procedures whose own releases the sensitivity fuzzer checks beside the estimator's: every method of
# dpcost.inference.PROCEDURES with a route that adds a release (the SSP family's delta and bootstrap: the residual
# sum of squares, sensitivity R²), with the residual clip R of the interval (R = B_Y by default; others make R a
# bound of its own for the records to sit on); the blocks route adds none (test_sensitivity_fuzz.py checks the list)
INTERVALS = {"ssp": {}, "adassp": {"R": 1.5}, "joint_ssp": {"R": 3.0}}
INTERVALS["blocks_ols"] = {}  # its censored route: the blocks' mean square and censored fractions (no options)
# keys TUNING gives although they have a default in code (None there: required by the squared loss of PARAMS)
GIVEN_OPTIONAL = {"dp_ight": {"B_y", "radius"}}
# the defaults in code, pinned: a changed default changes every result that relies on it
DEFAULTS = {
    "noisy_gd": {"B": None},
    "noisy_truncated_ols": {"noise": "derived"},
    "adassp": {"rho": 0.05},
    "joint_ssp": {"ratio": 1.0, "kappa": 1.0, "rho": 0.05},
    "precond_gd": {"R": None, "f0": 0.2, "alpha": 1.0, "eta": 1.0, "average": 1, "floor": 0.1, "rho": 0.05},
    "ops": {"B": 1.0, "rho": 0.05},
    "adaops": {"rho": 0.05},
    "boosted_adassp": {
        "B_X": None,
        "R": None,
        "T": None,
        "gram_share": 0.3,
        "kappa": 1.0,
        "rho": 0.05,
        "raw_residuals": True,
    },  # fmt: skip
    "hessian_mixing": {"B_X": None, "C": None, "T": 6, "k": None, "share": 0.3, "reuse_sketch": False},
    "precond_gd_free": {
        "B0": None,
        "C": None,
        "T": None,
        "f0": 0.2,
        "alpha": 1.0,
        "eta": 1.0,
        "floor": 0.1,
        "rho": 0.05,
    },
    "precond_gd_adaptive": {
        "T": 6,
        "clip_updates": 2,
        "f_rows": 0.05,
        "f0": 0.15,
        "f_clip": 0.1,
        "average": 2,
        "alpha": 1.0,
        "eta": 0.7,
        "floor": 0.1,
        "rho": 0.05,
    },
    "tukey_em": {"block_size": None, "ptr_share": 0.4},
    "karwa_vadhan": {"beta": 0.05, "range_fraction": 0.5},
    "iht": {"R": None, "C": None},
    "dp_iht": {"B": None},
    "glm_mle": {"family": "logistic", "ridge": 1e-6, "max_iter": 200, "tol": 1e-10},
    "dp_glm": {"family": "logistic", "T": None, "eta0": None, "R": None, "B": None, "psi_bound": None, "beta0": None},
    "sparse_glm_iht": {"family": "logistic", "R": None, "psi_bound": None},
    "dp_sparse_glm": {"family": "logistic", "T": None, "eta0": None, "R": None, "B": None, "psi_bound": None},
    "btl_mle": {"gamma": None, "c0": 1.0, "tol": 1e-10},
    "dp_btl": {"gamma": None, "c0": 1.0, "sensitivity": "degree", "d_max": None, "tol": 1e-10},
    "fourier": {"T": None},
    "dp_fourier": {"K": None, "T": None, "mechanism": "gaussian", "alpha": 1, "c1": 1.0, "sigma": 1.0},
    "dp_fourier_laplace": {"K": None, "T": None, "alpha": 1, "c1": 1.0, "sigma": 1.0},
    "dpsl_kt": {"residual_clip": 1.0, "tol": 0.01, "eta2": 1.0, "T2": 100},
    "dpsl_kt_paper": {"K": 1.0, "residual_clip": 1.0, "eta1": 1.0, "T1": 100, "eta2": 1.0, "T2": 100},
    "dp_ight": {"B_y": None, "radius": None},
    "two_stage": {
        "blocks": 50,
        "block_iters": 10,
        "share": 0.5,
        "B_X": 1.0,
        "residual_clip": 1.0,
        "c_lambda": 1.0,
        "tol": 0.01,
    },
}
# n_items: the items of tiny("ranking"); X_public: public features beside tiny("sparse_learning") (d = 5)
PARAMS = {"s": 3, "n_items": 8, "loss": "squared", "X_public": np.random.default_rng(5).uniform(-1, 1, (40, 5))}
# private only under its paper's assumptions, whatever the calibration: its plans are recorded as unproven
UNPROVEN = {"dpsl_kt_paper"}
# a plan's (n, d) where it is not (1000, 5): BTL's n is the number of items, with one coordinate each (d = n);
# the Fourier projection's design is one-dimensional
PLAN_SIZE = {"ranking": (1000, 1000), "nonparametric": (1000, 1)}
# the neighbouring relation a plan records where it is not "replace one record": BTL's record is one item's outcomes
NEIGHBOURS = {"dp_btl": "replace one record (a record: all comparison outcomes of one item; graph and n public)"}


def needs_missing_peer(m) -> bool:
    return m.peer is not None and not peers.available()[m.peer]


def tiny(family):
    if family == "regression":
        X, y, _ = synthetic_regression(n=60, d=3, seed=4)
        return X, y
    rng = np.random.default_rng(4)
    if family == "glm":  # logistic: x in [−1, 1]^4 (σ_x = 1 clips nothing), y in {0, 1}
        X = rng.uniform(-1, 1, size=(60, 4))
        return X, (rng.random(60) < 1 / (1 + np.exp(-X @ np.array([1.5, -1.0, 0.0, 0.5])))).astype(float)
    if family == "ranking":  # an Erdős–Rényi comparison graph on n_items items and BTL outcomes: (edges, y)
        n = PARAMS["n_items"]
        edges = btl.comparison_graph(n, 0.7, rng)
        return edges, btl.btl_outcomes(np.linspace(-0.8, 0.8, n), edges, rng)
    if family == "sparse_learning":  # a sparse linear model on 5 features (the public ones: PARAMS["X_public"])
        X = rng.uniform(-1, 1, size=(60, 5))
        return X, X @ np.array([1.0, -1.0, 0.0, 0.5, 0.0]) + rng.normal(0, 0.3, 60)
    if family == "nonparametric":  # X in [0, 1], shape (n,); Y = f(X) + noise
        X = rng.uniform(0, 1, 60)
        return X, np.sin(2 * np.pi * X) + rng.normal(0, 0.3, 60)
    mu = np.array([1.5, 0.0, -1.5, 0.0, 0.0, 0.0])
    return (np.clip(np.round(mu + rng.normal(0, 0.7, size=(60, 6))), -2, 2),)


def estimate_shape(m, data, privacy, tuning) -> tuple[int]:
    """θ̂'s shape: (d,) for a design of d columns; BTL: one coordinate per item; Fourier: K coefficients (K from
    the tuning, or, where None, the one the private estimator's plan resolves)."""
    if m.family == "ranking":
        return (PARAMS["n_items"],)
    if m.family == "nonparametric":
        if tuning["K"] is not None:
            return (tuning["K"],)
        return (m.make_plan(privacy, len(data[1]), 1, tuning, PARAMS).parameters["K"],)
    return (data[0].shape[1],)
