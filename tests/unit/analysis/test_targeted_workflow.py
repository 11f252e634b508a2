"""dpcost.analysis.targeted: the workflow's targeted attacks — the config block's resolution, the targets, the
verdict and what the score attack's caption is told — and one small run of a non-private and a private method."""

import re

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis import targeted as tg
from dpcost.attacks.targeted import pick_targets
from dpcost.dp.privacy import Privacy
from dpcost.errors import ConfigError
from dpcost.estimators.registry import methods_of

PRIVATE = {k: m.private for k, m in methods_of("regression").items()}
BLOCK = {"k_top": 2, "k_random": 1, "shadows": 10, "test_releases": 20, "reconstruction_nfev": 5, "alpha": 0.05}


def test_options_default_to_ols_and_the_private_methods_at_the_ends_of_the_grid():
    out = tg.options({**BLOCK, "methods": None, "m": None}, ["ols", "adassp", "ssp"], PRIVATE, [200, 2000, 800])
    assert out["methods"] == ["ols", "adassp", "ssp"] and out["targeted_m"] == [200, 2000]


def test_the_default_m_stops_at_max_m_and_says_what_it_left_out():
    grid = [10_000, 100_000, 1_000_000]
    out = tg.options(
        {**BLOCK, "methods": None, "m": None, "max_m": 100_000}, ["ols"], PRIVATE, grid, "flights.targeted"
    )
    assert out["targeted_m"] == [10_000, 100_000]
    assert out["left_out"].startswith("m = 1,000,000 not attacked: flights.targeted.max_m = 100,000")
    assert "set flights.targeted.m" in out["left_out"]
    # a grid under the cap, or no cap, or an m listed: the ends of the grid or the list, nothing said
    for block, m_grid in (({"max_m": 100_000}, [200, 20_000]), ({"max_m": None}, grid), ({"m": [1_000_000]}, grid)):
        out = tg.options({**BLOCK, "methods": None, "m": None, **block}, ["ols"], PRIVATE, m_grid)
        assert "left_out" not in out and out["targeted_m"] == (block.get("m") or [min(m_grid), max(m_grid)])
    # every m above the cap: the smallest alone
    assert tg.default_m([500_000, 1_000_000], 100_000) == [500_000]


def test_the_job_logs_its_progress_and_time_left(caplog, monkeypatch):
    import functools

    from dpcost.progress import Progress

    monkeypatch.setattr(tg, "Progress", functools.partial(Progress, every=0.0))  # a line at every step
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 2))
    y = X @ np.array([0.5, -0.3]) + 0.3 * rng.normal(size=400)
    args = dict(params={}, privacy=Privacy(1.0, 1e-5, calibration="tight"), seed=7, dataset="toy", **BLOCK)
    with caplog.at_level("INFO", logger="dpcost.progress"):
        tg.run_targeted(tg.with_intercept(X), y, methods_of("regression")["ols"], tuning_by_m={}, targeted_m=[100, 300],
                        **args)  # fmt: skip
    lines = [r.getMessage() for r in caplog.records if "targeted attacks" in r.getMessage()]
    # 3 targets x 2 m, each 2 x (10 + 20) subsamples of min(m, n - m) rows and 2m for the reconstruction
    total = 3 * (2 * 30 * 100 + 2 * 100 + 2 * 30 * 100 + 2 * 300)
    assert lines and all(f"of {total:,} rows gathered" in ln for ln in lines)
    assert "left" in lines[-1] and lines[0].startswith("toy, ols: targeted attacks: ")
    # the count is the work done: the last line (before the last reconstruction, 600 rows) is at 98 %
    assert [int(re.search(r": (\d+)% \(", ln).group(1)) for ln in lines][-1] == 98


def test_shadows_by_blocks_are_said_in_the_log_and_counted_in_the_progress(caplog, monkeypatch):
    """Above BLOCK_FROM rows (lowered here) the job says how its shadows are drawn, and its progress counts their work
    (q block Grams as k rows each, r rows, and the blocks' Grams once per m)."""
    import functools

    from dpcost.attacks import targeted as attacks
    from dpcost.progress import Progress

    monkeypatch.setattr(attacks, "BLOCK_FROM", 150)
    monkeypatch.setattr(attacks, "BLOCKS_PER_SHADOW", 16)
    monkeypatch.setattr(tg, "Progress", functools.partial(Progress, every=0.0))
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 2))
    y = X @ np.array([0.5, -0.3]) + 0.3 * rng.normal(size=400)
    args = dict(params={}, privacy=Privacy(1.0, 1e-5, calibration="tight"), seed=7, dataset="toy", **BLOCK)
    with caplog.at_level("INFO"):
        table = tg.run_targeted(tg.with_intercept(X), y, methods_of("regression")["ols"], tuning_by_m={},
                                targeted_m=[100, 300], **args)  # fmt: skip
    said = [r.getMessage() for r in caplog.records if r.name == "targeted"]
    assert said == [
        "m = 300: each shadow is 16 blocks of 18 rows and the first 12 rows of one more, of one random partition of "
        'the 400 rows (cluster sampling above 65,536 rows: its Gram a sum of block Grams; docs/methods.md, "Targeted '
        'attacks")'
    ]
    # m = 100 row by row (100 rows a shadow), m = 300 by blocks (16 x 4 + 12 = 76), the 400 rows' block Grams once
    total = 400 + 3 * (2 * 30 * 100 + 2 * 100 + 2 * 30 * 76 + 2 * 300)
    lines = [r.getMessage() for r in caplog.records if "rows gathered" in r.getMessage()]
    assert lines and all(f"of {total:,} rows gathered" in ln for ln in lines)
    assert len(table) == 6 and table.auc.notna().all()


