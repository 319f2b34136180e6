"""Measure a judge against human labels: balanced accuracy, ROC AUC and Cohen's kappa, with bootstrap
95 % intervals, overall and per source and language.

The rows are labelled DATA rows (labelled.py); the statistics are in stats.py. This layer runs a
judge over the rows and measures its judgments. AUC ranks by `scores["support"]` (the model judge's
calibrated probability) when there is one, else `scores["full"]` when the judge gives class
probabilities, else `scores["similarity"]`; it is None for a judge that gives none of these.

Every figure counts every row, a row the judge was unsure of (`uncertain`) at its best guess, its
label; the same figures over the rows it was sure of are given apart (`confident`), with the coverage,
the share of rows it was sure of, as `citeaudit agree` gives them. Given what the judge trained and
was calibrated on (judges/seen.py), the figures over the rows whose claim it has not seen are given
beside those over the rest.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from citeaudit.judges.base import Request, judge_many
from citeaudit.judges.seen import SeenClaims, claim_key, seen_summary
from citeaudit.files.labelled import Row
from citeaudit.records import Judgment
from citeaudit.stats import best_threshold, connected_groups, drawing, metrics, risk_coverage, score_from

def score_of(judgment: Judgment) -> float | None:
    """The score a judgment ranks by (see stats.score_from)."""
    return score_from(judgment.scores)


def predict(rows: Sequence[Row], judge, batch_size: int = 64,
            progress: Callable[[int], None] | None = None) -> list[Judgment]:
    """The judge's judgment of every row, batched when the judge offers `judge_batch`."""
    out: list[Judgment] = []
    for i in range(0, len(rows), batch_size):
        chunk = rows[i : i + batch_size]
        out += judge_many(judge, [Request.of(r.claim, r.passages) for r in chunk])
        if progress:
            progress(len(chunk))
    return out


def row_groups(rows: Sequence[Row]) -> list[int]:
    """A group number for each row: rows that cite the same passage text or state the same claim are one
    group, directly or through others (the claims a system made from one document, one claim cited to
    several passages; a claim is known by its words, as the split knows it: judges/seen.py `claim_key`).
    They are not independent evidence of how the judge does."""
    return connected_groups([[("claim", claim_key(r.claim))] + [("passage", p.text) for p in r.passages]
                             for r in rows])


def evaluate(rows: Sequence[Row], judgments: Sequence[Judgment], resamples: int = 1000,
             seed: int = 0, resample_by: str = "groups") -> dict[str, Any]:
    """Metrics of given judgments against the rows' labels, overall, by_source and by_lang; overall also
    under the names `citeaudit agree` gives every-pair figures (`n_all`, `balanced_accuracy_all`,
    `kappa_all`, each figure with `_ci`), the figures of the rows the judge was sure of (`confident`) and
    the share of those (`coverage`). Intervals draw whole groups of rows that share a claim or a
    passage (`row_groups`), or single rows with `resample_by="rows"`; `resampling` says which."""
    return _measured(rows, judgments, resamples, seed, row_drawing(rows, resample_by))


def row_drawing(rows: Sequence[Row], resample_by: str) -> tuple[list[int] | None, dict[str, Any]]:
    """What the intervals over `rows` draw (stats.drawing): the groups, or None for single rows, and what
    the output says of it. A `resample_by` other than "groups" or "rows" is a ValueError."""
    return drawing(resample_by, "row", len(rows), lambda: row_groups(rows))


def _measured(rows: Sequence[Row], judgments: Sequence[Judgment], resamples: int, seed: int,
              chosen: tuple[list[int] | None, dict[str, Any]]) -> dict[str, Any]:
    groups, drawn = chosen
    gold = [r.label for r in rows]
    pred = [j.label for j in judgments]  # an uncertain judgment's label is its best guess
    scores = [score_of(j) for j in judgments]

    def part(ix: Sequence[int]) -> dict[str, Any]:
        return metrics([gold[i] for i in ix], [pred[i] for i in ix], [scores[i] for i in ix], resamples, seed,
                       groups=None if groups is None else [groups[i] for i in ix])

    result = part(range(len(rows)))
    result["resampling"] = drawn
    result.update({f"{name}_all{ci}": result[f"{name}{ci}"] for name in ("balanced_accuracy", "kappa")
                   for ci in ("", "_ci")}, n_all=result["n"])
    sure = [i for i, j in enumerate(judgments) if not j.uncertain]
    result["coverage"] = len(sure) / len(rows) if rows else None
    result["confident"] = part(sure)
    for key, attr in (("by_source", "source"), ("by_lang", "lang")):
        members: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            members.setdefault(getattr(r, attr) or "(unset)", []).append(i)
        result[key] = {name: part(ix) for name, ix in sorted(members.items())}
    return result


