"""Tell claims from abstentions ("the sources do not say...") and from other text (greetings, headings).

The rules are deliberately narrow: a statement that is not recognised stays a claim, so that it is
checked rather than silently skipped. Callers can override any statement's kind
(``parse_answer(..., kinds={2: "other"})``).

* abstention: the answer says the sources (documents, passages, archive, context, search results)
  do not contain, mention or say something, that there is no information on it, that it is not
  documented/specified, or that the assistant could not find it. Chinese: 档案中没有…, 资料未提及…,
  来源没有说明…, 我没有找到…, 未找到相关信息…, 暂无相关资料…, 根据现有资料无法确定…
* other, only for a statement with no citations:
  - a greeting or filler: "Hi!", "Sure, here is…", "Here are the main points:", "I hope this helps",
    "Let me know if…", Chinese 你好, 希望对你有帮助…;
  - a heading: a Markdown heading ("# Title"), a line that is all bold ("**Title**"), or a short
    line (at most 8 words, or 20 characters of Chinese) standing alone, not a list item, without
    final punctuation and (English) without an auxiliary verb ("Eco is efficient" stays a claim);
  - a lead-in that ends with a colon ("The main causes are:"), or with a colon and the number of
    the list's first item cut off with it ("…the following tests: 1.");
  - a statement without a single letter (a stray "." or "2." left between citation markers).
"""

from __future__ import annotations

import re

_SOURCES = (
    r"(?:provided |given |available |cited |retrieved |supplied |above |these |those |my )?"
    r"(?:sources?|documents?|passages?|context|archives?|search results?|texts?|"
    r"materials?|references?|excerpts?|snippets?|information(?: provided| given| available)?|data provided)"
)
_SAY = (
    r"(?:say|state|mention|specify|provide|contain|include|cover|address|discuss|indicate|describe|"
    r"give|offer|report|document|list|detail|explain|clarify|disclose|reveal)"
)
_EN_ABSTENTION = re.compile(
    "|".join(
        [
            # the sources do not say / did not mention / don't specify
            rf"\b{_SOURCES}\b[^.;]{{0,60}}?\b(?:do|does|did)(?: not|n't|n’t)\b(?: \w+ly)? {_SAY}",
            # the sources say nothing about / make no mention of / are silent on
            rf"\b{_SOURCES}\b[^.;]{{0,40}}?\b(?:says?|mentions?) nothing\b",
            rf"\b{_SOURCES}\b[^.;]{{0,40}}?\b(?:makes?|made|gives?|gave) no mention\b",
            rf"\b{_SOURCES}\b[^.;]{{0,40}}?\b(?:is|are|remains?) silent\b",
            # the archive contains no ..., the documents provide no ...
            rf"\b{_SOURCES}\b[^.;]{{0,40}}?\b(?:contains?|contained|includes?|provides?|offers?|gives?|"
            r"has|have|had|holds?) no\b",
            rf"\bnone of the {_SOURCES}\b[^.;]{{0,40}}?\b(?:{_SAY}s?|{_SAY}d|{_SAY}ed)\b",
            # there is no information on ..., no details are given about ...
            r"\bthere (?:is|was|are|were) no (?:specific |further |additional |relevant |explicit )?"
            r"(?:information|mention|details?|data|record)\b",
            r"\bno (?:specific |further |relevant )?(?:information|details?|data) (?:is|are|was|were) "
            r"(?:available|provided|given|included|mentioned)\b",
            r"\b(?:is|are|was|were) not (?:available|provided|given|mentioned|specified|stated|covered|"
            r"addressed|discussed|included) in (?:the|any of the|these|those) (?:provided |given |cited )?"
            r"(?:sources?|documents?|passages?|context|archives?|records?|search results?|texts?|"
            r"materials?)\b",
            # bare "not documented", "not specified", "not stated"
            r"\b(?:is|are|was|were|remains?) not (?:documented|specified|stated|mentioned|disclosed)\b",
            r"\bnot documented\b",
            # I could not find / I was unable to find / I don't have information
            r"\bI (?:could not|couldn't|couldn’t|cannot|can't|can’t|was unable to|am unable to|"
            r"was not able to|wasn't able to|did not|didn't|didn’t) "
            r"(?:find|locate|identify|determine|confirm)\b",
            r"\bI (?:do not|don't|don’t) have (?:enough |sufficient |any |specific )?"
            r"(?:information|data|details)\b",
            r"\b(?:unable|not possible) to (?:find|determine|say|confirm) (?:from|based on|with) the "
            r"(?:provided |given |available )?(?:sources?|documents?|passages?|context|information)\b",
            r"\bbeyond the scope of the (?:provided |given )?(?:sources?|documents?|passages?|context)\b",
        ]
    ),
    re.I,
)

