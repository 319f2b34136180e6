"""Parse a raw cited answer ("... 80 °C [D1]. Eco saves 15 % [D3].") into Statements and Claims.

    from citeaudit.parse import parse_answer
    statements = parse_answer(answer_text, ["D1", "D2", "D3", "D4"])

See ``docs/parsing.md`` for the marker styles, how numeric markers map to passage ids, sentence
splitting, statement kinds and the claim-splitting rules.
"""

from .answer import parse_answer
from .decompose import Decomposer, NoDecomposer, RuleDecomposer
from .text import detect_language

__all__ = ["Decomposer", "NoDecomposer", "RuleDecomposer", "detect_language", "parse_answer"]
