"""The desk on real-shaped data, in a real headless chromium: the documented command with a judgment store,
a run log (its judge made again for edits), text far too long to show whole, and a generated run of
10,000 answers. Screenshots go to test-output/desk/."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("playwright")
from playwright.sync_api import expect  # noqa: E402

from test_desk_browser import cite, figures, open_page, serve, settled  # noqa: E402

from citeaudit.cli import desk_session, main  # noqa: E402
from citeaudit.judges import JudgmentStore  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from synthetic import make_case  # noqa: E402


SCREENSHOTS = "desk"  # screenshots go to test-output/desk/ (the `shots` fixture)


@pytest.fixture
def examples(tmp_path, runner):
    assert runner.invoke(main, ["examples", "--write", str(tmp_path)]).exit_code == 0
    return tmp_path


def page_width_is_bounded(page) -> None:
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths


def test_the_documented_command_with_a_store(chromium, examples, shots):
    # citeaudit desk cases.json --judge model --store desk.db: every request is served on a worker thread
    store = examples / "desk.db"
    session = desk_session([str(examples / "returns_desk.json")], "model", str(store))
    with serve(session) as url, open_page(chromium, url) as page:
        expect(page.locator("#source")).to_contain_text("judge model:")
        page.click("#st-0")
        cite(page, "S1", True)
        expect(page.locator("#message")).to_be_hidden()
        expect(page.locator("#inspector-citations")).to_have_text("S2, S1")
        page.reload()  # a new page, new requests, other threads: the same store
        page.wait_for_selector("body[data-ready=true]")
        expect(page.locator("#summary-table")).to_be_visible()
        page.screenshot(path=str(shots / "store.png"), full_page=True)
    rows = len(JudgmentStore(store, create=False))
    assert rows > 0  # the judgments were recorded in the store


def test_the_desk_on_a_run_log_judges_edits_with_the_runs_judge(chromium, examples, runner, shots):
    run = examples / "run.json"
    assert runner.invoke(main, ["score", str(examples / "returns_desk.json"), "--out", str(run)]).exit_code == 0
    with serve(desk_session([str(run)])) as url, open_page(chromium, url) as page:
        expect(page.locator("#judge-note")).to_contain_text("judged live by the run's judge")
        page.select_option("#answer-select", "original")
        figures(page, "2/4", "2/3")
        page.click("#st-0")
        cite(page, "S2", False)
        cite(page, "S1", True)
        figures(page, "3/4", "3/3")  # C1 citing S1: a pair the run never judged, judged now
        # the exercises live on their own page; the user's page has none of them
        expect(page.locator("#walkthrough-bar")).to_be_hidden()
        expect(page.locator("#exercises-link")).to_have_attribute("href", "/walkthrough")
        page.screenshot(path=str(shots / "run-log.png"), full_page=True)


def test_a_run_log_whose_judge_cannot_be_made_says_so(chromium, examples, shots):
    from citeaudit.judges import Judgments, make_judge
    from citeaudit.files.loading import load_cases
    from citeaudit.metrics import score_cases
    from citeaudit.run.log import build_runlog, write_runlog

    cases = load_cases([str(examples / "returns_desk.json")])
    judge = make_judge("curated", cases)
    judge.signature = "openai:gpt-4o-mini@1#0123456789ab|base=api.example.com"  # as a remote judge signs
    judgments = Judgments(judge)
    report = score_cases(cases, judgments)
    log = build_runlog(report, judgments)
    for record in log.judgments:
        record.judgment = record.judgment.model_copy(update={"judge": judge.signature})
    write_runlog(examples / "remote.json", log)
    with serve(desk_session([str(examples / "remote.json")])) as url, open_page(chromium, url) as page:
        note = page.locator("#judge-note")
        expect(note).to_contain_text("remote judge")
        expect(note).to_contain_text("--judge SPEC")
        page.select_option("#answer-select", "original")
        page.click("#st-0")
        page.click("#cite-S5")  # C1 citing S2 and S5: no answer of the run cites that
        settled(page)
        expect(page.locator("#cite-S5")).not_to_be_checked()  # refused: back as the server has it
        expect(page.locator("#message")).to_contain_text("no recorded judgment")
        expect(page.locator("#message")).to_contain_text("--judge SPEC")
        page.screenshot(path=str(shots / "run-log-replay-only.png"), full_page=True)


def test_a_1_mb_passage_and_a_20_mb_question_stay_responsive(chromium, tmp_path, shots):
    from citeaudit.desk import DeskSession
    from citeaudit.records import Case

    evidence = "Returns are accepted within 30 days."
    passage = "lorem" * 100_000 + " " + evidence + " " + "ipsum" * 100_000  # 1 MB, no break for 500 kB
    case = Case.model_validate({
        "id": "huge", "question": "Q" * 20_000_000,
        "sources": [{"id": "S1", "text": passage}, {"id": "S2", "text": "A receipt is required."}],
        "answers": [{"id": "a", "statements": [{"id": "C1", "text": evidence, "citations": ["S1"]}]}],
        "labels": [{"claim": evidence, "passages": ["S1"], "label": "full"},
                   {"claim": evidence, "passages": ["S2"], "label": "none"},
                   {"claim": evidence, "passages": ["S1", "S2"], "label": "full"}]})
    with serve(DeskSession([case])) as url, open_page(chromium, url) as page:
        page_width_is_bounded(page)
        page.click("#st-0")
        expect(page.locator("#inspector-title")).to_contain_text("C1")
        cite(page, "S2", True)
        expect(page.locator("#inspector-citations")).to_have_text("S1, S2")
        passage_el = page.locator("#cited-S1 blockquote")
        expect(passage_el).to_contain_text("characters folded")
        expect(passage_el).to_contain_text(evidence)  # folded around where the statement's words are
        assert len(passage_el.text_content()) < 25_000
        expect(page.locator("#question")).to_contain_text("more characters not shown")
        page_width_is_bounded(page)
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height < 20_000, height
        page.screenshot(path=str(shots / "long-text.png"))


@pytest.mark.slow
def test_a_run_of_10000_answers(chromium, tmp_path, shots):
    # 5,000 generated cases, two systems answering each: 10,000 answers, judged by the curated judge
    from citeaudit.desk import DeskSession
    from citeaudit.records import Case

    cases = []
    for i in range(5000):
        case = make_case(i)
        case["answers"].append({**case["answers"][0], "id": "a2", "system": "other",
                                "statements": case["answers"][0]["statements"][:3]})
        cases.append(Case.model_validate(case))
    session = DeskSession(cases, source="10,000 generated answers")
    with serve(session) as url:
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        try:
            page = context.new_page()
            page.goto(url)
            page.wait_for_selector("body[data-ready=true]", timeout=300_000)
            summary = page.locator("#summary-table")
            expect(summary).to_be_visible()
            box = summary.bounding_box()
            assert box["y"] + box["height"] <= 900, box  # in view as the page opens
            expect(page.locator("#overview-heading")).to_have_text("The run at a glance: 10,000 answers")
            expect(summary.locator("tbody tr")).to_have_count(2)
            rows = page.locator("#answers-table tbody tr")
            expect(rows).to_have_count(25)  # one page, not 10,000 rows
            expect(page.locator("#page-info")).to_have_text("answers 1–25 of 10,000")
            page.screenshot(path=str(shots / "10k-open.png"))

            page.click("#sort-support")  # ascending, then descending
            expect(page.locator("#answers-table th[aria-sort=ascending]")).to_contain_text("Support")
            page.click("#sort-support")
            expect(page.locator("#answers-table th[aria-sort=descending]")).to_contain_text("Support")
            shown = [t.split(" ")[0] for t in page.locator("#answers-table td[data-measure=support]").all_text_contents()]
            values = [int(n) / int(d) for n, d in (s.split("/") for s in shown if "/" in s)]
            best = max(a.ratios()["support"].value or 0 for c in session.cases for a in session.score(c).answers)
            assert values == sorted(values, reverse=True) and len(values) == 25 and values[0] == pytest.approx(best)

            page.select_option("#filter-system", "other")
            expect(page.locator("#answers-count")).to_have_text("(5,000 of 10,000 match)")
            assert set(page.locator("#answers-table tbody td:nth-child(2)").all_text_contents()) == {"other"}
            page.click("#page-next")
            expect(page.locator("#page-info")).to_have_text("answers 26–50 of 5,000")

            first = page.locator("#answers-table tbody tr").first
            case_id = first.get_attribute("data-case")
            first.locator("button.link").click()
            expect(page.locator("#case-select")).to_have_value(case_id)
            expect(page.locator("#answer-select")).to_have_value("a2")

            height = page.evaluate("document.documentElement.scrollHeight")
            assert height < 5_000, height  # bounded: no element per answer

            # the export of 10,000 answers takes a while: the page says how far it has got meanwhile
            with page.expect_download(timeout=300_000) as download:
                page.click("#export")
                expect(page.locator("#export-text")).to_contain_text("Exporting")
                expect(page.locator("#export")).to_be_disabled()
            # the page says so once the download is handed over (no late progress poll writes over it)
            expect(page.locator("body")).to_have_attribute("data-exported", "true", timeout=300_000)
            expect(page.locator("#export-text")).to_contain_text("Run log exported")
            log = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
            assert len(log["results"]["answers"]) == 10_000 and len(log["cases"]) == 5000
            assert page.locator("#case-select option").count() <= 502
            page_width_is_bounded(page)
            page.screenshot(path=str(shots / "10k-sorted-filtered.png"), full_page=True)
        finally:
            context.close()
