"""The `openai:MODEL` judge: a language model behind any OpenAI-compatible chat-completions endpoint
(hosted OpenAI, vLLM, llama.cpp server, Ollama, ...).

How one (claim, passage set) pair is judged:
  * a versioned prompt (`PROMPTS[version]`) gives the four labels with their definitions, the claim and
    each passage under its id, and asks for one JSON object
    `{"label", "evidence": {"passage", "quote"} | null, "explanation"}`;
  * the answer is validated strictly: invalid JSON, a missing field or a label outside the four is an
    error for that pair (retried, then `JudgeError`), never a guessed label;
  * the quote is located in the named passage (exactly, else ignoring differences in whitespace);
    found, `evidence = Evidence(passage, start, end)` with offsets into that passage's text; not found
    (or naming a passage that was not given), the label is kept, `evidence` is None and the
    explanation says so;
  * sending, retries (with backoff and `Retry-After`), the `max_requests` / `max_cost` budgets and
    token counting are the `ChatClient`'s (llm.py), which the claim splitter asks through too.

The signature names the model, the prompt version, a hash of the prompt text and the server host, so a
store never mixes judgments from different models, prompts or servers. Each raw response is kept in
`OpenAIJudge.responses` under the pair's `judgment_key`, for the caller to record.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from citeaudit.errors import BatchJudgeError, JudgeError, JudgeSetupError, MalformedAnswer, validation_problems
# the HTTP client is shared with the claim splitter; its names stay importable from here
from citeaudit.llm import (  # noqa: F401
    DEFAULT_BASE_URL, ENV_PREFIX, OPENAI, ChatClient, Prompt, _is_local, _retry_after, answer_json,
    snippet as _snippet,
)
from citeaudit.records import Evidence, Judgment, Label, SourcePassage
from citeaudit.judges.base import Request
from citeaudit.judges.store import judgment_key

# --- the prompt ---------------------------------------------------------------------------------


PROMPT_VERSION = "1"

PROMPT_V1 = Prompt(
    system="""\
You check whether cited source passages support a claim. Judge only from the passages given, read \
alone: use no outside knowledge and assume nothing the passages do not say.

Choose exactly one label:
- "full": the passages, read alone, establish every part of the claim, including its numbers, units, \
dates, conditions and scope.
- "partial": the passages establish some parts of the claim but not all of them (for example a \
number, unit, date, condition or the scope is missing or broader in the claim than in the passages).
- "none": the passages are silent on the claim, or only topically related to it.
- "contradicts": the passages state the opposite of the claim, or something incompatible with it. \
If any part of the claim is contradicted, answer "contradicts".

Evidence: copy, character for character, the shortest span of one passage that your label rests on, \
and give that passage's id exactly as shown. For "none", "evidence" is null.

Answer with one JSON object and nothing else:
{"label": "full" | "partial" | "none" | "contradicts", \
"evidence": {"passage": "<passage id>", "quote": "<span copied verbatim from that passage>"} | null, \
"explanation": "<one sentence>"}""",
    user="""\
Claim:
<claim>
{claim}
</claim>

Passages:
{passages}

Answer with the JSON object only.""",
)

PROMPTS: dict[str, Prompt] = {"1": PROMPT_V1}


def render_passages(passages: Sequence[SourcePassage]) -> str:
    return "\n".join(f'<passage id="{p.id}">\n{p.text}\n</passage>' for p in passages)


def build_messages(prompt: Prompt, request: Request) -> list[dict[str, str]]:
    user = prompt.user.replace("{passages}", render_passages(request.passages)).replace("{claim}", request.text)
    return [{"role": "system", "content": prompt.system}, {"role": "user", "content": user}]


# --- the answer ---------------------------------------------------------------------------------


class _QuotedEvidence(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    passage: str = Field(min_length=1)
    quote: str


class ModelAnswer(BaseModel):
    """What the model must answer. Every field is required (`evidence` may be null); extra keys are
    ignored; the label must be exactly one of the four (no case folding, no synonyms)."""

    model_config = ConfigDict(strict=True, extra="ignore")

    label: Label
    evidence: _QuotedEvidence | None
    explanation: str = Field(min_length=1)


def parse_answer(response: Any) -> ModelAnswer:
    """The model's answer in a chat-completions response body; `MalformedAnswer` says what is wrong."""
    data, content = answer_json(response)
    if not isinstance(data, dict):
        raise MalformedAnswer(f"answer is not a JSON object: {_snippet(content)}")
    try:
        return ModelAnswer.model_validate(data)
    except ValidationError as err:
        problems = "; ".join(f"{p.path or 'answer'}: {p.message}" for p in validation_problems(err, "answer"))
        raise MalformedAnswer(f"invalid answer ({problems}): {_snippet(content)}") from None


