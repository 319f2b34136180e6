"""What the plain reading (judges/plain.py) counts as the same word, number or time, and which words are
rivals: one word of a closed set standing where the claim has another ("the green button" for "the red
button", "the Basic plan" for "the Pro plan", 油耗 for 噪音).

A careful reader of a support answer knows that "2.8 kilograms" is "2.8 kg", "9 am to 6 pm" is
"09:00–18:00", 两年 is 2年, "Monday to Friday" is "weekdays", "shipping" is "delivery" and "washable" is
"wash". The tables here are that knowledge, kept small and general: common words of manuals, spec
sheets, shop policies and timetables, in English and Chinese, never the words of one test pair.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citeaudit.quantities import _cn_to_number, _words_to_number, normalise

# --- same meaning: each group's phrases are read as its first -------------------------------------------
# English phrases are matched as whole words (lower-cased); Chinese ones anywhere. Longer phrases first.
_SAME_EN = [
    ("weekday", "monday to friday", "monday through friday", "monday-friday", "mon-fri", "mon to fri", "weekdays",
     "working days", "working day", "business days", "business day"),
    ("weekend", "saturday and sunday", "saturdays and sundays", "sat-sun", "weekends"),
    ("deliver", "delivery", "deliveries", "delivered", "delivers", "shipping", "shipped", "ships", "ship"),
    ("half price", "half-price", "50% off", "half the price"),
    ("free", "free of charge", "at no cost", "at no charge", "no charge", "complimentary", "for free"),
    ("over", "above", "more than", "exceeding", "in excess of"),
    ("under", "below", "less than"),
    ("need", "needs", "needed", "require", "requires", "required", "requirement", "necessary", "must have"),
    ("allow", "allows", "allowed", "permit", "permits", "permitted", "welcome"),
    ("reset", "factory reset", "factory-reset", "restore factory settings", "restore the factory settings",
     "restore to factory settings", "restore it to factory settings"),
    ("unplug", "disconnect", "unplugged", "disconnected", "pull the plug"),
    ("turn on", "switch on", "power on", "turns on", "switches on", "switched on", "turned on"),
    ("turn off", "switch off", "power off", "shut down", "turns off", "switches off", "switched off", "turned off"),
    ("press", "push", "presses", "pushes", "pressed", "pushed", "tap", "taps"),
    ("remove", "take out", "detach", "removes", "removed", "takes out", "detached"),
    ("replace", "change", "swap", "replaces", "replaced", "changed"),
    ("connect", "plug in", "plugs in", "plugged in", "connects", "connected", "attach"),
    ("warranty", "guarantee", "guaranteed"),
    ("admission", "ticket", "tickets", "entry", "entrance fee", "entrance"),
    ("booking", "appointment", "appointments", "reservation", "reservations", "bookings", "book ahead"),
    ("phone", "telephone", "call"),
    ("last", "final", "latest"),
    ("first", "earliest"),
    ("begin", "begins", "began", "start", "starts", "started", "commence", "commences"),
    ("depart", "departs", "departed", "departure", "departures", "leave", "leaves", "left from"),
    ("cost", "costs", "price", "priced", "prices", "fee"),
    ("weigh", "weighs", "weight", "weighing", "heavy"),
    ("capacity", "volume", "holds", "hold up to"),
    ("length", "long", "lengths"),
    ("width", "wide"),
    ("height", "high", "tall"),
    ("depth", "deep"),
    ("buy", "buys", "bought", "purchase", "purchases", "purchased"),
    ("return", "returns", "returned", "refund", "refunds", "refunded", "refundable", "take back", "takes back", "taken back", "exchange"),
    ("smoke", "smoking", "smoked", "cigarettes", "cigarette"),
    ("every", "each", "per", "at intervals of", "intervals", "interval"),
    ("include", "includes", "included", "comes with", "come with", "covered by", "equipped with", "features"),
    ("wear", "worn", "wore", "wearing"),
    ("take", "took", "taken"),
    ("give", "gave", "given"),
    ("hold", "held"),
    ("keep", "kept"),
    ("pay", "paid"),
    ("sell", "sold"),
    ("win", "won"),
    ("make", "made"),
    ("send", "sent"),
    ("run", "ran"),
    ("teach", "taught"),  # not "led": lower-cased, it is also an LED
    ("lasts", "valid for", "covers", "expire after", "expires after"),
    ("open", "opens", "opening hours", "opening times", "business hours", "hours"),
    ("discount", "offer", "deal", "promotion"),
    ("room", "rooms", "guest room", "guest rooms"),
    ("store", "stores", "shop", "shops", "branch", "branches", "outlet", "outlets"),
    ("customer", "customers", "guest", "guests", "visitor", "visitors"),
    ("child", "children", "kids", "kid"),
    ("adult", "adults"),
    ("photo", "photos", "picture", "pictures", "photograph", "photographs"),
    ("borrow", "borrows", "borrowed", "borrowing", "loan", "loans", "loaned", "lend", "lends", "lent"),
    ("collect", "collects", "collected", "collecting", "pick up", "picks up", "picked up", "picking up"),
    ("select", "selects", "selected", "choose", "chooses", "chose", "chosen", "click", "clicks", "clicked", "pick"),
    ("holiday", "holidays", "bank holiday", "bank holidays", "public holiday", "public holidays"),
    ("schedule", "scheduled", "planned"),
    ("screen", "display"),
    ("beside", "next to", "alongside", "adjacent to"),
    ("compatible with", "work with", "works with", "working with"),
    ("travel", "travels", "ride", "rides", "riding"),
]
_SAME_ZH = [
    ("工作日", "周一至周五", "周一到周五", "星期一至星期五", "星期一到星期五"),
    ("周末", "周六、周日", "周六和周日", "周六周日", "周六及周日", "星期六和星期日", "双休日"),
    ("包邮", "免运费", "免邮费", "免费配送", "免费送货", "免邮"),
    ("需要", "必须", "须", "需"),
    ("重量", "净重"),
    ("价格", "售价", "定价", "标价"),
    ("开启", "打开", "开机", "启动"),
    ("关闭", "关机", "关掉"),
    ("取下", "拆下", "取出"),
    ("更换", "替换", "换新"),
    ("首次", "第一次", "初次"),
    ("免费", "不收费", "不收取费用", "无需付费", "不另收费"),
    ("预约", "预订", "预定"),
    ("直立", "竖直", "竖放", "竖立"),
    ("通电", "插电", "接通电源", "接电"),
    ("老人", "老年人", "长者"),
    ("末班", "最后一班", "最晚一班"),
    ("首班", "第一班", "最早一班"),
    ("发车", "出发", "开出", "发出"),
    ("退货", "退换", "退款"),
    ("吸烟", "抽烟"),
    ("饮酒", "喝酒"),
    ("半价", "五折", "5折", "半票"),
    ("使用", "服用", "食用"),
    ("容量", "容积"),
    ("开门", "开放时间", "营业时间", "开放", "营业"),
    ("优惠", "折扣", "打折", "活动价"),
    ("客房", "房间"),
    ("保修", "保修期", "质保期", "质保"),
    ("关门", "闭馆", "休息", "停止营业", "打烊"),
    ("顾客", "客户", "用户", "游客", "访客", "旅客", "乘客"),
    ("儿童", "孩子", "小孩"),
    ("电池容量", "电池"),
    ("放入", "放进"),
    ("冷冻", "冻结", "冰冻"),
    ("饮用", "喝"),
    ("就诊", "看病", "看诊", "接诊"),
]


_HAN = re.compile(r"[\u3400-\u9fff]")
_LETTER = re.compile(r"[A-Za-z]")


class Rewrites:
    """A table of (pattern, replacement) applied in order. A pattern written with Chinese characters and no
    letters can only match text that has Chinese characters, one written with letters and none only text that
    has letters: each is skipped on text that cannot hold it, since most of a table cannot match a text of
    one language and each pass over the text costs (a pattern whose letters are all optional must have
    another alternative, or be written in a mixed table entry)."""

    def __init__(self, table):
        self.table = [(pattern, written, _needs(pattern.pattern)) for pattern, written in table]

    def __call__(self, text: str) -> str:
        holds = _holds(text)
        for pattern, written, needs in self.table:
            if holds[needs]:
                rewritten = pattern.sub(written, text)
                if rewritten != text:  # a rewrite can bring letters ("2千瓦" -> "2 kW")
                    text, holds = rewritten, _holds(rewritten)
        return text


def _holds(text: str) -> dict[str | None, bool]:
    return {"han": bool(_HAN.search(text)), "letters": bool(_LETTER.search(text)), None: True}


def _needs(pattern: str) -> str | None:
    literal = re.sub(r"\\[A-Za-z]|\(\?[<!=:]+|\[\^?[^\]]*\]", "", pattern)  # escapes, group heads, classes
    han, letters = bool(_HAN.search(literal)), bool(_LETTER.search(literal))
    return "han" if han and not letters else "letters" if letters and not han else None


def _group_pattern(groups, english: bool) -> tuple[re.Pattern[str], dict[str, str]]:
    canon = {phrase: group[0] for group in groups for phrase in group[1:]}
    alternatives = "|".join(re.escape(p) for p in sorted(canon, key=len, reverse=True))
    pattern = rf"(?<![a-z])(?:{alternatives})(?![a-z])" if english else f"(?:{alternatives})"
    return re.compile(pattern), canon


_SAME = Rewrites([(pattern, lambda m, canon=canon: canon[m.group(0)])
                  for pattern, canon in (_group_pattern(_SAME_EN, True), _group_pattern(_SAME_ZH, False))])
# "once a week", "every month", "monthly", 每周: how often, read as one word each
# how often, read as one word: "once a week", "every week", "weekly", 每周 -> "every1wk"; "every 3 months",
# 每三个月 -> "every3mo" (another such word in the evidence is a rival)
_PERIODS = {"day": "d", "days": "d", "week": "wk", "weeks": "wk", "fortnight": "2wk", "month": "mo", "months": "mo",
            "year": "yr", "years": "yr", "天": "d", "日": "d", "周": "wk", "星期": "wk", "个星期": "wk", "月": "mo",
            "个月": "mo", "年": "yr"}
_EVERY_WORD = {"daily": "d", "weekly": "wk", "monthly": "mo", "yearly": "yr", "annually": "yr", "fortnightly": "2wk"}
_FREQUENCY = re.compile(
    r"\b(?:(?:once|one time)\s+(?:a|per|every)|every|each)\s+(?:(\d+|two|three|four|six|twelve)\s+)?"
    r"(days?|weeks?|fortnight|months?|years?)\b|\b(daily|weekly|monthly|yearly|annually|fortnightly)\b|"
    r"每(?:隔)?(\d+|[两三四五六七八九十]+)?(个星期|星期|个月|天|日|周|月|年)(?![一二三四五六日天])", re.I)


def _every(m: re.Match[str]) -> str:
    if m.group(3):
        count, period = "1", m.group(3).lower()
        unit = _EVERY_WORD[period]
        return {"d": " every1d ", "wk": " every7d ", "2wk": " every14d ", "mo": " every1mo ", "yr": " every12mo "}[unit]
    count, period = (m.group(1), m.group(2)) if m.group(2) else (m.group(4), m.group(5))
    n = 1 if count is None else int(count) if count.isdigit() else int(_words_to_number(count) or _cn_to_number(count))
    unit = _PERIODS[period.lower()]
    n, unit = {"2wk": (14 * n, "d"), "wk": (7 * n, "d"), "yr": (12 * n, "mo")}.get(unit, (n, unit))
    return f" every{n}{unit} "  # in days or months: every two weeks is every 14 days


# what denies by its meaning, read as a negation and what it denies ("forbidden" = "not allowed", 禁止 = 不允许),
# and phrasings of one meaning that the word groups below cannot take one word at a time
_DENIALS = Rewrites([(re.compile(r"['’]s\b"), ""),  # "Tavistock Home's line": the possessive says nothing of its own
            (re.compile(r"\b(?:forbidden|prohibited|banned|not permitted)\b"), "not allowed"),
            (re.compile(r"\bnon-?(?=refundable|returnable|transferable|removable|washable|stick)"), "not "),
            (re.compile(r"\b(?:get|give|have) (?:your |their |the )?money back\b|\bmoney back\b"), "refund"),
            (re.compile(r"\bworks? without\b"), "does not need"), (re.compile(r"\b(dishwasher|oven|microwave|freezer)[- ]safe\b"),
                                                                     r"can put in \1"),
            (re.compile(r"\b(?:place|placed|placing|go|goes|putting)\b(?=\s+(?:[\w-]+\s+){0,8}?(?:in|into)\s+the\s+"
                        r"(?:dishwasher|oven|microwave|freezer)\b)"), "put"),
            (re.compile(r"\bavoid(?:s|ing)?\b"), "do not"),
            (re.compile(r"\b(?:at least|or more|minimum of|no less than|not less than)\b"), " least "),
            (re.compile(r"\bwithout (?:a |any )?(?:fee|charge|cost)\b|\bno (?:fee|charge)\b|\bfee-free\b"), " free "),
            (re.compile(r"\b(?:have|has|had) to\b"), " need "),
            (re.compile(r"\b(?:starting|beginning|counting|valid) from\b|\bas of\b"), " from "),
            (re.compile(r"\b(?:up to|at most|no more than|not more than|maximum of|maximum|max\.?|not exceed|do not exceed)\b"), " most "),
            (re.compile(r"禁用"), "不允许使用"), (re.compile(r"禁止|严禁|不准|不得|谢绝|不接受"), "不允许"), (re.compile(r"切勿|请勿|不要|勿|避免"), "不"),
            (re.compile(r"至少|以上|不少于|不低于|起码"), "以上"), (re.compile(r"最多|不超过|不高于|以内|以下|最高"), "以内"),
            (re.compile(r"\b(?:closed|shut)\b"), "not open"), (re.compile(r"(?<![点\d:])(?:闭馆|关门|停业|歇业|休息)"), "不开门"),
            (re.compile(r"周一至周日|周一到周日|每周七天|全年无休|7 days a week|seven days a week"), " every1d "),
            (re.compile(r"重(?=\s*[\d一二两三四五六七八九十]|\s)"), "重量"),  # 重1.3公斤: it weighs (its figure blanked)
            (re.compile(r"(?<=\s)开(?=\s*(?:[，,；;。]|$))"), "发车"),  # a timetable's "07:40 开": departs
            (re.compile(r"[这那该此各][台款个件部只位名种项套]"), " ")])  # "this one": no content


def canonical(text: str) -> str:
    """`text` lower-cased with each phrase of a same-meaning group read as the group's word."""
    text = normalise(text).lower().replace("–", "-").replace("—", "-")
    return _SAME(_DENIALS(text))


