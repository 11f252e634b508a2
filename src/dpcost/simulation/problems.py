"""The simulation study's problems: every fact of one problem in its entry (:class:`Problem`), and :data:`PROBLEMS`,
the one source of their names (as :mod:`dpcost.estimators.registry` is of the methods').

How each problem's data are drawn and scored is :mod:`.designs`'; its rates are :mod:`.rates`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ..errors import ConfigError


@dataclass(frozen=True)
class Problem:
    """One simulated problem.

    ``family``: the registry family its methods come from (and the design fields its draw reads). ``text``: its
    plain words in titles and captions. ``baseline``: its non-private method, the yardstick the rates table divides
    by. ``shapes``: the rate shapes :func:`~.rates.rate` knows for it, the default first (none: no rate drawn).
    ``sparse``: its truth has s* non-zero coordinates, and its methods take the sparsity s. ``kt_loss``: a
    knowledge-transfer problem's loss (Wang & Gu 2020, §5), which its methods take; its error is relative,
    ‖θ̂ − θ*‖/‖θ*‖, and it has public features. ``setting``: the one experiment parameter it needs beyond (n, d, s*),
    part of its draw's identity. ``fixed_d``: the dimension it fixes ("n": one parameter per item; 1: a
    one-dimensional design), None if free."""

    name: str
    family: str
    text: str
    baseline: str
    shapes: tuple[str, ...]
    sparse: bool = False
    kt_loss: str | None = None
    setting: str | None = None
    fixed_d: int | str | None = None

    def d_for(self, n: int) -> int | None:
        """The dimension the problem fixes at n items or rows, or None."""
        return n if self.fixed_d == "n" else self.fixed_d


_P = Problem
PROBLEMS: Mapping[str, Problem] = MappingProxyType(
    {
        p.name: p
        for p in (
            _P("mean", "mean", "mean", "sample_mean", ("minimax",)),
            _P("sparse_mean", "mean", "sparse mean", "top_s_mean", ("minimax",), sparse=True),
            _P("ols", "regression", "linear regression", "ols", ("minimax",)),
            _P("sparse_ols", "regression", "sparse linear regression", "iht", ("minimax",), sparse=True),
            _P("logistic", "glm", "logistic regression", "glm_mle", ("upper", "lower")),
            _P("sparse_logistic", "glm", "sparse logistic regression", "sparse_glm_iht", ("upper",), sparse=True),
            _P(
                "btl", "ranking", "BTL ranking, n items", "btl_mle", ("printed", "corrected"), setting="p", fixed_d="n"
            ),  # fmt: skip
            _P(
                "sobolev",
                "nonparametric",
                "Sobolev regression (error: sqrt MISE)",
                "fourier",
                ("upper",),
                setting="alpha",
                fixed_d=1,
            ),  # fmt: skip
            _P(
                "kt_linear",
                "sparse_learning",
                "sparse linear regression (knowledge transfer)",
                "iht",
                (),
                sparse=True,
                kt_loss="squared",
            ),  # fmt: skip
            _P(
                "kt_logistic",
                "sparse_learning",
                "sparse logistic regression (knowledge transfer)",
                "iht",
                (),
                sparse=True,
                kt_loss="logistic",
            ),  # fmt: skip
        )
    }
)
# the experiment parameters some problem needs (formula variables of the constants: dpcost.simulation.experiments)
SETTINGS = tuple(dict.fromkeys(p.setting for p in PROBLEMS.values() if p.setting))


def problem_of(name: str, where: str = "simulation problem") -> Problem:
    """The entry of problem ``name``; an unknown name is a :class:`ConfigError` listing the known ones."""
    if name not in PROBLEMS:
        raise ConfigError(f"{where} must be one of {tuple(PROBLEMS)}, got {name!r}")
    return PROBLEMS[name]