def test_options_keep_the_listed_methods_the_analysis_runs_and_refuse_the_unknown():
    block = {**BLOCK, "methods": ["ssp", "ols", "noisy_gd"], "m": [200]}
    assert tg.options(block, ["ols", "ssp", "adassp"], PRIVATE, [200, 400])["methods"] == ["ols", "ssp"]
    with pytest.raises(ConfigError, match="housing.targeted.methods"):
        tg.options({**block, "methods": ["nope"]}, ["ols"], PRIVATE, [200], "housing.targeted")
    with pytest.raises(ConfigError, match="targeted.m"):
        tg.options({**block, "m": [300]}, ["ols"], PRIVATE, [200])
    # an analysis that runs none of the listed methods (the default list, an analysis of precond_gd alone) has
    # nothing to attack: no job, not an error
    assert tg.options({**block, "methods": ["ssp", "ols"]}, ["adassp"], PRIVATE, [200]) is None


def test_the_targets_are_the_heaviest_rows_then_random_others():
    X = np.random.default_rng(0).normal(size=(200, 3))
    X[17] *= 40
    rows, kinds = pick_targets(X, 2, 3, np.random.default_rng(1))
    assert rows[0] == 17 and list(kinds) == ["top"] * 2 + ["random"] * 3 and len(set(rows)) == 5
    with pytest.raises(ConfigError):
        pick_targets(X, 0, 0, np.random.default_rng(1))


def _table(auc, se, ceiling, eps_lb, epsilon):
    return pd.DataFrame({"method": "m", "m": 100, "target": 3, "leverage": 0.1, "auc": auc, "auc_se": se,
                         "auc_ceiling": ceiling, "epsilon_lb": eps_lb, "epsilon": epsilon})  # fmt: skip


def test_verdict_and_exposure():
    t = tg.with_verdict(_table([0.6, 0.8, 0.7, 1.0], [0.02] * 4, [0.62, 0.62, 0.62, np.nan], [0, 0, 0.9, 4],
                               [0.5, 0.5, 0.5, np.nan]))  # fmt: skip
    assert t.within.tolist()[:3] == [True, False, False] and pd.isna(t.within.iloc[3])
    assert tg.exposed(t).auc.tolist() == [0.6, 0.8, 0.7, 1.0]
    assert tg.exposure_note(t).startswith("The targeted attack does see") and "AUC 1.00" in tg.exposure_note(t)
    assert tg.exposure_note(_table([0.52], [0.02], [0.62], [0], [0.5])) is None


def test_a_small_run_reconstructs_ols_and_keeps_adassp_within_its_ceiling():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 2)) / 2
    X[5] = [2.5, -2.5]  # a heavy row
    y = X @ np.array([0.5, -0.3]) + 0.3 * rng.normal(size=600)
    args = dict(params={}, privacy=Privacy(1.0, 1e-5, calibration="tight"), seed=7, dataset="toy", targeted_m=[300],
                **BLOCK)  # fmt: skip
    reg = methods_of("regression")
    with pytest.raises(ValueError, match="intercept column"):  # the design as loaded, without (1, x): refused
        tg.run_targeted(X, y, reg["ols"], tuning_by_m={}, **args)
    ols = tg.run_targeted(tg.with_intercept(X), y, reg["ols"], tuning_by_m={}, **args)
    assert list(ols.columns) == list(tg.COLUMNS) and len(ols) == 3
    assert (ols.rel_error < 1e-6).all() and ols.target.iloc[0] == 5
    ada = tg.run_targeted(
        tg.with_intercept(X),
        y,
        reg["adassp"],
        tuning_by_m={300: reg["adassp"].resolve_tuning({"B_X": 4.0, "B_Y": 2.0})},
        **args,
    )
    assert ada.within.all() and (ada.reconstruction == "matching").all() and ada.auc_ceiling.notna().all()
