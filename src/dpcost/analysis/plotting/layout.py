"""The frame of every figure (:func:`finish`): a title of at most two lines in plain words, the setting in a caption
below the axes, the legend beside them, and tick labels that never overlap (:func:`declutter`, on any grid)."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import ticker  # noqa: E402

CAPTION = "caption"  # the gid of a figure's caption text
TITLE_SIZE, CAPTION_SIZE, LEGEND_SIZE = 11.0, 7.5, 7.5
_LINE = 1.35  # a text line's height in font sizes
_CHAR = 0.56  # DejaVu Sans' mean character width in font sizes


def plain_number(v: float, _pos=None) -> str:
    """A tick value as people write it: 2,000, 0.5, 3; beyond 10⁶ or below 10⁻³ as a power of ten."""
    if not np.isfinite(v) or v <= 0:
        return f"{v:g}"
    if 1e-3 <= v < 1e6:
        return f"{v:,.0f}" if v >= 1 and float(v).is_integer() else f"{float(f'{v:.6g}'):g}"
    exp = math.floor(math.log10(v) + 1e-9)
    mant = float(f"{v / 10**exp:.3g}")
    return f"$10^{{{exp}}}$" if mant == 1 else rf"${mant:g}\times10^{{{exp}}}$"


class SpanLogLocator(ticker.Locator):
    """Major ticks of a log axis by the decades it spans: 1, 2, 5 × 10^k up to 2.5 decades, 1 and 3 × 10^k up to 4,
    powers of ten beyond (every second, third … past 8 decades); within less than half a decade, where these give
    fewer than two ticks, evenly spaced round numbers. :func:`declutter` thins what still collides."""

    def __call__(self):
        return self.tick_values(*self.axis.get_view_interval())

    def tick_values(self, vmin, vmax):
        vmin, vmax = sorted((float(vmin), float(vmax)))
        if not (vmin > 0 and np.isfinite(vmax)):
            return np.array([1.0])
        span = math.log10(vmax / vmin)
        subs = (1, 2, 5) if span <= 2.5 else (1, 3) if span <= 4 else (1,)
        step = max(1, math.ceil(span / 8))
        lo, hi = math.floor(math.log10(vmin)), math.ceil(math.log10(vmax))
        ticks = np.array([s * 10.0**e for e in range(lo - lo % step, hi + 1, step) for s in subs])
        inside = ticks[(ticks >= vmin * (1 - 1e-9)) & (ticks <= vmax * (1 + 1e-9))]
        if len(inside) >= 2:
            return ticks
        return ticker.MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]).tick_values(vmin, vmax)


def log_axis(axis) -> None:
    """Plain-number major labels (:func:`plain_number`) at :class:`SpanLogLocator`'s ticks on a log ``axis``; the
    minor ticks are gridlines only."""
    axis.set_major_locator(SpanLogLocator())
    axis.set_major_formatter(ticker.FuncFormatter(plain_number))
    axis.set_minor_formatter(ticker.NullFormatter())


def log_m_axis(ax) -> None:
    """A log x axis of sample sizes, labelled 2,000, 5,000, 10,000 … on any grid (:func:`log_axis`)."""
    ax.set_xscale("log")
    log_axis(ax.xaxis)


def tick_labels(axis, renderer) -> list[tuple[float, matplotlib.text.Text, bool]]:
    """(value, text, minor) of every tick label the axis draws: visible, non-empty, its tick within the view."""
    lo, hi = sorted(axis.get_view_interval())
    tol = 1e-9 * max(abs(lo), abs(hi), 1e-300)
    out = []
    for minor in (False, True):
        locs = axis.get_minorticklocs() if minor else axis.get_majorticklocs()
        ticks = axis.get_minor_ticks(len(locs)) if minor else axis.get_major_ticks(len(locs))
        for loc, tick in zip(locs, ticks, strict=True):
            if lo - tol <= loc <= hi + tol:
                out += [(float(loc), t, minor) for t in (tick.label1, tick.label2) if t.get_visible() and t.get_text()]
    return out


def _collide(a, b, pad: float = 0.0) -> bool:
    return a.x0 - pad < b.x1 and b.x0 - pad < a.x1 and a.y0 - pad < b.y1 and b.y0 - pad < a.y1


class _Only(ticker.Formatter):
    """``base``'s labels at the values kept, none elsewhere."""

    def __init__(self, base, keep):
        self.base, self.keep = base, np.asarray(sorted(keep))

    def set_axis(self, axis):
        super().set_axis(axis)
        self.base.set_axis(axis)

    def _kept(self, x) -> bool:
        return bool(np.isclose(self.keep, x, rtol=1e-9, atol=0).any())

    def __call__(self, x, pos=None):
        return self.base(x, pos) if self._kept(x) else ""

    def format_ticks(self, values):
        return [s if self._kept(v) else "" for v, s in zip(values, self.base.format_ticks(values), strict=True)]


def _plotted_x(axis) -> np.ndarray:
    """The x positions of the lines drawn on ``axis``'s axes if it is an x axis (the sample sizes of a curve), else
    none."""
    if axis.axis_name != "x":
        return np.array([])
    xs = [np.asarray(line.get_xdata(), dtype=float).ravel() for line in axis.axes.lines]
    xs = np.concatenate(xs) if xs else np.array([])
    return xs[np.isfinite(xs)]


