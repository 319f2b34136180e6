"""The plain reading (judges/plain.py): one clause of the evidence that holds every word of the claim."""

import pytest

from citeaudit.judges import plain


@pytest.mark.parametrize("claim, evidence, label, clause", [
    # every word in one clause, the number the same: full, whatever else the passage says
    ("Hold the reset button for 8 seconds.",
     "To restore factory settings on the H3 router, hold the reset button for 8 seconds. The light flashes.",
     "full", "To restore factory settings on the H3 router, hold the reset button for 8 seconds"),
    # a number written as a word is the same number
    ("Charge the headset for two hours.", "Charge the headset for 2 hours before first use.", "full",
     "Charge the headset for 2 hours before first use"),
    # the clause negates what the claim asserts
    ("Pets are allowed in the rooms.", "Pets are not allowed in the rooms. Breakfast is served at 7.",
     "contradicts", "Pets are not allowed in the rooms"),
    # the claim negates what the clause asserts
    ("The store is not open on Sundays.", "The store is open on Sundays from 10 to 4.", "contradicts",
     "The store is open on Sundays from 10 to 4"),
    # both negated: full
    ("The tablet is not waterproof.", "Note: the tablet is not waterproof.", "full", "the tablet is not waterproof"),
    # the same unit with another value in the clause
    ("Hold the reset button for 8 seconds.", "Hold the reset button for 3 seconds to restart it.", "contradicts",
     "Hold the reset button for 3 seconds to restart it"),
    ("电池容量为72瓦时。", "电池容量为72瓦时，支持快充。", "full", "电池容量为72瓦时，支持快充"),
    ("房间内允许携带宠物。", "房间内不允许携带宠物。", "contradicts", "房间内不允许携带宠物"),
])
def test_a_clause_that_holds_the_claim_decides(claim, evidence, label, clause):
    reading = plain.read(claim, evidence)
    assert reading is not None and reading.label == label, reading
    assert evidence[reading.start:reading.end].strip() == clause


@pytest.mark.parametrize("claim, evidence", [
    # the words are spread over two clauses of a contrast: "the mayor had opposed" is another clause
    ("The mayor approved the budget.", "The city council approved the budget on Tuesday; the mayor had opposed it."),
    ("Operating profit grew 8% in 2023.", "In 2023 revenue grew 8% while operating profit fell 3%."),
    # a word of the claim is missing: the model reads it
    ("The hotel has a pool and free parking.", "Guests can enjoy the hotel's heated outdoor pool."),
    # a number the clause does not give, with no rival of its unit: the model reads it
    ("The pump delivers 40 litres per minute.", "The pump delivers a steady flow of water."),
    # a symbol makes another name: C# is not C
    ("C# is a programming language.", "C is a general-purpose programming language created at Bell Labs."),
    # too few words to be read this way
    ("It is 8.", "It is 8 or 9."),
    # a long clause may negate something else than the claim
    ("Walking at a low intensity needs less energy from the body.",
     "Walking at a low intensity does not need as much muscle effort as sprinting, so the body needs less energy, "
     "and that energy comes mostly from fat stores rather than from carbohydrate, which the body keeps for faster "
     "exercise."),
    # the claim is about what the clause excepts
    ("Assistance dogs are allowed in the rooms.", "Pets are not allowed in the rooms, except registered assistance dogs."),
])
def test_no_reading_where_a_careful_reader_needs_more(claim, evidence):
    assert plain.read(claim, evidence) is None


def test_an_exception_leaves_the_negation_standing_for_the_rest():
    reading = plain.read("Pets are allowed in the rooms.", "Pets are not allowed in the rooms, except assistance dogs.")
    assert reading is not None and reading.label == "contradicts"


def test_a_rival_number_in_the_clause_that_holds_most_of_the_claim():
    # "即可" is not in the evidence, but the clause holds the rest and gives seconds another value
    reading = plain.read("请按住电源键3秒重启平板。", "如需重启平板，请按住电源键10秒。屏幕熄灭后松开。")
    assert reading is not None and reading.label == "contradicts" and "10秒" in reading.reason


