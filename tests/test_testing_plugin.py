"""citeaudit.testing: assert_supported, and the pytest plugin that records judgments and replays them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from citeaudit.errors import MissingJudgment
from citeaudit.judges import JudgmentStore
from citeaudit.records import Evidence, Judgment
from citeaudit.testing import assert_supported, check_support
from citeaudit.testing import OpenAIStub

pytest_plugins = ["pytester"]

DOCS = Path(__file__).resolve().parents[1] / "docs" / "testing.md"

SOURCES = {
    "1": "The kettle's thermostat limits the water temperature to 80 degrees Celsius.",
    "2": "Eco mode reduced standby downtime by 15 percent over 30 days.",
}


@pytest.fixture(autouse=True)
def _no_real_endpoint(monkeypatch):
    # Nothing here may reach a real endpoint or send a real key.
    for name in ("CITEAUDIT_OPENAI_API_KEY", "OPENAI_API_KEY", "CITEAUDIT_OPENAI_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


class ScriptedJudge:
    """A local judge: the label a claim's keyword names ("partly" -> partial, ...), else full; counts calls."""

    name = "scripted"
    signature = "scripted@1"

    def __init__(self, uncertain: bool = False):
        self.calls = 0
        self.uncertain = uncertain

    def judge(self, text, passages):
        self.calls += 1
        label = next((lab for word, lab in (("partly", "partial"), ("never", "contradicts"), ("moon", "none"))
                      if word in text), "full")
        return Judgment(label=label, judge=self.signature, explanation=f"the keyword gave {label}",
                        evidence=Evidence(passage=passages[0].id, start=4, end=24),
                        uncertain=self.uncertain or None)


# --- assert_supported ---------------------------------------------------------------------------


def test_a_supported_answer_passes_and_returns_every_claims_judgment():
    judge = ScriptedJudge()
    check = assert_supported("The limit is 80 degrees [1]. Eco mode cut downtime by 15 percent [2].", SOURCES,
                             judge=judge)
    assert [(c.text, c.label, c.citations) for c in check.claims] == [
        ("The limit is 80 degrees.", "full", ("1",)), ("Eco mode cut downtime by 15 percent.", "full", ("2",))]
    assert (check.support.numerator, check.support.denominator) == (2, 2)
    assert judge.calls == 2


def test_the_failure_lists_each_unsupported_claim_with_label_excerpt_and_reason():
    answer = "The limit is 80 degrees [1]. Eco mode partly saves energy [2]. The moon is made of cheese."
    with pytest.raises(AssertionError) as caught:
        assert_supported(answer, SOURCES, judge=ScriptedJudge())
    message = str(caught.value)
    assert message.splitlines()[0] == ("2 of 3 claims not supported by their cited sources: support 1/3 (33.3%), "
                                       "min_support 100.0% (judge scripted@1)")
    assert "- claim 2: 'Eco mode partly saves energy.'\n    label:  partial\n" in message
    assert '    cited:  [2] "…mode reduced standby…"' in message  # the judge's evidence span
    assert "    reason: the keyword gave partial" in message
    assert "- claim 3: 'The moon is made of cheese.'\n    label:  none\n    cited:  nothing" in message
    assert "claim 1" not in message  # supported claims are not listed


@pytest.mark.parametrize(("min_support", "passes"), [(0.0, True), (0.5, True), (0.51, False), (1.0, False)])
def test_min_support_is_the_share_of_claims_that_must_be_supported(min_support, passes):
    answer = "The limit is 80 degrees [1]. Eco mode partly saves energy [2]."
    check = check_support(answer, SOURCES, judge=ScriptedJudge(), min_support=min_support)
    assert check.passed is passes


def test_partial_contradicts_and_uncertain_never_count_as_support():
    answer = "Eco mode never cuts downtime [2]."
    assert not check_support(answer, SOURCES, judge=ScriptedJudge()).passed
    uncertain = check_support("The limit is 80 degrees [1].", SOURCES, judge=ScriptedJudge(uncertain=True))
    assert not uncertain.passed
    assert "label:  uncertain\n" in uncertain.explain()
    assert "reason: the judge is not sure (its best guess is full)" in uncertain.explain()


def test_an_answer_without_claims_fails_instead_of_passing_vacuously():
    with pytest.raises(AssertionError, match="the answer makes no claim"):
        assert_supported("", SOURCES, judge=ScriptedJudge())


def test_sources_as_a_list_are_numbered_from_one_and_a_store_replays(tmp_path):
    first = ScriptedJudge()
    answer = "Eco mode cut downtime by 15 percent [2]."
    assert_supported(answer, list(SOURCES.values()), judge=first, store=tmp_path / "s.sqlite")
    again = ScriptedJudge()
    assert_supported(answer, list(SOURCES.values()), judge=again, store=tmp_path / "s.sqlite")
    assert (first.calls, again.calls) == (1, 0)
    assert len(JudgmentStore(tmp_path / "s.sqlite")) == 1


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_min_support_outside_zero_to_one_is_refused(bad):
    with pytest.raises(ValueError, match="min_support"):
        assert_supported("The limit is 80 degrees [1].", SOURCES, judge=ScriptedJudge(), min_support=bad)


