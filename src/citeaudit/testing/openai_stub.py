"""A local stand-in for an OpenAI-compatible chat-completions server: test a pipeline that uses the
`openai:` judge or claim splitter offline, with scripted answers and failures (docs/testing.md).

Binds 127.0.0.1 on a free port, serves from a thread, counts what it receives and tracks the most
requests in flight at once. Each request takes the next scripted behaviour (`push`), else answers
with `answer(claim, passages)` (default: `rule_answer`). Everything is bounded in time: a "timeout"
sleeps at most `hang` seconds and `close()` wakes it.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CLAIM = re.compile(r"<claim>\n(.*?)\n</claim>", re.DOTALL)
PASSAGE = re.compile(r'<passage id="([^"]+)">\n(.*?)\n</passage>', re.DOTALL)
WORD = re.compile(r"\w{4,}")


def parse_prompt(body: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The claim and the passages (id -> text) of a chat-completions request built by the judge."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    claim = CLAIM.search(user)
    return (claim.group(1) if claim else ""), dict(PASSAGE.findall(user))


def rule_answer(claim: str, passages: dict[str, str]) -> dict[str, Any]:
    """A deterministic answer: a keyword in the claim picks the label ("contradict", "partly",
    "unrelated"); otherwise `full` when the claim shares three words of 4+ letters with a passage,
    else `none`. The quote is words 2-5 of the first passage (so it starts inside the passage)."""
    lowered = claim.lower()
    first_id, first_text = next(iter(passages.items()))
    words = first_text.split()
    quote = " ".join(words[1:5]) if len(words) >= 5 else first_text
    if "contradict" in lowered:
        label = "contradicts"
    elif "partly" in lowered:
        label = "partial"
    elif "unrelated" in lowered:
        label = "none"
    else:
        claim_words = {w.lower() for w in WORD.findall(claim)}
        shared = max(len(claim_words & {w.lower() for w in WORD.findall(t)}) for t in passages.values())
        label = "full" if shared >= 3 else "none"
    evidence = None if label == "none" else {"passage": first_id, "quote": quote}
    return {"label": label, "evidence": evidence, "explanation": f"stub rule gave {label}."}


class OpenAIStub:
    """The stand-in server; `url` is its base URL (`.../v1`), for `base_url=` or CITEAUDIT_OPENAI_BASE_URL."""

    def __init__(self, answer: Callable[[str, dict[str, str]], dict[str, Any]] = rule_answer, *,
                 delay: float = 0.0, hang: float = 2.0, tokens: int = 500):
        self.answer = answer
        self.delay = delay  # seconds each answer takes (for the concurrency test)
        self.hang = hang  # seconds a "timeout" behaviour sleeps before answering
        self.tokens = tokens  # usage.total_tokens reported per answer
        self.script: deque[Any] = deque()
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    # -- control --

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def count(self) -> int:
        return len(self.bodies)

    def push(self, *behaviours: Any) -> None:
        """Script the next requests: "ok", "timeout", ("429", retry_after), "500", "malformed",
        "wrong_label", "missing_fields", "fenced", "no_usage", "401", "404", "400",
        ("answer", dict) or ("content", str)."""
        self.script.extend(behaviours)

    def start(self) -> OpenAIStub:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # -- serving --

    def _next(self) -> Any:
        with self._lock:
            return self.script.popleft() if self.script else "ok"

    def _respond(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        behaviour = self._next()
        kind, arg = (behaviour if isinstance(behaviour, tuple) else (behaviour, None))
        if kind == "timeout":
            self._closing.wait(self.hang)
            kind = "ok"
        if kind == "429":
            return 429, {"Retry-After": str(arg if arg is not None else 0)}, b'{"error": {"message": "slow down"}}'
        if kind == "500":
            return 500, {}, b'{"error": {"message": "internal error"}}'
        if kind in ("400", "401", "404"):
            message = {"400": "bad request", "401": "Incorrect API key provided", "404": "model not found"}[kind]
            return int(kind), {}, json.dumps({"error": {"message": message}}).encode()
        claim, passages = parse_prompt(body)
        answer = arg if kind == "answer" else self.answer(claim, passages)
        if kind == "wrong_label":
            answer = {**answer, "label": "supported"}
        elif kind == "missing_fields":
            answer = {"label": answer["label"]}
        content = json.dumps(answer)
        if kind == "malformed":
            content = '{"label": "full", "evidence": '
        elif kind == "fenced":
            content = f"```json\n{content}\n```"
        elif kind == "content":
            content = arg
        reply: dict[str, Any] = {
            "id": f"chatcmpl-stub-{self.count}", "object": "chat.completion", "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
        }
        if kind != "no_usage":
            reply["usage"] = {"prompt_tokens": self.tokens - 50, "completion_tokens": 50,
                              "total_tokens": self.tokens}
        return 200, {}, json.dumps(reply).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with stub._lock:
                    stub.bodies.append(body)
                    stub.headers.append(dict(self.headers))
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                try:
                    if self.path != "/v1/chat/completions":
                        status, headers, payload = 404, {}, b'{"error": {"message": "no such path"}}'
                    else:
                        if stub.delay:
                            stub._closing.wait(stub.delay)
                        status, headers, payload = stub._respond(body)
                finally:
                    with stub._lock:
                        stub.in_flight -= 1
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.send_header("Connection", "close")
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (a timeout test): nothing to answer
                    pass
                self.close_connection = True

        return Handler
