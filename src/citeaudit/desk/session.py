"""The desk's working state: cases being reviewed, edits, human labels, and scores from the same
scoring code as the command line. The web layer (`app.py`) only translates HTTP to these calls.

Scores are kept per case and made again only for a case that changed, and every judgment is kept for
the session (in the judgment store when one is given, in memory otherwise): a run of thousands of
answers is judged once, and each click rescores only the case it changed."""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from pydantic import ValidationError

from citeaudit.errors import DeskError, JudgeError, validation_problems
from citeaudit.judges import Judge, Judgments, JudgeSpec, JudgmentStore, MemoryStore, Request, parse_judge, run_judge
from citeaudit.metrics import ClaimResult, Report, Settings
from citeaudit.metrics.scoring import AnswerResult, cited_by_of
from citeaudit.run.pipeline import case_report
from citeaudit.metrics import names as N
from citeaudit.records import LABELS, Case, Judgment
from citeaudit.report.render import answer_json
from citeaudit.parse.resolve import ResolvedCase, resolve
from citeaudit.run.log import RunLog, build_runlog
from citeaudit.run.repair import RepairOptions, Repairer, confidence
from citeaudit.run.results import ClaimRepair
from citeaudit.report.repairs import unrepaired_text
from citeaudit.desk.display import clip_text, fold_passage, preview
from citeaudit.desk.walkthroughs import WALKTHROUGHS, walkthrough_case
from citeaudit.text import content_language, majority_language

# How many cases the case picker lists, and how many queued claims a snapshot carries (the count is
# always whole): a run of 10,000 answers is browsed through the paged answers table instead.
MAX_PICKER_CASES = 500
MAX_QUEUE_ITEMS = 500
# The answers table's columns that sort, each a figure of the answer (its value; undefined ones last).
SORTABLE = ("case", "system", "claims", N.SUPPORT, N.CITATION_PRECISION, N.CITATION_RECALL, N.COVERAGE, "unsure")
OVERVIEW_MEASURES = (N.SUPPORT, N.CITATION_PRECISION, N.CITATION_RECALL, N.COVERAGE, N.CITATION_PRESENCE)
# Why a claim gets no suggestion when the search is not even needed.
NOTHING_TO_REPAIR = "nothing to repair: its citations support it, each earning precision credit"
NOT_JUDGED = "not judged: nothing to repair from"
SEVERAL_CLAIMS = ("this statement holds several claims, and its tick boxes set the statement's citations, not "
                  "one claim's: apply it by hand, or with citeaudit repair")
NOT_EDITABLE = "this answer's statements are not edited one by one here: apply it with citeaudit repair"


def _figures(ratios: dict[str, Any], measures: tuple[str, ...]) -> dict[str, Any]:
    """Each of `measures` as the page shows it: its counts, or, when the session's measures leave it out
    (a run scored with --metrics), the figure that says "not measured in this run"."""
    return {m: ratios[m].to_dict() if m in ratios else N.not_measured_json() for m in measures}


def natural_key(text: str) -> tuple:
    """Ids in the order people number them: case-2 before case-10 (digits compared as numbers)."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


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


@dataclass
class JudgeStatus:
    """Whether edits are judged live, and if not, why (shown in the page and sent by the API)."""

    live: bool
    note: str | None = None


def _queue_item(case_id: str, answer_id: str, claim: ClaimResult) -> dict[str, Any]:
    """One claim of the review queue: where it is, what it says and cites, and the judge's best guess."""
    scores = claim.judgment.scores or {}
    return {"case": case_id, "answer": answer_id, "statement": claim.statement, "id": claim.id,
            "claim": claim.index, "text": claim.text, "citations": claim.citations,
            "best_guess": claim.judgment.label, "p_support": scores.get("support"),
            "judge": claim.judgment.judge}


