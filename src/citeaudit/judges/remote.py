"""The `openai:MODEL` judge: a language model behind any OpenAI-compatible chat-completions endpoint
(hosted OpenAI, vLLM, llama.cpp server, Ollama, ...). Standard library HTTP only (urllib).

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
  * transient failures (timeouts, connection errors, HTTP 408/409/429/5xx) are retried with exponential
    backoff and jitter, honouring `Retry-After`; other 4xx fail at once with the status and body;
  * `max_requests` / `max_cost` bound what one judge instance may send: once spent, every further pair
    fails with "budget exhausted" before anything is sent.

The signature names the model, the prompt version, a hash of the prompt text and the server host, so a
store never mixes judgments from different models, prompts or servers. Each raw response is kept in
`OpenAIJudge.responses` under the pair's `judgment_key`, for the caller to record.
"""

from __future__ import annotations

import email.utils
import hashlib
import ipaddress
import json
import os
import random
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.client import HTTPException
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._version import __version__
from ..errors import (
    BatchJudgeError, JudgeError, JudgeSetupError, MalformedAnswer, TransientFailure, validation_problems,
)
from ..records import Evidence, Judgment, Label, SourcePassage
from .base import Request
from .spec import OPENAI, OPENAI_ENV
from .store import judgment_key

DEFAULT_BASE_URL = "https://api.openai.com/v1"
ENV_PREFIX = OPENAI_ENV

# --- the prompt ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prompt:
    """A prompt version: the system message and the user message template (`{claim}`, `{passages}`)."""

    system: str
    user: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.system}\n\n{self.user}".encode()).hexdigest()


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


_FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def parse_answer(response: Any) -> ModelAnswer:
    """The model's answer in a chat-completions response body; `MalformedAnswer` says what is wrong."""
    try:
        choice = response["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise MalformedAnswer(f"no answer in the response: {_snippet(json.dumps(response))}") from None
    if not isinstance(content, str) or not content.strip():
        reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        raise MalformedAnswer(f"empty answer (finish_reason={reason!r})")
    fenced = _FENCE.match(content)
    text = fenced.group(1) if fenced else content
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise MalformedAnswer(f"answer is not valid JSON ({err.msg}): {_snippet(content)}") from None
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


def _snippet(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


# --- the judge ----------------------------------------------------------------------------------


def _is_local(host: str) -> bool:
    host = host.lower()
    if host == "localhost" or host.endswith(".localhost") or host.endswith(".local") or "." not in host:
        return True  # loopback names, mDNS names, single-label LAN/container names ("vllm", "gpu-box")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None


class OpenAIJudge:
    """A model judge behind an OpenAI-compatible `/chat/completions` endpoint. See the module docstring."""

    name = "openai"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30,
        max_retries: int = 3,
        concurrency: int = 4,
        max_requests: int | None = None,
        max_cost: float | None = None,
        price_per_1k_tokens: float | None = None,
        prompt_version: str = PROMPT_VERSION,
        *,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        retry_after_max: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not model:
            raise JudgeSetupError("the openai judge needs a model name: --judge openai:MODEL")
        if prompt_version not in PROMPTS:
            raise JudgeSetupError(
                f"unknown prompt version {prompt_version!r}; known: {', '.join(sorted(PROMPTS))}")
        if timeout <= 0 or max_retries < 0 or concurrency < 1:
            raise JudgeSetupError("timeout must be > 0, max_retries >= 0 and concurrency >= 1")
        if max_requests is not None and max_requests < 0:
            raise JudgeSetupError("max_requests must be >= 0")
        if max_cost is not None and price_per_1k_tokens is None:
            raise JudgeSetupError(
                f"max_cost needs price_per_1k_tokens ({ENV_PREFIX}PRICE_PER_1K) to turn tokens into cost")
        self.model = model
        self.base_url = (base_url or _env(f"{ENV_PREFIX}BASE_URL") or _env("OPENAI_BASE_URL")
                         or DEFAULT_BASE_URL).rstrip("/")
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise JudgeSetupError(f"base URL {self.base_url!r} is not an http(s) URL")
        self.host = parts.netloc.rsplit("@", 1)[-1].lower()  # never a user:password part
        self.local = _is_local(parts.hostname)
        self._api_key = api_key or _env(f"{ENV_PREFIX}API_KEY") or _env("OPENAI_API_KEY")
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.concurrency = int(concurrency)
        self.max_requests = max_requests
        self.max_cost = max_cost
        self.price_per_1k_tokens = price_per_1k_tokens
        self.prompt_version = prompt_version
        self.prompt = PROMPTS[prompt_version]
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.retry_after_max = retry_after_max
        self._sleep = sleep
        self._random = random.Random()
        # A proxy for a server on this machine or the LAN is almost always wrong: bypass it there.
        handlers = [urllib.request.ProxyHandler({})] if self.local else []
        self._opener = urllib.request.build_opener(*handlers)
        self._lock = threading.Lock()
        self._abort: str | None = None
        self.requests_sent = 0
        self.tokens_used = 0
        self.unpriced_responses = 0  # responses without `usage`: counted as 0 tokens
        self.responses: dict[str, dict[str, Any]] = {}

    # -- identity --

    @property
    def signature(self) -> str:
        return f"openai:{self.model}@{self.prompt_version}#{self.prompt.digest[:12]}|base={self.host}"

    @property
    def cost(self) -> float:
        return self.tokens_used / 1000 * (self.price_per_1k_tokens or 0.0)

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

    def _fail(self, request: Request, problem: str) -> JudgeError:
        return JudgeError(f"openai judge ({self.model} at {self.host}): {request.describe()}: {problem}")

    def _judge_one(self, request: Request) -> Judgment:
        response, answer = self._ask(request, build_messages(self.prompt, request), parse_answer)
        with self._lock:
            self.responses[judgment_key(request, self.signature)] = response
        return self._judgment(request, answer).model_copy(update={"raw": response})

    def _ask(self, request: Request, messages: list[dict[str, str]], parse: Callable[[dict], Any]) -> tuple[dict, Any]:
        """Send one chat request (within the budget, retried with backoff) and parse its answer; the raw
        response and the parsed answer, or JudgeError once every attempt failed."""
        if not self._api_key and not self.local:
            # Checked here, not in __init__: replaying from a store needs the signature, not a key.
            raise self._fail(request, f"no API key for {self.host}: set {ENV_PREFIX}API_KEY (or OPENAI_API_KEY); "
                                      "a key is optional only for a server on this machine or the local network")
        payload = {"model": self.model, "messages": messages, "temperature": 0,
                   "response_format": {"type": "json_object"}}
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        problem = ""
        for attempt in range(self.max_retries + 1):
            self._reserve(request)
            try:
                response = self._post(body, request)
                return response, parse(response)
            except (TransientFailure, MalformedAnswer) as err:
                problem = str(err)
                if attempt < self.max_retries:
                    self._sleep(self._delay(attempt, getattr(err, "retry_after", None)))
        attempts = self.max_retries + 1
        raise self._fail(request, f"{problem} (gave up after {attempts} attempt{'s' * (attempts > 1)})")

    def _reserve(self, request: Request) -> None:
        """Count one request against the budget, or refuse before sending anything."""
        with self._lock:
            if self._abort:
                raise self._fail(request, f"not sent: {self._abort}")
            if self.max_requests is not None and self.requests_sent >= self.max_requests:
                raise self._fail(request, f"budget exhausted: {self.requests_sent} requests sent, "
                                          f"max_requests is {self.max_requests}")
            if self.max_cost is not None and self.cost >= self.max_cost:
                raise self._fail(request, f"budget exhausted: cost {self.cost:.4f} "
                                          f"({self.tokens_used} tokens) reached max_cost {self.max_cost}")
            self.requests_sent += 1

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self.retry_after_max))
        delay = min(self.backoff_max, self.backoff_base * (2 ** attempt))
        return delay * (0.5 + 0.5 * self._random.random())

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": f"citeaudit/{__version__}"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _post(self, body: bytes, request: Request) -> dict[str, Any]:
        http_request = urllib.request.Request(f"{self.base_url}/chat/completions", data=body,
                                              headers=self._headers(), method="POST")
        try:
            with self._opener.open(http_request, timeout=self.timeout) as reply:
                raw = reply.read()
        except urllib.error.HTTPError as err:
            status = err.code
            try:
                detail = err.read().decode("utf-8", "replace")
            except Exception:  # noqa: BLE001 - the body is only for the message
                detail = ""
            finally:
                err.close()
            if status in (408, 409, 429) or status >= 500:
                raise TransientFailure(f"HTTP {status}: {_snippet(detail)}", _retry_after(err.headers)) from None
            if status in (401, 403, 404):  # the key, the URL or the model is wrong: every pair would fail
                with self._lock:
                    self._abort = self._abort or f"an earlier request failed with HTTP {status}"
            raise self._fail(request, f"HTTP {status} from {self.base_url}/chat/completions: "
                                      f"{_snippet(detail) or '(empty body)'}") from None
        except (TimeoutError, urllib.error.URLError, ConnectionError, HTTPException, OSError) as err:
            reason = getattr(err, "reason", err)
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                raise TransientFailure(f"no answer within the {self.timeout:g}s timeout") from None
            raise TransientFailure(f"connection to {self.host} failed: {reason!r}") from None
        try:
            response = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise MalformedAnswer(f"response body is not JSON: {_snippet(raw.decode('utf-8', 'replace'))}") from None
        if not isinstance(response, dict):
            raise MalformedAnswer(f"response body is not a JSON object: {_snippet(raw.decode('utf-8', 'replace'))}")
        self._count_usage(response)
        return response

    def _count_usage(self, response: dict[str, Any]) -> None:
        usage = response.get("usage")
        tokens = None
        if isinstance(usage, dict):
            total = usage.get("total_tokens")
            if isinstance(total, int):
                tokens = total
            else:
                parts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
                if all(isinstance(x, int) for x in parts):
                    tokens = sum(parts)  # type: ignore[arg-type]
        with self._lock:
            if tokens is None:
                self.unpriced_responses += 1
            else:
                self.tokens_used += tokens

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


def _retry_after(headers: Any) -> float | None:
    """Seconds from a `Retry-After` header (a number or an HTTP date), None when absent or unreadable."""
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# --- from the environment ------------------------------------------------------------------------


def judge_from_env(model: str) -> OpenAIJudge:
    """An OpenAIJudge for `model`, configured from the CITEAUDIT_OPENAI_* environment variables (checked
    by the option table in judges/spec.py; the base URL and key are read by OpenAIJudge itself)."""
    options = OPENAI.parse(model)
    return OpenAIJudge(options.head, **options.keywords())
