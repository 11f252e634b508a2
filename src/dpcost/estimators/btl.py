"""Private ranking in the Bradley–Terry–Luce model — Cai, Wang & Zhang, "Score Attack" (2025), §4.2 and Appendix B:
objective perturbation of the ℓ2-penalised MLE (4.4), its item-level sensitivity and its privacy plan, the
Erdős–Rényi comparison design of §4, and the non-private penalised MLE on the same Θ.

Model (§4): n items; each pair i < j is compared independently with probability p (the comparison graph G, an edge
list ``edges`` of rows (i, j), i < j, public); Y_ij = 1 (i wins) with probability e^{θ_i}/(e^{θ_i} + e^{θ_j}).
Θ = {θ ∈ ℝⁿ: ‖θ‖∞ ≤ 1, 1'θ = 0}. With B the m × n incidence matrix (row (i, j) is e_i − e_j),
L(θ; y) = Σ_{(i,j)∈G} log(1 + e^{θ_i − θ_j}) − y'Bθ: the data enter only through the linear term −B'y.

Neighbours (§4, item level): y and y′ differ only in outcomes of comparisons involving one item i (any or all of
them); the graph and n are the same and public. This is "replace one record", a record being one item's outcomes.

Sensitivity (docs/proofs.md, "BTL sensitivity and γ"). Between neighbours the gradient moves by
Δ = B'(y − y′) = Σ_{j∈G_i} s_j (e_i − e_j), s_j ∈ {−1, 0, 1}, so ‖Δ‖₂² = (Σ_j s_j)² + Σ_j s_j² ≤ deg(i)² + deg(i):
the e_i components add up. The bound √(d_max² + d_max) is attained: the max-degree item loses every comparison in
y and wins every one in y′ (:func:`worst_case_pair`). The proof of Prop 4.3 bounds ‖Δ‖₂ by 2√n, which is smaller
as soon as d_max² + d_max > 4n (e.g. every complete graph on n ≥ 6 items: √(n² − n) ≈ n against 2√n).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..dp.mechanisms import check_positive, gaussian_sigma
from ..dp.plan import PrivacyPlan, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import draw, grid_scale
from ..errors import DataError, PrivacyError
from .base import require_replace

SENSITIVITIES = ("degree", "paper")
TOL = 1e-10  # certified ℓ2 distance of the returned θ̂ to the exact minimiser (btl_penalised_argmin)

# ---------------------------------------------------------------------------------------------------------------
# The design, the data and the likelihood (§4)
# ---------------------------------------------------------------------------------------------------------------


def comparison_graph(n: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """The Erdős–Rényi comparison graph of §4: each pair i < j compared independently with probability p.
    Returns the edge list, shape (m, 2), rows (i, j) with i < j in lexicographic order. Public (not private data)."""
    n = _check_items(n)
    if not (isinstance(p, numbers.Real) and 0 < p <= 1):
        raise DataError(f"the comparison probability p must lie in (0, 1], got {p!r}")
    i, j = np.triu_indices(n, 1)
    keep = rng.random(i.size) < p
    return np.column_stack([i[keep], j[keep]]).astype(np.int64)


def btl_outcomes(theta, edges, rng: np.random.Generator) -> np.ndarray:
    """Y_ij = 1 with probability e^{θ_i}/(e^{θ_i} + e^{θ_j}) for every edge (i, j), independently (§4); floats 0/1."""
    from scipy import special  # here: slow to import

    theta = np.asarray(theta, dtype=float)
    if theta.ndim != 1 or not np.all(np.isfinite(theta)):
        raise DataError(f"theta must be a finite vector with one entry per item, got shape {theta.shape}")
    edges = check_graph(edges, theta.size)
    return (rng.random(len(edges)) < special.expit(theta[edges[:, 0]] - theta[edges[:, 1]])).astype(float)


def _check_items(n_items) -> int:
    if not (isinstance(n_items, numbers.Integral) and not isinstance(n_items, bool) and n_items >= 2):
        raise DataError(f"n_items must be an integer >= 2, got {n_items!r}")
    return int(n_items)


def check_graph(edges, n_items: int) -> np.ndarray:
    """A comparison graph on items 0 … n_items − 1: integer rows (i, j), 0 ≤ i < j < n_items, no pair twice, at
    least one edge. Returned as int64 (m, 2)."""
    n = _check_items(n_items)
    e = np.asarray(edges)
    if e.ndim != 2 or e.shape[1] != 2 or e.shape[0] < 1:
        raise DataError(f"edges must be a non-empty array of shape (m, 2), got shape {e.shape}")
    if e.dtype.kind not in "iu" and not (e.dtype.kind == "f" and np.all(np.isfinite(e)) and np.all(e == np.rint(e))):
        raise DataError("edges must hold integer item indices")
    e = e.astype(np.int64)
    if not np.all(e[:, 0] < e[:, 1]):
        raise DataError("every edge (i, j) must have i < j (no self-comparisons; each pair listed once as i < j)")
    if e.min() < 0 or e.max() >= n:
        raise DataError(f"edges refer to items outside 0 … {n - 1} (n_items = {n})")
    keys = e[:, 0] * n + e[:, 1]
    if not np.all(keys[1:] > keys[:-1]) and np.any(np.diff(np.sort(keys)) == 0):  # sorted lists: O(m) check
        raise DataError("a pair of items is listed more than once")
    return e


def check_comparisons(edges, y, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """The graph (:func:`check_graph`) and outcomes y, one per edge, each 0 or 1, as floats."""
    e = check_graph(edges, n_items)
    y = np.asarray(y)
    if y.shape != (len(e),):
        raise DataError(f"y must hold one outcome per edge, shape ({len(e)},), got {y.shape}")
    y = y.astype(float)
    if not np.all((y == 0) | (y == 1)):
        raise DataError("comparison outcomes y must be 0 or 1")
    return e, y


def degrees(edges, n_items: int) -> np.ndarray:
    """deg(i): the number of comparisons item i takes part in."""
    e = check_graph(edges, n_items)
    return np.bincount(e.ravel(), minlength=n_items)


def _incidence(edges: np.ndarray, n: int):
    """B, m × n: row (i, j) is e_i − e_j, so Bθ are the differences θ_i − θ_j."""
    from scipy import sparse  # here: slow to import

    m = len(edges)
    vals = np.empty(2 * m)
    vals[0::2], vals[1::2] = 1.0, -1.0
    return sparse.csr_matrix((vals, edges.ravel(), np.arange(0, 2 * m + 1, 2)), shape=(m, n))


def btl_nll(theta, edges, y) -> float:
    """The negative log-likelihood L(θ; y) = Σ_{(i,j)∈G} [−y_ij(θ_i − θ_j) + log(1 + e^{θ_i − θ_j})] (§4.2)."""
    theta = np.asarray(theta, dtype=float)
    e, y = check_comparisons(edges, y, theta.size)
    u = theta[e[:, 0]] - theta[e[:, 1]]
    return float(np.sum(np.logaddexp(0.0, u) - y * u))


def btl_grad(theta, edges, y) -> np.ndarray:
    """∇L(θ; y) = Σ_{(i,j)∈G} (σ(θ_i − θ_j) − y_ij)(e_i − e_j), σ the logistic function."""
    from scipy import special  # here: slow to import

    theta = np.asarray(theta, dtype=float)
    e, y = check_comparisons(edges, y, theta.size)
    r = special.expit(theta[e[:, 0]] - theta[e[:, 1]]) - y
    return np.bincount(e[:, 0], r, theta.size) - np.bincount(e[:, 1], r, theta.size)


# ---------------------------------------------------------------------------------------------------------------
# Neighbours and sensitivity
# ---------------------------------------------------------------------------------------------------------------


def are_item_neighbours(edges, y, y2, n_items: int) -> bool:
    """Whether y and y2 (same graph) differ only in comparisons that all involve one item: item-level neighbours."""
    e, y = check_comparisons(edges, y, n_items)
    y2 = check_comparisons(e, y2, n_items)[1]
    diff = e[y != y2]
    return not len(diff) or any(bool(np.all(np.any(diff == c, axis=1))) for c in diff[0])


def worst_case_pair(edges, y, n_items: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Neighbours attaining the sensitivity: i* = the max-degree item (lowest index on ties); y_lose is y with i*
    losing every comparison, y_win with i* winning every one (the other outcomes kept). Returns (y_lose, y_win, i*);
    ‖∇L(θ; y_lose) − ∇L(θ; y_win)‖₂ = √(deg(i*)² + deg(i*)) at every θ."""
    e, y = check_comparisons(edges, y, n_items)
    i = int(np.argmax(np.bincount(e.ravel(), minlength=n_items)))
    first, second = e[:, 0] == i, e[:, 1] == i  # Y_ij = 1 means the first item of the edge wins
    y_lose, y_win = y.copy(), y.copy()
    y_lose[first], y_lose[second] = 0.0, 1.0
    y_win[first], y_win[second] = 1.0, 0.0
    return y_lose, y_win, i


