import copy
import os
import sys
from pathlib import Path

from snakemake.utils import validate

# Jobs import dpcost from this checkout's src/ (exported to their processes too), so a run always executes the code
# it ships with, never an older installed copy.
_SRC = str(Path(workflow.basedir) / "src")
sys.path.insert(0, _SRC)
os.environ.update(
    PYTHONPATH=os.pathsep.join(p for p in (_SRC, os.getenv("PYTHONPATH")) if p)
)


def _fail(message):
    # One clear line and a non-zero exit; a traceback would bury the key the user has to fix.
    print(f"config error: {message}", file=sys.stderr)
    raise SystemExit(1)


# A `kind: table` block starts from table_defaults and housing's constants: a key it sets replaces the default's,
# method by method in tuning and search (merged before validation, so that the schema's defaults do not mask these).
TABLES = [
    k for k, v in config.items() if isinstance(v, dict) and v.get("kind") == "table"
]
_INHERITED = ("tuning", "search", "private_tuning", "attack")
for _ds in TABLES:
    _base = {
        k: config.get("housing", {})[k]
        for k in _INHERITED
        if k in config.get("housing", {})
    }
    _base = copy.deepcopy({**_base, **config.get("table_defaults", {})})
    _own = config[_ds]
    config[_ds] = {**_base, **_own}
    for _k in ("tuning", "search"):
        if isinstance(_own.get(_k), dict):
            config[_ds][_k] = {**_base.get(_k, {}), **_own[_k]}

try:
    validate(config, workflow.source_path("../schemas/config.schema.yaml"))
except Exception as exc:
    cause = exc.__cause__ or exc.__context__ or exc
    where = (
        ".".join(str(p) for p in getattr(cause, "absolute_path", [])) or "(top level)"
    )
    _fail(f"{where}: {getattr(cause, 'message', str(cause))}")

try:
    from dpcost.analysis.checks import check_setup
    from dpcost.analysis.datasets import ANALYSES
    from dpcost.analysis.datasets import get as analysis_of
    from dpcost.analysis.tuning import TuningSpec, searches_decoys
    from dpcost.errors import DPCostError
    from dpcost.estimators.peers import available as peers_available
    from dpcost.estimators.registry import methods_of
    from dpcost.scripting import privacy_spec
except ImportError as exc:
    _fail(f"a dependency is missing ({exc}); install them with: pip install -e .")

# The analyses of the Cost of Privacy papers (the m-grid machinery below) and the opt-in knowledge-transfer study on
# LIBSVM data (workflow/rules/libsvm.smk), both chosen in `datasets`.
LIBSVM = [ds for ds in config["datasets"] if ds in ("e2006", "rcv1")]
DATASETS = [ds for ds in config["datasets"] if ds not in LIBSVM]
for _ds in DATASETS:
    if _ds not in ANALYSES and _ds not in TABLES:
        _fail(
            f"datasets lists {_ds!r}, which is neither built in ({', '.join([*ANALYSES, 'e2006', 'rcv1'])}) nor a "
            f"config block with kind: table (docs/usage.md, 'Your own data')"
        )


def one_of(names):
    """A wildcard constraint matching exactly these names (nothing when there are none)."""
    return "|".join(names) or "(?!)"


for _ds in LIBSVM:
    if _ds not in config:
        _fail(
            f"datasets lists {_ds} but the config has no {_ds} block (see config/README.md)"
        )
    try:
        from dpcost.analysis.transfer import check_block

        check_block(_ds, config[_ds])
    except DPCostError as exc:
        _fail(str(exc))


if "housing" in DATASETS:
    # each source is a url to download or a local path, exactly one: said now, not when the download job runs
    from dpcost.data.housing import check_source

    for _k, _src in enumerate(config["housing"]["sources"]):
        try:
            check_source(_src, f"housing.sources.{_k}")
        except DPCostError as exc:
            _fail(str(exc))


for _ds in TABLES:
    # each source is checked now, not when the download job runs
    from dpcost.data.table import check_source as check_table_source

    for _k, _src in enumerate(config[_ds]["sources"]):
        try:
            check_table_source(_src, f"{_ds}.sources.{_k}")
        except DPCostError as exc:
            _fail(str(exc))


def calibration(dataset):
    return config[dataset].get("calibration", config["calibration"])


def privacy(dataset):
    return privacy_spec(
        config[dataset]["privacy"],
        calibration(dataset),
        config["on_invalid"],
        config.get("sampler", "exact"),
    )


