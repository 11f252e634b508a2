"""The small test configuration (.test/config.yaml) runs the whole workflow — both analyses, every method — from
loopback mirrors, with housing sources written as {url, format, sha256} (the file name derived from the format)."""

import json
import re

import pandas as pd
import pytest
import yaml

from geo_synth import make_series, write_series_matrix
from support import REPO, LoopbackServer
from workflow_runner import run_workflow

pytestmark = pytest.mark.e2e

SMALL = yaml.safe_load((REPO / ".test/config.yaml").read_text())
NAME = "GSE106818_series_matrix.txt.gz"


@pytest.fixture(scope="module")
def run(housing_archives, tmp_path_factory):
    d = tmp_path_factory.mktemp("small")
    series = make_series(n_snps=400, n_average=241, n_low=146, missing_rate=0.0, seed=11, signal=10, shift=0.3)
    snp = write_series_matrix(d / "m.gz", series, "ab").read_bytes()
    with LoopbackServer() as srv:
        srv.add("/h/houses.zip", housing_archives["statlib"][0])
        srv.add("/s/", f'<a href="{NAME}">{NAME}</a>'.encode())
        srv.add("/s/" + NAME, snp)
        override = {
            "download": {"max_tries": 2, "backoff": 0.0, "timeout": 10},
            "housing": {
                "sources": [
                    {"url": srv.base + "/h/houses.zip", "format": "statlib", "sha256": housing_archives["statlib"][1]}
                ],
                "peers": "always",
            },
            "snp": {"matrix_url": srv.base + "/s/"},
        }
        res = run_workflow(d / "run", override, small=True)
    assert res.returncode == 0, res.stderr[-3000:]
    return d / "run"


def test_every_output_of_both_analyses(run):
    from dpcost.analysis.datasets import ANALYSES
    from dpcost.estimators.registry import methods_of

    assert (run / "resources/housing/houses.zip").exists()  # the name derived from the format
    for dataset in ("housing", "snp"):
        errors = pd.read_parquet(run / f"results/{dataset}/errors.parquet")
        methods = set(methods_of(ANALYSES[dataset].family))
        assert set(errors.method) == methods, dataset  # every method of the registry, peers included
        assert len(errors) == len(methods) * len(SMALL[dataset]["m"]) * SMALL["reps"]
        ledger = json.loads((run / f"results/{dataset}/privacy_ledger.json").read_text())
        assert set(ledger["methods"]) == methods
        ledger_methods = sorted(k for k in methods if methods_of(ANALYSES[dataset].family)[k].private)
        expected = "decoy" if dataset == "housing" else "fixed"
        registry = methods_of(ANALYSES[dataset].family)
        # each private method under the analysis's mode, the tuning-free ones as none (no constant looked at data)
        modes = {k: t["mode"] for k, t in ledger["tuning"].items()}
        assert modes == {k: "none" if registry[k].tuning_free else expected for k in ledger_methods}
        assert dataset == "snp" or {"boosted_adassp", "hessian_mixing", "tukey_em"} <= set(ledger_methods)
        for name in ("summary.csv", "error_curves.png", "error_curves.pdf", "error_curves_all.png", "privacy_map.png"):
            assert (run / f"results/{dataset}" / name).stat().st_size > 0
        # the map: every cell of (epsilon, m), the best private method over the best non-private one, the eps needed
        ratios = pd.read_csv(run / f"results/{dataset}/privacy_map_ratios.csv")
        cells = {(e, m) for e in SMALL[dataset]["map"]["epsilon"] for m in SMALL[dataset]["map"]["m"]}
        assert set(zip(ratios.epsilon, ratios.m, strict=True)) == cells and (ratios.ratio > 0).all()
        needed = pd.read_csv(run / f"results/{dataset}/epsilon_needed.csv", keep_default_na=False)
        assert list(needed.m) == SMALL[dataset]["map"]["m"]
        assert not (needed == "").any().any()  # "not reached" where the grid does not reach, never an empty cell
        # a tune job where the tuning looks at data (a decoy search), with its record; none for the config's
        # constants, whose record the estimate job made (the ledger's, above)
        tuned = {k for k in ledger_methods if (run / f"results/{dataset}/tuning/{k}.json").exists()}
        assert tuned == ({k for k in ledger_methods if modes[k] == "decoy"} if dataset == "housing" else set())
        for k in tuned:
            assert json.loads((run / f"results/{dataset}/tuning/{k}.json").read_text())["mode"] == "decoy"
        # delta = 10/n^1.1 >= 1/n at the first m: in the ledger and in the ledger job's log (not at start-up)
        assert any(note.startswith("PRIVACY WARNING: delta=") for note in ledger["notes"])
        assert "PRIVACY WARNING: delta=" in (run / f"logs/{dataset}/ledger.log").read_text()
        # every row says under which setting it was computed, delta resolved at its m
        summary = pd.read_csv(run / f"results/{dataset}/summary.csv")
        private = summary[summary.private]
        assert set(private.calibration) == {"tight"}
        assert dict(zip(private.method, private.tuning_mode, strict=True)) == modes  # the mode each ran under
        assert private.delta.to_numpy() == pytest.approx(10 / private.m.to_numpy() ** 1.1, rel=1e-5)  # %.6g
        assert summary[~summary.private].epsilon.isna().all()
    comparison = pd.read_csv(run / "results/housing/comparison.csv", keep_default_na=False)
    assert len(comparison) == len(methods_of("regression")) * 3  # every housing method, peers included, at 3 m
    assert {"epsilon", "delta", "calibration", "tuning_mode"} <= set(comparison.columns)
    assert (comparison.note == "").all()  # peers: always, so diffprivlib ran at every m


