"""Start-up checks of a configuration, so that a bad value stops the run before any job starts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..dp.privacy import Privacy
from ..errors import ConfigError
from ..estimators.registry import methods_of
from . import tuning as tuning_steps
from .datasets import Analysis


def delta_warning(privacy: Privacy, m_grid: Sequence[int], *, why: bool = True) -> str | None:
    """A PRIVACY WARNING naming every m whose δ(m) ≥ 1/m, with δ there (resolving δ at every m, which refuses
    δ ∉ (0, 1)); None when δ(m) < 1/m at every m. ``why``: with the reason a δ that large is a risk."""
    large = [(m, d) for m in m_grid if (d := privacy.at(m).delta) >= 1 / m]
    if not large:
        return None
    where = "every m" if len(large) == len(m_grid) else f"{len(large)} of the {len(m_grid)} m"
    at = ", ".join(f"{d:.3g} at n={m}" for m, d in large)
    reason = (
        "; a mechanism that publishes one random record in the clear satisfies (0, 1/n)-DP, so this delta "
        "permits that kind of failure"
    )
    return f"PRIVACY WARNING: delta={privacy.delta} is >= 1/n at {where} ({at}){reason if why else ''}"


def delta_notes(privacy: Privacy, m_grid: Sequence[int]) -> list[str]:
    """The ledger's notes on δ: :func:`delta_warning`, if any."""
    warning = delta_warning(privacy, m_grid)
    return [warning] if warning else []


def check_setup(
    analysis: Analysis, block: Mapping, *, methods: Sequence[str], privacy: Privacy, m_grid: Sequence[int]
) -> list[str]:
    """Return privacy warnings for the user; raise on a value no run should start with.

    Check m against the data, the analysis's own constraints, every method's tuning keys (unknown or missing) and
    search space (unknown keys, empty lists, a tuning mode the analysis cannot run), δ at
    every m, and run every private method once on a tiny fixed input, so that a parameter the estimator would refuse
    (B too small, ε/T ≥ 1, classic Gaussian at ε ≥ 1, …) fails now with its own message."""
    limit, what = analysis.max_m(block)
    for i, m in enumerate(m_grid):
        if not 2 <= m <= limit:
            raise ConfigError(f"{analysis.name}.m.{i}: m={m} must lie between 2 and the {limit} {what}")
    notes = delta_notes(privacy, m_grid)
    if analysis.check is not None:
        analysis.check(block)
    registry = methods_of(analysis.family)
    params = analysis.params_from(block)
    tuning, search = block.get("tuning", {}), block.get("search", {})
    mode = block.get("tuning_mode", "fixed")
    unknown = sorted(set(search) - set(registry))
    if unknown:
        raise ConfigError(f"{analysis.name}.search: unknown method(s) {unknown}; available: {sorted(registry)}")
    data = analysis.probe(block)
    rng = np.random.default_rng(0)
    for i, name in enumerate(methods):
        if name not in registry:
            raise ConfigError(f"{analysis.name}.methods.{i}: unknown method {name!r}; available: {sorted(registry)}")
        method = registry[name]
        if mode == "none":
            tuning_steps.check_none(method, tuning.get(name), f"{analysis.name}.tuning.{name}")
        resolved = method.resolve_tuning(tuning.get(name), f"{analysis.name}.tuning.{name}")
        where = f"{analysis.name}.search.{name}"
        tuning_steps.check_setup(analysis.family, mode, search.get(name), where)
        tuning_steps.candidates(method, tuning.get(name), search.get(name), where)
        if method.private:
            p = privacy.at(min(m_grid))
            method.estimate(*data, privacy=p, rng=rng, tuning=resolved, params=params)
    if block.get("map"):
        check_map(analysis, block["map"], registry, limit, what)
    return notes


def check_map(analysis: Analysis, cfg: Mapping, registry: Mapping, limit: int, what: str) -> None:
    """The map's methods exist in the analysis's family, at least one private and one non-private; its m fit."""
    where = f"{analysis.name}.map"
    unknown = sorted(set(cfg["methods"]) - set(registry))
    if unknown:
        raise ConfigError(f"{where}.methods: unknown method(s) {unknown}; available: {sorted(registry)}")
    kinds = {registry[k].private for k in cfg["methods"]}
    if kinds != {True, False}:
        lacking = "non-private method (the reference the ratios divide by)" if True in kinds else "private method"
        raise ConfigError(
            f"{where}.methods: needs at least one private and one non-private method; "
            f"{list(cfg['methods'])} has no {lacking}"
        )
    for i, m in enumerate(cfg["m"]):
        if not 2 <= m <= limit:
            raise ConfigError(f"{where}.m.{i}: m={m} must lie between 2 and the {limit} {what}")
