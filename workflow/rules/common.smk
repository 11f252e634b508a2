import os
import sys
import time
from pathlib import Path

from snakemake.utils import validate

# Jobs import dpcost from this checkout's src/ (exported to their processes too), so a run always executes the code
# it ships with, never an older installed copy; this file's folder, not the main Snakefile's, so that the workflow
# used as a module from another directory finds it too (a remote module has none: the installed package serves).
# workflow/rules/, if on this machine
_HERE = getattr(workflow.current_basedir, "path", None)
_SRC = Path(_HERE).parents[1] / "src" if isinstance(_HERE, str) else None
if _SRC is not None and _SRC.is_dir():
    sys.path.insert(0, str(_SRC))
    os.environ.update(
        PYTHONPATH=os.pathsep.join(p for p in (str(_SRC), os.getenv("PYTHONPATH")) if p)
    )


_STARTED = time.time()  # a failed run's closing lines read the job logs written since


def _fail(message, prefix="config error: "):
    # One clear message and a non-zero exit; a traceback would bury the key the user has to fix.
    print(f"{prefix}{message}", file=sys.stderr)
    raise SystemExit(1)


try:
    from dpcost.run.startup import start
    from dpcost.errors import DPCostError
    from dpcost.run.data_check import check_data, check_preparations, downloads_needed
    from dpcost.run.closing import job_errors, summary
    from dpcost.run.record import config_sha256
except ImportError as exc:
    _fail(f"a dependency is missing ({exc}); install them with: pip install -e .")

# Every kind: table block laid over table_defaults, before validation (so that the schema's defaults do not mask
# these), then every check no job should start without (dpcost.run.startup.start, which the tests call too: a config error
# is tested there, one of each kind through Snakemake). A job a cluster executor spawns re-reads the config and skips
# the slow checks, which the main process made.
_SCHEMA = workflow.source_path("../schemas/config.schema.yaml")
try:
    _START = start(
        config,
        lambda c: validate(c, _SCHEMA),
        run_checks=workflow.is_main_process,
    )
except DPCostError as exc:
    _fail(str(exc))

RUN = _START.run
DATASETS, TABLES, LIBSVM, METHODS = RUN.analyses, RUN.tables, RUN.libsvm, RUN.methods
BENCHMARK = RUN.benchmark or {"datasets": [], "methods": []}
# the regression analyses whose `inference` block is enabled, and the methods of each that release private intervals
# (a listed method without a procedure, or a route a method lacks, stopped above naming the key); the benchmark's
# tables with intervals, each with the benchmark's methods that release them; the regression analyses whose
# `targeted` block is enabled and names a method they run: each one's job arguments; the benchmark's tables whose
# `targeted` block is enabled: the same, of the benchmark's methods
INFERENCE, BENCHMARK_INFERENCE, TARGETED, BENCHMARK_TARGETED = (
    _START.inference,
    _START.benchmark_inference,
    _START.targeted,
    _START.benchmark_targeted,
)
# the download jobs' retry options (not check_sources: switching the check must not rerun a download)
DOWNLOAD_OPTIONS = {
    k: config["download"][k] for k in ("max_tries", "backoff", "timeout")
}


def _command_line():
    """(targets, whether jobs will run) of the snakemake command line this process runs, or None when it runs none
    (the Python API). Snakemake tells a workflow its targets only after parsing it, so they are read from the command
    line, with Snakemake's own parser."""
    if "snakemake" not in (Path(sys.argv[0]).name, Path(sys.argv[0]).parent.name):
        return None
    from snakemake.cli import get_argument_parser

    args, _ = get_argument_parser().parse_known_args(sys.argv[1:])
    # every mode but running jobs: a dry run, the report, lint, listings, graphs, unlock, cleanups, summaries
    other = ("dryrun", "touch", "lint", "list_target_rules", "list_rules", "print_compilation", "dag",
             "rulegraph", "filegraph", "d3dag", "containerize", "generate_unit_tests", "unlock", "cleanup_metadata",
             "conda_cleanup_envs", "conda_create_envs_only", "list_conda_envs", "cleanup_shadow",
             "container_cleanup_images", "list_changes", "list_input_changes", "list_params_changes",
             "list_untracked", "summary", "detailed_summary", "archive", "delete_all_output", "delete_temp_output")  # fmt: skip
    report_only = getattr(args, "report", None) and not getattr(
        args, "report_after_run", False
    )
    runs = not (report_only or any(getattr(args, k, None) for k in other))
    return sorted(args.targets or []), runs and not workflow.output_settings.dryrun


