"""Whether a caption says only what the reviewed facts say.

The omission check (fact_words.omitted_facts) reads that every reviewed fact is said; these read
the other direction. Rewriting the facts sentence, the shipped models added what nobody reviewed:
"an energetic young woman" (the 1.5B), "with a middle-aged face ... neither rude nor changeable"
(the 0.5B, sampled), "very happy" for a very weak happiness, "with no pauses" for a turn whose
event is a pause, and the prompt's own nouns ("The voice description is described as ...";
docs/agents-llm.md). Four checks, English only:

- an added word: a caption may use the function words, the vocabulary of any voice description
  (`CAPTION_WORDS`: speak, voice, tone, a man, ...), the words of the reviewed values and of the
  facts sentence (and their forms: "hoarseness", "lower"), and the synonyms the omission check
  accepts for the facts stated (phrases.en `SAID_*`); any other word says something the review
  did not (closed world: a harmless word missing from the vocabulary costs a retry, an invented
  fact let through costs a wrong annotation);
- the feeling's strength: an intensifier ("very", "extremely") before the reviewed emotion's word
  when the reviewed intensity is not strong, a softener ("slightly", "a hint of") when it is;
- a fact negated: "no", "not", "without" just before a word of a reviewed feeling, event, scene or
  voice quality;
- talk about the task: "description", "rewrite", "caption", "attribute", ...
"""

from __future__ import annotations

import re

from ..schema import canonical_closed, is_empty_marker
from .fact_words import stated_facts, units
from .levels import intensity_of
from .phrases import phrases

# Words with no content of their own (articles, pronouns, prepositions, conjunctions, degree words).
_FUNCTION = frozenset(
    re.findall(
        r"\w+",
        "a an the this that these those it its he she his her him hers himself herself they them their one "
        "who whom whose which what when while whilst as than then so such both each every all any some "
        "and or but nor yet also still just too even quite rather fairly very slightly somewhat a bit little "
        "more most less least much many there here of in on at by with without from to into onto over under "
        "through throughout across between among along around about against toward towards within upon "
        "overall not no never for neither either whether if because since though although like unlike own same other "
        "another out up",
    )
)
# The vocabulary of any voice description: how a caption says that someone speaks, in what voice,
# at what pace and pitch, and how it sounds, without saying which. A word ending in "*" stands for
# every word it begins (phrases.en SAID_* notation).
CAPTION_WORDS = tuple(
    re.findall(
        r"\S+",
        "speak* spoke* talk* say* said utter* deliver* tell* told recount* narrat* read* recit* use* using "
        "come* came carr* convey* express* show* reveal* keep* kept maintain* remain* stay* seem* appear* "
        "make* made give* gave hold* held set* sit* sat rest* let* move* go goes going went "
        "is are was were be been being has have had does do did can "
        "could will would may might should must "
        "voice* tone* sound* speech* speaker* word* phrase* sentence* language* manner* way* delivery "
        "style* quality timbre register level* range tempo rate pace* pitch* accent* "
        "man men woman women lady ladies gentleman gentlemen girl* boy* person* adult* someone individual* "
        "female* male* "
        "hint* touch* note* trace* sense* air* mood* feel* feeling* emotion* attitude* expression* "
        "evident* noticeab* audib* clearly obvious* apparent* perceptib* brief*",
    )
)
# What a caption says about the writing task rather than the voice.
_TASK_WORDS = re.compile(
    r"\b(descriptions?|rewrit\w*|instructions?|prompts?|captions?|json|attributes?|fields?|reviewed|"
    r"annotat\w*|schema|checker|facts)\b",
    re.I,
)
_STRONGER = frozenset(
    re.findall(
        r"\w+",
        "very extremely highly deeply really intensely incredibly truly thoroughly overly utterly "
        "particularly especially immensely hugely strongly profoundly exceedingly so",
    )
)
_SOFTER = frozenset(re.findall(r"\w+", "slightly mildly faintly somewhat subtly barely hint touch trace bit little"))
_NEGATION = frozenset(re.findall(r"\w+", "no not without never neither nor lacks lacking lack free absent"))
_STRONG_STEP = 3  # intensity index of "strong" (phrases.en INTENSITY)


def _matches(word: str, pattern: str) -> bool:
    """One word against a SAID-style pattern ("hoars*": every word it begins; else the word itself)."""
    return word.startswith(pattern[:-1]) if pattern.endswith("*") else word == pattern


