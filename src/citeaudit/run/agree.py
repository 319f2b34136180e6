"""Agreement between a run's judge and a team's own labels: how often does the judge say what the
reviewers said?

Human labels come from a labelled-pairs file (the JSONL that `validate-judge` reads), from the desk's
review export (a run log whose human labels are judgments by `human:REVIEWER`), from a run scored
with the curated judge (its judgments are the cases' own labels, as a dataset's experts gave them), or
from case files with labels (citeaudit's, or another tool's read with `--from`: each case's `labels`).
A label belongs to a claim of the run when the claim's text and its cited passages (ids and texts, order
ignored) are the ones labelled. The unit of every figure is one distinct (claim, cited passages)
pair: a claim repeated word for word on the same passages in several answers is judged once and
counted once.

A pair the judge left unjudged, or judged with a label it marked uncertain, is not a verdict to agree
or disagree with: it is listed apart and left out of the figures. So is a pair whose reviewers gave
different labels (no one label to compare with), and a label a rule gave rather than the judge (a
claim that cites nothing is unsupported without asking anyone: such claims have no pair to label, and
are counted apart among the claims with no human label). Beside those confident-only figures, the
same figures over every pair the judge judged (an uncertain one at its best guess, the label it gives
without the band) and the coverage, the share it was sure of: judges that are unsure of different
pairs are otherwise measured on different pairs. Several runs are measured on the pairs every one of
them judged (`agree_runs`). A judge that trained or was calibrated on a labelled claim flatters itself
there: how many of the claims it has seen is said, from its judge directory's record (judges/seen.py),
with the every-pair figures on the claims it has not seen beside those on the rest. The statistics
are stats.py's; the desk's review mode computes its agreement here too.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from citeaudit.errors import InputError, JudgeSetupError, Problem
from citeaudit.files.labelled import Row, load_rows
from citeaudit.jsonio import ENCODING
from citeaudit.judges.registry import chinese_judge_directory, judge_directory
from citeaudit.judges.seen import SeenClaims, claim_key, seen_in, seen_summary
from citeaudit.metrics.names import NOT_MEASURED
from citeaudit.metrics.scoring import UNCERTAIN, UNJUDGED, by_rule
from citeaudit.parse.resolve import ResolvedCase
from citeaudit.records import Judgment, SourcePassage
from citeaudit.run.log import RunLog, is_stream, read_runlog, resolved_cases
from citeaudit.stats import bootstrap_interval, connected_groups, drawing, metrics, paired_balanced_accuracy_difference

# Below this many counted pairs no figure is given: one pair agrees or not, and kappa cannot tell
# chance from skill.
MIN_PAIRS = 2
# The desk shows kappa without an interval, so it waits for enough pairs for the bare number to mean
# something (docs/agreement.md says why twenty).
DESK_MIN_PAIRS = 20
HUMAN_JUDGE_PREFIX = "human:"
# The curated judge's signature starts so: its judgments are the labels the cases carry (judges/curated.py).
CURATED_JUDGE_PREFIX = "curated@"
BY_RULE = "labelled by a rule"  # why a claim is not counted: no judge was asked (it cites nothing)
# The figures also given over every judged pair, an uncertain one at its best guess: the same names
# with ALL after them (`n_all`, `balanced_accuracy_all`, `balanced_accuracy_all_ci`, ...).
ALL = "_all"
EVERY_PAIR_FIGURES = ("n", "agree", "agreement", "kappa", "balanced_accuracy", "undefined")
WITH_INTERVALS = ("agreement", "kappa", "balanced_accuracy")

PairKey = tuple[str, frozenset[tuple[str, str | None]]]


def pair_key(text: str, passages: Iterable[tuple[str, str | None]]) -> PairKey:
    """What a label is matched by: the claim's text and its cited (id, text) pairs, order ignored."""
    return text, frozenset(passages)


def why_not_counted(judgment: Judgment | None) -> str | None:
    """"unjudged", "uncertain" or "labelled by a rule" for a judgment that is no judge's verdict to compare
    with, else None."""
    if judgment is None:
        return UNJUDGED
    if by_rule(judgment):
        return BY_RULE
    return UNCERTAIN if judgment.uncertain else None


