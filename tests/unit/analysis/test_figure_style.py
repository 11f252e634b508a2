"""Figures that stand on their own: one style per method in every figure, and captions that state the setting, the
repetitions and how to read them."""

import numpy as np
import pandas as pd

from dpcost.analysis import plotting
from dpcost.analysis.plotting import caption_text, method_label, method_style
from dpcost.estimators.registry import METHODS, methods_of

from support import legend_entries


def _styles(fig) -> dict[str, tuple]:
    """legend text → (colour, marker) of every legend entry of the figure that has a marker."""
    from matplotlib.colors import to_hex

    return {text: (to_hex(h.get_color()), h.get_marker()) for text, h in legend_entries(fig)
            if hasattr(h, "get_marker") and h.get_marker() not in (None, "None", "")}  # fmt: skip


def _error_summary(methods, reps=20):
    rows = [(k, m, reps, 1.0 + i / 10 / m, 0.9, 1.1, 1.0) for i, k in enumerate(methods) for m in (100, 1000)]
    return pd.DataFrame(rows, columns=["method", "m", "n_reps", "mean", "q05", "q95", "median"])


def _attack_summary(methods, auc=0.5, reps=5):
    rows = [(k, m, reps, 200, auc if not METHODS[k].private else 0.5, 0.001, 0.05, 0.01, 0.9, METHODS[k].private)
            for k in methods for m in (100, 1000)]  # fmt: skip
    cols = ["method", "m", "n_reps", "n_candidates", "auc", "auc_se", "tpr_fpr05", "tpr_fpr05_se", "auc_ceiling",
            "private"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


KW = dict(epsilon=0.5, delta="10/n^1.1", calibration="tight", tuning="decoy")


def _clashes(style, names) -> list[tuple[str, str]]:
    """Pairs of ``names`` whose styles differ in fewer than two of colour, marker and line."""
    keys = {k: (style(k)["color"], style(k)["marker"], style(k)["ls"]) for k in names}
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]
            if sum(x != y for x, y in zip(keys[a], keys[b], strict=True)) < 2]  # fmt: skip


def test_every_registry_method_has_its_own_style_and_keeps_it():
    styles = {k: method_style(k) for k in METHODS}
    triples = [(s["color"], s["marker"], s["ls"]) for s in styles.values()]
    assert len(set(triples)) == len(METHODS)  # no two methods look alike in any figure
    pairs = [(s["marker"], s["ls"]) for s in styles.values()]
    assert len(set(pairs)) == len(METHODS)  # greyscale: marker and line alone tell any two methods apart
    assert {k: method_style(k) for k in METHODS} == styles  # deterministic
    assert method_style("not_a_method") == method_style("not_a_method")


