"""What the workflow checks of its config before any job, in one call: the Snakefile makes it
(workflow/rules/common.smk) and so do the tests, without starting Snakemake (tests/workflow_runner.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.targeted import options as targeted_options
from ..errors import ConfigError
from ..estimators.registry import methods_of
from .config import RunConfig, resolve, with_defaults


@dataclass(frozen=True)
class Startup:
    """What the workflow knows once its config passed every start-up check (workflow/rules/common.smk)."""

    run: RunConfig
    inference: dict[str, list[str]]  # regression analyses with `inference` enabled: their methods with intervals
    benchmark_inference: dict[str, list[str]]  # the benchmark's tables with intervals: its methods that release them
    targeted: dict[str, dict]  # regression analyses with `targeted` enabled naming a method they run: the job's args
    # the benchmark's tables with `targeted` enabled: the same arguments, of the benchmark's methods (each attacked at
    # the table's largest benchmark m and every benchmark epsilon; dpcost.analysis.benchmark)
    benchmark_targeted: dict[str, dict]


def start(config: dict, validate: Callable[[dict], object], *, run_checks: bool = True) -> Startup:
    """Every check the workflow makes of its config before any job, in its order, as the Snakefile makes them (it
    calls this; so do the tests, without starting Snakemake): every table laid over ``table_defaults``, then
    ``validate`` (the schema; Snakemake's fills in the schema's defaults), :func:`~dpcost.run.config.resolve`, the
    ``inference`` and ``targeted`` blocks. ``config`` is updated in place, as the workflow's own. Raises a
    :class:`~dpcost.errors.DPCostError` whose one line names the key (``config error: `` is the caller's)."""
    config.update(with_defaults(config))
    try:
        validate(config)
    except Exception as exc:  # snakemake wraps jsonschema's error: the key is the cause's
        cause = exc.__cause__ or exc.__context__ or exc
        where = ".".join(str(p) for p in getattr(cause, "absolute_path", [])) or "(top level)"
        raise ConfigError(f"{where}: {getattr(cause, 'message', str(cause))}") from None
    run = resolve(config, run_checks=run_checks)
    regression = [ds for ds in run.analyses if run.analysis(ds).family == "regression"]
    inference = {ds: run.inference_methods(ds) for ds in regression if config[ds].get("inference", {}).get("enabled")}
    bench = run.benchmark or {"datasets": [], "methods": []}
    benchmark_inference = {
        ds: methods for ds in bench["datasets"] if (methods := run.inference_methods(ds, bench["methods"]))
    }
    # a method outside the family or an m outside the grid stops here naming the key
    targeted = {
        ds: args
        for ds in regression
        if config[ds].get("targeted", {}).get("enabled")
        and (args := targeted_options(
            config[ds]["targeted"],
            run.methods[ds],
            {k: m.private for k, m in methods_of(run.analysis(ds).family).items()},
            config[ds]["m"],
            f"{ds}.targeted",
        )) is not None
    }  # fmt: skip
    benchmark_targeted = {
        ds: args
        for ds in bench["datasets"]
        if config[ds].get("targeted", {}).get("enabled")
        and (args := targeted_options(
            config[ds]["targeted"],
            bench["methods"],
            {k: m.private for k, m in methods_of("regression").items()},
            config[ds]["m"],
            f"{ds}.targeted",
        )) is not None
    }  # fmt: skip
    return Startup(run, inference, benchmark_inference, targeted, benchmark_targeted)
