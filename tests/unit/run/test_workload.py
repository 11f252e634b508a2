"""The start-up estimate of a run's work (dpcost.run.workload): the jobs it counts (every step the run's targets
make), what each job does — fits and rows, growing with the design's width d as each method's measured cost says —
and when it warns."""

import json

import pytest
import yaml
from snakemake.utils import update_config, validate

from dpcost.estimators.cost import Cost
from dpcost.estimators.registry import METHODS
from dpcost.run import targets, workload
from dpcost.run.startup import start

from support import REPO

DEFAULT = yaml.safe_load((REPO / "config/config.yaml").read_text())
BENCHMARK = yaml.safe_load((REPO / "config/presets/benchmark.yaml").read_text())


def _run(*overrides):
    """The run the workflow resolves at start-up (its intervals' and targeted attacks' facts included)."""
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    for extra in overrides:
        update_config(config, extra)
    return start(config, lambda c: validate(c, str(REPO / "workflow/schemas/config.schema.yaml")), run_checks=False)


LEAN = {
    "methods": ["ols", "adassp"],
    "m": [1000, 2000],
    "map": {"epsilon": [1.0, 2.0], "m": [1000], "reps": 3, "methods": ["ols", "adassp"]},
    "inference": {"enabled": False},
    "targeted": {"enabled": False},
    "tuning_mode": "fixed",
    "peers": "never",
    "attack": {"reps": 5},
}


def _jobs(work):
    return {job.name: job for job in work.jobs}


def test_a_lean_analysis_counts_each_job_and_its_fits(tmp_path):
    work = workload.of_run(_run({"datasets": ["housing"], "reps": 10, "housing": LEAN}), [], root=tmp_path)
    assert work.shapes == {"housing": workload.Shape(20640, 5, True)}  # housing's size and covariates are known
    jobs = _jobs(work)
    book = ["aggregate", "plot", "ledger", "attack", "report_analysis", "compare", "report_comparison"]
    assert set(jobs) == {
        *(f"{rule}_housing" for rule in ["download", "preprocess", *book, "privacy_map", "report_map"]),
        *(f"{step}_housing_{k}" for step in ("estimate", "map") for k in ("ols", "adassp")),
        "config_snapshot",
    }
    est = jobs["estimate_housing_adassp"].amounts
    rows = 10 * (1000 + 2000)
    assert (est["adassp.plan"], est["adassp.fit"], est["adassp.a"]) == (2, 20, rows)
    assert (est["adassp.b"], est["adassp.c"]) == (rows * 5, rows * 25)
    assert est["predict"] == 10 * (19640 + 18640) * 5  # the rows outside each subsample, scored
    assert est["attack"] == 5 * 2 and est["load"] == 20640 * 5 and est["start"] == 1
    assert "ols.plan" not in jobs["estimate_housing_ols"].amounts  # a non-private method makes no plan
    # the map: OLS once, AdaSSP at each of its 2 epsilons, 3 repetitions of m = 1000
    assert jobs["map_housing_ols"].amounts["ols.fit"] == 3
    assert jobs["map_housing_adassp"].amounts["adassp.fit"] == 2 * 3
    # every job's CPU is its amounts at the measured coefficients; the steps and the total are their sums
    c = workload.cost("adassp")
    assert jobs["estimate_housing_adassp"].cpu == pytest.approx(
        workload.COEFFICIENTS["start"] + workload.COEFFICIENTS["load"] * 20640 * 5 + 2 * c.plan + c.fits(20, rows, 5)
        + workload.COEFFICIENTS["predict"] * est["predict"] + workload.COEFFICIENTS["attack"] * 10
        + workload.COEFFICIENTS["attack_row"] * est["attack_row"]
    )  # fmt: skip
    assert work.cpu == pytest.approx(sum(work.seconds.values())) == pytest.approx(sum(j.cpu for j in work.jobs))
    # twice the repetitions: twice the estimate's fits, the attack's unchanged
    twice = _jobs(workload.of_run(_run({"datasets": ["housing"], "reps": 20, "housing": LEAN}), [], root=tmp_path))
    assert twice["estimate_housing_adassp"].amounts["adassp.fit"] == 2 * est["adassp.fit"]
    assert twice["estimate_housing_adassp"].amounts["attack"] == est["attack"]


