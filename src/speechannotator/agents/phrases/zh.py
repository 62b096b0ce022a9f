"""Chinese surface forms of the rules backend's concepts (style of the reference output).

Every function takes language-neutral concepts (ordinal levels -2..2, ids) and returns a label
in the style of the released demo: "整体音高中等偏高，句尾略有下降", "平静（中等）", "无".
en.py has the same names.
"""

from __future__ import annotations

from ...schema import EMOTION_INTENSITY, Emotion

LANG = "zh"
NONE = "无"
SEP = "，"

# fmt: off
PITCH_LEVEL = {-2: "音高偏低", -1: "整体音高中等偏低", 0: "整体音高中等", 1: "整体音高中等偏高", 2: "音高偏高"}
PITCH_VAR = {"flat": "语调平稳", "some": "略有起伏", "lively": "波动明显"}
PITCH_FINAL = {"fall": "句尾略有下降", "steep_fall": "句尾明显下降", "rise": "句尾上扬", "level": ""}
PITCH_REL = {1: "较其平时偏高", -1: "较其平时偏低"}
# Words that reveal a described pitch level, most specific first (used by review parsing).
PITCH_PARSE = (
    ("中等偏高", 1), ("中等偏低", -1), ("偏高", 1), ("较高", 1), ("高亢", 2), ("尖", 2), ("偏低", -1), ("较低", -1),
    ("低沉", -1), ("中等", 0), ("适中", 0),
)

SPEED_LEVEL = {-2: "语速缓慢", -1: "语速偏慢", 0: "语速适中", 1: "语速较快", 2: "语速很快"}
SPEED_TAIL = {2: "且音节推进紧凑", 1: "且音节推进紧凑", 0: "，表达流畅", -1: "，吐字从容", -2: "，字字拉开"}
SPEED_PAUSE = "，句间停顿较长"
SPEED_PARSE = (
    ("很快", 2), ("极快", 2), ("较快", 1), ("偏快", 1), ("适中", 0), ("中等", 0), ("偏慢", -1), ("较慢", -1),
    ("缓慢", -2), ("很慢", -2),
)

RHYTHM_PACE = {2: "节奏紧凑", 1: "节奏紧凑", 0: "节奏平稳", -1: "节奏舒缓", -2: "节奏缓慢"}
RHYTHM_PAUSE = {"none": "句中无明显停顿", "natural": "句间停顿自然", "long": "句间停顿明显", "many": "停顿频繁"}
RHYTHM_ENERGY = {"varied": "轻重变化明显", "even": ""}

TONE_QUALITY = {
    "urgent": "急促", "firm": "坚定有力", "calm": "平稳自然", "low": "低沉平稳", "bright": "轻快", "heavy": "沉重",
    "soft": "轻柔",
}
TONE_ACT = {"statement": "陈述", "question": "询问", "exclaim": "感叹", "persuade": "劝说", "command": "命令"}


def tone(quality: str, act: str) -> str:
    return f"{TONE_QUALITY[quality]}的{TONE_ACT[act]}语气"


TEXTURE = {
    "deep": "低沉", "bright": "明亮", "neutral": "音色自然", "clear": "音色清晰", "hoarse": "略带沙哑",
    "breathy": "略带气声", "tense": "略带紧张感", "thin": "略显单薄", "muffled": "音质略显模糊", "full": "圆润饱满",
}

PRON = {
    "clear": "咬字清晰", "complete": "每个字词发音完整，无明显含糊或吞音", "mostly": "整体可懂度高",
    "slurred": "部分字词略显含糊", "fast_ok": "语速较快但", "slow": "吐字从容，尾音自然",
    "noisy": "受背景噪声影响部分字词不够清晰",
}

EMOTIONS = {
    "neutral": "平静", "calm": "冷静", "happy": "愉快", "excited": "兴奋", "angry": "愤怒", "tense": "紧张",
    "sad": "悲伤", "surprised": "惊讶", "fearful": "恐惧", "disgusted": "厌恶",
}
EMOTION_PARSE = (
    ("平静", "neutral"), ("冷静", "calm"), ("中性", "neutral"), ("愉快", "happy"), ("开心", "happy"),
    ("高兴", "happy"), ("喜悦", "happy"), ("兴奋", "excited"), ("激动", "excited"), ("愤怒", "angry"),
    ("生气", "angry"), ("恼怒", "angry"), ("不满", "angry"), ("紧张", "tense"), ("焦虑", "tense"), ("急切", "tense"),
    ("悲伤", "sad"), ("难过", "sad"), ("低落", "sad"), ("伤心", "sad"), ("惊讶", "surprised"), ("吃惊", "surprised"),
    ("恐惧", "fearful"), ("害怕", "fearful"), ("厌恶", "disgusted"), ("嫌弃", "disgusted"),
)
INTENSITY = EMOTION_INTENSITY["zh"]  # the one home of the scale: schema


def emotion(label_id: str, intensity: int) -> Emotion:
    return Emotion(EMOTIONS[label_id], max(0, min(4, intensity)))


PARA = {"laughter": "笑声", "breath": "呼吸声", "sigh": "叹气", "pause": "句间有停顿", "long_pause": "明显停顿"}
PARA_TAGS = {"laughter": "<笑声>", "sigh": "<叹气>", "breath": "<呼吸>", "pause": "<停顿>"}
PARA_PARSE = (("笑", "laughter"), ("叹气", "sigh"), ("呼吸", "breath"), ("喘", "breath"), ("停顿", "pause"))

BACKGROUND = {
    "faint": "轻微的背景噪声", "music": "持续的背景音乐", "singing": "背景歌声", "stationary": "持续的背景噪声",
    "babble": "嘈杂的人声", "impulsive": "间歇的杂音", "noise": "明显的背景噪声", "music_noise": "背景音乐与噪声",
    "traffic": "交通噪声", "crowd": "人群喧闹声",
}
BACKGROUND_PARSE = (
    ("音乐", "music"), ("歌", "singing"), ("人声", "babble"), ("噪", "noise"), ("杂音", "noise"), ("引擎", "noise"),
    ("轰鸣", "noise"), ("掌声", "noise"), ("雨", "noise"), ("风", "noise"),
)
ENVIRONMENT = {
    "reverberant": "混响明显的室内空间", "crowd": "人声嘈杂的公共场所", "noisy": "有持续噪声的环境",
    "studio": "安静的录音环境", "telephone": "电话频带信道", "street": "街道或路边",
}

ACCENT = {"zh": "标准普通话", "en": "标准英语", "yue": "粤语", "ja": "标准日语", "ko": "标准韩语", "other": "标准口音"}
ACCENT_SLIGHT = "略带口音的普通话"
ACCENT_LANGUAGE = {
    "fr": "标准法语", "de": "标准德语", "es": "标准西班牙语", "it": "标准意大利语", "pt": "标准葡萄牙语",
    "nl": "标准荷兰语", "ru": "标准俄语", "pl": "标准波兰语", "uk": "标准乌克兰语", "sv": "标准瑞典语",
    "tr": "标准土耳其语", "ar": "标准阿拉伯语", "hi": "标准印地语", "vi": "标准越南语", "th": "标准泰语",
    "id": "标准印尼语",
}
# fmt: on


def join(parts: list[str]) -> str:
    return SEP.join(p for p in parts if p)
