"""A question-answering app that verifies each cited answer before delivering it.

Offline and deterministic: a keyword (BM25) retriever over the five product notes in corpus/, a chat
model that replays the answers recorded in recorded_answers.json, the LangChain chain that joins them,
and citeaudit's CitationGuard around that chain with the shipped offline judge ("model"). For each
question it prints the drafted answer, the decision (deliver, revise or abstain), every claim that failed
and why, and the answer delivered.

    .venv/bin/python examples/verify_before_deliver/app.py
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from operator import itemgetter
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models import SimpleChatModel
from langchain_core.messages import BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnablePassthrough

from citeaudit.integrations.langchain import CitationGuard

HERE = Path(__file__).resolve().parent
STOP = {"a", "an", "and", "are", "at", "by", "can", "does", "for", "how", "i", "in", "is", "it", "its", "of", "on",
        "or", "should", "the", "to", "what", "when", "which", "with"}
QUESTIONS = [
    "How often should I replace the filter?",
    "What does the warranty cover?",
    "How loud is the Aero 2 on its lowest fan setting?",
    "Can I control the Aero 2 with Alexa?",
]
QUOTE = 90  # characters of evidence printed


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP]


def load_corpus(folder: Path = HERE / "corpus") -> list[Document]:
    """One Document per note, its id the file's name."""
    return [Document(page_content=path.read_text(encoding="utf-8").strip(), id=path.stem,
                     metadata={"source": path.name})
            for path in sorted(folder.glob("*.txt"))]


class KeywordRetriever(BaseRetriever):
    """BM25 over the documents' words (k1 1.5, b 0.75); ties go to the document whose id sorts first."""

    documents: list[Document]
    k: int = 2

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        bags = [Counter(words(d.page_content)) for d in self.documents]
        mean_length = sum(sum(b.values()) for b in bags) / len(bags)
        n = len(bags)

        def score(bag: Counter) -> float:
            total = 0.0
            length = sum(bag.values())
            for term in set(words(query)):
                df = sum(term in b for b in bags)
                if not df or not bag[term]:
                    continue
                idf = math.log((n - df + 0.5) / (df + 0.5) + 1)
                total += idf * bag[term] * 2.5 / (bag[term] + 1.5 * (0.25 + 0.75 * length / mean_length))
            return total

        ranked = sorted(zip(self.documents, bags), key=lambda pair: (-score(pair[1]), pair[0].id))
        return [doc for doc, _ in ranked[: self.k]]


class RecordedChatModel(SimpleChatModel):
    """A chat model that replays the answer recorded for the question at the end of its prompt: the same
    answer for the same question, whichever order (or thread) the questions come in."""

    answers: dict[str, str]

    @property
    def _llm_type(self) -> str:
        return "recorded"

    def _call(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
              **kwargs: Any) -> str:
        question = str(messages[-1].text).rsplit("Question:", 1)[-1].strip()
        if question not in self.answers:
            raise ValueError(f"no answer recorded for {question!r}")
        return self.answers[question]


PROMPT = ChatPromptTemplate.from_messages([
    ("system", "Answer from the numbered sources only. Cite the source of each sentence as [n]."),
    ("human", "Sources:\n{sources}\n\nQuestion: {question}"),
])


def numbered(documents: list[Document]) -> str:
    """The sources as the prompt shows them: [1] is the first retrieved, as CitationGuard reads [1]."""
    return "\n".join(f"[{i}] {d.page_content}" for i, d in enumerate(documents, 1))


def build_chain(llm: Runnable, retriever: Runnable) -> Runnable:
    """{"question"} -> {"question", "context", "answer"}: the retrieved Documents and the cited answer."""
    answer = RunnablePassthrough.assign(sources=lambda x: numbered(x["context"])) | PROMPT | llm | StrOutputParser()
    return RunnablePassthrough.assign(context=itemgetter("question") | retriever).assign(answer=answer)


def build_app(judge: str = "model") -> CitationGuard:
    recorded = json.loads((HERE / "recorded_answers.json").read_text(encoding="utf-8"))
    chain = build_chain(RecordedChatModel(answers=recorded), KeywordRetriever(documents=load_corpus()))
    return CitationGuard(chain, judge=judge)  # reads "answer" and "context", as the chain returns them


def report(out: dict[str, Any]) -> str:
    """One question's result as the app prints it."""
    sources = "  ".join(f"[{i}] {d.id}" for i, d in enumerate(out["contexts"], 1))
    lines = [f"Q: {out['question']}", f"  retrieved: {sources}", f"  draft:     {out['original']}",
             f"  decision:  {out['decision']} (the draft's support {out['support']})"]
    for claim in out["failing_claims"]:
        cites = ", ".join(f"[{c}]" for c in claim["citations"]) or "no retrieved source"
        lines.append(f"  failing:   {claim['text']!r} cites {cites}: {claim['label']}")
        lines.append(f"    why:     {claim['reason']}")
        e = claim["evidence"]
        if e is not None:
            quote = e["quote"] if len(e["quote"]) <= QUOTE else e["quote"][: QUOTE - 1] + "…"
            lines.append(f"    evidence: [{e['context']}] {e['source_id']}: {quote!r}")
        if claim["kept_with"] is not None:
            lines.append(f"    kept:    with {', '.join(f'[{c}]' for c in claim['kept_with'])}, which supports it")
    lines.append(f"  delivered: {out['answer']}")
    return "\n".join(lines)


def main() -> None:
    app = build_app()
    for question in QUESTIONS:
        print(report(app.invoke({"question": question})), end="\n\n")


if __name__ == "__main__":
    main()