# --- English word forms: a light stemmer, for what a sentence's grammar changes --------------------------

def stem(word: str) -> str:
    """"stored", "stores", "storing" -> "stor"; "washable" -> "wash"; cut to six letters as the calibration's
    words are."""
    if word.endswith("ies") and len(word) > 4:
        return (word[:-3] + "y")[:6]
    if word in _SHORT_FORMS:  # too short for the suffix rule: "must not be used" is "do not use"
        return _SHORT_FORMS[word]
    for suffix in ("able", "ible", "ings", "ing", "ed", "es", "s", "ly"):  # "settings" is "setting"
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word[:6]


_SHORT_FORMS = {"used": "use", "using": "use", "fully": "full"}  # "charges fully" is a "full charge"

# English words too common to say what a claim is about, besides the calibration's stop words
STOP_EXTRA = frozenset("""between from until till during within after before about around approximately also just any some can
could will would should may might must do does did so such very more into onto them while when which whose there
here then once still yet both get gets got""".split())

# Chinese characters too common to say what a claim is about (particles, copulas, measure words, modal
# verbs); the plain reading compares the rest one by one, so that word order and compounds do not matter
STOP_CHARS = frozenset("的了是在为有和与及或也都就这那个将于把被对从到以可能会要让使之其该此请即则而并且等着过吗呢吧啊"
                       "一每所者得地们您你我他她它们已还更最很里")

