"""TukeyEM (Amin et al. 2023): the distance bound's sensitivity, plan = estimator, an audit of the PTR test that
catches the public code's Laplace scale, recovery at large n and ε, totality on hostile rows, add/remove refusal."""

import itertools
import math

import numpy as np
import pytest
from test_hostile_records import hostile_variants

from dpcost.dp import samplers
from dpcost.dp.audit import epsilon_lower_bound
from dpcost.dp.privacy import Privacy
from dpcost.errors import PrivacyError
from dpcost.estimators import tukey_em as te
from dpcost.estimators.method import Abstention
from dpcost.estimators.registry import METHODS


def _plan(privacy, n, d, block_size=None, ptr_share=0.4):
    return te.tukey_em_plan(privacy, n, d, block_size=block_size, ptr_share=ptr_share)


def _L(models, t, c, log_eta):
    return te.distance_lower_bound(te.log_volumes(models)[2], t, c, log_eta)


def _neighbour(models, rng):
    """One model replaced: far out, a duplicate of another, 0, a huge value, or a random draw (adversarial mix)."""
    M = models.copy()
    i = rng.integers(len(M))
    kind = rng.integers(5)
    d = M.shape[1]
    M[i] = [
        rng.choice([-1, 1], d) * 1e6,
        M[rng.integers(len(M))],
        np.zeros(d),
        rng.choice([-1, 1], d) * 1e300,
        rng.standard_normal(d) * 3,
    ][kind]
    return M


