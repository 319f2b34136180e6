"""A system's own "supported?" flag, measured against citeaudit's verdict on the whole answer.

Some assistants say, with each answer, whether they hold it supported by their sources
(`predicted_supported` in the case format). Filice et al., "Generate but Verify" (IJCNLP-AACL 2025),
measure such a flag by its precision, and by its recall over the questions whose retrieved context was
sufficient for a supported answer: a system cannot be faulted for not flagging support its retrieval
made impossible. Here:

* an answer is supported when it makes at least one claim and every claim is a decided `full`; an
  `uncertain` judgment is never support, and an empty answer or an abstention is not supported;
* retrieval is sufficient when the whole ranking holds the documents of every required fact's
  passages (not only the top k: the system read what it retrieved, whatever cut-off a report uses).

Each answer that carries the flag adds 0 or 1 to each figure's numerator and denominator, so the
figures sum over answers like every other measure (docs/metrics.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from citeaudit.records import Judgment
from citeaudit.parse.resolve import ResolvedCase
from citeaudit.metrics import names as N
from citeaudit.metrics.ratio import Ratio

NO_FLAGGED = "no judged answer is flagged supported"
NO_SUPPORTED = "no supported answer whose ranking retrieved every required fact"


def answer_supported(judgments: Sequence[Judgment | None]) -> bool | None:
    """citeaudit's verdict on a whole answer from its claims' judgments: supported when there is a claim
    and every claim is a decided `full`; not when any claim is judged otherwise (uncertain included);
    None when only unjudged claims stand between the answer and support."""
    if not judgments:
        return False  # an empty answer or an abstention supports nothing
    if any(j is not None and not j.supports for j in judgments):
        return False
    if any(j is None for j in judgments):
        return None
    return True


def retrieval_sufficient(rc: ResolvedCase) -> bool:
    """Does the ranking, all of it, hold the documents of every required fact's passages? A case with no
    ranking or no required facts cannot show that its context sufficed."""
    case = rc.case
    if case.ranking is None or not case.facts:
        return False
    retrieved = set(case.ranking)
    return all(rc.passages[p].doc_id in retrieved for fact in case.facts for p in fact.passages)


def flag_ratios(flagged: bool, supported: bool | None, sufficient: bool) -> dict[str, Ratio]:
    """One answer's counts: precision over the answers flagged supported, recall over the supported
    answers whose retrieval was sufficient. An answer whose verdict is open (an unjudged claim) is in
    neither denominator."""
    if supported is None:
        return {N.PREDICTED_SUPPORT_PRECISION: Ratio(0, 0, NO_FLAGGED),
                N.PREDICTED_SUPPORT_RECALL: Ratio(0, 0, NO_SUPPORTED)}
    relevant = supported and sufficient
    return {
        N.PREDICTED_SUPPORT_PRECISION: Ratio(int(flagged and supported), int(flagged), NO_FLAGGED),
        N.PREDICTED_SUPPORT_RECALL: Ratio(int(flagged and relevant), int(relevant), NO_SUPPORTED),
    }
