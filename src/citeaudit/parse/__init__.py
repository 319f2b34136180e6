"""Parse a raw cited answer ("... 80 °C [D1]. Eco saves 15 % [D3].") into Statements and Claims.

    from citeaudit.parse import parse_answer
    statements = parse_answer(answer_text, ["D1", "D2", "D3", "D4"])

See ``docs/parsing.md`` for the marker styles, how numeric markers map to passage ids, sentence
splitting, statement kinds and the claim-splitting rules.
"""

from citeaudit.parse.answer import parse_answer
from citeaudit.parse.decompose import Decomposer, NoDecomposer, RuleDecomposer
from citeaudit.parse.text import detect_language

# Bump when a rule of sentence splitting, marker reading or statement kinds changes.
PARSER_VERSION = "1"


def parser_signature() -> str:
    """The parser's part of a signature: its own version and pysbd's, which splits the sentences."""
    import pysbd

    return f"citeaudit-parse@{PARSER_VERSION}+pysbd-{pysbd.__version__}"


def claim_splitter_signature(decomposer: Decomposer | None = None) -> str:
    """The claim splitter's part of a signature (a custom decomposer may name itself with `signature`)."""
    decomposer = decomposer if decomposer is not None else RuleDecomposer()
    return getattr(decomposer, "signature", type(decomposer).__name__)


__all__ = [
    "PARSER_VERSION", "Decomposer", "NoDecomposer", "RuleDecomposer", "claim_splitter_signature",
    "detect_language", "parse_answer", "parser_signature",
]