# Peer libraries join an analysis's methods when installed (peers: auto), or must be there (always).
for _ds in DATASETS:
    _mode = config[_ds].get("peers", "never")
    _peers = {
        k: m.peer for k, m in methods_of(analysis_of(_ds).family).items() if m.peer
    }
    if _mode == "never" or not _peers:
        continue
    _avail = peers_available()
    _missing = sorted({lib for lib in _peers.values() if not _avail[lib]})
    if _mode == "always" and _missing:
        _fail(
            f"{_ds}.peers is 'always' but {_missing} is not usable; install: pip install -e '.[peers]'"
        )
    for _name, _lib in _peers.items():
        if _avail[_lib] and _name not in config[_ds]["methods"]:
            config[_ds]["methods"].append(_name)

METHODS = {ds: config[ds]["methods"] for ds in DATASETS}

# m_parts names analyses and methods that exist: a misspelt name would leave its job unsplit without a word. An
# analysis not run (not in datasets) or a method it does not run is allowed: the default config names both.
for _ds, _steps in config.get("m_parts", {}).items():
    if _ds not in ANALYSES and _ds not in TABLES:
        _fail(
            f"m_parts.{_ds}: no analysis of that name (built in: {', '.join(ANALYSES)}; or a kind: table block)"
        )
    _known = methods_of(analysis_of(_ds).family)
    for _step, _methods in _steps.items():
        for _name in _methods:
            if _name not in _known:
                _fail(
                    f"m_parts.{_ds}.{_step}.{_name}: {_ds} has no method {_name!r} (see {_ds}.methods)"
                )

# delta first, so that a formula that does not parse or leaves (0, 1) at some m names its key.
for _ds in DATASETS:
    try:
        for _m in config[_ds]["m"]:
            privacy(_ds).at(_m)
    except DPCostError as exc:
        _fail(f"{_ds}.privacy.delta: {exc}")

# The warnings check_setup returns (delta >= 1/n) are not printed here, at every parse (-n and --report included):
# the ledger job logs them once per run and the ledger records them. The checks run every private method once
# (0.5 s for the default config, most of it noisy SGD's import of dp-accounting): the main process runs them; a
# job a cluster executor spawns re-reads the same config and skips them (workflow.is_main_process), as do the
# benchmark's below.
try:
    for _ds in DATASETS if workflow.is_main_process else []:
        check_setup(
            analysis_of(_ds),
            analysis_of(_ds).block(config),
            methods=METHODS[_ds],
            privacy=privacy(_ds),
            m_grid=config[_ds]["m"],
        )
except DPCostError as exc:
    _fail(str(exc))


def estimate_params(dataset):
    """The plain arguments of an estimate job (the script passes them on to dpcost.scripting.estimate_job)."""
    return {
        "params": analysis_of(dataset).params_from(config[dataset]),
        "m": config[dataset]["m"],
        "reps": config["reps"],
        "seed": config["seed"],
        "privacy": privacy(dataset).to_dict(),
    }


def attack_params(dataset):
    """The plain arguments of a score-attack job (dpcost.scripting.attack_job): those of the estimate job, with the
    attack's repetitions (the first attack.reps of the error curve's) and its cap on candidates.
    """
    block = config[dataset]["attack"]
    return {
        **estimate_params(dataset),
        "reps": min(block["reps"], config["reps"]),
        "cap": block["max_candidates"],
    }


def data_inputs(wildcards):
    """The preprocessed data of a dataset, under the names its loader reads."""
    if wildcards.dataset == "housing" or wildcards.dataset in TABLES:
        return {
            "table": f"results/{wildcards.dataset}/data.parquet",
            "meta": f"results/{wildcards.dataset}/preprocessing.json",
        }
    if wildcards.dataset == "snp_logistic":
        return {
            "genotypes": "results/snp/genotypes.parquet",
            "meta": "results/snp_logistic/preprocessing.json",
        }
    return {
        "genotypes": "results/snp/genotypes.parquet",
        "meta": "results/snp/preprocessing.json",
    }


TABLE_SPEC_KEYS = (
    "response",
    "covariates",
    "categorical",
    "levels",
    "transforms",
    "y_scale",
    "test_fraction",
    "max_levels",
)


def table_spec(dataset):
    """The keys of a table's block that its preparation reads (dpcost.data.prepare.prepare)."""
    return {k: config[dataset][k] for k in TABLE_SPEC_KEYS if k in config[dataset]}


def tune_params(dataset, method):
    """The plain arguments of a tune job (dpcost.scripting.tune_job): only what the choice depends on."""
    block = config[dataset]
    return {
        "spec": TuningSpec.of(block, method).to_dict(),
        "params": analysis_of(dataset).params_from(block),
        "m": block["m"],
        "seed": config["seed"],
        "privacy": privacy(dataset).to_dict(),
    }


