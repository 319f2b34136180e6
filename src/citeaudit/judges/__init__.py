"""Judges behind one protocol, a registry to name them, and the judgment source scoring reads."""

from __future__ import annotations

from citeaudit.judges.base import Judge, JudgmentSource, Request, judge_many
from citeaudit.judges.curated import CuratedJudge
from citeaudit.judges.registry import (JudgeKind, available_judges, build_judge, judge_kinds, make_judge, parse_judge,
                       register_judge)
from citeaudit.judges.source import Judgments, judgment_source, run_judge
from citeaudit.judges.spec import JudgeSpec
from citeaudit.judges.store import JudgmentStore, MemoryStore, RecordedJudge, judgment_key

__all__ = [
    "CuratedJudge", "Judge", "JudgmentSource", "JudgmentStore", "MemoryStore", "Judgments", "RecordedJudge", "Request",
    "JudgeKind", "JudgeSpec", "available_judges", "build_judge", "judge_kinds", "judge_many", "judgment_key",
    "judgment_source", "make_judge", "parse_judge", "register_judge", "run_judge",
]
