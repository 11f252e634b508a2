# Read before the workflow's `configfile:` (the Snakefile includes this first). dpcost comes from this checkout's src/
# (exported to the jobs' processes too), so a run always executes the code it ships with, never an older installed
# copy; this file's folder, not the main Snakefile's, so that the workflow used as a module from another directory
# finds it too (a remote module has none: the installed package serves).
import os
import sys
from pathlib import Path

import yaml
from snakemake.utils import min_version

min_version("9.0")

# workflow/rules/, if on this machine
_HERE = getattr(workflow.current_basedir, "path", None)
_SRC = Path(_HERE).parents[1] / "src" if isinstance(_HERE, str) else None
if _SRC is not None and _SRC.is_dir():
    sys.path.insert(0, str(_SRC))
    os.environ.update(
        PYTHONPATH=os.pathsep.join(p for p in (str(_SRC), os.getenv("PYTHONPATH")) if p)
    )

# the standard library alone: before the dependencies are checked (common.smk)
from dpcost.run import record

# A YAML syntax error in config/config.yaml is named by file and line (snakemake names neither). Files given with
# --configfile are read by snakemake before any workflow code runs, so only this one can be checked here.
try:
    _WORKFLOW_CONFIG = record.workflow_config(
        "config/config.yaml", yaml.safe_load, yaml.YAMLError
    )
except ValueError as exc:
    print(f"config error: {exc}", file=sys.stderr)
    raise SystemExit(1)

# `snakemake --report` describes a run (dpcost.run.record): a real run records the config files, --config values and
# targets it was given in results/run.json when it starts (onstart: never on a dry run, nor by --report), and a
# report given another configuration stops here with one line naming the run's, even where no config/config.yaml
# exists.
RUN_GIVEN = record.Given.of(
    workflow.config_settings.configfiles,
    workflow.config_settings.config_args,
    workflow.config_settings.overwrite_config,
    _WORKFLOW_CONFIG,
    replace=workflow.config_settings.replace_workflow_config,
)
_REPORT = record.requested_report() if workflow.is_main_process else None
if _REPORT and (_PROBLEM := record.report_problem(record.RECORD, RUN_GIVEN, _REPORT)):
    print(f"report error: {_PROBLEM}", file=sys.stderr)
    raise SystemExit(1)


onstart:
    record.record(record.RECORD, RUN_GIVEN, sorted(workflow.dag_settings.targets or ()))