# --- rivals: words of one closed set, where the claim has another ----------------------------------------


@dataclass(frozen=True)
class RivalSet:
    name: str
    words: frozenset[str]  # canonical English stems, or Chinese words
    label: str  # what a rival means: "contradicts" (the same thing said otherwise) or "none" (another thing)


def _set(name: str, label: str, english: str, chinese: str = "") -> RivalSet:
    words = {stem(w) for w in english.split()} | set(chinese.split())
    return RivalSet(name, frozenset(words), label)


RIVAL_SETS = [
    _set("colour", "contradicts", "red green blue yellow white black grey gray orange purple pink brown silver gold",
         "红色 绿色 蓝色 黄色 白色 黑色 灰色 橙色 紫色 粉色 银色 金色"),
    _set("day", "contradicts", "monday tuesday wednesday thursday friday saturday sunday weekday weekend mon tue wed thu "
         "fri sat sun",
         "周一 周二 周三 周四 周五 周六 周日 工作日 周末"),
    RivalSet("frequency", frozenset(), "contradicts"),  # "every1wk", "every3mo": read by pattern (rival_words)
    RivalSet("branch", frozenset(), "none"),  # 滨江店, 城北店: by pattern
    _set("side", "contradicts", "left right front back top bottom upper lower inner outer", "左侧 右侧 正面 背面 顶部 底部"),
    _set("direction", "contradicts", "rise rises rose risen grow grows grew grown increase fall falls fell fallen drop "
         "dropped decline decrease higher lower gain gained lose lost", "增长 增加 上升 提高 上涨 下降 减少 降低 下跌 回落"),
    _set("tier", "none", "basic standard pro plus premium lite max mini ultra starter business enterprise family",
         "基础版 标准版 专业版 高级版 旗舰版 青春版 家庭版 企业版 年卡 半年卡 季卡 月卡 周卡 次卡"),
    _set("person", "none", "adult child student senior member", "成人 儿童 学生 老人 会员"),
    _set("role", "none", "mayor council president minister governor board committee chairman ceo founder owner "
         "manager director teacher nurse", "市长 市议会 议会 总统 总理 部长 省长 董事会 委员会 董事长 创始人 校长 院长"),
    _set("measure", "none", "weigh load capacity volume power output input length width height depth diameter span speed "
         "flow pressure cost noise consumption temperature voltage storage memory battery resolution brightness "
         "runtime range revenue profit sales income",
         "重量 自重 载重 承重 装载 容量 功率 电压 电流 长度 宽度 高度 厚度 直径 速度 转速 流量 压力 价格 噪音 油耗 能耗 "
         "温度 亮度 续航 内存 存储 分辨率 洗涤 烘干 收入 利润 营业收入 营业利润 销量"),
]
_RIVAL_ZH = re.compile("|".join(sorted({w for s in RIVAL_SETS for w in s.words if re.match(r"[\u4e00-\u9fff]", w)},
                                       key=len, reverse=True)))


