"""A self-contained HTML report: one file, no scripts, no external resources; opens offline.

Everything shown comes from the run log. All text is escaped by Jinja2's autoescape (passages are
untrusted input); the plots are inline SVG built here from numbers only.
"""

from __future__ import annotations

from typing import Any

from ..runlog import RunLog

LABEL_COLOURS = {"full": "#2e7d32", "partial": "#f9a825", "none": "#c62828", "contradicts": "#6a1b9a",
                 "uncertain": "#757575", "unjudged": "#bdbdbd"}  # the last two: counted apart
PLOT_MEASURES = ("citation_presence", "support", "citation_recall", "citation_precision", "coverage")


def _bar_chart(rows: list[tuple[str, dict[str, float | None]]], series: tuple[str, ...]) -> dict[str, Any]:
    """Grouped horizontal bars: one group per row, one bar per series (value in [0, 1] or None)."""
    bar_h, gap, label_w, bar_max = 12, 10, 160, 380
    bars, y = [], 0
    for name, values in rows:
        group = {"name": name, "y": y, "bars": []}
        for i, s in enumerate(series):
            v = values.get(s)
            group["bars"].append({"series": s, "y": y + i * bar_h, "w": 0 if v is None else v * bar_max,
                                  "text": "n/a" if v is None else f"{100 * v:.0f} %"})
        bars.append(group)
        y += len(series) * bar_h + gap
    return {"groups": bars, "height": y, "label_w": label_w, "width": label_w + bar_max + 170, "bar_h": bar_h - 2}


def _recall_curves(log: RunLog) -> list[dict[str, Any]]:
    curves = []
    for case in log.results.cases:
        points = []
        for name, ratio in case.retrieval.items():
            if name.startswith("recall@") and ratio.value is not None:
                points.append((int(name.split("@")[1]), ratio.value))
        if len(points) > 1:
            kmax = max(k for k, _ in points)
            kmin = min(k for k, _ in points)
            w, h = 340, 140
            coords = [(40 + (k - kmin) / max(kmax - kmin, 1) * (w - 90), h - 25 - v * (h - 50)) for k, v in points]
            curves.append({"case": case.id, "w": w, "h": h, "points": points,
                           "path": " ".join(f"{x:.1f},{y:.1f}" for x, y in coords), "coords": coords})
    return curves


def render_html(log: RunLog) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("citeaudit.report", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    texts = _passage_texts(log)
    answers = log.results.answers
    metric_rows = [(f"{a.case}/{a.answer}", {m: a.metrics[m].value if m in a.metrics else None for m in PLOT_MEASURES}) for a in answers]
    label_rows = [(f"{a.case}/{a.answer}", a.labels) for a in answers]
    return env.get_template("report.html.j2").render(
        log=log, answers=answers, texts=texts, zip=zip,
        metric_chart=_bar_chart(metric_rows, PLOT_MEASURES), measures=PLOT_MEASURES,
        label_rows=label_rows, label_colours=LABEL_COLOURS, curves=_recall_curves(log),
        summary=log.results.summary,
    )


def _passage_texts(log: RunLog) -> dict[tuple[str, str], dict[str, Any]]:
    """(case id, passage id) -> text, document, version, span: what each citation points to."""
    from ..runlog import resolved_cases

    out = {}
    for rc in resolved_cases(log):
        for pid, p in rc.passages.items():
            out[(rc.id, pid)] = {"text": p.text, "doc": p.doc_id, "version": p.version or "unversioned",
                                 "span": f"{p.start}–{p.end}", "title": p.title}
    return out
