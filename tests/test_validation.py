"""Validation metrics on hand-computed tables, DATA loading errors, grouping and the predictions file,
the data readers and where the data folder is found."""

from __future__ import annotations

import json

import pytest

from citeaudit.errors import InputError, TrainingError
from citeaudit.files.labelled import load_rows, parse_rows
from citeaudit.records import Judgment
from citeaudit.stats import (balanced_accuracy, best_threshold, bootstrap_interval, cohen_kappa, confusion, metrics,
                             roc_auc)
from citeaudit.training.validation import evaluate, validate_judge

T, F = True, False


# --- metrics ---------------------------------------------------------------------------------------

def test_balanced_accuracy_hand_computed():
    # positives: 1 of 2 found (0.5); negatives: 2 of 2 (1.0) -> 0.75
    assert balanced_accuracy([T, T, F, F], [T, F, F, F]) == pytest.approx(0.75)
    assert balanced_accuracy([T, F], [T, F]) == 1.0
    assert balanced_accuracy([T, F], [F, T]) == 0.0


def test_balanced_accuracy_degenerate():
    assert balanced_accuracy([], []) is None
    assert balanced_accuracy([T, T, T], [T, F, T]) == pytest.approx(2 / 3)  # one class: its recall
    assert balanced_accuracy([F, F], [F, F]) == 1.0


def test_roc_auc_hand_computed():
    # pairs (pos, neg): (.9,.5) (.9,.1) (.4,.5) (.4,.1): 3 of 4 ordered right
    assert roc_auc([T, T, F, F], [0.9, 0.4, 0.5, 0.1]) == pytest.approx(0.75)
    assert roc_auc([T, F], [0.5, 0.5]) == pytest.approx(0.5)  # a tie counts half
    assert roc_auc([T, T, F], [0.7, 0.7, 0.7]) == pytest.approx(0.5)
    assert roc_auc([T, F, F], [0.1, 0.2, 0.3]) == 0.0
    assert roc_auc([T, T], [0.1, 0.2]) is None
    assert roc_auc([], []) is None


def test_kappa_hand_computed():
    # po = 3/4; gold marginals full .5 none .5; pred full .25 none .75; pe = .125 + .375 = .5
    gold = ["full", "full", "none", "none"]
    pred = ["full", "none", "none", "none"]
    assert cohen_kappa(gold, pred) == pytest.approx(0.5)
    assert cohen_kappa(gold, gold) == 1.0
    assert cohen_kappa(["full", "none"], ["none", "full"]) == pytest.approx(-1.0)


def test_kappa_degenerate():
    assert cohen_kappa([], []) is None
    assert cohen_kappa(["none"] * 3, ["none"] * 3) == 1.0
    # gold all `none`, pred half `none`: po = .5 and pe = 1 x .5 = .5, so kappa 0
    assert cohen_kappa(["none"] * 4, ["none", "none", "full", "full"]) == pytest.approx(0.0)


def test_confusion_counts_every_pair():
    table = confusion(["full", "partial", "contradicts"], ["full", "none", "none"])
    assert table["full"]["full"] == 1
    assert table["partial"]["none"] == 1
    assert table["contradicts"]["none"] == 1
    assert sum(sum(r.values()) for r in table.values()) == 3
    assert set(table) == {"full", "partial", "none", "contradicts"}


def test_bootstrap_interval_contains_point_and_is_reproducible():
    gold = [T, F] * 30
    scores = [0.8 if g else 0.3 for g in gold]
    scores[:6] = [0.2, 0.9, 0.25, 0.85, 0.4, 0.6]
    point = roc_auc(gold, scores)
    import numpy as np
    g, s = np.array(gold), np.array(scores)
    ci = bootstrap_interval(lambda ix: roc_auc(g[ix], s[ix]), len(gold), resamples=300, seed=1)
    assert ci is not None and ci[0] <= point <= ci[1]
    assert ci == bootstrap_interval(lambda ix: roc_auc(g[ix], s[ix]), len(gold), resamples=300, seed=1)
    assert bootstrap_interval(lambda ix: 1.0, 0) is None


def test_bootstrap_interval_of_a_mean_has_the_textbook_width():
    import numpy as np

    # the mean of 400 fair coin flips: standard error .025, so a 95 % interval of about .5 +- .049
    values = np.array([0.0, 1.0] * 200)
    lo, hi = bootstrap_interval(lambda ix: float(values[ix].mean()), len(values), resamples=2000, seed=3)
    assert lo == pytest.approx(0.451, abs=0.012) and hi == pytest.approx(0.549, abs=0.012)
    assert bootstrap_interval(lambda ix: None, 10) is None  # never defined: no interval


