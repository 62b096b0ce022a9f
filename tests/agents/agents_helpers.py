"""Hand-built recordings for agent tests: segments and evidence written straight to a state."""

from __future__ import annotations

from pathlib import Path

from speechannotator.config import Config, load_config
from speechannotator.records import Evidence, Prediction, Segment, Word, segment_key
from speechannotator.stages import StageContext
from speechannotator.state import StateStore

REC = "demo"


def chars(text: str, start: float, step: float = 0.18, pause_after: dict[int, float] | None = None) -> list[Word]:
    """Character-level words for a Chinese transcript (punctuation skipped), with optional pauses."""
    out, t = [], start
    for i, ch in enumerate(c for c in text if c not in "，。！？、"):
        out.append(Word(ch, round(t, 3), round(t + step * 0.9, 3), 0.9))
        t += step + (pause_after or {}).get(i, 0.0)
    return out


def seg(i: int, start: float, end: float, speaker: str, text: str, language: str = "zh", **kw) -> Segment:
    words = kw.pop("words", None)
    if words is None and language == "zh":
        words = chars(text, start + 0.05, step=min(0.25, (end - start - 0.1) / max(1, len(text))))
    return Segment(segment_key(i), start, end, speaker, text=text, language=language, words=words or [], **kw)


def ev(key: str, **values) -> list[Evidence]:
    """Evidence(name=k with '__' for '.') for one key: ev('seg_00000', pitch__median_hz=150)."""
    return [Evidence(key, k.replace("__", "."), v, extractor="test") for k, v in values.items()]


def make_store(tmp_path: Path, segments: list[Segment], evidence: list[Evidence]) -> StateStore:
    store = StateStore(tmp_path / "state.sqlite")
    store.begin_recording(REC, str(tmp_path / f"{REC}.wav"), "fp")
    with store.transaction() as c:
        store.write_segments(c, REC, segments)
        store.write_evidence(c, REC, evidence)
    return store


def config(**agents) -> Config:
    return load_config(overrides={"agents": agents} if agents else None)


MALE = dict(  # noqa: C408 (keyword names spell evidence names: gender__p_male = gender.p_male)
    gender__p_male=0.93,
    gender__label="male",
    pitch__median_hz=118.0,
    pitch__mean_hz=120.0,
    pitch__std_semitones=2.0,
    pitch__final_slope_semitones=-2.0,
    pitch__voiced_ratio=0.6,
    rate__units_per_s=4.6,
    pause__ratio=0.05,
    pause__count=0,
    pause__longest_s=0.0,
    voice__hnr_db=15.0,
    emotion__arousal=0.1,
    emotion__valence_text=0.0,
    scene__music_prob=0.02,
    scene__dnsmos_bak=3.9,
    scene__background="none",
    scene__noise_type="none",
    snr__db=32.0,
    events__laughter=0.05,
    events__breath=0.1,
)


def male(key: str, **over) -> list[Evidence]:
    return ev(key, **{**MALE, **over})


def dialogue() -> tuple[list[Segment], list[Evidence]]:
    """Speaker A (male, 4 turns, one with a misleading gender classifier) and B (female)."""
    segs = [
        seg(0, 0.0, 2.0, "A", "已经到极速了。"),
        seg(1, 2.2, 3.6, "B", "你确定吗？"),
        seg(2, 3.8, 6.0, "A", "我和张弛都有机会。"),
        seg(3, 6.3, 9.0, "A", "不是所有的比赛都发生在会议室里。"),
        seg(4, 9.2, 11.0, "A", "我们继续往前开。"),
    ]
    evs = male("seg_00000", pitch__median_hz=152.0, rate__units_per_s=6.4, emotion__arousal=1.3)
    evs += ev(
        "seg_00001",
        gender__p_male=0.08,
        gender__label="female",
        pitch__median_hz=262.0,
        pitch__std_semitones=4.2,
        pitch__final_slope_semitones=2.5,
        rate__units_per_s=4.4,
        emotion__arousal=0.2,
        scene__music_prob=0.02,
        scene__dnsmos_bak=3.9,
        snr__db=30.0,
    )
    evs += male("seg_00002", gender__p_male=0.20, gender__label="female", pitch__median_hz=132.0)
    evs += male(
        "seg_00003",
        rate__units_per_s=3.2,
        pause__count=1,
        pause__longest_s=0.9,
        pause__ratio=0.2,
        events__long_pause=1,
        emotion__arousal=-0.9,
    )
    evs += male("seg_00004")
    return segs, evs


def stage(store: StateStore, cfg: Config, backend=None, audio=None, *, lang: str | None = None) -> StageContext:
    """The context a stage function runs on; ``lang`` sets the label language the timeline stage would store."""
    if lang is not None:
        with store.transaction() as c:
            store.set_label_language(c, REC, lang)
    return StageContext(store, REC, cfg, backend=backend, audio=audio)


def annotate(store: StateStore, cfg: Config, backend, lang: str = "zh") -> list:
    """Stages 8-11 on a hand-built recording: plan, label, review, finalize; the records."""
    from speechannotator import agents
    from speechannotator.output.finalize import finalize

    agents.plan(stage(store, cfg, lang=lang))
    agents.label(stage(store, cfg, backend))
    agents.review(stage(store, cfg, backend))
    return finalize(stage(store, cfg, backend))


class ScriptedLLM:
    """Stands in for the LLM of a routed backend: answers every field it is asked with a fixed value
    per round, records the label tasks and the segments each compose was handed (routing and the
    checks are what is under test, not a model's quality)."""

    name = "llm"
    wants_audio = False
    stats = None

    def __init__(self, answers):
        self.answers, self.tasks, self.composed = answers, [], []

    def label(self, task):
        self.tasks.append(task)
        pick = self.answers[min(task.round, len(self.answers) - 1)]
        return {
            f: Prediction(task.segment.key, f, pick[f], 0.8, [], round=task.round, backend=self.name)
            for f in task.fields
        }

    def compose(self, task):
        self.composed.append(task.segment.key)
        return {"caption": f"Caption of {task.segment.key}.", "contextual_inference": "A talk."}