def rival_words(text: str, stems: set[str]) -> dict[str, set[str]]:
    """The rival-set words of a text, by set: English from its stems, Chinese found in the (canonical) text."""
    found: dict[str, set[str]] = {}
    chinese = {m.group(0) for m in _RIVAL_ZH.finditer(text)}
    patterned = {"frequency": {w for w in stems if _EVERY_TOKEN.fullmatch(w)},
                 "branch": {m.group(0) for m in _BRANCH.finditer(text)},
                 "tier": {m.group(0) for m in _TIER_ZH.finditer(text)}}
    for rival in RIVAL_SETS:
        words = (stems | chinese) & rival.words | patterned.get(rival.name, set())
        if words:
            found[rival.name] = words
    return found


_EVERY_TOKEN = re.compile(r"every\d+(?:wk|mo|yr|d)")
_BRANCH = re.compile(r"(?<![本该此各全每这那])[\u4e00-\u9fff]{2}(?:分店|门店|店|校区|院区|分行|支行|营业厅)")
_TIER_ZH = re.compile(r"[\u4e00-\u9fff]{1,2}版(?![本权面图])")


# A Chinese name is a surname before a title (王医生, 陈教授); the same title after another surname is
# another person
SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
TITLED_NAME = re.compile(rf"([{SURNAMES}][\u4e00-\u9fff]{{0,2}}?)(医生|大夫|教授|老师|先生|女士|经理|主任|博士|律师|院长|校长|总监|工程师|师傅)")
# an English name after a title ("Chef Paolo Venn", "Dr. Ana Ruiz"): another name after the same title is
# another person
TITLE_EN = re.compile(r"\b(Chef|Dr|Doctor|Professor|Prof|Mr|Mrs|Ms|Miss|Captain|Judge|Coach|Director|Manager|Nurse)"
                      r"\.?\s+((?:[A-Z][a-z]+)(?:\s+[A-Z][a-z]+)?)")

