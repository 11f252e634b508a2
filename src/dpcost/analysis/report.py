"""HTML views of a run's results for ``snakemake --report``: the headline of an analysis (its error-curve figure and
the table of its largest m, shown on the report's first page), every CSV table, the privacy ledger and the
provenance record, each readable in the report rather than a download only. Pure functions from tables and
records to HTML text; every value is escaped, and the text is ASCII (other characters as references), so that it
reads the same whatever charset a browser assumes."""

from __future__ import annotations

import base64
import html
import math
import numbers
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;font-size:14px;margin:1rem 1.5rem;color:#1f2937}
h1{font-size:1.35rem}h2{font-size:1.1rem;margin-top:1.5rem}
table.dpcost{border-collapse:collapse;margin:.5rem 0 1rem;font-size:13px}
table.dpcost th,table.dpcost td{border:1px solid #d1d5db;padding:.2rem .45rem;text-align:left;vertical-align:top}
table.dpcost th{background:#f3f4f6;position:sticky;top:0}
table.dpcost td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.dpcost tr:nth-child(even) td{background:#fafafa}
details{margin:.25rem 0}summary{cursor:pointer}p.note{color:#4b5563}
"""
# the headline is shown inside the report's first page, whose text column is narrow (Tailwind's max-w-lg): widened
# for the figure and the table, and styled by itself (the report's own stylesheet does not style tables)
# Snakemake's landing page lays the description (this fragment) and its rule graph side by side in one flex row:
# the row wraps, so the graph goes below the headline when both do not fit (at 1,440 px it was drawn over the table),
# and a table wider than the page scrolls inside its own box instead of widening the description
HEADLINE_STYLE = (
    ".flex:has(> .py-2 > .prose .dpcost-headline){flex-wrap:wrap}"
    ".py-2:has(> .prose .dpcost-headline){min-width:0;max-width:100%}"
    ".prose:has(.dpcost-headline){max-width:60rem}"
    ".dpcost-scroll{overflow-x:auto;max-width:100%}"
    ".dpcost-headline img{max-width:100%;height:auto}"
    ".dpcost-headline table{border-collapse:collapse;font-size:12px;margin:.5rem 0 1.5rem}"
    ".dpcost-headline th,.dpcost-headline td{border:1px solid #d1d5db;padding:.15rem .4rem;text-align:left}"
    ".dpcost-headline td.num{text-align:right;white-space:nowrap}"
)
FOLD = 12  # a mapping or list longer than this is folded (<details>), e.g. the truth of 200 SNPs


def ascii_html(text: str) -> str:
    return text.encode("ascii", "xmlcharrefreplace").decode("ascii")


def page(title: str, body: str) -> str:
    """A whole HTML page (a report item shown in the report's frame)."""
    return ascii_html(
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head>\n<body>\n<h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n"
    )


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def fmt(value, digits: int = 4) -> str:
    """A cell's text: numbers to ``digits`` significant digits, booleans yes/no, missing values empty."""
    if _missing(value):
        return ""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return f"{float(value):.{digits}g}"
    return str(value)


def _cell(value, digits: int = 4, title: str | None = None) -> str:
    numeric = isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)
    text = html.escape(fmt(value, digits))
    attrs = (' class="num"' if numeric and text else "") + (f' title="{html.escape(title)}"' if title else "")
    return f"<td{attrs}>{text}</td>"


def table(
    df: pd.DataFrame,
    *,
    titles: Mapping[str, str] | None = None,
    digits: int = 4,
    cell_titles: Mapping[str, Mapping] | None = None,
) -> str:
    """``df`` as an HTML table, its columns in order; ``titles``: a tooltip per column, ``cell_titles``: per column,
    a tooltip per value (e.g. a method's label on its name)."""
    titles, cell_titles = titles or {}, cell_titles or {}
    tips = [cell_titles.get(c, {}) for c in df.columns]
    head = "".join(
        (f'<th title="{html.escape(titles[c])}">' if c in titles else "<th>") + f"{html.escape(str(c))}</th>"
        for c in df.columns
    )
    rows = "\n".join(
        "<tr>" + "".join(_cell(v, digits, tip.get(v)) for v, tip in zip(row, tips, strict=True)) + "</tr>"
        for row in df.itertuples(index=False)
    )
    return f'<table class="dpcost">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody>\n</table>'


def value_html(value, digits: int = 6, *, fold: bool = True) -> str:
    """Any JSON value, readably: a mapping as a two-column table, a list of like mappings as a table, a list of
    scalars inline or as a list; anything longer than :data:`FOLD` folded below the top (``fold``)."""
    if isinstance(value, Mapping):
        if not value:
            return "<i>none</i>"
        rows = "\n".join(
            f"<tr><th>{html.escape(str(k))}</th><td>{value_html(v, digits)}</td></tr>" for k, v in value.items()
        )
        out = f'<table class="dpcost">\n{rows}\n</table>'
        return _fold(out, len(value), "entries") if fold else out
    if isinstance(value, Sequence) and not isinstance(value, str):
        if not value:
            return "<i>none</i>"
        if all(isinstance(v, Mapping) for v in value) and len({tuple(v) for v in value}) == 1:
            out = table(pd.DataFrame([{k: _flat(x) for k, x in v.items()} for v in value]), digits=digits)
        elif all(not isinstance(v, Mapping | list) for v in value) and sum(len(fmt(v)) for v in value) < 120:
            return html.escape(", ".join(fmt(v, digits) for v in value))
        else:
            out = "<ul>" + "".join(f"<li>{value_html(v, digits)}</li>" for v in value) + "</ul>"
        return _fold(out, len(value), "items") if fold else out
    return html.escape(fmt(value, digits))


def _flat(value):
    """A table cell's value: nested values as their short text."""
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {_flat(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(fmt(v, 6) for v in value)
    return value


def _fold(out: str, n: int, what: str) -> str:
    return f"<details><summary>{n} {what}</summary>{out}</details>" if n > FOLD else out


def _list(items: Sequence[str]) -> str:
    if not items:
        return "<p><i>none</i></p>"
    return "<ul>" + "".join(f"<li>{html.escape(str(s))}</li>" for s in items) + "</ul>"


# ------------------------------------------------------------------------------------------------------ the headline
_FIRST = ("method", "mean", "se")
# the columns of summary.csv that say under which setting a row was computed: the line above the table says the
# ones every row of it shares; any other column (a result: median, quantiles, support_recovered, …) stays
_SETTINGS = ("m", "n_reps", "epsilon", "delta", "calibration", "tuning_mode", "end_to_end", "private", "proven")


def headline_rows(summary: pd.DataFrame, methods: Sequence[str] | None = None) -> tuple[pd.DataFrame, dict]:
    """The rows of the largest m (of ``methods``, every method if None), best mean first, and the settings they
    share (the setting columns whose non-empty values are all equal: m, repetitions, ε, δ, …), which leave the
    table for the line above it."""
    top = summary[summary["m"] == summary["m"].max()]
    if methods is not None:
        top = top[top["method"].isin(methods)]
    top = top.sort_values("mean", kind="stable").reset_index(drop=True)
    shared = {}
    for column in (c for c in _SETTINGS if c in top):
        values = top[column].dropna().unique()
        if len(values) == 1 and (len(top) > 1 or column == "m"):
            shared[column] = values[0]
    rest = [c for c in top.columns if c not in _FIRST and c not in shared]
    return top[[c for c in _FIRST if c in top] + rest], shared


def answer(rows: pd.DataFrame, m) -> str | None:
    """One sentence: the best private method's mean error at the largest m against the best non-private one's."""
    if "private" not in rows:
        return None
    private = rows["private"].astype(str).str.lower() == "true"
    if not private.any() or private.all():
        return None
    best, base = rows[private].iloc[0], rows[~private].iloc[0]
    se = f" (se {fmt(best['se'], 2)})" if "se" in rows and not _missing(best["se"]) else ""
    text = (
        f"At the largest m = {fmt(m)}, the best private method shown, {best['method']}, has mean error "
        f"{fmt(best['mean'], 3)}{se}: {fmt(best['mean'] / base['mean'], 3)} times that of the non-private "
        f"{base['method']} ({fmt(base['mean'], 3)})."
    )
    if "sp_rmse" in rows and not (_missing(best["sp_rmse"]) or _missing(base["sp_rmse"])):
        # the papers' ratio explodes as m nears n (the non-private error against the full-data fit goes to 0): the
        # cost is read on the yardstick that keeps the full-data fit's own sampling error (docs/methods.md)
        text += (
            f" Counting the full-data fit's own sampling error (superpopulation RMSE), privacy costs "
            f"{fmt(float(best['sp_rmse']) / float(base['sp_rmse']), 3)} times."
        )
    return text


def headline(
    title: str,
    summary: pd.DataFrame,
    png: bytes,
    *,
    methods: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    note: str = "",
) -> str:
    """An analysis's headline as an HTML fragment (no page around it: the report's first page includes it): the
    error-curve figure, a sentence with the answer, and the table of the largest m."""
    rows, shared = headline_rows(summary, methods)
    titles = {"mean": "mean estimation error over the repetitions", "se": "standard error of that mean"}
    setting = ", ".join(f"{k} = {fmt(v)}" for k, v in shared.items())
    sentence = answer(rows, summary["m"].max())
    figure = base64.b64encode(png).decode("ascii")
    parts = [
        f'<div class="dpcost-headline"><style>{HEADLINE_STYLE}</style>',
        f"<h2>{html.escape(title)}</h2>",
        f'<img alt="{html.escape(title)}: error curves" src="data:image/png;base64,{figure}">',
        f"<p><b>{html.escape(sentence)}</b></p>" if sentence else "",
        f"<p>The methods of the figure at the largest m ({html.escape(setting)}), best mean error first:</p>",
        f'<div class="dpcost-scroll">{table(rows, titles=titles, cell_titles={"method": labels or {}})}</div>',
        f'<p class="note">{html.escape(note)}</p>' if note else "",
        "</div>",
    ]
    return ascii_html("\n".join(p for p in parts if p) + "\n")


def figure_and_table(title: str, png: bytes, df: pd.DataFrame, text: str) -> str:
    """A headline fragment of a figure and a table as they are (the benchmark's figure and its wins)."""
    figure = base64.b64encode(png).decode("ascii")
    return ascii_html(
        f'<div class="dpcost-headline"><style>{HEADLINE_STYLE}</style>\n<h2>{html.escape(title)}</h2>\n'
        f'<img alt="{html.escape(title)}" src="data:image/png;base64,{figure}">\n<p>{html.escape(text)}</p>\n'
        f'<div class="dpcost-scroll">{table(df)}</div>\n</div>\n'
    )


def privacy_map(needed: pd.DataFrame, ratios: pd.DataFrame) -> str:
    """The ε needed per m, then the map's grid: per (m, ε) the best private method's mean error over the best
    non-private one's, and the table as it is."""
    parts = ["<h2>The smallest ε of the grid that gets within 2× (1.25×) of the non-private error</h2>", table(needed)]
    if {"m", "epsilon", "ratio"} <= set(ratios.columns):
        grid = ratios.pivot_table(index="m", columns="epsilon", values="ratio", aggfunc="first")
        grid = grid.rename(columns=lambda e: f"ε = {fmt(e)}").reset_index()
        parts += [
            "<h2>Best private mean error over the best non-private one, per m (rows) and ε (columns)</h2>",
            table(grid, digits=3),
        ]
    parts += ["<h2>Every cell (privacy_map_ratios.csv)</h2>", table(ratios)]
    return "\n".join(parts)


# ------------------------------------------------------------------------------------------------- ledger, provenance
_LEDGER_SETTINGS = ("neighbours", "epsilon", "delta", "delta_is_evaluated_at", "calibration", "sampler", "on_invalid")
_ASSUMPTION = "assumption (enforced in code)"
_RELEASE = ("mechanism", "kind", "norm", "sensitivity", "noise_scale", "count", "coordinates", "noise", "sampler")


def ledger(record: Mapping) -> str:
    """A privacy ledger (``privacy_ledger.json``) digested: the setting, what is not private, per method its
    guarantee, calibration, composition, enforced assumption, tuning and warnings, then each private method's
    releases per m (folded), and whatever else the record holds."""
    methods = record.get("methods", {})
    rows = []
    for name, e in methods.items():
        tuning = e.get("tuning") or {}
        warnings = [*(e.get("warnings") or []), *([e["delta_warning"]] if e.get("delta_warning") else [])]
        rows.append(
            {
                "method": name,
                "label": e.get("label"),
                "private": e.get("private"),
                "guarantee": e.get("guarantee"),
                "calibration": e.get("calibration"),
                "composition": e.get("composition"),
                "assumption (enforced in code)": e.get(_ASSUMPTION),
                "tuning": "; ".join(str(tuning[k]) for k in ("mode", "looked_at") if tuning.get(k)),
                "warnings": " | ".join(warnings),
            }
        )
    parts = [
        "<h2>Setting</h2>",
        value_html({k: record[k] for k in _LEDGER_SETTINGS if k in record}),
        "<h2>What is not private</h2>",
        _list(record.get("not_private", [])),
    ]
    if record.get("notes"):
        parts += ["<h2>Warnings</h2>", _list(record["notes"])]
    parts += ["<h2>Per method</h2>", table(pd.DataFrame(rows)) if rows else "<p><i>no method</i></p>"]
    if "table" in record:
        parts += ["<h2>Publishing every method of the table</h2>", value_html(record["table"])]
    if "end_to_end" in record:
        parts += [
            "<h2>Private from end to end (no constant chosen by looking at the data)</h2>",
            value_html(record["end_to_end"]),
        ]
    parts.append("<h2>Releases per method and m</h2>")
    for name, e in methods.items():
        per_m = e.get("per_m") or []
        if not per_m:
            continue
        releases = [
            {
                "m": p.get("m"),
                "epsilon": p.get("epsilon"),
                "delta": p.get("delta"),
                **{k: r.get(k) for k in _RELEASE if k in r},
            }
            for p in per_m
            for r in (p.get("releases") or [{}])
        ]
        tuning = value_html({"tuning": e["tuning"]}) if e.get("tuning") else ""
        summary = f"{html.escape(name)}: {len(releases)} releases over {len(per_m)} m"
        releases_table = table(pd.DataFrame(releases), digits=6)
        parts.append(f"<details><summary>{summary}</summary>{releases_table}{tuning}</details>")
    known = {*_LEDGER_SETTINGS, "dataset", "not_private", "notes", "methods", "table", "end_to_end", "tuning"}
    others = {k: v for k, v in record.items() if k not in known}
    if others:
        parts += ["<h2>Also recorded</h2>", value_html(others, fold=False)]
    return "\n".join(parts)


# where a preprocessing record says where its data came from
_SOURCE_KEYS = ("source", "files", "accession", "url", "sha256", "content_sha256")
_PRIVACY_KEYS = ("private", "privacy_note")


def provenance(meta: Mapping) -> str:
    """A preprocessing record (``preprocessing.json``): where the data came from (URL, bytes, checksums, retrieval
    time), what is not private, then every step in the record's order, long values folded."""
    source = {k: meta[k] for k in _SOURCE_KEYS if k in meta}
    where = value_html(source, fold=False) if source else "<p><i>not recorded</i></p>"
    parts = ["<h2>Source and checksums</h2>", where]
    parts += ["<h2>What is not private</h2>", value_html({k: meta[k] for k in _PRIVACY_KEYS if k in meta})]
    steps = {k: v for k, v in meta.items() if k not in _SOURCE_KEYS and k not in _PRIVACY_KEYS}
    parts += ["<h2>Steps and what they found</h2>", value_html(steps, fold=False)]
    return "\n".join(parts)
