"""Metrics: Ratio, measure names, and the scoring of retrieval, support, citations and coverage."""

from citeaudit.metrics.names import DESCRIPTIONS, parse_at_k
from citeaudit.metrics.ratio import Ratio
from citeaudit.metrics.signature import Signature
from citeaudit.metrics.scoring import (
    AnswerResult, CitationCheck, ClaimResult, Parsing, Report, Settings, StatementResult, citation_checks,
    plan_requests, retrieval_ratios, score_answer, score_cases,
)

__all__ = [
    "DESCRIPTIONS", "AnswerResult", "CitationCheck", "ClaimResult", "Parsing", "Ratio", "Report", "Settings", "Signature",
    "StatementResult", "citation_checks", "parse_at_k", "plan_requests", "retrieval_ratios",
    "score_answer", "score_cases",
]