def locate_quote(text: str, quote: str) -> tuple[int, int] | None:
    """[start, end) of `quote` in `text`: an exact match first, else one that ignores differences in
    whitespace (runs of spaces and newlines). None when the quote is not in the text."""
    quote = quote.strip()
    if not quote:
        return None
    at = text.find(quote)
    if at >= 0:
        return at, at + len(quote)
    pattern = r"\s+".join(re.escape(word) for word in quote.split())
    found = re.search(pattern, text)
    return (found.start(), found.end()) if found else None


# --- the judge ----------------------------------------------------------------------------------


class OpenAIJudge(ChatClient):
    """A model judge behind an OpenAI-compatible `/chat/completions` endpoint. See the module docstring;
    sending, retries and budgets are the `ChatClient`'s (llm.py)."""

    name = "openai"
    who = "openai judge"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, timeout: float = 30,
                 max_retries: int = 3, concurrency: int = 4, max_requests: int | None = None,
                 max_cost: float | None = None, price_per_1k_tokens: float | None = None,
                 prompt_version: str = PROMPT_VERSION, **client: Any):
        if not model:
            raise JudgeSetupError("the openai judge needs a model name: --judge openai:MODEL")
        if prompt_version not in PROMPTS:
            raise JudgeSetupError(
                f"unknown prompt version {prompt_version!r}; known: {', '.join(sorted(PROMPTS))}")
        super().__init__(model, base_url, api_key, timeout, max_retries, concurrency, max_requests, max_cost,
                         price_per_1k_tokens, **client)
        self.prompt_version = prompt_version
        self.prompt = PROMPTS[prompt_version]
        self.responses: dict[str, dict[str, Any]] = {}

    # -- identity --

    @property
    def signature(self) -> str:
        return f"openai:{self.model}@{self.prompt_version}#{self.prompt.digest[:12]}|base={self.host}"

    def __repr__(self) -> str:
        return f"OpenAIJudge({self.signature!r})"

    # -- the protocol --

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        return self._judge_one(Request.of(text, passages))

    def judge_batch(self, requests: Sequence[Request]) -> list[Judgment]:
        """Judge `requests` concurrently (at most `concurrency` in flight), in order. When some fail,
        every other one is still finished, then `BatchJudgeError` is raised carrying the judgments
        that succeeded (`.judgments`, None where failed) and the failures (`.failures`)."""
        requests = list(requests)
        if not requests:
            return []
        results: list[Judgment | None] = [None] * len(requests)
        failures: list[tuple[int, Request, JudgeError]] = []
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests)),
                                thread_name_prefix="citeaudit-openai") as pool:
            futures = [pool.submit(self._judge_one, r) for r in requests]
            for i, future in enumerate(futures):
                try:
                    results[i] = future.result()
                except JudgeError as err:
                    failures.append((i, requests[i], err))
                except Exception as err:  # a bug, but keep the other judgments
                    failures.append((i, requests[i], JudgeError(f"{requests[i].describe()}: {err!r}")))
        if failures:
            shown = "\n".join(f"  - {err}" for _, _, err in failures[:10])
            more = f"\n  ... and {len(failures) - 10} more" if len(failures) > 10 else ""
            raise BatchJudgeError(
                f"openai judge: {len(failures)} of {len(requests)} pairs could not be judged "
                f"({len(requests) - len(failures)} were):\n{shown}{more}",
                results, failures)
        return results  # type: ignore[return-value]

    # -- one pair --

    def _judge_one(self, request: Request) -> Judgment:
        response, answer = self.ask(request.describe(), build_messages(self.prompt, request), parse_answer)
        with self._lock:
            self.responses[judgment_key(request, self.signature)] = response
        return self._judgment(request, answer).model_copy(update={"raw": response})

    def _judgment(self, request: Request, answer: ModelAnswer) -> Judgment:
        explanation = answer.explanation.strip()
        evidence = None
        if answer.evidence is not None:
            by_id = {p.id: p for p in request.passages}
            passage = by_id.get(answer.evidence.passage)
            span = locate_quote(passage.text, answer.evidence.quote) if passage is not None else None
            if span is not None:
                evidence = Evidence(passage=passage.id, start=span[0], end=span[1])  # type: ignore[union-attr]
            elif passage is None:
                explanation += (f" [evidence dropped: the model named passage {answer.evidence.passage!r}, "
                                f"which was not given]")
            elif answer.evidence.quote.strip():
                explanation += (f" [evidence dropped: quote not found in passage {passage.id}: "
                                f"{_snippet(answer.evidence.quote, 120)!r}]")
        return Judgment(label=answer.label, judge=self.signature, explanation=explanation, evidence=evidence)


# --- from the environment ------------------------------------------------------------------------


def judge_from_env(model: str) -> OpenAIJudge:
    """An OpenAIJudge for `model`, configured from the CITEAUDIT_OPENAI_* environment variables (checked
    by the option table in judges/spec.py; the base URL and key are read by OpenAIJudge itself)."""
    options = OPENAI.parse(model)
    return OpenAIJudge(options.head, **options.keywords())
