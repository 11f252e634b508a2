"""What a run says at its end (workflow/Snakefile: onsuccess, onerror): where its results are, every warning once,
the report command, and — when a job failed — the failing jobs' own one-line errors, read from their logs
(:func:`dpcost.jobs.run` writes each as one ERROR record), last, so the run's closing block ends on the line the
user has to act on rather than on the summary. After a failure the block is said at the process's exit
(:func:`print_closing`), after Snakemake's own closing lines, so that the run's very last line is that one."""

from __future__ import annotations

import atexit
import json
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from ..analysis import datasets
from ..analysis.checks import delta_warning
from ..estimators.peers import available as peers_available
from ..estimators.registry import methods_of
from .config import RunConfig
from .targets import asked

# a job log's ERROR record: "<date> <time> ERROR <rule>: <message>" (dpcost.jobs.run's format)
_ERROR = re.compile(r"^\S+ \S+ ERROR (\S+): (.*)$")


def print_closing(text: str, *, ok: bool) -> None:
    """Print the closing block to stderr: at once after a success; after a failure when the process exits, because
    Snakemake prints four lines of its own after the onerror hook (its log's path, the elapsed time, "WorkflowError:",
    "At least one job did not complete successfully.") and the failing job's line must be the run's last."""
    if ok:
        print(f"\n{text}", file=sys.stderr)
    else:
        atexit.register(print, f"\n{text}", file=sys.stderr, flush=True)


def warnings_of(run: RunConfig, targets: Sequence[str]) -> list[str]:
    """Every warning of a run of ``targets``, each in one line: δ ≥ 1/n (each analysis's and the benchmark's, at
    every m it applies to), tables without a content checksum (read, not verified), rows a table's preparation dropped
    for missing values (from its record, once made), peer libraries missing under
    ``peers: auto`` (their methods left out), ``on_invalid: warn`` and the float-unsafe sampler (releases that
    are not proven private). The jobs say these in their logs, among a run's many lines; this lists them once."""
    own, benched, _ = asked(run, targets)
    out = []
    for name in own:
        if name in run.analyses and (said := delta_warning(run.privacy(name), run.config[name]["m"], why=False)):
            out.append(f"{name}: {said}")
    for name in benched:
        if said := delta_warning(run.benchmark_privacy(name), run.config[name]["m"], why=False):
            out.append(f"benchmark, {name}: {said}")
    for name in dict.fromkeys([*own, *benched]):
        if name in run.tables and not run.config[name].get("content_sha256"):
            out.append(
                f"{name}: no content_sha256, so the table is read but not verified (pin the digest that "
                f"resources/{name}/download.json records as {name}.content_sha256)"
            )
    for name in own:
        if name in run.analyses and run.config[name].get("peers", "never") == "auto":
            peers = {k: m.peer for k, m in methods_of(datasets.get(name).family).items() if m.peer}
            usable = peers_available()
            lost = [k for k, lib in peers.items() if not usable[lib]]
            if lost:
                libs = sorted({peers[k] for k in lost})
                out.append(
                    f"{name}: peers auto, but {', '.join(libs)} not usable: {', '.join(lost)} left out "
                    "(pip install -e '.[peers]')"
                )
    out += _dropped_rows([n for n in dict.fromkeys([*own, *benched]) if n in run.tables])
    if run.config.get("on_invalid") == "warn" and (own or benched):
        out.append(
            "on_invalid: warn: a paper calibration outside its proven range runs, not proven private (a "
            "PRIVACY WARNING in its job's log; proven: false in the ledger and summary.csv)"
        )
    if run.config.get("sampler") == "float-unsafe":
        out.append(
            "sampler: float-unsafe: numpy's floating-point noise, NOT private on a computer (for speed "
            "comparisons only)"
        )
    return out


def summary(
    run: RunConfig,
    targets: Sequence[str],
    *,
    ok: bool,
    command: Sequence[str],
    directory: Path | str,
    errors: Sequence[str] = (),
) -> str:
    """The few lines a run ends with: where its results are, every warning (:func:`warnings_of`), the command that
    builds the report, and last, when a job failed, each failing job's own line (``errors``: :func:`job_errors`);
    ``command``: the ``snakemake`` arguments of the run, ``ok``: whether every job completed."""
    own, benched, simulation = asked(run, targets)
    folders = [f"{n}/" for n in own if n in run.analyses or n in run.libsvm]
    folders += ["benchmark/"] * bool(benched) + ["simulation/"] * simulation
    results = f"{Path(directory) / 'results'}/" + (f" ({', '.join(folders)})" if folders else "")
    if ok:
        lines = [f"dpcost: the run completed. Results: {results}"]
    else:
        lines = [
            f"dpcost: the run stopped: a job failed (its error above, its log under logs/). What completed "
            f"stays in {results}; the same command resumes from there."
        ]
    warnings = warnings_of(run, targets)
    lines += [f"Warnings ({len(warnings)}):", *(f"  {w}" for w in warnings)] if warnings else ["Warnings: none."]
    report = shlex.join(["snakemake", *command, "--report", "results/report.html"])
    lines.append(f"Report: {report}" if ok else f"Report, once the run completes: {report}")
    lines += [f"dpcost: job failed: {line}" for line in errors]
    return "\n".join(lines)


def job_errors(since: float, logs: Path | str = "logs") -> list[str]:
    """``<rule>: <message> (<log>)`` for every job log written at or after ``since`` (a time.time()) whose last
    ERROR record is its job's failure, in path order. A failure that is a bug logs "unexpected error" and its traceback
    there: the line says so and the log holds the rest."""
    out = []
    for path in sorted(Path(logs).rglob("*.log")):
        try:
            if path.stat().st_mtime < since:
                continue
            lines = path.read_text(errors="replace").splitlines()
        except OSError:  # a log another process is replacing: not this run's to report
            continue
        for line in reversed(lines):
            if match := _ERROR.match(line):
                out.append(f"{match.group(1)}: {match.group(2)} ({path})")
                break
    return out


def _dropped_rows(tables: Sequence[str]) -> list[str]:
    """One warning per table whose preparation dropped rows for a missing value, from its record
    (results/<name>/preprocessing.json, once the preprocess job made it)."""
    out = []
    for name in tables:
        path = Path("results") / name / "preprocessing.json"
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):  # not made yet, or being replaced: the job's log says it
            continue
        dropped, read = record.get("rows_dropped_missing", 0), record.get("rows_read")
        if dropped and read:
            out.append(
                f"{name}: {dropped:,} of {read:,} rows ({dropped / read:.1%}) dropped for a missing value in a "
                f"used column ({path}: rows_dropped_missing)"
            )
    return out


def closing_lines(
    run: RunConfig, targets: Sequence[str], *, ok: bool, command: Sequence[str], directory: Path | str, since: float
) -> str:
    """:func:`summary` of a run started at ``since`` (a time.time(); its failed jobs' lines read from the logs
    written since), or one line saying why none can be made: a closing message must never turn a run's result into a
    traceback."""
    try:
        errors = [] if ok else job_errors(since)
        return summary(run, targets, ok=ok, command=command, directory=directory, errors=errors)
    except Exception as exc:
        return f"dpcost: no closing summary ({type(exc).__name__}: {exc})"