def _same_word(word: str, known: str) -> bool:
    """`word` is `known` or a form of it: the same first five letters ("hoarseness", "moderately"),
    or `known` plus an ending ("lower", "deeper", "pitched")."""
    if word == known:
        return True
    if len(known) >= 3 and word.startswith(known):
        return True
    return len(word) >= 5 and len(known) >= 5 and word[:5] == known[:5]


def _words(text: str) -> list[str]:
    """Lower-case words, "'s" dropped, digits skipped."""
    return [re.sub(r"'s$", "", w) for w in units(text) if not w.isdigit()]


def _fact_words(values: dict[str, str], reviewed: str) -> tuple[set[str], list[str]]:
    """(the words of the reviewed values and the facts sentence, the SAID patterns of its facts)."""
    given = [v for v in values.values() if isinstance(v, str) and v.strip() and not is_empty_marker(v)]
    known = {w for v in (*given, reviewed) for w in _words(v)}
    return known, _fact_patterns(values, reviewed)


def added_words(text: str, values: dict[str, str], reviewed: str) -> list[str]:
    """The words of `text` that neither the reviewed facts nor a voice description's vocabulary
    license, in order, each once.

    >>> v = {"gender": "female", "age": "young adult", "speed": "moderate pace", "emotion": "happy (weak)"}
    >>> facts = "A young woman speaks at a moderate pace, sounding happy."
    >>> added_words("An energetic young woman talks at a moderate pace and sounds cheerful, never rude.", v, facts)
    ['energetic', 'rude']
    >>> added_words("At a moderate pace, a young woman speaks in a cheerful tone.", v, facts)
    []
    """
    known, patterns = _fact_words(values, reviewed)
    out = []
    for w in _words(text):
        if w in _FUNCTION or any(_matches(w, p) for p in (*CAPTION_WORDS, *patterns)):
            continue
        if any(_same_word(w, k) for k in known):
            continue
        out.append(w)
    return list(dict.fromkeys(out))


def _fact_patterns(values: dict[str, str], reviewed: str, kinds: tuple[str, ...] | None = None) -> list[str]:
    """The one-word SAID patterns of the stated facts of `kinds` ("the emotion", ...; None: all)."""
    return [
        p
        for what, _, groups in stated_facts(values, reviewed)
        if kinds is None or what in kinds
        for g in groups
        for p in g
        if " " not in p
    ]


def _softened_qualities(texture: str) -> list[str]:
    """The voice-quality patterns the reviewed texture softens ("deep and slightly hoarse": hoarse)."""
    P = phrases("en")
    words = _words(texture)
    out: list[str] = []
    for i, w in enumerate(words[1:], 1):
        if words[i - 1] in ("slightly", "somewhat", "faintly", "mildly", "bit"):
            for patterns in P.SAID_TEXTURE.values():
                if any(_matches(w, p) for p in patterns):
                    out += [p for p in patterns if " " not in p]
    return out


def intensity_said(text: str, values: dict[str, str], reviewed: str) -> tuple[str, str] | None:
    """The intensifier or softener said of the reviewed emotion that its reviewed intensity does
    not carry ("very happy" for "happy (very weak)", "slightly angry" for "angry (strong)"), or an
    intensifier before a voice quality the review softened ("deeply hoarse" for "slightly hoarse"):
    (the words said, the reviewed value).

    >>> intensity_said("She sounds very happy.", {"emotion": "happy (very weak)"}, "")
    ('very happy', 'happy (very weak)')
    >>> intensity_said("She sounds very happy.", {"emotion": "happy (strong)"}, "") is None
    True
    >>> intensity_said("He sounds a little annoyed.", {"emotion": "angry (very strong)"}, "")[0]
    'little annoyed'
    >>> intensity_said("He has a deeply hoarse voice.", {"texture": "deep and slightly hoarse"}, "")
    ('deeply hoarse', 'deep and slightly hoarse')
    """
    emotion = values.get("emotion")
    step = intensity_of(emotion, phrases("en")) if isinstance(emotion, str) else None
    texture = values.get("texture")
    checks = []
    if step is not None:
        wrong = _SOFTER if step >= _STRONG_STEP else _STRONGER
        checks.append((_fact_patterns(values, reviewed, ("the emotion",)), wrong, 3, emotion))
    if isinstance(texture, str):
        checks.append((_softened_qualities(texture), _STRONGER, 2, texture))
    words = _words(text)
    for patterns, wrong, reach, value in checks:
        for i, w in enumerate(words):
            if any(_matches(w, p) for p in patterns):
                hit = next((b for b in reversed(words[max(0, i - reach) : i]) if b in wrong), None)
                if hit:
                    return f"{hit} {w}", value
    return None


