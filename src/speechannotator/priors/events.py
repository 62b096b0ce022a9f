"""Sound-event evidence from YAMNet frame scores (0.96 s patches every 0.48 s).

YAMNet runs once over the recording (about 0.006 s of CPU per audio second). Each patch's
521 raw logits are reduced to groups (the highest logit of a group's AudioSet classes); a
segment reads the patches whose centre lies inside it, a gap the patches between segments.

Only groups calibrated on real sounds give evidence (``CALIBRATED``: music, laughter, road
vehicles and crowds, measured by benchmarks/events_bench.py on speech of the real-voice set
mixed with sounds from Debian packages at measured levels, thresholds chosen on its dev half;
vehicle and crowd by a logistic regression trained on that half, priors/background.py);
every other group (``ABSTAINED``) is abstained, not guessed. Evidence values are
probabilities centred on the calibrated threshold (``0.5`` = the threshold), so the agents'
thresholds (calibration.py) read them as before.

Music needs a relative rule: under a voice the music logit stays low in absolute terms (a bed
10 dB under LibriVox speech: music -1.5, against -10.6 on the clean speech), so a segment's
music score is the median music logit of its patches against a threshold set between clean
speech and speech over music 20 dB down; its strength is read from music minus speech.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from speechannotator.priors import background, yamnet

# AudioSet display names per group; "music" is the whole Music subtree of the class map
# (indices 132-276, "Music" .. "Scary music"), see music_indices().
GROUPS: dict[str, tuple[str, ...]] = {
    "speech": ("Speech", "Child speech, kid speaking", "Conversation", "Narration, monologue"),
    "laughter": ("Laughter", "Baby laughter", "Giggle", "Snicker", "Belly laugh", "Chuckle, chortle"),
    "breathing": ("Breathing", "Gasp", "Pant"),
    "cough": ("Cough",),
    "sigh": ("Sigh",),
    "crying": ("Crying, sobbing", "Whimper", "Wail, moan"),
    "throat_clearing": ("Throat clearing",),
    # road vehicles and engines (traffic, a car revving, a passing siren)
    "vehicle": (
        "Vehicle",
        "Motor vehicle (road)",
        "Car",
        "Car passing by",
        "Race car, auto racing",
        "Truck",
        "Bus",
        "Motorcycle",
        "Emergency vehicle",
        "Police car (siren)",
        "Ambulance (siren)",
        "Fire engine, fire truck (siren)",
        "Traffic noise, roadway noise",
        "Engine",
        "Light engine (high frequency)",
        "Medium engine (mid frequency)",
        "Heavy engine (low frequency)",
        "Idling",
        "Accelerating, revving, vroom",
    ),
    # an audience or a crowd: applause, cheering, chatter
    "crowd": ("Crowd", "Hubbub, speech noise, speech babble", "Cheering", "Applause", "Clapping", "Chatter"),
    # broadband noise (fans, hiss, water, wind): what engines and traffic must beat to be named
    "noise": (
        "White noise",
        "Pink noise",
        "Noise",
        "Static",
        "Hiss",
        "Environmental noise",
        "Mechanical fan",
        "Air conditioning",
        "Water",
        "Waterfall",
        "Stream",
        "Rain",
        "Wind",
        "Wind noise (microphone)",
        "Rustling leaves",
        "Outside, rural or natural",
    ),
    "telephone": ("Telephone", "Telephone bell ringing", "Ringtone", "Telephone dialing, DTMF", "Dial tone"),
}
MUSIC_FIRST, MUSIC_LAST = 132, 276  # "Music" .. "Scary music" in YAMNet's class map

# Calibrated decision thresholds on raw logits (benchmarks/events_bench.py, tuning split:
# LibriVox, the Dutch actress, awb, Allison; music-on-hold files 1-3; laughs of the even
# hedgewars voices). Music: segment median of the music logit (clean speech -12..-8,
# music 20 dB under speech -5..-1; all 60 tuning cases right at -6.5).
MUSIC_LOGIT_MIN = -6.5
# Laughter: a patch is a laugh where the laughter logit stands over the speech logit (a laugh over
# a voice is relative too) AND the laughter logit itself is not low. Laughter minus speech alone
# also rises wherever the speech logit drops (a pause, room noise, a sound effect: in AMI meeting
# clips "Silence" or "Animal" patches reach -2.3 with laughter at -8.3); alone it sat at -3.0,
# over the expressive Dutch actress's speech (-4.5). Chosen together on the dev half
# (events_bench.py's tune laughs spliced into the tune voices, every 0.48 s patch): the pair with the best
# recall at no false alarm on the 21 lone dev segments, the stricter corner of that plateau
# (84/112 against 79/112 with -3.0 alone; -4.0 .. -4.5 and -8 .. -7 score alike: the uint8
# scores step by 0.76, both values sit between two steps). Two of the eight dev laughs
# (British, Russian_pl) are heard as speech even alone, which caps dev recall near 75 %. A finer
# hop (0.24 or 0.12 s) was measured too: it lifts the lone segments' peaks as much as the laughs'
# (dev 81/112 at best with no false alarm), so the hop stays. A logistic model over 14 classes'
# logits (dev cross-validated 89/112 at 1/21) leant on "Child speech" and tagged natural women's
# speech as laughter (pyannote's sample.wav), so it was not used. Held out: 63/90 (70 %) at 1/22
# segments with a false laugh (before 56/90, 0/22).
LAUGHTER_OVER_SPEECH_MIN = -4.0
LAUGHTER_LOGIT_MIN = -7.0
# Music must also stand over the broadband-noise group (fans, hiss, water, wind): YAMNet names
# white noise at 5 dB SNR music (-6.1), so music is called where its segment median logit reaches
# MUSIC_LOGIT_MIN AND the median of music minus the noise group reaches this margin (tune split,
# events_bench.py --calibrate, false alarms within 5 % of 160 segments).
MUSIC_OVER_NOISE_MIN = 3.0
# Vehicle and crowd are not thresholds: a logistic regression over the segment's YAMNet groups
# and the sound of its pauses (priors/background.py, trained on the tune half by
# scripts/train_background.py) gives their probabilities; hand thresholds confused crowds with
# traffic (YAMNet's "Vehicle" answers to a stadium's roar) and missed crowd chatter under a voice
# ("Chatter" is close to speech). Held out (events_bench.py --split test): background class
# 78.1 % right with the thresholds, 81.8 % with the 521-logit classifier, 84.4 % with the pause
# features (dev half by file folds 90.1 -> 93.9 %).
CALIBRATED = ("music", "laughter", "vehicle", "crowd")
# Not calibrated: no package we found ships real breathing, coughs, sighs, crying or throat
# clearing (one OpenArena gasp), so these groups are computed but never given as evidence.
ABSTAINED = ("breathing", "cough", "sigh", "crying", "throat_clearing", "telephone")
# Music minus speech logit (segment medians): above this the music is as loud as the voice
# (0 dB mixes measure +1..+7, -10 dB -2..+2, -20 dB -7..-1).
MUSIC_LOUD_OVER_SPEECH = 0.0


@dataclass
class EventTrack:
    """Per-patch group logits of a whole recording."""

    starts: np.ndarray  # patch start times (s)
    groups: dict[str, np.ndarray]  # group -> (patches,) highest logit of the group's classes
    frames: np.ndarray | None = None  # background.frame_summary of YAMNet's log-mel frames (the classifier reads them)

    @property
    def centres(self) -> np.ndarray:
        return self.starts + yamnet.PATCH_S / 2

    def index(self, start: float, end: float) -> np.ndarray:
        """Patches whose centre lies in [start, end); the nearest one when none does."""
        c = self.centres
        idx = np.flatnonzero((c >= start) & (c < end))
        if len(idx) == 0 and len(c):
            idx = np.array([int(np.argmin(np.abs(c - (start + end) / 2)))])
        return idx

    def frame_rows(self, start: float, end: float) -> np.ndarray:
        """The frame summary rows of [start, end) (the segment only: a patch reaches 0.48 s past
        it, into silence or another voice); the nearest frame when none falls inside."""
        assert self.frames is not None
        a = min(len(self.frames) - 1, max(0, int(np.ceil(start / yamnet.FRAME_S))))
        return self.frames[a : max(a + 1, int(np.ceil(end / yamnet.FRAME_S)))]


def music_indices(names: list[str]) -> list[int]:
    if names[MUSIC_FIRST] != "Music":  # a different class map would silently shift the subtree
        raise ValueError("YAMNet class map: index 132 is not 'Music'")
    return list(range(MUSIC_FIRST, MUSIC_LAST + 1))


def group_logits(logits: np.ndarray, names: list[str]) -> dict[str, np.ndarray]:
    """(patches, 521) logits -> highest logit per group and patch."""
    pos = {n: i for i, n in enumerate(names)}
    out = {g: logits[:, [pos[n] for n in members if n in pos]].max(axis=1) for g, members in GROUPS.items()}
    out["music"] = logits[:, music_indices(names)].max(axis=1)
    return out


def event_track(samples: np.ndarray) -> EventTrack | None:
    """YAMNet over the whole recording; None when the model is unavailable."""
    model = yamnet.load()
    if model is None:
        return None
    mel = yamnet.log_mel(np.asarray(samples, np.float32))
    logits = model.logits_of_patches(yamnet.patches(mel))
    starts = np.arange(len(logits)) * yamnet.PATCH_HOP_S
    return EventTrack(starts, group_logits(logits, model.names), background.frame_summary(mel))


def group_scores(groups: dict[str, np.ndarray], name: str, idx: np.ndarray) -> tuple[float, float]:
    """(median group logit, median of the group minus the broadband-noise group) over patches."""
    g = groups[name][idx]
    return float(np.median(g)), float(np.median(g - groups["noise"][idx]))


def _prob(logit: float, threshold: float) -> float:
    """0.5 at the calibrated threshold; one logit unit either side moves it like a sigmoid."""
    return 1.0 / (1.0 + math.exp(-(logit - threshold)))


def _prob2(scores: tuple[float, float], threshold: float, margin: float) -> float:
    """0.5 where the weaker of the two conditions (logit over its threshold, group over the
    noise group by its margin) just holds."""
    return _prob(min(scores[0] - threshold, scores[1] - margin), 0.0)


def laughter_score(track: EventTrack) -> np.ndarray:
    """Per patch: how far the weaker of the two laughter conditions holds (>= 0: a laugh), the
    laughter logit minus the speech logit over LAUGHTER_OVER_SPEECH_MIN and the laughter logit
    over LAUGHTER_LOGIT_MIN."""
    g = track.groups
    return np.minimum(g["laughter"] - g["speech"] - LAUGHTER_OVER_SPEECH_MIN, g["laughter"] - LAUGHTER_LOGIT_MIN)


def laughter_times(track: EventTrack, idx: np.ndarray) -> list[list[float]]:
    """[start, end] (s) of runs of patches over the laughter threshold, merged where they overlap."""
    out: list[list[float]] = []
    score = laughter_score(track)
    for i in idx:
        if score[i] < 0.0:
            continue
        a, b = float(track.starts[i]), float(track.starts[i] + yamnet.PATCH_S)
        if out and a <= out[-1][1]:
            out[-1][1] = b
        else:
            out.append([a, b])
    return [[round(a, 2), round(b, 2)] for a, b in out]


def segment_events(
    track: EventTrack | None, start: float, end: float, spans: list[tuple[float, float]] | None = None
) -> dict[str, float | list]:
    """Calibrated event evidence of one segment (empty without the model). ``spans``: where in
    [start, end) the speech is (a whole recording's segments); the background classifier reads
    the log-mel frames of those only, not the gaps between them (default: all of [start, end))."""
    if track is None or not len(track.starts):
        return {}
    idx = track.index(start, end)
    g = track.groups
    over = float(np.median(g["music"][idx] - g["speech"][idx]))
    laugh = float(np.max(laughter_score(track)[idx]))
    out: dict[str, float | list] = {
        "events.music": _prob2(group_scores(g, "music", idx), MUSIC_LOGIT_MIN, MUSIC_OVER_NOISE_MIN),
        "events.music_over_speech": over,
        **background_probs(track, idx, spans or [(start, end)]),
        "events.laughter": _prob(laugh, 0.0),
        "events.patches": int(len(idx)),
    }
    times = laughter_times(track, idx)
    if times:
        out["events.laughter_times"] = times
    return out


def background_probs(track: EventTrack, idx: np.ndarray, spans: list[tuple[float, float]]) -> dict[str, float]:
    """``events.vehicle`` and ``events.crowd``: the background classifier's probabilities."""
    if track.frames is None:
        return {}
    groups = {g: v[idx] for g, v in track.groups.items()}
    p = background.probabilities(
        background.features(groups, np.concatenate([track.frame_rows(a, b) for a, b in spans]))
    )
    return {"events.vehicle": p["vehicle"], "events.crowd": p["crowd"]}


def background_class(ev: dict) -> str:
    """'none', 'music', 'vehicle' or 'crowd': music by its calibrated rule, else the classifier's
    vehicle or crowd where its probability reaches 0.5 (as every event value reads), else none."""
    if float(ev.get("events.music", 0.0)) >= 0.5:
        return "music"
    heard = [g for g in ("vehicle", "crowd") if float(ev.get(f"events.{g}", 0.0)) >= 0.5]
    return heard[0] if heard else "none"


def reliability(name: str, ev: dict) -> float:
    """How far a segment's event value is trusted: by the patches behind it (3 patches = 1.4 s
    of audio give a stable median), and by the distance of the score from its threshold."""
    n = float(ev.get("events.patches", 1))
    base = min(1.0, n / 3.0)
    if name in ("events.music", "events.laughter", "events.vehicle", "events.crowd"):
        p = float(ev.get(name, 0.5))
        return base * (0.5 + abs(p - 0.5))  # 0.5 at the threshold, 1.0 far from it
    return base


def gap_events(track: EventTrack | None, times: list[tuple[float, float]], duration: float) -> dict[str, float]:
    """Recording-level evidence from the gaps between segments: the share of gap patches with music."""
    if track is None or not len(track.starts):
        return {}
    c = track.centres
    inside = np.zeros(len(c), bool)
    for a, b in times:
        inside |= (c >= a) & (c < b)
    gaps = np.flatnonzero(~inside & (c < duration))
    if len(gaps) == 0:
        return {}
    return {
        "events.gap_music_share": float(
            np.mean(
                (track.groups["music"][gaps] >= MUSIC_LOGIT_MIN)
                & (track.groups["music"][gaps] - track.groups["noise"][gaps] >= MUSIC_OVER_NOISE_MIN)
            )
        ),
        "events.gap_s": float(len(gaps) * yamnet.PATCH_HOP_S),
    }