def test_offsets_are_into_the_evidence_as_given():
    # NFKC changes full-width text; the clause is still cut from the original
    evidence = "Ｈｏｌｄ the reset button for ８ seconds. Then wait."
    reading = plain.read("Hold the reset button for 8 seconds.", evidence)
    assert reading is not None and reading.label == "full"
    assert evidence[reading.start:reading.end] == "Ｈｏｌｄ the reset button for ８ seconds"


def test_a_long_passage_is_read_quickly_and_whole():
    filler = "The committee met again and discussed the schedule for the coming months. " * 20_000
    evidence = filler + "Hold the reset button for 8 seconds. " + filler
    reading = plain.read("Hold the reset button for 8 seconds.", evidence)
    assert reading is not None and evidence[reading.start:reading.end] == "Hold the reset button for 8 seconds"


# --- in the model judge ----------------------------------------------------------------------------------


def test_the_model_judge_reads_plainly_and_says_so():
    from citeaudit.judges.model import ModelJudge
    from citeaudit.records import SourcePassage

    passage = "To reset the P7, hold the power button for 10 seconds. Then release it and wait for the green light."
    passages = [SourcePassage(id="M1", doc_id="manual", version=None, text=passage, start=0, end=len(passage))]
    claim = "Hold the power button for 10 seconds."
    without = ModelJudge(plain=False).judge(claim, passages)
    judged = ModelJudge().judge(claim, passages)
    assert judged.label == "full" and judged.uncertain is None
    assert passage[judged.evidence.start:judged.evidence.end] == "To reset the P7, hold the power button for 10 seconds"
    if without.label != "full":  # the model alone misses it (it did when this was written): the reading says why
        assert "plain reading: every word of the claim is in the clause" in judged.explanation
    # off, it signs as the model judge did before the reading existed
    assert ModelJudge(plain=False).signature == ModelJudge().signature.replace("|plain=on@1", "")
    # a negated clause: contradicts, and the guard does not undo it
    denied = ModelJudge().judge("The P7 is waterproof.", [SourcePassage(
        id="M2", doc_id="manual", version=None, text="The P7 is not waterproof.", start=0, end=25)])
    assert denied.label == "contradicts"


def test_a_guess_the_reading_confirms_is_no_longer_uncertain():
    from citeaudit.judges.base import Request
    from citeaudit.judges.model import ModelJudge
    from citeaudit.records import Judgment, SourcePassage

    text = "Hold the power button for 10 seconds to reset the P7."
    request_passages = (SourcePassage(id="M1", doc_id="manual", version=None, text=text, start=0, end=len(text)),)
    judge = ModelJudge()
    guess = Judgment(label="full", judge=judge.signature, uncertain=True, explanation="uncertain: …")
    read = judge.apply_plain(Request(text="Hold the power button for 10 seconds.", passages=request_passages), guess)
    assert read.label == "full" and read.uncertain is None and "plain reading: every word" in read.explanation
    other = guess.model_copy(update={"label": "none"})
    changed = judge.apply_plain(Request(text="Hold the power button for 10 seconds.", passages=request_passages), other)
    assert changed.label == "full" and changed.uncertain is None and "-> full, not none" in changed.explanation
    # where the reading has nothing to say, the judgment stays as it was, unsure or not
    assert judge.apply_plain(Request(text="The P7 weighs 2 kg.", passages=request_passages), guess) == guess


def test_a_run_judged_before_the_plain_reading_is_rebuilt_without_it():
    from citeaudit.desk.rebuild import candidate_specs

    old = ("model:judge-v1[onnx:judge-v1@1#61a844ac4e8c|max=256|map=full=full]|guard=on@4|cal=on|"
           "zh=embedding:0.9175|band=0.13|sets=parts")
    assert candidate_specs(old) == ["model:plain=off,zh=embedding,band=0.13"]
    now = old.replace("|guard=on@4|", "|guard=on@4|plain=on@1|")
    assert candidate_specs(now) == ["model:zh=embedding,band=0.13"]