def btl_sensitivity(d_max: int) -> float:
    """The replace-item ℓ2 sensitivity of ∇L (equivalently of the linear term −B'y): √(d_max² + d_max) (module
    docstring; attained by :func:`worst_case_pair`)."""
    return math.sqrt(d_max * d_max + d_max)


def paper_sensitivity(n: int) -> float:
    """The bound 2√n of the proof of Prop 4.3 (App. B.4), below the true sensitivity when d_max² + d_max > 4n."""
    return 2 * math.sqrt(n)


# ---------------------------------------------------------------------------------------------------------------
# The constrained solver
# ---------------------------------------------------------------------------------------------------------------


def project_theta(z) -> np.ndarray:
    """Euclidean projection on Θ = {‖θ‖∞ ≤ 1, 1'θ = 0}: clip(z − τ, −1, 1) with the shift τ solving
    f(τ) = Σ_k clip(z_k − τ, −1, 1) = 0 (the KKT conditions of the projection). f is nonincreasing and piecewise
    linear with breakpoints z_k ± 1: it is evaluated at all 2n of them (sorting and prefix sums), and τ found exactly on
    the segment where f changes sign. O(n log n)."""
    z = np.asarray(z, dtype=float)
    n = z.size
    s = np.sort(z)
    csum = np.concatenate([[0.0], np.cumsum(s)])
    t = np.sort(np.concatenate([s - 1.0, s + 1.0]))

    def f_and_parts(tau):
        lo = np.searchsorted(s, tau - 1.0, side="right")  # z_k ≤ τ − 1: clipped to −1
        hi = np.searchsorted(s, tau + 1.0, side="left")  # z_k ≥ τ + 1: clipped to +1
        return (n - hi) - lo + (csum[hi] - csum[lo]) - (hi - lo) * tau, lo, hi

    f = f_and_parts(t)[0]
    k = min(int(np.searchsorted(-f, 0.0, side="left")), 2 * n - 1)  # first breakpoint with f ≤ 0
    if k == 0 or f[k] == 0:
        tau = t[k]
    else:  # f is linear on [t_{k−1}, t_k]
        tau = t[k - 1] + f[k - 1] * (t[k] - t[k - 1]) / (f[k - 1] - f[k])
    _, lo, hi = f_and_parts(np.array([tau]))
    lo, hi = int(lo[0]), int(hi[0])
    if hi > lo:  # the exact shift on that segment: Σ_free (z_k − τ) + #(+1) − #(−1) = 0
        tau = (csum[hi] - csum[lo] + (n - hi) - lo) / (hi - lo)
    return np.clip(z - tau, -1.0, 1.0)


