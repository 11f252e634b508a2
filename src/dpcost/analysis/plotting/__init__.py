"""Figures a reader understands in ten seconds: a title of at most two lines in plain words, the setting (ε, δ,
calibration, tuning, repetitions, bands) in a caption below the axes, legends that say what each method is, one style
per method in every figure (:func:`method_style`; colour × marker × line, readable in greyscale), at most about seven
curves a panel (more: small multiples), tick labels that never overlap, colour bars labelled as the cells read.

Modules: :mod:`.style` (styles, labels, the caption's setting), :mod:`.layout` (the frame, ticks), :mod:`.curves`
(error curves), :mod:`.heatmaps` (privacy map, benchmark heat map), :mod:`.ranked_chart` (the benchmark's ranked chart),
:mod:`.attack_figure`, :mod:`.inference_figure`, :mod:`.targeted_figure`, :mod:`.transfer_figure`."""

from .attack_figure import attack_figure, untraceable
from .curves import (
    ABSTAIN,
    ABSTAINS,
    HEADLINE_NOTE,
    MAX_CURVES,
    PANEL_CURVES,
    abstainers,
    error_curves,
    headline,
    heavy_tails,
    panels,
)
from .heatmaps import benchmark_heatmap, privacy_map_figure
from .inference_figure import inference_figure
from .layout import CAPTION, caption_text, declutter, finish, log_axis, log_m_axis, plain_number, plt
from .ranked_chart import benchmark_figure, ranking
from .style import caption, legend_label, method_label, method_style, repetitions, tuning_text
from .targeted_figure import benchmark_targeted_figure, targeted_figure
from .transfer_figure import transfer_figure

__all__ = [
    "ABSTAIN",
    "ABSTAINS",
    "CAPTION",
    "HEADLINE_NOTE",
    "MAX_CURVES",
    "PANEL_CURVES",
    "abstainers",
    "attack_figure",
    "benchmark_figure",
    "benchmark_heatmap",
    "benchmark_targeted_figure",
    "caption",
    "caption_text",
    "declutter",
    "error_curves",
    "finish",
    "headline",
    "heavy_tails",
    "inference_figure",
    "legend_label",
    "log_axis",
    "log_m_axis",
    "method_label",
    "method_style",
    "panels",
    "plain_number",
    "plt",
    "privacy_map_figure",
    "ranking",
    "repetitions",
    "targeted_figure",
    "transfer_figure",
    "tuning_text",
    "untraceable",
]