# --- times of day ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Time:
    minutes: int  # after midnight
    marked: bool  # am/pm, 24-hour form or 上午/下午 given: not 12 hours either way
    start: int
    end: int

    def same(self, other: Time) -> bool:
        if self.minutes == other.minutes:
            return True
        if self.marked and other.marked:
            return False
        return (self.minutes + 720) % 1440 == other.minutes or (other.minutes + 720) % 1440 == self.minutes


_TIME_EN = re.compile(r"(?<![\d:.])(\d{1,2})(?:[:.](\d{2}))?\s*(a\.?\s?m\.?|p\.?\s?m\.?)(?![a-z])"  # "6.30 pm" too
                      r"|(?<![\d:.])(\d{1,2}):(\d{2})(?![\d:])(?!\s*[ap]\.?m)|\b(noon|midday|midnight)\b")
# the minutes may stand apart when 分 says what they are ("5 点 50 分"); 七点零五分 is 7:05
_TIME_ZH = re.compile(r"(凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里)?\s*(\d{1,2}|十[一二]?|[一二两三四五六七八九十])\s*[点时]"
                      r"(半|一刻|(\d{1,2}|[零一二三四五六七八九十]{1,3})分?|\s+(?=[\d一二三四五六七八九十]{1,3}\s*分)"
                      r"(?:(\d{1,2}|[一二三四五六七八九十]{1,3})\s*分))?")
