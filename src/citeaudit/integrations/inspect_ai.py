"""citeaudit's support figure as an Inspect scorer (docs/integrations.md).

    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from citeaudit.integrations.inspect_ai import citation_support

    Task(dataset=[Sample(input="How heavy is the P7?", metadata={"contexts": ["The P7 weighs 4.2 kg."]})],
         scorer=citation_support())

The answer is the model's completion (`state.output.completion`), the question the sample's input
(`state.input_text`), and the retrieved contexts the list under `state.metadata[contexts_key]` ("contexts"
unless chosen): texts, `{"id", "text"}` mappings or a mapping id -> text, as the sample's metadata gives
them or as a retrieval step of the solver stores them there.

Each Score holds the support figure as its value, `CitationResult.reason()` as its explanation and the
counts, per-claim labels and signatures as its metadata. An answer no claim of which could be scored is
`Score.unscored` (value NaN, with a `reason`): Inspect's metrics leave it out and the log counts it among
the unscored samples, so it never reads as 0 (NOANSWER would be 0 to `mean()`).
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

from citeaudit.errors import InputError, Problem
from citeaudit.extras import require
from citeaudit.integrations.core import DEFAULT_JUDGE, CitationResult, check_citations, judge_for
from citeaudit.judges import Judge

require("inspect_ai", "inspect", "the Inspect scorer")

from inspect_ai.scorer import (  # noqa: E402
    Metric, SampleScore, Score, Scorer, Target, mean, metric, scorer, stderr)
from inspect_ai.solver import TaskState  # noqa: E402

__all__ = ["CONTEXTS_KEY", "NO_CLAIMS", "NO_RESPONSE", "JUDGE_UNSURE", "citation_support", "pooled_support",
           "score"]

CONTEXTS_KEY = "contexts"  # the key of the sample's (or the state's) metadata holding the retrieved contexts
# Score.reason of an unscored answer: Inspect's own reason for an empty completion, ours for the other two
NO_RESPONSE = "no_response"  # the completion is empty
NO_CLAIMS = "no_claims"  # the answer makes no claim (an abstention)
JUDGE_UNSURE = "judge_unsure"  # the judge was unsure of every claim


@metric(name="support")
def pooled_support() -> Metric:
    """Supported claims over scored claims, summed over the samples first: the figure `citeaudit score`
    reports for the same answers (`agg:sum` in its signature). `mean()` averages each answer's figure
    instead, so an answer of one claim weighs as much as one of ten. NaN when no claim was scored."""

    def compute(scores: list[SampleScore]) -> float:
        supported = scored = 0
        for s in scores:
            metadata = s.score.metadata or {}
            supported += int(metadata.get("supported", 0))
            scored += int(metadata.get("scored_claims", 0))
        return supported / scored if scored else math.nan

    return compute


@scorer(metrics=[mean(), stderr(), pooled_support()], name="citation_support")
def citation_support(judge: str | Judge = DEFAULT_JUDGE, *, cite: str = "order", contexts_key: str = CONTEXTS_KEY,
                     store: str | Path | None = None) -> Scorer:
    """Scores each sample's cited answer against its retrieved contexts with a citeaudit judge.

    judge: a judge spec (`model`, the shipped offline judge; `openai:MODEL`, ...), built once per scorer.
    cite: `order` (`[n]` names the n-th context) or `id` (markers name the contexts' own ids).
    contexts_key: the key of `state.metadata` that holds the contexts.
    store: a judgment store file (docs/runs.md), read first and filled with what the judge is asked."""
    import anyio

    built: list[Judge] = []
    # samples are scored concurrently: the judge runs in a worker thread (the event loop stays free for
    # the model calls of other samples), one call at a time
    lock = threading.Lock()

    def check(question: str, answer: str, contexts: Any) -> CitationResult:
        with lock:
            if not built:
                built.append(judge_for(judge))
            return check_citations(question, answer, contexts, built[0], cite=cite, store=store)

    async def score_sample(state: TaskState, target: Target) -> Score:
        contexts = state.metadata.get(contexts_key)
        if contexts is None:
            raise InputError([Problem(f"sample {state.sample_id}", None, f"metadata[{contexts_key!r}]",
                                      "no retrieved contexts: put the contexts the answer cites in the "
                                      f"sample's metadata under {contexts_key!r} (or have the solver store "
                                      "them there)")])
        answer = state.output.completion
        result = await anyio.to_thread.run_sync(check, state.input_text, answer, contexts)
        return score(result, answer)

    return score_sample


def score(result: CitationResult, answer: str | None = None) -> Score:
    """citeaudit's verdict as an Inspect Score; unscored (NaN, with its reason) when no claim was scored."""
    if result.score is None:
        reason = NO_RESPONSE if not (answer or "").strip() else NO_CLAIMS if not result.claims else JUDGE_UNSURE
        return Score.unscored(reason=reason, answer=answer, explanation=result.reason(), metadata=result.metadata())
    return Score(value=result.score, answer=answer, explanation=result.reason(), metadata=result.metadata())
