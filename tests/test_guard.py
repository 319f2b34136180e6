"""The qualifier guard (citeaudit.judges.guard): when it must fire, and when it must not."""

from __future__ import annotations

import pytest

from citeaudit.errors import JudgeError
from citeaudit.judges.guard import RULES, RULES_ZH, TRIED_RULES, VERSION, GuardFinding, check, quantities

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
    ("Revenue grew 15% in 2021.", "In 2020 the company saw revenue rise by 15 percent.", "year", ["2021"]),
    ("It was released in March 2019.", "It was released in May 2019.", "month", ["March"]),
    ("Python 3.11 added this.", "This arrived in Python 3.12.", "version", ["3.11"]),
    ("Python 3.11 added this.", "This arrived in a recent release.", "version", ["3.11"]),
    ("The library requires version 2.4.1.", "The library requires version 2.4.0 or later.", "version", ["2.4.1"]),
    ("The tower is 300 m tall.", "The tower is 300 feet tall.", "unit", ["300 m", "ft"]),
    ("The drug did not reduce mortality.", "The drug reduced mortality in the trial.", "negation", ["not"]),
    ("该药物没有降低死亡率。", "该药物降低了死亡率。", "negation", ["没"]),
    # a name with another number in the evidence is another thing
    ("Windows 10 added virtual desktops.", "Windows 11 added virtual desktops.", "name", ["Windows 10", "Windows 11"]),
    ("World War 2 ended in 1945.", "World War I ended in 1918.", "name", ["War 2", "War I"]),
    # a count the evidence gives otherwise for the same noun, and a hyphenated kind the evidence numbers otherwise
    ("Arsenal won four league titles.", "Arsenal won three league titles between 1989 and 2005.", "count",
     ["four", "title", "three"]),
    ("Two-point perspective uses two vanishing points.", "Three-point perspective adds a third vanishing point.",
     "count", ["Two-point", "Three-point"]),
    # the day of a date, and a decade none of whose years the evidence has
    ("The bridge opened on May 12, 1937.", "The bridge opened to traffic on May 28, 1937.", "day", ["12"]),
    ("The band formed in the 1960s.", "The band formed in Liverpool in 1972.", "year", ["1960s"]),
    # a negation with a clause of its own after "but" is still asserted
    ("The drug did not reduce mortality, but it shortened hospital stays.",
     "The drug reduced mortality and shortened hospital stays.", "negation", ["not"]),
    # a year, whatever name it follows: "NeurIPS 2017" is one edition of the conference
    ("The cover of the NeurIPS 2017 proceedings was blue.", "The NeurIPS 2018 proceedings had a blue cover.",
     "year", ["2017"]),
    ("清华大学在2011年进入全球50强。", "清华大学在2012年进入全球50强。", "year", ["2011"]),
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

# Misfires of the guard before its rules were split (each fired, with the kind in the comment): a claim the
# evidence supports, which the guard must now pass.
FIXED_MISFIRES = [
    # counted nouns written as words, when the claim or the evidence lists the items counted (number)
    ("The system consists of three components: the sensor, the controller, and the actuator.",
     "The system has a sensor, a controller and an actuator."),
    ("The model has three parts: antecedent, the events before a behaviour; behaviour, the response; and "
     "consequence, what follows.", "Antecedents come before a behaviour, and consequences follow it."),
    ("Granite is composed of four main minerals: quartz, feldspar, mica, and amphiboles.",
     "Granite is a coarse-grained rock of quartz, feldspar, mica and amphibole."),
    ("The framework has three layers.", "The framework's layers are: data, logic and presentation."),
    ("The framework has three layers.", "The framework is built from layers:\n- data\n- logic\n- presentation"),
    # names that contain a number (number)
    ("Passage 3 notes that the river floods every spring.", "The river floods every spring."),
    ("Article 5 of the treaty obliges members to help one another.",
     "Under the treaty, members must assist an ally that is attacked."),
    ("Section 2 covers the appeals process.", "The appeals process is covered in this part."),
    ("World War 2 ended in 1945.", "World War II ended in 1945."),
    ("Windows 10 added virtual desktops.", "Windows added virtual desktops in its latest release."),
    ("The iPhone 12 has a ceramic shield.", "Apple's iPhone has a Ceramic Shield front cover."),
    ("An HbA1c of 6.5% or higher is diagnostic for diabetes mellitus type 2.",
     "An HbA1c of 6.5% or higher is the threshold for diagnosing diabetes."),
    ("Rule 19 covers conduct in restricted visibility.",  # the evidence numbers a series, not this rule
     "Rule 4 applies in any visibility; Rule 5 asks for a look-out; a third rule covers restricted visibility."),
    # citation markers (number)
    ("The party was founded in 1848 [1][2].", "The party was founded in 1848."),
    ("The party was founded in 1848 [3, 4].", "The party was founded in 1848."),
    # contrast is not negation (negation)
    ("Exercise not only improves mood but also sleep.", "Exercise improves mood and sleep."),
    ("Domestic violence doesn't just affect the victim.", "Domestic violence affects the victim and the witnesses."),
    # ordinals, year ranges, digits glued to a word (number, year)
    ("Potatoes reached Spain in the 16th century.", "Potatoes reached Spain in the sixteenth century."),
    ("Arsenal were promoted in the 1904-1905 season.", "Arsenal were promoted at the end of the 1904–05 season."),
    ("The limbs score 2 for muscle tone.", "Muscle tone:0 – Limp1 – Some flexing2 – Active motion"),
    # a unit the evidence leaves unsaid, and 年 after a year (unit)
    ("The centre works with young 10-24 year olds.", "The centre works with young people aged 10-24."),
    ("清华大学在2011年进入全球50强。", "在2011 QS排名中，清华大学进入全球50强。"),
]


