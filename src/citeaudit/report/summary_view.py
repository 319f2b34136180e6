"""The summary tables of a report: every figure of each system as the log keeps it, its raw counts, and a
95 % interval from a bootstrap over the answers (or cases) whose stored counts add up to it (from 2 to 19
of them, widened to span a jackknife's t interval: stats.ratio_intervals)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from citeaudit.metrics.names import ANSWER_LEVEL, DESCRIPTIONS, NOT_MEASURED, parse_at_k
from citeaudit.metrics.ratio import format_interval, format_percent
from citeaudit.intervals import WIDENED
from citeaudit.stats import MIN_GROUPS, ratio_intervals
from citeaudit.run.results import AnswerRecord, Ratios


@dataclass(frozen=True)
class FigureRow:
    measure: str
    value: str
    counts: str
    interval: str
    interval_note: str
    description: str
    signature: str


def figure_rows(ratios: Ratios, parts: list[Ratios], unit: str, expected: Sequence[str] = ()) -> list[FigureRow]:
    """One row per figure; `parts` are the per-answer (or per-case) ratios the figure sums. A measure of
    `expected` the run did not measure has its row too, saying so (in report order)."""
    intervals = _intervals(ratios, parts, unit)
    rows = []
    absent = [m for m in expected if m not in ratios]
    for measure in sorted([*ratios, *absent], key=ANSWER_LEVEL.index) if absent else ratios:
        if measure in absent:
            rows.append(FigureRow(measure, NOT_MEASURED, "—", "—", "", DESCRIPTIONS.get(measure, ""), ""))
            continue
        r = ratios[measure]
        interval, note = intervals[measure]
        value = format_percent(r.value) + (f" ({r.reason})" if r.reason else "")
        counts = r.ratio().counts()
        at_k = parse_at_k(measure)
        description = DESCRIPTIONS.get(f"{at_k[0]}@k" if at_k else measure, "")
        rows.append(FigureRow(measure, value, counts, interval, note, description, r.signature))
    return rows


def _intervals(ratios: Ratios, parts: list[Ratios], unit: str) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    resampled: list[str] = []
    for measure, r in ratios.items():
        if r.kind != "ratio" or r.value is None or not r.denominator:
            out[measure] = ("—", "no interval: the log keeps no per-item counts for this figure")
            continue
        own = [p[measure] for p in parts if measure in p]
        # Only a figure that is the plain sum of its parts is resampled over them.
        if (len(own) != len(parts) or not np.isclose(sum(p.numerator for p in own), r.numerator)
                or not np.isclose(sum(p.denominator for p in own), r.denominator)):
            out[measure] = ("—", f"no interval: the figure is not a sum over {unit}s")
            continue
        resampled.append(measure)
    if resampled:
        num = np.array([[p[m].numerator for m in resampled] for p in parts], dtype=float)
        den = np.array([[p[m].denominator for m in resampled] for p in parts], dtype=float)
        # the same resamples as the text and Markdown reports: one figure, one interval, in every format
        for measure, found in zip(resampled, ratio_intervals(num, den)):
            out[measure] = ("—", "no interval") if found is None else (
                format_interval(*found), f"95 % bootstrap over {len(parts)} {unit}s" + (
                    f", {WIDENED}" if 2 <= len(parts) < MIN_GROUPS else ""))
    return out


def label_counts(answers: list[AnswerRecord]) -> dict[str, int]:
    """Claims per label over some answers, as each answer's record counts them."""
    total: dict[str, int] = {}
    for a in answers:
        for label, n in a.labels.items():
            total[label] = total.get(label, 0) + n
    return total
