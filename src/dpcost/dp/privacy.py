"""The privacy specification of a release: one value instead of five loose keywords.

A :class:`Privacy` says what a release must satisfy — (ε, δ) under a neighbouring relation — and how its noise is
calibrated. δ may be a formula in n (``"10/n^1.1"``); :meth:`Privacy.at` resolves it for the sample size the
estimator sees. Every private estimator and every plan takes one.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import asdict, dataclass, replace

from ..errors import PrivacyError
from .delta import parse_delta, resolve_delta
from .samplers import check_sampler

CALIBRATIONS = ("paper", "tight")
ON_INVALID = ("refuse", "warn")
NEIGHBOUR_RELATIONS = {"replace": "replace one record", "add_remove": "add or remove one record"}


@dataclass(frozen=True)
class Privacy:
    """(ε, δ)-DP under ``neighbours``, noise calibrated by ``calibration``.

    epsilon      ε > 0.
    delta        a number in (0, 1), or a formula in n such as ``"10/n^1.1"`` (resolved by :meth:`at`).
    calibration  ``"paper"``: the papers' own formulas and basic composition (for reproduction);
                 ``"tight"``: exact accounting (dp-accounting), the same guarantee with less noise.
    on_invalid   a ``paper`` calibration used outside the range where its proof holds: ``"refuse"`` raises
                 :class:`PrivacyError`, ``"warn"`` runs with a PRIVACY WARNING.
    neighbours   ``"replace"`` (replace one record; the Cost of Privacy papers) or ``"add_remove"``.
    sampler      ``"exact"``: floating-point-safe discrete noise on a grid (:mod:`dpcost.dp.samplers`);
                 ``"float-unsafe"``: numpy's float samplers, NOT private on a computer, for speed comparisons only.
    """

    epsilon: float
    delta: float | str
    calibration: str = "paper"
    on_invalid: str = "refuse"
    neighbours: str = "replace"
    sampler: str = "exact"

    def __post_init__(self):
        e = self.epsilon
        if not (isinstance(e, numbers.Real) and not isinstance(e, bool) and math.isfinite(e) and e > 0):
            raise PrivacyError(f"epsilon must be a finite number > 0, got {e!r}")
        if isinstance(self.delta, str):
            parse_delta(self.delta)  # a formula that does not parse fails here, once
        elif not (isinstance(self.delta, numbers.Real) and not isinstance(self.delta, bool) and 0 < self.delta < 1):
            raise PrivacyError(f"delta must lie strictly between 0 and 1, got {self.delta!r}")
        if self.calibration not in CALIBRATIONS:
            raise PrivacyError(f"calibration must be one of {CALIBRATIONS}, got {self.calibration!r}")
        if self.on_invalid not in ON_INVALID:
            raise PrivacyError(f"on_invalid must be 'refuse' or 'warn', got {self.on_invalid!r}")
        if self.neighbours not in NEIGHBOUR_RELATIONS:
            raise PrivacyError(f"neighbours must be one of {tuple(NEIGHBOUR_RELATIONS)}, got {self.neighbours!r}")
        check_sampler(self.sampler)

    def at(self, n: int) -> Privacy:
        """The same specification with δ a number: the formula evaluated at sample size n (a number is kept).

        Under add/remove neighbours n is itself private, so a δ that is a formula in n is refused: the noise it
        calibrates would differ between neighbours of sizes n and n + 1 (and so would the grid the release lies on).
        """
        if not isinstance(self.delta, str):
            return self
        if self.neighbours == "add_remove":
            raise PrivacyError(
                f"delta {self.delta!r} is a formula in n, but under add/remove neighbours n is private: "
                "give delta as a number"
            )
        return replace(self, delta=resolve_delta(self.delta, n))

    @property
    def relation(self) -> str:
        """The neighbouring relation in words, as the ledger states it."""
        return NEIGHBOUR_RELATIONS[self.neighbours]

    def to_dict(self) -> dict:
        return asdict(self)

    def outside_validity(self, message: str, remedy: str = "use calibration 'tight'") -> None:
        """A procedure outside its proven range (a ``paper`` calibration, or a paper's proof that takes n as public
        under add/remove neighbours): refuse, or warn loudly, as ``on_invalid`` says."""
        if self.on_invalid == "refuse":
            raise PrivacyError(f"{message}; {remedy}, or on_invalid 'warn' to run it anyway")
        warnings.warn("PRIVACY WARNING: " + message, RuntimeWarning, stacklevel=3)
