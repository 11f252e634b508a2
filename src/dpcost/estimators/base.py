"""What every estimator module shares: input checks, and the clipping and projections that make sensitivities true."""

from __future__ import annotations

import math
import numbers
import sys
import weakref

import numpy as np

from ..dp.mechanisms import check_positive
from ..errors import DataError, PrivacyError


def frozen(X) -> bool:
    """True for a dense array whose contents cannot change behind its users: read-only and owning its data (the
    simulation marks every draw so, :func:`dpcost.simulation.run.run_job`). Only such arrays are memoised by
    identity (:class:`FrozenMemo`); any other input is recomputed at every call. A frozen array must stay frozen:
    numpy lets the owner of the data make it writeable again, and a memo would then serve its old contents."""
    return isinstance(X, np.ndarray) and X.flags.owndata and not X.flags.writeable


class FrozenMemo:
    """Values computed from a :func:`frozen` array (and hashable constants), by the array's identity: an entry lives
    while its array does (a weak reference drops it), at most ``size`` are kept (the least recently used goes). Why: the
    simulation's curves share one draw, and each clipped it again (Figure 5: ten 160 MB copies a repetition)."""

    def __init__(self, size: int):
        self.size, self._entries = size, {}

    def get(self, X, key, compute):
        if not frozen(X):
            return compute()
        k = (id(X), key)
        hit = self._entries.pop(k, None)
        if hit is not None and hit[0]() is X:
            self._entries[k] = hit  # the most recent last: the oldest is evicted first
            return hit[1]
        value = compute()
        if len(self._entries) >= self.size:
            del self._entries[next(iter(self._entries))]
        self._entries[k] = (weakref.ref(X, lambda _, k=k: self._entries.pop(k, None)), value)
        return value


_FACTS = FrozenMemo(16)


def all_finite(X) -> bool:
    """No NaN or inf in X (memoised for a :func:`frozen` X: one pass over a 256 MB draw instead of one per check)."""
    return bool(_FACTS.get(X, "finite", lambda: np.isfinite(X).all()))


def extremes(X) -> tuple[float, float]:
    """(min X, max X) of a non-empty array (memoised for a :func:`frozen` X, as :func:`all_finite`)."""
    return _FACTS.get(X, "extremes", lambda: (X.min(), X.max()))


def beyond(X, bound: float) -> bool:
    """Whether some entry of a dense X lies outside [−bound, bound] (one min and one max, by :func:`extremes`)."""
    if not X.size:
        return False
    lo, hi = extremes(X)
    return bool(hi > bound or lo < -bound)


def check_design(X, y) -> tuple[np.ndarray, np.ndarray]:
    """X of shape (n, d) and y of shape (n,), finite, n ≥ 2, as float arrays."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise DataError(f"expected X of shape (n, d) and y of shape (n,), got {X.shape} and {y.shape}")
    if X.shape[0] < 2:
        raise DataError(f"need at least 2 rows, got {X.shape[0]}")
    if not (all_finite(X) and all_finite(y)):
        raise DataError("X and y must be finite (found NaN or inf)")
    return X, y


def check_matrix(X) -> np.ndarray:
    """A finite data matrix of shape (n, d), n ≥ 1."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 1:
        raise DataError(f"expected a data matrix of shape (n, d), got {X.shape}")
    if not all_finite(X):
        raise DataError("the data hold NaN or infinite values")
    return X


def check_s(s: int, d: int) -> int:
    """A sparsity 1 ≤ s ≤ d."""
    if not (isinstance(s, (int, np.integer)) and 1 <= s <= d):
        raise PrivacyError(f"sparsity s must be an integer between 1 and d={d}, got {s!r}")
    return int(s)


def check_count(name: str, value: int) -> int:
    """An iteration count or batch size: an integer ≥ 1 (a bool is not one)."""
    if not (isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1):
        raise PrivacyError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def issparse(a) -> bool:
    """Whether ``a`` is a scipy sparse matrix or array, without importing scipy.sparse (slow to import, and needed
    only by a sparse input, which cannot exist unless someone has imported it)."""
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and sp.issparse(a)


