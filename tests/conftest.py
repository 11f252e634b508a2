import hashlib
import os

import pytest

from support import LoopbackServer, figshare_tgz_bytes, real_housing, statlib_zip_bytes

# No test reaches the internet, even one that forgets to point a source at 127.0.0.1 (a start-up check or a download
# run with the default config's URLs): every HTTP(S) request of this process and of the workflows it starts goes to
# a proxy on a closed loopback port, and is refused, except to this machine and to .invalid names, which never
# resolve (RFC 6761: what the tests use for "no DNS"). requests, and so pooch, honour these variables.
DEAD_PROXY = "http://127.0.0.1:9"
for _name in ("http_proxy", "https_proxy", "all_proxy"):
    os.environ[_name] = os.environ[_name.upper()] = DEAD_PROXY
os.environ["no_proxy"] = os.environ["NO_PROXY"] = "127.0.0.1,localhost,::1,.invalid"


@pytest.fixture(scope="session")
def housing_df():
    return real_housing()


@pytest.fixture(scope="session")
def housing_archives(housing_df):
    """{"statlib": bytes, "figshare": bytes} rebuilt from the real data, and their sha256."""
    blobs = {"statlib": statlib_zip_bytes(housing_df), "figshare": figshare_tgz_bytes(housing_df)}
    return {k: (v, hashlib.sha256(v).hexdigest()) for k, v in blobs.items()}


@pytest.fixture
def server():
    with LoopbackServer() as srv:
        yield srv


# ------------------------------------------------------------------------------------------------ the order of files
# CI runs two xdist workers with --dist loadfile: a file is one unit of work, handed to whichever worker is free. By
# default xdist queues the files by their number of tests, which puts the one- and two-test end-to-end files (each
# a minute or more) at the end, where one worker runs them while the other has nothing left. Queued longest first
# instead, the many short files at the end fill in and the two workers finish together. The seconds are measured
# on 2 cores with both workers busy: each file's setup, call and teardown times summed (pytest --durations=0), the
# files of 6 s or more; a file not listed is estimated from its markers (an end-to-end file as a middling one, a slow
# test as a second), so a new file lands at a sensible place without editing this list. A file's number counts for
# its place in the queue alone: listed files at 30 s and more, not only the end-to-end ones, must start early.
FILE_SECONDS = {
    "tests/unit/estimators/test_posterior_objpert_sgd_sheffet.py": 120,
    "tests/integration/test_small_config.py": 118,
    "tests/unit/analysis/test_figures_read.py": 114,
    "tests/integration/test_slurm.py": 86,
    "tests/unit/attacks/test_prop21.py": 76,
    "tests/integration/test_simulation_workflow.py": 82,
    "tests/integration/test_workflow_table.py": 76,
    "tests/unit/dp/test_sensitivity_fuzz.py": 73,
    "tests/integration/test_hostile_input.py": 66,
    "tests/integration/test_workflow.py": 64,
    "tests/integration/test_offline.py": 58,
    "tests/integration/test_workflow_snp.py": 55,
    "tests/unit/dp/test_audit.py": 44,
    "tests/integration/test_config.py": 41,
    "tests/unit/inference/test_blocks_ols.py": 32,
    "tests/unit/estimators/test_frontier_ols.py": 30,
    "tests/unit/estimators/test_precond_gd_adaptive.py": 29,
    "tests/integration/test_style.py": 23,
    "tests/integration/test_workflow_libsvm.py": 22,
    "tests/unit/estimators/test_hessian_mixing.py": 21,
    "tests/unit/dp/test_samplers_rounds.py": 19,
    "tests/integration/test_guard.py": 19,
    "tests/unit/dp/test_accountant.py": 17,
    "tests/integration/test_extension.py": 16,
    "tests/unit/estimators/test_boosted_adassp.py": 16,
    "tests/unit/data/test_benchmark_tables.py": 15,
    "tests/unit/inference/test_coverage_ssp.py": 15,
    "tests/unit/estimators/test_ssp.py": 14,
    "tests/unit/estimators/test_two_stage.py": 12,
    "tests/unit/estimators/test_precond_gd_free.py": 11,
    "tests/unit/dp/test_audit_exact.py": 10,
    "tests/unit/dp/test_rdp_wor.py": 10,
    "tests/unit/attacks/test_targeted.py": 9,
    "tests/unit/estimators/test_joint_clip.py": 8,
    "tests/unit/estimators/test_tukey_em.py": 7,
    "tests/unit/data/test_download.py": 6,
    "tests/unit/dp/test_exact_bernoulli.py": 6,
}


def _estimated_seconds(path: str, items: list) -> float:
    if path in FILE_SECONDS:
        return FILE_SECONDS[path]
    if any(it.get_closest_marker("e2e") for it in items):
        return 60.0
    return 1.0 * sum(1 for it in items if it.get_closest_marker("slow")) + 0.05 * len(items)


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist: keep the order set below
        config.option.loadscopereorder = False
    if not hasattr(config, "workerinput"):  # once, in the controller, before any worker starts a workflow
        _compile_package()


def _compile_package() -> None:
    """Write the package's bytecode once. Where PYTHONDONTWRITEBYTECODE is set (as on this project's CI machines),
    every Snakemake job of the suite's runs compiled the package's modules again on import (0.25 s of its ~1 s
    start-up); Python still reads a cache that exists, as it writes and reads one by default on a user's machine."""
    import compileall
    from pathlib import Path

    import dpcost

    compileall.compile_dir(Path(dpcost.__file__).parent, quiet=1)


def pytest_collection_modifyitems(config, items):
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    cost = {path: _estimated_seconds(path, its) for path, its in files.items()}
    items.sort(key=lambda it: -cost[it.nodeid.split("::", 1)[0]])  # stable: a file's own order is kept
