"""The sensitivity fuzzer over every registered private method and both calibrations (issue 35): Hypothesis draws
data sets and replace-one neighbours from records of every magnitude (tests/sensitivity_fuzz.py), and every release's
pre-noise value must move by at most the sensitivity its plan states, under the same released history
(dpcost.dp.sensitivity). It must catch what it is for: the old underflowing row norm of the joint clip, and a
sensitivity halved in one plan, each within the same example budget. The long run is benchmarks/sensitivity_fuzz.py.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings

from dpcost.dp.privacy import CALIBRATIONS
from dpcost.estimators import base
from dpcost.estimators import precond_gd as pgd
from dpcost.estimators.registry import METHODS
from dpcost.inference import budget, ssp_family

from registry_cases import INTERVALS, needs_missing_peer
from sensitivity_fuzz import PRIVATE, cases, check, check_blocks, check_interval

EXAMPLES = 25  # per method and calibration, 4 neighbours each
# the planted bugs' budget: 25 examples caught the old underflowing norm in 36 of 40 random seeds for precond_gd and
# precond_gd_free (40 of 40 for precond_gd_adaptive), so 100 miss with probability about 0.1^4 = 1e-4 whatever the seed
# (derandomize seeds from the property's source, so any edit of it draws other examples)
PLANTED_EXAMPLES = 100
# one failure reported, not an ExceptionGroup of every distinct one: the planted bugs' tests expect an AssertionError,
# and which distinct failures an example budget finds shifts whenever the property's source does (derandomize seeds
# from it)
SETTINGS = dict(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck),
                report_multiple_bugs=False)  # fmt: skip
# Fresh examples, not Hypothesis's hill-climbing on the worst ratio (Phase.target): with the same budget, climbing
# found DPSL-KT-as-printed's gap in 32 of 40 random seeds at 100 examples (6 of 10 at 25) and fresh examples in 39
# of 40 (34 of 40 at 25), while the planted bugs were caught as often either way (docs/methods.md, "Its power")
SEARCH = [Phase.explicit, Phase.generate]


def fuzz(name: str, calibration: str, *, shrink: bool = True, interval: bool = False, blocks: bool = False) -> None:
    """The property for one method (``interval``: for its private interval, the estimator's releases and the
    interval's own; ``blocks``: its stacked blocks path): raises (Hypothesis's report) when an example breaks it.
    ``shrink=False`` is the planted bugs' search: no shrinking, PLANTED_EXAMPLES examples."""
    phases = SEARCH + [Phase.shrink, Phase.explain] if shrink else SEARCH
    checker = check_interval if interval else check_blocks if blocks else check

    @settings(max_examples=EXAMPLES if shrink else PLANTED_EXAMPLES, phases=phases, **SETTINGS)
    @given(cases(name, calibration))
    def prop(case):
        checker(name, calibration, case)

    prop()


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("name", PRIVATE)
def test_no_release_moves_by_more_than_its_stated_sensitivity(name, calibration):
    if needs_missing_peer(METHODS[name]):
        pytest.skip(f"{METHODS[name].peer} not usable here")
    fuzz(name, calibration)


def test_the_fuzzer_finds_the_gap_of_a_procedure_marked_unproven():
    # DPSL-KT as printed: its IGHT teacher is not the exact minimiser its sensitivity assumes; its plan says so
    # (proven=False), so the suite does not assert its releases, and the fuzzer must still see the gap. 100 examples
    # (about 3 s) found it in 39 of 40 random seeds, 25 in 34 of 40 (an edit of the property draws other examples)
    worst = []

    @settings(max_examples=100, phases=SEARCH, **SETTINGS)
    @given(cases("dpsl_kt_paper", "tight"))
    def prop(case):
        worst.extend(o.ratio for o in check("dpsl_kt_paper", "tight", case))

    prop()
    assert max(worst) > 1.5


def _old_norms(V):
    """The row norm as it was before issue 35: √Σv², which underflows to 0 for entries below ~1e-154."""
    with np.errstate(over="ignore", under="ignore"):
        q = np.linalg.norm(V.reshape(-1, V.shape[-1]), axis=-1).reshape(V.shape[:-1])
    return np.ones_like(q), q


@pytest.mark.parametrize("name", ["precond_gd", "precond_gd_free", "precond_gd_adaptive"])
def test_the_old_underflowing_norm_is_caught(name, monkeypatch):
    monkeypatch.setattr(base, "row_norm_parts", _old_norms)
    with pytest.raises(AssertionError, match="moved by|failed"):  # an unclipped term, or one too large for the grid
        fuzz(name, "tight", shrink=False)


def test_a_halved_sensitivity_is_caught(monkeypatch):
    monkeypatch.setattr(pgd, "step_sensitivity", lambda C, R, neighbours: C if R is None else C * R)
    with pytest.raises(AssertionError, match="moved by"):
        fuzz("precond_gd", "tight", shrink=False)


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("name", sorted(INTERVALS))
def test_no_interval_release_moves_by_more_than_its_stated_sensitivity(name, calibration):
    """The residual sum of squares of the SSP family's intervals (inference.budget.residual_release, stated R²)
    beside the estimator's releases, on the same hostile records."""
    fuzz(name, calibration, interval=True)


def test_a_halved_residual_sensitivity_is_caught(monkeypatch):
    def halved(split_, R):
        R, rel = budget.residual_release(split_, R)
        return R, split_.gaussian_release(f"sum of squared residuals, R = {R:.6g}, sensitivity halved", R * R / 2)

    monkeypatch.setattr(ssp_family, "residual_release", halved)
    with pytest.raises(AssertionError, match="moved by"):
        fuzz("adassp", "tight", shrink=False, interval=True)


def test_every_interval_route_with_a_release_of_its_own_is_fuzzed():
    from dpcost.inference import PROCEDURES

    assert set(INTERVALS) == {k for k, routes in PROCEDURES.items() if set(routes) - {"blocks"}}


BLOCKS = [name for name, m in METHODS.items() if m.blocks is not None]


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("name", BLOCKS)
def test_no_release_of_the_stacked_blocks_moves_by_more_than_one_blocks_sensitivity(name, calibration):
    fuzz(name, calibration, blocks=True)


def test_a_halved_sensitivity_is_caught_on_the_stacked_blocks(monkeypatch):
    monkeypatch.setattr(pgd, "step_sensitivity", lambda C, R, neighbours: C if R is None else C * R)
    with pytest.raises(AssertionError, match="moved by"):
        fuzz("precond_gd", "tight", shrink=False, blocks=True)
