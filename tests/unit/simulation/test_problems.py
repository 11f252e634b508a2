"""The simulation's problem registry (dpcost.simulation.problems): every fact of a problem in its entry, and each
entry consistent with the rest of the package."""

import math

import pytest

from dpcost.errors import ConfigError
from dpcost.estimators.registry import METHODS, methods_of
from dpcost.simulation import designs, rates
from dpcost.simulation.problems import PROBLEMS, problem_of


def test_an_unknown_problem_is_refused_with_the_known_ones():
    with pytest.raises(ConfigError, match=r"simulation.experiments.x.problem must be one of \('mean', 'sparse_mean'"):
        problem_of("means", "simulation.experiments.x.problem")
    assert problem_of("btl").fixed_d == "n" and problem_of("btl").d_for(30) == 30
    with pytest.raises(ConfigError, match="simulation problem must be one of"):  # a draw asks the registry too
        designs.draw(designs.Design(), "means", n=10, d=2, s=None, rep=0, seed=0)


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_each_problems_baseline_family_and_shapes_are_real(name):
    """Its baseline is a non-private method of its family; each rate shape is one rate() draws (and describes)."""
    p = PROBLEMS[name]
    assert p.name == name and p.family in {m.family for m in METHODS.values()}
    baseline = METHODS[p.baseline]
    assert not baseline.private and p.baseline in methods_of(p.family, simulation=True)
    for shape in p.shapes:
        assert shape in rates.SHAPE_TEXT
        kw = {"n": 1000, "d": 1 if p.fixed_d == 1 else 1000 if p.fixed_d else 10, "s": 3, "sigma": 1.0}
        value = rates.rate(name, True, epsilon=1.0, delta=1e-6, p=0.5, alpha=2, shape=shape, **kw)
        assert math.isfinite(value) and value > 0
    # what its methods are given follows from the entry: the sparsity where sparse, the loss where knowledge transfer
    params = designs.analysis_params(name, n=50, s=3)
    assert ("s" in params) == p.sparse and params.get("loss") == p.kt_loss
