"""dpcost.analysis.report: the report's pages from tables and records."""

import base64
import re

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis import report


def _summary():
    rows = []
    for m in (100, 1000):
        for method, mean, private in (("ols", 0.1, False), ("noisy_gd", 2.0, True), ("<b>x</b>", 1.5, True)):
            rows.append(
                {
                    "method": method,
                    "m": m,
                    "n_reps": 5,
                    "mean": mean / np.sqrt(m),
                    "se": 0.01,
                    "support_recovered": 3.0 if private else np.nan,
                    "private": private,
                    "epsilon": 0.5 if private else np.nan,
                    "delta": 1 / m if private else np.nan,
                    "tuning_mode": "decoy" if method == "noisy_gd" else ("none" if private else "fixed"),
                }
            )
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "yes"),
        (np.False_, "no"),
        (np.nan, ""),
        (None, ""),
        (3, "3"),
        (np.int64(20000), "20000"),
        (0.000123456, "0.0001235"),
        ("not reached", "not reached"),
    ],  # fmt: skip
)
def test_cells(value, text):
    assert report.fmt(value) == text


def test_the_headline_rows_are_the_largest_m_best_first_with_shared_settings_above():
    rows, shared = report.headline_rows(_summary())
    assert list(rows.method) == ["ols", "<b>x</b>", "noisy_gd"]
    assert list(rows.columns[:3]) == ["method", "mean", "se"] and "support_recovered" in rows  # any other column
    assert shared == {"m": 1000, "n_reps": 5, "epsilon": 0.5, "delta": 0.001} and "tuning_mode" in rows
    rows, _ = report.headline_rows(_summary(), methods=["ols", "noisy_gd"])
    assert list(rows.method) == ["ols", "noisy_gd"]


def test_the_headline_fragment_embeds_the_figure_and_says_the_answer():
    png = b"\x89PNG\r\n\x1a\nnot really"
    text = report.headline("Housing ε", _summary(), png, labels={"ols": "OLS (non-private)"})
    assert f'src="data:image/png;base64,{base64.b64encode(png).decode()}"' in text
    assert "<html" not in text and text.isascii() and "Housing &#949;" in text
    assert "the best private method shown, <b>x</b>" not in text and "&lt;b&gt;x&lt;/b&gt;" in text  # escaped
    assert re.search(r"has mean error 0\.0474 \(se 0\.01\): 15 times that of the non-private ols", text)
    assert '<td title="OLS (non-private)">ols</td>' in text
    # the landing page's row wraps (its rule graph below the headline when both do not fit) and the table scrolls
    assert "flex-wrap:wrap" in text and re.search(r'<div class="dpcost-scroll"><table', text)


def test_no_answer_without_both_kinds_of_method():
    rows, _ = report.headline_rows(_summary()[lambda d: d.private])
    assert report.answer(rows, 1000) is None


def test_the_answer_gives_the_cost_on_the_superpopulation_yardstick_when_the_summary_has_it():
    rows, _ = report.headline_rows(_summary().assign(sp_rmse=lambda d: np.where(d.private, 0.3, 0.1)))
    assert report.answer(rows, 1000).endswith("(superpopulation RMSE), privacy costs 3 times.")
    rows, _ = report.headline_rows(_summary())
    assert "superpopulation" not in report.answer(rows, 1000)


def test_a_page_is_whole_and_ascii():
    page = report.page("δ table", report.table(pd.DataFrame({"a": [1.23456789, np.nan], "b": ["x<y", "ε"]})))
    assert page.startswith("<!doctype html>") and page.isascii() and 'charset="utf-8"' in page
    assert '<td class="num">1.235</td><td>x&lt;y</td>' in page and "<td></td><td>&#949;</td>" in page


def test_the_ledger_digest():
    ledger = {
        "dataset": "housing", "neighbours": "replace one record", "epsilon": 0.5, "calibration": "tight",
        "not_private": ["NOT PRIVATE: the preprocessing"], "notes": ["PRIVACY WARNING: delta"],
        "methods": {
            "ols": {"label": "OLS", "private": False, "guarantee": "none (non-private baseline)"},
            "noisy_gd": {"label": "Noisy GD", "private": True, "guarantee": "(0.5, delta)-DP", "calibration": "tight",
                         "composition": "exact", "assumption (enforced in code)": "rows clipped",
                         "tuning": {"mode": "fixed", "looked_at": "nothing"}, "warnings": [], "delta_warning": None,
                         "per_m": [{"m": 100, "epsilon": 0.5, "delta": 0.01, "releases": [
                             {"mechanism": "gaussian", "sensitivity": 2.0, "noise_scale": 7.5, "count": 10}]}]},
        },
        "future_key": {"a": 1},
    }  # fmt: skip
    text = report.ledger(ledger)
    for part in (
        "replace one record",
        "NOT PRIVATE: the preprocessing",
        "PRIVACY WARNING: delta",
        "none (non-private baseline)",
        "(0.5, delta)-DP",
        "rows clipped",
        "fixed; nothing",
        "noisy_gd: 1 releases over 1 m",
        '<td class="num">7.5</td>',
        "Also recorded",
        "future_key",
    ):
        assert part in text, part


def test_provenance_leads_with_the_source_and_folds_long_values():
    meta = {
        "truth": {f"SNP_{i}": i / 10 for i in range(200)},
        "private": False,
        "privacy_note": "NOT PRIVATE: MAF",
        "files": [{"name": "m.gz", "url": "http://h/m.gz", "bytes": 9, "sha256": "ab" * 32}],
        "n_snps": 200,
    }
    text = report.provenance(meta)
    assert text.index("ab" * 32) < text.index("NOT PRIVATE: MAF") < text.index("n_snps")
    assert "<details><summary>200 entries</summary>" in text


def test_the_map_page_has_the_grid():
    needed = pd.DataFrame({"m": [100], "epsilon_within_2x": ["not reached"]})
    ratios = pd.DataFrame({"epsilon": [0.5, 4.0], "m": [100, 100], "ratio": [21.4, 2.04]})
    text = report.privacy_map(needed, ratios)
    assert "<th>&#949; = 0.5</th><th>&#949; = 4</th>" in report.ascii_html(text) and "not reached" in text