# Misfires of guard version 2 on ExpertQA answers and train pairs: each fired (with the kind in the comment) on a
# claim its evidence supports, and must not now.
NARROWED = [
    # "one" as a pronoun or a determiner is no number: "one and" was read as the number 1 (number)
    ("Pure liquids and solids do not affect the equilibrium constant because their activities are defined as "
     "one and have no impact on the equilibrium [5].",
     "The activity of a pure liquid or solid is taken as unity, so pure liquids and solids do not appear in the "
     "expression for the equilibrium constant."),
    ("Each of the enzymes is defined as one and only one catalytic unit.",
     "Every enzyme counts as a single catalytic unit."),
    # a number word joined to a word by a hyphen names a kind of thing, it counts nothing (count)
    ("Study the basics of linear perspective: learn about one-point, two-point, and three-point perspective, "
     "and the horizon line and vanishing points [2].",
     "Perspective drawing is explained by the number of vanishing points placed on the horizon line."),
    ("She completed a two-year residency in surgery.", "She completed her surgical residency at the clinic."),
    # a count the evidence does not repeat: it lists or names what is counted (count)
    ("By analyzing these three components, educators and therapists can identify factors contributing to "
     "problematic behaviors [3].",
     "The ABC model records the antecedent, the behavior and the consequence; analyzing them helps educators "
     "identify what contributes to problem behavior."),
    ("The waves from the merging of two black holes can be detected.",
     "Merging black holes release gravitational waves that detectors on Earth can pick up."),
    # a negation that a contrast takes back, a limiter, a condition, a word that only looks negated (negation)
    ("However, it is important to note that silica fume is not a replacement for cement but rather an "
     "additive [11].",
     "Silica fume is used as an additive to Portland cement in high-performance concrete."),
    ("Childhood experiences are not the sole determinants of psychopathology.",
     "Genetic predisposition and biological factors, along with childhood experiences, shape psychopathology."),
    ("Infant formula is not necessarily promoted to pregnant women.",
     "Some formula brands are marketed to pregnant women."),
    ("If Charles II had not returned from France, the monarchy might have ended.",
     "The return of Charles II from France restored the monarchy."),
    ("在顺境中，我们应该不断学习和进步。", "在顺境中，我们应该抓住机会学习和进步。"),  # 不断: "constantly"
    # what the evidence says of a sum is in its whole sentence, the film's name too (attachment)
    ("In its opening weekend, Kung Fu Panda made $60.2 million.",
     "Kung Fu Panda opened at number one at the box office, grossing $60.2 million in its opening weekend."),
    # a decade holds its years; thousands set off by spaces; a bound or a round figure the evidence meets (number)
    ("L. Ron Hubbard died in the 1980s.", "Hubbard died in January 1986 at his ranch."),
    ("The census counted 53879 Romani people.", "The 2002 census counted 53 879 people as Romani."),
    ("The film grossed approximately $17.9 million.", "The film grossed $17.5 million."),
    ("The battery lasts over 10 hours.", "The battery lasts up to 12 hours."),
    ("The franchise is regulated in over thirty countries.", "Franchising is regulated in 35 countries."),
]


@pytest.mark.parametrize("claim,evidence", NARROWED)
def test_narrowed_rules_pass_what_the_evidence_supports(claim, evidence):
    assert check(claim, evidence) is None
    assert check(claim, evidence, rules=RULES + TRIED_RULES) is None


