"""Figures: a second, zoomed panel appears exactly when a method is orders of magnitude off the others."""

import struct

import pandas as pd

from dpcost.analysis.plotting import error_curves


def _summary(worst: float) -> pd.DataFrame:
    rows = []
    for method, base in (("ols", 0.1), ("adassp", 0.8), ("diffprivlib", worst)):
        for m in (100, 1000):
            rows.append((method, m, base, base * 0.5, base * 2))
    return pd.DataFrame(rows, columns=["method", "m", "mean", "q05", "q95"])


def _png_width(path) -> int:
    return struct.unpack(">I", path.read_bytes()[16:20])[0]


def test_zoom_panel_only_when_a_curve_is_far_off(tmp_path):
    kw = dict(title="t", xlabel="m", ylabel="error", epsilon=0.5, delta=1e-5, reference=(1.3, "zero"))
    error_curves(_summary(5.0), [tmp_path / "one.png"], **kw)
    error_curves(_summary(1e5), [tmp_path / "two.png"], **kw)
    # 9.5 and 14.5 inches at 150 dpi
    assert _png_width(tmp_path / "one.png") == 1425 and _png_width(tmp_path / "two.png") == 2175
