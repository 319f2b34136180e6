"""The self-contained HTML report: its content, its escaping, its advice, and how it looks in a real browser.
(At 10,000 answers: test_report_browser.py.)"""

from __future__ import annotations

import json
import re

import pytest

from citeaudit.judges import Judgments, make_judge
from citeaudit.metrics import Settings, score_cases
from citeaudit.metrics import names as N
from citeaudit.records import Judgment
from citeaudit.report import charts
from citeaudit.run.advice import NEUTRAL, claim_advice, guard_notes
from citeaudit.report.answers_table import FIGURES
from citeaudit.report.html import render_html
from citeaudit.report.render import worst_answers
from citeaudit.stats import ratio_intervals
from citeaudit.run.log import build_runlog

from helpers import SetJudge, load, make_case
from test_runlog import p7_log

GUARDED = ("p(support) 0.93; qualifier guard (attachment): '15%' in the claim is about annual, energy; in the "
           "evidence 15% is attached to downtime, fell -> none, not full")


@pytest.fixture(scope="module")
def p7_html() -> str:
    return render_html(p7_log())


def report_data(html: str) -> dict:
    """The JSON the page's script reads."""
    return json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S).group(1))


def report_rows(html: str) -> list[dict]:
    """The claims table's rows as the page's script reads them, each a dict with strings resolved."""
    data = report_data(html)
    strings, passages = data["strings"], data["passages"]
    interned = {"system", "case", "answer", "label", "cause", "explanation", "advice"}
    rows = []
    for raw in data["rows"]:
        row = {c: (strings[v] if c in interned else v) for c, v in zip(data["columns"], raw)}
        row["passages"] = [dict(zip(("id", "doc", "version", "title", "text"), passages[i])) for i in row["passages"]]
        rows.append(row)
    return rows


def _findings(rows: list[dict], answer: str) -> list[tuple[str, str, str]]:
    return [(r["kind"], r["text"], r["cause"]) for r in rows if r["answer"] == answer and r["cause"]]


def test_report_diagnoses_answer_a_and_b(p7_html):
    rows = report_rows(p7_html)
    a = _findings(rows, "A")
    assert ("claim", "Eco reduces annual energy by 15%.", "cited_unsupported") in a
    assert ("claim", "The pilot was validated on a thousand machines.", "cited_unsupported") in a
    assert _findings(rows, "B") == [("fact", "The Eco pilot lasted 30 days.", "omitted"),
                                   ("fact", "The Eco pilot reported a 15% reduction in downtime.", "omitted")]
    assert _findings(rows, "C") == []
    assert {r["label"] for r in rows if r["answer"] == "C"} == {"full"}


def test_report_keeps_each_claim_with_its_cited_span(p7_html):
    row = next(r for r in report_rows(p7_html) if r["text"] == "Eco reduces annual energy by 15%.")
    assert row["label"] == "none"
    (cited,) = row["passages"]
    assert cited["id"] == "D3" and cited["version"] == "2026-09" and "Downtime fell by 15%" in cited["text"]


def test_report_counts_causes_per_system(p7_html):
    table = re.search(r'<table id="causes">(.*?)</table>', p7_html, re.S).group(1)
    counts = {g: re.findall(r'<td class="num">(\d+)</td>', row)
              for g, row in re.findall(r'<tr class="group" data-group="([^"]+)">(.*?)</tr>', table, re.S)}
    # systems A, B, C: A's two unsupported claims and omitted facts, B's two omitted facts
    assert counts == {"retrieval miss": ["0", "0", "0"], "evidence not used": ["0", "0", "0"],
                      "unsupported claim": ["2", "0", "0"], "incomplete": ["2", "2", "0"],
                      "judge unsure": ["0", "0", "0"]}


class UnsureOfB:
    """Full for "a"; for "b" unsure, its best guess none (what a cited but unsupported claim would read)."""

    name, signature = "unsure-b", "unsure-b@test"

    def judge(self, text, passages):
        if text == "b":
            return Judgment(label="none", judge=self.signature, uncertain=True, scores={"support": 0.45})
        return Judgment(label="full", judge=self.signature)


