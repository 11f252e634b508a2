"""The data a run's targets need, checked at start-up before any job: that every data set not yet downloaded can be
had (:func:`check_data`: a copy on this machine or a source that answers), and that every downloaded table's
preparation succeeds (:func:`check_preparations`).

The preparation check, against the table itself.

Why here and not only in the job: Snakemake deletes a job's outputs before it reruns the job. An edit that makes a
table's preparation fail (``m`` above its rows, a column it lacks, a level it does not hold, ``log`` of a column with
zeros) would otherwise be found by ``preprocess_table`` after its finished outputs were gone, and with the old config
restored every job of the analysis would run again. Here the same function the job runs
(:func:`dpcost.data.prepare.prepare_file`, with the same arguments) runs first, on the downloaded
table, and its one-line error stops the run before any job: nothing is deleted.

Cost: one read of the used columns and one preparation per downloaded table the targets read, at every start that
runs jobs or plans them (a dry run): 1.3 s for a 337k-row, 20-column table (2 cores, Intel Xeon), well under a
second for the tables the defaults read. A table not yet downloaded is left to its jobs (nothing of it can be lost).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..analysis.streams import rng_for
from ..data import availability
from ..data.prepare import prepare_file
from ..errors import ConfigError, DownloadError, DPCostError
from .args import preparation
from .config import RunConfig
from .targets import analyses_of


def raw_table(run: RunConfig, name: str) -> Path:
    """Where the download of table ``name`` puts its raw table (workflow/rules/download.smk)."""
    return Path("resources") / run.data_of(name) / "raw.parquet"


def check_preparations(run: RunConfig, targets: Sequence[str]) -> list[str]:
    """Prepare every ``kind: table`` analysis the ``targets`` read whose table is downloaded, as its
    ``preprocess_table`` job would (:func:`dpcost.jobs.preprocess.preprocess_table`); the first that fails raises a
    :class:`~dpcost.errors.ConfigError` whose one line is prepare's (it names the key) and says that nothing ran.
    Returns the tables checked."""
    checked = []
    for name in analyses_of(run, targets):
        path = raw_table(run, name)
        if name not in run.tables or not path.is_file():
            continue
        try:
            prepare_file(
                str(path),
                preparation(run, name),
                name=name,
                max_m=max(run.config[name]["m"]),
                rng=rng_for(run.config["seed"], name, "test split"),
            )
        except DPCostError as exc:
            raise ConfigError(
                f"{exc} (checked at start-up against {path}, before any job ran: nothing was deleted)"
            ) from None
        checked.append(name)
    return checked


def download_outputs(run: RunConfig, data: str) -> tuple[str, ...]:
    """What the download job of a data set writes (workflow/rules/download.smk, libsvm.smk): when these are there,
    the run needs no network for it."""
    if data in run.libsvm:
        return (f"resources/{data}/download.json",)
    return tuple(f.format(name=data) for f in run.analysis(data).downloads)


def downloads_needed(run: RunConfig, targets: Sequence[str]) -> tuple[str, ...]:
    """The data sets the targets need whose download has not been made (its outputs are not there)."""
    data = dict.fromkeys(run.data_of(name) for name in analyses_of(run, targets))
    return tuple(d for d in data if not all(Path(p).is_file() for p in download_outputs(run, d)))


def wanted(run: RunConfig, data: str) -> availability.Wanted | None:
    """A data set with no copy on this machine and what to ask the network (None: a copy is here)."""
    manual = f"resources/{data}/manual"
    if data in run.libsvm:
        return availability.libsvm_wanted(data, run.config[data]["sources"], manual)
    return run.analysis(data).wanted(data, run.config[data], manual)


def check_data(run: RunConfig, targets: Sequence[str], **ask) -> None:
    """Stop the run before any job when data the targets need can be had neither from this machine nor from the
    network: one :class:`~dpcost.errors.DownloadError` naming every such data set, why, and what fixes it.
    Downloads already made are not asked about (a rerun touches no network); ``ask``: the time-out of
    :func:`dpcost.data.availability.unreachable` (and its ``get``, for tests)."""
    asked = [w for d in downloads_needed(run, targets) if (w := wanted(run, d)) is not None]
    failing = availability.unreachable(asked, **ask)
    if not failing:
        return
    lines = [
        f"missing data: the targets need {len(failing)} data set{'s' * (len(failing) > 1)} that can be "
        "neither found on this machine nor downloaded (checked at start-up, before any job ran):"
    ]
    lines += [f"  {w.name}: {failing[w.name]}. Fix: {w.fix}" for w in asked if w.name in failing]
    lines += _leave_out(run, set(failing), targets)
    lines.append(
        'Without internet: docs/usage.md, "Running without internet" (copies in these folders, or an '
        "offline config with `path:` sources). This check: `download.check_sources`."
    )
    raise DownloadError("\n".join(lines))


def _leave_out(run: RunConfig, missing: set[str], targets: Sequence[str]) -> list[str]:
    """How to run without the missing data: the lists the targets read, without the analyses that need them."""
    out = []
    lists = [("datasets", list(run.config["datasets"]), not targets or "all" in targets)]
    if run.benchmark:
        lists.append(
            (
                "benchmark.datasets",
                list(run.benchmark["datasets"]),
                bool({"benchmark", "benchmark_summary"} & set(targets)),
            )
        )
    for key, names, read in lists:
        lost = [n for n in names if run.data_of(n) in missing]
        if read and lost:
            rest = [n for n in names if n not in lost]
            if rest:
                out.append(f"Or run without {', '.join(lost)}: `{key}: [{', '.join(rest)}]`")
            else:
                out.append(f"(Leaving them out is no way round: every analysis of `{key}` needs one of them.)")
    return out
