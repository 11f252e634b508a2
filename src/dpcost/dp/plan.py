"""The plan data model: what a private estimator releases, and what each release spends.

Every private estimator asks its plan function (in its own module) for its noise scales. A plan is computed from
public quantities only — the :class:`~dpcost.dp.privacy.Privacy` specification, n, d and the tuning constants, never
the data — and records each release: mechanism, sensitivity and its norm, noise scale, count and the budget charged.
The workflow writes the plans an estimate job used beside its table, and the privacy ledger is built from those
files, so the ledger and the estimator cannot disagree.

Each release documents its behaviour completely in typed fields (the rule of Google's dp-accounting, whose events
need nothing else to be accounted): its kind (:data:`KINDS`), the norm its sensitivity is measured in
(:data:`NORMS`), the coordinates one release covers, what the noise grid's rounding adds to its sensitivity and how
its noise is drawn (:data:`NOISE`). Its texts (``mechanism``, ``norm_words``, ``sampler``) are for people; no code
reads them. Each plan says whether its releases are its whole mechanism (``whole_mechanism``, and in words why or
why not): only then may an accountant compose the plan from its releases.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, field

from ..errors import PrivacyError
from .mechanisms import check_positive, gaussian_sigma
from .privacy import Privacy
from .samplers import GRID_BITS, check_sampler, describe, grid_scale, rounding_steps

# what a release is
KINDS = {
    "gaussian": "additive Gaussian noise on a value of the stated sensitivity",
    "laplace": "additive Laplace noise on a value of the stated sensitivity",
    "selection": "report-noisy-max (or -min): Laplace noise on candidate scores, only the best index released",
    "knorm": "the K-norm mechanism: noise of density exp(-||t||_K / b) on a value of the stated sensitivity",
    "exponential": "an exponential mechanism on a score of the stated sensitivity",
    "posterior": "a sample from a posterior whose covariance depends on the data",
    "sketch": "a random projection (sketch) of the data",
    "objective": "noise inside an argmin (objective perturbation)",
    "peer": "a peer library's own mechanism, accounted by that library",
    "repeat_and_select": "private selection from private candidates (Papernot & Steinke 2022)",
}
# the norm a release's sensitivity bounds the change of its value in
NORMS = {
    "l1": "l1 norm of the value's change",
    "l2": "l2 norm of the value's change",
    "linf": "sup norm of the change of a vector of scores (a selection's candidates)",
    "each": "every coordinate is its own release, each moving by at most the sensitivity (counted in count)",
    "gauge": "the gauge of the K-norm mechanism's body",
    "none": "not a norm of the value's change: the sensitivity, if any, is the bound norm_words names",
}
# how a release's noise is drawn (dpcost.dp.samplers)
NOISE = {
    "exact": "exactly, on the grid of dpcost.dp.samplers (its rounding paid in rounding)",
    "float-unsafe": "by numpy's float samplers under sampler float-unsafe: not private on a computer",
    "float": "by floating-point samplers the package cannot make exact: NOT PROVEN (floating point)",
}


@dataclass(frozen=True)
class Release:
    """One kind of noisy release, made ``count`` times.

    ``mechanism``, ``norm_words`` and ``sampler`` are texts for people. The typed fields say everything an
    accountant needs: ``kind`` (:data:`KINDS`), ``norm`` (:data:`NORMS`), ``coordinates`` (how many coordinates one
    release's sensitivity bounds together: the length of the vector of an l1 or l2 norm, 1 for ``each``; None where
    the plan does not fix it: a selection's candidate scores, a release that is not additive noise), ``rounding``
    (what the noise grid's rounding adds to the sensitivity: the integer vectors of neighbours differ by
    (sensitivity + rounding)/g grid steps, g = noise_scale/2^GRID_BITS; 0 off the grid), ``noise`` (:data:`NOISE`)
    and ``per_unit`` (the release is made at any multiple of ``noise_scale``, its sensitivity scaled alike: its
    scale is per unit of a public quantity released before it).
    """

    mechanism: str
    sensitivity: float | None  # None where the mechanism has none (a posterior sample calibrated to the data)
    norm: str
    noise_scale: float | None
    count: int = 1
    epsilon: float | None = None  # budget charged per release, where the calibration assigns one
    delta: float | None = None
    sampler: str | None = None  # how the noise is drawn, in words (dpcost.dp.samplers.describe)
    kind: str = field(kw_only=True)
    noise: str = field(kw_only=True)
    coordinates: int | None = field(default=None, kw_only=True)
    rounding: float = field(default=0.0, kw_only=True)
    norm_words: str | None = field(default=None, kw_only=True)  # the norm as the method states it, where it says more
    per_unit: bool = field(default=False, kw_only=True)

    def __post_init__(self):
        for name, value, allowed in (
            ("kind", self.kind, KINDS),
            ("norm", self.norm, NORMS),
            ("noise", self.noise, NOISE),
        ):
            if value not in allowed:
                raise PrivacyError(f"release {self.mechanism!r}: {name} must be one of {list(allowed)}, got {value!r}")
        if not _count(self.count):
            raise PrivacyError(f"release {self.mechanism!r}: count must be an integer >= 1, got {self.count!r}")
        if not (self.coordinates is None or _count(self.coordinates)):
            raise PrivacyError(f"release {self.mechanism!r}: coordinates must be None or an integer >= 1")
        if not (isinstance(self.rounding, float) and math.isfinite(self.rounding) and self.rounding >= 0):
            raise PrivacyError(f"release {self.mechanism!r}: rounding must be a finite float >= 0")
        if self.rounding and (self.noise != "exact" or self.sensitivity is None):
            raise PrivacyError(f"release {self.mechanism!r}: only an exact grid release of a sensitivity has rounding")
        if not isinstance(self.per_unit, bool):
            raise PrivacyError(f"release {self.mechanism!r}: per_unit must be a bool")


def _count(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool) and x >= 1


def grid_rounding(k: int, norm: str, scale: float, sampler: str) -> float:
    """What rounding k coordinates to the grid adds to a release's sensitivity (its ``rounding``): r·g, r =
    :func:`~dpcost.dp.samplers.rounding_steps` and g = scale/2^GRID_BITS; 0 under ``float-unsafe`` (no grid). The
    privacy loss of the release is that of the inflated sensitivity: the integer vectors of neighbours differ by at
    most Δ/g + r steps."""
    check_sampler(sampler)
    if sampler == "float-unsafe":
        return 0.0
    return rounding_steps(k, norm) * scale / 2**GRID_BITS


def noise_of(sampler: str) -> str:
    """The ``noise`` of a release drawn by :mod:`dpcost.dp.samplers` under the privacy specification's ``sampler``."""
    check_sampler(sampler)
    return "exact" if sampler == "exact" else "float-unsafe"


def grid_release(
    kind: str,
    mechanism: str,
    sensitivity: float | None,
    norm: str,
    noise_scale: float,
    count: int = 1,
    epsilon: float | None = None,
    delta: float | None = None,
    *,
    coordinates: int | None,
    sampler: str,
    norm_words: str | None = None,
    note: str = "",
    per_unit: bool = False,
) -> Release:
    """A release of ``kind`` ``gaussian``, ``laplace`` or ``selection`` whose noise :mod:`dpcost.dp.samplers` draws
    under ``sampler`` (the privacy specification's), with its sampler text (:func:`~dpcost.dp.samplers.describe`,
    ``note`` appended for the exact sampler), its noise and its rounding: r grid steps for rounding ``coordinates``
    coordinates in an l1 or l2 norm, one step per coordinate of an ``each`` or ``linf`` release (each its own
    release; a score of a selection); none without a sensitivity (a paper's printed noise) or off the grid."""
    law = "gaussian" if kind == "gaussian" else "laplace"
    if kind not in ("gaussian", "laplace", "selection"):
        raise PrivacyError(f"release {mechanism!r}: the grid draws Gaussian and Laplace noise, not {kind!r}")
    if norm in ("l1", "l2") and not _count(coordinates):
        raise PrivacyError(f"release {mechanism!r}: an {norm} release must say how many coordinates it has")
    k, r_norm = (coordinates, norm) if norm in ("l1", "l2") else (1, "linf")
    if sensitivity is None:
        text, rounding = describe(law, 0, r_norm, sampler), 0.0
    else:
        text, rounding = describe(law, k, r_norm, sampler), grid_rounding(k, r_norm, noise_scale, sampler)
    if note and sampler == "exact":
        text += f"; {note}"
    return Release(
        mechanism,
        sensitivity,
        norm,
        noise_scale,
        count,
        epsilon,
        delta,
        text,
        kind=kind,
        noise=noise_of(sampler),
        coordinates=coordinates,
        rounding=rounding,
        norm_words=norm_words,
        per_unit=per_unit,
    )


@dataclass(frozen=True)
class PrivacyPlan:
    """A private estimator's releases and what they spend.

    ``whole_mechanism``: the releases are the whole mechanism, everything else post-processing of them, so an
    accountant may compose the plan from its releases alone; ``whole_mechanism_why`` says in words what makes it so,
    or why not (then the plan enters a composition at its stated (ε, δ)). A plan kept for reproduction with
    ``proven=False`` keeps both as they are.
    """

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
    whole_mechanism: bool = field(kw_only=True)
    whole_mechanism_why: str = field(kw_only=True)

    def __post_init__(self):
        if not isinstance(self.whole_mechanism, bool):
            raise PrivacyError(f"plan of {self.method}: whole_mechanism must be a bool")
        if not (isinstance(self.whole_mechanism_why, str) and self.whole_mechanism_why.strip()):
            raise PrivacyError(f"plan of {self.method}: whole_mechanism_why must say why (or why not)")
        if not all(isinstance(r, Release) for r in self.releases):
            raise PrivacyError(f"plan of {self.method}: every release must be a Release")
        if self.releases_stated_for not in (None, "add_remove"):
            raise PrivacyError(f"plan of {self.method}: releases_stated_for must be None or 'add_remove'")

    def to_dict(self) -> dict:
        return asdict(self)


def share_release(privacy: Privacy, sensitivity: float, share: float, coordinates: int, name: str) -> Release:
    """One Gaussian release of ℓ2 sensitivity Δ at its ``share`` of a whole (ε, δ) budget, on the noise grid:
    ``tight``, σ = Δ/(μ√f) with μ the Gaussian-DP parameter exactly equivalent to (ε, δ), so the μ² of releases at
    shares summing to 1 add up to μ² (Dong, Roth & Su 2019, Cor. 3.3); ``paper``, the analytic Gaussian at (fε, fδ)
    (Balle & Wang 2018), the shares composing by basic composition."""
    p, f = privacy, share
    if p.calibration == "tight":
        mu = 1 / gaussian_sigma(1.0, p.epsilon, p.delta, "analytic")  # dpcost.estimators.boosted_adassp.gdp_mu
        sigma, budget = sensitivity / (mu * math.sqrt(f)), (None, None)
    else:
        budget = (f * p.epsilon, f * p.delta)
        sigma = gaussian_sigma(sensitivity, *budget, "analytic")
    sigma = grid_scale(sigma, sensitivity, coordinates, "l2", "gaussian", p.sampler)
    return grid_release(
        "gaussian",
        f"gaussian: {name}",
        sensitivity,
        "l2",
        sigma,
        1,
        *budget,
        coordinates=coordinates,
        sampler=p.sampler,
    )


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
