"""Choosing the sparsity s — Cai, Wang & Zhang (2021), §5.2 and Figure 2: the printed procedure, and two whose
privacy argument holds at the stated (ε, δ).

Variants (the ``variant`` column), for the sparse estimators ``peeling`` (Alg. 3.3) and ``dp_iht`` (Alg. 4.2), over
the public grid S = {round(f·s*)} of ``simulation.s_tuning.grid`` (s*/2 … 2s*):

``s=true``              s = s*, the truth, at (ε, δ): the paper's reference curve.
``s=cv_expmech``        as printed (§5.2): 5-fold cross-validation over S; each record's validation loss truncated at
                        a private quantile of the losses; s chosen by the exponential mechanism on the truncated CV
                        errors; the final fit with ŝ on all records. Every fit, the quantile and the selection each run
                        at the stated ε — the paper says no more — so the whole spends far more (below).
``s=private_selection`` private selection from private candidates (Liu & Talwar 2019; Papernot & Steinke 2022,
                        :mod:`dpcost.dp.selection`): a random number K of runs, each picks s uniformly from S, fits on
                        all records and scores the fit with Laplace noise; the best run's fit is released. The whole is
                        (ε, δ)-DP by the accountant, at the stated (ε, δ).
``s=composed_selection`` every s of S fitted and scored once, the best score's fit released: |S| private runs
                        composed by RDP, at the stated (ε, δ). With |S| = 7 the selection theorems' overhead (log E[K]
                        and log(1/γ) terms) costs about as much as composing all seven (docs/methods.md, "Choosing s").

**The privacy argument of ``s=cv_expmech``** (the paper gives none; replace-one neighbours, n public). Treat the 5|S|
fold fits as released: each record is in the training folds of 4|S| of them, each (ε, δ)-DP. Given the fits, a
record's validation loss is a function of that record alone, so (i) the private quantile of one loss per record
(the middle candidate's) has rank sensitivity 1 and is (ε_q, 0)-DP, and (ii) with every loss truncated to [0, L],
each CV error moves by at most L/n, so the exponential mechanism (report-noisy-max at 2L/(nε_sel)) is (ε_sel, 0)-DP.
The final fit on all records is (ε, δ)-DP. Basic composition: (4|S| + 1)ε + ε_q + ε_sel and (4|S| + 1)δ — with
|S| = 7 and ε_q = ε_sel = ε, 31ε: at the stated ε = 0.5 the procedure is (15.5, 29δ)-DP. The argument is complete
but its total is not the stated level; a tight accountant lowers it, not to ε. Conditioning on the fits is
needed: without it, replacing a training record changes the fits and every other record's loss, and the CV error's
sensitivity is L, not L/n.

**The private selection's candidate run** Q: pick s uniformly from S; fit at (ε_f, δ) with the noise calibrated for
max S selections (``s_max``, so one noise law covers every candidate: its RDP is at most that of the largest);
score the fit with a centred loss of bounded sensitivity plus Laplace noise at ε_s = ``score_share``·ε_c (below).
Q's RDP is that of :func:`dpcost.dp.accountant.pure_releases_event` over the candidates' plans and the score;
ε_c = ε_f + ε_s is the largest for which the accountant's RepeatAndSelect bound (Papernot & Steinke, Theorem 2)
stays ≤ the stated ε at the stated δ.

Scores (larger is better; the centring removes the records' own norm, which does not depend on s):
sparse mean        2⟨X̄_R, μ̂⟩ − ‖μ̂‖² = ‖X̄_R‖² − ‖X̄_R − μ̂‖²   (X̄_R the coordinate-truncated mean),
                   sensitivity 2·(2R/n)·‖μ̂‖₁ (replacing a record moves X̄_R by ≤ 2R/n per coordinate);
sparse regression  (1/n) Σ_i (2ỹ_i t_i − t_i²), t_i = x̃_i'β̂, ỹ = Π_R(y), x̃ clipped to c_x/√s as in the fit:
                   |t_i| ≤ a = (c_x/√s)‖β̂‖₁, each term lies in [−2Ra − a², 2Ra]: sensitivity (4Ra + a²)/n.
Both sensitivities use the fit, which Q has already made (adaptive composition: the Laplace step's RDP is the same
for every fit). A zero fit has a constant score, released without noise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..dp.accountant import dpa, largest_below, pure_releases_event, rdp_epsilon
from ..dp.mechanisms import laplace_mechanism, report_noisy_max
from ..dp.privacy import Privacy
from ..dp.quantiles import geometric_grid, private_quantile
from ..dp.selection import check_eta, check_mean_K, repeat_and_select_epsilon, select_best
from ..errors import ConfigError, PrivacyError
from ..estimators.registry import Method
from ..estimators.sparse_regression import iht_coordinate_bound

S_VARIANTS = ("s=true", "s=cv_expmech", "s=private_selection", "s=composed_selection")
TUNABLE = ("peeling", "dp_iht")  # the sparse estimators whose s the variants choose
LOSS_GRID = geometric_grid(smallest=1e-3, largest=1e7, ratio=1.05)  # public candidates for the truncation level L


@dataclass(frozen=True)
class STuning:
    """The config block ``simulation.s_tuning``, checked."""

    grid: tuple[float, ...]
    folds: int
    loss_quantile: float
    mean_K: float
    eta: float
    score_share: float

    @classmethod
    def from_config(cls, block: Mapping) -> STuning:
        where = "simulation.s_tuning"
        grid = tuple(float(f) for f in block["grid"])
        if not grid or min(grid) <= 0:
            raise ConfigError(f"{where}.grid must be a non-empty list of factors > 0, got {list(grid)}")
        folds, q, share = int(block["folds"]), float(block["loss_quantile"]), float(block["score_share"])
        if folds < 2:
            raise ConfigError(f"{where}.folds must be at least 2, got {folds}")
        if not 0 < q < 1 or not 0 < share < 1:
            raise ConfigError(f"{where}: loss_quantile and score_share must lie in (0, 1), got {q} and {share}")
        try:
            mean_K, eta = check_mean_K(float(block["mean_K"])), check_eta(float(block["eta"]))
        except PrivacyError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        return cls(grid, folds, q, mean_K, eta, share)

    def candidates(self, s_star: int, d: int) -> tuple[int, ...]:
        """S = the distinct round(f·s*) within 1 … d, ascending."""
        return tuple(sorted({min(d, max(1, round(f * s_star))) for f in self.grid}))


# ---- losses and scores -----------------------------------------------------------------------------------------


def validation_loss(problem: str, data: tuple, est: np.ndarray) -> np.ndarray:
    """Each record's squared loss under a fit: ‖x_i − μ̂‖² (means) or (y_i − x_i'β̂)² (regressions)."""
    if problem == "sparse_mean":
        return ((data[0] - est) ** 2).sum(axis=1)
    return (data[1] - data[0] @ est) ** 2


def score_value(problem: str, data: tuple, est: np.ndarray, *, s: int, tuning: Mapping) -> tuple[float, float]:
    """The centred score of a fit and its replace-one sensitivity given the fit (module docstring)."""
    R = float(tuning["R"])
    n = len(data[0])
    if problem == "sparse_mean":
        value = 2 * float(np.clip(data[0], -R, R).mean(axis=0) @ est) - float(est @ est)
        return value, 4 * R * float(np.abs(est).sum()) / n
    bound = iht_coordinate_bound(float(tuning["c_x"]), s)
    support = np.flatnonzero(est)
    t = np.clip(data[0][:, support], -bound, bound) @ est[support]
    a = bound * float(np.abs(est).sum())
    return float(np.mean(2 * np.clip(data[1], -R, R) * t - t**2)), (4 * R * a + a * a) / n


def score(
    problem: str,
    data: tuple,
    est: np.ndarray,
    *,
    s: int,
    tuning: Mapping,
    epsilon: float,
    privacy: Privacy,
    rng: np.random.Generator,
) -> float:
    """:func:`score_value` plus Laplace noise at ε: (ε, 0)-DP given the fit. A zero fit's score is 0 for every data
    set: released as is."""
    if not np.any(est):
        return 0.0
    value, sens = score_value(problem, data, est, s=s, tuning=tuning)
    return float(laplace_mechanism(value, sensitivity=sens, epsilon=epsilon, rng=rng, sampler=privacy.sampler))


# ---- the printed procedure -------------------------------------------------------------------------------------


def cv_expmech(
    method: Method,
    problem: str,
    data: tuple,
    *,
    grid: Sequence[int],
    s_tuning: STuning,
    privacy: Privacy,
    tuning_at: Callable[[int], dict],
    stream: Callable[..., np.random.Generator],
):
    """§5.2 as printed (module docstring). Returns (estimate, ŝ)."""
    n = len(data[0])
    fold = np.arange(n) % s_tuning.folds  # public: the records are exchangeable draws
    losses = np.empty((len(grid), n))
    for k in range(s_tuning.folds):  # each fold's split copied once, for every candidate (noise streams name (s, k))
        train, val = fold != k, fold == k
        fit_on, check_on = tuple(_read_only(a[train]) for a in data), tuple(a[val] for a in data)
        for j, s in enumerate(grid):
            est, _ = method.estimate(
                *fit_on, privacy=privacy, rng=stream("cv-fit", s, k), tuning=tuning_at(s), params={"s": s}
            )
            losses[j, val] = validation_loss(problem, check_on, est)
        del fit_on, check_on
    L = private_quantile(
        losses[len(grid) // 2],
        q=s_tuning.loss_quantile,
        candidates=LOSS_GRID,
        privacy=privacy,
        rng=stream("cv-truncation"),
    )
    cv = np.minimum(losses, L).mean(axis=1)
    j = report_noisy_max(
        -cv, sensitivity=L / n, epsilon=privacy.epsilon, rng=stream("cv-selection"), sampler=privacy.sampler
    )
    est, _ = method.estimate(
        *data, privacy=privacy, rng=stream("final", grid[j]), tuning=tuning_at(grid[j]), params={"s": grid[j]}
    )
    return est, grid[j]


def _read_only(a: np.ndarray) -> np.ndarray:
    """A fold's copy, read-only: its candidates' fits check and clip it once (``estimators.base.frozen``)."""
    a.flags.writeable = False
    return a


def cv_expmech_total(privacy: Privacy, J: int, folds: int) -> tuple[float, float]:
    """What :func:`cv_expmech` spends, by the argument of the module docstring (basic composition): the (folds − 1)·J
    fold fits each record is trained in and the final fit at (ε, δ), the quantile and the selection at ε each."""
    fits = (folds - 1) * J + 1
    return (fits + 2) * privacy.epsilon, fits * privacy.delta


# ---- private selection from private candidates -----------------------------------------------------------------


@dataclass(frozen=True)
class SelectionBudget:
    fit: Privacy  # each candidate's fit
    score_epsilon: float
    s_max: int | None  # the selections every candidate's noise is calibrated for (None: its own s)
    epsilon: float  # the whole selection's ε at the stated δ, by the accountant (≤ the stated ε)


def selection_budget(
    method: Method,
    n: int,
    d: int,
    *,
    grid: Sequence[int],
    s_tuning: STuning,
    privacy: Privacy,
    tuning_at: Callable[[int], dict],
    compose: bool,
) -> SelectionBudget:
    """The largest candidate budget ε_c (fit (1 − score_share)·ε_c, score score_share·ε_c) whose selection stays
    within the stated (ε, δ): bisection on ε_c, the accountant's ε increasing in it. ``compose``: every candidate
    runs once (:func:`composed_selection`), RDP composition of the |S| candidates' own events; otherwise
    :func:`private_selection`'s RepeatAndSelect bound on the dominating event, noise calibrated for max S.
    ``privacy`` must be resolved at n (δ a number)."""
    lib = dpa()[0]
    s_max = None if compose else max(grid)
    tun = {s: tuning_at(s) for s in grid}

    def fit_at(eps_c: float) -> Privacy:
        return replace(privacy, epsilon=(1 - s_tuning.score_share) * eps_c)

    def total(eps_c: float) -> float:
        plans = [method.make_plan(fit_at(eps_c), n, d, tun[s], {"s": s, "s_max": s_max}) for s in grid]
        noise = lib.LaplaceDpEvent(1 / (s_tuning.score_share * eps_c))
        if compose:
            return rdp_epsilon([pure_releases_event([p], (noise,)) for p in plans], privacy.delta)
        return repeat_and_select_epsilon(
            pure_releases_event(plans, (noise,)), s_tuning.mean_K, s_tuning.eta, privacy.delta
        )

    hi = privacy.epsilon
    while total(hi) <= privacy.epsilon:
        hi *= 2
    eps_c = largest_below(total, privacy.epsilon, hi * 1e-6, hi, rtol=1e-4)
    spent = total(eps_c)
    if not spent <= privacy.epsilon:
        raise PrivacyError(f"no candidate budget keeps the selection of s within epsilon={privacy.epsilon}")
    return SelectionBudget(fit_at(eps_c), s_tuning.score_share * eps_c, s_max, spent)


def _candidate(method, problem, data, s, budget, tuning_at, rng):
    """One candidate: the fit at s and its noisy score, both from ``rng``."""
    tun = tuning_at(s)
    params = {"s": s} if budget.s_max is None else {"s": s, "s_max": budget.s_max}
    est, _ = method.estimate(*data, privacy=budget.fit, rng=rng, tuning=tun, params=params)
    return est, score(problem, data, est, s=s, tuning=tun, epsilon=budget.score_epsilon, privacy=budget.fit, rng=rng)


def composed_selection(
    method: Method,
    problem: str,
    data: tuple,
    *,
    grid: Sequence[int],
    budget: SelectionBudget,
    tuning_at: Callable[[int], dict],
    stream: Callable[..., np.random.Generator],
):
    """Every s of the grid fitted and scored once; the best noisy score's fit released (post-processing of |S|
    private releases, composed by the accountant). Returns (estimate, ŝ)."""
    runs = [_candidate(method, problem, data, s, budget, tuning_at, stream("candidate", s)) for s in grid]
    j = int(np.argmax([sc for _, sc in runs]))  # ties: the smallest s
    return runs[j][0], grid[j]


def private_selection(
    method: Method,
    problem: str,
    data: tuple,
    *,
    grid: Sequence[int],
    s_tuning: STuning,
    budget: SelectionBudget,
    tuning_at: Callable[[int], dict],
    stream: Callable[..., np.random.Generator],
):
    """Private selection of s (module docstring). Returns (estimate, ŝ); a Poisson K = 0 releases the zero vector
    and ŝ = 0."""
    chosen = select_best(
        lambda j, k: _candidate(method, problem, data, grid[j], budget, tuning_at, stream("candidate", k)),
        len(grid),
        s_tuning.mean_K,
        s_tuning.eta,
        stream("selection"),
    )
    if chosen.output is None:
        return np.zeros(data[0].shape[1]), 0
    return chosen.output, grid[chosen.j]
