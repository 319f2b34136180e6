"""citeaudit's support figure as a DeepEval metric (docs/integrations.md).

    from deepeval.test_case import LLMTestCase
    from citeaudit.integrations.deepeval import CitationSupport

    metric = CitationSupport(threshold=0.5)  # judge "model": offline, built once for every test case
    metric.measure(LLMTestCase(input="...", actual_output="... [1] ... [2]", retrieval_context=["...", "..."]))
    metric.score, metric.reason  # the figure `citeaudit score` gives, and its counts and per-claim labels

`[n]` in the answer names the n-th retrieved context (cite="order"); with cite="id" the markers name
the contexts' own ids, given as DeepEval's `RetrievedContextData(context=..., source=ID)`.

An answer none of whose claims could be scored (every claim one the judge was unsure of, or no claim at
all) gets no score: `score` is None and `error` says "not scored" with the reason. DeepEval shows it as
ERROR with score N/A, leaves it out of the average score, does not pass the test case (`assert_test`
fails on it) and never caches it. A 0 would claim the citations were checked and failed; DeepEval's other
"no verdict" (success None without an error) would let the test case pass on no evidence.
"""

from __future__ import annotations

import json
from typing import Any

from citeaudit.errors import InputError
from citeaudit.extras import require
from citeaudit.integrations.core import (DEFAULT_JUDGE, NOT_SCORED, CitationResult, check_citations, cite_problem,
                                         excerpt, in_harness_terms, judge_for)

# Everything of DeepEval below comes from these modules; a missing DeepEval names the extra to install.
_metrics = require("deepeval.metrics", "deepeval", "citeaudit's DeepEval metric")
_test_case = require("deepeval.test_case", "deepeval", "citeaudit's DeepEval metric")
_indicator = require("deepeval.metrics.indicator", "deepeval", "citeaudit's DeepEval metric")
_utils = require("deepeval.metrics.utils", "deepeval", "citeaudit's DeepEval metric")

__all__ = ["CitationSupport", "metadata_from"]

FIELDS = {"question": "input", "answer": "actual_output", "contexts": "retrieval_context"}
METADATA_HEADING = "citeaudit metadata (JSON):\n"  # the last part of verbose_logs, read back by metadata_from


class CitationSupport(_metrics.BaseMetric):
    """The share of the answer's judged claims that the contexts they cite support.

    judge: a judge spec (`model`, the shipped offline judge; `openai:MODEL`, ...) or a Judge, built once
    here: DeepEval's per-test-case copies of a metric (made from the arguments of `__init__`) reuse it.
    store: recorded judgments (a path or a JudgmentStore), replayed on the next run.
    strict_mode: DeepEval's convention, threshold 1 and a score of 0 below it.
    """

    _required_params = [_test_case.SingleTurnParams.INPUT, _test_case.SingleTurnParams.ACTUAL_OUTPUT,
                        _test_case.SingleTurnParams.RETRIEVAL_CONTEXT]

    def __init__(self, judge: Any = DEFAULT_JUDGE, threshold: float = 0.5, cite: str = "order", store: Any = None,
                 include_reason: bool = True, strict_mode: bool = False, async_mode: bool = True,
                 verbose_mode: bool = False, flaky: bool = False):
        problem = cite_problem(cite, "CitationSupport")
        if problem is not None:
            raise InputError([problem])
        self.judge = judge_for(judge)
        self.cite = cite
        self.store = store
        self.threshold = 1.0 if strict_mode else threshold
        self.include_reason = include_reason
        self.strict_mode = strict_mode
        self.async_mode = async_mode
        self.verbose_mode = verbose_mode
        self.flaky = flaky
        # DeepEval keys its cache on evaluation_model: every setting that changes the figure is in it
        self.evaluation_model = f"citeaudit {self.judge.signature}|cite:{cite}"
        self.result: CitationResult | None = None

    @property
    def __name__(self) -> str:
        return "Citation Support"

    def measure(self, test_case: Any, _show_indicator: bool = True, _in_component: bool = False) -> float | None:
        self._clear()
        if getattr(test_case, "multimodal", False):
            self.error = f"the '{self.__name__}' metric reads text: a multimodal test case cannot be judged"
            raise ValueError(self.error)
        _utils.prepare_measure(self, test_case)  # DeepEval's own check of the required fields
        with _indicator.metric_progress_indicator(self, _show_indicator=_show_indicator, _in_component=_in_component):
            self._judge(test_case)
        return self.score

    async def a_measure(self, test_case: Any, _show_indicator: bool = True,
                        _in_component: bool = False) -> float | None:
        # The judge runs locally and does not wait on the network: nothing to overlap
        return self.measure(test_case, _show_indicator=_show_indicator, _in_component=_in_component)

    def _clear(self) -> None:
        self.score = self.reason = self.success = self.error = None
        self.score_breakdown = self.verbose_logs = self.result = None

    def _judge(self, test_case: Any) -> None:
        record = _record(test_case)
        contexts = [_context(c) for c in test_case.retrieval_context]
        try:
            result = check_citations(test_case.input, test_case.actual_output, contexts, self.judge, cite=self.cite,
                                     store=self.store)
        except InputError as err:
            located = in_harness_terms(err, record, FIELDS)
            self.error = str(located)
            raise located from None
        self.result = result
        metadata = result.metadata()
        self.score_breakdown = metadata
        reason = f"{result.reason()}; judge {result.judge_signature}"
        if result.score is None:
            self.error = f"{NOT_SCORED}: {reason}"
        else:
            below = self.strict_mode and result.score < self.threshold
            self.score = 0.0 if below else result.score
            self.reason = reason if self.include_reason else None
        self.success = self.is_successful()
        self.verbose_logs = _utils.construct_verbose_logs(self, steps=[
            "Claims:\n" + "\n".join(_claim_line(i, c) for i, c in enumerate(result.claims, 1)) if result.claims
            else "Claims: none (the answer makes no claim)",
            f"Support: {result.support}\nSignature: {result.signature}",
            METADATA_HEADING + json.dumps(metadata, ensure_ascii=False),
            f"Score: {self.score}\nReason: {self.reason if self.error is None else self.error}",
        ])


def _record(test_case: Any) -> str:
    if getattr(test_case, "name", None):
        return f"test case '{test_case.name}'"
    text = test_case.input or ""
    return f"test case (input {excerpt(text)!r})"


def _context(context: Any) -> Any:
    """A retrieval context as core reads it: a text, or DeepEval's RetrievedContextData as its source
    (the id cite="id" reads) and its text."""
    if isinstance(context, str):
        return context
    return {"id": context.source, "text": context.context}


def _claim_line(i: int, claim: Any) -> str:
    cites = " ".join(f"[{c}]" for c in claim.citations) or "nothing"
    label = NOT_SCORED if not claim.scored else claim.label
    p = f" p(support) {claim.p_support:.2f}" if claim.p_support is not None else ""
    return f"{i}. {label}{p}, cites {cites}: {claim.text}"


def metadata_from(metric_data: Any) -> dict[str, Any] | None:
    """citeaudit's metadata (`CitationResult.metadata()`: counts, per-claim labels, signatures) read back
    from what DeepEval keeps of a measured metric: the metric itself, a `MetricData` of
    `evaluate(...).test_results[i].metrics_data`, or its `verbose_logs` text. None when it holds none."""
    logs = metric_data if isinstance(metric_data, str) else getattr(metric_data, "verbose_logs", None)
    if not logs or METADATA_HEADING not in logs:
        return None
    return json.loads(logs.rsplit(METADATA_HEADING, 1)[1])
