"""Differentially private quantiles, for the data-driven truncation level of Cai, Wang & Zhang (2021), §5.1.

004 §5.1 ("Tuning of truncation level") chooses R from "differentially private estimates of the data set's 2.5 %
and 97.5 % percentiles by Algorithm 1′ in [32] (see 'Extension to distributions supported on (−∞, ∞)', pp. 6)" and
truncates the data at these levels; [32] is Lei (2011), *Differentially private M-estimators*, NeurIPS 24, 361–369.

**Which algorithm this is, and why.** Lei's abstract (NeurIPS 2011 proceedings page) says the paper builds private
M-estimators from *perturbed histograms* (Laplace-noised bin counts); a quantile is an M-estimator, so his
Algorithm 1 is presumably a perturbed histogram and 1′ its extension to the real line. The text of Algorithms 1 and
1′ and of the p. 6 extension was not available to us (the stored corpora hold only the abstract), so their bin width,
tail treatment and the way a quantile is read off the noisy histogram cannot be reconstructed; implementing "Lei's
1′" would be guesswork. We implement instead a well-established private quantile with a proof: the
exponential-mechanism quantile of Smith (2011, STOC, "Privacy-preserving statistical estimation with optimal
convergence rates"), in its finite-candidate form — score a public, data-independent grid of candidates, then report
the noisy maximum (as OpenDP's ``make_private_quantile`` does). The extension to (−∞, ∞) is a symmetric geometric
grid (:func:`geometric_grid`): fixed relative resolution over many orders of magnitude, chosen without the data.

**Mechanism.** Data: n records, each holding k values (a sample x of shape (n,) has k = 1; a matrix (n, k) pools
its N = n·k entries — every row is one record). For a quantile level q ∈ (0, 1) and candidates c_1 < … < c_m
fixed before the data are seen, the utility of c_j is

    u(c_j) = −| N(c_j) − q·N |,   N(c) = #{entries ≤ c}   (so u = −N·|F_N(c) − q|, F_N the empirical CDF),

and the release is c_ĵ with ĵ = argmax_j (u(c_j) + Z_j), Z_j i.i.d. Laplace(b), b = 2Δ/ε, Δ = k, drawn exactly on
a grid (:mod:`dpcost.dp.samplers`; ties to the lowest index).

**Sensitivity.** Δ = k under replace one record: the replaced record moves at most k entries, so N(c) changes by at
most k for every c at once and, by the reverse triangle inequality, |u(c) − u′(c)| ≤ k (N, hence q·N, is fixed).
(Under add/remove one record N(c) − q·N moves by j − q·k for some 0 ≤ j ≤ k: at most k too.) k is read from the
data's shape, never from the caller, so it cannot be misstated; the candidates must be public — chosen without
looking at the data (the grids below are).

**Guarantee.** (ε, 0)-DP: report-noisy-max with Laplace(2Δ/ε) on scores of ℓ∞ sensitivity Δ is ε-DP. The proof of
Dwork & Roth (2014), Claim 3.9, fixing the other noises: c_j wins iff Z_j ≥ r*, and between neighbours r* moves by at
most 2Δ (u_j by Δ, the best rival by Δ), which costs a factor e^{2Δ/b} = e^ε; on the integer noise grid the same
holds for the discrete Laplace, ties to the lowest index included. Δ/ε (their Claim 3.9) suffices only for a
*monotone* utility (all scores move the same way between neighbours); this one is not: moving a record from above
the quantile to below it raises N(c) for every c in between, which raises u below the quantile and lowers it above.
The exact audit in ``tests/unit/dp/test_quantiles.py`` shows the loss of two candidates approaching ε at 2Δ/ε and
exceeding it at Δ/ε.
Both calibrations (``paper``, ``tight``) use 2Δ/ε: nothing tighter is known to hold here. Two quantiles at budget ε
compose basically (ε_lo + ε_hi = ε), which is exact for pure DP.

**Accuracy.** Each |Z_j| ≤ b·log(m/β) with probability ≥ 1 − β/m, so with probability ≥ 1 − β the release
satisfies |N(c_ĵ) − q·N| ≤ min_j |N(c_j) − q·N| + 2b·log(m/β) + g (g = b/2²⁰, the rounding to the noise grid):
a rank error of O(k·log(m)/ε) entries, plus the grid's resolution. At small n·min(q, 1 − q) the many far-out
candidates, all of utility ≈ −q·N, win often: a 2.5 % quantile needs q·N well above 2b·log m.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import ConfigError, DataError, PrivacyError
from .mechanisms import noisy_argmax, report_noisy_max_scale
from .plan import PrivacyPlan, Release, grid_release
from .privacy import Privacy

Q_LO, Q_HI = 0.025, 0.975  # the levels of 004 §5.1
# The default public grid for the (−∞, ∞) extension: ±10⁻³ … ±10⁶ at 2 % relative spacing (2,096 candidates).
GRID_SMALLEST, GRID_LARGEST, GRID_RATIO = 1e-3, 1e6, 1.02
MAX_CANDIDATES = 1_000_000


# ---------------------------------------------------------------------------------------------------------------
# Public candidate grids and input checks
# ---------------------------------------------------------------------------------------------------------------


def _check_positive(name: str, value: float) -> float:
    """A grid parameter: a finite number > 0."""
    if not (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) and value > 0):
        raise ConfigError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def geometric_grid(
    *, smallest: float = GRID_SMALLEST, largest: float = GRID_LARGEST, ratio: float = GRID_RATIO
) -> np.ndarray:
    """The symmetric geometric grid ±smallest·ratio^i, i = 0 … K, K the least with smallest·ratio^K ≥ largest: a
    public, data-independent candidate set for quantiles on (−∞, ∞), of relative resolution ``ratio`` on
    [smallest, largest] in absolute value. 0 is not a candidate, so max(|q̂_lo|, |q̂_hi|) ≥ smallest > 0."""
    smallest, largest = _check_positive("smallest", smallest), _check_positive("largest", largest)
    if not largest > smallest:
        raise ConfigError(f"largest must exceed smallest, got smallest={smallest!r}, largest={largest!r}")
    if not (isinstance(ratio, numbers.Real) and not isinstance(ratio, bool) and math.isfinite(ratio) and ratio > 1):
        raise ConfigError(f"ratio must be a finite number > 1, got {ratio!r}")
    K = math.ceil(math.log(largest / smallest) / math.log(ratio))
    if 2 * (K + 1) > MAX_CANDIDATES:
        raise ConfigError(f"the grid would hold {2 * (K + 1)} candidates (more than {MAX_CANDIDATES}): raise ratio")
    half = smallest * float(ratio) ** np.arange(K + 1)
    return np.concatenate([-half[::-1], half])


def uniform_grid(*, R_max: float, m: int) -> np.ndarray:
    """m equally spaced candidates on a public range [−R_max, R_max] (the bounded case)."""
    R_max = _check_positive("R_max", R_max)
    if not (isinstance(m, numbers.Integral) and not isinstance(m, bool) and 2 <= m <= MAX_CANDIDATES):
        raise ConfigError(f"m must be an integer between 2 and {MAX_CANDIDATES}, got {m!r}")
    return np.linspace(-R_max, R_max, int(m))


def check_candidates(candidates) -> np.ndarray:
    """Candidates: a finite, strictly increasing vector of 2 … MAX_CANDIDATES numbers."""
    c = np.asarray(candidates, dtype=float)
    if c.ndim != 1 or not 2 <= c.size <= MAX_CANDIDATES:
        raise ConfigError(f"candidates must be a vector of 2 to {MAX_CANDIDATES} numbers, got shape {c.shape}")
    if not np.isfinite(c).all():
        raise ConfigError("candidates must be finite")
    if not (np.diff(c) > 0).all():
        raise ConfigError("candidates must be strictly increasing")
    return c


def check_level(name: str, q: float) -> float:
    """A quantile level strictly between 0 and 1."""
    if not (isinstance(q, numbers.Real) and not isinstance(q, bool) and 0 < q < 1):
        raise ConfigError(f"{name} must be a number strictly between 0 and 1, got {q!r}")
    return float(q)


def check_sample(x) -> tuple[np.ndarray, int]:
    """The sample as sorted entries and k, the entries per record: x of shape (n,) (k = 1) or (n, k), rows as records,
    n ≥ 1, all finite."""
    x = np.asarray(x, dtype=float)
    if x.ndim not in (1, 2) or x.shape[0] < 1 or x.size < 1:
        raise DataError(f"expected a sample of shape (n,) or (n, k) with n >= 1, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise DataError("the sample holds NaN or infinite values")
    k = 1 if x.ndim == 1 else x.shape[1]
    return np.sort(x, axis=None), k


def _check_privacy(privacy) -> None:
    if not isinstance(privacy, Privacy):
        raise PrivacyError(f"privacy must be a dpcost.dp.privacy.Privacy, got {type(privacy).__name__}")


def _check_rng(rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise ConfigError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")


def _check_split(split: float) -> float:
    if not (isinstance(split, numbers.Real) and not isinstance(split, bool) and 0 < split < 1):
        raise ConfigError(f"split must be a number strictly between 0 and 1, got {split!r}")
    return float(split)


def _check_count(name: str, value: int, low: int) -> int:
    if not (isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= low):
        raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


# ---------------------------------------------------------------------------------------------------------------
# Utility, plans and releases
# ---------------------------------------------------------------------------------------------------------------


def quantile_utility(x, candidates, q: float) -> np.ndarray:
    """u(c_j) = −|N(c_j) − q·N| with N(c) = #{entries of x ≤ c} and N = x.size (module docstring): the scores whose
    ℓ∞ replace-one sensitivity is k, the entries per record."""
    values, _ = check_sample(x)
    return _scores(values, check_candidates(candidates), check_level("q", q))


def _scores(values: np.ndarray, c: np.ndarray, q: float) -> np.ndarray:
    """u(c_j) for sorted entries ``values``: #{entries ≤ c_j} by binary search, O(m log N)."""
    return -np.abs(np.searchsorted(values, c, side="right") - q * values.size)


