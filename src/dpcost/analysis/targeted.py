"""Targeted attacks on a regression analysis (issue 39; docs/methods.md, "Targeted attacks"): per method, m and target
row, the informed adversary's reconstruction of the row and the LiRA-style membership test of
:mod:`dpcost.attacks.targeted`, beside the ceiling (ε, δ)-DP puts on the test.

The design attacked is the analysis's, with an intercept column prepended (:func:`with_intercept`): the workflow's
fits have none (the response is centred), and without a coordinate of the row the adversary knows, an OLS release
is explained by a one-parameter family of rows (:mod:`dpcost.attacks.reconstruction`) — the closed form would have
nothing to recover. So every method here, OLS and private, is fitted on (1, x): the same rows, constants and (ε, δ)
as the error curves, one coordinate more; its releases are this experiment's own, never the error curves'.

Random streams (:func:`dpcost.analysis.streams.rng_for`, the config seed): targets ``(dataset, "targeted",
"targets")``; shadow rows ``(dataset, "targeted", "rows", m, target, split, i, side)``, shared by every method; shadow
noise adds the method; the reconstruction's subsample ``(dataset, "targeted", "reconstruction", m, target)`` and its
release's noise ``(…, "recon-noise", method, m, target)``.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..attacks.reconstruction import reconstruct_by_matching, reconstruct_ols, relative_error
from ..attacks.targeted import (
    BLOCK_FROM,
    Releases,
    block_size,
    leverage,
    lira,
    ols_releases,
    one_by_one,
    partition_of,
    pick_targets,
    shadow_cost,
    shadow_rows,
    subsample_grams,
)
from ..dp.privacy import Privacy
from ..errors import ConfigError, DataError
from ..estimators.base import clip_rows, clipped_table
from ..estimators.registry import METHODS, Method
from ..estimators.ssp import clipped_sums
from ..progress import Progress
from .streams import rng_for

log = logging.getLogger("targeted")

COLUMNS = (
    "method",
    "m",
    "epsilon",
    "delta",
    "target",
    "kind",
    "leverage",
    "auc",
    "auc_se",
    "tpr_fpr0001",
    "tpr_fpr001",
    "epsilon_lb",
    "auc_ceiling",
    "tpr_ceiling0001",
    "tpr_ceiling001",
    "within",
    "rel_error",
    "reconstruction",
    "n_train",
    "n_test",
)


def options(
    block: Mapping, methods: Sequence[str], private: Mapping[str, bool], m_grid: Sequence[int], where: str = "targeted"
) -> dict | None:
    """The job arguments of a ``targeted`` block: its methods (null: ``ols`` and every private method of the
    analysis, ``methods``; of a list, those the analysis runs, in its order; a name outside the family is refused)
    and its m (null: :func:`default_m`; a listed one outside it is refused); ``where`` names the block in the
    messages. None when the analysis runs none of the listed methods: nothing to attack (the default list names five
    methods, and an analysis of precond_gd alone must still run)."""
    chosen = block.get("methods")
    unknown = [k for k in chosen or () if k not in private]
    if unknown:
        raise ConfigError(f"{where}.methods: {unknown} are not methods of the family ({sorted(private)})")
    chosen = [k for k in methods if (k == "ols" or private.get(k)) and (chosen is None or k in chosen)]
    if not chosen:
        return None
    ms = block.get("m") or default_m(m_grid, block.get("max_m"))
    outside = [m for m in ms if m not in m_grid]
    if outside:
        raise ConfigError(f"{where}.m: {outside} are not in the analysis's m grid {list(m_grid)}")
    keys = ("k_top", "k_random", "shadows", "test_releases", "reconstruction_nfev", "alpha")
    out = {"methods": list(chosen), "targeted_m": [int(m) for m in ms], **{k: block[k] for k in keys}}
    left = [int(m) for m in m_grid if m > max(ms)] if not block.get("m") else []
    if left:  # said in the job's log and the report's caption
        out["left_out"] = (
            f"m = {', '.join(f'{m:,}' for m in left)} not attacked: {where}.max_m = {block['max_m']:,} bounds the "
            f"attack's cost (set {where}.m to attack it)"
        )
    return out


def default_m(m_grid: Sequence[int], max_m: int | None) -> list[int]:
    """The m a ``targeted`` block with ``m: null`` attacks: the grid's smallest and its largest up to ``max_m`` (None:
    its largest). A public rule of the config, not of the data: the attack's cost grows with m × shadows (every
    shadow and test release is a Gram of min(m, n − m) rows: at m = 10⁶ of a 2,000,000-row table five methods' jobs
    took 485–527 s each), while what it measures at a large m is known in advance — a row's leverage in m rows is
    about its population leverage / m, so the population adversary's AUC tends to ½. When every m of the grid is
    above ``max_m``, the smallest alone."""
    under = [m for m in m_grid if max_m is None or m <= max_m]
    return sorted({min(m_grid), max(under)}) if under else [min(m_grid)]


def with_intercept(X) -> np.ndarray:
    """(1, x) for every row (module docstring: why)."""
    X = np.asarray(X, dtype=float)
    return np.column_stack([np.ones(len(X)), X])


def _fit(method: Method, tuning: Mapping, params: Mapping, privacy):
    def fit(X, y, rng):
        return np.asarray(
            method.estimate(X, y, privacy=privacy, rng=rng, tuning=dict(tuning), params=dict(params))[0], dtype=float
        )

    return fit


def from_sums(method: Method) -> tuple[Callable, tuple[str, str]] | None:
    """How a private method's release reads only the clipped sums (X'X, X'y) of its rows: (its release from them,
    ``f(G, b, m, privacy=…, rng=…, **tuning)`` → β; the tuning keys of its row-norm and |y| bounds): its registry
    entry's ``sums`` (:mod:`dpcost.estimators.sums`: the SSP family, and noisy GD, whose updates are Gβ − h); None for
    a method that reads more (it is refitted)."""
    if method.sums is None:
        return None
    return method.sums.release, (method.sums.row, method.sums.out)


def sums_releases(X, y, method: Method, *, privacy, chunk: int = 16, **tuning) -> Releases:
    """The release of a method of :func:`from_sums` on each subsample, from its clipped sums (``subsample_grams`` of
    the clipped table): the method's release, its sums rounded in another order. The cost of a shadow is its Gram (at
    m > n/2, of the rows left out), not a fit of m rows."""
    release, (row, out) = from_sums(method)
    Z = clipped_table(X, y, tuning[row], tuning[out], names=(row, out))

    def fit(rows, rngs):
        out, k = [], 0
        for G in subsample_grams(Z, rows, chunk=chunk):
            for g in G:
                out.append(release(g[:-1, :-1], g[:-1, -1], rows.shape[1], privacy=privacy, rng=rngs[k], **tuning))
                k += 1
        return np.array(out)

    return fit


def _sums_model(method: Method, X_rest, y_rest, tuning: Mapping, privacy):
    """A method of :func:`from_sums`: its noiseless release for a candidate row appended to the known rows, from the
    known rows' clipped sums: O(d²) per evaluation instead of a fit of m rows. None for other methods (the matching
    attack then refits)."""
    how = from_sums(method)
    if how is None:
        return None
    release, (row, out) = how
    B_row, B_out = tuning[row], tuning[out]
    G, b = clipped_sums(X_rest, y_rest, B_row, B_out)
    m = len(y_rest) + 1

    def fit_with(x, yt):
        xc, yc = clip_rows(x[None, :], B_row)[0], float(np.clip(yt, -B_out, B_out))  # as clip_design clips every row
        return release(G + np.outer(xc, xc), b + xc * yc, m, privacy=privacy, rng=np.random.default_rng(0), **tuning)

    return fit_with


def _reconstruct(Xi, y, t, m, method, tuning, params, privacy, *, seed, dataset, nfev) -> tuple[float, str]:
    """(relative error, attack) of the informed adversary on target ``t`` in a subsample of m rows holding it."""
    sub = shadow_rows(len(y), m, t, True, rng_for(seed, dataset, "targeted", "reconstruction", m, t))
    rest = sub[sub != t]
    if not method.private:
        beta = np.linalg.lstsq(Xi[sub], y[sub], rcond=None)[0]
        try:
            x_hat, y_hat = reconstruct_ols(Xi[rest], y[rest], beta)
        except DataError:  # the target on the fitted plane: not identified
            return np.nan, "closed form (not identified)"
        return relative_error(x_hat, y_hat, Xi[t], y[t]), "closed form"
    p_m = privacy.at(m)
    release = _fit(method, tuning, params, p_m)(
        Xi[sub], y[sub], rng_for(seed, dataset, "targeted", "recon-noise", method.name, m, t)
    )
    noiseless = dataclasses.replace(p_m, epsilon=1e9, calibration="tight", sampler="float-unsafe", on_invalid="warn")
    model = _fit(method, tuning, params, noiseless)
    fit_with = _sums_model(method, Xi[rest], y[rest], tuning, noiseless)
    rec = reconstruct_by_matching(
        release,
        Xi[rest],
        y[rest],
        lambda X, yy: model(X, yy, np.random.default_rng(0)),
        max_nfev=nfev,
        fit_with=fit_with,
    )
    return relative_error(rec.x, rec.y, Xi[t], y[t]), "matching"


def run_targeted(
    Xi,
    y,
    method: Method,
    *,
    tuning_by_m: Mapping[int, Mapping],
    params: Mapping,
    privacy: Privacy,
    seed: int,
    dataset: str,
    targeted_m: Sequence[int],
    k_top: int,
    k_random: int,
    shadows: int,
    test_releases: int,
    reconstruction_nfev: int,
    alpha: float,
    reconstruct_private: bool = True,
) -> pd.DataFrame:
    """One method's rows of targeted.csv (:data:`COLUMNS`): at every m of ``targeted_m`` and every target
    (:func:`~dpcost.attacks.targeted.pick_targets` on the design with its intercept, the same for every method), the
    LiRA test (:func:`dpcost.attacks.targeted.lira`: ``shadows`` per side fit it, ``test_releases`` per side score
    it) and the informed reconstruction (OLS: closed form; a private method: the matching attack against its noiseless
    counterpart, ``reconstruction_nfev`` iterations per start; ``reconstruct_private`` False leaves it out —
    it costs about as much as the test — with ``rel_error`` NaN and ``reconstruction`` "not run"). ``tuning_by_m``:
    the method's constants at each m. ``Xi``: the design with its intercept column, :func:`with_intercept`'s (what the
    attack reads; a caller that then drops its design holds one copy of the table, not two)."""
    Xi, y = np.asarray(Xi, dtype=float), np.asarray(y, dtype=float)
    if Xi.ndim != 2 or not (Xi[:, 0] == 1.0).all():
        raise ValueError("run_targeted reads the design with its intercept column first (with_intercept(X))")
    n = len(y)
    h = leverage(Xi)
    targets, kinds = pick_targets(Xi, k_top, k_random, rng_for(seed, dataset, "targeted", "targets"), h=h)
    rng_of = functools.partial(rng_for, seed, dataset)
    # the LiRA test's settings and the reconstruction's, the same at every m and target
    test = {
        "identity": ("targeted", method.name),
        "rng_of": rng_of,
        "n_train": shadows,
        "n_test": test_releases,
        "alpha": alpha,
    }
    reconstruction = {"seed": seed, "dataset": dataset, "nfev": reconstruction_nfev}
    per_side = shadows + test_releases
    progress = _progress(
        f"{dataset}, {method.name}: targeted attacks", n, Xi.shape[1], targeted_m, len(targets), per_side
    )
    rows = []
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PRIVACY WARNING")
        for m in targeted_m:
            if not Xi.shape[1] + 2 <= m <= n - 1:
                continue  # no IN/OUT pair of subsamples (m = n), or too few rows to fit
            tuning = tuning_by_m.get(m, {})
            p_m = privacy.at(m)
            releases, eps = _releases(Xi, y, method, tuning, params, privacy, p_m)
            partition = _partition(n, m, rng_of, progress)
            counted = _counted(releases, progress, shadow_cost(n, m, Xi.shape[1] + 1))
            for t, kind in zip(targets, kinds, strict=True):
                t = int(t)
                r = lira(counted, n, m, t, delta=p_m.delta, epsilon=eps, partition=partition, **test)
                err, how = np.nan, "not run"
                if reconstruct_private or not method.private:
                    err, how = _reconstruct(Xi, y, t, m, method, tuning, params, privacy, **reconstruction)
                progress.advance(2 * m)
                rows.append(
                    {
                        **r,
                        "method": method.name,
                        "m": m,
                        "epsilon": np.nan if eps is None else eps,
                        "target": t,
                        "kind": kind,
                        "leverage": h[t],
                        "rel_error": err,
                        "reconstruction": how,
                    }
                )
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "within"])
    return with_verdict(table)[list(COLUMNS)]


def _progress(what: str, n: int, p: int, targeted_m: Sequence[int], targets: int, per_side: int) -> Progress:
    """The job's progress in rows gathered: per target at m, 2 × (shadows + test releases) shadows of
    :func:`~dpcost.attacks.targeted.shadow_cost` rows each (a Gram of its m rows, of the n − m left out, or of its
    blocks) and about 2m for the reconstruction; with shadows by blocks, the n rows of the blocks' Grams once per m."""
    ms = [m for m in targeted_m if p + 2 <= m <= n - 1]
    blocks = sum(n for m in ms if block_size(n, m) > 1)
    total = blocks + targets * sum(2 * per_side * shadow_cost(n, m, p + 1) + 2 * m for m in ms)
    return Progress(what, max(total, 1), unit="rows gathered")


