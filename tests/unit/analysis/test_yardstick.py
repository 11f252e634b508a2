"""The yardstick of a cost, checked where the truth is known: finite populations of N rows drawn from a known
superpopulation model, subsampled at m = N/10, N/2 and N as the papers' protocol does. The cost of privacy is the
ratio of a private method's root mean squared error to OLS's, both as estimates of the model's β*. The chosen
yardstick — the superpopulation RMSE, computed from the errors against the full-data fit β_N and the sandwich
variance of β_N (dpcost.analysis.summaries.superpopulation_rmse) — must match that known-truth ratio within Monte
Carlo error at every m, m = N included; the papers' metric (error against β_N) must not: at m = N OLS's error is 0."""

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis.designs import RegressionDesign
from dpcost.analysis.engine import releases
from dpcost.analysis.summaries import summarize, superpopulation_rmse
from dpcost.data.prepare import ols_sampling_variance
from dpcost.dp.privacy import Privacy
from dpcost.estimators.registry import METHODS

BETA = np.array([1.0, -0.5, 0.25])
N, POPULATIONS, REPS = 1000, 120, 4
M = [100, 500, 1000]
PRIVATE = ("adassp", {"B_X": 4.0, "B_Y": 6.0})


def population(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """N rows of the superpopulation: correlated Gaussian x, heteroscedastic noise (so the sandwich matters)."""
    rng = np.random.default_rng([20261127, seed])
    X = rng.standard_normal((N, 3)) @ np.array([[1.0, 0.3, 0.0], [0.0, 1.0, 0.3], [0.0, 0.0, 1.0]])
    y = X @ BETA + (0.5 + np.abs(X[:, 0])) * rng.standard_normal(N)
    return X, y


@pytest.fixture(scope="module")
def study():
    """Per population, method and m: the mean squared error against β* (the known truth) and against β_N, the mean
    error against β_N, and the chosen yardstick's MSE (from dpcost's summarize)."""
    rows = []
    for p in range(POPULATIONS):
        X, y = population(p)
        beta_n = np.linalg.lstsq(X, y, rcond=None)[0]
        tau2 = ols_sampling_variance(X, y, beta_n)
        design = RegressionDesign(X, y, beta_n)
        for name, tuning in (("ols", {}), PRIVATE):
            method = METHODS[name]
            draws = list(
                releases(
                    design,
                    method,
                    tuning=method.resolve_tuning(tuning),
                    params={},
                    m_grid=M,
                    reps=REPS,
                    seed=p,
                    privacy=Privacy(1.0, 1e-5, "tight"),
                    dataset="superpop",
                )
            )
            errors = pd.DataFrame(
                {
                    "method": name,
                    "m": [d.m for d in draws],
                    "error": [np.linalg.norm(d.estimate - beta_n) for d in draws],
                }
            )
            star = pd.Series([np.linalg.norm(d.estimate - BETA) ** 2 for d in draws]).groupby(errors.m).mean()
            summary = summarize(errors, tau2).set_index("m")
            for m in M:
                rows.append({"population": p, "method": name, "m": m, "mse_star": star[m],
                             "mse_n": float((errors[errors.m == m].error ** 2).mean()),
                             "mean_n": float(errors[errors.m == m].error.mean()),
                             "mse_chosen": summary.loc[m, "sp_rmse"] ** 2})  # fmt: skip
    return pd.DataFrame(rows)


def _cells(study: pd.DataFrame, m: int) -> dict[str, np.ndarray]:
    """Per population (rows) at m: each yardstick's numerator and denominator terms, private then OLS."""
    a = study[study.m == m].pivot(index="population", columns="method").sort_index()
    priv = PRIVATE[0]
    return {
        k: np.column_stack([a[col][priv], a[col]["ols"]])
        for k, col in (
            ("truth", "mse_star"),
            ("chosen", "mse_chosen"),
            ("papers_rmse", "mse_n"),
            ("papers_mean", "mean_n"),
        )
    }


def _ratios(cells: dict[str, np.ndarray], pick=slice(None)) -> dict[str, float]:
    """The cost of privacy by each yardstick, pooled over the populations ``pick``: a ratio of RMSEs (of mean errors
    for the papers' mean)."""
    with np.errstate(divide="ignore"):
        out = {k: v[pick].mean(axis=0) for k, v in cells.items()}
        return {k: (v[0] / v[1] if k == "papers_mean" else np.sqrt(v[0] / v[1])) for k, v in out.items()}


@pytest.mark.parametrize("m", M)
def test_the_chosen_ratio_is_the_known_truth_ratio_within_monte_carlo_error(study, m):
    # Monte Carlo error of log(chosen / truth): the bootstrap over populations (the independent units), paired
    cells = _cells(study, m)
    ratio = _ratios(cells)
    rng = np.random.default_rng(m)
    boot = [np.log(r["chosen"] / r["truth"])
            for r in (_ratios(cells, rng.integers(0, POPULATIONS, POPULATIONS)) for _ in range(1000))]  # fmt: skip
    sd = float(np.std(boot, ddof=1))
    assert abs(np.log(ratio["chosen"] / ratio["truth"])) <= 3 * sd, (ratio, sd)
    assert 1.2 < ratio["truth"] < 10  # privacy costs something here, so the check has something to match
    # the papers' metric drifts away as m -> N: at m = N, OLS's error against the full-data fit is 0 (to rounding)
    if m == N:
        assert ratio["papers_rmse"] > 1e6 and ratio["papers_mean"] > 1e6
    if m >= N // 2:
        assert np.log(ratio["papers_rmse"] / ratio["truth"]) > 3 * sd, (ratio, sd)


def test_the_sandwich_is_the_variance_of_the_full_data_fit(study):
    # tr Var(β_N) over populations, against the mean sandwich: the term the yardstick adds back
    fits, tau2 = [], []
    for p in range(POPULATIONS):
        X, y = population(p)
        b = np.linalg.lstsq(X, y, rcond=None)[0]
        fits.append(b)
        tau2.append(ols_sampling_variance(X, y, b))
    spread = float(np.sum(np.var(fits, axis=0, ddof=1)))
    # the sample variance of POPULATIONS fits has relative sd about sqrt(2/(POPULATIONS - 1)) per coordinate
    assert abs(np.mean(tau2) / spread - 1) < 4 * np.sqrt(2 / (POPULATIONS - 1))


def test_superpopulation_rmse_of_a_cell():
    sq = pd.Series([0.01, 0.03, 0.02, 0.02]).groupby([0, 0, 0, 0])
    rmse, se = superpopulation_rmse(sq, 0.05)
    assert rmse.iloc[0] == pytest.approx(np.sqrt(0.02 + 0.05))
    assert se.iloc[0] == pytest.approx(np.std([0.01, 0.03, 0.02, 0.02], ddof=1) / 2 / (2 * rmse.iloc[0]))
    with pytest.raises(ValueError, match="sampling_variance"):
        superpopulation_rmse(sq, float("nan"))
