"""DP-IGHT (Wang & Gu, IJCAI 2019): plans in both calibrations computed by hand, refusals, sparse == dense, the noise
entering the gradient, the error falling as ε grows, worst-case neighbours of one gradient release approaching 2G/n
and never above it (planted bugs break it), and a statistical audit that passes at the stated ε and catches a
planted bug (clipping left out, noise scaled by 0.3)."""

import math

import numpy as np
import pytest
from scipy import sparse

from dpcost.dp.accountant import gaussian_noise_multiplier
from dpcost.dp.audit import epsilon_lower_bound
from dpcost.dp.privacy import Privacy
from dpcost.dp.samplers import draw, grid_scale
from dpcost.errors import DataError, PrivacyError
from dpcost.estimators import dp_ight as mod
from dpcost.estimators.dp_ight import dp_ight, dp_ight_plan, gradient_sensitivity

SUPPORT = [3, 17, 29, 50, 81]


def regression_data(n=1000, d=100, seed=0):
    """x ~ N(0, I_d) (‖x‖ ≈ √d = 10: c_x = 10 clips about half the rows, slightly), θ* 5-sparse (‖θ*‖ = 1.9,
    max |x'θ*| ≈ 6.6), y = x'θ* + N(0, 0.25)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    theta = np.zeros(d)
    theta[SUPPORT] = [1.0, -1.0, 0.8, -0.8, 0.6]
    return X, X @ theta + 0.5 * rng.normal(size=n), theta


# ---- plans --------------------------------------------------------------------------------------------------------

N, D, EPS, DELTA = 5000, 50, 0.5, 1e-5
KW = dict(s=5, loss="squared", eta=0.5, c_x=2.0, B_y=1.5, radius=2.5)
SENS = 2 * 2.0 * (2.5 + 1.5) / N  # 2G/n, G = c_x (radius + B_y) = 8


def _adv(e0, T, delta):  # advanced composition (Dwork, Rothblum & Vadhan 2010): the ε of T (e0, ·) steps
    return math.sqrt(2 * T * math.log(1 / delta)) * e0 + T * e0 * math.expm1(e0)


def test_plans_in_both_calibrations():
    assert gradient_sensitivity("squared", n=N, c_x=2.0, B_y=1.5, radius=2.5) == pytest.approx(SENS)
    assert gradient_sensitivity("logistic", n=N, c_x=2.0) == pytest.approx(2 * 2.0 / N)  # G = c_x
    # tight: Δ × the PLD multiplier of T Gaussian steps, on the exact sampler's grid
    tight = dp_ight_plan(Privacy(EPS, DELTA, "tight"), N, D, T=20, **KW)
    (rel,) = tight.releases
    z = gaussian_noise_multiplier(20, EPS, DELTA)
    assert rel.noise_scale == grid_scale(SENS * z, SENS, D, "l2", "gaussian")
    assert SENS * z < rel.noise_scale < SENS * z * (1 + 2e-6) / (1 - 1.01 * z * math.sqrt(D) / 2**20)
    assert (rel.mechanism, rel.norm, rel.count, rel.sensitivity) == ("gaussian", "l2", 20, pytest.approx(SENS))
    assert tight.neighbours == "replace one record" and tight.parameters["G"] == 8.0
    # paper, T = 20: basic composition wins — σ = Δ√(2 log(1.25T/δ))/(ε/T) = 217.2Δ; advanced composition would need
    # ε₀ with ε₀√(2T log(2/δ)) + Tε₀(e^ε₀ − 1) = ε, ε₀ = 0.0223 < ε/T = 0.025 (and a smaller δ per step)
    paper = dp_ight_plan(Privacy(EPS, DELTA), N, D, T=20, **KW)
    basic = SENS * math.sqrt(2 * math.log(1.25 * 20 / DELTA)) / (EPS / 20)
    assert paper.releases[0].noise_scale == pytest.approx(grid_scale(basic, SENS, D, "l2", "gaussian"), rel=1e-12)
    assert paper.releases[0].epsilon == EPS / 20 and paper.releases[0].delta == DELTA / 20
    assert paper.composition.startswith("basic composition of 20") and "reconstruction" in paper.composition
    assert paper.parameters["paper formula found"] is False
    # paper, T = 200: advanced composition at (ε₀, δ/(2T)), slack δ/2 — ε₀ solved by hand (bisection on _adv)
    lo, hi = 0.0, EPS
    for _ in range(200):
        lo, hi = ((lo + hi) / 2, hi) if _adv((lo + hi) / 2, 200, DELTA / 2) <= EPS else (lo, (lo + hi) / 2)
    paper200 = dp_ight_plan(Privacy(EPS, DELTA), N, D, T=200, **KW)
    r = paper200.releases[0]
    assert r.epsilon == pytest.approx(lo, rel=1e-9) and r.epsilon > EPS / 200 and r.delta == DELTA / 400
    adv = SENS * math.sqrt(2 * math.log(1.25 * 400 / DELTA)) / lo
    assert r.noise_scale == pytest.approx(grid_scale(adv, SENS, D, "l2", "gaussian"), rel=1e-8)
    assert r.count == 200 and paper.releases[0].noise_scale > 5 * rel.noise_scale
    # η, s and the loss's bounds: η does not enter σ; logistic needs no B_y, radius
    assert dp_ight_plan(Privacy(EPS, DELTA, "tight"), N, D, T=20, **{**KW, "eta": 3.0}).releases == tight.releases
    lg = dp_ight_plan(Privacy(EPS, DELTA), N, D, T=20, s=5, loss="logistic", eta=1.0, c_x=2.0, B_y=None, radius=None)
    assert lg.releases[0].sensitivity == pytest.approx(4.0 / N) and lg.parameters["G"] == 2.0


def test_paper_calibration_outside_its_range():
    # T = 1, ε = 1.5: basic composition is outside the classic formula's range (ε ≥ 1), advanced composition is in it
    p = dp_ight_plan(Privacy(1.5, DELTA), N, D, T=1, **KW)
    assert p.releases[0].epsilon < 1 and p.composition.startswith("advanced")
    # ε = 100, T = 20: ε/T = 5 and ε₀ > 1 both outside: refused, or run with a PRIVACY WARNING
    with pytest.raises(PrivacyError, match="epsilon per step < 1"):
        dp_ight_plan(Privacy(100.0, DELTA), N, D, T=20, **KW)
    with pytest.warns(RuntimeWarning, match="PRIVACY WARNING"):
        dp_ight_plan(Privacy(100.0, DELTA, on_invalid="warn"), N, D, T=20, **KW)
    dp_ight_plan(Privacy(100.0, DELTA, "tight"), N, D, T=1, **KW)  # the tight calibration has no such range


def test_bad_input_is_refused():
    X = np.random.default_rng(0).normal(size=(50, 10))
    y = X[:, 0] + 0.5
    rng, p = np.random.default_rng(0), Privacy(1.0, 1e-5, "tight")
    base = dict(privacy=p, rng=rng, s=2, T=3, eta=0.5, c_x=3.0, B_y=3.0, radius=3.0)
    for key, bad in [("s", 0), ("s", 11), ("s", 1.5), ("T", 0), ("T", True), ("eta", 0.0), ("eta", -1.0),
                     ("eta", math.inf), ("c_x", 0.0), ("c_x", math.nan), ("B_y", -1.0), ("radius", 0.0)]:  # fmt: skip
        with pytest.raises(PrivacyError, match=key if key != "s" else "sparsity s"):
            dp_ight(X, y, **{**base, key: bad})
    for key in ("B_y", "radius"):  # the squared loss's gradient is unbounded without both
        with pytest.raises(PrivacyError, match="needs a public bound"):
            dp_ight(X, y, **{**base, key: None})
    with pytest.raises(PrivacyError, match="loss must be one of"):
        dp_ight(X, y, **base, loss="hinge")
    with pytest.raises(DataError, match=r"y in \{0, 1\}"):
        dp_ight(X, np.sign(y), **base, loss="logistic")  # ±1 labels: the bound |σ(u) − y| < 1 needs {0, 1}
    with pytest.raises(PrivacyError, match="replace-one neighbours only"):
        dp_ight(X, y, **{**base, "privacy": Privacy(1.0, 1e-5, neighbours="add_remove")})
    X[0, 0] = np.nan
    with pytest.raises(DataError, match="finite"):
        dp_ight(X, y, **base)
    with pytest.raises(DataError, match="at least 2 rows"):
        dp_ight(np.ones((1, 3)), np.ones(1), **{**base, "s": 1})


# ---- the estimator --------------------------------------------------------------------------------------------------


def test_the_noise_enters_the_gradient_scaled_by_eta():
    # d = s = 1, T = 1: θ_1 = −η(∇L̃(0) + b_1), b_1 the plan's σ on the grid; ∇L̃(0) = −(1/n)Σ clip(y_i) x_i
    X, y = np.array([[3.0], [0.5], [-1.0]]), np.array([5.0, -0.2, 1.0])  # row 0 clipped to 2, y_0 to 1.5
    p = Privacy(1.0, 1e-3, "tight")
    kw = dict(s=1, T=1, eta=0.7, c_x=2.0, B_y=1.5, radius=2.5)
    sigma = dp_ight_plan(p, 3, 1, **kw).releases[0].noise_scale
    grad = -(2.0 * 1.5 + 0.5 * -0.2 + -1.0 * 1.0) / 3
    noisy = draw("gaussian", sigma, (1, 1), np.random.default_rng(5))[0].add(np.array([grad]))
    assert dp_ight(X, y, privacy=p, rng=np.random.default_rng(5), **kw) == pytest.approx(-0.7 * noisy, rel=1e-12)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_sparse_and_dense_designs_give_the_same_fit(loss):
    rng = np.random.default_rng(3)
    Xs = sparse.random(300, 400, density=0.05, format="csr", random_state=4, data_rvs=lambda k: rng.normal(size=k))
    Xs[0] = 10 * Xs[0]  # a row the clipping scales down
    beta = np.zeros(400)
    beta[:4] = [2.0, -2.0, 1.5, 1.0]
    u = Xs @ beta
    y = (rng.random(300) < 1 / (1 + np.exp(-u))).astype(float) if loss == "logistic" else u + rng.normal(size=300)
    kw = dict(privacy=Privacy(8.0, 1e-5, "tight"), s=8, loss=loss, T=10, eta=2.0, c_x=1.5, B_y=3.0, radius=3.0)
    a = dp_ight(Xs, y, rng=np.random.default_rng(9), **kw)
    b = dp_ight(Xs.toarray(), y, rng=np.random.default_rng(9), **kw)
    assert sparse.issparse(Xs) and np.count_nonzero(a) <= 8
    assert np.array_equal(np.flatnonzero(a), np.flatnonzero(b)) and np.allclose(a, b, rtol=1e-9, atol=1e-12)


def test_error_falls_as_epsilon_grows():
    # θ* 5-sparse, n = 1,000, d = 100, T = 10, η = 0.5 (X'X/n ≈ I: the error contracts by 2 a step), tight.
    # Measured mean errors over 10 draws: 3.3 (ε = 2), 0.48 (8), 0.13 (32); non-private IGHT 0.04. Each step down must
    # exceed 3 standard errors of the difference of the two means (estimated from the draws themselves).
    X, y, theta = regression_data()
    kw = dict(s=5, T=10, eta=0.5, c_x=10.0, B_y=4.0, radius=4.0)
    errs = {}
    for eps in (2.0, 8.0, 32.0):
        p = Privacy(eps, 1e-5, "tight")
        fits = [dp_ight(X, y, privacy=p, rng=np.random.default_rng(r), **kw) for r in range(10)]
        assert all(np.count_nonzero(f) <= 5 for f in fits)
        errs[eps] = np.array([np.linalg.norm(f - theta) for f in fits])
    for lo, hi in ((2.0, 8.0), (8.0, 32.0)):
        se = math.sqrt(errs[lo].var(ddof=1) / 10 + errs[hi].var(ddof=1) / 10)
        assert errs[lo].mean() - errs[hi].mean() > 3 * se
    assert errs[32.0].mean() < 0.1 * np.linalg.norm(theta)


# ---- worst-case neighbours of one gradient release ---------------------------------------------------------------
# The release is ∇L̃_S(θ) at a θ fixed by the earlier releases. The pairs run through the module's own clipping and
# gradient (looked up on the module, so a planted bug reaches them).

NN, DD, CX = 7, 6, 1.3
CASES = {"squared": dict(B_y=0.9, radius=1.7), "logistic": dict(B_y=None, radius=None)}


def _gap(loss, X, y, X2, y2, theta):
    kw = CASES[loss]
    out = []
    for A, b in ((X, y), (X2, y2)):
        Ac, bc = mod.clip_data(A, b, loss, CX, kw["B_y"])
        out.append(mod.clipped_gradient(Ac, bc, theta, loss, kw["radius"]))
    return np.linalg.norm(out[0] - out[1])


def _worst_pair(loss, tau=1e-3, far=50.0, M=40.0):
    """Row 0: x = c_x·1/√d against x′ = c_x(1 − τe_0)/√d, both raw ``far`` times longer (the estimator clips them
    back to norm c_x); θ in span{e_0, 1} with x'θ = M, x′'θ = −M (beyond both clips: r = ±(radius + B_y), or
    σ(±40) = 1, 0 in floating point); y = −B_y against B_y (squared), 0 against 1 (logistic), raw far outside."""
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, size=(NN, DD)), rng.integers(0, 2, NN).astype(float)
    X2, y2 = X.copy(), y.copy()
    X[0] = far * CX * np.ones(DD) / math.sqrt(DD)
    X2[0] = X[0] * (1 - tau * np.eye(DD)[0])
    u = np.array([X[0], X2[0]])
    u /= np.linalg.norm(u, axis=1, keepdims=True) / CX  # the clipped rows
    A = np.column_stack([u[:, 0], u.sum(axis=1)])  # x'θ for θ = a e_0 + b 1
    a, b = np.linalg.solve(A, [M, -M])
    theta = b * np.ones(DD)
    theta[0] += a
    if loss == "squared":
        y[0], y2[0] = -far * CASES[loss]["B_y"], far * CASES[loss]["B_y"]
    else:
        y[0], y2[0] = 0.0, 1.0
    return X, y, X2, y2, theta


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_gradient_sensitivity_is_approached_and_never_exceeded(loss):
    bound = gradient_sensitivity(loss, n=NN, c_x=CX, **{k: v for k, v in CASES[loss].items() if v is not None})
    # ‖r x − r′x′‖ = G‖x + x′‖/c_x → 2G as τ → 0 (x = x′ would give equal predictors: the supremum is not attained)
    gap = _gap(loss, *_worst_pair(loss))
    assert bound * (1 - 1e-3) < gap <= bound * (1 + 1e-12)
    rng, worst = np.random.default_rng(1), 0.0
    for _ in range(2000):
        theta = rng.normal(size=DD) * rng.choice([0.1, 1.0, 30.0])
        X = rng.normal(size=(NN, DD)) * rng.choice([0.3, 5.0])
        X2 = X.copy()
        X2[0] = rng.choice([-1.0, 1.0]) * X[0] + rng.normal(size=DD) * rng.choice([0.01, 1.0])
        y = rng.integers(0, 2, NN).astype(float) if loss == "logistic" else rng.normal(size=NN) * 3
        y2 = y.copy()
        y2[0] = 1 - y[0] if loss == "logistic" else -np.sign(y[0]) * 9
        worst = max(worst, _gap(loss, X, y, X2, y2, theta))
    assert 0.5 * bound < worst <= bound * (1 + 1e-12)


def test_planted_bugs_break_the_sensitivity(monkeypatch):
    bound = gradient_sensitivity("squared", n=NN, c_x=CX, **CASES["squared"])
    clip = mod.clip_data
    # planted bug 1: rows not clipped (y still clipped)
    monkeypatch.setattr(mod, "clip_data", lambda X, y, loss, c_x, B_y: (X, clip(X, y, loss, c_x, B_y)[1]))
    assert _gap("squared", *_worst_pair("squared")) > 10 * bound
    monkeypatch.undo()
    # planted bug 2: the predictor not clipped (the plain squared loss: |x'θ| = 40 enters the residual)
    monkeypatch.setattr(mod, "clip_predictor", lambda u, radius: u)
    assert _gap("squared", *_worst_pair("squared")) > 10 * bound


# ---- statistical audit of one release -----------------------------------------------------------------------------
# d = s = 1, T = 1, squared loss, c_x = B_y = 1, radius = 0.05: θ_1 = −η g̃_1, and ten records x = 1, y = 1 against
# y′_0 = −1000 (clipped to −1) move the gradient by 2B_y/n = 0.2 = 0.95 Δ (Δ = 2(radius + B_y)/n), so this pair's
# true ε at δ = 0.03 is 0.46 for a claimed (0.5, 0.03), tight. Power, measured with these seeds (Clopper–Pearson
# lower bound, α = 0.05, half the draws choose the event): 0.03 from 4,000 draws a side at the stated noise (must
# stay ≤ 0.5); 1.4 from 2,000 draws a side with the noise scaled by 0.3 (true ε 2.8); 1.6 from 1,500 draws a side
# with the clipping left out (y′ = −1000 enters: the outputs separate). Not caught: noise scaled by 0.6 (true ε 1.0)
# gives 0.50, on the line — the audit sees gross bugs only; passing is necessary, not sufficient.

AUDIT = dict(s=1, T=1, eta=1.0, c_x=1.0, B_y=1.0, radius=0.05)


def _audit(n_draws):
    p = Privacy(0.5, 0.03, "tight")
    X, y = np.ones((10, 1)), np.ones(10)
    y2 = y.copy()
    y2[0] = -1000.0
    a = [dp_ight(X, y, privacy=p, rng=np.random.default_rng(r), **AUDIT)[0] for r in range(n_draws)]
    b = [dp_ight(X, y2, privacy=p, rng=np.random.default_rng(n_draws + r), **AUDIT)[0] for r in range(n_draws)]
    return epsilon_lower_bound(np.array(a), np.array(b), 0.03)


@pytest.mark.slow
def test_audit_passes_and_catches_planted_bugs(monkeypatch):
    assert _audit(4000) <= 0.5
    mult = mod.gaussian_noise_multiplier
    with monkeypatch.context() as m:
        m.setattr(mod, "gaussian_noise_multiplier", lambda *a: 0.3 * mult(*a))
        assert _audit(2000) > 1.0
    monkeypatch.setattr(mod, "clip_data", lambda X, y, loss, c_x, B_y: (X, y))
    assert _audit(1500) > 1.0
