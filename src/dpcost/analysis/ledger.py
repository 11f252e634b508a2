"""The privacy ledger of a results table, built from the plans the estimate jobs wrote beside their tables."""

from __future__ import annotations

from collections.abc import Sequence

from ..dp.spec import NEIGHBOUR_RELATIONS


def method_entry(record: dict) -> dict:
    """One method's ledger entry from its plans file (as :func:`dpcost.scripting.estimate_job` writes it)."""
    if not record["private"]:
        return {"label": record["label"], "private": False, "guarantee": "none (non-private baseline)"}
    plans = record["plans"]
    last = plans[-1]
    privacy = record["privacy"]
    proven = all(p["proven"] for p in plans)
    guarantee = f"({privacy['epsilon']}, delta(n = m))-DP, neighbours: {last['neighbours']}"
    if not proven:
        guarantee = (
            "NONE PROVEN: the calibration as printed has a gap (see composition and warnings); kept for reproduction"
        )
    return {
        "label": record["label"],
        "private": proven,
        "guarantee": guarantee,
        "calibration": privacy["calibration"],
        "composition": last["composition"],
        "assumption (enforced in code)": last["assumption"],
        "tuning": record["tuning"],
        "warnings": sorted({w for p in plans for w in p["warnings"]}),
        "per_m": [
            {
                "m": p["m"],
                "epsilon": p["epsilon"],
                "delta": p["delta"],
                "releases": p["releases"],
                "parameters": p["parameters"],
            }
            for p in plans
        ],
    }


def build_ledger(
    *, dataset: str, records: Sequence[dict], privacy: dict, not_private: Sequence[str], notes: Sequence[str] = ()
) -> dict:
    """A JSON-ready ledger: the dataset's privacy specification, what is not private, and one entry per method.

    ``records`` are the plans files of the estimate jobs, ``privacy`` the specification they ran under (ε, δ or its
    formula, calibration, on_invalid, neighbours), ``notes`` start-up warnings such as δ ≥ 1/n.
    """
    return {
        "dataset": dataset,
        "neighbours": NEIGHBOUR_RELATIONS[privacy["neighbours"]],
        "epsilon": privacy["epsilon"],
        "delta": privacy["delta"],
        "delta_is_evaluated_at": "n = m, the number of records the estimator sees",
        "calibration": privacy["calibration"],
        "on_invalid": privacy["on_invalid"],
        "not_private": list(not_private),
        "notes": list(notes),
        "methods": {r["method"]: method_entry(r) for r in records},
    }
