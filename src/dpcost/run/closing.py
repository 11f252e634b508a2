"""The last lines of a run that failed: the one-line error of every job that failed, read from the job logs
(:func:`dpcost.jobs.run` writes each as one ERROR record), so the run ends on the line the user has to act on
rather than on Snakemake's shutdown."""

from __future__ import annotations

import re
from pathlib import Path

# a job log's ERROR record: "<date> <time> ERROR <rule>: <message>" (dpcost.jobs.run's format)
_ERROR = re.compile(r"^\S+ \S+ ERROR (\S+): (.*)$")


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
