"""Adapt the model judge to a team's own labels, on CPU (`citeaudit adapt-judge`): what is done, in
which order, and what is reported. The pieces live in modules of their own: the team's labels and their
folds (team_labels.py), the judge's exchangeable parts and their refits (judge_parts.py), fine-tuning the
weights (finetune.py), the forgetting check (forgetting.py), the directory written (adapted_dir.py).

A team that reviewed a few hundred claims has what a general judge lacks: labels from its own domain.
Adapting starts from the shipped judge itself (its int8 weights, dequantised: exactly what it judges
with), not from the base MiniLM, and writes a complete judge directory (`--judge model:path=DIR`).

English pairs (the cross-encoder's route):
1. Fine-tune on the team's pairs, each read at its most claim-like window as in training, mixed 1:1
   with a replayed sample of the original training mix (models/adaptation/replay.jsonl.gz), at a small
   learning rate, with early stopping on a held-out quarter of the team's pairs.
2. Refit the calibration (logit p(full) and claim-word recall, judges/calibration.py) on that held-out
   quarter, pulled toward the base judge's coefficients rather than toward zero, and refit the
   uncertain band by the rule that chose the shipped one (the narrowest band whose confident side
   reaches 80 % accuracy).
3. Guard against forgetting: the adapted judge and the base judge judge every shipped dev row of each
   language the model reads (models/adaptation/anchor-dev.jsonl.gz), each over its whole passages as
   `score` judges it, the adapted weights run as the int8 ONNX model the written judge will hold. When
   the adapted judge's balanced accuracy falls more than 0.02 below the base judge's, over all rows or
   in one language, its weights and calibration are moved back toward the base judge's (weight-space
   interpolation) until it does not, down to none of the adaptation kept. Every adaptation is guarded, those of the cross-validation folds too, so the
   reported figures are of what is written. `domain_only` skips replay and check.
With too few labels per class to fine-tune, only the calibration and band are refitted; with fewer
still, nothing is adapted and the command refuses.

Chinese pairs go to the embedding judge (the cross-encoder reads most Chinese as [UNK]); adapting
refits its threshold on the team's Chinese labels. A base that hands Chinese to judge-v2 (the shipped
judge-v1) gives an adapted judge that does so too (config.json, "chinese_judge"): with Chinese labels,
judge-v2 is adapted on them in the same command (the whole procedure again, its forgetting check on the
Chinese dev rows) and written inside the judge (judge_dir.ADAPTED_CHINESE_JUDGE), so that one directory
judges English with the adapted judge-v1 and Chinese with the adapted judge-v2; without enough of them
it keeps the shipped judge-v2. `--base judge-v2` adapts judge-v2 alone, for both languages.

What it reports is cross-validated: folds keep pairs that share a passage or a question together, and
each fold's figures come from an adaptation that never saw that fold. The fine-tuning needs torch
(`citeaudit[train]`); recalibration needs only the judge's own onnxruntime.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from citeaudit.errors import InputError, Problem, TrainingError
from citeaudit.files.destinations import temporary_folder_beside
from citeaudit.files.labelled import Row
from citeaudit.judges.base import Request
from citeaudit.judges.judge_dir import ADAPTED_CHINESE_JUDGE, CHINESE_JUDGE_KEY
from citeaudit.judges.model import (CHINESE_MODEL_NAME, ModelJudge, hands_chinese_to_v2, is_chinese, model_dir,
                                    reads_chinese, shipped_model_dir)
from citeaudit.records import Judgment, directory_sha256
from citeaudit.stats import best_threshold, drawing, metrics
from citeaudit.training import forgetting, seen_claims
from citeaudit.training.adapted_dir import BOTH_LANGUAGES, export_int8, render_figures, write_judge
from citeaudit.training.finetune import Trainer, Tuning, examples_of, interpolate
from citeaudit.training.judge_parts import (BAND_LIMITS, JudgeState, Progress, base_state, blend_calibration,
                                            calibration_values, choose_band, fit_calibration, judge_rows, make_judge,
                                            quiet)
from citeaudit.training.team_labels import (TeamLabels, class_counts, fold_of, load_team_labels, pair_groups,
                                           split_held)
from citeaudit.training.validation import row_groups

# what `adapt-judge`'s callers reach through this module, wherever the piece lives
__all__ = ["BAND_LIMITS", "FORGETTING_LIMIT", "INTERPOLATION_STEPS", "Adapter", "Plan", "Settings", "TeamLabels",
           "adapt_judge", "base_state", "choose_band", "fold_of", "load_team_labels", "plan_for", "render_figures"]

# Below these counts of the rarer class (full or not full) a step is not taken: fine-tuning a
# cross-encoder on a handful of examples of one class teaches it that class's topics, not support.
MIN_TO_TUNE = 40
MIN_TO_CALIBRATE = 10
FORGETTING_LIMIT = forgetting.FORGETTING_LIMIT
INTERPOLATION_STEPS = (0.75, 0.5, 0.25, 0.0)  # share of the adaptation kept, tried in turn


@dataclass(frozen=True)
class Settings(Tuning):
    """The fine-tuning's settings (`Tuning`: epochs, learning rate, batch, replay, frozen layers, seed,
    threads, domain only), and the command's own."""

    folds: int = 3
    recalibrate_only: bool = False
    resamples: int = 1000
    resample_by: str = "groups"  # what the intervals draw: "groups" of pairs (team_labels.pair_groups) or "pairs"
    # the forgetting check's rows: a fixed sample of each language's dev rows, or None for all of them (for
    # one adaptation a sample of 300 of the 584 English rows saw a gain of 0.015, all 584 a loss of 0.005)
    anchor_rows: int | None = None
    anchor_exclude: tuple[str, ...] = ()  # sources the check leaves out (a domain measured as unseen)
    # the languages whose dev rows the check reads, of those the judge reads with its model (None: all of
    # them); judge-v2 adapted for a judge-v1 judges only Chinese there, so only Chinese rows count
    check_languages: tuple[str, ...] | None = None


