"""The plain reading (judges/plain.py): what a careful reader sees at once in a short support sentence and the
clause it cites."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.judges import plain


def reads_as(claim: str, evidence: str, label: str) -> plain.Reading:
    reading = plain.read(claim, evidence)
    assert reading is not None and reading.label == label, reading
    return reading


@pytest.mark.parametrize("claim, evidence, label, clause", [
    # every word in one clause, the number the same: full, whatever else the passage says
    ("Hold the reset button for 8 seconds.",
     "To restore factory settings on the H3 router, hold the reset button for 8 seconds. The light flashes.",
     "full", "To restore factory settings on the H3 router, hold the reset button for 8 seconds"),
    # a number written as a word is the same number
    ("Charge the headset for two hours.", "Charge the headset for 2 hours before first use.", "full",
     "Charge the headset for 2 hours before first use"),
    # the clause negates what the claim asserts
    ("Pets are allowed in the rooms.", "Pets are not allowed in the rooms. Breakfast is served at 7.",
     "contradicts", "Pets are not allowed in the rooms"),
    # the claim negates what the clause asserts
    ("The store is not open on Sundays.", "The store is open on Sundays from 10 to 4.", "contradicts",
     "The store is open on Sundays from 10 to 4"),
    # both negated: full
    ("The tablet is not waterproof.", "Note: the tablet is not waterproof.", "full", "Note: the tablet is not waterproof"),
    # the same unit with another value in the clause
    ("Hold the reset button for 8 seconds.", "Hold the reset button for 3 seconds to restart it.", "contradicts",
     "Hold the reset button for 3 seconds to restart it"),
    ("电池容量为72瓦时。", "电池容量为72瓦时，支持快充。", "full", "电池容量为72瓦时，支持快充"),
    ("房间内允许携带宠物。", "房间内不允许携带宠物。", "contradicts", "房间内不允许携带宠物"),
    # units as a spec sheet writes them, a title the sheet opens with, words in another form
    ("The Arlo kettle draws 2,200 watts.", "Arlo kettle — Power: 2200 W; Cord: 75 cm.", "full",
     "Arlo kettle — Power: 2200 W"),
    ("额定功率为2100瓦。", "C21电磁炉 额定功率：2100W；电源线长度：1.2米。", "full", "C21电磁炉 额定功率：2100W"),
    ("The cover can be washed at 30 °C.", "The cover is washable at 30°C. Do not tumble dry.", "full",
     "The cover is washable at 30°C"),
    # times of day, whichever way they are written, and days by another name
    ("The branch is open on weekdays from 9 am to 6 pm.", "Branch hours: Monday to Friday, 09:00–18:00.", "full",
     "Branch hours: Monday to Friday, 09:00–18:00"),
    ("城南营业厅工作日上午9点到下午5点营业。", "城南营业厅营业时间：周一至周五 9:00—17:00，周末及法定节假日休息。", "full",
     "城南营业厅营业时间：周一至周五 9:00—17:00，周末及法定节假日休息"),
    # a range is its two ends together
    ("老街面馆下午两点到五点照常营业。", "老街面馆营业时间：每天10:30—14:00、17:00—21:00，其余时间休息。", "contradicts",
     "老街面馆营业时间：每天10:30—14:00、17:00—21:00，其余时间休息"),
    # a negation said with other words: "closed" is "not open", 禁止 is 不允许
    ("市图书馆周一不开放。", "市图书馆开放时间：周二至周日 9:00—20:30，每周一闭馆进行内部整理。", "full",
     "市图书馆开放时间：周二至周日 9:00—20:30，每周一闭馆进行内部整理"),
    ("房间内不允许携带宠物。", "客房内禁止携带宠物，导盲犬除外。", "full", "客房内禁止携带宠物，导盲犬除外"),
    # what a negated clause excepts is allowed
    ("Assistance dogs are allowed in the rooms.", "Pets are not allowed in the rooms, except registered assistance dogs.",
     "full", "Pets are not allowed in the rooms, except registered assistance dogs"),
    # the clause that goes on about the one before it
    ("The tablet is waterproof.", "The tablet is splash resistant, but it is not waterproof, so keep it dry.",
     "contradicts", "it is not waterproof, so keep it dry"),
    # a number that labels: platform 7 is not platform 4
    ("开往杭州的列车在7号站台发车。", "10:15开往杭州的列车在4号站台发车。", "contradicts", "10:15开往杭州的列车在4号站台发车"),
    # a price list: the claim's number belongs to another item
    ("学生票价为60元。", "门票价格：成人60元，学生30元，1.2米以下儿童免票。", "contradicts",
     "门票价格：成人60元，学生30元，1.2米以下儿童免票"),
    # a spec sheet need not name what it is about
    ("The laptop weighs 1.3 kg.", "Specifications. Display: 14 inch. Weight: 1.3 kg. Battery: 72 Wh.", "full",
     "Weight: 1.3 kg"),
    ("这台笔记本重1.3公斤。", "产品规格：屏幕14英寸；重量1.3kg；电池容量72Wh。", "full", "重量1.3kg"),
    # a rival in a closed set: another colour, how often, a direction of change
    ("Press the red button to start the scan.", "Press the green button to start the scan. The red button cancels it.",
     "contradicts", "Press the green button to start the scan"),
    ("滤网每周用温水冲洗一次。", "请每月取下滤网，用温水冲洗一次，晾干后再装回。", "contradicts",
     "请每月取下滤网，用温水冲洗一次，晾干后再装回"),
    ("Operating profit grew 8% in 2023.", "In 2023 revenue grew 8% while operating profit fell 3%.", "contradicts",
     "operating profit fell 3%"),
])
def test_a_clause_that_holds_the_claim_decides(claim, evidence, label, clause):
    reading = reads_as(claim, evidence, label)
    assert evidence[reading.start:reading.end].strip() == clause


@pytest.mark.parametrize("claim, evidence", [
    # a word of the claim is missing: the model reads it
    ("The hotel has a heated pool.", "Guests can enjoy the hotel's outdoor pool."),
    # "while" of a time is no contrast: the clause holds the claim, and the model reads "smartwatch"
    ("The Orrin smartwatch should not be worn while swimming.", "Do not wear it while swimming or showering."),
    # a number the clause does not give, with no rival of its unit: the model reads it
    ("The pump delivers 40 litres per minute.", "The pump delivers a steady flow of water."),
    # a symbol makes another name: C# is not C
    ("C# is a programming language.", "C is a general-purpose programming language created at Bell Labs."),
    # too few words to be read this way
    ("It is 8.", "It is 8 or 9."),
    # a long clause may negate something else than the claim
    ("Walking at a low intensity needs less energy from the body.",
     "Walking at a low intensity does not need as much muscle effort as sprinting, so the body needs less energy, "
     "and that energy comes mostly from fat stores rather than from carbohydrate, which the body keeps for faster "
     "exercise."),
    # a spec sheet's unnamed subject is one word: two missing words are more than a title left out
    ("The laptop battery holds 72 Wh.", "Specifications. Weight: 1.3 kg. Capacity: 72 Wh."),
    # a missing word that is not what the sentence is about
    ("老街面馆下午两点到五点之间也照常营业。", "营业时间：每天14:00—17:00。"),
])
def test_no_reading_where_a_careful_reader_needs_more(claim, evidence):
    assert plain.read(claim, evidence) is None


def test_an_exception_leaves_the_negation_standing_for_the_rest():
    reading = plain.read("Pets are allowed in the rooms.", "Pets are not allowed in the rooms, except assistance dogs.")
    assert reading is not None and reading.label == "contradicts"


@pytest.mark.parametrize("claim, evidence, label", [
    # another tier, another measure, another person: none
    ("The Cloudnest Pro plan includes 100 GB of storage.", "The Cloudnest Basic plan includes 100 GB of cloud storage.",
     "none"),
    ("The Tarn backpack weighs 12 kg.", "Tarn backpack: volume 40 L, maximum recommended load 12 kg.", "none"),
    ("净澜洗衣机的烘干容量是10公斤。", "净澜滚筒洗衣机：洗涤容量10公斤，整机净重68公斤。", "none"),
    ("Pierre Curie won the Nobel Prize in Chemistry in 1911.",
     "In 1911 Marie Curie received the Nobel Prize in Chemistry for her discovery of radium.", "none"),
    ("王医生是心内科主任。", "李医生自2019年起担任心内科主任，王医生去年以主治医师身份加入该科室。", "none"),
    ("市长批准了这项预算。", "市议会于周二批准了这项预算，市长此前反对其中两项内容。", "none"),
    ("The mayor approved the budget.", "The city council approved the budget on Tuesday; the mayor had opposed it.", "none"),
    # one of two facts is not there: partial
    ("The Mira desk lamp has three brightness levels and a USB charging port.",
     "The Mira desk lamp offers three brightness levels and a warm-to-cool colour slider.", "partial"),
    ("课程为期六周，结束时有考试。", "课程为期六周，每周两次讲座和一次实验课。", "partial"),
    ("云记账试用期间不收取任何费用，试用期为一个月。", "云记账新用户在试用期内不收取任何费用，到期前3天会短信提醒。", "partial"),
])
def test_what_is_missing_or_said_of_another(claim, evidence, label):
    reads_as(claim, evidence, label)


def test_a_reading_that_sees_something_missing_overrules_only_a_full():
    from citeaudit.judges.base import Request
    from citeaudit.judges.model import ModelJudge
    from citeaudit.records import Judgment, SourcePassage

    text = "The Mira desk lamp offers three brightness levels."
    passages = (SourcePassage(id="M1", doc_id="shop", version=None, text=text, start=0, end=len(text)),)
    request = Request(text="The Mira desk lamp has three brightness levels and a USB charging port.", passages=passages)
    judge = ModelJudge()
    full = Judgment(label="full", judge=judge.signature, explanation="…")
    assert judge.apply_plain(request, full).label == "partial"
    for label in ("none", "contradicts"):  # it sees the port missing, not that the rest is supported
        other = full.model_copy(update={"label": label})
        assert judge.apply_plain(request, other) == other


def test_a_rival_number_in_the_clause_that_holds_most_of_the_claim():
    # "即可" is not in the evidence, but the clause holds the rest and gives seconds another value
    reading = plain.read("请按住电源键3秒重启平板。", "如需重启平板，请按住电源键10秒。屏幕熄灭后松开。")
    assert reading is not None and reading.label == "contradicts" and "10秒" in reading.reason


def test_offsets_are_into_the_evidence_as_given():
    # NFKC changes full-width text; the clause is still cut from the original
    evidence = "Ｈｏｌｄ the reset button for ８ seconds. Then wait."
    reading = plain.read("Hold the reset button for 8 seconds.", evidence)
    assert reading is not None and reading.label == "full"
    assert evidence[reading.start:reading.end] == "Ｈｏｌｄ the reset button for ８ seconds"


def test_a_long_passage_is_read_quickly_and_whole():
    filler = "The committee met again and discussed the schedule for the coming months. " * 20_000
    evidence = filler + "Hold the reset button for 8 seconds. " + filler
    reading = plain.read("Hold the reset button for 8 seconds.", evidence)
    assert reading is not None and evidence[reading.start:reading.end] == "Hold the reset button for 8 seconds"


# --- in the model judge ----------------------------------------------------------------------------------


def test_the_model_judge_reads_plainly_and_says_so():
    from citeaudit.judges.model import ModelJudge
    from citeaudit.records import SourcePassage

    passage = "To reset the P7, hold the power button for 10 seconds. Then release it and wait for the green light."
    passages = [SourcePassage(id="M1", doc_id="manual", version=None, text=passage, start=0, end=len(passage))]
    claim = "Hold the power button for 10 seconds."
    without = ModelJudge(plain=False).judge(claim, passages)
    judged = ModelJudge().judge(claim, passages)
    assert judged.label == "full" and judged.uncertain is None
    assert passage[judged.evidence.start:judged.evidence.end] == "To reset the P7, hold the power button for 10 seconds"
    if without.label != "full":  # the model alone misses it (it did when this was written): the reading says why
        assert "plain reading: every word of the claim is in the clause" in judged.explanation
    # off, it signs as the model judge did before the reading existed
    # without the reading, nothing of it is signed: neither its version nor the short Chinese pairs' cosine
    assert ModelJudge(plain=False).signature == re.sub(r"\+short=[^|]*", "", ModelJudge().signature).replace(
        f"|plain=on@{plain.VERSION}", "")
    # a negated clause: contradicts, and the guard does not undo it
    denied = ModelJudge().judge("The P7 is waterproof.", [SourcePassage(
        id="M2", doc_id="manual", version=None, text="The P7 is not waterproof.", start=0, end=25)])
    assert denied.label == "contradicts"
    # a full the reading gives is not taken back by the guard, whose negation words do not include 禁止
    text = "客房内禁止携带宠物，导盲犬除外。"
    allowed = ModelJudge().judge("房间内不允许携带宠物。", [SourcePassage(
        id="M3", doc_id="rules", version=None, text=text, start=0, end=len(text))])
    assert allowed.label == "full" and "qualifier guard" not in allowed.explanation


def test_a_guess_the_reading_confirms_is_no_longer_uncertain():
    from citeaudit.judges.base import Request
    from citeaudit.judges.model import ModelJudge
    from citeaudit.records import Judgment, SourcePassage

    text = "Hold the power button for 10 seconds to reset the P7."
    request_passages = (SourcePassage(id="M1", doc_id="manual", version=None, text=text, start=0, end=len(text)),)
    judge = ModelJudge()
    guess = Judgment(label="full", judge=judge.signature, uncertain=True, explanation="uncertain: …")
    read = judge.apply_plain(Request(text="Hold the power button for 10 seconds.", passages=request_passages), guess)
    assert read.label == "full" and read.uncertain is None and "plain reading: every word" in read.explanation
    other = guess.model_copy(update={"label": "none"})
    changed = judge.apply_plain(Request(text="Hold the power button for 10 seconds.", passages=request_passages), other)
    assert changed.label == "full" and changed.uncertain is None and "-> full, not none" in changed.explanation
    # where the reading has nothing to say, the judgment stays as it was, unsure or not
    assert judge.apply_plain(Request(text="The P7 weighs 2 kg.", passages=request_passages), guess) == guess


def test_a_run_judged_before_the_plain_reading_is_rebuilt_without_it():
    from citeaudit.desk.rebuild import candidate_specs

    old = ("model:judge-v1[onnx:judge-v1@1#61a844ac4e8c|max=256|map=full=full]|guard=on@4|cal=on|"
           "zh=embedding:0.9175|band=0.13|sets=parts")
    assert candidate_specs(old) == ["model:plain=off,pick=full,zh=embedding,band=0.13"]
    now = old.replace("|guard=on@4|", "|guard=on@4|plain=on@1|")
    assert candidate_specs(now) == ["model:pick=full,zh=embedding,band=0.13"]


# --- what it is made of ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, minutes", [
    ("9 am", [540]), ("6:15 p.m.", [1095]), ("18:00", [1080]), ("noon", [720]), ("上午9点", [540]),
    ("下午5点半", [1050]), ("下午三点二十分", [920]), ("周五9:00—17:00", [540, 1020]),
])
def test_times_of_day_however_written(text, minutes):
    from citeaudit.judges.plain_words import times

    assert [t.minutes for t in times(text)] == minutes


def test_an_unmarked_hour_is_either_half_of_the_day():
    from citeaudit.judges.plain_words import times

    five, seventeen, nine_pm = times("5点")[0], times("17:00")[0], times("9 pm")[0]
    assert five.same(seventeen) and not times("9 am")[0].same(nine_pm)


@pytest.mark.parametrize("claim, evidence", [
    ("The pack weighs 1,150 grams.", "Pack — Weight: 1.15 kg; Volume: 30 L."),
    ("The heater is rated at 2 kW.", "Heater — Rated power: 2000 W; Area: 20 m²."),
    ("The tools have a 24-month warranty.", "The tools have a two-year warranty."),
    ("风行F3的最高车速是每小时25公里。", "【风行 F3】最高车速：25 km/h；续航：约 60 km。"),
    ("The kettle holds 1.7 litres.", "Kettle: capacity 1.7 L, power 2200 W."),
])
def test_a_figure_in_another_unit_of_its_measure_is_the_same_figure(claim, evidence):
    reading = plain.read(claim, evidence)
    assert reading is not None and reading.label == "full", reading


@pytest.mark.parametrize("claim, evidence, label", [
    # a list of figures, read item by item
    ("The Lumen desk top is 1.2 m wide and 0.6 m deep.", "Lumen Desk – Desk width: 120 cm; Depth: 60 cm; Height: 72 cm",
     "full"),
    ("For wool, set the iron to 200 °C.", "Iron settings: Silk – 110 °C; Wool – 150 °C; Cotton – 200 °C.", "contradicts"),
    # another model of the same name, another branch of the same shop
    ("疾风5电动自行车续航可达90公里。", "疾风7电动自行车配备500Wh可拆卸电池，续航最高90公里。", "none"),
    ("Pagecorner Books' Eastgate store closes at 4 pm on Saturdays.",
     "The Westbrook branch of Pagecorner Books closes at 16:00 on Saturdays.", "none"),
    # another value in another unit of the measure
    ("The pack weighs 1,150 grams.", "Pack — Weight: 1.5 kg; Volume: 30 L.", "contradicts"),
    # the same date's day of the month
    ("康宁社区诊所5月5日休诊。", "康宁社区诊所将于5月1日休诊一天，5月2日起恢复正常接诊。", "contradicts"),
])
def test_lists_models_units_and_dates(claim, evidence, label):
    reads_as(claim, evidence, label)


def test_an_instruction_with_its_figures_needs_not_every_word():
    reading = plain.read("在净澜洗衣机上，按住童锁键三秒即可锁定面板。", "净澜洗衣机童锁功能：长按“童锁”键3秒，面板按键即被锁定。")
    assert reading is not None and reading.label == "full", reading
    # without its figure the same wording is the model's to read
    assert plain.read("在净澜洗衣机上，按住童锁键即可锁定面板。", "净澜洗衣机童锁功能：长按“童锁”键，面板按键即被锁定。") is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab 12.,:;-–—()【】kg分钟点周一不没 notWeight\n")), max_size=80),
       st.text(alphabet=st.sampled_from(list("ab 12.,:;-–—()【】kg分钟点周一不没 notWeight\n")), max_size=200))
def test_any_text_is_read_without_error_and_its_clause_is_in_the_evidence(claim, evidence):
    reading = plain.read(claim, evidence)
    if reading is not None:
        assert 0 <= reading.start <= reading.end <= len(evidence)


@pytest.mark.parametrize("claim, evidence, label", [
    # another button, another menu path
    ("To lock the keypad, hold the Fan button for 3 seconds.",
     "To lock the keypad, press and hold the Mode button for 3 seconds.", "contradicts"),
    ("You can change your password from Profile > Notifications.",
     "To change your password, go to Profile > Security > Change password.", "contradicts"),
    ("想关掉消息推送，可以进入“我的”>“设置”>“隐私”。", "关闭消息推送：进入“我的”>“设置”>“通知”。", "contradicts"),
    # 周六 is a day, not six of something
    ("政务大厅周六只在上午开放，从 9 点到中午 12 点。", "政务大厅工作时间：周一至周五 8:30—17:00，周六上午 9:00—12:00。", "full"),
    # how often, however written; a card of another term
    ("Replace the water filter twice a year.", "Replace the water filter every six months.", "full"),
    ("云杉健身房的半年卡价格是 2599 元。", "云杉健身房年卡价格为 2599 元。", "none"),
])
def test_controls_ranges_and_terms(claim, evidence, label):
    reads_as(claim, evidence, label)


def test_the_second_end_of_a_range_has_the_first_ends_key():
    from citeaudit.judges.plain_facts import clause_items, facts, key_of

    item = clause_items(facts("热水器建议将水温设定在 50℃ 至 55℃ 之间"))[0]
    assert [key_of(item, e) for e in item.numbers] == [{"温", "设", "定"}] * 2
    # so a claim of that range is not read as giving 55 another value
    reading = plain.read("热水器的水温设定在 50 到 55 摄氏度。", "热水器建议将水温设定在 50℃ 至 55℃ 之间。")
    assert reading is not None and reading.label == "full", reading


def test_code_is_no_menu_path():
    claim = "这是因为 x-y 会发生溢出，因此 if(x-y>0)的结果是 false。"
    reading = plain.read(claim, "x-y 会发生溢出，因此 if(x-y>0)的结果是 false。")
    assert reading is None or reading.label != "contradicts", reading


@pytest.mark.parametrize("text, value, unit", [
    ("充满电大约需要三个半小时", 3.5, "h"),
    ("保修期为两年半", 2.5, "yr"),
    ("棉麻程序需要2小时15分钟", 135, "min"),
    ("两个小时零五分", 125, "min"),
    ("静置一刻钟", 15, "min"),
    ("The exam lasts an hour and a half.", 1.5, "h"),
    ("The course lasts a year and a half.", 1.5, "yr"),
    ("The warranty runs two and a half years.", 2.5, "yr"),
    ("Allow 1 hour 30 minutes.", 90, "min"),
    ("Let it rest for a quarter of an hour.", 15, "min"),
    ("A three-quarter-hour induction is required.", 45, "min"),
])
def test_a_duration_said_in_two_parts_is_one_figure(text, value, unit):
    from citeaudit.judges.plain_facts import facts

    assert [(q.value, q.unit) for q in facts(text).numbers] == [(value, unit)]


def test_a_duration_in_two_parts_is_the_same_figure_in_minutes():
    reading = plain.read("The exam lasts two and a half hours.", "The exam lasts 150 minutes.")
    assert reading is not None and reading.label == "full", reading
    # three and a half hours is 210 minutes, not half an hour beside a bare three
    reading = plain.read("充满电大约需要三个半小时。", "充电时间：210分钟")
    assert reading is None or reading.label != "contradicts", reading


def test_a_lists_later_values_have_the_first_ones_key():
    evidence = "Heater | Power settings: 800W/1200W/2000W | Area: 20 m²"
    reading = plain.read("The heater draws 2,000 W on its highest setting.", evidence)
    assert reading is None or reading.label != "contradicts", reading  # 2000 W is one of the settings
    reading = plain.read("The heater draws 2,500 W on its highest setting.", evidence)
    assert reading is not None and reading.label == "contradicts", reading


@pytest.mark.parametrize("claim, evidence, label", [
    ("The chess club meets on Tuesdays and Thursdays.", "Chess club: Tue & Thu, 18:00–20:00, Room 4.", None),
    ("The chess club meets on Wednesdays and Thursdays.", "Chess club: Tue & Thu, 18:00–20:00, Room 4.", "contradicts"),
    ("图书馆星期六不开门。", "图书馆周六闭馆。", "full"),
    ("图书馆礼拜天不开门。", "图书馆周六闭馆。", "contradicts"),
])
def test_days_written_short_are_the_days(claim, evidence, label):
    reading = plain.read(claim, evidence)
    assert (reading and reading.label) == label, reading


def test_a_rewrite_table_skips_only_what_cannot_match():
    import re

    from citeaudit.judges.plain_words import Rewrites

    table = Rewrites([(re.compile(r"(?<=\d)\s*千瓦"), " kW"), (re.compile(r"\bkW\b"), "kilowatt"),
                      (re.compile(r"[¥￥]\s?(\d+)"), r"\1元")])
    assert [needs for _, _, needs in table.table] == ["han", "letters", None]
    assert table("2千瓦") == "2 kilowatt"  # the first rewrite brings the letters the second needs
    assert table("3 kW, ¥5") == "3 kilowatt, 5元"
    assert table("没有单位") == "没有单位"


@pytest.mark.parametrize("claim, evidence, full", [
    # the kind of thing a named product is, said by the claim and not by a spec sheet's title
    ("The Halden air purifier weighs 4.2 kg.", "Halden AP-300 specifications\nDimensions: 28 x 28 x 52 cm\nWeight: 4.2 kg",
     True),
    ("The Tidewell R400 rowing machine weighs 32 kg.", "Model: Tidewell R400 | Footprint: 240 × 60 cm | Weight: 32,000 g",
     True),
    ("绿川空气净化器重4.2公斤。", "绿川 KJ-500 参数\n尺寸：30×30×60 厘米\n重量：4.2 kg", True),
    # but not where the evidence names another kind after the name, nor a predicate left out
    ("The Kiro M5 mouse has a two-year warranty.", "The Kiro K7 keyboard comes with a 2-year limited warranty.", False),
    ("声屿Buds充满电需要4小时。", "声屿Buds续航：开启降噪4小时，关闭降噪6小时。", False),
])
def test_the_kind_a_named_thing_is_need_not_be_in_a_spec_sheet(claim, evidence, full):
    reading = plain.read(claim, evidence)
    assert (reading is not None and reading.label == "full") == full, reading


def test_a_speed_and_a_range_of_dates_as_a_reader_reads_them():
    reading = plain.read("疾风S1电动滑板车的最高时速为25公里。", "疾风 S1 电动滑板车：最高时速 25 km/h，续航最长 30 km，电机功率 350 W。")
    assert reading is not None and reading.label == "full", reading  # 25 km/h, not 25 km beside a rival 30 km
    evidence = "通知：松岭体育中心游泳馆将于6月3日至6月9日（含）闭馆检修，健身房和球场照常开放。"
    reading = plain.read("松岭体育中心游泳馆6月3日至10日闭馆检修。", evidence)  # the month of the second end is 6月
    assert reading is not None and reading.label == "contradicts" and "10日" in reading.reason, reading
    reading = plain.read("松岭体育中心游泳馆6月3日至9日闭馆检修。", evidence)
    assert reading is None or "says it of" not in reading.reason, reading  # 9日至 is a date, not a model named 日至


@pytest.mark.parametrize("claim, label", [
    ("Dr. Amira Tolland teaches the Tuesday evening first-aid class.", "none"),  # taught by another
    ("Nurse Owen Pratley teaches the Tuesday first-aid class.", "full"),
])
def test_another_person_by_whom_it_is_done(claim, label):
    evidence = ("Community Hall weekly classes: Tuesday 18:30 first-aid class, taught by nurse Owen Pratley. "
                "Wednesday 10:00 yoga, led by Dr. Amira Tolland.")
    reading = reads_as(claim, evidence, label)
    if label == "none":
        assert "Owen Pratley" in reading.reason and "Amira Tolland" in reading.reason


@pytest.mark.parametrize("text, closed_then", [
    ("周一闭馆", True), ("5月1日休息", True), ("游泳馆6月3日至9日闭馆检修", True),  # a day, a date: closed then
    ("每天22:00闭馆", False), ("晚上十点关门", False), ("下午5点半 关门", False),  # a time: when it closes
])
def test_closing_after_a_date_is_being_closed_after_a_time_closing_time(text, closed_then):
    from citeaudit.judges.plain_facts import facts

    assert facts(text).negated == closed_then


def test_forgetting_empties_what_the_reading_remembers():
    from citeaudit.judges.plain_facts import facts, passage_of

    claim, evidence = "The kettle holds 1.7 litres.", "Kettle: capacity 1.7 L, power 2200 W."
    first = plain.read(claim, evidence)
    first_facts = facts(claim)
    assert facts(claim) is facts(claim)  # a short text read twice is read once
    assert facts(evidence * 100) is not facts(evidence * 100)  # a long one is its passage's to keep
    plain.forget()
    assert passage_of.cache_info().currsize == 0 and facts(claim) is not first_facts
    assert plain.read(claim, evidence) == first  # and reads the same again


@pytest.mark.parametrize("claim, evidence, label", [
    # a figure's unit says what it measures; the clause names no other measure of that kind
    ("The Alder Trail is 7.5 km long.", "Alder Trail: a 7.5 km circular walk through beech woodland.", "full"),
    ("The DW-40 dishwasher is 85 cm tall.", "Vellum DW-40 Dishwasher. Dimensions (W × D × H): 60 × 55 × 85 cm.", "full"),
    ("The Lumen desk is 120 cm wide.", "Lumen Desk – Length: 120 cm; Depth: 60 cm", "none"),
    # each of a dimension's numbers has its unit, so a capacity is not read off one of them
    ("The Rivello Cabin Case holds 40 litres.", "Rivello Cabin Case. Capacity: 34 L. Dimensions: 55 x 40 x 20 cm.",
     "contradicts"),
    # a part the passage never mentions is found before the figures decide
    ("The Tarnwick AirPure 300 weighs 4.2 kg and has a washable filter.",
     "Tarnwick AirPure 300 – Specifications. Dimensions: 32 x 32 x 58 cm. Weight: 4.2 kg. Noise level: 24–51 dB.",
     "partial"),
    ("The Ferrow P10 drill has a maximum torque of 45 Nm.", "Ferrow P10 Cordless Drill. Voltage: 18 V. Max torque: 45 Nm.",
     "full"),
    ("6 号线东湖站的首班车是早上 5 点 50 分。", "鹿鸣地铁 6 号线运营时间：东湖站首班车 05:50，末班车 23:00。", "full"),
    # no limit, stainless steel: no denial
    ("绿洲健身房的年卡会员可以免费使用淋浴间。", "绿洲健身房年卡会员权益：不限次数进入健身区、免费使用淋浴间及储物柜。", "full"),
    ("铭川电热水壶的容量是1.7升。", "铭川电热水壶 MK-17 容量：1.7 L 功率：1800 W 材质：304不锈钢", "full"),
])
def test_figures_measures_and_what_only_looks_denied(claim, evidence, label):
    reads_as(claim, evidence, label)


def test_a_denial_another_clause_makes_with_the_figures_is_no_contradiction():
    reading = plain.read("There are no Ashby Line trains before 8 am on Sundays.",
                         "Ashby Line – Sunday service: Trains run every hour from 08:00 to 22:00. There is no service "
                         "before 08:00.")
    assert reading is None or reading.label != "contradicts", reading


@pytest.mark.parametrize("claim, evidence", [
    ("Hold the power button for 10 seconds to reset the Brindle K4 router.", "安和医院访客停车收费标准：2小时以内5元；2至4小时10元。"),
    ("The Halden air purifier weighs 4.2 kg.", "Quenby QD-9 heat pump dryer. Drum capacity: 9 kg. Programs: 15."),
])
def test_a_list_about_something_else_gives_no_rival_figure(claim, evidence):
    reading = plain.read(claim, evidence)
    assert reading is None or reading.label != "contradicts", reading


@pytest.mark.parametrize("claim, evidence, label", [
    # "used" is "use": too short a word for the suffix rule
    ("Do not use the Pellow heater in a sauna.", "Safety: The Pellow PH-2 heater must not be used in saunas or steam rooms.",
     "full"),
    # half a minute, sizes of data in either step, a time written with a point, decibels
    ("Quarrel export links are valid for 30 seconds.", "Quarrel: each export link is valid for half a minute.", "full"),
    ("Attachments in Parcelo can be up to 2 GB.", "Parcelo attachments: up to 2,048 MB per file.", "full"),
    ("Attachments in Parcelo can be up to 2 GB.", "Parcelo attachments: up to 2,000 MB per file.", "full"),
    ("Attachments in Parcelo can be up to 2 GB.", "Parcelo attachments: up to 1,500 MB per file.", "contradicts"),
    ("Last admission at the Dunlow pool is at 18:30.", "Dunlow Pool – Sunday: 9 am to 7 pm (last admission 6.30 pm).", "full"),
    ("Last admission at the Dunlow pool is at 18:30.", "Dunlow Pool – Sunday: 9 am to 7 pm (last admission 5.30 pm).",
     "contradicts"),
    ("The Quietta Q2 fan runs at 38 decibels.", "Quietta Q2 – Noise: 38 dB(A); Power: 25 W.", "full"),
    # a manual names its product once; a clause that names another thing does not take that name
    ("Do not put the Tolvey jar in the dishwasher.", "Care: Wash the Tolvey jar by hand. Do not put the jar in the dishwasher.",
     "full"),
    # the kind of thing named, which the passage leaves out between the name and the word after it
    ("The Tolvey blender jar is not dishwasher safe.",
     "Care: Wash the Tolvey jar by hand. Do not put the jar in the dishwasher.", "full"),
    # more same-meaning words
    ("Harrow Library does not open on bank holidays.",
     "Harrow Library hours: Mon–Sat 9:00–18:00. The library is closed on public holidays.", "full"),
    ("Fenwick Pharmacy will pick up your prescriptions from your GP for free.",
     "Fenwick Pharmacy: we collect prescriptions from your GP surgery at no cost.", "full"),
    # an ordinal is no number; 两 before a duration is 2; 无线 is wireless, not a denial; 避免 denies
    ("滤芯第一次使用前需浸泡15分钟。", "滤芯首次使用前请浸泡15分钟。", "full"),
    ("首次使用前，应将耳机放入充电盒充电至少两小时。", "飞羽 A1 无线耳机：首次使用前，请将耳机放入充电盒充电至少 2 小时。", "full"),
    ("云雀耳机的充电盒支持无线充电。", "云雀耳机充电盒仅支持有线充电，不支持无线充电。", "contradicts"),
    ("服药后2小时内不要喝牛奶。", "服药后2小时内应避免饮用牛奶。", "full"),
    ("暖舟保温杯不能放进微波炉加热。", "使用注意：暖舟保温杯请勿放入微波炉加热。", "full"),
])
def test_version_4_forms(claim, evidence, label):
    reads_as(claim, evidence, label)


@pytest.mark.parametrize("claim, evidence", [
    # a name word is no kind of thing: another branch, another person
    ("Pemberton Bakery's Castle Road branch opens at 7:00 on Sundays.",
     "Pemberton Bakery's Ellery Street branch opens at 7 am on Sundays and closes at 1 pm."),
    ("Dr. Lena Marsh sees patients at the Fairview Clinic on Tuesdays.",
     "Dr. Amira Osei sees patients at the Fairview Clinic on Tuesdays."),
    # the clause about another named thing does not take the passage's first name
    ("The Tolvey jar must not go in the dishwasher.",
     "The Tolvey jar is dishwasher safe. The Ardo M2 lid must not go in the dishwasher."),
    # the figure anchors no instruction whose group of people the clause does not name
    ("A monthly student membership at Corbel Pool costs £18.",
     "Corbel Pool membership prices: Adult monthly £30; Off-peak monthly £18; Day pass £6."),
])
def test_a_name_is_not_carried_or_left_out_where_it_tells_things_apart(claim, evidence):
    reading = plain.read(claim, evidence)
    assert reading is None or reading.label != "full", reading


def test_times_and_durations_as_a_reader_reads_them():
    from citeaudit.judges.plain_facts import facts
    assert [t.minutes for t in facts("早上七点零五分从东港站出发").times] == [425]
    assert [t.minutes for t in facts("last admission 6.30 pm").times] == [18 * 60 + 30]
    assert [(q.value, q.unit) for q in facts("充电两个小时").numbers] == [(2.0, "h")]
    assert [(q.value, q.unit) for q in facts("前后两小时内").numbers] == [(2.0, "h")]
    assert facts("第一次使用前").numbers == []


def test_a_rival_word_is_named_against_the_claims_word_the_clause_lacks():
    reading = reads_as("The Orrin clinic is open on Wednesdays and Thursdays.",
                       "The Orrin clinic is open on Tuesdays and Thursdays.", "contradicts")
    assert "'tuesda' where the claim has 'wednes'" in reading.reason, reading.reason


def test_a_denial_is_read_in_its_clause_without_the_names_before_it():
    # "gives no … estimate" denies the estimate, not the claim: the names of earlier clauses help a clause hold
    # a claim, never deny one (the P7 archive's D3 is the seed of this)
    reading = plain.read("Lumo cuts yearly water use by 10%.",
                         "Lumo mode trial. The trial ran the M3 washer in Lumo mode for 30 days. Cycle time fell by 10%. "
                         "The trial gives no yearly water use estimate and does not say how many washers took part.")
    assert reading is None or reading.label != "contradicts", reading


@pytest.mark.parametrize("claim, evidence, label", [
    # a unit joined to its number by a hyphen, however short; "approx." ends no clause; "55 in" is inches
    ("The Brenna K3 jug has a 2-litre capacity.", "Brenna K3 | Capacity: 2 L | Power: 1,500 W", "full"),
    ("The Brenna K3 jug has a 2-litre capacity.", "Brenna K3 | Capacity: 1.2 L | Power: 1,500 W", "contradicts"),
    # a claim rounds its figure, within a tenth: 1.5 rounds to 2, yet "2 litres" is not "1.5 L"
    ("The Brenna K3 jug has a 2-litre capacity.", "Brenna K3 | Capacity: 1.5 L | Power: 1,500 W", "contradicts"),
    ("The Brenna K3 jug weighs 15 kg.", "Brenna K3 | Weight: 14.8 kg | Power: 1,500 W", "full"),
    ("The Harl B2 sack holds a 5-kg load.", "Harl B2 sack. Maximum load: 5 kg. Material: jute.", "full"),
    ("The Morrow S9 battery charges fully in about 90 minutes.",
     "Morrow S9 battery: 12 V. Full charge time: approx. 90 min.", "full"),
    ("The Peller 43 TV has a 43-inch screen.", "Peller 43 TV — Screen size: 43 in (109 cm). Ports: 3.", "full"),
    ("The Peller 43 TV's screen measures 43 cm.", "Peller 43 TV — Screen size: 43 in (109 cm). Ports: 3.", "contradicts"),
    # the first or the last of a timetable's list, read off the list
    ("The first boat to Arnby leaves at 8:05 am.", "Boat departures to Arnby: 08:05, 10:35, 13:20.", "full"),
    ("The last boat to Arnby leaves at 13:20.", "Boat departures to Arnby: 08:05, 10:35, 13:20.", "full"),
    ("The first boat to Arnby leaves at 10:35 am.", "Boat departures to Arnby: 08:05, 10:35, 13:20.", "contradicts"),
    # a named person said to do what the passage says another does
    ("Ines Varga runs the Lindholm Tenants Association.",
     "Notice: The Lindholm Tenants Association is run by chair Paolo Brandt. Ines Varga keeps the minutes.", "none"),
])
def test_version_5_forms(claim, evidence, label):
    reads_as(claim, evidence, label)


@pytest.mark.parametrize("claim, evidence", [
    # a spec sheet of another thing gives no rival figure
    ("The Orvo T5 laptop weighs 1.5 kg.", "Torvik D18 cordless drill – Max torque: 50 Nm; Voltage: 18 V; Weight: 1.4 kg."),
    # another item keyed by the claim's words gives its figure: the sub-item beside it is no rival
    ("The Frida F2 fridge has a 250-litre capacity.", "Frida F2: total capacity 250 L (fridge 180 L, freezer 70 L)."),
    # "in" after a number is inches only where it ends the figure
    ("The Alder shop has 5 kettles in stock.", "Alder shop: 5 in stock, next delivery Monday."),
])
def test_version_5_reads_no_rival_where_there_is_none(claim, evidence):
    reading = plain.read(claim, evidence)
    assert reading is None or reading.label != "contradicts", reading


def test_version_5_figures_and_names():
    from citeaudit.judges.plain_facts import facts
    assert [(q.value, q.unit) for q in facts("a 1.5-litre jar").numbers] == [(1.5, "l")]
    assert [(q.value, q.unit) for q in facts("a 500-ml bottle").numbers] == [(500.0, "ml")]
    assert [(q.value, q.unit) for q in facts("Screen size: 55 in (139 cm)").numbers][0] == (55.0, "inch")
    assert [q.unit for q in facts("5 in stock").numbers] == [None]
    assert facts("Sleeps 3 persons").numbers[0].unit == facts("sleeps three people").numbers[0].unit
    reading = reads_as("Ines Varga runs the Lindholm Tenants Association.",
                       "Notice: The Lindholm Tenants Association is run by chair Paolo Brandt. Ines Varga keeps the "
                       "minutes.", "none")
    assert "the claim of Ines Varga" in reading.reason, reading.reason  # as the claim writes the name
