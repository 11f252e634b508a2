"""The DP libraries people use today, run on exactly the same subsamples and budget as our estimators, each beside
the plan that records its own accounting.

Optional: ``pip install -e '.[peers]'`` (diffprivlib needs scikit-learn < 1.6). Both take public bounds only — never
bounds derived from the data, which would leak it.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from ..dp.mechanisms import gaussian_sigma
from ..dp.plan import PrivacyPlan, Release, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import describe_float, draw, grid_scale
from ..errors import ConfigError, PrivacyError
from .base import clip_design, require_replace
from .ssp import symmetric_from_upper


def available() -> dict[str, bool]:
    """Which peer libraries are installed in a usable version (checked without importing them: scikit-learn takes a
    second to import, and every `snakemake` start asks)."""
    from importlib import metadata, util

    def version(pkg):
        try:
            return tuple(int(p) for p in metadata.version(pkg).split(".")[:2])
        except (metadata.PackageNotFoundError, ValueError):
            return None

    sklearn = version("scikit-learn")
    return {
        # diffprivlib 0.6.6 imports only with scikit-learn < 1.6
        "diffprivlib": util.find_spec("diffprivlib") is not None and sklearn is not None and sklearn < (1, 6),
        "opendp": util.find_spec("opendp") is not None,
    }


# the peers found usable in this process: available() reads the packages' metadata (about 1 ms), and a tune job asks
# before each of its 1,280 fits; an installed package stays installed while the process runs
_USABLE: set[str] = set()


def _require(name: str):
    if name not in _USABLE:
        if not available()[name]:
            raise ConfigError(
                f"{name} is not installed (or does not import); install the peers: pip install -e '.[peers]'"
            )
        _USABLE.add(name)


# diffprivlib draws its Laplace noise itself, with samplers that mitigate floating-point attacks without a proof
DIFFPRIVLIB_NOISE = describe_float(
    "diffprivlib's own Laplace samplers (Holohan & Braghin 2021, Secure Random Sampling in Differential Privacy: "
    "mitigations, not proven)"
)


def diffprivlib_plan(privacy: Privacy, n: int, d: int, *, B_X: float, B_Y: float) -> PrivacyPlan:
    """diffprivlib's own accounting: ε-DP, δ unused. Replace-one only: diffprivlib does not state its relation.
    Its noise is drawn by diffprivlib's samplers (:data:`DIFFPRIVLIB_NOISE`): NOT PROVEN (floating point)."""
    p = privacy.at(n)
    require_replace(p, "diffprivlib", "diffprivlib does not state its neighbouring relation")
    return PrivacyPlan(
        "diffprivlib",
        p.epsilon,
        0.0,
        "library",
        "diffprivlib LinearRegression: functional mechanism (Laplace noise on the objective's coefficients), "
        "epsilon-DP, delta unused; accounting is diffprivlib's own",
        f"rows clipped to ||x||_2 <= {B_X}, every coordinate in [-{B_X}, {B_X}], y in [-{B_Y}, {B_Y}] (public bounds)",
        (
            Release(
                "laplace (functional mechanism): the objective's coefficients, drawn by diffprivlib",
                None,
                "none",
                None,
                sampler=DIFFPRIVLIB_NOISE,
                kind="peer",
                noise="float",
                norm_words="diffprivlib's own",
            ),
        ),
        neighbours=p.relation,
        whole_mechanism=False,
        whole_mechanism_why="diffprivlib's own accounting; its mechanism is not recorded as releases",
    )


def diffprivlib_ols(X, y, *, privacy: Privacy, rng: np.random.Generator, B_X: float, B_Y: float) -> np.ndarray:
    """IBM diffprivlib's ``LinearRegression`` (functional mechanism, Zhang et al. 2012): ε-DP, δ unused.

    Bounds are public: every coordinate of x in [−B_X, B_X] and y in [−B_Y, B_Y] (diffprivlib's own per-feature
    bounds); rows are first clipped to ‖x‖₂ ≤ B_X like our estimators', so every method sees the same records.
    Neighbours: diffprivlib does not state its relation; its sensitivity analysis is the functional mechanism's,
    replace-one. The noise comes from a RandomState seeded from ``rng``, so runs are reproducible.
    """
    _require("diffprivlib")
    from diffprivlib.models import LinearRegression

    Xc, yc = clip_design(X, y, B_X, B_Y)
    d = Xc.shape[1]
    diffprivlib_plan(privacy, *Xc.shape, B_X=B_X, B_Y=B_Y)  # refuses what the plan refuses
    model = LinearRegression(
        epsilon=privacy.epsilon,
        bounds_X=(np.full(d, -B_X), np.full(d, B_X)),
        bounds_y=(-B_Y, B_Y),
        fit_intercept=False,
        random_state=int(rng.integers(2**31 - 1)),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)  # its "data outside bounds" notes: we clipped already
        model.fit(Xc, yc)
    return np.asarray(model.coef_, dtype=float)