# --- one adaptation, and its cross-validation ------------------------------------------------------------


@dataclass
class Plan:
    """What the labels allow, per route: "fine-tune", "recalibrate" or None (left as it is), and why."""

    english: str | None
    chinese: str | None
    reasons: list[str] = field(default_factory=list)


def plan_for(english: Sequence[Row], chinese: Sequence[Row], settings: Settings, torch_available: bool,
             route: str = "English") -> Plan:
    """What the labels allow: `english` are the pairs of the model's route (every pair, `route` "All pairs",
    for a model that reads Chinese), `chinese` those of the embedding judge's."""
    reasons = []
    plan = Plan(None, None, reasons)
    en = min(class_counts(english).values()) if english else 0
    if english:
        if en >= MIN_TO_TUNE and not settings.recalibrate_only and torch_available:
            plan.english = "fine-tune"
        elif en >= MIN_TO_CALIBRATE:
            plan.english = "recalibrate"
            if settings.recalibrate_only:
                reasons.append(f"{route}: recalibrating only, as asked")
            elif en < MIN_TO_TUNE:
                reasons.append(f"{route}: too few labels to fine-tune ({_counts(english)}; fine-tuning needs at "
                               f"least {MIN_TO_TUNE} of each class): recalibrating only")
            else:
                reasons.append(f"{route}: torch is not installed (pip install 'citeaudit[train]'): recalibrating only")
        else:
            reasons.append(f"{route}: too few labels to adapt ({_counts(english)}; recalibrating needs at least "
                           f"{MIN_TO_CALIBRATE} of each class): left as it is")
    zh = min(class_counts(chinese).values()) if chinese else 0
    if chinese:
        if zh >= MIN_TO_CALIBRATE:
            plan.chinese = "recalibrate"
        else:
            reasons.append(f"Chinese: too few labels to refit the threshold ({_counts(chinese)}; it needs at least "
                           f"{MIN_TO_CALIBRATE} of each class): left as it is")
    return plan


