"""Run the workflow in a scratch directory with the default config plus an override, as a user would; or check that
config as the workflow does at start-up, without starting Snakemake (config_error)."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import yaml

from support import REPO, RUN_TIMEOUT


def run_workflow(
    workdir: Path,
    override: dict,
    *extra: str,
    cores: int = 2,
    timeout: float = RUN_TIMEOUT,
    env=None,
    small: bool = False,
    snakemake: tuple[str, ...] = (sys.executable, "-m", "snakemake"),
):
    """``small``: merge the small test configuration .test/config.yaml between the default and the override.
    ``snakemake``: the command that starts Snakemake (test_slurm.py's pins the Slurm executor's polls)."""
    workdir.mkdir(parents=True, exist_ok=True)
    cfg = workdir / "override.yaml"
    cfg.write_text(yaml.safe_dump(override))
    cmd = [
        *snakemake,
        "-s",
        str(REPO / "workflow" / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(REPO / "config" / "config.yaml"),
        *([str(REPO / ".test" / "config.yaml")] if small else []),
        str(cfg),
        "--cores",
        str(cores),
        *extra,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


# The smallest privacy-utility maps: for end-to-end runs whose subject is not the map (.test/config.yaml and
# test_small_config.py run a real one). A config merge cannot remove the default map, so the runs shrink it.
TINY_MAP = {
    "housing": {"epsilon": [1.0], "m": [2000], "reps": 1, "methods": ["ols", "adassp"]},
    "snp": {"epsilon": [1.0], "m": [10], "reps": 1, "methods": ["sample_mean", "peeling"]},
}


# The intervals and the targeted attacks (both on by default in every table, housing included) off: for end-to-end
# runs whose subject is neither. test_small_config.py and test_slurm.py keep them on, and run them end to end.
# Merged as an override, table_defaults reaches every `kind: table` block (dpcost.run.config.with_defaults).
EXTRAS_OFF = {"inference": {"enabled": False}, "targeted": {"enabled": False}}
NO_EXTRAS = {"table_defaults": EXTRAS_OFF}


def config_error(override: dict, *, small: bool = False, data: Path | None = None) -> str:
    """What the workflow's start-up checks print for the default config (and ``small``: .test/config.yaml) with
    ``override`` merged over it as Snakemake merges --configfile files: ``config error: ...``, or "" when the config
    passes; with ``data`` (the run's directory, where its downloads would be) the check of the data the default
    target needs follows, whose message starts ``missing data: ``. The Snakefile's own checks (dpcost.run.startup.start
    and dpcost.run.data_check.check_data, workflow/rules/common.smk), in this process: a Snakemake start (3 s or
    more) is kept for one case of each kind of error (test_config.py, test_offline.py)."""
    import os

    from snakemake.utils import update_config, validate

    from dpcost.errors import DPCostError
    from dpcost.run.data_check import check_data
    from dpcost.run.startup import start

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for extra in ([yaml.safe_load((REPO / ".test" / "config.yaml").read_text())] if small else []) + [override]:
        update_config(config, copy.deepcopy(extra))
    try:
        run = start(config, lambda c: validate(c, str(REPO / "workflow" / "schemas" / "config.schema.yaml")))
    except DPCostError as exc:
        return f"config error: {exc}"
    if data is None or not config["download"]["check_sources"]:
        return ""
    here = os.getcwd()
    os.chdir(data)  # the downloads made, and the copies in resources/*/manual, are the run directory's
    try:
        check_data(run, [])
    except DPCostError as exc:
        return str(exc)
    finally:
        os.chdir(here)
    return ""
