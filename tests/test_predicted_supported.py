"""A system's own "supported?" flag (`predicted_supported`): its precision and recall against citeaudit's
verdict on the whole answer, recall over the answers whose retrieval was sufficient (docs/metrics.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from citeaudit.cli import main
from citeaudit.errors import InputError, UnlabelledPair
from citeaudit.examples import example_text, load_example
from citeaudit.judges import Judgments, make_judge
from citeaudit.metrics import Settings, score_cases
from citeaudit.metrics import names as N
from citeaudit.records import Judgment, SourcePassage
from citeaudit.run.results import results_of
from citeaudit.run.log import build_runlog, read_runlog, rescore, write_runlog

from helpers import load

P, R = N.PREDICTED_SUPPORT_PRECISION, N.PREDICTED_SUPPORT_RECALL


class TableJudge:
    """Labels claims by their text: "ok …" full, "bad …" none, "unsure …" an uncertain full; any other
    text has no label (UnlabelledPair, left unjudged under missing_labels="skip")."""

    name = "table"
    signature = "table@test"

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        word = text.split()[0]
        if word == "ok":
            return Judgment(label="full", judge=self.signature)
        if word == "bad":
            return Judgment(label="none", judge=self.signature)
        if word == "unsure":
            return Judgment(label="full", judge=self.signature, uncertain=True)
        raise UnlabelledPair(f"no label for {text!r}")


# An answer's claims, by kind; each cites S1.
ANSWERS = {
    "supported": ["ok one.", "ok two."],
    "unsupported": ["ok one.", "bad two."],
    "uncertain": ["ok one.", "unsure two."],
    "unjudged": ["ok one.", "unlabelled two."],
    "unjudged and unsupported": ["bad one.", "unlabelled two."],
    "empty": [],
}
# The case's ranking and required facts (fact f1 documented by S1, f2 by S2; each passage its own document).
RETRIEVAL = {
    "sufficient": {"ranking": ["S3", "S1", "S2"], "facts": ["S1", "S2"]},
    "one fact missed": {"ranking": ["S1", "S3"], "facts": ["S1", "S2"]},
    "no ranking": {"ranking": None, "facts": ["S1"]},
    "no required facts": {"ranking": ["S1", "S2"], "facts": []},
}


def case_with(answers: list[tuple[str, str, bool | None]], retrieval: str = "sufficient", case_id: str = "c") -> dict:
    """A case whose answers are (answer id, kind of ANSWERS, flag or None for no flag)."""
    setup = RETRIEVAL[retrieval]
    case = {
        "id": case_id, "question": "q?",
        "sources": [{"id": s, "text": f"passage {s}"} for s in ("S1", "S2", "S3")],
        "facts": [{"id": f"f{i}", "text": f"fact {i}", "passages": [p]} for i, p in enumerate(setup["facts"], 1)],
        "answers": [],
    }
    if setup["ranking"] is not None:
        case["ranking"] = setup["ranking"]
    for answer_id, kind, flag in answers:
        answer = {"id": answer_id, "system": answer_id.split("-")[0],
                  "statements": [{"text": t, "citations": ["S1"]} for t in ANSWERS[kind]]}
        if flag is not None:
            answer["predicted_supported"] = flag
        case["answers"].append(answer)
    return case


def score(cases: list[dict], settings: Settings = Settings(missing_labels="skip")):
    return score_cases(load(cases), Judgments(TableJudge()), settings)


def counts(ratios) -> dict[str, tuple[int, int]]:
    return {name: (r.numerator, r.denominator) for name, r in ratios.items() if name in N.PREDICTED_MEASURES}


# (answer kind, flag, retrieval) -> (precision counts, recall counts) of that one answer
TABLE = [
    ("supported", True, "sufficient", (1, 1), (1, 1)),
    ("supported", False, "sufficient", (0, 0), (0, 1)),
    ("supported", True, "one fact missed", (1, 1), (0, 0)),
    ("supported", False, "one fact missed", (0, 0), (0, 0)),
    ("supported", True, "no ranking", (1, 1), (0, 0)),
    ("supported", True, "no required facts", (1, 1), (0, 0)),
    ("unsupported", True, "sufficient", (0, 1), (0, 0)),
    ("unsupported", False, "sufficient", (0, 0), (0, 0)),
    ("uncertain", True, "sufficient", (0, 1), (0, 0)),  # an uncertain judgment is never support
    ("uncertain", False, "sufficient", (0, 0), (0, 0)),
    ("empty", True, "sufficient", (0, 1), (0, 0)),  # an empty answer is not supported
    ("empty", False, "sufficient", (0, 0), (0, 0)),
    ("unjudged", True, "sufficient", (0, 0), (0, 0)),  # the verdict is open: in neither denominator
    ("unjudged and unsupported", True, "sufficient", (0, 1), (0, 0)),  # one claim judged none settles it
]


@pytest.mark.parametrize("kind,flag,retrieval,precision,recall", TABLE,
                         ids=[f"{k}, flag {f}, {r}" for k, f, r, *_ in TABLE])
def test_one_answer(kind, flag, retrieval, precision, recall):
    report = score([case_with([("a", kind, flag)], retrieval)])
    assert counts(report.answers[0].ratios()) == {P: precision, R: recall}


@pytest.mark.parametrize("kind", list(ANSWERS))
@pytest.mark.parametrize("retrieval", list(RETRIEVAL))
def test_no_flag_no_figures(kind, retrieval):
    report = score([case_with([("a", kind, None)], retrieval)])
    assert counts(report.answers[0].ratios()) == {}
    assert counts(report.summary()) == {}


def test_an_abstention_is_not_supported():
    case = case_with([("a", "supported", True)])
    case["answers"][0]["statements"] = [{"text": "The sources do not say.", "kind": "abstention"}]
    assert counts(score([case]).answers[0].ratios()) == {P: (0, 1), R: (0, 0)}


def test_summary_sums_per_system_and_says_why_a_figure_is_undefined():
    cases = [
        case_with([("x-1", "supported", True), ("x-2", "unsupported", True), ("y-1", "supported", False),
                   ("z-1", "supported", None)], "sufficient", "c1"),
        case_with([("x-3", "supported", False), ("y-2", "unsupported", False), ("z-2", "unsupported", None)],
                  "one fact missed", "c2"),
        case_with([("x-4", "uncertain", True), ("y-3", "supported", False)], "sufficient", "c3"),
    ]
    report = score(cases)
    assert counts(report.summary()) == {P: (1, 3), R: (1, 3)}
    systems = {s: report.summary(rs) for s, rs in report.by_system().items()}
    assert counts(systems["x"]) == {P: (1, 3), R: (1, 1)}
    assert counts(systems["y"]) == {P: (0, 0), R: (0, 2)}
    assert counts(systems["z"]) == {}  # no answer of z carries the flag
    assert str(systems["y"][P]) == "n/a (no judged answer is flagged supported)"
    assert str(systems["y"][R]) == "0/2 (0.0 %)"
    only_insufficient = score([cases[1]])
    assert str(only_insufficient.summary()[R]) == "n/a (no supported answer whose ranking retrieved every required fact)"


def test_chosen_measures():
    case = [case_with([("a", "supported", True)])]
    assert counts(score(case, Settings(metrics=(N.SUPPORT,))).summary()) == {}
    chosen = score(case, Settings(metrics=(N.PREDICTED_SUPPORT_RECALL,))).summary()
    assert set(chosen) == {N.CITATION_PRESENCE, N.ABSTENTION, R} and counts(chosen) == {R: (1, 1)}
    assert counts(score(case, Settings(metrics=(N.CITATION_RECALL,))).summary()) == {}  # claims not judged


def test_the_flag_is_a_boolean_or_null():
    case = case_with([("a", "supported", None)])
    case["answers"][0]["predicted_supported"] = "yes"
    with pytest.raises(InputError, match=r"answers\[0\]\.predicted_supported"):
        load([case])
    case["answers"][0]["predicted_supported"] = None
    assert load([case])[0].case.answers[0].predicted_supported is None


# --- the CLI, the run log, and outputs without the flag -------------------------------------------------


def _p7_with_flags(tmp_path, flags=(True, False, True)):
    data = json.loads(load_example_text())
    for answer, flag in zip(data["answers"], flags):
        answer["predicted_supported"] = flag
    path = tmp_path / "p7_flagged.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def load_example_text() -> str:
    return example_text("p7_archive.json")


def test_cli_score_shows_the_figures(runner, tmp_path):
    """P7 with curated labels: A (flag true) is unsupported, B (false) and C (true) are supported; the
    ranking holds D1 and D3, every required fact's passages."""
    out = runner.invoke(main, ["score", str(_p7_with_flags(tmp_path)), "--format", "json"])
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout)["summary"]
    for name, figures in ((P, (1, 2)), (R, (1, 2))):
        shown = summary["all"][name]
        assert (shown["numerator"], shown["denominator"], shown["value"]) == (*figures, 0.5)
        assert shown["signature"].startswith(f"{name}|judge:curated@1#")
    by_system = {s: (f[P]["numerator"], f[P]["denominator"], f[R]["numerator"], f[R]["denominator"])
                 for s, f in summary["by_system"].items()}
    assert by_system == {"A": (0, 1, 0, 0), "B": (0, 0, 0, 1), "C": (1, 1, 1, 1)}
    assert summary["by_system"]["B"][P]["reason"] == "no judged answer is flagged supported"


