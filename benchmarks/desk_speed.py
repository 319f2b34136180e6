"""How the desk keeps up with a real run: the time to open a session, the first page (every case judged
once), a click on another answer, an edit, a statement's suggested repair (searched when it is selected),
one page of the answers table, and the export, on generated answers judged by the curated judge.

    python benchmarks/desk_speed.py [--answers 1000] [--model]

The export is measured two ways in the same run, side by side: as the desk does it (each case's report
and judgments kept from the session) and by scoring every case again with a fresh judgment source (as
the desk did before). With --model, the shipped model judge judges instead (its judgments cost far
more, which is where scoring again hurt most).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import make_case  # noqa: E402


def timed(what: str, step, results: dict[str, float]):
    start = time.perf_counter()
    value = step()
    results[what] = time.perf_counter() - start
    print(f"{what:44} {results[what]:8.3f} s")
    return value


def export_by_scoring_again(session):
    """The export as the desk made it before: every case scored again with a fresh judgment source."""
    from citeaudit.judges import Judgments
    from citeaudit.metrics import score_cases
    from citeaudit.run.log import build_runlog

    cases = [session._resolved(case_id) for case_id in session.cases]
    judgments = Judgments(session.judge())
    return build_runlog(score_cases(cases, judgments, session.settings), judgments)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=1000, help="answers in the run (two per case)")
    parser.add_argument("--model", action="store_true", help="judge with the shipped model judge")
    args = parser.parse_args()

    from citeaudit.desk import DeskSession
    from citeaudit.records import Case

    cases = []
    for i in range(max(1, args.answers // 2)):
        case = make_case(i)
        case["answers"].append({**case["answers"][0], "id": "a2", "system": "other",
                                "statements": case["answers"][0]["statements"][:3]})
        cases.append(Case.model_validate(case))
    answers = sum(len(c.answers) for c in cases)
    judge = "model" if args.model else "curated"
    print(f"{answers} answers in {len(cases)} cases, judge {judge}")
    results: dict[str, float] = {}
    session = timed("open the session", lambda: DeskSession(cases, judge), results)
    timed("first page (every case judged once)", lambda: session.snapshot(), results)
    timed("a click on another case", lambda: session.snapshot(cases[len(cases) // 2].id), results)
    timed("an edit (that case scored again)",
          lambda: session.edit_statement(cases[0].id, "a1", 0, citations=["D1"]), results)
    timed("a statement's suggested repair, searched",
          lambda: session.suggestion(cases[len(cases) // 2].id, "a1", 0), results)
    timed("a page of the answers table, sorted", lambda: session.overview(sort="support", descending=True), results)
    kept = timed("export, with the session's judgments", lambda: session.export(), results)
    again = timed("export, every case scored again", lambda: export_by_scoring_again(session), results)
    assert kept.results == again.results, "both exports must hold the same figures"
    ratio = results["export, every case scored again"] / results["export, with the session's judgments"]
    print(f"{'export: scoring again / kept':44} {ratio:8.2f} x")


if __name__ == "__main__":
    main()
