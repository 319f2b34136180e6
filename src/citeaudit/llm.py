"""Asking a model behind an OpenAI-compatible `/chat/completions` endpoint (hosted OpenAI, vLLM,
llama.cpp server, Ollama, ...), standard library HTTP only (urllib). The `openai:MODEL` judge
(judges/remote.py) and the `openai:MODEL` claim splitter (parse/lm_decompose.py) both ask through a
`ChatClient`, which lives below both so that parsing needs nothing of the judges:

  * the endpoint and key come from the options, else CITEAUDIT_OPENAI_* (or OPENAI_*) variables; a
    server on this machine or the local network needs no key and is reached without a proxy;
  * transient failures (timeouts, connection errors, HTTP 408/409/429/5xx) and malformed answers are
    retried with exponential backoff and jitter, honouring `Retry-After`; other 4xx fail at once with
    the status and body (401/403/404 stop every later request too);
  * `max_requests` / `max_cost` bound what one client may send: once spent, every further request fails
    with "budget exhausted" before anything is sent; tokens are counted from each response's `usage`.

`OPENAI` is the option table of both (see options.py).
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
from collections.abc import Callable
from dataclasses import dataclass
from http.client import HTTPException
from typing import Any
from urllib.parse import urlsplit

from citeaudit._version import __version__
from citeaudit.errors import JudgeError, JudgeSetupError, MalformedAnswer, TransientFailure
from citeaudit.options import JudgeOptions, Option, integer, number, text

DEFAULT_BASE_URL = "https://api.openai.com/v1"
OPENAI_ENV = "CITEAUDIT_OPENAI_"
ENV_PREFIX = OPENAI_ENV

OPENAI = JudgeOptions("openai", (
    # where the judge is: the API key is never an option (a spec is written into run logs and shell history)
    Option("base_url", text("a URL"), None, "the endpoint's base URL (default: CITEAUDIT_OPENAI_BASE_URL, "
           "OPENAI_BASE_URL, then OpenAI's)"),
    Option("timeout", number(above=0), 30.0, "seconds to wait for an answer", env=OPENAI_ENV + "TIMEOUT"),
    Option("max_retries", integer(0), 3, "retries after the first attempt", env=OPENAI_ENV + "MAX_RETRIES"),
    Option("concurrency", integer(1), 4, "requests in flight at once", env=OPENAI_ENV + "CONCURRENCY"),
    Option("max_requests", integer(0), None, "most requests one run may send", env=OPENAI_ENV + "MAX_REQUESTS"),
    Option("max_cost", number(low=0), None, "most a run may spend", env=OPENAI_ENV + "MAX_COST",
           needs="price_per_1k_tokens"),  # tokens are turned into cost at that price
    Option("price_per_1k_tokens", number(low=0), None, "price per 1,000 tokens", env=OPENAI_ENV + "PRICE_PER_1K",
           aliases=("price",)),
    Option("prompt_version", text("a prompt version"), "1", "prompt version", env=OPENAI_ENV + "PROMPT_VERSION",
           aliases=("prompt",)),
), head="MODEL", example="openai:gpt-4o-mini,timeout=60,max_requests=500")


@dataclass(frozen=True)
class Prompt:
    """A prompt version: the system message and the user message template."""

    system: str
    user: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.system}\n\n{self.user}".encode()).hexdigest()


def snippet(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


_FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def answer_json(response: Any) -> tuple[Any, str]:
    """The JSON value a chat-completions response body answers (inside a ```json fence or not) and the
    answer's text; `MalformedAnswer` says what is wrong."""
    try:
        choice = response["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise MalformedAnswer(f"no answer in the response: {snippet(json.dumps(response))}") from None
    if not isinstance(content, str) or not content.strip():
        reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        raise MalformedAnswer(f"empty answer (finish_reason={reason!r})")
    fenced = _FENCE.match(content)
    try:
        return json.loads(fenced.group(1) if fenced else content), content
    except json.JSONDecodeError as err:
        raise MalformedAnswer(f"answer is not valid JSON ({err.msg}): {snippet(content)}") from None


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


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None


class ChatClient:
    """One model behind an OpenAI-compatible endpoint, asked within a budget. See the module docstring.
    `who` names the asker in every failure ("openai judge (MODEL at HOST): ...")."""

    who = "openai client"

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
        *,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        retry_after_max: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ):
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

    @property
    def cost(self) -> float:
        return self.tokens_used / 1000 * (self.price_per_1k_tokens or 0.0)

    def _fail(self, about: str, problem: str) -> JudgeError:
        return JudgeError(f"{self.who} ({self.model} at {self.host}): {about}: {problem}")

    def ask(self, about: str, messages: list[dict[str, str]], parse: Callable[[dict], Any]) -> tuple[dict, Any]:
        """Send one chat request (within the budget, retried with backoff) and parse its answer; the raw
        response and the parsed answer, or JudgeError (naming `about`) once every attempt failed."""
        if not self._api_key and not self.local:
            # Checked here, not in __init__: replaying from a store needs the signature, not a key.
            raise self._fail(about, f"no API key for {self.host}: set {ENV_PREFIX}API_KEY (or OPENAI_API_KEY); "
                                    "a key is optional only for a server on this machine or the local network")
        payload = {"model": self.model, "messages": messages, "temperature": 0,
                   "response_format": {"type": "json_object"}}
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        problem = ""
        for attempt in range(self.max_retries + 1):
            self._reserve(about)
            try:
                response = self._post(body, about)
                return response, parse(response)
            except (TransientFailure, MalformedAnswer) as err:
                problem = str(err)
                if attempt < self.max_retries:
                    self._sleep(self._delay(attempt, getattr(err, "retry_after", None)))
        attempts = self.max_retries + 1
        raise self._fail(about, f"{problem} (gave up after {attempts} attempt{'s' * (attempts > 1)})")

    def _reserve(self, about: str) -> None:
        """Count one request against the budget, or refuse before sending anything."""
        with self._lock:
            if self._abort:
                raise self._fail(about, f"not sent: {self._abort}")
            if self.max_requests is not None and self.requests_sent >= self.max_requests:
                raise self._fail(about, f"budget exhausted: {self.requests_sent} requests sent, "
                                        f"max_requests is {self.max_requests}")
            if self.max_cost is not None and self.cost >= self.max_cost:
                raise self._fail(about, f"budget exhausted: cost {self.cost:.4f} "
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

    def _post(self, body: bytes, about: str) -> dict[str, Any]:
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
                raise TransientFailure(f"HTTP {status}: {snippet(detail)}", _retry_after(err.headers)) from None
            if status in (401, 403, 404):  # the key, the URL or the model is wrong: every pair would fail
                with self._lock:
                    self._abort = self._abort or f"an earlier request failed with HTTP {status}"
            raise self._fail(about, f"HTTP {status} from {self.base_url}/chat/completions: "
                                    f"{snippet(detail) or '(empty body)'}") from None
        except (TimeoutError, urllib.error.URLError, ConnectionError, HTTPException, OSError) as err:
            reason = getattr(err, "reason", err)
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                raise TransientFailure(f"no answer within the {self.timeout:g}s timeout") from None
            raise TransientFailure(f"connection to {self.host} failed: {reason!r}") from None
        try:
            response = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise MalformedAnswer(f"response body is not JSON: {snippet(raw.decode('utf-8', 'replace'))}") from None
        if not isinstance(response, dict):
            raise MalformedAnswer(f"response body is not a JSON object: {snippet(raw.decode('utf-8', 'replace'))}")
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
