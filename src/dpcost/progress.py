"""Progress of a long job, with an estimate of the time left, in its log.

A job's work is counted in units whose cost is roughly constant (e.g. rows fitted: a repetition at m costs about m
units for the methods here, whose fits are linear in m). The time left is the elapsed time scaled by the work still to
do over the work done, so the estimate is exact for a job whose cost per unit is constant and settles within a few
lines otherwise.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

EVERY = 30.0  # seconds between two lines: a line a minute or two is readable in a log, and costs nothing


def duration(seconds: float) -> str:
    """``12 s``, ``4 min 05 s``, ``2 h 03 min``."""
    s = int(round(max(seconds, 0.0)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class Progress:
    """Log ``what: 40% (1,200,000 of 3,000,000 rows fitted), 1 min 05 s elapsed, about 1 min 38 s left`` at most every
    ``every`` seconds as work is done. ``total`` > 0 is the job's work in ``unit``; ``clock`` is injectable for
    tests."""

    def __init__(
        self,
        what: str,
        total: float,
        *,
        unit: str = "rows fitted",
        every: float = EVERY,
        clock: Callable[[], float] = time.monotonic,
        logger: logging.Logger = log,
    ):
        if not total > 0:
            raise ValueError(f"total work must be > 0, got {total}")
        self.what, self.total, self.unit, self.every = what, float(total), unit, float(every)
        self.clock, self.log = clock, logger
        self.start = self.last = clock()
        self.done = 0.0

    def left(self) -> float | None:
        """Seconds left, from the rate so far; None before any work is done."""
        if self.done <= 0:
            return None
        return (self.clock() - self.start) * (self.total - self.done) / self.done

    def line(self) -> str:
        elapsed = self.clock() - self.start
        left = self.left()
        tail = "" if left is None else f", about {duration(left)} left"
        return (
            f"{self.what}: {self.done / self.total:.0%} ({self.done:,.0f} of {self.total:,.0f} {self.unit}), "
            f"{duration(elapsed)} elapsed{tail}"
        )

    def advance(self, work: float) -> None:
        """Count ``work`` more units done; log a line if ``every`` seconds passed since the last one (none at the
        end: the caller's own closing line says it is done)."""
        self.done = min(self.done + float(work), self.total)
        now = self.clock()
        if now - self.last >= self.every and self.done < self.total:
            self.last = now
            self.log.info(self.line())
