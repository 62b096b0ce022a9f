"""Stage 5, ASR over the segment table: language id, code-switching, hallucination filter, timestamps.

`chunk` mode (default) decodes consecutive segments of one speaker together (`pack_by`) and
gives each word to the segment holding it: one Whisper encoder pass per window instead of one
per segment (Whisper pads every input to 30 s), about 5x faster on CPU. Like faster-whisper's
own VAD filter, a window holds only speech: the segments' audio is packed back to back (a
pause longer than `pack_gap_s` is shortened to it, never reaching into another voice's
segment) up to `chunk_s` of audio (as few windows as fit, of even length), and the decoded
times are mapped back to the recording.
One voice per window keeps one language per window in a call between languages. Language
id runs on the same encoder pass as the decode (the backend reuses it). Language is
identified per span, so code-switching is handled in two cheap checks:

- a span whose language id is split (runner-up language above `mixed_span_probability`) is
  decoded segment by segment, each with its own language;
- after a span is decoded, a segment whose text is in the wrong script for the span's
  language (CJK in a non-Chinese span or none in a Chinese one) or whose words are unusually
  uncertain gets its own language id and, when that differs, is re-decoded alone (when it
  agrees and the span left the segment without words, it is decoded alone in that language);
- a segment the span's decode left without words and too short for its own language id (or
  any such segment when the language is fixed) is decoded alone in the span's language (a
  window lost to a repetition loop would otherwise lose its voice's short turns).

Last, the recording-level language prior (`settle_languages`) moves a segment out of a
language the recording gives no real evidence of.

`segment` mode decodes every segment alone. Whisper's language id is unreliable under
~1.5 s (docs/models.md): short spans and segments take their speaker's language (else the
recording's). Chinese is decoded with a Simplified prompt, converted with OpenCC, and keeps
per-character timestamps.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from ..config import AsrConfig
from ..records import Segment, Word
from .asr_types import AsrBackend, Decoded, LanguageGuess, Piece, RawWord, hallucination_reason

MIN_LID_SECONDS = 1.5
CONFIDENT_LID = 0.6  # a decode this sure of its language is evidence that the language is spoken
STRONG_LID = 0.85  # a segment this sure needs no support from the rest of the recording
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


def make_backend(cfg: AsrConfig) -> AsrBackend:
    if cfg.backend == "openai":
        from .asr_openai import OpenAIAsr

        return OpenAIAsr(cfg)
    from .asr_whisper import WhisperAsr

    return WhisperAsr(cfg)


_OPENCC = None


def to_simplified(text: str) -> str:
    global _OPENCC
    if not text:
        return text
    if _OPENCC is None:
        import opencc

        _OPENCC = opencc.OpenCC("t2s")
    return _OPENCC.convert(text)


@dataclass
class AsrStats:
    spans: int = 0
    mixed_spans: int = 0
    redecoded_segments: int = 0
    language_prior: int = 0  # segments moved to a language heard elsewhere in the recording
    language_prior_refused: int = 0  # moves undone: the words fit worse in the prior's language
    language_kept: list[tuple[float, float, str]] = field(default_factory=list)  # (start, end, language) of those
    refilled_segments: int = 0  # segments the window's decode left without words, decoded alone
    windows_by: str = ""  # pack_by = "auto": what the windows were grouped by ("time" / "speaker")
    language_ids: int = 0  # backend language-id calls (each shares the encoder pass of the decode after it)
    decodes: int = 0  # backend decode calls: spans + the re-decodes above
    decoded_s: float = 0.0  # audio seconds sent to decoding (re-decodes included)
    dropped_pieces: Counter = field(default_factory=Counter)

    def as_info(self) -> dict:
        return {
            "asr_decodes": self.decodes,
            "asr_decoded_s": round(self.decoded_s, 2),
            "asr_language_ids": self.language_ids,
            "asr_spans": self.spans,
            "asr_mixed_spans": self.mixed_spans,
            "asr_redecoded": self.redecoded_segments,
            "asr_language_prior": self.language_prior,
            "asr_language_prior_refused": self.language_prior_refused,
            "asr_language_kept": [list(k) for k in self.language_kept],
            "asr_refilled": self.refilled_segments,
            "asr_windows_by": self.windows_by,
            "asr_dropped": dict(self.dropped_pieces),
        }


class _Languages:
    """Language evidence so far, by speaker and overall (weighted by duration x probability)."""

    def __init__(self):
        self.by_speaker: dict[str, defaultdict[str, float]] = {}
        self.overall: defaultdict[str, float] = defaultdict(float)

    def add(self, speaker: str, guess: LanguageGuess, seconds: float) -> None:
        w = seconds * guess.probability
        self.by_speaker.setdefault(speaker, defaultdict(float))[guess.language] += w
        self.overall[guess.language] += w

    def fallback(self, speaker: str) -> LanguageGuess | None:
        pool = self.by_speaker.get(speaker) or self.overall
        if not pool:
            return None
        lang, w = max(pool.items(), key=lambda kv: kv[1])  # the first of equals, as most_common
        return LanguageGuess(lang, round(min(0.9, w / sum(pool.values())), 3))


@dataclass(frozen=True)
class Heard:
    """One language observation: the segments a clip covered, the language, its probability, the clip's seconds."""

    keys: tuple[str, ...]
    language: str
    probability: float
    seconds: float


