"""The registry: the single source of method names, labels, families and tuning defaults.

One entry per estimator (a :class:`~.method.Method`). A method's tuning keys and their defaults are read from its
estimator's signature (the keyword-only parameters other than ``privacy`` and ``rng`` and the analysis parameters
such as ``s``), so they exist once, in code; the config, the schema and the docs are tested against them. Its plan
function has the uniform signature ``plan(privacy, n, d, **tuning)`` and is stored here directly.
"""

from __future__ import annotations

from ..errors import ConfigError
from . import (
    blocks_ols,
    boosted_adassp,
    btl,
    dp_ight,
    dp_mean,
    frank_wolfe,
    glm,
    hessian_mixing,
    knowledge_transfer,
    noisy_gd,
    noisy_sgd,
    objpert,
    ols,
    peers,
    posterior,
    precond_gd,
    precond_gd_adaptive,
    precond_gd_free,
    sheffet,
    sobolev,
    sparse_mean,
    sparse_regression,
    ssp,
    subsample_aggregate,
    truncated_ols,
    tukey_em,
    two_stage,
)
from .cost import Cost
from .method import ANALYSIS_PARAMS, CALIBRATION_PARAMS, Method  # noqa: F401 (re-exported)

FAMILIES = ("regression", "mean", "glm", "ranking", "nonparametric", "sparse_learning")
# where a method comes from, for the headline figure: the non-private baselines, the Cost of Privacy papers'
# estimators and the comparators they name, Wang (2018)'s field, the estimators that go beyond them, peer libraries
GROUPS = ("baseline", "paper", "comparator", "wang", "new", "peer")

