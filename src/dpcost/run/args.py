"""The arguments of every rule's job: :func:`job_args` is behind each rule's ``job`` param (workflow/rules/*.smk read
no config key themselves). A job gets only the values it reads (:class:`dpcost.jobs.Job` hands them to it as
``job.args``): a changed key reruns the jobs that read it and no other, and the reason Snakemake gives for the rerun
(params changed) shows the key beside its old and new value."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..analysis import intervals
from ..analysis.tuning import TuningSpec
from .record import config_sha256

# the keys of a table's block that its preparation reads (dpcost.data.prepare.prepare)
PREPARATION_KEYS = (
    "response",
    "covariates",
    "categorical",
    "levels",
    "transforms",
    "y_scale",
    "test_fraction",
    "max_levels",
)
SNP_KEYS = ("accession", "label_pattern", "groups", "n_snps", "max_missing_rate", "tie_break")  # preprocess_snp's


def job_args(run, rule: str, wildcards) -> dict:
    """The arguments of the job of ``rule`` (its wildcards ``wildcards``: ``.dataset``, ``.method``, ``.part``) under
    the resolved run ``run`` (:class:`~dpcost.run.config.RunConfig`)."""
    return RULES[rule](run, wildcards)


def preparation(run, name: str) -> dict:
    """A table's preparation keys (:data:`PREPARATION_KEYS`), as its job and the start-up check read them."""
    return {k: run.config[name][k] for k in PREPARATION_KEYS if k in run.config[name]}


def estimate(run, name: str) -> dict:
    c = run.config
    return {
        "params": run.params(name),
        "m": c[name]["m"],
        "reps": c["reps"],
        "seed": c["seed"],
        "privacy": run.privacy(name).to_dict(),
    }


def tune(run, name: str, method: str) -> dict:
    """Only what the choice depends on (a change elsewhere does not rerun the tune job)."""
    return {
        "spec": run.tuning_spec(name, method),
        "params": run.params(name),
        "m": run.config[name]["m"],
        "seed": run.config["seed"],
        "privacy": run.privacy(name).to_dict(),
    }


def attack(run, name: str) -> dict:
    """The score attack's part of the estimate job's arguments: its repetitions (the first attack.reps of the
    curve's) and its cap on candidates."""
    block = run.config[name]["attack"]
    return {"reps": min(block["reps"], run.config["reps"]), "cap": block["max_candidates"]}


def benchmark(run, name: str, method: str) -> dict:
    block = {**run.config[name], "tuning_mode": run.benchmark["tuning_mode"]}
    return {
        "spec": TuningSpec.of(block, method).to_dict(),
        "block": dict(run.benchmark),
        "grid": run.config[name]["m"],
        "params": run.params(name),
        "seed": run.config["seed"],
        "privacy": run.benchmark_privacy(name).to_dict(),
    }


def inference(run, name: str, method: str | None = None, benchmarked: bool = False) -> dict:
    base = benchmark(run, name, method) if benchmarked else estimate(run, name)
    return {**base, **intervals.options(run.config[name]["inference"], method or "ols")}


def privacy_map(run, name: str, method: str) -> dict:
    block = run.config[name]
    spec = TuningSpec.of(block, method, decoys=block["map"].get("decoys"))
    return {
        "spec": spec.to_dict(),
        "grid": block["map"],
        "params": run.params(name),
        "seed": run.config["seed"],
        "privacy": run.privacy(name).to_dict(),
    }


def across_benchmark(run, value: Callable[[str], object]) -> str:
    """One value for the benchmark's figure caption: its data sets' common value, or "per data set"."""
    values = {str(value(name)) for name in run.benchmark["datasets"]}
    return values.pop() if len(values) == 1 else "per data set"


def _download(run) -> dict:
    """The download jobs' retry options (not check_sources: switching the check must not rerun a download)."""
    return {k: run.config["download"][k] for k in ("max_tries", "backoff", "timeout")}


def _sampler(run) -> str:
    return run.config.get("sampler", "exact")


def _analysis(run, w) -> dict:
    """What an analysis's collecting jobs read of its privacy: the specification and the tuning mode."""
    return {"privacy": run.privacy(w.dataset).to_dict(), "tuning_mode": run.tuning_mode(w.dataset)}


def _simulation(run) -> dict:
    block = run.config.get("simulation") or {}
    return {"calibration": block.get("calibration", run.config["calibration"])}


def _part(run, w, step: str) -> dict:
    return {"part": run.parts(w.dataset, step, w.method)[int(w.part)]}


def _estimate(run, w) -> dict:
    return {
        "tuning_spec": run.tuning_spec(w.dataset, w.method),
        **estimate(run, w.dataset),
        "attack": attack(run, w.dataset),
    }


def _libsvm(run, w) -> dict:
    return {"block": run.config[w.dataset], "calibration": run.calibration(w.dataset), "sampler": _sampler(run)}


def _benchmark(run) -> dict:
    return {"delta": run.benchmark.get("delta")} if run.benchmark else {"delta": None}


