"""pyannote.audio diarization from a local pipeline folder (e.g. speaker-diarization-community-1).

The folder holds the pipeline's config.yaml and its model checkpoints, as saved for offline
use; nothing is fetched from a hub. pyannote.audio is an optional dependency (it is not part
of the CPU default): a missing package or folder is one clear error line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..config import DiarizationConfig
from ..records import Turn


class DiarizationBackendError(RuntimeError):
    pass


_PIPELINES: dict[str, object] = {}


def load_pyannote_pipeline(path: str | None, device: str = "cpu"):
    if not path:
        raise DiarizationBackendError(
            "diarization.backend 'pyannote' needs diarization.pyannote_path (a local pipeline folder)"
        )
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise DiarizationBackendError(f"pyannote pipeline folder not found: {folder}")
    if not (folder / "config.yaml").exists():
        raise DiarizationBackendError(f"{folder} is not a pyannote pipeline folder: no config.yaml")
    try:
        from pyannote.audio import Pipeline
    except ImportError as exc:
        raise DiarizationBackendError(
            f"diarization.backend 'pyannote' needs the pyannote.audio package ({exc.msg})"
        ) from exc
    key = f"{folder.resolve()}|{device}"
    if key not in _PIPELINES:
        pipeline = Pipeline.from_pretrained(str(folder))
        if pipeline is None:
            raise DiarizationBackendError(f"pyannote could not load a pipeline from {folder}")
        if device != "cpu":
            import torch

            pipeline.to(torch.device(device))
        _PIPELINES[key] = pipeline
    return _PIPELINES[key]


def turns_from_annotation(annotation) -> list[Turn]:
    """pyannote Annotation -> turns; turns that overlap another speaker's are marked."""
    turns = [
        Turn(round(float(seg.start), 3), round(float(seg.end), 3), str(label))
        for seg, _, label in annotation.itertracks(yield_label=True)
    ]
    turns.sort(key=lambda t: (t.start, t.end))
    for i, t in enumerate(turns):
        for u in turns[i + 1 :]:
            if u.start >= t.end:
                break
            if u.speaker != t.speaker:
                t.overlap = u.overlap = True
    return turns


def pyannote_diarize(samples: np.ndarray, sr: int, cfg: DiarizationConfig, device: str = "cpu") -> list[Turn]:
    import torch

    pipeline = load_pyannote_pipeline(cfg.pyannote_path, device)
    kwargs = (
        {"num_speakers": cfg.num_speakers}
        if cfg.num_speakers
        else {"min_speakers": cfg.min_speakers, "max_speakers": cfg.max_speakers}
    )
    out = pipeline({"waveform": torch.from_numpy(np.ascontiguousarray(samples))[None], "sample_rate": sr}, **kwargs)
    # pyannote.audio 4 returns an object holding the annotation; 3.x returns the annotation.
    annotation = getattr(out, "speaker_diarization", out)
    return turns_from_annotation(annotation)