# --- the labels ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Labels:
    """Human labels as labelled rows, and where they came from."""

    file: str
    format: str  # "labelled pairs", "desk export", "curated run log", "case file" or "FORMAT file" (--from)
    rows: list[Row]


def is_run_log(path: str | Path) -> bool:
    """True when the file is a run log: one JSON object with a schema_version (such as the desk's
    export), or a streamed run log (JSON lines whose first is a stream header); a labelled-pairs file is
    JSON lines of rows. Unreadable files say False: `load_rows` reports them."""
    if is_stream(path):
        return True
    try:
        data = json.loads(Path(path).read_text(encoding=ENCODING))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "schema_version" in data


def holds_cases(path: str | Path) -> bool:
    """True when the file holds case files' JSON rather than labelled pairs: its first line opens a JSON
    document (a list, or an object spread over lines) or is a case (it has a `question`, or `cases`).
    A labelled-pairs file is JSON lines of rows; unreadable files say False: `load_rows` reports them."""
    try:
        with open(path, encoding=ENCODING) as fh:
            first = next((line.strip() for line in fh if line.strip()), "")
    except (OSError, UnicodeDecodeError):
        return False
    if first.startswith("[") or first == "{":
        return True
    try:
        data = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and ("question" in data or "cases" in data)


def rows_of_cases(cases: Sequence[ResolvedCase], file: str) -> list[Row]:
    """Each case's own labels (`labels`, the curated judge's) as labelled rows, with the texts of the
    passages they name; a file whose cases carry no label at all is an InputError."""
    rows = [Row(f"{rc.id}/labels[{i}]", label.claim, tuple(rc.passages[p] for p in label.passages), label.label)
            for rc in cases for i, label in enumerate(rc.case.labels)]
    if not rows:
        raise InputError([Problem(file, None, "labels", "no case has labels (each case's `labels`: the human "
                                                         "labels the curated judge reads)")])
    return rows


def rows_of_export(log: RunLog, file: str) -> list[Row]:
    """The human labels of a desk export (judgments by `human:REVIEWER`) as labelled rows, each with
    the texts of the passages it names; a passage no case of the log holds is a located problem."""
    rows = _rows_of_judgments(log, file, lambda judge: judge.startswith(HUMAN_JUDGE_PREFIX))
    if not rows:
        raise InputError([Problem(file, None, "judgments", f"no human labels (judgments whose judge starts with "
                                                            f"'{HUMAN_JUDGE_PREFIX}')")])
    return rows


def rows_of_curated_run(log: RunLog, file: str) -> list[Row]:
    """The judgments of a run scored with the curated judge, the cases' own labels it applied, as
    labelled rows (see rows_of_export)."""
    rows = _rows_of_judgments(log, file, lambda judge: judge.startswith(CURATED_JUDGE_PREFIX))
    if not rows:
        raise InputError([Problem(file, None, "judgments", "no labels: the run's curated judge judged no "
                                                            "(claim, cited passages) pair")])
    return rows


def _rows_of_judgments(log: RunLog, file: str, chosen: Callable[[str], bool]) -> list[Row]:
    """The log's judgments by a judge `chosen` accepts, as labelled rows, each with the texts of the
    passages it names; a passage no case of the log holds is a located problem."""
    by_identity = {_identity(p): p for rc in resolved_cases(log) for p in rc.passages.values()}
    rows, problems = [], []
    for i, record in enumerate(log.judgments):
        if not chosen(record.judgment.judge):
            continue
        found = [by_identity.get(json.dumps(ref.model_dump(), sort_keys=True)) for ref in record.passages]
        problems += [Problem(file, None, f"judgments[{i}].passages[{k}]", "no passage of the log's cases has "
                             "this id, document, version, span and hash") for k, p in enumerate(found) if p is None]
        rows.append(Row(f"judgments[{i}]", record.text, tuple(p for p in found if p is not None),
                        record.judgment.label, source=record.judgment.judge))
    if problems:
        raise InputError(problems)
    return rows


def _citeaudit_cases(path: str) -> list[ResolvedCase]:
    from citeaudit.files.loading import load_cases

    return load_cases([path])


