"""`--conventions alce`: given the same entailment decisions, citeaudit's figures equal those of ALCE's
eval.py (compute_autoais). ALCE's rules are written out again here, independently of citeaudit's code,
from the reference script: the first line only, `[n` markers, at most three citations, out-of-range
citations, repeated markers, every sentence counted, empty outputs dropped from both means."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from citeaudit.judges import Judgments, make_judge
from citeaudit.files.loading import parse_cases
from citeaudit.metrics import Settings, score_cases
from citeaudit.metrics import names as N
from citeaudit.parse.resolve import Reading
from citeaudit.text import sentence_spans

DOCS = [{"title": f"Title {i}", "text": f"Passage number {i} about topic {i}."} for i in range(1, 5)]
CLAIMS = ["Alpha holds", "Beta holds", "Gamma holds", "Delta holds", "Epsilon holds"]


def supports(claim: str, cited: set[int]) -> bool:
    """The entailment oracle both sides use: a claim needs a fixed set of passages (0-based)."""
    need = {"Alpha holds": {0}, "Beta holds": {1, 2}, "Gamma holds": {3}, "Delta holds": {0, 3},
            "Epsilon holds": {9}}[claim]  # Epsilon: nothing supports it
    return need <= cited


# --- ALCE's rules, restated from eval.py ---------------------------------------------------------

def _remove_citations(sent: str) -> str:
    return re.sub(r"\[\d+", "", re.sub(r" \[\d+", "", sent)).replace(" |", "").replace("]", "")


def _claim_of(target: str) -> str:
    return next(c for c in CLAIMS if target.startswith(c))


def alce_reference(outputs: list[str], n_docs: int) -> tuple[list[float | None], list[float | None], float, float]:
    recalls, precisions = [], []
    for raw in outputs:
        output = raw.strip().split("\n")[0].replace("<|im_end|>", "")
        sents = [output[a:b] for a, b in sentence_spans(output)]  # ALCE: nltk.sent_tokenize
        if not sents:
            recalls.append(None), precisions.append(None)
            continue
        entail = entail_prec = total = 0
        for sent in sents:
            target = _remove_citations(sent).strip()
            claim = _claim_of(target) if any(target.startswith(c) for c in CLAIMS) else None
            ref = [int(r[1:]) - 1 for r in re.findall(r"\[\d+", sent)]
            if not ref or any(r >= n_docs for r in ref):
                flag = 0
            else:
                ref = ref[:3]
                total += len(ref)
                cited = {r % n_docs for r in ref}  # r == -1 ("[0") is the last passage
                flag = int(claim is not None and supports(claim, cited))
            entail += flag
            if flag and len(ref) > 1:
                for psg in ref:
                    if supports(claim, {psg % n_docs}):
                        entail_prec += 1
                        continue
                    rest = list(ref)
                    rest.remove(psg)
                    if not supports(claim, {r % n_docs for r in rest}):
                        entail_prec += 1
            elif flag:
                entail_prec += 1
        recalls.append(entail / len(sents))
        precisions.append(entail_prec / total if total else 0)
    kept_r = [r for r in recalls if r is not None]
    kept_p = [p for p in precisions if p is not None]
    return recalls, precisions, 100 * sum(kept_r) / len(kept_r), 100 * sum(kept_p) / len(kept_p)


# --- random outputs with every rule exercised ---------------------------------------------------

def _marker(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.55:
        return "".join(f"[{rng.randint(1, 4)}]" for _ in range(rng.randint(1, 5)))  # repeats and > 3 markers
    if kind < 0.65:
        return f"[{rng.randint(5, 9)}]"  # out of range
    if kind < 0.75:
        return f"[{rng.randint(1, 4)}, {rng.randint(1, 4)}]"  # ALCE reads only the first number
    if kind < 0.8:
        return "[0]"  # ALCE's index -1: the last passage
    return ""  # no citation


def random_output(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return rng.choice(["", "   ", "\n"])  # empty outputs: dropped from both means
    sentences = []
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.1:
            sentences.append("Hello there.")  # a greeting: counted by ALCE, unsupported
            continue
        sentences.append(f"{rng.choice(CLAIMS)} in case {rng.randint(1, 99)} {_marker(rng)}.")
    text = " ".join(sentences)
    if rng.random() < 0.3:
        text += "\n" + "Gamma holds on the second line [4]."  # never read
    if rng.random() < 0.2:
        text = "  \n" + text + "<|im_end|>"
    return text


def _labels() -> list[dict]:
    out = []
    for claim_stem in CLAIMS:
        for n in range(1, 5):
            for subset in itertools.combinations(range(4), n):
                out.append({"claim": claim_stem, "passages": [str(i + 1) for i in subset],
                            "label": "full" if supports(claim_stem, set(subset)) else "none"})
    return out


def _cases(outputs: list[str]) -> list[dict]:
    return [{"id": f"q{i}", "question": "q?", "sources": [{"id": str(j + 1), **d} for j, d in enumerate(DOCS)],
             "answers": [{"id": "output", "text": out}], "labels": []} for i, out in enumerate(outputs)]


def _with_labels(cases: list[dict], reading: Reading) -> list[dict]:
    """Curated labels for every claim text the ALCE reading produces (claims keep their case number)."""
    import json

    from citeaudit.parse.resolve import resolve
    from citeaudit.records import Case

    for case in cases:
        rc, problems = resolve(Case.model_validate(case), reading)
        assert not problems, problems
        texts = {st.text for a in rc.case.answers for st in a.statements}
        case["labels"] = [dict(lab, claim=t) for t in texts for lab in _labels()
                          if t.startswith(lab["claim"]) and t != lab["claim"]]
    return json.loads(json.dumps(cases))


def score_alce(outputs: list[str]):
    import json

    reading = Reading(conventions="alce")
    cases = _with_labels(_cases(outputs), reading)
    resolved = parse_cases("alce.json", json.dumps(cases), reading)
    report = score_cases(resolved, Judgments(make_judge("curated", resolved)), Settings(conventions="alce"))
    return report


@pytest.mark.parametrize("seed", range(4))
def test_per_answer_figures_and_means_equal_alce(seed):
    rng = random.Random(seed)
    outputs = [random_output(rng) for _ in range(60)]
    report = score_alce(outputs)
    recalls, precisions, mean_recall, mean_precision = alce_reference(outputs, len(DOCS))
    got_r = [a.ratios()[N.CITATION_RECALL].value for a in report.answers]
    got_p = [a.ratios()[N.CITATION_PRECISION].value for a in report.answers]
    assert got_r == pytest.approx(recalls) and got_p == pytest.approx(precisions)
    summary = report.summary()
    assert 100 * summary[N.ALCE_CITATION_RECALL].value == pytest.approx(mean_recall)
    assert 100 * summary[N.ALCE_CITATION_PRECISION].value == pytest.approx(mean_precision)


@pytest.mark.parametrize("output, recall, precision", [
    ("Alpha holds [1][2][3][4].", 1.0, 1 / 3),  # the cap: [4] is never read; [2], [3] are redundant
    ("Beta holds [2][3][2].", 1.0, 1 / 3),  # each copy of [2] counts, and each is redundant beside the other
    ("Alpha holds [1][7].", 0.0, 0.0),  # out of range: unsupported, its citations out of precision (0 of 0)
    ("Alpha holds [1, 2].", 1.0, 1.0),  # only "[1" is a citation; the claim keeps ", 2"
    ("Hello there. Alpha holds [1].", 0.5, 1.0),  # the greeting counts in recall
    ("Alpha holds [1].\nGamma holds [4].", 1.0, 1.0),  # the second line is never read
    ("Gamma holds [0].", 1.0, 1.0),  # [0] reads as the last passage, as Python's index -1 does
])
def test_each_alce_rule(output, recall, precision):
    answer = score_alce([output]).answers[0].ratios()
    assert (answer[N.CITATION_RECALL].value, answer[N.CITATION_PRECISION].value) == pytest.approx((recall, precision))


def test_an_empty_output_is_dropped_from_both_means_even_with_zero_precision():
    report = score_alce(["", "Alpha holds [2]."])
    empty = report.answers[0].ratios()
    assert empty[N.CITATION_RECALL].value is None and empty[N.CITATION_PRECISION].value is None
    summary = report.summary()
    assert (summary[N.ALCE_CITATION_RECALL].value, summary[N.ALCE_CITATION_PRECISION].value) == (0.0, 0.0)
    assert summary[N.ALCE_CITATION_RECALL].denominator == 1  # one answer averaged, not two


def test_an_alce_result_file_with_a_labels_file_gives_alces_figures(runner, tmp_path):
    """End to end: `score --from alce FILE --conventions alce --labels human.jsonl`."""
    import json

    from citeaudit.cli import main
    from citeaudit.parse.alce import parse_alce

    rng = random.Random(7)
    outputs = [random_output(rng) for _ in range(40)]
    result = {"args": {"model": "toy"}, "data": [
        {"question": f"q{i}?", "output": out, "docs": DOCS} for i, out in enumerate(outputs)]}
    path = tmp_path / "result.json"
    path.write_text(json.dumps(result), encoding="utf-8")
    ids = [str(i + 1) for i in range(len(DOCS))]
    texts = {st.text for out in outputs for st in parse_alce(out, ids)}
    rows = [{"id": f"r{n}", "claim": text, "label": lab["label"],
             "passages": [{"id": p, "text": DOCS[int(p) - 1]["text"]} for p in lab["passages"]]}
            for n, (text, lab) in enumerate((t, lab) for t in sorted(texts) for lab in _labels()
                                            if t.startswith(lab["claim"]))]
    labels = tmp_path / "human.jsonl"
    labels.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    scored = runner.invoke(main, ["score", "--from", "alce", str(path), "--conventions", "alce",
                                  "--labels", str(labels), "--format", "json"])
    assert scored.exit_code == 0, scored.output
    summary = json.loads(scored.output[scored.output.index("{"):])["summary"]["all"]
    _, _, mean_recall, mean_precision = alce_reference(outputs, len(DOCS))
    assert 100 * summary[N.ALCE_CITATION_RECALL]["value"] == pytest.approx(mean_recall)
    assert 100 * summary[N.ALCE_CITATION_PRECISION]["value"] == pytest.approx(mean_precision)
    assert "conv:alce" in summary[N.ALCE_CITATION_RECALL]["signature"]


class _Reader:
    """A judge that records what it was shown and points at the first word of the first passage."""

    name = "reader"
    signature = "reader@test"

    def __init__(self):
        self.shown: list[str] = []

    def judge(self, text, passages):
        from citeaudit.records import Evidence, Judgment

        self.shown += [p.text for p in passages]
        first = passages[0]
        start = first.text.index("Passage")
        return Judgment(label="full", judge=self.signature,
                        evidence=Evidence(passage=first.id, start=start, end=start + 7))


def test_under_alce_conventions_a_judge_reads_each_passage_after_its_title_line():
    from citeaudit.judges.titled import TitledPassages
    from citeaudit.records import SourcePassage

    inner = _Reader()
    judge = TitledPassages(inner)
    passage = SourcePassage("1", "1", None, DOCS[0]["text"], 0, len(DOCS[0]["text"]), DOCS[0]["title"])
    judgment = judge.judge("Alpha holds.", [passage])
    assert inner.shown == ["Title: Title 1\nPassage number 1 about topic 1."]  # as eval.py's _format_document
    assert (judgment.evidence.start, judgment.evidence.end) == (0, 7)  # back on the passage text
    assert judgment.judge == "reader@test|passages=alce-title" == judge.signature


def test_the_curated_judge_is_not_shown_titles(runner, tmp_path):
    import json

    from citeaudit.cli import main

    result = {"args": {}, "data": [{"question": "q?", "output": "Alpha holds [1].", "docs": DOCS}]}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(result), encoding="utf-8")
    labels = tmp_path / "l.jsonl"
    labels.write_text(json.dumps({"id": "r", "claim": "Alpha holds.", "label": "full",
                                  "passages": [{"id": "1", "text": DOCS[0]["text"]}]}) + "\n", encoding="utf-8")
    scored = runner.invoke(main, ["score", "--from", "alce", str(path), "--conventions", "alce", "--labels",
                                  str(labels), "--format", "json"])
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.output)["summary"]["all"][N.CITATION_RECALL]["value"] == 1.0
