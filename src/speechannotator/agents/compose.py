"""Caption and contextual inference composed from reviewed values, transcript and context.

The caption restates the reviewed attributes as fluent sentences (speaker, voice, prosody,
affect), dropping clauses already said; the contextual inference interprets the scene, the
speaker's state and the discourse role of the turn, using context only where it was admitted.
"""

from __future__ import annotations

import re

from ..schema import AgeGroup, Gender, Value, genders_named, is_empty_marker, shown
from .backend import ComposeTask
from .phrases import parse_emotion, phrases
from .transcript import speech_act

# fmt: off
_STATE = {
    "zh": {
        "tense": "在紧迫情境下的专注与紧张", "neutral": "稳定、从容的表达状态", "calm": "冷静克制的表达状态",
        "happy": "轻松愉快的交流氛围", "excited": "高涨的情绪与投入", "angry": "明显的不满情绪",
        "sad": "低落的情绪状态", "surprised": "对所述内容的意外", "fearful": "不安与担忧",
        "disgusted": "对所述内容的反感",
    },
    "en": {
        "tense": "focus and tension under pressure", "neutral": "a steady, composed delivery",
        "calm": "a calm, controlled delivery", "happy": "a relaxed, friendly exchange",
        "excited": "high engagement and excitement", "angry": "clear displeasure", "sad": "a low mood",
        "surprised": "surprise at what is being said", "fearful": "unease and worry",
        "disgusted": "aversion to what is being discussed",
    },
}
_ACT = {
    "zh": {
        "question": "该句以提问推进对话", "exclaim": "该句带有明显的感叹色彩", "command": "该句是对他人的指示或要求",
        "persuade": "该句带有劝说意味", "statement": "该句以陈述为主",
    },
    "en": {
        "question": "The turn moves the exchange forward with a question", "exclaim": "The turn is exclamatory",
        "command": "The turn gives an instruction", "persuade": "The turn tries to persuade the listener",
        "statement": "The turn is mainly declarative",
    },
}
# fmt: on


def _clauses(text: str) -> list[str]:
    return [c.strip() for c in re.split(r"[，,；;。.]", text or "") if c.strip()]


def _fact_kinds(lang: str) -> dict[str, str]:
    """{phrase: the fact it states} for the phrases that several fields share: the pitch contour's
    end (pitch and rhythm), the pace (speed and rhythm) and the pauses (speed, rhythm and
    paralinguistic). A caption says each of these facts once, in the first field that names it."""
    P = phrases(lang)
    kinds = dict.fromkeys(P.PITCH_FINAL.values(), "end")
    kinds.update(dict.fromkeys(P.SPEED_LEVEL.values(), "pace"))
    pauses = [*P.RHYTHM_PAUSE.values(), P.PARA["pause"], P.PARA["long_pause"], *_clauses(P.SPEED_PAUSE)]
    kinds.update({p.removeprefix("with "): "pauses" for p in pauses})
    kinds.pop("", None)
    return dict(sorted(kinds.items(), key=lambda pk: -len(pk[0])))  # the longest phrase first


class _Writer:
    """Accumulates clauses and skips any already said (values often repeat each other): a clause
    contained in one already said, or one stating a fact (_fact_kinds) already stated."""

    def __init__(self, lang: str):
        self.lang, self.kinds = lang, _fact_kinds(lang)
        self.fast_ok = phrases(lang).PRON["fast_ok"] + ("" if lang == "zh" else " ")  # "fast but": the pace again
        self.seen: set[str] = set()
        self.said: set[str] = set()  # the fact kinds stated
        self.sentences: list[str] = []

    def _fresh(self, clause: str) -> bool:
        said = clause.removeprefix("with ").strip()  # a clause that opens with a shared phrase states its fact
        kind = next((k for p, k in self.kinds.items() if said.startswith(p)), None)
        if any(clause in seen for seen in self.seen) or (kind and kind in self.said):
            return False
        if kind:
            self.said.add(kind)
        return True

    def sentence(self, parts: list[str]) -> None:
        keep = []
        for part in parts:
            if not part or is_empty_marker(part):
                continue
            trimmed = (c.removeprefix(self.fast_ok) if "pace" in self.said else c for c in _clauses(part))
            fresh = [c for c in trimmed if self._fresh(c)]
            self.seen.update(fresh)
            if fresh:
                keep.append(("，" if self.lang == "zh" else ", ").join(fresh))
        if keep:
            body = ("，" if self.lang == "zh" else ", ").join(keep)
            if self.lang == "en":
                body = body[0].upper() + body[1:]
            self.sentences.append(body + ("。" if self.lang == "zh" else "."))

    def text(self) -> str:
        return ("" if self.lang == "zh" else " ").join(self.sentences)