def write_predictions(path: str | Path, rows: Sequence[Row], judgments: Sequence[Judgment]) -> None:
    """One JSON line per row: its id, gold and predicted label, score, group, judge and evidence."""
    with Path(path).open("w", encoding="utf-8") as fh:
        for r, j in zip(rows, judgments):
            fh.write(json.dumps({
                "id": r.id, "gold": r.label, "label": j.label, "score": score_of(j),
                "source": r.source, "lang": r.lang, "judge": j.judge,
                "evidence": j.evidence.model_dump() if j.evidence else None,
                "explanation": j.explanation,
            }, ensure_ascii=False) + "\n")


def validate_judge(rows: Sequence[Row], judge, *, resamples: int = 1000, seed: int = 0,
                   predictions: str | Path | None = None, batch_size: int = 64,
                   progress: Callable[[int], None] | None = None,
                   seen: SeenClaims | str | None = None, resample_by: str = "groups") -> dict[str, Any]:
    """Judge every row and measure agreement with its human label (see `evaluate` for the keys);
    also writes each row's predicted label and score to `predictions` when given. With `seen` (what
    the judge trained and was calibrated on, or why that is unknown: judges/seen.py), `seen` says how
    many of the rows' claims the judge has seen, with the figures on the rows it has not (see
    `seen_figures`). `resample_by`: what the intervals draw (`evaluate`)."""
    chosen = row_drawing(rows, resample_by)  # a bad choice is refused before any judging
    judgments = predict(rows, judge, batch_size, progress)
    if predictions is not None:
        write_predictions(predictions, rows, judgments)
    result = _measured(rows, judgments, resamples, seed, chosen)
    result["judge"] = judge.signature
    if seen is not None:
        result["seen"] = seen_figures(seen, rows, judgments, resamples, seed, chosen[0])
    scores = [score_of(j) for j in judgments]
    if all(s is not None for s in scores):
        found = best_threshold([r.label == "full" for r in rows], scores)
        result["best_threshold"] = None if found is None else {"threshold": found[0], "balanced_accuracy": found[1]}
    result.update(uncertainty(rows, judgments))
    return result


def seen_figures(seen: SeenClaims | str, rows: Sequence[Row], judgments: Sequence[Judgment], resamples: int = 1000,
                 seed: int = 0, groups: Sequence[int] | None = None) -> dict[str, Any]:
    """How many of the rows' distinct claims the judge has seen (judges/seen.py `seen_summary`) and, when
    that is known, the figures over every row (an unsure one at its best guess) whose claim it has not
    seen (`unseen`) and over the rest (`seen`): figures on claims a judge learnt from flatter it."""
    summary = seen_summary(seen, [r.claim for r in rows])
    if isinstance(seen, SeenClaims):
        for part, ix in seen.parts(r.claim for r in rows).items():
            found = metrics([rows[i].label for i in ix], [judgments[i].label for i in ix],
                            [score_of(judgments[i]) for i in ix], resamples, seed,
                            groups=None if groups is None else [groups[i] for i in ix])
            summary[part] = {k: v for k, v in found.items() if k != "confusion"}
    return summary


def uncertainty(rows: Sequence[Row], judgments: Sequence[Judgment]) -> dict[str, Any]:
    """For the rows a judge gave p(support) (the model judge's own route; its Chinese route gives a
    similarity instead): the risk–coverage curve, and how many it called `uncertain` with the accuracy
    of the rest. Empty when no row has p(support)."""
    with_p = [(r, j) for r, j in zip(rows, judgments) if (j.scores or {}).get("support") is not None]
    if not with_p:
        return {}
    gold = [r.label == "full" for r, _ in with_p]
    pred = [j.label == "full" for _, j in with_p]
    sure = [i for i, (_, j) in enumerate(with_p) if not j.uncertain]
    return {
        "risk_coverage": risk_coverage(gold, pred, [j.scores["support"] for _, j in with_p]),
        "uncertain": {"rows": len(with_p), "n": len(with_p) - len(sure), "share": 1 - len(sure) / len(with_p),
                      "accuracy_of_the_rest": (sum(gold[i] == pred[i] for i in sure) / len(sure)) if sure else None},
    }