def _counts(rows: Sequence[Row]) -> str:
    c = class_counts(rows)
    return f"{c['full']} full, {c['not_full']} not full"


class Adapter:
    """Adapts one judge directory; every fitted piece is made by `adapt`, for a fold or for all rows."""

    def __init__(self, model_dir: Path, settings: Settings, plan: Plan, progress: Progress = quiet,
                 chinese_judge: str | None = None, chinese_dir: Path | None = None):
        self.model_dir = model_dir
        self.chinese_judge = chinese_judge  # judge-v2, where the adapted judge keeps its base's for Chinese
        self.chinese_dir = chinese_dir  # the adapted judge-v2's folder, where it holds one (ADAPTED_CHINESE_JUDGE)
        self.settings = settings
        self.plan = plan
        self.progress = progress
        self.base = base_state(model_dir)
        self._remembered: dict[int, tuple] = {}  # id(weights) -> (weights, their scored windows by request)
        self._int8: dict[int, tuple[Path, Path]] = {}  # id(weights) -> (its folder, their int8 ONNX model)
        self.question_of: dict[int, str | None] = {}  # id(row) -> its question, to keep a question together
        self.base_judge = self.judge_for(self.base)
        self._anchor: list[Row] | None = None
        self._anchor_base: list[Judgment] | None = None  # the base judge's judgments of the anchor rows
        self._anchor_groups: list[int] = []  # and the groups of them that share a claim or a passage
        self.trainer = Trainer(model_dir, settings) if plan.english == "fine-tune" else None
        self._similarity: dict[int, float] = {}

    def judge_for(self, state: JudgeState, calibrated: bool = True) -> ModelJudge:
        """A judge with `state`, remembering its weights' own judgments for the next judge with them."""
        # the weights are kept with their memory, so that their id cannot be reused while it lives
        _, remembered = self._remembered.setdefault(id(state.model), (state.model, {}))
        return make_judge(self.model_dir, state, self.settings.threads, calibrated, remembered, self.chinese_judge,
                          self.int8_of, self.chinese_dir)

    def int8_of(self, model) -> Path:
        """The weights exported and quantised as the written judge's (once per weights), in the run's
        temporary folder (adapt_judge's `_temporaries_in`): checked as they will ship, not in fp32."""
        if id(model) not in self._int8:
            folder = Path(tempfile.mkdtemp(prefix="int8-"))
            self._int8[id(model)] = folder, export_int8(model, self.model_dir, folder / "judge", folder)
        return self._int8[id(model)][1]

    def forget(self, model) -> None:
        if model is not None:
            self._remembered.pop(id(model), None)
            folder, _ = self._int8.pop(id(model), (None, None))
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

    def anchor(self) -> list[Row]:
        """The forgetting check's rows: the dev rows of the languages the base judge reads with its model."""
        if self._anchor is None:
            wanted = self.settings.check_languages
            self._anchor = forgetting.anchor_rows(self.settings.anchor_rows, self.settings.anchor_exclude,
                                                  [lang for lang in forgetting.languages_judged(self.base_judge)
                                                   if wanted is None or lang in wanted])
        return self._anchor

    def guarded(self, state: JudgeState, stage: str) -> tuple[JudgeState, dict[str, Any]]:
        """`state` moved back toward the base judge (weights and calibration together, by
        INTERPOLATION_STEPS) until it loses at most FORGETTING_LIMIT on the forgetting check's rows, over
        all of them and in each language; with the check's figures."""
        s = self.settings
        rows = self.anchor()
        if self._anchor_base is None:
            self._anchor_base = self.judged(self.base, rows, "forgetting check: base judge")
            self._anchor_groups = row_groups(rows)
        base_model = self.trainer.base if self.trainer else None
        tried, keep, candidate = [], 1.0, state
        while True:
            if keep == 0.0:
                candidate = replace(state, model=None, calibration=self.base.calibration, band=self.base.band)
            elif keep < 1.0:
                candidate = replace(state, model=None if state.model is None else interpolate(base_model, state.model, keep),
                                    calibration=blend_calibration(self.base.calibration, state.calibration, keep),
                                    band=round((1 - keep) * self.base.band + keep * state.band, 2))
            judged = self.judged(candidate, rows, f"{stage}: forgetting check, {keep:.0%} of the adaptation")
            found = forgetting.loss(rows, self._anchor_base, judged, s.resamples, s.seed,
                                    s.resample_by == "groups", self._anchor_groups)
            tried.append({"kept": keep, "balanced_accuracy": found["adapted"], "loss": found["loss"],
                          "loss_by_language": {lang: f["loss"] for lang, f in found["by_language"].items()},
                          "loss_by_source": {source: f["loss"] for source, f in found["by_source"].items()}})
            if forgetting.within_limit(found) or keep == 0.0:
                break
            if candidate.model is not state.model:
                self.forget(candidate.model)
            keep = next(k for k in INTERPOLATION_STEPS if k < keep)
        if candidate.model is not state.model:
            self.forget(state.model)
        left_out = (None if "zh" in forgetting.languages_judged(self.base_judge)
                    else forgetting.CHINESE_LEFT_OUT_HELD if self.chinese_judge == ADAPTED_CHINESE_JUDGE
                    else forgetting.CHINESE_LEFT_OUT_V2 if self.chinese_judge else forgetting.CHINESE_LEFT_OUT)
        return candidate, {**found, "limit": FORGETTING_LIMIT, "kept": keep,
                           **({"left_out": left_out} if left_out else {}), "tried": tried}

    def similarities(self, rows: Sequence[Row]) -> list[float]:
        todo = [r for r in rows if id(r) not in self._similarity]
        judged = self.base_judge.zh_judge.judge_batch([Request.of(r.claim, r.passages) for r in todo]) if todo else []
        for r, j in zip(todo, judged):
            self._similarity[id(r)] = float((j.scores or {}).get("similarity", 0.0))
        return [self._similarity[id(r)] for r in rows]

    def adapt(self, english: Sequence[Row], chinese: Sequence[Row], stage: str) -> tuple[JudgeState, dict]:
        """The adapted state from these rows, and what was done."""
        state = JudgeState(None, self.base.calibration, self.base.band, self.base.zh_threshold)
        record: dict[str, Any] = {}
        if self.plan.english == "recalibrate":
            state.calibration, state.band = fit_calibration(
                calibration_values(self.base_judge, english), [r.label == "full" for r in english], self.base.calibration,
                {"rows": len(english), "full": sum(r.label == "full" for r in english), "model": "base"})
            record["english"] = {"recalibrated_on": len(english), "band": state.band}
        elif self.plan.english == "fine-tune":
            tune, held = split_held(english, [self.question_of.get(id(r)) for r in english], self.settings.seed)
            if not tune or not held:
                raise TrainingError("the labels fall into one group of pairs sharing a passage or question: "
                                    "nothing is left apart to stop training and calibrate on")
            trainer = self.trainer
            state.model, history = trainer.fine_tune(examples_of(tune, trainer.count, trainer.max_len),
                                                     examples_of(held, trainer.count, trainer.max_len),
                                                          self.progress, stage)
            judge = self.judge_for(state, calibrated=False)
            state.calibration, state.band = fit_calibration(
                calibration_values(judge, held), [r.label == "full" for r in held], self.base.calibration,
                {"rows": len(held), "full": sum(r.label == "full" for r in held), "model": "fine-tuned"})
            record["english"] = {"fine_tuned_on": len(tune), "calibrated_on": len(held), "band": state.band,
                                 **history}
        if self.plan.english is not None and not self.settings.domain_only:
            state, record["forgetting"] = self.guarded(state, stage or "recalibrating")
            if record["english"]["band"] != state.band:  # the check kept part of the adaptation: its band too
                record["english"]["band_before_the_forgetting_check"] = record["english"]["band"]
                record["english"]["band"] = state.band
        if self.plan.chinese == "recalibrate":
            found = best_threshold([r.label == "full" for r in chinese], self.similarities(chinese))
            if found is not None:
                state.zh_threshold = round(found[0], 4)
                record["chinese"] = {"threshold_fitted_on": len(chinese), "threshold": state.zh_threshold}
        return state, record

    def judged(self, state: JudgeState, rows: Sequence[Row], stage: str) -> list[Judgment]:
        return judge_rows(self.judge_for(state), rows, self.progress, stage)


