"""Readers of other tools' files (citeaudit.files.readers): each fixture in tests/fixtures/formats is in the exact
shape its tool writes (README there). For each format: the cases validate and resolve, one row is read
exactly, malformed rows are all reported at file:line: field in the input's own terms, and nothing of
the original is lost (a round trip)."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest

from citeaudit.errors import InputError
from citeaudit.files.loading import load_cases
from citeaudit.files.readers import READERS, ReadRecord, read, reader_options
from citeaudit.records import Case
from citeaudit.parse.resolve import Reading, resolve

FORMATS = Path(__file__).parent / "fixtures" / "formats"
ALCE_ASQA = FORMATS / "alce_asqa_result.json"
ALCE_ELI5 = FORMATS / "alce_eli5_samples_result.json"
RAGCHECKER_IN = FORMATS / "ragchecker_input.json"
RAGCHECKER_OUT = FORMATS / "ragchecker_output.json"
RAGAS_JSONL = FORMATS / "ragas_samples.jsonl"
RAGAS_CSV = FORMATS / "ragas_results.csv"
RAGAS_PARQUET = FORMATS / "ragas_results.parquet"
RAGAS_FOLDER = FORMATS / "ragas_dataset"
EXPERTQA = FORMATS / "expertqa_rand_val_sample.jsonl"
PAIRS = FORMATS / "pairs_citecheck.jsonl"
OTEL = FORMATS / "otel_langchain_rag.jsonl"
SHARED_EXPERTQA = Path(__file__).resolve().parents[2] / "shared" / "data" / "expertqa"

V2 = "P7 operating manual, version 2. The continuous operating temperature limit is 100 °C."
V3 = "P7 operating manual, version 3. The continuous operating temperature limit is 80 °C."
CAT = "Product catalogue. The P7 offers an Eco operating mode."
PILOT = "Eco mode pilot report. The pilot observed P7 machines in Eco mode for 30 days."


def _problems(fmt: str, path, **options) -> list[str]:
    with pytest.raises(InputError) as err:
        read(fmt, str(path), **options)
    return [str(p) for p in err.value.problems]


def _line(text: str, needle: str) -> int:
    return text.count("\n", 0, text.index(needle)) + 1


def _cases(records: list[ReadRecord]) -> list[Case]:
    return [Case.model_validate(r.case) for r in records]


def _statements(case: Case, reading: Reading = Reading()):
    """(text, citations, invalid citations) of each statement of each answer, after resolving."""
    resolved, problems = resolve(case, reading)
    assert problems == []
    return [[(st.text, st.citations, st.invalid_citations) for st in a.statements] for a in resolved.case.answers]


def _without_metadata(case: dict) -> dict:
    return {key: value for key, value in case.items() if key != "metadata"}


# --- the package ----------------------------------------------------------------------------------


def test_every_reader_is_registered_with_its_options():
    assert list(READERS) == ["alce", "ragchecker", "ragas", "expertqa", "pairs", "otel"]
    assert list(reader_options("alce")) == ["system", "keep_prompt"]
    assert list(reader_options("ragchecker")) == ["system", "source_ids", "cite"]
    assert list(reader_options("ragas")) == ["system", "id_field", "split"]
    assert list(reader_options("expertqa")) == []
    assert list(reader_options("pairs")) == ["system"]
    assert list(reader_options("otel")) == ["cite", "root", "answer", "question_key", "system", "incomplete"]


def test_an_unknown_format_or_option_is_an_input_error():
    assert _problems("trec", ALCE_ASQA) == [
        f"{ALCE_ASQA}: unknown format 'trec' (known: alce, ragchecker, ragas, expertqa, pairs, otel)"]
    assert _problems("alce", ALCE_ASQA, sytem="x") == [
        f"{ALCE_ASQA}: unknown option 'sytem' for the alce reader (known: system, keep_prompt)"]
    assert _problems("ragchecker", RAGCHECKER_IN, source_ids="title") == [
        f"{RAGCHECKER_IN}: option source_ids='title': expected one of auto, doc_id, position"]
    assert _problems("alce", ALCE_ASQA, keep_prompt="maybe") == [
        f"{ALCE_ASQA}: option keep_prompt='maybe': expected true or false"]


@pytest.mark.parametrize("fmt, path", [("alce", ALCE_ASQA), ("alce", ALCE_ELI5), ("ragchecker", RAGCHECKER_IN),
                                       ("ragchecker", RAGCHECKER_OUT), ("ragas", RAGAS_JSONL), ("ragas", RAGAS_CSV),
                                       ("expertqa", EXPERTQA), ("pairs", PAIRS), ("otel", OTEL)])
def test_cases_survive_their_json_form(fmt, path):
    """What a reader yields validates, and its JSON form (a run log keeps it) reads back the same."""
    for case in _cases(read(fmt, str(path))):
        assert Case.model_validate(json.loads(case.model_dump_json())) == case


@pytest.mark.parametrize("fmt, path, count", [("alce", ALCE_ASQA, 2), ("ragchecker", RAGCHECKER_IN, 2),
                                              ("ragas", RAGAS_JSONL, 3), ("expertqa", EXPERTQA, 4),
                                              ("pairs", PAIRS, 8), ("otel", OTEL, 2)])
def test_the_loader_reads_each_format(fmt, path, count):
    cases = load_cases([path], Reading(invalid_citations="count"), fmt)
    assert len(cases) == count
    assert cases[0].origin == f"{path}:{read(fmt, str(path))[0].line}"


# --- ALCE -----------------------------------------------------------------------------------------


def test_alce_item_becomes_a_case():
    records = read("alce", str(ALCE_ASQA))
    text = ALCE_ASQA.read_text(encoding="utf-8")
    assert [(r.line, r.where) for r in records] == [(34, "data[0]"), (92, "data[1]")]
    assert _line(text, '"qa_pairs"') == 35  # the item's "{" is the line before its first key
    first = records[0].case
    assert _without_metadata(first) == {
        "id": "-7481130285232394582",
        "question": "What is the continuous temperature limit of the P7?",
        "sources": [
            {"id": "1", "text": V2, "title": "P7 operating manual v2",
             "metadata": {"id": "1001", "score": 1.71, "answers_found": [0]}},
            {"id": "2", "text": V3, "title": "P7 operating manual v3",
             "metadata": {"id": "1002", "score": 1.69, "answers_found": [1]}},
            {"id": "3", "text": CAT, "title": "Product catalogue",
             "metadata": {"id": "1003", "score": 1.52, "answers_found": [0]}},
        ],
        "ranking": ["1", "2", "3"],
        "answers": [{"id": "output", "system": "gpt-3.5-turbo-0301",
                     "text": "The continuous limit is 80 °C [2]. Version 2 of the manual gave 100 °C [1][2]."}],
    }
    metadata = first["metadata"]
    assert (metadata["from"], metadata["index"]) == ("alce", 0)
    assert list(metadata["fields"]) == ["qa_pairs", "wikipages", "annotations", "sample_id", "answer"]
    assert list(metadata["run"]) == ["args", "total_cost"]
    assert metadata["run"]["args"]["ndoc"] == 3


def test_alce_markers_are_positions_in_docs():
    first, second = _cases(read("alce", str(ALCE_ASQA)))
    assert _statements(first) == [[("The continuous limit is 80 °C.", ["2"], []),
                                   ("Version 2 of the manual gave 100 °C.", ["1", "2"], [])]]
    # [5] with two documents is kept as written: counting it is the reading's choice, not the reader's.
    assert _statements(second, Reading(invalid_citations="count")) == [
        [("The pilot ran for 30 days.", ["1", "2"], []), ("It was the longest pilot.", [], ["[5]"])]]
    assert resolve(second)[1] == [(("answers", 0, "text"),
                                   "character 59: citation marker '[5]': unknown passage id '5' (known: 1, 2)")]


def test_alce_samples_are_answers_of_one_system_and_an_item_without_id_is_its_index():
    [record] = read("alce", str(ALCE_ELI5))
    case = record.case
    assert case["id"] == "0"
    assert case["answers"] == [
        {"id": "output-1", "system": "meta-llama/Llama-2-7b-chat-hf",
         "text": "The P7 offers an Eco mode [1]. A pilot ran it for 30 days [2]."},
        {"id": "output-2", "system": "meta-llama/Llama-2-7b-chat-hf", "text": "Eco mode exists to save energy [1][2]."},
    ]
    assert case["metadata"]["fields"]["claims"] == ["The P7 offers an Eco mode.",
                                                    "A pilot observed Eco mode for 30 days."]
    assert case["sources"][0]["metadata"] == {"url": "https://example.org/catalogue"}


def test_alce_options_name_the_system_and_keep_the_prompt():
    [record] = read("alce", str(ALCE_ELI5), system="llama-2-bm25", keep_prompt="true")
    assert {a["system"] for a in record.case["answers"]} == {"llama-2-bm25"}
    assert record.case["metadata"]["fields"]["prompt"].startswith("Instruction: Write an accurate")
    assert "prompt" not in read("alce", str(ALCE_ELI5))[0].case["metadata"]["fields"]


def test_alce_without_model_names_the_system_by_the_file(tmp_path):
    path = tmp_path / "asqa-run.json"
    path.write_text(json.dumps({"args": {}, "data": [{"question": "Q", "output": "A [1].",
                                                       "docs": [{"title": "T", "text": "A."}]}]}))
    assert read("alce", str(path))[0].case["answers"][0]["system"] == "asqa-run"


def test_alce_round_trip_keeps_every_field_but_the_prompt():
    original = json.loads(ALCE_ASQA.read_text(encoding="utf-8"))
    for record, item in zip(read("alce", str(ALCE_ASQA)), original["data"]):
        case = record.case
        rebuilt = {**case["metadata"]["fields"], "question": case["question"],
                   "docs": [{"title": s["title"], "text": s["text"], **s["metadata"]} for s in case["sources"]],
                   "output": case["answers"][0]["text"]}
        assert rebuilt == {k: v for k, v in item.items() if k != "prompt"}
        assert case["metadata"]["run"] == {k: v for k, v in original.items() if k != "data"}


def test_alce_malformed_items_are_all_reported_in_alce_terms(tmp_path):
    path = tmp_path / "run.json"
    text = json.dumps({"args": {"model": "m"}, "data": [
        {"question": "Q0", "output": "A [1].", "docs": [{"title": "T", "text": "x"}, {"title": "T2"}]},
        {"question": "Q1", "output": 3, "docs": [{"title": "T", "text": "  "}]},
        {"output": "A", "docs": []},
        "not an object",
        {"question": "Q4", "output": "fine [1].", "docs": [{"title": "T", "text": "ok"}]},
    ]}, indent=4)
    path.write_text(text)
    # a missing field is reported at the line of the object that lacks it (its "{", the line before)
    doc_1, item_2 = _line(text, '"T2"') - 1, _line(text, '"output": "A"') - 1
    output, blank, docs = _line(text, '"output": 3'), _line(text, '"  "'), _line(text, '"docs": []')
    assert _problems("alce", path) == [
        f"{path}:{doc_1}: data[0].docs[1].text: field required",
        f"{path}:{output}: data[1].output: expected a text or a list of texts",
        f"{path}:{blank}: data[1].docs[0].text: empty text: a source needs text to be judged against",
        f"{path}:{item_2}: data[2].question: field required",
        f"{path}:{docs}: data[2].docs: no documents: a case needs at least one source",
        f"{path}:{_line(text, 'not an object')}: data[3]: expected an object, got a text",
    ]


def test_alce_strict_json_problems_are_located_and_other_items_still_checked(tmp_path):
    path = tmp_path / "run.json"
    text = ('{"args": {"model": "m"},\n "data": [\n'
            '  {"question": "Q0", "output": "A", "docs": [{"text": "x", "score": NaN}]},\n'
            '  {"question": "Q1", "output": "A", "docs": [{"text": "x", "text": "y"}]},\n'
            '  {"question": "Q2", "docs": [{"text": "x"}]}\n]}')
    path.write_text(text)
    assert _problems("alce", path) == [
        f"{path}:3: data[0].docs[0].score: NaN is not allowed (JSON has no NaN or Infinity)",
        f"{path}:4: data[1].docs[0].text: duplicate key 'text'",
        f"{path}:5: data[2].output: field required",
    ]


def test_alce_needs_its_wrapper(tmp_path):
    path = tmp_path / "list.json"
    path.write_text('[{"question": "Q"}]')
    assert _problems("alce", path) == [f"{path}:1: not an ALCE result file: expected an object with 'data' "
                                       "(the list of items) and 'args'"]


# --- RAGChecker -----------------------------------------------------------------------------------


def test_ragchecker_result_becomes_a_case_named_by_doc_ids():
    records = read("ragchecker", str(RAGCHECKER_IN))
    assert [(r.line, r.where) for r in records] == [(3, "results[0]"), (19, "results[1]")]
    case = records[0].case
    assert _without_metadata(case) == {
        "id": "0",
        "question": "What is the continuous temperature limit of the P7?",
        "sources": [{"id": "000", "text": V2}, {"id": "001", "text": V3}],
        "ranking": ["000", "001"],
        "answers": [{"id": "response", "system": "ragchecker_input",
                     "text": "The continuous limit is 80 °C [001]. Older manuals said 100 °C [000]."}],
    }
    assert case["metadata"] == {"from": "ragchecker", "index": 0, "source_ids": "doc_id", "run": {},
                                "fields": {"query_id": "0",
                                           "gt_answer": "The current P7 manual sets the limit at 80 °C."}}
    # numeric doc ids: a marker names a doc_id literally
    assert _statements(Case.model_validate(case)) == [[("The continuous limit is 80 °C.", ["001"], []),
                                                       ("Older manuals said 100 °C.", ["000"], [])]]


def test_ragchecker_output_without_doc_ids_is_read_by_position_keeping_claims_and_metrics():
    [record] = read("ragchecker", str(RAGCHECKER_OUT), system="bm25-llama")
    case = record.case
    assert case["sources"] == [{"id": "1", "text": PILOT}, {"id": "2", "text": CAT}]
    assert case["metadata"]["source_ids"] == "position"
    assert list(case["metadata"]["fields"]) == ["query_id", "gt_answer", "response_claims", "gt_answer_claims",
                                                "answer2response", "response2answer", "retrieved2response",
                                                "retrieved2answer", "metrics"]
    assert list(case["metadata"]["run"]["metrics"]) == ["overall_metrics", "retriever_metrics", "generator_metrics"]
    assert _statements(Case.model_validate(case)) == [[("The pilot ran for 30 days.", ["1"], [])]]
    assert case["answers"][0]["system"] == "bm25-llama"


def test_ragchecker_by_position_keeps_the_doc_ids():
    case = read("ragchecker", str(RAGCHECKER_IN), source_ids="position")[0].case
    assert case["sources"] == [{"id": "1", "text": V2, "metadata": {"doc_id": "000"}},
                               {"id": "2", "text": V3, "metadata": {"doc_id": "001"}}]


def test_ragchecker_round_trip():
    original = json.loads(RAGCHECKER_IN.read_text(encoding="utf-8"))
    for record, result in zip(read("ragchecker", str(RAGCHECKER_IN)), original["results"]):
        case = record.case
        rebuilt = {**case["metadata"]["fields"], "query": case["question"], "response": case["answers"][0]["text"],
                   "retrieved_context": [{"doc_id": s["id"], "text": s["text"]} for s in case["sources"]]}
        assert rebuilt == result


def test_ragchecker_malformed_results_are_all_reported(tmp_path):
    path = tmp_path / "checking.json"
    results = [
        {"query_id": "q1", "query": "Q", "response": "R",
         "retrieved_context": [{"doc_id": "a", "text": "x"}, {"text": "y1"}]},
        {"query_id": "q2", "query": "Q", "response": "R",
         "retrieved_context": [{"doc_id": "a", "text": "x"}, {"doc_id": "a", "text": "y2"}]},
        {"query": "Q3", "response": "R", "retrieved_context": [{"doc_id": 7, "text": ""}]},
    ]
    text = json.dumps({"results": results}, indent=2)
    path.write_text(text)
    hint = "or read contexts by position (source_ids=position)"
    no_id, twice = _line(text, '"y1"') - 1, _line(text, '"y2"') - 1
    result_3, empty = _line(text, '"Q3"') - 1, _line(text, '"text": ""')
    malformed_3 = [f"{path}:{result_3}: results[2].query_id: field required",
                   f"{path}:{empty}: results[2].retrieved_context[0].text: empty text: a source needs text to be "
                   "judged against"]
    assert _problems("ragchecker", path) == [
        f"{path}:{no_id}: results[0].retrieved_context[1].doc_id: field required: sources are named by doc_id; "
        f"give every context one, {hint}",
        f"{path}:{twice}: results[1].retrieved_context[1].doc_id: doc_id 'a' is also the doc_id of "
        f"retrieved_context[0]: sources need distinct names; {hint}",
        *malformed_3,
    ]
    assert _problems("ragchecker", path, source_ids="position") == malformed_3


# RAGChecker's reading (option cite): responses without markers, read as citing every retrieved context or
# as RAGChecker's own claims citing the contexts its checker found to entail them.

E, N_, C_ = "Entailment", "Neutral", "Contradiction"


def _checked(tmp_path, results: list[dict], name: str = "checked.json") -> Path:
    """A RAGChecker output file: the results with RAGChecker's indentation."""
    path = tmp_path / name
    path.write_text(json.dumps({"results": results, "metrics": {}}, indent=2))
    return path


