"""The `model` judge: the shipped int8 ONNX cross-encoder (citeaudit/models/judge-v1) plus the guard.

Figures behind the assertions are in docs/model-judge.md; where the model alone gets a seed pair
wrong, the test says so and asserts what the judge (model + guard) does instead.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from citeaudit.errors import JudgeSetupError  # noqa: E402
from citeaudit.examples import load_example  # noqa: E402
from citeaudit.judges.base import Request  # noqa: E402
from citeaudit.judges.model import ModelJudge, make_model_judge, shipped_model_dir  # noqa: E402
from citeaudit.records import SourcePassage  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"


def passage(pid: str, text: str) -> SourcePassage:
    return SourcePassage(id=pid, doc_id=pid, version=None, text=text, start=0, end=len(text))


def sources(example: str) -> dict[str, str]:
    (case,) = load_example(example)
    return {d.id: d.text for d in case.case.sources}


@pytest.fixture(scope="module")
def judge() -> ModelJudge:
    return make_model_judge("threads=2")


@pytest.fixture(scope="module")
def plain() -> ModelJudge:
    return make_model_judge("guard=off,threads=2")


@pytest.fixture(scope="module")
def own_chinese() -> ModelJudge:
    """The model judges Chinese itself instead of handing it to the embedding judge."""
    return make_model_judge("zh=model,threads=2")


def test_shipped_model_dir_holds_only_what_ships():
    d = shipped_model_dir()
    names = {p.name for p in d.iterdir()}
    assert {"model_int8.onnx", "tokenizer.json", "config.json", "MODEL_CARD.md", "model_card.json"} <= names
    assert not any(n.endswith((".pt", ".safetensors", ".bin")) for n in names)
    assert sum(p.stat().st_size for p in d.iterdir()) < 30 * 2**20
    config = json.loads((d / "config.json").read_text())
    assert config["id2label"] == {"0": "full", "1": "partial", "2": "none", "3": "contradicts"}
    card = json.loads((d / "model_card.json").read_text())
    assert card["files"]["model_int8.onnx"]
    assert card["training"]["data"]["nli"]["licences"]


def test_loads_without_torch():
    code = ("import sys; from citeaudit.judges.model import make_model_judge; j = make_model_judge('model');"
            "from citeaudit.records import SourcePassage as P;"
            "print(j.judge('A receipt is required.', [P(id='S', doc_id='S', version=None, "
            "text='A receipt is required for returns.', start=0, end=34)]).label);"
            "assert 'torch' not in sys.modules, 'torch was imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["full"]  # it did judge, not only load


def test_options_and_signature(judge, plain, own_chinese):
    assert "guard=on" in judge.signature and "guard=off" in plain.signature
    assert "#" in judge.signature  # the model-file hash from CrossEncoderJudge
    h = judge.signature.split("#", 1)[1][:12]
    assert len(h) == 12 and all(c in "0123456789abcdef" for c in h)
    assert "zh=judge-v2#" in judge.signature  # the shipped judge hands Chinese to judge-v2, signed by its hash
    assert "zh=model" in own_chinese.signature
    assert "zh=embedding:0.9175" in make_model_judge("zh=embedding").signature
    with pytest.raises(JudgeSetupError, match="guard=maybe"):
        make_model_judge("guard=maybe")


def test_returns_desk_seed_pairs(judge):
    src = sources("returns_desk.json")
    c1 = "Standard items may be returned within 30 days of delivery."
    # S2 (receipt) does not support C1 (the return window)
    assert judge.judge(c1, [passage("S2", src["S2"])]).label != "full"
    # S1 states C1
    assert judge.judge(c1, [passage("S1", src["S1"])]).label == "full"
    # C2 is S2 nearly verbatim
    assert judge.judge("A receipt is required to return a standard item.", [passage("S2", src["S2"])]).label == "full"


def test_eco_seed_pair_needs_the_guard(judge, plain):
    d3 = sources("p7_archive.json")["D3"]
    claim = "Eco reduces annual energy by 15%."
    guarded = judge.judge(claim, [passage("D3", d3)])
    assert guarded.label != "full"
    # measured: the model alone is fooled by the shared topic and number (p(full) 0.49); the guard stops it
    assert plain.judge(claim, [passage("D3", d3)]).label == "full"
    assert "qualifier guard" in guarded.explanation and "energy" in guarded.explanation
    # by the attachment rule, to `none`, through every revision of the rules (docs/model-judge.md, "Seed pairs")
    assert guarded.label == "none" and "qualifier guard (attachment)" in guarded.explanation
    # the claim D3 does support stays full (the guard must not fire on it)
    ok = judge.judge("It reported reduced downtime of 15%.", [passage("D3", d3)])
    assert ok.label == "full" and "qualifier guard" not in (ok.explanation or "")


def test_batch_equals_single(judge):
    src = sources("returns_desk.json")
    requests = [Request.of(text, [passage(pid, src[pid])]) for text, pid in [
        ("Standard items may be returned within 30 days of delivery.", "S1"),
        ("Standard items may be returned within 30 days of delivery.", "S2"),
        ("Defective items are collected free of charge.", "S4"),
        ("Clearance items can be returned.", "S5"),
    ]]
    batch = judge.judge_batch(requests)
    for r, b in zip(requests, batch):
        single = judge.judge(r.text, r.passages)
        assert single.label == b.label
        assert single.scores == b.scores  # batch size 1: exactly the same (see judges/model.py)


TOPICS = ["office plants", "colour of the carpets", "parking rules", "canteen menu", "fire drills",
          "printer queues", "holiday rota", "meeting rooms", "coffee machine", "visitor badges"]
SUPPORT = "Standard items can be returned up to 30 days after delivery."


def long_handbook() -> str:
    filler = [f"This part of the handbook describes the {TOPICS[i % 10]} in some detail for new staff." for i in range(60)]
    filler.insert(37, SUPPORT)
    return " ".join(filler)


def test_long_passage_is_windowed(judge):
    text = long_handbook()
    j = judge.judge("Standard items may be returned within 30 days of delivery.", [passage("H", text)])
    assert j.explanation.startswith("best of ") and int(j.explanation.split()[2]) > 1  # several windows
    assert j.evidence is not None and 0 <= j.evidence.start < j.evidence.end <= len(text)
    # never a `full` resting on a window without the supporting sentence: the guard sees the window
    if j.label == "full":
        assert SUPPORT.rstrip(".") in text[j.evidence.start:j.evidence.end]
    else:  # measured: the model prefers a filler window (p(full) 0.59); the calibration (no claim word
        # in that window) or else the guard stops it
        assert "-> none, not full" in j.explanation or "qualifier guard" in j.explanation


def test_long_passage_support_is_found_by_the_model_alone():
    # one supporting sentence among filler is diluted in its 256-token window: a filler window scores a higher
    # p(full) (measured 0.59), so the window of highest p(full) (pick=full) is the wrong one; the window of
    # highest calibrated p(support), which weighs the claim's words found in it, is the right one
    claim, text = "Standard items may be returned within 30 days of delivery.", long_handbook()
    by_full = make_model_judge("threads=2,plain=off,pick=full").judge(claim, [passage("H", text)])
    assert by_full.label != "full" and SUPPORT.rstrip(".") not in text[by_full.evidence.start:by_full.evidence.end]
    by_support = make_model_judge("threads=2,plain=off").judge(claim, [passage("H", text)])
    assert by_support.label == "full" and SUPPORT.rstrip(".") in text[by_support.evidence.start:by_support.evidence.end]
    assert by_support.scores["full"] < by_full.scores["full"]  # a window of lower p(full), chosen all the same
    other = f"H[{by_full.evidence.start}:{by_full.evidence.end}] (p(full)={by_full.scores['full']:.3f})"
    assert f"picked by calibrated p(support) over the window of highest p(full), {other}" in by_support.explanation
    assert "|pick=support|" in by_support.judge and "pick=" not in by_full.judge
    # without a calibration there is no p(support) to pick by: p(full) picks, and the signature says so
    uncalibrated = make_model_judge("threads=2,plain=off,calibration=off")
    assert "pick=" not in uncalibrated.signature
    assert uncalibrated.judge(claim, [passage("H", text)]).evidence == by_full.evidence



def test_a_run_judged_before_the_window_was_picked_by_support_is_rebuilt_as_it_judged():
    # a run log of the judge before `pick` (its signature has none) is judged again by that judge, not today's
    from citeaudit.desk.rebuild import candidate_specs

    today = make_model_judge("threads=2")
    before = make_model_judge("threads=2,pick=full")
    assert before.signature == today.signature.replace("|pick=support|", "|") != today.signature
    for judge in (before, today):
        (spec,) = candidate_specs(judge.signature)
        assert make_model_judge(spec).signature == judge.signature


def test_long_passage_support_is_read_plainly():
    # where the model's window is a filler one (pick=full), the plain reading finds the sentence that restates
    # the claim
    text = long_handbook()
    j = make_model_judge("threads=2,pick=full").judge("Standard items may be returned within 30 days of delivery.",
                                                      [passage("H", text)])
    assert j.label == "full" and SUPPORT.rstrip(".") == text[j.evidence.start:j.evidence.end]
    assert "plain reading" in j.explanation


def test_chinese_is_routed_and_says_so(judge, own_chinese):
    z3 = sources("p7_archive_zh.json")["D3"]
    j = judge.judge("Eco将年度能耗降低15%。", [passage("D3", z3)])
    assert "judged by judge-v2" in j.explanation
    # downtime over 30 days cited for annual energy: never counted as support (judge-v2 is unsure of it)
    assert not j.supports
    embedding = make_model_judge("zh=embedding,threads=2").judge("Eco将年度能耗降低15%。", [passage("D3", z3)])
    assert "embedding judge" in embedding.explanation and embedding.label != "full"
    own = own_chinese.judge("Eco将年度能耗降低15%。", [passage("D3", z3)])
    assert "not validated for Chinese" in own.explanation


@pytest.mark.slow
def test_validation_sample_balanced_accuracy(judge):
    from citeaudit.files.labelled import load_rows
    from citeaudit.training.validation import validate_judge

    rows = load_rows(FIXTURES / "judge_validation_sample.jsonl")
    result = validate_judge(rows, judge, resamples=200)
    by_lang = {lang: figures["balanced_accuracy"] for lang, figures in result["by_lang"].items()}
    # measured with the calibrated judge and guard version 3: 0.770 overall, 0.770 English, 0.754 Chinese
    # (embedding route); guard version 2 gave 0.770, 0.754, 0.802: its number rule stopped one Chinese `full`
    # rightly, by chance (the 3 of the name "巫师3"; docs/model-judge.md). The margins leave room for int8
    # kernels that differ between CPUs, not for a judge that got worse
    assert result["balanced_accuracy"] > 0.74, (result["balanced_accuracy"], by_lang)
    assert by_lang["en"] > 0.74 and by_lang["zh"] > 0.73, by_lang


def _with_unrelated_passage(rows):
    """Each row's cited set with one passage of another row's claim added (the next row's first)."""
    from dataclasses import replace

    out = []
    for i, row in enumerate(rows):
        other = rows[(i + 1) % len(rows)].passages[0]
        extra = replace(other, id=f"{other.id}-unrelated-{i}")
        out.append(Request.of(row.claim, [*row.passages, extra]))
    return out


@pytest.mark.slow
def test_adding_an_unrelated_passage_never_takes_support_away(judge):
    """Monotone sets, as a property on 160 real labelled rows: a `full` stays `full` when an unrelated
    passage joins the cited set (before sets were judged with their parts, the best window was picked
    on the raw score and a joined set could lose the support its member gave)."""
    from citeaudit.files.labelled import load_rows

    rows = load_rows(FIXTURES / "judge_validation_sample.jsonl")
    alone = judge.judge_batch([Request.of(r.claim, r.passages) for r in rows])
    joined = judge.judge_batch(_with_unrelated_passage(rows))
    lost = [(r.claim, a.label, j.label) for r, a, j in zip(rows, alone, joined) if a.label == "full" != j.label]
    assert sum(a.label == "full" for a in alone) >= 40  # the property is tried on many supported rows
    assert lost == []


def test_a_set_is_judged_with_its_parts_and_says_so(judge):
    from citeaudit.records import SourcePassage

    claim = "The continuous operating limit is 80 °C."
    good = SourcePassage("D1", "D1", None, "The P7 datasheet gives a continuous operating limit of 80 °C.", 0, 61)
    noise = SourcePassage("D9", "D9", None, "The cafeteria menu changes every Tuesday and lists soups. " * 8, 0, 464)
    single = judge.judge(claim, [good])
    both = judge.judge(claim, [good, noise])
    assert single.label == "full" and both.label == "full"
    assert _strength_order(both) >= _strength_order(single)


def _strength_order(judgment):
    from citeaudit.judges.model import _strength

    return _strength(judgment)


# --- one encoding per passage: the same windows, pair ids and probabilities as encoding every span ----


@pytest.fixture(scope="module")
def encoded_and_plain():
    """The judge's inner runner and judges/local.py's runner (encodes every span and pair) on one model."""
    from citeaudit.judges.local import CrossEncoderJudge
    from citeaudit.judges.model import IDENTITY_LABELS, PassageEncodedJudge

    path = shipped_model_dir()
    new = PassageEncodedJudge(path, batch_size=1, threads=2)
    assert new.one_encoding  # the shipped tokenizer is BERT's: the fast path is the one in use
    return new, CrossEncoderJudge("onnx", path, label_map=IDENTITY_LABELS, batch_size=1, threads=2)


def _real_requests() -> list[Request]:
    """The 160 validation rows (English and Chinese) and a long passage cut into many windows."""
    from citeaudit.files.labelled import load_rows

    rows = load_rows(FIXTURES / "judge_validation_sample.jsonl")
    return ([Request.of(r.claim, r.passages) for r in rows]
            + [Request.of("Standard items may be returned within 30 days of delivery.", [passage("H", long_handbook())])])


def test_windows_and_pair_ids_from_one_encoding_equal_encoding_each_span(encoded_and_plain):
    from citeaudit.judges.windows import set_windows

    new, old = encoded_and_plain
    tokenizer = old.backend.tokenizer
    checked = 0
    for r in _real_requests():
        budget = old.max_tokens - old.backend.count(r.text) - 3
        windows = set_windows(r.passages, old.backend.count, budget)
        assert set_windows(r.passages, new.count, budget, spans=new.spans) == windows
        claim_ids = tokenizer.encode(r.text, add_special_tokens=False).ids
        by_id = {p.id: p for p in r.passages}
        for group in windows:
            premise = "\n".join(w.text for w in group)
            pair = tokenizer.encode(premise, r.text)
            assert new._pair_ids(group, by_id, premise, r.text, claim_ids) == (pair.ids, pair.type_ids)
            checked += 1
    assert checked > 200  # many windows, several passages cut into several


def test_token_spans_count_every_span_exactly(encoded_and_plain):
    """Spans with random edges, inside words too: the count is the span's own encoding's, and ids are
    given only where they are that encoding's ids."""
    import random

    new, old = encoded_and_plain
    tokenizer = old.backend.tokenizer
    rng = random.Random(14)
    given = 0
    for r in _real_requests()[::4]:
        for p in r.passages:
            spans = new.spans(p)
            for _ in range(20):
                a = rng.randrange(len(p.text) + 1)
                b = rng.randrange(a, len(p.text) + 1)
                own = tokenizer.encode(p.text[a:b], add_special_tokens=False).ids
                assert spans.count(a, b) == len(own), (p.text[a:b][:60], a, b)
                ids = spans.token_ids(a, b)
                if ids is not None:
                    given += 1
                    assert ids == own
    assert given > 0


def test_one_encoding_gives_the_same_judgments(encoded_and_plain):
    new, old = encoded_and_plain
    requests = _real_requests()[::3]
    assert [j.model_dump() for j in new.judge_batch(requests)] == [j.model_dump() for j in old.judge_batch(requests)]


def test_dequantized_graph_keeps_the_int8_weights_and_is_batch_independent(tmp_path, encoded_and_plain):
    """The fp32 graph the static-quantisation benchmark starts from: no integer MatMul left, scores
    close to the shipped model's (only the activations are no longer quantised), and a window's scores
    the same alone and in a padded batch."""
    onnx = pytest.importorskip("onnx")
    import numpy as np

    from citeaudit.judges.model import PassageEncodedJudge
    from citeaudit.training.export import dequantize_dynamic

    out = dequantize_dynamic(shipped_model_dir() / "model_int8.onnx", tmp_path / "fp32")
    assert not any(n.op_type in ("MatMulInteger", "DynamicQuantizeLinear") for n in onnx.load(str(out)).graph.node)
    shipped, _ = encoded_and_plain
    fp32 = PassageEncodedJudge(tmp_path / "fp32", batch_size=1, threads=2)
    src = sources("returns_desk.json")
    rows = [(shipped.backend.tokenizer.encode(src[pid], claim).ids, shipped.backend.tokenizer.encode(src[pid], claim).type_ids)
            for claim, pid in [("Standard items may be returned within 30 days of delivery.", "S1"),
                               ("A receipt is required to return a standard item.", "S2"),
                               ("Clearance items can be returned.", "S5")]]
    alone = np.array([fp32._forward([row])[0] for row in rows])
    assert np.abs(alone - fp32._forward(rows)).max() < 1e-5  # padded batch = one by one
    assert np.abs(alone - np.array([shipped._forward([row])[0] for row in rows])).max() < 0.15


# --- a long passage's windows, told as they are read ------------------------------------------------------

SHELF = "The ledgers are kept on the river shelf."


def test_the_windows_of_a_long_passage_are_told_as_they_are_read(judge):
    from citeaudit.judges.windows import windows_told

    text = "The archive keeps its ledgers in the cellar, and the maps on the upper floor. " * 300 + SHELF
    told = []
    with windows_told(lambda done, total: told.append((done, total))):
        judge.judge(SHELF, [passage("S1", text)])
    total = told[-1][1]
    assert total > 5 and told == [(k, total) for k in range(1, total + 1)]  # one window a forward pass
    judge.judge(SHELF + " ", [passage("S1", text)])
    assert len(told) == total  # outside the block nothing is told


def test_prepare_shows_the_windows_it_reads_of_a_long_passage(runner, tmp_path, monkeypatch):
    from citeaudit.cli import common, main

    monkeypatch.setattr(common, "MANY_WINDOWS", 5)  # the bar shows from this many windows in a batch
    text = "The archive keeps its ledgers in the cellar, and the maps on the upper floor. " * 300 + SHELF
    case = {"id": "long", "question": "q?", "sources": [{"id": "S1", "text": text}],
            "answers": [{"id": "a", "statements": [{"id": "C1", "text": SHELF, "citations": ["S1"]}]}]}
    path = tmp_path / "long.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    args = ["prepare", str(path), "--judge", "model:threads=2", "--store", str(tmp_path / "j.db")]
    shown = runner.invoke(main, args, env={"TTY_COMPATIBLE": "1"})  # stderr read as a terminal
    assert shown.exit_code == 0, shown.output
    # the last frame drawn, before the bars are cleared away, holds every window read
    frame = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.stderr)
    assert re.search(r"reading windows\s.*\s(\d+)/\1\s", frame), frame[-2000:]
    quiet = runner.invoke(main, [*args[:-1], str(tmp_path / "k.db")])  # not a terminal: no bars
    assert quiet.exit_code == 0 and "reading windows" not in quiet.stderr