def figures(gold: Sequence[str], judgments: Sequence[Judgment], resamples: int, seed: int,
            groups: Sequence[int] | None = None, resampling: dict[str, Any] | None = None) -> dict[str, Any]:
    """n, balanced accuracy (full vs rest) and kappa with intervals over every pair (an uncertain
    judgment counted at its best guess), the share uncertain, and balanced accuracy of the rest. The
    intervals draw whole `groups` (a group number for each pair) when given, else single pairs;
    `resampling` (stats.drawing's account of that) is kept with the figures."""
    pred = [j.label for j in judgments]
    out = metrics(list(gold), pred, [], resamples, seed, groups=groups)
    sure = [i for i, j in enumerate(judgments) if not j.uncertain]
    confident = metrics([gold[i] for i in sure], [pred[i] for i in sure], [], 0, seed) if sure else {}
    return {"n": len(gold), "balanced_accuracy": out["balanced_accuracy"], "balanced_accuracy_ci": out["balanced_accuracy_ci"],
            "kappa": out["kappa"], "kappa_ci": out["kappa_ci"],
            "uncertain": len(gold) - len(sure), "uncertain_share": (len(gold) - len(sure)) / len(gold) if gold else None,
            "balanced_accuracy_confident": confident.get("balanced_accuracy"),
            **({"resampling": resampling} if resampling else {})}