def _pilot_result(**checks) -> dict:
    """The Eco pilot result of ragchecker_input.json, with the fields RAGChecker's checking adds."""
    result = json.loads(RAGCHECKER_IN.read_text(encoding="utf-8"))["results"][1]
    return {**result, **checks}


def _cited(case) -> list[tuple[str, str, list[str]]]:
    """(kind, text, citations) of every claim statement of a resolved case's one answer."""
    [answer] = case.case.answers
    return [(st.kind, st.text, st.citations) for st in answer.statements]


def test_ragchecker_default_reading_is_unchanged():
    """cite=markers is the default: the cases are the same as without the option, with no note of it, and
    a response without markers cites nothing."""
    for path in (RAGCHECKER_IN, RAGCHECKER_OUT):
        assert read("ragchecker", str(path), cite="markers") == read("ragchecker", str(path))
        assert all("cite" not in r.case["metadata"] for r in read("ragchecker", str(path)))
    [_, pilot] = load_cases([RAGCHECKER_IN], Reading(invalid_citations="count"), "ragchecker", cite="markers")
    assert _cited(pilot) == [("claim", "The pilot ran for 30 days.", [])]
    assert pilot.cited_by is None


def test_ragchecker_cite_all_cites_every_context_from_every_claim(tmp_path):
    reading = Reading(invalid_citations="count")
    manuals, pilot = load_cases([RAGCHECKER_IN], reading, "ragchecker", cite="all")
    assert _cited(pilot) == [("claim", "The pilot ran for 30 days.", ["000", "001"])]
    # markers written in the response are overruled: every claim cites every context, in retrieved order
    assert _cited(manuals) == [("claim", "The continuous limit is 80 °C.", ["000", "001"]),
                               ("claim", "Older manuals said 100 °C.", ["000", "001"])]
    assert (pilot.cited_by, pilot.case.metadata["cite"]) == ("ragchecker-all", "all")
    # a statement that claims nothing cites nothing; each claim of a split statement cites every context,
    # whatever its own markers named
    path = _checked(tmp_path, [_pilot_result(
        response="Sure! The pilot ran for 30 days [000], and the P7 offers an Eco mode [001].")])
    [case] = load_cases([path], reading, "ragchecker", cite="all")
    [greeting, pilot_claims] = case.case.answers[0].statements
    assert (greeting.kind, greeting.citations) == ("other", [])
    assert [c.text for c in pilot_claims.atomic_claims()] == ["The pilot ran for 30 days", "the P7 offers an Eco mode"]
    assert {tuple(c.citations) for c in pilot_claims.atomic_claims()} == {("000", "001")}


