# `snakemake --report` describes a run (dpcost.run.record): a real run records the config files, --config values and
# targets it was given in results/run.json when it starts (onstart: never on a dry run, nor by --report), and a
# report given another configuration stops with one line naming the run's. Read before the workflow's
# `configfile:` (the Snakefile includes this second), so that a report without the --configfile the run needed stops
# here, even where no config/config.yaml exists. dpcost comes from this checkout's src/, as in common.smk.

import sys
from pathlib import Path

_RR_HERE = getattr(workflow.current_basedir, "path", None)
_RR_SRC = Path(_RR_HERE).parents[1] / "src" if isinstance(_RR_HERE, str) else None
if _RR_SRC is not None and _RR_SRC.is_dir() and str(_RR_SRC) not in sys.path:
    sys.path.insert(0, str(_RR_SRC))

from dpcost.run import record as run_record

# over the workflow's own config file, the Snakefile's `configfile:` (read by rules/yaml_syntax.smk)
RUN_GIVEN = run_record.Given.of(
    workflow.config_settings.configfiles,
    workflow.config_settings.config_args,
    workflow.config_settings.overwrite_config,
    WORKFLOW_CONFIG,
    replace=workflow.config_settings.replace_workflow_config,
)


def _check_report():
    path = run_record.requested_report() if workflow.is_main_process else None
    problem = path and run_record.report_problem(run_record.RECORD, RUN_GIVEN, path)
    if problem:
        print(f"report error: {problem}", file=sys.stderr)
        raise SystemExit(1)


_check_report()


onstart:
    run_record.record(
        run_record.RECORD, RUN_GIVEN, sorted(workflow.dag_settings.targets or ())
    )