def unsure_log():
    cases = load(make_case([{"text": "a", "citations": ["S1"]}, {"text": "b", "citations": ["S2"]}]))
    judgments = Judgments(UnsureOfB())
    return build_runlog(score_cases(cases, judgments, Settings()), judgments)


def test_an_unsure_claim_is_counted_under_its_own_cause_never_as_unsupported():
    html = render_html(unsure_log())
    table = re.search(r'<table id="causes">(.*?)</table>', html, re.S).group(1)
    counts = {g: re.findall(r'<td class="num">(\d+)</td>', row)
              for g, row in re.findall(r'<tr class="group" data-group="([^"]+)">(.*?)</tr>', table, re.S)}
    assert counts["judge unsure"] == ["1"] and counts["unsupported claim"] == ["0"]
    assert "Decide these claims in the desk&#39;s review, or escalate them" in table
    (row,) = [r for r in report_rows(html) if r["text"] == "b"]
    assert (row["label"], row["cause"], row["uncertain"]) == ("uncertain", "judge_unsure", 1)
    assert "a person should decide, in the desk's review" in row["advice"]


def test_summary_has_one_table_per_system_with_counts(p7_html):
    assert re.findall(r'<table class="summary" data-system="([^"]+)">', p7_html) == ["A", "B", "C"]
    a = re.search(r'data-system="A">(.*?)</table>', p7_html, re.S).group(1)
    support = re.search(r'<tr data-measure="support">(.*?)</tr>', a, re.S).group(1)
    assert re.findall(r'<td class="num"[^>]*>([^<]*)</td>', support) == ["33.3 %", "1/3", "33.3 – 33.3 %"]


def test_bootstrap_interval_brackets_the_figure_and_narrows_with_items():
    import numpy as np

    rng = np.random.default_rng(1)
    den = rng.integers(1, 6, size=2000).astype(float)
    num = np.floor(den * rng.uniform(0, 1, size=2000))
    figure = num.sum() / den.sum()
    lo, hi = ratio_intervals(num, den)[0]
    small_lo, small_hi = ratio_intervals(num[:50], den[:50])[0]
    assert lo < figure < hi
    assert hi - lo < small_hi - small_lo
    assert ratio_intervals(np.zeros(3), np.zeros(3)) == [None]  # every resample undefined


def test_report_is_self_contained(p7_html):
    assert not re.search(r"<script[^>]*\ssrc=", p7_html)
    assert not re.search(r'(src|href)="(https?:)?//', p7_html)
    assert "@import" not in p7_html and "url(" not in p7_html
    assert p7_html.count("<svg") == 4  # histograms, label mix, recall@k, causes


def test_without_the_charts_extra_every_table_stays_and_a_note_says_how(monkeypatch):
    monkeypatch.setattr(charts, "available", lambda: False)
    html = render_html(p7_log())
    assert "<svg" not in html
    assert 'id="no-charts"' in html and "pip install &#39;citeaudit[report]&#39;" in html
    assert html.count('<table class="summary"') == 4  # A, B, C and retrieval


def hostile_log():
    evil = "<script>document.title='owned'</script><img src=x onerror=alert(1)>"
    case = make_case([{"text": "Claim <b>bold</b>", "citations": ["S1"]}], question=evil)
    case["sources"][0]["text"] = evil
    case["answers"][0]["system"] = evil
    case["labels"] = [{"claim": "Claim <b>bold</b>", "passages": ["S1"], "label": "none", "explanation": "<i>x</i>"}]
    cases = load(case)
    judgments = Judgments(make_judge("curated", cases))
    return build_runlog(score_cases(cases, judgments, Settings()), judgments), evil


def test_untrusted_text_is_escaped():
    log, evil = hostile_log()
    html = render_html(log)
    assert evil not in html
    assert "&lt;script&gt;document.title=" in html  # the system name, in the summary
    data = re.search(r'id="report-data">(.*?)</script>', html, re.S).group(1)
    assert "<" not in data and "\\u003cscript\\u003edocument.title" in data
    assert report_rows(html)[0]["passages"][0]["text"] == evil