class SessionStore:
    """The judgments a session has used, in memory, in front of the judgment store (when one is given):
    a pair asked again (every snapshot, the export) is found by its request alone, without hashing
    its texts for the store's key again."""

    def __init__(self, backing=None):
        self.backing = backing
        self.path = getattr(backing, "path", "<desk session>")
        self._items: dict[tuple[str, Request], Judgment] = {}

    def get(self, request: Request, judge_signature: str) -> Judgment | None:
        found = self._items.get((judge_signature, request))
        if found is None and self.backing is not None:
            found = self.backing.get(request, judge_signature)
            if found is not None:
                self._items[(judge_signature, request)] = found
        return found

    def put(self, request: Request, judgment: Judgment) -> Judgment:
        kept = self.backing.put(request, judgment) if self.backing is not None else judgment
        self._items[(judgment.judge, request)] = kept
        return kept


def combine(reports: list[Report], settings: Settings) -> Report:
    """One report of several cases, from each case's own (scoring treats every case on its own)."""
    first = reports[0]
    cases = [rc for r in reports for rc in r.cases]
    return Report(cases, [a for r in reports for a in r.answers],
                  {k: v for r in reports for k, v in r.retrieval.items()}, first.judge_signature, settings,
                  first.parsing, cited_by_of(cases))


class _TakingTurns(Judgments):
    """Judgments whose judge is asked by one thread at a time: a suggestion's search judges outside the
    session's lock, beside requests that score, and a judge's caches are not made for two threads. What
    the memo or the store holds is read without waiting; a pair the judge must be asked waits for the
    judgment being made, never for the rest of a search."""

    def __init__(self, judge: Judge, store: SessionStore, turn: threading.Lock):
        super().__init__(judge, store)
        self.turn = turn

    def ask(self, request: Request) -> Judgment:
        with self.turn:
            return super().ask(request)


