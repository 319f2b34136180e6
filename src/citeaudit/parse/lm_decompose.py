"""`openai:MODEL` claim splitting: a language model proposes atomic claims, citeaudit checks them.

A decomposer behind the usual interface (`decompose(statement_text, lang)`, see decompose.py) that asks
an OpenAI-compatible chat endpoint to split a statement into atomic claims, then checks the split
before using it:

  * every number, unit and condition word of the statement is kept by at least one claim ("80 °C",
    "15 %", "unless", "only", "not", "within", ...): a split that drops a qualifier produces claims a
    passage supports although the statement is not supported;
  * no claim brings a number, unit, condition word or capitalised name that the statement does not
    contain: a split must not add facts.

A split that fails a check is rejected and the statement goes to the fallback splitter (the rule
splitter by default); so does one whose request failed (after the remote judge's retries). Every
fallback is kept in `fallbacks` with its reason. When the request failed for *every* statement of a run
(no server reached, a wrong key or model), the model split nothing: `check_reached` makes that a
JudgeError, unless the fallback was asked for (`openai:MODEL,fallback=rule`).

Each outcome is recorded in a judgment store's `decompositions` table (the raw response, the claims or
the reason for the fallback, the statement's language), keyed by the statement, its language and the
splitter's signature (model, prompt version and digest, endpoint host). A statement already recorded is
replayed without a request, so a run can be scored again offline; with `replay=True` nothing is ever
sent and a statement without a recorded split is a `MissingDecomposition`. A recorded request failure is
asked again unless replaying. Within one run a statement is split once (a streamed run reads its input
twice): the last `MEMO` outcomes are remembered. `check_recorded_splits` checks a store's recorded rows.

The HTTP side (API key, retries with backoff, Retry-After, request and cost budgets, no proxy for a local
server) is the `ChatClient` the remote judge asks through too (llm.py); the store is the judgment
store's file (recordstore.py). Neither needs the judges.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citeaudit.errors import JudgeError, JudgeSetupError, MalformedAnswer, MissingDecomposition, StoreError
from citeaudit.llm import OPENAI, ChatClient, Prompt, answer_json
from citeaudit.options import JudgeOptions, Option, choice
from citeaudit.llm import snippet as _snippet
from citeaudit.quantities import negation_pattern, quantities
from citeaudit.recordstore import DECOMPOSITION_TABLE, RecordStore
from citeaudit.text import capitalised_names
from citeaudit.parse.decompose import Decomposer, NoDecomposer, RuleDecomposer

PROMPT_VERSION = "1"

SPLIT_PROMPT_V1 = Prompt(
    system="""\
You split a statement into atomic claims: short sentences that each state one fact and can be checked \
on their own against a source.

Rules:
- Each claim must stand alone: repeat the subject instead of using a pronoun.
- Keep every number, unit, date, name and condition of the statement ("only", "unless", "if", "not", \
"within 30 days", "at least") in the claims it applies to. Drop nothing.
- Add nothing: no fact, number, name or word of qualification that the statement does not contain.
- Use the statement's own words and language wherever you can.
- A statement that states one fact is one claim: return it unchanged.

Answer with one JSON object and nothing else: {"claims": ["<claim>", ...]}""",
    user="""\
Statement:
<statement>
{statement}
</statement>