def test_advice_comes_from_what_the_guard_found():
    guarded = Judgment(label="none", judge="model@1", explanation=GUARDED)
    assert [n.kind for n in guard_notes(GUARDED)] == ["attachment"]
    advice = claim_advice(guarded, "cited_unsupported")
    assert "'15%' in the claim is about annual, energy" in advice and "measures something else" in advice
    plain = Judgment(label="none", judge="model@1", explanation="p(support) 0.10")
    assert claim_advice(plain, "cited_unsupported") == NEUTRAL
    assert "part of the claim" in claim_advice(Judgment(label="partial", judge="m"), "cited_unsupported")
    assert "never retrieved" in claim_advice(plain, "not_retrieved")
    assert "says otherwise" in claim_advice(Judgment(label="contradicts", judge="m"), "contradicted")
    assert "unsure" in claim_advice(Judgment(label="full", judge="m", uncertain=True), "cited_unsupported")
    assert claim_advice(None, None).startswith("Not judged")
    assert claim_advice(Judgment(label="full", judge="m"), None) == ""


def test_rows_carry_the_guard_quantity_to_highlight():
    class Guarded:
        name, signature = "guarded", "guarded@test"

        def judge(self, text, passages):
            return Judgment(label="none", judge=self.signature, explanation=GUARDED)

    cases = load(make_case([{"text": "Eco reduces annual energy by 15%.", "citations": ["S1"]}]))
    judgments = Judgments(Guarded())
    (row,) = report_rows(render_html(build_runlog(score_cases(cases, judgments, Settings()), judgments)))
    assert row["marks"] == ["15%"]
    assert row["advice"].startswith("Qualifier guard (attachment)")


def open_report(chromium, path, log):
    """The report of `log` written to `path` and opened in chromium, ready; and the page's script errors."""
    page = chromium.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    path.write_text(render_html(log), encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready=true]")
    return page, errors


def test_in_chromium_the_report_renders_and_injects_nothing(chromium, test_output, tmp_path):
    page, errors = open_report(chromium, tmp_path / "p7.html", p7_log())
    assert page.locator("table.summary[data-system]").count() == 3  # A, B, C
    page.select_option("#f-system", "A")
    page.select_option("#f-cause", "cited_unsupported")
    assert page.locator("#claims-table tr.row").count() == 2
    page.locator("#claims-table tr.row", has_text="Eco reduces annual energy").click()
    detail = page.locator("#claims-table tr.detail")
    assert "Downtime fell by 15%" in detail.inner_text() and "D3" in detail.inner_text()
    page.screenshot(path=str(test_output / "html-report-p7.png"), full_page=True)

    log, evil = hostile_log()
    path = tmp_path / "p7.html"
    path.write_text(render_html(log), encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready=true]")
    page.locator("#claims-table tr.row").first.click()
    assert page.evaluate("document.querySelectorAll('script').length") == 2  # the data and the table's script
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    # the claim's <b> and the explanation's <i> stay text, not elements
    assert page.evaluate("[...document.querySelectorAll('b, i')].some(e => ['bold', 'x'].includes(e.textContent))") is False
    assert "Claim <b>bold</b>" in page.inner_text("#claims-table")
    assert page.title() == "citeaudit report"
    assert evil in page.inner_text("#claims-table")  # shown as text
    assert errors == []
    page.close()


def test_uncertain_and_unjudged_claims_have_their_own_colour():
    class HalfSure:
        name, signature = "half", "half@test"

        def judge(self, text, passages):
            return Judgment(label="full", judge=self.signature, uncertain=True if "b" in text else None)

    cases = load(make_case([{"text": "a", "citations": ["S1"]}, {"text": "b", "citations": ["S2"]}]))
    judgments = Judgments(HalfSure())
    html = render_html(build_runlog(score_cases(cases, judgments, Settings()), judgments))
    assert [r["label"] for r in report_rows(html)] == ["full", "uncertain"]
    labels_chart = re.search(r'id="chart-labels">(.*?)</figure>', html, re.S).group(1)
    assert 'fill="#757575"' in labels_chart and 'fill="#2e7d32"' in labels_chart
    assert '<span class="dot uncertain"></span>uncertain 1' in html


