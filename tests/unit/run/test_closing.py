"""The last lines of a failed run (dpcost.run.closing): the failing jobs' one-line errors, read from their logs."""

import logging
import os
import time

import pytest

from dpcost.errors import DataError
from dpcost.jobs import run
from dpcost.run.closing import job_errors


def _job(log, body):
    with pytest.raises(SystemExit):
        run(body, str(log), "preprocess_table")
    logging.shutdown()


def test_the_failed_jobs_errors_are_found_in_their_logs(tmp_path):
    logs = tmp_path / "logs" / "wages"
    logs.mkdir(parents=True)
    old = logs / "old.log"
    old.write_text("2026-12-01 10:00:00,000 ERROR estimate: an earlier run's failure\n")
    os.utime(old, (1, 1))
    since = time.time() - 1
    (logs / "fine.log").write_text("2026-12-02 10:00:00,000 INFO estimate: done\n")

    def bad():
        raise DataError("wages.m: the largest m is 5000 but the table has 3294 complete rows")

    _job(logs / "preprocess.log", bad)
    _job(logs / "z_bug.log", lambda: 1 / 0)
    assert job_errors(since, tmp_path / "logs") == [
        f"preprocess_table: wages.m: the largest m is 5000 but the table has 3294 complete rows "
        f"({logs / 'preprocess.log'})",
        f"preprocess_table: unexpected error ({logs / 'z_bug.log'})",
    ]
    assert job_errors(since, tmp_path / "nowhere") == []