def test_every_analysis_has_its_attack_and_the_logistic_branch_runs(run):
    from dpcost.analysis.datasets import ANALYSES
    from dpcost.estimators.registry import methods_of

    for dataset in ("housing", "snp", "snp_logistic"):
        attack = pd.read_csv(run / f"results/{dataset}/attack.csv")
        assert set(attack.method) == set(methods_of(ANALYSES[dataset].family)), dataset
        assert list(attack.m.unique()) == SMALL[dataset]["m"] and (attack.n_reps == 2).all()  # attack.reps
        assert (run / f"results/{dataset}/attack.png").stat().st_size > 0
    errors = pd.read_parquet(run / "results/snp_logistic/errors.parquet")
    assert len(errors) == 2 * len(SMALL["snp_logistic"]["m"]) * SMALL["reps"]


# Wang (2018)'s family and the comparators (moved here from a workflow run of their own in test_workflow.py: this run
# has every housing method, so the same checks need no second run)
NEW_METHODS = ["ops", "adaops", "objpert", "noisy_sgd", "sheffet_jl"]


def test_wang_family_and_comparators_run_in_the_workflow(run):
    errors = pd.read_parquet(run / "results/housing/errors.parquet")
    errors = errors[errors.method.isin(NEW_METHODS)]
    assert sorted(errors.method.unique()) == sorted(NEW_METHODS) and errors.error.notna().all()
    assert len(errors) == len(NEW_METHODS) * len(SMALL["housing"]["m"]) * SMALL["reps"]
    text = (run / "results/housing/privacy_ledger.json").read_text()
    ledger = json.loads(text, parse_constant=lambda c: pytest.fail(f"the ledger holds {c}, which is not JSON"))
    for name in NEW_METHODS:
        entry = ledger["methods"][name]
        assert entry["warnings"] == [] and "replace one record" in entry["guarantee"]
        # all but noisy SGD draw part of their noise by float samplers: NOT PROVEN (floating point)
        assert entry["private"] == (name == "noisy_sgd"), entry["guarantee"]
        assert entry["private"] != entry["guarantee"].startswith("NOT PROVEN (floating point)")
    # summary.csv says the same: run with a budget (private) but proven only where the ledger proves it
    summary = pd.read_csv(run / "results/housing/summary.csv")
    summary = summary[summary.method.isin(NEW_METHODS)]
    assert summary.private.all()
    assert summary.groupby("method").proven.all().to_dict() == {k: ledger["methods"][k]["private"] for k in NEW_METHODS}
    # OPS and AdaOPS are proven for add/remove: the ledger says how the budget was converted
    assert "group privacy" in ledger["methods"]["ops"]["composition"]
    assert "group privacy" in ledger["methods"]["adaops"]["composition"]
    assert (run / "results/housing/error_curves.png").stat().st_size > 10_000
    attack = pd.read_csv(run / "results/housing/attack.csv")
    assert set(NEW_METHODS) <= set(attack.method)


