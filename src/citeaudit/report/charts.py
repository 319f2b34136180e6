"""The report's charts as Vega-Lite specs, drawn to static SVG when the report is written by
vl-convert-python (the Vega team's converter: Vega and Vega-Lite run inside it, offline). The SVG goes
into the page as it is: no script, no font or data fetched, so the file stays self-contained.

Without the `report` extra the report keeps every table and says in one line how to get the charts.
"""

from __future__ import annotations

from typing import Any

from citeaudit.errors import ChartError
from citeaudit.extras import install_line
from citeaudit.metrics import names as N
from citeaudit.run.results import AnswerRecord, Ratios
from citeaudit.text import visible_controls

INSTALL_HINT = install_line("report")
HISTOGRAM_MEASURES = (N.SUPPORT, N.CITATION_PRECISION)
_FONT = "system-ui, sans-serif"


def available() -> bool:
    from importlib.util import find_spec

    return find_spec("vl_convert") is not None


def _spec(body: dict[str, Any]) -> dict[str, Any]:
    # Padding: the browser's sans-serif may run wider than the converter's measuring font.
    return {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "background": "white",
            "padding": {"left": 24, "right": 36, "top": 4, "bottom": 4},
            "config": {"font": _FONT, "axis": {"labelFontSize": 11, "titleFontSize": 11},
                       "legend": {"labelFontSize": 11, "titleFontSize": 11}, "view": {"stroke": None}},
            **body}


def _whole_ticks(counts) -> int:
    """A tick count for an axis of counts: no ticks between whole numbers when counts are small."""
    return max(1, min(5, max(counts, default=1)))


def histogram_spec(answers: list[AnswerRecord]) -> dict[str, Any] | None:
    """Per-answer support and citation precision, in tenths, one small chart per system and measure.
    The answers are counted per tenth here (1.0 falls in the last one), so the chart gets 20 rows per
    system, not one per answer."""
    import numpy as np

    edges = np.linspace(0, 1, 11)
    values = []
    systems = list(dict.fromkeys(a.system for a in answers))
    # a measure the run did not measure gets no chart (an empty one would read as no answer in any tenth)
    measures = [m for m in HISTOGRAM_MEASURES if any(m in a.metrics for a in answers)]
    for system in systems:
        for m in measures:
            found = [a.metrics[m].value for a in answers
                     if a.system == system and m in a.metrics and a.metrics[m].value is not None]
            counts, _ = np.histogram(found, bins=edges)
            values += [{"system": system, "measure": m, "from": float(edges[i]), "to": float(edges[i + 1]),
                        "answers": int(c)} for i, c in enumerate(counts)]
    if not any(v["answers"] for v in values):
        return None
    return _spec({
        "data": {"values": values},
        "mark": {"type": "bar", "color": "#1565c0"},
        "encoding": {
            "x": {"field": "from", "type": "quantitative", "bin": {"binned": True, "step": 0.1},
                  "scale": {"domain": [0, 1]}, "title": "per-answer value", "axis": {"format": ".0%"}},
            "x2": {"field": "to"},
            "y": {"field": "answers", "type": "quantitative", "title": "answers",
                  "axis": {"format": ",d", "tickCount": _whole_ticks(v["answers"] for v in values)}},
            "column": {"field": "measure", "type": "nominal", "title": None, "sort": measures},
            "row": {"field": "system", "type": "nominal", "title": None, "sort": systems},
        },
        "width": 230, "height": 110 if len(systems) <= 3 else 64,  # many systems: flatter rows
        "resolve": {"scale": {"y": "independent"}},
    })


def label_mix_spec(by_system: dict[str, dict[str, int]], colours: dict[str, str]) -> dict[str, Any] | None:
    values = [{"system": s, "label": label, "claims": n}
              for s, counts in by_system.items() for label, n in counts.items() if n]
    if not values:
        return None
    labels = [label for label in colours if any(v["label"] == label for v in values)]
    return _spec({
        "data": {"values": values},
        "mark": "bar",
        "encoding": {
            "y": {"field": "system", "type": "nominal", "title": None, "sort": list(by_system)},
            "x": {"field": "claims", "type": "quantitative", "stack": "normalize", "title": "share of claims",
                  "axis": {"format": ".0%"}},
            "color": {"field": "label", "type": "nominal", "title": "label",
                      "scale": {"domain": labels, "range": [colours[label] for label in labels]}},
            "order": {"field": "order", "type": "quantitative"},
        },
        "transform": [{"calculate": f"indexof({labels!r}, datum.label)", "as": "order"}],
        "width": 420, "height": {"step": 28},
    })