def scipy_sparse():
    """scipy.sparse, for code handling an input :func:`issparse` found sparse (so already imported)."""
    from scipy import sparse

    return sparse


def take_rows(a: np.ndarray, rows) -> np.ndarray:
    """``a[rows]`` (rows: an index array of any shape), the same array: by ``take`` where ``a`` is a C-contiguous
    ndarray, 5× faster than fancy indexing on a 20,640 × 5 design; by indexing otherwise (an F-ordered array, where
    ``take`` is 9× slower; a strided view; a scipy sparse matrix)."""
    return a.take(rows, axis=0) if isinstance(a, np.ndarray) and a.flags.c_contiguous else a[rows]


_TINY = np.finfo(float).tiny


def clip_factor(norms: np.ndarray, bound: float) -> np.ndarray:
    """min(1, bound/norm): the factor that brings a vector of the given norm into the ball of radius ``bound``. Only
    for norms that can be trusted: every clip in the package reaches it through :func:`row_norm_parts`."""
    with np.errstate(over="ignore"):  # bound/norm overflows for a tiny norm: the factor is 1, as it should be
        return _clip_factor(norms, bound)


def _clip_factor(norms: np.ndarray, bound: float) -> np.ndarray:
    """:func:`clip_factor` in one buffer, for a caller that already ignores overflow (a step of a gradient loop)."""
    f = np.maximum(norms, _TINY)
    if not isinstance(f, np.ndarray):  # one norm: a scalar, no buffer to reuse
        return np.minimum(1.0, bound / f)
    np.divide(bound, f, out=f)
    return np.minimum(f, 1.0, out=f)


# rows of U squared and summed at a time by row_norms: 2^17 entries (1 MB), which stay in cache, where one n × d
# temporary of squares costs as much in fresh pages as the sums themselves (a 200,000 × 8 design: 8 ms against 3)
_NORM_BLOCK = 2**17


