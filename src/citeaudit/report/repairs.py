"""A repair (run/repair.py) shown: each claim's suggestion with its evidence and judgment, what the search
read, and each system's figures before and after, with their counts."""

from __future__ import annotations

from typing import Any

from citeaudit.metrics import names as N
from citeaudit.metrics.ratio import Ratio
from citeaudit.run.repair import NONE_FOUND, Repaired, confidence, place
from citeaudit.run.results import ClaimRepair

# What the figures before and after show, per system.
MEASURES = (N.CITATION_RECALL, N.CITATION_PRECISION, N.SUPPORT, N.COVERAGE)
ACTION_NAMES = {"replace": "cite instead", "add": "add", "drop": "drop"}
LEFT_FOR = "left as it is, a job for the retriever or the writer"
NOT_APPLIED = "nothing applied: a person reads it and decides"


def claim_name(claim: Any) -> str:
    """A claim as people find it: its id, else its place ("statement 2, claim 1", counted from 1)."""
    return claim.id or f"statement {claim.statement + 1}, claim {claim.index + 1}"


def _unrepaired(repair: ClaimRepair) -> str:
    """Why a claim has no suggestion, and what that leaves to do."""
    return f"{repair.note} — {LEFT_FOR}" if repair.note == NONE_FOUND else repair.note


def repair_line(repair: ClaimRepair) -> str:
    """One line for a claim's detail: what was done, from what, and the judge's verdict on it."""
    cited = ", ".join(repair.original) or "nothing"
    if repair.action == "review":
        return f"{repair.note} (it cites {cited}: {repair.label}); judged {confidence(repair.judgment)}; {NOT_APPLIED}"
    if repair.suggested is None:
        return f"{_unrepaired(repair)} (it cites {cited}: {repair.label})"
    return f"{repair.note} (it cited {cited}: {repair.label}); the judge finds the new set {confidence(repair.judgment)}"


def unrepaired_text(repair: ClaimRepair) -> str:
    """Why a claim has no suggestion, what that leaves to do, and the candidate sets passed over (the
    report's line, and the desk's)."""
    counted = [f"{repair.skipped} without a label or recorded judgment, skipped" if repair.skipped else "",
               f"{repair.unsure} the judge was unsure of, not applied" if repair.unsure else ""]
    counted = [c for c in counted if c]
    return _unrepaired(repair) + (f" (candidate sets: {'; '.join(counted)})" if counted else "")


def _repair_lines(repair: ClaimRepair) -> list[str]:
    if repair.judgment is None:  # nothing proposed, nothing to review
        return [unrepaired_text(repair)]
    lines = [repair.note + (f" ({NOT_APPLIED})" if repair.action == "review" else "")]
    for ref in repair.evidence:
        lines.append(f"  {place(ref.id, ref.doc, ref.version, ref.span[0], ref.span[1])}")
    why = f" — {repair.judgment.explanation}" if repair.judgment.explanation else ""
    lines.append(f"  judged {confidence(repair.judgment)}{why}")
    return lines


def _answers(repaired: Repaired) -> dict[tuple[str, str], tuple[str, dict[tuple[int, int], Any]]]:
    """Each answer's system and its claims by (statement, claim) position, as scored before the repair."""
    return {(r.case_id, r.answer_id): (r.system, {(c.statement, c.index): c for c in r.claims})
            for r in repaired.before.answers}


def _figures(repaired: Repaired) -> dict[str, tuple[dict[str, Ratio], dict[str, Ratio]]]:
    """Each system's summary before and after the repair."""
    before, after = repaired.before.by_system(), repaired.after.by_system()
    return {system: (repaired.before.summary(before[system]), repaired.after.summary(results))
            for system, results in after.items()}


