"""Speaker names from self-introductions in the transcript ("This is Anna", "I'm Tom", "我是王芳").

Only a speaker's own words name that speaker: "my name is X", "I'm X" / "I am X" where X is a
capitalized word that ends the clause, "this is X" at the start of a turn or after a
greeting; in Chinese "我叫X" and "我是X" where X starts with a common surname. Each
speaker takes the name most of their introductions give; a name two speakers claim goes to
the one who says it more often (ties: to nobody).

>>> introduced_names("Hi, this is Anna from the sales team.", "en")
['Anna']
>>> introduced_names("I'm sorry, I'm Not sure.", "en")
[]
>>> introduced_names("大家好，我是王芳。", "zh")
['王芳']
>>> introduced_names("我是学生。", "zh")
[]
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable

_NAME = r"([A-Z][a-z]+(?:[ -][A-Z][a-z]+)?)"
_END = r"(?=\s*(?:[,.!?;:]|$|\s(?:and|from|here|speaking|calling|with|at)\b))"
_EN = (
    re.compile(r"\bmy name(?: is|'s)\s+" + _NAME + _END, re.I),
    re.compile(r"\bI(?:'m| am)\s+" + _NAME + _END),
    re.compile(
        r"(?:^|[.!?]\s+|\b(?:hi|hello|hey|yes|yeah|oh|good morning|good afternoon),?\s+)this is\s+" + _NAME + _END, re.I
    ),
)
# Capitalized words that follow "I'm" without being a name.
_NOT_NAMES = frozenset(
    [
        "Sorry",
        "Fine",
        "Here",
        "Sure",
        "Not",
        "Just",
        "Going",
        "Glad",
        "Happy",
        "Ready",
        "Back",
        "Done",
        "Okay",
        "Ok",
        "The",
        "It",
        "That",
        "What",
        "Good",
        "Great",
        "Afraid",
        "Always",
        "Also",
        "Still",
        "So",
        "Very",
        "Really",
        "Actually",
        "Home",
        "Busy",
        "Tired",
        "English",
        "American",
        "British",
        "French",
        "Chinese",
        "German",
        "Spanish",
        "Dutch",
        "Mandarin",
        "Cantonese",
    ]
)
_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈"
    "姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
_ZH = (
    re.compile(r"我叫([\u4e00-\u9fff]{2,3}?)(?=[，。！？,.!?、\s]|$)"),
    re.compile(r"我是([" + _SURNAMES + r"][\u4e00-\u9fff]{1,2}?)(?=[，。！？,.!?、\s]|$)"),
)


def introduced_names(text: str, lang: str) -> list[str]:
    """Names a speaker gives themself in one turn."""
    text = text or ""
    out: list[str] = []
    for pat in _ZH if lang == "zh" else _EN:
        for m in pat.finditer(text):
            name = m.group(1).strip()
            if lang != "zh" and name.split()[0].capitalize() in _NOT_NAMES:
                continue
            out.append(name if lang == "zh" else " ".join(w.capitalize() for w in name.split()))
    if lang != "zh":  # a Chinese turn inside an English recording still names its speaker
        out.extend(n for pat in _ZH for n in (m.group(1) for m in pat.finditer(text)))
    return out


def speaker_self_names(turns: Iterable[tuple[str, str, str]]) -> dict[str, str]:
    """{speaker: name} from (speaker, text, language) turns; speakers without one are left out."""
    votes: dict[str, Counter] = defaultdict(Counter)
    for spk, text, lang in turns:
        for name in introduced_names(text, (lang or "").split("-")[0].lower()):
            votes[spk][name] += 1
    best = {spk: c.most_common(1)[0] for spk, c in votes.items() if c}
    claims: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for spk, (name, n) in best.items():
        claims[name].append((n, spk))
    out: dict[str, str] = {}
    for name, who in claims.items():
        who.sort(reverse=True)
        if len(who) == 1 or who[0][0] > who[1][0]:
            out[who[0][1]] = name
    return out
