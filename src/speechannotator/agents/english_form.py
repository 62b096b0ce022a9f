"""Whether an English caption is well formed, read without a model.

The shipped 1.5B wrote captions that every fact check accepted and that no reader would: "an
young woman", "a deep and slightly hoarsely voiced speaks", "a clearly voice", a sentence with no
main verb ("..., a young woman ... speaking standard American English at a medium pitch,
sounding neutral."), "speaks standard American English and a medium pitch" (docs/agents-llm.md).
These are the mistakes of a small model rewriting one sentence, and each is visible in the words
alone: an article that does not fit the next word's sound, an adverb where a noun phrase needs
an adjective, no finite verb, a pitch or pace joined to the language it is spoken in, one word
twice in a row. The checks are narrow on purpose: a caption they pass may still be clumsy, but a
caption they refuse is wrong.
"""

from __future__ import annotations

import re

# "a" before these vowel letters sounds like a consonant ("a unique", "a European", "a one-sided").
_A_BEFORE_VOWEL = ("uni", "use", "usu", "uti", "ura", "eu", "one", "once", "ewe")
# "an" before these h-words: the h is silent.
_AN_BEFORE_H = ("hour", "honest", "honor", "honour", "heir", "herb")

# Adjectives that end in -ly: before a noun they are right ("an elderly man", "a lively voice").
_LY_ADJECTIVES = frozenset(
    re.findall(
        r"\w+",
        "elderly friendly lively lovely early only ugly silly holy jolly curly chilly costly likely unlikely lonely "
        "orderly kindly manly womanly motherly fatherly sickly deadly daily weekly yearly steely bubbly wobbly "
        "surly burly scholarly stately homely comely timely leisurely matronly sprightly smelly worldly cowardly "
        "heavenly ghostly shapely gravelly crackly prickly grisly gnarly oily woolly hilly melancholy ally belly "
        "bully rally family supply reply fly july italy",
    )
)
# Nouns a caption's adjectives describe; an -ly adverb straight before one is a wrong word form
# ("a clearly voice", "hoarsely voiced").
_VOICE_NOUNS = frozenset(
    re.findall(
        r"\w+",
        "voice voiced voices tone pace pitch accent speaker man woman girl boy lady gentleman delivery manner "
        "timbre speech rhythm quality sound",
    )
)
# Finite verbs a caption sentence uses (third person; past for a narrated caption). A sentence
# also has one when a word ending in -s or -ed follows its subject ("her voice carries", "she paused").
_FINITE = frozenset(
    re.findall(
        r"\w+",
        "is are was were am has have had does did do can could will would may might must shall should "
        "seems seemed appears appeared sounds sounded speaks spoke talks talked says said remains remained "
        "stays stayed keeps kept holds held comes came goes went gives gave makes made takes took uses used "
        "delivers delivered tells told asks asked answers answered replies replied explains explained describes "
        "described recounts recounted narrates narrated reads read recites recited carries carried conveys "
        "conveyed expresses expressed voices voiced pauses paused laughs laughed sighs sighed breathes breathed "
        "adds added continues continued states stated notes noted responds responded mentions mentioned "
        "shares shared offers offered begins began starts started sets set flows flowed rises rose falls fell "
        "drops dropped lifts lifted lowers lowered slows slowed quickens quickened hurries hurried rushes "
        "rushed moves moved shifts shifted stays maintains maintained projects projected sits sat lingers "
        "lingered trails trailed",
    )
)
_SUBJECTS = frozenset(
    re.findall(
        r"\w+",
        "he she it who which that they man woman girl boy lady gentleman speaker voice tone pace pitch delivery "
        "speech words accent manner rhythm",
    )
)
_LANGUAGES = (
    "english|mandarin|chinese|cantonese|japanese|korean|french|german|spanish|italian|russian|dutch|"
    "portuguese|arabic|hindi|accent"
)
_JOINED_TO_LANGUAGE = re.compile(rf"\b(?:{_LANGUAGES})\s+and\s+(?:an?\s+)?(?:[\w-]+\s+){{0,2}}(?:pitch|pace)\b", re.I)
_WORD = re.compile(r"[A-Za-z]+(?:['-][A-Za-z]+)*")


def article_error(text: str) -> str | None:
    """An article that does not fit the next word's first sound, as written ("an young").

    >>> article_error("An young woman speaks."), article_error("A elderly man speaks.")
    ('An young', 'A elderly')
    >>> article_error("An elderly man and a young woman speak an hour, a unique tone.") is None
    True
    """
    for m in re.finditer(r"\b(an?)\s+([A-Za-z][\w-]*)", text or "", re.I):
        art, word = m.group(1).lower(), m.group(2).lower()
        vowel = word[0] in "aeiou"
        if art == "an" and not vowel and not word.startswith(_AN_BEFORE_H):
            return m.group(0)
        if art == "a" and vowel and not word.startswith(_A_BEFORE_VOWEL):
            return m.group(0)
    return None


