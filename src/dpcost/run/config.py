"""The run's configuration, resolved once at start-up: every check no job should start without, and the facts the
workflow's rules read — which analyses run, their methods (peers included), privacy, m grids and how long jobs are
split, the simulation study and the real-data benchmark. The workflow (workflow/rules/common.smk) lays every
``kind: table`` block over ``table_defaults`` (:func:`with_defaults`), validates the result against its schema, and
calls :func:`resolve`; a bad value is one :class:`~dpcost.errors.ConfigError` whose message names the key.
Unit-tested without Snakemake (tests/unit/run/test_run_config.py)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..analysis import datasets
from ..analysis.checks import check_setup
from ..analysis.tuning import TuningSpec, looks_at_data, searches_decoys
from ..data import libsvm
from ..dp.privacy import Privacy
from ..errors import ConfigError, DPCostError
from ..estimators.peers import available as peers_available
from ..estimators.registry import methods_of
from . import targets
from .record import laid_over


def with_defaults(config: Mapping) -> dict:
    """A copy of ``config`` with every ``kind: table`` block (housing included) laid over ``table_defaults`` key by
    key at every depth, so ``privacy: {epsilon: 2}`` keeps the default δ and ``tuning: {noisy_gd: {T: 50}}`` the
    other constants. Before validation, so that the schema's own defaults do not mask these."""
    out = copy.deepcopy(dict(config))
    base = out.get("table_defaults", {})
    for name, block in out.items():
        if isinstance(block, dict) and block.get("kind") == "table":
            out[name] = laid_over(base, block)
    return out


def one_line(where: str, exc: Exception) -> ConfigError:
    """``exc`` (a DataError, PrivacyError, …) as a ConfigError prefixed by the key it concerns."""
    return ConfigError(f"{where}: {exc}" if where else str(exc))


