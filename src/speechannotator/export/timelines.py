"""rttm and seglst: the speaker timeline (and words) of the whole corpus, written through meeteval."""

from __future__ import annotations

from pathlib import Path

from .corpus_view import ExportRecording


def _session(rec_id: str) -> str:
    # RTTM fields are space-separated: a space in an id would split it.
    return rec_id.replace(" ", "_")


def export_rttm(view: list[ExportRecording], dest: Path) -> Path:
    from meeteval.io import RTTM
    from meeteval.io.rttm import RTTMLine

    path = dest if dest.suffix == ".rttm" else dest / "corpus.rttm"
    lines = [
        RTTMLine(
            filename=_session(r.id),
            channel="1",
            begin_time=round(s.start, 3),
            duration=round(s.duration, 3),
            speaker_id=s.record["speaker_id"],
        )
        for r in view
        for s in r.segments
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    RTTM(lines).dump(path)
    return path


def export_seglst(view: list[ExportRecording], dest: Path) -> Path:
    from meeteval.io import SegLST

    path = dest if dest.suffix == ".json" else dest / "corpus.seglst.json"
    segs = [
        {
            "session_id": r.id,
            "speaker": s.record["speaker_id"],
            "start_time": s.start,
            "end_time": s.end,
            "words": s.record["text"],
            "segment_index": s.index,
        }
        for r in view
        for s in r.segments
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    SegLST(segs).dump(path)
    return path