_ZH_SOURCES = r"(?:档案|资料|来源|文档|文件|材料|参考资料|参考文献|文献|检索结果|搜索结果|上下文|记录|原文|所给信息|提供的信息)"
# Chinese: only with a source noun, a first person, or an explicit "no relevant information";
# a bare "未涉及"/"无法确定" is as often a claim ("此项变更未涉及股权变化").
_ZH_ABSTENTION = re.compile(
    "|".join(
        [
            rf"{_ZH_SOURCES}[中里内]?(?:均|都|并|也)?(?:没有|未|並未|并未|无|不包含|没)",
            r"(?:我|笔者|本人)(?:没有|未能|未|无法|没能)(?:找到|查到|检索到|查询到|确定)",
            r"(?:没有|未能|未|无法)(?:找到|查到|检索到|查询到)(?:相关|有关|任何|具体|更多)的?"
            r"(?:信息|资料|内容|记录|说明|数据)",
            r"(?:暂无|没有|缺乏|并无)(?:相关|具体|任何|更多)的?(?:信息|资料|记录|说明|数据)",
            r"根据(?:现有|所给|已有|提供的|给出的)?(?:信息|资料|材料|内容)[^。！？]{0,10}(?:无法|不能)(?:确定|判断|回答|得知)",
        ]
    )
)

_EN_GREETING = re.compile(
    r"^(?:(?:hi|hello|hey|greetings|dear \w+|good (?:morning|afternoon|evening))\b[\s!,.]*"
    r"|(?:sure|certainly|of course|absolutely|okay|ok|great question|good question)\b[\s!,.]*"
    r"(?:here (?:is|are|'s|’s)\b.*)?"
    r"|here (?:is|are|'s|’s) (?:a |an |the |some |what |my )?(?:\w+ )?(?:summary|overview|answer|list|"
    r"breakdown|explanation|information|details|key points|main points|points)\b.*"
    r"|i hope (?:this|that|it) helps\b.*|hope (?:this|that) helps\b.*"
    r"|(?:please )?(?:let me know|feel free)\b.*|is there anything else\b.*"
    r"|thank(?:s| you)(?:\s+(?:for|again|so much)\b.*|[\s!.]*)|you(?:'|’)re welcome\b.*)$",
    re.I,
)
_ZH_GREETING = re.compile(
    r"^(?:(?:你好|您好|嗨)[！!，,。.～~]*$"
    r"|(?:当然|好的|没问题)[！!，,。.]*(?:(?:以下|下面)是.*)?$"
    r"|(?:以下|下面)是[^。！？]*[：:]$"
    r"|希望[^。！？]{0,16}帮助"
    r"|如(?:果)?(?:你|您)?(?:还)?有(?:其他|任何)?(?:问题|疑问)"
    r"|谢谢|感谢(?:你|您))"
)
# A line with one of these is a sentence, not a heading ("Eco is efficient").
_FINITE = frozenset(
    "is are was were has have had can could will would should may might must does do did".split()
)
_BOLD_LINE = re.compile(r"^(\*\*|__)[^*_].*?\1:?$")
_FINAL_PUNCT = tuple(".!?。！？…\"'”’)）")
# A lead-in whose list's first number was cut off with it ("…the following tests: 1.",
# "包括：1、"): the colon follows a word, not a digit ("a ratio of 3: 1." stays a claim).
_LEAD_IN_NUMBERED = re.compile(r"(?<![\d\s])\s*(?::\s+|：\s*)\d{1,2}\s*[.)．、）]?$")
_WORD = re.compile(r"[^\W\d_]")  # a letter of any script


def classify(
    text: str, *, lang: str, cited: bool, prefix: str = "", line_alone: bool = False
) -> str:
    """The kind of one statement: "claim", "abstention" or "other".

    ``text`` is the cleaned statement text, ``prefix`` the list/heading mark stripped from its line,
    ``line_alone`` whether the statement is the whole of its line.
    """
    abstention = _ZH_ABSTENTION if lang == "zh" else _EN_ABSTENTION
    if abstention.search(text):
        return "abstention"
    if cited:
        return "claim"
    greeting = _ZH_GREETING if lang == "zh" else _EN_GREETING
    if greeting.search(text.strip()):
        return "other"
    if prefix.startswith("#") or (line_alone and _BOLD_LINE.match(text)):
        return "other"
    stripped = text.rstrip()
    if stripped.endswith((":", "：")) or _LEAD_IN_NUMBERED.search(stripped):
        return "other"  # a lead-in ("The main causes are:", "…the following tests: 1.") asserts nothing by itself
    if not _WORD.search(stripped):
        return "other"  # punctuation or a stray list number left between markers (".", "2.")
    is_list_item = bool(prefix)
    short = len(stripped) <= 20 if lang == "zh" else len(stripped.split()) <= 8
    verb = lang != "zh" and not _FINITE.isdisjoint(stripped.lower().split())
    if line_alone and not is_list_item and short and not verb and not stripped.endswith(_FINAL_PUNCT):
        return "other"  # a heading line
    return "claim"
