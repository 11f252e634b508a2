"""The plan data model: what a private estimator releases, and what each release spends.

Every private estimator asks its plan function (in its own module) for its noise scales. A plan is computed from
public quantities only — the :class:`~dpcost.dp.spec.Privacy` specification, n, d and the tuning constants, never
the data — and records each release: mechanism, sensitivity and its norm, noise scale, count and the budget charged.
The workflow writes the plans an estimate job used beside its table, and the privacy ledger is built from those
files, so the ledger and the estimator cannot disagree.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .mechanisms import check_positive
from .spec import Privacy


@dataclass(frozen=True)
class Release:
    """One kind of noisy release, made ``count`` times."""

    mechanism: str
    sensitivity: float | None  # None where the mechanism has none (a posterior sample calibrated to the data)
    norm: str
    noise_scale: float | None
    count: int = 1
    epsilon: float | None = None  # budget charged per release, where the calibration assigns one
    delta: float | None = None
    sampler: str | None = None  # how the noise is drawn (dpcost.dp.samplers.describe); None: not an additive release


@dataclass(frozen=True)
class PrivacyPlan:
    method: str
    epsilon: float
    delta: float
    calibration: str
    composition: str
    assumption: str
    releases: tuple[Release, ...] = field(default_factory=tuple)
    neighbours: str = "replace one record"
    parameters: dict = field(default_factory=dict)  # public constants the estimator derives from the budget
    proven: bool = True  # False for a paper's procedure kept for reproduction whose guarantee has a gap
    # the relation the releases' sensitivities are stated for, where it is not the plan's: "add_remove" for a
    # mechanism proven for add/remove neighbours run at the group-privacy budget under replace-one
    # (:func:`add_remove_budget`), where a replaced record is one removal and one addition
    releases_stated_for: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def add_remove_budget(epsilon: float, delta: float) -> tuple[float, float]:
    """(ε₀, δ₀) such that an (ε₀, δ₀)-DP mechanism under add/remove-one neighbours is (ε, δ)-DP under replace-one.

    Replacing a record is removing it and adding another: group privacy over the path Z → Z⁻ → Z′ gives
    (2ε₀, (1 + e^{ε₀})δ₀). Used for the mechanisms whose proofs exist only for add/remove (OPS, AdaOPS) and whose
    sensitivities cannot simply be doubled.
    """
    Privacy(epsilon, delta)  # validates
    e0 = epsilon / 2
    return e0, delta / (1 + math.exp(e0))


def check_bounds(**bounds: float) -> None:
    """Public bounds must be finite and > 0: a zero bound would mean zero noise (cf. diffprivlib issue #105)."""
    for name, v in bounds.items():
        check_positive(name, v)