@dataclass(frozen=True)
class Packed:
    """The speech of some segments as one clip: the sample ranges of the recording it holds, in order."""

    pieces: tuple[tuple[int, int], ...]
    sr: int

    @property
    def seconds(self) -> float:
        return sum(b - a for a, b in self.pieces) / self.sr

    def clip(self, audio: np.ndarray) -> np.ndarray:
        if len(self.pieces) == 1:
            a, b = self.pieces[0]
            return audio[a:b]
        return np.concatenate([audio[a:b] for a, b in self.pieces])

    def to_source(self, t: float) -> float:
        """Recording time (s) of clip time `t`; a time past the clip's end runs on from its last piece."""
        n = t * self.sr
        for a, b in self.pieces:
            if n <= b - a:
                return (a + max(0.0, n)) / self.sr
            n -= b - a
        return (self.pieces[-1][1] + n) / self.sr


def pack(segments: list[Segment], sr: int, keep_gap: float, others: list[Segment] | tuple = ()) -> Packed:
    """The segments' audio back to back: overlapping or close segments (gap <= keep_gap) stay one
    piece; a longer pause is shortened to keep_gap (half of it kept on each side, so a word cut
    short by a tight segment edge keeps its tail). `others` are the recording's segments not in
    this clip (other speakers' turns between these): a margin stops where one begins, and two
    pieces with one between them stay apart, so no other voice enters the clip."""
    foreign = sorted((o.start, o.end) for o in others)
    spans: list[list[float]] = []
    for s in sorted(segments, key=lambda s: s.start):
        if spans and s.start - spans[-1][1] <= keep_gap and not _between(foreign, spans[-1][1], s.start):
            spans[-1][1] = max(spans[-1][1], s.end)
        else:
            spans.append([s.start, s.end])
    half = keep_gap / 2
    last = len(spans) - 1
    pieces = []
    for i, (a, b) in enumerate(spans):
        lo = a - min(half, _free_before(foreign, a)) if i else a
        hi = b + min(half, _free_after(foreign, b)) if i < last else b
        pieces.append((max(0, int(round(lo * sr))), int(round(hi * sr))))
    return Packed(tuple(pieces), sr)


def _between(foreign: list[tuple[float, float]], a: float, b: float) -> bool:
    return any(fa < b and fb > a for fa, fb in foreign)


def _free_before(foreign: list[tuple[float, float]], t: float) -> float:
    """Seconds of no other segment just before time t (0 when one overlaps t)."""
    ends = [fb for fa, fb in foreign if fa < t]
    return max(0.0, t - max(ends)) if ends else float("inf")


def _free_after(foreign: list[tuple[float, float]], t: float) -> float:
    starts = [fa for fa, fb in foreign if fb > t]
    return max(0.0, min(starts) - t) if starts else float("inf")


