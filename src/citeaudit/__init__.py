"""citeaudit: tell a documented answer from one merely decorated with sources.

Three separate checks: retrieval (were the evidence documents found?), support (does the exact cited
passage support each claim?) and completeness (how many required facts does the answer convey, with
support?).
"""

from citeaudit._version import __version__
from citeaudit.errors import CiteauditError, InputError, JudgeError, MissingJudgment, Problem, UnlabelledPair
from citeaudit.judges import CuratedJudge, Judge, Judgments, JudgmentStore, RecordedJudge, make_judge, register_judge
from citeaudit.files.loading import load_cases, parse_cases
from citeaudit.metrics import Ratio, Report, Settings, score_cases
from citeaudit.records import Answer, Case, Claim, Document, Judgment, Passage, RequiredFact, Statement

__all__ = [
    "Answer", "Case", "CiteauditError", "Claim", "CuratedJudge", "Document", "InputError", "Judge",
    "JudgeError", "Judgment", "JudgmentStore", "Judgments", "MissingJudgment", "Passage", "Problem",
    "Ratio", "RecordedJudge", "Report", "RequiredFact", "Settings", "Statement", "UnlabelledPair",
    "__version__", "load_cases", "make_judge", "parse_cases", "register_judge", "score_cases",
    "Policy", "RunLog", "SearchBudget", "Verification", "read_runlog", "verify",
]

# Loaded on first use, so that `import citeaudit` stays fast (docs/guard.md).
_LAZY = {"verify": "run.verify", "Verification": "run.verify", "Policy": "run.verify", "SearchBudget": "budget",
         "RunLog": "run.log", "read_runlog": "run.log"}


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