def test_private_intervals_of_housing(run):
    # .test/config.yaml: intervals on the first 4 repetitions of every curve, every housing method with a procedure
    from dpcost.analysis.intervals import BASELINE, NO_PROCEDURE
    from dpcost.estimators.registry import methods_of
    from dpcost.inference import PROCEDURES

    table = pd.read_csv(run / "results/housing/inference.csv")
    methods = set(methods_of("regression"))
    with_procedure = methods & set(PROCEDURES)
    rows = table[table.m.notna()]
    assert set(rows.method) == with_procedure | {"ols"}
    assert set(rows.m) == set(SMALL["housing"]["m"]) and (rows.n_reps == SMALL["housing"]["inference"]["reps"]).all()
    assert (rows.level == 0.95).all() and rows.coverage.between(0, 1).all() and rows.power.between(0, 1).all()
    hc3 = rows[(rows.method == "ols") & (rows.route == "hc3")]
    assert (hc3.width_ratio == 1).all() and len(hc3) == 3 * 5  # 3 m x the 5 covariates
    private = rows[rows.private]
    assert (private.width_ratio > 0).all() and private.epsilon.eq(0.5).all()
    assert dict(private.groupby("method").route.first()) == {k: PROCEDURES[k][0] for k in with_procedure}
    # every other method: one row saying why, never an interval; and a blocks-route method refused at some m (two
    # blocks of its measured size do not fit at epsilon 0.5: Boosted AdaSSP, precond_gd and precond_gd_adaptive at
    # m = 200, precond_gd_adaptive at 2,000 too) one row naming those m and why, beside its rows at the others
    notes = table[table.m.isna()].set_index("method").note
    refused = set(notes.index) - (methods - with_procedure)
    assert refused == {"boosted_adassp", "precond_gd", "precond_gd_adaptive"}
    for k in refused:
        named = {int(m) for m in re.findall(r"m = (\d+): ", notes[k])}
        assert notes[k].startswith("no interval at m = 200: ") and "n_b*mu" in notes[k]
        assert set(rows[rows.method == k].m) == set(SMALL["housing"]["m"]) - named
    assert notes["ols"] == BASELINE and notes["noisy_gd"] == NO_PROCEDURE
    per_rep = pd.read_parquet(run / "results/housing/inference.parquet")
    assert len(per_rep) == len(rows) * SMALL["housing"]["inference"]["reps"]
    assert (per_rep.lower <= per_rep.upper).all()
    # the ledger: each interval's own release, its split and extra release, and the composition with the curves'
    ledger = json.loads((run / "results/housing/privacy_ledger.json").read_text())
    entries = ledger["intervals"]["methods"]
    assert set(entries) == with_procedure and all(e["released"] for e in entries.values())
    ssp = entries["ssp"]
    assert ssp["route"] == "delta" and "0.1" in ssp["split"] and ssp["private"]
    assert all(e["extra_releases"][0]["sensitivity"] > 0 for e in ssp["per_m"])
    assert entries["precond_gd"]["split"].startswith("none") and not entries["precond_gd"]["per_m"][0]["extra_releases"]
    composed = ledger["intervals"]["table_with_intervals"]
    assert "ssp+interval" in composed["methods"] and "ssp" in composed["methods"]
    assert composed["per_m"][0]["basic"]["epsilon"] > ledger["table"]["per_m"][0]["basic"]["epsilon"]
    assert (run / "results/housing/inference.png").stat().st_size > 10_000
    assert "coverage" in (run / "results/housing/report/inference.html").read_text()


def test_targeted_attacks_of_housing(run):
    # .test/config.yaml: 2 heavy rows and 1 random row, OLS and AdaSSP, at the smallest and largest m
    from dpcost.analysis.targeted import COLUMNS

    table = pd.read_csv(run / "results/housing/targeted.csv")
    block = SMALL["housing"]["targeted"]
    assert list(table.columns) == list(COLUMNS)
    assert set(table.method) == set(block["methods"])
    assert set(table.m) == {min(SMALL["housing"]["m"]), max(SMALL["housing"]["m"])}
    assert len(table) == 2 * 2 * (block["k_top"] + block["k_random"])
    ols = table[table.method == "ols"]
    assert (ols.reconstruction == "closed form").all() and (ols.rel_error <= 1e-6).all()  # the row, to rounding
    private = table[table.method != "ols"]
    assert private.auc_ceiling.between(0.5, 1).all() and private.epsilon.eq(0.5).all() and private.within.notna().all()
    assert table.auc.between(0, 1).all() and (table.auc_se > 0).all() and (table.epsilon_lb >= 0).all()
    assert (run / "results/housing/targeted.png").stat().st_size > 10_000
    assert "Targeted attacks" in (run / "results/housing/report/targeted.html").read_text()


def test_the_work_estimate_counts_every_job_the_run_made_for_housing(run):
    """The start-up estimate (dpcost.run.workload) prices the jobs the workflow makes: housing's jobs in it are the
    run's benchmark files of housing, by name (its decoy searches, the split one's parts, estimates, intervals, map,
    targeted attacks, tables and pages), and its table's size is read from the preparation's record."""
    import copy

    from snakemake.utils import update_config, validate

    from dpcost.run import workload
    from dpcost.run.startup import start

    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    for extra in (SMALL, {"housing": {"peers": "always"}}):
        update_config(config, copy.deepcopy(extra))
    resolved = start(config, lambda c: validate(c, str(REPO / "workflow/schemas/config.schema.yaml")), run_checks=False)
    work = workload.of_run(resolved, ["results/housing/summary.csv"], root=run)
    made = {f.stem for f in (run / "results/job_times").glob("*.tsv") if "_housing" in f.stem}
    assert {job.name for job in work.jobs} - {"config_snapshot"} == made
    assert work.shapes == {"housing": workload.Shape(20640, 5, True)}
