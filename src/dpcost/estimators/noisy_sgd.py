"""Noisy SGD — Bassily, Smith & Thakurta (2014), Algorithm 1, the comparator of Cai, Wang & Zhang (2019 preprint):
the algorithm, its sensitivity and its privacy plan (BST's σ, or RDP accounting of sampled Gaussian steps)."""

from __future__ import annotations

import math

import numpy as np

from ..dp.accountant import sampled_gaussian_epsilon, sampled_gaussian_multiplier
from ..dp.plan import PrivacyPlan, check_bounds, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import GridNoise, draw, grid_scale
from .base import check_count, check_design, clip_design, require_replace
from .sums import plan_once

# Why RDP accounting of the continuous sampled Gaussian covers the grid's discrete one, and where that is not proven.
RDP_CARRY_OVER = (
    "RDP: the discrete Gaussian has the continuous one's Renyi divergences for the same integer shift (Canonne, "
    "Kamath & Steinke 2020, Prop. 5), so every base term of the subsampling bound (Wang, Balle & Kasiviswanathan "
    "2019, Thm 9: a function of the base RDP curve alone) carries over; dp-accounting's tighter Thm 27 terms "
    "(forward differences) are derived for the continuous Gaussian and are NOT PROVEN for the discrete one here"
)


def noisy_sgd_plan(
    privacy: Privacy, n: int, d: int, *, B_X: float, B_Y: float, C: float, passes: float, batch: int
) -> PrivacyPlan:
    """T = ⌈passes·n/b⌉ steps, each on b = min(batch, n) records drawn without replacement (BST: one), per-record
    gradient norm ≤ L = B_X(B_X C + B_Y) on the C ball, so the batch sum has replace-one sensitivity 2L. The noise std
    recorded is that of the batch-*mean* gradient; T, b and L are returned in ``parameters`` for the estimator.

    paper: BST's σ² = 32 L² T log(T/δ) log(1/δ) q² / ε² on the sum, q = batch/n (their Lemma for one record per
    step, T = n²; per-record units), checked here with the RDP accountant and refused (or warned about) if it does
    not certify (ε, δ); tight: the smallest σ the RDP accountant (sampling without replacement, replace-one)
    certifies.

    Noise: each step's mean gradient is released on the exact discrete Gaussian's grid (:mod:`dpcost.dp.samplers`),
    σ paid for rounding its d coordinates. The accounting carries over as :data:`RDP_CARRY_OVER` says.
    """
    p = privacy.at(n)
    require_replace(p, "noisy_sgd", "its step count and sampling rate b/n use the public sample size n")
    epsilon, delta = p.epsilon, p.delta
    check_bounds(B_X=B_X, B_Y=B_Y, C=C, passes=passes)
    batch = min(check_count("batch", batch), n)  # a subsample smaller than the batch is used whole at every step
    T = max(1, math.ceil(passes * n / batch))
    L = B_X * (B_X * C + B_Y)
    if p.calibration == "paper":
        sd_sum = L * math.sqrt(32 * T * math.log(T / delta) * math.log(1 / delta)) * (batch / n) / epsilon
        actual = sampled_gaussian_epsilon(n, batch, T, sd_sum / (2 * L), delta)
        if actual > epsilon:
            p.outside_validity(f"BST14's sigma gives epsilon = {actual:.3g} > {epsilon} by RDP accounting")
        comp = "Bassily, Smith & Thakurta (2014): amplification by sampling and advanced composition"
    else:
        sd_sum = 2 * L * sampled_gaussian_multiplier(n, batch, T, epsilon, delta)
        comp = f"RDP accounting of {T} sampled Gaussian steps ({batch} of {n} records each; dp-accounting)"
    sd = grid_scale(sd_sum / batch, 2 * L / batch, d, "l2", "gaussian", p.sampler)
    rel = grid_release(
        "gaussian",
        f"gaussian: mean gradient of {batch} sampled records",
        2 * L / batch,
        "l2",
        sd,
        T,
        coordinates=d,
        sampler=p.sampler,
        note=RDP_CARRY_OVER,
    )
    return PrivacyPlan(
        "noisy_sgd",
        epsilon,
        delta,
        p.calibration,
        comp,
        f"rows clipped to ||x||_2 <= {B_X}, y to [-{B_Y}, {B_Y}], iterates in ||theta||_2 <= {C}: per-record "
        f"gradient norm <= L = {L:.4g}",
        (rel,),
        p.relation,
        parameters={"T": T, "batch": batch, "L": L},
        whole_mechanism=False,
        whole_mechanism_why="subsampled Gaussian steps: the releases do not record the sampling that the plan's RDP "
        "accounting counts",
    )


