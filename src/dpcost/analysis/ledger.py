"""The privacy ledger of a results table, built from the plans the estimate jobs wrote beside their tables.

The ledger has three levels:

* the header: the dataset's privacy specification (ε, δ or its formula in n, calibration, neighbours, sampler) and
  what is not private (preprocessing, non-private baselines);
* one entry per method (:func:`method_entry`): its guarantee, calibration, composition, enforced assumption,
  tuning and plan warnings, and per m its (ε, δ(m)), releases and parameters, with every m where δ(m) ≥ 1/m flagged;
* the table (:func:`table_entry`): the methods of one table are separate analyses of the same records, and every
  number they publish is a release, so publishing them together composes. Per m: basic composition (Σε, Σδ) of the
  private methods, and where the plans allow a tighter ε from composing privacy-loss distributions (PLDs); the
  methods that void the composed guarantee (unproven plans, float-unsafe noise) are named.

Everything the ledger composes is read from the plans' typed fields (:class:`~dpcost.dp.plan.Release`,
:class:`~dpcost.dp.plan.PrivacyPlan`): a plan's ``whole_mechanism`` (and why, or why not), each release's ``kind``,
``norm``, ``rounding`` and ``noise``. Their texts are shown, never read.

Floating-point noise: a method with a release whose noise is drawn by floating-point samplers (``noise: float``,
described by :func:`~dpcost.dp.samplers.describe_float`: a posterior sample, a data-dependent sketch, noise inside
an argmin, a peer library's samplers) has no proof of privacy on a computer. It is entered as NOT PROVEN (floating
point) and left out of the table's composition, like a non-private baseline (``float_noise``, with the reason): its
nominal (ε, δ) holds in exact arithmetic only, so composing it would state a guarantee nobody has proven, and it
does not void the others'. The global ``sampler: float-unsafe`` switch (releases of ``noise: float-unsafe``) still
voids the whole table.
"""

from __future__ import annotations

import collections
import math
import numbers
from collections.abc import Mapping, Sequence

from ..dp.accountant import PLD_INTERVAL, composed_epsilon
from ..dp.privacy import NEIGHBOUR_RELATIONS
from ..dp.samplers import FLOAT_NOISE
from .summaries import END_TO_END

# the additive releases the ledger composes from their typed fields: kind -> the norms their sensitivity may be in
# ("each": every coordinate its own release of that sensitivity, counted in count)
_ADDITIVE = {"gaussian": ("l2",), "laplace": ("l1", "each")}
_TYPED = ("whole_mechanism", "whole_mechanism_why")  # a plans file written before plans typed their releases lacks them


def _delta_warning(ms: Sequence[int], deltas: Sequence[float]) -> str:
    where = ", ".join(f"m = {m} (delta = {d:.3g})" for m, d in zip(ms, deltas, strict=True))
    return (
        f"PRIVACY WARNING: delta >= 1/m at {where}; a mechanism that publishes one random record in the clear "
        "satisfies (0, 1/m)-DP, so a delta this large permits that kind of failure"
    )


