"""dpcost.run.record: what a run was given, and whether a report describes that run (the workflow's use of it:
tests/integration/test_workflow.py)."""

import json
import shlex
from types import SimpleNamespace

import pytest

from dpcost.run import record as run_record
from dpcost.run.record import Given, record, report_problem


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--cores", "2"], None),
        (["--report"], "results/report.html"),
        (["--report", "out/r.zip", "--cores", "1"], "out/r.zip"),
        (["--report=out/r.html"], "out/r.html"),
        (["--report", "all"], "results/report.html"),  # a target after it, not a path
        (["--reporter", "html"], "results/report.html"),
        (["--report", "r.html", "--report-after-run"], None),  # a run that writes its report after
    ],
)
def test_a_report_on_the_command_line(argv, expected):
    assert run_record.requested_report(argv) == expected  # no Snakemake up the stack here: the command line


def _as_snakemake_cli(args, argv):
    """requested_report called while snakemake.cli.args_to_api(args, …) reads the workflow."""
    scope = {"__name__": "snakemake.cli", "requested_report": run_record.requested_report, "argv": argv}
    exec("def args_to_api(args, parser):\n    return requested_report(argv)", scope)
    return scope["args_to_api"](args, None)


def test_snakemakes_own_arguments_come_first():
    args = dict(reporter="html", report="r.html", report_after_run=False, containerize=None, lint=False)
    assert _as_snakemake_cli(SimpleNamespace(**args), ["--cores", "1"]) == "r.html"
    # a profile's `report:` is in the parsed arguments only; a run, whatever the command line says
    assert _as_snakemake_cli(SimpleNamespace(**{**args, "report_after_run": True}), ["--report"]) is None
    assert _as_snakemake_cli(SimpleNamespace(**{**args, "reporter": None}), ["--report"]) is None


def _given(files=(), args=(), overwrite=None, default=None, replace=False):
    """``default``: the workflow's own config file as read (None: there is none)."""
    return Given.of(files, args, overwrite or {}, default, replace=replace)


def test_the_digest_is_the_merged_configuration():
    default = {"reps": 100, "housing": {"m": [1, 2], "peers": "auto"}}
    plain = _given(default=default)
    # the workflow's own file given again as --configfile: the same configuration, other flags
    again = _given(["/x/config.yaml"], overwrite=default, default=default)
    assert again.digest == plain.digest and again.flags() != plain.flags()
    # merged key by key at every depth, as Snakemake does
    over = _given(["/x/o.yaml"], overwrite={"housing": {"peers": "never"}}, default=default)
    assert over.digest == _given(default={"reps": 100, "housing": {"m": [1, 2], "peers": "never"}}).digest
    assert over.digest != plain.digest
    assert _given(default=default, replace=True).digest == _given().digest


def test_no_record_or_the_same_configuration_is_no_problem(tmp_path):
    given = _given(["/x/a.yaml"], overwrite={"reps": 2})
    path = tmp_path / "results/run.json"
    assert report_problem(path, given) is None
    record(path, given, [])
    assert report_problem(path, given) is None and not list(path.parent.glob("*.tmp"))
    assert json.loads(path.read_text())["configfiles"] == ["/x/a.yaml"]
    path.write_text("{not json")
    assert report_problem(path, given) is None  # a record of another shape is not compared


def test_another_configuration_names_the_runs_flags_and_targets(tmp_path):
    path = tmp_path / "results/run.json"
    ran = _given(["/x/a b.yaml", "/x/c.yaml"], ["reps=3"], overwrite={"reps": 3})
    record(path, ran, ["benchmark"])
    problem = report_problem(path, _given(), "out/r.html")
    assert "\n" not in problem and "/x/a b.yaml" in problem
    assert shlex.split(problem.split("rerun as: ", 1)[1]) == [
        "snakemake", "benchmark", "--report", "out/r.html", "--configfile", "/x/a b.yaml", "/x/c.yaml",
        "--config", "reps=3",
    ]  # fmt: skip


def test_an_edited_config_file_is_named(tmp_path):
    path = tmp_path / "results/run.json"
    record(path, _given(["/x/a.yaml"], overwrite={"reps": 3}), [])
    problem = report_problem(path, _given(["/x/a.yaml"], overwrite={"reps": 4}))
    assert problem.startswith("the configuration changed since the run started") and "--configfile /x/a.yaml" in problem


def test_the_record_imports_the_standard_library_alone():
    """The workflow reads it before its config, and before checking that the dependencies are installed
    (workflow/rules/preflight.smk): importing it imports nothing outside the standard library and dpcost.run."""
    import subprocess
    import sys

    code = "import sys; b = set(sys.modules); import dpcost.run.record; print(sorted(set(sys.modules) - b))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert {m.strip("[',]").split(".")[0] for m in out} - set(sys.stdlib_module_names) <= {"dpcost"}, out
