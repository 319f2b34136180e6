"""A team's labels for `adapt-judge`: read from labelled pairs, a desk review export or case files, each
(claim, passages) pair once (a pair its reviewers labelled two ways left out), and dealt into folds that
keep pairs sharing a passage, a question (case) or a claim together."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
import re
from dataclasses import dataclass, field
from pathlib import Path

from citeaudit.errors import InputError, Problem, TrainingError
from citeaudit.files.labelled import Row
from citeaudit.judges.seen import claim_key
from citeaudit.stats import connected_groups


@dataclass(frozen=True)
class TeamLabels:
    """Labelled pairs, each with the question (case) it came from when known, for grouping folds."""

    rows: list[Row]
    questions: list[str | None]
    described_as: str
    conflicts: int = 0  # pairs whose labels disagree, left out
    not_text: dict[str, int] = field(default_factory=dict)  # pairs left out because a passage is no text, by why

    def content_hash(self) -> str:
        """SHA-256 of the pairs as used (claim, passage texts, label), order ignored."""
        lines = sorted(json.dumps([r.claim, [p.text for p in r.passages], r.label], ensure_ascii=False)
                       for r in self.rows)
        return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()

    def only(self, keep: Sequence[bool], described_as: str | None = None) -> TeamLabels:
        """The pairs whose `keep` is true, described as the whole were unless told otherwise."""
        return TeamLabels([r for r, k in zip(self.rows, keep) if k], [q for q, k in zip(self.questions, keep) if k],
                          described_as or self.described_as, self.conflicts, self.not_text)


def rows_of_cases(cases) -> tuple[list[Row], list[str]]:
    """The curated labels of cases as labelled rows (their passages resolved), each with its case id."""
    rows, questions = [], []
    for rc in cases:
        for i, label in enumerate(rc.case.labels):
            rows.append(Row(f"{rc.id}/labels[{i}]", label.claim, rc.cited(list(label.passages)), label.label,
                            source=rc.case.id))
            questions.append(rc.case.id)
    return rows, questions


def load_team_labels(paths: Sequence[str], fmt: str | None = None, load_cases=None) -> TeamLabels:
    """Labels from labelled-pairs JSONL, a desk review export (a run log with human labels), or case
    files (any reader, `fmt`) whose curated labels are the team's. `load_cases(paths)` reads cases."""
    from citeaudit.files.labelled import load_rows
    from citeaudit.run.agree import is_run_log, load_labels

    rows: list[Row] = []
    questions: list[str | None] = []
    kinds = []
    case_paths = [p for p in paths if not is_run_log(p) and (fmt or _is_case_file(p))]
    for path in paths:
        if path in case_paths:
            continue
        if is_run_log(path):
            found = load_labels(path).rows
            kinds.append("desk review export")
        else:
            found = load_rows(path)
            kinds.append("labelled pairs")
        rows += found
        questions += [None] * len(found)
    if case_paths:
        if load_cases is None:
            raise TrainingError("case files need a case reader")
        found, found_questions = rows_of_cases(load_cases(case_paths))
        if not found:
            raise InputError([Problem(p, None, "labels", "no labels in these cases (adapting needs the team's "
                                                        "labels: cases[].labels, or --from a reader that keeps them)")
                              for p in case_paths[:1]])
        rows += found
        questions += found_questions
        kinds.append(f"case files{f' (--from {fmt})' if fmt else ''}")
    rows, questions, not_text = _passages_of_text(rows, questions)
    if not rows:
        raise InputError([Problem(paths[0] if paths else "labels", None, "labels",
                                  "no pair left to adapt on: every pair cites a passage that is no text ("
                                  + ", ".join(f"{n} {why}" for why, n in not_text.items()) + ")")])
    kept, kept_questions, conflicts = _one_label_a_pair(rows, questions)
    return TeamLabels(kept, kept_questions, ", ".join(dict.fromkeys(kinds)), conflicts, not_text)


# A passage that is only an address: systems that cite a page without its text (ExpertQA has many)
_BARE_URL = re.compile(r"\s*(?:\[\d+\]\s*)?(?:https?://|www\.)\S+\s*")