def method_entry(record: dict) -> dict:
    """One method's ledger entry from its plans file (as :func:`dpcost.jobs.estimate.estimate` writes it).

    Private methods: ``per_m`` holds every m's (ε, δ(m)), releases and parameters and ``delta_ge_1_over_m`` (δ(m) ≥
    1/m: a δ that large allows releasing a record outright); ``delta_warning`` names all such m (None if none).
    A method with any unproven plan is entered with ``private: False`` and a guarantee saying NONE PROVEN; one with
    floating-point noise (:func:`float_noise_reason`) with ``private: False`` and a guarantee saying NOT PROVEN
    (floating point), why, and what holds in exact arithmetic.
    """
    if not record["private"]:
        return {"label": record["label"], "private": False, "guarantee": "none (non-private baseline)"}
    plans = _typed(record)
    last = plans[-1]
    privacy = record["privacy"]
    proven = all(p["proven"] for p in plans)
    guarantee = f"({privacy['epsilon']}, delta(n = m))-DP, neighbours: {last['neighbours']}"
    floating = sorted({why for p in plans if (why := float_noise_reason(p))})
    if not proven:
        guarantee = (
            "NONE PROVEN: the calibration as printed has a gap (see composition and warnings); kept for reproduction"
        )
    elif floating:
        guarantee = f"{'; '.join(floating)}. In exact arithmetic: {guarantee}"
    large = [p for p in plans if p["delta"] >= 1 / p["m"]]
    return {
        "label": record["label"],
        "private": proven and not floating,
        "guarantee": guarantee,
        "calibration": privacy["calibration"],
        "composition": last["composition"],
        "assumption (enforced in code)": last["assumption"],
        "tuning": record["tuning"],
        "warnings": sorted({w for p in plans for w in p["warnings"]}),
        "delta_warning": _delta_warning([p["m"] for p in large], [p["delta"] for p in large]) if large else None,
        "per_m": [
            {
                "m": p["m"],
                "epsilon": p["epsilon"],
                "delta": p["delta"],
                "delta_ge_1_over_m": p["delta"] >= 1 / p["m"],
                "releases": p["releases"],
                "parameters": p["parameters"],
            }
            for p in plans
        ],
    }


# ---------------------------------------------------------------------------------------------------------------
# composition over the methods of a table
# ---------------------------------------------------------------------------------------------------------------


