"""A long job's progress lines: when they are written and what their time-left estimate says."""

import logging

import pytest

from dpcost.analysis.progress import Progress, duration


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_a_line_every_interval_with_the_time_left_at_a_constant_rate(caplog):
    clock = Clock()
    p = Progress("flights, adassp", 1000, every=30, clock=clock)
    with caplog.at_level(logging.INFO, logger="dpcost.analysis.progress"):
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
