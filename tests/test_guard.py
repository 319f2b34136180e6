"""The qualifier guard (citeaudit.judges.guard): when it must fire, and when it must not."""

from __future__ import annotations

import pytest

from citeaudit.judges.guard import GuardFinding, check, quantities

# The seed pair (examples/data/p7_archive.json, passage D3) and its Chinese version.
D3 = ("Eco mode pilot report. The pilot observed P7 machines in Eco mode for 30 days. Downtime fell by 15% "
      "compared with standard mode. The report gives no annual energy estimate and does not state how many "
      "machines took part.")
D3_ZH = ("Eco模式试点报告。试点对Eco模式下的P7机器观察了30天。与标准模式相比，停机时间减少了15%。"
         "报告没有给出年度能耗估计，也没有说明参与试点的机器数量。")

FIRES = [
    # (claim, evidence, kind, words the reason must name)
    ("Eco reduces annual energy by 15%.", D3, "attachment", ["15%", "energy", "downtime"]),
    ("Eco reduces annual energy by 15%.", "Over 30 days, downtime fell by 15% in Eco mode.", "attachment", ["energy"]),
    ("Eco将年度能耗降低15%。", D3_ZH, "attachment", ["15%", "能耗"]),
    ("Downtime fell by 20%.", D3, "number", ["20%"]),
    ("The pilot ran for 60 days.", D3, "number", ["60 days"]),
    ("营收增长了15%。", "营收增长了百分之二十。", "number", ["15%"]),
    ("Revenue grew 15% in 2021.", "In 2020 the company saw revenue rise by 15 percent.", "date", ["2021"]),
    ("It was released in March 2019.", "It was released in May 2019.", "date", ["March"]),
    ("Python 3.11 added this.", "This arrived in Python 3.12.", "number", ["3.11"]),
    ("The library requires version 2.4.1.", "The library requires version 2.4.0 or later.", "number", ["2.4.1"]),
    ("The tower is 300 m tall.", "The tower is 300 feet tall.", "unit", ["300 m"]),
    ("The drug did not reduce mortality.", "The drug reduced mortality in the trial.", "negation", ["not"]),
    ("该药物没有降低死亡率。", "该药物降低了死亡率。", "negation", ["没"]),
]

QUIET = [
    # paraphrased numbers, spacing of units, rounding, scale words, Chinese numerals: no mismatch
    ("It reported reduced downtime of 15%.", D3),
    ("The pilot ran for thirty days.", D3),
    ("The trial lasted 30 days.", "The trial lasted thirty days."),
    ("The reactor runs at 80 °C.", "The reactor runs at 80°C."),
    ("The reactor runs at 80°C.", "Its operating temperature is 80 ℃ at the core."),
    ("Revenue grew 15% in 2020.", "In 2020 the company saw revenue rise by 15 percent."),
    ("Sales rose 15%.", "Sales rose 14.8% in 2019."),
    ("The city has 1.5 million residents.", "About 1,500,000 people live in the city."),
    ("The city has 1,500,000 residents.", "The city's residents number 1.5 million."),
    ("营收增长了百分之十五。", "营收增长15%。"),
    ("试点观察了三十天。", D3_ZH),
    ("停机时间减少了15%。", "与标准模式相比，停机时间减少了１５％。"),  # full-width digits and percent
    ("Eco试点报告停机时间减少15%。", D3_ZH),
    ("The report does not give an energy estimate.", D3),
    ("Standard items may be returned within 30 days of delivery.",
     "Standard items can be returned up to 30 days after delivery."),
    ("Refunds are paid within five business days.",
     "Approved refunds go back to the original payment method within 5 business days."),
    ("A receipt is required to return a standard item.", "A receipt is required for standard-item returns."),
    ("The company was founded by two brothers.", "Two brothers founded the company in a garage."),
]


