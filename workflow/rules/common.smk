import time

from snakemake.utils import validate

_STARTED = time.time()  # a failed run's closing lines read the job logs written since


def _fail(message):
    # One clear message and a non-zero exit; a traceback would bury the key the user has to fix.
    print(message, file=sys.stderr)
    raise SystemExit(1)


try:
    from dpcost.errors import DPCostError
    from dpcost.run import targets
    from dpcost.run.args import job_args
    from dpcost.run.closing import closing_lines, print_closing
    from dpcost.run.startup import before_jobs, command_line, start
except ImportError as exc:
    _fail(f"a dependency is missing ({exc}); install them with: pip install -e .")

# Every kind: table block laid over table_defaults, before validation (so that the schema's defaults do not mask
# these), then every check no job should start without (dpcost.run.startup.start, which the tests call too: a config
# error is tested there, one of each kind through Snakemake). A job a cluster executor spawns re-reads the config and
# skips the slow checks, which the main process made. RUN: the run's facts and what it makes (dpcost.run).
_SCHEMA = workflow.source_path("../schemas/config.schema.yaml")
try:
    RUN = start(
        config, lambda c: validate(c, _SCHEMA), run_checks=workflow.is_main_process
    )
except DPCostError as exc:
    _fail(f"config error: {exc}")

DATASETS, TABLES, LIBSVM, METHODS = RUN.analyses, RUN.tables, RUN.libsvm, RUN.methods
BENCHMARK = RUN.benchmark or {"datasets": [], "methods": []}
INFERENCE, BENCHMARK_INFERENCE = RUN.inference, RUN.benchmark_inference
TARGETED, BENCHMARK_TARGETED = RUN.targeted, RUN.benchmark_targeted


def _command_line():
    """(targets, whether jobs will run) of this snakemake command line, or None (the Python API runs none)."""
    from snakemake.cli import get_argument_parser

    parse = lambda argv: get_argument_parser().parse_known_args(argv)[0]
    return command_line(sys.argv, parse, dryrun=workflow.output_settings.dryrun)


# Before any job (and in a dry run): the data the targets need, every downloaded table they read prepared as its
# job would (a bad edit stops here, before Snakemake deletes the outputs it would rerun), the estimate of the
# run's work (dpcost.run.startup.before_jobs).
if workflow.is_main_process and _command_line() is not None:
    settings = workflow.resource_settings
    try:
        before_jobs(
            RUN,
            *_command_line(),
            dryrun=workflow.output_settings.dryrun,
            cores=settings.cores or settings.nodes or 1,
            say=lambda line: print(line, file=sys.stderr),
        )
    except DPCostError as exc:
        _fail(str(exc))


def closing_summary(ok):
    # The few lines a run ends with (onsuccess, onerror in the Snakefile): where the results are, every warning of
    # the run, the report command (dpcost.run.closing), said by the process that ran the jobs.
    asked = _command_line()
    if workflow.is_main_process and asked is not None:
        text = closing_lines(
            RUN,
            asked[0],
            ok=ok,
            command=sys.argv[1:],
            directory=os.getcwd(),
            since=_STARTED,
        )
        print_closing(text, ok=ok)


def args(rule):
    """A rule's `job` param: the values its job reads (dpcost.run.args.job_args)."""
    return lambda wildcards: job_args(RUN, rule, wildcards)


def one_of(names):
    """A wildcard constraint matching exactly these names (nothing when there are none)."""
    return "|".join(names) or "(?!)"


def data_inputs(wildcards):
    """The preprocessed data of an analysis, under the names its loader reads (its descriptor says where)."""
    return RUN.analysis(wildcards.dataset).inputs()


def per_method(dataset, pattern, methods=None):
    """``pattern`` (with {dataset} and {method}) for every method of the analysis."""
    return expand(
        pattern,
        dataset=dataset,
        method=METHODS[dataset] if methods is None else methods,
    )


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
