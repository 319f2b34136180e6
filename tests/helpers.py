"""Test helpers: tiny case builders, a judge defined by supporting passage sets, and the curated labels
as a model-like judge unsure of chosen pairs."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from citeaudit.files.loading import parse_cases
from citeaudit.judges import CuratedJudge
from citeaudit.records import Judgment, SourcePassage


class SetJudge:
    """A deterministic judge for tests: a text is fully supported by any passage set that contains
    one of its supporting sets, contradicted when a contradicting passage is cited, else 'none'."""

    name = "set"
    signature = "set@test"

    def __init__(self, supports: dict[str, list[set[str]]], contradicts: dict[str, set[str]] | None = None):
        self.supports = supports
        self.contradicts = contradicts or {}
        self.calls: list[tuple[str, frozenset[str]]] = []

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        ids = {p.id for p in passages}
        self.calls.append((text, frozenset(ids)))
        if ids & self.contradicts.get(text, set()):
            return Judgment(label="contradicts", judge=self.signature)
        if any(s <= ids for s in self.supports.get(text, [])):
            return Judgment(label="full", judge=self.signature)
        return Judgment(label="none", judge=self.signature)


class LabelsUnsureOf:
    """The curated labels as a model-like judge: sure of each labelled pair (p(support) 0.95 for `full`,
    0.05 otherwise), except the (claim, passage ids) pairs in `unsure`, where its best guess is the label at
    p(support) 0.62, inside the model judge's uncertain band (0.5 ± 0.13)."""

    name = "labels-unsure"
    signature = "labels-unsure@test"

    def __init__(self, cases, unsure=()):
        self.curated = CuratedJudge.from_cases(cases)
        self.unsure = {(text, frozenset(ids)) for text, ids in unsure}

    def judge(self, text, passages):
        judged = self.curated.judge(text, passages)  # UnlabelledPair where the labels say nothing
        unsure = (text, frozenset(p.id for p in passages)) in self.unsure
        p = 0.62 if unsure else 0.95 if judged.label == "full" else 0.05
        return judged.model_copy(update={"judge": self.signature, "scores": {"support": p},
                                         "uncertain": True if unsure else None})


def make_case(statements: list[dict], *, sources=("S1", "S2", "S3"), facts=(), answers_extra=(), **extra) -> dict:
    case = {
        "id": extra.pop("id", "t"),
        "question": "q?",
        "sources": [{"id": s, "version": "v1", "text": f"passage {s}"} for s in sources],
        "facts": list(facts),
        "answers": [{"id": "a", "statements": statements}, *answers_extra],
    }
    case.update(extra)
    return case


def load(case: dict | list, name: str = "case.json"):
    return parse_cases(name, json.dumps(case, ensure_ascii=False, indent=1))


def write_run(path, cases, judge, settings=None) -> str:
    """Score resolved `cases` with `judge` (any object with `judge` and `signature`) and write the run log."""
    from citeaudit.judges import Judgments
    from citeaudit.metrics import Settings, score_cases
    from citeaudit.run.log import build_runlog, write_runlog

    judgments = Judgments(judge)
    write_runlog(path, build_runlog(score_cases(cases, judgments, settings or Settings()), judgments))
    return str(path)


# The answer the harness integrations' tests score (DeepEval, RAGAS): one claim its citation supports,
# one it does not, and one the shipped judge is unsure of.
HARNESS_QUESTION = "What is the P7's temperature limit, and where was it designed?"
HARNESS_CONTEXTS = ["P7 operating manual, version 3. The continuous operating temperature limit is 80 °C.",
                    "Product catalogue. The P7 offers an Eco operating mode."]
# one claim its citation supports, one it does not: support 1/2
HARNESS_ANSWER = "The continuous operating temperature limit is 80 °C [1]. The P7 was designed in Finland [2]."
HARNESS_FAILING = "The P7 was designed in Finland."
# the pilot measured downtime, not energy: the shipped judge is unsure, so the claim is not scored
HARNESS_UNSURE_CONTEXT = ("Eco mode pilot report. The pilot observed P7 machines in Eco mode for 30 days. "
                          "Downtime fell by 15% compared with standard mode. The report gives no annual energy estimate and does not state "
                          "how many machines took part.")
HARNESS_UNSURE = "Eco reduces annual energy by 15% [1]."


def outside_event_loop(fn, *args, **kwargs):
    """`fn(*args, **kwargs)` in a thread of its own. A harness that starts its own event loop (Inspect's
    eval, asyncio.run) cannot run where one is running, and Playwright's sync API, which the browser
    tests keep open for the whole session, leaves one running in the main thread of their process."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(fn, *args, **kwargs).result()


# Loaded into a child Python at start-up (sitecustomize on its PYTHONPATH): a SIGKILL inside the judgment
# store's write transaction of its nth judgment, before that judgment is committed.
_KILL_INSIDE_NTH_WRITE = """
import os, signal
from citeaudit.judges import store

_insert, _written = store.JudgmentStore._insert, [0]

def _insert_then_die_on_the_nth(self, request, judgment):
    added = _insert(self, request, judgment)
    _written[0] += 1
    if _written[0] == {n}:
        os.kill(os.getpid(), signal.SIGKILL)
    return added

store.JudgmentStore._insert = _insert_then_die_on_the_nth
"""


def killed_inside_nth_write(folder: Path, n: int) -> dict[str, str]:
    """An environment for a citeaudit process that is killed (SIGKILL, as kill -9) while it writes its nth
    judgment to a store: the kill lands at a known point, where one timed from outside can come too late
    on a loaded machine, when the run has already finished."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(_KILL_INSIDE_NTH_WRITE.format(n=n), encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}