def test_streamed_scoring_gives_the_same_figures(runner, tmp_path):
    data = json.loads(_p7_with_flags(tmp_path).read_text(encoding="utf-8"))
    lines = tmp_path / "p7.jsonl"
    lines.write_text(json.dumps(data) + "\n", encoding="utf-8")
    whole = runner.invoke(main, ["score", str(lines), "--format", "json"])
    streamed = runner.invoke(main, ["score", str(lines), "--format", "jsonl"])
    assert whole.exit_code == streamed.exit_code == 0, streamed.output
    summary = json.loads(streamed.stdout.splitlines()[-1])["summary"]
    assert summary == json.loads(whole.stdout)["summary"]
    assert (summary["all"][P]["numerator"], summary["all"][P]["denominator"]) == (1, 2)


def test_run_log_round_trip(tmp_path):
    cases = load_example("p7_archive.json")
    flagged = [rc.case.model_copy(update={"answers": [
        a.model_copy(update={"predicted_supported": f}) for a, f in zip(rc.case.answers, (True, False, True))]})
        for rc in cases]
    cases = load([c.model_dump(mode="json") for c in flagged])
    judgments = Judgments(make_judge("curated", cases))
    report = score_cases(cases, judgments)
    path = tmp_path / "run.json"
    write_runlog(path, build_runlog(report, judgments))
    log = read_runlog(path)
    assert not log.edited
    assert [a.predicted_supported for a in log.cases[0].answers] == [True, False, True]
    assert log.results.summary.all[P].ratio().numerator == 1 and log.results.summary.all[R].ratio().denominator == 2
    rescored, _ = rescore(log)
    assert results_of(rescored).summary == log.results.summary == results_of(report).summary


def test_no_flag_leaves_outputs_as_they_were(runner, tmp_path, monkeypatch):
    """Absent and null flags: the same results and the same run log as a case that never heard of it."""
    data = json.loads(load_example_text())
    for answer in data["answers"]:
        answer["predicted_supported"] = None
    outputs = []
    for folder, text in (("plain", load_example_text()), ("nulls", json.dumps(data))):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "p7_archive.json").write_text(text, encoding="utf-8")
        monkeypatch.chdir(tmp_path / folder)  # the input's path is in the results: the same relative one
        outputs.append(runner.invoke(main, ["score", "p7_archive.json", "--format", "json"]).stdout)
    assert outputs[0] == outputs[1] and "predicted_support" not in outputs[0]
    log = build_runlog(*_scored(load_example("p7_archive.json")))
    with_nulls = build_runlog(*_scored(load(data, "p7_archive.json")))
    assert "predicted_supported" not in log.model_dump_json()
    assert with_nulls.model_dump_json() == log.model_copy(update={"created": with_nulls.created}).model_dump_json()


def _scored(cases):
    judgments = Judgments(make_judge("curated", cases))
    return score_cases(cases, judgments), judgments
