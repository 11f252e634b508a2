"""Confidence intervals for regression coefficients: private ones, private from end to end (:func:`interval`, one
(ε, δ)-DP release per interval), and the non-private OLS reference (:func:`ols_interval`). docs/methods.md,
"Private confidence intervals"; derivations in docs/proofs.md."""

from .base import Interval
from .procedures import PROCEDURES, interval
from .reference import ols_interval

__all__ = ["PROCEDURES", "Interval", "interval", "ols_interval"]