_M = Method
# in the label of a method whose noise is drawn by floating-point samplers (dpcost.dp.samplers.describe_float), so
# that every figure and table says its guarantee is NOT PROVEN (floating point)
FLOAT = "float noise, not proven"
# One entry per method: name, family, label (short name and citation: ledgers, tables, legends), estimator, plan,
# ``what`` — one phrase saying what the method does, which the figures' legends print after the label — and every
# other fact about it (Method: its interval routes and their constants, its measured cost, whether it is a
# reference). ``cost``: Cost(plan, fit, a, b, c), CPU seconds per privacy plan, per fit and per row fitted a + b·d +
# c·d² at design width d, fitted to the jobs of workflow runs on real tables of d = 5 to 49 (2-core AMD EPYC;
# measurements/work_estimate.py, docs/performance.md "The run's work, estimated"). ``blocks_rows_mu``: the
# measurements in dpcost.inference.blocks. The block is laid out by hand, two lines an entry (ruff format would
# spread each over ten).
# fmt: off
METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        # linear regression
        _M("ols", "regression", "OLS (non-private)", ols.ols, group="baseline", cost=Cost(0, 0, 0, 1.1e-8, 3.6e-10, 0),
           what="least squares, no noise"),
        _M("noisy_gd", "regression", "Noisy GD (Cai, Wang & Zhang 2021, Alg. 4.1)", noisy_gd.noisy_gradient_descent_ols,
           noisy_gd.noisy_gd_plan, batch=noisy_gd.noisy_gd_batch, cost=Cost(0.0085, 0, 0, 3.1e-9, 0, 0),
           sums=noisy_gd.NOISY_GD_SUMS,
           truncation="R", what="projected gradient descent, y truncated, Gaussian noise every step"),
        _M("noisy_truncated_ols", "regression", "Noisy truncated OLS (Cai, Wang & Zhang 2019, §4.3.1)",
           truncated_ols.noisy_truncated_ols, truncated_ols.noisy_truncated_ols_plan,
           batch=truncated_ols.noisy_truncated_ols_batch, cost=Cost(0, 0, 0, 5.1e-9, 7.6e-11, 0),
           what="ridge-stabilised OLS on truncated y, plus Gaussian noise"),
        _M("ssp", "regression", "SSP (Wang 2018)", ssp.ssp, ssp.ssp_plan, group="wang",
           intervals=("delta", "bootstrap", "blocks"), statistics=ssp.ssp_statistics, blocks_rows_mu=13.0,
           cost=Cost(0.015, 0, 0, 3.6e-9, 0, 5.4e-7), sums=ssp.SSP_SUMS,
           what="noisy X'X and X'y, then solved"),
        _M("adassp", "regression", "AdaSSP (Wang 2018, Alg. 2)", ssp.adassp, ssp.adassp_plan, group="wang",
           intervals=("delta", "bootstrap", "blocks"), statistics=ssp.adassp_statistics, blocks_rows_mu=300.0,
           cost=Cost(0.0033, 0.00011, 0, 5.3e-9, 0, 1.1e-6), reference=True, sums=ssp.ADASSP_SUMS,
           what="noisy X'X and X'y, with a ridge chosen privately"),
        _M("joint_ssp", "regression", "Joint SSP, ridge by post-processing", ssp.joint_ssp, ssp.joint_ssp_plan,
           group="new", intervals=("delta", "bootstrap", "blocks"), statistics=ssp.joint_ssp_statistics,
           blocks_rows_mu=400.0, cost=Cost(0.0013, 2.8e-5, 1.4e-8, 1.7e-9, 0, 4.5e-7), sums=ssp.JOINT_SSP_SUMS,
           what="X'X and X'y in one noisy release, the ridge read from it"),
        _M("precond_gd", "regression", "Preconditioned clipped noisy GD", precond_gd.precond_gd,
           precond_gd.precond_gd_plan, group="new", batch=precond_gd.precond_gd_batch,
           blocks=precond_gd.precond_gd_blocks,
           intervals=("blocks",), blocks_rows_mu=150.0, cost=Cost(0.0014, 3.3e-6, 4e-8, 1.6e-8, 0, 0),
           what="a few clipped noisy gradient steps, whitened by a noisy X'X"),
        _M("subsample_aggregate", "regression", "Subsample-and-aggregate OLS (Nissim et al. 2007)",
           subsample_aggregate.subsample_aggregate, subsample_aggregate.subsample_aggregate_plan, group="new",
           batch=subsample_aggregate.subsample_aggregate_batch, cost=Cost(0, 0, 0, 2.1e-8, 8.3e-9, 0),
           what="OLS on disjoint blocks, clipped and averaged, plus noise"),
        _M("ops", "regression", f"OPS-Balanced (Wang 2018, App. F; {FLOAT})", posterior.ops, posterior.ops_plan,
           group="wang",
           cost=Cost(0, 0, 4.5e-8, 5.7e-9, 0, 5.4e-7), what="one draw from a ridge regression's posterior"),
        _M("adaops", "regression", f"AdaOPS (Wang 2018, Alg. 1; {FLOAT})", posterior.adaops, posterior.adaops_plan,
           group="wang",
           cost=Cost(0.027, 0, 0, 8.4e-9, 1.6e-11, 8.4e-7), what="one posterior draw, its ridge chosen privately"),
        _M("objpert", "regression", f"ObjPert (Kifer et al. 2012; {FLOAT})", objpert.objpert, objpert.objpert_plan,
           group="wang", batch=objpert.objpert_batch,
           cost=Cost(0, 0, 4e-8, 6.3e-9, 0, 2.4e-6),
           what="ridge regression with a random linear term in its objective"),
        _M("noisy_sgd", "regression", "Noisy SGD (Bassily et al. 2014)", noisy_sgd.noisy_sgd_ols,
           noisy_sgd.noisy_sgd_plan, group="comparator", batch=noisy_sgd.noisy_sgd_batch,
           cost=Cost(0, 0, 8.4e-7, 8.5e-8, 0, 0),
           what="stochastic gradient steps with Gaussian noise"),
        _M("sheffet_jl", "regression", f"JL projection OLS (Sheffet 2017, Alg. 1; {FLOAT})", sheffet.sheffet_jl_ols,
           sheffet.sheffet_jl_plan, group="comparator",
           cost=Cost(0, 0, 5.4e-9, 6.7e-9, 0, 3.9e-7), what="OLS on a random projection of [X, y]"),
        # tuning-free: every constant a rule of (n, d, ε, δ) in code (tuning_mode none)
        _M("boosted_adassp", "regression", "Boosted AdaSSP (Tang et al. 2024), data-free rules",
           boosted_adassp.boosted_adassp, boosted_adassp.boosted_adassp_plan, group="new", tuning_free=True,
           blocks=boosted_adassp.boosted_adassp_blocks,
           intervals=("blocks",), blocks_rows_mu=50.0, cost=Cost(0, 0, 2.1e-7, 6.8e-9, 0, 6.6e-6),
           what="noisy X'X as preconditioner, then noisy clipped-residual steps"),
        _M("precond_gd_free", "regression", "Preconditioned clipped noisy GD, data-free rules",
           precond_gd_free.precond_gd_free, precond_gd_free.precond_gd_free_plan, group="new", tuning_free=True,
           blocks=precond_gd_free.precond_gd_free_blocks,
           intervals=("blocks",), blocks_rows_mu=13.0, cost=Cost(0, 0, 3.1e-7, 1.2e-8, 1.8e-10, 4.4e-6),
           what="preconditioned noisy GD, constants set by rules of n, d, ε, δ"),
        _M("precond_gd_adaptive", "regression", "Preconditioned clipped noisy GD, clip bounds chosen privately",
           precond_gd_adaptive.precond_gd_adaptive, precond_gd_adaptive.precond_gd_adaptive_plan, group="new",
           tuning_free=True, blocks=precond_gd_adaptive.precond_gd_adaptive_blocks,
           intervals=("blocks",), blocks_rows_mu=300.0, cost=Cost(0.057, 0, 1.2e-7, 2.2e-8, 8.2e-11, 0),
           what="preconditioned noisy GD, clip bounds from private quantiles"),
        _M("hessian_mixing", "regression", f"Iterative Hessian Mixing (Lev et al. 2026; {FLOAT})",
           hessian_mixing.hessian_mixing, hessian_mixing.hessian_mixing_plan, group="new", tuning_free=True,
           cost=Cost(0, 0, 2.3e-7, 6.7e-9, 9.7e-11, 0),
           what="Newton steps with randomly sketched Hessians and noisy gradients"),
        _M("tukey_em", "regression", f"TukeyEM (Amin et al. 2023, Alg. 2; {FLOAT})", tukey_em.tukey_em,
           tukey_em.tukey_em_plan, group="new", tuning_free=True,
           cost=Cost(0, 0.0032, 0, 0, 6.6e-9, 1.6e-5),
           what="OLS on blocks, then a private Tukey-depth median of them"),
        _M("blocks_ols", "regression", "Blocks of unclipped OLS, censored private mean (after Evans et al. 2023)",
           blocks_ols.blocks_ols, blocks_ols.blocks_ols_plan, group="new", tuning_free=True,
           intervals=("censored",), cost=Cost(0, 0.0014, 0, 6.1e-8, 1.4e-9, 1.8e-6),
           what="jackknifed OLS on many blocks, censored at a private centre, averaged, noised"),
        # sparse linear regression (the simulation study)
        _M("iht", "regression", "IHT (non-private)", sparse_regression.iht, support="returned", group="baseline",
           simulation_only=True, also=("sparse_learning",),
           published={"e2006": ((0.8541, None), (0.8541, None), (0.8541, None), (0.8541, None), (0.8541, None)),
                      "rcv1": ((0.0645, None), (0.0645, None), (0.0645, None), (0.0645, None))},
           what="iterative hard thresholding, no noise"),
        _M("dp_iht", "regression", "DP IHT (Cai, Wang & Zhang 2021, Alg. 4.2)", sparse_regression.dp_iht,
           sparse_regression.dp_iht_plan, support="returned", simulation_only=True,
           truncation="R", what="hard thresholding with noisy gradients and a noisy top-s choice"),
        _M("frank_wolfe_lasso", "regression", "Private Frank-Wolfe LASSO (Talwar et al. 2015)",
           sparse_regression.private_frank_wolfe_regression, sparse_regression.frank_wolfe_regression_plan,
           support="nonzero", group="comparator", simulation_only=True, also=("sparse_learning",),
           published={"e2006": ((4.471, 0.239), (2.004, 0.155), (1.535, 0.14), (1.206, 0.095), (1.099, 0.082)),
                      "rcv1": ((0.1381, 0.0045), (0.1134, 0.0041), (0.0978, 0.0032), (0.0882, 0.0033))},
           what="Frank-Wolfe over the ℓ1 ball, each vertex chosen privately"),
        _M("diffprivlib", "regression", f"diffprivlib LinearRegression (peer; {FLOAT})", peers.diffprivlib_ols,
           peers.diffprivlib_plan, peer="diffprivlib", group="peer", cost=Cost(0, 0, 7.9e-7, 0, 0, 0),
           reference=True,
           what="IBM's library: noisy coefficients of the squared loss"),
        _M("opendp_ssp", "regression", "OpenDP-calibrated SSP (peer)", peers.opendp_ssp_ols, peers.opendp_ssp_plan,
           peer="opendp", group="peer",
           cost=Cost(0.2, 0, 3.1e-8, 0, 0, 0), what="noisy X'X and X'y, the noise calibrated by OpenDP"),
        # mean
        _M("sample_mean", "mean", "Sample mean (non-private)", sparse_mean.sample_mean, group="baseline",
           what="the average, no noise"),
        _M("dp_mean", "mean", "DP mean (Cai, Wang & Zhang 2021, Alg. 3.1)", dp_mean.dp_mean, dp_mean.dp_mean_plan,
           simulation_only=True, truncation="R", what="the clipped average plus Gaussian noise"),
        _M("karwa_vadhan", "mean", "Karwa & Vadhan (2017), Alg. 4", dp_mean.karwa_vadhan_mean,
           dp_mean.karwa_vadhan_mean_plan, group="comparator", simulation_only=True,
           what="a private range from a histogram, then a noisy clipped mean"),
        _M("top_s_mean", "mean", "Top-s sample mean (non-private)", sparse_mean.top_s_sample_mean, support="returned",
           group="baseline", what="the average's s largest coordinates, no noise"),
        _M("peeling", "mean", "DP sparse mean, peeling (Cai, Wang & Zhang 2021, Alg. 3.3)", sparse_mean.dp_sparse_mean,
           sparse_mean.dp_sparse_mean_plan, support="returned",
           truncation="R", what="the clipped average's s largest coordinates, chosen and released with noise"),
        _M("frank_wolfe", "mean", "Private Frank-Wolfe (Talwar et al. 2015)", frank_wolfe.private_frank_wolfe_mean,
           frank_wolfe.frank_wolfe_plan, support="nonzero", group="comparator",
           what="Frank-Wolfe over the ℓ1 ball, each vertex chosen privately"),
        # generalised linear models (Cai, Wang & Zhang, "Score Attack", §3 and §5)
        _M("glm_mle", "glm", "GLM MLE (non-private)", glm.glm_mle, group="baseline", simulation_only=True,
           what="maximum likelihood, no noise"),
        _M("dp_glm", "glm", "DP GLM, noisy GD (Score Attack, Alg. 1)", glm.dp_glm, glm.dp_glm_plan,
           simulation_only=True, what="gradient descent with Gaussian noise every step"),
        _M("sparse_glm_iht", "glm", "Sparse GLM, IHT (non-private)", glm.sparse_glm_iht, support="returned",
           group="baseline", what="hard-thresholded gradient descent, no noise"),
        _M("dp_sparse_glm", "glm", "DP sparse GLM, noisy IHT (Score Attack, Alg. 5)", glm.dp_sparse_glm,
           glm.dp_sparse_glm_plan, support="returned",
           what="hard thresholding with noisy gradients and a noisy top-s choice"),
        # ranking from pairwise comparisons (Score Attack, §4)
        _M("btl_mle", "ranking", "BTL penalised MLE (non-private)", btl.btl_mle, group="baseline",
           simulation_only=True, what="penalised maximum likelihood, no noise"),
        _M("dp_btl", "ranking", "DP BTL, objective perturbation (Score Attack, eq. 4.4)", btl.dp_btl, btl.dp_btl_plan,
           simulation_only=True, what="penalised likelihood with a random linear term"),
        # nonparametric regression over a periodic Sobolev class (Score Attack, §6)
        _M("fourier", "nonparametric", "Fourier projection (non-private)", sobolev.fourier_regression,
           group="baseline", simulation_only=True, what="the first K Fourier coefficients, no noise"),
        _M("dp_fourier", "nonparametric", "DP Fourier projection, Gaussian (Score Attack, §6)",
           sobolev.dp_fourier_regression, sobolev.dp_fourier_regression_plan, simulation_only=True,
           what="the first K Fourier coefficients plus Gaussian noise"),
        _M("dp_fourier_laplace", "nonparametric", "DP Fourier projection, Laplace (Score Attack, §6)",
           sobolev.dp_fourier_laplace, sobolev.dp_fourier_laplace_plan, simulation_only=True,
           what="the first K Fourier coefficients plus Laplace noise"),
        # private sparse learning by knowledge transfer (Wang & Gu 2020) and its rivals; with iht (IGHT, Alg. 2) and
        # frank_wolfe_lasso above
        _M("dpsl_kt", "sparse_learning", "DPSL-KT, provable teacher (Wang & Gu 2020, Alg. 1)",
           knowledge_transfer.dpsl_kt, knowledge_transfer.dpsl_kt_plan, support="nonzero", group="new",
           simulation_only=True, what="a ridge teacher labels public rows with noise; a sparse student fits them"),
        _M("dpsl_kt_paper", "sparse_learning",
           "DPSL-KT as printed (Wang & Gu 2020, Alg. 1; private only under the paper's assumptions)",
           knowledge_transfer.dpsl_kt_paper, knowledge_transfer.dpsl_kt_paper_plan, support="nonzero",
           group="comparator", simulation_only=True,
           published={"e2006": ((1.227, 0.11), (1.178, 0.056), (1.065, 0.054), (0.971, 0.031), (0.952, 0.01)),
                      "rcv1": ((0.1105, 0.0038), (0.0974, 0.0035), (0.0885, 0.0029), (0.0787, 0.0031))},
           what="an IHT teacher labels public rows with noise; a sparse student fits them"),
        _M("dp_ight", "sparse_learning", "DP-IGHT (Wang & Gu 2019)", dp_ight.dp_ight, dp_ight.dp_ight_plan,
           support="nonzero", group="comparator", simulation_only=True,
           published={"e2006": ((3.731, 0.207), (1.687, 0.126), (1.304, 0.035), (1.067, 0.051), (0.968, 0.062)),
                      "rcv1": ((0.1179, 0.0035), (0.1026, 0.0036), (0.0922, 0.0032), (0.0824, 0.0029))},
           what="hard thresholding with Gaussian noise on every gradient"),
        _M("two_stage", "sparse_learning",
           "Two stage: noisy block votes, then a noisy ridge fit (after Kifer et al. 2012)", two_stage.two_stage,
           two_stage.two_stage_plan, support="nonzero", group="comparator", simulation_only=True,
           published={"e2006": ((4.022, 0.159), (1.803, 0.141), (1.326, 0.093), (1.107, 0.103), (1.053, 0.069)),
                      "rcv1": ((0.1272, 0.0044), (0.1061, 0.0038), (0.0949, 0.0035), (0.0866, 0.0031))},
           what="blocks vote privately for s coordinates, then a noisy ridge fit on them"),
    )
}
# fmt: on


def methods_of(family: str, *, simulation: bool = False) -> dict[str, Method]:
    """The methods an analysis of this family can run, in registry order (``simulation``: the simulation study's,
    which include the simulation-only methods)."""
    if family not in FAMILIES:
        raise ConfigError(f"unknown method family {family!r}; expected one of {FAMILIES}")
    return {k: m for k, m in METHODS.items() if family in (m.family, *m.also) and (simulation or not m.simulation_only)}


def get(name: str, family: str | None = None, *, simulation: bool = False) -> Method:
    pool = METHODS if family is None else methods_of(family, simulation=simulation)
    if name not in pool:
        raise ConfigError(f"unknown method {name!r}; available: {sorted(pool)}")
    return pool[name]