@dataclass
class _Bucket:
    """The words one decode gave a segment, and the Whisper statistics of the pieces they came from."""

    words: list[RawWord] = field(default_factory=list)
    pieces: list[Piece] = field(default_factory=list)  # each word's piece, in the same order

    def add(self, word: RawWord, piece: Piece) -> None:
        self.words.append(word)
        self.pieces.append(piece)

    def score(self, seg: Segment) -> None:
        """The segment's avg_logprob and no_speech_prob: the means of its words' pieces' values.
        A piece's avg_logprob is a mean over its tokens, so weighting each piece by the words it
        gave this segment (about its tokens here) gives the mean token log-probability of the
        segment's words; a piece's no_speech_prob is weighted the same way. Rounded, so that a
        rerun and the state give the same digits. No words, or a piece the backend did not score:
        None (an endpoint's missing statistics must not read as a perfect score)."""
        if not self.pieces or not all(p.scored for p in self.pieces):
            seg.avg_logprob = seg.no_speech_prob = None
            return
        n = len(self.pieces)
        seg.avg_logprob = round(sum(p.avg_logprob for p in self.pieces) / n, 4)
        seg.no_speech_prob = round(sum(p.no_speech_prob for p in self.pieces) / n, 4)


def _words_to_segments(
    dec: Decoded, packed: Packed, segments: list[Segment], cfg: AsrConfig, stats: AsrStats
) -> dict[str, _Bucket]:
    """Words of the kept pieces in recording time, each given to the segment holding its midpoint
    (or the nearest), with the piece it came from."""
    buckets: dict[str, _Bucket] = {s.key: _Bucket() for s in segments}
    for piece in dec.pieces:
        reason = hallucination_reason(piece, cfg)
        if reason:
            stats.dropped_pieces[reason] += 1
            continue
        for w in piece.words:
            mid = packed.to_source((w.start + w.end) / 2)
            best = min(
                segments, key=lambda s: 0.0 if s.start <= mid <= s.end else min(abs(mid - s.start), abs(mid - s.end))
            )
            start, end = packed.to_source(w.start), packed.to_source(w.end)
            buckets[best.key].add(RawWord(w.text, start, max(start, end), w.probability), piece)
    return buckets


def _fill(seg: Segment, words: list, offset: float, language: str, probability: float) -> None:
    zh = language in ("zh", "yue")
    raw = "".join(w.text for w in words).strip()
    seg.text = to_simplified(raw) if zh else raw
    seg.language = language
    seg.language_probability = round(float(probability), 3)
    out: list[Word] = []
    for w in words:
        text = (to_simplified(w.text) if zh else w.text).strip()
        if not text:
            continue
        # A word given to this segment (by its midpoint) lies inside it: its times are clipped to
        # the segment, so no word reaches into a neighbour and no segment grows past its bounds.
        a = min(max(offset + w.start, seg.start), seg.end)
        b = max(min(offset + w.end, seg.end), a)
        chars = [c for c in text if _CJK.match(c)]
        if zh and len(text) > 1 and len(chars) == len(text):
            # Whisper's Chinese "words" are tokens of 1-3 characters: keep one entry per character.
            step = (b - a) / len(text)
            out += [
                Word(c, round(a + i * step, 3), round(a + (i + 1) * step, 3), round(w.probability, 3))
                for i, c in enumerate(text)
            ]
        else:
            out.append(Word(text, round(a, 3), round(b, 3), round(w.probability, 3)))
    seg.words = out


def _script_mismatch(text: str, language: str) -> bool:
    if not text:
        return False
    cjk = len(_CJK.findall(text))
    if language in ("zh", "yue", "ja"):
        return cjk == 0 and len(_LATIN.findall(text)) >= 4
    return cjk > 0


def _suspect(seg: Segment) -> bool:
    """Decoded words that do not look like this segment's speech in the span's language:
    unusually uncertain, or far too few for its duration (Whisper skips speech it cannot
    fit to the forced language, and in a packed window sometimes a turn that repeats)."""
    words = seg.words
    if len(words) < 0.6 * seg.duration:
        return True
    return len(words) >= 3 and float(np.mean([w.probability for w in words])) < 0.45


def _fit(seg: Segment) -> float:
    """How well the decoded words fit the audio: mean log word probability (no words: -inf).
    Decoding in the wrong language gives less likely words (measured on the real-voice calls:
    Dutch turns decoded as Dutch vs as English or Portuguese, Allison's English as English vs
    Portuguese or Dutch: the true language fits better in 11 of 14 segments, 1 tie)."""
    if not seg.words:
        return float("-inf")
    return float(np.mean([np.log(max(w.probability, 1e-3)) for w in seg.words]))


