"""Speaker names from the transcript: self-introductions ("This is Anna", "I'm Tom", "我是王芳")
and, where nobody introduced themself, how the others address a speaker ("王老师，您看呢？",
"Anna, what do you think?").

Self-introduction: only a speaker's own words name that speaker: "my name is X", "I'm X" /
"I am X" where X is a capitalized word that ends the clause, "this is X" at the start of a turn
or after a greeting; in Chinese "我叫X" and "我是X" where X starts with a common surname. Each
speaker takes the name most of their introductions give; a name two speakers claim goes to
the one who says it more often (ties: to nobody).

Address: a name in vocative position names another speaker, never the one saying it: in Chinese
a surname + title ("王老师", "李医生", "张经理") at the start of a clause or after a greeting or
thanks and followed by a clause break or 您/你; in English a capitalized name after a greeting or
thanks ("Thanks, Anna."), ending a sentence after a comma ("What do you think, Anna?"), or
opening a sentence that is a question ("Anna, what do you think?"). The addressee is the next
other speaker; when the previous other speaker is someone else, only a question to the next
speaker counts (a "Thanks, Anna." between two others is ambiguous). A speaker takes an address
name when at least two thirds of the addresses to them agree on it, they never use it to address
someone else, and no other speaker introduced themself with it; self-introduction wins.

>>> introduced_names("Hi, this is Anna from the sales team.", "en")
['Anna']
>>> introduced_names("I'm sorry, I'm Not sure.", "en")
[]
>>> introduced_names("大家好，我是王芳。", "zh")
['王芳']
>>> introduced_names("我是学生。", "zh")
[]
>>> addressed_names("谢谢王老师，那我们开始吧。", "zh"), addressed_names("他是王老师。", "zh")
(['王老师'], [])
>>> addressed_names("Okay, what do you think, Anna?", "en"), addressed_names("Well, I agree.", "en")
(['Anna'], [])
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


# Vocatives. Titles: longer first, so "张总监" is not read as "张总" + "监".
_TITLES = (
    "老师|医生|大夫|总监|经理|主任|教授|先生|女士|小姐|老板|律师|师傅|队长|部长|局长|院长|校长|护士|博士|阿姨|叔叔|总"
)
_ZH_ADDRESS = re.compile(
    # greetings taken greedily, so "，谢谢王老师" does not read the surname 谢 as the name's start
    r"(?:谢谢|感谢|您好|你好|好的|请问|那么?|嗯|哎|喂|^|[，。！？,.!?、；;：:\s])+"
    r"([" + _SURNAMES + r"][\u4e00-\u9fff]{0,2}?(?:" + _TITLES + r"))(?=[，。！？,.!?、；;\s]|$|您|你|好)"
)
_VOC = r"((?:(?:Dr|Mr|Mrs|Ms|Professor)\.?\s)?[A-Z][a-z]+)"
_GREET = r"(?i:hi|hello|hey|thanks|thank you|good morning|good afternoon|good evening|welcome|bye|goodbye|sorry)"
_EN_ADDRESS = (
    re.compile(r"\b" + _GREET + r",?\s+" + _VOC + r"(?=\s*[,.!?]|$)"),  # "Thanks, Anna." "Hello Anna,"
    re.compile(r",\s+" + _VOC + r"\?"),  # "What do you think, Anna?"
    re.compile(r"(?:^|[.!?]\s+)" + _VOC + r",\s[^.!?]*\?"),  # "Anna, what do you think?"
)
# Capitalized words in those positions that are not names ("Okay, what now?", "Thanks, Sir.").
_NOT_VOCATIVES = _NOT_NAMES | frozenset(
    [
        "Well",
        "Yes",
        "Yeah",
        "No",
        "Now",
        "Then",
        "Please",
        "Sir",
        "Madam",
        "Mom",
        "Dad",
        "Everyone",
        "Everybody",
        "Guys",
        "Folks",
        "Team",
        "Doctor",
        "Thanks",
        "Today",
        "Tomorrow",
        "Yesterday",
        "Honestly",
        "Anyway",
        "Listen",
        "Look",
        "Wait",
        "Hmm",
        "Um",
        "Uh",
        "Oh",
        "Ah",
        "Hey",
        "Hi",
        "Hello",
        "Alright",
        "Exactly",
        "And",
        "But",
        "Or",
        "You",
        "We",
        "They",
        "He",
        "She",
        "Right",
        "Again",
        "Too",
        "Both",
        "Sorry",
        "Seriously",
        "Why",
        "How",
        "Who",
        "Where",
        "When",
        "Which",
        "Please",
        "Buddy",
        "Man",
        "Dude",
    ]
)


def addressed_names(text: str, lang: str) -> list[str]:
    """Names a speaker calls someone else by in one turn (vocatives)."""
    text = text or ""
    out = [m.group(1) for m in _ZH_ADDRESS.finditer(text)]
    if lang != "zh":
        for pat in _EN_ADDRESS:
            out.extend(n for n in (m.group(1) for m in pat.finditer(text)) if n.split()[-1] not in _NOT_VOCATIVES)
    return out


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


def _lang(lang: str | None) -> str:
    return (lang or "").split("-")[0].lower()


def speaker_self_names(turns: Iterable[tuple[str, str, str]]) -> dict[str, str]:
    """{speaker: name} from (speaker, text, language) turns; speakers without one are left out."""
    votes: dict[str, Counter] = defaultdict(Counter)
    for spk, text, lang in turns:
        for name in introduced_names(text, _lang(lang)):
            votes[spk][name] += 1
    return _unique(votes)


def _unique(votes: dict[str, Counter]) -> dict[str, str]:
    """Each speaker's most voted name; a name two speakers hold goes to the one with more votes."""
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


