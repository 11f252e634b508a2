"""The workflow's jobs, one module per rule file and one function per rule, named alike:
``workflow/rules/estimate.smk`` (rules ``estimate``, ``estimate_part``) ↔ ``workflow/scripts/estimate.py`` ↔
:mod:`dpcost.jobs.estimate` (functions ``estimate``, ``estimate_part``). Every script is the same two lines,
``main(snakemake, <module>)``: the rule's job gets one :class:`Job` — its named inputs and outputs, its arguments (the
rule's ``job`` param: :func:`dpcost.run.args.job_args`) and its wildcards — and writes its outputs whole or not at
all. A :class:`~dpcost.errors.DPCostError` ends the job with one line; anything else with one line pointing to the
traceback in the rule's log."""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ..dp.privacy import Privacy
from ..errors import DPCostError


@dataclass(frozen=True)
class Job:
    """What a rule hands its job: named ``input`` and ``output`` (a path, or a list of paths), ``args`` (the rule's
    params: the keys of its ``job`` param, :func:`dpcost.run.args.job_args`), ``wildcards``, the ``log`` path and
    the run's whole ``config`` (read by the config snapshot alone: every other job reads its params, so that a
    changed key reruns only the jobs that read it)."""

    rule: str
    input: Mapping[str, Any] = field(default_factory=dict)
    output: Mapping[str, Any] = field(default_factory=dict)
    args: Mapping[str, Any] = field(default_factory=dict)
    wildcards: Mapping[str, str] = field(default_factory=dict)
    log: str | None = None
    config: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, snakemake) -> Job:
        """The job of a Snakemake script's ``snakemake`` object."""

        def named(items):
            return {k: (list(v) if isinstance(v, list) else v) for k, v in items.items()}

        params = named(snakemake.params)
        return cls(
            rule=snakemake.rule,
            input=named(snakemake.input),
            output=named(snakemake.output),
            args={**params.pop("job", {}), **params},
            wildcards=dict(snakemake.wildcards.items()),
            log=snakemake.log[0] if snakemake.log else None,
            config=dict(getattr(snakemake, "config", None) or {}),
        )

    @property
    def dataset(self) -> str:
        return self.wildcards["dataset"]

    @property
    def method(self) -> str:
        return self.wildcards["method"]

    def privacy(self) -> Privacy:
        """The analysis's privacy specification (``args["privacy"]``, a :meth:`Privacy.to_dict`)."""
        return Privacy(**self.args["privacy"])

    def data(self) -> dict[str, str]:
        """The inputs an analysis's loader reads (its data files: every input but the tuning record and parts)."""
        return {k: v for k, v in self.input.items() if k not in ("tuning", "parts", "part_plans", "part_attacks")}


def main(snakemake, module: ModuleType) -> None:
    """Run the job of ``snakemake.rule`` (the function of that name in ``module``)."""
    job = Job.of(snakemake)
    run(lambda: getattr(module, job.rule)(job), job.log, job.rule)


def run(body: Callable[[], None], log_path: str | None, rule: str) -> None:
    """Run ``body`` with logging sent to ``log_path``; on failure print one line to stderr and exit 1.

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
        body()
    except DPCostError as exc:
        logging.getLogger(rule).error("%s", one_line(exc))
        print(f"ERROR [{rule}]: {one_line(exc)}", file=sys.stderr)
        sys.exit(1)
    except Exception as exc:  # noqa: BLE001 — the traceback is kept in the log, not lost
        logging.getLogger(rule).error("unexpected error\n%s", traceback.format_exc())
        print(
            f"ERROR [{rule}]: unexpected {type(exc).__name__}: {one_line(exc)} (traceback in {log_path})",
            file=sys.stderr,
        )
        sys.exit(1)


def one_line(exc: BaseException) -> str:
    """An error's message in one line: a library's message may hold line breaks (tarfile lists every compression it
    tried, a line each), which would split the job's one ERROR line and the run's closing line read from it."""
    return re.sub(r"\s*\n\s*", " ", str(exc).strip())


def read_json(path: str | Path) -> Any:
    with open(path) as fh:
        return json.load(fh)


def write_json_atomic(path: str | Path, record: Any) -> None:
    """Write strict JSON so that the file either holds the whole record or does not exist (a manifest is trusted)."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(record, indent=1, allow_nan=False) + "\n")
    os.replace(tmp, path)


def write_table_atomic(path: str | Path, table) -> None:
    """Write a DataFrame as parquet or CSV (by the suffix), atomically: the file holds the whole table or does not
    change."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if path.suffix == ".parquet":
        table.to_parquet(tmp, index=False)
    else:
        table.to_csv(tmp, index=False)
    os.replace(tmp, path)


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` so that the file holds all of it or does not change (an HTML view, a report page)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
