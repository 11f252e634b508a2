"""DP OLS by a Johnson–Lindenstrauss projection — Sheffet (2017), Algorithm 1, the comparator of Cai, Wang & Zhang
(2021): the algorithm, its constants and its privacy plan."""

from __future__ import annotations

import math

import numpy as np

from ..dp.mechanisms import check_sensitivity
from ..dp.plan import PrivacyPlan, Release, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import add_noise, describe_float, grid_scale
from .base import check_count, clip_design, require_replace

# R A′ ~ rows N(0, A′'A′): a covariance that depends on the data, so no grid sampler applies
SKETCH_NOISE = describe_float("Gaussian sketch R A' by numpy standard_normal (covariance A'^T A' depends on the data)")


def sheffet_jl_plan(privacy: Privacy, n: int, d: int, *, B_X: float, B_Y: float, r: int) -> PrivacyPlan:
    """A private Johnson–Lindenstrauss projection RA of A = [X, y], rows ‖a‖ ≤ B.

    w² = (8B²/ε)(√(2r ln(8/δ)) + 2 ln(8/δ)); the test σ_min(A)² > w² + Z + 4B² ln(1/δ)/ε with Z ~ Lap(4B²/ε)
    (σ_min² has replace-one sensitivity B²); if it fails, A is augmented with wI (ridge fallback). Constants from
    Sheffet's Algorithm 1 (ICML 2017 / arXiv 1507.02482) as we read it; that paper is not in ../shared/papers and
    could not be re-checked here — the audit in the tests passes, which is necessary, not sufficient. Both
    calibrations use them (no tighter analysis is implemented).

    Noise: the test's Laplace is the exact discrete Laplace on a grid (:mod:`dpcost.dp.samplers`), its scale paid
    for rounding; the sketch R A′ has a covariance that depends on the data and is drawn by numpy's float normals:
    labelled NOT PROVEN (floating point) (:data:`SKETCH_NOISE`).
    """
    p = privacy.at(n)
    require_replace(p, "sheffet_jl", "Sheffet (2017) Theorem 3.1, as read here, is for data sets of one size")
    epsilon, delta = p.epsilon, p.delta
    r = check_count("r", r)
    B2 = B_X**2 + B_Y**2
    check_sensitivity(B2)
    lt = math.log(8 / delta)
    w2 = 8 * B2 / epsilon * (math.sqrt(2 * r * lt) + 2 * lt)
    b = grid_scale(4 * B2 / epsilon, B2, 1, "l1", "laplace", p.sampler)
    rels = (
        grid_release(
            "laplace",
            "laplace: sigma_min(A)^2 test",
            B2,
            "l1",
            b,
            1,
            epsilon / 4,
            coordinates=1,
            sampler=p.sampler,
            norm_words="absolute",
        ),
        Release(
            f"Gaussian JL projection R A, R of {r} x n i.i.d. N(0, 1), sigma_min(A') >= w",
            B2,
            "none",
            math.sqrt(w2),
            1,
            sampler=SKETCH_NOISE,
            kind="sketch",
            noise="float",
            norm_words="row norm^2",
        ),
    )
    return PrivacyPlan(
        "sheffet_jl",
        epsilon,
        delta,
        p.calibration,
        "Sheffet (2017) Theorem 3.1 (JL analysis of Blocki et al. 2012 behind a Laplace test)",
        f"rows of [X, y] clipped: ||x||_2 <= {B_X}, |y| <= {B_Y}",
        rels,
        p.relation,
        parameters={"w2": w2, "test_offset": 4 * B2 * math.log(1 / delta) / epsilon, "laplace_scale": b},
        whole_mechanism=False,
        whole_mechanism_why="a Gaussian JL projection behind a Laplace test is not an additive-noise release",
    )


def sheffet_jl_ols(X, y, *, privacy: Privacy, rng: np.random.Generator, B_X: float, B_Y: float, r: int) -> np.ndarray:
    """DP OLS by a Johnson–Lindenstrauss projection — Sheffet (2017), Algorithm 1.

    A = [X, y] with rows clipped (‖x‖ ≤ B_X, |y| ≤ B_Y, so ‖a‖² ≤ B² = B_X² + B_Y²).
    1. w² = (8B²/ε)(√(2r ln(8/δ)) + 2 ln(8/δ))
    2. Z ~ Lap(4B²/ε);  if σ_min(A)² > w² + Z + 4B² ln(1/δ)/ε: A′ = A ("unaltered")
    3. else A′ = [A; wI_{d+1}] (the ridge fallback: X'X + w²I, X'y unchanged)
    4. release RA′, R an r × (n + …) matrix of i.i.d. N(0, 1);  β̃ = argmin_β ‖R A′_y − R A′_X β‖.
    RA′ is drawn as G S with G an r × (d + 1) standard Gaussian matrix and S the symmetric square root of A′'A′:
    each row of RA′ is N(0, A′'A′), so both have the same distribution (and the same privacy) at O(rd²) cost
    instead of O(rn). Privacy: (ε, δ)-DP, Sheffet's Theorem 3.1, replace-one neighbours (:func:`sheffet_jl_plan`).
    r is left open by the paper: a public tuning constant.
    """
    Xc, yc = clip_design(X, y, B_X, B_Y)
    n, d = Xc.shape
    p = sheffet_jl_plan(privacy, n, d, B_X=B_X, B_Y=B_Y, r=r).parameters
    A = np.column_stack([Xc, yc])
    AtA = A.T @ A
    w, V = np.linalg.eigh(AtA)
    # σ_min(A)² + Z released on the grid (Z symmetric: the same test as σ_min(A)² > w² + Z + offset)
    noisy = float(add_noise(max(w[0], 0.0), "laplace", p["laplace_scale"], rng, privacy.sampler))
    if not noisy > p["w2"] + p["test_offset"]:
        w = w + p["w2"]  # A′ = [A; wI]: A′'A′ = A'A + w²I
    S = (V * np.sqrt(np.maximum(w, 0.0))) @ V.T
    M = rng.standard_normal((r, d + 1)) @ S
    return np.linalg.lstsq(M[:, :d], M[:, d], rcond=None)[0]
