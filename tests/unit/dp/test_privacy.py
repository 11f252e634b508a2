import pytest

from dpcost.dp.delta import parse_delta, resolve_delta
from dpcost.dp.privacy import CALIBRATIONS, NEIGHBOUR_RELATIONS, Privacy
from dpcost.errors import ConfigError, PrivacyError


def test_formula_matches_the_paper():
    assert resolve_delta("10/n^1.1", 100) == pytest.approx(10 / 100**1.1, rel=1e-15)
    assert resolve_delta("10 / n ** 1.1", 2000) == pytest.approx(10 / 2000**1.1, rel=1e-15)
    assert resolve_delta("1/(2*n)^2", 10) == pytest.approx(1 / 400)


def test_numbers_pass_through():
    assert resolve_delta(1e-6, 123) == 1e-6
    assert parse_delta(0.5)(10) == 0.5


@pytest.mark.parametrize("bad", ["__import__('os').system('true')", "n +", "x * 2", "sqrt(n)", "n if n else 1", ""])
def test_formulas_outside_the_grammar_are_refused(bad):
    with pytest.raises(ConfigError):
        parse_delta(bad)(10)


@pytest.mark.parametrize("spec,n", [("10/n^1.1", 5), (1.0, 10), ("-1/n", 10), ("1/(n-10)", 10), (0, 10)])
def test_delta_outside_unit_interval_is_refused(spec, n):
    with pytest.raises(PrivacyError):
        resolve_delta(spec, n)


def test_booleans_are_not_numbers():
    with pytest.raises(ConfigError):
        parse_delta(True)


# ---- the Privacy specification ---------------------------------------------------------------------------------


def test_privacy_defaults_and_relation_in_words():
    p = Privacy(0.5, 1e-5)
    assert (p.calibration, p.on_invalid, p.neighbours) == ("paper", "refuse", "replace")
    assert p.relation == NEIGHBOUR_RELATIONS["replace"] == "replace one record"
    assert Privacy(0.5, 1e-5, neighbours="add_remove").relation == "add or remove one record"
    assert CALIBRATIONS == ("paper", "tight")


@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf"), True, "0.5", None])
def test_privacy_refuses_a_bad_epsilon(eps):
    with pytest.raises(PrivacyError, match="epsilon"):
        Privacy(eps, 1e-5)


@pytest.mark.parametrize("delta", [0, 0.0, 1, 1.0, -1e-5, 1.5, float("nan"), True])
def test_privacy_refuses_a_delta_outside_the_unit_interval(delta):
    with pytest.raises(PrivacyError, match="delta"):
        Privacy(0.5, delta)


@pytest.mark.parametrize("formula", ["n +", "sqrt(n)", "x * 2", "__import__('os').system('true')", ""])
def test_privacy_refuses_an_unparsable_delta_formula_at_once(formula):
    with pytest.raises(ConfigError):
        Privacy(0.5, formula)


@pytest.mark.parametrize(
    "field,value",
    [("calibration", "exact"), ("calibration", "classic"), ("on_invalid", "ignore"), ("neighbours", "swap")],
)
def test_privacy_refuses_unknown_calibration_on_invalid_and_neighbours(field, value):
    with pytest.raises((PrivacyError, ConfigError), match=field):
        Privacy(0.5, 1e-5, **{field: value})


def test_at_resolves_a_formula_and_keeps_a_number():
    p = Privacy(0.5, "10/n^1.1", "tight", "warn")
    q = p.at(2000)
    assert q.delta == pytest.approx(10 / 2000**1.1, rel=1e-15) and isinstance(q.delta, float)
    assert (q.epsilon, q.calibration, q.on_invalid, q.neighbours) == (0.5, "tight", "warn", "replace")
    with pytest.raises(PrivacyError, match="n is private"):  # add/remove: a delta that moves with n reveals n
        Privacy(0.5, "10/n^1.1", neighbours="add_remove").at(2000)
    assert p.delta == "10/n^1.1"  # frozen: the formula itself is unchanged
    fixed = Privacy(0.5, 1e-6)
    assert fixed.at(10) == fixed and fixed.at(10).delta == 1e-6
    with pytest.raises(PrivacyError):
        Privacy(0.5, "10/n^1.1").at(5)  # 10/5^1.1 > 1


def test_outside_validity_refuses_or_warns():
    with pytest.raises(PrivacyError, match="out of range; use calibration 'tight'"):
        Privacy(0.5, 1e-5).outside_validity("out of range")
    with pytest.warns(RuntimeWarning, match="PRIVACY WARNING: out of range"):
        Privacy(0.5, 1e-5, on_invalid="warn").outside_validity("out of range")
