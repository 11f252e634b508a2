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
    from dpcost.checks import check_mean_setup, check_regression_setup
    from dpcost.errors import DPCostError
    from dpcost.housing import N_ROWS as HOUSING_ROWS
except ImportError as exc:
    _fail(f"a dependency is missing ({exc}); install them with: pip install -e .")

# Peer libraries join the housing methods when installed (housing.peers: auto), or must be there (always).
from dpcost.peers import available as _peers_available

_peers = config["housing"].get("peers", "auto")
if _peers != "never":
    _avail = _peers_available()
    if _peers == "always" and not all(_avail.values()):
        _fail(
            f"housing.peers is 'always' but {[k for k, v in _avail.items() if not v]} is not usable; "
            "install: pip install -e '.[peers]'"
        )
    for _name, _lib in (("diffprivlib", "diffprivlib"), ("opendp_ssp", "opendp")):
        if _avail[_lib] and _name not in config["housing"]["methods"]:
            config["housing"]["methods"].append(_name)

DATASETS = config["datasets"]
METHODS = {"housing": config["housing"]["methods"], "snp": config["snp"]["methods"]}


def calibration(dataset):
    return config[dataset].get("calibration", config["calibration"])


try:
    _notes = []
    if "housing" in DATASETS:
        _h = config["housing"]
        _notes += check_regression_setup(
            methods=_h["methods"],
            tuning=_h.get("tuning", {}),
            epsilon=_h["privacy"]["epsilon"],
            delta=_h["privacy"]["delta"],
            m_grid=_h["m"],
            n_rows=HOUSING_ROWS,
            calibration=calibration("housing"),
            on_invalid=config["on_invalid"],
        )
    if "snp" in DATASETS:
        _s = config["snp"]
        _notes += check_mean_setup(
            methods=_s["methods"],
            tuning=_s.get("tuning", {}),
            s=_s["s"],
            epsilon=_s["privacy"]["epsilon"],
            delta=_s["privacy"]["delta"],
            m_grid=_s["m"],
            n_min=min(_s["groups"].values()),
            n_snps=_s["n_snps"],
            calibration=calibration("snp"),
            on_invalid=config["on_invalid"],
        )
    for _note in dict.fromkeys(_notes):
        print(_note, file=sys.stderr)
except DPCostError as exc:
    _fail(str(exc))


def final_outputs():
    extra = ["results/housing/comparison.csv"] if "housing" in DATASETS else []
    return ["results/config_used.yaml", *extra] + [
        f"results/{ds}/{name}"
        for ds in DATASETS
        for name in (
            "errors.parquet",
            "summary.csv",
            "error_curves.png",
            "error_curves.pdf",
            "privacy_ledger.json",
        )
    ]