def check_sources():
    """Before any job: every data set the targets need and have not downloaded can be had (a copy here, or a source
    that answers), or one message names every one that cannot, and the fix (dpcost.run.data_check.check_data). A dry
    run asks nothing and says so."""
    asked = _command_line()
    if asked is None:
        return
    targets, runs = asked
    if runs:
        try:
            check_data(RUN, targets)
        except DPCostError as exc:
            _fail(str(exc), prefix="")
    elif workflow.output_settings.dryrun and downloads_needed(RUN, targets):
        needed = ", ".join(downloads_needed(RUN, targets))
        print(
            f"dry run: whether {needed} can be downloaded is checked when the run starts",
            file=sys.stderr,
        )


if workflow.is_main_process and config["download"]["check_sources"]:
    check_sources()


def check_tables():
    """Before any job, and before a dry run's plan: every downloaded table the targets read prepared as its job
    would (dpcost.run.data_check): a bad edit stops here, before Snakemake deletes the outputs it
    would rerun."""
    asked = _command_line()
    if asked is None:
        return
    targets, runs = asked
    if runs or workflow.output_settings.dryrun:
        try:
            check_preparations(RUN, targets)
        except DPCostError as exc:
            _fail(str(exc))


if workflow.is_main_process:
    check_tables()


def say_work():
    """Before any job (and in a dry run): one line estimating the run's work on the given cores, and a warning with
    the knobs to turn when it is over an hour (dpcost.run.workload). An estimate that cannot be made says so.
    """
    asked = _command_line()
    if asked is None or not (asked[1] or workflow.output_settings.dryrun):
        return
    settings = workflow.resource_settings
    cores = settings.cores or settings.nodes or 1
    try:
        from dpcost.run import workload

        work = workload.of_run(RUN, asked[0])
        text = (
            workload.warning(work, cores)
            or f"dpcost: the analyses asked for, whole, take {workload.describe(work, cores)}"
        )
    except Exception as exc:
        text = f"dpcost: no estimate of the run's work ({type(exc).__name__}: {exc})"
    print(text, file=sys.stderr)


if workflow.is_main_process:
    say_work()


def closing_summary(ok):
    # The few lines a run ends with (onsuccess, onerror in the Snakefile): where the results
    # are, every warning of the run, the report command (dpcost.run.closing.summary).
    # Said by the process that ran the jobs, from its command line. A closing message must
    # never turn a run's result into a traceback: one that cannot be made says so, in a line.
    asked = _command_line()
    if not workflow.is_main_process or asked is None:
        return
    try:
        errors = [] if ok else job_errors(_STARTED)
        text = summary(
            RUN,
            asked[0],
            ok=ok,
            command=sys.argv[1:],
            directory=os.getcwd(),
            errors=errors,
        )
    except Exception as exc:
        text = f"dpcost: no closing summary ({type(exc).__name__}: {exc})"
    print(f"\n{text}", file=sys.stderr)


def one_of(names):
    """A wildcard constraint matching exactly these names (nothing when there are none)."""
    return "|".join(names) or "(?!)"


def data_inputs(wildcards):
    """The preprocessed data of an analysis, under the names its loader reads (its descriptor says where)."""
    return RUN.analysis(wildcards.dataset).inputs()