def test_a_fit_costs_what_its_method_s_measured_polynomials_in_d_say():
    """Cost per fit fit + e·d² and per row a + b·d + c·d²: an estimate job's fits at d = 50 cost what the polynomials
    say against d = 5, and more for every method whose cost grows with d."""
    run = _run({"datasets": ["housing"], "reps": 10, "housing": {**LEAN, "methods": list(DEFAULT["table_defaults"][
        "methods"])}})  # fmt: skip
    narrow, wide = workload.Work(), workload.Work()
    workload.regression_work(run, "housing", workload.Shape(20640, 5, True), narrow)
    workload.regression_work(run, "housing", workload.Shape(20640, 50, True), wide)
    rows = 10 * 3000

    def fitting(work, k):  # the CPU of the estimate job's fits of method k
        amounts = _jobs(work)[f"estimate_housing_{k}"].amounts.items()
        return sum(workload.coefficient(t) * a for t, a in amounts if t.startswith(f"{k}.") and t != f"{k}.plan")

    for k in run.methods["housing"]:
        c = workload.cost(k)
        fits = {5: fitting(narrow, k), 50: fitting(wide, k)}
        assert fits[50] - fits[5] == pytest.approx(c.fits(20, rows, 50) - c.fits(20, rows, 5))  # 10 reps x 2 m
        assert fits[50] > fits[5] or (c.b, c.c, c.e) == (0, 0, 0), k
    assert wide.seconds["estimate"] > narrow.seconds["estimate"] and wide.cpu > narrow.cpu


def test_every_regression_method_and_peer_has_a_measured_cost():
    table_methods = [*DEFAULT["table_defaults"]["methods"], "diffprivlib", "opendp_ssp"]
    assert all(isinstance(METHODS[k].cost, Cost) for k in table_methods), [k for k in table_methods
                                                                           if METHODS[k].cost is None]  # fmt: skip


def test_every_part_of_every_analysis_the_targets_make_is_counted(tmp_path):
    """Each optional part an analysis makes (dpcost.run.targets.parts) has its jobs in the estimate, and every method
    its estimate job (and its tune job where its tuning looks at data)."""
    run = _run({"datasets": ["housing", "snp"]})
    jobs = _jobs(workload.of_run(run, [], root=tmp_path))
    step = {"comparison": "compare", "privacy_map": "map", "inference": "inference", "targeted": "targeted"}
    assert targets.parts(run, "housing") == tuple(step)
    for part in targets.parts(run, "housing"):
        assert any(name.startswith(f"{step[part]}_housing") for name in jobs), part
    for k in run.methods["housing"]:
        assert f"estimate_housing_{k}" in jobs
        assert (f"tune_housing_{k}" in jobs) == run.tunes("housing", k)
    for k in run.inference["housing"]:
        assert jobs[f"inference_housing_{k}"].amounts[f"{k}.fit"] > 0
    assert "inference_reference_housing" in jobs and "targeted_housing" in jobs
    # the default splits precond_gd's decoy search over 3 jobs, each a third of the m grid, and joins them
    parts = [jobs[f"tune_housing_precond_gd.{i}"].amounts["precond_gd.plan"] for i in range(3)]
    assert "tune_housing_precond_gd" in jobs and len(parts) == 3 and parts[0] > 0
    assert not any(name.startswith("snp") for name in jobs) or "snp_0" in jobs  # SNP: its jobs' start only
    assert workload.of_run(run, ["results/config_used.yaml"], root=tmp_path).seconds.keys() == {
        "tables, figures and report"
    }  # the configuration's snapshot alone