def m_parts(dataset, step, method):
    """The m grid of a tune or estimate job in the consecutive parts config m_parts asks for (one: not split), as
    even in length as they go."""
    grid = config[dataset]["m"]
    k = config.get("m_parts", {}).get(dataset, {}).get(step, {}).get(method, 1)
    q, r = divmod(len(grid), min(k, len(grid)))
    ends = [0]
    while ends[-1] < len(grid):
        ends.append(ends[-1] + q + (len(ends) <= r))
    return [grid[a:b] for a, b in zip(ends, ends[1:])]


def part_files(dataset, step, method, ext):
    """The files of a split job's parts (none when it is not split), merged by its tune or estimate job."""
    parts = m_parts(dataset, step, method)
    if len(parts) < 2:
        return []
    if step == "tune" and not searches_decoys(
        methods_of(analysis_of(dataset).family)[method],
        TuningSpec.of(config[dataset], method),
    ):
        return []
    return [
        f"results/{dataset}/parts/{step}_{method}.{k}.{ext}" for k in range(len(parts))
    ]


def final_outputs():
    files = ["results/config_used.yaml"]
    for ds in DATASETS:
        files += [
            f"results/{ds}/{name}"
            for name in (
                "errors.parquet",
                "summary.csv",
                "error_curves.png",
                "error_curves.pdf",
                "error_curves_all.png",
                "error_curves_all.pdf",
                "privacy_ledger.json",
                "attack.csv",
                "attack.png",
                "attack.pdf",
            )
        ]
        if analysis_of(ds).comparison:
            files.append(f"results/{ds}/comparison.csv")
        if config[ds].get("map"):
            files += [
                f"results/{ds}/{name}"
                for name in (
                    "privacy_map.csv",
                    "privacy_map_ratios.csv",
                    "epsilon_needed.csv",
                    "privacy_map.png",
                    "privacy_map.pdf",
                )
            ]
    for ds in LIBSVM:
        files += [
            f"results/{ds}/{name}"
            for name in (
                "preparation.json",
                "errors.parquet",
                "table.csv",
                "table.png",
                "table.pdf",
                "privacy_ledger.json",
                "resources.csv",
            )
        ]
    return files


# The simulation study: its spec checked at start-up (a bad experiment stops the run in one line), its jobs and
# outputs.
if "simulation" in config:
    try:
        from dpcost.simulation.experiments import SimulationSpec

        SIMULATION = SimulationSpec.from_config(config["simulation"])
    except DPCostError as exc:
        _fail(f"simulation: {exc}")
    SIM_JOBS = SIMULATION.jobs()
    SIM_FIGURES = sorted({e.figure for e in SIMULATION.experiments.values()})
else:
    SIMULATION, SIM_JOBS, SIM_FIGURES = None, [], []


def simulation_outputs():
    if SIMULATION is None:
        return []
    out = [
        f"results/simulation/{name}"
        for name in (
            "errors.parquet",
            "summary.csv",
            "rates.csv",
            "privacy_ledger.json",
        )
    ]
    return out + [
        f"results/simulation/fig{k}.{ext}"
        for k in SIM_FIGURES
        for ext in ("png", "pdf")
    ]


# The real-data benchmark (target `benchmark`): its data sets are table blocks (or housing), checked like analyses.
BENCHMARK = config.get("benchmark")
BENCHMARK_DATASETS = BENCHMARK["datasets"] if BENCHMARK else []
BENCHMARK_METHODS = BENCHMARK["methods"] if BENCHMARK else []
for _ds in BENCHMARK_DATASETS:
    if _ds != "housing" and _ds not in TABLES:
        _fail(
            f"benchmark.datasets lists {_ds!r}, which is not a config block with kind: table"
        )
    if not workflow.is_main_process:
        continue
    try:
        check_setup(
            analysis_of(_ds),
            analysis_of(_ds).block(config),
            methods=BENCHMARK_METHODS,
            privacy=privacy(_ds),
            m_grid=config[_ds]["m"],
        )
    except DPCostError as exc:
        _fail(f"benchmark: {exc}")


def per_dataset(value):
    """One value for the benchmark's figure caption: the benchmark data sets' common value, or "per data set"."""
    values = {str(value(ds)) for ds in BENCHMARK_DATASETS}
    return values.pop() if len(values) == 1 else "per data set"


def benchmark_outputs():
    if not BENCHMARK:
        return []
    names = (
        "errors.parquet",
        "summary.csv",
        "wins.csv",
        "benchmark.png",
        "benchmark.pdf",
    )
    return [f"results/benchmark/{name}" for name in names]