def figures_of(rows: Sequence[Row], groups: Sequence[int], settings: Settings
               ) -> Callable[[Sequence[int], Sequence[Judgment]], dict[str, Any]]:
    """`figures` of the pairs `ix` (indices into `rows`) judged as `column` says (a judgment for each of
    `rows`), their intervals drawing as `settings.resample_by` asks: whole groups of pairs sharing a
    passage, question or claim (`groups`, team_labels.pair_groups), or single pairs (stats.drawing)."""
    def of(ix: Sequence[int], column: Sequence[Judgment]) -> dict[str, Any]:
        chosen, drawn = drawing(settings.resample_by, "pair", len(ix), lambda: [groups[i] for i in ix])
        return figures([rows[i].label for i in ix], [column[i] for i in ix], settings.resamples, settings.seed,
                       chosen, drawn)
    return of


def cross_validate(adapter: Adapter, team: TeamLabels, chinese_of: Sequence[bool]) -> dict[str, Any]:
    """Out-of-fold judgments of every pair by the base judge, by a recalibrated one and by the adapted
    one, each adaptation made without the fold it judges; their figures per route."""
    s = adapter.settings
    folds = fold_of(team, s.folds, s.seed)
    rows = team.rows
    columns = {"base": adapter.judged(adapter.base, rows, "judging with the base judge"),
               "adapted": [None] * len(rows)}
    if adapter.plan.english == "fine-tune":
        columns["recalibrated"] = [None] * len(rows)
    recalibrating = Plan("recalibrate", adapter.plan.chinese)
    kept: list[float | None] = []  # the share of each fold's adaptation the forgetting check kept
    for f in range(s.folds):
        test_ix = [i for i, k in enumerate(folds) if k == f]
        if not test_ix:
            continue
        train_ix = [i for i, k in enumerate(folds) if k != f]
        en_train = [rows[i] for i in train_ix if not chinese_of[i]]
        zh_train = [rows[i] for i in train_ix if chinese_of[i]]
        state, record = adapter.adapt(en_train, zh_train, f"fold {f + 1}/{s.folds}: {_doing(adapter.plan)}")
        kept.append((record.get("forgetting") or {}).get("kept"))
        test = [rows[i] for i in test_ix]
        for i, j in zip(test_ix, adapter.judged(state, test, f"fold {f + 1}/{s.folds}: judging")):
            columns["adapted"][i] = j
        adapter.forget(state.model)
        if "recalibrated" in columns:
            plan, adapter.plan = adapter.plan, recalibrating
            state, _ = adapter.adapt(en_train, zh_train, f"fold {f + 1}/{s.folds}: recalibrating")
            adapter.plan = plan
            for i, j in zip(test_ix, adapter.judged(state, test, f"fold {f + 1}/{s.folds}: judging recalibrated")):
                columns["recalibrated"][i] = j
    out: dict[str, Any] = {"folds": s.folds, "fold_sizes": [folds.count(f) for f in range(s.folds)],
                           "kept_per_fold": kept}
    of = figures_of(rows, pair_groups(team), s)
    for route, wanted in (("english", False), ("chinese", True)):
        ix = [i for i, z in enumerate(chinese_of) if z == wanted]
        if not ix:
            continue
        out[route] = {name: of(ix, judged)
                      for name, judged in columns.items() if not (route == "chinese" and name == "recalibrated")}
    # the judge of its Chinese pairs (judge-v2) learnt from claims too
    chinese = ((adapter.chinese_judge, adapter.chinese_dir or shipped_model_dir(adapter.chinese_judge))
               if adapter.chinese_judge else None)
    out["seen"] = seen_claims.unseen_figures(adapter.model_dir, rows, chinese_of, columns, of, chinese)
    return out