def test_the_guard_version_names_these_rules():
    """Stored judgments of version 3 (Chinese numerals inside words read as numbers, 份额 another measure
    than 占有率, every rule on Chinese claims) are not reused: the model judge signs `guard=on@4`
    (tests/test_judge_spec.py)."""
    assert VERSION == 4


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


@pytest.mark.parametrize("claim,evidence", FIXED_MISFIRES)
def test_former_misfires_pass(claim, evidence):
    assert check(claim, evidence) is None
    assert check(claim, evidence, rules=RULES + TRIED_RULES) is None


@pytest.mark.parametrize("evidence,kind", [
    ("The system's components are a sensor, a controller and an actuator.", None),
    ("The system's components are a sensor and a controller.", None),  # a list is left to the model
    ("The lab bought four sensors.", None),  # another noun
    ("The system has 3 components.", None),
    ("The system has four main components.", "count"),
    ("The system has four components; earlier designs had three components.", None),  # the claim's count too
])
def test_a_count_is_a_mismatch_only_against_another_count_of_the_same_noun(evidence, kind):
    finding = check("The system consists of three components.", evidence)
    assert (None if finding is None else finding.kind) == kind, finding
    # the claim's own list of as many items: the items are what the evidence must support
    assert check("The system has three components: A, B and C.", evidence) is None


@pytest.mark.parametrize("claim,evidence,rule", [
    ("The deal could allow the UK to benefit from lower tariffs.",
     "Outside the bloc, the UK will not be able to benefit from lower tariffs.", "negated-in-evidence"),
    ("The law allows a man to marry up to four wives.", "Islamic law allows a man to marry up to four wives.",
     "scope"),
    ("Downtime fell by 20%.", D3, "number"),
    ("The pilot ran for 60 days.", D3, "number"),
    ("营收增长了15%。", "营收增长了百分之二十。", "number"),
    ("A pig has 38 chromosomes in each of its cells.", "Pigs have 19 pairs of chromosomes.", "number"),
    ("The battery lasts over 10 hours.", "The battery lasts 8 hours.", "number"),  # a bound it does not meet
])
def test_tried_rules_catch_their_cases_only_when_asked(claim, evidence, rule):
    """Measured on dev, train and a held-out source and left off by default (docs/model-judge.md): they still
    run when named."""
    assert rule in TRIED_RULES and rule not in RULES
    assert check(claim, evidence) is None
    assert check(claim, evidence, rules={rule}).kind == rule


@pytest.mark.parametrize("claim,evidence", [
    ("If a risk exists, both vessels should act.", "Where no risk does not exist, nothing is required."),  # conditional
    ("Gold is resistant to chemical reactions.", "Gold is not a chemical that reacts easily."),  # a noun phrase
    ("Obama was the first black president.", "It was not Barack Obama who said so. Obama was the first."),
    ("The tests passed on every run.", "The tests passed on every run; the linter did not pass."),  # also asserted
])
def test_negated_in_evidence_stays_quiet(claim, evidence):
    assert check(claim, evidence, rules={"negated-in-evidence"}) is None


@pytest.mark.parametrize("claim,evidence", [
    ("The law allows it.", "The law allows it; Islamic law allows it too."),  # unqualified too
    ("The Islamic law allows it.", "Islamic law allows it."),  # the claim has the qualifier
    ("The law allows it.", "Comprehensive law allows it."),  # not a proper adjective
])
def test_scope_stays_quiet(claim, evidence):
    assert check(claim, evidence, rules={"scope"}) is None


def test_each_rule_runs_alone():
    """`rules` picks the rules: what one rule finds, the others leave alone."""
    claim, evidence = "Revenue did not grow 15% in 2021.", "In 2020 revenue grew 15 percent."
    assert check(claim, evidence).kind == "year"
    assert check("Revenue grew 20%.", evidence) is None  # `number` is a tried rule
    assert check("Revenue grew 20%.", evidence, rules={"number"}).kind == "number"
    assert check(claim, evidence, rules={"negation"}).kind == "negation"
    assert check(claim, evidence, rules={"number", "unit", "attachment"}) is None
    assert check(claim, evidence, rules=()) is None


def test_an_unknown_rule_is_an_error():
    with pytest.raises(JudgeError, match="unknown qualifier guard rule.*'?dates'?"):
        check("In 2021.", "In 2020.", rules={"dates"})


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