def test_a_huge_passage_is_folded_around_its_evidence_span(chromium, tmp_path):
    needle = "Eco mode cut annual energy use by 15 percent."
    filler = "Unrelated maintenance notes follow. " * 15_000  # about 540,000 characters each side
    huge = filler + needle + " " + filler

    class Pointing:
        name, signature = "pointing", "pointing@test"

        def judge(self, text, passages):
            start = passages[0].text.index(needle)
            return Judgment(label="full", judge=self.signature, scores={"support": 0.9},
                            evidence={"passage": passages[0].id, "start": start, "end": start + len(needle)})

    case = make_case([{"text": "Eco mode cuts annual energy use by 15 percent.", "citations": ["S1"]}])
    case["sources"][0]["text"] = huge
    cases = load(case)
    judgments = Judgments(Pointing())
    path = tmp_path / "huge.html"
    path.write_text(render_html(build_runlog(score_cases(cases, judgments, Settings()), judgments)), encoding="utf-8")
    page = chromium.new_page(viewport={"width": 1200, "height": 900})
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready=true]")
    page.locator("#claims-table tr.row").first.click()
    passage = page.locator("#claims-table tr.detail .passage .ptext")
    assert page.locator("#claims-table tr.detail mark").inner_text() == needle
    assert len(passage.inner_text()) < 1_200  # 400 characters either side, and the fold notes
    page.click("#claims-table tr.detail button.unfold")
    assert 20_000 <= len(passage.inner_text()) < 21_000  # unfolded, still capped
    assert page.evaluate("document.documentElement.scrollWidth") <= 1200
    page.close()


def test_advice_names_the_documenting_passage_that_was_not_cited():
    j = Judgment(label="none", judge="m")
    assert claim_advice(j, "retrieved_not_cited", ["S1"]).endswith("cite S1.")
    assert "(S4) was never retrieved" in claim_advice(j, "not_retrieved", ["S4"])
    assert claim_advice(j, "retrieved_not_cited") == claim_advice(j, "retrieved_not_cited", [])


# --- the answers table ---------------------------------------------------------------------------------


def answer_rows(html: str) -> list[dict]:
    """The answers table's rows in the page's order, strings resolved: each figure as its text (None: not
    measured), findings as {cause: count}."""
    data = report_data(html)
    strings, table = data["strings"], data["answers"]
    rows = []
    for raw in table["rows"]:
        row = dict(zip(table["columns"], raw))
        row.update({c: strings[row[c]] for c in ("system", "case", "answer")})
        row.update({m: None if row[m] is None else strings[row[m][2]] for m in FIGURES})
        found = row["findings"]
        row["findings"] = {strings[c]: n for c, n in zip(found[::2], found[1::2])}
        rows.append(row)
    return rows


class Ranked:
    """"a" full, "b" unsure (best guess none), anything else none."""

    name, signature = "ranked", "ranked@test"

    def judge(self, text, passages):
        if text == "b":
            return Judgment(label="none", judge=self.signature, uncertain=True, scores={"support": 0.45})
        return Judgment(label="full" if text.startswith("a") else "none", judge=self.signature)


RUN_ORDER = ["good", "bad", "unsure", "uncited", "silent"]


def ranked_log(settings: Settings = Settings()):
    """Five answers whose worst-first order is not their run order."""
    answers = {"good": [{"text": "a", "citations": ["S1"]}],
               "bad": [{"text": "x", "citations": ["S1"]}, {"text": "a", "citations": ["S2"]}],
               "unsure": [{"text": "b", "citations": ["S2"]}],
               "uncited": [{"text": "x"}],
               "silent": [{"text": "The sources do not say.", "kind": "abstention"}]}
    case = make_case(answers["good"], answers_extra=[{"id": name, "statements": sts} for name, sts in answers.items()
                                                     if name != "good"])
    case["answers"][0]["id"] = "good"
    cases = load(case)
    judgments = Judgments(Ranked())
    return build_runlog(score_cases(cases, judgments, settings), judgments)


