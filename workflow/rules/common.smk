import sys

from snakemake.utils import validate


def _fail(message):
    # One clear line and a non-zero exit; a traceback would bury the key the user has to fix.
    print(f"config error: {message}", file=sys.stderr)
    raise SystemExit(1)


try:
    validate(config, workflow.source_path("../schemas/config.schema.yaml"))
except Exception as exc:
    cause = exc.__cause__ or exc.__context__ or exc
    where = ".".join(str(p) for p in getattr(cause, "absolute_path", [])) or "(top level)"
    _fail(f"{where}: {getattr(cause, 'message', str(cause))}")

try:
    from dpcost.checks import check_regression_setup
    from dpcost.errors import DPCostError
    from dpcost.housing import N_ROWS as HOUSING_ROWS
except ImportError as exc:
    _fail(f"the dpcost package is not importable ({exc}); install it with: pip install -e .")

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