class DeskSession:
    def __init__(self, cases: list[Case], judge_spec: str | JudgeSpec = "curated", store_path: str | None = None,
                 settings: Settings = Settings(), source: str = "cases", judge: Judge | None = None,
                 recorded: MemoryStore | None = None, judge_status: JudgeStatus | None = None,
                 exercises: bool = False, repair: RepairOptions = RepairOptions()):
        if not cases:
            raise ValueError("the desk needs at least one case")
        self.source = source
        self.judge_spec = parse_judge(judge_spec)  # a bad spec is refused here, before anything is served
        self.settings = settings
        # Judgments outlive each request: the SQLite store when given, else memory (with a run log's
        # recorded judgments in it, when the desk was opened on one).
        self.store = SessionStore(JudgmentStore(store_path) if store_path else recorded)
        self.exercises = exercises  # the walkthrough page's own session: exercises load here only
        # The page's language: the one most answers were given in, as loaded (docs/desk.md)
        self.lang = majority_language(answer_language(a) for c in cases for a in c.answers)
        self._original = {c.id: c.model_dump(mode="json", exclude_none=True) for c in cases}
        self._models = {c.id: c for c in cases}  # as loaded: resolved without validating them again
        # A case is copied before it is changed (edits, reset), so the loaded form can be shared until then.
        self.cases: dict[str, dict[str, Any]] = dict(self._original)
        self.human: list[HumanLabel] = []
        self.walkthrough: str | None = None
        self._judge: Judge | None = judge  # given: used as is (e.g. replaying a run log)
        self._fixed_judge = judge is not None
        self.judge_status = judge_status or JudgeStatus(live=True)
        # Each case's version goes up with every change; its report and resolved form are kept per version.
        self._versions: dict[str, int] = dict.fromkeys(self.cases, 0)
        self._resolved_cache: dict[str, tuple[int, ResolvedCase]] = {}
        # case id -> (version and judge, its report, the judgments it used)
        self._reports: dict[str, tuple[tuple[int, str], Report, list[tuple[Request, Judgment]]]] = {}
        self._changes = 0  # changes to any case: the answers table is made again after one
        self._overview_cache: tuple[tuple[int, str], list[dict[str, Any]], list[dict[str, Any]]] | None = None
        self._unsure_cache: tuple[tuple[int, str], list[dict[str, Any]]] | None = None
        self._labels_version = 0  # the curated judge is made again only when the cases' labels change
        self._judge_made_at = -1
        self.export_progress: dict[str, Any] = {"running": False, "done": 0, "total": 0}
        # How far a suggested repair's search goes (run/repair.py), and the suggestions found so far:
        # case id -> (its version and judge, (answer, statement) -> suggestion)
        self.repair = repair
        self._suggestions: dict[str, tuple[tuple[int, str], dict[tuple[str, int], dict[str, Any]]]] = {}
        self.lock = threading.RLock()  # one request at a time changes or reads the session
        self.judging = threading.Lock()  # one thread at a time asks the judge (see _TakingTurns)

    # ---------------------------------------------------------------- scoring

    def _changed(self, case_id: str) -> None:
        self._versions[case_id] = self._versions.get(case_id, 0) + 1
        self._changes += 1

    def _resolved(self, case_id: str, data: dict[str, Any] | None = None) -> ResolvedCase:
        version = self._versions.get(case_id, 0)
        if data is None:
            cached = self._resolved_cache.get(case_id)
            if cached and cached[0] == version:
                return cached[1]
        source = self.cases[case_id] if data is None else data
        if data is None and version == 0 and case_id in self._models:
            case = self._models[case_id]
        else:
            try:
                case = Case.model_validate(source)
            except ValidationError as err:
                raise DeskError(422, "; ".join(map(str, validation_problems(err, f"case {case_id}")))) from None
        rc, problems = resolve(case)
        if problems:
            raise DeskError(422, "; ".join(f"{'.'.join(map(str, p))}: {m}" for p, m in problems))
        if data is None:
            self._resolved_cache[case_id] = (version, rc)
        return rc

    def judge(self) -> Judge:
        # The curated judge reads the labels of the cases now loaded; other judges load once.
        if not self._fixed_judge and (self._judge is None or (
                self.judge_spec.labels_only and self._judge_made_at != self._labels_version)):
            resolved = [self._resolved(cid) for cid in self.cases] if self.judge_spec.reads_cases else []
            self._judge = run_judge(self.judge_spec, resolved, self.settings.conventions)
            self._judge_made_at = self._labels_version
        return self._judge

    def _judgments(self, judge: Judge) -> Judgments:
        """What scoring and the search read: the session's store, and the judge asked by one thread at a time."""
        return _TakingTurns(judge, self.store, self.judging)

    def _refusal(self, err: JudgeError, what: str = "this edit is not applied") -> DeskError:
        why = f" {self.judge_status.note}" if self.judge_status.note else ""
        return DeskError(409, f"{err}.{why} The desk never guesses a score: {what}.")

    def score(self, case_id: str, data: dict[str, Any] | None = None) -> Report:
        """The case's report: kept until the case or the judge changes; `data` scores a proposed edit."""
        return self._scored(case_id, data)[0]

    def _scored(self, case_id: str, data: dict[str, Any] | None = None) -> tuple[Report, list[tuple[Request, Judgment]]]:
        judge = self.judge()
        key = (self._versions.get(case_id, 0), judge.signature)
        if data is None:
            cached = self._reports.get(case_id)
            if cached and cached[0] == key:
                return cached[1], cached[2]
        rc = self._resolved(case_id, data)
        judgments = self._judgments(judge)
        try:
            report = case_report(rc, judgments, self.settings)
        except JudgeError as err:
            raise self._refusal(err) from None
        if data is None:
            self._reports[case_id] = (key, report, judgments.recorded())
        return report, judgments.recorded()

    def _scored_or_none(self, case_id: str) -> Report | None:
        try:
            return self.score(case_id)
        except DeskError:
            return None  # edits that cannot be scored are refused, so only a case loaded that way lands here

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
        """Everything the app shows for one answer: passages, statements, judgments, checks, scores.
        Long texts come folded (see display.py): what the page shows stays small whatever the input."""
        case_id = case_id or next(iter(self.cases))
        data = self._case(case_id)
        answer_id = answer_id or (data["answers"][0]["id"] if data["answers"] else None)
        report = self.score(case_id)
        rc = report.cases[0]
        ranking = rc.case.ranking or []
        passages = [
            {"id": p.id, "doc": p.doc_id, "version": p.version, "title": clip_text(p.title or ""),
             **preview(p.text), "lang": content_language(p.text), "span": {"start": p.start, "end": p.end},
             "rank": ranking.index(p.doc_id) + 1 if p.doc_id in ranking else None}
            for p in rc.passages.values()
        ]
        answer = None
        if answer_id is not None:
            self._answer_index(case_id, answer_id)
            result = next(r for r in report.answers if r.answer_id == answer_id)
            answer = answer_json(report, result)
            answer["metrics"] = {m: N.not_measured_json() for m in N.ANSWER_MEASURES} | answer["metrics"]
            answer["lang"] = content_language(" ".join(st["text"] for st in answer["statements"]))
            for item in (*answer["statements"], *answer["claims"]):
                item["text"] = clip_text(item["text"])
            answer["inspector"] = [self._inspector(rc, st, [c for c in answer["claims"] if c["statement"] == st["index"]])
                                   for st in answer["statements"]]
        picker = list(self.cases.items())[:MAX_PICKER_CASES]
        if case_id not in dict(picker):
            picker.append((case_id, data))
        queue = self.review_queue()
        return {
            "source": self.source,
            "lang": self.lang,
            "judge": report.judge_signature,
            "judge_status": self.judge_status.__dict__,
            "exercises": self.exercises,
            "cases": [{"id": cid, "question": clip_text(c["question"], 200)} for cid, c in picker],
            "case_count": len(self.cases),
            "answer_count": sum(len(c["answers"]) for c in self.cases.values()),
            # the version goes up with every change to the case: a suggestion is kept for one version
            "case": {"id": case_id, "version": self._versions.get(case_id, 0),
                     "question": clip_text(data["question"]), "lang": content_language(data["question"]),
                     "answers": [{"id": a["id"], "system": a.get("system") or a["id"]} for a in data["answers"]]},
            "passages": passages,
            "retrieval": {n: {**r.to_dict(), "signature": report.signature(n)} for n, r in report.retrieval[case_id].items()},
            "answer": answer,
            "walkthrough": self.walkthrough_info(),
            "human": [{**h.__dict__, "text": clip_text(h.text)} for h in self.human
                      if h.case == case_id and h.answer == answer_id],
            "agreement": self.agreement(),
            "queue": {"count": queue["count"], "items": queue["items"][:MAX_QUEUE_ITEMS]},
            "labels": list(LABELS),
        }

    @staticmethod
    def _inspector(rc: ResolvedCase, st: dict[str, Any], claims: list[dict[str, Any]]) -> dict[str, Any]:
        """The statement and check objects the inspector shows (and prints as JSON), passages folded
        around the evidence spans of the statement's and its claims' judgments."""
        judged = [st.get("judgment"), *(c.get("judgment") for c in claims)]
        spans = [j["evidence"] for j in judged if j and j.get("evidence")]
        cited = [rc.passages[p] for p in st["citations"]]
        return {
            "statement": {"id": st["id"], "text": st["text"], "citations": st["citations"]},
            "citedPassages": [{"id": p.id, **fold_passage(p.text, [s for s in spans if s.get("passage") == p.id],
                                                          quotes=[st["text"], *(c["text"] for c in claims)]),
                               "version": p.version, "span": {"start": p.start, "end": p.end}} for p in cited],
            "check": {
                "statementId": st["id"],
                "citations": st["citations"],
                "citedSetSupports": st["cited_set_supports"],
                "citationChecks": st["citation_checks"],
            },
        }

    # ---------------------------------------------------------------- the whole run at a glance

    def _answer_rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Every answer's row of the answers table, and the figures per system; made again only after a
        change (an edit, a reset, another judge), so sorting and paging a large run costs no scoring."""
        key = (self._changes, self.judge().signature)
        if self._overview_cache and self._overview_cache[0] == key:
            return self._overview_cache[1], self._overview_cache[2]
        rows = []
        sums: dict[str, dict[str, Any]] = {}
        for case_id in self.cases:
            report = self._scored_or_none(case_id)
            if report is None:
                continue
            for r in report.answers:
                ratios = r.ratios()
                labels = r.label_counts()
                rows.append({"case": case_id, "answer": r.answer_id, "system": r.system, "claims": len(r.claims),
                             "labels": labels, "unsure": labels.get("uncertain", 0),
                             **_figures(ratios, OVERVIEW_MEASURES)})
                group = sums.setdefault(r.system, {"answers": 0, "labels": {}, "ratios": {}})
                group["answers"] += 1
                for label, n in labels.items():
                    group["labels"][label] = group["labels"].get(label, 0) + n
                for m in OVERVIEW_MEASURES:
                    if m in ratios:  # summed counts, as Report.summary sums them
                        group["ratios"][m] = group["ratios"][m] + ratios[m] if m in group["ratios"] else ratios[m]
        summary = [{"system": name, "answers": g["answers"], "labels": g["labels"],
                    **_figures(g["ratios"], OVERVIEW_MEASURES)} for name, g in sorted(sums.items())]
        self._overview_cache = (key, rows, summary)
        return rows, summary

    def overview(self, offset: int = 0, limit: int = 50, sort: str = "case", descending: bool = False,
                 system: str | None = None, label: str | None = None, text: str | None = None) -> dict[str, Any]:
        """The run at a glance: figures per system (summed counts), then one page of the answers table,
        filtered (system, a label some claim has, text in the case id or question) and sorted."""
        if sort not in SORTABLE:
            raise DeskError(422, f"sort: one of {', '.join(SORTABLE)}, not '{clip_text(sort, 60)}'")
        if label is not None and label not in (*LABELS, "uncertain", "unjudged"):
            raise DeskError(422, f"label: one of {', '.join(LABELS)}, uncertain, unjudged")
        rows, summary = self._answer_rows()
        shown = rows
        if system:
            shown = [r for r in shown if r["system"] == system]
        if label:
            shown = [r for r in shown if r["labels"].get(label)]
        if text:
            needle = text.lower()
            shown = [r for r in shown if needle in r["case"].lower() or needle in self.cases[r["case"]]["question"][:2000].lower()]
        if sort in ("case", "system"):
            shown = sorted(shown, key=lambda r: (natural_key(r[sort] or ""), natural_key(r["answer"])),
                           reverse=descending)
        elif sort in ("claims", "unsure"):
            shown = sorted(shown, key=lambda r: r[sort], reverse=descending)
        else:
            defined = [r for r in shown if r.get(sort) and r[sort]["value"] is not None]
            undefined = [r for r in shown if not (r.get(sort) and r[sort]["value"] is not None)]
            shown = sorted(defined, key=lambda r: r[sort]["value"], reverse=descending) + undefined
        page = [{**r, "question": clip_text(self.cases[r["case"]]["question"], 160)} for r in shown[offset:offset + limit]]
        return {"summary": summary, "systems": [g["system"] for g in summary], "total": len(rows), "matching": len(shown),
                "offset": offset, "limit": limit, "rows": page}

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
        self._changed(case_id)
        return self.snapshot(case_id, answer_id)

    def suggestion(self, case_id: str, answer_id: str, index: int) -> dict[str, Any]:
        """What `citeaudit repair` proposes for each claim of one statement (run/repair.py), searched for
        when first asked, within the session's repair options, and kept until the case or the judge
        changes: the desk searches for the statement a reviewer selects, never for the whole run. The
        search's judgments go to the session's store, as every other judgment of the desk.

        The search runs outside the session's lock, which it takes only to read the scored case and to keep
        what it found: it can judge for seconds (a model judge on a long passage, up to the options'
        budget), and meanwhile every other request is answered. A search whose case changed meanwhile
        answers for the version it was made for, and is not kept.

        `citations` is what the statement cites once the suggestion is applied: the reviewer's page sends
        it as an edit, exactly as the tick boxes do. None when nothing is proposed, or when the edit path
        cannot apply it (`not_applied` says why)."""
        with self.lock:
            self._answer_index(case_id, answer_id)
            report = self.score(case_id)
            judge = self.judge()
            made_for = (self._versions.get(case_id, 0), judge.signature)
            where = {"case": case_id, "answer": answer_id, "statement": index, "version": made_for[0]}
            kept = self._suggestions.get(case_id)
            if kept and kept[0] == made_for and (answer_id, index) in kept[1]:
                return {**where, **kept[1][(answer_id, index)]}
            result = next(r for r in report.answers if r.answer_id == answer_id)
            if not any(st.index == index for st in result.statements):
                raise DeskError(404, f"no statement {index} in answer '{answer_id}'")
            statements = self._case(case_id)["answers"][self._answer_index(case_id, answer_id)]["statements"]
            editable = index < len(statements) and "claims" not in statements[index]
            options = self.repair
        found = self._suggest(report, result, index, self._judgments(judge), options, editable)
        with self.lock:
            if (self._versions.get(case_id, 0), self.judge().signature) == made_for:  # still the case as searched
                kept = self._suggestions.get(case_id)
                if not kept or kept[0] != made_for:
                    kept = self._suggestions[case_id] = (made_for, {})
                kept[1][(answer_id, index)] = found
        return {**where, **found}

    def _suggest(self, report: Report, result: AnswerResult, index: int, judgments: Judgments,
                 options: RepairOptions, editable: bool) -> dict[str, Any]:
        """The suggestion of one statement, from the scored case alone (no session state: see `suggestion`)."""
        rc = report.cases[0]
        try:
            found = Repairer(judgments, options).statement(rc, result, index)
        except JudgeError as err:
            raise self._refusal(err, "no repair is suggested") from None
        claims = [_suggested(rc, c, found[c.index]) for c in result.claims if c.statement == index]
        offered = [c["suggested"] for c in claims if c["suggested"] is not None]
        why_not = None
        if offered and len(claims) > 1:
            why_not = SEVERAL_CLAIMS
        elif offered and not editable:
            why_not = NOT_EDITABLE
        return {"options": options.render(), "claims": claims,
                "citations": offered[0] if offered and why_not is None else None, "not_applied": why_not}

    # ---------------------------------------------------------------- walkthroughs

    def load_walkthrough(self, name: str, variant: str | None = None) -> dict[str, Any]:
        if not self.exercises:
            raise DeskError(404, "the exercises have their own page, /walkthrough: they never load into your cases")
        if name not in WALKTHROUGHS:
            raise DeskError(404, f"no walkthrough '{name}'; walkthroughs: {', '.join(WALKTHROUGHS)}")
        variants = WALKTHROUGHS[name].variants
        if variant is not None and variant not in variants:
            known = f"its setups: {', '.join(variants)}" if variants else "it has no setups"
            raise DeskError(404, f"no setup '{variant}' of walkthrough '{name}'; {known}")
        case = walkthrough_case(name, variant)
        self._original[case["id"]] = case
        self.cases = {case["id"]: copy.deepcopy(case), **{k: v for k, v in self.cases.items() if k != case["id"]}}
        self._changed(case["id"])
        self._labels_version += 1
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
        self._changed(case_id)

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
        from citeaudit.run.agree import DESK_MIN_PAIRS, claims_of_report, compare
        from citeaudit.files.labelled import Row

        claims, rows = [], []
        for case_id in dict.fromkeys(h.case for h in self.human):  # score each reviewed case once
            if case_id not in self.cases:
                continue
            report = self._scored_or_none(case_id)
            if report is None:
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
                "min_pairs": DESK_MIN_PAIRS, "confusion": figures["confusion"] if figures["n"] else None}

    def review_queue(self) -> dict[str, Any]:
        """The claims awaiting a person, across every loaded case: those whose judgment is uncertain (the
        judge's score fell in its uncertain band, or a `cascade:...,human` left them) and that no one has
        labelled yet, in case, answer and claim order."""
        labelled = {(h.case, h.answer, h.statement, h.claim, h.text, tuple(h.citations)) for h in self.human}
        key = (self._changes, self.judge().signature)
        if not (self._unsure_cache and self._unsure_cache[0] == key):
            self._unsure_cache = (key, [item for case_id in self.cases for item in self._unsure_claims(case_id)])
        items = [item for item in self._unsure_cache[1]
                 if (item["case"], item["answer"], item["statement"], item["claim"], item["text"],
                     tuple(item["citations"])) not in labelled]
        return {"count": len(items), "items": items}

    def _unsure_claims(self, case_id: str) -> list[dict[str, Any]]:
        """The case's claims the judge is unsure of, as queue items; none when the case cannot be scored."""
        report = self._scored_or_none(case_id)
        if report is None:
            return []
        return [_queue_item(case_id, r.answer_id, c) for r in report.answers for c in r.claims
                if c.judgment is not None and c.judgment.uncertain]

    # ---------------------------------------------------------------- export

    def export(self, progress: Callable[[int, int], None] | None = None) -> RunLog:
        """A run log of the current state, with human labels as judgments of `human:REVIEWER`. Each case's
        report and the judgments it used are the session's own (a case is scored again only if it changed
        since): nothing is judged twice. `progress(done, total)` is told after each case."""
        from citeaudit.run.log import JudgmentRecord

        case_ids = list(self.cases)
        reports, used = [], {}
        for done, case_id in enumerate(case_ids, 1):
            report, pairs = self._scored(case_id)
            reports.append(report)
            used.update(pairs)  # the log records each pair once, as one scoring run would
            if progress:
                progress(done, len(case_ids))
        # the spec only when the judge was built from it (a replayed run's judge is known by its signature)
        spec = self.judge_spec if self.judge_status.live else None
        log = build_runlog(combine(reports, self.settings), _Used(self.judge().signature, used, spec))
        by_case = {r.cases[0].id: r.cases[0] for r in reports}
        for h in self.human:
            rc = by_case.get(h.case)
            if rc is None:
                continue
            log.judgments.append(JudgmentRecord(
                text=h.text, passages=[rc.passages[p].identity() for p in h.citations if p in rc.passages],
                judgment=Judgment(label=h.label, judge=f"human:{h.reviewer}", explanation=h.note or None)))
        return log


def _suggested(rc: ResolvedCase, claim: ClaimResult, found: ClaimRepair | None) -> dict[str, Any]:
    """One claim's suggestion as the inspector shows it: the action and its note ("cite S1 instead of S2"),
    each passage of the proposed set (with its version and span, folded as a cited passage is, around the
    judgment's evidence span), and the judge's label with its confidence; or why nothing is proposed. A
    review ("review S1: the judge is unsure…") shows its passages and judgment the same way, with nothing
    to apply (`suggested` None)."""
    item = {"claim": claim.index, "id": claim.id, "text": clip_text(claim.text), "cites": claim.citations,
            "label": claim.label, "suggested": None}
    if found is None:
        return {**item, "action": None, "note": NOT_JUDGED if claim.judgment is None else NOTHING_TO_REPAIR}
    item |= {"action": found.action, "searched": found.searched, "skipped": found.skipped, "unsure": found.unsure}
    if found.judgment is None:
        return {**item, "note": unrepaired_text(found)}
    judgment = found.judgment.model_dump(mode="json")
    spans = [judgment["evidence"]] if judgment.get("evidence") else []
    evidence = [{"id": ref.id, "doc": ref.doc, "version": ref.version, "span": {"start": ref.span[0], "end": ref.span[1]},
                 **fold_passage(rc.passages[ref.id].text, [s for s in spans if s["passage"] == ref.id],
                                quotes=[claim.text])}
                for ref in found.evidence]
    return {**item, "note": found.note, "suggested": found.suggested, "evidence": evidence, "judgment": judgment,
            "confidence": confidence(found.judgment)}


@dataclass
class _Used:
    """The judgments a set of reports used, as `build_runlog` reads a judgment source."""

    signature: str
    pairs: dict[Request, Judgment]
    spec: JudgeSpec | None = None

    def recorded(self) -> list[tuple[Request, Judgment]]:
        return list(self.pairs.items())


def answer_language(answer) -> str:
    """The language an answer is in: of its raw text, else of its statements."""
    return content_language(answer.text or " ".join(st.text for st in answer.statements))