def test_distance_bound_has_sensitivity_one():
    """|L(S) − L(S′)| ≤ 1 over random and adversarial single-model replacements, for several (K, d, t, c, η),
    and the bound is not vacuous (L varies, and some pairs move by exactly 1)."""
    rng = np.random.default_rng(0)
    moved, values = 0, set()
    for trial in range(400):
        K, d = int(rng.integers(20, 200)), int(rng.integers(1, 4))
        models = rng.standard_t(2, (K, d)) * rng.uniform(0.1, 3)
        t = int(rng.integers(3, K // 4 + 4))
        c, log_eta = float(rng.uniform(0.1, 3)), float(-rng.uniform(1, 12))
        a = _L(models, t, c, log_eta)
        for _ in range(5):
            b = _L(_neighbour(models, rng), t, c, log_eta)
            assert abs(a - b) <= 1, (trial, a, b)
            moved += abs(a - b) == 1
        values.add(a)
    assert moved > 20 and len(values) > 10


def test_depth_regions_nest_between_neighbours():
    """The fact the proof rests on: B_{q+1} ⊆ B′_q ⊆ B_{q−1}, so log V_{q+1} ≤ log V′_q ≤ log V_{q−1}."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        models = rng.standard_normal((int(rng.integers(8, 60)), 3))
        v, w = te.log_volumes(models)[2], te.log_volumes(_neighbour(models, rng))[2]
        assert np.all(w[1:-1] <= v[:-2]) and np.all(w[1:-1] >= v[2:])


def _depth(models, pts):
    """Approximate Tukey depth of the rows of pts, counted directly (not through the module's boxes)."""
    below = (models[None] <= pts[:, None]).sum(1)
    above = (models[None] >= pts[:, None]).sum(1)
    return np.minimum(below, above).min(1)


def _em_laws(A, B, c, t):
    """The restricted EM's laws for models A and B on the common grid of cells between their coordinates: depth is
    constant on each cell, so the cell probabilities are the whole law (up to the uniform point inside, shared)."""
    edges = [np.unique(np.concatenate([A[:, j], B[:, j]])) for j in range(A.shape[1])]
    grid = np.array(list(itertools.product(*[(e[1:] + e[:-1]) / 2 for e in edges])))
    vol = np.prod(np.array(list(itertools.product(*[np.diff(e) for e in edges]))), axis=1)
    laws = []
    for M in (A, B):
        D = _depth(M, grid)
        logw = np.where(D >= t, c * D + np.log(np.maximum(vol, 1e-300)), -np.inf)
        w = np.exp(logw - logw.max())
        laws.append(w / w.sum())
    return laws


def _hockey(p, q, eps):
    return float(np.maximum(p - math.exp(eps) * q, 0).sum())


def test_em_step_is_private_on_safe_data_exactly():
    """The safety claim, computed exactly (d = 1, 2): for models with L ≥ 1 and adversarial neighbours (one model moved
    past either extreme, to the median, or onto another), δ of the restricted EM at ε_em = 2c + log(1 + η) is ≤ η
    both ways. The planted bug — the coefficient counted once, ε = c + log(1 + η), as the paper's split does — is
    caught: some pair needs δ far above η there."""
    rng = np.random.default_rng(10)
    eta = 0.05
    worst, worst_once, safe = 0.0, 0.0, 0
    for _ in range(150):
        K, d = int(rng.integers(30, 100)), int(rng.integers(1, 3))
        A = rng.standard_normal((K, d)) * (1 + (rng.uniform(size=(K, d)) < 0.2) * rng.uniform(0, 20, (K, d)))
        t, c = int(rng.integers(2, 6)), float(rng.uniform(0.3, 3))
        if te.distance_lower_bound(te.log_volumes(A)[2], t, c, math.log(eta)) < 1:
            continue
        safe += 1
        for _ in range(3):
            B = A.copy()
            B[rng.integers(K)] = [A.min(0) - 1, A.max(0) + 1, np.median(A, 0), A[rng.integers(K)]][rng.integers(4)]
            p, q = _em_laws(A, B, c, t)
            for x, y in ((p, q), (q, p)):
                worst = max(worst, _hockey(x, y, 2 * c + math.log1p(eta)))
                worst_once = max(worst_once, _hockey(x, y, c + math.log1p(eta)))
    assert safe > 30
    assert worst <= eta
    assert worst_once > eta


@pytest.mark.parametrize("calibration", ["tight", "paper"])
def test_plan_is_what_the_estimator_uses(monkeypatch, calibration):
    """The PTR noise is drawn at the plan's scale, against the plan's threshold; both calibrations."""
    seen = []
    real = samplers.add_noise

    def spy(value, kind, scale, rng, sampler="exact"):
        seen.append((kind, scale))
        return real(value, kind, scale, rng, sampler)

    monkeypatch.setattr(te, "add_noise", spy)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((4000, 3))
    y = X @ [1.0, -1.0, 0.5] + rng.standard_normal(4000)
    p = Privacy(4.0, "10/n^1.1", calibration=calibration, on_invalid="warn")
    plan = _plan(p, 4000, 3)
    te.tukey_em(X, y, privacy=p, rng=np.random.default_rng(3))
    assert seen == [("laplace", plan.releases[0].noise_scale)]
    assert plan.proven is (calibration == "tight")


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 8.0])
@pytest.mark.parametrize("n", [2000, 20000])
def test_tight_composition_meets_the_target(eps, n):
    """Recomputed from the plan: ε_ptr + 2c + log(1 + η) ≤ ε, e^{ε_ptr}η ≤ δ, and the exact tail of the grid
    discrete Laplace above T at L = 0, q^{⌊T/g⌋+1}/(1 + q), is ≤ δ; the test's Laplace is ε_ptr-DP for Δ = 1 with its
    rounding paid (scale ≥ (1 + g)/ε_ptr)."""
    p = Privacy(eps, "10/n^1.1", calibration="tight")
    plan = _plan(p, n, 4)
    pr, delta = plan.parameters, p.at(n).delta
    ptr, em = plan.releases
    eta = math.exp(pr["log_eta"])
    assert ptr.epsilon + 2 * pr["em_coefficient"] + math.log1p(eta) <= eps * (1 + 1e-12)
    assert math.exp(ptr.epsilon) * eta <= delta * (1 + 1e-12)
    b, g = pr["laplace_scale"], pr["laplace_scale"] / samplers.T
    q = math.exp(-1 / samplers.T)
    assert q ** (math.floor(pr["threshold"] / g) + 1) / (1 + q) <= delta
    assert b >= (1 + g) / ptr.epsilon
    assert ptr.epsilon + em.epsilon == pytest.approx(eps)


def _ptr_outputs(L, scale, n, seed):
    params = {"laplace_scale": scale}
    rng = np.random.default_rng(seed)
    return np.array([te.ptr_release(L, params, rng, "exact") for _ in range(n)])


def test_audit_catches_the_public_codes_laplace_scale():
    """Worst-case pair L = 10 vs 11 (neighbours' bounds differ by one). At the plan's scale 1/ε_ptr the empirical
    lower bound stays below ε_ptr; at the public code's ``scale=epsilon`` (ε_ptr instead of 1/ε_ptr) it exceeds ε."""
    p = Privacy(1.0, 1e-5, calibration="tight")
    plan = _plan(p, 20000, 3)
    b, e_ptr = plan.parameters["laplace_scale"], plan.releases[0].epsilon
    good = epsilon_lower_bound(_ptr_outputs(10, b, 4000, 4), _ptr_outputs(11, b, 4000, 5), 0.0)
    assert good <= e_ptr
    bad = epsilon_lower_bound(_ptr_outputs(10, e_ptr, 4000, 4), _ptr_outputs(11, e_ptr, 4000, 5), 0.0)
    assert bad > p.epsilon


def test_recovers_ols_at_large_n_and_epsilon():
    """n = 20,000, d = 3, ε = 8: the test passes and ‖β̂ − OLS‖ < 0.05, about 7 OLS standard errors in norm
    (σ/√n·√d ≈ 0.0122): the block models' median and the depth region add error of that order, not more."""
    rng = np.random.default_rng(6)
    n, d = 20000, 3
    X = rng.standard_normal((n, d))
    y = X @ np.array([0.5, -1.0, 2.0]) + rng.standard_normal(n)
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    p = Privacy(8.0, "10/n^1.1", calibration="tight")
    for seed in range(3):
        est, passed, _ = te.tukey_em_run(X, y, privacy=p, rng=np.random.default_rng(seed))
        assert passed
        assert np.linalg.norm(est - ols) < 0.05


def test_failed_test_returns_public_zero():
    """Too few rows for the check: the test fails and the release is exactly 0."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((300, 4))
    y = X.sum(axis=1)
    est, passed, _ = te.tukey_em_run(X, y, privacy=Privacy(0.5, 1e-3, calibration="tight"), rng=rng)
    assert not passed and np.array_equal(est, np.zeros(4))


def test_the_registry_reports_an_abstention_and_only_then():
    # the workflow counts a released fallback (abstain_rate in summary.csv): failed check -> abstained, with why
    rng = np.random.default_rng(7)
    X = rng.standard_normal((300, 4))
    method, p = METHODS["tukey_em"], Privacy(0.5, 1e-3, calibration="tight")
    out = method.estimate(X, X.sum(axis=1), privacy=p, rng=np.random.default_rng(7), tuning={}, params={})
    est, support = out
    assert np.array_equal(est, np.zeros(4)) and support is None and "released the public 0" in out.abstained
    X = rng.standard_normal((20000, 3))
    y = X @ np.array([0.5, -1.0, 2.0]) + rng.standard_normal(20000)
    out = method.estimate(X, y, privacy=Privacy(8.0, "10/n^1.1", "tight"), rng=np.random.default_rng(0),
                          tuning={}, params={})  # fmt: skip
    assert out.abstained is None and np.linalg.norm(out[0]) > 1


@pytest.mark.parametrize("calibration", ["tight", "paper"])
def test_total_on_hostile_rows(calibration):
    rng = np.random.default_rng(8)
    X = rng.standard_normal((3000, 3))
    y = X @ [1.0, 0.5, -0.5] + rng.standard_normal(3000)
    p = Privacy(8.0, "10/n^1.1", calibration=calibration, on_invalid="warn")
    for name, (Xh, yh) in hostile_variants("regression", (X, y)).items():
        out = te.tukey_em(Xh, yh, privacy=p, rng=np.random.default_rng(9))
        est = out.fallback if isinstance(out, Abstention) else out
        assert est.shape == (3,) and np.isfinite(est).all(), name


def test_add_remove_is_refused():
    p = Privacy(1.0, 1e-5, neighbours="add_remove")
    with pytest.raises(PrivacyError, match="replace-one"):
        _plan(p, 1000, 3)
