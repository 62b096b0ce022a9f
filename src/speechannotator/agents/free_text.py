"""Checks of model-written free text: a caption, a contextual inference, an open label (tone).

Small local models wrote things that read as text but are not descriptions (measured on the
bundled example, docs/agents-llm.md): the prompt's own words copied as the value, the attribute
values strung together, one sentence looped until the length cap cut it, "he" for a woman,
the caption repeated as the contextual inference, every caption opening with the same frame.
Each check here reads the text as text (sentences, words, pronouns) and says what is wrong in a
sentence a relabel request can carry; none of them needs a model. One home also for how a
sentence that quotes the transcript is found (finalize drops such sentences).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..schema import canonical_closed, has_cjk, is_empty_marker
from . import english_form, supported
from .fact_words import FACT_OF, omitted_facts, units
from .levels import levels_disagree, parse_level
from .phrases import phrases

# A sentence ends at . ! ? (or the CJK marks) followed by a space or the end, but not after a
# title or a common abbreviation ("Mr. John Dashwood" is one sentence).
_ABBREV = ("mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "vs", "etc", "e.g", "i.e")
_END = re.compile(r"([.!?…]+[\"'”’)]*)(\s+|$)|([。！？；]+[”’」』）)]*)")
_TERMINAL = re.compile(r"[.!?…。！？][\"'”’)」』）]*$")
# Words a complete English sentence does not end on ("... related to Mr.", "... and the.").
_DANGLING = frozenset(
    re.findall(
        r"\w+",
        "a an the to of and or but with for in on at by from as than that which who whose his her their "
        "its my our your is are was were be",
    )
)

# A composed sentence that repeats this many consecutive transcript words (CJK: characters)
# restates what was said, not how: a claim the evidence does not carry ("The speaker is a robot.").
ECHO_WORDS, ECHO_CHARS = 4, 6
OPENING_UNITS = 4  # words (CJK: characters) that make a caption's opening
COPY_RUN = 5  # consecutive words shared with the instructions that count as copied from them
LIST_SHARE = 0.5  # share of a text's words that are reviewed values copied verbatim: a value list
LIST_CLAUSES = 4  # ... when at least this many value clauses are copied
LIST_NAMES = 3  # field names used as subjects ("the pitch is", "tone:") that make a field list
PHRASE_WORDS, PHRASE_TIMES = 4, 3  # a 4-word phrase said three times is a loop
FACTS_SAME = 0.85  # word overlap (Jaccard) with the voice description that makes a sentence its copy
FACTS_RUN = 14  # consecutive words shared with the voice description given to paraphrase: a copy of it

_FIELD_NAMES = {
    "en": (
        "age",
        "accent",
        "pitch",
        "speed",
        "pace",
        "rhythm",
        "tone",
        "texture",
        "emotion",
        "pronunciation",
        "paralinguistic",
        "environment",
        "background sound",
        "gender",
        "speaker name",
        "voice",  # "the voice is clear and the accent is neutral, ... the feeling is neutral" (the 0.5B)
        "feeling",
    ),
    "zh": ("年龄", "口音", "音高", "语速", "节奏", "语气", "音色", "情绪", "发音", "副语言", "环境", "背景声", "性别"),
}
_GENDER_WORDS = {
    "en": {
        "male": re.compile(r"\b(male|man|men|his|he|him|himself|gentleman|boy)\b", re.I),
        "female": re.compile(r"\b(female|woman|women|her|hers|she|herself|lady|girl)\b", re.I),
    },
    "zh": {"male": re.compile(r"男"), "female": re.compile(r"女")},
}
# The speaker as the subject of a sentence: a leading pronoun, or "the speaker is a ... man".
_SUBJECT = {
    "en": {
        "male": re.compile(
            r"^(he|his)\b|\bspeaker(?:'s)?\s+(?:is|was|,)\s+an?\s+(?:[\w-]+\s+){0,3}(?:man|male)\b", re.I
        ),
        "female": re.compile(
            r"^(she|her)\b|\bspeaker(?:'s)?\s+(?:is|was|,)\s+an?\s+(?:[\w-]+\s+){0,3}(?:woman|female)\b", re.I
        ),
    },
    "zh": {"male": re.compile(r"^他|说话人是.{0,6}男"), "female": re.compile(r"^她|说话人是.{0,6}女")},
}


# Pitch and pace words a text may say, read as a level (-2..2) to set against the reviewed one.
# Comparatives ("higher than usual") are left out: the reviewed pitch may say that too.
_PITCH_SAID = re.compile(r"\b(?:(very|quite|rather|fairly)\s+)?(high|low)(?:(?:ly)?[- ]pitched|\s+pitch)\b", re.I)
_SPEED_SAID = re.compile(
    r"\b(?:(very|quite|rather|fairly)\s+)?(fast|quick|quickly|rapid|rapidly|hurried|hurriedly|brisk|briskly|"
    r"slow|slowly|sluggish)\b",
    re.I,
)
_SLOW_WORDS = ("slow", "slowly", "sluggish")


_EMOTION_FORM = re.compile(r"^[\w-]+\s*[(（][^()（）]*[)）]$")


def sentences(text: str) -> list[str]:
    """The sentences of `text`, each with its end mark; a title ("Mr.") does not end one."""
    out, start = [], 0
    for m in _END.finditer(text or ""):
        if m.group(1):
            words = re.findall(r"[\w.]+", text[start : m.start(1)].lower())
            if words and words[-1].rstrip(".") in _ABBREV and m.group(1) == ".":
                continue
        end = m.end(1) if m.group(1) else m.end(3)
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = m.end()
    rest = (text or "")[start:].strip()
    if rest:
        out.append(rest)
    return out


def _grams(seq: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(seq[i : i + n]) for i in range(len(seq) - n + 1)}


def _names(transcript: str) -> set[str]:
    """Words the transcript capitalizes inside a sentence (names, titles: "Mr. John Dashwood")."""
    out = set()
    for sent in sentences(transcript):
        words = re.findall(r"[\w']+", sent)
        out.update(w.lower() for w in words[1:] if w[:1].isupper())
    return out


def quotes_transcript(sentence: str, transcript: str) -> bool:
    """Whether `sentence` repeats ECHO_WORDS consecutive transcript words (CJK: ECHO_CHARS), at
    least two of them not names: "talking about Mr. John Dashwood" names a person, it does not
    restate the turn (the 1.5B's caption was refused three times for it)."""
    said = units(transcript)
    n = ECHO_CHARS if has_cjk(transcript or "") else ECHO_WORDS
    names = set() if has_cjk(transcript or "") else _names(transcript)
    spans = {g for g in _grams(said, n) if sum(w not in names for w in g) >= 2}
    return bool(spans) and bool(_grams(units(sentence), n) & spans)


def without_transcript_claims(text: str, transcript: str) -> str:
    """`text` without the sentences that copy a span of the transcript."""
    if not units(transcript):
        return text
    sep = "" if has_cjk(text or "") else " "
    return sep.join(s for s in sentences(text) if not quotes_transcript(s, transcript)).strip()


def opening(text: str) -> str:
    """A caption's opening: its first OPENING_UNITS words (CJK: characters), normalized."""
    first = units(text)[:OPENING_UNITS]
    return ("" if has_cjk(text or "") else " ").join(first)


def _same(a: str, b: str) -> bool:
    """Two sentences that say the same: equal words, or nearly (Jaccard >= 0.8 over 5+ words)."""
    ua, ub = units(a), units(b)
    if not ua or not ub:
        return False
    if ua == ub:
        return True
    sa, sb = set(ua), set(ub)
    return min(len(ua), len(ub)) >= 5 and len(sa & sb) / len(sa | sb) >= 0.8


@dataclass(frozen=True)
class TextFacts:
    """What a text is checked against: the reviewed values, the turn and the instructions."""

    values: dict[str, str]
    lang: str = "en"
    transcript: str = ""
    instructions: str = ""  # the prompt text the model was given, without the data block
    caption: str | None = None  # the caption written beside a contextual inference
    used_openings: tuple[str, ...] = field(default_factory=tuple)  # earlier captions' openings
    neighbours: tuple[str, ...] = field(default_factory=tuple)  # the neighbouring turns' transcripts
    reviewed: str = ""  # the voice description the model was given to paraphrase (agents/facts.py)
    distinctive: tuple[str, ...] = ()  # its distinctive facts (agents/facts.py `distinctive_facts`)
    earlier: tuple[str, ...] = ()  # the recording's earlier captions, in time order
    turn_before: bool | None = None  # whether the turn has an earlier neighbour (None: not known)
    turn_after: bool | None = None  # ... a later one


def copied_instructions(text: str, instructions: str) -> bool:
    """The text is the instructions' own words: all of it (3+ words) found in them, or a run of
    COPY_RUN consecutive words shared with them."""
    mine, theirs = units(text), units(instructions)
    if len(mine) < 3 or not theirs:
        return False
    joined = " ".join(theirs)
    if " ".join(mine) in joined:
        return True
    return bool(_grams(mine, COPY_RUN) & _grams(theirs, COPY_RUN))


def value_list(text: str, values: dict[str, str], lang: str, *, clauses: bool = True) -> bool:
    """The reviewed values strung together rather than described: field names as subjects
    ("the pitch is ..., the tone is ..."), or (`clauses`) most of the text their clauses copied
    verbatim. A model given the voice description instead of the values says its words again
    (copied_description reads that)."""
    low = (text or "").lower()
    if lang == "zh":
        named = sum(1 for n in _FIELD_NAMES["zh"] if re.search(rf"{n}(为|是|：|:)", low))
    else:
        named = sum(
            1 for n in _FIELD_NAMES["en"] if re.search(rf"\b(the |their |his |her )?{n}( is| was|:| are)\b", low)
        )
    if named >= LIST_NAMES or re.search(r"\b\w+\d+_\w+", text or ""):  # an internal name (Speaker2_middle-aged)
        return True
    words = units(text)
    if not words or not clauses:
        return False
    found = {
        c.strip().lower()
        for f, v in values.items()
        if f != "speaker_name" and isinstance(v, str) and not is_empty_marker(v)
        for c in re.split(r"[，,；;。.()（）]", v)
        if len(units(c)) >= 2
    }
    hits = [c for c in found if c in low]
    copied = sum(len(units(c)) for c in hits)
    return len(hits) >= LIST_CLAUSES and copied / len(words) >= LIST_SHARE


def repeated_sentence(text: str) -> str | None:
    """A sentence said twice within the text (the 0.5B looped one until the length cap), or a
    phrase of PHRASE_WORDS words said PHRASE_TIMES times ("... making amiable himself" x6)."""
    seen: list[str] = []
    # Clauses too: the 0.5B wrote "...; her voice is slightly hoarse and medium in pitch; the young
    # woman sounds happy; her voice is slightly hoarse and medium in pitch."
    for sent in sentences(text):
        clauses = [c.strip() for c in re.split(r"[;:]", sent)]
        for s in [c for c in clauses if len(units(c)) >= 4] if len(clauses) > 1 else [sent]:
            if any(_same(s, t) for t in seen):
                return s
            seen.append(s)
    words = units(text)
    counts: dict[tuple[str, ...], int] = {}
    for i in range(len(words) - PHRASE_WORDS + 1):
        gram = tuple(words[i : i + PHRASE_WORDS])
        counts[gram] = counts.get(gram, 0) + 1
        if counts[gram] >= PHRASE_TIMES:
            return " ".join(gram)
    return None


def repeats_caption(inference: str, caption: str | None) -> str | None:
    """The contextual-inference sentence that is a caption sentence, or None."""
    for s in sentences(inference):
        if caption and any(_same(s, c) for c in sentences(caption)):
            return s
    return None


def cut_off(text: str, lang: str) -> bool:
    """The text stops mid-sentence: no end mark, or it ends on a title or a function word."""
    t = (text or "").strip()
    if not t:
        return True
    if not _TERMINAL.search(t):
        return True
    if lang == "zh" or has_cjk(t):
        return False
    last = re.findall(r"[\w']+", t.lower())
    return bool(last) and (last[-1] in _DANGLING or last[-1] in _ABBREV)


def gender_conflict(text: str, values: dict[str, str], lang: str, field_name: str) -> str | None:
    """The reviewed gender the text contradicts: a caption that names only the other gender, or
    a sentence whose subject is the speaker under the other gender's pronoun or noun."""
    gender = canonical_closed("gender", values.get("gender"))
    if gender not in ("male", "female"):
        return None
    other = "female" if gender == "male" else "male"
    key = "zh" if lang == "zh" else "en"
    words = _GENDER_WORDS[key]
    if field_name == "caption" and words[other].search(text) and not words[gender].search(text):
        return other
    if any(_SUBJECT[key][other].search(s) for s in sentences(text)):
        return other
    return None


def _near_copy(a: str, b: str) -> bool:
    """Nearly the same words (Jaccard >= FACTS_SAME over 5+ words): a copy with a word changed."""
    sa, sb = set(units(a)), set(units(b))
    return min(len(sa), len(sb)) >= 5 and len(sa & sb) / len(sa | sb) >= FACTS_SAME


def copied_description(text: str, reviewed: str) -> bool:
    """The text restates the given voice description word for word: a sentence the same as it, or
    a run of FACTS_RUN consecutive words shared with it."""
    if not units(reviewed):
        return False
    if any(_near_copy(s, reviewed) for s in sentences(text)):
        return True
    return bool(_grams(units(text), FACTS_RUN) & _grams(units(reviewed), FACTS_RUN))


def glued_word(text: str, sources: Iterable[str]) -> str | None:
    """A word that is two consecutive words of a source run together ("hoarsevoice" for "hoarse
    voice"): llama.cpp's DRY sampler penalizes a repeat of the prompt's words, and the 0.5B then
    wrote the next word without its space rather than another word."""
    pairs = {a + b: f"{a} {b}" for src in sources for a, b in zip(units(src), units(src)[1:])}
    for w in units(text):
        if len(w) >= 6 and w in pairs:
            return w
    return None


def _raw_pairs(sources: Iterable[str]) -> dict[str, str]:
    """{"hoarsevoice": "hoarse voice"}: consecutive word pairs of the sources, joined -> as written."""
    out: dict[str, str] = {}
    for src in sources:
        words = re.findall(r"[^\W\d_][\w'-]*", src or "")
        for a, b in zip(words, words[1:]):
            out.setdefault((a + b).lower(), f"{a} {b}")
    return out


INFERENCE_SENTENCES = 2  # what the prompt asks a contextual inference for (the 1.5B wrote 3-4)


def repaired(text: str, facts: TextFacts, most_sentences: int | None = None) -> str:
    """What can be mended without asking again: sentences that copy the instructions dropped when
    others remain (the 0.5B appended the checker's reason to its rewrite), a last sentence the
    length cap cut off dropped when complete ones come before it (the 1.5B's inferences ran to
    three or four sentences and the schema's maxLength stopped them mid-word), and two words of
    the description or the transcript that DRY ran together written apart again ("hoarsevoice");
    with `most_sentences`, the first that many (the 1.5B's third and fourth sentences of an
    inference strayed furthest from the turns)."""
    said = sentences(text)
    kept = [s for s in said if not copied_instructions(s, facts.instructions)]
    if len(kept) > 1 and not _TERMINAL.search(kept[-1]):
        kept = kept[:-1]
    if most_sentences:
        kept = kept[:most_sentences]
    if kept and kept != said:
        text = ("" if has_cjk(text) else " ").join(kept)
    if facts.lang == "zh" or has_cjk(text):
        return text
    pairs = _raw_pairs((facts.reviewed, facts.transcript, *facts.neighbours))

    def apart(m: re.Match) -> str:
        return pairs.get(m.group(0).lower(), m.group(0)) if len(m.group(0)) >= 6 else m.group(0)

    return re.sub(r"[^\W\d_][\w'-]*", apart, text)


def foreign_script(text: str, transcript: str) -> str | None:
    """A run of CJK characters in a text meant to be English, unless the transcript has it.

    The 1.5B wrote "standard American英语" (docs/agents-llm.md): its Chinese pretraining leaks into
    English text, and no other check reads scripts.

    >>> foreign_script("A woman speaks standard American英语 at a slow pace.", "Hello.")
    '英语'
    >>> foreign_script("A woman speaks standard American English at a slow pace.", "Hello.") is None
    True
    """
    for run in re.findall(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]+", text or ""):
        if run not in (transcript or ""):
            return run
    return None


def names_speaker(text: str, values: dict[str, str], lang: str) -> bool:
    """Whether the text names the reviewed gender (a noun or pronoun of it): a caption says who speaks."""
    gender = canonical_closed("gender", values.get("gender"))
    if gender not in ("male", "female"):
        return True
    return bool(_GENDER_WORDS["zh" if lang == "zh" else "en"][gender].search(text or ""))


def level_disagreement(text: str, values: dict[str, str], lang: str) -> tuple[str, str] | None:
    """(the words said, the reviewed level phrase) when the text calls the pitch or the pace
    something the reviewed value is not: low for a medium or high pitch, fast for a moderate pace
    (the review's own rule: the other side of medium, or two levels away; agents/levels.py)."""
    if lang == "zh":
        return None  # the Chinese level words are read by the review's parse tables only
    P = phrases(lang)
    for name, said_re, parse, table in (
        ("pitch", _PITCH_SAID, P.PITCH_PARSE, P.PITCH_LEVEL),
        ("speed", _SPEED_SAID, P.SPEED_PARSE, P.SPEED_LEVEL),
    ):
        reviewed = parse_level(str(values.get(name) or "").split(",")[0], parse)
        if reviewed is None:
            continue
        for m in said_re.finditer(text or ""):
            word = m.group(2).lower()
            side = -1 if word in ("low", *_SLOW_WORDS) else 1
            said = side * (2 if m.group(1) and m.group(1).lower() == "very" else 1)
            if levels_disagree(reviewed, said):
                return m.group(0), table[reviewed]
    return None


def transcript_name(text: str, transcript: str, values: dict[str, str]) -> str | None:
    """A name from the transcript in the text ("Mr. John Dashwood is a mix of a gentle ... tone"):
    the caption describes the speaker's voice, not the people the turn talks about. Words the
    reviewed values use ("American" in the accent) are not names here."""
    if has_cjk(transcript or ""):
        return None
    own = set(units(" ".join(str(v) for v in values.values() if isinstance(v, str))))
    names = {n for n in _names(transcript) if len(n) > 2 and n not in _ABBREV and n not in own}
    for w in re.findall(r"[\w']+", text or ""):
        if w[:1].isupper() and w.lower() in names:
            return w
    return None


_PERSON = frozenset(("man", "woman", "boy", "girl", "lady", "gentleman"))


def doubled_subject(text: str) -> str | None:
    """A sentence that names the speaker twice ("The man speaks in a deep ... voice with a
    middle-aged man speaking ...", the 0.5B's rewrite): two person nouns in one sentence.

    >>> doubled_subject("The man speaks in a deep voice with a middle-aged man speaking English. He sounds calm.")
    'The man speaks in a deep voice with a middle-aged man speaking English.'
    >>> doubled_subject("A middle-aged man speaks in a deep voice; the man sounds calm.") is None
    True
    """
    clauses = [c for s in sentences(text) for c in re.split(r"[;:]", s)]
    return next((c.strip() for c in clauses if sum(w in _PERSON for w in units(c)) >= 2), None)


_MSG = {
    "copied": "It copies the instructions' own words instead of describing this segment.",
    "list": "It lists the attribute names and values instead of describing the voice in sentences of your own.",
    "repeat": "It says the sentence {s!r} twice; say each thing once.",
    "same_as_caption": "It repeats the caption's sentence {s!r}; say what the situation is, not how the voice sounds.",
    "gender": "It refers to the speaker as {o}, but the reviewed gender is {g}; refer to the speaker as {g}.",
    "cut": "It stops mid-sentence; write complete sentences.",
    "quote": "It quotes the transcript word for word; describe, in your own words, what the turn does.",
    "bare": "It is a single word; describe the attitude of the delivery and the speech act of this turn in a short "
    "phrase.",
    "opening": "Its opening {o!r} is already used by another caption of this recording; begin differently.",
    "quote_other": "It repeats a neighbouring turn word for word; say in your own words what this turn does.",
    "glued": "It runs two words together ({w!r}); write them with a space.",
    "copied_description": "It copies the voice description word for word; say it again in your own words.",
    "who": "It does not say who is speaking; say who: a {g}.",
    "disagrees": "It says {s!r}, but the reviewed voice has a {v}; keep to the voice description.",
    "name": "It names {n}, whom the turn talks about; describe the speaker's own voice and name nobody.",
    "script": "It mixes in {w!r}, which is not English; write every word in English.",
    "doubled": "It names the speaker twice in the sentence {s!r}; say who speaks once.",
    "omitted": "It leaves out {what} ({p!r}); keep every fact of the voice description.",
    "task": "It talks about the task ({w!r}); describe the speaker's voice only.",
    "added": "It says {w}, which the voice description does not say; keep to its facts and add none.",
    "intensity": "It says {w!r}, but the review says {v!r}; keep its strength.",
    "negated": "It says {w!r}, but the voice description says the opposite; keep its facts.",
    "form": "It is not well-formed English: {w}; write correct, complete sentences.",
    "same_caption": "It is an earlier turn's caption again; say this turn's facts in other words.",
    "no_turn": "It refers to {w!r}, but this turn has none; infer from this turn and the turns that exist.",
}
# Problems a text may still be kept with when no retry fixed it: a reused opening (the rules'
# captions open alike too), and an ordinary fact left out (a moderate pace, a neutral feeling: not
# what distinguishes the turn; the 0.5B's retries then copied the description instead).
SOFT = ("opening", "omitted_ordinary")
# The reasons a relabel request carries: a model that answers with one copied them.
REASON_TEXT = "\n".join(_MSG.values())  # a problem a text may still be kept with when no retry fixed it


def problem(field_name: str, text: str, facts: TextFacts) -> tuple[str, str] | None:
    """(kind, reason) of the first problem of `text` as the `field_name`, or None."""
    lang = facts.lang
    if copied_instructions(text, facts.instructions):
        return "copied", _MSG["copied"]
    if value_list(text, facts.values, lang, clauses=not facts.reviewed):
        return "list", _MSG["list"]
    if field_name == "tone" and len(units(text)) < 2:
        return "bare", _MSG["bare"]
    if field_name == "tone" and _EMOTION_FORM.match(text.strip()):  # "neutral (moderate)": emotion's format
        return "bare", _MSG["bare"]
    if field_name == "tone" and quotes_transcript(text, facts.transcript):  # the words said, not how
        return "quote", _MSG["quote"]
    rep = repeated_sentence(text)
    if rep:
        return "repeat", _MSG["repeat"].format(s=rep[:80])
    same = repeats_caption(text, facts.caption) if field_name == "contextual_inference" else None
    if same:
        return "same_as_caption", _MSG["same_as_caption"].format(s=same[:80])
    if field_name in ("caption", "contextual_inference"):
        other = gender_conflict(text, facts.values, lang, field_name)
        if other:
            g = canonical_closed("gender", facts.values.get("gender"))
            return "gender", _MSG["gender"].format(o=other, g=g)
    if field_name in ("caption", "contextual_inference") and copied_description(text, facts.reviewed):
        return "copied_description", _MSG["copied_description"]
    if field_name == "caption" and not names_speaker(text, facts.values, lang):
        noun = "man" if canonical_closed("gender", facts.values.get("gender")) == "male" else "woman"
        return "who", _MSG["who"].format(g=noun)
    if field_name in ("caption", "contextual_inference"):
        off = level_disagreement(text, facts.values, lang)
        if off:
            return "disagrees", _MSG["disagrees"].format(s=off[0], v=off[1])
    if field_name == "caption":
        name = transcript_name(text, facts.transcript, facts.values)
        if name:
            return "name", _MSG["name"].format(n=name)
    if field_name in ("caption", "contextual_inference") and lang != "zh":
        glued = glued_word(text, (facts.reviewed, facts.transcript, *facts.neighbours))
        if glued:
            return "glued", _MSG["glued"].format(w=glued)
    if field_name in ("caption", "contextual_inference") and lang != "zh":
        foreign = foreign_script(text, facts.transcript)
        if foreign:
            return "script", _MSG["script"].format(w=foreign)
    if field_name in ("caption", "contextual_inference") and cut_off(text, lang):  # a phrase has no end mark
        return "cut", _MSG["cut"]
    if field_name in ("caption", "contextual_inference") and any(
        quotes_transcript(s, facts.transcript) for s in sentences(text)
    ):
        return "quote", _MSG["quote"]
    if field_name in ("caption", "contextual_inference") and any(
        quotes_transcript(s, t) for s in sentences(text) for t in facts.neighbours
    ):  # another turn's words: the 0.5B gave the next speaker's line as this speaker's thought
        return "quote_other", _MSG["quote_other"]
    if field_name in ("caption", "contextual_inference") and lang == "en":
        kind_w = _english_problem(field_name, text, facts)
        if kind_w:
            return kind_w
    if field_name == "caption" and lang == "en":
        twice = doubled_subject(text)
        if twice:
            return "doubled", _MSG["doubled"].format(s=twice[:80])
    if field_name == "caption" and facts.reviewed and lang == "en":
        left = omitted_facts(text, facts.values, facts.reviewed)
        key = [w for w in left if w[0] == "the age" or FACT_OF.get(w[0]) in facts.distinctive]
        if key or left:
            what, p = (key or left)[0]
            return ("omitted" if key else "omitted_ordinary"), _MSG["omitted"].format(what=what, p=p)
    if field_name == "caption" and any(_same(text, e) for e in facts.earlier):
        return "same_caption", _MSG["same_caption"]
    if field_name == "caption" and opening(text) and opening(text) in facts.used_openings:
        return "opening", _MSG["opening"].format(o=opening(text))
    return None


# A contextual inference's words for the turn before or after this one (the 1.5B wrote "who is
# mentioned in the previous turn" for the recording's first turn).
_BEFORE = re.compile(
    r"\b(?:previous|preceding|prior|earlier|last|other speaker's)\s+(?:turn|speaker|line|remark|statement|question|"
    r"utterance|segment|comment)s?\b|\bmentioned (?:before|earlier|previously)\b|\bin (?:response|reply|answer) to\b|"
    r"\b(?:responds|responding|replies|replying) to\b|"
    r"\b(?:already|previously) (?:mentioned|said|discussed|asked|stated)\b",
    re.I,
)
_AFTER = re.compile(
    r"\b(?:next|following|later|subsequent)\s+(?:turn|speaker|line|remark|statement|question|utterance|segment)s?\b",
    re.I,
)


def _english_problem(field_name: str, text: str, facts: TextFacts) -> tuple[str, str] | None:
    """The English-only checks (agents/supported.py, agents/english_form.py): talk about the task,
    an added fact, a wrong strength of feeling, a negated fact (captions from facts), a turn that
    does not exist (inferences), and the form of the sentences."""
    said = supported.task_talk(text)
    if said:
        return "task", _MSG["task"].format(w=said)
    if field_name == "caption" and facts.reviewed:
        extra = supported.added_words(text, facts.values, facts.reviewed)
        if extra:
            return "added", _MSG["added"].format(w=", ".join(repr(w) for w in extra[:3]))
        strength = supported.intensity_said(text, facts.values, facts.reviewed)
        if strength:
            return "intensity", _MSG["intensity"].format(w=strength[0], v=strength[1])
        negated = supported.negated_fact(text, facts.values, facts.reviewed)
        if negated:
            return "negated", _MSG["negated"].format(w=negated)
    if field_name == "contextual_inference":
        for exists, pattern in ((facts.turn_before, _BEFORE), (facts.turn_after, _AFTER)):
            m = pattern.search(text) if exists is False else None
            if m:
                return "no_turn", _MSG["no_turn"].format(w=m.group(0))
    wrong = english_form.form_error(text, sentences(text))
    if wrong:
        return "form", _MSG["form"].format(w=wrong)
    return None


def openings_of(captions: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(o for o in (opening(c) for c in captions) if o))
