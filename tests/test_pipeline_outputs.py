"""The one run pipeline's outputs, written as cases are scored, are byte for byte what the documents built
whole would be: the run log (`build_runlog` + `write_runlog`, checksum included) and the JSON results
(`results_of(...).model_dump_json(indent=2)`), across chunk boundaries, with a judge that works in
batches, under ALCE's conventions and with a subset of measures."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from citeaudit import register_judge
from citeaudit.cli import main
from citeaudit.judges import judgment_source
from citeaudit.files.loading import load_cases
from citeaudit.metrics import Settings, plan_requests, score_cases
from citeaudit.records import Judgment
from citeaudit.run.results import results_of
from citeaudit.parse.resolve import Reading
from citeaudit.run.log import build_runlog, read_runlog, write_runlog

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from synthetic import make_case  # noqa: E402


class BatchedWordJudge:
    """A judge that works in batches: full when every word of the claim is in the passages."""

    name = "batched-words"
    signature = "batched-words@1"

    def judge(self, text, passages):
        return self.judge_batch([type("R", (), {"text": text, "passages": passages})()])[0]

    def judge_batch(self, requests):
        out = []
        for r in requests:
            words = set(re.findall(r"\w+", " ".join(p.text for p in r.passages).lower()))
            claim = set(re.findall(r"\w+", r.text.lower()))
            out.append(Judgment(label="full" if claim <= words else "none", judge=self.signature))
        return out


@pytest.fixture(autouse=True)
def _batched_words_judge(monkeypatch):
    """The test judge, registered for these tests only (the registry lists every judge in messages)."""
    from citeaudit.judges import registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    register_judge("batched-words", "test judge: full when every claim word is in the passages")(
        lambda argument, cases: BatchedWordJudge())


def _write(path: Path, cases: list[dict]) -> Path:
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
    return path


def _whole(path: Path, spec: str, settings: Settings, reading: Reading):
    """The run as the loaded path made it: every case in memory, a batch judge judging every pair first."""
    cases = load_cases([str(path)], reading)
    judgments = judgment_source(spec, cases, conventions=reading.conventions)
    if judgments.batched:
        judgments.fill(plan_requests(cases, settings))
    report = score_cases(cases, judgments, settings)
    return report, judgments


def _without_time(text: str) -> str:
    return re.sub(r'"(created|checksum)": "[^"]*"', r'"\1": "…"', text)


CASES = [make_case(i) for i in range(600)]  # three chunks of the pipeline (256 cases each)
for i, case in enumerate(CASES[::7]):  # a second system, and answers to parse from raw text
    case["answers"].append({"id": "raw", "system": "other",
                            "text": " ".join(s["text"] + f" [{s['citations'][0]}]"
                                             for s in case["answers"][0]["statements"][:2])})


@pytest.mark.parametrize("spec, options, settings, reading", [
    ("curated", [], Settings(missing_labels="skip"), Reading()),
    ("batched-words", [], Settings(), Reading()),
    ("batched-words", ["--conventions", "alce", "--metrics", "citation_recall,citation_precision"],
     Settings(conventions="alce", metrics=("citation_recall", "citation_precision")), Reading(conventions="alce")),
])
def test_the_run_log_and_the_json_results_are_byte_for_byte_the_whole_documents(runner, tmp_path, spec, options,
                                                                                settings, reading):
    cases = CASES if reading.conventions == "citeaudit" else [
        {**c, "answers": [a for a in c["answers"] if "text" not in a]} for c in CASES]
    path = _write(tmp_path / "cases.jsonl", cases)
    extra = ["--missing-labels", "skip"] if settings.missing_labels == "skip" else []
    run = tmp_path / "run.json"
    result = runner.invoke(main, ["score", str(path), "--judge", spec, "--out", str(run), "--format", "json",
                                  *options, *extra])
    assert result.exit_code == 0, result.output

    report, judgments = _whole(path, spec, settings, reading)
    expected = tmp_path / "expected.json"
    write_runlog(expected, build_runlog(report, judgments, inputs=[str(path)]))
    written = run.read_text(encoding="utf-8")
    assert _without_time(written) == _without_time(expected.read_text(encoding="utf-8"))
    assert not read_runlog(run).edited  # its checksum is right
    assert result.stdout == results_of(report).model_dump_json(indent=2) + "\n"


def test_an_empty_run_and_a_run_without_retrieval_are_whole_documents_too(runner, tmp_path):
    case = {"id": "one", "question": "Q?", "sources": [{"id": "S1", "text": "The sky is blue."}],
            "answers": [{"id": "a", "statements": []}]}
    path = _write(tmp_path / "cases.jsonl", [case])
    run = tmp_path / "run.json"
    result = runner.invoke(main, ["score", str(path), "--out", str(run), "--format", "json"])
    assert result.exit_code == 0, result.output
    report, judgments = _whole(path, "curated", Settings(), Reading())
    expected = tmp_path / "expected.json"
    write_runlog(expected, build_runlog(report, judgments, inputs=[str(path)]))
    assert _without_time(run.read_text()) == _without_time(expected.read_text())
    assert '"judgments": []' in run.read_text() and not read_runlog(run).edited
    assert result.stdout == results_of(report).model_dump_json(indent=2) + "\n"


def test_text_and_markdown_from_the_pipeline_match_the_whole_results_rendered(runner, tmp_path):
    """What `score` prints as it goes (the summary from counts, the worst answers from a bounded heap or
    every case read back from a temporary file) is what the renderers print from the whole results."""
    from citeaudit.report.render import text_report, to_markdown

    path = _write(tmp_path / "cases.jsonl", CASES[:40])
    run = tmp_path / "run.json"
    for fmt, details in (("text", False), ("text", True), ("markdown", False)):
        scored = runner.invoke(main, ["score", str(path), "--out", str(run), "--format", fmt,
                                      *(["--details"] if details else [])])
        assert scored.exit_code == 0, scored.output
        log = read_runlog(run)
        whole = (text_report(log.results, log.signature, details) if fmt == "text"
                 else to_markdown(log.results, log.signature))
        assert scored.stdout == whole
        assert ("left out; --details shows every answer" in scored.stdout) == (fmt == "text" and not details)
