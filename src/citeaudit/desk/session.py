"""The desk's working state: cases being reviewed, edits, human labels, and scores from the same
scoring code as the command line. The web layer (`app.py`) only translates HTTP to these calls."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from pydantic import ValidationError

from ..errors import DeskError, JudgeError, validation_problems
from ..judges import Judge, Judgments, JudgmentStore, make_judge
from ..metrics import ClaimResult, Settings, score_cases
from ..records import LABELS, Case, Judgment
from ..report.render import answer_json
from ..resolve import ResolvedCase, resolve
from ..runlog import RunLog, build_runlog
from .walkthroughs import WALKTHROUGHS, walkthrough_case


@dataclass
class HumanLabel:
    case: str
    answer: str
    statement: int
    claim: int
    text: str
    citations: list[str]
    label: str
    note: str
    reviewer: str
    created: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))


def _queue_item(case_id: str, answer_id: str, claim: ClaimResult) -> dict[str, Any]:
    """One claim of the review queue: where it is, what it says and cites, and the judge's best guess."""
    scores = claim.judgment.scores or {}
    return {"case": case_id, "answer": answer_id, "statement": claim.statement, "id": claim.id,
            "claim": claim.index, "text": claim.text, "citations": claim.citations,
            "best_guess": claim.judgment.label, "p_support": scores.get("support"),
            "judge": claim.judgment.judge}


