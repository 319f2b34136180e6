"""One exception tree for citeaudit. Messages say *where* the problem is.

Every error a user can cause derives from `CiteauditError`; the command line turns it into a message
and its `exit_code` at its boundary only (library code never exits).

Exit codes used by the command line:
  2  bad input (files, records, fields, options, run logs)
  3  a judge could not give a judgment, or a recorded judgment is missing
  1, 4  not errors: `citeaudit verify`'s decisions revise and abstain (0: deliver)

    CiteauditError
    ├── InputError            bad input; carries every Problem found
    ├── RunLogError           a run log that cannot be read or replayed
    ├── StoreError            a judgment store that is not one, or holds a corrupt row
    ├── DestinationError      an output path that cannot be written
    ├── ExportError           an export that cannot be made as asked
    ├── ChartError            the chart converter failed on a chart (the report is written without charts)
    ├── ComparisonError       a comparison that cannot be made as asked
    │   └── RunMismatch       two runs whose judge or conventions differ, compared without --allow-mismatch
    ├── MissingExtra          an optional package is not installed (names its `citeaudit[EXTRA]`)
    ├── UnknownJudge          a judge name that is not registered
    ├── JudgeSetupError       a judge that cannot start: model files, a bad option
    ├── JudgeError            a judge could not label a pair
    │   ├── UnlabelledPair
    │   ├── MissingJudgment
    │   ├── MissingDecomposition  replay-only claim splitting found no recorded split for a statement
    │   ├── BatchJudgeError   some pairs of a batch failed; the others are kept
    │   ├── MalformedAnswer   a remote model answered, but not with a valid judgment (retried)
    │   └── TransientFailure  a remote request failed in a way worth retrying (retried)
    ├── TrainingError         judge training or calibration cannot go on
    ├── DeskError             a desk request refused, with its HTTP status
    ├── DeskSetupError        the desk cannot start: a bad or busy port, a remote host without --allow-remote
    └── EngineError           a distributed engine that cannot start or run: a cluster that cannot be
                              reached, workers whose judge differs from the driver's
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


class CiteauditError(Exception):
    """Base class of every error citeaudit raises on purpose."""

    exit_code = 1


class CiteauditWarning(UserWarning):
    """Base class of every warning citeaudit gives: the command line prints it as `citeaudit: warning: ...`."""


class EditedRecordWarning(CiteauditWarning):
    """A record was changed after it was written (a stored judgment that no longer matches its digest):
    it is used as stored."""


class SkippedRecordsWarning(CiteauditWarning):
    """Records of an input that cannot become cases were left out because the user asked for it (a trace
    without retrieval, read with `--option incomplete=skip`): how many, and the first of them."""


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


class MissingDecomposition(JudgeError):
    """A language-model claim splitter told to replay only found no recorded split for a statement."""


class BatchJudgeError(JudgeError):
    """Some pairs of a batch could not be judged. The others were, and are kept here, in order:
    `judgments[i]` is the judgment of `requests[i]`, or None when it failed (see `failures`)."""

    def __init__(self, message: str, judgments: list[Any], failures: list[tuple[int, Any, JudgeError]]):
        super().__init__(message)
        self.judgments = judgments
        self.failures = failures


class MissingExtra(CiteauditError):
    """An optional package is not installed. Raised by `citeaudit.extras.require` only, so that every
    missing extra reads the same: what needs which module, and the pip line that installs it."""

    exit_code = 2

    def __init__(self, message: str, module: str = "", extra: str = ""):
        # a message alone is enough: a Ray worker's error is raised again on the driver from its text
        super().__init__(message)
        self.module = module
        self.extra = extra


class UnknownJudge(CiteauditError):
    exit_code = 2


class JudgeSetupError(CiteauditError):
    """A judge that cannot start: missing model files or a bad option (a missing extra: MissingExtra)."""

    exit_code = 2


class RunLogError(CiteauditError):
    """A run log that cannot be read (not a run log, an unsupported schema) or replayed."""

    exit_code = 2


class StoreError(CiteauditError):
    """A judgment store that cannot be used: not SQLite, a foreign table layout, or a corrupt row."""

    exit_code = 2


class DestinationError(CiteauditError):
    """An output file that cannot be written (a missing folder, no permission). Checked before the work
    starts; when writing fails after it, the output is kept elsewhere and the message says where."""

    exit_code = 2


class ExportError(CiteauditError):
    """An export that cannot be made as asked: an unknown format, no single system for a one-system
    format."""

    exit_code = 2


class ChartError(CiteauditError):
    """The chart converter could not draw a chart; the message says why (its first line, shortened).
    The HTML report catches it and is written without charts, saying why."""

    exit_code = 2  # what the converter fails on is the input's text


class ComparisonError(CiteauditError):
    """A comparison that cannot be made as asked (an unknown system, one system given without the other)."""

    exit_code = 2


class RunMismatch(ComparisonError):
    """Two runs whose signatures differ in a field that changes the figures (judge, conventions)."""


class TrainingError(CiteauditError):
    """Judge training or calibration cannot go on: missing base model, bad data, a bad option."""

    exit_code = 2


class DeskError(CiteauditError):
    """A request the desk refuses, with the HTTP status that says why."""

    exit_code = 2

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class DeskSetupError(CiteauditError):
    """The desk cannot start: its optional extra is missing, a bad or busy port, an unknown address, or a
    non-loopback host without --allow-remote (the desk has no authentication)."""

    exit_code = 2


class EngineError(CiteauditError):
    """A distributed engine (`prepare --engine ray`) that cannot start or run: the cluster at --address
    cannot be reached, or its workers judge with another judge than the driver's (a different model or
    version installed there)."""

    exit_code = 2


class MalformedAnswer(JudgeError):
    """A remote model's response arrived but holds no valid answer. The remote judge retries; when
    every attempt fails, a JudgeError naming the pair says why."""


class TransientFailure(JudgeError):
    """A remote request failed in a way worth retrying (timeout, connection, HTTP 408/409/429/5xx);
    `retry_after` is the server's requested wait in seconds, when it gave one."""

    def __init__(self, problem: str, retry_after: float | None = None):
        super().__init__(problem)
        self.retry_after = retry_after


# --- pydantic errors, located -----------------------------------------------------------------------


def format_path(path: Iterable[str | int]) -> str:
    """('answers', 0, 'statements', 2, 'text') -> 'answers[0].statements[2].text'."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def validation_problems(err: ValidationError, file: str, prefix: Sequence[str | int] = (),
                        line_of: Callable[[tuple[str | int, ...]], int | None] | None = None) -> list[Problem]:
    """One Problem per pydantic error: its path (shown under `prefix`) and message, with the line that
    `line_of(loc)` gives for the error's own location when a locator is given. The one place pydantic's
    error paths are turned into citeaudit's."""
    problems = []
    for e in err.errors():
        loc = tuple(e["loc"])
        message = e["msg"].removeprefix("Value error, ")
        problems.append(Problem(file, line_of(loc) if line_of else None, format_path(tuple(prefix) + loc), message))
    return problems
