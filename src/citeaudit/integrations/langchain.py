"""`CitationGuard`: a LangChain Runnable that runs a retrieval chain and checks its cited answer before it
is delivered (`pip install 'citeaudit[langchain]'`: langchain-core only).

    from citeaudit.integrations.langchain import CitationGuard
    guarded = CitationGuard(rag_chain, judge="model")
    out = guarded.invoke({"question": "How often is the filter replaced?"})
    out["answer"], out["decision"], out["failing_claims"]

What the wrapped chain must return, one of:

    a mapping     the answer under `answer_key` ("answer") and the retrieved contexts under `contexts_key`
                  ("context"), the question under `question_key` when it is there (else the input's, or
                  the input itself when it is text): LangChain's `create_retrieval_chain` returns
                  {"input", "context", "answer"} (question_key="input")
    a pair        (answer, contexts), as a tuple or a list of two

The answer is text or a chat message (its text is read); the contexts are LangChain Documents, texts or
{"id", "text"} mappings, numbered [1], [2], ... in the order retrieved (cite="order"; cite="id": the
markers name the Documents' ids). Anything else is an InputError naming the key, never a KeyError.

What it returns (a dict): `answer` (what to deliver: the draft, the answer the sources support, or an
abstention), `decision` (deliver, revise, abstain), `original` (the draft), `failing_claims` (each a dict:
text, citations, label, reason, sentence, evidence, kept_with), `question`, `contexts` (as the chain
returned them), `support` ("1/2 (50.0 %)"), `signature` and `verification` (verify's full Verification).

`CitationGuard.check(...)` wraps no chain: it takes a chain's output as its input, for `chain | check`.
Judging runs under the guard's lock (see guard.AnswerGuard), so `batch` runs the chains concurrently and
judges one answer at a time; `ainvoke` awaits the chain and judges in an executor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeaudit.errors import InputError, Problem
from citeaudit.extras import require
from citeaudit.integrations.core import DEFAULT_JUDGE
from citeaudit.integrations.guard import AnswerGuard, Where

require("langchain_core.runnables", "langchain", "CitationGuard")  # a missing package names the extra to install
from langchain_core.messages import BaseMessage  # noqa: E402
from langchain_core.runnables import Runnable, RunnableConfig  # noqa: E402
from langchain_core.runnables.base import coerce_to_runnable  # noqa: E402
from langchain_core.runnables.config import patch_config, run_in_executor  # noqa: E402

if TYPE_CHECKING:
    from citeaudit.judges import Judge, JudgmentStore
    from citeaudit.run.verify import Policy, Verification

__all__ = ["CitationGuard"]

CALLER = "CitationGuard"


class CitationGuard(Runnable[Any, dict[str, Any]]):
    """A retrieval chain whose answer is verified before it is delivered (the module says what the chain
    must return and what the guard returns). `judge`, `policy`, `cite`, `store`, `repair`,
    `invalid_citations` and `abstention` are AnswerGuard's; the judge is built once, on the first call."""

    def __init__(self, chain: Any = None, judge: str | Judge = DEFAULT_JUDGE, policy: Policy | str | None = None, *,
                 answer_key: str = "answer", contexts_key: str = "context", question_key: str = "question",
                 cite: str = "order", store: str | Path | JudgmentStore | None = None, repair: bool = True,
                 invalid_citations: str = "count", abstention: str | Callable[[Verification], str] | None = None,
                 name: str | None = None):
        # a function or a dict is what LCEL accepts wherever it takes a Runnable
        self.chain: Runnable | None = coerce_to_runnable(chain) if chain is not None else None
        self.guard = AnswerGuard(judge, policy, cite=cite, store=store, repair=repair,
                                 invalid_citations=invalid_citations, abstention=abstention)
        self.answer_key, self.contexts_key, self.question_key = answer_key, contexts_key, question_key
        self.name = name

    @classmethod
    def check(cls, judge: str | Judge = DEFAULT_JUDGE, policy: Policy | str | None = None, **options: Any
              ) -> CitationGuard:
        """A guard over no chain: its input is a chain's output (`rag_chain | CitationGuard.check()`), so
        the question is read from that output only."""
        return cls(None, judge, policy, **options)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(chain={self.chain!r}, judge={self.guard._spec!r}, "
                f"answer_key={self.answer_key!r}, contexts_key={self.contexts_key!r})")

    # --- the types LangChain reads: the wrapped chain's input, a dict out ---------------------------

    @property
    def InputType(self) -> Any:  # noqa: N802 (LangChain's name)
        return self.chain.InputType if self.chain is not None else Any

    def get_input_schema(self, config: RunnableConfig | None = None) -> Any:
        if self.chain is not None:
            return self.chain.get_input_schema(config)
        return super().get_input_schema(config)

    @property
    def config_specs(self) -> list:
        return self.chain.config_specs if self.chain is not None else []

    # --- running ---------------------------------------------------------------------------------

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict[str, Any]:  # noqa: A002
        return self._call_with_config(self._invoke, input, config)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any  # noqa: A002
                      ) -> dict[str, Any]:
        return await self._acall_with_config(self._ainvoke, input, config)

    def _invoke(self, input_: Any, run_manager: Any, config: RunnableConfig) -> dict[str, Any]:
        # the wrapped chain runs as this run's child, so tracing shows it under the guard
        output = (self.chain.invoke(input_, patch_config(config, callbacks=run_manager.get_child()))
                  if self.chain is not None else input_)
        return self._guarded(input_, output)

    async def _ainvoke(self, input_: Any, run_manager: Any, config: RunnableConfig) -> dict[str, Any]:
        output = (await self.chain.ainvoke(input_, patch_config(config, callbacks=run_manager.get_child()))
                  if self.chain is not None else input_)
        return await run_in_executor(config, self._guarded, input_, output)  # judging is CPU work

    def _guarded(self, input_: Any, output: Any) -> dict[str, Any]:
        question, answer, contexts, where = self._unpack(input_, output)
        checked = self.guard.check(question, answer, contexts, where)
        return {"question": question or "", **checked.to_dict(), "contexts": contexts,
                "verification": checked.verification}

    def _unpack(self, input_: Any, output: Any) -> tuple[Any, Any, Any, Where]:
        """The question, the answer's text and the contexts from the chain's output, each problem named
        by its key."""
        if isinstance(output, Mapping):
            missing = [key for key in (self.answer_key, self.contexts_key) if key not in output]
            if missing:
                keys = ", ".join(map(str, output)) or "none"
                setting = {self.answer_key: "answer_key", self.contexts_key: "contexts_key"}
                raise InputError([Problem(CALLER, None, key, f"the chain's output has no '{key}' (its keys: {keys}); "
                                                             f"set {setting[key]} to the key that holds it")
                                  for key in missing])
            answer, contexts = output[self.answer_key], output[self.contexts_key]
            question = output[self.question_key] if self.question_key in output else self._question(input_)
            where = Where(CALLER, self.question_key, self.answer_key, self.contexts_key)
        elif isinstance(output, (tuple, list)) and len(output) == 2:
            (answer, contexts), question = output, self._question(input_)
            where = Where(CALLER, self.question_key, "output[0]", "output[1]")
        else:
            raise InputError([Problem(CALLER, None, "", f"expected the chain to return a mapping with "
                                                        f"'{self.answer_key}' and '{self.contexts_key}' (as "
                                                        f"create_retrieval_chain returns), or an (answer, contexts) "
                                                        f"pair; got {_kind(output)}")])
        if isinstance(answer, BaseMessage):
            answer = str(answer.text)  # a chat model's message, when the chain ends without a parser
        return question, answer, contexts, where

    def _question(self, input_: Any) -> Any:
        """The question from the chain's input: the input itself when it is text, else its question key."""
        if isinstance(input_, str):
            return input_
        if self.chain is not None and isinstance(input_, Mapping):
            return input_.get(self.question_key)
        return None


def _kind(value: Any) -> str:
    return f"a list of {len(value)}" if isinstance(value, (list, tuple)) else type(value).__name__