Answer with the JSON object only.""",
)

SPLIT_PROMPTS: dict[str, Prompt] = {"1": SPLIT_PROMPT_V1}
_CLOSING = ".,;:!?。，；：！？ "
MAX_CLAIMS = 16  # more than this from one statement is a runaway answer, not a split
MEMO = 10_000  # outcomes remembered within a run (more than a streamed run's chunk of cases holds)


# --- checking a split ----------------------------------------------------------------------------

# Numbers, units and negations are found as the guard finds them (quantities.py), read as a split needs:
# digits only, the wide unit vocabulary, grammatical negations only.
# "while" and "whereas" are left out: between two clauses they contrast, and a split rightly drops them
_CONDITION_WORDS = frozenset("""if unless only when whenever except excluding
    before after within until till provided least most up less more fewer than approximately about
    around nearly almost roughly may might could can must should would all some none each every per""".split())
_ZH_CONDITIONS = ("如果", "除非", "仅", "只", "以内", "之前", "之后", "至少", "至多", "约", "可能")


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"


def _numbers(text: str) -> dict[Any, str]:
    """The numbers in digits of `text`: value (a version: as written) -> as shown in messages."""
    out: dict[Any, str] = {}
    for q in quantities(text, words=False, wide=True):
        if q.unit and q.unit.startswith("version:"):
            out.setdefault(q.unit, q.text)
        else:
            out.setdefault(q.value, _number(q.value))
    return out


def _units(text: str) -> dict[Any, str]:
    """The units written with a number ("30 days", "15 %", "$5"): normalised unit -> as first written."""
    return {q.unit: q.unit_text or q.unit for q in reversed(quantities(text, words=False, wide=True))
            if q.unit and not q.unit.startswith("version:")}


def _words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[\w'’/]+", text)]


def _conditions(text: str, lang: str) -> dict[Any, str]:
    zh = lang == "zh"
    found = {w for w in _ZH_CONDITIONS if w in text} if zh else {w for w in _words(text) if w in _CONDITION_WORDS}
    for m in negation_pattern(zh, lexical=False).finditer(text.replace("’", "'")):
        w = m.group(0).lower()
        found.add("not" if w.endswith("n't") or w == "cannot" else w)  # "doesn't" and "does not" are one condition
    return {w: w for w in found}


def check_split(statement: str, claims: Sequence[str], lang: str = "en") -> str | None:
    """Why a proposed split must be rejected, or None when it keeps every number, unit and condition
    word of the statement and adds none (nor a capitalised name the statement lacks)."""
    if not claims:
        return "no claims"
    if len(claims) > MAX_CLAIMS:
        return f"{len(claims)} claims (at most {MAX_CLAIMS})"
    joined = "\n".join(claims)
    problems = []
    for what, found in (("number", _numbers), ("unit", _units),
                        ("condition word", lambda text: _conditions(text, lang))):
        stated, claimed = found(statement), found(joined)
        for verb, mine, theirs in (("drops", stated, claimed), ("adds", claimed, stated)):
            missing = sorted(mine[k] for k in mine.keys() - theirs.keys())
            if missing:
                problems.append(f"{verb} {what} {', '.join(missing)}")
    stated_words = set(_words(statement))
    invented = {n for n in capitalised_names(joined) if n not in stated_words}
    if invented:
        problems.append(f"adds name {', '.join(sorted(invented))}")
    return "; ".join(problems) or None


# --- the model's answer --------------------------------------------------------------------------


def parse_claims(response: Any) -> list[str]:
    """The claims in a chat-completions response body; `MalformedAnswer` says what is wrong."""
    data, content = answer_json(response)
    claims = data.get("claims") if isinstance(data, dict) else None
    if not isinstance(claims, list) or not all(isinstance(c, str) and c.strip() for c in claims):
        raise MalformedAnswer(f'answer is not {{"claims": [non-empty strings]}}: {_snippet(content)}')
    return [" ".join(c.split()) for c in claims]


class _SplitClient(ChatClient):
    """The shared chat client sending the splitting prompt."""

    who = "openai claim splitter"

    def __init__(self, model: str, prompt: Prompt, **options: Any):
        super().__init__(model, **options)
        self.split_prompt = prompt

    def split(self, statement: str) -> tuple[dict[str, Any], list[str]]:
        """The raw response and its claims; JudgeError once every attempt failed."""
        user = self.split_prompt.user.replace("{statement}", statement)
        messages = [{"role": "system", "content": self.split_prompt.system}, {"role": "user", "content": user}]
        return self.ask(f"statement {_snippet(statement, 120)!r}", messages, parse_claims)


# --- the decomposer ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fallback:
    """A statement the fallback splitter split, and why the model's split was not used."""

    statement: str
    reason: str


