"""How often does `parse_answer` recover ExpertQA's own sentence -> citation mapping?

ExpertQA (Malaviya et al., 2024; MIT) splits every answer into "claims" that are in fact its
sentences, each keeping the `[n]` markers written in it. For every ExpertQA claim we ask:

* text agreement: some statement parsed from the same answer has the same text, compared after
  normalisation (markers and list enumerators such as "1." removed, lower-cased, only letters and
  digits kept, so whitespace, punctuation and Markdown do not count);
* citation agreement (for text-matched claims): that statement cites the same set of passages as
  the markers written in the claim ([n] is read as passage id "n"; the answer's `attribution` list
  gives the ids);
* agreement: both.

Chinese (``--citecheck FILE``, CiteCheck dev, MIT): each row holds an answer and one statement
cut from it by the CiteCheck authors (they carry no markers). We count the statements that equal a
statement parsed from the answer, exactly and after removing whitespace and a leading list mark
("-", "3)", "24.").

Rows appear in both the rand_* and the domain_* files: answers are de-duplicated by
(question, system) before counting. Answers whose markers name a passage not in `attribution`
make `parse_answer` raise; they are counted and skipped.

    .venv/bin/python benchmarks/expertqa_agreement.py [--data DIR] [--citecheck FILE] [--show N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from citeaudit.errors import InputError
from citeaudit.parse import parse_answer

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "expertqa"
_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


def normalise(text: str) -> str:
    # List enumerators ("1.") are layout, not text: ExpertQA's splitter glues them to the sentence
    # before ("... follow these steps: 1."), the parser strips them from the item they start.
    text = _MARKER.sub("", text)
    text = re.sub(r"(?m)^\s*\d{1,3}\.\s", "", text)  # at a line start
    text = re.sub(r":\s+\d{1,3}\.\s*$", ":", text)  # glued after a lead-in: "follow these steps:  1."
    return re.sub(r"[^a-z0-9]", "", text.lower())


def cited(text: str) -> set[str]:
    return {n.strip() for m in _MARKER.finditer(text) for n in m.group(1).split(",")}


def source_ids(answer: dict) -> list[str]:
    ids = []
    for i, entry in enumerate(answer.get("attribution") or [], start=1):
        m = re.match(r"\s*\[(\d+)\]", entry or "")
        ids.append(m.group(1) if m else str(i))
    return list(dict.fromkeys(ids))


def load(data: Path) -> list[tuple[str, str, dict]]:
    seen: dict[tuple[str, str], dict] = {}
    for path in sorted(data.glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                for system, answer in row["answers"].items():
                    seen.setdefault((row["question"], system), answer)
    return [(q, s, a) for (q, s), a in seen.items()]


def citecheck(path: Path, show: int) -> None:
    def norm(t: str) -> str:
        return re.sub(r"\s", "", re.sub(r"^\s*(?:[-*•]|\d{1,3}[.)、])", "", t))

    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    exact = loose = 0
    misses = []
    for row in rows:
        parsed = [st.text for st in parse_answer(row["answer"], [], lang="zh")]
        statement = row["statement"].strip()
        exact += statement in parsed
        hit = norm(statement) in {norm(t) for t in parsed}
        loose += hit
        if not hit:
            misses.append(statement)
    print(f"\nCiteCheck (zh) statements equal to a parsed statement: exact {pct(exact, len(rows))}, "
          f"ignoring whitespace and list marks {pct(loose, len(rows))}")
    for statement in misses[:show]:
        print(f"  MISSED {statement!r}")


def pct(n: int, d: int) -> str:
    return f"{n}/{d} = {100 * n / d:.1f} %" if d else f"{n}/0"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--citecheck", type=Path, help="also measure Chinese sentence agreement on this CiteCheck file")
    ap.add_argument("--show", type=int, default=0, help="print N disagreements of each kind")
    args = ap.parse_args(argv)

    answers = load(args.data)
    c: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}

    def example(kind: str, line: str) -> None:
        if len(examples.get(kind, [])) < args.show:
            examples.setdefault(kind, []).append(line)

    for question, system, answer in answers:
        c["answers"] += 1
        text = answer["answer_string"]
        try:
            statements = parse_answer(text, source_ids(answer), lang="en")
        except InputError as err:
            c["answers_rejected"] += 1
            c["claims_in_rejected"] += len(answer["claims"])
            example("rejected", f"{system}: {err}")
            continue
        by_text: dict[str, list] = {}
        for st in statements:
            by_text.setdefault(normalise(st.text), []).append(st)
        c["statements"] += len(statements)
        matched_statements = set()
        for claim in answer["claims"]:
            cs = claim["claim_string"]
            key = normalise(cs)
            if not key:
                continue
            c["claims"] += 1
            has_marker = bool(cited(cs))
            c["claims_cited"] += has_marker
            hits = by_text.get(key)
            if not hits:
                # classify the boundary disagreement
                inside = [st for st in statements if key in normalise(st.text)]
                kind = "claim_inside_statement" if inside else (
                    "claim_spans_statements" if any(normalise(st.text) in key for st in statements) else "text_differs")
                c[kind] += 1
                example(kind, f"{system}: EXPERTQA {cs!r}\n      PARSED {[st.text for st in inside][:1] or ''}")
                continue
            st = hits[0]
            matched_statements.add(id(st))
            c["text_match"] += 1
            c["text_match_cited"] += has_marker
            if set(st.citations) == cited(cs):
                c["agree"] += 1
                c["agree_cited"] += has_marker
            else:
                example("citations_differ", f"{system}: EXPERTQA {cs!r} {sorted(cited(cs))}\n"
                        f"      PARSED {st.text!r} {st.citations}")
        c["statements_matched"] += len(matched_statements)

    print(f"ExpertQA answers (deduplicated by question+system): {c['answers']}")
    print(f"  rejected (marker names a passage missing from `attribution`): {c['answers_rejected']}"
          f" ({c['claims_in_rejected']} claims)")
    print(f"ExpertQA claims in parsed answers: {c['claims']} ({c['claims_cited']} with markers)")
    print(f"  text agreement:                       {pct(c['text_match'], c['claims'])}")
    print(f"  citation agreement, text-matched:     {pct(c['agree'], c['text_match'])}")
    print(f"  agreement (text and citations):       {pct(c['agree'], c['claims'])}")
    print(f"  agreement, claims with markers only:  {pct(c['agree_cited'], c['claims_cited'])}")
    print(f"  parsed statements matching a claim:   {pct(c['statements_matched'], c['statements'])}")
    print("  text disagreements: "
          f"claim inside a longer parsed statement {c['claim_inside_statement']}, "
          f"claim spanning several parsed statements {c['claim_spans_statements']}, "
          f"other {c['text_differs']}")
    for kind, lines in examples.items():
        print(f"\n--- {kind}")
        for line in lines:
            print("  " + line)
    if args.citecheck:
        citecheck(args.citecheck, args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
