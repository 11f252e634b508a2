import numpy as np
import pytest

from dpcost.analysis.streams import noise_rng, rng_for, subsample_indices
from dpcost.dp.privacy import Privacy
from dpcost.errors import ConfigError
from dpcost.estimators.truncated_ols import noisy_truncated_ols, noisy_truncated_ols_plan, truncated_ridge_fit


def test_streams_depend_only_on_identity():
    a = rng_for(7, "housing", "noise", "noisy_gd", 200, 3).normal(size=5)
    b = rng_for(7, "housing", "noise", "noisy_gd", 200, 3).normal(size=5)
    assert np.array_equal(a, b)
    others = [
        rng_for(8, "housing", "noise", "noisy_gd", 200, 3),
        rng_for(7, "housing", "noise", "noisy_gd", 200, 4),
        rng_for(7, "housing", "noise", "ols", 200, 3),
        rng_for(7, "snp", "noise", "noisy_gd", 200, 3),
    ]
    for g in others:
        assert not np.array_equal(a, g.normal(size=5))


def test_subsamples_are_distinct_rows_and_shared_by_methods():
    idx = subsample_indices(1000, 100, seed=1, dataset="housing", rep=0)
    assert len(np.unique(idx)) == 100 and idx.min() >= 0 and idx.max() < 1000
    assert np.array_equal(idx, subsample_indices(1000, 100, seed=1, dataset="housing", rep=0))
    with pytest.raises(ConfigError, match="between 2 and"):
        subsample_indices(1000, 1001, seed=1, dataset="housing", rep=0)
    with pytest.raises(ConfigError):
        subsample_indices(1000, 1, seed=1, dataset="housing", rep=0)


# ---- fresh noise per release -------------------------------------------------------------------------------------

TOLS = dict(R=2.0, C=3.0, c_x=1.0, kappa=0.05, noise="derived")


def _fit_pair(paper_rng, tight_rng, X, y):
    fits = []
    for calibration, rng in (("paper", paper_rng), ("tight", tight_rng)):
        p = Privacy(0.5, 1e-5, calibration)
        sigma = noisy_truncated_ols_plan(p, len(y), X.shape[1], **TOLS).releases[0].noise_scale
        fits.append((sigma, noisy_truncated_ols(X, y, privacy=p, rng=rng, **TOLS)))
    (s_p, b_p), (s_t, b_t) = fits
    return (s_p * b_t - s_t * b_p) / (s_p - s_t), s_t  # the noise cancels if both standardized draws are equal


def test_two_calibrations_do_not_share_noise_and_the_fit_is_not_reconstructed():
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(2000, 3))
    y = X @ np.array([0.5, -0.3, 0.2]) + 0.1 * rng.normal(size=2000)
    truth = truncated_ridge_fit(X, y, **{k: v for k, v in TOLS.items() if k != "noise"})
    kw = dict(tuning=TOLS, params={})

    def stream(calibration):
        return noise_rng(7, "housing", "noisy_truncated_ols", 2000, 3, privacy=Privacy(0.5, 1e-5, calibration), **kw)

    # the attack works on a shared stream (the old identity): the non-private fit to within the grid's rounding
    shared, s_t = _fit_pair(rng_for(7, "x"), rng_for(7, "x"), X, y)
    assert np.abs(shared - truth).max() < 1e-4 * s_t
    # with the release in the identity it recovers nothing: the combination is noisier than either release
    fresh, s_t = _fit_pair(stream("paper"), stream("tight"), X, y)
    assert np.abs(fresh - truth).max() > s_t


@pytest.mark.parametrize(
    "change",
    [
        dict(privacy=Privacy(1.0, 1e-5)),
        dict(privacy=Privacy(0.5, 1e-6)),
        dict(privacy=Privacy(0.5, "1/n^1.1")),
        dict(privacy=Privacy(0.5, 1e-5, "tight")),
        dict(privacy=Privacy(0.5, 1e-5, sampler="float-unsafe")),
        dict(tuning={"T": 21}),
        dict(params={"s": 4}),
    ],
)
def test_every_release_difference_gives_a_different_noise_stream(change):
    base = dict(privacy=Privacy(0.5, 1e-5), tuning={"T": 20}, params={})
    a = noise_rng(1, "housing", "noisy_gd", 500, 0, **base).standard_normal(8)
    again = noise_rng(1, "housing", "noisy_gd", 500, 0, **base).standard_normal(8)
    b = noise_rng(1, "housing", "noisy_gd", 500, 0, **{**base, **change}).standard_normal(8)
    assert np.array_equal(a, again) and not np.allclose(a, b)