@pytest.mark.parametrize("claim,evidence,kind,words", FIRES)
def test_guard_fires_and_names_the_mismatch(claim, evidence, kind, words):
    finding = check(claim, evidence)
    assert finding is not None, claim
    assert finding.kind == kind
    for word in words:
        assert word in finding.reason, (word, finding.reason)


@pytest.mark.parametrize("claim,evidence", QUIET)
def test_guard_does_not_fire(claim, evidence):
    assert check(claim, evidence) is None


def test_attachment_can_be_switched_off():
    assert check("Eco reduces annual energy by 15%.", D3).kind == "attachment"
    assert check("Eco reduces annual energy by 15%.", D3, attachment=False) is None


@pytest.mark.parametrize("text,value,unit", [
    ("80 °C", 80, "°c"), ("80°C", 80, "°c"), ("thirty days", 30, "d"), ("1.5 million", 1_500_000, None),
    ("$5 million", 5_000_000, "usd"), ("百分之十五", 15, "%"), ("１５％", 15, "%"), ("三千五百万", 35_000_000, None),
    ("15 percent", 15, "%"), ("twenty-five", 25, None),
])
def test_quantities(text, value, unit):
    (q,) = quantities(text)
    assert q.value == value and q.unit == unit


@pytest.mark.parametrize("claim,evidence", [
    ("Cats are mammals.", ""),
    ("Cats are mammals.", "Dogs bark at the postman."),
    ("The report covers Eco mode.", "The cafeteria opens early on Mondays."),
    ("猫是哺乳动物。", ""),
    ("猫是哺乳动物。", "狗会叫。"),
])
def test_guard_is_quiet_without_qualifiers(claim, evidence):
    """No number, date or negation in the claim: whether the evidence is on topic is not the guard's question."""
    assert check(claim, evidence) is None


ODD = [
    # (name, claim, evidence, the finding's kind or None for no finding)
    ("both empty", "", "", None),
    ("empty claim", "", D3, None),
    ("only punctuation", "...", "!!!", None),
    ("punctuation claim", "?!", D3, None),
    ("invisible characters", "\x00\u200b", "\ufeff", None),
    ("beyond a float", "1" + "0" * 400 + " units", "1" + "0" * 400 + " units", None),
    ("5000 digits", "9" * 5_000 + "%", "5%", "number"),
    ("10000-letter word", "x" * 10_000 + " 5%", "5%", "attachment"),  # the evidence's 5% is attached to nothing
    ("mixed scripts", "Eco模式 reduced downtime by 15%.", D3_ZH, None),
    ("mixed scripts, other number", "Eco模式 reduced downtime by 20%.", D3_ZH, "number"),
    ("cyrillic", "Привет 15%", "Привет 15%", None),
]


@pytest.mark.parametrize("claim,evidence,kind", [pytest.param(*case[1:], id=case[0]) for case in ODD])
def test_odd_inputs_give_none_or_a_finding(claim, evidence, kind):
    finding = check(claim, evidence)
    assert finding is None or isinstance(finding, GuardFinding)
    assert (None if finding is None else finding.kind) == kind, finding


def test_different_huge_numbers_are_a_mismatch():
    """Beyond a float's range every number reads as infinity; the digits as written still tell them apart."""
    assert check("1" + "0" * 400, "2" + "0" * 400).kind == "number"
    assert check("It is " + "1" + "0" * 400 + ".", "It is " + "1" + "0" * 400 + " exactly.") is None


def test_a_guard_that_cannot_run_raises_naming_the_claim(monkeypatch):
    """A broken check is a JudgeError, never a silent "nothing found" under a guard=on signature."""
    from citeaudit.errors import JudgeError
    from citeaudit.judges import guard

    def broken(text: str):
        raise RuntimeError("boom")

    monkeypatch.setattr(guard, "quantities", broken)
    with pytest.raises(JudgeError, match=r"qualifier guard failed on claim 'Eco saves 15%.': RuntimeError\('boom'\)"):
        check("Eco saves 15%.", D3)