def btl_penalised_argmin(edges, v, *, n_items: int, gamma: float, tol: float = TOL, max_iter: int = 100_000):
    """argmin over Θ of F(θ) = Σ_{(i,j)∈G} log(1 + e^{θ_i − θ_j}) + (γ/2)‖θ‖² + v'θ — the objective of (4.4) with
    the data's linear term −B'y and the noise w folded into v.

    Accelerated projected gradient with constant momentum (Nesterov 2018, §2.2, strongly convex case), step 1/L with
    L = γ + max_{(i,j)∈G}(deg i + deg j)/4 ≥ λ_max(∇²F) (σ' ≤ 1/4; λ_max of a graph Laplacian ≤ max over edges of
    deg i + deg j, Anderson & Morley 1985), momentum (√L − √μ)/(√L + √μ) with μ = γ (F is γ-strongly convex on ℝⁿ).
    Projection: :func:`project_theta`, exact. Stopping rule, a certificate: with z the extrapolated point,
    z⁺ = Π(z − ∇F(z)/L) and G = L(z − z⁺), strong convexity and smoothness give
    ‖z⁺ − θ*‖₂ ≤ ‖G‖(1/L + (1 + √2)/μ); the solver stops when this is ≤ ``tol`` (default 1e-10) and returns z⁺.
    """
    n = _check_items(n_items)
    e = check_graph(edges, n)
    v = np.asarray(v, dtype=float)
    if v.shape != (n,) or not np.all(np.isfinite(v)):
        raise DataError(f"the linear term v must be finite of shape ({n},), got {v.shape}")
    return _argmin(e, v, n, check_gamma(gamma), check_positive("tol", tol), max_iter)


