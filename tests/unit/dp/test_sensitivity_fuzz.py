"""The sensitivity fuzzer over every registered private method and both calibrations (issues 35 and 51): Hypothesis
draws data sets and neighbours from records of every magnitude (tests/sensitivity_fuzz.py), and every release's
pre-noise value must move by at most the sensitivity its plan states, under the same released history
(dpcost.dp.sensitivity); given that history every released output must be the same on both sides, and no two noise
draws of a run the same. Neighbours replace one record, or — for every method and interval route that accepts
add/remove — remove or add one; a method or route that refuses add/remove must refuse on both sides. It must catch
what it is for: each bug of tests/sensitivity_fuzz.PLANTED within its example budget. The long run is
measurements/sensitivity_fuzz.py; the planted bugs' power over random seeds, measurements/sensitivity_fuzz_power.py.
"""

import warnings

import pytest
from hypothesis import given, settings

from dpcost.dp.privacy import CALIBRATIONS
from dpcost.errors import PrivacyError
from dpcost.estimators.registry import METHODS
from dpcost.inference import PROCEDURES, ssp_family

from registry_cases import INTERVALS, PARAMS, TUNING, needs_missing_peer
from sensitivity_fuzz import PLANTED, PRIVATE, SEARCH, SETTINGS, base, cases, check, fuzz, privacy, size

# add/remove: the estimators at replace-one's budget (the records and the search are the same); the interval routes
# at 10, as each either refuses (at once) or, the SSP family's delta and bootstrap before their refusal, names n on
# every example (caught on the first in 20 of 20 seeds, as a ridge 1/n or a noise scale in n is)
AR_EXAMPLES = 25
AR_INTERVAL_EXAMPLES = 10
# a method whose plan refuses add/remove: every example asserts the same refusal on D and its neighbours, and drawing
# the examples is most of the cost (25 examples each of the 27 refusing methods took 18 s of the suite under load)
AR_REFUSED_EXAMPLES = 3


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("name", PRIVATE)
def test_no_release_moves_by_more_than_its_stated_sensitivity(name, calibration):
    if needs_missing_peer(METHODS[name]):
        pytest.skip(f"{METHODS[name].peer} not usable here")
    fuzz(name, calibration)


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("name", PRIVATE)
def test_every_method_refuses_add_remove_on_both_sides_or_passes_the_add_remove_fuzz(name, calibration):
    """Neighbours of n − 1 and n + 1 rows: a method that accepts add/remove must move each release by at most its
    add/remove sensitivity, on the same noise grid at both sizes, and put out the same estimate given the same
    releases (n is private); one that refuses must refuse D and every neighbour with a PrivacyError."""
    m = METHODS[name]
    if needs_missing_peer(m):
        pytest.skip(f"{m.peer} not usable here")
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="PRIVACY WARNING")
            n, d = size(m.family, base(name))
            m.make_plan(privacy(calibration, 1.0, "add_remove"), n, d, m.resolve_tuning(TUNING[name]), PARAMS)
        examples = AR_EXAMPLES
    except PrivacyError:
        examples = AR_REFUSED_EXAMPLES
    fuzz(name, calibration, relation="add_remove", examples=examples)


