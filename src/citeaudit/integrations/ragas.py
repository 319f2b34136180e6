"""citeaudit's support figure as a RAGAS metric (docs/integrations.md).

    from ragas import EvaluationDataset, evaluate
    from citeaudit.integrations.ragas import CitationSupport

    result = evaluate(EvaluationDataset.from_list(rows), metrics=[CitationSupport()])  # no LLM, no key

RAGAS 0.4 has two metric interfaces, and CitationSupport is both:

- `ragas.evaluate` (and `aevaluate`) take only the `SingleTurnMetric` classes: a row's
  `user_input`, `response`, `retrieved_contexts` (and `retrieved_context_ids` when present) in, a float
  out; the reason and citeaudit's metadata go to the row's traces (`result.traces[i]["citation_support"]
  ["citeaudit"]`), where RAGAS keeps what its own metrics' prompts answered.
- the newer interface that `@experiment` functions call (`ragas.metrics.BaseMetric`, as `@numeric_metric`
  builds): `await metric.ascore(user_input=..., response=..., retrieved_contexts=...)` or `score(...)`
  returns a `MetricResult` whose `reason` is the reason and whose `traces["output"]` the metadata.

`[n]` names the n-th retrieved context (cite="order"); cite="id" reads the markers as
`retrieved_context_ids`. An answer none of whose claims could be scored (every claim one the judge was
unsure of, or no claim at all) scores NaN, as RAGAS scores a row whose metric failed: `evaluate`'s
means leave it out, and its reason says "not scored" and why.
"""

from __future__ import annotations

import math
import typing as t
from dataclasses import dataclass, field

from citeaudit.errors import InputError, Problem
from citeaudit.extras import require
from citeaudit.integrations.core import (DEFAULT_JUDGE, NOT_SCORED, CitationResult, check_citations, cite_problem,
                                         excerpt, in_harness_terms, judge_for)

# Everything of RAGAS below comes from these modules; a missing RAGAS names the extra to install.
_base = require("ragas.metrics.base", "ragas", "citeaudit's RAGAS metric")
_result = require("ragas.metrics.result", "ragas", "citeaudit's RAGAS metric")
_callbacks = require("ragas.callbacks", "ragas", "citeaudit's RAGAS metric")

__all__ = ["CitationSupport"]

FIELDS = {"question": "user_input", "answer": "response", "contexts": "retrieved_contexts"}
TRACE = "citeaudit"  # the name of the trace under the metric's, in `EvaluationResult.traces`


@dataclass
class CitationSupport(_base.SingleTurnMetric, _base.SimpleBaseMetric):
    """The share of the response's judged claims that the retrieved contexts they cite support.

    judge: a judge spec (`model`, the shipped offline judge; `openai:MODEL`, ...) or a Judge, built once
    when the metric is made. store: recorded judgments (a path or a JudgmentStore), replayed next time.
    """

    name: str = "citation_support"
    judge: t.Any = DEFAULT_JUDGE
    cite: str = "order"
    store: t.Any = None
    allowed_values: t.Any = (0.0, 1.0)
    _required_columns: t.Dict[t.Any, t.Set[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        problem = cite_problem(self.cite, "CitationSupport")
        if problem is not None:
            raise InputError([problem])
        # cite=id needs the ids, so RAGAS checks the dataset has them before any row is judged
        ids = "retrieved_context_ids" if self.cite == "id" else "retrieved_context_ids:optional"
        self._required_columns = {_base.MetricType.SINGLE_TURN: {"user_input", "response", "retrieved_contexts", ids}}
        self.judge = judge_for(self.judge)

    def init(self, run_config: t.Any) -> None:
        """Nothing to set up per run: the judge was built with the metric and needs no LLM."""

    # --- ragas.evaluate: SingleTurnMetric ----------------------------------------------------------

    async def _single_turn_ascore(self, sample: t.Any, callbacks: t.Any) -> float:
        result = self._check(sample.user_input, sample.response, sample.retrieved_contexts,
                             sample.retrieved_context_ids)
        # RAGAS keeps a metric's child runs in the row's traces, as it keeps its own metrics' prompts
        rm, _ = _callbacks.new_group(TRACE, inputs={"data": {"cite": self.cite}}, callbacks=callbacks,
                                     metadata={"type": _callbacks.ChainType.RAGAS_PROMPT})
        rm.on_chain_end({"output": {"reason": _reason(result), **result.metadata()}})
        return _value(result)

    # --- the newer interface: BaseMetric, MetricResult -------------------------------------------

    def score(self, user_input: str = "", response: str | None = None, retrieved_contexts: t.Any = None,
              retrieved_context_ids: t.Any = None, **ignored: t.Any) -> t.Any:
        """One sample's MetricResult (value, reason, traces["output"]: citeaudit's metadata). Columns
        this metric does not read (`reference`, ...) are accepted and left aside, as an experiment
        passes a whole row."""
        result = self._check(user_input, response, retrieved_contexts, retrieved_context_ids)
        return _result.MetricResult(value=_value(result), reason=_reason(result),
                                    traces={"output": result.metadata()})

    async def ascore(self, user_input: str = "", response: str | None = None, retrieved_contexts: t.Any = None,
                     retrieved_context_ids: t.Any = None, **ignored: t.Any) -> t.Any:
        # The judge runs locally and does not wait on the network: nothing to overlap
        return self.score(user_input, response, retrieved_contexts, retrieved_context_ids)

    # --- both ------------------------------------------------------------------------------------

    def _check(self, user_input: str | None, response: str | None, contexts: t.Any, ids: t.Any) -> CitationResult:
        record = _record(user_input)
        missing = [Problem(record, None, name, "missing: this metric reads it")
                   for name, value in (("response", response), ("retrieved_contexts", contexts)) if value is None]
        if self.cite == "id" and ids is None:
            missing.append(Problem(record, None, "retrieved_context_ids", "missing: cite=id reads the markers as "
                                                                          "these ids"))
        if missing:
            raise InputError(missing)
        if ids is not None and len(ids) != len(contexts):
            raise InputError([Problem(record, None, "retrieved_context_ids",
                                      f"{len(ids)} ids for {len(contexts)} retrieved contexts")])
        given = contexts if ids is None else [{"id": str(i), "text": c} for i, c in zip(ids, contexts)]
        try:
            return check_citations(user_input or "", response, given, self.judge, cite=self.cite, store=self.store)
        except InputError as err:
            raise in_harness_terms(err, record, FIELDS) from None


def _value(result: CitationResult) -> float:
    return math.nan if result.score is None else result.score


def _reason(result: CitationResult) -> str:
    text = f"{result.reason()}; judge {result.judge_signature}"
    return f"{NOT_SCORED}: {text}" if result.score is None else text


def _record(user_input: str | None) -> str:
    text = user_input or ""
    return f"sample (user_input {excerpt(text)!r})"