def _argmin(e: np.ndarray, v: np.ndarray, n: int, gamma: float, tol: float, max_iter: int = 100_000) -> np.ndarray:
    """:func:`btl_penalised_argmin` on checked inputs."""
    from scipy import special  # here: slow to import

    B = _incidence(e, n)
    Bt = B.T  # CSC: B'r without a conversion
    deg = np.bincount(e.ravel(), minlength=n)
    L = gamma + float((deg[e[:, 0]] + deg[e[:, 1]]).max()) / 4
    mu = gamma
    momentum = (math.sqrt(L) - math.sqrt(mu)) / (math.sqrt(L) + math.sqrt(mu))
    factor = 1 / L + (1 + math.sqrt(2)) / mu
    x = z = np.zeros(n)
    for _ in range(max_iter):
        g = Bt @ special.expit(B @ z) + gamma * z + v
        x_new = project_theta(z - g / L)
        if L * np.linalg.norm(z - x_new) * factor <= tol:
            return x_new
        z = x_new + momentum * (x_new - x)
        x = x_new
    raise RuntimeError(f"btl_penalised_argmin: no certified tol={tol} after {max_iter} iterations")


def check_gamma(gamma) -> float:
    """γ > 0 finite: (4.4) needs it (Prop 4.3), and the solver's certificate uses it as the strong convexity."""
    if isinstance(gamma, bool):
        raise PrivacyError(f"gamma must be a finite number > 0, got {gamma!r}")
    return check_positive("gamma", gamma)


def default_gamma(edges, n_items: int, c0: float = 1.0) -> float:
    """γ = c₀√(n p̂) (Prop 4.4, c₀ unspecified there; c₀ = 1 by default, docs/proofs.md, "BTL sensitivity and γ"),
    with p̂ = m/(n(n−1)/2) the edge density of the public graph standing in for p."""
    m = len(check_graph(edges, n_items))
    return check_positive("c0", c0) * math.sqrt(n_items * m / (n_items * (n_items - 1) / 2))


# ---------------------------------------------------------------------------------------------------------------
# The private estimator (4.4) and its plan
# ---------------------------------------------------------------------------------------------------------------