def test_a_table_s_size_comes_from_its_record_else_its_rows_here_else_its_config(tmp_path):
    table = {"kind": "table", "sources": [{"url": "https://example.org/t.csv"}], "response": "y", "m": [100, 1000]}
    run = _run({"datasets": ["t"], "t": table})
    assert workload.shape(run, "t", tmp_path) == workload.Shape(workload.DEFAULT_N, workload.DEFAULT_D, False)
    assert "t n = 100,000, d = 20 (assumed)" in workload.describe(workload.of_run(run, [], root=tmp_path), 2)
    # covariates and levels declared: d from them (a categorical column counts its levels but the first)
    declared = {**table, "covariates": ["x", "g"], "levels": {"g": ["a", "b", "c"]}}
    assert workload.shape(_run({"datasets": ["t"], "t": declared}), "t", tmp_path).d == 3
    # a table on this machine: its complete rows, a text column its levels but the first, a numeric one one column
    rows = "y,x,g,k\n" + "".join(f"{i},{i % 7},{'abcd'[i % 4]},{i % 3}\n" for i in range(50)) + "1,,a,1\n"
    (tmp_path / "t.csv").write_text(rows)
    local = {**table, "sources": [{"path": "t.csv"}], "categorical": ["k"], "m": [10, 20]}
    assert workload.shape(_run({"datasets": ["t"], "t": local}), "t", tmp_path) == workload.Shape(50, 1 + 3 + 2, True)
    # the preparation's record: the rows the subsamples are drawn from, and the design's columns
    (tmp_path / "results/t").mkdir(parents=True)
    meta = {"n": 5000, "n_train": 4000, "covariates": [f"x{j}" for j in range(7)]}
    (tmp_path / "results/t/preprocessing.json").write_text(json.dumps(meta))
    assert workload.shape(run, "t", tmp_path) == workload.Shape(4000, 7, True)


def test_targeted_releases_from_sums_count_their_gram_and_a_refit_counts_its_rows(tmp_path):
    """OLS's and AdaSSP's shadow releases come from the Gram of each subsample, AdaSSP's each one of its fits of no
    rows (its noise and solve); each evaluation of its matching reconstruction (that release without noise) an
    ``evaluation`` at d²; precond_gd's are refits of m rows, as are its reconstruction's."""
    target = {"enabled": True, "methods": ["ols", "adassp", "precond_gd"], "k_top": 1, "k_random": 1, "shadows": 10,
              "test_releases": 20, "m": None, "reconstruction_nfev": 4}  # fmt: skip
    block = {**LEAN, "methods": ["ols", "adassp", "precond_gd"], "targeted": target}
    jobs = _jobs(workload.of_run(_run({"datasets": ["housing"], "housing": block}), [], root=tmp_path))
    releases = 2 * (10 + 20) * (1 + 1)  # per m: 2 sides x (shadows + test releases) x targets
    ols, adassp, gd = (jobs[f"targeted_housing_{k}"].amounts for k in ("ols", "adassp", "precond_gd"))
    assert ols["release"] == adassp["release"] == 2 * releases  # at the smallest and largest m, 1000 and 2000
    assert ols["gram_a"] == adassp["gram_a"] == releases * (1000 + 2000) and "ols.fit" not in ols
    evals = 2 * 2 * 4 * (5 + 3)  # per m: targets x 2 starts x nfev x (d + 3)
    assert adassp["adassp.fit"] == 2 * releases and adassp["adassp.e"] == 2 * releases * 25
    assert adassp["evaluation"] == 2 * evals and adassp["evaluation_d2"] == 2 * evals * 25
    assert "evaluation" not in ols and "evaluation" not in gd  # OLS is reconstructed in closed form
    assert "gram_a" not in gd and gd["precond_gd.a"] == (releases + evals) * (1000 + 2000)


def test_shadows_by_blocks_still_count_a_private_methods_releases_and_reconstruction():
    """Above BLOCK_FROM rows the shadows' Grams come from block sums, and AdaSSP's releases from them and its
    reconstruction's evaluations are counted as on the row path (they were once left out there)."""
    args = {"targeted_m": [100_000], "k_top": 1, "k_random": 1, "shadows": 10, "test_releases": 20,
            "reconstruction_nfev": 4}  # fmt: skip
    s = workload.Shape(1_000_000, 5, True)
    job = workload.Job("targeted_t_adassp", "targeted attacks")
    workload.targeted_job(job, "adassp", args, s, private=True)
    releases, evals = 2 * 2 * (10 + 20), 2 * 2 * 4 * (5 + 3)
    q, r = divmod(100_000, workload.block_size(1_000_000, 100_000))
    assert job.amounts["gram_a"] == 1_000_000 + releases * (q * 7 + r)  # the blocks' Grams once, then per shadow
    assert job.amounts["adassp.fit"] == releases and job.amounts["evaluation"] == evals


