"""Markdown and terminal reports: the summary first (one table per system, counts and intervals), the
answers after; user text never becomes HTML or markup; piped output is never cut to a width."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from citeaudit.cli import main
from citeaudit.report.render import WORST, md_text, summary_tables, text_report, to_markdown, worst_answers
from citeaudit.stats import bootstrap_interval

from run_copies import as_log, copied_run, golden, resum, write

HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(2)">',
    "<svg onload=alert(3)>",
    "a | b || c",
    "line one\nline two\r\nline three",
    "`code` *stars* _under_ [link](javascript:alert(4)) ~~gone~~ \\ &amp; &lt;",
    "rr_sphere_0001_with_underscores",
]


class _Page(HTMLParser):
    """The tags of rendered HTML and the text of every table row's cells."""

    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append("\n")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _render(markdown: str) -> _Page:
    """Markdown as a viewer that passes raw HTML through would show it (CommonMark + GFM tables)."""
    page = _Page()
    page.feed(MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown))
    return page


def _normalised(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


@pytest.mark.parametrize("text", HOSTILE)
def test_a_table_cell_shows_the_text_and_nothing_else(text):
    page = _render(f"| x | y |\n|---|---|\n| {md_text(text, cell=True)} | end |\n")
    assert set(page.tags) <= {"table", "thead", "tbody", "tr", "th", "td", "br"}, page.tags
    assert page.rows[1] == [_normalised(text), "end"]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_line_of_text_shows_the_text_and_nothing_else(text):
    page = _render(f"## Case {md_text(text)}\n")
    assert set(page.tags) == {"h2"}, page.tags
    html = MarkdownIt("commonmark", {"html": True}).render(f"## Case {md_text(text)}\n")
    shown = html.removeprefix("<h2>").removesuffix("</h2>\n")
    from html import unescape

    assert unescape(shown) == "Case " + " ".join(_normalised(text).split("\n"))


def test_intraword_underscores_stay_readable():
    assert md_text("rr_sphere_0001") == "rr_sphere_0001"
    assert md_text("_lead and trail_") == "\\_lead and trail\\_"


def _hostile_results():
    data = golden()
    results = data["results"]
    answer = results["answers"][0]
    results["cases"][0].update(id=HOSTILE[0], question=HOSTILE[4] + HOSTILE[1])
    answer.update(case=HOSTILE[0], answer=HOSTILE[2], system=HOSTILE[3])
    claim = answer["claims"][1]
    claim.update(text=HOSTILE[1] + HOSTILE[4], citations=[HOSTILE[5]])
    claim["judgment"]["explanation"] = HOSTILE[0] + " | " + HOSTILE[4]
    for other in results["answers"][1:]:
        other["case"] = HOSTILE[0]
    resum(data)
    log = as_log(data)
    return log.results, log


def test_the_markdown_report_runs_no_html_and_keeps_every_table_whole():
    results, log = _hostile_results()
    markdown = to_markdown(results, log.signature)
    page = _render(markdown)
    assert "script" not in page.tags and "img" not in page.tags and "svg" not in page.tags and "a" not in page.tags
    claim_rows = [r for r in page.rows if len(r) == 5 and r[0] != "#"]
    assert claim_rows and all(len(r) == 5 for r in page.rows if r and r[0][:1].isdigit())
    hostile_row = next(r for r in claim_rows if r[0] == "2.1" and "onerror" in r[1])
    assert hostile_row[1] == _normalised(HOSTILE[1] + HOSTILE[4])
    assert hostile_row[2] == HOSTILE[5] and hostile_row[4] == _normalised(HOSTILE[0] + " | " + HOSTILE[4])
    # every summary table keeps three columns, whatever the system is called
    assert all(len(r) == 3 for r in page.rows if r and r[0] in ("support S", "measure"))


def test_markdown_puts_the_summary_first_with_one_table_per_system():
    log = as_log(copied_run(4))
    markdown = to_markdown(log.results, log.signature)
    assert markdown.index("## Summary") < markdown.index("## Case case-00000")
    headings = [line for line in markdown.splitlines() if line.startswith("### system") or line.startswith("### all")]
    assert headings == ["### system A · 4 answers", "### system B · 4 answers", "### system C · 4 answers",
                        "### all systems · 12 answers"]
    assert "| support S | 4/12 (33.3 %) | 33.3 – 33.3 % |" in markdown  # A's copies agree: so do resamples
    assert markdown.count("### Answer ") == 12


def test_an_interval_resamples_the_answers_counts():
    """A's answers alternate between 0/3 and 3/3 supported: the interval is the bootstrap of that
    ratio over the answers, and it holds the figure; from fewer than 20 answers, widened to span the
    t interval of a jackknife over them."""
    from citeaudit.stats import jackknife_interval, widest

    def edit(i, answer):
        if answer["system"] == "A":
            answer["metrics"]["support"].update(numerator=3 * (i % 2), value=float(i % 2))

    for answers in (20, 10):
        log = as_log(copied_run(answers, edit))
        table = next(t for t in summary_tables(log.results) if t.title == "system A")
        row = next(r for r in table.rows if r.measure == "support")
        assert (row.figure.numerator, row.figure.denominator) == (3 * answers // 2, 3 * answers)
        support = [a.metrics["support"] for a in log.results.answers if a.system == "A"]
        num = [r.numerator for r in support]
        expected = bootstrap_interval(lambda ix: sum(num[i] for i in ix) / (3 * len(ix)), len(support))
        if answers < 20:  # each answer left out in turn: 4/9 or 5/9 supported
            left_out = [(sum(num) - k) / (3 * (answers - 1)) for k in num]
            expected = widest(expected, jackknife_interval(0.5, left_out, bounds=(0.0, 1.0)))
            assert expected[1] - expected[0] > 0.6  # the t interval of ten 0-or-1 answers
        assert row.interval == pytest.approx(expected)
        assert row.interval[0] < 0.5 < row.interval[1]


def test_the_worst_answers_are_the_lowest_supported_and_the_rest_are_counted():
    def edit(i, answer):  # copy 7's answer A is the only one with no supported claim
        if answer["system"] == "A" and i == 7:
            answer["metrics"]["support"].update(numerator=0, value=0.0)

    log = as_log(copied_run(6 + 2, edit))
    worst = worst_answers(log.results, 3)
    assert [a.answer for a in worst] == ["A-00007", "A-00000", "A-00001"]


def _unsure_answer_7(i, answer):
    """Copy 7's answer A: its supported claim and one unsupported claim left unsure (0/1 supported, 2 unsure)."""
    if answer["system"] == "A" and i == 7:
        for c in (0, 2):
            answer["claims"][c]["judgment"]["uncertain"] = True
        answer["metrics"]["support"].update(numerator=0, denominator=1, value=0.0)


def test_an_answer_ranks_by_its_support_at_best_never_by_judged_claims_alone():
    """0/1 supported beside 2 unsure is at best 2/3: it ranks after every answer whose judged claims show
    1/3, although its judged claims alone read 0 %."""
    log = as_log(copied_run(9, _unsure_answer_7))
    ranked = [a.answer for a in worst_answers(log.results, 9)]
    assert ranked == [f"A-{i:05d}" for i in (0, 1, 2, 3, 4, 5, 6, 8, 7)]
    everyone = [a.answer for a in worst_answers(log.results, 27)]
    assert everyone.index("A-00007") < everyone.index("B-00000")  # below 1/1 at best


def test_the_text_report_says_the_rule_and_each_ranked_answer_s_unsure_claims():
    log = as_log(copied_run(9, _unsure_answer_7))
    out = text_report(log.results, log.signature)
    assert "the 10 answers with the lowest support, even counting unsure claims as supported (17 of 27 left out" in out
    assert "case case-00007 · answer A-00007 · system A · 0/1 supported, 2 unsure" in out
    assert "case case-00000 · answer A-00000 · system A · 1/3 supported\n" in out
    plain = as_log(copied_run(9))  # no unsure claim: no rule to state
    assert "the 10 answers with the lowest support (17 of 27 left out" in text_report(plain.results, plain.signature)


def test_text_and_markdown_reports_give_an_unsure_claim_its_own_cause(runner, tmp_path):
    from test_html_report import unsure_log

    path = write(tmp_path / "run.json", json.loads(unsure_log().model_dump_json()))
    for fmt in ("text", "markdown"):
        out = runner.invoke(main, ["report", str(path), "--format", fmt]).stdout
        assert "- t/a:\n  - judgment: claim 2.1 *judge unsure* — b\n" in out, fmt
        assert "unsupported" not in out.split("## Diagnosis")[1]
    data = json.loads(runner.invoke(main, ["report", str(path), "--format", "json"]).stdout)
    (finding,) = data["diagnosis"]["t/a"]
    assert (finding["cause"], finding["area"]) == ("judge_unsure", "judgment")


# --- the terminal, piped ---------------------------------------------------------------------------------

LONG_ID = "rr_sphere_" + "x" * 150 + "_end"


def _long_run(tmp_path: Path, cases: int) -> Path:
    def edit(i, answer):
        answer["answer"] = f"{LONG_ID}-{answer['answer']}"

    return write(tmp_path / "run.json", copied_run(cases, edit))


def test_report_text_shows_the_summary_and_the_worst_answers_by_default(runner, tmp_path):
    run = _long_run(tmp_path, 5)  # 15 answers
    result = runner.invoke(main, ["report", str(run), "--format", "text"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.index("system A · 5 answers") < out.index("settings: ") < out.index("lowest support")
    assert f"the {WORST} answers with the lowest support (5 of 15 left out" in out
    assert out.count(f"answer {LONG_ID}-") == WORST and f"answer {LONG_ID}-A-00004" in out
    assert "…" not in out
    detailed = runner.invoke(main, ["report", str(run), "--format", "text", "--details"]).stdout
    assert detailed.count(f"answer {LONG_ID}-") == 15 and "left out" not in detailed


def test_piped_text_is_full_width_and_plain(tmp_path):
    run = _long_run(tmp_path, 1)
    done = subprocess.run([sys.executable, "-m", "citeaudit.cli", "report", str(run), "--format", "text"],
                          capture_output=True, text=True, env={"COLUMNS": "40", "PATH": ""}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"answer {LONG_ID}-A-00000" in done.stdout and "…" not in done.stdout
    assert "\x1b[" not in done.stdout  # no colour codes in a pipe
    widest = max(len(line) for line in done.stdout.splitlines())
    assert widest > 150


def test_score_text_follows_the_same_rules(runner, tmp_path):
    runner.invoke(main, ["examples", "--write", str(tmp_path)])
    text = runner.invoke(main, ["score", str(tmp_path / "p7_archive.json"), "--k", "2,3,4"]).stdout
    assert text.index("summary") < text.index("Case p7")  # three answers: every one is shown
    assert "answer A" in text and "answer C" in text and "left out" not in text


def test_markdown_report_of_a_hostile_log_through_the_cli(runner, tmp_path):
    _, log = _hostile_results()
    path = write(tmp_path / "hostile.json", json.loads(log.model_dump_json()))
    out = runner.invoke(main, ["report", str(path), "--format", "markdown"]).stdout
    assert "<script>" not in out and "<img" not in out and "<svg" not in out
    assert "&lt;script&gt;" in out


def test_a_terminal_gets_rich_tables_with_user_text_shown_literally():
    import io

    from rich.console import Console

    from citeaudit.report.render import print_text

    data = copied_run(1)
    data["results"]["answers"][0]["claims"][0]["text"] = "Eco [red]now[/red] \x1b[2J done"
    log = as_log(data)
    buffer = io.StringIO()
    print_text(log.results, log.signature, Console(file=buffer, force_terminal=True, width=200, color_system=None))
    out = buffer.getvalue()
    assert "┏" in out and "[red]now[/red]" in out and "\\x1b[2J" in out and "\x1b" not in out


def test_a_text_report_written_to_a_file_is_what_a_pipe_gets(runner, tmp_path):
    run = _long_run(tmp_path, 5)
    piped = runner.invoke(main, ["report", str(run), "--format", "text"]).stdout
    written = tmp_path / "report.txt"
    assert runner.invoke(main, ["report", str(run), "--format", "text", "-o", str(written)]).exit_code == 0
    assert written.read_text(encoding="utf-8") == piped and "## Diagnosis" in piped


# --- signatures on the terminal: the judge once, every signature when asked -------------------------------


def _model_judged_run(tmp_path: Path) -> Path:
    """A run whose judge's signature is long, as the model judge's is, read by every judged measure."""
    judge = "model:judge-v1[onnx:judge-v1@1#61a844ac4e8c|max=256|map=full=full,partial=partial]|guard=on@4|cal=on"
    text = json.dumps(resum(copied_run(2))).replace(golden()["judge"], judge)  # its judgments' too, for rescore
    return write(tmp_path / "run.json", json.loads(text))


def test_the_terminal_prints_the_judge_once_and_every_signature_when_asked(runner, tmp_path):
    from citeaudit.metrics.signature import parse_rendered
    from citeaudit.report.render import signatures

    run = _model_judged_run(tmp_path)
    log = as_log(json.loads(run.read_text()))
    judge = log.signature.judge
    whole = signatures(log.results, log.signature)
    judged = [s for _, s in whole if "judge" in parse_rendered(s)[1]]
    assert len(judged) >= 4  # the run has the repetition this is about
    for command in (["report", str(run), "--format", "text"], ["rescore", str(run)]):
        out = runner.invoke(main, command).stdout
        summary = out[:out.index("\nCase ")]  # the summary and what follows it, before the answers
        assert summary.count(judge) == 1 and f"\njudge: {judge}\n" in summary, command
        assert f"settings: {log.signature.settings([n for n, _ in whole])} (" in summary
        assert "signatures:" not in out and not any(s in out for _, s in whole if "judge" in s), command
        every = runner.invoke(main, [*command, "--signatures"]).stdout
        assert "signatures:" in every and all(f"  {n}: {s}\n" in every for n, s in whole), command
        assert "settings: " not in every
    # the formats made to be kept carry every signature whatever the flag
    md = runner.invoke(main, ["report", str(run), "--format", "markdown"]).stdout
    assert all(s in md for _, s in whole)
    data = json.loads(runner.invoke(main, ["report", str(run), "--format", "json"]).stdout)
    assert {r["signature"] for r in data["summary"]["all"].values() if "signature" in r} >= set(judged)
