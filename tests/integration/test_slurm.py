"""The Slurm profile against a real single-node Slurm (started by the test), compared bit for bit with a local run.

Skips with the reason where it cannot run: not root, not Debian, or a Slurm already running here."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from slurm_cluster import POLL_SECONDS, LocalSlurm, snakemake_polling_every, unavailable_reason

from geo_synth import make_series, write_series_matrix
from support import REPO, RUN_TIMEOUT, LoopbackServer
from workflow_runner import TINY_MAP, run_workflow

pytestmark = [pytest.mark.e2e, pytest.mark.slurm]

# Compared bit for bit, and the runs' targets: the runs make these and what they need, so every rule that runs on
# the cluster runs (CLUSTER_RULES; tune both with a decoy search and fixed), each job ~10 s of CPU on Slurm (two
# Snakemake start-ups and the script). What is left out (plots, the comparison, the config snapshot, the SNP map)
# would run on the submitting host as local rules, like the aggregate, ledger and attack summary jobs that do run
# here; test_workflow.py and test_small_config.py run them end to end.
TABLES = [
    "housing/errors.parquet",
    "housing/summary.csv",
    "snp/errors.parquet",
    "snp/summary.csv",
    "housing/privacy_ledger.json",
    "snp/privacy_ledger.json",
    "snp/genotypes.parquet",
    "housing/tuning/precond_gd.json",
    "housing/tuning/precond_gd.csv",
    "housing/privacy_map_ratios.csv",
    "housing/attack.csv",
    "snp/attack.csv",
]
TARGETS = ["results/" + t for t in TABLES]
CLUSTER_RULES = [
    "preprocess_table", "preprocess_snp", "tune", "estimate", "map_method"
]  # fmt: skip


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"no real Slurm here: {reason}")
    with LocalSlurm(tmp_path_factory.mktemp("slurm")) as slurm:
        yield slurm


@pytest.fixture(scope="module")
def config(housing_archives, tmp_path_factory):
    series = make_series(n_snps=300, n_average=241, n_low=146, missing_rate=0.0, seed=8)
    snp = write_series_matrix(tmp_path_factory.mktemp("geo") / "m.txt.gz", series, "nc").read_bytes()
    with LoopbackServer() as srv:
        srv.add("/h/houses.zip", housing_archives["statlib"][0])
        srv.add("/s/", b'<a href="GSE106818_series_matrix.txt.gz">GSE106818_series_matrix.txt.gz</a>')
        srv.add("/s/GSE106818_series_matrix.txt.gz", snp)
        yield {
            "reps": 4,
            "datasets": ["housing", "snp"],  # snp_logistic adds no rule kind the cluster has not run by then
            "download": {"max_tries": 2, "backoff": 0.0},
            "housing": {
                "sources": [
                    {
                        "url": srv.base + "/h/houses.zip",
                        "format": "statlib",
                        "filename": "houses.zip",
                        "sha256": housing_archives["statlib"][1],
                    }
                ],
                "m": [200, 2000],
                # one decoy-tuned private method (its tuning record is compared), the decoy search on one decoy, and
                # the smallest map, whose non-private and private method run on the cluster too
                "methods": ["precond_gd"],
                "peers": "never",
                "decoys": {"kinds": ["interaction"], "radius": [1.0], "noise_sd": [0.5], "reps": 1},
                "map": TINY_MAP["housing"],
                "attack": {"reps": 2},
            },
            "snp": {
                "matrix_url": srv.base + "/s/",
                "n_snps": 100,
                "m": [10, 40],
                "s": 5,
                "methods": ["peeling"],  # private: its ledger entry holds releases
                "map": TINY_MAP["snp"],
                "attack": {"reps": 2},
            },
        }


def test_slurm_run_equals_local_run_bit_for_bit(cluster, config, tmp_path):
    # the two runs at once: the Slurm run spends much of its time waiting for its jobs (and for the executor's status
    # polls, every POLL_SECONDS here), during which the local run computes the reference (one after the other took
    # 20-35 s longer)
    with ThreadPoolExecutor(2) as pool:
        local_run = pool.submit(run_workflow, tmp_path / "local", config, *TARGETS)
        slurm_run = pool.submit(
            run_workflow,
            tmp_path / "slurm",
            config,
            *TARGETS,
            "--workflow-profile",
            str(REPO / "workflow/profiles/slurm"),
            "--slurm-status-command",
            "squeue",  # this cluster has no accounting daemon
            "--slurm-init-seconds-before-status-checks",
            str(POLL_SECONDS),
            "--slurm-keep-successful-logs",  # evidence that the jobs ran on Slurm
            env=cluster.env,
            timeout=RUN_TIMEOUT,
            snakemake=snakemake_polling_every(POLL_SECONDS),  # no back-off between polls: see its docstring
        )
        local, slurm = local_run.result(), slurm_run.result()
    assert local.returncode == 0, local.stderr[-3000:]
    assert slurm.returncode == 0, slurm.stderr[-3000:]
    # every rule that is not a local rule really went through Slurm
    slurm_logs = tmp_path / "slurm/.snakemake/slurm_logs"
    for rule in CLUSTER_RULES:
        assert list(slurm_logs.glob(f"rule_{rule}/**/*.log")), rule
    for table in TABLES:
        assert (tmp_path / "slurm/results" / table).read_bytes() == (tmp_path / "local/results" / table).read_bytes(), (
            table
        )