def adverb_for_adjective(text: str) -> str | None:
    """An -ly adverb straight before a noun of the voice ("a clearly voice", "hoarsely voiced").

    >>> adverb_for_adjective("A man with a deep and slightly hoarsely voiced speaks.")
    'hoarsely voiced'
    >>> adverb_for_adjective("An elderly man with a slightly hoarse voice speaks clearly.") is None
    True
    """
    words = [w.lower() for w in _WORD.findall(text or "")]
    for a, b in zip(words, words[1:]):
        if a.endswith("ly") and len(a) > 4 and a not in _LY_ADJECTIVES and b in _VOICE_NOUNS:
            return f"{a} {b}"
    return None


def has_main_verb(sentence: str) -> bool:
    """Whether an English sentence has a finite verb: one of the caption verbs, or a word in -s or
    -ed after its subject ("her voice carries", "she paused").

    >>> has_main_verb("Sounding happy, a middle-aged man with a clear voice speaks English.")
    True
    >>> has_main_verb("A young woman with a hoarse voice speaking English at a medium pitch, sounding neutral.")
    False
    >>> has_main_verb("Her voice lilts gently.")
    True
    """
    words = [w.lower() for w in _WORD.findall(sentence or "")]
    if any(w in _FINITE for w in words):
        return True
    for i, w in enumerate(words[1:], 1):
        subject = words[i - 1] in _SUBJECTS or (i >= 2 and words[i - 2] in _SUBJECTS and words[i - 1].endswith("ly"))
        if subject and len(w) > 3 and (w.endswith("ed") or (w.endswith("s") and not w.endswith(("ss", "us", "is")))):
            return True
    return False


def joined_to_language(text: str) -> str | None:
    """A pitch or pace joined to the language as a second object ("speaks standard American English
    and a medium pitch"): the "at" it needs is missing.

    >>> joined_to_language("A woman speaks standard American English and a medium pitch.")
    'English and a medium pitch'
    >>> joined_to_language("A woman speaks English at a moderate pace and a medium pitch.") is None
    True
    """
    m = _JOINED_TO_LANGUAGE.search(text or "")
    return m.group(0) if m else None


def article_before_gerund(text: str) -> str | None:
    """An article before an -ing word that itself takes an object ("his voice is the maintaining
    the neutral tone", the 1.5B): a verb used as a noun.

    >>> article_before_gerund("His voice is the maintaining the neutral tone.")
    'the maintaining the'
    >>> article_before_gerund("She gives a rising intonation and the feeling of calm.") is None
    True
    """
    m = re.search(r"\b(?:the|a|an)\s+[a-z]+ing\s+(?:the|a|an|his|her|their|its)\b", text or "", re.I)
    return m.group(0) if m else None


_SPLICE = re.compile(r",\s+(?:her|his|their|the)\s+[a-z]+\s+(?:is|was|has|sounds|sits|stays|remains|comes)\b", re.I)
_SAYS_FEELING = re.compile(
    r"\b(?:says|said|tells|told)\s+(?:happy|sad|angry|calm|neutral|tense|excited|surprised|fearful|disgusted)\b",
    re.I,
)


def run_on(sentence: str) -> str | None:
    """Two sentences joined by a comma ("..., a young woman ... says happy, her voice is slightly
    hoarse ...", the 1.5B): a clause with its own subject and verb after a comma, when the part
    before it already has a main verb; or a feeling said as if it were words ("says happy").

    >>> run_on("A young woman says happy, her voice is slightly hoarse.")
    'says happy'
    >>> run_on("A young woman speaks slowly, her voice is slightly hoarse.")
    ', her voice is'
    >>> run_on("At a slow pace, her voice is slightly hoarse.") is None
    True
    """
    said = _SAYS_FEELING.search(sentence or "")
    if said:
        return said.group(0)
    for m in _SPLICE.finditer(sentence or ""):
        if has_main_verb(sentence[: m.start()]):
            return m.group(0)
    return None


def doubled_word(text: str) -> str | None:
    """One word twice in a row ("the the", "a a").

    >>> doubled_word("She speaks at a a moderate pace.")
    'a a'
    >>> doubled_word("She speaks at a moderate pace.") is None
    True
    """
    m = re.search(r"\b([A-Za-z]+)\s+\1\b", text or "", re.I)
    return m.group(0) if m else None


def form_error(text: str, sentences: list[str]) -> str | None:
    """The first badly formed part of an English caption (its `sentences` as free_text splits
    them), as a short quote with what is wrong, or None.

    >>> form_error("An young woman speaks English.", ["An young woman speaks English."])
    "'An young' (the article does not fit the next word)"
    >>> form_error("A woman speaks. Calm, slow.", ["A woman speaks.", "Calm, slow."])
    "'Calm, slow.' (no main verb)"
    """
    for find, what in (
        (article_error, "the article does not fit the next word"),
        (adverb_for_adjective, "an adverb where the voice needs an adjective"),
        (joined_to_language, "the pitch or pace is joined to the language; it needs 'at'"),
        (article_before_gerund, "an article before a verb"),
        (doubled_word, "a word written twice"),
    ):
        found = find(text)
        if found:
            return f"{found!r} ({what})"
    for s in sentences:
        if not has_main_verb(s):
            return f"{s[:80]!r} (no main verb)"
        joined = run_on(s)
        if joined:
            return f"{joined!r} (two sentences joined by a comma, or a feeling said as words)"
    return None