def dp_btl_plan(privacy: Privacy, n: int, d: int, *, d_max: int | None, sensitivity: str) -> PrivacyPlan:
    """One Gaussian release: the linear term −B'y of the objective (4.4), of ℓ2 sensitivity Δ₂; θ̂ is post-processing.

    n      the number of items (the paper's n; a δ formula is resolved at it). d: the dimension of θ, which is n.
    d_max  the comparison graph's maximum degree, public, required (no default: defaults live in dp_btl, which
           passes the graph's own when its d_max is None). None here assumes n − 1 (the complete graph), a bound valid
           for every graph on n items, so a plan made from (privacy, n, d) alone never under-noises (it over-noises
           sparse graphs, and then records more noise than dp_btl draws: pass d_max wherever the graph is known).
    sensitivity
           ``"degree"``: Δ₂ = √(d_max² + d_max), the true replace-item sensitivity (module docstring; attained by
           the max-degree item losing every comparison against winning every one, :func:`worst_case_pair`).
           ``"paper"``: Δ₂ = 2√n as in the proof of Prop 4.3, kept for reproduction. Where 2√n < √(d_max² + d_max)
           it does not bound the sensitivity: refused, or run with a PRIVACY WARNING (``on_invalid="warn"``), flagged
           in the plan's assumption and parameters and ``proven=False``.

    Calibrations. ``"paper"``: σ = Δ₂√(2 log(2/δ) + ε)/ε, Prop 4.3 written for a general Δ₂ (at Δ₂ = 2√n it is the
    printed √n√(8 log(2/δ) + 4ε)/ε). Its proof — privacy loss ≤ (2σΔ₂√(2 log(2/δ)) + Δ₂²)/(2σ²) off an event of
    probability δ — holds at every ε > 0: with this σ the bound is ≤ ε because 8L(2L + ε) ≤ (4L + ε)², L = log(2/δ).
    ``"tight"``: the analytic Gaussian σ (Balle & Wang 2018, :func:`~dpcost.dp.mechanisms.gaussian_sigma`), exact.
    Why exact: y enters (4.4) only through the linear term, so F(θ) = Σ log(1 + e^{θ_i − θ_j}) + (γ/2)‖θ‖² + v'θ with
    v = −B'y + w, and θ̂ = argmin_Θ F is a fixed, y-free function of v — post-processing of the Gaussian mechanism
    v = −B'y + w. This is the paper's observation that the Hessian does not depend on y (Jacobian ratio 1), which
    makes the output density ratio exactly the Gaussian one, (‖∇R(t; y′)‖² − ‖∇R(t; y)‖²)/(2σ²); and it covers the
    constraint set directly: a minimiser over any fixed closed convex set is post-processing too, so the successive
    approximation of Kifer, Smith & Thakurta (2012, Thm 1, Lemmas 20-21) the paper cites is not needed. Any γ > 0.
    The noise is an exact discrete Gaussian on a grid (:mod:`dpcost.dp.samplers`), its rounding paid for n coordinates.
    """
    n = _check_items(n)
    p = privacy.at(n)
    require_replace(p, "dp_btl", "item-level neighbours on a fixed public graph, n public")
    d_max = _check_plan_arguments(n, d, d_max, sensitivity)
    epsilon, delta = p.epsilon, p.delta
    true_sens, printed = btl_sensitivity(int(d_max)), paper_sensitivity(n)
    sens = true_sens if sensitivity == "degree" else printed
    gap = sens < true_sens
    if p.calibration == "paper":
        sigma = sens * math.sqrt(2 * math.log(2 / delta) + epsilon) / epsilon
        comp = "single Gaussian release of the linear term of (4.4), Prop 4.3's calibration; theta-hat post-processing"
    else:
        sigma = gaussian_sigma(sens, epsilon, delta)
        comp = "single Gaussian release of the linear term of (4.4), analytic Gaussian; theta-hat post-processing"
    sigma = grid_scale(sigma, sens, n, "l2", "gaussian", p.sampler)
    assumption = (
        f"comparison graph public and fixed, max degree d_max = {d_max}; n = {n} items public; outcomes in {{0, 1}}; "
        f"estimate the argmin over {{||theta||_inf <= 1, 1'theta = 0}}"
    )
    params = {
        "d_max": int(d_max),
        "sensitivity sqrt(d_max^2 + d_max)": true_sens,
        "printed sensitivity 2 sqrt(n)": printed,
        "printed / true sensitivity": printed / true_sens,
        "sigma / sensitivity": sigma / sens,
    }
    if gap:
        msg = (
            f"the printed BTL sensitivity 2 sqrt(n) = {printed:.4g} is below the true sqrt(d_max^2 + d_max) = "
            f"{true_sens:.4g} (d_max = {d_max}): the noise covers {printed / true_sens:.3g} of the sensitivity"
        )
        p.outside_validity(msg)
        assumption = "NOT PROVEN: " + msg + "; " + assumption
        params["PRIVACY GAP"] = msg
    what = "gaussian: linear term of the objective (4.4)"
    rel = grid_release("gaussian", what, sens, "l2", sigma, 1, epsilon, delta, coordinates=n, sampler=p.sampler)
    neighbours = p.relation + " (a record: all comparison outcomes of one item; graph and n public)"
    why = "one Gaussian release of the linear term -B'y; the constrained solve is post-processing"
    return PrivacyPlan(
        "dp_btl",
        epsilon,
        delta,
        p.calibration,
        comp,
        assumption,
        (rel,),
        neighbours,
        params,
        proven=not gap,
        whole_mechanism=True,
        whole_mechanism_why=why,
    )


