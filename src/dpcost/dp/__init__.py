"""Differential privacy building blocks: the privacy specification, the plan data model, mechanisms, accounting
wrappers around dp-accounting, δ formulas and empirical audits. Nothing here knows an estimator."""

from .plan import PrivacyPlan, Release
from .privacy import Privacy

__all__ = ["Privacy", "PrivacyPlan", "Release"]
