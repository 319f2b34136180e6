"""The HTML report of a generated run of 10,000 answers (two systems, about 45,000 claims) in a real headless
chromium: the summary is in view on load, the answers table names the worst answers, sorts, filters,
pages and opens an answer's claims, the claims table sorts, filters and pages, the document stays
short, hostile text in a question, claim, passage and id stays text. Screenshots go to
test-output/report/."""

from __future__ import annotations

import pytest

from citeaudit.report.html import render_html
from citeaudit.report.render import worst_answers

from report_run import shaped_run

pytest.importorskip("playwright")

ANSWERS = 10_000
XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
VIEWPORT = {"width": 1280, "height": 900}
HEIGHT_CEILING = 7_000  # px: summary, charts, diagnosis, a page of 25 answers and of 50 claims, whatever the run's size
ANSWERS_PAGE = 25  # answers a page of the answers table shows

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    log = shaped_run(folder / "cases.jsonl", ANSWERS, hostile=XSS)
    path = folder / "report.html"
    path.write_text(render_html(log), encoding="utf-8")
    return log, path


SCREENSHOTS = "report"  # screenshots go to test-output/report/ (the `shots` fixture)


@pytest.fixture
def page(chromium, big):
    context = chromium.new_context(viewport=VIEWPORT)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(big[1].as_uri())
    page.wait_for_selector("body[data-ready=true]", timeout=60_000)
    yield page
    context.close()
    assert errors == [], errors


def _column(page, n: int) -> list[str]:
    return page.locator(f"#claims-table tr.row td:nth-child({n})").all_inner_texts()


def _expected_rows(log, system=None, label=None) -> int:
    """Rows the table should show, counted from the log's records."""
    n = 0
    for a in log.results.answers:
        if system and a.system != system:
            continue
        for c in a.claims:
            shown = "unjudged" if c.judgment is None else "uncertain" if c.judgment.uncertain else c.judgment.label
            n += label is None or shown == label
        if label is None:
            n += sum(f.kind == "fact" for f in log.diagnosis[f"{a.case}/{a.answer}"])
    return n


def test_the_summary_is_in_view_on_load_and_the_page_stays_short(big, page, shots):
    log, _ = big
    assert len(log.results.answers) == ANSWERS
    page.screenshot(path=str(shots / "report-10k-top.png"))
    summary = page.locator("table.summary").first.bounding_box()
    assert summary is not None and summary["y"] + 120 < VIEWPORT["height"]  # its first rows are on screen
    assert page.locator("table.summary[data-system]").count() == 2
    assert page.locator("#distributions svg").count() == 4
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < HEIGHT_CEILING, height
    assert page.locator("#claims-table tr.row").count() == 50
    assert page.locator("#answers-table tr.row").count() == ANSWERS_PAGE
    page.screenshot(path=str(shots / "report-10k-full.png"), full_page=True)


def test_the_claims_table_sorts_filters_and_pages(big, page, shots):
    log, _ = big
    total = _expected_rows(log)
    assert page.inner_text("#shown") == f"{total:,} of {total:,} rows"

    page.click("#claims-table th[data-sort=score] button")
    ascending = [float(s) for s in _column(page, 6) if s != "—"]
    assert ascending == sorted(ascending) and len(ascending) == 50
    page.click("#claims-table th[data-sort=score] button")
    descending = [float(s) for s in _column(page, 6)]
    assert descending == sorted(descending, reverse=True) and descending[0] > ascending[-1]
    assert page.get_attribute("#claims-table th[data-sort=score]", "aria-sort") == "descending"

    page.select_option("#f-system", "rag-rerank")
    assert set(_column(page, 1)) == {"rag-rerank"}
    expected = _expected_rows(log, system="rag-rerank")
    assert page.inner_text("#shown") == f"{expected:,} of {total:,} rows"

    page.select_option("#f-label", "contradicts")
    assert set(_column(page, 4)) == {"contradicts"}
    expected = _expected_rows(log, system="rag-rerank", label="contradicts")
    assert page.inner_text("#shown") == f"{expected:,} of {total:,} rows"

    page.select_option("#f-label", "")
    page.select_option("#f-confidence", "uncertain")
    assert set(_column(page, 4)) == {"uncertain"}
    page.select_option("#f-confidence", "")
    page.select_option("#f-cause", "omitted")
    assert all(t.startswith("missed fact") for t in _column(page, 3))

    page.click("#next")
    assert page.inner_text("#page").startswith("page 2 of ")
    page.locator("#claims-table tr.row").first.click()
    assert page.locator("#claims-table tr.detail .passage").count() >= 1
    page.locator("#claims").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "report-10k-claims.png"))
    assert page.evaluate("document.documentElement.scrollHeight") < HEIGHT_CEILING


