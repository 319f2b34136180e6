"""The forgetting check of `adapt-judge`: what an adapted judge lost on the shipped dev rows, judged as
`score` judges a claim's citations.

The rows are models/adaptation/anchor-dev.jsonl.gz (training/anchor.py): the dev split of the shared
data, each row with every one of its passages, whole. Both judges read them through the model judge
over the row's whole passages (windows, a set judged with its parts, calibration, uncertain band,
guard), the adapted weights exported to int8 ONNX as the written judge runs them. Two readings were
measured too lenient: each row at the one window training uses (an adaptation that check passed lost
0.065 on the whole rows), and the adapted weights run in fp32 on a sample of 300 rows (a gain of 0.015
there, a loss of 0.026 for the int8 judge written on all 584 English rows; docs/model-judge.md).

Chinese rows count only for a judge that judges Chinese with its own model (`zh=model`: a vocabulary
that reads Chinese, judge-v2's). Judge-v1 sends Chinese to the embedding judge, whose threshold
adapting refits apart on the team's Chinese labels; its check leaves them out and says so.

The loss is the base judge's balanced accuracy (full vs rest, an unsure pair at its best guess) minus
the adapted judge's, on the same rows, with the paired bootstrap interval of that difference
(stats.paired_balanced_accuracy_difference), over all rows and over each language's. The check holds
when none of these losses is above FORGETTING_LIMIT: a judge that gains in English cannot hide a loss
in Chinese in the pooled figure.

Each source's loss is given too (`by_source`), but does not decide: on 120 to 306 rows a source's dev
loss says little about its held-out rows (for one adaptation WiCE's dev rows gained 0.028 where its test
rows lost 0.050, and Factcheck-GPT's lost 0.022 where its test rows lost 0.046; docs/model-judge.md,
"Each source's loss"), so a limit on each would refuse or keep adaptations by chance. It shows where
the loss is.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from citeaudit.files.labelled import Row
from citeaudit.records import Judgment
from citeaudit.intervals import what_was_drawn
from citeaudit.stats import balanced_accuracy, drawing, paired_balanced_accuracy_difference
from citeaudit.training.anchor import read_dev_rows
from citeaudit.training.validation import row_groups

FORGETTING_LIMIT = 0.02
LANGUAGES = {"en": "English", "zh": "Chinese"}
CHINESE_LEFT_OUT = ("the Chinese dev rows are left out: this judge sends Chinese to the embedding judge, whose "
                    "threshold is adapted apart (on the team's Chinese labels), not to the model checked here")
CHINESE_LEFT_OUT_V2 = ("the Chinese dev rows are left out: this judge hands Chinese to judge-v2, which the adaptation "
                       "leaves as it is")
CHINESE_LEFT_OUT_HELD = ("the Chinese dev rows are left out here: this judge hands Chinese to the adapted judge-v2 it "
                         "holds, checked on them when it was adapted")


def languages_judged(judge) -> tuple[str, ...]:
    """The languages whose dev rows a model judge reads with its own model: Chinese only under `zh=model`."""
    return ("en", "zh") if judge.zh == "model" else ("en",)


def anchor_rows(limit: int | None = None, exclude: Sequence[str] = (), languages: Sequence[str] = ("en",)) -> list[Row]:
    """The shipped dev rows of `languages` the check reads, each with all its passages, but those of the
    `exclude` sources; of each language a fixed sample of `limit` when it has more."""
    rows = read_dev_rows()
    out: list[Row] = []
    for lang in languages:
        found = [r for r in rows if r.lang == lang and r.source not in exclude]
        if limit and limit < len(found):
            found = random.Random(0).sample(found, limit)
        out += found
    return out


def loss(rows: Sequence[Row], base: Sequence[Judgment], adapted: Sequence[Judgment], resamples: int,
         seed: int, by_groups: bool = True, groups: Sequence[int] | None = None) -> dict[str, Any]:
    """Rows, base and adapted balanced accuracy, and the loss (base minus adapted) with its paired bootstrap
    interval; over all rows, then `by_language` and `by_source` (shown, not deciding). The interval draws
    whole groups of rows that share a claim or a passage (`groups`, else validation.row_groups), or single
    rows when not `by_groups`; each figure's `resampling` says which (stats.drawing). Only the loss itself
    decides the check."""
    if by_groups and groups is None:
        groups = row_groups(rows)

    def figures(ix: list[int]) -> dict[str, Any]:
        gold = [rows[i].label == "full" for i in ix]
        before = [base[i].label == "full" for i in ix]
        after = [adapted[i].label == "full" for i in ix]
        chosen, drawn = drawing("groups" if by_groups else "rows", "row", len(ix), lambda: [groups[i] for i in ix])
        gain, interval = paired_balanced_accuracy_difference(gold, before, after, resamples, seed, groups=chosen)
        return {"rows": len(ix), "base": _round(balanced_accuracy(gold, before)),
                "adapted": _round(balanced_accuracy(gold, after)), "loss": None if gain is None else _round(-gain),
                "loss_ci": [_round(-interval[1]), _round(-interval[0])] if interval else None, "resampling": drawn}

    out = figures(list(range(len(rows))))
    out["by_language"] = {lang: figures(ix) for lang in LANGUAGES
                          if (ix := [i for i, r in enumerate(rows) if r.lang == lang])}
    sources = sorted({r.source for r in rows if r.source})
    out["by_source"] = {source: figures([i for i, r in enumerate(rows) if r.source == source]) for source in sources}
    return out


def within_limit(found: dict[str, Any]) -> bool:
    """No loss above the limit: over all rows, nor in any language."""
    return all(f["loss"] is None or f["loss"] <= FORGETTING_LIMIT for f in [found, *found["by_language"].values()])


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4) + 0.0  # + 0.0: no "-0.000" for no loss


def render(found: dict[str, Any]) -> list[str]:
    """The check as text lines: all rows, each language, what was kept and what was left out."""
    kept = found["kept"]
    lines = [f"Forgetting check on {found['rows']} shipped dev rows, each judged over its whole passages as `score` "
             f"judges it: BAcc {found['base']:.3f} -> {found['adapted']:.3f}, loss {_loss(found)} (limit "
             f"{found['limit']} over all rows and in each language); " + (f"kept {kept:.0%} of the adaptation" if kept else
                                       "none of the adaptation kept: every share of it lost more than the limit, "
                                       "so the model and its calibration stay the base judge's")]
    for lang, f in found["by_language"].items():
        lines.append(f"  {LANGUAGES[lang]:<8} {f['rows']:>4} rows  BAcc {f['base']:.3f} -> {f['adapted']:.3f}  "
                     f"loss {_loss(f)}")
    by_source = found.get("by_source") or {}
    if len(by_source) > 1:  # one source is its language's line again
        lines.append("  each source (shown, not deciding: a source's dev rows are too few to say its loss elsewhere):")
        for source, f in by_source.items():
            lines.append(f"    {source:<14} {f['rows']:>4} rows  BAcc {_figure(f['base'])} -> {_figure(f['adapted'])}  "
                         f"loss {_loss(f)}")
    if found.get("left_out"):
        lines.append(f"  {found['left_out']}")
    if found.get("resampling"):
        lines.append(f"  intervals of the loss: paired bootstrap 95 %{what_was_drawn(found['resampling'], 'row')}")
    return lines


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _loss(f: dict[str, Any]) -> str:
    ci = f.get("loss_ci")
    if f["loss"] is None:  # rows of one class: no balanced accuracy
        return "—"
    return f"{f['loss']:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")
