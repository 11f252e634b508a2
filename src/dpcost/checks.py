"""Start-up checks of a configuration, so a bad value stops the run before any job starts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import ConfigError
from .experiment import REGRESSION_METHODS
from .privacy import resolve_delta


def check_regression_setup(
    *, methods: Sequence[str], tuning: dict, epsilon: float, delta, m_grid: Sequence[int], n_rows: int
) -> list[str]:
    """Return privacy warnings for the user; raise on a value no run should start with.

    Resolve δ at every m and run every private method once on a tiny fixed input, so that a parameter the
    estimator would refuse (B too small, ε/T ≥ 1, classic Gaussian at ε ≥ 1, …) fails now with its own message."""
    notes = []
    for m in m_grid:
        if not 2 <= m <= n_rows:
            raise ConfigError(f"sample size m={m} must lie between 2 and the {n_rows} rows of the data")
        d = resolve_delta(delta, m)
        if d >= 1 / m:
            notes.append(
                f"PRIVACY WARNING: delta={d:.3g} at n={m} is >= 1/n; a mechanism that publishes one random record "
                "in the clear satisfies (0, 1/n)-DP, so this delta permits that kind of failure"
            )
            break
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(8, 3)), rng.normal(size=8)
    for name in methods:
        spec = REGRESSION_METHODS[name]
        if spec.private:
            spec.fn(X, y, epsilon=epsilon, delta=resolve_delta(delta, min(m_grid)), rng=rng, **tuning.get(name, {}))
    return notes
