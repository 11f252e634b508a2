"""The rates of Cai, Wang & Zhang (2021) and of the Score Attack paper drawn on the simulation's curves, one
multiplicative constant fitted per curve and rate shape, and the table of slopes and of the cost of privacy
(``results/simulation/rates.csv``).

Rates of the ℓ2 error (the square roots of the papers' squared-error rates; constants unknown). Each problem has one
shape or two (the ``shape`` column; the first is the figure's dashed line, the second its dotted one):
mean, OLS             ``minimax``    σ √(d/n + d² log(1/δ)/(n²ε²))
sparse mean           ``minimax``    σ √(s log d/n + (s log d)² log(1/δ)/(n²ε²))
sparse regression     ``minimax``    σ √(s log d/n + (s log d)²/(n²ε²))
logistic (GLM)        ``upper``      √(d/n + d² log(1/δ) log⁴n/(n²ε²))                 Alg. 1, Thm 3.2
                      ``lower``      √(d/n + d²/(n²ε²))                                 the lower bound, Thm 3.1
sparse logistic       ``upper``      √(s log d/n + (s log d)² log(1/δ) log³n/(n²ε²))    Alg. 5, Thm 5.2
BTL (n items)         ``printed``    √(1/p + log(1/δ)/(p²ε²))                           Thm 4.2 as printed
                      ``corrected``  √(1/p + n log(1/δ)/ε²)   Prop 4.4 with the true sensitivity √(d_max² + d_max)
                                     ≈ np: σ²/(np²) ≈ n log(1/δ)/ε² on dense graphs (the printed 2√n undercounts)
Sobolev (α), √MISE    ``upper``      σ √(n^{−2α/(2α+1)} + (nε)^{−2α/(α+1)} log n)         Thm 6.2
Non-private curves get the first term alone (one row, the first shape). The knowledge-transfer panels (Wang & Gu
2020, Fig. 2: one n, error against ε) have no rate drawn: the paper's bounds hold up to unspecified constants C₁…C₈.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .problems import PROBLEMS

SHAPE_TEXT = {
    "minimax": "the minimax rate",
    "upper": "the upper bound",
    "lower": "the lower bound's shape",
    "printed": "the rate as printed (Thm 4.2)",
    "corrected": "the rate with the true sensitivity",
}


def rate(
    problem: str,
    private: bool,
    *,
    n: float,
    d: float,
    s: float,
    sigma: float,
    epsilon: float,
    delta: float,
    p: float = math.nan,
    alpha: float = math.nan,
    shape: str | None = None,
) -> float:
    """The ℓ2 rate of ``problem`` (up to a constant) in ``shape`` (default: the problem's first); ``private`` adds
    the privacy term. ``p`` is BTL's comparison probability, ``alpha`` the Sobolev smoothness."""
    shapes = PROBLEMS[problem].shapes
    shape = shape or shapes[0]
    if shape not in shapes:
        raise ValueError(f"{problem} has the rate shapes {shapes}, not {shape!r}")
    log_delta = math.log(1 / delta) if private else 0.0
    if problem == "btl":
        stat = 1 / p
        priv = (log_delta / (p * p) if shape == "printed" else n * log_delta) / epsilon**2 if private else 0.0
        return math.sqrt(stat + priv)
    if problem == "sobolev":
        stat = n ** (-2 * alpha / (2 * alpha + 1))
        priv = (n * epsilon) ** (-2 * alpha / (alpha + 1)) * math.log(n) if private else 0.0
        return sigma * math.sqrt(stat + priv)
    k = s * math.log(d) if problem.startswith("sparse") else d
    stat = k / n
    if not private:
        return (1.0 if problem in ("logistic", "sparse_logistic") else sigma) * math.sqrt(stat)
    if problem == "logistic":
        extra = math.log(1 / delta) * math.log(n) ** 4 if shape == "upper" else 1.0
        return math.sqrt(stat + k**2 * extra / (n**2 * epsilon**2))
    if problem == "sparse_logistic":
        return math.sqrt(stat + k**2 * math.log(1 / delta) * math.log(n) ** 3 / (n**2 * epsilon**2))
    log_delta = 1.0 if problem == "sparse_ols" else math.log(1 / delta)
    return sigma * math.sqrt(stat + k**2 * log_delta / (n**2 * epsilon**2))


def _slope(n, v) -> float:
    return float(np.polyfit(np.log(n), np.log(v), 1)[0]) if len(n) > 1 else float("nan")


# the non-private methods, the yardsticks of cost_ratio
BASELINES = frozenset(p.baseline for p in PROBLEMS.values())
_SAME_DRAWS = ["problem", "n", "d", "p", "alpha"]  # what identifies the draws (with s*, fixed per problem here)


RATE_COLUMNS = [
    "experiment",
    "problem",
    "method",
    "variant",
    "private",
    "epsilon",
    "shape",
    "n",
    "d",
    "p",
    "alpha",
    "mean",
    "rate",
    "fitted",
    "constant",
    "fit_max_log_residual",
    "slope",
    "theory_slope",
    "cost_ratio",
]


def rates_table(summary: pd.DataFrame, *, sigma: float, epsilon: float, delta_at) -> pd.DataFrame:
    """One row per (experiment, method, variant, ε, rate shape, n): the mean error, the rate, the fitted c·rate, the
    curve's constant c (geometric mean of error/rate over the grid) and its fit (largest |log(error / c·rate)|), the
    curve's fitted log–log slope in n beside the theory's over the same grid, and the cost of privacy: the mean error
    over the non-private counterpart's on the same draws (same problem, n, d and setting; NaN where none ran).
    ``epsilon`` and δ are the curve's own (the study's where the summary has none)."""
    summary = summary.copy()
    for col in ("p", "alpha", "epsilon", "delta"):
        if col not in summary:
            summary[col] = np.nan
    keyed = summary.assign(p=summary.p.fillna(-1.0), alpha=summary.alpha.fillna(-1.0))
    base = keyed[keyed.method.isin(BASELINES)].set_index(_SAME_DRAWS)["mean"]
    base = base[~base.index.duplicated()]
    out = []
    groups = summary.groupby(["experiment", "method", "variant", "epsilon"], sort=False, dropna=False)
    for (exp, method, variant, eps), g in groups:
        g = g.sort_values("n")
        private = bool(g.private.iloc[0]) or variant == "R=none"  # R=none: the private algorithm, scaled to the data
        eps = epsilon if pd.isna(eps) else float(eps)
        problem = g.problem.iloc[0]
        for shape in PROBLEMS[problem].shapes if private else PROBLEMS[problem].shapes[:1]:
            sizes = zip(g.n, g.d, g.s.fillna(0), g.p, g.alpha, g.delta, strict=True)
            r = np.array(
                [
                    rate(
                        problem,
                        private,
                        n=n,
                        d=d,
                        s=s,
                        sigma=sigma,
                        epsilon=eps,
                        p=p,
                        alpha=a,
                        shape=shape,
                        delta=delta_at(n) if pd.isna(dl) else dl,
                    )
                    for n, d, s, p, a, dl in sizes
                ]
            )
            log_c = float(np.mean(np.log(g["mean"].to_numpy()) - np.log(r)))
            fitted = np.exp(log_c) * r
            worst = float(np.max(np.abs(np.log(g["mean"].to_numpy() / fitted))))
            slope, theory = _slope(g.n, g["mean"]), _slope(g.n, r)
            for (_, row), ri, fi in zip(g.iterrows(), r, fitted, strict=True):
                key = (
                    row.problem,
                    row.n,
                    row.d,
                    -1.0 if pd.isna(row.p) else row.p,
                    -1.0 if pd.isna(row.alpha) else row.alpha,
                )
                out.append(
                    {
                        "experiment": exp,
                        "problem": row.problem,
                        "method": method,
                        "variant": variant,
                        "private": bool(row.private),
                        "epsilon": row.epsilon,
                        "shape": shape,
                        "n": int(row.n),
                        "d": int(row.d),
                        "p": row.p,
                        "alpha": row.alpha,
                        "mean": row["mean"],
                        "rate": ri,
                        "fitted": fi,
                        "constant": math.exp(log_c),
                        "fit_max_log_residual": worst,
                        "slope": slope,
                        "theory_slope": theory,
                        "cost_ratio": row["mean"] / base[key]
                        if key in base.index and method not in BASELINES
                        else np.nan,
                    }
                )
    return pd.DataFrame(out, columns=RATE_COLUMNS)  # the columns also when no curve has a rate (Figure 5 alone)
