"""Start-up checks of a configuration, so a bad value stops the run before any job starts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import ConfigError
from .experiment import MEAN_METHODS, REGRESSION_METHODS, privacy_kwargs
from .privacy import resolve_delta


def _check_grid(delta, m_grid: Sequence[int], n_rows: int, what: str) -> list[str]:
    notes = []
    for m in m_grid:
        if not 2 <= m <= n_rows:
            raise ConfigError(f"sample size m={m} must lie between 2 and the {n_rows} {what}")
        d = resolve_delta(delta, m)
        if d >= 1 / m and not notes:
            notes.append(
                f"PRIVACY WARNING: delta={d:.3g} at n={m} is >= 1/n; a mechanism that publishes one random record "
                "in the clear satisfies (0, 1/n)-DP, so this delta permits that kind of failure"
            )
    return notes


def _call(name: str, dataset: str, fn, *args, **kwargs) -> None:
    try:
        fn(*args, **kwargs)
    except TypeError as exc:  # a tuning constant missing from the config, or one the method does not take
        raise ConfigError(f"{dataset}.tuning.{name}: {exc}") from None


def check_regression_setup(
    *,
    methods: Sequence[str],
    tuning: dict,
    epsilon: float,
    delta,
    m_grid: Sequence[int],
    n_rows: int,
    calibration: str = "paper",
    on_invalid: str = "refuse",
) -> list[str]:
    """Return privacy warnings for the user; raise on a value no run should start with.

    Resolve δ at every m and run every private method once on a tiny fixed input, so that a parameter the
    estimator would refuse (B too small, ε/T ≥ 1, classic Gaussian at ε ≥ 1, …) fails now with its own message."""
    notes = _check_grid(delta, m_grid, n_rows, "rows of the data")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(8, 3)), rng.normal(size=8)
    for name in methods:
        spec = REGRESSION_METHODS[name]
        if spec.private:
            kw = privacy_kwargs(spec, epsilon, resolve_delta(delta, min(m_grid)), calibration, on_invalid)
            _call(name, "housing", spec.fn, X, y, rng=rng, **kw, **tuning.get(name, {}))
    return notes


def check_mean_setup(
    *,
    methods: Sequence[str],
    tuning: dict,
    s: int,
    epsilon: float,
    delta,
    m_grid: Sequence[int],
    n_min: int,
    n_snps: int,
    calibration: str = "paper",
    on_invalid: str = "refuse",
) -> list[str]:
    """As :func:`check_regression_setup`, for the two-group sparse mean analysis (m ≤ the smaller group, s ≤ d)."""
    notes = _check_grid(delta, m_grid, n_min, "samples of the smaller group")
    if s > n_snps:
        raise ConfigError(f"sparsity s={s} exceeds the number of SNPs kept (n_snps={n_snps})")
    rng = np.random.default_rng(0)
    D = rng.integers(-2, 3, size=(4, n_snps)).astype(float)
    for name in methods:
        spec = MEAN_METHODS[name]
        if spec.private:
            kw = privacy_kwargs(spec, epsilon, resolve_delta(delta, min(m_grid)), calibration, on_invalid)
            _call(name, "snp", spec.fn, D, rng=rng, s=s, **kw, **tuning.get(name, {}))
    return notes
