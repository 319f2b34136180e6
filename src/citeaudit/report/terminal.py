"""The terminal's outputs of a run (pipeline.Output), written as cases are scored: `--format text` and
`markdown`, and the short summary printed beside a streamed run log. `write(text)` prints (the CLI's
`echo_text`, which shows control characters and never markup)."""

from __future__ import annotations

import heapq
import json
import tempfile
from collections.abc import Callable
from typing import Any

from citeaudit.run.pipeline import Output, Run, ScoredCase
from citeaudit.run.results import AnswerRecord, CaseRecord, Summary
from citeaudit.report.render import WORST, SummaryCounter, markdown_blocks, print_streamed_text, worst_key

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


class SummaryLines(Output):
    """`--format text` beside a streamed log: how many cases and answers, the judge, the summed figures."""

    def __init__(self, write: Callable[[str], None]):
        self.write = write

    def finish(self, run: Run) -> None:
        echo = self.write
        echo(f"{run.scored_cases} case(s), {run.scored_answers} answer(s); judge {run.report.judge_signature}")
        for name, ratio in run.summary.all.ratios().items():
            echo(f"  {name:<24} {ratio}")


class TerminalReport(Output):
    """`--format text` (the summary, the judge and settings once or every signature with `every_signature`,
    then the answers with the lowest support, or every case with `details`) and `--format markdown` (the summary, then every case). The summary's intervals need each
    answer's counts only, kept compactly; the answers shown are kept as they come (the worst few, in a
    bounded heap) or in a temporary file (every case), and printed once the summary is known."""

    def __init__(self, fmt: str, details: bool, write: Callable[[str], None], every_signature: bool = False):
        self.write = write  # prints Markdown as it is (the text report goes to the terminal's console)
        self.fmt, self.details, self.limit = fmt, details, WORST
        self.every_signature = every_signature  # text: each measure's whole signature (Markdown has them all)
        self.counter = SummaryCounter()
        self.every = fmt == "markdown" or details
        self.spool = tempfile.TemporaryFile("w+", encoding="utf-8")
        self.heap: list[tuple[Any, int, str]] = []  # (inverted key, order, answer and question as JSON)
        self.answers = 0

    def start(self, run: Run) -> None:
        self.every = self.every or run.checked.answers <= self.limit

    def case(self, scored: ScoredCase) -> None:
        case, answers = scored.case_model, scored.answer_models
        self.counter.add(case, answers)
        if self.every:
            self.spool.write(_dumps({"case": scored.case_record, "answers": scored.answer_records}) + "\n")
            return
        for answer in answers:
            item = (_Inverted(worst_key(answer, self.answers)), self.answers,
                    _dumps({"answer": answer.model_dump(mode="json"), "question": case.question}))
            self.answers += 1
            if len(self.heap) < self.limit:
                heapq.heappush(self.heap, item)
            elif item[0] > self.heap[0][0]:
                heapq.heapreplace(self.heap, item)

    def finish(self, run: Run) -> None:
        summary = Summary.model_validate(run.summary_json())
        signature = run.report.run_signature
        cases = self._cases()
        if self.fmt == "markdown":
            for n, block in enumerate(markdown_blocks(summary, self.counter, signature, cases)):
                self.write(("\n" if n else "") + "\n".join(block))
        else:
            worst = [(AnswerRecord.model_validate(d["answer"]), d["question"])
                     for d in (json.loads(text) for _, _, text in sorted(self.heap, reverse=True))]
            print_streamed_text(summary, self.counter, signature, cases if self.every else None, worst, self.answers,
                                every_signature=self.every_signature)
        self.abort()

    def _cases(self):
        self.spool.flush()
        self.spool.seek(0)
        for line in self.spool:
            data = json.loads(line)
            yield (CaseRecord.model_validate(data["case"]), [AnswerRecord.model_validate(a) for a in data["answers"]])

    def abort(self) -> None:
        self.spool.close()


class _Inverted:
    """Orders as its key does, reversed: the heap keeps the `limit` smallest keys with the largest on top."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __lt__(self, other: _Inverted) -> bool:
        return other.key < self.key

    def __gt__(self, other: _Inverted) -> bool:
        return self.key < other.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Inverted) and self.key == other.key