def test_ragchecker_cite_entailed_reads_ragcheckers_claims_and_checks(tmp_path):
    # as RAGChecker lays it out: retrieved2response[claim][context]; a claim is a triplet or a text
    path = _checked(tmp_path, [_pilot_result(
        response_claims=[["pilot", "ran for", "30 days"], "The P7 offers an Eco mode.", ["pilot", "cost", "nothing"]],
        retrieved2response=[[E, N_], [E, E], [N_, C_]])])
    [record] = read("ragchecker", str(path), cite="entailed")
    assert record.case["answers"] == [{
        "id": "response", "system": "checked", "text": "The pilot ran for 30 days.",  # shown and exported as given
        "statements": [{"id": "c1", "text": "pilot ran for 30 days", "citations": ["000"]},
                       {"id": "c2", "text": "The P7 offers an Eco mode.", "citations": ["000", "001"]},
                       {"id": "c3", "text": "pilot cost nothing", "citations": []}]}]  # no context entails it
    assert record.case["metadata"]["cite"] == "entailed"
    # the checker's verdicts as curated labels: every part of a cited set a citation measure asks about
    full = "RAGChecker's checker: each of these contexts entails the claim"
    assert [(label["claim"], label["passages"], label["label"], label["explanation"])
            for label in record.case["labels"]] == [
        ("pilot ran for 30 days", ["000"], "full", full),
        ("The P7 offers an Eco mode.", ["000", "001"], "full", full),
        ("The P7 offers an Eco mode.", ["000"], "full", full),
        ("The P7 offers an Eco mode.", ["001"], "full", full)]
    [case] = load_cases([path], Reading(invalid_citations="count"), "ragchecker", cite="entailed")
    assert case.cited_by == "ragchecker-entailed" and not case.parsed  # RAGChecker's claims, not the parser's
    # RAGChecker found no claim: the response claims nothing
    path = _checked(tmp_path, [_pilot_result(response_claims=[], retrieved2response=[])], "none.json")
    [record] = read("ragchecker", str(path), cite="entailed")
    assert record.case["answers"][0]["statements"] == [{"text": "The pilot ran for 30 days.", "kind": "other"}]
    # the fixture, by position: its one claim cites the context the checker found to entail it
    [record] = read("ragchecker", str(RAGCHECKER_OUT), cite="entailed")
    assert record.case["answers"][0]["statements"] == [{"id": "c1", "text": "pilot ran for 30 days",
                                                         "citations": ["1"]}]


