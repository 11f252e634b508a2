"""What a run was given, and whether ``snakemake --report`` describes that run.

A report renders the results on disk with the captions of the configuration it is given: given another one (the
defaults alone after a run made with ``--configfile``), it either stops at a file that configuration would have made
or, worse, describes the results with the wrong settings. So a real run records, when it starts, the config files,
``--config`` values and targets it was given and a digest of the configuration they make (``results/run.json``,
:func:`record`), and a report whose configuration has another digest stops with one line that says how to rerun it
(:func:`report_problem`). Used by workflow/rules/preflight.smk, before the workflow reads its config file; it
imports nothing of Snakemake's (the workflow hands it what Snakemake was given)."""

from __future__ import annotations

import copy
import datetime
import hashlib
import json
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

RECORD = "results/run.json"
DEFAULT_REPORT = "results/report.html"


@dataclass(frozen=True)
class Given:
    """What Snakemake was given: ``configfiles`` (absolute paths, in order), ``config_args`` (``--config`` values)
    and ``digest``, the sha256 of the configuration they make over the workflow's own config file."""

    configfiles: tuple[str, ...]
    config_args: tuple[str, ...]
    digest: str

    @classmethod
    def of(
        cls,
        configfiles: Sequence,
        config_args: Sequence | None,
        overwrite: Mapping,
        base: Mapping | None,
        replace: bool = False,
    ) -> Given:
        """As Snakemake merges them: the workflow's ``configfile:`` as read (``base``; None when there is none, and
        left out when ``replace``), updated key by key at every depth by ``overwrite`` (the ``--configfile``s, then
        the ``--config`` values)."""
        start = base if isinstance(base, Mapping) and not replace else {}
        merged = laid_over(start, overwrite)
        return cls(tuple(str(p) for p in configfiles), tuple(str(a) for a in config_args or ()), config_sha256(merged))

    def flags(self) -> list[str]:
        return [
            *(["--configfile", *self.configfiles] if self.configfiles else []),
            *(["--config", *self.config_args] if self.config_args else []),
        ]


def config_sha256(config: Mapping) -> str:
    """The sha256 of a configuration (its JSON with sorted keys): what names it in results/run.json and what the
    config snapshot job's params hold, so that a changed key reruns it without printing the whole config."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def laid_over(base: Mapping, block: Mapping) -> dict:
    """``block`` laid over ``base`` as Snakemake merges config files: mappings key by key, at every depth; any other
    value (a list, a number) replaces the base's whole. (Here, not in :mod:`dpcost.run.config`, which imports the
    analyses: this module stays light for the Snakefile's parse.)"""
    out = copy.deepcopy(dict(base))
    for key, value in block.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = laid_over(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def record(path: str | Path, given: Given, targets: Sequence[str], now: datetime.datetime | None = None) -> None:
    """Write the run record atomically: the flags, the targets (empty: the default target), the digest and when the
    run started."""
    now = now or datetime.datetime.now(datetime.UTC)
    entry = {
        "started": now.isoformat(timespec="seconds"),
        "configfiles": list(given.configfiles),
        "config_args": list(given.config_args),
        "targets": list(targets),
        "config_sha256": given.digest,
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(entry, indent=1) + "\n")
    os.replace(tmp, path)


def report_problem(path: str | Path, given: Given, report: str | None = None) -> str | None:
    """Why a report made now would not describe the recorded run (one line), or None: no run recorded (nothing to
    compare; Snakemake's own checks apply), or the same configuration. ``report``: the report's path, for the
    command line the message gives."""
    try:
        run = json.loads(Path(path).read_text())
        recorded = Given(tuple(run["configfiles"]), tuple(run["config_args"]), run["config_sha256"])
        targets, started = list(run.get("targets", [])), run.get("started", "?")
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no run recorded, or a record of another shape: nothing to compare with
    if recorded.digest == given.digest:
        return None
    if recorded.flags() == given.flags():
        again = shlex.join(["snakemake", *targets, "--cores", "N", *recorded.flags()])
        return (
            f"the configuration changed since the run started {started} ({path}): a config file was edited, "
            f"so the results on disk are not this configuration's; run the workflow again ({again}), then "
            "the report"
        )
    made = " ".join(recorded.flags()) or "no --configfile (config/config.yaml alone)"
    rerun = shlex.join(["snakemake", *targets, "--report", report or DEFAULT_REPORT, *recorded.flags()])
    return (
        f"these results were made by the run started {started} with {made} ({path}), not with this "
        f"configuration; rerun as: {rerun}"
    )


def workflow_config(path: str | Path, load: Callable, syntax_error: type[Exception]) -> Mapping | None:
    """The workflow's own config file as read (``load``: yaml.safe_load), before its ``configfile:`` reads it (None
    when there is none: Snakemake's own message follows, or the ``--configfile`` files serve instead). A YAML syntax
    error (``syntax_error``: yaml.YAMLError) raises a ValueError whose one line names the file, line and column, which
    Snakemake's message does not. (The caller hands yaml in: the library does not import it.)"""
    try:
        with open(path) as fh:
            return load(fh)
    except FileNotFoundError:
        return None
    except syntax_error as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        start = getattr(exc, "context_mark", None)
        if start is not None and getattr(exc, "context", None):
            problem += f" ({exc.context} that starts at line {start.line + 1}, column {start.column + 1})"
        raise ValueError(f"{where}: YAML syntax: {problem}") from None


# ------------------------------------------------------------------------------------------------ is this a report?
def requested_report(argv: Sequence[str] | None = None) -> str | None:
    """The report's path if this Snakemake process writes a report and runs nothing (``--report`` without
    ``--report-after-run``), else None. Snakemake's own parsed arguments when this is its command line (the
    ``args`` of ``snakemake.cli.args_to_api``, up the stack while the workflow is read: they include a profile's
    options); else the command line ``argv`` (default ``sys.argv``)."""
    args = _snakemake_args()
    if args is not None:
        if not getattr(args, "reporter", None) or getattr(args, "report_after_run", False):
            return None
        if getattr(args, "containerize", None) is not None or getattr(args, "lint", None):
            return None
        path = getattr(args, "report", None) or getattr(args, "report_html_path", None)
        return str(path) if path else DEFAULT_REPORT
    return _report_in_argv(sys.argv[1:] if argv is None else argv)


def _snakemake_args():
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "args_to_api" and frame.f_globals.get("__name__") == "snakemake.cli":
            return frame.f_locals.get("args")
        frame = frame.f_back
    return None


def _report_in_argv(argv: Sequence[str]) -> str | None:
    """The same from a command line: ``--report [path]``, ``--report=path`` or ``--reporter name``."""
    argv = list(argv)
    if "--report-after-run" in argv:
        return None
    for i, arg in enumerate(argv):
        if arg.startswith("--report="):
            return arg.split("=", 1)[1]
        if arg == "--report":
            following = argv[i + 1] if i + 1 < len(argv) else ""
            return following if following.endswith((".html", ".zip")) else DEFAULT_REPORT
        if arg == "--reporter" or arg.startswith("--reporter="):
            return DEFAULT_REPORT
    return None
