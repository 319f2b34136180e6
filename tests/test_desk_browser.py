"""The audit desk's web app in a real headless chromium: the five exercises reach the seed's figures on
screen, refused edits change nothing, human labels reach the exported run, a suggested repair applies in
one click, untrusted passage text stays text, everything works from the keyboard, narrow windows stack,
and the 3D view (or its fallback) shows.

Each test gets its own server (uvicorn in a thread, on a socket bound to a free port) over a fresh session.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("playwright")
import uvicorn  # noqa: E402
from playwright.sync_api import expect  # noqa: E402

import citeaudit.desk  # noqa: E402
from citeaudit.cli import desk_session  # noqa: E402
from citeaudit.desk.app import create_app  # noqa: E402

BUILD = Path(citeaudit.desk.__file__).parent / "static" / "build" / "three-view.js"
XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'


@contextmanager
def serve(session):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(session), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the desk server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture
def desk_url():
    with serve(desk_session(())) as url:
        yield url


SCREENSHOTS = "desk"  # screenshots go to test-output/desk/ (the `shots` fixture)


@contextmanager
def open_page(chromium, url, width=1280, height=900):
    context = chromium.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    try:
        page.goto(url)
        page.wait_for_selector("body[data-ready=true]", timeout=60_000)
        yield page
        assert errors == [], errors
    finally:
        context.close()


@pytest.fixture
def page(chromium, desk_url):
    with open_page(chromium, desk_url) as p:
        yield p


@pytest.fixture
def exercises(chromium, desk_url):
    """The exercises' own page: its session never touches the user's cases."""
    with open_page(chromium, desk_url + "walkthrough") as p:
        yield p


def figures(page, recall: str, precision: str) -> None:
    """The on-screen recall and precision, as counts and as text."""
    expect(page.locator("#score-citation_recall")).to_have_attribute("data-counts", recall)
    expect(page.locator("#score-citation_precision")).to_have_attribute("data-counts", precision)
    for metric, counts in (("citation_recall", recall), ("citation_precision", precision)):
        n, d = (int(x) for x in counts.split("/"))
        assert page.text_content(f"#score-{metric}") == f"{counts} ({100 * n / d:.1f} %)"


def exercise(page, button: str) -> None:
    page.click(f"#{button}")
    expect(page.locator(f"#{button}")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#walkthrough")).to_be_visible()
    # the exercise loads when the server answers, and loading resets the selection and drops unsaved text:
    # an exercise whose figures match the page's before (Follow, on a fresh page) would otherwise let the
    # test select and type before that answer, and lose what it typed
    settled(page)


def select(page, index: int) -> None:
    page.click(f"#st-{index}")
    expect(page.locator(f"#st-{index}")).to_have_attribute("aria-selected", "true")
    drawn(page)


def settled(page) -> None:
    """Wait until the server has answered every change the page sent (none on its way, none waiting)."""
    expect(page.locator("body")).to_have_attribute("data-pending", "0")
    expect(page.locator("body")).not_to_have_attribute("aria-busy", "true")
    drawn(page)


def drawn(page) -> None:
    """Wait until the selected statement's suggested repair is drawn: the section above the tick boxes grows
    when its search returns, and a click aimed at a box while it grows lands elsewhere."""
    suggestion = page.locator("#suggestion")
    if suggestion.count():
        expect(suggestion).not_to_have_attribute("data-state", "loading")


def cite(page, passage: str, on: bool) -> None:
    """Tick or untick one citation of the selected statement, and wait for the server's answer to show."""
    box = page.locator(f"#cite-{passage}")
    expect(box).to_be_checked(checked=not on)
    box.click()  # (not check(): it clicks again when the server refuses the change)
    settled(page)
    expect(box).to_be_checked(checked=on)
    cited = page.locator("#inspector-citations")
    if on:
        expect(cited).to_contain_text(passage)
    else:
        expect(cited).not_to_contain_text(passage)


def goal(page, i: int, met: bool = True) -> None:
    expect(page.locator(f"#goal-{i}")).to_have_attribute("data-met", "true" if met else "false")