def _partition(n: int, m: int, rng_of, progress: Progress):
    """The partition the shadows at m are drawn by (:func:`~dpcost.attacks.targeted.partition_of`), said in the log
    and its block Grams counted in ``progress``; None where they are uniform m-subsets."""
    partition = partition_of(n, m, rng_of)
    if partition is not None:
        log.info("%s", blocks_line(n, m, partition.b))
        progress.advance(n)  # the blocks' Grams, made with the first shadows
    return partition


def blocks_line(n: int, m: int, b: int) -> str:
    """What the log says of shadows drawn by blocks (:class:`~dpcost.attacks.targeted.Partition`)."""
    q, r = divmod(m, b)
    part = f" and the first {r:,} rows of one more" if r else ""
    return (
        f"m = {m:,}: each shadow is {q:,} blocks of {b:,} rows{part}, of one random partition of the {n:,} rows "
        f"(cluster sampling above {BLOCK_FROM:,} rows: its Gram a sum of block Grams; docs/methods.md, "
        '"Targeted attacks")'
    )


def _counted(releases: Releases, progress: Progress, rows_each: int) -> Releases:
    """``releases`` counting each batch of subsamples in ``progress``."""

    def counted(rows, rngs):
        out = releases(rows, rngs)
        progress.advance(len(rows) * rows_each)
        return out

    return counted