def load_labels(path: str | Path, read_log: Callable[[str], RunLog] = read_runlog,
                read_cases: Callable[[str], Sequence[ResolvedCase]] = _citeaudit_cases,
                source_format: str | None = None) -> Labels:
    """Human labels from a labelled-pairs JSONL file, a run log (a desk export's human labels, else the
    judgments of a run scored with the curated judge), or case files with labels (read by `read_cases`;
    `source_format` names another tool's format, whose reader `read_cases` applies). Every problem is an
    InputError located as file:line: field: message."""
    name = str(path)
    if source_format not in (None, "citeaudit"):
        return Labels(name, f"{source_format} file", rows_of_cases(read_cases(name), name))
    if is_run_log(path):
        return _labels_of_log(read_log(name), name)
    if holds_cases(path):
        return Labels(name, "case file", rows_of_cases(read_cases(name), name))
    return Labels(name, "labelled pairs", load_rows(path))


def _labels_of_log(log: RunLog, file: str) -> Labels:
    """A desk export's human labels; else, for a run scored with the curated judge, its judgments."""
    if any(r.judgment.judge.startswith(HUMAN_JUDGE_PREFIX) for r in log.judgments):
        return Labels(file, "desk export", rows_of_export(log, file))
    if log.judge.startswith(CURATED_JUDGE_PREFIX):
        return Labels(file, "curated run log", rows_of_curated_run(log, file))
    raise InputError([Problem(file, None, "judgments", f"no human labels: the run was judged by {log.judge}; "
                              f"labels come from a desk export (judgments whose judge starts with "
                              f"'{HUMAN_JUDGE_PREFIX}'), a run scored with the curated judge, case files "
                              "with labels, or labelled pairs")])


def _identity(passage: SourcePassage) -> str:
    return json.dumps(passage.identity(), sort_keys=True)


# --- the claims ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunClaim:
    """One claim of a run, where it is, what it cites and the judge's judgment of it; `label` and
    `explanation` as the run shows them ("unjudged" or "uncertain" beside the four labels)."""

    case: str
    answer: str
    statement: int
    index: int
    text: str
    citations: tuple[str, ...]
    cited_texts: tuple[str | None, ...]  # None: the citation names no passage of the case
    judgment: Judgment | None
    label: str
    explanation: str

    @property
    def key(self) -> PairKey:
        return pair_key(self.text, zip(self.citations, self.cited_texts))

    @property
    def where(self) -> str:
        return f"{self.case}/{self.answer} claim {self.statement + 1}.{self.index + 1}"


def _claims(answers: Iterable[tuple[str, str, Iterable[Any]]],
            passages: dict[str, dict[str, SourcePassage]]) -> list[RunClaim]:
    out = []
    for case, answer, claims in answers:
        found = passages.get(case, {})
        for c in claims:
            texts = tuple(found[p].text if p in found else None for p in c.citations)
            out.append(RunClaim(case, answer, c.statement, c.index, c.text, tuple(c.citations), texts, c.judgment,
                                c.label, c.explanation))
    return out


def claims_of_log(log: RunLog) -> list[RunClaim]:
    """Every claim of a run log, with the texts of the passages it cites."""
    passages = {rc.id: rc.passages for rc in resolved_cases(log)}
    return _claims(((a.case, a.answer, a.claims) for a in log.results.answers), passages)


def claims_of_report(report) -> list[RunClaim]:
    """Every claim of a scoring report (metrics.Report), with the texts of the passages it cites."""
    passages = {rc.id: rc.passages for rc in report.cases}
    return _claims(((a.case_id, a.answer_id, a.claims) for a in report.answers), passages)


# --- matching and figures ------------------------------------------------------------------------------


@dataclass
class LabelledPair:
    """One distinct (claim, cited passages) pair with a human label, and the judge's label of it."""

    text: str
    citations: list[str]
    human: str  # for reviewers who differ, their labels joined by " / "
    judge: str  # the judge's label, "unjudged" or "uncertain"
    explanation: str
    claims: list[str]  # where the run makes this claim
    labels: list[str]  # ids of the human labels it matched
    not_counted: str | None = None  # "unjudged", "uncertain", "labelled by a rule" or "reviewers differ"
    best_guess: str | None = None  # the judgment's label, its band ignored (None: unjudged)
    passages: tuple[str | None, ...] = field(default=(), compare=False)  # the cited texts: what groups pairs

    def to_dict(self) -> dict[str, Any]:
        """The pair as the JSON output lists it (its passages' texts are the log's, not repeated)."""
        return {k: v for k, v in asdict(self).items() if k != "passages"}