@functools.lru_cache(maxsize=4096)  # 0.17 s a search; the scale depends on (ε, δ, Δ) only
def opendp_scale(*, epsilon: float, delta: float, sensitivity: float) -> float:
    """Gaussian scale that OpenDP's own accountant certifies: binary search over a Gaussian measurement turned from
    zCDP into (ε, δ) with δ fixed (``make_zCDP_to_approxDP``, ``make_fix_delta``), between 0 and 4 times the analytic
    Gaussian's σ (OpenDP's is 1.06–1.09 times it). Without those bounds OpenDP searches for an upper end itself, and
    from a sensitivity of about 1,000 up that search overflows (``inf_exp() is not finite``) after about 50 s; with
    them the search returns the same float where both succeed (measured at Δ ∈ {0.37, 1, 2.83, 6}, four (ε, δ))."""
    _require("opendp")
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)

    def make(scale):
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(space >> dp.m.then_gaussian(scale=scale)), delta)

    top = 4 * gaussian_sigma(sensitivity, epsilon, delta, "analytic")
    if not math.isfinite(top):
        raise PrivacyError(
            f"OpenDP's Gaussian for sensitivity {sensitivity:.6g} at epsilon = {epsilon:.6g}: its "
            "scale is past the float range (the bounds are too large)"
        )
    try:
        return float(dp.binary_search_param(make, d_in=sensitivity, d_out=(epsilon, delta), bounds=(0.0, top)))
    except dp.OpenDPException as err:  # public (ε, δ, Δ) only: refused alike on every data set
        first = next((line.strip() for line in str(err).splitlines() if line.strip()), type(err).__name__)
        raise PrivacyError(
            f"OpenDP cannot calibrate a Gaussian for sensitivity {sensitivity:.6g} at epsilon = "
            f"{epsilon:.6g}, delta = {delta:.3g} (the bounds are too large): {first[:120]}"
        ) from None


def opendp_ssp_plan(privacy: Privacy, n: int, d: int, *, B_X: float, B_Y: float) -> PrivacyPlan:
    """One Gaussian release of (X'X upper triangle, X'y), replace-one sensitivity 2B_X√(B_X² + B_Y²), at the scale
    OpenDP certifies for the sensitivity inflated by the noise grid's rounding of all d(d+1)/2 + d coordinates
    (:func:`~dpcost.dp.samplers.grid_scale`; OpenDP's calibration, through zCDP, is linear in the sensitivity)."""
    p = privacy.at(n)
    sens = 2 * B_X * math.sqrt(B_X**2 + B_Y**2)
    k = d * (d + 1) // 2 + d  # ONE Gaussian of the concatenated vector
    certified = opendp_scale(epsilon=p.epsilon, delta=p.delta, sensitivity=sens)
    scale = grid_scale(certified, sens, k, "l2", "gaussian", p.sampler)
    return PrivacyPlan(
        "opendp_ssp",
        p.epsilon,
        p.delta,
        "library",
        "one Gaussian release of (X'X upper triangle, X'y), scale certified by OpenDP (zCDP -> approx-DP)",
        f"rows clipped to ||x||_2 <= {B_X}, y clipped to [-{B_Y}, {B_Y}]",
        (
            grid_release(
                "gaussian",
                "gaussian: (X'X upper triangle, X'y)",
                sens,
                "l2",
                scale,
                coordinates=k,
                sampler=p.sampler,
            ),
        ),
        p.relation,
        whole_mechanism=True,
        whole_mechanism_why="one Gaussian release of (X'X upper triangle, X'y), on the exact sampler's grid",
    )


def opendp_ssp_ols(X, y, *, privacy: Privacy, rng: np.random.Generator, B_X: float, B_Y: float) -> np.ndarray:
    """Sufficient-statistics OLS calibrated with OpenDP: one Gaussian release of (upper triangle of X'X, X'y).

    Replace-one ℓ2 sensitivity of the concatenated vector: √((2B_X²)² + (2B_X B_Y)²) = 2B_X √(B_X² + B_Y²), with
    rows clipped to ‖x‖₂ ≤ B_X and y to [−B_Y, B_Y] here. The scale is the one OpenDP certifies for (ε, δ)
    (:func:`opendp_ssp_plan`), paid for the noise grid. The noise is the package's exact discrete Gaussian on that
    grid (:mod:`dpcost.dp.samplers`; Canonne, Kamath & Steinke 2020), drawn from ``rng`` rather than by OpenDP's
    sampler, which is deliberately not seedable, so that reruns are bit-identical. The estimate solves the noisy
    normal equations (minimum-norm if singular), as SSP does.
    """
    Xc, yc = clip_design(X, y, B_X, B_Y)
    n, d = Xc.shape
    sigma = opendp_ssp_plan(privacy, n, d, B_X=B_X, B_Y=B_Y).releases[0].noise_scale
    iu = np.triu_indices(d)
    k = len(iu[0])
    stats = np.concatenate([(Xc.T @ Xc)[iu], Xc.T @ yc])
    released = draw("gaussian", sigma, k + d, rng, privacy.sampler).add(stats)
    return np.linalg.lstsq(symmetric_from_upper(released[:k], d), released[k:], rcond=None)[0]
