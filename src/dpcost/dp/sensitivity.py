"""Observed sensitivity: each noisy release of a run on D against the same release of a run on a neighbour D′ made
under the same released history, in the norm and against the bound the privacy plan states.

Why this is the right comparison. A release adds noise to a value f(D, past) computed from the data and the earlier
releases; the privacy proof of an adaptive composition bounds ‖f(D, past) − f(D′, past)‖ by the stated sensitivity Δ
for every past. So the run on D records, at the point where each grid release is made
(:meth:`~dpcost.dp.samplers.GridNoise.add`), its pre-noise value and what was released; the run on D′, with the same
generator, records its own pre-noise values and gets D's released values back (the replay), so it sees D's past.
Values released off the grid that later releases read (a random sketch) are replayed too
(:func:`~dpcost.dp.samplers.replayable`). Releases without a stated sensitivity — a posterior sample, noise inside an
argmin, a peer library's own sampler — are not compared; they end a run, and the caller checks the output is finite.

Each traced release is matched to the plan's :class:`~dpcost.dp.plan.Release` by its noise scale (a ``per_unit``
release, whose scale is per unit of a public quantity, may use any multiple of it, with the sensitivity scaled
alike). Its units follow from its typed norm: a whole ``linf`` vector (a selection's scores) is one unit, ``each``
makes every coordinate one unit, ``l1``/``l2`` groups of the release's ``coordinates``. Found: a unit that moves
by more than stated, a release the plan does not record, more changed units than the plan counts, and a run on D′
whose sequence of releases differs from D's (the data steering the algorithm outside its releases). Where releases
share a noise scale, a release is read as the one most favourable to the plan and their counts are checked
together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import samplers
from .plan import PrivacyPlan, Release


class Divergence(AssertionError):
    """The run on D′ made other releases than the run on D under the same released history."""


@dataclass
class Trace:
    """What a traced run released: per grid release its noise scale, the pre-noise value (broadcast to the noise's
    shape) and the released value; the off-grid values marked :func:`~dpcost.dp.samplers.replayable`."""

    scales: list[float] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)
    released: list[np.ndarray] = field(default_factory=list)
    others: list[tuple[str, object]] = field(default_factory=list)

    def _add(self, noise: samplers.GridNoise, value: np.ndarray) -> None:
        self.scales.append(noise.step * samplers.T)  # the step is scale/2^GRID_BITS: exact
        self.values.append(np.broadcast_to(value, np.shape(noise.steps)).copy())


class _Recorder(Trace):
    def grid(self, noise, value, release):
        out = release()
        self._add(noise, value)
        self.released.append(np.array(out, copy=True))
        return out

    def other(self, what, value):
        self.others.append((what, value))
        return value


class _Replayer(Trace):
    def __init__(self, recorded: Trace):
        super().__init__()
        self.recorded = recorded

    def grid(self, noise, value, release):
        i, rec = len(self.values), self.recorded
        try:
            release()  # what a real run on D′ does at this point: a value off the grid's range is refused
        except Exception as e:
            raise AssertionError(f"release {i} on D′ was refused (on D it was made): {e}") from e
        self._add(noise, value)
        if i >= len(rec.scales) or rec.scales[i] != self.scales[i] or rec.values[i].shape != self.values[i].shape:
            raise Divergence(f"release {i} on D′ (scale {self.scales[i]:.6g}, shape {self.values[i].shape}) is not "
                             "the one made on D at that point")  # fmt: skip
        return rec.released[i].copy()

    def other(self, what, value):
        j = len(self.others)
        self.others.append((what, value))
        if j >= len(self.recorded.others) or self.recorded.others[j][0] != what:
            raise Divergence(f"off-grid release {j} ({what!r}) on D′ is not the one made on D at that point")
        return self.recorded.others[j][1]


def trace_runs(run: Callable[[tuple], object], D: tuple, neighbours: list[tuple]) -> tuple[Trace, object, list]:
    """``run(D)`` recorded, then ``run(D′)`` replayed for every D′ in ``neighbours`` (``run`` must make its own
    generator from a fixed seed, so that every run draws the same noise). Returns D's trace, D's output and, per
    neighbour, (trace, output) or the exception its run raised; D's own exception propagates."""
    rec = _Recorder()
    with samplers.tracing(rec):
        out = run(D)
    results = []
    for D2 in neighbours:
        rep = _Replayer(rec)
        try:
            with samplers.tracing(rep):
                out2 = run(D2)
            if len(rep.values) != len(rec.values) or len(rep.others) != len(rec.others):
                raise Divergence(f"D′ made {len(rep.values)} grid releases and {len(rep.others)} others, D made "
                                 f"{len(rec.values)} and {len(rec.others)}")  # fmt: skip
            results.append((rep, out2))
        except Exception as e:  # noqa: BLE001 — reported to the caller, which decides
            results.append(e)
    return rec, out, results