@dataclass(frozen=True)
class _Decoding:
    """A segment's transcript, kept to be restored when a second decode turns out worse."""

    text: str
    words: list
    language: str
    language_probability: float
    avg_logprob: float | None
    no_speech_prob: float | None

    @classmethod
    def of(cls, seg: Segment) -> _Decoding:
        return cls(
            seg.text, list(seg.words), seg.language, seg.language_probability, seg.avg_logprob, seg.no_speech_prob
        )

    def restore(self, seg: Segment) -> None:
        seg.text, seg.words = self.text, self.words
        seg.language, seg.language_probability = self.language, self.language_probability
        seg.avg_logprob, seg.no_speech_prob = self.avg_logprob, self.no_speech_prob


class _Transcriber:
    def __init__(self, audio: np.ndarray, sr: int, cfg: AsrConfig, backend: AsrBackend, segments: list[Segment]):
        self.audio, self.sr, self.cfg, self.backend = audio, sr, cfg, backend
        self.segments = sorted(segments, key=lambda s: s.start)
        self.langs = _Languages()
        self.stats = AsrStats()
        self.heard: list[Heard] = []  # every language observation: decodes and per-segment checks
        self.detected: dict[tuple[str, ...], LanguageGuess | None] = {}  # language id per group of segments

    def packed(self, group: list[Segment]) -> Packed:
        if len(group) == 1:
            return pack(group, self.sr, self.cfg.pack_gap_s)
        keys = {s.key for s in group}
        lo, hi = min(s.start for s in group), max(s.end for s in group)
        others = _inside([s for s in self.segments if s.key not in keys], lo, hi)
        return pack(group, self.sr, self.cfg.pack_gap_s, others)

    def guess(self, group: list[Segment], allow_short: bool = False) -> LanguageGuess | None:
        if self.cfg.language:
            return LanguageGuess(self.cfg.language, 1.0)
        packed = self.packed(group)
        if packed.seconds < MIN_LID_SECONDS and not allow_short:
            return self.langs.fallback(group[0].speaker)
        return self.detect(group, packed)

    def detect(self, group: list[Segment], packed: Packed) -> LanguageGuess | None:
        """The backend's language id of the group's clip, once per group (the `auto` probe's
        window is identified again when it is decoded; the answer is the same)."""
        keys = tuple(s.key for s in group)
        if keys not in self.detected:
            self.stats.language_ids += 1
            self.detected[keys] = self.backend.detect(packed.clip(self.audio))
        return self.detected[keys]

    def decode_group(self, group: list[Segment], guess: LanguageGuess | None) -> None:
        packed = self.packed(group)
        self.stats.decodes += 1
        self.stats.decoded_s += packed.seconds
        dec = self.backend.decode(packed.clip(self.audio), guess.language if guess else None)
        lang = guess.language if guess else dec.language
        prob = guess.probability if guess else dec.language_probability
        buckets = _words_to_segments(dec, packed, group, self.cfg, self.stats)
        self.heard.append(Heard(tuple(s.key for s in group), lang, float(prob), packed.seconds))
        for s in group:
            _fill(s, buckets[s.key].words, 0.0, lang, prob)
            buckets[s.key].score(s)
            if s.duration >= MIN_LID_SECONDS * 0.5:
                self.langs.add(s.speaker, LanguageGuess(lang, prob), s.duration)
        if len(group) > 1:
            checks = self.cfg.code_switch and not self.cfg.language
            for s in group:
                if checks and s.duration >= MIN_LID_SECONDS and (_script_mismatch(s.text, lang) or _suspect(s)):
                    self.redecode_if_other_language(s, lang)
                elif not s.words:
                    self.refill(s, LanguageGuess(lang, prob))

    def redecode_if_other_language(self, seg: Segment, span_language: str) -> None:
        packed = self.packed([seg])
        own = self.detect([seg], packed)
        if own is None:
            # The backend identifies language only while decoding: decode the segment alone
            # and keep that result when it comes back in another language.
            self.stats.decodes += 1
            self.stats.decoded_s += packed.seconds
            dec = self.backend.decode(packed.clip(self.audio), None)
            if dec.language and dec.language != span_language:
                self.stats.redecoded_segments += 1
                buckets = _words_to_segments(dec, packed, [seg], self.cfg, self.stats)
                self.heard.append(Heard((seg.key,), dec.language, float(dec.language_probability), packed.seconds))
                _fill(seg, buckets[seg.key].words, 0.0, dec.language, dec.language_probability)
                buckets[seg.key].score(seg)
            return
        if own.language == span_language:
            # The segment's own clip confirms the span's language: evidence of it heard here.
            self.heard.append(Heard((seg.key,), own.language, float(own.probability), packed.seconds))
            if not seg.words:
                # The window's decode skipped this segment's speech: decode it alone (the
                # encoder pass of the language id just run is reused).
                self.refill(seg, own)
            return
        if own.probability < 0.5:
            return
        self.stats.redecoded_segments += 1
        self.decode_group([seg], own)

    def refill(self, seg: Segment, guess: LanguageGuess) -> None:
        """A segment the window's decode left without words, decoded alone in `guess`'s language;
        the more complete transcript is kept. A short turn (under MIN_LID_SECONDS, too short for
        its own language id) takes the window's language, which is its voice's in a speaker
        window: when Whisper falls into a repetition loop the whole window's text is dropped as a
        hallucination, and a voice's short turns would otherwise be lost with it (the telephone
        call ff_tel_b: "is unavailable", "MGCP", "backslash" each come back alone)."""
        before = _Decoding.of(seg)
        self.decode_group([seg], guess)
        if len(seg.words) <= len(before.words):
            before.restore(seg)
        else:
            self.stats.refilled_segments += 1

    def choose_windows(self) -> list[list[Segment]]:
        """`pack_by = "auto"`: one voice per window, unless a voice says too little to carry its
        own context and all voices speak one language; then consecutive segments (time windows).

        A window of one voice keeps one voice and one language per window (the real-voice calls
        between languages: WER 40.0 -> 33.8) and reads a voice better than windows where voices
        alternate (built conversations: CER 6.13 -> 5.29). But a voice with under `thin_voice_s`
        of speech in the whole recording (a few short questions) packed alone gives Whisper a
        handful of short unrelated turns; among the turns around them they keep their context
        (the bundled interview: WER 0.269 -> 0.140). That is safe only when the voices share a
        language: each voice's first window is identified (its encoder pass is kept for its
        decode) and time windows are used only when all are one language with confidence."""
        cfg = self.cfg
        by_voice = _chunks(self.segments, cfg.chunk_s, self.sr, cfg.pack_gap_s, by_speaker=True)
        speech: defaultdict[str, float] = defaultdict(float)
        for s in self.segments:
            speech[s.speaker] += s.duration
        if len(speech) < 2 or min(speech.values()) >= cfg.thin_voice_s:
            self.stats.windows_by = "speaker"
            return by_voice
        firsts: dict[str, list[Segment]] = {}
        for g in by_voice:
            firsts.setdefault(g[0].speaker, g)
        guesses = [self.guess(g) for g in firsts.values()]
        first = guesses[0]
        shared = first is not None and all(
            g is not None
            and g.language == first.language
            and g.probability >= cfg.shared_language_probability
            and g.runner_up < cfg.mixed_span_probability
            for g in guesses
        )
        self.stats.windows_by = "time" if shared else "speaker"
        if not shared:
            return by_voice
        return _chunks(self.segments, cfg.chunk_s, self.sr, cfg.pack_gap_s)

    def run(self, groups: list[list[Segment]]) -> None:
        deferred = []
        for group in groups:
            if self.packed(group).seconds < MIN_LID_SECONDS and not self.cfg.language:
                deferred.append(group)  # decide after longer speech of the same speaker is known
                continue
            self.process(group)
        for group in deferred:
            self.process(group)
        if not self.cfg.language:
            self.settle_languages([s for g in groups for s in g])

    def settle_languages(self, segments: list[Segment]) -> None:
        """The recording-level prior: a segment keeps its language when its own evidence is strong
        (STRONG_LID over at least MIN_LID_SECONDS) or the language is established in the
        recording (`_established`); otherwise it is decoded again in its speaker's (else the
        recording's) best-supported established language. Every decision is taken from the
        evidence as it stands after decoding, before any move, so one move cannot make the next
        (a language id of one window, however uncertain, once pulled a whole call into a
        language nobody spoke). Code-switching survives: a confidently identified second
        language is established and stays. A segment left without words in a language the
        recording does not establish is decoded in the established one too (kept when words come)."""
        by_key = {s.key: s for s in segments}
        established = _established(self.heard, by_key)
        moves: list[tuple[Segment, LanguageGuess]] = []
        for seg in sorted(segments, key=lambda s: s.start):
            lang = seg.language
            if not lang or lang in established:
                continue
            if seg.text and seg.language_probability >= STRONG_LID and seg.duration >= MIN_LID_SECONDS:
                continue
            evidence = _evidence(self.heard, by_key, exclude=seg.key)
            pool = {k: v for k, v in (evidence["speaker"].get(seg.speaker) or {}).items() if k in established}
            pool = pool or {k: v for k, v in evidence["overall"].items() if k in established}
            if not pool:
                continue
            target = max(sorted(pool), key=lambda k: pool[k])
            moves.append((seg, LanguageGuess(target, round(min(0.9, pool[target] / sum(pool.values())), 3))))
        for seg, guess in moves:
            before, fit = _Decoding.of(seg), _fit(seg)
            self.decode_group([seg], guess)
            if not seg.words and not before.words:
                # Empty in its own language and in the prior's: nothing heard, keep it as it was.
                before.restore(seg)
                continue
            if _fit(seg) < fit:
                # Decoded in the prior's language the words fit worse than in the segment's own:
                # strong evidence of its own, so it keeps its language and transcript.
                before.restore(seg)
                self.stats.language_prior_refused += 1
                self.stats.language_kept.append((round(seg.start, 3), round(seg.end, 3), seg.language))
                continue
            self.stats.language_prior += 1

    def process(self, group: list[Segment]) -> None:
        self.stats.spans += 1
        guess = self.guess(group)
        if guess is None:  # short and nothing known yet: detect anyway (None for detect-while-decoding backends)
            guess = self.guess(group, allow_short=True)
        mixed = (
            guess is not None
            and len(group) > 1
            and self.cfg.code_switch
            and not self.cfg.language
            and guess.runner_up >= self.cfg.mixed_span_probability
        )
        if not mixed:
            self.decode_group(group, guess)
            return
        self.stats.mixed_spans += 1
        for s in group:
            own = self.guess([s]) or guess
            self.decode_group([s], own)


