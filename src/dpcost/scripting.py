"""Glue for the workflow's thin scripts: logging to the rule's log file, one clear line on failure."""

from __future__ import annotations

import json
import logging
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from .errors import DPCostError


def run(main: Callable[[], None], log_path: str | None, rule: str) -> None:
    """Run ``main`` with logging sent to ``log_path``; on failure print one line to stderr and exit 1.

    A :class:`DPCostError` is the user's to fix: its message is the whole story. Anything else is a bug: the
    traceback goes to the log and the line on stderr points there.
    """
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_path:
        handlers.append(logging.FileHandler(log_path, mode="w"))
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", handlers=handlers, force=True
    )
    logging.captureWarnings(True)
    try:
        main()
    except DPCostError as exc:
        logging.getLogger(rule).error("%s", exc)
        print(f"ERROR [{rule}]: {exc}", file=sys.stderr)
        sys.exit(1)
    except Exception as exc:  # noqa: BLE001 — the traceback is kept in the log, not lost
        logging.getLogger(rule).error("unexpected error\n%s", traceback.format_exc())
        print(f"ERROR [{rule}]: unexpected {type(exc).__name__}: {exc} (traceback in {log_path})", file=sys.stderr)
        sys.exit(1)


def write_json_atomic(path: str | Path, record: dict) -> None:
    """Write JSON so that the file either holds the whole record or does not exist (a manifest is trusted)."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n")
    os.replace(tmp, path)


def run_grid_job(grid_fn, data: tuple, params, method: str, dataset: str, out: str, **extra) -> None:
    """The body both estimate scripts share: the rule's params become the grid's arguments; the tidy table is
    written to ``out`` and its size and time logged. ``data`` are the grid function's positional arguments."""
    import time

    t0 = time.perf_counter()
    errors = grid_fn(
        *data,
        method=method,
        params=dict(params.tuning),
        m_grid=params.m,
        reps=params.reps,
        seed=params.seed,
        epsilon=params.privacy["epsilon"],
        delta=params.privacy["delta"],
        calibration=params.calibration,
        on_invalid=params.on_invalid,
        dataset=dataset,
        **extra,
    )
    logging.getLogger("estimate").info("%s: %d rows in %.2f s", method, len(errors), time.perf_counter() - t0)
    errors.to_parquet(out, index=False)