# English age words before "male voice" (the closed values read "a child male voice" otherwise).
_AGE_EN = {AgeGroup.CHILD: "child's", AgeGroup.TEENAGER: "teenage"}


def _who(values: dict[str, Value], lang: str) -> str:
    g, a = values.get("gender"), values.get("age")
    voice = g.voice(lang) if isinstance(g, Gender) else "说话人声音" if lang == "zh" else "voice"
    if not isinstance(a, AgeGroup):
        return voice if lang == "zh" else ("an " if voice[0] in "aeiou" else "a ") + voice
    if lang == "zh":
        return a.render(lang) + voice
    words = f"{_AGE_EN.get(a, a.render(lang))} {voice}"
    return ("an " if words[0] in "aeiou" else "a ") + words


def values_text(task: ComposeTask) -> dict[str, str]:
    """The reviewed values as the record says them (typed ones rendered)."""
    return {k: shown(x, task.label_language) for k, x in task.values.items()}


def caption(task: ComposeTask) -> str:
    v, lang = values_text(task), task.label_language
    w = _Writer(lang)
    accent = v.get("accent", "")
    if lang == "en" and accent and not is_empty_marker(accent):
        accent = f"speaking {accent}"
    w.sentence([_who(task.values, lang), accent, v.get("texture", "")])
    w.sentence([v.get("pitch", "")])  # the demo says the pitch, then the pace and rhythm, apart
    w.sentence([v.get("speed", ""), v.get("rhythm", "")])
    emo = v.get("emotion", "")
    emo_part = ("情绪" + emo if lang == "zh" else f"the emotion is {emo}") if emo and not is_empty_marker(emo) else ""
    tone = v.get("tone", "")
    w.sentence(
        [
            emo_part,
            ("语气为" + tone) if lang == "zh" and tone else (f"in a {tone}" if tone else ""),
            v.get("pronunciation", ""),
        ]
    )
    para, bg = v.get("paralinguistic", ""), v.get("background_sound", "")
    extra = []
    if para and not is_empty_marker(para):
        bare = para.startswith(("句", "停顿")) or "pause" in para
        extra.append(para if bare else ("伴有" if lang == "zh" else "with ") + para)
    if bg and not is_empty_marker(bg):
        extra.append(("背景有" if lang == "zh" else "over ") + bg)
    w.sentence(extra)
    return w.text()