def _support(heard: list[Heard], by_key: dict[str, Segment], exclude: str | None = None):
    """Confident language evidence (seconds x probability) per observation that does not cover
    segment `exclude` (a segment's own language id would vouch for itself). Only the language
    each segment still has counts (a later re-decode may have changed it), and only segments
    that decoding in it gave words: an id whose decode comes back empty is not speech heard in
    that language (the Dutch actress on 8-kHz telephone identified as Portuguese at 0.76 decoded
    to nothing, yet made Portuguese her best-supported language and drew her next turn into it)."""
    for h in heard:
        if (exclude is not None and exclude in h.keys) or h.probability < CONFIDENT_LID or h.seconds < MIN_LID_SECONDS:
            continue
        for k in h.keys:
            seg = by_key.get(k)
            if seg is not None and seg.language == h.language and seg.text:
                yield h, seg, seg.duration * h.probability


def _evidence(heard: list[Heard], by_key: dict[str, Segment], exclude: str) -> dict:
    """Confident language evidence overall and per speaker, from the observations that do not
    cover segment `exclude`."""
    overall: Counter = Counter()
    speaker: dict[str, Counter] = {}
    for h, seg, w in _support(heard, by_key, exclude):
        overall[h.language] += w
        speaker.setdefault(seg.speaker, Counter())[h.language] += w
    return {"overall": overall, "speaker": speaker}


