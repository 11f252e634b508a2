"""What a method's work costs in CPU, measured: a fact of each method's registry entry (``Method.cost``), read by the
start-up estimate of a run's work (:mod:`dpcost.run.workload`; docs/performance.md, "The run's work, estimated")."""

from __future__ import annotations

from typing import NamedTuple


class Cost(NamedTuple):
    """CPU seconds of a method on this project's 2-core machine, fitted to the jobs of workflow runs on tables of
    width d = 5 to 49: ``plan`` per privacy plan it makes (its calibration: once per m of a job, per candidate and m
    of a decoy search, per ε and m of the privacy map), ``fit + e·d²`` per fit beyond its rows (its calls, its noise
    and its work on d × d matrices, which grew as d², not d³, up to d = 74) and ``a + b·d + c·d²`` per row fitted at
    design width d."""

    plan: float
    fit: float
    a: float
    b: float = 0.0
    c: float = 0.0
    e: float = 0.0

    def row(self, d: float) -> float:
        """CPU seconds per row fitted at width ``d``."""
        return self.a + self.b * d + self.c * d * d

    def fits(self, fits: float, rows: float, d: float) -> float:
        """CPU seconds of ``fits`` fits of ``rows`` rows in all, at width ``d`` (no plans)."""
        return fits * (self.fit + self.e * d * d) + rows * self.row(d)
