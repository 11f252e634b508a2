"""A long job's progress lines: when they are written and what their time-left estimate says."""

import logging

import pytest

from dpcost.progress import Progress, duration


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_a_line_every_interval_with_the_time_left_at_a_constant_rate(caplog):
    clock = Clock()
    p = Progress("flights, adassp", 1000, every=30, clock=clock)
    with caplog.at_level(logging.INFO, logger="dpcost.progress"):
        for _ in range(9):  # 100 units every 10 s: a line at 30 s, 60 s, 90 s
            clock.t += 10
            p.advance(100)
        clock.t += 10
        p.advance(100)  # the end: no line (the caller says it is done)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "flights, adassp: 30% (300 of 1,000 rows fitted), 30 s elapsed, about 1 min 10 s left",
        "flights, adassp: 60% (600 of 1,000 rows fitted), 1 min 00 s elapsed, about 40 s left",
        "flights, adassp: 90% (900 of 1,000 rows fitted), 1 min 30 s elapsed, about 10 s left",
    ]


def test_no_estimate_before_work_and_none_past_the_total():
    clock = Clock()
    p = Progress("x", 10, clock=clock)
    assert p.left() is None
    p.advance(25)
    assert p.done == 10 and p.left() == 0


@pytest.mark.parametrize("total", [0, -1, float("nan")])
def test_a_job_without_work_is_refused(total):
    with pytest.raises(ValueError, match="total work"):
        Progress("x", total)


@pytest.mark.parametrize(("s", "text"), [(0.4, "0 s"), (59.6, "1 min 00 s"), (245, "4 min 05 s"), (7380, "2 h 03 min")])
def test_durations_read_as_a_person_writes_them(s, text):
    assert duration(s) == text


@pytest.mark.parametrize("job", ["intervals", "reference intervals", "decoy search"])
def test_the_interval_and_decoy_search_jobs_log_their_progress_in_rows(job, caplog, monkeypatch):
    """Each can run for minutes on a big table (the OLS reference 39 s on 2,000,000 rows, quiet): each logs what it
    has done of its total (reps × Σm rows, a decoy search's times its decoys) with the time left, and its last line
    is before the end."""
    import functools

    import numpy as np

    from dpcost.analysis import decoys, intervals, tuning
    from dpcost.analysis.designs import RegressionDesign
    from dpcost.dp.privacy import Privacy
    from dpcost.estimators.ols import ols
    from dpcost.estimators.registry import get

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 2))
    y = X @ np.array([0.5, -0.3]) + rng.normal(size=600)
    design, privacy, m_grid = RegressionDesign(X, y, ols(X, y)), Privacy(1.0, 1e-5, "tight"), [100, 300]
    tuned = {"B_X": 3.0, "B_Y": 3.0}
    module = decoys if job == "decoy search" else intervals
    monkeypatch.setattr(module, "Progress", functools.partial(Progress, every=0.0))  # a line at every step
    with caplog.at_level(logging.INFO, logger="dpcost.progress"):
        if job == "intervals":
            by_m = dict.fromkeys(m_grid, tuned)
            intervals.run_intervals(design, "ssp", tuning_by_m=by_m, m_grid=m_grid, reps=3, seed=7, privacy=privacy,
                                    dataset="x", level=0.9, route="delta", share=0.1)  # fmt: skip
            total = 3 * 400
        elif job == "reference intervals":
            intervals.run_reference(design, m_grid=m_grid, reps=3, seed=7, dataset="x", level=0.9)
            total = 3 * 400
        else:
            fakes = decoys.Decoys(("linear", "interaction"), (1.0,), (0.5,), 2, (-2.0, 3.0), 1)
            cands = tuning.candidates(get("ssp"), tuned, {"B_Y": [1.0, 3.0]}, "w")
            decoys.decoy_search(design, get("ssp"), cands, fakes, params={}, m_grid=m_grid, seed=7, privacy=privacy,
                                dataset="x")  # fmt: skip
            total = 2 * 2 * 400  # two decoys, two repetitions each
    lines = [r.getMessage() for r in caplog.records if job in r.getMessage()]
    assert lines and all(f"of {total:,} rows fitted" in ln and "left" in ln for ln in lines)
    what = "x, OLS reference intervals" if job == "reference intervals" else f"x, ssp {job}"
    assert lines[0].startswith(what) and f"{total - 300:,} of" in lines[-1]  # the last step: no line