def _thin(axis, labels, renderer) -> None:
    """Drop labels until none collide: minor labels first; named ticks (a heat map's rows and columns) are turned
    rather than dropped (x) or set smaller (y); numbers are kept greedily: on an x axis those at a position a line is
    drawn at first (a curve's sample sizes), then powers of ten on a log axis, then the rest from the left."""
    if any(minor for *_, minor in labels):
        axis.set_minor_formatter(ticker.NullFormatter())
        return
    if isinstance(axis.get_major_formatter(), ticker.FixedFormatter):
        texts = [t for _, t, _ in labels]
        turned = abs(texts[0].get_rotation())
        if axis.axis_name == "x" and turned < 89:
            plt.setp(texts, rotation=45 if turned < 44 else 90, ha="right" if turned < 44 else "center")
        else:
            plt.setp(texts, fontsize=max(4.5, texts[0].get_fontsize() * 0.85))
        return
    log = axis.get_scale() == "log"

    def decade(v: float) -> bool:
        return log and v > 0 and abs(math.log10(v) - round(math.log10(v))) < 1e-9

    plotted = _plotted_x(axis)

    def drawn_at(v: float) -> bool:
        return bool(np.isclose(plotted, v, rtol=1e-9, atol=0).any())

    kept, boxes = [], []
    for value, text, _ in sorted(labels, key=lambda vt: (not drawn_at(vt[0]), not decade(vt[0]), vt[0])):
        box = text.get_window_extent(renderer)
        if not any(_collide(box, b, pad=2.0) for b in boxes):
            kept.append(value)
            boxes.append(box)
    axis.set_major_formatter(_Only(axis.get_major_formatter(), kept))


def declutter(fig, relayout: Callable[[], None] = lambda: None, rounds: int = 6) -> None:
    """Thin, turn or shrink the tick labels of every axis of ``fig`` until no two overlap (:func:`_thin`), calling
    ``relayout`` after each round (the layout moves when labels change)."""
    for _ in range(rounds):
        fig.draw_without_rendering()  # the layout and every text's extent, without rasterising: 2x faster
        renderer = fig.canvas.get_renderer()
        clashing = []
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                labels = tick_labels(axis, renderer)
                boxes = [t.get_window_extent(renderer) for _, t, _ in labels]
                if any(_collide(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :]):
                    clashing.append((axis, labels))
        if not clashing:
            return
        for axis, labels in clashing:
            _thin(axis, labels, renderer)
        relayout()


def _chars(width_in: float, size: float) -> int:
    return max(30, int((width_in - 0.3) * 72 / (_CHAR * size)))


def finish(fig, paths: Sequence, *, title: str, caption: Sequence[str | None] = (), legend=None, dpi=None) -> None:
    """Frame ``fig`` and save it to every path, then close it: ``title`` above (plain words, wrapped to the width:
    at most two lines for any title this package draws), the ``caption`` parts below the axes in small text (the
    setting: ε, δ, calibration, tuning, repetitions, bands, and how to read the figure), ``legend`` (handles, labels)
    to the right of the axes. The figure grows by what these take, so the axes keep the size they were drawn at."""
    w, h = fig.get_size_inches()
    lw = lh = 0.0
    lg = None
    if legend and legend[0]:
        lg = fig.legend(*legend, loc="upper left", fontsize=LEGEND_SIZE, frameon=False, borderaxespad=0.0)
        fig.draw_without_rendering()
        box = lg.get_window_extent(fig.canvas.get_renderer())
        lw, lh = box.width / fig.dpi + 0.25, box.height / fig.dpi
    width = w + lw
    head = textwrap.wrap(title, _chars(width, TITLE_SIZE))
    foot = [line for part in caption if part for line in textwrap.wrap(part, _chars(width, CAPTION_SIZE))]
    top = len(head) * TITLE_SIZE * _LINE / 72 + 0.2
    bottom = len(foot) * CAPTION_SIZE * _LINE / 72 + 0.25
    height = max(h, lh + 0.5) + top + bottom
    fig.set_size_inches(width, height)
    fig.suptitle("\n".join(head), fontsize=TITLE_SIZE, y=1 - 0.08 / height, va="top")
    if foot:
        fig.text(
            0.12 / width,
            0.1 / height,
            "\n".join(foot),
            fontsize=CAPTION_SIZE,
            ha="left",
            va="bottom",
            color="#222222",
            gid=CAPTION,
        )
    rect = (0.0, bottom / height, w / width, 1 - top / height)

    def relayout():
        fig.tight_layout(rect=rect)
        if lg is not None:
            lg.set_bbox_to_anchor((w / width + 0.1 / width, 1 - top / height), transform=fig.transFigure)

    relayout()
    declutter(fig, relayout)
    for path in paths:
        fig.savefig(path, dpi=dpi or "figure")
    plt.close(fig)


def caption_text(fig) -> str:
    """The caption :func:`finish` wrote (lines joined by spaces), "" if none."""
    return " ".join(t.get_text().replace("\n", " ") for t in fig.texts if t.get_gid() == CAPTION)