def test_an_unknown_marker_is_a_located_input_error():
    from citeaudit.errors import InputError

    with pytest.raises(InputError, match=r"character 24: citation marker '\[9\]': unknown passage id '9'"):
        assert_supported("The limit is 80 degrees [9].", SOURCES, judge=ScriptedJudge())


# --- the pytest plugin: judge once, replay offline ----------------------------------------------

TINY_SUITE = """
from citeaudit.judges.remote import OpenAIJudge
from citeaudit.testing import assert_supported

SOURCES = {sources!r}
JUDGE = OpenAIJudge("stub-model", base_url={url!r}, max_retries=0, timeout=5)


def test_supported(citeaudit_judge):
    assert_supported("The thermostat limits the water temperature to 80 degrees [1].", SOURCES,
                     judge=citeaudit_judge(JUDGE))


def test_unsupported(citeaudit_judge):
    assert_supported("The thermostat limits the water temperature to 80 degrees [1]. "
                     "Eco mode partly saves energy every year [2].", SOURCES, judge=citeaudit_judge(JUDGE))
"""

DIFF = re.compile(r"E\s+AssertionError: 1 of 2 claims not supported.*?\n"
                  r"E\s+- claim 2: 'Eco mode partly saves energy every year\.'\n"
                  r"E\s+label:  partial\n"
                  r'E\s+cited:  \[2\] "…mode reduced standby downtime…"\n'
                  r"E\s+reason: stub rule gave partial\.", re.DOTALL)


def test_the_plugin_records_judgments_then_replays_them_offline(pytester):
    with OpenAIStub() as stub:
        pytester.makepyfile(test_tiny=TINY_SUITE.format(sources=SOURCES, url=stub.url))
        first = pytester.runpytest("-p", "no:cacheprovider")
        first.assert_outcomes(passed=1, failed=1)
        assert stub.count == 2  # two distinct claims; the repeated one came from the store
    assert DIFF.search(first.stdout.str())
    store = pytester.path / "citeaudit-judgments.sqlite"
    assert len(JudgmentStore(store, create=False)) == 2

    # The stub is gone: any call to the judge would fail. Replay-only gives the same outcome and diff.
    second = pytester.runpytest("-p", "no:cacheprovider", "--citeaudit-replay")
    second.assert_outcomes(passed=1, failed=1)
    assert DIFF.search(second.stdout.str())
    assert stub.count == 2


def test_replay_fails_on_a_judgment_missing_from_the_store(pytester):
    pytester.makepyfile(test_tiny=TINY_SUITE.format(sources=SOURCES, url="http://127.0.0.1:9/v1"))
    store = pytester.path / "elsewhere.sqlite"
    JudgmentStore(store).close()
    result = pytester.runpytest("-p", "no:cacheprovider", "--citeaudit-replay", f"--citeaudit-store={store}")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([f"*{MissingJudgment.__name__}: no recorded judgment by openai:stub-model*"])


def test_replay_without_a_store_says_how_to_record_one(pytester):
    pytester.makepyfile(test_tiny=TINY_SUITE.format(sources=SOURCES, url="http://127.0.0.1:9/v1"))
    result = pytester.runpytest("-p", "no:cacheprovider", "--citeaudit-replay")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*no judgment store at*run the tests once without --citeaudit-replay*"])


def test_a_suite_that_never_asks_for_a_judge_is_untouched(pytester):
    pytester.makepyfile(test_plain="def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--citeaudit-replay")
    result.assert_outcomes(passed=1)
    assert not list(pytester.path.glob("*.sqlite"))


def test_the_example_in_the_docs_runs(pytester, monkeypatch):
    code = re.search(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL).group(1)
    assert len(code.strip().splitlines()) <= 12
    with OpenAIStub() as stub:
        monkeypatch.setenv("CITEAUDIT_OPENAI_BASE_URL", stub.url)
        pytester.makepyfile(test_answers=code)
        result = pytester.runpytest("-p", "no:cacheprovider")
        result.assert_outcomes(passed=1)
        assert stub.count >= 1
    # The same endpoint (it is part of the judge's signature), now unreachable: replayed from the store.
    pytester.runpytest("-p", "no:cacheprovider", "--citeaudit-replay").assert_outcomes(passed=1)


def test_the_stand_in_server_example_in_the_docs_runs():
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    code = next(b for b in blocks if "with OpenAIStub() as server" in b)
    namespace: dict = {}
    exec(compile(code, str(DOCS), "exec"), namespace)  # its own asserts check what it says
    assert namespace["server"].count == 2