def test_ragchecker_cite_entailed_needs_ragcheckers_checks(tmp_path):
    """A checking input has no claims to read: one located problem for the file; an output missing them in
    some results, or with tables of the wrong shape, a problem at each field."""
    hint = ("cite=entailed reads the claims and entailment checks of RAGChecker's output (response_claims, "
            "retrieved2response); read a checking input with cite=all or cite=markers")
    assert _problems("ragchecker", RAGCHECKER_IN, cite="entailed") == [
        f"{RAGCHECKER_IN}:2: results: no result has response_claims or retrieved2response: {hint}"]
    assert _problems("ragchecker", RAGCHECKER_IN, cite="claims") == [
        f"{RAGCHECKER_IN}: option cite='claims': expected one of markers, all, entailed"]
    good = {"response_claims": [["pilot", "ran for", "30 days"]], "retrieved2response": [[E, N_]]}
    path = _checked(tmp_path, [
        _pilot_result(**good),
        _pilot_result(query_id="unchecked", response_claims=good["response_claims"]),
        # transposed: one list per context, as an older fixture had it
        _pilot_result(query_id="transposed", response_claims=good["response_claims"], retrieved2response=[[E], [N_]]),
        _pilot_result(query_id="short", response_claims=good["response_claims"], retrieved2response=[[E]]),
        _pilot_result(query_id="odd", response_claims=[7, ["", " "]], retrieved2response=[[E, N_], [E, 1]]),
    ])
    text = path.read_text()

    def line_of(needle: str, n: int) -> int:  # the line of the needle's n-th occurrence (from 0)
        at = -1
        for _ in range(n + 1):
            at = text.index(needle, at + 1)
        return text.count("\n", 0, at) + 1

    unchecked = _line(text, '"query_id": "unchecked"') - 1
    transposed, short, odd = (line_of('"retrieved2response"', n) for n in (1, 2, 3))
    claims = line_of('"response_claims"', 4)
    assert _problems("ragchecker", path, cite="entailed") == [
        f"{path}:{unchecked}: results[1].retrieved2response: field required: {hint}",
        f"{path}:{transposed}: results[2].retrieved2response: expected one list of labels per response claim (1), "
        "got 2",
        f"{path}:{short + 1}: results[3].retrieved2response[0]: expected one label per retrieved context (2), got 1",
        f"{path}:{claims + 1}: results[4].response_claims[0]: expected a claim: a text, or a list of texts (a triplet)",
        f"{path}:{claims + 2}: results[4].response_claims[1]: empty claim",
        f"{path}:{odd + 7}: results[4].retrieved2response[1][1]: expected a text, got a number",
    ]


def _support(path, judge: str, **options) -> tuple[list[tuple[int, int]], str | None]:
    """Each answer's support (numerator, denominator) with `judge`, and the run signature's cite."""
    from citeaudit import make_judge
    from citeaudit.judges import Judgments
    from citeaudit.metrics import score_cases

    cases = load_cases([path], Reading(invalid_citations="count"), "ragchecker", **options)
    report = score_cases(cases, Judgments(make_judge(judge, cases)))
    ratios = [a.ratios()["support"] for a in report.answers]
    return [(r.numerator, r.denominator) for r in ratios], report.run_signature.cite


def test_ragchecker_fixture_read_as_entailed_replays_ragcheckers_verdicts():
    """With the curated judge, support is RAGChecker's faithfulness: the fixture's one claim is entailed."""
    assert _support(RAGCHECKER_OUT, "curated", cite="entailed") == ([(1, 1)], "ragchecker-entailed")


def test_ragchecker_response_without_markers_read_as_citing_all_is_supported_by_the_model_judge(tmp_path):
    pytest.importorskip("onnxruntime")
    path = _checked(tmp_path, [_pilot_result(
        response="The Eco pilot observed P7 machines for 30 days. The P7 offers an Eco operating mode.")])
    assert _support(path, "model") == ([(0, 2)], None)  # uncited, as by default
    assert _support(path, "model", cite="all") == ([(2, 2)], "ragchecker-all")


def test_ragchecker_reading_is_recorded_in_the_run_log_and_rescored_with_it(runner, tmp_path):
    pytest.importorskip("onnxruntime")
    from citeaudit.cli import main
    from citeaudit.run.log import read_runlog, rescore

    logs = {}
    for cite, name in (("markers", "markers.json"), ("all", "all.json"), ("all", "streamed.jsonl")):
        out = tmp_path / name
        result = runner.invoke(main, ["score", "--from", "ragchecker", str(RAGCHECKER_IN), "--option", f"cite={cite}",
                                      "--metrics", "support", "--judge", "model", "--out", str(out)])
        assert result.exit_code == 0, result.output
        logs[name] = read_runlog(out)
    for name in ("all.json", "streamed.jsonl"):  # a run log in one document, and one written as cases are scored
        assert logs[name].signature.cite == "ragchecker-all"
        assert "|cite:ragchecker-all|" in logs[name].results.summary.all["support"].signature
        report, _ = rescore(logs[name])
        assert report.run_signature == logs[name].signature
    # the default reading's log is as logs were: no cite field at all
    assert logs["markers.json"].signature.cite is None
    assert "cite" not in json.loads((tmp_path / "markers.json").read_text())["signature"]
    # two runs that read the responses differently are not compared silently
    result = runner.invoke(main, ["compare", str(tmp_path / "markers.json"), str(tmp_path / "all.json")])
    assert result.exit_code == 2
    assert "citations given by the reader: A none · B ragchecker-all" in result.stderr


