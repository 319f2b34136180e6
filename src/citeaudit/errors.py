"""One exception tree for citeaudit. Messages say *where* the problem is.

Exit codes used by the command line:
  2  bad input (files, records, fields)
  3  a judge could not give a judgment, or a recorded judgment is missing
"""

from __future__ import annotations

from dataclasses import dataclass


class CiteauditError(Exception):
    """Base class of every error citeaudit raises on purpose."""

    exit_code = 1


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, located as precisely as we can."""

    file: str
    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class InputError(CiteauditError):
    """Bad input. Carries *all* problems found, not only the first."""

    exit_code = 2

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class JudgeError(CiteauditError):
    """A judge could not label a (claim, passages) pair."""

    exit_code = 3


class UnlabelledPair(JudgeError):
    """The curated judge has no label for this exact pair; it never guesses."""


class MissingJudgment(JudgeError):
    """Scoring from a store found no recorded judgment for a pair it needs."""


class UnknownJudge(CiteauditError):
    exit_code = 2


class JudgeSetupError(CiteauditError):
    """A judge that cannot start: a missing optional extra, model files, or a bad option."""

    exit_code = 2