def _established(heard: list[Heard], by_key: dict[str, Segment]) -> set[str]:
    """Languages the recording gives real evidence of:
    - one strong observation (STRONG_LID over at least MIN_LID_SECONDS);
    - confident observations of two separate stretches of speech (no segment in common);
    - the most supported language of the recording;
    - the most supported language of a speaker, counting only clips of that voice alone (a
      window of one voice identifies that voice's language; a window of several voices reports
      one language for all of them, which says little about each).
    A language that one uncertain window of several voices alone reports is not established: it
    may be the channel talking (8-kHz telephone English read as Portuguese), and it must not draw
    other segments into it."""
    support: Counter = Counter()
    own_voice: dict[str, Counter] = {}
    stretches: dict[str, list[frozenset[str]]] = {}
    out: set[str] = set()
    for h, seg, w in _support(heard, by_key):
        support[h.language] += w
        keys = frozenset(k for k in h.keys if by_key[k].language == h.language)
        if len({by_key[k].speaker for k in h.keys}) == 1:
            own_voice.setdefault(seg.speaker, Counter())[h.language] += w
        if h.probability >= STRONG_LID:
            out.add(h.language)
        seen = stretches.setdefault(h.language, [])
        if keys not in seen:
            seen.append(keys)
    for lang, seen in stretches.items():
        if any(not (a & b) for i, a in enumerate(seen) for b in seen[i + 1 :]):
            out.add(lang)
    for pool in [support, *own_voice.values()]:
        if pool:
            out.add(max(sorted(pool), key=lambda k: pool[k]))
    return out


