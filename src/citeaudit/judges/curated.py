"""The curated judge: human labels for exact (claim text, cited passage set) pairs. It never guesses."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence

from citeaudit.errors import InputError, Problem, UnlabelledPair
from citeaudit.records import Judgment, Label, SourcePassage
from citeaudit.parse.resolve import ResolvedCase
from citeaudit.judges.base import Request

VERSION = "1"


def _pair_key(text: str, passages: Iterable[SourcePassage]) -> tuple[str, frozenset[str]]:
    # Keyed by passage *content*, not id: a label is about these texts, whatever case they sit in.
    return text, frozenset(p.sha256 for p in passages)


class CuratedJudge:
    name = "curated"

    def __init__(self, table: dict[tuple[str, frozenset[str]], tuple[Label, str | None]]):
        self._table = table
        digest = hashlib.sha256(
            json.dumps(sorted([t, sorted(s), lab] for (t, s), (lab, _) in table.items())).encode()
        ).hexdigest()
        self.signature = f"curated@{VERSION}#{digest[:12]}"

    @classmethod
    def from_cases(cls, cases: Sequence[ResolvedCase]) -> CuratedJudge:
        table: dict[tuple[str, frozenset[str]], tuple[Label, str | None]] = {}
        problems = []
        for rc in cases:
            for i, entry in enumerate(rc.case.labels):
                key = _pair_key(entry.claim, rc.cited(entry.passages))
                if key in table and table[key][0] != entry.label:
                    problems.append(Problem(rc.origin, None, f"labels[{i}]",
                                            f"conflicting label '{entry.label}' (was '{table[key][0]}')"))
                table[key] = (entry.label, entry.explanation)
        if problems:
            raise InputError(problems)
        return cls(table)

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        found = self._table.get(_pair_key(text, passages))
        if found is None:
            raise UnlabelledPair(f"no curated label for {Request.of(text, passages).describe()}")
        label, explanation = found
        return Judgment(label=label, judge=self.signature, explanation=explanation)