def test_methods_that_share_a_figure_differ_in_two_of_colour_marker_and_line():
    """A family's methods are drawn together (the every-method figure holds all of regression's): any two of them
    differ in at least two of colour, marker and line style, so that on screen neither colour nor shape alone has
    to tell them apart. The check bites: the former style (marker k mod 12, line k div 12, 8 colours) gave
    regression's 1st and 9th method the same colour and line."""
    for family in ("regression", "mean", "glm", "ranking", "nonparametric", "sparse_learning"):
        names = list(methods_of(family, simulation=True))
        assert _clashes(method_style, names) == [], family
    order = {k: i for i, k in enumerate(METHODS)}
    colours = ["#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#999999"]

    def former(k):
        i = order[k]
        return {"color": colours[(i + 3 * (i // 12)) % 8], "marker": i % 12, "ls": i // 12}

    assert ("ols", "ops") in _clashes(former, list(methods_of("regression")))


def test_a_method_has_the_same_colour_and_marker_in_every_figure(tmp_path, figures):
    from dpcost.simulation import report

    methods = ["ols", "adassp", "ssp", "noisy_gd"]
    plotting.error_curves(_error_summary(methods), [tmp_path / "e.png"], title="t", xlabel="m", ylabel="e", **KW)
    plotting.error_curves(_error_summary(methods[1:]), [tmp_path / "f.png"], title="t", xlabel="m", ylabel="e", **KW)
    plotting.attack_figure(_attack_summary(["ssp", "ols", "adassp"]), [tmp_path / "a.png"], title="t", xlabel="m",
                           epsilon=0.5, delta="10/n^1.1", calibration="tight", tuning="decoy")  # fmt: skip
    ratios = pd.DataFrame({"epsilon": [0.5, 1.0], "m": [100, 100], "ratio": [3.0, 1.5], "best_private": ["adassp"] * 2})
    plotting.privacy_map_figure(ratios, [tmp_path / "p.png"], title="t", delta="10/n^1.1", calibration="tight",
                                tuning="decoy", reps=7)  # fmt: skip
    sim = pd.DataFrame([("e", 1, "a", "ols", k, "", k != "ols", n, 20, np.nan, np.nan, np.nan, 0.5, 0.5, 10, 1.0 / n,
                         0.0, 0.5 / n, 2.0 / n, 0.0, 1e-5, True) for k in ("ols", "noisy_gd") for n in (1000, 4000)],
                       columns=[*report.KEYS, "n_reps", "mean", "se", "q05", "q95", "s_used_mean", "delta",
                                "proven"])  # fmt: skip
    rates = pd.DataFrame(columns=["experiment", "method", "variant", "epsilon", "shape", "n", "fitted"])
    report.figure(sim, rates, 1, [tmp_path / "s.png"], title="t", labels={k: m.label for k, m in METHODS.items()})
    seen = [_styles(fig) for fig in figures]
    assert len(seen) == 5
    for method in methods:
        label = method_label(method)
        found = {v for s in seen for text, v in s.items() if text == label or text.startswith(label + " — ")}
        assert len(found) == 1, (method, found)
        want = method_style(method)
        assert found == {(want["color"].lower(), want["marker"])}
    # AdaSSP is in four of the figures (the map draws its marker in the cell it wins)
    ada = method_style("adassp")
    cell = [ln for ln in figures[3].axes[0].lines if ln.get_marker() == ada["marker"]]
    assert len(cell) == 2 and all(ln.get_color().lower() == ada["color"].lower() for ln in cell)


def test_every_caption_states_the_setting_and_the_repetitions(tmp_path, figures):
    plotting.error_curves(_error_summary(["ols", "adassp"], reps=37), [tmp_path / "e.png"], title="t", xlabel="m",
                          ylabel="e", note=plotting.HEADLINE_NOTE, **KW)  # fmt: skip
    plotting.attack_figure(_attack_summary(["ols", "adassp"], reps=9), [tmp_path / "a.png"], title="t", xlabel="m",
                           epsilon=0.5, delta="10/n^1.1", calibration="tight", tuning="decoy")  # fmt: skip
    ratios = pd.DataFrame({"epsilon": [0.5], "m": [100], "ratio": [3.0], "best_private": ["adassp"]})
    plotting.privacy_map_figure(ratios, [tmp_path / "p.png"], title="t", delta="10/n^1.1", calibration="tight",
                                tuning="decoy", reps=4)  # fmt: skip
    table = pd.DataFrame({"method": ["dpsl_kt"] * 2, "epsilon": [1.0, 2.0], "mean": [0.3, 0.2], "sd": [0.01, 0.01],
                          "paper_mean": [np.nan] * 2, "paper_sd": [np.nan] * 2, "private": [True] * 2,
                          "proven": [True] * 2, "trials": [12, 12]})  # fmt: skip
    plotting.transfer_figure(table, [tmp_path / "t.png"], title="t", ylabel="e", delta=1e-5, calibration="tight")
    texts = [caption_text(fig) for fig in figures]
    for text, reps in zip(texts, ("37", "9", "4", "12"), strict=True):
        assert f"{reps} repetitions" in text and "tight calibration" in text, text
    for text in texts[:3]:
        assert "δ = 10/n^1.1" in text and "tuning: decoy" in text
    assert "ε = 0.5" in texts[0] and "ε = 0.5" in texts[1]
    assert "error_curves_all" in texts[0]  # why these methods


def test_the_simulation_figure_states_its_setting_and_repetitions(tmp_path, figures):
    from dpcost.jobs import Job
    from dpcost.jobs.simulation import simulation_plot
    from dpcost.simulation import report

    rows = [("e", 1, "a", "mean", k, "", k != "sample_mean", n, 20, np.nan, np.nan, np.nan, 0.5, 0.5, 25, 1.0 / n, 0.0,
             0.5 / n, 2.0 / n, 0.0, 1e-5, True) for k in ("sample_mean", "dp_mean") for n in (1000, 4000)]  # fmt: skip
    cols = [*report.KEYS, "n_reps", "mean", "se", "q05", "q95", "s_used_mean", "delta", "proven"]
    pd.DataFrame(rows, columns=cols).to_csv(tmp_path / "summary.csv", index=False)
    pd.DataFrame(columns=["experiment", "method", "variant", "epsilon", "shape", "n", "fitted"]).to_csv(
        tmp_path / "rates.csv", index=False
    )
    simulation_plot(Job("simulation_plot", {"summary": tmp_path / "summary.csv", "rates": tmp_path / "rates.csv"},
                        {"png": tmp_path / "f.png", "pdf": tmp_path / "f.pdf"},
                        {"privacy": {"epsilon": 0.5, "delta": "10/n^1.1"}, "calibration": "paper", "deltas": {}},
                        {"number": "1"}))  # fmt: skip
    text = caption_text(figures[0])
    assert "25 repetitions" in text and "paper calibration" in text and "tuning: fixed" in text
    assert "ε = 0.5" in text and "δ = 10/n^1.1" in text


def test_the_attack_figure_says_when_nothing_is_traceable(tmp_path, figures):
    kw = dict(title="t", xlabel="m", epsilon=0.5, delta=1e-5, calibration="tight", tuning="fixed")
    flat = _attack_summary(["ols", "adassp"], auc=0.505)
    plotting.attack_figure(flat, [tmp_path / "a.png"], **kw)
    plotting.attack_figure(_attack_summary(["ols", "adassp"], auc=0.8), [tmp_path / "b.png"], **kw)
    nothing, something = (caption_text(fig) for fig in figures)
    assert "How to read" in nothing and "How to read" in something
    assert "non-private one included, sits at guessing" in nothing
    assert "sits at guessing" not in something  # OLS is traced at AUC 0.8: the sentence would be false
    assert plotting.untraceable(flat) and not plotting.untraceable(_attack_summary(["ols"], auc=0.8))
    # 5 repetitions of 200 members and 200 others: guessing's standard error is 0.0129, so 0.52 is guessing and
    # 0.53 is not, however small the repetitions' own spread (0.001 here)
    assert plotting.untraceable(_attack_summary(["ols"], auc=0.52))
    assert not plotting.untraceable(_attack_summary(["ols"], auc=0.53))
    assert "within 2.50 s.e. of 0.5, a 5 % family-wise allowance over the 4 points" in nothing  # z of 4 points


def test_many_points_of_pure_guessing_do_not_flip_the_verdict():
    # 180 (method, m) points at no leak (the review's case: 8 of 180 beyond 2 s.e.): each AUC guessing's own draw
    s = pd.concat([_attack_summary(["ols"], reps=5)] * 90, ignore_index=True)
    null_se = np.sqrt((2 * 200 + 1) / (12 * 200**2) / 5)
    s["auc"] = 0.5 + null_se * np.random.default_rng(7).standard_normal(len(s))
    assert (np.abs(s.auc - 0.5) > 2 * null_se).sum() >= 5  # the 2-s.e. rule would call this traceable
    assert plotting.untraceable(s)
    s.loc[0, "auc"] = 0.5 + 4 * null_se  # one point beyond the family-wise allowance (z = 3.62) is a finding
    assert not plotting.untraceable(s)


def test_a_spike_of_a_few_repetitions_is_named():
    s = _error_summary(["ols", "ssp"])
    assert plotting.heavy_tails(s) is None
    s.loc[(s.method == "ssp") & (s.m == 100), "mean"] = 15.2  # the housing run's SSP at m = 2,000: median 1.29
    s.loc[(s.method == "ssp") & (s.m == 100), "median"] = 1.29
    text = plotting.heavy_tails(s)
    assert "ssp at m = 100: mean 12× its median" in text and "ols" not in text
