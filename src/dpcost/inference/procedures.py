"""The interval procedures by route, and the entry point :func:`interval`: which routes a method has is its registry
entry's (``Method.intervals``, viewed here as :data:`PROCEDURES`). A method without one has no private interval
procedure, and asking for one is an error that names those that have one — never a non-private interval beside a
private estimate."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from ..dp.privacy import Privacy
from ..errors import PrivacyError
from ..estimators.registry import METHODS
from .base import Interval
from .blocks import blocks_interval
from .blocks_ols import blocks_ols_interval
from .ssp_family import ssp_family_interval

# method → its routes, the default first: a view of the registry, where each method's entry declares them
# (Method.intervals). The SSP family's delta and bootstrap routes read its released statistics (ssp_family); the
# generic blocks route is valid for any private estimator; censored is blocks_ols's own.
PROCEDURES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {k: m.intervals for k, m in METHODS.items() if m.intervals}
)


def interval(
    method: str,
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    level: float = 0.95,
    route: str | None = None,
    **options,
) -> Interval:
    """A private confidence interval for every coefficient of β from ``method``, at ``level``: one release that is
    (privacy.epsilon, privacy.delta)-DP as a whole (its :attr:`Interval.plan`), the estimate and the interval's
    own releases together.

    ``route`` (default: the method's first, :data:`PROCEDURES`): ``bootstrap`` or ``delta`` for the SSP family
    (:mod:`.ssp_family`; options ``share``, ``R``, ``draws``), ``blocks`` for any listed method (:mod:`.blocks`;
    option ``blocks``). The other options are the estimator's constants. ``rng`` draws the estimate's noise exactly
    as the estimator would (SSP family); the interval's own noise comes from generators derived from it without
    drawing from it (:func:`~.base.derived_rng`)."""
    if method not in PROCEDURES:
        raise PrivacyError(
            f"no private interval procedure for {method!r}; the methods that have one: {sorted(PROCEDURES)}"
        )
    route = PROCEDURES[method][0] if route is None else route
    if route not in PROCEDURES[method]:
        raise PrivacyError(f"{method} has the interval routes {PROCEDURES[method]}, not {route!r}")
    if route == "censored":  # blocks of unclipped OLS (issue 52)
        return blocks_ols_interval(X, y, privacy=privacy, rng=rng, level=level, **options)
    if route == "blocks":
        return blocks_interval(method, X, y, privacy=privacy, rng=rng, level=level, **options)
    return ssp_family_interval(method, X, y, privacy=privacy, rng=rng, level=level, route=route, **options)