def _scene_sentence(task: ComposeTask) -> str:
    v, lang, ev = values_text(task), task.label_language, task.evidence
    env, bg = v.get("environment", ""), v.get("background_sound", "")
    has_env, has_bg = env and not is_empty_marker(env), bg and not is_empty_marker(bg)
    P = phrases(lang)
    if has_env and env == P.ENVIRONMENT["telephone"]:  # a channel, not a place
        if lang == "zh":
            return "语音经由电话频带信道传输" + (f"，背景伴有{bg}。" if has_bg else "。")
        return "The speech comes through a telephone-band channel" + (
            f", with {bg} in the background." if has_bg else "."
        )
    if lang == "zh":
        if has_env and has_bg:
            return f"说话人处于{env}中，背景伴有{bg}。"
        if has_env:
            return f"说话人处于{env}中。"
        if has_bg:
            return f"片段背景伴有{bg}，说话人的声音叠加在背景声之上。"
    else:
        place = env if env.endswith("s") else f"a {env}"  # "noisy surroundings": no article
        if has_env and has_bg:
            return f"The speaker is in {place}, with {bg} in the background."
        if has_env:
            return f"The speaker is in {place}."
        if has_bg:
            return f"The speech sits over {bg}."
    snr, origin, reverb = ev.get("snr.db"), ev.get("channel.origin"), ev.get("scene.reverb")
    # "clean, close-miked" only on a high SNR over a wideband channel without reverberation
    clean = (
        snr is not None
        and isinstance(snr.value, (int, float))
        and snr.value >= 25
        and origin is not None
        and origin.value == "wideband"
        and not (reverb is not None and isinstance(reverb.value, (int, float)) and reverb.value >= 0.3)
    )
    if lang == "zh":
        return "录音背景干净，呈现近距离拾音的特征。" if clean else "片段中没有可辨识的环境声线索。"
    if clean:
        return "The recording is clean, with close-miked speech."
    return "The segment carries no identifiable scene cues."


def _discourse(task: ComposeTask, act: str) -> str:
    lang, ctx = task.label_language, task.context
    parts = [_ACT[lang][act]]
    prev = (ctx.get("previous") or [None])[-1]
    if isinstance(prev, dict) and not prev.get("same_speaker") and prev.get("text"):
        if speech_act(str(prev["text"])) == "question" and act != "question":
            parts.append("是对上一位说话人提问的回应" if lang == "zh" else "answering the previous speaker's question")
        else:
            parts.append("承接上一位说话人的发言" if lang == "zh" else "following up on the previous speaker")
    summ = ctx.get("recording_summary") or {}
    if isinstance(summ, dict):
        n, inter = summ.get("n_speakers"), summ.get("interaction")
        if inter == "monologue":
            parts.append("属于单人讲述的一部分" if lang == "zh" else "within a single-speaker monologue")
        elif inter == "several voices":
            parts.append(
                "录音中可听到不止一个声音" if lang == "zh" else "in a recording where more than one voice is heard"
            )
        elif isinstance(n, int) and n >= 2:
            parts.append(f"出现在{n}人参与的对话中" if lang == "zh" else f"in a conversation among {n} speakers")
    role = (ctx.get("speaker_history") or {}).get("role") if isinstance(ctx.get("speaker_history"), dict) else None
    if role:
        parts.append(f"说话人身份为{role}" if lang == "zh" else f"the speaker acts as {role}")
    sep = "，" if lang == "zh" else ", "
    return sep.join(parts) + ("。" if lang == "zh" else ".")


def contextual_inference(task: ComposeTask) -> str:
    v, lang = values_text(task), task.label_language
    lid = parse_emotion(v.get("emotion", ""), lang) or "neutral"
    act = speech_act(task.segment.text)
    speed, tone = v.get("speed", ""), v.get("tone", "")
    if lang == "zh":
        shown = _STATE["zh"][lid]
        state = f"其{speed}，以{tone}表达，显示出{shown}。" if speed and tone else f"其表达显示出{shown}。"
    else:
        state = (
            f"The {speed} and {tone} suggest {_STATE['en'][lid]}."
            if speed and tone
            else f"The delivery suggests {_STATE['en'][lid]}."
        )
    return ("" if lang == "zh" else " ").join([_scene_sentence(task), state, _discourse(task, act)])


def compose_task(task: ComposeTask) -> dict[str, str]:
    return {"caption": caption(task), "contextual_inference": contextual_inference(task)}


def contradiction(text: str, values: dict[str, Value], lang: str) -> str | None:
    """Why a model-written caption states what the reviewed values contradict, or None: the one
    check on an endpoint's caption (agents.llm_caption). It names the other gender only."""
    gender = values.get("gender")
    if not isinstance(gender, Gender):
        return None
    named = genders_named(text)
    if gender.other in named and gender not in named:
        return f"the caption names a {gender.other} voice; the reviewed gender is {gender}"
    return None
