"""English surface forms of the rules backend's concepts (same names as zh.py)."""

from __future__ import annotations

from ...schema import EMOTION_INTENSITY, Emotion

LANG = "en"
NONE = "none"
SEP = ", "

# fmt: off
PITCH_LEVEL = {
    -2: "low pitch", -1: "moderately low pitch", 0: "medium pitch", 1: "moderately high pitch", 2: "high pitch",
}
PITCH_VAR = {"flat": "steady intonation", "some": "some rise and fall", "lively": "clearly varying intonation"}
PITCH_FINAL = {
    "fall": "slightly falling at the end", "steep_fall": "falling clearly at the end", "rise": "rising at the end",
    "level": "",
}
PITCH_REL = {1: "higher than the speaker's usual", -1: "lower than the speaker's usual"}
PITCH_PARSE = (
    ("moderately high", 1), ("moderately low", -1), ("very high", 2), ("very low", -2), ("high", 1), ("low", -1),
    ("deep", -1), ("medium", 0), ("moderate", 0), ("average", 0),
)

SPEED_LEVEL = {-2: "very slow pace", -1: "slightly slow pace", 0: "moderate pace", 1: "fast pace", 2: "very fast pace"}
SPEED_TAIL = {
    2: " with tightly packed syllables", 1: " with compact syllables", 0: ", fluent delivery",
    -1: ", unhurried delivery", -2: ", drawn-out delivery",
}
SPEED_PAUSE = ", with long pauses between phrases"
SPEED_PARSE = (
    ("very fast", 2), ("fast", 1), ("quick", 1), ("moderate", 0), ("medium", 0), ("normal", 0), ("very slow", -2),
    ("slightly slow", -1), ("slow", -1),
)

RHYTHM_PACE = {
    2: "tight, rapid rhythm", 1: "compact rhythm", 0: "steady rhythm", -1: "relaxed rhythm", -2: "slow rhythm",
}
RHYTHM_PAUSE = {
    "none": "no noticeable pauses", "natural": "natural pauses between phrases",
    "long": "noticeable pauses between phrases", "many": "frequent pauses",
}
RHYTHM_ENERGY = {"varied": "clear stress contrasts", "even": ""}

TONE_QUALITY = {
    "urgent": "hurried", "firm": "firm", "calm": "calm, natural", "low": "low, steady", "bright": "light",
    "heavy": "heavy", "soft": "soft",
}
TONE_ACT = {
    "statement": "declarative", "question": "questioning", "exclaim": "exclamatory", "persuade": "persuasive",
    "command": "directive",
}


def tone(quality: str, act: str) -> str:
    return f"{TONE_QUALITY[quality]} {TONE_ACT[act]} tone"


TEXTURE = {
    "deep": "deep", "bright": "bright", "neutral": "natural timbre", "clear": "clear voice",
    "hoarse": "slightly hoarse", "breathy": "slightly breathy", "tense": "slightly tense", "thin": "somewhat thin",
    "muffled": "slightly muffled", "full": "full, rounded",
}

PRON = {
    "clear": "clear articulation", "complete": "every word fully pronounced without slurring",
    "mostly": "highly intelligible overall", "slurred": "some words slightly slurred", "fast_ok": "fast but",
    "slow": "unhurried, with natural word endings", "noisy": "some words masked by background noise",
}

EMOTIONS = {
    "neutral": "neutral", "calm": "calm", "happy": "happy", "excited": "excited", "angry": "angry", "tense": "tense",
    "sad": "sad", "surprised": "surprised", "fearful": "fearful", "disgusted": "disgusted",
}
EMOTION_PARSE = (
    ("neutral", "neutral"), ("calm", "calm"), ("happy", "happy"), ("joy", "happy"), ("cheerful", "happy"),
    ("excited", "excited"), ("enthusias", "excited"), ("angry", "angry"), ("anger", "angry"), ("annoyed", "angry"),
    ("frustrat", "angry"), ("tense", "tense"), ("anxious", "tense"), ("nervous", "tense"), ("urgent", "tense"),
    ("sad", "sad"), ("sorrow", "sad"), ("upset", "sad"), ("surprise", "surprised"), ("fear", "fearful"),
    ("afraid", "fearful"), ("scared", "fearful"), ("disgust", "disgusted"),
)
INTENSITY = EMOTION_INTENSITY["en"]  # the one home of the scale: schema


def emotion(label_id: str, intensity: int) -> Emotion:
    return Emotion(EMOTIONS[label_id], max(0, min(4, intensity)))


PARA = {
    "laughter": "laughter", "breath": "audible breathing", "sigh": "sigh", "pause": "pause between phrases",
    "long_pause": "noticeable pause",
}
PARA_TAGS = {"laughter": "<laughter>", "sigh": "<sigh>", "breath": "<breath>", "pause": "<pause>"}
PARA_PARSE = (("laugh", "laughter"), ("sigh", "sigh"), ("breath", "breath"), ("pause", "pause"))

BACKGROUND = {
    "faint": "faint background noise", "music": "continuous background music", "singing": "background singing",
    "stationary": "steady background noise", "babble": "crowd chatter", "impulsive": "intermittent noises",
    "noise": "noticeable background noise", "music_noise": "background music and noise",
    "traffic": "traffic noise", "crowd": "crowd noise",
}
BACKGROUND_PARSE = (
    ("music", "music"), ("sing", "singing"), ("chatter", "babble"), ("crowd", "babble"), ("noise", "noise"),
    ("engine", "noise"), ("traffic", "noise"), ("applause", "noise"), ("rain", "noise"), ("wind", "noise"),
    ("hum", "noise"),
)
ENVIRONMENT = {
    "reverberant": "reverberant indoor space", "crowd": "busy public place", "noisy": "noisy surroundings",
    "studio": "quiet recording environment", "telephone": "telephone-band channel", "street": "street or roadside",
}

ACCENT = {
    "zh": "standard Mandarin", "en": "standard American English", "yue": "Cantonese", "ja": "standard Japanese",
    "ko": "standard Korean", "other": "standard accent",
}
# Varieties named for other languages the ASR reports (ISO 639-1): never a bare "standard accent".
ACCENT_LANGUAGE = {
    "fr": "standard French", "de": "standard German", "es": "standard Spanish", "it": "standard Italian",
    "pt": "standard Portuguese", "nl": "standard Dutch", "ru": "standard Russian", "pl": "standard Polish",
    "uk": "standard Ukrainian", "sv": "standard Swedish", "tr": "standard Turkish", "ar": "Modern Standard Arabic",
    "hi": "standard Hindi", "vi": "standard Vietnamese", "th": "standard Thai", "id": "standard Indonesian",
}
# fmt: on
ACCENT_SLIGHT = "slightly accented English"


def join(parts: list[str]) -> str:
    return SEP.join(p for p in parts if p)