@dataclass
class Agreement:
    """The figures over the counted pairs, and every pair, label and claim that is left out of them."""

    figures: dict[str, Any]
    pairs: list[LabelledPair]  # counted: the human and the judge each gave one label
    not_counted: list[LabelledPair]
    unmatched_labels: list[str]  # ids of human labels no claim of the run matched
    unlabelled_claims: int  # claims of the run no human label matched
    unlabelled_by_rule: int = 0  # of those, the claims a rule labelled (they cite nothing): no judge was asked
    judged: list[LabelledPair] = field(default_factory=list)  # what the every-pair figures count, in run order

    @property
    def disagreements(self) -> list[LabelledPair]:
        return [p for p in self.pairs if p.human != p.judge]

    def to_dict(self) -> dict[str, Any]:
        return {**self.figures, "disagreements": [p.to_dict() for p in self.disagreements],
                "not_counted": [p.to_dict() for p in self.not_counted],
                "unmatched_labels": self.unmatched_labels, "unlabelled_claims": self.unlabelled_claims,
                "unlabelled_by_rule": self.unlabelled_by_rule}


def figures(human: Sequence[str], judge: Sequence[str], resamples: int = 1000, seed: int = 0,
            min_pairs: int = MIN_PAIRS, groups: Sequence[int] | None = None) -> dict[str, Any]:
    """n, how many agree, the share that agree, Cohen's kappa (four labels), balanced accuracy of full
    vs rest (human = gold), each with a bootstrap 95 % interval (none when resamples is 0) drawing
    pairs, or whole `groups` of them (stats.bootstrap_interval), and the confusion table (rows: human).
    Below `min_pairs` pairs every figure is None and `undefined` says why."""
    out = metrics(human, judge, [], resamples, seed, groups=groups)
    del out["auc"], out["auc_ci"]  # labels only: there is no score to rank by
    same = np.asarray([a == b for a, b in zip(human, judge)], dtype=bool)
    n = len(same)
    out["agree"] = int(same.sum())
    out["agreement"] = float(same.mean()) if n else None
    out["agreement_ci"] = (bootstrap_interval(lambda ix: float(same[ix].mean()), n, resamples, seed, groups=groups,
                                              bounds=(0.0, 1.0))
                           if n else None)
    out["undefined"] = None
    if n < min_pairs:
        for name in ("agreement", "kappa", "balanced_accuracy"):
            out[name] = out[f"{name}_ci"] = None
        out["undefined"] = f"needs at least {min_pairs} claims with a human and a judge label; {n} so far"
    return out


def compare(claims: Sequence[RunClaim], rows: Sequence[Row], resamples: int = 1000, seed: int = 0,
            min_pairs: int = MIN_PAIRS, resample_by: str = "pairs") -> Agreement:
    """Match human labels to claims by claim text and cited passages, and measure the agreement; the
    intervals draw single pairs, or with `resample_by="groups"` whole groups (`pair_groups`)."""
    by_key: dict[PairKey, list[Row]] = {}
    for row in rows:
        by_key.setdefault(pair_key(row.claim, ((p.id, p.text) for p in row.passages)), []).append(row)
    units: dict[tuple[PairKey, str], LabelledPair] = {}
    matched: set[str] = set()
    unlabelled = Counter()
    for claim in claims:
        found = by_key.get(claim.key)
        if not found:
            unlabelled[by_rule(claim.judgment)] += 1
            continue
        matched.update(r.id for r in found)
        unit_key = (claim.key, claim.label)
        if unit_key not in units:
            units[unit_key] = _pair(claim, found)
        units[unit_key].claims.append(claim.where)
    counted = [u for u in units.values() if u.not_counted is None]
    every = judged(units.values())
    return Agreement(scored(every, resamples, seed, min_pairs, resample_by), counted,
                     [u for u in units.values() if u.not_counted is not None],
                     [r.id for r in rows if r.id not in matched], unlabelled.total(), unlabelled[True], every)


def _pair(claim: RunClaim, rows: list[Row]) -> LabelledPair:
    human = sorted({r.label for r in rows})
    reason = "reviewers differ" if len(human) > 1 else why_not_counted(claim.judgment)
    return LabelledPair(claim.text, list(claim.citations), " / ".join(human), claim.label, claim.explanation, [],
                        [r.id for r in rows], reason, claim.judgment.label if claim.judgment else None,
                        claim.cited_texts)


