"""The score attack on the real analyses: how traceable each released estimate is, private and not.

For every (method, m, rep) the release is the very estimate of the error curves — the same subsample, tuning and
noise stream as :func:`dpcost.analysis.engine.run_grid` — and it is attacked with the score attack (2.3) of Cai,
Wang & Zhang, "Score Attack" §2.2, made practical as its §7 says: θ is replaced by a reference estimate from records
disjoint from the release (:meth:`candidates` of the designs). The candidates: k members of the subsample and k
records outside it; for a sparse release only the released support enters the statistic, as in the sparse score
attack (5.2): A = ⟨(M − θ)_supp(M), S_θ(z)_supp(M)⟩ (the zeros outside it carry no information about z).

Output: one row per candidate (method, m, rep, member, statistic), and per (method, m) the AUC and TPR at FPR 1 % and
5 % (mean and standard error over repetitions) and ε_lb, the Clopper–Pearson ε lower bound of the best threshold on
the statistics pooled over repetitions (held-out choice of the threshold, :func:`attack_epsilon_lower_bound`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..attacks.score import attack_auc, attack_epsilon_lower_bound, dp_auc_ceiling, tpr_at_fpr
from ..dp.privacy import Privacy
from ..errors import DataError
from ..estimators.registry import Method
from .engine import Draw, releases

STATISTIC_COLUMNS = ("method", "m", "rep", "member", "statistic")
SUMMARY_COLUMNS = (
    "method",
    "m",
    "n_reps",
    "n_candidates",
    "auc",
    "auc_se",
    "tpr_fpr01",
    "tpr_fpr01_se",
    "tpr_fpr05",
    "tpr_fpr05_se",
    "epsilon_lb",
    "auc_ceiling",
    "delta",
    "epsilon",
    "private",
)


def attack_statistics(estimate: np.ndarray, support, members: np.ndarray, nonmembers: np.ndarray, theta: np.ndarray):
    """(member statistics, non-member statistics): ⟨M − θ, S⟩ over every coordinate, or over the released support
    ``support`` of a sparse release (its selected indices; None: dense)."""
    diff = np.asarray(estimate, dtype=float) - theta
    if support is not None:
        keep = np.asarray(support, dtype=np.int64)
        return members[:, keep] @ diff[keep], nonmembers[:, keep] @ diff[keep]
    return members @ diff, nonmembers @ diff


class ScoreAttack:
    """The attack statistics of every candidate (:data:`STATISTIC_COLUMNS`) of the releases it is shown, those of
    repetitions 0 … ``reps`` − 1: called with each :class:`~dpcost.analysis.engine.Draw` of the error curves'
    pass (``run_grid(..., on_release=attack)``), so the estimate job scores its attack without re-creating a
    release; ``cap`` bounds the members (and non-members) per repetition."""

    def __init__(self, design, method: Method, *, reps: int, seed: int, dataset: str, cap: int):
        self.design, self.name, self.reps, self.cap = design, method.name, reps, cap
        self.seed, self.dataset = seed, dataset
        self._ms, self._reps, self._members, self._stats = [], [], [], []

    def __call__(self, draw: Draw) -> None:
        if draw.rep >= self.reps:
            return
        cand = self.design.candidates(draw.rows, draw.m, draw.rep, seed=self.seed, dataset=self.dataset, cap=self.cap)
        a, b = attack_statistics(draw.estimate, draw.support, cand.members, cand.nonmembers, cand.theta)
        self._ms.append(np.full(a.size + b.size, draw.m))
        self._reps.append(np.full(a.size + b.size, draw.rep))
        self._members.append(np.r_[np.ones(a.size, bool), np.zeros(b.size, bool)])
        self._stats.append(np.r_[a, b])

    def table(self) -> pd.DataFrame:
        cat = np.concatenate
        return pd.DataFrame(
            {
                "method": self.name,
                "m": cat(self._ms),
                "rep": cat(self._reps),
                "member": cat(self._members),
                "statistic": cat(self._stats),
            }
        )


def run_attack(design, method: Method, *, seed: int, dataset: str, cap: int, **grid) -> pd.DataFrame:
    """The attack statistics of every candidate, one row each (:data:`STATISTIC_COLUMNS`), for repetitions
    0 … reps − 1 of the error curves, re-created: :func:`dpcost.analysis.engine.releases` gives the very same
    releases (``grid``: its other arguments — tuning, params, m_grid, reps, privacy, tuning_by_m). ``cap`` bounds
    the members (and non-members) per repetition."""
    attack = ScoreAttack(design, method, reps=grid["reps"], seed=seed, dataset=dataset, cap=cap)
    for draw in releases(design, method, seed=seed, dataset=dataset, **grid):
        attack(draw)
    return attack.table()


def _mean_se(values: Sequence[float]) -> tuple[float, float]:
    v = np.asarray(values, dtype=float)
    return float(v.mean()), (float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else np.nan)


def summarise_attack(
    stats: pd.DataFrame, *, privacy: Privacy, private: Mapping[str, bool], alpha: float = 0.05
) -> pd.DataFrame:
    """Per (method, m): AUC and TPR at FPR 1 % and 5 % — per repetition, then mean and standard error over
    repetitions — and ε_lb on the statistics pooled over repetitions at δ(m), confidence 1 − α, for every method
    (the non-private ones at the private methods' δ(m), so the columns compare), and ``auc_ceiling``, the largest
    AUC any (ε, δ(m))-DP release allows (:func:`dp_auc_ceiling`). ``private``: method → bool."""
    missing = [c for c in STATISTIC_COLUMNS if c not in stats.columns]
    if missing or stats.empty:
        raise DataError(f"attack statistics: empty, or missing the columns {missing}")
    rows = []
    for (method, m), df in stats.groupby(["method", "m"], sort=True):
        # sorted by repetition once, then a slice per repetition: pandas' indexing per group was most of the job's
        # time (housing: 4,000 repetitions)
        rep, member = df["rep"].to_numpy(), df["member"].to_numpy(dtype=bool)
        statistic = df["statistic"].to_numpy(dtype=float)
        order = np.argsort(rep, kind="stable")
        cuts = np.flatnonzero(np.diff(rep[order])) + 1
        per_rep = []
        for s, mem in zip(np.split(statistic[order], cuts), np.split(member[order], cuts), strict=True):
            a, b = s[mem], s[~mem]
            per_rep.append((attack_auc(a, b), tpr_at_fpr(a, b, 0.01), tpr_at_fpr(a, b, 0.05)))
        auc, t01, t05 = (_mean_se(col) for col in np.array(per_rep).T)
        delta = privacy.at(int(m)).delta
        eps_lb = attack_epsilon_lower_bound(statistic[member], statistic[~member], delta, alpha=alpha, seed=int(m))
        is_private = bool(private[method])
        rows.append(
            (
                method,
                int(m),
                len(per_rep),
                int(member.sum()) // len(per_rep),
                *auc,
                *t01,
                *t05,
                eps_lb,
                dp_auc_ceiling(privacy.epsilon, delta),
                delta,
                privacy.epsilon if is_private else np.nan,
                is_private,
            )
        )
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
