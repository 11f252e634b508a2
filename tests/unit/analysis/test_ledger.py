"""The privacy ledger, built from records as the estimate jobs write them (run_grid's plans, wrapped and saved)."""

import json

import numpy as np
import pytest

from dpcost.analysis.designs import RegressionDesign
from dpcost.analysis.engine import run_grid
from dpcost.analysis.ledger import build_ledger
from dpcost.dp.spec import Privacy
from dpcost.estimators.registry import METHODS

M_GRID = [100, 1000]
PRIVACY = Privacy(0.5, "10/n^1.1")
TUNING = {
    "ols": {},
    "adassp": {"B_X": 1.0, "B_Y": 1.0},
    "noisy_truncated_ols": {"R": 1.0, "C": 2.0, "c_x": 1.0, "kappa": 0.1, "noise": "printed"},
}


def _design():
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(2000, 3))
    beta = np.array([0.5, -0.3, 0.2])
    return RegressionDesign(X, X @ beta + 0.1 * rng.normal(size=2000), beta)


def _record(name, privacy=PRIVACY, tuning=None):
    """What dpcost.scripting.estimate_job writes to its plans file, read back from JSON."""
    spec = METHODS[name]
    tuning = spec.resolve_tuning(TUNING[name] if tuning is None else tuning)
    _, plans = run_grid(
        _design(), spec, tuning=tuning, params={}, m_grid=M_GRID, reps=2, seed=0, privacy=privacy, dataset="housing"
    )
    record = {
        "dataset": "housing",
        "method": name,
        "label": spec.label,
        "private": spec.private,
        "privacy": privacy.to_dict(),
        "tuning": tuning,
        "params": {},
        "plans": plans,
    }
    return json.loads(json.dumps(record, allow_nan=False))


@pytest.fixture(scope="module")
def ledger():
    return build_ledger(
        dataset="housing",
        records=[_record(name) for name in TUNING],
        privacy=PRIVACY.to_dict(),
        not_private=["standardization with full-sample statistics"],
        notes=["a note"],
    )


def test_header_states_the_specification(ledger):
    assert ledger["dataset"] == "housing" and ledger["neighbours"] == "replace one record"
    assert ledger["epsilon"] == 0.5 and ledger["delta"] == "10/n^1.1"
    assert ledger["delta_is_evaluated_at"].startswith("n = m")
    assert ledger["calibration"] == "paper" and ledger["on_invalid"] == "refuse"
    assert ledger["not_private"] == ["standardization with full-sample statistics"] and ledger["notes"] == ["a note"]
    assert list(ledger["methods"]) == list(TUNING)
    json.dumps(ledger, allow_nan=False)  # JSON-ready


def test_nonprivate_baseline_says_so(ledger):
    assert ledger["methods"]["ols"] == {
        "label": METHODS["ols"].label,
        "private": False,
        "guarantee": "none (non-private baseline)",
    }


def test_private_entry_lists_every_m(ledger):
    e = ledger["methods"]["adassp"]
    assert e["private"] is True and e["label"] == METHODS["adassp"].label
    assert e["guarantee"] == "(0.5, delta(n = m))-DP, neighbours: replace one record"
    assert e["calibration"] == "paper" and e["tuning"] == {"B_X": 1.0, "B_Y": 1.0, "rho": 0.05}
    assert "3 Gaussian releases" in e["composition"] and "B_X = 1.0" in e["assumption (enforced in code)"]
    assert e["warnings"] == []
    assert [p["m"] for p in e["per_m"]] == M_GRID
    assert [p["delta"] for p in e["per_m"]] == pytest.approx([10 / m**1.1 for m in M_GRID])
    for p in e["per_m"]:
        assert p["epsilon"] == 0.5 and p["parameters"] == {}
        assert len(p["releases"]) == 3 and all(r["mechanism"].startswith("gaussian") for r in p["releases"])
        assert sum(r["epsilon"] * r["count"] for r in p["releases"]) == pytest.approx(0.5)
        assert sum(r["delta"] * r["count"] for r in p["releases"]) == pytest.approx(p["delta"])
    # less noise at the larger m
    assert e["per_m"][1]["releases"][2]["noise_scale"] != e["per_m"][0]["releases"][2]["noise_scale"]


def test_unproven_calibration_is_not_called_private(ledger):
    e = ledger["methods"]["noisy_truncated_ols"]
    assert e["guarantee"].startswith("NONE PROVEN") and e["private"] is False
    assert e["composition"].startswith("NONE PROVEN")
    assert [p["m"] for p in e["per_m"]] == M_GRID


def test_one_unproven_m_makes_the_whole_entry_unproven():
    rec = _record("adassp")
    rec["plans"][1]["proven"] = False
    e = build_ledger(dataset="housing", records=[rec], privacy=PRIVACY.to_dict(), not_private=[])["methods"]["adassp"]
    assert e["private"] is False and e["guarantee"].startswith("NONE PROVEN")


def test_privacy_warnings_of_the_plans_are_collected():
    """paper calibration outside its proven range, run anyway (on_invalid "warn"): proven plans, loud warnings."""
    spec = Privacy(2.0, 1e-5, "paper", "warn")
    rec = _record("noisy_truncated_ols", spec, {**TUNING["noisy_truncated_ols"], "noise": "derived"})
    per_m = [p["warnings"] for p in rec["plans"]]
    assert per_m[0] and all(w == per_m[0] for w in per_m)  # the same warnings at every m
    e = build_ledger(dataset="housing", records=[rec], privacy=spec.to_dict(), not_private=[])
    assert e["on_invalid"] == "warn"
    entry = e["methods"]["noisy_truncated_ols"]
    assert entry["private"] is True and entry["guarantee"].startswith("(2.0, delta(n = m))-DP")
    assert entry["warnings"] == sorted(per_m[0])  # said once, not once per m
    assert all(w.startswith("PRIVACY WARNING") and "proven only for epsilon < 1" in w for w in entry["warnings"])