def test_the_answers_table_lists_every_answer_worst_support_first():
    log = ranked_log()
    assert [a.answer for a in log.results.answers] == RUN_ORDER
    rows = answer_rows(render_html(log))
    # the terminal report's order: lowest support at best, an unsure claim counted as supported, an answer
    # with neither a judged nor an unsure claim last
    assert [r["answer"] for r in rows] == ["uncited", "bad", "unsure", "good", "silent"]
    assert [r["answer"] for r in rows] == [a.answer for a in worst_answers(log.results, limit=len(rows))]
    by_id = {r["answer"]: r for r in rows}
    assert (by_id["bad"]["claims"], by_id["bad"]["support"], by_id["bad"]["unsure"]) == (2, "1/2 (50.0 %)", 0)
    assert (by_id["unsure"]["support"], by_id["unsure"]["unsure"]) == ("n/a (no judged claims)", 1)
    assert by_id["unsure"]["findings"] == {"judge_unsure": 1}
    silent = by_id["silent"]
    assert (silent["claims"], silent["abstained"]) == (0, 1)
    assert silent["support"] == "n/a (abstention: the answer makes no claim)"


def test_the_answers_table_carries_each_answers_figures_and_findings(p7_html):
    rows = {r["answer"]: r for r in answer_rows(p7_html)}
    a = rows["A"]
    assert [a[m] for m in FIGURES] == ["1/3 (33.3 %)"] * 4
    assert (a["system"], a["case"], a["claims"]) == ("A", "p7", 3)
    assert a["findings"] == {"cited_unsupported": 2, "omitted": 2}
    assert rows["B"]["coverage"] == "1/3 (33.3 %)" and rows["B"]["findings"] == {"omitted": 2}
    assert rows["C"]["findings"] == {}


@pytest.mark.parametrize("measures, unsure", [
    ((N.SUPPORT,), 1),  # claims judged: their unsure count is known
    ((N.CITATION_RECALL,), None),  # no claim judged: unsure not measured either
])
def test_a_measure_the_run_did_not_score_is_not_measured_never_zero(measures, unsure):
    rows = {r["answer"]: r for r in answer_rows(render_html(ranked_log(Settings(metrics=measures))))}
    for m in FIGURES:
        assert (rows["bad"][m] is None) == (m not in measures), m
    assert rows["unsure"]["unsure"] == unsure


def test_a_zero_denominator_is_n_a_or_the_value_its_convention_gives():
    def precision(settings):
        data = report_data(render_html(ranked_log(settings)))
        table = data["answers"]
        column = table["columns"].index(N.CITATION_PRECISION)
        row = next(r for r in table["rows"] if data["strings"][r[table["columns"].index("answer")]] == "uncited")
        figure = row[column]
        return figure[:2], data["strings"][figure[2]], figure[3:]

    counts, text, value = precision(Settings())
    assert counts == [0, 0] and text.startswith("n/a (") and value == []
    counts, text, value = precision(Settings(no_citation_precision="zero"))
    assert counts == [0, 0] and text.startswith("0/0 (0.0 %") and value == [0.0]


def _answer_cells(page, column: int) -> list[str]:
    return page.locator(f"#answers-table tr.row td:nth-child({column})").all_inner_texts()