def _positive(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def _typed(record: dict) -> list[dict]:
    """The plans of a record, refused if they do not say how they compose (a plans file from before the plans typed
    their releases: its estimate job must be rerun)."""
    for p in record["plans"]:
        if any(k not in p for k in _TYPED) or any("kind" not in r for r in p["releases"]):
            raise ValueError(
                f"the plans of {record['method']} do not say how they compose (no whole_mechanism or "
                "release kinds): written by an older version, rerun its estimate job"
            )
    return record["plans"]


def release_terms(plan: dict) -> tuple[float, dict[float, int]] | str:
    """The privacy loss of a plan's releases, or why it cannot be read from them.

    Returns (μ², {ε₀: count}), Δ the sensitivity plus what the noise grid's rounding adds to it (the release's
    ``rounding``). The Gaussian releases together are μ-GDP with μ² = Σ count·(Δ/σ)² (Dong, Roth & Su 2022,
    Cor. 3.3: exact for Gaussian mechanisms, adaptively composed or not). Each Laplace release is (Δ/b)-DP,
    ε₀ = Δ/b, for the continuous and the discrete (grid) Laplace alike. A string says why not: the plan's releases
    are not its whole mechanism (its ``whole_mechanism_why``), or a release is not additive Gaussian (ℓ2) or Laplace
    (ℓ1, or each coordinate its own release) noise with a positive sensitivity, noise scale and count.
    """
    if not plan["whole_mechanism"]:
        return plan["whole_mechanism_why"]
    if not plan["releases"]:
        return "no releases recorded"
    mu2, pure = 0.0, collections.Counter()
    for r in plan["releases"]:
        kind, sens, scale, count = r["kind"], r["sensitivity"], r["noise_scale"], r["count"]
        if r["norm"] not in _ADDITIVE.get(kind, ()):
            return (
                f"release {r['mechanism']!r} ({kind}, {r['norm']}) is not additive Gaussian (l2) or Laplace (l1) noise"
            )
        if not (_positive(sens) and _positive(scale) and isinstance(count, numbers.Integral) and count >= 1):
            return f"release {r['mechanism']!r} does not record a sensitivity, noise scale and count"
        sens += r["rounding"]  # the grid's rounding is part of the shift between neighbours
        if kind == "gaussian":
            mu2 += count * (sens / scale) ** 2
        else:
            pure[sens / scale] += int(count)
    return mu2, dict(pure)


def releases_epsilon(mu2: float, pure: Mapping[float, int], delta: float) -> tuple[float, float]:
    """ε of one method's releases at its own δ, and the numerical tolerance of that ε. Laplace releases alone: the sum
    of their ε₀ (exact pure DP), or their PLD at δ > 0 if that is smaller."""
    total_pure = sum(e * c for e, c in pure.items())
    if mu2 == 0 and delta <= 0:
        return total_pure, 1e-9 * max(total_pure, 1.0)
    eps, exact = composed_epsilon(mu2, {(e, 0.0): c for e, c in pure.items()}, delta)
    if exact:
        return eps, 1e-9 * max(eps, 1.0)
    if mu2 == 0 and total_pure <= eps:
        return total_pure, 1e-9 * max(total_pure, 1.0)
    return eps, PLD_INTERVAL * (1 + sum(pure.values()))


def void_reason(plan: dict) -> str | None:
    """Why publishing this plan's output voids any composed guarantee: an unproven plan, or noise drawn by numpy's
    float samplers (:mod:`dpcost.dp.samplers`: not private on a computer). None if neither."""
    if not plan["proven"]:
        return "no proven guarantee (proven: false)"
    if any(r["noise"] == "float-unsafe" for r in plan["releases"]):
        return "noise drawn by the float-unsafe sampler: not private on a computer"
    return None


def float_noise_reason(plan: dict) -> str | None:
    """Why this plan's output is NOT PROVEN (floating point): its releases of ``noise: float`` (drawn by
    floating-point samplers). None if there are none."""
    floating = [r["mechanism"] for r in plan["releases"] if r["noise"] == "float"]
    if not floating:
        return None
    return f"{FLOAT_NOISE}: the noise of {'; '.join(floating)} is drawn by floating-point samplers (see its sampler)"


def _tight(m: int, plans: dict[str, dict], terms: dict, basic_epsilon: float) -> tuple[dict | None, str | None]:
    """The PLD composition of one m's methods (None if there is none), and a note on it (None if nothing to say)."""
    exact = [k for k, t in terms.items() if not isinstance(t, str)]
    as_stated = sorted(k for k, t in terms.items() if isinstance(t, str))
    if not exact:
        return None, "only basic composition: no method's releases can be composed exactly (see as_stated)"
    delta = max(plans[k]["delta"] for k in exact) + sum(plans[k]["delta"] for k in as_stated)
    if not 0 < delta < 1:
        return None, f"only basic composition: the delta to evaluate at, {delta:.3g}, is not in (0, 1)"
    pairs = collections.Counter()
    for k in exact:
        pairs.update({(e, 0.0): c for e, c in terms[k][1].items()})
    pairs.update((plans[k]["epsilon"], plans[k]["delta"]) for k in as_stated)
    eps, is_exact = composed_epsilon(sum(terms[k][0] for k in exact), pairs, delta)
    if not math.isfinite(eps):
        return None, f"only basic composition: the composed epsilon at delta = {delta:.3g} is not finite"
    how = (
        "exact: the Gaussian releases compose to one mu-GDP mechanism"
        if is_exact
        else f"PLD composition (dp-accounting, pessimistic grid {PLD_INTERVAL:g})"
    )
    tight = {
        "epsilon": eps,
        "delta": delta,
        "delta_ge_1_over_m": delta >= 1 / m,
        "accounting": how,
        "from_releases": exact,
        "at_stated_epsilon_delta": as_stated,
    }
    if eps >= basic_epsilon:
        return tight, "the PLD epsilon is not below basic composition's here (it holds at a smaller delta)"
    return tight, None


def _table_m(m: int, plans: dict[str, dict], missing: list[str]) -> tuple[dict, dict[str, str]]:
    """The table-level entry at one m, and why each method entered at its stated (ε, δ)."""
    basic_e = sum(p["epsilon"] for p in plans.values())
    basic_d = sum(p["delta"] for p in plans.values())
    terms = {k: release_terms(p) for k, p in plans.items()}
    warnings = []
    flagged = [k for k, p in plans.items() if p["delta"] >= 1 / m]
    if flagged:
        warnings.append(f"PRIVACY WARNING: delta >= 1/m = {1 / m:.3g} for {', '.join(flagged)}")
    if basic_d >= 1:
        warnings.append(f"basic composition is vacuous: the deltas sum to {basic_d:.3g} >= 1")
    elif basic_d >= 1 / m and not flagged:
        warnings.append(f"PRIVACY WARNING: the composed delta {basic_d:.3g} is >= 1/m = {1 / m:.3g}")
    # the releases of a method composed from them must not spend more than its plan says it does
    for k, t in terms.items():
        if isinstance(t, str):
            continue
        own, tol = releases_epsilon(*t, plans[k]["delta"])
        if own > plans[k]["epsilon"] + tol:
            warnings.append(
                f"PRIVACY WARNING: the releases of {k} compose to epsilon = {own:.6g} at its delta = "
                f"{plans[k]['delta']:.3g}, more than its stated epsilon = {plans[k]['epsilon']}"
            )
    tight, note = _tight(m, plans, terms, basic_e)
    entry = {
        "m": m,
        "methods": sorted(plans),
        "not_run": missing,
        "void": sorted(k for k, p in plans.items() if void_reason(p)),
        "basic": {"epsilon": basic_e, "delta": basic_d, "delta_ge_1_over_m": basic_d >= 1 / m},
        "tight": tight,
        "note": note,
        "delta_ge_1_over_m": flagged,
        "warnings": warnings,
    }
    return entry, {k: t for k, t in terms.items() if isinstance(t, str)}


def table_entry(records: Sequence[dict]) -> dict:
    """What publishing every private method of the table together guarantees, per m.

    The methods are separate analyses of the same records: each released number is a release and releases on the
    same data compose, so the table as a whole is only as private as their composition.

    * ``basic``: (Σ ε_i, Σ δ_i) over the private methods' plans at m (each (ε_i, δ_i)-DP as stated).
    * ``tight``: an (ε, δ) at δ = max δ_i over the methods composed from their releases + Σ δ_j over the others.
      Methods whose plans say their releases are the whole mechanism (``whole_mechanism``) and whose releases are
      all Gaussian (ℓ2) or Laplace (ℓ1) with sensitivity, noise scale and count enter through those releases (the
      Gaussians exactly, as one μ-GDP mechanism; each Laplace as (Δ/b, 0)); the others (``at_stated_epsilon_delta``,
      reasons in ``as_stated``: the plan's ``whole_mechanism_why``, or what its releases lack) as worst-case
      (ε_j, δ_j)-DP mechanisms; composed by dp-accounting's PLD, or exactly when there are only Gaussians. Null, with
      a ``note`` why, when no method can be composed from its releases.
    * ``void``: the methods whose plan is unproven (or whose noise is drawn by the float-unsafe sampler), with the
      reason: publishing them voids the composed guarantee (the numbers count them at their nominal (ε, δ)).
    * ``not_included``: the non-private baselines.
    * ``float_noise``: the methods with floating-point noise (:func:`float_noise_reason`), with the reason: NOT
      PROVEN (floating point), left out of ``basic`` and ``tight`` (their outputs are not covered by the composed
      guarantee) without voiding it. A method whose plan also voids (unproven) stays in ``void`` instead.
    * per m, ``delta_ge_1_over_m`` names the methods with δ(m) ≥ 1/m; ``warnings`` say so, flag a composed δ ≥ 1/m,
      and any method whose releases compose to more than its stated ε.
    """
    baseline = "not private (non-private baseline): no guarantee, nothing to compose"
    not_included = {r["method"]: baseline for r in records if not r["private"]}
    for r in records:
        if r["private"]:
            _typed(r)
    float_noise = {}
    for r in records:
        if r["private"] and not any(void_reason(p) for p in r["plans"]):
            if reasons := sorted({why for p in r["plans"] if (why := float_noise_reason(p))}):
                float_noise[r["method"]] = "; ".join(reasons) + ": left out of the composed guarantee"
    private = [r for r in records if r["private"] and r["method"] not in float_noise]
    by_m: dict[int, dict[str, dict]] = collections.defaultdict(dict)
    for r in private:
        for p in r["plans"]:
            by_m[p["m"]][r["method"]] = p
    names = [r["method"] for r in private]
    per_m, as_stated = [], {}
    for m in sorted(by_m):
        entry, reasons = _table_m(m, by_m[m], [k for k in names if k not in by_m[m]])
        per_m.append(entry)
        for k, why in reasons.items():
            as_stated.setdefault(k, why)
    void = {}
    for r in private:
        reasons = sorted({why for p in r["plans"] if (why := void_reason(p))})
        if reasons:
            void[r["method"]] = "; ".join(reasons)
    if not private:
        guarantee = "no private method with a proven guarantee: nothing is composed"
    elif void:
        guarantee = (
            f"VOID: publishing {', '.join(void)} with the others voids the composed guarantee (see void); the numbers "
            f"count {'it' if len(void) == 1 else 'them'} at the nominal epsilon and delta"
        )
    else:
        guarantee = (
            "all private outputs published together are (basic.epsilon, basic.delta)-DP and, where given, "
            "(tight.epsilon, tight.delta)-DP at each m, delta evaluated at n = m"
        )
    if float_noise:
        guarantee += f"; {', '.join(float_noise)}: {FLOAT_NOISE}, not covered (see float_noise)"
    return {
        "what": "the methods of this table are separate analyses of the same records: publishing all their outputs "
        "composes their releases",
        "methods": names,
        "not_included": not_included,
        "float_noise": float_noise,
        "void": void,
        "guarantee": guarantee,
        "accounting": "basic: sum of epsilons and deltas; tight: privacy-loss distributions composed at delta = the "
        "largest delta of the methods composed from their releases + the deltas of those at their stated "
        "(epsilon, delta)",
        "as_stated": as_stated,
        "per_m": per_m,
    }


def build_ledger(
    *,
    dataset: str,
    records: Sequence[dict],
    privacy: dict,
    not_private: Sequence[str],
    notes: Sequence[str] = (),
    d_public: bool = True,
) -> dict:
    """A JSON-ready ledger: the dataset's privacy specification, what is not private, one entry per method
    (:func:`method_entry`) and the table-level composition of all private methods (:func:`table_entry`).

    ``records`` are the plans files of the estimate jobs, ``privacy`` the specification they ran under (ε, δ or its
    formula, calibration, on_invalid, neighbours, sampler), ``notes`` start-up warnings such as δ ≥ 1/n. ``tuning``
    gives every private method's tuning mode and what the choice looked at; the choices outside the budget (fixed
    and decoy tuning) are added to ``not_private``. ``end_to_end`` names the methods private from end to end: a
    proven entry whose constants looked at no data (tuning none or private) — none when ``d_public`` is False (a
    table whose categorical levels, and so d, were read from it: :func:`dpcost.data.prepare.preprocessing_notes`).
    """
    tuning = {  # every private method's mode and what it looked at (a plans file written by the tune step records them)
        r["method"]: {"mode": r["tuning"]["mode"], "looked_at": r["tuning"]["looked_at"]}
        for r in records
        if r["private"] and "mode" in (r.get("tuning") or {})
    }
    by_choice = collections.defaultdict(list)
    for name, t in tuning.items():
        if t["mode"] not in END_TO_END:  # none: no constant looked at data; private: paid in the budget
            by_choice[(t["mode"], t["looked_at"])].append(name)
        elif t["mode"] == "none" and not d_public:
            t["looked_at"] += "; and d, which was read from the data (NOT PRIVATE)"
    tuning_notes = [
        f"NOT PRIVATE: the constants of {', '.join(sorted(names))} were chosen by {mode} tuning, which looked at {what}"
        for (mode, what), names in sorted(by_choice.items())
    ]
    methods = {r["method"]: method_entry(r) for r in records}
    end_to_end = sorted(k for k, t in tuning.items() if d_public and t["mode"] in END_TO_END and methods[k]["private"])
    return {
        "dataset": dataset,
        "neighbours": NEIGHBOUR_RELATIONS[privacy["neighbours"]],
        "epsilon": privacy["epsilon"],
        "delta": privacy["delta"],
        "delta_is_evaluated_at": "n = m, the number of records the estimator sees",
        "calibration": privacy["calibration"],
        "on_invalid": privacy["on_invalid"],
        "sampler": privacy.get("sampler"),
        "not_private": [*not_private, *tuning_notes],
        "tuning": tuning,
        "notes": list(notes),
        "end_to_end": end_to_end,
        "methods": methods,
        "table": table_entry(records),
    }