def test_hostile_text_stays_text(page, shots):
    from playwright.sync_api import expect

    page.fill("#a-text", "window.__xss")  # the hostile answer id, in the answers table
    where = page.locator("#answers-table tr.row td:nth-child(2)")
    expect(where).to_have_text([f"case-0 / a2{XSS}"])
    where.click()
    expect(page.locator("#f-answer-name")).to_have_text(f"case-0 / a2{XSS}")
    page.click("#f-answer-clear")
    page.fill("#f-text", "window.__xss")
    rows = page.locator("#claims-table tr.row")
    assert rows.count() >= 1
    rows.first.click()
    detail = page.locator("#claims-table tr.detail").inner_text()
    assert XSS in detail  # in the claim and in its cited passage, as text
    assert page.evaluate("window.__xss") is None
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert page.evaluate("document.querySelectorAll('script').length") == 2
    page.locator("#claims").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "report-10k-hostile.png"))


def _where(answers) -> list[str]:
    """The answers table's "case / answer" cells for these answers."""
    return [f"{a.case} / {a.answer}" for a in answers]


PRECISION_COLUMN = 6  # system, case / answer, claims, support, citation recall, citation precision


def _percents(page, column: int) -> list[float]:
    """The figures of one column of the answers table's page, as percentages ("1/3 (33.3 %)" -> 33.3)."""
    from playwright.sync_api import expect

    cells = page.locator(f"#answers-table tr.row td:nth-child({column})")
    expect(cells).to_have_count(ANSWERS_PAGE)
    return [float(t.split("(")[1].split(" %")[0]) for t in cells.all_inner_texts()]


def test_the_answers_table_names_the_worst_answers_sorts_filters_and_pages(big, page, shots):
    from playwright.sync_api import expect

    log, _ = big
    answers = log.results.answers
    shown, where = page.locator("#answers-shown"), page.locator("#answers-table tr.row td:nth-child(2)")
    expect(shown).to_have_text(f"{ANSWERS:,} of {ANSWERS:,} answers")
    # worst support first: the terminal report's list, page after page
    ranked = worst_answers(log.results, limit=2 * ANSWERS_PAGE)
    pages = ANSWERS // ANSWERS_PAGE
    expect(where).to_have_text(_where(ranked[:ANSWERS_PAGE]))
    page.click("#answers-next")
    expect(page.locator("#answers-page")).to_have_text(f"page 2 of {pages}")
    expect(where).to_have_text(_where(ranked[ANSWERS_PAGE:]))
    page.click("#answers-prev")
    expect(page.locator("#answers-page")).to_have_text(f"page 1 of {pages}")

    precision = page.locator("#answers-table th[data-sort=citation_precision]")
    page.click("#answers-table th[data-sort=citation_precision] button")
    expect(precision).to_have_attribute("aria-sort", "ascending")
    ascending = _percents(page, PRECISION_COLUMN)
    assert ascending == sorted(ascending)
    page.click("#answers-table th[data-sort=citation_precision] button")
    expect(precision).to_have_attribute("aria-sort", "descending")
    descending = _percents(page, PRECISION_COLUMN)
    assert descending == sorted(descending, reverse=True) and descending[0] > ascending[-1]
    expect(page.locator("#answers-table th[data-sort=support]")).to_have_attribute("aria-sort", "none")

    page.select_option("#a-system", "rag-rerank")
    rerank = [a for a in answers if a.system == "rag-rerank"]
    expect(shown).to_have_text(f"{len(rerank):,} of {ANSWERS:,} answers")
    expect(page.locator("#answers-table tr.row td:nth-child(1)")).to_have_text(["rag-rerank"] * ANSWERS_PAGE)
    page.select_option("#a-finding", "judge_unsure")
    unsure = [a for a in rerank if any(f.cause == "judge_unsure" for f in log.diagnosis[f"{a.case}/{a.answer}"])]
    expect(shown).to_have_text(f"{len(unsure):,} of {ANSWERS:,} answers")
    findings = page.locator("#answers-table tr.row td:nth-child(9)")
    expect(findings).to_have_count(ANSWERS_PAGE)
    assert all("judge unsure" in t for t in findings.all_inner_texts())
    page.select_option("#a-finding", "")
    page.fill("#a-text", "case-12/")
    expect(where).to_have_text(_where(a for a in rerank if "case-12/" in f"{a.case}/{a.answer}"))
    page.locator("#answers").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "report-10k-answers.png"))


def test_an_answer_row_opens_its_claims(big, page, shots):
    from playwright.sync_api import expect

    log, _ = big
    worst = worst_answers(log.results, limit=1)[0]
    rows = len(worst.claims) + sum(f.kind == "fact" for f in log.diagnosis[f"{worst.case}/{worst.answer}"])
    total = page.inner_text("#shown").split(" of ")[1]  # "51,931 rows"
    page.locator("#answers-table tr.row").first.click()
    expect(page.locator("#f-answer-name")).to_have_text(f"{worst.case} / {worst.answer}")
    expect(page.locator("#shown")).to_have_text(f"{rows} of {total}")
    cells = page.locator("#claims-table tr.row td:nth-child(2)")
    expect(cells).to_have_count(rows)
    assert all(t.startswith(f"{worst.case} / {worst.answer} ") for t in cells.all_inner_texts())
    assert page.locator("#claims").bounding_box()["y"] < VIEWPORT["height"]  # scrolled to the claims
    page.screenshot(path=str(shots / "report-10k-answer-claims.png"))
    page.click("#f-answer-clear")
    expect(page.locator("#shown")).to_have_text(f"{total.split()[0]} of {total}")
