"""Assertions for test suites: fail a test when a cited answer's claims are not supported by its sources.

    from citeaudit.testing import assert_supported
    assert_supported(answer, {"1": passage_one, "2": passage_two}, judge="openai:gpt-4o-mini")

The pytest plugin (`citeaudit.testing.plugin`, loaded automatically once citeaudit is installed) gives
tests a `citeaudit_judge` fixture that records judgments in a store next to the tests and replays them
on the next run, so a suite runs deterministic and offline in CI. `OpenAIStub` is a local stand-in for
an OpenAI-compatible server, to test a pipeline's `openai:` judge offline. See docs/testing.md.
"""

from citeaudit.testing.assertions import ClaimCheck, SupportCheck, assert_supported, check_support
from citeaudit.testing.openai_stub import OpenAIStub, rule_answer

__all__ = ["ClaimCheck", "OpenAIStub", "SupportCheck", "assert_supported", "check_support", "rule_answer"]