def per_method(dataset, pattern, methods=None):
    """``pattern`` (with {dataset} and {method}) for every method of the analysis."""
    return expand(pattern, dataset=dataset, method=methods or METHODS[dataset])


def tuning_record(wildcards):
    """The method's tuning record when its tune job makes one (a decoy search or a private selection); otherwise
    none: its constants come from the config, and the job that runs it makes the record (dpcost.jobs.estimate).
    """
    if not RUN.tunes(wildcards.dataset, wildcards.method):
        return {}
    return {"tuning": f"results/{wildcards.dataset}/tuning/{wildcards.method}.json"}


def part_files(dataset, step, method, ext):
    """The files of a split job's parts (none when it is not split), joined by its tune or estimate job."""
    if not RUN.is_split(dataset, step, method):
        return []
    parts = RUN.parts(dataset, step, method)
    return [
        f"results/{dataset}/parts/{step}_{method}.{k}.{ext}" for k in range(len(parts))
    ]


def inference_files(dataset, ext):
    """The files of the interval jobs of an analysis (none when no method has a procedure)."""
    return [
        f"results/{dataset}/inference/{method}.{ext}" for method in INFERENCE[dataset]
    ]


def targeted_files(dataset):
    """The tables of the targeted-attack jobs of an analysis, one per method."""
    return [
        f"results/{dataset}/targeted/{method}.parquet"
        for method in TARGETED[dataset]["methods"]
    ]


TARGETED_OUTPUTS = ("targeted.csv", "targeted.png", "targeted.pdf")
BENCHMARK_TARGETED_OUTPUTS = TARGETED_OUTPUTS + ("targeted.parquet",)
INFERENCE_OUTPUTS = (
    "inference.csv",
    "inference.parquet",
    "inference.png",
    "inference.pdf",
)


ANALYSIS_OUTPUTS = (
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
MAP_OUTPUTS = (
    "privacy_map.csv",
    "privacy_map_ratios.csv",
    "epsilon_needed.csv",
    "privacy_map.png",
    "privacy_map.pdf",
)
LIBSVM_OUTPUTS = (
    "preparation.json",
    "errors.parquet",
    "table.csv",
    "table.png",
    "table.pdf",
    "privacy_ledger.json",
    "resources.csv",
)


def final_outputs():
    files = ["results/config_used.yaml"]
    for ds in DATASETS:
        names = ANALYSIS_OUTPUTS + (MAP_OUTPUTS if config[ds].get("map") else ())
        names += ("comparison.csv",) if RUN.analysis(ds).comparison else ()
        names += INFERENCE_OUTPUTS if ds in INFERENCE else ()
        names += TARGETED_OUTPUTS if ds in TARGETED else ()
        files += [f"results/{ds}/{name}" for name in names]
    return files + [f"results/{ds}/{name}" for ds in LIBSVM for name in LIBSVM_OUTPUTS]


SIM_JOBS = RUN.simulation.jobs() if RUN.simulation else []
SIM_FIGURES = (
    sorted({e.figure for e in RUN.simulation.experiments.values()})
    if RUN.simulation
    else []
)


def simulation_outputs():
    names = ("errors.parquet", "summary.csv", "rates.csv", "privacy_ledger.json")
    figures = [f"fig{k}.{ext}" for k in SIM_FIGURES for ext in ("png", "pdf")]
    return (
        [f"results/simulation/{name}" for name in (*names, *figures)]
        if RUN.simulation
        else []
    )


def benchmark_outputs():
    names = (
        "errors.parquet",
        "summary.csv",
        "wins.csv",
        "benchmark.png",
        "benchmark.pdf",
        "benchmark_heatmap.png",
        "benchmark_heatmap.pdf",
    )
    names += ("inference.csv", "inference.parquet") if BENCHMARK_INFERENCE else ()
    names += BENCHMARK_TARGETED_OUTPUTS if BENCHMARK_TARGETED else ()
    return [f"results/benchmark/{name}" for name in names] if RUN.benchmark else []