def judged(pairs: Iterable[LabelledPair]) -> list[LabelledPair]:
    """The pairs with one human label that the judge labelled, sure or not: what every-pair figures count."""
    return [p for p in pairs if p.not_counted in (None, UNCERTAIN)]


def pair_groups(pairs: Sequence[LabelledPair]) -> list[int]:
    """A group number for each pair: pairs that cite the same passage text or make the same claim are one
    group, directly or through others (an answer's claims citing one source): they stand or fall
    together, as validate-judge's rows do (training/validation.py `row_groups`)."""
    return connected_groups([[("claim", claim_key(p.text))] + [("passage", t) for t in p.passages if t is not None]
                             for p in pairs])


def resampling(pairs: Sequence[LabelledPair], resample_by: str) -> tuple[list[int] | None, dict[str, Any]]:
    """What the intervals over `pairs` draw (stats.drawing): the groups, or None for single pairs, and what
    the output says of it. A `resample_by` other than "groups" or "pairs" is a ValueError."""
    return drawing(resample_by, "pair", len(pairs), lambda: pair_groups(pairs))


def scored(pairs: Sequence[LabelledPair], resamples: int = 1000, seed: int = 0,
           min_pairs: int = MIN_PAIRS, resample_by: str = "pairs",
           chosen: tuple[list[int] | None, dict[str, Any]] | None = None) -> dict[str, Any]:
    """`figures` over the judged `pairs` the judge was sure of; beside them, suffixed `_all`, the same
    over all of them, an uncertain pair counted at its best guess; and `coverage`, the share it was sure
    of (None for no pairs). Confident-only figures of two judges unsure of different pairs are figures
    on different pairs; the every-pair ones are not. `resample_by`: what the intervals draw, single
    `pairs` or `groups` of them (`pair_groups`); `resampling` says which. `chosen`: that choice already
    made for these pairs (`resampling`)."""
    groups, drawn = chosen or resampling(pairs, resample_by)
    sure = [i for i, p in enumerate(pairs) if p.not_counted is None]
    out = figures([pairs[i].human for i in sure], [pairs[i].judge for i in sure], resamples, seed, min_pairs,
                  None if groups is None else [groups[i] for i in sure])
    every = figures([p.human for p in pairs], [p.best_guess for p in pairs], resamples, seed, min_pairs, groups)
    out.update({name + ALL: every[name] for name in EVERY_PAIR_FIGURES})
    out.update({f"{name}{ALL}_ci": every[f"{name}_ci"] for name in WITH_INTERVALS})
    out["coverage"] = len(sure) / len(pairs) if pairs else None
    out["resampling"] = drawn
    return out


def agree(log: RunLog, labels: Labels, resamples: int = 1000, seed: int = 0,
          resample_by: str = "groups") -> dict[str, Any]:
    """How often the run's judge agrees with the human labels (see `figures` and `Agreement`), as the
    JSON that `citeaudit agree --format json` prints; `seen` says how many of the labelled claims the
    judge trained or was calibrated on (`seen_pairs`). The intervals draw whole groups of pairs that
    share a claim or a passage (`pair_groups`), or single ones with `resample_by="pairs"`."""
    found = compare(claims_of_log(log), labels.rows, resamples, seed, resample_by=resample_by)
    if not log.settings.judges_claims:  # every pair unjudged: say why, not "0 so far"
        found.figures["undefined"] = found.figures["undefined" + ALL] = _judges_no_claim()
    return {"judge": log.judge, "labels": _labels_header(labels), "resamples": resamples, "seed": seed,
            **found.to_dict(), "seen": seen_pairs(seen_of_log(log), found.judged, resamples, seed, resample_by)}


def seen_of_log(log: RunLog) -> SeenClaims | str:
    """The claims the run's judge trained and was calibrated on (judges/seen.py), read from its judge
    directory when the log names one that is here and unchanged (a cascade: its first judge's); else
    why that is unknown."""
    record = log.judge_spec
    if record is None:
        return "the run log does not record its judge's spec"
    try:
        directory = judge_directory(record)
    except JudgeSetupError as err:  # a shipped judge this installation does not have
        return str(err)
    try:
        chinese = chinese_judge_directory(log.judge, directory)
    except JudgeSetupError as err:  # judge-v2 cannot be found or unpacked here
        return str(err)
    return seen_in(directory, record.spec, log.judge, chinese=chinese)