def noisy_sgd_ols(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    B_X: float,
    B_Y: float,
    C: float,
    passes: float,
    batch: int,
) -> np.ndarray:
    """Noisy stochastic gradient descent — Bassily, Smith & Thakurta (2014) Algorithm 1, for ½(y − x'θ)² on the
    ball ‖θ‖₂ ≤ C.

    θ₁ = 0; for t = 1 … T:  draw a batch S_t of b records uniformly without replacement;
        θ_{t+1} = Π_C(θ_t − η_t(ḡ_t + b_t)),  ḡ_t = mean of ∇ℓ(θ_t; x_i, y_i) over S_t,  b_t ~ N(0, σ²I_d),
        η_t = 2C / √(t(L² + dσ²))   (BST's ‖C‖/√(t(n²L² + pσ²)) in per-record units);
    output θ_{T+1} (BST's last iterate). L = B_X(B_X C + B_Y) bounds every per-record gradient on the ball.
    BST take b = 1 and T = n²: at n = 20,600 that is 4·10⁸ steps per repetition, out of reach for 1,500 fits. Here
    T = ⌈passes·n/b⌉ with both exposed (``batch=1, passes=n`` is BST's algorithm), and σ is calibrated for that T
    and b (:func:`noisy_sgd_plan`). Privacy: (ε, δ)-DP under replace-one neighbours; rows clipped to ‖x‖₂ ≤ B_X and
    y to [−B_Y, B_Y] here.
    """
    Xc, yc = clip_design(X, y, B_X, B_Y)
    n, d = Xc.shape
    plan = noisy_sgd_plan(privacy, n, d, B_X=B_X, B_Y=B_Y, C=C, passes=passes, batch=batch)
    T, batch = plan.parameters["T"], plan.parameters["batch"]
    eta, noise = _steps(plan, C, d, rng, privacy.sampler)
    theta = np.zeros(d)
    for t in range(T):  # sequential by nature: each step needs the previous iterate
        S = rng.choice(n, size=batch, replace=False) if batch > 1 else rng.integers(0, n, size=1)
        Xs = Xc[S]
        grad = Xs.T @ (Xs @ theta - yc[S]) / batch
        theta = theta - eta[t] * noise[t].add(grad)
        norm = math.sqrt(theta @ theta)
        if norm > C:
            theta *= C / norm
    return theta


def _steps(plan: PrivacyPlan, C: float, d: int, rng: np.random.Generator, sampler: str) -> tuple:
    """(the step sizes η_t, the T steps' noise) of a run of :func:`noisy_sgd_ols` with this plan, the noise drawn
    from ``rng`` (step t releases noise[t].add(its mean gradient))."""
    T, L, sigma = plan.parameters["T"], plan.parameters["L"], plan.releases[0].noise_scale
    # numpy squares: past the float maximum the steps are 0 (post-processing), not Python's OverflowError
    eta = 2 * C / np.sqrt(np.arange(1, T + 1) * (np.square(np.float64(L)) + d * np.square(np.float64(sigma))))
    return eta, draw("gaussian", sigma, (T, d), rng, sampler)


