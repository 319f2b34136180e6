"""review --sources: an update is matched to the run's documents by id (one not mentioned is unchanged),
per case or for every case; a case file gives each case's complete sources."""

from __future__ import annotations

import json

import pytest

from citeaudit.cli import main
from citeaudit.errors import InputError
from citeaudit.judges import Judgments
from citeaudit.metrics import Settings, score_cases
from citeaudit.run.log import build_runlog, write_runlog
from citeaudit.run.review import review

from helpers import SetJudge, load, make_case

CASES = 60


def _cases(shared_ids: bool) -> list[dict]:
    """Cases citing both their documents: named per case (`d7a`), or alike in every case (`S1`, as
    ALCE's and RAGAS's positions are)."""
    out = []
    for i in range(CASES):
        ids = ("S1", "S2") if shared_ids else (f"d{i}a", f"d{i}b")
        case = make_case([{"text": f"Claim {i}.", "citations": list(ids)}], sources=ids, id=f"c{i}")
        case["sources"] = [{**d, "text": f"Case {i}, {d['id']}."} for d in case["sources"]]
        out.append(case)
    return out


def _run(tmp_path, cases: list[dict]):
    resolved = load(cases)
    judgments = Judgments(SetJudge({}))
    log = build_runlog(score_cases(resolved, judgments, Settings()), judgments)
    write_runlog(tmp_path / "run.json", log)
    return log


def _write(tmp_path, data) -> str:
    path = tmp_path / "current.json"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return str(path)


def _found(changes) -> list[tuple[str, str, str]]:
    return [(c.case, c.passage, c.status) for c in changes]


@pytest.mark.parametrize("update", [
    lambda docs: {"sources": docs},
    lambda docs: docs,  # a bare list of documents: the same update
])
def test_updating_two_documents_reports_exactly_those(tmp_path, update):
    log = _run(tmp_path, _cases(shared_ids=False))
    docs = [{"id": "d3a", "version": "v2", "text": "Case 3, rewritten."},
            {"id": "d17b", "version": "v2", "text": "Case 17, d17b."}]
    changes = review(log, _write(tmp_path, update(docs)))
    assert _found(changes) == [("c3", "d3a", "changed"), ("c17", "d17b", "changed")]
    assert changes[1].detail == "same text, version v1 → v2"
    assert [cl.text for ch in changes for cl in ch.claims] == ["Claim 3.", "Claim 17."]


def test_a_case_entry_updates_that_case_only(tmp_path):
    """Ids that name a document only within its case: the update goes under the case's id."""
    log = _run(tmp_path, _cases(shared_ids=True))
    path = _write(tmp_path, {"cases": {"c5": {"sources": [{"id": "S1", "version": "v2", "text": "Case 5, new."}]},
                                       "c9": {"removed": ["S2"]}}})
    assert _found(review(log, path)) == [("c5", "S1", "changed"), ("c9", "S2", "vanished")]


def test_removed_documents_vanish_and_a_new_document_can_take_a_passage(tmp_path):
    log = _run(tmp_path, _cases(shared_ids=False))
    assert _found(review(log, _write(tmp_path, {"removed": ["d8b"]}))) == [("c8", "d8b", "vanished")]
    # d8a's text, now a passage of a document the case did not have: moved, not vanished
    moved = {"cases": {"c8": {"removed": ["d8a"], "sources": [
        {"id": "manual", "version": "v1", "text": "Preface. Case 8, d8a.", "passages": [{"id": "d8a", "text": "Case 8, d8a."}]}]}}}
    changes = review(log, _write(tmp_path, moved))
    assert _found(changes) == [("c8", "d8a", "moved")]
    assert changes[0].detail == "same text, now manual [9, 21) (was d8a [0, 12))"