def _release(privacy: Privacy, epsilon: float, k: int, m: int, label: str) -> Release:
    """One report-noisy-max selection at budget ε: Laplace(2Δ/ε), Δ = k, raised by the grid's rounding cost (one
    grid step per rounded score, as for every selection in the package)."""
    b = report_noisy_max_scale(k, epsilon, privacy.sampler)
    return grid_release(
        "selection",
        f"report-noisy-max (Laplace) over {m} candidates: {label}",
        float(k),
        "linf",
        b,
        1,
        epsilon,
        0.0,
        coordinates=None,
        sampler=privacy.sampler,
        norm_words="linf over candidate scores",
    )


def _plan(privacy: Privacy, method: str, composition: str, m: int, k: int, releases, params) -> PrivacyPlan:
    assumption = (
        f"each record holds {k} value(s) (k read from the data's shape); the {m} candidates are fixed before the data "
        "are seen (a public grid)"
    )
    params = {"candidates": m, "values_per_record": k, **params}
    return PrivacyPlan(
        method,
        privacy.epsilon,
        0.0,
        privacy.calibration,
        composition,
        assumption,
        tuple(releases),
        privacy.relation,
        params,
        whole_mechanism=False,
        whole_mechanism_why="report-noisy-max selections are not additive-noise releases",
    )


