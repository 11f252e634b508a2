"""Start-up checks: a value no run should start with stops it before any job, with a message naming it."""

from contextlib import nullcontext

import pytest

from dpcost.analysis.checks import check_setup, delta_notes
from dpcost.analysis.datasets import ANALYSES
from dpcost.dp.privacy import Privacy
from dpcost.errors import ConfigError, PrivacyError

HOUSING = ANALYSES["housing"]
SNP = ANALYSES["snp"]
OK = Privacy(0.5, 1e-6)
GD = {"T": 5, "eta0": 0.5, "R": 3.0, "C": 2.0, "c_x": 3.0}
TRUNC = {"R": 3.0, "C": 2.0, "c_x": 3.0, "kappa": 0.5}
HOUSING_BLOCK = {
    "tuning": {"noisy_gd": GD, "noisy_truncated_ols": TRUNC, "adassp": {"B_X": 3.0, "B_Y": 3.0}, "objpert": {}}
}


def _snp_block(**kw):
    return {"s": 5, "n_snps": 100, "groups": {"average": 241, "low": 146}, "tuning": {"peeling": {"R": 2.0}}, **kw}


def test_a_good_setup_passes_without_notes():
    methods = ["ols", "noisy_gd", "noisy_truncated_ols"]
    assert check_setup(HOUSING, HOUSING_BLOCK, methods=methods, privacy=OK, m_grid=[100, 20640]) == []
    tight = Privacy(0.5, 1e-6, "tight")
    assert check_setup(HOUSING, HOUSING_BLOCK, methods=[*methods, "adassp"], privacy=tight, m_grid=[100]) == []
    assert check_setup(SNP, _snp_block(), methods=["sample_mean", "peeling"], privacy=OK, m_grid=[10, 146]) == []


@pytest.mark.parametrize("m", [1, 147])
def test_m_outside_the_smaller_group_is_refused(m):
    with pytest.raises(
        ConfigError, match=rf"snp.m.1: m={m} must lie between 2 and the 146 samples of the smaller group"
    ):
        check_setup(SNP, _snp_block(), methods=["peeling"], privacy=OK, m_grid=[10, m])


def test_m_beyond_the_housing_rows_is_refused():
    with pytest.raises(ConfigError, match="between 2 and the 20640 rows of the data"):
        check_setup(HOUSING, HOUSING_BLOCK, methods=["ols"], privacy=OK, m_grid=[20641])


def test_sparsity_above_the_kept_snps_is_refused():
    with pytest.raises(ConfigError, match=r"sparsity s=101 exceeds the number of SNPs kept \(n_snps=100\)"):
        check_setup(SNP, _snp_block(s=101), methods=["peeling"], privacy=OK, m_grid=[10])


def test_unknown_method_is_refused():
    with pytest.raises(ConfigError, match="housing.methods.1: unknown method 'magic'"):
        check_setup(HOUSING, HOUSING_BLOCK, methods=["ols", "magic"], privacy=OK, m_grid=[100])
    with pytest.raises(ConfigError, match="snp.methods.0: unknown method 'adassp'"):  # a method of the other family
        check_setup(SNP, _snp_block(), methods=["adassp"], privacy=OK, m_grid=[10])


def test_unknown_tuning_key_is_named():
    block = {"tuning": {"noisy_gd": {**GD, "stepsize": 0.1}}}
    with pytest.raises(ConfigError, match=r"housing.tuning.noisy_gd: unknown key\(s\) \['stepsize'\]"):
        check_setup(HOUSING, block, methods=["noisy_gd"], privacy=OK, m_grid=[100])
    with pytest.raises(ConfigError, match=r"snp.tuning.peeling: unknown key\(s\) \['radius'\]"):
        check_setup(
            SNP, _snp_block(tuning={"peeling": {"R": 2.0, "radius": 1.0}}), methods=["peeling"], privacy=OK, m_grid=[10]
        )


def test_missing_required_tuning_key_is_named():
    block = {"tuning": {"objpert": {"B_X": 3.0, "B_Y": 3.0}}}
    with pytest.raises(ConfigError, match=r"housing.tuning.objpert: objpert is missing required key\(s\) \['C'\]"):
        check_setup(HOUSING, block, methods=["objpert"], privacy=OK, m_grid=[100])
    with pytest.raises(ConfigError, match="missing required"):  # no block at all for a method that needs one
        check_setup(SNP, _snp_block(tuning={}), methods=["peeling"], privacy=OK, m_grid=[10])


def test_paper_calibration_outside_its_proof_is_refused_at_start_up():
    with pytest.raises(PrivacyError, match="proven only for epsilon < 1"):
        check_setup(
            HOUSING, HOUSING_BLOCK, methods=["ols", "noisy_truncated_ols"], privacy=Privacy(2.0, 1e-6), m_grid=[100]
        )
    # the same with exact accounting, or with on_invalid "warn", starts
    for privacy in (Privacy(2.0, 1e-6, "tight"), Privacy(2.0, 1e-6, "paper", "warn")):
        with pytest.warns(RuntimeWarning) if privacy.on_invalid == "warn" else nullcontext():
            check_setup(HOUSING, HOUSING_BLOCK, methods=["noisy_truncated_ols"], privacy=privacy, m_grid=[100])


def test_delta_formula_gives_one_privacy_warning_naming_every_m():
    privacy = Privacy(0.5, "10/n^1.1")  # >= 1/n for every n < 10^10
    notes = delta_notes(privacy, [100, 1000, 10000])
    assert len(notes) == 1 and notes[0].startswith(
        "PRIVACY WARNING: delta=10/n^1.1 is >= 1/n at every m (0.0631 at n=100, 0.00501 at n=1000, 0.000398 at "
        "n=10000); a mechanism that publishes one random record in the clear"
    )
    # a delta that is >= 1/n at some m only names those
    assert delta_notes(Privacy(0.5, 0.002), [100, 1000]) == [
        "PRIVACY WARNING: delta=0.002 is >= 1/n at 1 of the 2 m (0.002 at n=1000); a mechanism that publishes one "
        "random record in the clear satisfies (0, 1/n)-DP, so this delta permits that kind of failure"
    ]
    assert check_setup(HOUSING, HOUSING_BLOCK, methods=["ols"], privacy=privacy, m_grid=[100, 1000, 10000]) == notes
    assert delta_notes(Privacy(0.5, 1e-6), [100, 1000]) == []
    assert delta_notes(Privacy(0.5, "n^-2"), [100, 1000]) == []
    assert delta_notes(Privacy(0.5, "1/n^1.1"), [2, 10, 20640]) == []  # table_defaults' delta: below 1/n at every n


def test_delta_formula_outside_zero_one_is_refused():
    with pytest.raises(PrivacyError, match="gives .* at n=5; delta must lie strictly between 0 and 1"):
        delta_notes(Privacy(0.5, "10/n^1.1"), [100, 5])
