"""Informed reconstruction (dpcost.attacks.reconstruction; Balle, Cherubin & Hayes, S&P 2022): OLS with an intercept
hands the target row over exactly, by the closed form and by release matching, on an average row and on a heavy
row; an AdaSSP release (ε = 1) does not, though the same matching attack inverts its noiseless counterpart; a row
OLS does not identify (no intercept to fix the scale, or a zero residual) is refused or left unidentified.

Tolerances: exact arithmetic gives 0; the closed form's rounding is ≈ machine ε·‖X'X‖‖β̂‖/|r₀| ≈ 10⁻¹³ here, so
10⁻⁶ (the issue's target) leaves a wide margin; least squares stops at its tolerances (ftol = xtol = 10⁻⁸).
"""

import numpy as np
import pytest

from dpcost.attacks.reconstruction import (
    reconstruct_by_matching,
    reconstruct_ols,
    relative_error,
)
from dpcost.dp.privacy import Privacy
from dpcost.errors import DataError
from dpcost.estimators import ssp


def _design(n=400, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.normal(size=(n, d)) / np.sqrt(d)]
    beta = rng.normal(size=d + 1) / np.sqrt(d)
    y = X @ beta + 0.3 * rng.normal(size=n)
    X[0, 1:] = [4.0, -3.0, 0.5, 2.0]  # a heavy row: leverage ≈ 0.3, residual ≈ 1 (30 times the mean leverage)
    y[0] = X[0] @ beta + 1.0
    return X, y


def _ols(X, y):
    return np.linalg.lstsq(X, y, rcond=None)[0]


@pytest.mark.parametrize("t", [0, 17], ids=["heavy", "average"])
def test_ols_closed_form_is_exact(t):
    X, y = _design()
    rest = np.arange(len(y)) != t
    x_hat, y_hat = reconstruct_ols(X[rest], y[rest], _ols(X, y))
    assert relative_error(x_hat, y_hat, X[t], y[t]) <= 1e-6
    assert x_hat[0] == 1.0


def test_ols_matching_attack_finds_the_row():
    X, y = _design()
    rest = np.arange(len(y)) != 0
    rec = reconstruct_by_matching(_ols(X, y), X[rest], y[rest], _ols)
    assert relative_error(rec.x, rec.y, X[0], y[0]) <= 1e-6
    assert rec.misfit <= 1e-9


def test_a_row_on_the_fitted_plane_is_refused():
    X, y = _design()
    beta = _ols(X[1:], y[1:])
    y[0] = X[0] @ beta  # on the plane of the others: adding it leaves beta unchanged, so r = 0
    with pytest.raises(DataError, match="residual is 0"):
        reconstruct_ols(X[1:], y[1:], _ols(X, y))


def test_without_an_intercept_ols_does_not_identify_the_row():
    X, y = _design()
    with pytest.raises(DataError, match="not an intercept"):
        reconstruct_ols(X[1:, 1:], y[1:], _ols(X[:, 1:], y), intercept=0)
    # the one-parameter family x = r/c, y = r'β/c − c explains the release exactly for every c ≠ 0
    Xn, beta = X[:, 1:], _ols(X[:, 1:], y)
    r = Xn[1:].T @ y[1:] - Xn[1:].T @ (Xn[1:] @ beta)
    for c in (0.5, 2.0):
        x, yt = r / c, r @ beta / c - c
        np.testing.assert_allclose(_ols(np.vstack([Xn[1:], x]), np.append(y[1:], yt)), beta, atol=1e-10)


def test_adassp_release_is_not_reconstructed():
    """AdaSSP at ε = 1 (rows clipped to B_X = 6, y to B_Y = 4: the target is inside, so clipping alone loses nothing).
    The adversary's model is the estimator at ε = 10⁹ with a fixed seed (its noiseless counterpart). On that model's
    own release the attack recovers the row (measured 1.5·10⁻⁹; asserted 10⁻⁶); on the private release its error is
    above 0.5 (measured 1.8–2.3 over seeds 0–4: the noise is explained by a row far from the target)."""
    X, y = _design()
    B = dict(B_X=6.0, B_Y=4.0)
    assert np.linalg.norm(X[0]) < B["B_X"] and abs(y[0]) < B["B_Y"]
    noiseless = Privacy(1e9, 1e-5, calibration="tight", sampler="float-unsafe")

    def model(Xd, yd):
        return ssp.adassp(Xd, yd, privacy=noiseless, rng=np.random.default_rng(0), **B)

    rest = np.arange(len(y)) != 0
    inverted = reconstruct_by_matching(model(X, y), X[rest], y[rest], model)
    assert relative_error(inverted.x, inverted.y, X[0], y[0]) <= 1e-6
    release = ssp.adassp(X, y, privacy=Privacy(1.0, 1e-5, calibration="tight"), rng=np.random.default_rng(1), **B)
    rec = reconstruct_by_matching(release, X[rest], y[rest], model)
    assert relative_error(rec.x, rec.y, X[0], y[0]) > 0.5


def test_bad_input_is_refused():
    X, y = _design()
    with pytest.raises(DataError, match="coordinates"):
        reconstruct_ols(X, y, np.zeros(3))
    with pytest.raises(DataError, match="outside"):
        reconstruct_ols(X, y, np.zeros(5), intercept=7)
    with pytest.raises(DataError, match="undefined"):
        relative_error(np.ones(3), 0.0, np.r_[1.0, 0.0, 0.0], 0.0)


def test_housing_heaviest_row_is_reconstructed():
    """The real housing design (the workflow's preparation, an intercept prepended): its highest-leverage row, 15,360
    (h = 0.120 against a mean of 0.00024), is recovered from the OLS fit of any 2,000-row subsample holding it."""
    from dpcost.attacks.targeted import leverage

    from support import housing_design

    X, y, _, _ = housing_design()
    h = leverage(X)
    t = int(np.argmax(h))
    assert t == 15_360 and h[t] == pytest.approx(0.1204, abs=1e-4) and h.mean() == pytest.approx(5 / len(y))
    rows = np.r_[t, np.random.default_rng(0).choice(np.delete(np.arange(len(y)), t), 1_999, replace=False)]
    Xi = np.c_[np.ones(len(y)), X][rows]
    x_hat, y_hat = reconstruct_ols(Xi[1:], y[rows][1:], _ols(Xi, y[rows]))
    assert relative_error(x_hat, y_hat, Xi[0], y[t]) <= 1e-6