# --- the whole command -------------------------------------------------------------------------------


def torch_available() -> bool:
    """Whether the `train` extra's packages are installed (fine-tuning needs them; recalibrating does not)."""
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in ("torch", "transformers", "onnx"))


def adapt_judge(team: TeamLabels, out_dir: str | Path, base_dir: str | Path | None = None,
                settings: Settings = Settings(), progress: Progress = quiet, force: bool = False) -> dict[str, Any]:
    """Cross-validate, adapt on every row, check forgetting, write the judge directory. Nothing is left
    at `out_dir` unless the whole directory was written: it is built in a hidden folder beside it, which
    holds every temporary file of the adaptation, and renamed into place."""
    started = time.monotonic()
    progress, seconds = _timed(progress)
    drawing(settings.resample_by, "pair", 0, list)  # a bad choice is refused before any work
    base = model_dir(base_dir)  # every file of the base checked before any work
    base_dir = base.path
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not force:
        raise InputError([Problem(str(out), None, "", "exists and is not empty (choose another folder or --force)")])
    if out.resolve() == base_dir.resolve():
        raise InputError([Problem(str(out), None, "", "is the judge being adapted; write the adapted judge elsewhere")])
    from tokenizers import Tokenizer

    written_in_chinese = [is_chinese(Request.of(r.claim, r.passages)) for r in team.rows]
    # a base whose vocabulary reads Chinese (judge-v2) judges Chinese pairs itself: a team's Chinese
    # labels fine-tune the model with the English ones; judge-v1's go to its embedding route's threshold
    model_reads_chinese = reads_chinese(Tokenizer.from_file(str(base_dir / "tokenizer.json")))
    chinese_of = [z and not model_reads_chinese for z in written_in_chinese]
    english = [r for r, z in zip(team.rows, chinese_of) if not z]
    chinese = [r for r, z in zip(team.rows, chinese_of) if z]
    # a base that hands Chinese to judge-v2 (the shipped judge-v1) gives a judge that does so too: refitting
    # the embedding judge's threshold on the team's Chinese labels would move Chinese pairs to a weaker judge
    # (CiteCheck test 0.724 against judge-v2's 0.838); the Chinese labels adapt judge-v2 itself instead
    chinese_judge = (CHINESE_MODEL_NAME if not model_reads_chinese and (
        base_dir.resolve() == shipped_model_dir().resolve() or hands_chinese_to_v2(base))
        else None)
    plan = plan_for(english, [] if chinese_judge else chinese, settings, torch_available(),
                    "All pairs" if model_reads_chinese else "English")
    # the team's Chinese labels adapt judge-v2 itself, written inside this judge, when there are enough; a
    # base that holds an adapted judge-v2 gives it on: adapted further, or kept as it is
    held_by_base = base.config.get(CHINESE_JUDGE_KEY) == ADAPTED_CHINESE_JUDGE
    adapt_chinese = bool(chinese_judge and chinese) and _enough_for_judge_v2(chinese, plan)
    report: dict[str, Any] = {
        "labels": {"described_as": team.described_as, "pairs": len(team.rows), "sha256": team.content_hash(),
                   "english": class_counts([r for r, z in zip(team.rows, written_in_chinese) if not z]),
                   "chinese": class_counts([r for r, z in zip(team.rows, written_in_chinese) if z]),
                   "routes": _routes(model_reads_chinese, chinese_judge, adapt_chinese, held_by_base),
                   "conflicting_pairs_left_out": team.conflicts,
                   "pairs_left_out_passage_not_text": dict(team.not_text)},
        "base": {"dir": str(base_dir), "sha256": directory_sha256(base_dir), "name": _adapted_name(base)},
        "plan": {"english": plan.english, "chinese": plan.chinese, "reasons": plan.reasons,
                 **({"chinese_judge": chinese_judge} if chinese_judge else {})},
        "settings": {k: v for k, v in vars(settings).items() if k != "threads"},
    }
    if plan.english is None and plan.chinese is None and not adapt_chinese:
        raise InputError([Problem(team.described_as or "labels", None, "labels",
                                  ("nothing to adapt this judge with: " if chinese_judge and chinese and not english
                                   else "too few labels to adapt the judge: ") + "; ".join(plan.reasons)
                                  + "".join(f"; {n} pair{'s' if n != 1 else ''} left out whose passage is {why}"
                                            for why, n in team.not_text.items()))])
    # made first: a destination that cannot be written is refused before any work
    with temporary_folder_beside(out, "--out") as work, _temporaries_in(work):
        held_chinese = None
        if adapt_chinese:  # first: its own refusals come before the English work
            held_chinese, report["chinese_adaptation"] = _adapt_judge_v2(
                team, chinese_of, work, base_dir / ADAPTED_CHINESE_JUDGE if held_by_base else chinese_base_dir(),
                settings, progress)
            team = team.only([not z for z in chinese_of])  # the rest of the report is of the English labels
            chinese_of = [False] * len(team.rows)
        elif held_by_base:
            held_chinese = work / ADAPTED_CHINESE_JUDGE
            shutil.copytree(base_dir / ADAPTED_CHINESE_JUDGE, held_chinese)
        if held_chinese is not None:
            chinese_judge = ADAPTED_CHINESE_JUDGE
            report["plan"]["chinese_judge"] = chinese_judge
        adapter = Adapter(base_dir, settings, plan, progress, chinese_judge, held_chinese)
        adapter.question_of = {id(r): q for r, q in zip(team.rows, team.questions)}
        if settings.folds >= 2 and (plan.english or plan.chinese):
            report["cross_validation"] = cross_validate(adapter, team, chinese_of)
        state, record = adapter.adapt(english, [] if adapt_chinese else chinese, f"{_doing(plan)} on every pair")
        if "forgetting" in record:
            report["forgetting"] = record.pop("forgetting")
        report["adaptation"] = record
        report["minutes"] = round((time.monotonic() - started) / 60, 2)
        progress("writing the judge", 0, 1)
        written = write_judge(out, base_dir, state, report, work, [r.claim for r in team.rows], chinese_judge,
                              None if state.model is None else adapter.int8_of(state.model), held_chinese)
    report["judge"] = {"dir": str(out), "sha256": directory_sha256(written),
                       "spec": f"model:path={out}"}
    report["minutes"] = round((time.monotonic() - started) / 60, 2)
    progress("writing the judge", 1, 1)
    report["seconds_by_stage"] = {stage: round(s, 1) for stage, s in seconds.items()}
    return report