_AFTERNOON = ("下午", "傍晚", "晚上", "夜里")


# between the two ends of a range of times: "9:00–17:00", "from 9 am to 6 pm", 两点到五点
_RANGE = re.compile(r"\s*(?:-|–|—|~|到|至|to|until|till|and)\s*$", re.I)


def ranges(text: str, found: list[Time]) -> list[tuple[Time, Time]]:
    """The ranges of times in `text`: two times with only "to", "–" or 到 between them."""
    return [(a, b) for a, b in zip(found, found[1:]) if _RANGE.match(text[a.end:b.start])]


def times(text: str) -> list[Time]:
    """The times of day in `text` (normalised): "9 am", "6:15 pm", "18:00", "noon", 上午9点, 下午5点半, 6点."""
    found: list[Time] = []
    for m in _TIME_EN.finditer(text):
        if m.group(6):
            found.append(Time(720 if m.group(6) != "midnight" else 0, True, m.start(), m.end()))
        elif m.group(3):
            hour, minute = int(m.group(1)) % 12, int(m.group(2) or 0)
            if m.group(3).startswith("p"):
                hour += 12
            found.append(Time(hour * 60 + minute, True, m.start(), m.end()))
        else:
            hour, minute = int(m.group(4)), int(m.group(5))
            if hour < 24 and minute < 60:
                found.append(Time(hour * 60 + minute, hour >= 13 or m.group(4).startswith("0"), m.start(), m.end()))
    for m in _TIME_ZH.finditer(text):
        raw = m.group(2)
        hour = int(raw) if raw.isdigit() else int(_cn_to_number(raw) or 0)
        if hour is None or hour > 24:
            continue
        written = m.group(4) or m.group(5) or "0"
        minute = (30 if m.group(3) == "半" else 15 if m.group(3) == "一刻" else int(written) if written.isdigit()
                  else int(_cn_to_number(written) or 0))
        part = m.group(1)
        if part in _AFTERNOON and hour < 12:
            hour += 12
        found.append(Time(hour * 60 + minute, part is not None or hour >= 13, m.start(), m.end()))
    return sorted(found, key=lambda t: t.start)