def _chunks(segments: list[Segment], max_span: float, sr: int, keep_gap: float, by_speaker: bool = False):
    """Segments grouped so that their packed speech fits one Whisper window: consecutive
    segments, or (by_speaker) consecutive segments of one speaker, so that a window holds one
    voice and, in a conversation between languages, one language. A stream is cut into as few
    windows as fit, of even length (`_even_windows`). Windows come in the order of their first
    segment."""
    ordered = sorted(segments, key=lambda s: s.start)
    streams: dict[str, list[Segment]] = {}
    for s in ordered:
        streams.setdefault(s.speaker if by_speaker else "", []).append(s)
    chunks: list[list[Segment]] = []
    for stream in streams.values():
        others = [o for o in ordered if o.speaker != stream[0].speaker] if by_speaker else []
        chunks.extend(
            _even_windows(stream, partial(_packed_seconds, sr=sr, keep_gap=keep_gap, others=others), max_span)
        )
    return sorted(chunks, key=lambda g: (g[0].start, g[0].key))


def _packed_seconds(group: list[Segment], sr: int, keep_gap: float, others: list[Segment]) -> float:
    """Seconds of audio `group` packs into (the other voices' segments bound its margins)."""
    return pack(group, sr, keep_gap, _inside(others, group[0].start, group[-1].end)).seconds


def _fill_windows(stream: list[Segment], seconds: Callable[[list[Segment]], float], cap: float) -> list[list[Segment]]:
    """Consecutive segments of `stream` gathered while their packed `seconds` stay within `cap`."""
    windows: list[list[Segment]] = []
    current: list[Segment] = []
    for s in stream:
        if current and seconds([*current, s]) <= cap:
            current.append(s)
        else:
            if current:
                windows.append(current)
            current = [s]
    windows.append(current)
    return windows


def _even_windows(
    stream: list[Segment], seconds: Callable[[list[Segment]], float], max_span: float
) -> list[list[Segment]]:
    """As few windows as filling up to `max_span` gives, cut at the smallest length that still
    needs no more of them. Filled to the brim, the last window gets what is left: often one or
    two short turns decoded without the context around them (the bundled interview's last
    question, 2 s alone with one answer: "IT, COMPY CAMCHANED." for "I see. Could he have
    changed?"; in windows of even length: "I see, could he have changed?")."""
    full = _fill_windows(stream, seconds, max_span)
    if len(full) < 2:
        return full
    lo, hi = 0.0, max_span  # hi always gives len(full) windows or fewer
    for _ in range(12):  # max_span / 4096: a few milliseconds
        mid = (lo + hi) / 2
        if len(_fill_windows(stream, seconds, mid)) <= len(full):
            hi = mid
        else:
            lo = mid
    return _fill_windows(stream, seconds, hi)


def _inside(others: list[Segment], start: float, end: float) -> list[Segment]:
    """The other segments that can bound the margins of a clip from `start` to `end` (s)."""
    return [o for o in others if o.end >= start - 1.0 and o.start <= end + 1.0]


def transcribe(
    audio: np.ndarray, sr: int, segments: list[Segment], cfg: AsrConfig | None = None, backend: AsrBackend | None = None
) -> dict:
    """Fill text, language and word timestamps (absolute seconds) of each segment; returns stats."""
    cfg = cfg or AsrConfig()
    backend = backend or make_backend(cfg)
    t = _Transcriber(audio, sr, cfg, backend, segments)
    if cfg.mode == "segment":
        groups = [[s] for s in segments]
    elif cfg.pack_by == "auto":
        groups = t.choose_windows()
    else:
        groups = _chunks(segments, cfg.chunk_s, sr, cfg.pack_gap_s, by_speaker=cfg.pack_by == "speaker")
    t.run(groups)
    return t.stats.as_info()
