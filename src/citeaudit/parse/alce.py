"""Read an answer the way ALCE's reference `eval.py` does (`--conventions alce`).

ALCE (Gao et al., 2023, github.com/princeton-nlp/ALCE) scores citation recall and precision on
sentences of the output's first line; what it counts as a citation differs from citeaudit's parser:

  * only the first line of the stripped output is read (and "<|im_end|>" is removed);
  * a citation is every `[n` in the sentence: `[1][2]` cites 1 and 2, `[1, 2]` cites 1 only (the
    claim then keeps ", 2"), and a repeated marker `[2][3][2]` cites passage 2 twice;
  * a sentence citing a passage past the last one is unsupported, and its citations are left out of
    precision (checked before the cap); `[0]` reads as the last passage (Python's index -1, as ALCE);
  * at most the first three citations of a sentence are kept;
  * every sentence counts, greetings and "I don't know" included;
  * the claim is the sentence with its markers removed as ALCE removes them.

Sentences come from citeaudit's splitter (pysbd), where ALCE uses NLTK's Punkt: the one place where
the two can still disagree, on a sentence boundary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from citeaudit.records import Span, Statement
from citeaudit.text import sentence_spans

AT_MOST_CITATIONS = 3  # eval.py --at_most_citations default
VERSION = 1
CLAIMS_SIGNATURE = "sentence@1"  # one claim per sentence: nothing is split


def parser_signature() -> str:
    """ALCE's reading, with the pysbd release that splits its sentences."""
    import pysbd

    return f"alce@{VERSION}+pysbd-{pysbd.__version__}"
_REF = re.compile(r"\[\d+")


def first_line(output: str) -> tuple[str, int]:
    """The part of `output` ALCE reads, and where it starts in `output`."""
    lead = len(output) - len(output.lstrip())
    return output.strip().split("\n")[0].replace("<|im_end|>", ""), lead


def remove_citations(sentence: str) -> str:
    """ALCE's marker removal: " [n" and "[n" go, then " |" and every "]"."""
    return re.sub(r"\[\d+", "", re.sub(r" \[\d+", "", sentence)).replace(" |", "").replace("]", "")


def sentence_refs(sentence: str, n_passages: int) -> tuple[list[int], bool]:
    """The 0-based passages a sentence cites, in order with repeats, capped; and whether a citation
    fell past the last passage (then the list is empty: the sentence cannot be supported)."""
    refs = [int(m.group()[1:]) - 1 for m in _REF.finditer(sentence)]
    if any(r >= n_passages for r in refs):
        return [], True
    return refs[:AT_MOST_CITATIONS], False


def parse_alce(text: str, passage_ids: Sequence[str]) -> list[Statement]:
    """Statements as ALCE scores them: one claim per sentence of the first line, every sentence a
    claim. Out-of-range citations are kept on `invalid_citations` as written ("[9")."""
    line, lead = first_line(text)
    statements = []
    for start, end in sentence_spans(line):
        sentence = line[start:end]
        refs, out_of_range = sentence_refs(sentence, len(passage_ids))
        invalid = [m.group() for m in _REF.finditer(sentence)] if out_of_range else []
        claim = remove_citations(sentence).strip() or sentence  # a bare "[1]" keeps its text
        statements.append(Statement(text=claim, citations=[passage_ids[r] for r in refs], kind="claim",
                                    offsets=Span(start=lead + start, end=lead + end), invalid_citations=invalid))
    return statements
