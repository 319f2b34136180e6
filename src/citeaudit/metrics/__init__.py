"""Metrics: Ratio, measure names, and the scoring of retrieval, support, citations and coverage."""

from .names import DESCRIPTIONS, parse_at_k
from .ratio import Ratio
from .scoring import (
    AnswerResult, CitationCheck, ClaimResult, Report, Settings, StatementResult, citation_checks,
    plan_requests, retrieval_ratios, score_answer, score_cases,
)

__all__ = [
    "DESCRIPTIONS", "AnswerResult", "CitationCheck", "ClaimResult", "Ratio", "Report", "Settings",
    "StatementResult", "citation_checks", "parse_at_k", "plan_requests", "retrieval_ratios",
    "score_answer", "score_cases",
]
