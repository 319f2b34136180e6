"""Short Chinese pairs the plain reading leaves silent: decided by the e5 cosine, not by judge-v2.

On a short Chinese pair (one passage of a few sentences, a one-sentence claim) judge-v2's p(full) ranks
supported pairs *below* unsupported ones: its negatives share the claim's names and figures, its
supports say the same thing in other words, and a cross-encoder trained on NLI and cited answers reads
shared words as support. Where the plain reading finds a clause that holds the claim, a rival figure
or a denial, it decides; where it is silent, what is left is mostly "the same thing in other words"
against "another attribute of the same thing", and there the cosine of the e5 embeddings of claim and
passage ranks the pairs far better (AUC 0.78 against judge-v2's 0.46 on the silent short pairs of the
plain sets the rules were built on; docs/model-judge.md, "Short Chinese pairs").

So, on such a pair, p(support) = sigmoid(WEIGHT * cosine + BIAS): `full` when it is at least 0.5; a
`full` the model gave becomes `partial` or `none` below it; `uncertain` within the judge's band. The
guard still checks every `full`. A claim that joins two facts (，并…, ，还…, 以及…) is never made `full`
by the cosine: one embedding of the whole sentence does not see that its second fact is missing.
English pairs are left to judge-v1 and the calibration: there the cosine did not do better than the
model across the sets (the same section).

`benchmarks/short_chinese_pairs.py` fits the two numbers and prints what they do, set by set.
"""

from __future__ import annotations

import math
import re

from citeaudit.judges.base import Request
from citeaudit.judges.calibration import partial_or_none
from citeaudit.records import Judgment

VERSION = "2"
# fitted by benchmarks/short_chinese_pairs.py on the silent short Chinese pairs of the plain sets the
# reading was built on (142 pairs; never on fresh10, fresh11 or fresh14 … fresh19): `full` from a cosine
# of 0.9364
WEIGHT = 50.49
BIAS = -47.28
# a short pair, in English-equivalent characters (a Han character counts 3): the plain sets' passages
# reach 260 (English) and 73 Han characters, their claims 173 and 57
SHORT_PASSAGE = 300
SHORT_CLAIM = 200


def length(text: str) -> int:
    """Characters, a Han character counted as three (about what it says in English letters)."""
    return sum(3 if "\u4e00" <= ch <= "\u9fff" else 1 for ch in text)


def is_short(request: Request) -> bool:
    """One passage and one claim, both short."""
    return (len(request.passages) == 1 and length(request.text) <= SHORT_CLAIM
            and length(request.passages[0].text) <= SHORT_PASSAGE)


# a second fact joined to the first: not 和, which as often joins two nouns of one fact (白醋和清水)
JOINED = re.compile(r"并且|[，,]\s*[并还且]|还可以|还能|以及|[，,]\s*(?:另外|同时)")


def probability(cosine: float) -> float:
    z = WEIGHT * cosine + BIAS
    return 1.0 / (1.0 + math.exp(-min(max(z, -500.0), 500.0)))


def decide(judgment: Judgment, cosine: float, band: float, claim: str = "") -> Judgment:
    """The judgment with its label decided by the cosine (a `full` the model gave becomes `partial` or
    `none`, whichever it scored higher), p(support) replaced, and the explanation saying why. A `claim`
    that joins two facts keeps the model's label where the cosine would make it `full`."""
    scores = judgment.scores or {}
    p = probability(cosine)
    if p >= 0.5 and judgment.label != "full" and JOINED.search(claim):
        return judgment.model_copy(update={"explanation": (judgment.explanation or "") + (
            f"; a short pair the plain reading leaves silent: the e5 cosine {cosine:.3f} would make it full, "
            "but the claim joins two facts, which one embedding of it does not tell apart")})
    label = "full" if p >= 0.5 else judgment.label if judgment.label != "full" else partial_or_none(scores)
    note = (f"; a short pair the plain reading leaves silent, where the model's p(full) does not rank "
            f"pairs: decided by the e5 cosine {cosine:.3f} (p(support)={p:.3f})")
    if label != judgment.label:
        note += f" -> {label}, not {judgment.label}"
    uncertain = abs(p - 0.5) < band
    if uncertain:
        note += f"; uncertain: p(support) is within 0.5 ± {band:g}"
    return judgment.model_copy(update={
        "label": label, "scores": {**scores, "support": round(p, 6), "similarity": round(cosine, 6)},
        "explanation": (judgment.explanation or "") + note, "uncertain": True if uncertain else None})