def test_metrics_have_intervals_and_none_auc_without_scores():
    gold = ["full", "none", "partial", "full", "none", "contradicts"] * 5
    pred = ["full", "none", "none", "none", "full", "none"] * 5
    m = metrics(gold, pred, [None] * len(gold), resamples=200)
    assert m["n"] == 30 and m["n_full"] == 10
    # full: 1 of 2 found per six rows (.5); the rest: 3 of 4 kept from full (.75)
    assert m["balanced_accuracy"] == pytest.approx(0.625)
    assert m["kappa"] == pytest.approx(cohen_kappa(gold, pred))
    assert m["confusion"] == confusion(gold, pred)
    assert m["auc"] is None and m["auc_ci"] is None
    lo, hi = m["balanced_accuracy_ci"]
    assert lo <= m["balanced_accuracy"] <= hi
    lo, hi = m["kappa_ci"]
    assert lo <= m["kappa"] <= hi


def test_best_threshold():
    t, b = best_threshold([T, T, F, F], [0.9, 0.8, 0.5, 0.1])
    assert 0.5 < t < 0.8 and b == 1.0
    # no threshold separates them: .3 keeps both positives and one negative (BAcc .75), the best there is
    t, b = best_threshold([T, F, T, F], [0.9, 0.8, 0.4, 0.2])
    assert t == pytest.approx(0.3) and b == pytest.approx(0.75)
    assert best_threshold([T, T], [0.1, 0.2]) is None


