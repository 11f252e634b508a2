"""Estimators, one module per family: each holds the algorithm, its sensitivity and its privacy plan together.
:mod:`dpcost.estimators.registry` is the single source of method names, labels and tuning defaults."""
