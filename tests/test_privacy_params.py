import pytest

from dpcost.errors import ConfigError, PrivacyError
from dpcost.privacy import parse_delta, resolve_delta


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