def decomposition_key(statement: str, lang: str, splitter_signature: str) -> str:
    material = {"statement": statement, "lang": lang, "splitter": splitter_signature}
    return hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class OpenAIDecomposer:
    """Claims proposed by a model behind an OpenAI-compatible endpoint, checked, recorded and replayable.
    See the module docstring. `options` are the chat client's (llm.py: base_url, api_key, timeout,
    max_retries, max_requests, max_cost, price_per_1k_tokens, backoff_*, sleep); `store` is a judgment
    store (any `RecordStore`)."""

    name = "openai"

    def __init__(self, model: str, *, store: RecordStore | None = None, replay: bool = False,
                 fallback: Decomposer | None = None, prompt_version: str = PROMPT_VERSION,
                 fallback_asked: bool = False, **options: Any):
        if prompt_version not in SPLIT_PROMPTS:
            raise JudgeSetupError(f"unknown claim-splitting prompt version {prompt_version!r}; "
                                  f"known: {', '.join(sorted(SPLIT_PROMPTS))}")
        if replay and store is None:
            raise JudgeSetupError("replaying claim splits needs the store they were recorded in")
        if not model.strip():
            raise JudgeSetupError("the openai claim splitter needs a model name: openai:MODEL")
        self.prompt_version = prompt_version
        self.prompt = SPLIT_PROMPTS[prompt_version]
        self.client = _SplitClient(model, self.prompt, **options)
        if not replay and not self.client._api_key and not self.client.local:
            # refused now, not statement by statement: every split would fall back to the rule splitter
            raise JudgeSetupError(f"openai claim splitter ({model} at {self.client.host}): no API key; set "
                                  "CITEAUDIT_OPENAI_API_KEY (or OPENAI_API_KEY), or replay recorded splits")
        self.store = store
        self.replay = replay
        self.fallback = fallback if fallback is not None else RuleDecomposer()
        # True: the fallback may split every statement (fallback=rule); False: only some (check_reached)
        self.fallback_asked = fallback_asked
        self.fallbacks: list[Fallback] = []
        self.asked = 0  # statements sent to the model (not replayed)
        self.outcomes = 0  # statements whose outcome was found (asked, or replayed from the store)
        self.failed_requests = 0  # of those, the ones whose request failed
        self._memo: OrderedDict[str, dict[str, Any]] = OrderedDict()

    @property
    def model_signature(self) -> str:
        """What can change the model's split: model, prompt version and text, endpoint host."""
        return (f"openai:{self.client.model}@{self.prompt_version}#{self.prompt.digest[:12]}"
                f"|base={self.client.host}")

    @property
    def signature(self) -> str:
        return f"{self.model_signature}|fallback={self._fallback_signature}"

    @property
    def _fallback_signature(self) -> str:
        return getattr(self.fallback, "signature", type(self.fallback).__name__)

    def fallback_note(self) -> str | None:
        """One line on the statements the fallback splitter split in this run, or None when none was."""
        if not self.fallbacks:
            return None
        return (f"{len(self.fallbacks)} statement(s) split by {self._fallback_signature} instead of "
                f"{self.model_signature} "
                f"(first: {_snippet(self.fallbacks[0].statement, 80)!r}: {self.fallbacks[0].reason})")

    def check_reached(self) -> None:
        """Raise JudgeError when the request failed for every statement split so far: the model split
        none, and the run would be the rule splitter's under this splitter's name. The fallback splits
        occasional failures; all of them only when asked for (`fallback=rule`)."""
        if self.fallback_asked or not self.outcomes or self.failed_requests < self.outcomes:
            return
        first = next(f for f in self.fallbacks if f.reason.startswith("request failed"))
        raise JudgeError(f"openai claim splitter ({self.model_signature}): the request failed for every one of "
                         f"the {self.outcomes} statement(s) to split (first: {first.reason}); to let "
                         f"{self._fallback_signature} split them all instead, write --claims "
                         f"openai:{self.client.model},fallback=rule")

    def decompose(self, statement_text: str, lang: str) -> list[str] | Sequence[tuple[int, int]]:
        key = decomposition_key(statement_text, lang, self.model_signature)
        outcome = self._memo.get(key)
        if outcome is None:
            outcome = self._outcome(key, statement_text, lang)
            self.outcomes += 1
            self.failed_requests += bool(outcome.get("request_failed"))
            if _claims_of(outcome) is None:
                self.fallbacks.append(Fallback(statement_text, str(outcome.get("fallback") or "no claims recorded")))
            self._memo[key] = {k: outcome[k] for k in ("claims", "fallback") if k in outcome}  # not the response
            if len(self._memo) > MEMO:
                self._memo.popitem(last=False)
        claims = _claims_of(outcome)
        if claims is None:
            return self.fallback.decompose(statement_text, lang)
        # without a closing period a claim taken word for word is found in the statement (and gets its
        # offsets and own citations); the rule splitter's claims end the same way
        return [c.rstrip(_CLOSING) or c for c in claims]

    def _outcome(self, key: str, statement: str, lang: str) -> dict[str, Any]:
        """The recorded outcome for a statement, else the model's (recorded when there is a store)."""
        recorded = self.store.get_decomposition(key) if self.store is not None else None
        if recorded is not None and (self.replay or not recorded.get("request_failed")):
            return recorded
        if self.replay:
            raise MissingDecomposition(
                f"no recorded claim split by {self.model_signature} for statement "
                f"{_snippet(statement, 120)!r} in {self.store.path}; run once without replay to record it")
        outcome = self._ask(statement, lang)
        if self.store is not None:
            self.store.put_decomposition(key, self.model_signature, statement, outcome, replace=recorded is not None)
        return outcome

    def _ask(self, statement: str, lang: str) -> dict[str, Any]:
        self.asked += 1
        try:
            response, claims = self.client.split(statement)
        except JudgeError as err:
            return {"fallback": f"request failed: {err}", "request_failed": True, "lang": lang}
        problem = check_split(statement, claims, lang)
        if problem:
            return {"fallback": f"split rejected: {problem}", "proposed": claims, "response": response, "lang": lang}
        return {"claims": claims, "response": response, "lang": lang}