def test_in_chromium_an_answer_row_opens_its_claims(chromium, tmp_path):
    from playwright.sync_api import expect

    page, errors = open_report(chromium, tmp_path / "ranked.html", ranked_log())
    expect(page.locator("#answers-shown")).to_have_text("5 of 5 answers")
    expect(page.locator("#answers-table tr.row td:nth-child(2)")).to_have_text(
        ["t / uncited", "t / bad", "t / unsure", "t / good", "t / silent"])
    expect(page.locator("#shown")).to_have_text("5 of 5 rows")

    page.locator("#answers-table tr.row", has_text="t / bad").click()
    expect(page.locator("#f-answer")).to_be_visible()
    expect(page.locator("#f-answer-name")).to_have_text("t / bad")
    expect(page.locator("#claims-table tr.row td:nth-child(3)")).to_have_text(["x", "a"])
    expect(page.locator("#shown")).to_have_text("2 of 5 rows")

    page.click("#f-answer-clear")
    expect(page.locator("#f-answer")).to_be_hidden()
    expect(page.locator("#shown")).to_have_text("5 of 5 rows")

    # from the keyboard, and every other claims filter cleared so that none of the answer's claims hides
    page.select_option("#f-label", "full")
    page.locator("#answers-table tr.row", has_text="t / unsure").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#f-label")).to_have_value("")
    expect(page.locator("#claims-table tr.row td:nth-child(3)")).to_have_text(["b"])
    expect(page.locator("#claims-table tr.row").first).to_be_focused()
    assert errors == []
    page.close()


def test_in_chromium_a_run_of_some_measures_shows_them_not_measured(chromium, test_output, tmp_path):
    from playwright.sync_api import expect

    run = ranked_log(Settings(metrics=(N.CITATION_RECALL,)))
    page, errors = open_report(chromium, tmp_path / "support-only.html", run)
    not_measured = ["not measured"] * 5
    for column in (4, 6, 7, 8):  # support, citation precision, coverage, unsure
        expect(page.locator(f"#answers-table tr.row td:nth-child({column})")).to_have_text(not_measured)
    run_order = [f"t / {a}" for a in RUN_ORDER]  # no support measured: no answer is ranked
    where = page.locator("#answers-table tr.row td:nth-child(2)")
    expect(where).to_have_text(run_order)
    # sorting by a measure no answer has keeps every row, in run order either way
    page.click("#answers-table th[data-sort=coverage] button")
    expect(page.locator("#answers-table th[data-sort=coverage]")).to_have_attribute("aria-sort", "ascending")
    expect(where).to_have_text(run_order)
    page.click("#answers-table th[data-sort=coverage] button")
    expect(page.locator("#answers-table th[data-sort=coverage]")).to_have_attribute("aria-sort", "descending")
    expect(where).to_have_text(run_order)
    # a measure the run has: undefined figures (n/a) last, after the lowest
    page.click("#answers-table th[data-sort=citation_recall] button")
    expect(page.locator("#answers-table tr.row td:nth-child(5)")).to_have_text([
        "0/1 (0.0 %)", "1/2 (50.0 %)", "1/1 (100.0 %)", "n/a (no judged statements)",
        "n/a (abstention: the answer makes no claim)"])
    page.locator("#answers").screenshot(path=str(test_output / "html-report-answers-not-measured.png"))
    assert errors == []
    page.close()


# --- the language of the content ----------------------------------------------------------------------

ZH_LIMIT = "连续运行温度上限为 80 °C。"
ZH_SOURCE = "P7 手册第 3 版：连续运行温度上限为 80 °C。"
EN_LIMIT = "The continuous limit is 80 °C."


def languages_log(answers: dict[str, str]):
    """A run of one case whose answers (id -> claim) cite S1 (Chinese) or S2 (English): the passage in
    the claim's language, every claim supported."""
    case = make_case(
        [{"text": answers["a"], "citations": ["S1" if "温度" in answers["a"] else "S2"]}],
        answers_extra=[{"id": k, "statements": [{"text": t, "citations": ["S1" if "温度" in t else "S2"]}]}
                       for k, t in answers.items() if k != "a"])
    case["sources"] = [{"id": "S1", "text": ZH_SOURCE}, {"id": "S2", "text": "P7 manual v3: the limit is 80 °C."}]
    cases = load(case)
    judgments = Judgments(SetJudge({t: [{"S1"}, {"S2"}] for t in answers.values()}))
    return build_runlog(score_cases(cases, judgments, Settings()), judgments)