def _addressee(turns: list[tuple[str, str, str]], i: int) -> str | None:
    """Whom turn i speaks to: the next other speaker when that is also the previous one (or there
    is no previous one), or when the turn asks a question; the previous one at the recording's end."""
    me = turns[i][0]
    nxt = next((t[0] for t in turns[i + 1 :] if t[0] != me), None)
    prv = next((t[0] for t in reversed(turns[:i]) if t[0] != me), None)
    if nxt is None or prv in (None, nxt):
        return nxt or prv
    return nxt if turns[i][1].rstrip().endswith(("?", "？")) else None


def speaker_address_names(turns: list[tuple[str, str, str]], taken: dict[str, str] | None = None) -> dict[str, str]:
    """{speaker: name} from how the others address them; `taken` (self-introductions) wins: those
    speakers and names are not given again."""
    taken = taken or {}
    votes: dict[str, Counter] = defaultdict(Counter)
    used_by: dict[str, set[str]] = defaultdict(set)  # names a speaker calls others by
    for i, (spk, text, lang) in enumerate(turns):
        names = set(addressed_names(text, _lang(lang)))
        used_by[spk] |= names
        to = _addressee(turns, i) if len(names) == 1 else None  # two names: a group, ambiguous
        if to is not None:
            votes[to][names.pop()] += 1
    agreed: dict[str, Counter] = {}
    for spk, c in votes.items():
        for name in used_by[spk] | set(taken.values()):
            c.pop(name, None)
        if spk in taken or not c:
            continue
        name, n = c.most_common(1)[0]
        if 3 * n >= 2 * sum(c.values()):  # two thirds of the addresses agree
            agreed[spk] = Counter({name: n})
    return _unique(agreed)


def speaker_names_from_text(turns: Iterable[tuple[str, str, str]]) -> dict[str, str]:
    """Self-introduced names, then address names for the speakers still without one."""
    turns = list(turns)
    given = speaker_self_names(turns)
    return {**speaker_address_names(turns, given), **given}