def not_text(passage: str) -> str | None:
    """Why a passage is no text a label can rest on (empty, a bare URL), or None when it is text."""
    if not passage.strip():
        return "empty"
    if _BARE_URL.fullmatch(passage):
        return "a bare URL"
    return None


def _passages_of_text(rows: list[Row], questions: list[str | None]) -> tuple[list[Row], list[str | None], dict[str, int]]:
    """The pairs whose every passage is text, and how many were left out for each reason: a label given
    for a page the judge cannot read (its text was never in the pair) teaches the judge nothing true."""
    kept, kept_questions, dropped = [], [], {}
    for row, question in zip(rows, questions):
        why = next((w for w in (not_text(p.text) for p in row.passages) if w), None)
        if why:
            dropped[why] = dropped.get(why, 0) + 1
        else:
            kept.append(row)
            kept_questions.append(question)
    return kept, kept_questions, dropped


def _is_case_file(path: str) -> bool:
    """A JSON/JSONL file whose first record is a case (it has answers or sources) rather than a row."""
    try:
        with open(path, encoding="utf-8") as fh:
            head = fh.read(1 << 16).lstrip()
    except (OSError, UnicodeDecodeError):
        return False
    if head.startswith("["):
        return True
    try:
        first = json.loads(head.split("\n", 1)[0]) if head.startswith("{") else None
    except ValueError:
        first = None
    if first is None:
        try:
            first = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return False
    return isinstance(first, dict) and "claim" not in first and ("answers" in first or "sources" in first
                                                                  or "cases" in first)


def _one_label_a_pair(rows: list[Row], questions: list[str | None]) -> tuple[list[Row], list[str | None], int]:
    """Each (claim, passage texts) pair once; a pair labelled differently by its reviewers is dropped."""
    seen: dict[tuple, int] = {}
    labels: dict[tuple, set[str]] = {}
    for i, r in enumerate(rows):
        key = (r.claim, frozenset(p.text for p in r.passages))
        seen.setdefault(key, i)
        labels.setdefault(key, set()).add(r.label)
    keep = [i for key, i in seen.items() if len(labels[key]) == 1]
    return [rows[i] for i in keep], [questions[i] for i in keep], sum(len(v) > 1 for v in labels.values())


def pair_groups(team: TeamLabels) -> list[int]:
    """A group number for each row: rows that cite the same passage text, come from the same question or
    state the same claim (known by its words, as judges/seen.py knows it) are one group, directly or
    through others. Folds keep a group together, and intervals draw it whole: its rows are not
    independent evidence."""
    return connected_groups([[("passage", p.text) for p in row.passages] + [("claim", claim_key(row.claim))]
                             + ([("question", question)] if question else [])
                             for row, question in zip(team.rows, team.questions)])


def fold_of(team: TeamLabels, k: int, seed: int = 0) -> list[int]:
    """A fold for every row: the rows of a group (`pair_groups`) go to one fold, groups are dealt to
    folds largest first (each to the smallest fold so far), ties broken by a seeded shuffle."""
    groups: dict[int, list[int]] = {}
    for i, number in enumerate(pair_groups(team)):
        groups.setdefault(number, []).append(i)
    ordered = list(groups.values())
    random.Random(seed).shuffle(ordered)
    ordered.sort(key=len, reverse=True)
    sizes = [0] * k
    out = [0] * len(team.rows)
    for members in ordered:
        f = sizes.index(min(sizes))
        sizes[f] += len(members)
        for i in members:
            out[i] = f
    return out


def class_counts(rows: Sequence[Row]) -> dict[str, int]:
    full = sum(r.label == "full" for r in rows)
    return {"full": full, "not_full": len(rows) - full}


def split_held(rows: Sequence[Row], questions: Sequence[str | None], seed: int) -> tuple[list[Row], list[Row]]:
    """Three quarters to fine-tune on, a quarter (by passage and question groups) to stop and calibrate on."""
    folds = fold_of(TeamLabels(list(rows), list(questions), ""), 4, seed + 1)
    return [r for r, f in zip(rows, folds) if f != 0], [r for r, f in zip(rows, folds) if f == 0]
