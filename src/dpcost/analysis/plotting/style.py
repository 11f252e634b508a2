"""What every figure says the same way: one style per method (:func:`method_style`), the legend text of a method
(:func:`legend_label`: its short name and citation, then what it does) and the caption's setting line
(:func:`caption`)."""

from __future__ import annotations

import textwrap
import zlib
from collections.abc import Mapping

import pandas as pd

from ...estimators.registry import METHODS

# One style per method in every figure (error curves, attack, privacy map, benchmark, LIBSVM, simulation), fixed by
# its place k in the registry. Colour (Okabe–Ito, colour-blind safe) × marker × line style:
#   colour  (k + 3·(k div 8)) mod 8   — the 8 colours in turn, shifted by 3 per block of 8 methods
#   marker  (k + 5·(k div 12)) mod 12 — the 12 markers in turn, shifted by 5 per block of 12
#   line    k mod 4
# so that (marker, line) — what greyscale shows — differs for any two of the first 48 methods, and any two methods
# fewer than 28 places apart in the registry (every family's methods: regression's 23 span 23 places) differ in at
# least two of colour, marker and line. tests/unit/analysis/test_figure_style.py checks both on the registry.
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p"]
_LINES = ["-", "--", "-.", ":"]
_COLOURS = ["#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#999999"]
_ORDER = {name: k for k, name in enumerate(METHODS)}
LEGEND_WIDTH = 60  # characters a legend line holds before it wraps


def method_style(name: str) -> dict:
    """``color``, ``marker`` and ``ls`` of a method, the same in every figure, from its index k in the registry (see
    above). A name outside the registry gets a fixed style from a checksum of the name (stable across runs, unlike
    ``hash``)."""
    k = _ORDER.get(name, len(_ORDER) + zlib.crc32(name.encode()) % 48)
    return {
        "color": _COLOURS[(k + 3 * (k // 8)) % len(_COLOURS)],
        "marker": _MARKERS[(k + 5 * (k // 12)) % len(_MARKERS)],
        "ls": _LINES[k % len(_LINES)],
    }


def method_label(name: str) -> str:
    """The short name and citation (the registry's label; the name itself outside the registry)."""
    return METHODS[name].label if name in METHODS else name


def legend_label(name: str, *notes: str, width: int = LEGEND_WIDTH) -> str:
    """What a legend says of a method: its label, what it does (the registry's ``what``) and any ``notes`` (e.g.
    "private end to end"), wrapped to ``width`` characters with the continuation lines indented."""
    what = METHODS[name].what if name in METHODS else ""
    text = method_label(name) + (f" — {what}" if what else "") + "".join(f" [{n}]" for n in notes if n)
    return textwrap.fill(text, width, subsequent_indent="   ", break_on_hyphens=False)


def caption(*, epsilon, delta, calibration: str, tuning: str | None, reps) -> str:
    """The setting every figure states in its caption: (ε, δ), calibration, tuning mode and repetitions.
    ``epsilon``: a value, or a phrase beginning with ε for a figure whose axis carries it ("ε per row")."""
    eps = epsilon if str(epsilon).startswith("ε") else f"ε = {epsilon}"
    how = f"{calibration} calibration" + (f"; tuning: {tuning}" if tuning else "")
    return f"Privacy: {eps}, δ = {delta}, {how}; {reps} repetitions per point."


def tuning_text(mode: str, modes: Mapping[str, str] | pd.Series) -> str:
    """The tuning of an analysis in words: its mode, and how many methods ran under another (a tuning-free method runs
    as "none" whatever the mode), e.g. "decoy (none for 5 methods)". ``modes``: each private method's mode."""
    counts: dict[str, int] = {}
    for v in dict(modes).values():
        if v != mode and isinstance(v, str):
            counts[v] = counts.get(v, 0) + 1
    other = [f"{m} for {n} method{'s' * (n > 1)}" for m, n in sorted(counts.items())]
    return mode + (f" ({'; '.join(other)})" if other else "")


def repetitions(n_reps: pd.Series) -> str:
    """The number of repetitions behind a table's rows: one number, or its range when rows differ."""
    lo, hi = int(n_reps.min()), int(n_reps.max())
    return str(lo) if lo == hi else f"{lo}–{hi}"