def test_the_fuzzer_finds_the_gap_of_a_procedure_marked_unproven():
    # DPSL-KT as printed: its IGHT teacher is not the exact minimiser its sensitivity assumes; its plan says so
    # (proven=False), so the suite does not assert its releases, and the fuzzer must still see the gap. 100 examples
    # (about 3 s) found it in 39 of 40 random seeds, 25 in 34 of 40 (an edit of the property draws other examples)
    worst = []

    @settings(max_examples=100, phases=SEARCH, derandomize=True, **SETTINGS)
    @given(cases("dpsl_kt_paper", "tight"))
    def prop(case):
        worst.extend(o.ratio for o in check("dpsl_kt_paper", "tight", case))

    prop()
    assert max(worst) > 1.5


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_a_planted_bug_is_caught(bug, monkeypatch):
    """Each planted bug (tests/sensitivity_fuzz.PLANTED: a sensitivity stated too small, a clip too loose, an old
    underflowing norm, one noise draw shared by the stacked blocks, a released field read from the data or from n,
    a noise grid that moves with n) is caught by the search it names within its budget, derandomized (the measured
    power over random seeds: measurements/sensitivity_fuzz_power.py, docs/methods.md)."""
    p = PLANTED[bug]
    p.plant(monkeypatch)
    with pytest.raises(AssertionError, match=p.match):
        fuzz(**p.target, examples=p.examples, shrink=False)


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("route", ["delta", "bootstrap"])
@pytest.mark.parametrize("name", sorted(n for n in INTERVALS if "delta" in PROCEDURES[n]))
def test_no_interval_release_moves_by_more_than_its_stated_sensitivity(name, route, calibration):
    """The residual sum of squares of the SSP family's intervals (inference.budget.residual_release, stated R²)
    beside the estimator's releases, on the same hostile records; every released field of the interval the same
    given the same releases."""
    fuzz(name, calibration, kind="interval", route=route, examples=25 if route == "delta" else 10)


@pytest.mark.parametrize("calibration", CALIBRATIONS)
def test_the_censored_blocks_interval_releases_within_their_stated_sensitivities(calibration):
    """blocks_ols's interval (issue 52): the estimator's five releases and the interval's two (the censored blocks'
    mean square, the fractions censored) against the interval's plan; every released field the same given them."""
    fuzz("blocks_ols", calibration, kind="interval", route="censored", examples=25)


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("name", sorted(m for m, routes in PROCEDURES.items() if "blocks" in routes))
def test_the_blocks_interval_releases_each_blocks_sensitivity_with_its_own_noise(name, calibration):
    """The blocks route end to end (k = 2: a public partition, each block's releases — stacked or one call a block —
    against one block's plan): each block's noise its own draw, and every released field (the block estimates, se,
    the t-interval) the same given the same releases. 10 examples: the releases are the estimator's, fuzzed above."""
    fuzz(name, calibration, kind="interval", route="blocks", examples=10)


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("name, route", [(m, r) for m, routes in PROCEDURES.items() for r in routes])
def test_every_interval_route_refuses_add_remove_on_both_sides_or_passes_the_add_remove_fuzz(name, route, calibration):
    """Every route of every interval method under add/remove: it refuses D and every neighbour with a PrivacyError,
    or every release moves by at most its add/remove sensitivity and every released field is the same at n and
    n ± 1 given the same releases."""
    fuzz(name, calibration, kind="interval", route=route, relation="add_remove", examples=AR_INTERVAL_EXAMPLES)


@pytest.mark.parametrize("route", ["delta", "bootstrap"])
def test_the_add_remove_fuzz_finds_the_sigma2_hole_with_the_refusal_taken_out(route, monkeypatch):
    """Planted: the SSP family's add/remove refusal taken out (the code before issue 51). Its intervals then publish
    σ̂² = max(S̃ − tr, σ_S)/(n − d), which names n: the fuzz must find σ̂² differing between D and a neighbour fed the
    same releases (it did on the first example of every such route, in both calibrations)."""
    monkeypatch.setattr(ssp_family, "require_replace", lambda *a: None)
    with pytest.raises(AssertionError, match=r"details\['sigma2'\].* differ between D and neighbour"):
        fuzz("ssp", "tight", kind="interval", route=route, relation="add_remove", examples=AR_INTERVAL_EXAMPLES,
             shrink=False)  # fmt: skip


def test_every_interval_route_with_a_release_of_its_own_is_fuzzed():
    assert set(INTERVALS) == {k for k, routes in PROCEDURES.items() if set(routes) - {"blocks"}}


BLOCKS = [name for name, m in METHODS.items() if m.blocks is not None]


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("name", BLOCKS)
def test_no_release_of_the_stacked_blocks_moves_by_more_than_one_blocks_sensitivity(name, calibration):
    """The stacked blocks path: one block's sensitivity per block, each block's noise its own draw, the k block
    estimates the same given the same releases."""
    fuzz(name, calibration, kind="blocks")
