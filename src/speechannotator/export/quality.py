"""Quality and confidence columns of every segment export, and the TTS issues they imply.

One table, `QUALITY_COLUMNS`, says where each column comes from: prior evidence in the state
(segment value first, then the speaker's, then the recording's), the segment table (ASR word
probabilities, language probability) or the output record. A column whose source is absent for a
segment (no Distill-MOS was computed, the timeline kept no overlap) is None, never 0: a filter on
it then drops the segment, and `tts_issues` does not invent a reason from it. A new evidence
source plugs in as one row here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..priors.names import VOICE_MARGIN, VOICE_SIMILARITY
from ..records import RECORDING_KEY, speaker_key
from ..schema import FIELDS

# Where a column's value comes from, for one segment.


@dataclass(frozen=True)
class SegmentSources:
    duration: float
    record: dict[str, Any]  # the output object (OUT/<id>.json)
    state: dict[str, Any]  # the segment table's row (words with probabilities, language probability)
    evidence: dict[str, dict[str, Any]]  # key (segment, speaker:<label>, recording) -> name -> value
    confidence: dict[str, float]  # field -> confidence of the latest review round

    def evidence_value(self, names: tuple[str, ...]) -> Any:
        """The first of `names` the segment has, else its speaker's, else the recording's."""
        keys = (self.state.get("key", ""), speaker_key(str(self.state.get("speaker", ""))), RECORDING_KEY)
        for key in keys:
            values = self.evidence.get(key, {})
            for name in names:
                if values.get(name) is not None:
                    return values[name]
        return None


@dataclass(frozen=True)
class Column:
    name: str
    unit: str
    doc: str
    get: Callable[[SegmentSources], Any]
    low: float | None = None  # the values the column can take (bounds of --where are checked against them)
    high: float | None = None
    kind: str = "number"  # "number", "text" or "list"


def _evidence(*names: str) -> Callable[[SegmentSources], Any]:
    def get(s: SegmentSources) -> Any:
        v = s.evidence_value(names)
        return round(float(v), 4) if isinstance(v, int | float) and not isinstance(v, bool) else v

    return get


def _word_logprob(s: SegmentSources) -> float | None:
    probs = [float(w.get("probability", 0.0)) for w in s.state.get("words", [])]
    if not probs:
        return None
    return round(sum(math.log(max(p, 1e-6)) for p in probs) / len(probs), 4)


def _state_number(name: str) -> Callable[[SegmentSources], float | None]:
    def get(s: SegmentSources) -> float | None:
        v = s.state.get(name)
        return None if v is None else round(float(v), 4)

    return get


def _confidence(field: str) -> Callable[[SegmentSources], float | None]:
    return lambda s: s.confidence.get(field)


_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _chars_per_s(s: SegmentSources) -> float | None:
    text = str(s.record.get("text", ""))
    if s.duration <= 0 or not text:
        return None
    return round(sum(ch.isalnum() for ch in text) / s.duration, 3)


def _words_per_s(s: SegmentSources) -> float | None:
    """Words per second; a CJK character counts as a word (no spaces between words there)."""
    text = str(s.record.get("text", ""))
    if s.duration <= 0 or not text:
        return None
    n = len(_CJK.findall(text)) + len(_WORD.findall(_CJK.sub(" ", text)))
    return round(n / s.duration, 3)


def _segment_evidence(name: str) -> Callable[[SegmentSources], float | None]:
    """The segment's own value only: a speaker's or recording's would say nothing of this turn."""

    def get(s: SegmentSources) -> float | None:
        v = s.evidence.get(s.state.get("key", ""), {}).get(name)
        return None if v is None else round(float(v), 4)

    return get


def _overlap_s(s: SegmentSources) -> float | None:
    v = s.state.get("overlap_s")
    if v is None:
        v = s.evidence_value(("overlap.s", "overlap_s"))
    return None if v is None else round(float(v), 3)


