"""The non-private baseline of the regression analyses: ordinary least squares."""

from __future__ import annotations

import numpy as np

from .base import check_design


def ols(X, y) -> np.ndarray:
    """Non-private ordinary least squares (X'X)⁻¹X'y (minimum-norm solution if X is rank deficient)."""
    X, y = check_design(X, y)
    return np.linalg.lstsq(X, y, rcond=None)[0]