# --- units a spec sheet writes that the guard's quantities do not read -----------------------------------
_UNIT_FORMS = [
    # "a two-year warranty", "20-minute intervals", "a 1.5-litre jar", "a 5-kg bag": the hyphen joins a number
    # to its unit (first, so that the unit is then read as any other)
    (re.compile(r"(?<=[0-9a-z])-(?=(?:year|month|week|day|hour|minute|second|litre|liter|metre|meter|inch)s?\b)"
                r"|(?<=\d)-(?=(?:kg|g|mg|ml|l|mm|cm|km|m|w|kw|v|mah|gb|mb|tb|hz)\b)", re.I), " "),
    (re.compile(r"第一(?=次|班)"), "首"),  # an ordinal, not the number 1: 第一次 is 首次
    (re.compile(r"\bhalf an? (litre|liter|kilo|kilogram|hour|day|mile|metre|meter|minute)\b", re.I), r"0.5 \1"),
    (re.compile(r"半(小时|个小时|公斤|升|米)"), r"0.5\1"),
    (re.compile(r"(?<=\d)\s*兆(?![瓦赫])"), " MB"), (re.compile(r"\btwice a year\b|一年两次|每年两次", re.I), " every6mo "),
    # a currency's code before the number, as its sign ("EUR 12" is €12, as "12 euros" is)
    (re.compile(r"\bEUR\s?(?=\d)"), "€"), (re.compile(r"\bGBP\s?(?=\d)"), "£"), (re.compile(r"\bUSD\s?(?=\d)"), "$"),
    (re.compile(r"\b(?:CNY|RMB)\s?(\d+(?:\.\d+)?)"), r"\1元"), (re.compile(r"[¥￥]\s?(\d+(?:\.\d+)?)"), r"\1元"),
    (re.compile(r"(?<=\d)\s*千瓦时"), " kWh"), (re.compile(r"(?<=\d)\s*瓦时"), " Wh"), (re.compile(r"(?<=\d)\s*千瓦"), " kW"),
    (re.compile(r"(?<=\d)\s*瓦"), " W"), (re.compile(r"(?<=\d)\s*毫安时"), " mAh"), (re.compile(r"(?<=\d)\s*毫升"), " ml"),
    (re.compile(r"(?<=\d)\s*升"), " l"), (re.compile(r"(?<=\d)\s*厘米"), " cm"), (re.compile(r"(?<=\d)\s*毫米"), " mm"),
    (re.compile(r"(?<=\d)\s*英寸"), " inch"),
    # "Screen size: 55 in (139 cm)": inches, where "in" ends the figure ("5 in stock" is not)
    (re.compile(r"(?<=\d) ?in\b(?=\s*(?:\(|[,;|/]|\.(?!\d)|$))"), " inch"),
    (re.compile(r"(?<=\d)\s*(?:persons|people)\b", re.I), " people"),  # "3 persons" are "three people"
    (re.compile(r"(?<=\d)\s*(?:分贝|decibels?\b)"), " dB"),
    (re.compile(r"(?<=\d)\s*度(?![数角])"), " °C"),  # 180度的烤箱: a temperature
    (re.compile(r"(?<=\d)\s*(?:周岁|岁)"), " years of age "), (re.compile(r"(?<=\d)\s*(?:years old|year-old)\b"), " years of age "),
    (re.compile(r"(?<![\d一二三四五六七八九十])一个(?=月|小时|星期)"), "1个"),  # 一个月 is a number of months
    (re.compile(r"(?<=\d)\s*(?:litres|liters|litre|liter|l)\s*(?:/|per\s+)\s*(?:minute|min)\b", re.I), " lpm"),
    (re.compile(r"(?<=\d)\s*(?:l)\s*/\s*分钟|(?<=\d)\s*升每分钟"), " lpm"),
    (re.compile(r"(?<=\d)\s*(?:litres|liters|litre|liter)\b", re.I), " l"),
    (re.compile(r"(?<=\d)\s*(?:公里/小时|公里每小时|千米/小时|千米每小时|km\s*/\s*h|kph|kilometres per hour|kilometers per hour|"
                r"km per hour)", re.I), " km/h"),
    (re.compile(r"(?:每小时|时速)\s*(?:为|是|达到?|可达|约)?\s*(\d+(?:\.\d+)?)\s*(?:公里|千米|km)(?!\s*/)"), r" \1 km/h"),
    (re.compile(r"(?<=\d)\s*(?:平方千米|平方公里|km²|km2|square kilometres|square kilometers|sq km)", re.I), " km2"),
    (re.compile(r"(?<=\d)\s*(?:平方米|m²|square metres|square meters|sq m)(?![a-z])", re.I), " m2"),
    # dimensions: each of "55 x 40 x 20 cm" is in cm
    (re.compile(r"(\d+(?:\.\d+)?)\s*[x×*]\s*(\d+(?:\.\d+)?)\s*[x×*]\s*(\d+(?:\.\d+)?)\s*(mm|cm|m|in|厘米|毫米|米)\b"),
     r"\1 \4 × \2 \4 × \3 \4"),
]

_UNIT_FORMS = Rewrites(_UNIT_FORMS)

# one unit in another's terms: a value in the first is the value times the factor in the second
_BASE = {"kg": ("g", 1000), "t": ("g", 1_000_000), "kw": ("w", 1000), "mw": ("w", 1_000_000), "kwh": ("wh", 1000),
         "l": ("ml", 1000), "km": ("mm", 1_000_000), "m": ("mm", 1000), "cm": ("mm", 10), "h": ("s", 3600),
         "min": ("s", 60), "d": ("s", 86400), "wk": ("d", 7), "yr": ("mo", 12), "tb": ("gb", 1000), "gb": ("mb", 1000),
         "ah": ("mah", 1000)}
# sizes of data are written in both steps: 4 GB is 4,096 MB on one sheet and 4,000 MB on another
BINARY = {"tb": ("gb", 1024), "gb": ("mb", 1024)}


def in_base(value: float, unit: str | None,
            steps: dict[str, tuple[str, int]] | None = None) -> tuple[float, str | None]:
    """`value` of `unit` in the smallest unit it is measured in here: 1.15 kg -> 1150 g, 2 kW -> 2000 W, two
    years -> 24 months; with `steps` (BINARY), those steps instead of the base's."""
    while unit in _BASE:
        unit, factor = (steps or {}).get(unit) or _BASE[unit]
        value *= factor
    return value, unit


# --- durations said in two parts, days written short, a range of dates written short --------------------
_CN_COUNT = r"\d+|[一二两三四五六七八九十]+"
_EN_COUNT = r"\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_EN_PERIOD = r"(hours?|days?|weeks?|months?|years?|minutes?)"