def seen_pairs(seen: SeenClaims | str, pairs: Sequence[LabelledPair], resamples: int = 1000,
               seed: int = 0, resample_by: str = "pairs",
               chosen: tuple[list[int] | None, dict[str, Any]] | None = None) -> dict[str, Any]:
    """How many of the judged pairs' distinct claims the judge has seen (judges/seen.py `seen_summary`)
    and, when that is known, `figures` over every one of those pairs (an unsure one at its best guess)
    whose claim it has not seen (`unseen`) and over the rest (`seen`)."""
    summary = seen_summary(seen, [p.text for p in pairs])
    if isinstance(seen, SeenClaims):
        groups, _ = chosen or resampling(pairs, resample_by)
        for part, ix in seen.parts(p.text for p in pairs).items():
            chosen = [pairs[i] for i in ix]
            found = figures([p.human for p in chosen], [p.best_guess for p in chosen], resamples, seed,
                            groups=None if groups is None else [groups[i] for i in ix])
            summary[part] = {k: v for k, v in found.items() if k != "confusion"}
    return summary


def _judges_no_claim() -> str:
    return f"the run's measures judge no claim ({NOT_MEASURED})"


def _labels_header(labels: Labels) -> dict[str, Any]:
    return {"file": labels.file, "format": labels.format, "rows": len(labels.rows)}


def agree_runs(logs: Sequence[tuple[str, RunLog]], labels: Labels, resamples: int = 1000,
               seed: int = 0, resample_by: str = "groups") -> dict[str, Any]:
    """Several runs' judges on the same pairs, as the JSON `citeaudit agree RUN1 RUN2 ... --format json`
    prints: the pairs with one human label that every run judged (unsure included); over them each
    run's confident and every-pair figures (`scored`), and each later run's every-pair balanced
    accuracy minus the first run's with a paired bootstrap interval (the same resampled pairs for both,
    so what the pairs share cancels out)."""
    judged_by_run = []
    for _, log in logs:
        found = compare(claims_of_log(log), labels.rows, resamples=0)
        # a pair is named by the ids of the labels it matched: labels are grouped by claim text and
        # passages, so those ids tell the pair apart whichever run it comes from
        by_labels: dict[tuple[str, ...], LabelledPair] = {}
        for pair in found.judged:  # in the run's order, so one run alone gives the same intervals
            by_labels.setdefault(tuple(pair.labels), pair)
        judged_by_run.append(by_labels)
    first = judged_by_run[0]
    common = [k for k in first if all(k in other for other in judged_by_run[1:])]
    somewhere = set().union(*judged_by_run)
    gold = [first[k].human == "full" for k in common]
    guesses = [[by_labels[k].best_guess == "full" for k in common] for by_labels in judged_by_run]
    # the same pairs, so the same groups, for every run (and for the paired differences)
    chosen = resampling([first[k] for k in common], resample_by)
    groups, drawn = chosen
    runs = []
    for i, ((name, log), by_labels) in enumerate(zip(logs, judged_by_run)):
        result = {"run": name, "judge": log.judge,
                  **scored([by_labels[k] for k in common], resamples, seed, chosen=chosen)}
        if not log.settings.judges_claims:
            result["undefined"] = result["undefined" + ALL] = _judges_no_claim()
        difference = ci = None
        if i and result["balanced_accuracy" + ALL] is not None and runs[0]["balanced_accuracy" + ALL] is not None:
            difference, ci = paired_balanced_accuracy_difference(gold, guesses[0], guesses[i], resamples, seed,
                                                                 groups=groups)
        runs.append({**result, "balanced_accuracy_all_difference": difference,
                     "balanced_accuracy_all_difference_ci": ci,
                     "seen": seen_pairs(seen_of_log(log), [by_labels[k] for k in common], resamples, seed,
                                        chosen=chosen)})
    return {"labels": _labels_header(labels), "resamples": resamples, "seed": seed, "resampling": drawn,
            "pairs": len(common),
            "left_out": len(somewhere) - len(common), "runs": runs}
