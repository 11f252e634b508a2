"""How a job ends (dpcost.jobs.run) and how a failed run's closing block is said
(dpcost.run.closing.print_closing): one ERROR line per failed job, whatever line breaks its message holds, and the
closing block after everything Snakemake prints, so that the run's last line is the failing job's."""

import subprocess
import sys
import textwrap

from dpcost.errors import DataError
from dpcost.jobs import run
from dpcost.run.closing import job_errors


def test_a_message_with_line_breaks_is_one_error_line(tmp_path, capsys):
    # tarfile's ReadError lists every compression it tried, one per line
    message = "x.tgz: not a readable archive (ReadError: could not be opened:\n- method gz: bad\n- method tar: bad)"

    def body():
        raise DataError(message)

    log = tmp_path / "job.log"
    try:
        run(body, str(log), "download_table")
    except SystemExit as exc:
        assert exc.code == 1
    err = capsys.readouterr().err
    ours = [ln for ln in err.splitlines() if ln.startswith("ERROR [")]
    flat = "x.tgz: not a readable archive (ReadError: could not be opened: - method gz: bad - method tar: bad)"
    assert ours == [f"ERROR [download_table]: {flat}"]
    records = [ln for ln in log.read_text().splitlines() if " ERROR download_table: " in ln]
    assert len(records) == 1 and records[0].endswith("- method tar: bad)")
    assert job_errors(0.0, tmp_path) == [f"download_table: {flat} ({log})"]


def test_a_failed_runs_closing_block_comes_after_everything_else():
    code = textwrap.dedent("""
        import sys
        from dpcost.run.closing import print_closing
        print_closing("closing\\ndpcost: job failed: x", ok=False)
        print("WorkflowError:", file=sys.stderr)
        print_closing("the run completed", ok=True)
    """)
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr
    lines = err.strip().splitlines()
    assert lines[-1] == "dpcost: job failed: x"
    assert lines.index("WorkflowError:") < lines.index("closing")
    assert lines.index("the run completed") < lines.index("closing")  # a success is said at once