def test_a_run_of_hours_is_warned_about_with_its_knobs_and_a_short_one_is_not(tmp_path):
    big = workload.of_run(_run(BENCHMARK, {"datasets": ["flights"], "reps": 1000}), [], root=tmp_path)
    text = workload.warning(big, 2)
    assert text is not None and "h " in text and "reps" in text and "targeted.m" in text
    assert workload.warning(big, 10_000) is None  # on enough cores it is not hours
    small = workload.of_run(_run({"datasets": ["housing"], "reps": 10, "housing": LEAN}), [], root=tmp_path)
    assert workload.warning(small, 2) is None
    assert workload.describe(small, 2).startswith("about ") and "on 2 cores" in workload.describe(small, 2)


def test_the_estimate_is_scaled_by_the_machine_speed_the_probe_reads(tmp_path, monkeypatch):
    """speed_now: the geometric mean of the probe's two timings over their references, clamped to SPEED_RANGE; a
    Work at speed s has s times the CPU, wall time and steps' seconds, and its line says so."""
    ref = workload.PROBE_REFERENCE

    def probe(factor_python, factor_numpy):  # _least's timing of each part, the python loop's first
        return lambda fn, runs: factor_python * ref["python"] if "loop" in fn.__name__ else factor_numpy * ref["numpy"]

    monkeypatch.setattr(workload, "_least", probe(1.0, 4.0))
    assert workload.speed_now() == pytest.approx(2.0)  # sqrt(1 x 4)
    for factor, expected in ((100.0, 3.0), (0.01, 1 / 3)):  # a probe far off is clamped
        monkeypatch.setattr(workload, "_least", probe(factor, factor))
        assert workload.speed_now() == pytest.approx(expected)
    monkeypatch.undo()
    assert workload.SPEED_RANGE[0] <= workload.speed_now(runs=1) <= workload.SPEED_RANGE[1]  # the real probe
    work = workload.of_run(_run({"datasets": ["housing"], "reps": 10, "housing": LEAN}), [], root=tmp_path)
    cpu, steps = work.cpu, dict(work.seconds)
    assert "this machine now" not in workload.describe(work, 2)
    work.speed = 0.5
    assert work.cpu == pytest.approx(cpu / 2) and work.wall(2) == pytest.approx(cpu / 4)
    assert work.seconds == pytest.approx({k: v / 2 for k, v in steps.items()})
    assert "; this machine now 0.50x the fitted one's time)" in workload.describe(work, 2)


def test_the_benchmark_counts_every_table_method_and_epsilon(tmp_path):
    run = _run(BENCHMARK)
    work = workload.of_run(run, ["benchmark"], root=tmp_path)
    b = BENCHMARK["benchmark"]
    jobs = _jobs(work)
    assert {f"benchmark_{n}_{k}" for n in b["datasets"] for k in b["methods"]} <= set(jobs)
    # every table downloaded and prepared once, housing too (the benchmark's own tables are no analysis of the run)
    assert {f"{rule}_{n}" for n in b["datasets"] for rule in ("download", "preprocess")} <= set(jobs)
    both = workload.of_run(_run(BENCHMARK, {"datasets": ["flights"]}), ["all", "benchmark"], root=tmp_path)
    assert [job.name for job in both.jobs if job.name.endswith("_flights")].count("download_flights") == 1
    assert "estimate_flights_ols" in _jobs(both)  # the analysis of flights is in it, beside the benchmark
    for n in b["datasets"]:
        m = max(BENCHMARK.get(n, DEFAULT.get(n, {})).get("m") or DEFAULT["housing"]["m"])
        eps = len(b["epsilon"])
        assert jobs[f"benchmark_{n}_adassp"].amounts["adassp.a"] == eps * b["reps"] * m
        assert jobs[f"benchmark_{n}_ols"].amounts["ols.a"] == b["reps"] * m  # once: it has no epsilon
    assert set(work.shapes) == set(b["datasets"])
