"""Timeline-Eval: CER, cpCER and tcpCER (or WER variants) on meeteval.

meeteval scores words; character-level scoring hands it one token per character (the text
normalized and pre-split), exactly as ``meeteval-wer`` would score SegLST files whose words
are space-separated characters. Defaults follow meeteval's CLI (tcpWER: reference
pseudo-timings ``character_based``, hypothesis ``character_based_points``), so both agree.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from decimal import Decimal
from pathlib import Path

from .io import Sessions, TimelineSegment, load_timeline, pair_sessions
from .tokenize import Unit, UnitChoice, resolve_unit, tokens

DEFAULT_COLLAR = 5.0


@dataclass
class ErrorCounts:
    errors: int = 0
    length: int = 0
    insertions: int = 0
    deletions: int = 0
    substitutions: int = 0

    @property
    def rate(self) -> float | None:
        """Percent; None when the reference holds no tokens."""
        return 100.0 * self.errors / self.length if self.length else None

    def __add__(self, other: "ErrorCounts") -> "ErrorCounts":
        return ErrorCounts(*(a + b for a, b in zip(astuple_(self), astuple_(other))))

    @classmethod
    def from_meeteval(cls, er) -> "ErrorCounts":
        return cls(er.errors, er.length, er.insertions, er.deletions, er.substitutions)


def astuple_(c: ErrorCounts) -> tuple[int, ...]:
    return (c.errors, c.length, c.insertions, c.deletions, c.substitutions)


@dataclass
class RecordingScores:
    plain: ErrorCounts  # CER / WER: speaker labels and times ignored
    cp: ErrorCounts
    tcp: ErrorCounts
    ref_speakers: int = 0
    hyp_speakers: int = 0
    missed_speakers: int = 0
    falarm_speakers: int = 0


@dataclass
class TimelineScores:
    unit: Unit
    collar: float
    per_recording: dict[str, RecordingScores] = field(default_factory=dict)

    def pooled(self) -> RecordingScores:
        """Errors and lengths summed over recordings (meeteval's combined figure)."""
        out = RecordingScores(ErrorCounts(), ErrorCounts(), ErrorCounts())
        for r in self.per_recording.values():
            out.plain, out.cp, out.tcp = out.plain + r.plain, out.cp + r.cp, out.tcp + r.tcp
            out.ref_speakers += r.ref_speakers
            out.hyp_speakers += r.hyp_speakers
            out.missed_speakers += r.missed_speakers
            out.falarm_speakers += r.falarm_speakers
        return out

    @property
    def names(self) -> tuple[str, str, str]:
        return ("cer", "cpcer", "tcpcer") if self.unit == "char" else ("wer", "cpwer", "tcpwer")

    def rates(self, rec: RecordingScores | None = None) -> dict[str, float | None]:
        rec = rec or self.pooled()
        return dict(zip(self.names, (rec.plain.rate, rec.cp.rate, rec.tcp.rate)))

    def to_dict(self) -> dict:
        """The ``--json`` shape: pooled rates in percent, then per recording."""
        out: dict = dict(self.rates())
        out["unit"] = self.unit
        out["collar"] = self.collar
        out["per_recording"] = {
            name: {**self.rates(r), "counts": {k: asdict(getattr(r, k)) for k in ("plain", "cp", "tcp")},
                   "ref_speakers": r.ref_speakers, "hyp_speakers": r.hyp_speakers}
            for name, r in self.per_recording.items()
        }
        return out


def _seglst(segs: list[TimelineSegment], unit: Unit, session: str):
    from meeteval.io.seglst import SegLST

    return SegLST([
        {"session_id": session, "speaker": s.speaker, "start_time": s.start, "end_time": s.end,
         "words": " ".join(tokens(s.text, unit))}
        for s in segs
    ])


def _concatenated(segs: list[TimelineSegment], unit: Unit) -> list[str]:
    # Time order ignoring speakers; ties keep the file order (sorted is stable).
    ordered = sorted(segs, key=lambda s: (s.start, s.end))
    return [t for s in ordered for t in tokens(s.text, unit)]


def score_recording(
    ref: list[TimelineSegment], hyp: list[TimelineSegment], *, unit: Unit, collar: float = DEFAULT_COLLAR,
    session: str = "recording",
) -> RecordingScores:
    from meeteval.wer.wer.cp import cp_word_error_rate
    from meeteval.wer.wer.siso import _siso_error_rate
    from meeteval.wer.wer.time_constrained import time_constrained_minimum_permutation_word_error_rate

    # meeteval's token-list SISO core; its SegLST wrapper cannot take an empty side.
    plain = ErrorCounts.from_meeteval(_siso_error_rate(_concatenated(ref, unit), _concatenated(hyp, unit)))
    r, h = _seglst(ref, unit, session), _seglst(hyp, unit, session)
    ref_spk = len({s.speaker for s in ref})
    hyp_spk = len({s.speaker for s in hyp})
    if not hyp:
        # meeteval cannot group an empty hypothesis; every reference token is a deletion.
        n = sum(len(tokens(s.text, unit)) for s in ref)
        gone = ErrorCounts(n, n, 0, n, 0)
        return RecordingScores(plain, gone, gone, ref_spk, 0, ref_spk, 0)
    if not ref:
        n = sum(len(tokens(s.text, unit)) for s in hyp)
        extra = ErrorCounts(n, 0, n, 0, 0)
        return RecordingScores(plain, extra, extra, 0, hyp_spk, 0, hyp_spk)
    cp = cp_word_error_rate(r, h)
    tcp = time_constrained_minimum_permutation_word_error_rate(r, h, collar=Decimal(str(collar)))
    return RecordingScores(
        plain, ErrorCounts.from_meeteval(cp), ErrorCounts.from_meeteval(tcp),
        ref_spk, hyp_spk, cp.missed_speaker, cp.falarm_speaker,
    )


def score_sessions(
    ref: Sessions, hyp: Sessions, *, collar: float = DEFAULT_COLLAR, unit: UnitChoice = "auto",
    sessions: list[str] | None = None,
) -> TimelineScores:
    if collar < 0:
        raise ValueError(f"collar must be >= 0 seconds, got {collar}")
    names = sessions if sessions is not None else sorted(ref)
    chosen = resolve_unit(unit, (s.text for n in names for s in ref[n]))
    scores = TimelineScores(chosen, float(collar))
    for name in names:
        scores.per_recording[name] = score_recording(
            ref[name], hyp.get(name, []), unit=chosen, collar=collar, session=name)
    return scores


def score_timeline(
    ref: str | Path | Sessions | list[TimelineSegment],
    hyp: str | Path | Sessions | list[TimelineSegment],
    collar: float = DEFAULT_COLLAR,
    unit: UnitChoice = "auto",
) -> TimelineScores:
    """Score a hypothesis timeline against a reference: paths (files or folders), loaded
    sessions, or two segment lists of one recording."""
    if isinstance(ref, list) and isinstance(hyp, list):
        return score_sessions({"recording": ref}, {"recording": hyp}, collar=collar, unit=unit)
    ref_s = ref if isinstance(ref, dict) else load_timeline(ref)
    hyp_s = hyp if isinstance(hyp, dict) else load_timeline(hyp)
    names = pair_sessions(ref_s, hyp_s, ref_path="" if isinstance(ref, dict) else ref,
                          hyp_path="" if isinstance(hyp, dict) else hyp)
    return score_sessions(ref_s, hyp_s, collar=collar, unit=unit, sessions=names)
