"""What the workflow checks before any job: its config, in one call (:func:`start`: workflow/rules/common.smk makes
it, and so do the tests, without starting Snakemake: tests/workflow_runner.py), then, in the process that runs or
plans the jobs, the data its targets need and what the run will cost (:func:`before_jobs`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from ..analysis import intervals
from ..analysis.targeted import options as targeted_options
from ..errors import ConfigError, DPCostError
from ..estimators.registry import methods_of
from . import workload
from .config import RunConfig, resolve, with_defaults
from .data_check import check_data, check_preparations, downloads_needed


def inference_methods(run: RunConfig, name: str, methods: Sequence[str] | None = None) -> list[str]:
    """The methods of a regression analysis (or the benchmark's ``methods`` on it) that release private intervals
    (its ``inference`` block; none when off or not a regression): :func:`dpcost.analysis.intervals.runs`."""
    on = run.analysis(name).family == "regression" and run.config[name].get("inference")
    return intervals.runs(on or None, run.methods.get(name, ()) if methods is None else methods, f"{name}.inference")


def start(config: dict, validate: Callable[[dict], object], *, run_checks: bool = True) -> RunConfig:
    """Every check the workflow makes of its config before any job, in its order, as the Snakefile makes them (it
    calls this; so do the tests, without starting Snakemake): every table laid over ``table_defaults``, then
    ``validate`` (the schema; Snakemake's fills in the schema's defaults), :func:`~dpcost.run.config.resolve`, the
    ``inference`` and ``targeted`` blocks, whose facts the returned run holds. ``config`` is updated in place, as the
    workflow's own. Raises a :class:`~dpcost.errors.DPCostError` whose one line names the key (``config error: `` is
    the caller's)."""
    config.update(with_defaults(config))
    try:
        validate(config)
    except Exception as exc:  # snakemake wraps jsonschema's error: the key is the cause's
        cause = exc.__cause__ or exc.__context__ or exc
        where = ".".join(str(p) for p in getattr(cause, "absolute_path", [])) or "(top level)"
        raise ConfigError(f"{where}: {getattr(cause, 'message', str(cause))}") from None
    run = resolve(config, run_checks=run_checks)
    regression = [ds for ds in run.analyses if run.analysis(ds).family == "regression"]
    inference = {ds: inference_methods(run, ds) for ds in regression if config[ds].get("inference", {}).get("enabled")}
    bench = run.benchmark or {"datasets": [], "methods": []}
    benchmark_inference = {
        ds: methods for ds in bench["datasets"] if (methods := inference_methods(run, ds, bench["methods"]))
    }
    # a method outside the family or an m outside the grid stops here naming the key
    targeted = {
        ds: args
        for ds in regression
        if config[ds].get("targeted", {}).get("enabled")
        and (
            args := targeted_options(
                config[ds]["targeted"],
                run.methods[ds],
                {k: m.private for k, m in methods_of(run.analysis(ds).family).items()},
                config[ds]["m"],
                f"{ds}.targeted",
            )
        )
        is not None
    }
    benchmark_targeted = {
        ds: args
        for ds in bench["datasets"]
        if config[ds].get("targeted", {}).get("enabled")
        and (
            args := targeted_options(
                config[ds]["targeted"],
                bench["methods"],
                {k: m.private for k, m in methods_of("regression").items()},
                config[ds]["m"],
                f"{ds}.targeted",
            )
        )
        is not None
    }
    return dataclasses.replace(
        run,
        inference=inference,
        targeted=targeted,
        benchmark_inference=benchmark_inference,
        benchmark_targeted=benchmark_targeted,
    )


# every mode of snakemake but running jobs: a dry run, the report, lint, listings, graphs, unlock, cleanups, summaries
NOT_RUNNING = (
    "dryrun",
    "touch",
    "lint",
    "list_target_rules",
    "list_rules",
    "print_compilation",
    "dag",
    "rulegraph",
    "filegraph",
    "d3dag",
    "containerize",
    "generate_unit_tests",
    "unlock",
    "cleanup_metadata",
    "conda_cleanup_envs",
    "conda_create_envs_only",
    "list_conda_envs",
    "cleanup_shadow",
    "container_cleanup_images",
    "list_changes",
    "list_input_changes",
    "list_params_changes",
    "list_untracked",
    "summary",
    "detailed_summary",
    "archive",
    "delete_all_output",
    "delete_temp_output",
)


def command_line(argv: Sequence[str], parse: Callable[[list[str]], object], *, dryrun: bool):
    """(targets, whether jobs will run) of the snakemake command line ``argv`` (``sys.argv``; ``parse``: Snakemake's
    own parser of its arguments), or None when the process runs no command line (the Python API). Snakemake tells a
    workflow its targets only after parsing it, so they are read from the command line."""
    if "snakemake" not in (Path(argv[0]).name, Path(argv[0]).parent.name):
        return None
    args = parse(list(argv[1:]))
    report_only = getattr(args, "report", None) and not getattr(args, "report_after_run", False)
    runs = not (report_only or any(getattr(args, k, None) for k in NOT_RUNNING))
    return sorted(getattr(args, "targets", None) or []), runs and not dryrun


def before_jobs(
    run: RunConfig, targets: Sequence[str], runs: bool, *, dryrun: bool, cores: int, say: Callable[[str], None]
) -> None:
    """What a run checks and says before its first job, in order, when it runs jobs or plans them (``dryrun``): that
    the data the targets need can be had (``download.check_sources``; a dry run asks nothing and says so:
    :func:`~dpcost.run.data_check.check_data`), that every downloaded table they read prepares
    (:func:`~dpcost.run.data_check.check_preparations`), and the work estimate on ``cores`` (:mod:`.workload`), each
    line handed to ``say``. A check that fails raises a DPCostError whose message is the whole line to print."""
    if not (runs or dryrun):
        return
    if run.config["download"]["check_sources"]:
        if runs:
            check_data(run, targets)
        elif needed := downloads_needed(run, targets):
            say(f"dry run: whether {', '.join(needed)} can be downloaded is checked when the run starts")
    try:
        check_preparations(run, targets)
    except DPCostError as exc:
        raise ConfigError(f"config error: {exc}") from None
    try:
        work = workload.of_run(run, targets)
        work.speed = workload.speed_now()
        say(
            workload.warning(work, cores)
            or f"dpcost: the analyses asked for, whole, take {workload.describe(work, cores)}"
        )
    except Exception as exc:  # an estimate that cannot be made says so, in a line
        say(f"dpcost: no estimate of the run's work ({type(exc).__name__}: {exc})")