class DeskSession:
    def __init__(self, cases: list[Case], judge_spec: str = "curated", store_path: str | None = None,
                 settings: Settings = Settings(), source: str = "cases", judge: Judge | None = None):
        if not cases:
            raise ValueError("the desk needs at least one case")
        self.source = source
        self.judge_spec = judge_spec
        self.settings = settings
        self.store = JudgmentStore(store_path) if store_path else None
        self._original = {c.id: c.model_dump(mode="json", exclude_none=True) for c in cases}
        self.cases: dict[str, dict[str, Any]] = copy.deepcopy(self._original)
        self.human: list[HumanLabel] = []
        self.walkthrough: str | None = None
        self._judge: Judge | None = judge  # given: used as is (e.g. replaying a run log)
        self._fixed_judge = judge is not None
        # case id -> (judge, case data as JSON, its uncertain claims): a case is judged again only after
        # it changes or the judge does (the curated judge is remade on every call, so it is never reused)
        self._unsure: dict[str, tuple[Judge, str, list[dict[str, Any]]]] = {}

    # ---------------------------------------------------------------- scoring

    def _resolved(self, case_id: str, data: dict[str, Any] | None = None) -> ResolvedCase:
        data = self.cases[case_id] if data is None else data
        try:
            case = Case.model_validate(data)
        except ValidationError as err:
            raise DeskError(422, "; ".join(map(str, validation_problems(err, f"case {case_id}")))) from None
        rc, problems = resolve(case)
        if problems:
            raise DeskError(422, "; ".join(f"{'.'.join(map(str, p))}: {m}" for p, m in problems))
        return rc

    def judge(self) -> Judge:
        # The curated judge reads the labels of the cases now loaded; other judges load once.
        if not self._fixed_judge and (self._judge is None or self.judge_spec == "curated"):
            resolved = [self._resolved(cid) for cid in self.cases]
            self._judge = make_judge(self.judge_spec, resolved)
        return self._judge

    def score(self, case_id: str, data: dict[str, Any] | None = None):
        rc = self._resolved(case_id, data)
        try:
            return score_cases([rc], Judgments(self.judge(), self.store), self.settings)
        except JudgeError as err:
            raise DeskError(409, f"{err}. The desk never guesses a score: this edit is not applied.") from None

    # ---------------------------------------------------------------- reading

    def _case(self, case_id: str) -> dict[str, Any]:
        if case_id not in self.cases:
            raise DeskError(404, f"no case '{case_id}'")
        return self.cases[case_id]

    def _answer_index(self, case_id: str, answer_id: str) -> int:
        for i, a in enumerate(self._case(case_id)["answers"]):
            if a["id"] == answer_id:
                return i
        raise DeskError(404, f"no answer '{answer_id}' in case '{case_id}'")

    def snapshot(self, case_id: str | None = None, answer_id: str | None = None) -> dict[str, Any]:
        """Everything the app shows for one answer: passages, statements, judgments, checks, scores."""
        case_id = case_id or next(iter(self.cases))
        data = self._case(case_id)
        answer_id = answer_id or (data["answers"][0]["id"] if data["answers"] else None)
        report = self.score(case_id)
        rc = report.cases[0]
        ranking = rc.case.ranking or []
        passages = [
            {"id": p.id, "doc": p.doc_id, "version": p.version, "title": p.title, "text": p.text,
             "span": {"start": p.start, "end": p.end},
             "rank": ranking.index(p.doc_id) + 1 if p.doc_id in ranking else None}
            for p in rc.passages.values()
        ]
        answer = None
        if answer_id is not None:
            self._answer_index(case_id, answer_id)
            result = next(r for r in report.answers if r.answer_id == answer_id)
            answer = answer_json(report, result)
            answer["inspector"] = [self._inspector(rc, s) for s in answer["statements"]]
        return {
            "source": self.source,
            "judge": report.judge_signature,
            "cases": [{"id": cid, "question": c["question"]} for cid, c in self.cases.items()],
            "case": {"id": case_id, "question": data["question"],
                     "answers": [{"id": a["id"], "system": a.get("system") or a["id"]} for a in data["answers"]]},
            "passages": passages,
            "retrieval": {n: {**r.to_dict(), "signature": report.signature(n)} for n, r in report.retrieval[case_id].items()},
            "answer": answer,
            "walkthrough": self.walkthrough_info(),
            "human": [h.__dict__ for h in self.human if h.case == case_id and h.answer == answer_id],
            "agreement": self.agreement(),
            "queue": self.review_queue(),
            "labels": list(LABELS),
        }

    @staticmethod
    def _inspector(rc: ResolvedCase, st: dict[str, Any]) -> dict[str, Any]:
        """The seed desk's inspector objects for one statement."""
        cited = [rc.passages[p] for p in st["citations"]]
        return {
            "statement": {"id": st["id"], "text": st["text"], "citations": st["citations"]},
            "citedPassages": [{"id": p.id, "text": p.text, "version": p.version,
                               "span": {"start": p.start, "end": p.end}} for p in cited],
            "check": {
                "statementId": st["id"],
                "citations": st["citations"],
                "citedSetSupports": st["cited_set_supports"],
                "citationChecks": st["citation_checks"],
            },
        }

    # ---------------------------------------------------------------- repair

    def edit_statement(self, case_id: str, answer_id: str, index: int, text: str | None = None,
                       citations: list[str] | None = None) -> dict[str, Any]:
        """Change a statement's text or citations; applied only if the result can be scored."""
        data = copy.deepcopy(self._case(case_id))
        answer = data["answers"][self._answer_index(case_id, answer_id)]
        if not 0 <= index < len(answer["statements"]):
            raise DeskError(404, f"no statement {index} in answer '{answer_id}'")
        st = answer["statements"][index]
        if text is not None:
            if not text.strip():
                raise DeskError(422, "a statement's text cannot be empty")
            st["text"] = text
            st.pop("claims", None)  # explicit claims belonged to the old text
        if citations is not None:
            st["citations"] = list(citations)
        self.score(case_id, data)  # raises before anything changes
        self.cases[case_id] = data
        return self.snapshot(case_id, answer_id)

    # ---------------------------------------------------------------- walkthroughs

    def load_walkthrough(self, name: str, variant: str | None = None) -> dict[str, Any]:
        if name not in WALKTHROUGHS:
            raise DeskError(404, f"no walkthrough '{name}'; walkthroughs: {', '.join(WALKTHROUGHS)}")
        variants = WALKTHROUGHS[name].variants
        if variant is not None and variant not in variants:
            known = f"its setups: {', '.join(variants)}" if variants else "it has no setups"
            raise DeskError(404, f"no setup '{variant}' of walkthrough '{name}'; {known}")
        case = walkthrough_case(name, variant)
        self._original[case["id"]] = case
        self.cases = {case["id"]: copy.deepcopy(case), **{k: v for k, v in self.cases.items() if k != case["id"]}}
        self.walkthrough = f"{name}:{variant}" if variant else name
        return self.snapshot(case["id"], case["answers"][0]["id"])

    def walkthrough_info(self) -> dict[str, Any] | None:
        if self.walkthrough is None:
            return None
        name, _, variant = self.walkthrough.partition(":")
        w = WALKTHROUGHS[name]
        return {"name": name, "variant": variant or None, **w.describe(variant or None)}

    def reset(self, case_id: str) -> None:
        self.cases[case_id] = copy.deepcopy(self._original[case_id])

    # ---------------------------------------------------------------- human review

    def set_human_label(self, case_id: str, answer_id: str, statement: int, claim: int, label: str,
                        note: str = "", reviewer: str = "reviewer") -> dict[str, Any]:
        if label not in LABELS:
            raise DeskError(422, f"label must be one of {', '.join(LABELS)}")
        if not reviewer.strip():
            raise DeskError(422, "a human label needs the reviewer's name")
        report = self.score(case_id)
        result = next((r for r in report.answers if r.answer_id == answer_id), None)
        found = next((c for c in (result.claims if result else []) if (c.statement, c.index) == (statement, claim)), None)
        if found is None:
            raise DeskError(404, f"no claim {statement}.{claim} in answer '{answer_id}'")
        self.human = [h for h in self.human if (h.case, h.answer, h.statement, h.claim, h.reviewer)
                      != (case_id, answer_id, statement, claim, reviewer)]
        self.human.append(HumanLabel(case_id, answer_id, statement, claim, found.text, found.citations, label,
                                     note, reviewer.strip()))
        return self.snapshot(case_id, answer_id)

    def agreement(self) -> dict[str, Any]:
        """Human vs automatic labels on the claims people reviewed, measured as `citeaudit agree` does
        (agree.py): counts, the confusion table, and Cohen's kappa once enough claims are reviewed."""
        from ..agree import DESK_MIN_PAIRS, claims_of_report, compare
        from ..labelled import Row

        claims, rows = [], []
        for case_id in dict.fromkeys(h.case for h in self.human):  # score each reviewed case once
            try:
                report = self.score(case_id)
            except DeskError:
                continue
            claims += claims_of_report(report)
            passages = report.cases[0].passages
            rows += [Row(f"{h.case}/{h.answer}/{h.statement}.{h.claim}/{h.reviewer}", h.text,
                         tuple(passages[p] for p in h.citations if p in passages), h.label)
                     for h in self.human if h.case == case_id]
        found = compare(claims, rows, resamples=0, min_pairs=DESK_MIN_PAIRS)
        figures = found.figures
        # the share that agree is shown as a count; kappa waits for DESK_MIN_PAIRS (docs/agreement.md)
        return {"n": figures["n"], "agree": figures["agree"], "kappa": figures["kappa"],
                "kappa_reason": figures["undefined"], "not_counted": len(found.not_counted),
                "confusion": figures["confusion"] if figures["n"] else None}

    def review_queue(self) -> dict[str, Any]:
        """The claims awaiting a person, across every loaded case: those whose judgment is uncertain (the
        judge's score fell in its uncertain band, or a `cascade:...,human` left them) and that no one has
        labelled yet, in case, answer and claim order."""
        judge = self.judge()
        judgments = Judgments(judge, self.store)  # one source for all cases: a pair is judged once
        labelled = {(h.case, h.answer, h.statement, h.claim, h.text, tuple(h.citations)) for h in self.human}
        items = [item for case_id in self.cases for item in self._unsure_claims(case_id, judge, judgments)
                 if (item["case"], item["answer"], item["statement"], item["claim"], item["text"],
                     tuple(item["citations"])) not in labelled]
        return {"count": len(items), "items": items}

    def _unsure_claims(self, case_id: str, judge: Judge, judgments: Judgments) -> list[dict[str, Any]]:
        """The case's claims the judge is unsure of, as queue items; none when the case cannot be scored."""
        data = json.dumps(self.cases[case_id], sort_keys=True)
        cached = self._unsure.get(case_id)
        if cached and cached[0] is judge and cached[1] == data:
            return cached[2]
        try:
            report = score_cases([self._resolved(case_id)], judgments, self.settings)
        except (DeskError, JudgeError):
            return []  # edits that cannot be scored are refused, so only a case loaded that way lands here
        items = [_queue_item(case_id, r.answer_id, c) for r in report.answers for c in r.claims
                 if c.judgment is not None and c.judgment.uncertain]
        self._unsure[case_id] = (judge, data, items)
        return items

    # ---------------------------------------------------------------- export

    def export(self) -> RunLog:
        """A run log of the current state, with human labels as judgments of `human:REVIEWER`."""
        resolved = [self._resolved(cid) for cid in self.cases]
        judgments = Judgments(self.judge(), self.store)
        report = score_cases(resolved, judgments, self.settings)
        log = build_runlog(report, judgments)
        by_case = {rc.id: rc for rc in resolved}
        from ..runlog import JudgmentRecord

        for h in self.human:
            rc = by_case.get(h.case)
            if rc is None:
                continue
            log.judgments.append(JudgmentRecord(
                text=h.text, passages=[rc.passages[p].identity() for p in h.citations if p in rc.passages],
                judgment=Judgment(label=h.label, judge=f"human:{h.reviewer}", explanation=h.note or None)))
        return log
