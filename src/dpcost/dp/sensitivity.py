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

Neighbours. Under replace-one (``neighbours="replace"``) a plan whose releases are stated for add/remove is allowed
twice its sensitivity (group privacy); under add/remove (D′ is D with one record removed or added, so n differs by
one) the plan must have been made for add/remove and its sensitivities are compared as stated. The replay itself
checks what add/remove adds: a release whose noise scale (so its grid step) differs between n and n ± 1 is a
:class:`Divergence`.

Two more things a run must satisfy, checked by :func:`identical` and :func:`shared_draws`. Given D's releases, the run
on D′ must put out exactly what the run on D did (every field, bit for bit): the output is post-processing of the
releases and public quantities, so a field that differs reads the data (or, under add/remove, n) outside its
releases. And no two releases of one run may share a noise draw (the same integer noise vector): with shared noise
the difference of two releases is noise-free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import samplers
from .plan import PrivacyPlan, Release
from .privacy import NEIGHBOUR_RELATIONS


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
    steps: list[np.ndarray] = field(default_factory=list)  # the noise in grid steps, broadcast like the value

    def _add(self, noise: samplers.GridNoise, value: np.ndarray) -> None:
        self.scales.append(noise.step * samplers.T)  # the step is scale/2^GRID_BITS: exact
        shape = np.broadcast_shapes(np.shape(value), np.shape(noise.steps))  # noise broadcast over a value: shared
        self.values.append(np.broadcast_to(value, shape).copy())
        self.steps.append(np.broadcast_to(noise.steps, shape).copy())


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
            raise Divergence(
                f"release {i} on D′ (scale {self.scales[i]:.6g}, shape {self.values[i].shape}) is not "
                "the one made on D at that point"
            )
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
                raise Divergence(
                    f"D′ made {len(rep.values)} grid releases and {len(rep.others)} others, D made "
                    f"{len(rec.values)} and {len(rec.others)}"
                )
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


def _candidates(plan: PrivacyPlan, scale: float, neighbours: str = "replace") -> list[tuple[Release, float]]:
    """The plan's releases a grid release of this noise scale can be, with the sensitivity it states at that scale
    for ``neighbours``: under replace-one, twice the stated one where the releases are stated for add/remove
    neighbours and the guarantee is converted by group privacy (a replaced record is a removal and an addition, each
    moving a release by at most its stated sensitivity); under add/remove, the stated one."""
    if neighbours == "add_remove":
        if plan.neighbours != NEIGHBOUR_RELATIONS["add_remove"]:
            raise AssertionError(f"the plan of {plan.method} is for {plan.neighbours!r}, compared under add/remove")
        k = 1.0
    elif neighbours == "replace":
        k = 2.0 if plan.releases_stated_for == "add_remove" else 1.0
    else:
        raise ValueError(f"unknown neighbouring relation {neighbours!r}")
    exact = [(r, k * r.sensitivity) for r in plan.releases if r.sensitivity is not None and r.noise_scale == scale]
    if exact:
        return exact
    return [
        (r, k * r.sensitivity * scale / r.noise_scale)
        for r in plan.releases
        if r.sensitivity is not None and r.noise_scale and r.per_unit
    ]


def compare(plan: PrivacyPlan, a: Trace, b: Trace, neighbours: str = "replace") -> list[Observation]:
    """Every release of trace ``a`` (on D) against ``b`` (on D′, a ``neighbours`` neighbour: ``"replace"`` or
    ``"add_remove"``), read in the plan. Raises AssertionError for a release the plan does not record, or for more
    changed units than the plan counts (releases sharing a noise scale are counted together)."""
    out, changed, counts = [], {}, {}
    for i, (scale, fa, fb) in enumerate(zip(a.scales, a.values, b.values, strict=True)):
        cands = _candidates(plan, scale, neighbours)
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
            raise AssertionError(
                f"{k} units of {' / '.join(group)} changed between neighbours; the plan counts {counts[group]}"
            )
    return out


Draw = tuple[int, int | None]  # a noise draw of a run: (release, block), block None for the whole release


def shared_draws(trace: Trace, blocks: int | None = None) -> list[tuple[Draw, Draw]]:
    """Pairs of noise draws of one run that are the same integer vector: (release, block) of each, block None for a
    whole release. Compared: every two releases of the same shape, and, with ``blocks`` = k (a stacked run of k
    blocks), the k slices along the first axis of every release whose first axis is k — each block's noise must be
    its own. Exact noise only (integers on the grid).

    A coincidence is rare enough to call a bug: for two independent draws of the discrete Gaussian of σ = t grid
    steps, P(Z = Z′) = Σ_z p(z)² ≈ ∫ φ_t(x)² dx = 1/(2√π t) = 2.7·10⁻⁷ at t = 2²⁰; for the discrete Laplace
    p(z) = (1 − q)/(1 + q)·q^|z|, q = e^{−1/t}, Σ_z p(z)² = (1 − q)(1 + q²)/(1 + q)³ ≈ 1/(4t) = 2.4·10⁻⁷. A pair
    of vectors of m coordinates coincides with that probability to the power m (below 10⁻¹³ from m = 2). The
    registered methods make at most two scalar releases a run (AdaOPS; AdaSSP's interval: λ_min and the residual
    sum), so a false report has probability about 3·10⁻⁷ per run, 10⁻³ over a long run of 4,000."""
    seen: dict[tuple, Draw] = {}
    out = []
    for i, z in enumerate(trace.steps):
        units = [(None, z)]
        if blocks is not None and z.ndim >= 1 and z.shape[0] == blocks:
            units += [(j, z[j]) for j in range(blocks)]
        for j, u in units:
            key = (u.shape, np.ascontiguousarray(u, dtype=float).tobytes())
            if key in seen:
                out.append((seen[key], (i, j)))
            else:
                seen[key] = (i, j)
    return out


def identical(a, b) -> bool:
    """Whether two released values are the same: arrays of the same shape and dtype kind equal bit for bit up to
    NaN's payload (NaN where the other is NaN, −0 where the other is −0), dicts key by key, other values by ==."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(identical(a[k], b[k]) for k in a)
        )
    if isinstance(a, (np.ndarray, np.generic, float, int)) and not isinstance(a, bool):
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape or x.dtype.kind != y.dtype.kind:
            return False
        if x.dtype.kind != "f":
            return bool(np.array_equal(x, y, equal_nan=x.dtype.kind == "c"))
        return bool(np.array_equal(x, y, equal_nan=True) and np.array_equal(np.signbit(x), np.signbit(y)))
    return bool(a == b)
