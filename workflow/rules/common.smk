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


try:
    validate(config, workflow.source_path("../schemas/config.schema.yaml"))
except Exception as exc:
    cause = exc.__cause__ or exc.__context__ or exc
    where = (
        ".".join(str(p) for p in getattr(cause, "absolute_path", [])) or "(top level)"
    )
    _fail(f"{where}: {getattr(cause, 'message', str(cause))}")

try:
    from dpcost.checks import check_regression_setup
    from dpcost.errors import DPCostError
    from dpcost.housing import N_ROWS as HOUSING_ROWS
except ImportError as exc:
    _fail(
        f"the dpcost package is not importable ({exc}); install it with: pip install -e ."
    )

try:
    for _note in check_regression_setup(
        methods=config["housing"]["methods"],
        tuning=config["housing"].get("tuning", {}),
        epsilon=config["housing"]["privacy"]["epsilon"],
        delta=config["housing"]["privacy"]["delta"],
        m_grid=config["housing"]["m"],
        n_rows=HOUSING_ROWS,
    ):
        print(_note, file=sys.stderr)
except DPCostError as exc:
    _fail(f"housing: {exc}")


def housing_outputs():
    return [
        "results/housing/errors.parquet",
        "results/housing/summary.csv",
        "results/housing/error_curves.png",
        "results/housing/error_curves.pdf",
    ]