def _count(word: str) -> float:
    if word.lower() in ("a", "an"):
        return 1.0
    return float(word) if word.isdigit() else float(_words_to_number(word.lower()) or _cn_to_number(word) or 0)


def _minutes(hours: str, minutes: str, unit: str) -> str:
    return f"{60 * _count(hours) + _count(minutes):g}{unit}"


_DAY = {"Mon": "Monday", "Tue": "Tuesday", "Wed": "Wednesday", "Thu": "Thursday", "Fri": "Friday", "Sat": "Saturday",
        "Sun": "Sunday"}
_DURATIONS = [
    # 三个半小时 is 3.5 hours, 两年半 2.5 years, 2小时15分钟 135 minutes, 一刻钟 15 minutes
    (re.compile(rf"({_CN_COUNT})个半(?:小时|钟头)"), lambda m: f"{_count(m.group(1)) + 0.5:g}小时"),
    (re.compile(rf"({_CN_COUNT})个半月"), lambda m: f"{_count(m.group(1)) + 0.5:g}个月"),
    (re.compile(rf"({_CN_COUNT})年半"), lambda m: f"{_count(m.group(1)) + 0.5:g}年"),
    (re.compile(rf"({_CN_COUNT})个?(?:小时|钟头)零?({_CN_COUNT})分(?:钟)?"),
     lambda m: _minutes(m.group(1), m.group(2), "分钟")),
    (re.compile(r"一刻钟"), "15分钟"), (re.compile(r"三刻钟"), "45分钟"),
    # 两 is 2 before a duration, as 两年 already reads (两小时, 两个小时)
    (re.compile(r"(?<![一二三四五六七八九十百千万\d])两(?=个?(?:小时|钟头|分钟|天|周|星期|月|年))"), "2"),
    (re.compile(r"(?<=\d)个(?=小时|钟头)"), ""),  # 2个小时 is 2小时
    # "an hour and a half", "two and a half years", "1 hour 30 minutes", "a quarter of an hour"
    (re.compile(r"\b(?:an|one|1) hour and a half\b", re.I), "1.5 hours"),
    (re.compile(rf"\b({_EN_COUNT}) {_EN_PERIOD} and a half\b", re.I),
     lambda m: f"{_count(m.group(1)) + 0.5:g} {m.group(2).rstrip('s')}s"),
    (re.compile(rf"\b({_EN_COUNT})(?: |-)and(?: |-)a(?: |-)half {_EN_PERIOD}", re.I),
     lambda m: f"{_count(m.group(1)) + 0.5:g} {m.group(2).rstrip('s')}s"),
    (re.compile(r"\b(\d+)\s*(?:hours?|hrs?|h)\s*(?:and\s+)?(\d+)\s*(?:minutes?|mins?)\b", re.I),
     lambda m: _minutes(m.group(1), m.group(2), " minutes")),
    (re.compile(r"\bthree[- ]quarters? of an hour\b|\bthree[- ]quarter[- ]hours?\b", re.I), "45 minutes"),
    (re.compile(r"\b(?:a |one )?quarter of an hour\b|\bquarter[- ]hour\b", re.I), "15 minutes"),
    (re.compile(r"\ba fortnight\b", re.I), "two weeks"),
    # days written short: Tue & Thu, Mon–Fri; 星期六 and 礼拜六 are 周六
    (re.compile(r"\b(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri)\b\.?"), lambda m: _DAY[m.group(1)[:3]]),
    (re.compile(r"\b(Sat|Sun)\b\.?(?=\s*[&,/–—-])|(?<=[&,/–—-])\s*\b(Sat|Sun)\b\.?"),
     lambda m: " " + _DAY[(m.group(1) or m.group(2))[:3]]),
    (re.compile(r"(?:星期|礼拜)([一二三四五六日天])"), r"周\1"), (re.compile(r"周天"), "周日"),
    # a range of dates whose second end leaves out the month: 6月3日至9日 is 6月3日至6月9日
    (re.compile(r"(\d{1,2})月(\d{1,2})[日号]?\s*(至|到|-|–|—|~)\s*(\d{1,2})[日号]"), r"\1月\2日\3\1月\4日"),
]
_DURATIONS = Rewrites(_DURATIONS)


def unit_forms(text: str) -> str:
    """`text` with the unit forms above written as the quantities reader reads them, durations in two parts as
    one, days in full, and how often as one word."""
    return _UNIT_FORMS(_FREQUENCY.sub(_every, _DURATIONS(text)))