def _doing(plan: Plan) -> str:
    """What a run does to the English judge, as its progress lines say it."""
    return "fine-tuning" if plan.english == "fine-tune" else "recalibrating"


def _adapted_name(base) -> str:
    """The adapted judge's name: its base's (from the base's card), adapted; once, however often it is."""
    name = str((base.card or {}).get("name") or "citeaudit model judge")
    return name if name.endswith(", adapted") else f"{name}, adapted"


def _routes(model_reads_chinese: bool, chinese_judge: str | None, adapt_chinese: bool, held_by_base: bool) -> str:
    """What each language's labels adapt, as the report says it."""
    if model_reads_chinese:
        return f"{BOTH_LANGUAGES}: Chinese and English labels adapt it together"
    if adapt_chinese:
        return f"English labels adapt the model; Chinese ones adapt {chinese_judge}, held inside the judge"
    if held_by_base:
        return "English labels adapt the model; Chinese pairs stay with the adapted judge-v2 the base holds"
    if chinese_judge:
        return f"English labels adapt the model; Chinese pairs stay with {chinese_judge}"
    return "English labels adapt the model, Chinese ones the embedding route's threshold"


def chinese_base_dir() -> Path:
    """judge-v2 as shipped (unpacked): the base a team's Chinese labels adapt beside a judge-v1."""
    return shipped_model_dir(CHINESE_MODEL_NAME)