def _check_plan_arguments(n: int, d: int, d_max: int | None, sensitivity: str) -> int:
    """d_max of :func:`dp_btl_plan` (n − 1 when None: the complete graph), after its arguments are checked: d = n,
    a known sensitivity, d_max an integer in [1, n − 1]."""
    if d != n:
        raise PrivacyError(f"the BTL parameter has one coordinate per item: d must equal n = {n}, got {d!r}")
    if sensitivity not in SENSITIVITIES:
        raise PrivacyError(f"sensitivity must be one of {SENSITIVITIES}, got {sensitivity!r}")
    d_max = n - 1 if d_max is None else d_max
    if not (isinstance(d_max, numbers.Integral) and not isinstance(d_max, bool) and 1 <= d_max <= n - 1):
        raise PrivacyError(f"d_max must be an integer in [1, n - 1] = [1, {n - 1}], got {d_max!r}")
    return d_max


def dp_btl(
    edges,
    y,
    *,
    n_items: int,
    privacy: Privacy,
    rng: np.random.Generator,
    gamma: float | None = None,
    c0: float = 1.0,
    sensitivity: str = "degree",
    d_max: int | None = None,
    tol: float = TOL,
) -> np.ndarray:
    """DP BTL estimator by objective perturbation — Cai, Wang & Zhang, "Score Attack", eq. (4.4), Prop 4.3.

    θ̂ = argmin_{θ∈Θ} L(θ; y) + (γ/2)‖θ‖² + w'θ, w ~ N(0, σ²I_n), Θ = {‖θ‖∞ ≤ 1, 1'θ = 0}.
    Implemented as the release v = −B'y + w (exact discrete Gaussian on a grid, σ from :func:`dp_btl_plan`) followed
    by the y-free solve :func:`btl_penalised_argmin` (certified to ``tol`` in ℓ2).

    Privacy: (ε, δ)-DP under item-level neighbours (all outcomes of one item may change; graph and n public).
    γ: default c₀√(n p̂) (Prop 4.4 with c₀ = 1), p̂ the public graph's edge density; privacy holds for any γ > 0.
    d_max: a public bound on the maximum degree, ≥ the graph's (refused otherwise); None: the graph's own, which is
    public. sensitivity: ``"degree"`` (true) or ``"paper"`` (2√n, refused or warned where it undercounts).
    Utility (Prop 4.4): E‖θ̂ − θ‖² ≲ 1/p + σ²/(np²). With the true sensitivity σ ≍ np√log(1/δ)/ε on dense graphs,
    so the privacy term is ≍ n log(1/δ)/ε², not the log(1/δ)/(p²ε²) of Thm 4.2 (which uses σ ≍ √n√log(1/δ)/ε).
    """
    n = _check_items(n_items)
    e, y = check_comparisons(edges, y, n)
    gamma = default_gamma(e, n, c0) if gamma is None else check_gamma(gamma)
    graph_max = int(np.bincount(e.ravel(), minlength=n).max())
    if d_max is None:
        d_max = graph_max
    elif not (isinstance(d_max, numbers.Integral) and not isinstance(d_max, bool) and d_max >= graph_max):
        raise PrivacyError(f"d_max={d_max!r} is below the comparison graph's maximum degree {graph_max}")
    plan = dp_btl_plan(privacy, n, n, d_max=int(d_max), sensitivity=sensitivity)
    noise = draw("gaussian", plan.releases[0].noise_scale, n, rng, privacy.sampler)
    linear = -np.bincount(e[:, 0], y, n) + np.bincount(e[:, 1], y, n)  # −B'y: the data's only entry into (4.4)
    return _argmin(e, noise.add(linear), n, gamma, check_positive("tol", tol))


def btl_mle(edges, y, *, n_items: int, gamma: float | None = None, c0: float = 1.0, tol: float = TOL) -> np.ndarray:
    """Non-private baseline: the penalised MLE argmin_{θ∈Θ} L(θ; y) + (γ/2)‖θ‖², i.e. (4.4) with w = 0, same Θ, same
    default γ = c₀√(n p̂) and solver (:func:`btl_penalised_argmin`). Any γ > 0 (a small γ approaches the MLE on Θ,
    at more iterations)."""
    n = _check_items(n_items)
    e, y = check_comparisons(edges, y, n)
    gamma = default_gamma(e, n, c0) if gamma is None else check_gamma(gamma)
    linear = -np.bincount(e[:, 0], y, n) + np.bincount(e[:, 1], y, n)
    return _argmin(e, linear, n, gamma, check_positive("tol", tol))
