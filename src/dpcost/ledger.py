"""The privacy ledger of a results table: for every method and sample size, what it claims and what that rests on."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from .experiment import Method
from .privacy import resolve_delta


def build_ledger(
    *,
    dataset: str,
    methods: dict[str, Method],
    tuning: dict,
    m_grid: Sequence[int],
    epsilon: float,
    delta,
    calibration: str,
    on_invalid: str,
    not_private: Sequence[str],
    extra_params: dict | None = None,
) -> dict:
    """A JSON-ready ledger. Plans come from each method's own plan function, the one its estimator calls.

    ``not_private`` lists the steps outside any guarantee (preprocessing with full-sample statistics, data-derived
    choices); ``extra_params`` are parameters every method of the dataset receives (e.g. the sparsity s).
    """
    entries = {}
    for name, spec in methods.items():
        params = {**(extra_params or {}), **tuning.get(name, {})}
        if not spec.private:
            entries[name] = {"label": spec.label, "private": False, "guarantee": "none (non-private baseline)"}
            continue
        per_m, outside = [], set()
        for m in m_grid:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                plan = spec.plan(
                    m,
                    epsilon=epsilon,
                    delta=resolve_delta(delta, m),
                    calibration=calibration,
                    on_invalid=on_invalid,
                    **params,
                )
            outside.update(str(w.message) for w in caught)
            d = plan.to_dict()
            per_m.append({"m": m, "epsilon": d["epsilon"], "delta": d["delta"], "releases": d["releases"]})
        guarantee = f"({epsilon}, delta(n = m))-DP, neighbours: {plan.neighbours}"
        if params.get("noise") == "printed":
            guarantee = "NONE PROVEN: the paper's printed noise variance is not a sensitivity bound (noise: printed)"
        entries[name] = {
            "label": spec.label,
            "private": params.get("noise") != "printed",
            "guarantee": guarantee,
            "calibration": calibration,
            "composition": plan.composition,
            "assumption (enforced in code)": plan.assumption,
            "warnings": sorted(outside),
            "per_m": per_m,
        }
    return {
        "dataset": dataset,
        "neighbours": "replace one record",
        "epsilon": epsilon,
        "delta": delta,
        "delta_is_evaluated_at": "n = m, the number of records the estimator sees",
        "calibration": calibration,
        "on_invalid": on_invalid,
        "not_private": list(not_private),
        "methods": entries,
    }