def row_norms(U) -> np.ndarray:
    """‖u_i‖₂ of every row of a dense or sparse U, plain √Σu² (use :func:`row_norm_parts` for a clip). Dense: equal bit
    for bit to ``np.linalg.norm(U, axis=1)`` (test_decoy_batch.py pins it): with fewer than 8 columns numpy adds a
    row's squares left to right, which a sum over columns repeats without numpy's slow reduction over a short axis
    (3× faster at d = 5). From 8 to 128 columns of a C-ordered float U numpy sums a row pairwise (its
    ``pairwise_sum``: 8 running sums over the columns j mod 8, added as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) +
    (r6 + r7)), then the last d mod 8 columns in turn), which :func:`_pairwise_row_sums` repeats over columns (3×
    faster at d = 8); any other layout or type, or more columns, gets numpy's norm itself. Rows are independent, so
    they are taken in blocks of :data:`_NORM_BLOCK` entries."""
    if issparse(U):
        return np.sqrt(np.asarray(U.multiply(U).sum(axis=1)).ravel())
    n, d = U.shape
    if d >= 8:
        if d > 128 or not U.flags.c_contiguous or U.dtype != np.float64:  # numpy splits its sum, or goes in order
            return np.linalg.norm(U, axis=1)
        sums = _pairwise_row_sums
    else:
        sums = _ordered_row_sums
    s = np.empty(n, dtype=(U[:1] * U[:1]).dtype)
    step = max(1, _NORM_BLOCK // max(d, 1))
    for i in range(0, n, step):
        V = U[i : i + step]
        s[i : i + step] = sums(V * V)
    return np.sqrt(s, out=s)


def _ordered_row_sums(sq: np.ndarray) -> np.ndarray:
    """Every row of sq summed left to right, numpy's order with fewer than 8 columns (see :func:`row_norms`)."""
    s = sq[:, 0].copy()
    for j in range(1, sq.shape[1]):
        s += sq[:, j]
    return s


def _pairwise_row_sums(sq: np.ndarray) -> np.ndarray:
    """numpy's ``pairwise_sum`` of every row of a C-ordered sq with 8 to 128 columns, in numpy's order (see
    :func:`row_norms`). The tree is taken on an (n, 2, 2, 2) view of the 8 running sums, so each addition is one
    strided pass over all rows rather than a call per row."""
    n, d = sq.shape
    head = d - d % 8
    r = sq[:, :8].copy() if d > 8 else sq
    for i in range(8, head, 8):
        r += sq[:, i : i + 8]
    r = r.reshape(n, 2, 2, 2)
    r = r[..., 0] + r[..., 1]  # r0 + r1, r2 + r3, r4 + r5, r6 + r7
    r = r[..., 0] + r[..., 1]  # (r0 + r1) + (r2 + r3), (r4 + r5) + (r6 + r7)
    s = r[:, 0] + r[:, 1]
    for j in range(head, d):
        s += sq[:, j]
    return s


# √Σv² is exact to a few ulps while the computed norm lies in [2^-480, 2^480]: then no square overflowed, and the
# squares that underflowed (each below 2^-1022, at most d of them) are below 2^-62·d of the sum. Outside that range
# (0 for a non-zero row, inf, or merely imprecise) a row's norm is recomputed from the row scaled by its largest entry.
_TRUSTED = (2.0**-480, 2.0**480)


def row_norm_parts(V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(s, q) with ‖v‖₂ = s·q for every row v of V (last axis), both finite for every finite row, whatever its scale.

    The one place where a norm that feeds a clip factor is computed. √Σv² fails at both ends of the float range:
    with entries below ~1e-154 the squares underflow and the norm comes out 0 or too small (a clip factor of 1, so
    the row's product with a large residual enters a released sum unclipped); above ~1e154 they overflow to inf. A row
    whose norm lies in the trusted range gets s = 1 and q = numpy's norm, bit for bit as before; a zero row s = 1,
    q = 0; any other row s = max_j |v_j| and q = ‖v/s‖₂ ∈ [1, √d]. Rows with a non-finite entry keep q = NaN or inf
    (the caller has set such rows aside). V may be a scipy sparse matrix (its rows)."""
    shape = V.shape[:-1]
    if not issparse(V):
        V = V.reshape(-1, V.shape[-1])  # a single vector, or a batch over leading axes, as rows
    with np.errstate(over="ignore", under="ignore"):
        q = row_norms(V)
    s = np.ones_like(q)
    odd = ~((q >= _TRUSTED[0]) & (q <= _TRUSTED[1]))
    if odd.any():
        idx = np.flatnonzero(odd)
        W = V[idx]
        m = abs(W).max(axis=1).toarray().ravel() if issparse(W) else np.max(np.abs(W), axis=1)
        rescale = (m > 0) & np.isfinite(m)  # a zero row keeps q = 0; a non-finite one its inf or NaN
        if rescale.any():
            idx, W, m = idx[rescale], W[np.flatnonzero(rescale)], m[rescale]
            s[idx] = m
            q[idx] = row_norms(scipy_sparse().diags(1 / m) @ W if issparse(W) else W / m[:, None])
    return s.reshape(shape), q.reshape(shape)


def ball_factor(V: np.ndarray, bound: float) -> np.ndarray:
    """min(1, bound/‖v‖₂) for every row v of V (last axis; dense, or the rows of a sparse matrix), shape (…, 1),
    finite and in [0, 1] for every finite V; ``bound`` a number, or an array broadcasting to V's rows (…).

    The norm comes from :func:`row_norm_parts`: a row whose squares overflow (|v_j| ≳ 1e154) lands on the sphere,
    not at the origin, and one whose squares underflow gets its true norm, not 0. Every row whose norm lies in the
    trusted range gets exactly the factor :func:`clip_factor` gave before, bit for bit."""
    s, q = row_norm_parts(V)
    if np.ndim(bound):  # a bound per row (a stack of blocks, each its own): one per entry of q
        bound = np.broadcast_to(bound, q.shape)
    factor = np.asarray(clip_factor(q, bound))  # one vector: a 0-d array, so the odd row can be set below
    odd = s != 1.0
    if odd.any():
        with np.errstate(over="ignore"):  # bound/s overflows for a tiny row: its factor is 1
            factor[odd] = np.minimum(1.0, ((bound[odd] if np.ndim(bound) else bound) / s[odd]) / q[odd])
    return factor[..., None]


class JointClip:
    """Per-example terms u_i·r_i clipped jointly, ‖u_i r_i‖₂ ≤ C, for fixed rows u_i and residuals r that change at
    every step (clipped noisy gradient descent). Rows are split as u_i = s_i·v_i (:func:`row_norm_parts`) so that no
    norm or product underflows into a factor of 1 or overflows into a spurious 0:

    * ``V``: the rows to sum with — U itself when every row's norm is trusted, else U with the other rows divided by
      their s_i (only those rows differ);
    * :meth:`weights` ``(r, C)``: w with Σ_i v_i w_i = Σ_i clip_C(u_i r_i), so each term v_i w_i has norm ≤ C (to
      rounding) and |w_i| ≤ C/‖v_i‖ (0 for a zero row), so w/C cannot overflow;
    * :meth:`separate` ``(r, C, R)``: w with v_i w_i = clip_C(u_i)·clip_R(r_i);
    * :meth:`norms` ``(r)``: ‖u_i r_i‖₂ (inf where it exceeds the float range).

    On rows whose norm is trusted and whose |r_i|·‖u_i‖ is finite the arithmetic is the plain one, bit for bit. A
    term that is not finite (a residual that overflowed, inf − inf) is the public 0, inside the ball. U must be
    finite (rows that overflowed are set to 0 by the caller)."""

    def __init__(self, U: np.ndarray):
        self.s, self.q = row_norm_parts(U)
        self.odd, self.zero = self.s != 1.0, np.zeros(len(U), dtype=bool)
        # zero rows are read from U itself, not from the norms, but only among the rows of norm 0, where every zero
        # row is: U.any(axis=1) over all rows, a reduction over a short axis, cost as much as the norms
        maybe = np.flatnonzero(self.q == 0)
        self.zero[maybe] = ~U[maybe].any(axis=1)
        self.any_odd, self.any_zero = bool(self.odd.any()), bool(self.zero.any())  # asked at every step: once here
        self.V = U / self.s[:, None] if self.any_odd else U  # dividing by 1.0 leaves the other rows' bits

    def norms(self, r: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            g = np.abs(r) * self.q
            if self.any_odd:
                g[self.odd] = (np.abs(r[self.odd]) * self.s[self.odd]) * self.q[self.odd]
        return g

    def weights(self, r: np.ndarray, C: float) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            g = np.abs(r) * self.q
            w = _clip_factor(g, C)
            w *= r
            # rows whose norm was rescaled, or whose product overflowed: r_i·s_i clipped to ±C/q_i directly, which
            # no overflow of r_i·s_i can break (±inf clips to the sphere). g ≥ 0 or NaN: a finite sum means no row
            # overflowed (a sum that overflows only sends it to the row-by-row test)
            if self.any_odd or not math.isfinite(g.sum()):
                redo = self.odd | ~np.isfinite(g)
                if redo.any():  # C: a number, or one per row
                    cap = (C[redo] if np.ndim(C) else C) / self.q[redo]
                    w[redo] = np.clip(r[redo] * self.s[redo], -cap, cap)
        if self.any_zero:  # a zero row's term is 0 whatever its residual: its weight 0, not the residual
            w[self.zero] = 0.0
        return _finite_or_zero(w)

    def separate(self, r: np.ndarray, C: float, R: float) -> np.ndarray:
        f = clip_factor(self.q, C)
        if self.any_odd:
            with np.errstate(over="ignore"):  # C/s overflows for a tiny row: its factor is 1
                f[self.odd] = self.s[self.odd] * np.minimum(1.0, (C / self.s[self.odd]) / self.q[self.odd])
        with np.errstate(invalid="ignore"):
            return _finite_or_zero(f * np.clip(r, -R, R))


def _finite_or_zero(w: np.ndarray) -> np.ndarray:
    """w with every non-finite entry set to the public 0 (a term inside every ball). A sum is finite only if every
    entry is (one pass, no mask); a sum that overflows only sends it to the entry-by-entry test."""
    return w if math.isfinite(w.sum()) or np.isfinite(w).all() else np.where(np.isfinite(w), w, 0.0)


def clip_rows(X: np.ndarray, c_x: float) -> np.ndarray:
    """Scale every row with ‖x_i‖₂ > c_x down to norm c_x (rows inside the ball are unchanged); every finite row,
    however large, lands in the ball (:func:`ball_factor`)."""
    return X * ball_factor(X, c_x)


def clip_design(X, y, B_X: float, B_Y: float) -> tuple[np.ndarray, np.ndarray]:
    """Checked design with rows clipped to ‖x‖₂ ≤ B_X and y to [−B_Y, B_Y] (public bounds, never from the data)."""
    X, y = check_design(X, y)
    B_X, B_Y = check_positive("B_X", B_X), check_positive("B_Y", B_Y)
    return clip_rows(X, B_X), np.clip(y, -B_Y, B_Y)


def clipped_table(X, y, B_X: float, B_Y: float, names: tuple[str, str] = ("B_X", "B_Y")) -> np.ndarray:
    """The checked, clipped design of :func:`clip_design` as one (n, d + 1) array [clip_rows(X), clip(y)], the same
    bits, without a second copy of X (0.9 GB at 5,000,000 × 22); ``names`` name the bounds in an error."""
    X, y = check_design(X, y)
    B_X, B_Y = check_positive(names[0], B_X), check_positive(names[1], B_Y)
    Z = np.empty((len(y), X.shape[1] + 1))
    Z[:, :-1] = X
    Z[:, :-1] *= ball_factor(X, B_X)  # clip_rows's product, in place
    Z[:, -1] = np.clip(y, -B_Y, B_Y)
    return Z


def project_l2_ball(beta: np.ndarray, C: float) -> np.ndarray:
    """Π_C: Euclidean projection on the ℓ2 ball of radius C (batched over leading axes), finite for finite β."""
    return beta * ball_factor(beta, C)


def ridge_in_ball(H: np.ndarray, g: np.ndarray, C: float) -> np.ndarray:
    """argmin_{‖β‖≤C} ½β'Hβ − g'β for symmetric positive definite H (Lagrange multiplier by root finding)."""
    return ridge_in_ball_eig(*np.linalg.eigh(H), g, C)


def ridge_in_ball_eig(w: np.ndarray, V: np.ndarray, g: np.ndarray, C: float) -> np.ndarray:
    """:func:`ridge_in_ball` from H's eigendecomposition (w, V) = ``np.linalg.eigh(H)``: many g with one H (a batch
    of runs on one data set) decompose H once."""
    gv = V.T @ g

    def beta_norm(mu):  # decreasing in mu; np.linalg.norm's √(v·v), bit for bit, without its checks (an audit's
        v = gv / (w + mu)  # 60,000 fits call it 850,000 times)
        return math.sqrt(v.dot(v))

    if beta_norm(0.0) <= C:
        return V @ (gv / w)
    hi = 1.0
    while beta_norm(hi) > C:
        hi *= 2
    from scipy import optimize  # here: slow to import

    mu = optimize.brentq(lambda m: beta_norm(m) - C, 0.0, hi, xtol=1e-14)
    return V @ (gv / (w + mu))


def require_replace(privacy, method: str, why: str) -> None:
    """Refuse add/remove neighbours for an estimator whose sensitivity, noise scale or post-processing uses the
    sample size n (``why``): under add/remove n is private, and a release that depends on it tells n and n + 1 apart
    (e.g. through the grid its noise lies on)."""
    if privacy.neighbours != "replace":
        raise PrivacyError(f"{method} is analysed under replace-one neighbours only ({why})")


def proven_under(privacy, method: str, why: str) -> bool:
    """For a paper's procedure proven for add/remove neighbours but with n treated as public (``why`` says where n
    enters): True under replace-one; under add/remove refused, or with ``on_invalid="warn"`` kept for reproduction
    and False — the caller's plan is then marked unproven, so the ledger voids it."""
    if privacy.neighbours == "replace":
        return True
    privacy.outside_validity(
        f"{method} under add/remove neighbours: {why}, but n is private under add/remove",
        remedy="use neighbours 'replace'",
    )
    return False