def noisy_sgd_batch(
    X, y, *, privacy: Privacy, rngs: list[np.random.Generator], tunings: list[dict], plans: dict
) -> list[np.ndarray]:
    """:func:`noisy_sgd_ols` on one subsample with every set of constants in ``tunings`` (each complete), run i with
    its own ``rngs[i]``: the separate calls' estimates bit for bit, each the same (ε, δ)-DP release (nothing random
    is shared: each run's noise, then each step's batch of rows, drawn from its own generator in noisy_sgd_ols's
    order). Shared, because deterministic: the design is checked once and clipped once per (B_X, B_Y), and a plan
    computed once per (privacy, n, d, constants) into ``plans``, the caller's memo (its PRIVACY WARNINGs given when
    it is computed; a refusal raised every time, the first being the separate calls' first). The runs of equal
    batch size step together (:func:`_sgd_lockstep`): a step's numpy calls are paid once for them, not per run."""
    X, y = check_design(X, y)
    n, d = X.shape
    clips: dict = {}
    runs = []
    for t in tunings:  # in order: the first refusal is the separate calls' first
        key = (t["B_X"], t["B_Y"])
        if key not in clips:
            clips[key] = (len(clips), *clip_design(X, y, *key))
        runs.append((clips[key][0], _sgd_plan(privacy, n, d, plans, t), t["C"]))
    steps = [_steps(plan, C, d, rng, privacy.sampler) for (_, plan, C), rng in zip(runs, rngs, strict=True)]
    Xc, yc = np.stack([c[1] for c in clips.values()]), np.stack([c[2] for c in clips.values()])
    by_batch: dict = {}
    for i, (_, plan, _) in enumerate(runs):
        by_batch.setdefault(plan.parameters["batch"], []).append(i)
    out: list = [None] * len(tunings)
    for group in by_batch.values():
        group.sort(key=lambda i: -runs[i][1].parameters["T"])  # stable: the runs still stepping are a prefix
        fits = _sgd_lockstep(Xc, yc, [runs[i] for i in group], [steps[i] for i in group], [rngs[i] for i in group])
        for i, fit in zip(group, fits, strict=True):
            out[i] = fit
    return out


def _sgd_plan(privacy: Privacy, n: int, d: int, plans: dict, t: dict) -> PrivacyPlan:
    """The plan of a run with constants ``t``, memoised in ``plans`` (:func:`noisy_sgd_batch`)."""
    return plan_once(plans, noisy_sgd_plan, privacy, n, d, **{k: t[k] for k in ("B_X", "B_Y", "C", "passes", "batch")})


def _sgd_lockstep(Xc, yc, runs: list, steps: list, rngs: list) -> list[np.ndarray]:
    """The loops of :func:`noisy_sgd_ols` for k runs of equal batch size b, in decreasing order of their step counts
    T, stepped together: at step t the runs with T > t (a prefix) each draw their batch from their own generator,
    then their gradients, releases and projections are computed at once, stacked on a leading axis — every product
    a stack of the single run's BLAS calls (numpy's matmul calls gemv and dot matrix by matrix), every other
    operation elementwise, each run's release its own noise (its grid step) on its own gradient. ``runs``: (index of
    its clipped design in Xc, yc, plan, C); ``steps``: its :func:`_steps`."""
    k, n, d = len(runs), Xc.shape[1], Xc.shape[2]
    Ts, batch = [plan.parameters["T"] for _, plan, _ in runs], runs[0][1].parameters["batch"]
    offset = n * np.array([c for c, _, _ in runs])[:, None]
    Xc, yc = Xc.reshape(-1, d), yc.reshape(-1)
    C = np.array([[C] for _, _, C in runs], dtype=float)
    eta = np.zeros((k, Ts[0]))
    noise = np.zeros((k, Ts[0], d))
    for i, (e, z) in enumerate(steps):
        eta[i, : Ts[i]], noise[i, : Ts[i]] = e, z.steps
    grid, exact = np.array([[z.step] for _, z in steps]), steps[0][1].exact
    theta, S = np.zeros((k, d)), np.empty((k, batch), dtype=np.int64)
    a = k
    for t in range(Ts[0]):
        while Ts[a - 1] <= t:
            a -= 1
        for i in range(a):
            S[i] = rngs[i].choice(n, size=batch, replace=False) if batch > 1 else rngs[i].integers(0, n, size=1)
        rows = S[:a] + offset[:a]  # rows of the clipped designs stacked end to end
        Xs, ys = Xc.take(rows, axis=0), yc.take(rows)
        th = theta[:a]
        grad = (np.swapaxes(Xs, 1, 2) @ ((Xs @ th[:, :, None])[:, :, 0] - ys)[:, :, None])[:, :, 0] / batch
        th = th - eta[:a, t, None] * GridNoise(noise[:a, t], grid[:a], exact).add(grad)
        norm = np.sqrt((th[:, None, :] @ th[:, :, None])[:, 0])
        out = norm > C[:a]
        if out.any():
            with np.errstate(divide="ignore", invalid="ignore"):  # C/norm is used where norm > C only
                th = np.where(out, th * (C[:a] / norm), th)
        theta[:a] = th
    return list(theta)