@dataclass(frozen=True)
class RunConfig:
    """A resolved configuration (:func:`resolve`; :func:`dpcost.run.startup.start` adds the facts of the inference and
    targeted blocks). ``config`` is the validated mapping with the table defaults laid in; ``analyses`` the m-grid
    analyses the run makes (built in, or ``kind: table`` blocks), ``libsvm`` the knowledge-transfer studies,
    ``methods`` each analysis's methods with the peers it runs; ``inference``: the regression analyses whose intervals
    run, each with its methods that release them; ``targeted``: those whose targeted attacks run, each with its
    job's arguments; ``benchmark_inference``, ``benchmark_targeted``: the same of the benchmark's tables."""

    config: Mapping
    analyses: tuple[str, ...]
    tables: tuple[str, ...]
    libsvm: tuple[str, ...]
    methods: Mapping[str, tuple[str, ...]]
    simulation: object | None = None  # a SimulationStudy
    benchmark: Mapping | None = None
    inference: Mapping[str, list[str]] = field(default_factory=dict)
    targeted: Mapping[str, dict] = field(default_factory=dict)
    benchmark_inference: Mapping[str, list[str]] = field(default_factory=dict)
    benchmark_targeted: Mapping[str, dict] = field(default_factory=dict)

    def outputs(self, target: str = "all") -> list[str]:
        """The files a rule target of the workflow makes (:func:`dpcost.run.targets.outputs`)."""
        return targets.outputs(self, target)

    def analysis(self, name: str) -> datasets.Analysis:
        return datasets.get(name)

    def block(self, name: str) -> dict:
        """The analysis's config block, with the keys it reads from the analysis whose data it reuses."""
        return self.analysis(name).block(self.config)

    def calibration(self, name: str) -> str:
        return self.config[name].get("calibration", self.config["calibration"])

    def privacy(self, name: str) -> Privacy:
        """An analysis's privacy: every job of it reads this one (its ``to_dict()``)."""
        block = self.config[name]["privacy"]
        return Privacy(
            block["epsilon"],
            block["delta"],
            self.calibration(name),
            self.config["on_invalid"],
            sampler=self.config.get("sampler", "exact"),
        )

    def benchmark_privacy(self, name: str) -> Privacy:
        """A data set's privacy in the benchmark: the benchmark's δ (``benchmark.delta``, the same for every data set,
        housing's paper δ included), the data set's calibration; ε is each cell's, from ``benchmark.epsilon``."""
        return dataclasses.replace(self.privacy(name), delta=self.benchmark["delta"])

    def tuning_mode(self, name: str) -> str:
        return self.config[name].get("tuning_mode", "fixed")

    def params(self, name: str) -> dict:
        """The analysis parameters every method that takes them gets (e.g. the sparsity s)."""
        return self.analysis(name).params_from(self.config[name])

    def parts(self, name: str, step: str, method: str) -> list[list[int]]:
        """The m grid of a tune or estimate job in the consecutive parts ``m_parts`` asks for (one: not split), as
        even in length as they go."""
        grid = self.config[name]["m"]
        k = self.config.get("m_parts", {}).get(name, {}).get(step, {}).get(method, 1)
        q, r = divmod(len(grid), min(k, len(grid)))
        ends = [0]
        while ends[-1] < len(grid):
            ends.append(ends[-1] + q + (len(ends) <= r))
        return [grid[a:b] for a, b in zip(ends, ends[1:], strict=False)]

    def is_split(self, name: str, step: str, method: str) -> bool:
        """Whether the job runs as parts: more than one part, and for a tune job a decoy search to split."""
        if len(self.parts(name, step, method)) < 2:
            return False
        registry = methods_of(self.analysis(name).family)
        return step != "tune" or searches_decoys(registry[method], TuningSpec.of(self.config[name], method))

    def tunes(self, name: str, method: str) -> bool:
        """Whether the method has a tune job: its tuning looks at data (a decoy search or a private selection). The
        others' constants come from the config alone; the jobs that need them make their record themselves."""
        registry = methods_of(self.analysis(name).family)
        return looks_at_data(registry[method], TuningSpec.of(self.config[name], method))

    def tuning_spec(self, name: str, method: str) -> dict:
        """The method's tuning spec (:class:`~dpcost.analysis.tuning.TuningSpec`), from which a job makes the record
        of a method without a tune job."""
        return TuningSpec.of(self.config[name], method).to_dict()

    def data_of(self, name: str) -> str:
        """The data set whose download an analysis reads: its own, or that of the analysis whose data it reuses."""
        base = datasets.ANALYSES[name].base if name in datasets.ANALYSES else None
        return base[0] if base else name


def resolve(config: Mapping, *, run_checks: bool = True) -> RunConfig:
    """The resolved run of a validated ``config`` (:func:`with_defaults` applied). Checks, in this order: every
    dataset named exists; the LIBSVM studies' blocks; every table's sources; the peers an analysis must have; the
    names in ``m_parts``; δ at every m; then (``run_checks``: the main process of a run, not a job a cluster executor
    spawns) every private method once on a tiny input (:func:`~dpcost.analysis.checks.check_setup`), for the
    analyses and the benchmark. Raises a :class:`~dpcost.errors.DPCostError` (a ConfigError, or the estimator's own
    refusal) whose one line names the key."""
    tables = tuple(k for k, v in config.items() if isinstance(v, dict) and v.get("kind") == "table")
    studies = tuple(name for name in config["datasets"] if name in libsvm.DATASETS)
    analyses = tuple(name for name in config["datasets"] if name not in studies)
    _check_names(config, analyses, studies, tables)
    methods = {name: tuple(config[name]["methods"]) + _peers(name, config[name]) for name in analyses}
    _check_m_parts(config, methods, tables)
    run = RunConfig(config, analyses, tables, studies, methods)
    for name in analyses:  # δ first, so that a formula that does not parse or leaves (0, 1) names its key
        try:
            for m in config[name]["m"]:
                run.privacy(name).at(m)
        except DPCostError as exc:
            raise one_line(f"{name}.privacy.delta", exc) from None
    for name in analyses if run_checks else ():
        check_setup(
            run.analysis(name),
            run.block(name),
            methods=methods[name],
            privacy=run.privacy(name),
            m_grid=config[name]["m"],
        )
    run = RunConfig(config, analyses, tables, studies, methods, _simulation(config), config.get("benchmark"))
    _check_benchmark(run, config, tables, run_checks)
    return run


