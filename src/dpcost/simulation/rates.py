"""The minimax rates of Cai, Wang & Zhang (2021) drawn on the simulation's curves, one multiplicative constant fitted
per curve, and the table of slopes and of the cost of privacy (``results/simulation/rates.csv``).

Rates of the ℓ2 error (the square roots of the papers' squared-error rates; constants unknown):
mean, OLS             σ √(d/n + d² log(1/δ)/(n²ε²))
sparse mean           σ √(s log d/n + (s log d)² log(1/δ)/(n²ε²))
sparse regression     σ √(s log d/n + (s log d)²/(n²ε²))
Non-private curves get the first term alone.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def rate(problem: str, private: bool, *, n: float, d: float, s: float, sigma: float, epsilon: float, delta: float):
    """The ℓ2 minimax rate of ``problem`` (up to a constant); ``private`` adds the privacy term."""
    k = s * math.log(d) if problem.startswith("sparse") else d
    stat = k / n
    if not private:
        return sigma * math.sqrt(stat)
    log_delta = 1.0 if problem == "sparse_ols" else math.log(1 / delta)
    return sigma * math.sqrt(stat + k**2 * log_delta / (n**2 * epsilon**2))


def _slope(n, v) -> float:
    return float(np.polyfit(np.log(n), np.log(v), 1)[0]) if len(n) > 1 else float("nan")


BASELINE = {"mean": "sample_mean", "sparse_mean": "top_s_mean", "ols": "ols", "sparse_ols": "iht"}


def rates_table(summary: pd.DataFrame, *, sigma: float, epsilon: float, delta_at) -> pd.DataFrame:
    """One row per (experiment, method, variant, n): the mean error, the rate, the fitted c·rate, the curve's
    constant c (geometric mean of error/rate over the grid) and its fit (largest |log(error / c·rate)|), the curve's
    fitted log–log slope in n beside the theory's over the same grid, and the cost of privacy: the mean error over
    the non-private counterpart's on the same draws (same problem, n and d; NaN where none ran)."""
    base = summary[summary.method.isin(BASELINE.values())].set_index(["problem", "n", "d"])["mean"]
    base = base[~base.index.duplicated()]
    out = []
    for (exp, method, variant), g in summary.groupby(["experiment", "method", "variant"], sort=False):
        g = g.sort_values("n")
        private = bool(g.private.iloc[0]) or variant == "R=none"  # R=none: the private algorithm, scaled to the data
        sizes = zip(g.problem, g.n, g.d, g.s.fillna(0), strict=True)
        r = np.array([rate(p, private, n=n, d=d, s=s, sigma=sigma, epsilon=epsilon, delta=delta_at(n))
                      for p, n, d, s in sizes])  # fmt: skip
        log_c = float(np.mean(np.log(g["mean"].to_numpy()) - np.log(r)))
        fitted = np.exp(log_c) * r
        worst = float(np.max(np.abs(np.log(g["mean"].to_numpy() / fitted))))
        slope, theory = _slope(g.n, g["mean"]), _slope(g.n, r)
        for (_, row), ri, fi in zip(g.iterrows(), r, fitted, strict=True):
            key = (row.problem, row.n, row.d)
            out.append({"experiment": exp, "problem": row.problem, "method": method, "variant": variant,
                        "private": bool(row.private), "n": int(row.n), "d": int(row.d), "mean": row["mean"],
                        "rate": ri, "fitted": fi, "constant": math.exp(log_c), "fit_max_log_residual": worst,
                        "slope": slope, "theory_slope": theory,
                        "cost_ratio": row["mean"] / base[key] if key in base.index and method not in BASELINE.values()
                        else np.nan})  # fmt: skip
    return pd.DataFrame(out)