def negated_fact(text: str, values: dict[str, str], reviewed: str) -> str | None:
    """A reviewed feeling, event, scene or voice quality said not to be there ("with no pauses").

    >>> negated_fact("She speaks with no pauses.", {"paralinguistic": "pause between phrases"}, "")
    'no pauses'
    >>> negated_fact("She pauses, not hurrying.", {"paralinguistic": "pause between phrases"}, "") is None
    True
    """
    kinds = ("the emotion", "the non-verbal event", "the background", "the environment", "the voice quality")
    patterns = _fact_patterns(values, reviewed, kinds)
    words = _words(text)
    for i, w in enumerate(words):
        if any(_matches(w, p) for p in patterns):
            hit = next((b for b in reversed(words[max(0, i - 2) : i]) if b in _NEGATION), None)
            if hit:
                return f"{hit} {w}" if words[i - 1] == hit else f"{hit} ... {w}"
    return None


def task_talk(text: str) -> str | None:
    """A word about the writing task, not the voice ("The voice description is described as ...").

    >>> task_talk("The voice description is described as a young woman.")
    'description'
    >>> task_talk("A young woman describes her day.") is None
    True
    """
    m = _TASK_WORDS.search(text or "")
    return m.group(0) if m else None


# ---- the caption's vocabulary as a sampling grammar ------------------------------------------

# Words of the other gender, left out of the vocabulary (the gender check reads them too).
_GENDERED = {
    "female": ("he", "his", "him", "himself", "man", "men", "gentleman", "gentlemen", "boy*", "male*"),
    "male": ("she", "her", "hers", "herself", "woman", "women", "lady", "ladies", "girl*", "female*"),
}
_SEPARATOR = "[ ,;:-]"


def _alternative(pattern: str) -> str:
    """A SAID-style word pattern as a regex: "hoars*" -> "[Hh]oars[a-z]*"; either case first."""
    word, open_end = (pattern[:-1], True) if pattern.endswith("*") else (pattern, False)
    if not word or not re.fullmatch(r"[a-z]+", word):
        return ""
    head = f"[{word[0].upper()}{word[0]}]"
    return head + word[1:] + ("[a-z]*" if open_end else "")


def vocabulary(values: dict[str, str], reviewed: str) -> list[str]:
    """The word patterns a caption may use (the same closed world `added_words` reads), without the
    other gender's words: function words, the caption vocabulary, the words of the reviewed values
    and the facts sentence with their forms, and the synonyms of the stated facts."""
    known, patterns = _fact_words(values, reviewed)
    out = set(_FUNCTION) | set(CAPTION_WORDS) | set(patterns)
    for k in known:
        if re.fullmatch(r"[a-z]+", k):
            out.add(k + "*" if len(k) >= 3 else k)
            if len(k) >= 5:
                out.add(k[:5] + "*")
    drop = set(_GENDERED.get(canonical_closed("gender", values.get("gender")) or "", ()))
    return sorted(out - drop)


def vocabulary_pattern(values: dict[str, str], reviewed: str, begin: str = "") -> str:
    """A regex (JSON schema ``pattern``) a caption of the vocabulary's words matches: words with an
    optional "'s", separated by spaces and punctuation, ending in a full stop; ``begin``: the
    words it must begin with. llama.cpp turns it into the sampling grammar, so the model cannot
    write a word the reviewed facts do not license.

    >>> p = vocabulary_pattern({"gender": "female", "emotion": "happy (weak)"}, "A woman speaks, sounding happy.")
    >>> bool(re.fullmatch(p, "Sounding cheerful, the woman speaks.")), bool(re.fullmatch(p, "An energetic man."))
    (True, False)
    """
    alts = sorted({a for a in (_alternative(w) for w in vocabulary(values, reviewed)) if a}, key=lambda a: (-len(a), a))
    word = "(?:" + "|".join(alts) + ")(?:'s)?"
    sep = f"(?:{_SEPARATOR}+|[.;] )"
    head = re.escape(begin) if begin else word
    return f"^{head}(?:{sep}{word})*[.]$"