@dataclass(frozen=True)
class Observation:
    """One traced release compared: the largest movement of one of its units against the stated sensitivity."""

    index: int  # the release's place in the run
    release: str  # the plan's mechanism text
    norm: str  # the release's norm: "l1", "l2", "linf" or "each" (every coordinate a unit)
    stated: float
    observed: float
    changed: int  # units that moved at all

    @property
    def ratio(self) -> float:
        return self.observed / self.stated


def _units(delta: np.ndarray, release: Release) -> np.ndarray:
    """Per unit of the release, the norm of its movement."""
    a = np.abs(delta).ravel()
    if release.norm == "linf":
        return np.array([a.max(initial=0.0)])
    if release.norm == "each":
        return a
    if release.norm not in ("l1", "l2"):
        raise ValueError(f"{release.mechanism!r}: a release measured in {release.norm!r} is not compared")
    k = release.coordinates or a.size
    if a.size % k:
        raise ValueError(f"{release.mechanism!r}: a value of {a.size} coordinates is not made of units of {k}")
    parts = a.reshape(-1, k)
    return parts.sum(axis=1) if release.norm == "l1" else np.sqrt((parts * parts).sum(axis=1))


def _candidates(plan: PrivacyPlan, scale: float) -> list[tuple[Release, float]]:
    """The plan's releases a grid release of this noise scale can be, with the replace-one sensitivity it states at
    that scale: twice the stated one where the releases are stated for add/remove neighbours and the guarantee is
    converted by group privacy (a replaced record is a removal and an addition, each moving a release by at most its
    stated sensitivity)."""
    k = 2.0 if plan.releases_stated_for == "add_remove" else 1.0
    exact = [(r, k * r.sensitivity) for r in plan.releases if r.sensitivity is not None and r.noise_scale == scale]
    if exact:
        return exact
    return [(r, k * r.sensitivity * scale / r.noise_scale) for r in plan.releases
            if r.sensitivity is not None and r.noise_scale and r.per_unit]  # fmt: skip


def compare(plan: PrivacyPlan, a: Trace, b: Trace) -> list[Observation]:
    """Every release of trace ``a`` (on D) against ``b`` (on D′), read in the plan. Raises AssertionError for a
    release the plan does not record, or for more changed units than the plan counts (releases sharing a noise scale
    are counted together)."""
    out, changed, counts = [], {}, {}
    for i, (scale, fa, fb) in enumerate(zip(a.scales, a.values, b.values, strict=True)):
        cands = _candidates(plan, scale)
        if not cands:
            raise AssertionError(f"release {i} (noise scale {scale:.6g}) is not in the plan of {plan.method}")
        with np.errstate(invalid="ignore", over="ignore"):
            delta = fa - fb
        readings = []
        for rel, stated in cands:
            units = _units(delta, rel)
            with np.errstate(invalid="ignore"):
                moved = int(np.count_nonzero(units))  # NaN counts as moved
            readings.append(Observation(i, rel.mechanism, rel.norm, stated, float(units.max(initial=0.0)), moved))
        best = min(readings, key=lambda o: (o.ratio, o.changed))
        out.append(best)
        group = tuple(r.mechanism for r, _ in cands)
        changed[group] = changed.get(group, 0) + best.changed
        counts[group] = sum(r.count for r, _ in cands)
    for group, k in changed.items():
        if k > counts[group]:
            raise AssertionError(f"{k} units of {' / '.join(group)} changed between neighbours; the plan counts "
                                 f"{counts[group]}")  # fmt: skip
    return out