@pytest.mark.parametrize("text,values", [
    ("their activities are defined as one and have no impact", []),  # "and" joins number words only
    ("one of the three", [3]), ("no one knows", []), ("one-point perspective", []),
    ("one hundred and five", [105]), ("two thousand and twenty", [2020]),
])
def test_one_is_a_number_only_in_a_number(text, values):
    assert [q.value for q in quantities(text)] == values


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
    finding = check(claim, evidence, rules={*RULES, "number"})
    assert finding is None or isinstance(finding, GuardFinding)
    assert (None if finding is None else finding.kind) == kind, finding


def test_different_huge_numbers_are_a_mismatch():
    """Beyond a float's range every number reads as infinity; the digits as written still tell them apart."""
    assert check("1" + "0" * 400, "2" + "0" * 400, rules={"number"}).kind == "number"
    assert check("It is " + "1" + "0" * 400 + ".", "It is " + "1" + "0" * 400 + " exactly.", rules={"number"}) is None


def test_a_guard_that_cannot_run_raises_naming_the_claim(monkeypatch):
    """A broken check is a JudgeError, never a silent "nothing found" under a guard=on signature."""
    from citeaudit.errors import JudgeError
    from citeaudit.judges import guard

    def broken(text: str):
        raise RuntimeError("boom")

    monkeypatch.setattr(guard, "quantities", broken)
    with pytest.raises(JudgeError, match=r"qualifier guard failed on claim 'Eco saves 15%.': RuntimeError\('boom'\)"):
        check("Eco saves 15%.", D3)


# The seed's answer A, claim c5, against the passage it cites (examples/data/p7_archive.json, D4).
D4 = "Product catalogue. The P7 offers an Eco operating mode."


@pytest.mark.parametrize("claim,evidence,kind", [
    # a number word in the years' range is a number, never a year (P7 answer A, c5)
    ("The pilot was validated on a thousand machines.", D4, "number"),
    ("Two thousand users signed up.", "Three hundred users signed up.", "number"),
    # so is a scaled number in digits (version 2 read "1.6 thousand" as the year 1600)
    ("The album has sold over 1.6 thousand copies.", "The album has sold 1.6 million copies.", "number"),
    # and a figure with a thousands comma (version 2 read "1,500" as a year)
    ("The museum holds 1,500 paintings.", "The museum holds 1,600 paintings.", "number"),
    ("The museum holds 1,500 paintings.", "The museum holds 1500 paintings.", None),
    ("The pilot was validated on a thousand machines.", "The pilot ran on 1,000 machines.", None),
    # years in numerals stay years, in digits and in Chinese numerals
    ("The bridge opened in 1999.", "The bridge opened in 2001.", "year"),
    ("清华大学在二〇一一年进入全球50强。", "在2012 QS排名中，清华大学进入全球50强。", "year"),
])
def test_a_year_is_written_in_numerals(claim, evidence, kind):
    finding = check(claim, evidence, rules={*RULES, "number"})
    assert (None if finding is None else finding.kind) == kind, finding
    if finding is not None and kind == "number":
        assert "year" not in finding.reason


def test_the_guard_reads_its_own_units_and_every_negation_not_the_splitters_wider_ones():
    from citeaudit.quantities import UNITS, WIDE_ONLY, negation_pattern
    from citeaudit.quantities import quantities as shared

    assert [q.unit for q in quantities("40 acres and 30 months")] == [None, "mo"]
    assert [(q.unit, q.unit_text) for q in shared("40 acres and 30 months", wide=True)] == [("acre", "acres"),
                                                                                           ("mo", "months")]
    assert WIDE_ONLY < UNITS.keys()
    assert check("The kit lacks a charger.", "The kit comes with a charger.").kind == "negation"
    assert negation_pattern(zh=False, lexical=False).search("The kit lacks a charger.") is None


# --- Chinese claims -----------------------------------------------------------------------------------