def private_quantile_plan(privacy: Privacy, n: int, *, m: int, k: int = 1) -> PrivacyPlan:
    """One private quantile (:func:`private_quantile`) of n records of k values over m candidates: one
    report-noisy-max at Laplace(2k/ε), (ε, 0)-DP under either neighbouring relation. Public quantities only."""
    _check_privacy(privacy)
    p = privacy.at(_check_count("n", n, 1))
    m, k = _check_count("m", m, 2), _check_count("k", k, 1)
    comp = "one report-noisy-max selection, Laplace(2*Delta/epsilon): epsilon-DP (both calibrations)"
    rel = _release(p, p.epsilon, k, m, "quantile")
    return _plan(p, "private_quantile", comp, m, k, (rel,), {})


def private_quantile(x, *, q: float, candidates, privacy: Privacy, rng: np.random.Generator) -> float:
    """The q-quantile of x, ε-differentially private: the exponential-mechanism quantile of Smith (2011) over a public
    candidate grid, released by report-noisy-max (module docstring; stands in for Lei 2011, Algorithm 1′).

    Guarantee: (ε, 0)-DP, ε = ``privacy.epsilon`` (δ is not used), under replace one record (and add/remove one).
    Sensitivity of the scores u(c) = −|#{entries ≤ c} − q·N|: Δ = k, the entries per record, because one record moves
    at most k entries; k is read from x's shape ((n,): 1; (n, k): k). Assumption: ``candidates`` were chosen without
    the data. Returns the chosen candidate (a quantile outside the grid's range comes back as an end point).
    """
    _check_privacy(privacy)
    _check_rng(rng)
    values, k = check_sample(x)
    c = check_candidates(candidates)
    q = check_level("q", q)
    n = values.size // k
    b = private_quantile_plan(privacy, n, m=c.size, k=k).releases[0].noise_scale
    return float(c[noisy_argmax(_scores(values, c, q), b, rng, privacy.sampler)])