def _enough_for_judge_v2(chinese: Sequence[Row], plan: Plan) -> bool:
    """Whether the Chinese labels are enough to adapt judge-v2 (recalibrating it at least); if not, the plan
    says so and judge-v2 stays as it is (the shipped one, or the adapted one the base holds)."""
    if min(class_counts(chinese).values()) >= MIN_TO_CALIBRATE:
        return True
    plan.reasons.append(f"Chinese: too few labels to adapt {CHINESE_MODEL_NAME} ({_counts(chinese)}; it needs at "
                        f"least {MIN_TO_CALIBRATE} of each class): it stays as it is")
    return False


def _adapt_judge_v2(team: TeamLabels, chinese_of: Sequence[bool], work: Path, base: Path, settings: Settings,
                    progress: Progress) -> tuple[Path, dict[str, Any]]:
    """judge-v2 (`base`: the shipped one, or the adapted one a base judge holds) adapted on the team's
    Chinese labels, as `adapt-judge --base judge-v2` adapts it, its forgetting check on the Chinese dev rows
    only (judge-v1 judges the English ones); written into `work`, with its report."""
    chinese = team.only(chinese_of, f"{team.described_as}, its Chinese pairs")
    folder = work / ADAPTED_CHINESE_JUDGE
    report = adapt_judge(chinese, folder, base, replace(settings, check_languages=("zh",)),
                         lambda stage, done, total: progress(f"Chinese, {CHINESE_MODEL_NAME}: {stage}", done, total))
    report.pop("judge")  # it is written inside the judge this command writes, not apart
    return folder, report


def _timed(progress: Progress) -> tuple[Progress, dict[str, float]]:
    """`progress`, noting how long each stage took (from its first report to its last)."""
    first: dict[str, float] = {}
    seconds: dict[str, float] = {}

    def timed(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        first.setdefault(stage, now)
        seconds[stage] = now - first[stage]
        progress(stage, done, total)

    return timed, seconds


@contextmanager
def _temporaries_in(folder: Path) -> Iterator[None]:
    """Temporary files made without a folder named (onnxruntime's quantiser copies the model to one) go to
    `folder` too, not to the system's temporary folder, where a killed run would leave them."""
    before, tempfile.tempdir = tempfile.tempdir, str(folder)
    try:
        yield
    finally:
        tempfile.tempdir = before