def _claims_of(outcome: dict[str, Any]) -> list[str] | None:
    """The claims a recorded outcome holds, or None when the statement went to the fallback splitter."""
    claims = outcome.get("claims")
    if isinstance(claims, list) and claims and all(isinstance(c, str) and c.strip() for c in claims):
        return claims
    return None


# `--claims openai:MODEL,...`: the chat client's options (the judge's prompt version and concurrency are the
# judge's: a statement is split one at a time by the splitter's own prompt), and the fallback asked for
SPLITTER = JudgeOptions("openai", (
    *(o for o in OPENAI.options if o.name not in ("prompt_version", "concurrency")),
    Option("fallback", choice("rule"), None, "let the rule splitter split every statement the model could not, "
           "even all of them (default: only some; a run where every request failed is a judge failure)"),
), head="MODEL", example="openai:gpt-4o-mini,fallback=rule")


def make_decomposer(spec: str, *, store: RecordStore | None = None, replay: bool = False) -> Decomposer:
    """The claim splitter a spec names: `rule` (the default), `none`, or `openai:MODEL` (configured from
    the CITEAUDIT_OPENAI_* environment, as the openai judge is)."""
    name, _, argument = spec.partition(":")
    if name == "rule" and not argument:
        return RuleDecomposer()
    if name == "none" and not argument:
        return NoDecomposer()
    if name == "openai":
        options = SPLITTER.parse(argument)
        keywords = {k: v for k, v in options.keywords().items() if k != "fallback"}
        return OpenAIDecomposer(options.head, store=store, replay=replay,
                                fallback_asked=options["fallback"] is not None, **keywords)
    raise JudgeSetupError(f"unknown claim splitter {spec!r}; known: rule, none, openai:MODEL")


# --- checking a store's recorded splits ----------------------------------------------------------


@dataclass
class SplitCheck:
    """What `check_recorded_splits` found: recorded splits by splitter, and every bad row with why."""

    splitters: Counter = field(default_factory=Counter)
    bad: list[tuple[str, str]] = field(default_factory=list)  # (key, problem)

    @property
    def rows(self) -> int:
        return sum(self.splitters.values())


def check_recorded_splits(path: str | Path) -> SplitCheck:
    """Every row of a store's `decompositions` table read (read-only) and checked as replay would use it:
    its outcome is a JSON object holding claims or a fallback reason, its claims still pass `check_split`,
    and its key is the hash of its statement, language and splitter. A store made before splits were
    recorded has none."""
    found = SplitCheck()
    try:
        db = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)
        try:
            rows = db.execute(f"SELECT key, splitter, statement, outcome FROM {DECOMPOSITION_TABLE} ORDER BY key")
            for key, splitter, statement, raw in rows:
                found.splitters[splitter] += 1
                problem = _split_row_problem(key, splitter, statement, raw)
                if problem:
                    found.bad.append((key, problem))
        finally:
            db.close()
    except sqlite3.OperationalError as err:
        if "no such table" in str(err):
            return found
        raise StoreError(f"{path}: {err}") from None
    except sqlite3.Error as err:
        raise StoreError(f"{path}: {err}") from None
    return found


def _split_row_problem(key: str, splitter: str, statement: str, raw: Any) -> str | None:
    """What is wrong with one recorded split, or None when replay can use it as it is."""
    try:
        outcome = json.loads(raw)
    except (TypeError, ValueError):
        return "outcome is not JSON"
    if not isinstance(outcome, dict):
        return "outcome is not a JSON object"
    lang = outcome.get("lang")
    # rows recorded before the language was kept: the parser's two languages are tried
    langs = [lang] if isinstance(lang, str) else ["en", "zh"]
    matched = next((each for each in langs if decomposition_key(statement, each, splitter) == key), None)
    if matched is None:
        return "key does not match the row's statement, language and splitter"
    claims = _claims_of(outcome)
    if claims is None:
        if "claims" in outcome:
            return "claims is not a list of non-empty texts"
        if not isinstance(outcome.get("fallback"), str) or not outcome["fallback"]:
            return "neither claims nor a fallback reason"
        return None
    problem = check_split(statement, claims, matched)
    return f"recorded claims fail the split checks: {problem}" if problem else None
