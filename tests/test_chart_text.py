"""The HTML report's charts against hostile text: control characters, bidirectional controls,
noncharacters, lone surrogates and very long names in system names and answer ids. vl-convert aborts
the whole process (a Rust panic, SIGABRT) on some of them, so the report is drawn in a subprocess here:
a regression fails as a crashed command, not as a crashed test run."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from citeaudit.judges import Judgments, make_judge
from citeaudit.metrics import Settings, score_cases
from citeaudit.report import charts
from citeaudit.report.html import render_html
from citeaudit.run.log import build_runlog

from helpers import load, make_case

needs_vl_convert = pytest.mark.skipif(not charts.available(), reason="vl-convert-python is not installed")

C0 = "".join(map(chr, range(0x20)))
C1 = "".join(map(chr, range(0x7f, 0xa0)))  # DEL and the C1 range
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
NONCHARACTERS = "\ufdd0\ufffe\uffff\U0001fffe\U0010ffff"
HOSTILE_SYSTEMS = {
    "c0": f"c0 {C0} end",
    "c1": f"c1 {C1} end",
    "bidi": f"bidi {BIDI} end",
    "noncharacters": f"nonchar {NONCHARACTERS} end",
    "long": "L" * 10_000,
    "title": "\x1b]0;owned\x07 bell",  # an OSC sequence that would set a terminal's title
}


def _run_log(systems: list[str], answer_ids: list[str] = ()) -> str:
    """A run log as JSON: one case, one answer per system name (a claim judged none, so that every chart,
    the diagnosis's too, has a bar per system), and answers named only by an id (their id is their system)."""
    claim = "Eco lowers energy use."
    answers = [{"id": f"a{i}", "system": s, "statements": [{"text": claim, "citations": ["S1"]}]}
               for i, s in enumerate(systems)]
    answers += [{"id": a, "statements": [{"text": claim, "citations": ["S1"]}]} for a in answer_ids]
    case = make_case([], answers_extra=answers[1:], labels=[{"claim": claim, "passages": ["S1"], "label": "none"}])
    case["answers"][0] = answers[0]
    cases = load(case)
    judgments = Judgments(make_judge("curated", cases))
    log = build_runlog(score_cases(cases, judgments, Settings()), judgments)
    return log.model_dump_json()


def _report(tmp_path, log_json: str) -> tuple[subprocess.CompletedProcess, str]:
    """`citeaudit report RUN -o report.html` in a subprocess: its outcome and the page (empty if none)."""
    run, page = tmp_path / "run.json", tmp_path / "report.html"
    run.write_text(log_json, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "citeaudit", "report", str(run), "--format", "html", "-o", str(page)],
                          capture_output=True, text=True, timeout=300)
    return done, page.read_text(encoding="utf-8") if page.exists() else ""


def _text_in_svgs(page: str) -> str:
    return "".join(re.findall(r"<svg.*?</svg>", page, re.S))


@needs_vl_convert
def test_controls_noncharacters_and_long_names_are_drawn_escaped_not_fatal(tmp_path):
    done, page = _report(tmp_path, _run_log(list(HOSTILE_SYSTEMS.values()), answer_ids=["id\x07bell", "id\ufffe"]))
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert page.count("<svg") == 3  # histograms, label mix, causes (no ranking: no recall chart)
    drawn = _text_in_svgs(page)
    for escaped in ("\\x07", "\\x1b", "\\x9f", "\\u202e", "\\u2069", "\\ufffe", "\\U0010ffff"):
        assert escaped in drawn, escaped
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffe\uffff]", drawn)