def test_judge_v2_ships_packed_and_is_unpacked_once_into_the_cache(tmp_path, monkeypatch):
    from citeaudit.judges.judge_dir import load_judge_dir
    from citeaudit.judges.model import CHINESE_MODEL_NAME, unpacked_model_dir

    packed = shipped_model_dir(CHINESE_MODEL_NAME, packed=True)
    assert sorted(p.name for p in packed.iterdir()) == [
        "MODEL_CARD.md", "calibration.json", "config.json", "model_card.json", "model_int8.onnx.gz",
        "tokenizer.json.gz", "trained_on.txt.gz"]
    monkeypatch.setenv("CITEAUDIT_CACHE", str(tmp_path / "cache"))
    first = unpacked_model_dir(packed)
    assert first.parent == tmp_path / "cache" and load_judge_dir(first).config["id2label"]["0"] == "full"
    made = (first / "model_int8.onnx").stat().st_mtime_ns
    assert unpacked_model_dir(packed) == first and (first / "model_int8.onnx").stat().st_mtime_ns == made
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [first.name]  # no temporary folder left
    # a damaged unpacked file is named by the directory check, not read as a model
    (first / "model_int8.onnx").write_bytes(b"cut")
    with pytest.raises(JudgeSetupError, match="model_int8.onnx"):
        load_judge_dir(first)


def test_an_unwritable_cache_is_a_setup_error_that_says_what_to_set(tmp_path, monkeypatch):
    from citeaudit.judges.model import CHINESE_MODEL_NAME, unpacked_model_dir

    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("CITEAUDIT_CACHE", str(tmp_path / "file" / "cache"))  # under a file: never a folder
    with pytest.raises(JudgeSetupError, match="set CITEAUDIT_CACHE to a writable folder"):
        unpacked_model_dir(shipped_model_dir(CHINESE_MODEL_NAME, packed=True))


def test_chinese_pairs_are_judged_by_judge_v2_and_english_ones_as_before(judge):
    full = judge.judge("保修期为两年。", [passage("S1", "本产品的保修期为两年，自购买之日起计算。")])
    assert "judged by judge-v2" in full.explanation and full.judge == judge.signature
    english = judge.judge("The warranty lasts two years.", [passage("S1", "The warranty lasts two years.")])
    assert "judge-v2" not in (english.explanation or "") and english.label == "full"