def test_the_five_exercises_reach_the_seed_figures(exercises, shots):
    page = exercises
    # Follow: as found, then follow C1's thread to S2 and read it in the inspector.
    exercise(page, "wt-follow")
    figures(page, "2/4", "2/3")
    goal(page, 0)
    expect(page.locator("#score-support")).to_have_text("2/4 (50.0 %)")
    expect(page.locator("#score-citation_presence")).to_have_text("3/4 (75.0 %)")
    expect(page.locator("#thread-0-S2")).to_have_attribute("data-status", "unsupported")
    page.click("#thread-0-S2")
    expect(page.locator("#thread-0-S2")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#cited-S2")).to_have_class("cited-passage focus-thread")
    expect(page.locator("#cited-S2 blockquote")).to_have_text("A receipt is required for standard-item returns.")
    expect(page.locator("#cited-S2")).to_contain_text("version sachin-demo-v1 · span 0–48")
    expect(page.locator("#inspector-judgment")).to_contain_text("S2 is about returns but gives no time window")
    check = json.loads(page.text_content("#inspector-check-json"))
    assert check["statementId"] == "C1" and check["citations"] == ["S2"] and check["citedSetSupports"] is False
    stmt = json.loads(page.text_content("#inspector-statement-json"))
    assert stmt["statement"]["id"] == "C1" and stmt["citedPassages"][0]["id"] == "S2"
    page.screenshot(path=str(shots / "follow.png"), full_page=True)

    # Repair: S1 becomes C1's only citation, then C3 cites S3.
    exercise(page, "wt-repair")
    figures(page, "2/4", "2/3")
    select(page, 0)
    cite(page, "S1", True)
    cite(page, "S2", False)
    figures(page, "3/4", "3/3")
    goal(page, 0)
    goal(page, 1, met=False)
    expect(page.locator("#thread-0-S1")).to_have_attribute("data-status", "precise")
    select(page, 2)
    cite(page, "S3", True)
    figures(page, "4/4", "4/4")
    goal(page, 1)
    page.screenshot(path=str(shots / "repair.png"), full_page=True)

    # Cover: C1 is already repaired; C3 cites S3.
    exercise(page, "wt-cover")
    figures(page, "3/4", "3/3")
    select(page, 2)
    expect(page.locator("#st-2")).to_contain_text("no citation")
    cite(page, "S3", True)
    figures(page, "4/4", "4/4")
    goal(page, 0)
    page.screenshot(path=str(shots / "cover.png"), full_page=True)

    # Trim: C1 cites S1, S2 and S3; only S1 earns precision credit.
    exercise(page, "wt-trim")
    figures(page, "4/4", "4/6")
    goal(page, 0)
    expect(page.locator("#thread-0-S2")).to_have_attribute("data-status", "imprecise")
    select(page, 0)
    cite(page, "S2", False)
    cite(page, "S3", False)
    figures(page, "4/4", "4/4")
    goal(page, 1)
    page.screenshot(path=str(shots / "trim.png"), full_page=True)

    # Test scope, three setups.
    exercise(page, "wt-test-scope-window-receipt")
    figures(page, "1/1", "2/2")
    goal(page, 0)
    page.screenshot(path=str(shots / "test-scope-window-receipt.png"), full_page=True)
    select(page, 0)
    cite(page, "S2", False)
    figures(page, "0/1", "0/1")
    goal(page, 1)
    page.screenshot(path=str(shots / "test-scope-window-receipt-without-s2.png"), full_page=True)

    exercise(page, "wt-test-scope-clearance")
    figures(page, "0/1", "0/2")
    goal(page, 0)
    expect(page.locator("#st-0")).to_contain_text("contradicts")
    page.screenshot(path=str(shots / "test-scope-clearance.png"), full_page=True)

    exercise(page, "wt-test-scope-two-supports")
    figures(page, "1/1", "2/2")
    goal(page, 0)
    page.screenshot(path=str(shots / "test-scope-two-supports.png"), full_page=True)

    # Reset puts the case back to its start.
    page.click("#reset")
    figures(page, "1/1", "2/2")


def test_an_edit_without_a_curated_label_is_refused_visibly(exercises):
    page = exercises
    exercise(page, "wt-follow")
    figures(page, "2/4", "2/3")
    select(page, 0)
    before = page.text_content("#st-0 .st-text")
    page.fill("#statement-text", "Standard items may be returned within 60 days of delivery.")
    page.click("#save-text")
    message = page.locator("#message")
    expect(message).to_be_visible()
    expect(message).to_have_attribute("role", "alert")
    expect(message).to_contain_text("no curated label")
    expect(message).to_contain_text("not applied")
    figures(page, "2/4", "2/3")
    assert page.text_content("#st-0 .st-text") == before
    # A citation change that can be scored clears the message.
    cite(page, "S1", True)
    expect(message).to_be_hidden()


def test_a_human_label_set_in_review_mode_is_in_the_exported_run(exercises, tmp_path):
    page = exercises
    exercise(page, "wt-follow")
    page.click("#review-toggle")
    expect(page.locator("#review")).to_be_visible()
    expect(page.locator("#review-position")).to_have_text("Claim 1 of 4 · statement C1")
    page.fill("#reviewer", "ana")
    page.fill("#review-note", "S2 has no time window")
    page.click("#label-none")
    # a label moves on to the next claim
    expect(page.locator("#review-position")).to_have_text("Claim 2 of 4 · statement C2")
    expect(page.locator("#agreement")).to_have_attribute("data-n", "1")
    expect(page.locator("#agreement")).to_have_attribute("data-agree", "1")
    expect(page.locator("#kappa")).to_have_text("n/a")  # one reviewed claim: no kappa yet
    expect(page.locator("#human-labels")).to_contain_text("S2 has no time window")
    page.keyboard.press("k")
    expect(page.locator("#review-position")).to_have_text("Claim 1 of 4 · statement C1")
    expect(page.locator("#label-none")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("j")
    expect(page.locator("#review-position")).to_have_text("Claim 2 of 4 · statement C2")
    expect(page.locator("#st-1")).to_have_attribute("aria-selected", "true")
    page.keyboard.press("2")  # partial; the automatic label is full
    expect(page.locator("#review-position")).to_have_text("Claim 3 of 4 · statement C3")
    expect(page.locator("#agreement")).to_have_attribute("data-n", "2")
    expect(page.locator("#agreement")).to_have_attribute("data-agree", "1")
    expect(page.locator("#kappa")).to_have_text("n/a")
    # the judge signature stays inside the review panel (cut with an ellipsis, whole on hover)
    panel = page.locator("#review").bounding_box()
    for sig in page.locator("#review .signature").all():
        box = sig.bounding_box()
        assert box["x"] + box["width"] <= panel["x"] + panel["width"] + 1

    with page.expect_download() as download:
        page.click("#export")
    expect(page.locator("#export-text")).to_contain_text("Run log exported")
    path = tmp_path / "desk-run.json"
    download.value.save_as(path)
    log = json.loads(path.read_text(encoding="utf-8"))
    human = [j for j in log["judgments"] if j["judgment"]["judge"] == "human:ana"]
    by_text = {j["text"]: j["judgment"] for j in human}
    assert by_text["Standard items may be returned within 30 days of delivery."]["label"] == "none"
    assert by_text["Standard items may be returned within 30 days of delivery."]["explanation"] == "S2 has no time window"
    assert by_text["A receipt is required to return a standard item."]["label"] == "partial"


def test_the_review_queue_leads_to_each_unsure_claim(chromium, shots):
    # A judge unsure of every claim about Eco: two in p7 (answers A and C), two in p7-zh.
    from test_desk_api import UnsureOfEco

    from citeaudit.desk import DeskSession

    judge = UnsureOfEco()
    session = DeskSession([rc.case for rc in judge.resolved], judge=judge, source="built-in examples")
    with serve(session) as url, open_page(chromium, url) as page:
        expect(page.locator("#review-toggle-count")).to_have_text("4 unsure")
        expect(page.locator("#st-1 .badge.unsure")).to_have_text("unsure")
        expect(page.locator("#st-1 .badge.uncertain")).to_have_text("uncertain (best guess: full)")
        page.click("#review-toggle")
        count = page.locator("#queue-count")
        expect(count).to_have_text("4 claims await review (the judge is unsure)")
        expect(page.locator("#review-position")).to_have_text("Claim 1 of 3 · statement c1")
        page.click("#queue-next")
        expect(page.locator("#review-position")).to_have_text("Claim 2 of 3 · statement c4")
        expect(page.locator("#review-claim")).to_have_text("Eco reduces annual energy by 15%.")
        expect(page.locator("#review-auto")).to_have_text("uncertain (best guess: full)")
        expect(page.locator("#review-unsure")).to_be_visible()
        expect(page.locator("#review-claim-1 .badge.unsure")).to_be_visible()
        expect(page.locator("#review-claim-0 .badge.unsure")).to_have_count(0)
        expect(page.locator("#st-1")).to_have_attribute("aria-selected", "true")
        page.screenshot(path=str(shots / "review-queue.png"), full_page=True)
        page.fill("#reviewer", "ana")
        page.click("#label-none")
        expect(count).to_have_text("3 claims await review (the judge is unsure)")
        expect(page.locator("#review-unsure")).to_have_count(0)
        expect(page.locator("#st-1 .badge.unsure")).to_have_count(0)
        expect(page.locator("#review-toggle-count")).to_have_text("3 unsure")
        # the next one is in another answer: the desk switches to it
        page.click("#queue-next")
        expect(page.locator("#answer-select")).to_have_value("C")
        expect(page.locator("#review-position")).to_have_text("Claim 2 of 3 · statement c2")
        expect(page.locator("#review-claim")).to_have_text("The Eco pilot ran for thirty days.")
        # and from the keyboard to the next case
        page.keyboard.press("u")
        expect(page.locator("#case-select")).to_have_value("p7-zh")
        expect(page.locator("#review-claim")).to_have_text("Eco使年度能耗降低15%。")
        page.screenshot(path=str(shots / "review-queue-next-case.png"), full_page=True)


def test_one_click_applies_each_suggested_repair(page, shots):
    page.select_option("#case-select", "returns-desk")
    expect(page.locator("#answer-select")).to_have_value("original")
    settled(page)
    figures(page, "2/4", "2/3")
    select(page, 0)
    # C1's suggestion, searched when C1 is selected: its action, evidence and the judge's verdict
    expect(page.locator("#suggestion-note-0")).to_have_text("cite S1 instead of S2")
    evidence = page.locator("#suggestion .suggested-passage")
    expect(evidence).to_contain_text("version sachin-demo-v1 · span 0–60")
    expect(evidence.locator("blockquote")).to_have_text("Standard items can be returned up to 30 days after delivery.")
    expect(page.locator("#suggestion-judgment-0")).to_contain_text("The judge finds the new set full")
    page.screenshot(path=str(shots / "suggested-repair.png"), full_page=True)
    apply = page.locator("#apply-suggestion")
    expect(apply).to_have_text("Apply: cite S1 instead of S2")
    apply.click()
    settled(page)
    expect(page.locator("#inspector-citations")).to_have_text("S1")
    expect(page.locator("#cite-S1")).to_be_checked()
    expect(page.locator("#cite-S2")).not_to_be_checked()
    figures(page, "3/4", "3/3")
    expect(page.locator("#suggestion-note-0")).to_contain_text("nothing to repair")  # searched again: done
    expect(apply).to_have_count(0)
    select(page, 2)
    expect(page.locator("#suggestion-note-0")).to_have_text("add S3")
    apply.click()
    settled(page)
    figures(page, "4/4", "4/4")  # the seed's Repaired answer
    expect(page.locator("#status")).to_have_text("Applied to C3: add S3. It now cites S3.")


def test_a_suggestion_applies_from_the_keyboard_and_none_is_offered_where_nothing_supports(page):
    page.select_option("#case-select", "returns-desk")
    settled(page)
    page.select_option("#answer-select", "padded")
    settled(page)
    figures(page, "4/4", "4/6")
    select(page, 0)
    expect(page.locator("#apply-suggestion")).to_have_text("Apply: drop S2, S3 (not needed)")
    expect(page.locator("#st-0")).to_be_focused()
    page.keyboard.press("a")
    settled(page)
    figures(page, "4/4", "4/4")
    expect(page.locator("#inspector-citations")).to_have_text("S1")

    page.select_option("#answer-select", "overbroad-claim")
    settled(page)
    select(page, 0)
    note = page.locator("#suggestion-note-0")
    expect(note).to_contain_text("no supporting passage found — left as it is, a job for the retriever or the writer")
    expect(page.locator("#suggestion")).to_have_attribute("data-state", "ready")
    expect(page.locator("#apply-suggestion")).to_have_count(0)
    page.keyboard.press("a")
    expect(page.locator("#status")).to_have_text("No suggested repair to apply to C5.")
    figures(page, "0/1", "0/2")


def test_a_suggestion_the_judge_is_unsure_of_is_shown_to_review_and_cannot_be_applied(chromium):
    """The Repaired answer's C1 cites S1, which gives the window; a judge unsure of S1 and of S6 offers no
    swap: S1 is shown to review, with its verdict, and neither a click nor `a` changes the citations."""
    from citeaudit.desk import DeskSession
    from citeaudit.examples import load_example
    from helpers import LabelsUnsureOf

    cases = load_example("returns_desk.json")
    window = "Standard items may be returned within 30 days of delivery."
    judge = LabelsUnsureOf(cases, [(window, ["S1"]), (window, ["S6"])])
    with serve(DeskSession([rc.case for rc in cases], judge=judge)) as url, open_page(chromium, url) as page:
        page.select_option("#answer-select", "repaired")
        settled(page)
        select(page, 0)
        expect(page.locator("#suggestion")).to_have_attribute("data-state", "ready")
        expect(page.locator("#suggestion-note-0")).to_have_text(
            "review S1: the judge is unsure whether it supports the claim")
        expect(page.locator("#suggestion-0")).to_have_attribute("data-action", "review")
        expect(page.locator("#suggestion .suggested-passage blockquote")).to_have_text(
            "Standard items can be returned up to 30 days after delivery.")
        expect(page.locator("#suggestion-judgment-0")).to_contain_text("The judge's verdict: full (p(support) 0.62, unsure)")
        expect(page.locator("#suggestion-review-0")).to_have_text(
            "Nothing to apply: read the passage and decide; the boxes below change the citations.")
        expect(page.locator("#apply-suggestion")).to_have_count(0)
        page.locator("#st-0").focus()
        page.keyboard.press("a")
        expect(page.locator("#status")).to_have_text(
            "Nothing to apply to C1 — review S1: the judge is unsure whether it supports the claim.")
        expect(page.locator("#inspector-citations")).to_have_text("S1")
        expect(page.locator("#cite-S1")).to_be_checked()
        expect(page.locator("#cite-S6")).not_to_be_checked()

def test_a_passage_with_markup_is_shown_as_text(chromium, tmp_path):
    case = {
        "id": "xss", "question": f"Is {XSS} safe?",
        "sources": [{"id": "X1", "title": XSS, "version": XSS, "text": XSS}],
        "answers": [{"id": "a", "system": XSS, "statements": [{"id": "C1", "text": f"It says {XSS}", "citations": ["X1"]}]}],
        "labels": [{"claim": f"It says {XSS}", "passages": ["X1"], "label": "full", "explanation": XSS}],
    }
    path = tmp_path / "xss.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    with serve(desk_session([str(path)])) as url, open_page(chromium, url) as page:
        expect(page.locator("#passage-X1 .p-text")).to_have_text(XSS)
        expect(page.locator("#cited-X1 blockquote")).to_have_text(XSS)
        expect(page.locator("#st-0 .st-text")).to_have_text(f"It says {XSS}")
        expect(page.locator("#inspector-judgment")).to_contain_text(XSS)
        page.click("#review-toggle")
        expect(page.locator("#review-claim")).to_have_text(f"It says {XSS}")
        # an onerror can only run on an element the markup made: there is none anywhere on the page (the desk
        # shows no images), and no script holds the injected text; so the flag below cannot be set later
        assert page.locator("img").count() == 0
        assert page.evaluate("[...document.scripts].filter(s => s.textContent.includes('__xss')).length") == 0
        assert page.locator("#desk script, header script").count() == 0
        assert page.evaluate("window.__xss") is None
        assert page.get_by_text(XSS, exact=True).first.is_visible()


RLO, LRI, PDI = "\u202e", "\u2067", "\u2069"
MARK = "⟨U+202E⟩"
# Any direction control left raw in what the page shows (text, tooltips, labels).
RAW_BIDI = """(() => {
  const bidi = /[\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069]/;
  const shown = [document.body.innerText];
  for (const el of document.querySelectorAll("[title], [aria-label]")) shown.push(el.title, el.getAttribute("aria-label"));
  return shown.filter((t) => t && bidi.test(t));
})()"""


def test_direction_controls_in_ids_and_claims_are_shown_as_marks(chromium, tmp_path, shots):
    # "\u202egnp.exe" displays as "exe.png" when the override is left to do its work.
    passage = f"F{RLO}gnp.exe"
    case = {
        "id": "rlo", "question": f"Which file is {RLO}gnp.exe?",
        "sources": [{"id": passage, "title": f"upload {RLO}fdp.exe",
                     "text": f"The upload is named {RLO}gnp.exe and {LRI}hidden{PDI} marks."}],
        "answers": [{"id": "a", "system": f"sys{RLO}tem",
                     "statements": [{"id": f"C{RLO}1", "text": f"It is {RLO}gnp.exe", "citations": [passage]}]}],
        "labels": [{"claim": f"It is {RLO}gnp.exe", "passages": [passage], "label": "full"}],
    }
    path = tmp_path / "rlo.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    with serve(desk_session([str(path)])) as url, open_page(chromium, url) as page:
        expect(page.locator("#st-0 .st-id")).to_have_text(f"C{MARK}1")
        text = page.locator("#st-0 .st-text")
        expect(text).to_have_text(f"It is {MARK}gnp.exe")
        mark = text.locator(".bidi-mark")
        expect(mark).to_have_text(MARK)
        expect(mark).to_be_visible()
        expect(mark).to_have_css("border-top-style", "solid")
        # shown in logical order: the mark, then "gnp" to its right (an override would put "exe" first)
        after = page.evaluate("""(() => {
          const mark = document.querySelector("#st-0 .st-text .bidi-mark");
          const range = document.createRange();
          range.setStart(mark.nextSibling, 0);
          range.setEnd(mark.nextSibling, 3);
          return [range.toString(), range.getBoundingClientRect().left - mark.getBoundingClientRect().right];
        })()""")
        assert after[0] == "gnp" and after[1] >= 0, after
        expect(page.locator("#passages .p-id")).to_have_text(f"F{MARK}gnp.exe")
        expect(page.locator("#passages .p-title")).to_have_text(f"upload {MARK}fdp.exe")
        expect(page.locator("#passages .p-text")).to_have_text(
            f"The upload is named {MARK}gnp.exe and ⟨U+2067⟩hidden⟨U+2069⟩ marks.")
        expect(page.locator("#question")).to_have_text(f"Question: Which file is {MARK}gnp.exe?")
        expect(page.locator("#case-select option:checked")).to_have_text(f"rlo — Which file is {MARK}gnp.exe?")
        expect(page.locator("#answer-select option:checked")).to_have_text(f"sys{MARK}tem (a)")
        expect(page.locator("#inspector-title")).to_have_text(f"Statement C{MARK}1")
        expect(page.locator("#inspector-citations")).to_have_text(f"F{MARK}gnp.exe")
        expect(page.locator("#st-0 .st-cites")).to_have_text(f"cites F{MARK}gnp.exe")
        # the edit field shows the marks too, and saving gives the text back as it was
        expect(page.locator("#statement-text")).to_have_value(f"It is {MARK}gnp.exe")
        page.click("#save-text")
        expect(page.locator("#status")).to_have_text(f"Text of C{MARK}1 saved.")
        expect(page.locator("#message")).to_be_hidden()
        assert page.evaluate("window.__desk.snap.answer.statements[0].text") == f"It is {RLO}gnp.exe"
        # the seed objects stay JSON: the control is written as its escape, and reads back as itself
        seed = page.text_content("#inspector-statement-json")
        assert "\\u202e" in seed and json.loads(seed)["statement"]["id"] == f"C{RLO}1"
        page.click("#review-toggle")
        expect(page.locator("#review-claim")).to_have_text(f"It is {MARK}gnp.exe")
        expect(page.locator("#review-position")).to_have_text(f"Claim 1 of 1 · statement C{MARK}1")
        assert page.evaluate(RAW_BIDI) == []
        # the data itself is unchanged: a citation edit sends and gets back the raw id
        page.click("#review-toggle")
        page.locator(".cite-toggle").click()
        settled(page)
        expect(page.locator("#st-0 .st-cites")).to_have_text("no citation")
        page.locator(".cite-toggle").click()
        settled(page)
        expect(page.locator("#st-0 .st-cites")).to_have_text(f"cites F{MARK}gnp.exe")
        assert page.evaluate("window.__desk.snap.answer.statements[0].citations") == [passage]
        page.screenshot(path=str(shots / "bidi-marks.png"), full_page=True)


def test_keyboard_only_select_a_statement_and_toggle_a_citation(exercises):
    page = exercises
    exercise(page, "wt-follow")
    figures(page, "2/4", "2/3")
    page.evaluate("document.activeElement.blur()")
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "st-0":
            break
    else:
        pytest.fail("Tab never reached the statements")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("j")
    expect(page.locator("#st-2")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#inspector-title")).to_have_text("Statement C3")
    # Tab from the statement reaches its threads; Enter on one opens it in the inspector.
    page.keyboard.press("k")
    page.keyboard.press("k")
    expect(page.locator("#st-0")).to_be_focused()
    for _ in range(20):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "thread-0-S2":
            break
    else:
        pytest.fail("Tab never reached C1's thread")
    page.keyboard.press("Enter")
    expect(page.locator("#thread-0-S2")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#cited-S2")).to_have_class("cited-passage focus-thread")
    # Back to C3 and cite S3 with the keyboard alone.
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(page.locator("#st-2")).to_be_focused()
    expect(page.locator("#inspector-title")).to_have_text("Statement C3")
    page.keyboard.press("i")
    expect(page.locator("#cite-S1")).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(page.locator("#cite-S3")).to_be_focused()
    page.keyboard.press("Space")
    figures(page, "3/4", "3/4")  # C3 now supported; C1 still cites S2, which earns nothing
    expect(page.locator("#cite-S3")).to_be_checked()
    expect(page.locator("#cite-S3")).to_be_focused()
    page.keyboard.press("Space")
    figures(page, "2/4", "2/3")


def test_a_narrow_window_stacks_the_panels(chromium, desk_url, shots):
    with open_page(chromium, desk_url + "walkthrough", width=400, height=800) as page:
        exercise(page, "wt-follow")
        figures(page, "2/4", "2/3")
        for panel in ("#scores-panel", "#map", "#inspector"):
            expect(page.locator(panel)).to_be_visible()
            box = page.locator(panel).bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 400, (panel, box)
        assert page.locator("#map").bounding_box()["y"] < page.locator("#inspector").bounding_box()["y"]
        expect(page.locator("#thread-0-S2")).to_be_attached()
        widths = page.evaluate("[document.body.scrollWidth, document.documentElement.scrollWidth, window.innerWidth]")
        assert max(widths[:2]) <= widths[2], widths
        page.screenshot(path=str(shots / "narrow.png"), full_page=True)


def test_the_3d_view_or_its_fallback(chromium, desk_url, shots):
    # Without the build file, and without WebGL: a visible note each time, and the 2D map stays.
    no_webgl = ("const get = HTMLCanvasElement.prototype.getContext; HTMLCanvasElement.prototype.getContext = "
                "function (kind, ...rest) { return /webgl/.test(kind) ? null : get.call(this, kind, ...rest); };")
    for why, text in (("no build", "not built"), ("no webgl", "WebGL")):
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        try:
            page = context.new_page()
            if why == "no build":
                page.route("**/static/build/three-view.js", lambda route: route.fulfill(status=404, body="not built"))
            else:
                page.add_init_script(no_webgl)
            page.goto(desk_url)
            page.wait_for_selector("body[data-ready=true]")
            page.click("#view-3d")
            expect(page.locator("#map-note")).to_be_visible()
            expect(page.locator("#map-note")).to_contain_text(text)
            expect(page.locator("#map-2d")).to_be_visible()
            expect(page.locator("#view-2d")).to_have_attribute("aria-pressed", "true")
            expect(page.locator("#st-0")).to_be_visible()
        finally:
            context.close()

    with open_page(chromium, desk_url + "walkthrough") as page:
        exercise(page, "wt-trim")
        page.click("#view-3d")
        expect(page.locator("#view-3d-about")).to_contain_text("passage ids, ranks and titles only")
        canvas = page.locator("#three-canvas")
        note = page.locator("#map-note")
        # (the page's CSP forbids eval, so no wait_for_function: locators and evaluate only)
        webgl = page.evaluate("(() => { const c = document.createElement('canvas');"
                              " return Boolean(c.getContext('webgl2') || c.getContext('webgl')); })()")
        if not BUILD.exists() or not webgl:
            # No build, or no WebGL in this chromium: the fallback note and the 2D map.
            expect(note).to_contain_text("2D map")
            expect(page.locator("#map-2d")).to_be_visible()
            return
        # built and WebGL there: the 3D view itself must start (its own fallback note would be a failure)
        expect(canvas).to_be_visible()
        expect(note).to_be_hidden()
        expect(page.locator("#map-2d")).to_be_hidden()
        small = canvas.bounding_box()
        page.evaluate(NEXT_FRAMES)  # the scene drawn at this size before it is kept
        page.locator("#map").screenshot(path=str(shots / "3d.png"))
        page.click("#expand")
        expect(page.locator("#expand")).to_have_attribute("aria-pressed", "true")
        page.evaluate(CANVAS_WIDER_THAN, small["width"] + 100)  # the layout's state, observed as it changes
        big = canvas.bounding_box()
        assert big["width"] * big["height"] > 1.5 * small["width"] * small["height"], (small, big)
        page.evaluate(NEXT_FRAMES)
        page.screenshot(path=str(shots / "3d-expanded.png"))
        # Clicking the scene's centre without dragging selects whatever is there (or nothing), without errors.
        canvas.click()
        page.keyboard.press("Escape")
        expect(page.locator("#expand")).to_have_attribute("aria-pressed", "false")
        page.click("#view-2d")
        expect(page.locator("#map-2d")).to_be_visible()
        expect(page.locator("#thread-0-S1")).to_be_attached()


# Waits for the page's own state from inside it (the page's CSP forbids eval, so no wait_for_function).
NEXT_FRAMES = "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"
# Resolves once #three-canvas is at least `width` wide; the 60 s timer only bounds a failure, as expect's
# ceiling does, so that a layout that never changes fails the test instead of hanging it.
CANVAS_WIDER_THAN = """width => new Promise((done, fail) => {
  const canvas = document.getElementById('three-canvas');
  const wide = () => canvas.getBoundingClientRect().width >= width;
  if (wide()) return done();
  const bound = setTimeout(() => fail(new Error('#three-canvas never grew to ' + width + ' px')), 60000);
  new ResizeObserver((_, observer) => {
    if (wide()) { observer.disconnect(); clearTimeout(bound); done(); }
  }).observe(canvas);
})"""


class HeldEdits:
    """Holds each edit and human label on the server until the test lets it through: a deliberately slow
    judge whose pace the test sets, so that nothing here depends on the clock."""

    def __init__(self, session):
        self.arrived = threading.Semaphore(0)
        self.release = threading.Event()
        for name in ("edit_statement", "set_human_label"):
            setattr(session, name, self._held(getattr(session, name)))

    def _held(self, method):
        def held(*args, **kwargs):
            self.arrived.release()
            if not self.release.wait(60):
                raise RuntimeError("the test never let the change through")
            return method(*args, **kwargs)
        return held

    def wait_for_one(self) -> None:
        assert self.arrived.acquire(timeout=30), "the change never reached the server"


def test_clicks_and_keys_made_while_an_edit_is_judged_are_applied_in_order(chromium):
    session = desk_session(())
    held = HeldEdits(session)
    with serve(session) as url, open_page(chromium, url) as page:
        page.select_option("#case-select", "returns-desk")
        expect(page.locator("#answer-select")).to_have_value("original")
        settled(page)
        select(page, 0)
        expect(page.locator("#inspector-citations")).to_have_text("S2")

        # C1 cites S1 too; the server holds the edit. Meanwhile S3 is ticked: it waits its turn, visibly.
        page.click("#cite-S1")
        held.wait_for_one()
        page.click("#cite-S3")
        expect(page.locator("body")).to_have_attribute("data-pending", "2")
        expect(page.locator("#status")).to_have_text("Working… (1 more change waits its turn)")
        for box in ("#cite-S1", "#cite-S3"):
            expect(page.locator(box)).to_be_checked()  # both stay ticked while they wait
        expect(page.locator("#inspector-citations")).to_have_text("S2")  # the server has not answered yet
        held.release.set()
        settled(page)
        expect(page.locator("#inspector-citations")).to_have_text("S2, S1, S3")
        expect(page.locator("#status")).to_have_text("C1 now cites S2, S1, S3.")
        expect(page.locator("#message")).to_be_hidden()
        expect(page.locator("#score-citation_recall")).to_have_attribute("data-counts", "3/4")

        # Label keys in review mode: the second key press labels the next claim, not nothing.
        held.release.clear()
        page.keyboard.press("r")
        expect(page.locator("#review-position")).to_have_text("Claim 1 of 4 · statement C1")
        page.locator("#review-position").click()  # out of any field: keys are shortcuts
        page.keyboard.press("1")
        held.wait_for_one()
        expect(page.locator("#review-position")).to_have_text("Claim 2 of 4 · statement C2")
        page.keyboard.press("4")
        # and an answer chosen meanwhile opens after both labels are in
        page.select_option("#answer-select", "padded")
        expect(page.locator("body")).to_have_attribute("data-pending", "3")
        held.release.set()
        settled(page)
        expect(page.locator("#answer-select")).to_have_value("padded")
        page.select_option("#answer-select", "original")
        settled(page)
        rows = page.locator("#human-labels tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.nth(0)).to_contain_text("full")
        expect(rows.nth(1)).to_contain_text("contradicts")
        select(page, 0)
        expect(page.locator("#inspector-citations")).to_have_text("S2, S1, S3")  # the edit stayed with its answer


def test_a_refused_change_while_others_wait_is_shown_and_the_rest_applied(chromium):
    session = desk_session(())
    held = HeldEdits(session)
    with serve(session) as url, open_page(chromium, url) as page:
        page.select_option("#case-select", "returns-desk")
        settled(page)
        select(page, 0)
        page.fill("#statement-text", "Standard items may be returned within 60 days of delivery.")
        page.click("#save-text")  # no curated label for the new text: refused, once let through
        held.wait_for_one()
        page.click("#cite-S1")
        held.release.set()
        settled(page)
        message = page.locator("#message")
        expect(message).to_contain_text("no curated label")  # the later success does not hide the refusal
        expect(page.locator("#inspector-citations")).to_have_text("S2, S1")
        expect(page.locator("#statement-text")).to_have_value(
            "Standard items may be returned within 60 days of delivery.")  # the typed text is kept


def test_the_page_declares_the_language_of_its_answers_and_passages(chromium):
    """Chinese labelled pairs: the page says zh, its own words en, each statement, claim and passage zh."""
    pairs = Path(__file__).parent / "fixtures" / "formats" / "pairs_citecheck.jsonl"
    with serve(desk_session([str(pairs)], source_format="pairs")) as url, open_page(chromium, url) as page:
        expect(page.locator("html")).to_have_attribute("lang", "zh")
        for chrome in ("header#top", "main#desk", "footer"):
            expect(page.locator(chrome)).to_have_attribute("lang", "en")
        expect(page.locator("#st-0 .st-text")).to_have_attribute("lang", "zh")
        expect(page.locator("#passages .p-text").first).to_have_attribute("lang", "zh")
        select(page, 0)
        expect(page.locator("#inspector-text")).to_have_attribute("lang", "zh")
        expect(page.locator("#inspector-body blockquote.passage-text").first).to_have_attribute("lang", "zh")
    with serve(desk_session(())) as url, open_page(chromium, url) as page:  # the English examples
        expect(page.locator("html")).to_have_attribute("lang", "en")
        expect(page.locator("#st-0 .st-text")).not_to_have_attribute("lang", "zh")