def _figure_lines(repaired: Repaired) -> list[str]:
    width = max(len(m) for m in MEASURES)
    lines = ["Figures before → after, per system (counts summed over its answers):"]
    for system, (was, now) in _figures(repaired).items():
        lines.append(system)
        shown = [(m, _shown(was.get(m)), _shown(now.get(m))) for m in MEASURES if m in was or m in now]
        left = max(len(b) for _, b, _ in shown)
        lines += [f"  {m:<{width}}  {b:<{left}}  →  {a}" for m, b, a in shown]
    return lines


def _shown(ratio: Ratio | None) -> str:
    return "—" if ratio is None else str(ratio)


def render_repairs(repaired: Repaired, judge: str, every_signature: bool = False) -> str:
    """The repair as text for a terminal: every repair, grouped by answer; the counts; the figures; under
    them the settings their signatures share (the judge is in the heading), or with `every_signature`
    each figure's whole signature."""
    lines = [f"Repairs (judge {judge}; {repaired.options.render()})", ""]
    answers = _answers(repaired)
    for (case, answer), found in repaired.repairs.items():
        system, by_place = answers[(case, answer)]
        lines.append(f"{case} / {answer} ({system})")
        for at, repair in found.items():
            claim = by_place[at]
            cited = ", ".join(repair.original) or "nothing"
            lines.append(f"  {claim_name(claim)}: {claim.text!r} cites {cited}: {repair.label}")
            lines += [f"    {line}" for line in _repair_lines(repair)]
    if not repaired.repairs:
        lines.append("No claim needs a repair: every claim's citations support it, each earning precision credit.")
    actions = repaired.actions()
    proposed = sum(actions[a] for a in ACTION_NAMES)
    kinds = ", ".join(f"{ACTION_NAMES[a]} {actions[a]}" for a in ACTION_NAMES if actions[a])
    lines += ["", f"claims: {proposed} with a suggestion{f' ({kinds})' if kinds else ''}; "
                  f"{actions['none_found']} with no supporting passage found; "
                  f"{actions['budget_spent']} not searched (budget spent); "
                  f"{actions['review']} to review (the judge is not sure: nothing applied)",
              f"search: {repaired.searched} judgments read of a budget of {repaired.options.budget}; candidate "
              f"sets: {repaired.skipped} without a label or recorded judgment, skipped (never guessed); "
              f"{repaired.unsure} the judge was unsure of (never applied)",
              f"judge: asked {repaired.asked} new pair{'s' if repaired.asked != 1 else ''}, scoring before and "
              "after included (the rest were read from the run log, --store or memory)", ""]
    lines += _figure_lines(repaired)
    if every_signature:
        lines += ["", "signatures:"] + [f"  {m}: {repaired.after.signature(m)}" for m in MEASURES]
    else:
        lines += ["", f"settings: {repaired.after.run_signature.settings(list(MEASURES))} "
                      "(each measure's whole signature: --signatures)"]
    return "\n".join(lines) + "\n"


def repairs_json(repaired: Repaired, judge: str) -> dict[str, Any]:
    """The repair as JSON: every repair record with where its claim is, the counts, the figures."""
    answers = _answers(repaired)
    records = []
    for (case, answer), found in repaired.repairs.items():
        system, by_place = answers[(case, answer)]
        for (statement, index), repair in found.items():
            claim = by_place[(statement, index)]
            records.append({"case": case, "answer": answer, "system": system, "statement": statement,
                            "claim": index, "id": claim.id, "text": claim.text,
                            **repair.model_dump(mode="json")})
    figures = {system: {"before": {m: r.to_dict() for m, r in was.items() if m in MEASURES},
                        "after": {m: r.to_dict() for m, r in now.items() if m in MEASURES}}
               for system, (was, now) in _figures(repaired).items()}
    return {"judge": judge, "options": repaired.options.render(), "repairs": records,
            "actions": dict(repaired.actions()),
            "search": {"read": repaired.searched, "budget": repaired.options.budget, "skipped": repaired.skipped,
                       "unsure": repaired.unsure},
            "asked": repaired.asked, "figures": figures}