QUALITY_COLUMNS: tuple[Column, ...] = (
    Column("duration", "s", "segment length", lambda s: round(s.duration, 3), 0.0, None),
    Column("snr_db", "dB", "speech-to-noise ratio (DeepFilterNet residual)", _evidence("snr.db"), -50.0, 120.0),
    Column("mos", "MOS", "Distill-MOS speech quality", _evidence("quality.mos"), 1.0, 5.0),
    Column("dnsmos_ovrl", "MOS", "DNSMOS P.835 overall", _evidence("scene.dnsmos_ovrl"), 1.0, 5.0),
    Column("dnsmos_sig", "MOS", "DNSMOS P.835 speech signal", _evidence("scene.dnsmos_sig"), 1.0, 5.0),
    Column("dnsmos_bak", "MOS", "DNSMOS P.835 background", _evidence("scene.dnsmos_bak"), 1.0, 5.0),
    Column(
        "music_prob", "prob", "music under or between the speech", _evidence("events.music", "scene.music_prob"), 0, 1
    ),
    Column("singing_prob", "prob", "singing", _evidence("events.singing", "scene.singing_prob"), 0.0, 1.0),
    Column("noise_db", "dBFS", "level of the noise residual", _evidence("scene.noise_db"), -200.0, 10.0),
    Column("noise_type", "", "kind of background noise", _evidence("scene.noise_type"), kind="text"),
    Column("reverb", "ratio", "reverberation (offset energy decay)", _evidence("scene.reverb"), 0.0, 1.0),
    Column("channel", "", "telephone, narrowband or wideband origin", _evidence("channel.origin"), kind="text"),
    Column("bandwidth_hz", "Hz", "effective bandwidth", _evidence("channel.bandwidth_hz"), 0.0, 400000.0),
    Column("clipped_share", "ratio", "share of samples at full scale", _evidence("channel.clipped_share"), 0.0, 1.0),
    Column("overlap_s", "s", "seconds of the segment another speaker talks over", _overlap_s, 0.0, None),
    Column(
        "voice_similarity",
        "cos",
        "the segment's voice against its speaker's other segments (CAM++)",
        _segment_evidence(VOICE_SIMILARITY),
        -1.0,
        1.0,
    ),
    Column(
        "voice_margin",
        "cos",
        "voice similarity minus the closest other speaker's (< 0: sounds like another voice)",
        _segment_evidence(VOICE_MARGIN),
        -2.0,
        2.0,
    ),
    Column("asr_word_logprob", "ln p", "mean log-probability of the ASR words", _word_logprob, None, 0.0),
    Column("asr_avg_logprob", "ln p", "ASR average token log-probability", _state_number("avg_logprob"), None, 0.0),
    Column("asr_no_speech_prob", "prob", "ASR no-speech probability", _state_number("no_speech_prob"), 0.0, 1.0),
    Column("pitch_hz", "Hz", "median F0 of the segment", _evidence("pitch.median_hz"), 0.0, 2000.0),
    Column("language_prob", "prob", "language identification probability", _state_number("language_probability"), 0, 1),
    Column("chars_per_s", "1/s", "letters and digits per second of the transcript", _chars_per_s, 0.0, None),
    Column("words_per_s", "1/s", "words (CJK: characters) per second", _words_per_s, 0.0, None),
) + tuple(Column(f"conf_{f}", "", f"confidence of {f}", _confidence(f), 0.0, 1.0) for f in FIELDS)

# When a segment is a poor TTS training example: reason -> (column, test, limit). Defaults follow
# common TTS curation (Emilia keeps DNSMOS >= 3.0; 1-30 s clips); a column without a value never
# raises its reason.
TTS_LIMITS: dict[str, tuple[str, str, Any]] = {
    "too_short": ("duration", "<", 1.0),
    "too_long": ("duration", ">", 30.0),
    "overlap": ("overlap_s", ">", 0.0),
    "other_voice": ("voice_margin", "<", 0.0),
    "music": ("music_prob", ">=", 0.5),
    "singing": ("singing_prob", ">=", 0.5),
    "low_mos": ("mos", "<", 3.0),
    "low_dnsmos": ("dnsmos_ovrl", "<", 3.0),
    "low_snr": ("snr_db", "<", 15.0),
    "clipped": ("clipped_share", ">=", 0.001),
    "telephone": ("channel", "==", "telephone"),
    "asr_uncertain": ("asr_word_logprob", "<", math.log(0.5)),
    "no_speech": ("asr_no_speech_prob", ">=", 0.5),
}

_TESTS: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
}


def tts_issues(values: dict[str, Any]) -> list[str]:
    return [
        reason
        for reason, (column, test, limit) in TTS_LIMITS.items()
        if values.get(column) is not None and _TESTS[test](values[column], limit)
    ]


def quality_values(sources: SegmentSources) -> dict[str, Any]:
    """Every quality column of one segment, then `tts_issues` and `tts_issue_count`."""
    values = {c.name: c.get(sources) for c in QUALITY_COLUMNS}
    issues = tts_issues(values)
    values["tts_issues"] = issues
    values["tts_issue_count"] = len(issues)
    return values


COLUMNS: dict[str, Column] = {c.name: c for c in QUALITY_COLUMNS}
COLUMNS["tts_issues"] = Column(
    "tts_issues", "", "reasons the segment is a poor TTS example", lambda s: None, kind="list"
)
COLUMNS["tts_issue_count"] = Column("tts_issue_count", "count", "number of tts_issues", lambda s: None, 0.0, None)