def test_a_case_file_still_lists_each_cases_complete_sources(tmp_path):
    cases = _cases(shared_ids=False)
    log = _run(tmp_path, cases)
    current = [cases[4] | {"sources": cases[4]["sources"][:1]}, cases[6]]  # c4 without d4b; c6 as it was
    assert _found(review(log, _write(tmp_path, current))) == [("c4", "d4b", "vanished")]
    assert _found(review(log, _write(tmp_path, {"cases": current}))) == [("c4", "d4b", "vanished")]


@pytest.mark.parametrize("data, problems", [
    ({"cases": {"c99": {"removed": ["d1a"]}}}, ["current.json:3: cases.c99: the run has no case 'c99'"]),
    ({"removed": ["d1a", "zz"]}, ["current.json:4: removed[1]: no case of the run holds a document 'zz'"]),
    ({"cases": {"c1": {"removed": ["d2a"]}}},
     ["current.json:5: cases.c1.removed[0]: case 'c1' of the run holds no document 'd2a'"]),
    ({"sources": [{"id": "d1a", "text": "x"}], "removed": ["d1a"]},
     ["current.json:9: removed[0]: document 'd1a' is both given in 'sources' and removed"]),
    ({"sources": [{"id": "d1a", "text": "x"}, {"id": "d1a", "text": "y"}]},
     ["current.json:3: sources[0]: document 'd1a' is given twice",
      "current.json:7: sources[1]: document 'd1a' is given twice"]),
    ({"sources": [{"id": "d1a"}], "deleted": ["d1b"]},
     ["current.json:3: sources[0]: a document needs 'text' or 'passages'",
      "current.json:7: deleted: Extra inputs are not permitted"]),
    ([{"id": "d1a", "version": 2, "text": "x"}], ["current.json:4: [0].version: Input should be a valid string"]),
    ({"sources": [{"id": "d1a", "text": "Case 1.", "passages": [{"id": "p", "text": "elsewhere"}]}]},
     ["current.json:9: sources[0].passages[0].text: text is not found in the document text; give its 'span'"]),
])
def test_an_update_that_cannot_be_meant_is_located(tmp_path, data, problems):
    log = _run(tmp_path, _cases(shared_ids=False))
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as err:
        review(log, path)
    assert [str(p).removeprefix(str(tmp_path) + "/") for p in err.value.problems] == problems


def test_cli_reviews_an_update_and_names_documents_no_case_holds(runner, tmp_path):
    _run(tmp_path, _cases(shared_ids=False))
    path = _write(tmp_path, {"sources": [{"id": "d2a", "text": "Case 2, now otherwise."}, {"id": "d2-a", "text": "x"}]})
    result = runner.invoke(main, ["review", str(tmp_path / "run.json"), "--sources", path, "--format", "json"])
    assert result.exit_code == 0, result.output
    assert [(c["case"], c["passage"], c["status"]) for c in json.loads(result.stdout)] == [("c2", "d2a", "changed")]
    assert result.stderr == f"citeaudit: review: 1 document(s) of {path} are in no case of the run, left out: 'd2-a'\n"


def test_rejudge_reads_the_update(tmp_path):
    """Only the affected claim is judged again, against its case's documents as the update leaves them."""
    from citeaudit.run.review import rejudge

    log = _run(tmp_path, _cases(shared_ids=False))
    path = _write(tmp_path, {"sources": [{"id": "d3a", "version": "v1", "text": "Case 3, rewritten."}]})
    changes = review(log, path)
    judge = SetJudge({"Claim 3.": [{"d3a", "d3b"}]})
    rejudge(changes, log, path, judge)
    assert [(cl.old_label, cl.new_label) for ch in changes for cl in ch.claims] == [("none", "full")]
    assert judge.calls == [("Claim 3.", frozenset({"d3a", "d3b"}))]
    removed = _write(tmp_path, {"removed": ["d3b"]})
    gone = review(log, removed)
    rejudge(gone, log, removed, judge)
    assert [cl.rejudge_error for ch in gone for cl in ch.claims] == ["cites vanished passage(s) d3b: needs a new citation"]