RULES: Mapping[str, Callable] = {
    # download.smk, libsvm.smk, preprocess.smk
    "download_snp": lambda run, w: {
        "accession": run.config["snp"]["accession"],
        "manual_dir": "resources/snp/manual",
        "matrix_url": run.config["snp"]["matrix_url"],
        "options": _download(run),
    },
    "download_table": lambda run, w: {
        "sources": run.config[w.dataset]["sources"],
        "content_sha256": run.config[w.dataset].get("content_sha256"),
        "reader": run.config[w.dataset].get("reader"),
        "manual_dir": f"resources/{w.dataset}/manual",
        "options": _download(run),
    },
    "download_libsvm": lambda run, w: {
        "sources": run.config[w.dataset]["sources"],
        "manual_dir": f"resources/{w.dataset}/manual",
        "options": _download(run),
    },
    "prepare_libsvm": lambda run, w: {"block": run.config[w.dataset], "seed": run.config["seed"]},
    "estimate_libsvm": lambda run, w: {
        **_libsvm(run, w),
        "seed": run.config["seed"],
        "on_invalid": run.config["on_invalid"],
    },
    "libsvm_table": _libsvm,
    "preprocess_snp": lambda run, w: {k: run.config["snp"][k] for k in SNP_KEYS},
    "preprocess_snp_logistic": lambda run, w: {
        "s": run.config["snp_logistic"]["s"],
        "fit": run.config["snp_logistic"]["truth_fit"],
    },
    "preprocess_table": lambda run, w: {
        "preparation": preparation(run, w.dataset),
        "max_m": max(run.config[w.dataset]["m"]),
        "seed": run.config["seed"],
    },
    # tune.smk, estimate.smk, aggregate.smk, attack.smk, privacy_map.smk
    "tune": lambda run, w: tune(run, w.dataset, w.method),
    "tune_part": lambda run, w: {**tune(run, w.dataset, w.method), **_part(run, w, "tune")},
    "estimate": _estimate,
    "estimate_part": lambda run, w: {**_estimate(run, w), **_part(run, w, "estimate")},
    "aggregate": _analysis,
    "plot": _analysis,
    "ledger": lambda run, w: {"m": run.config[w.dataset]["m"], "privacy": run.privacy(w.dataset).to_dict()},
    # the whole config is the job's to write: its digest reruns the job when any key changes, and a dry run's
    # reason is this one line, not the config
    "config_snapshot": lambda run, w: {"config_sha256": config_sha256(run.config)},
    "compare": lambda run, w: {"peers": run.config[w.dataset].get("peers", "never")},
    "attack": lambda run, w: {**_analysis(run, w), "alpha": run.config[w.dataset]["attack"]["alpha"]},
    "map_method": lambda run, w: privacy_map(run, w.dataset, w.method),
    "privacy_map": _analysis,
    # inference.smk, targeted.smk
    "inference_method": lambda run, w: {
        "tuning_spec": run.tuning_spec(w.dataset, w.method),
        **inference(run, w.dataset, w.method),
    },
    "inference_reference": lambda run, w: inference(run, w.dataset),
    "inference": lambda run, w: {"methods": list(run.methods[w.dataset]), **_analysis(run, w)},
    "targeted_method": lambda run, w: {
        "tuning_spec": run.tuning_spec(w.dataset, w.method),
        **estimate(run, w.dataset),
        **{k: v for k, v in run.targeted[w.dataset].items() if k != "methods"},
    },
    "targeted": lambda run, w: {"privacy": run.privacy(w.dataset).to_dict()},
    # simulation.smk
    "simulate": lambda run, w: {
        "block": run.config.get("simulation"),
        **_simulation(run),
        "on_invalid": run.config["on_invalid"],
        "sampler": _sampler(run),
        "seed": run.config["seed"],
    },
    "simulation_aggregate": lambda run, w: {"block": run.config.get("simulation")},
    "simulation_plot": lambda run, w: {
        "privacy": (run.config.get("simulation") or {}).get("privacy"),
        **_simulation(run),
        "deltas": {
            name: e["delta"]
            for name, e in (run.config.get("simulation") or {}).get("experiments", {}).items()
            if e.get("delta") is not None
        },
    },
    # benchmark.smk
    "benchmark_method": lambda run, w: benchmark(run, w.dataset, w.method),
    "benchmark_summary": lambda run, w: {
        **_benchmark(run),
        "calibration": across_benchmark(run, run.calibration),
        "tuning_mode": run.benchmark.get("tuning_mode"),
    },
    "benchmark_inference": lambda run, w: inference(run, w.dataset, w.method, benchmarked=True),
    "benchmark_inference_summary": lambda run, w: {"methods": (run.benchmark or {}).get("methods", [])},
    "benchmark_targeted_method": lambda run, w: {
        **benchmark(run, w.dataset, w.method),
        "targeted": run.benchmark_targeted[w.dataset],
    },
    "benchmark_targeted": lambda run, w: _benchmark(run),
}
