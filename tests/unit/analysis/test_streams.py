import numpy as np
import pytest

from dpcost.analysis.streams import rng_for, subsample_indices
from dpcost.errors import ConfigError


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
