"""What a run makes: the one model of its outputs. The workflow's targets (``all``, ``simulation``, ``benchmark``:
:func:`outputs`) list these files and report pages; what Snakemake's targets ask for (:func:`asked`: which analyses,
the benchmark's tables, the simulation study) is read by the start-up checks (:mod:`.data_check`), the work estimate
(:mod:`.workload`) and the closing lines (:mod:`.closing`) alike. An analysis makes its own files, and the optional
parts its config turns on (:func:`parts`); each part has its report page."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from ..analysis import datasets

# every m-grid analysis: its tables, figures, ledger and the score attack
ANALYSIS = (
    "errors.parquet",
    "summary.csv",
    "error_curves.png",
    "error_curves.pdf",
    "error_curves_all.png",
    "error_curves_all.pdf",
    "privacy_ledger.json",
    "attack.csv",
    "attack.png",
    "attack.pdf",
)
# the optional parts of an analysis, each with its report page (results/<name>/report/<part>.html)
PARTS = {
    "comparison": ("comparison.csv",),
    "privacy_map": (
        "privacy_map.csv",
        "privacy_map_ratios.csv",
        "epsilon_needed.csv",
        "privacy_map.png",
        "privacy_map.pdf",
    ),
    "inference": ("inference.csv", "inference.parquet", "inference.png", "inference.pdf"),
    "targeted": ("targeted.csv", "targeted.png", "targeted.pdf"),
}
PAGES = ("headline", "summary", "attack", "ledger", "provenance")  # every analysis's report pages
LIBSVM = (
    "preparation.json",
    "errors.parquet",
    "table.csv",
    "table.png",
    "table.pdf",
    "privacy_ledger.json",
    "resources.csv",
)
BENCHMARK = (
    "errors.parquet",
    "summary.csv",
    "wins.csv",
    "benchmark.png",
    "benchmark.pdf",
    "benchmark_heatmap.png",
    "benchmark_heatmap.pdf",
)
SIMULATION = ("errors.parquet", "summary.csv", "rates.csv", "privacy_ledger.json")


class Asked(NamedTuple):
    """What Snakemake's targets ask for: the analyses (LIBSVM studies included, or a data set's download), the
    benchmark's tables, and whether the simulation study."""

    own: tuple[str, ...]
    benched: tuple[str, ...]
    simulation: bool


def parts(run, name: str) -> tuple[str, ...]:
    """The optional parts (:data:`PARTS`) an analysis of the run makes."""
    made = {
        "comparison": run.analysis(name).comparison,
        "privacy_map": bool(run.config[name].get("map")),
        "inference": name in run.inference,
        "targeted": name in run.targeted,
    }
    return tuple(part for part in PARTS if made[part])


def making(run, part: str) -> list[str]:
    """The analyses of the run that make the optional ``part`` (a rule's wildcard constraint)."""
    return [name for name in run.analyses if part in parts(run, name)]


def analysis_files(run, name: str) -> list[str]:
    """Every file of an analysis (or LIBSVM study) of the run, its report pages included."""
    if name in run.libsvm:
        return [f"results/{name}/{f}" for f in LIBSVM]
    made = parts(run, name)
    files = [*ANALYSIS, *(f for part in made for f in PARTS[part])]
    return [f"results/{name}/{f}" for f in files] + [f"results/{name}/report/{p}.html" for p in (*PAGES, *made)]


def benchmark_files(run) -> list[str]:
    """The benchmark's tables, figures and report pages (none when the config has no benchmark)."""
    if not run.benchmark:
        return []
    names = [*BENCHMARK, *(("inference.csv", "inference.parquet") if run.benchmark_inference else ())]
    names += [*PARTS["targeted"], "targeted.parquet"] if run.benchmark_targeted else []
    pages = ("headline", "summary", "wins", *(("inference",) if run.benchmark_inference else ()))
    return [f"results/benchmark/{n}" for n in names] + [f"results/benchmark/report/{p}.html" for p in pages]


def study_runs(run, name: str, ext: str) -> list[str]:
    """The files of a LIBSVM study's jobs (``ext``: parquet, plans.json), one per method."""
    return [f"results/{name}/runs/{method}.{ext}" for method in run.config[name]["methods"]]


def map_tables(run, name: str) -> list[str]:
    """The tables of an analysis's privacy-map jobs, one per method of its map."""
    return [f"results/{name}/map/{method}.parquet" for method in run.config[name]["map"]["methods"]]


def simulation_runs(run, ext: str) -> list[str]:
    """The files of the simulation study's jobs (``ext``: parquet, plans.json), one per (experiment, n, run)."""
    jobs = run.simulation.jobs() if run.simulation else []
    return [f"results/simulation/runs/{e}/n{n}_reps{a}-{b}.{ext}" for e, n, a, b in jobs]


def simulation_files(run) -> list[str]:
    """The simulation study's tables, ledger and figures (none when the config has no simulation)."""
    if not run.simulation:
        return []
    figures = sorted({e.figure for e in run.simulation.experiments.values()})
    names = [*SIMULATION, *(f"fig{k}.{ext}" for k in figures for ext in ("png", "pdf"))]
    return [f"results/simulation/{n}" for n in names]


def outputs(run, target: str = "all") -> list[str]:
    """The files a rule target of the workflow makes: ``all`` (the default: every analysis and LIBSVM study of
    ``datasets``, and the configuration used), ``simulation`` or ``benchmark``."""
    if target == "simulation":
        return simulation_files(run)
    if target == "benchmark":
        return benchmark_files(run)
    return ["results/config_used.yaml", *(f for name in asked(run, [target]).own for f in analysis_files(run, name))]


def asked(run, targets: Sequence[str]) -> Asked:
    """What Snakemake's ``targets`` (rule names or files; none is the default target, ``all``) ask for. A target this
    cannot place (a log, a rule of another workflow) asks for none."""
    bench = tuple(run.benchmark["datasets"]) if run.benchmark else ()
    known = {*run.analyses, *run.libsvm, *run.tables, *datasets.ANALYSES}
    own: list[str] = []
    benched: list[str] = []
    simulation = False
    for target in targets or ["all"]:
        path = Path(target).parts
        where = next((k for k, p in enumerate(path) if p in ("results", "resources")), None)
        name = path[where + 1] if where is not None and len(path) > where + 1 else None
        if target == "all":
            own += [*run.analyses, *run.libsvm]
        elif target in ("benchmark", "benchmark_summary"):
            benched += bench
        elif target.startswith("download_") and target[len("download_") :] in datasets.ANALYSES:
            own.append(target[len("download_") :])  # a built-in data set's own download rule (download_snp)
        elif target == "simulation" or name == "simulation":
            simulation = True
        elif name == "benchmark":
            runs = path[where + 2 : where + 4]
            benched += [runs[1]] if len(runs) == 2 and runs[0] in ("runs", "inference", "targeted") else bench
        elif name in known:
            own.append(name)
    return Asked(tuple(dict.fromkeys(own)), tuple(dict.fromkeys(benched)), simulation)


def analyses_of(run, targets: Sequence[str]) -> tuple[str, ...]:
    """The analyses (LIBSVM studies and the benchmark's tables included) whose outputs the ``targets`` ask for."""
    own, benched, _ = asked(run, targets)
    return tuple(dict.fromkeys([*own, *benched]))
