"""A generated run shaped like a real one, for the report's scale tests: cases from benchmarks/synthetic.py
(six sources, a ranking, a gold document, five statements citing two sources each), two systems per case,
and a deterministic judge that gives scores, an uncertain band, evidence spans and the guard's findings."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from citeaudit.judges import Judgments
from citeaudit.files.loading import load_cases
from citeaudit.metrics import Settings, score_cases
from citeaudit.records import Evidence, Judgment
from citeaudit.run.log import build_runlog

_SYNTHETIC = Path(__file__).resolve().parents[1] / "benchmarks" / "synthetic.py"


def _synthetic():
    spec = importlib.util.spec_from_file_location("synthetic_cases", _SYNTHETIC)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ShapedJudge:
    """Labels spread as a model judge's are (most full, some partial, none, contradicts, unsure), each
    fixed by a hash of the pair so that a run is reproducible."""

    name, signature = "shaped", "shaped@test"

    def judge(self, text, passages):
        h = int(hashlib.sha256((text + "|" + ",".join(p.id for p in passages)).encode()).hexdigest()[:8], 16)
        bucket = h % 100
        first = passages[0]
        span = Evidence(passage=first.id, start=0, end=min(len(first.text), 40)) if first.text else None
        if bucket < 62:
            return Judgment(label="full", judge=self.signature, explanation="the cited sentence states it",
                            evidence=span, scores={"support": 0.7 + (h % 30) / 100})
        if bucket < 72:
            return Judgment(label="full", judge=self.signature, uncertain=True, evidence=span,
                            explanation="score in the uncertain band", scores={"support": 0.45 + (h % 10) / 100})
        if bucket < 82:
            return Judgment(label="partial", judge=self.signature, explanation="one part of the claim is stated",
                            scores={"support": 0.2 + (h % 20) / 100})
        if bucket < 92:
            number = next((w for w in text.split() if w.strip(".,").isdigit()), "15")
            return Judgment(label="none", judge=self.signature, scores={"support": 0.1},
                            explanation=f"p(support) 0.91; qualifier guard (number): the claim's number "
                                        f"'{number.strip('.,')}' has no counterpart in the evidence -> none, not full")
        if bucket < 97:
            return Judgment(label="none", judge=self.signature, explanation="nothing in the passage",
                            scores={"support": 0.05})
        return Judgment(label="contradicts", judge=self.signature, explanation="the passage says otherwise",
                        scores={"support": 0.01})


def shaped_cases(path: Path, answers: int, hostile: str | None = None) -> Path:
    """A JSONL file of answers // 2 cases with two systems' answers each; `hostile` text goes into the
    first case's question, a claim, a passage and an id."""
    import json

    synthetic = _synthetic()
    with path.open("w", encoding="utf-8") as f:
        for i in range(max(1, answers // 2)):
            case = synthetic.make_case(i)
            case.pop("labels")
            first = case["answers"][0]
            second = {"id": "a2", "system": "rag-rerank",
                      "statements": [dict(s, citations=s["citations"][::-1]) for s in first["statements"][1:]]}
            case["answers"].append(second)
            case["facts"] = [{"id": "limit", "text": f"Unit {i} runs at up to {10 + i % 89} degrees Celsius.",
                              "passages": ["D1"]}]
            first["statements"][0]["facts"] = ["limit"]
            if hostile and i == 0:
                case["question"] = hostile
                case["sources"][0]["text"] = hostile + " " + case["sources"][0]["text"]
                first["statements"][0]["text"] = hostile + " " + first["statements"][0]["text"]
                second["id"] = "a2" + hostile
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    return path


def shaped_run(path: Path, answers: int, hostile: str | None = None):
    cases = load_cases([shaped_cases(path, answers, hostile)])
    judgments = Judgments(ShapedJudge())
    return build_runlog(score_cases(cases, judgments, Settings()), judgments)
