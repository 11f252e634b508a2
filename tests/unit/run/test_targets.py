"""What a run makes (dpcost.run.targets) and what each rule's job is handed (dpcost.run.args.job_args): one model
of the outputs, and every rule's params from one function, the rule files reading no config key themselves."""

import re
from types import SimpleNamespace

import yaml
from snakemake.utils import update_config, validate

from dpcost.run import targets
from dpcost.run.args import RULES, job_args
from dpcost.run.startup import start

from support import REPO

RULE_FILES = sorted((REPO / "workflow" / "rules").glob("*.smk"))


def _run(*overrides):
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    for extra in overrides:
        update_config(config, extra)
    return start(config, lambda c: validate(c, str(REPO / "workflow/schemas/config.schema.yaml")), run_checks=False)


def test_the_default_target_is_every_analysis_with_its_parts_and_pages():
    run = _run({"datasets": ["housing", "snp", "snp_logistic"]})
    files = run.outputs()
    assert len(files) == len(set(files)) and files[0] == "results/config_used.yaml"
    for name in run.analyses:
        made = targets.parts(run, name)
        assert {f"results/{name}/report/{p}.html" for p in (*targets.PAGES, *made)} <= set(files)
        assert {f"results/{name}/{f}" for f in targets.ANALYSIS} <= set(files)
    # housing's defaults: the peer comparison, the map, the intervals and the targeted attacks; the SNP analyses':
    # the map of snp alone
    assert targets.parts(run, "housing") == ("comparison", "privacy_map", "inference", "targeted")
    assert targets.making(run, "privacy_map") == [n for n in run.analyses if run.config[n].get("map")]
    assert targets.making(run, "inference") == list(run.inference)
    assert not [f for f in files if f.startswith(("results/simulation/", "results/benchmark/"))]


def test_the_other_targets_and_what_targets_ask_for_agree():
    run = _run({"datasets": ["housing"]}, yaml.safe_load((REPO / "config/presets/benchmark.yaml").read_text()))
    bench = run.outputs("benchmark")
    assert "results/benchmark/report/headline.html" in bench and "results/benchmark/wins.csv" in bench
    assert targets.asked(run, ["benchmark"]).benched == tuple(run.benchmark["datasets"])
    assert targets.asked(run, []).own == ("housing",) == targets.asked(run, ["all"]).own
    sim = run.outputs("simulation")
    assert all(f.startswith("results/simulation/") for f in sim) and (not sim) == (run.simulation is None)


def test_every_rule_with_params_reads_them_from_job_args_and_no_rule_file_reads_the_config():
    named, text = set(), ""
    for path in RULE_FILES:
        text = path.read_text()
        assert "config[" not in text and "config.get(" not in text or path.name == "preflight.smk", path.name
        named |= set(re.findall(r'job=args\("(\w+)"\)', text))
        params = re.findall(r"rule (\w+):(?:(?!\nrule ).)*?\n    params:\n        (\w+)=", text, re.S)
        assert all(key == "job" for _, key in params), (path.name, params)
    assert named == set(RULES)


def test_the_collecting_jobs_of_an_analysis_read_one_privacy():
    run = _run({"datasets": ["housing"]})
    w = SimpleNamespace(dataset="housing", method="ols")
    privacy = run.privacy("housing").to_dict()
    for rule in ("aggregate", "plot", "ledger", "attack", "privacy_map", "inference", "targeted", "estimate"):
        assert job_args(run, rule, w)["privacy"] == privacy, rule