def recall_spec(retrieval: Ratios) -> dict[str, Any] | None:
    """Document recall@k and facts@k over every k the run scored."""
    values = []
    for name, r in retrieval.items():
        measure, _, k = name.partition("@")
        if k.isdigit() and r.value is not None:
            values.append({"measure": f"{measure}@k", "k": int(k), "value": r.value})
    if not values:
        return None
    return _spec({
        "data": {"values": values},
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": {"field": "k", "type": "quantitative", "title": "k (top of the ranking)",
                  "axis": {"tickMinStep": 1, "format": "d"}},
            "y": {"field": "value", "type": "quantitative", "title": None, "scale": {"domain": [0, 1]},
                  "axis": {"format": ".0%"}},
            "color": {"field": "measure", "type": "nominal", "title": None,
                      "scale": {"range": ["#1565c0", "#ef6c00"]}},
            "strokeDash": {"field": "measure", "type": "nominal", "title": None},  # equal curves stay apart
        },
        "width": 320, "height": 160,
    })


def diagnosis_spec(counts: list[dict[str, Any]], groups: list[str]) -> dict[str, Any] | None:
    """Findings per cause group, one bar per system within each group."""
    values = [c for c in counts if c["findings"]]
    if not values:
        return None
    return _spec({
        "data": {"values": values},
        "mark": "bar",
        "encoding": {
            "y": {"field": "group", "type": "nominal", "title": None, "sort": groups},
            "yOffset": {"field": "system", "type": "nominal"},
            "x": {"field": "findings", "type": "quantitative", "title": "findings",
                  "axis": {"format": ",d", "tickCount": _whole_ticks(v["findings"] for v in values)}},
            "color": {"field": "system", "type": "nominal", "title": "system"},
        },
        "width": 360, "height": {"step": 16},
    })


def safe_text(spec: Any) -> Any:
    """`spec` with every text in it (data values, titles, sort lists, domains, keys) made safe for the
    converter: a control character, bidirectional control, noncharacter or lone surrogate written as its
    escape, as a terminal shows it. The converter's text measuring aborts the whole process, beyond
    any `except`, on a C0 control or a noncharacter (measured with vl-convert 1.9: BEL, ESC, U+FFFE),
    and raises on a lone surrogate. Walked without recursion, so no spec is too deep for it."""
    out: list[Any] = [None]
    stack: list[tuple[Any, list[Any] | dict[str, Any], int | str]] = [(spec, out, 0)]
    while stack:
        value, holder, key = stack.pop()
        if isinstance(value, str):
            holder[key] = visible_controls(value)
        elif isinstance(value, dict):
            copy: dict[str, Any] = {}
            holder[key] = copy
            for k, v in value.items():
                k = visible_controls(k) if isinstance(k, str) else k
                copy[k] = None
                stack.append((v, copy, k))
        elif isinstance(value, (list, tuple)):
            items: list[Any] = [None] * len(value)
            holder[key] = items
            stack.extend((v, items, i) for i, v in enumerate(value))
        else:
            holder[key] = value
    return out[0]


def to_svg(spec: dict[str, Any]) -> str:
    """The chart as SVG; a ChartError when the converter fails (a Python exception, or a Rust panic
    that it turns into pyo3's PanicException, a BaseException)."""
    import vl_convert

    try:
        return vl_convert.vegalite_to_svg(safe_text(spec))
    except BaseException as err:
        if not isinstance(err, Exception) and type(err).__name__ != "PanicException":
            raise  # KeyboardInterrupt, SystemExit: not the converter's
        first_line = (str(err).strip().splitlines() or [""])[0]
        reason = visible_controls(f"{type(err).__name__}: {first_line}")
        raise ChartError(reason if len(reason) <= 200 else reason[:199] + "…") from None