@pytest.mark.parametrize("claim,evidence,rules,reason", [
    ("清华大学在2011年进入全球50强。", "清华大学在2012年进入全球50强。", None,
     "the claim's year '2011年' (清华大学在2011年进入全球50强) has no counterpart in the evidence"),
    ("该药物没有降低死亡率。", "该药物降低了死亡率。", None,
     "the claim is negated ('没有', in 该药物没有降低死亡率), the evidence has no negation"),
    ("全程长300公里。", "全程长300米。", None,
     "'300公里' (全程长300公里) is in the claim with unit 'km', the evidence has 300 only with m"),
    ("Eco将年度能耗降低15%。", D3_ZH, {"attachment"},
     "the claim's '15%' (Eco将年度能耗降低15%) measures something else in the evidence (停机时间减少了15%)"),
    ("该品牌在中国市场的占有率为21.7%。", "报告显示，该品牌的营收增长了21.7%。", {"attachment"},
     "the claim's '21.7%' (该品牌在中国市场的占有率为21.7%) measures something else in the evidence "
     "(该品牌的营收增长了21.7%)"),
    # a long clause is shown around the number, cut where "…" says, never inside "Steam" or "1,500"
    ("例如其游戏在2020年成为Steam上最畅销的游戏之一并且公司在游戏开发方面有丰富的经验。", "其游戏成为最畅销的游戏。",
     None, "the claim's year '2020年' (例如其游戏在2020年成为Steam上…) has no counterpart in the evidence"),
    ("营收为1,500万元，增长了3.5%。", "营收增长了3.5%。", {"number"},
     "the claim's number '1,500万元' (营收为1,500万元) has no counterpart in the evidence"),
])
def test_a_chinese_finding_names_the_phrase_of_the_claim(claim, evidence, rules, reason):
    """A reviewer reads the number with the words around it, not character bigrams ('场的, 有率, 率为')."""
    assert check(claim, evidence, rules=rules).reason == reason


@pytest.mark.parametrize("claim,evidence", [
    ("该品牌在中国市场的占有率为21.7%。", "报告显示，该品牌在中国的市场份额达21.7%。"),
    ("该品牌的市占率为21.7%。", "报告显示，其所占比重达21.7%。"),
    ("这类产品占比达30%。", "报告称，此类商品的份额为30%。"),
    ("The share reached 21.7% last year.", "The proportion stood at 21.7%."),
    ("Turnover was up 12% on the year.", "Company revenue climbed 12%."),
])
def test_words_for_the_same_measure_are_one_measure(claim, evidence):
    """占有率, 份额, 占比 (and "share", "proportion") measure the same: no attachment mismatch."""
    assert check(claim, evidence, rules={"attachment"}) is None


@pytest.mark.parametrize("claim,evidence", [
    ("该品牌在中国市场的占有率为21.7%。", "报告显示，该品牌的营收增长了21.7%。"),
    ("Its share reached 21.7%.", "Its revenue grew 21.7%."),
])
def test_another_measure_is_still_another(claim, evidence):
    assert check(claim, evidence, rules={"attachment"}).kind == "attachment"


@pytest.mark.parametrize("text", ["这款瓷器的釉色是千山翠。", "万一发生事故怎么办", "他收集了一些邮票。", "这部电影十分精彩。",
                                  "四川的火锅", "秦始皇统一六国", "亿万富翁", "千万不要迟到", "她是四大名旦之一", "两者兼顾"])
def test_a_chinese_numeral_inside_a_word_is_no_number(text):
    assert quantities(text) == []


@pytest.mark.parametrize("text,value,unit", [
    ("观察了三天", 3, "d"), ("一座千年古城", 1000, "yr"), ("现场有万人", 10_000, None), ("两千人参加", 2000, None),
    ("排名第三", 3, None), ("十五", 15, None), ("三点五", 3.5, None), ("十分钟后", 10, "min"),
    ("二〇二三年", 2023, None), ("三千五百万", 35_000_000, None), ("数百万人", 1_000_000, None),
])
def test_a_chinese_numeral_before_a_measure_or_on_its_own_is_a_number(text, value, unit):
    (q,) = quantities(text)
    assert (q.value, q.unit) == (value, unit)


@pytest.mark.parametrize("claim,evidence", [
    ("这款瓷器的釉色是千山翠。", "这款瓷器烧制于明代。"),  # version 3: "the claim's year '千'"
    ("比赛吸引了两千人参加。", "比赛吸引了很多人参加。"),  # version 3: "the claim's year '两千'"
    ("这座千年古城位于江南。", "这座古城位于江南。"),  # version 3: "the claim's year '千年'"
])
def test_a_chinese_numeral_is_a_year_only_written_digit_by_digit(claim, evidence):
    assert check(claim, evidence) is None
    finding = check(claim, evidence, rules={"year", "number"})
    assert finding is None or finding.kind == "number", finding


def test_chinese_claims_run_their_own_rules():
    """Measured on the Chinese rows (docs/model-judge.md), `attachment` is not right often enough there."""
    assert set(RULES_ZH) == set(RULES) - {"attachment"}
    assert check("Eco将年度能耗降低15%。", D3_ZH) is None
    assert check("Eco将年度能耗降低15%。", D3_ZH, rules=RULES).kind == "attachment"
    assert check("Eco reduces annual energy by 15%.", D3).kind == "attachment"
    assert check("清华大学在2011年进入全球50强。", "清华大学在2012年进入全球50强。").kind == "year"