def test_ragchecker_read_as_entailed_exports_back_to_ragcheckers_shape(runner, tmp_path):
    """Read with cite=entailed, scored (curated: RAGChecker's verdicts), exported --to ragchecker: each result's
    own fields come back as read, and its faithfulness as support."""
    from citeaudit.cli import main

    original = [_pilot_result(response_claims=[["pilot", "ran for", "30 days"], ["pilot", "cost", "nothing"]],
                              retrieved2response=[[E, N_], [N_, N_]])]
    path = _checked(tmp_path, original)
    run, exported = tmp_path / "run.json", tmp_path / "ragchecker.json"
    result = runner.invoke(main, ["score", "--from", "ragchecker", str(path), "--option", "cite=entailed",
                                  "--out", str(run)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["export", str(run), "--to", "ragchecker", "-o", str(exported)])
    assert result.exit_code == 0, result.output
    [back] = json.loads(exported.read_text())["results"]
    kept = ("query_id", "query", "gt_answer", "response", "retrieved_context")
    assert {k: back[k] for k in kept} == {k: original[0][k] for k in kept}
    assert back["metrics"]["support"] == 0.5


# --- RAGAS ----------------------------------------------------------------------------------------

RAGAS_CASES = [
    {"id": "0", "question": "What is the continuous temperature limit of the P7?",
     "sources": [{"id": "1", "text": V2}, {"id": "2", "text": V3}], "ranking": ["1", "2"], "gold_documents": ["2"],
     "answers": [{"id": "response", "system": "S", "text": "The continuous limit is 80 °C [2]."}]},
    # the gold context was not retrieved: a source outside the ranking, so recall@k counts it missed
    {"id": "1", "question": "How long did the Eco pilot run?",
     "sources": [{"id": "1", "text": CAT}, {"id": "ref-1", "text": PILOT, "metadata": {"reference_context": 0}}],
     "ranking": ["1"], "gold_documents": ["ref-1"],
     "answers": [{"id": "response", "system": "S", "text": "The pilot ran for 30 days [1]."}]},
    # gold given by id, matched to the retrieved contexts' ids
    {"id": "2", "question": "Which manual is current?",
     "sources": [{"id": "1", "text": V2, "metadata": {"context_id": "manual-v2"}},
                 {"id": "2", "text": V3, "metadata": {"context_id": "manual-v3"}}],
     "ranking": ["1", "2"], "gold_documents": ["2"],
     "answers": [{"id": "response", "system": "S",
                  "text": "Version 3 is the current manual [2], replacing version 2 [1]."}]},
]


def test_ragas_jsonl_rows_become_cases():
    records = read("ragas", str(RAGAS_JSONL), system="S")
    assert [(r.line, r.where) for r in records] == [(1, ""), (2, ""), (3, "")]
    assert [_without_metadata(r.case) for r in records] == RAGAS_CASES
    assert records[0].case["metadata"] == {"from": "ragas", "index": 0, "fields": {
        "reference": "80 °C", "reference_contexts": [V3]}}
    assert records[2].case["metadata"]["fields"] == {"retrieved_context_ids": ["manual-v2", "manual-v3"],
                                                     "reference_context_ids": ["manual-v3"]}
    assert [_statements(c) for c in _cases(records)] == [
        [[("The continuous limit is 80 °C.", ["2"], [])]], [[("The pilot ran for 30 days.", ["1"], [])]],
        [[("Version 3 is the current manual, replacing version 2.", ["2", "1"], [])]]]


def test_ragas_csv_as_pandas_writes_it_reads_the_same_cases():
    records = read("ragas", str(RAGAS_CSV), system="S")
    assert [(r.line, r.where) for r in records] == [(2, ""), (3, ""), (4, "")]
    assert [_without_metadata(r.case) for r in records] == RAGAS_CASES
    # the pandas index column and the score column are kept as written
    assert records[0].case["metadata"]["fields"] == {"": "0", "reference": "80 °C", "reference_contexts": [V3],
                                                     "retrieved_context_ids": None, "reference_context_ids": None,
                                                     "faithfulness": "1.0"}
    assert read("ragas", str(RAGAS_CSV))[0].case["answers"][0]["system"] == "ragas_results"


def test_ragas_parquet_and_saved_dataset_read_the_same_cases():
    pytest.importorskip("pyarrow")
    parquet = read("ragas", str(RAGAS_PARQUET), system="S")
    folder = read("ragas", str(RAGAS_FOLDER), system="S")
    assert [_without_metadata(r.case) for r in parquet] == RAGAS_CASES
    assert [_without_metadata(r.case) for r in folder] == RAGAS_CASES
    assert [(r.line, r.where) for r in folder] == [(None, "rows[0]"), (None, "rows[1]"), (None, "rows[2]")]
    # a score that failed (NaN) is null in metadata: JSON has no NaN
    assert [r.case["metadata"]["fields"]["faithfulness"] for r in parquet] == [1.0, 0.0, None]


def test_ragas_dataset_dict_folder_reads_the_split_asked(tmp_path):
    pytest.importorskip("pyarrow")
    for split in ("train", "test"):
        shutil.copytree(RAGAS_FOLDER, tmp_path / split)
    (tmp_path / "dataset_dict.json").write_text('{"splits": ["train", "test"]}')
    assert len(read("ragas", str(tmp_path), split="test")) == 3
    assert _problems("ragas", tmp_path) == [f"{tmp_path}: give option split (splits: train, test)"]
    assert _problems("ragas", tmp_path, split="dev") == [f"{tmp_path}: no split 'dev' (splits: train, test)"]


def test_ragas_parquet_without_pyarrow_names_the_extra(monkeypatch):
    from citeaudit.errors import MissingExtra

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    with pytest.raises(MissingExtra) as err:
        read("ragas", str(RAGAS_PARQUET))
    assert str(err.value) == (f"{RAGAS_PARQUET}: reading Parquet files needs pyarrow, which is not installed: "
                              "pip install 'citeaudit[formats]'")
    with pytest.raises(MissingExtra) as err:
        read("ragas", str(RAGAS_FOLDER))
    assert str(err.value) == (f"{RAGAS_FOLDER}: reading a saved dataset folder needs pyarrow, which is not "
                              "installed: pip install 'citeaudit[formats]'")


def test_ragas_older_column_names_and_id_field(tmp_path):
    path = tmp_path / "v01.jsonl"
    path.write_text(json.dumps({"qid": "q-7", "question": "Q?", "answer": "A [1].", "contexts": ["ctx"],
                                "ground_truth": "A"}) + "\n")
    [record] = read("ragas", str(path), id_field="qid")
    assert _without_metadata(record.case) == {
        "id": "q-7", "question": "Q?", "sources": [{"id": "1", "text": "ctx"}], "ranking": ["1"],
        "gold_documents": [], "answers": [{"id": "response", "system": "v01", "text": "A [1]."}]}
    assert record.case["metadata"]["fields"] == {"qid": "q-7", "ground_truth": "A"}


def test_ragas_gold_ids_that_match_nothing_leave_the_gold_set_unknown(tmp_path):
    path = tmp_path / "ids.jsonl"
    path.write_text(json.dumps({"user_input": "Q", "retrieved_contexts": ["a", "b"],
                                "retrieved_context_ids": ["d1", "d2"], "reference_context_ids": ["d2", "d9"]}) + "\n")
    [record] = read("ragas", str(path))
    assert record.case["gold_documents"] == []
    assert record.case["metadata"]["gold_unmatched"] == ["d9"]
    assert record.case["answers"] == []


def test_ragas_malformed_jsonl_rows_are_all_reported(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join([
        '{"user_input": "Q", "retrieved_contexts": ["c"]}',
        '{"user_input": "Q", "retrieved_contexts": ["c"], "faithfulness": NaN}',
        '{"user_input": "Q", "question": "Q", "retrieved_contexts": ["c"]}',
        '{"user_input": [{"content": "hi", "type": "human"}], "retrieved_contexts": ["c"]}',
        '{"user_input": "Q", "retrieved_contexts": "c", "response": 3}',
        '{"user_input": "Q", "retrieved_contexts": ["c", " "]',
        '',
        '{"response": "R", "retrieved_contexts": ["c"], "reference_contexts": [""]}',
    ]) + "\n")
    assert _problems("ragas", path) == [
        f"{path}:2: faithfulness: NaN is not allowed (JSON has no NaN or Infinity)",
        f"{path}:3: question: both 'user_input' and 'question' are given: which one is meant?",
        f"{path}:4: user_input: a multi-turn sample (a list of messages): only single-turn samples are read",
        f"{path}:5: response: expected a text, got a number",
        f"{path}:5: retrieved_contexts: expected a list, got a text",
        f"{path}:6: malformed JSON: Expecting ',' delimiter (column 53)",
        f"{path}:8: user_input: field required",
        f"{path}:8: reference_contexts[0]: empty text: a source needs text to be judged against",
    ]


def test_ragas_malformed_csv_rows_are_reported_at_their_first_line(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text('user_input,retrieved_contexts,response\n'
                    '"Q one\nspanning two lines","[""ctx""]",R1\n'
                    "Q2,['a' 'b'],R2\n"
                    'Q3,"[\'x\']"\n'
                    'Q4,[],R4\n', encoding="utf-8")
    assert _problems("ragas", path) == [
        f"{path}:4: retrieved_contexts: expected a list, written as JSON or as a Python list (['a', 'b'])",
        f"{path}:5: the row has 2 cells, the header names 3 columns",
        f"{path}:6: retrieved_contexts: no retrieved context: a case needs at least one source",
    ]


def test_ragas_csv_python_lists_are_read_only_when_written_as_lists(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text('user_input,retrieved_contexts\nQ,"[\'it\'\'s\', ""two \\"x\\""]"\n', encoding="utf-8")
    # ['it''s', "two \"x\""]: two Python strings glued, then a comma: not a list as Python writes one
    assert _problems("ragas", path) == [
        f"{path}:2: retrieved_contexts: expected a list, written as JSON or as a Python list (['a', 'b'])"]
    path.write_text('user_input,retrieved_contexts\nQ,"[""it\'s"", \'two \\\'x\\\'\']"\n', encoding="utf-8")
    assert read("ragas", str(path))[0].case["sources"] == [{"id": "1", "text": "it's"}, {"id": "2", "text": "two 'x'"}]


def test_ragas_json_list_rows_are_located_by_line(tmp_path):
    path = tmp_path / "rows.json"
    rows = [json.loads(line) for line in RAGAS_JSONL.read_text(encoding="utf-8").splitlines()]
    text = json.dumps(rows, indent=2)
    path.write_text(text)
    records = read("ragas", str(path), system="S")
    opening = [n for n, line in enumerate(text.split("\n"), 1) if line == "  {"]
    assert [(r.line, r.where) for r in records] == list(zip(opening, ["[0]", "[1]", "[2]"]))
    assert opening[0] == 2
    assert [_without_metadata(r.case) for r in records] == RAGAS_CASES


def test_ragas_needs_a_known_file_kind(tmp_path):
    path = tmp_path / "rows.tsv"
    path.write_text("x")
    assert _problems("ragas", path) == [f"{path}: a RAGAS dataset is read from .jsonl, .json, .csv or .parquet, or "
                                        "from a folder written by save_to_disk"]


# --- ExpertQA -------------------------------------------------------------------------------------


def _question_id(question: str) -> str:
    return "q-" + hashlib.sha256(question.strip().encode("utf-8")).hexdigest()[:12]


def test_expertqa_lines_become_cases_with_stable_ids():
    records = read("expertqa", str(EXPERTQA))
    lines = EXPERTQA.read_text(encoding="utf-8").splitlines()
    assert [(r.line, r.where) for r in records] == [(1, ""), (2, ""), (3, ""), (4, "")]
    assert [r.case["id"] for r in records] == [_question_id(json.loads(line)["question"]) for line in lines]
    assert [r.case["id"] for r in records] == ["q-287ea8d5b8fb", "q-408a369de771", "q-bc4ac6df3ebf", "q-ce50ce7c2553"]
    for case in _cases(records):
        assert resolve(case)[1] == []


def test_expertqa_claims_are_statements_with_expert_labels():
    case = read("expertqa", str(EXPERTQA))[0].case
    [answer] = case["answers"]
    assert (answer["id"], answer["system"]) == ("rr_sphere_gpt4", "rr_sphere_gpt4")
    assert answer["text"].startswith("The impact of domestic violence on children is deep-seated")
    # "Missing": a sentence without citation
    assert answer["statements"][0] == {
        "id": "c1", "citations": [],
        "text": "The impact of domestic violence on children is deep-seated and harmful, both physically and "
                "psychologically."}
    passage = case["sources"][0]
    assert passage["id"] == "e" + hashlib.sha256(
        f"{passage['title']}\n{passage['text']}".encode()).hexdigest()[:10] == "e5d5304b119"
    assert passage["title"] == "https://youaremom.com/children/impact-of-domestic-violence/"
    assert passage["text"].startswith("The Impact of Domestic Violence on Children — You are Mom Home")
    assert answer["statements"][1] == {
        "id": "c2", "citations": ["e5d5304b119"],
        "text": "Whether children are the direct targets or simply witnesses, the experience can cause feelings of "
                "vulnerability and lack of protection."}
    assert case["labels"][0] == {"claim": answer["statements"][1]["text"], "passages": ["e5d5304b119"],
                                 "label": "full", "explanation": "ExpertQA support: Complete (rr_sphere_gpt4)"}
    assert [label["label"] for label in case["labels"]] == ["full"] * 7
    kept = case["metadata"]["answers"]["rr_sphere_gpt4"]
    assert kept["claims"][0]["support"] == "Missing"
    assert kept["usefulness"] == json.loads(EXPERTQA.read_text().splitlines()[0])["answers"]["rr_sphere_gpt4"][
        "usefulness"]


def test_expertqa_url_only_evidence_na_and_partial():
    case = read("expertqa", str(EXPERTQA))[2].case
    url = "https://www.mayoclinic.org/diseases-conditions/urinary-tract-infection/symptoms-causes/syc-20353447"
    assert case["sources"][0] == {"id": "ee60b22d530", "text": url, "title": url, "metadata": {"url_only": True}}
    first, second = case["answers"][0]["statements"]
    assert [label["label"] for label in case["labels"]] == ["partial"]
    assert case["labels"][0]["passages"] == first["citations"] == ["ee60b22d530", "eac025f559e"]
    assert second["citations"] == ["e53d74116b6"]  # N/A: cited, but no label
    assert case["metadata"]["answers"]["gpt4"]["claims"][1]["support"] == "N/A"


def test_expertqa_two_passages_and_an_answer_without_evidence():
    second, fourth = (read("expertqa", str(EXPERTQA))[i].case for i in (1, 3))
    assert [(label["label"], label["passages"]) for label in second["labels"]] == [
        ("full", ["ebacb7199f7"]), ("none", ["ec79a9bfbfc", "ebacb7199f7"])]
    # no claim cites anything: the answer's attribution URLs are its sources
    assert [s["title"] for s in fourth["sources"]][:2] == [
        "https://news.stanford.edu/2019/08/22/the-power-of-language-how-words-shape-people-culture/",
        "https://open.lib.umn.edu/publicspeaking/chapter/13-3-six-elements-of-language/"]
    assert len(fourth["sources"]) == 5
    assert all(st["citations"] == [] for st in fourth["answers"][0]["statements"])
    assert fourth["labels"] == []


def test_expertqa_round_trip_of_evidence():
    for record, line in zip(read("expertqa", str(EXPERTQA)), EXPERTQA.read_text(encoding="utf-8").splitlines()):
        row = json.loads(line)
        documents = {s["id"]: s for s in record.case["sources"]}
        for answer in record.case["answers"]:
            kept = record.case["metadata"]["answers"][answer["id"]]["claims"]
            for statement, claim, original in zip(answer["statements"], kept, row["answers"][answer["id"]]["claims"]):
                rebuilt = []
                assert statement["citations"] == list(dict.fromkeys(claim["evidence_sources"]))
                for doc_id, number in zip(claim["evidence_sources"], claim["evidence_numbers"]):
                    doc = documents[doc_id]
                    url_only = doc.get("metadata", {}).get("url_only")
                    rebuilt.append(f"[{number}] {doc['title']}" + ("" if url_only else f"\n\n{doc['text']}"))
                # the passage as written, but for the spacing around it ("\n\n design ...")
                written = [(head.strip(), passage.strip()) for head, _, passage in
                           (e.partition("\n\n") for e in original["evidence"])]
                assert rebuilt == [head + (f"\n\n{passage}" if passage else "") for head, passage in written]
                assert {k: v for k, v in claim.items() if not k.startswith("evidence_")} == {
                    k: v for k, v in original.items() if k not in ("claim_string", "evidence")}


def test_expertqa_conflicting_labels_are_left_out_everywhere(tmp_path):
    row = json.loads(EXPERTQA.read_text(encoding="utf-8").splitlines()[1])
    other = json.loads(json.dumps(row))
    other["question"] = "The same answer, to another question"
    other["answers"]["rr_gs_gpt4"]["claims"][0]["support"] = "Partial"
    path = tmp_path / "two.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps(other) + "\n")
    first, second = (r.case for r in read("expertqa", str(path)))
    for case in (first, second):
        assert [(label["label"], label["passages"]) for label in case["labels"]] == [
            ("none", ["ec79a9bfbfc", "ebacb7199f7"])]
        [conflict] = case["metadata"]["conflicting_labels"]
        assert (conflict["passages"], conflict["labels_given"]) == (["ebacb7199f7"], ["full", "partial"])
    load_cases([path], fmt="expertqa")  # the curated labels left are consistent


def test_expertqa_uncited_lead_ins_are_other_not_claims(tmp_path):
    row = json.loads(EXPERTQA.read_text(encoding="utf-8").splitlines()[0])
    claims = row["answers"]["rr_sphere_gpt4"]["claims"]
    claims[0]["claim_string"] = "A clinician can confirm it by performing the following tests:  1."
    path = tmp_path / "lead.jsonl"
    path.write_text(json.dumps(row) + "\n")
    statements = read("expertqa", str(path))[0].case["answers"][0]["statements"]
    assert statements[0]["kind"] == "other"
    assert all("kind" not in s for s in statements[1:])  # cited claims stay claims
    [resolved] = load_cases([path], fmt="expertqa")
    assert [s.kind for s in resolved.case.answers[0].statements][:2] == ["other", "claim"]


def test_expertqa_malformed_lines_are_all_reported(tmp_path):
    path = tmp_path / "bad.jsonl"
    claim = {"claim_string": "A [1].", "evidence": ["[1] https://a.example\n\nA."], "support": "Complete"}
    path.write_text("\n".join(json.dumps(row) for row in [
        {"question": "Q", "answers": {"gpt4": {"answer_string": "A [1].", "claims": [
            {**claim, "support": "Maybe"}, {**claim, "evidence": "[1] https://a.example"}, {"evidence": []}]}}},
        {"answers": {}},
        {"question": "Q", "answers": {"gpt4": {"answer_string": "A", "claims": [{**claim, "evidence": ["  "]}]}}},
    ]) + "\n")
    assert _problems("expertqa", path) == [
        f"{path}:1: answers.gpt4.claims[0].support: unknown support label 'Maybe' (expected one of Complete, "
        "Partial, Incomplete, Missing, N/A, or null)",
        f"{path}:1: answers.gpt4.claims[1].evidence: expected a list, got a text",
        f"{path}:1: answers.gpt4.claims[2].claim_string: field required",
        f"{path}:2: question: field required",
        f"{path}:2: answers: no answers",
        f"{path}:3: answers.gpt4.claims[0].evidence[0]: empty evidence",
    ]


@pytest.mark.skipif(not SHARED_EXPERTQA.is_dir(), reason="shared/data/expertqa is not beside this checkout")
def test_expertqa_every_shared_line_is_read_and_every_expert_label_kept():
    expected = {"full": 0, "partial": 0, "none": 0}
    for path in sorted(SHARED_EXPERTQA.glob("*.jsonl")):
        records = read("expertqa", str(path))
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        assert len(records) == len(rows)
        labels = {"full": 0, "partial": 0, "none": 0}
        conflicts = 0
        for record in records:
            for label in record.case["labels"]:
                labels[label["label"]] += 1
            conflicts += len(record.case["metadata"].get("conflicting_labels", []))
        supports = [c["support"] for row in rows for a in row["answers"].values() for c in a["claims"]
                    if c["evidence"]]
        given = {"full": supports.count("Complete"), "partial": supports.count("Partial"),
                 "none": supports.count("Incomplete")}
        assert sum(given.values()) - sum(labels.values()) == conflicts
        for case in _cases(records):
            assert resolve(case)[1] == []
        expected = {k: expected[k] + labels[k] for k in expected}
    assert sum(expected.values()) > 0


@pytest.mark.parametrize("reader, record, message", [
    ("ragas", {"user_input": "Q", "response": "R", "retrieved_contexts": None},
     "retrieved_contexts: expected a list, got null"),
    ("ragas", {"user_input": "Q", "response": "R", "contexts": None}, "contexts: expected a list, got null"),
    ("ragas", {"user_input": None, "response": "R", "retrieved_contexts": ["c"]}, "user_input: expected a text, got null"),
    ("ragas", {"user_input": "Q", "response": "R"}, "retrieved_contexts: field required"),
    ("ragchecker", {"results": [{"query_id": None, "query": "Q", "response": "R",
                                 "retrieved_context": [{"doc_id": "d", "text": "t"}]}]},
     "results[0].query_id: expected a text or an integer id, got null"),
    ("ragchecker", {"results": [{"query_id": "q", "query": "Q", "response": "R", "retrieved_context": None}]},
     "results[0].retrieved_context: expected a list, got null"),
])
def test_a_null_field_is_named_null_not_missing(tmp_path, reader, record, message):
    path = tmp_path / ("rows.jsonl" if reader == "ragas" else "out.json")
    path.write_text(json.dumps(record) + "\n")
    assert _problems(reader, path) == [f"{path}:1: {message}"]


# --- labelled pairs -------------------------------------------------------------------------------


def test_a_labelled_pair_becomes_a_case_whose_one_claim_cites_its_passages():
    records = read("pairs", str(PAIRS))
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
    assert [(r.line, r.where) for r in records] == [(n, "") for n in range(1, 9)]
    for record, row in zip(records, rows):
        cited = [p["id"] for p in row["passages"]]
        assert record.case == {
            "id": row["id"],
            "question": "",
            "sources": row["passages"],
            "answers": [{"id": "pair", "system": "pairs_citecheck",
                         "statements": [{"text": row["claim"], "citations": cited}]}],
            "labels": [{"claim": row["claim"], "passages": cited, "label": row["label"],
                        "explanation": f"human label, row {row['id']}"}],
            "metadata": {"from": "pairs", "source": "citecheck", "lang": "zh"},
        }
    two = next(r.case for r in records if len(r.case["sources"]) == 2)
    assert _statements(Case.model_validate(two)) == [[(two["labels"][0]["claim"], ["[1]", "[2]"], [])]]
    assert read("pairs", str(PAIRS), system="team-zh")[0].case["answers"][0]["system"] == "team-zh"


def test_bad_labelled_pairs_are_all_reported_at_their_lines(tmp_path):
    path = tmp_path / "pairs.jsonl"
    good = {"id": "a", "claim": "x", "passages": [{"id": "p", "text": "t"}], "label": "full"}
    path.write_text("\n".join([
        json.dumps(good), json.dumps({**good, "id": "b", "claim": " ", "label": "yes"}), "{not json",
        json.dumps({**good, "id": "c", "passages": [{"id": "p", "text": "t"}, {"id": "p", "text": "u"}]}),
        json.dumps({**good, "note": 1}), json.dumps(good)]) + "\n", encoding="utf-8")
    assert _problems("pairs", path) == [
        f"{path}:2: claim: missing or not a non-empty string",
        f"{path}:2: label: must be one of full, partial, none, contradicts, got 'yes'",
        f"{path}:3: not valid JSON: Expecting property name enclosed in double quotes (column 2)",
        f"{path}:4: passages: duplicate passage id 'p' (passages[0] and passages[1])",
        f"{path}:5: note: unknown field (expected one of: claim, id, lang, label, passages, source)",
        f"{path}:6: id: duplicate id 'a' (first on line 1)",
    ]
    assert _problems("pairs", path, system=" ") == [f"{path}: option system=' ': expected a non-empty text"]


def test_score_from_pairs_replays_the_human_labels(runner):
    from citeaudit.cli import main

    result = runner.invoke(main, ["score", "--from", "pairs", str(PAIRS), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    rows = {r["id"]: r for r in map(json.loads, PAIRS.read_text(encoding="utf-8").splitlines())}
    assert {a["case"]: a["claims"][0]["judgment"]["label"] for a in data["answers"]} == {
        i: r["label"] for i, r in rows.items()}
    support = data["summary"]["all"]["support"]
    assert (support["numerator"], support["denominator"]) == (
        sum(r["label"] == "full" for r in rows.values()), len(rows))


def test_a_pair_of_several_passages_labels_the_set_only(runner, tmp_path):
    """Citation precision asks about each passage of a supported claim alone: the row does not say."""
    from citeaudit.cli import main

    path = tmp_path / "two.jsonl"
    path.write_text(json.dumps({"id": "a", "claim": "x", "label": "full",
                                "passages": [{"id": "p", "text": "t"}, {"id": "q", "text": "u"}]}) + "\n")
    result = runner.invoke(main, ["score", "--from", "pairs", str(path)])
    assert result.exit_code == 3 and "no curated label for claim 'x' with passages [p]" in result.output
    result = runner.invoke(main, ["score", "--from", "pairs", str(path), "--metrics", "support,citation_recall",
                                  "--format", "json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["summary"]["all"]["support"]["value"] == 1.0


def test_the_model_judge_on_chinese_pairs_is_measured_against_their_labels(runner, tmp_path):
    """End to end: the shipped judge scores the pairs (real CiteCheck rows), and `agree` sets its labels
    beside the humans' on the same eight pairs."""
    from citeaudit.cli import main

    run = tmp_path / "model.json"
    result = runner.invoke(main, ["score", "--from", "pairs", str(PAIRS), "--judge", "model", "--out", str(run),
                                  "--format", "json"])
    assert result.exit_code == 0, result.output
    answers = json.loads(result.stdout)["answers"]
    assert len(answers) == 8 and all(a["claims"][0]["judgment"]["judge"].startswith("model:") for a in answers)
    agreed = runner.invoke(main, ["agree", str(run), "--labels", str(PAIRS), "--format", "json"])
    assert agreed.exit_code == 0, agreed.output
    figures = json.loads(agreed.stdout)
    assert figures["n_all"] == 8 and figures["unmatched_labels"] == []
    assert 0.0 <= figures["agreement_all"] <= 1.0


def test_the_desk_opens_on_labelled_pairs():
    from citeaudit.cli import desk_session

    session = desk_session([str(PAIRS)], source_format="pairs")
    assert len(session.cases) == 8 and session.source == f"{PAIRS} (--from pairs)"
    report = session.score("citecheck:565:518")
    assert [c.label for a in report.answers for c in a.claims] == ["full"]