def _sections(html: str) -> dict[str, str | None]:
    """Each section's (and the header's) lang attribute, None where it has none."""
    found = re.findall(r'<(?:section id="(\w+)"|header id="(header)")( lang="(\w+)")?>', html)
    return {a or b: lang or None for a, b, _, lang in found}


def _row_langs(html: str) -> dict[str, str]:
    data = report_data(html)
    column = data["columns"].index("lang")
    return {raw[data["columns"].index("text")]: data["strings"][raw[column]] for raw in data["rows"]}


@pytest.mark.parametrize("answers, page", [
    ({"a": ZH_LIMIT}, "zh"),
    ({"a": EN_LIMIT}, "en"),
    ({"a": ZH_LIMIT, "b": ZH_LIMIT + "另有说明。", "c": EN_LIMIT}, "zh"),  # the majority
    ({"a": EN_LIMIT, "b": ZH_LIMIT, "c": EN_LIMIT + " Confirmed."}, "en"),
    ({"a": ZH_LIMIT, "b": EN_LIMIT}, "en"),  # a tie: the page's own words are English
])
def test_the_report_declares_the_language_most_answers_are_in(answers, page):
    html = render_html(languages_log(answers))
    assert re.search(r'<html lang="(\w+)">', html).group(1) == page
    sections = _sections(html)
    assert set(sections) == {"header", "summary", "distributions", "diagnosis", "answers", "claims", "signatures"}
    # the page's own words are English: said where the page's language is another
    assert set(sections.values()) == ({None} if page == "en" else {"en"})
    # each claim carries its answer's language, each passage its own
    assert _row_langs(html) == {t: "zh" if "温度" in t else "en" for t in answers.values()}
    data = report_data(html)
    assert {p[0]: data["strings"][p[5]] for p in data["passages"]} == (
        {"S1": "zh"} if all("温度" in t for t in answers.values()) else
        {"S2": "en"} if not any("温度" in t for t in answers.values()) else {"S1": "zh", "S2": "en"})


def test_a_chinese_run_read_from_labelled_pairs_is_a_chinese_page(runner, tmp_path):
    from pathlib import Path

    from citeaudit.cli import main

    pairs = Path(__file__).parent / "fixtures" / "formats" / "pairs_citecheck.jsonl"
    run, page = tmp_path / "run.json", tmp_path / "report.html"
    assert runner.invoke(main, ["score", "--from", "pairs", str(pairs), "--out", str(run),
                                "--format", "json"]).exit_code == 0
    assert runner.invoke(main, ["report", str(run), "-o", str(page)]).exit_code == 0
    html = page.read_text(encoding="utf-8")
    assert html.startswith('<!doctype html>\n<html lang="zh">')
    assert set(_row_langs(html).values()) == {"zh"}


def test_in_chromium_a_claim_says_its_language_where_the_page_s_differs(chromium, tmp_path):
    page, errors = open_report(chromium, tmp_path / "mixed.html",
                               languages_log({"a": EN_LIMIT, "b": ZH_LIMIT, "c": EN_LIMIT + " Confirmed."}))
    assert page.evaluate("document.documentElement.lang") == "en"
    chinese = page.locator("#claims-table tr.row", has_text=ZH_LIMIT)
    assert chinese.locator("td.text [lang]").get_attribute("lang") == "zh"
    assert page.locator("#claims-table tr.row", has_text=EN_LIMIT).first.locator("td.text [lang]").count() == 0
    chinese.click()
    detail = page.locator("#claims-table tr.detail")
    assert detail.locator("p.claim-text").get_attribute("lang") == "zh"
    assert detail.locator("blockquote.passage .ptext").get_attribute("lang") == "zh"
    assert errors == []
    page.close()

    page, errors = open_report(chromium, tmp_path / "zh.html", languages_log({"a": ZH_LIMIT}))
    assert page.evaluate("document.documentElement.lang") == "zh"
    assert page.evaluate("document.getElementById('claims').lang") == "en"  # the table's own words
    assert page.locator("#claims-table tr.row td.text [lang]").get_attribute("lang") == "zh"
    assert errors == []
    page.close()