def _releases(Xi, y, method: Method, tuning: Mapping, params: Mapping, privacy: Privacy, p_m: Privacy) -> tuple:
    """(releases, ε) of ``method`` at m, what the attack draws shadow releases from: a private method's from each
    shadow's sums where it releases from them, else one fit per shadow; OLS's closed form (ε None)."""
    if method.private and from_sums(method):  # each shadow's release from its sums
        releases = sums_releases(Xi, y, method, privacy=p_m, **tuning)
        eps = privacy.epsilon
    elif method.private:
        fit = _fit(method, tuning, params, p_m)
        releases, eps = one_by_one(lambda r, g, fit=fit: fit(Xi[r], y[r], g)), privacy.epsilon
    else:
        releases, eps = ols_releases(Xi, y), None
    return releases, eps


def with_verdict(table: pd.DataFrame) -> pd.DataFrame:
    """``within``: for a private release, its AUC ≤ the ceiling + 2 s.e. and ε_lb ≤ ε (the attack found nothing the
    guarantee forbids); empty for a non-private one."""
    ok = (table.auc <= table.auc_ceiling + 2 * table.auc_se) & (table.epsilon_lb <= table.epsilon)
    return table.assign(within=pd.Series(ok, dtype="boolean").where(table.epsilon.notna()))


def exposed(table: pd.DataFrame) -> pd.DataFrame:
    """The rows where the targeted attack tells IN from OUT: AUC above ½ by more than 2 standard errors."""
    if table.empty:
        return table
    return table[table.auc > 0.5 + 2 * table.auc_se]


def _label(name: str) -> str:
    return METHODS[name].label if name in METHODS else name


def exposure_note(table: pd.DataFrame) -> str | None:
    """One sentence on what the targeted attack sees (None: nothing), for the score attack's caption: the most
    exposed row, its method, m and AUC."""
    hit = exposed(table)
    if hit.empty:
        return None
    top = hit.sort_values(["auc", "leverage"], ascending=False).iloc[0]
    return (
        f"The targeted attack does see rows the average hides: row {int(top.target)} "
        f"(leverage {top.leverage:.3g}) under {_label(top.method)} at m = {int(top.m):,}, AUC {top.auc:.2f} "
        "(targeted.png)."
    )