def test_paired_balanced_accuracy_difference_hand_computed():
    import numpy as np

    from citeaudit.stats import paired_balanced_accuracy_difference

    gold, a, b = [T, T, F, F], [T, F, F, F], [T, T, F, F]  # A: (1/2 + 1) / 2 = .75; B: 1
    difference, (lo, hi) = paired_balanced_accuracy_difference(gold, a, b, resamples=300, seed=2)
    assert difference == pytest.approx(0.25) and lo <= 0.25 <= hi
    # the same resampled items for both judges as bootstrap_interval draws, so the same interval
    g, pa, pb = (np.array(x) for x in (gold, a, b))
    assert (lo, hi) == pytest.approx(bootstrap_interval(
        lambda ix: balanced_accuracy(g[ix], pb[ix]) - balanced_accuracy(g[ix], pa[ix]), 4, resamples=300, seed=2))
    assert paired_balanced_accuracy_difference(gold, a, a, resamples=50) == (0.0, (0.0, 0.0))
    # one class only: each judge's recall of it, 1/2 and 1
    assert paired_balanced_accuracy_difference([T, T], [T, F], [T, T], resamples=0) == (pytest.approx(0.5), None)
    assert paired_balanced_accuracy_difference([], [], []) == (None, None)
    # groups: items sharing nothing draw as before (twenty or more of them); each item twice over, the copies
    # one group, draws as the items alone
    gold20, a20, b20 = gold * 5, a * 5, b * 5
    alone = paired_balanced_accuracy_difference(gold20, a20, b20, resamples=300, seed=2)
    assert paired_balanced_accuracy_difference(gold20, a20, b20, resamples=300, seed=2,
                                               groups=[5 + i for i in range(20)]) == alone
    twice = [x for x in zip(gold20, a20, b20) for _ in range(2)]
    assert paired_balanced_accuracy_difference(*zip(*twice), resamples=300, seed=2,
                                               groups=[i // 2 for i in range(40)]) == (pytest.approx(0.25), alone[1])


def test_fewer_than_twenty_groups_leave_each_out_in_turn():
    import numpy as np

    from citeaudit.stats import MIN_GROUPS, drawing, jackknife_interval, paired_balanced_accuracy_difference, t_quantile

    # what is drawn, by how many groups: whole groups from MIN_GROUPS up, a jackknife from 2, and one group
    # of several items is drawn item by item; no items, or one, stay as they were
    many = list(range(MIN_GROUPS))
    assert drawing("groups", "row", MIN_GROUPS, lambda: many)[1] == {"by": "groups", "units": MIN_GROUPS, "largest": 1}
    assert drawing("groups", "row", 3, lambda: [4, 7, 7]) == ([4, 7, 7], {"by": "jackknife", "units": 2, "largest": 2})
    assert drawing("groups", "row", 3, lambda: [0, 0, 0]) == (None, {"by": "rows", "units": 3, "groups": 1, "largest": 3})
    assert drawing("groups", "row", 1, lambda: [0])[1] == {"by": "groups", "units": 1, "largest": 1}
    assert drawing("groups", "row", 0, list)[1] == {"by": "groups", "units": 0, "largest": 0}

    # Student's t, 97.5 % point, against the printed tables
    for df, table in ((1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (30, 2.042)):
        assert t_quantile(0.975, df) == pytest.approx(table, abs=5e-4)
    with pytest.raises(ValueError, match="0.5 < p < 1"):
        t_quantile(0.4, 3)
    # three groups of a 0/1 figure: the mean with each group left out, by hand
    values = np.array([1, 1, 0, 1, 0, 0, 1, 1, 1], dtype=float)
    groups = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    left_out = [np.mean(values[3:]), np.mean(np.r_[values[:3], values[6:]]), np.mean(values[:6])]  # .5, .833, .5
    error = np.sqrt(2 / 3 * np.sum((np.array(left_out) - np.mean(left_out)) ** 2))
    estimate = values.mean()
    expected = (estimate - 4.303 * error, estimate + 4.303 * error)
    jackknife = bootstrap_interval(lambda ix: float(values[ix].mean()), 9, resamples=300, groups=groups)
    # the span of it and of the items drawn one by one (two or three groups can happen to agree)
    apart = bootstrap_interval(lambda ix: float(values[ix].mean()), 9, resamples=300)
    assert jackknife == pytest.approx((min(expected[0], apart[0]), max(expected[1], apart[1])), abs=1e-3)
    assert jackknife[0] < apart[0] and jackknife[1] > apart[1]  # here the jackknife is the wider
    # clipped to what the figure can take; a group left out where the figure is undefined is dropped
    assert jackknife_interval(estimate, left_out, bounds=(0.0, 1.0)) == pytest.approx(
        (max(0.0, expected[0]), min(1.0, expected[1])), abs=1e-3)
    assert jackknife_interval(0.5, [0.4, None, float("nan"), 0.6]) == pytest.approx(
        (0.5 - 12.706 * 0.1, 0.5 + 12.706 * 0.1), abs=1e-3)
    assert jackknife_interval(0.5, [0.4, None]) is None
    # a paired difference of balanced accuracy: each group's counts left out in turn, by hand
    gold, a, b = [T, F, T, F, T, F], [T, T, F, F, T, F], [T, F, T, F, F, F]
    pairs = [0, 0, 1, 1, 2, 2]
    difference, interval = paired_balanced_accuracy_difference(gold, a, b, resamples=300, groups=pairs)
    def bacc_difference(ix):
        g, pa, pb = (np.array(x)[ix] for x in (gold, a, b))
        return balanced_accuracy(g, pb) - balanced_accuracy(g, pa)
    keep = np.arange(6)
    assert difference == pytest.approx(bacc_difference(keep))
    by_hand = jackknife_interval(difference, [bacc_difference(keep[np.array(pairs) != k]) for k in range(3)],
                                 bounds=(-1.0, 1.0))
    _, apart = paired_balanced_accuracy_difference(gold, a, b, resamples=300)
    assert interval == pytest.approx((min(by_hand[0], apart[0]), max(by_hand[1], apart[1])))


def test_connected_groups_join_items_that_share_a_key_through_others():
    from citeaudit.stats import connected_groups

    # 0 and 2 share "a", 2 and 4 share "c": one group; 1 and 3 share nothing; numbered by first item
    assert connected_groups([["a"], ["b"], ["a", "c"], ["d"], ["c"]]) == [0, 1, 0, 2, 0]
    assert connected_groups([["x"], [], ["y"]]) == [0, 1, 2] and connected_groups([]) == []


def test_grouped_bootstrap_draws_whole_groups():
    import numpy as np

    values = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0] * 2)

    def mean(ix):
        return float(values[ix].mean())

    # items that share nothing: the same draws as without groups
    alone = bootstrap_interval(mean, len(values), resamples=300, seed=4)
    assert bootstrap_interval(mean, len(values), resamples=300, seed=4, groups=list(range(len(values)))) == alone
    # each value five times over, the copies one group: exactly the interval of the 20 values alone,
    # where drawing the 100 copies one by one claims an interval about half as wide
    copies = np.repeat(values, 5)
    groups = list(np.repeat(np.arange(len(values)), 5))
    grouped = bootstrap_interval(lambda ix: float(copies[ix].mean()), len(copies), resamples=300, seed=4,
                                 groups=groups)
    assert grouped == alone
    by_rows = bootstrap_interval(lambda ix: float(copies[ix].mean()), len(copies), resamples=300, seed=4)
    assert (by_rows[1] - by_rows[0]) < 0.6 * (grouped[1] - grouped[0])
    # metrics takes the groups for every interval; a subset's group numbers need not start at 0
    gold = ["full", "none"] * 10
    pred = ["full", "full", "none", "none"] * 5
    m = metrics(gold, pred, [None] * 20, resamples=200, groups=[7 + i // 4 for i in range(20)])
    assert m["balanced_accuracy"] == pytest.approx(0.5) and m["balanced_accuracy_ci"] is not None
    with pytest.raises(ValueError, match="groups: one group number for each of the 20 items, got 19"):
        metrics(gold, pred, [None] * 20, resamples=10, groups=list(range(19)))


def _paired_rows():
    """48 rows, two citing each of 24 passages; ScoreJudge calls a row full when its passage says yes. The
    person labels passages 0-5 the other way, so the judge is wrong on both rows of each."""
    rows = []
    for k in range(24):
        says = "yes" if k % 2 else "no"
        label = ("full" if says == "yes" else "none") if k >= 6 else ("none" if says == "yes" else "full")
        rows += [_row(f"{k}.{j}", label, "a", "en", f"{says} {k}") for j in range(2)]
    return parse_rows([json.dumps({**r, "claim": f"claim {r['id']}"}) for r in rows])


def test_validate_judge_draws_rows_that_share_a_claim_or_passage_together():
    rows = _paired_rows()
    grouped = validate_judge(rows, ScoreJudge(), resamples=300)
    assert grouped["resampling"] == {"by": "groups", "units": 24, "largest": 2}
    by_rows = validate_judge(rows, ScoreJudge(), resamples=300, resample_by="rows")
    assert by_rows["resampling"] == {"by": "rows", "units": 48}
    assert grouped["balanced_accuracy"] == by_rows["balanced_accuracy"]  # the figure itself is the same
    # a row's twin is right or wrong with it: drawing them apart claims more certainty than there is
    width = {name: hi - lo for name, (lo, hi) in (("groups", grouped["balanced_accuracy_ci"]),
                                                  ("rows", by_rows["balanced_accuracy_ci"]))}
    assert width["groups"] > 1.2 * width["rows"]
    # fewer than 20 groups are too few to draw whole: the span of a jackknife over them and the rows drawn
    # one by one (`_rows()`: passages "yes" (r1, r4, r6) and "no" (r2, r3, r5))
    few = validate_judge(_rows(), ScoreJudge(), resamples=200)
    assert few["resampling"] == {"by": "jackknife", "units": 2, "largest": 3}
    apart = validate_judge(_rows(), ScoreJudge(), resamples=200, resample_by="rows")["balanced_accuracy_ci"]
    # here both groups left out give the same figure, so the interval is the rows': never narrower than them
    assert few["balanced_accuracy_ci"] == apart
    # one group only: nothing varies between groups, so the rows are drawn one by one, and the group counted
    one = parse_rows([json.dumps(_row(k, "full" if k % 2 else "none", "a", "en", "the same passage")) for k in range(6)])
    assert validate_judge(one, ScoreJudge(), resamples=50)["resampling"] == {"by": "rows", "units": 6, "groups": 1,
                                                                              "largest": 6}
    # every row its own passage and claim: the groups are the rows, and so are the intervals
    apart = parse_rows([json.dumps({**r, "claim": f"claim {r['id']}"}) for r in
                        (_row(f"{k}.{j}", "full" if k % 3 else "none", "a", "en", f"{'yes' if k % 2 else 'no'} {k}.{j}")
                         for k in range(12) for j in range(2))])
    one, other = (validate_judge(apart, ScoreJudge(), resamples=200, resample_by=by) for by in ("groups", "rows"))
    assert one["resampling"] == {"by": "groups", "units": 24, "largest": 1}
    assert one["balanced_accuracy_ci"] == other["balanced_accuracy_ci"] and one["auc_ci"] == other["auc_ci"]
    with pytest.raises(ValueError, match="resample_by must be one of groups, rows"):
        validate_judge(_rows(), ScoreJudge(), resample_by="claims")


# --- loading ---------------------------------------------------------------------------------------

def _row(i, label="full", source="a", lang="en", text="Some passage."):
    return {"id": f"r{i}", "claim": f"claim {i}", "passages": [{"id": "p1", "text": text}],
            "label": label, "source": source, "lang": lang}


def test_bad_rows_are_all_reported_with_file_line_field(tmp_path):
    path = tmp_path / "data.jsonl"
    lines = [
        json.dumps(_row(1)),
        "{not json",
        json.dumps({**_row(3), "label": "supported"}),
        json.dumps({**_row(4), "passages": [{"id": "p1"}]}),
        json.dumps({**_row(5), "claim": ""}),
        json.dumps({**_row(6), "extra": 1}),
        json.dumps(_row(1)),
    ]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        load_rows(path)
    text = str(err.value)
    assert f"{path}:2: not valid JSON" in text
    assert f"{path}:3: label: must be one of" in text
    assert f"{path}:4: passages[0].text: missing" in text
    assert f"{path}:5: claim: missing" in text
    assert f"{path}:6: extra: unknown field" in text
    assert f"{path}:7: id: duplicate id 'r1' (first on line 1)" in text
    assert len(err.value.problems) == 6


def test_missing_file_and_empty_file(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        load_rows(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(InputError, match="no rows"):
        load_rows(tmp_path / "empty.jsonl")


def test_row_shape_errors_are_located(tmp_path):
    path = tmp_path / "data.jsonl"
    lines = [
        "[1, 2]",
        json.dumps({**_row(2), "passages": []}),
        json.dumps({**_row(3), "passages": ["text only"]}),
        json.dumps({**_row(4), "passages": [{"id": "p1", "text": "a"}, {"id": "p1", "text": "b"}]}),
        json.dumps({**_row(5), "passages": [{"id": "p1", "text": "a", "url": "x"}]}),
        json.dumps({**_row(6), "source": 3, "lang": None}),
        json.dumps({k: v for k, v in _row(7).items() if k != "label"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        load_rows(path)
    assert [str(p) for p in err.value.problems] == [
        f"{path}:1: a row must be a JSON object, got list",
        f"{path}:2: passages: missing or not a non-empty list",
        f"{path}:3: passages[0]: must be an object with 'id' and 'text'",
        f"{path}:4: passages: duplicate passage id 'p1' (passages[0] and passages[1])",
        f"{path}:5: passages[0].url: unknown field (expected id, text)",
        f"{path}:6: source: must be a string",
        f"{path}:7: label: must be one of full, partial, none, contradicts, got None",
    ]


def test_nan_and_infinity_are_not_json():
    for constant in ("NaN", "Infinity", "-Infinity"):
        line = json.dumps(_row(1))[:-1] + f', "score": {constant}}}'
        with pytest.raises(InputError) as err:
            parse_rows([line], "d.jsonl")
        assert str(err.value) == f"d.jsonl:1: score: not valid JSON: {constant} is not allowed (JSON has no NaN or Infinity)"


def test_lines_split_on_newline_only(tmp_path):
    # U+2028 and U+0085 are line breaks to str.splitlines, but JSON strings may hold them raw
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(_row(1, text="one\u2028two\x85three"), ensure_ascii=False) + "\r\n"
                    + json.dumps(_row(2)) + "\n", encoding="utf-8")
    rows = load_rows(path)
    assert [r.id for r in rows] == ["r1", "r2"] and [r.line for r in rows] == [1, 2]
    assert rows[0].passages[0].text == "one\u2028two\x85three"


def test_source_and_lang_are_optional():
    row = {k: v for k, v in _row(1).items() if k not in ("source", "lang")}
    (r,) = parse_rows([json.dumps(row)])
    assert r.source is None and r.lang is None and r.passages[0].text == "Some passage."


# --- validate_judge with a stand-in judge ------------------------------------------------------------

class ScoreJudge:
    """Gives `full` with similarity 0.9 when the passage says 'yes', else `none` with 0.1."""

    name = "score"
    signature = "score@test"

    def judge(self, text, passages):
        yes = any("yes" in p.text for p in passages)
        return Judgment(label="full" if yes else "none", judge=self.signature,
                        scores={"similarity": 0.9 if yes else 0.1})


def _rows():
    data = [
        _row(1, "full", "a", "en", "yes"), _row(2, "none", "a", "en", "no"),
        _row(3, "full", "a", "en", "no"), _row(4, "partial", "b", "zh", "yes"),
        _row(5, "none", "b", "zh", "no"), _row(6, "full", "b", "zh", "yes"),
    ]
    return parse_rows([json.dumps(d) for d in data])


def test_validate_judge_groups_by_source_and_lang_and_writes_predictions(tmp_path):
    out = tmp_path / "pred.jsonl"
    result = validate_judge(_rows(), ScoreJudge(), resamples=100, predictions=out)
    assert result["n"] == 6 and result["judge"] == "score@test"
    assert set(result["by_source"]) == {"a", "b"} and set(result["by_lang"]) == {"en", "zh"}
    a = result["by_source"]["a"]
    assert a["n"] == 3 and a["balanced_accuracy"] == pytest.approx(0.75)  # full: 1/2, rest: 1/1
    assert result["by_lang"]["en"]["confusion"] == a["confusion"]
    b = result["by_source"]["b"]
    assert b["confusion"]["partial"]["full"] == 1 and b["balanced_accuracy"] == pytest.approx(0.75)
    assert result["confusion"]["full"]["none"] == 1
    assert result["auc"] is not None
    # yes -> .9, no -> .1: at .5, full rows 2 of 3 found and the rest 2 of 3 kept; at any lower, BAcc .5
    assert result["best_threshold"] == {"threshold": pytest.approx(0.5), "balanced_accuracy": pytest.approx(2 / 3)}
    preds = [json.loads(line) for line in out.read_text().splitlines()]
    assert [p["id"] for p in preds] == [f"r{i}" for i in range(1, 7)]
    assert preds[0] == {**preds[0], "gold": "full", "label": "full", "score": 0.9, "source": "a", "lang": "en"}


class UnsureJudge(ScoreJudge):
    """ScoreJudge, unsure of the claims it is given (its label is then its best guess)."""

    signature = "unsure@test"

    def __init__(self, unsure=frozenset({"claim 3", "claim 4"})):
        self.unsure = unsure

    def judge(self, text, passages):
        found = super().judge(text, passages)
        return found.model_copy(update={"judge": self.signature, "uncertain": True if text in self.unsure else None})


# `_rows()` judged: r1 full (right), r2 none (right), r3 none (gold full), r4 full (gold partial), r5 none
# (right), r6 full (right). Every row: full 2 of 3 found, the rest 2 of 3 kept: BAcc 2/3, whoever is unsure.
# Unsure of r3 and r4 (the two wrong): the four confident rows are all right, BAcc 1. Unsure of r1 and r2:
# confident r3..r6, full 1 of 2 found (r6), the rest 1 of 2 kept (r5): BAcc 1/2.
UNSURE_TABLE = [
    # rows unsure, n confident, their BAcc, coverage
    ((), 6, 2 / 3, 1.0),
    ((3, 4), 4, 1.0, 4 / 6),
    ((1, 2), 4, 0.5, 4 / 6),
    ((1, 2, 3, 4, 5, 6), 0, None, 0.0),
]


@pytest.mark.parametrize("unsure, n_sure, bacc_sure, coverage", UNSURE_TABLE)
def test_validate_judge_gives_every_pair_and_the_confident_ones(unsure, n_sure, bacc_sure, coverage):
    result = validate_judge(_rows(), UnsureJudge({f"claim {i}" for i in unsure}), resamples=50)
    assert (result["n"], result["n_all"]) == (6, 6)  # every row counts, an unsure one at its best guess
    assert result["balanced_accuracy"] == result["balanced_accuracy_all"] == pytest.approx(2 / 3)
    assert result["balanced_accuracy_all_ci"] == result["balanced_accuracy_ci"]
    assert result["kappa_all"] == result["kappa"]
    assert result["coverage"] == pytest.approx(coverage)
    assert result["confident"]["n"] == n_sure
    assert result["confident"]["balanced_accuracy"] == (None if bacc_sure is None else pytest.approx(bacc_sure))


def test_validate_judge_gives_the_figures_on_the_claims_the_judge_has_not_seen(tmp_path):
    from citeaudit.judges.seen import SeenClaims, claim_key

    # the judge trained on claims 1 and 2 (written otherwise: a claim is known by its words)
    seen = SeenClaims(tmp_path / "trained_on.txt.gz", frozenset({claim_key("Claim 1."), claim_key("CLAIM 2")}),
                      "made up")
    result = validate_judge(_rows(), ScoreJudge(), resamples=50, seed=1, seen=seen)
    found = result["seen"]
    assert (found["claims"], found["of"], found["covers"]) == (2, 6, "made up")
    # seen: r1 full and r2 none, both right: BAcc 1. Unseen: r3 none (gold full), r4 full (gold partial),
    # r5 none and r6 full (right): full 1 of 2 found, the rest 1 of 2 kept: BAcc 1/2
    assert (found["seen"]["n"], found["seen"]["balanced_accuracy"]) == (2, pytest.approx(1.0))
    assert (found["unseen"]["n"], found["unseen"]["balanced_accuracy"]) == (4, pytest.approx(0.5))
    assert found["unseen"]["balanced_accuracy_ci"] is not None and "confusion" not in found["unseen"]
    assert result["n"] == 6  # the headline figures still count every row
    unknown = validate_judge(_rows(), ScoreJudge(), resamples=10, seen="no record")
    assert unknown["seen"] == {"claims": None, "of": 6, "unknown": "no record"}
    assert "seen" not in validate_judge(_rows(), ScoreJudge(), resamples=10)


def test_evaluate_labels_rows_without_group_as_unset():
    rows = parse_rows([json.dumps({k: v for k, v in _row(1).items() if k != "lang"})])
    result = evaluate(rows, [Judgment(label="full", judge="x")], resamples=10)
    assert set(result["by_lang"]) == {"(unset)"} and result["auc"] is None


def test_validate_judge_command(tmp_path, runner):
    from citeaudit.cli import _Group
    from citeaudit.cli.judges import commands
    from citeaudit.judges import register_judge

    register_judge("test-score", "stand-in judge for tests")(lambda argument, cases: ScoreJudge())
    group = _Group(commands={c.name: c for c in commands})
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in [
        _row(1, "full", "a", "en", "yes"), _row(2, "none", "a", "en", "no"), _row(3, "full", "b", "zh", "no")]))
    res = runner.invoke(group, ["validate-judge", str(data), "--judge", "test-score", "--resamples", "50"])
    assert res.exit_code == 0, res.output
    assert "BAcc" in res.output and "by source:" in res.output and "by language:" in res.output
    assert "\nthe judge has seen: unknown (test-score reads no judge directory)\n" in res.output
    assert "contradicts" in res.output  # the confusion matrix header
    # rows 2 and 3 cite the same passage ("no"): two groups, too few to draw whole
    assert ("intervals: bootstrap 95 % (percentile, fixed seed); but rows that share a claim or a passage make "
            "only 2 groups (the largest 2 rows), too few to draw whole: each interval spans a jackknife (each "
            "group left out in turn, the figure ± t(1) × its standard error) and the rows drawn one by one\n"
            ) in res.output
    res = runner.invoke(group, ["validate-judge", str(data), "--judge", "test-score", "--resamples", "50",
                                "--resample-by", "rows"])
    assert res.exit_code == 0 and "drawing the 3 rows one by one (fewer than 10" in res.output
    from citeaudit.cli.judges import intervals_line

    assert intervals_line({"by": "groups", "units": 139, "largest": 3}).endswith(": 139 groups, the largest 3 rows")
    assert intervals_line({"by": "rows", "units": 12}).endswith("drawing the 12 rows one by one")
    res = runner.invoke(group, ["validate-judge", str(data), "--judge", "test-score", "--format", "json",
                                "--resamples", "50", "--predictions", str(tmp_path / "p.jsonl")])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n"] == 3
    assert len((tmp_path / "p.jsonl").read_text().splitlines()) == 3
    data.write_text('{"id": "x"}\n')
    res = runner.invoke(group, ["validate-judge", str(data), "--judge", "test-score"])
    assert res.exit_code == 2 and f"{data}:1: claim: missing" in res.output


def test_validate_judge_command_names_every_pair_the_confident_ones_and_the_coverage(tmp_path, runner):
    from citeaudit.cli import _Group
    from citeaudit.cli.judges import commands
    from citeaudit.judges import register_judge

    register_judge("test-unsure", "stand-in judge for tests")(lambda argument, cases: UnsureJudge())
    group = _Group(commands={c.name: c for c in commands})
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in [
        _row(1, "full", "a", "en", "yes"), _row(2, "none", "a", "en", "no"), _row(3, "full", "a", "en", "no"),
        _row(4, "partial", "b", "zh", "yes"), _row(5, "none", "b", "zh", "no"), _row(6, "full", "b", "zh", "yes")]))
    res = runner.invoke(group, ["validate-judge", str(data), "--judge", "test-unsure", "--resamples", "50"])
    assert res.exit_code == 0, res.output
    assert "\nevery pair (unsure → best guess): BAcc 0.667 [" in res.output
    assert "on 6 pairs (the tables' figures)\n" in res.output
    assert "\nconfident pairs only: BAcc 1.000 [1.000, 1.000], kappa 1.000 [1.000, 1.000] on 4 pairs\n" in res.output
    assert "\ncoverage (share not unsure): 4/6 (66.7 %)\n" in res.output
    res = runner.invoke(group, ["validate-judge", str(data), "--judge", "test-unsure", "--format", "json",
                                "--resamples", "50"])
    found = json.loads(res.stdout)
    assert (found["n_all"], found["coverage"], found["confident"]["n"]) == (6, pytest.approx(4 / 6), 4)
    assert found["balanced_accuracy_all"] == pytest.approx(2 / 3) and len(found["balanced_accuracy_all_ci"]) == 2


# --- the fixture sample and the data readers --------------------------------------------------------

def test_fixture_sample_loads_with_every_source():
    from collections import Counter
    from pathlib import Path

    rows = load_rows(Path(__file__).parent / "fixtures" / "judge_validation_sample.jsonl")
    assert Counter(r.source for r in rows) == {"wice": 40, "expertqa": 40, "factcheck_gpt": 40, "citecheck": 40}
    assert {r.lang for r in rows} == {"en", "zh"}


def test_split_is_by_normalised_claim_and_deterministic():
    from citeaudit.training.data import normalise_claim, split_of

    assert normalise_claim("The  Tower [2] is TALL.") == normalise_claim("the tower is tall.")
    assert split_of("The  Tower [2] is TALL.") == split_of("the tower is tall.")
    counts = {"train": 0, "dev": 0, "test": 0}
    for i in range(2000):
        counts[split_of(f"claim number {i}")] += 1
    assert 1450 < counts["train"] < 1750 and 120 < counts["dev"] < 280 and 120 < counts["test"] < 280


def test_readers_map_labels_and_drop_duplicates(tmp_path):
    from citeaudit.training.data import read_citecheck, read_expertqa, read_factcheck, read_wice

    def write(name, rows):
        p = tmp_path / name
        p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        return p

    fc = write("fc.jsonl", [
        {"claim": "A", "evidence": "ea", "stance": "refute"},
        {"claim": "A", "evidence": "ea", "stance": "refute"},            # exact duplicate: kept once
        {"claim": "B", "evidence": "eb", "stance": "irrelevant"},
        {"claim": "B", "evidence": "eb", "stance": "completely-support"},  # conflict: both dropped
        {"claim": "C", "evidence": "ec", "stance": "partially-support"},
    ])
    assert [(r["claim"], r["label"]) for r in read_factcheck(fc)] == [("A", "contradicts"), ("C", "partial")]

    wice = write("wice.jsonl", [{"label": "not_supported", "claim": "X", "evidence": ["s1.", "s2."],
                                 "meta": {"id": "d1"}}])
    (row,) = read_wice(wice)
    assert row["label"] == "none" and row["passages"][0]["text"] == "s1. s2." and row["lang"] == "en"

    answer = {"claims": [
        {"claim_string": "Kids suffer [3].", "support": "Complete", "evidence": ["[3] https://x.org\n\nKids suffer a lot."]},
        {"claim_string": "Uncited.", "support": "Missing", "evidence": []},
        {"claim_string": "Only a URL.", "support": "Partial", "evidence": ["[1] https://y.org"]},
    ]}
    q = {"question": "Q?", "answers": {"sys": answer}}
    a, b = write("a.jsonl", [q]), write("b.jsonl", [q])  # the same answer in two files: read once
    rows = list(read_expertqa([a, b]))
    assert [(r["claim"], r["label"], r["passages"][0]["text"]) for r in rows] == [("Kids suffer.", "full", "Kids suffer a lot.")]

    cc = write("cc.jsonl", [{"idx": 1, "statement": "苹果发布了手机[1]。", "quote": "[1] 苹果发布了新手机。 [2] 价格很高。",
                             "label": 0}])
    (row,) = read_citecheck(cc)
    assert row["label"] == "none" and row["lang"] == "zh"
    assert [p["id"] for p in row["passages"]] == ["[1]", "[2]"]


# --- where the data folder is found ---------------------------------------------------------------------

def test_data_dir_is_found_above_the_current_folder(tmp_path, monkeypatch):
    from citeaudit.training.data import find_data_dir

    monkeypatch.delenv("CITEAUDIT_DATA_DIR", raising=False)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    checkout = tmp_path / "main" / "src"
    checkout.mkdir(parents=True)
    monkeypatch.chdir(checkout)  # like a checkout at /work/main with the data at /work/shared/data
    assert find_data_dir() == (tmp_path / "shared" / "data").resolve()
    (tmp_path / "main" / "shared" / "data").mkdir(parents=True)
    assert find_data_dir() == (tmp_path / "main" / "shared" / "data").resolve()  # the nearest wins


def test_the_environment_names_the_data_dir(tmp_path, monkeypatch):
    from citeaudit.training.data import find_data_dir, load_all

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITEAUDIT_DATA_DIR", str(tmp_path / "mine"))
    with pytest.raises(TrainingError, match="CITEAUDIT_DATA_DIR=.*mine: no such folder"):
        find_data_dir()
    (tmp_path / "mine").mkdir()
    assert find_data_dir() == tmp_path / "mine"
    # looked up when data is read, not at import: the readers look in the folder named now
    with pytest.raises(FileNotFoundError, match="mine"):
        load_all()


def test_no_data_dir_says_how_to_give_one(tmp_path, monkeypatch, runner):
    from citeaudit.cli import main
    from citeaudit.training.data import find_data_dir

    monkeypatch.delenv("CITEAUDIT_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    if any((folder / "shared" / "data").is_dir() for folder in (tmp_path, *tmp_path.parents)):
        pytest.fail(f"a shared/data above {tmp_path} would be found")
    with pytest.raises(TrainingError, match="pass --data-dir or set CITEAUDIT_DATA_DIR"):
        find_data_dir()
    res = runner.invoke(main, ["judge-data", "export", str(tmp_path / "out")])
    assert res.exit_code == 2 and "pass --data-dir or set CITEAUDIT_DATA_DIR" in res.output


@pytest.mark.parametrize("line, path, message", [
    ('{"id": "r1", "id": "r2", "claim": "c", "passages": [{"id": "p", "text": "t"}], "label": "full"}',
     "id", "duplicate key 'id'"),
    ('{"id": "r1", "claim": "c", "passages": [{"id": "p", "text": "t"}], "label": "full", "source": 1' + "0" * 5000 + "}",
     "source", "integer of 5001 digits is too long"),
    ('{"id": "r1", "claim": "c", "passages": [{"id": "p", "text": "t"}], "label": "full", "source": 1e999}',
     "source", "number 1e999 is too large"),
    ("[" * 100000 + "]" * 100000, "", "nested too deeply"),
])
def test_rows_are_read_as_strictly_as_case_files(line, path, message):
    with pytest.raises(InputError) as err:
        parse_rows([line], "d.jsonl")
    [problem] = err.value.problems
    assert (problem.line, problem.path) == (1, path) and message in problem.message