@needs_vl_convert
def test_a_name_the_converter_fails_on_still_gives_the_report_with_a_note(tmp_path):
    # A label Vega cuts to its width limit inside a surrogate pair (measured: 100 emoji): the converter
    # raises instead of drawing. The report is written all the same, its tables whole, with the reason.
    done, page = _report(tmp_path, _run_log(["\U0001f600" * 100, "B"]))
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert 'class="summary"' in page
    if "<svg" not in page:  # a later converter may draw it; then there is nothing to note
        note = re.search(r'<p class="note" id="no-charts">(.*?)</p>', page, re.S).group(1)
        assert "the chart converter failed" in note and "Every figure is in the tables" in note


class PanicException(BaseException):
    """Stands in for pyo3's PanicException: a Rust panic that unwinds, raised as a BaseException."""


@pytest.mark.parametrize("failure", [PanicException("called `Option::unwrap()` on a `None` value\nat text.rs"),
                                     ValueError("Vega-Lite to SVG conversion failed:\nError: at line 5")])
def test_a_converter_failure_leaves_the_tables_and_names_the_reason(monkeypatch, failure):
    vl_convert = pytest.importorskip("vl_convert")

    def fail(spec):
        raise failure

    monkeypatch.setattr(vl_convert, "vegalite_to_svg", fail)
    monkeypatch.setattr(charts, "available", lambda: True)
    page = render_html(build_runlog_from(_run_log(["A", "B"])))
    assert "<svg" not in page and page.count('<table class="summary"') == 3  # A, B and retrieval
    note = re.search(r'<p class="note" id="no-charts">(.*?)</p>', page, re.S).group(1)
    first, second = str(failure).splitlines()
    assert f"the chart converter failed ({type(failure).__name__}: {first})" in note and second not in note


def test_an_interrupt_during_drawing_is_not_taken_for_a_converter_failure(monkeypatch):
    vl_convert = pytest.importorskip("vl_convert")

    def interrupted(spec):
        raise KeyboardInterrupt

    monkeypatch.setattr(vl_convert, "vegalite_to_svg", interrupted)
    monkeypatch.setattr(charts, "available", lambda: True)
    with pytest.raises(KeyboardInterrupt):
        render_html(build_runlog_from(_run_log(["A"])))


def build_runlog_from(log_json: str):
    from citeaudit.run.log import RunLog

    return RunLog.model_validate_json(log_json)


def test_every_text_of_a_spec_is_made_safe_wherever_it_sits():
    hostile = f"{C0}{C1}{BIDI}{NONCHARACTERS}\ud800\udfff"
    spec = {"data": {"values": [{"system": hostile, "n": 3, "ok": True, "none": None}]},
            "title": {"text": [hostile]}, "encoding": {"y": {"sort": [hostile, "plain"], "title": hostile},
                                                       "color": {"scale": {"domain": (hostile,)}}},
            hostile: {"tooltip": [{"field": hostile}]}}
    safe = charts.safe_text(spec)
    dumped = json.dumps(safe, ensure_ascii=False)
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufdd0-\ufdef\ufffe\uffff"
                         "\ud800-\udfff\U0001fffe\U0010ffff]", dumped)
    assert dumped.encode("utf-8")  # no lone surrogate left to fail the encoding
    escaped = safe["data"]["values"][0]["system"]
    assert escaped.startswith("\\x00\\x01") and "\t\n" in escaped and "\\ud800\\udfff" in escaped
    assert safe["encoding"]["y"]["sort"] == [escaped, "plain"] and safe["title"]["text"] == [escaped]
    assert safe["encoding"]["color"]["scale"]["domain"] == [escaped]
    assert safe[escaped]["tooltip"][0]["field"] == escaped
    assert safe["data"]["values"][0]["n"] == 3 and safe["data"]["values"][0]["ok"] is True
    assert spec["data"]["values"][0]["system"] == hostile  # the caller's spec is left as it was


def test_a_deeply_nested_spec_is_walked_without_recursion():
    spec: list = ["\x07"]
    for _ in range(5000):
        spec = [spec]
    safe = charts.safe_text(spec)
    for _ in range(5000):
        safe = safe[0]
    assert safe == ["\\x07"]