def private_quantiles_plan(
    privacy: Privacy, n: int, *, m: int, k: int = 1, split: float = 0.5, method: str = "private_quantiles"
) -> PrivacyPlan:
    """Two private quantiles (:func:`private_quantiles`) at total budget ε: ε_lo = split·ε and ε_hi = (1 − split)·ε,
    each one report-noisy-max at Laplace(2k/ε_·); basic composition, (ε, 0)-DP."""
    _check_privacy(privacy)
    p = privacy.at(_check_count("n", n, 1))
    m, k, split = _check_count("m", m, 2), _check_count("k", k, 1), _check_split(split)
    e_lo, e_hi = split * p.epsilon, (1 - split) * p.epsilon
    comp = (
        f"basic composition of two report-noisy-max selections, epsilon_lo = {e_lo:.6g} and epsilon_hi = {e_hi:.6g} "
        "(exact for pure DP; both calibrations)"
    )
    rels = (_release(p, e_lo, k, m, "lower quantile"), _release(p, e_hi, k, m, "upper quantile"))
    return _plan(p, method, comp, m, k, rels, {"epsilon_lo": e_lo, "epsilon_hi": e_hi, "split": split})


def private_quantiles(
    x,
    *,
    candidates,
    privacy: Privacy,
    rng: np.random.Generator,
    q_lo: float = Q_LO,
    q_hi: float = Q_HI,
    split: float = 0.5,
) -> tuple[float, float]:
    """The q_lo- and q_hi-quantiles of x (default 2.5 % and 97.5 %, 004 §5.1) at total budget ε = ``privacy.epsilon``:
    :func:`private_quantile` at ε_lo = split·ε, then at ε_hi = (1 − split)·ε, with independent noise.

    Guarantee: (ε, 0)-DP by basic composition, under replace one record (and add/remove one); sensitivity and
    assumption as for :func:`private_quantile`. The two releases are not forced into order (q̂_lo ≤ q̂_hi can fail at
    small n·ε); sort them if an interval is wanted (post-processing).
    """
    _check_privacy(privacy)
    _check_rng(rng)
    values, k = check_sample(x)
    c = check_candidates(candidates)
    q_lo, q_hi = check_level("q_lo", q_lo), check_level("q_hi", q_hi)
    if not q_lo < q_hi:
        raise ConfigError(f"q_lo must be below q_hi, got q_lo={q_lo}, q_hi={q_hi}")
    rel_lo, rel_hi = private_quantiles_plan(privacy, values.size // k, m=c.size, k=k, split=split).releases
    lo = c[noisy_argmax(_scores(values, c, q_lo), rel_lo.noise_scale, rng, privacy.sampler)]
    hi = c[noisy_argmax(_scores(values, c, q_hi), rel_hi.noise_scale, rng, privacy.sampler)]
    return float(lo), float(hi)


def truncation_level_plan(privacy: Privacy, n: int, *, m: int, k: int = 1, split: float = 0.5) -> PrivacyPlan:
    """The plan of :func:`truncation_level`: that of :func:`private_quantiles` (R is post-processing)."""
    return private_quantiles_plan(privacy, n, m=m, k=k, split=split, method="truncation_level")


def truncation_level(
    x,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    candidates=None,
    q_lo: float = Q_LO,
    q_hi: float = Q_HI,
    split: float = 0.5,
) -> float:
    """The data-driven truncation level of Cai, Wang & Zhang (2021), §5.1: R = max(|q̂_lo|, |q̂_hi|) from the private
    2.5 % and 97.5 % quantiles (:func:`private_quantiles`), so that clipping to [−R, R] truncates the sample at
    (at least) those levels. ``candidates`` default to :func:`geometric_grid` (±10⁻³ … ±10⁶, 2 % spacing).

    Guarantee: (ε, 0)-DP, ε = ``privacy.epsilon``, under replace one record (and add/remove one): R is
    post-processing of the two quantiles. Its ε must come out of the same budget as the estimator that uses R (basic
    composition). R ≥ min |candidate| > 0 for the default grid, which holds no 0.
    """
    c = geometric_grid() if candidates is None else candidates
    lo, hi = private_quantiles(x, candidates=c, privacy=privacy, rng=rng, q_lo=q_lo, q_hi=q_hi, split=split)
    return max(abs(lo), abs(hi))
