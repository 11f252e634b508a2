"""How much work a run asks for, estimated before any job starts, and the warning when it is hours.

The model counts rows fitted: a repetition of a method at subsample size m costs about ``m x COST[method]`` seconds
of CPU (the fits here are linear in m; the per-row cost grows slowly with d), and every job about :data:`STARTUP`
seconds to start. Per regression analysis and method:

* estimate: ``reps x sum(m)`` rows;
* the score attack, scored in the estimate job as it releases: ``attack.reps x sum(m)`` rows of OLS's cost (its
  candidates' scores and reference fit);
* private intervals (methods with a procedure, when ``inference`` is on): as many as the estimate;
* a decoy search (``tuning_mode: decoy``, a method with a ``search``): twice the estimate (measured on housing);
* the privacy map (its methods): ``map.reps x sum(map.m) x len(map.epsilon)``;
* targeted attacks (their methods): ``2 x (shadows + test_releases) x (k_top + k_random)`` fits at each of their m
  (a quarter of that for a method whose releases come from clipped sums);
* the benchmark: ``benchmark.reps x len(benchmark.epsilon)`` fits per method at each table's m, as many again for
  its intervals.
SNP, the simulation and LIBSVM studies add their jobs' start-up only (their jobs take seconds). Measured against runs
on 2 cores (docs/performance.md, "The run's work, estimated"), the estimate is within a factor of 2: it is a warning
threshold, not a schedule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from ..analysis import intervals
from ..analysis.targeted import from_sums
from ..analysis.targeted import options as targeted_options
from ..analysis.tuning import TuningSpec, looks_at_data, searches_decoys
from ..estimators.registry import METHODS, methods_of
from .targets import asked

# CPU seconds per row and repetition of one fit: each method's registry entry (Method.cost, where it was measured),
# viewed here by method name
COST: Mapping[str, float] = MappingProxyType({k: m.cost for k, m in METHODS.items() if m.cost is not None})
# A targeted attack's release from sums (OLS's; analysis.targeted.from_sums: the SSP family, noisy GD)
# costs about a quarter of a fit of its method: on flights (m = 10,000 and 300,000, the default block) each of those
# five methods' targeted jobs took 38-45 s for 2,400 releases at each m, where COST counts 150-220 s.
SUMS_SHADOW = 0.25
DEFAULT_COST = 1.0e-6  # a method not measured (the peers, the SNP and LIBSVM methods): the costlier middle
STARTUP = 1.1  # CPU seconds to start a job (Python, the package; docs/performance.md)
LIMIT = 3600.0  # a run estimated to take longer on the given cores than this is warned about


@dataclass
class Work:
    """CPU seconds by step, and the number of jobs."""

    seconds: dict[str, float] = field(default_factory=dict)
    jobs: int = 0

    def add(self, step: str, rows: float, method: str, jobs: int = 1) -> None:
        self.seconds[step] = self.seconds.get(step, 0.0) + rows * COST.get(method, DEFAULT_COST)
        self.jobs += jobs

    @property
    def cpu(self) -> float:
        return sum(self.seconds.values()) + STARTUP * self.jobs

    def wall(self, cores: int) -> float:
        return self.cpu / max(int(cores), 1)


def regression_work(block: Mapping, methods: Sequence[str], *, family: str, reps: int, work: Work) -> None:
    """Add the work of one regression analysis (its config ``block``, run with ``methods``) to ``work``."""
    grid = list(block["m"])
    rows = reps * sum(grid)
    registry = methods_of(family)
    private = {k: m.private for k, m in registry.items()}
    attack_reps = min(block.get("attack", {}).get("reps", reps), reps)
    with_intervals = set(intervals.runs(block.get("inference"), methods))
    mapped = set((block.get("map") or {}).get("methods") or ())
    target = block.get("targeted") or {}
    attacked = targeted_options(target, methods, private, grid) if target.get("enabled") else None
    for k in methods:
        spec = TuningSpec.of(block, k)
        work.add("estimate", rows, k, jobs=1 + looks_at_data(registry[k], spec))  # and its tune job, if it searches
        work.add("score attack", attack_reps * sum(grid), "ols", jobs=0)  # in the estimate job
        if k in with_intervals:
            work.add("intervals", rows, k)
        if searches_decoys(registry[k], spec):
            work.add("tuning", 2 * rows, k, jobs=0)
        if k in mapped:
            grid_map = block["map"]
            work.add("map", grid_map["reps"] * sum(grid_map["m"]) * len(grid_map["epsilon"]), k)
        if attacked and k in attacked["methods"]:
            fits = 2 * (attacked["shadows"] + attacked["test_releases"]) * (attacked["k_top"] + attacked["k_random"])
            # OLS's and a sums method's releases come from (clipped) sums of each subsample, not refits
            cheaper = SUMS_SHADOW if not private.get(k) or from_sums(registry[k]) else 1.0
            work.add("targeted attacks", cheaper * fits * sum(attacked["targeted_m"]), k)
    work.jobs += 10  # the analysis's aggregate, figures, ledger, report pages


def benchmark_work(config: Mapping, benchmark: Mapping, m_of: Mapping[str, int], work: Work) -> None:
    """Add the benchmark's work: every method at each table's m (``m_of``), every ε, ``benchmark.reps`` times."""
    per_cell = benchmark["reps"] * len(benchmark["epsilon"])
    for name, m in m_of.items():
        with_intervals = set(intervals.runs(config[name].get("inference"), benchmark["methods"]))
        for k in benchmark["methods"]:
            work.add("benchmark", per_cell * m, k)
            if k in with_intervals:
                work.add("benchmark intervals", per_cell * m, k)


def describe(work: Work, cores: int) -> str:
    """One line: the estimated wall time on ``cores`` and the steps that take most of it."""
    from ..analysis.progress import duration

    steps = sorted(work.seconds.items(), key=lambda kv: -kv[1])
    top = ", ".join(f"{s} {v / work.cpu:.0%}" for s, v in steps[:3] if v > 0)
    return (
        f"about {duration(work.wall(cores))} on {cores} core{'s' * (cores != 1)} ({work.jobs} jobs, "
        f"{duration(work.cpu)} of CPU{'; ' + top if top else ''})"
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


def of_run(run, targets: Sequence[str]) -> Work:
    """The estimated work of a run of ``targets`` under the resolved configuration ``run``
    (:class:`~dpcost.run.config.RunConfig`): every regression analysis they ask for, the benchmark at each table's
    largest m (an upper bound: its m is the largest the training rows serve), and the start-up of the other
    analyses' jobs."""
    own, benched, simulation = asked(run, targets)
    work = Work()
    for name in own:
        family = run.analysis(name).family if name in run.analyses else None
        if family == "regression":
            regression_work(run.config[name], run.methods[name], family=family, reps=run.config["reps"], work=work)
        else:
            work.jobs += 2 * len(run.methods.get(name, ())) + 10  # estimate (its attack in it), map; fixed tuning
    if benched:
        benchmark_work(run.config, run.benchmark, {n: max(run.config[n]["m"]) for n in benched}, work)
        work.jobs += len(benched) * len(run.benchmark["methods"]) + 10
    if simulation and run.simulation is not None:
        work.jobs += len(run.simulation.jobs()) + 5
    return work
