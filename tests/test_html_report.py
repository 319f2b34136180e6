"""The self-contained HTML report: its content, its escaping, and how it looks in a real browser."""

from __future__ import annotations

import re

import pytest

from citeaudit.judges import Judgments, make_judge
from citeaudit.metrics import Settings, score_cases
from citeaudit.report.html import render_html
from citeaudit.runlog import build_runlog

from helpers import load, make_case
from test_runlog import p7_log


@pytest.fixture(scope="module")
def p7_html() -> str:
    return render_html(p7_log())


def _section(html: str, answer: str) -> str:
    return re.search(rf'<section class="answer" id="answer-p7-{answer}">(.*?)</section>', html, re.S).group(1)


def _diagnosis(section: str) -> list[tuple[str, str]]:
    rows = re.findall(r"<tr><td>(claim|fact) [^<]*</td><td>([^<]*)</td><td class=\"cause\" data-cause=\"([a-z_]+)\"",
                      section)
    return [(text, cause) for _, text, cause in rows]


def test_report_diagnoses_answer_a_and_b(p7_html):
    a = _diagnosis(_section(p7_html, "A"))
    assert ("Eco reduces annual energy by 15%.", "cited_unsupported") in a
    assert ("The pilot was validated on a thousand machines.", "cited_unsupported") in a
    b = _diagnosis(_section(p7_html, "B"))
    assert b == [("The Eco pilot lasted 30 days.", "omitted"),
                 ("The Eco pilot reported a 15% reduction in downtime.", "omitted")]
    assert "Every claim is fully supported" in _section(p7_html, "C")


def test_report_shows_each_claim_beside_its_cited_span(p7_html):
    a = _section(p7_html, "A")
    row = re.search(r"<td>Eco reduces annual energy by 15%.</td>\s*<td>(.*?)</td>", a, re.S).group(1)
    assert "D3" in row and "2026-09" in row and "Downtime fell by 15%" in row
    assert '<span class="label none">none</span>' in a


def test_report_is_self_contained(p7_html):
    assert "<script" not in p7_html
    assert not re.search(r'(src|href)="(https?:)?//', p7_html)
    assert p7_html.count("<svg") == 3  # metric bars, label distribution, recall@k curve


def hostile_log():
    evil = "<script>document.title='owned'</script><img src=x onerror=alert(1)>"
    case = make_case([{"text": "Claim <b>bold</b>", "citations": ["S1"]}])
    case["sources"][0]["text"] = evil
    case["labels"] = [{"claim": "Claim <b>bold</b>", "passages": ["S1"], "label": "none", "explanation": "<i>x</i>"}]
    cases = load(case)
    judgments = Judgments(make_judge("curated", cases))
    return build_runlog(score_cases(cases, judgments, Settings()), judgments), evil


def test_untrusted_text_is_escaped():
    log, evil = hostile_log()
    html = render_html(log)
    assert evil not in html
    assert "&lt;script&gt;document.title=" in html and "Claim &lt;b&gt;bold&lt;/b&gt;" in html


def test_in_chromium_the_report_renders_and_injects_nothing(chromium, test_output, tmp_path):
    page = chromium.new_page(viewport={"width": 1200, "height": 900})
    path = tmp_path / "p7.html"
    path.write_text(render_html(p7_log()), encoding="utf-8")
    page.goto(path.as_uri())
    assert page.locator("#summary tr").count() == 4  # header + A, B, C
    assert page.locator("#answer-p7-A .diagnosis [data-cause=cited_unsupported]").count() == 2
    page.screenshot(path=str(test_output / "html-report-p7.png"), full_page=True)

    log, evil = hostile_log()
    path.write_text(render_html(log), encoding="utf-8")
    page.goto(path.as_uri())
    assert page.evaluate("document.querySelectorAll('script, img').length") == 0
    assert page.title() == "citeaudit report"
    assert "<script>document.title='owned'</script>" in page.inner_text("body")
    page.close()


def test_uncertain_and_unjudged_claims_have_their_own_colour():
    from citeaudit.records import Judgment

    class HalfSure:
        name, signature = "half", "half@test"

        def judge(self, text, passages):
            return Judgment(label="full", judge=self.signature, uncertain=True if "b" in text else None)

    cases = load(make_case([{"text": "a", "citations": ["S1"]}, {"text": "b", "citations": ["S2"]}]))
    judgments = Judgments(HalfSure())
    html = render_html(build_runlog(score_cases(cases, judgments, Settings()), judgments))
    assert re.search(r'fill="#757575"><title>uncertain 1</title>', html)
    assert '<span class="label uncertain">uncertain</span>' in html
    assert 'fill=""' not in html  # every label drawn has a colour