def _check_names(config: Mapping, analyses: tuple, studies: tuple, tables: tuple) -> None:
    """Every analysis named is built in or a table block; every LIBSVM study has its block; every table's reader and
    sources are well formed (before anything is read or downloaded)."""
    from ..data import table as table_data

    for name in analyses:
        if name not in datasets.ANALYSES and name not in tables:
            raise ConfigError(
                f"datasets lists {name!r}, which is neither built in "
                f"({', '.join([*datasets.ANALYSES, *libsvm.DATASETS])}) nor a config block with kind: "
                "table (docs/usage.md, 'Your own data')"
            )
    for name in studies:
        if name not in config:
            raise ConfigError(f"datasets lists {name} but the config has no {name} block (see config/README.md)")
        from ..analysis.transfer import check_block

        check_block(name, config[name])  # raises a DPCostError naming the key
    for name in tables:
        try:
            reader = table_data.reader_of(config[name].get("reader"))
        except DPCostError as exc:
            raise one_line(f"{name}.reader", exc) from None
        for k, src in enumerate(config[name]["sources"]):
            table_data.check_source(src, f"{name}.sources.{k}", reader)  # a DataError naming the source


def _check_m_parts(config: Mapping, methods: Mapping[str, tuple], tables: tuple) -> None:
    """``m_parts`` names analyses that exist and methods they have."""
    for name, steps in config.get("m_parts", {}).items():
        if name not in datasets.ANALYSES and name not in tables:
            raise ConfigError(
                f"m_parts.{name}: no analysis of that name (built in: {', '.join(datasets.ANALYSES)}; "
                "or a kind: table block)"
            )
        known = methods_of(datasets.get(name).family)
        for step, names in steps.items():
            for method in names:
                if method not in known:
                    raise ConfigError(
                        f"m_parts.{name}.{step}.{method}: {name} has no method {method!r} (see {name}.methods)"
                    )


def _check_benchmark(run: RunConfig, config: Mapping, tables: tuple, run_checks: bool) -> None:
    """The benchmark's tables are table blocks, its δ holds at their every m, and (``run_checks``) its methods run on
    a tiny input of each."""
    bench = config.get("benchmark")
    for name in bench["datasets"] if bench else ():
        if name not in tables:
            raise ConfigError(f"benchmark.datasets lists {name!r}, which is not a config block with kind: table")
        try:
            for m in config[name]["m"]:
                run.benchmark_privacy(name).at(m)
        except DPCostError as exc:
            raise one_line("benchmark.delta", exc) from None
        if run_checks:
            try:
                check_setup(
                    run.analysis(name),
                    run.block(name),
                    methods=bench["methods"],
                    privacy=run.benchmark_privacy(name),
                    m_grid=config[name]["m"],
                )
            except DPCostError as exc:
                raise one_line("benchmark", exc) from None


def _peers(name: str, block: Mapping) -> tuple[str, ...]:
    """The peer libraries' methods that join an analysis (peers: auto when installed, always: must be there)."""
    mode = block.get("peers", "never")
    peers = {k: m.peer for k, m in methods_of(datasets.get(name).family).items() if m.peer}
    if mode == "never" or not peers:
        return ()
    usable = peers_available()
    missing = sorted({lib for lib in peers.values() if not usable[lib]})
    if mode == "always" and missing:
        raise ConfigError(f"{name}.peers is 'always' but {missing} is not usable; install: pip install -e '.[peers]'")
    return tuple(k for k, lib in peers.items() if usable[lib] and k not in block["methods"])


def _simulation(config: Mapping):
    if "simulation" not in config:
        return None
    from ..simulation.experiments import SimulationStudy

    try:
        return SimulationStudy.from_config(config["simulation"])
    except DPCostError as exc:
        raise one_line("simulation", exc) from None
