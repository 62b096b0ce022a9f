"""Names and units of prior evidence: the vocabulary shared by extractors and agents.

Extractors write Evidence(name=...) with these names; contracts admit them by name or by
prefix (e.g. "pitch." admits every pitch statistic). Speaker-level aggregates use the same
names under the key ``speaker:<label>`` (mean of the speaker's segments, weighted by
duration), and population statistics under the key ``recording``.
"""

from __future__ import annotations

# The timeline's fit of each segment to its speaker's voice (priors/voice_fit.py): exports and the
# review page read them by these names.
VOICE_SIMILARITY = "timeline.voice_similarity"
VOICE_MARGIN = "timeline.voice_margin"

# name: (unit, description)
EVIDENCE: dict[str, tuple[str, str]] = {
    # acoustic statistics on the enhanced segment (DataSpeech-style)
    "pitch.mean_hz": ("Hz", "mean F0 over voiced frames"),
    "pitch.median_hz": ("Hz", "median F0 over voiced frames"),
    "pitch.std_semitones": ("st", "F0 standard deviation in semitones"),
    "pitch.range_semitones": ("st", "5th-95th percentile F0 range in semitones"),
    "pitch.slope_semitones_per_s": ("st/s", "linear F0 trend across the segment (negative: falling)"),
    "pitch.final_slope_semitones": ("st", "F0 change over the last 30% of the last phrase's voiced frames"),
    "pitch.voiced_ratio": ("ratio", "share of frames that are voiced"),
    "loudness.lufs": ("LUFS", "integrated loudness (ITU BS.1770)"),
    "energy.rms_db": ("dBFS", "RMS energy"),
    "energy.std_db": ("dB", "standard deviation of frame energy over speech"),
    "rate.units_per_s": ("units/s", "characters per second (zh) or syllables per second"),
    "rate.unit": ("", "'char' or 'syllable'"),
    "pause.ratio": ("ratio", "share of the speech span (first to last speech frame) that is pause (>= 150 ms)"),
    "pause.count": ("count", "number of internal pauses >= 300 ms"),
    "pause.longest_s": ("s", "longest internal pause"),
    "snr.db": ("dB", "estimated speech-to-noise ratio on the original audio"),
    "voice.hnr_db": ("dB", "harmonics-to-noise ratio"),
    "voice.jitter": ("ratio", "local jitter"),
    "voice.shimmer": ("ratio", "local shimmer"),
    # speaker traits on the original audio
    "gender.p_male": ("prob", "probability that the voice is male (classifier, cross-checked with pitch)"),
    "gender.label": ("", "'male' or 'female' by the extractor's decision"),
    "age.band": ("", "coarse age band evidence when a model provides it"),
    # scene and events on the original audio
    "scene.speech_prob": ("prob", "share of frames with speech"),
    "scene.music_prob": ("prob", "share of frames with music"),
    "scene.singing_prob": ("prob", "share of frames with singing"),
    "scene.noise_db": ("dBFS", "noise floor level in non-speech frames"),
    "scene.noise_type": ("", "'none', 'stationary', 'babble', 'music' or 'impulsive'"),
    "scene.dnsmos_sig": ("MOS", "DNSMOS speech quality"),
    "scene.dnsmos_bak": ("MOS", "DNSMOS background quality (low: intrusive background)"),
    "scene.dnsmos_ovrl": ("MOS", "DNSMOS overall quality"),
    "scene.reverb": ("ratio", "reverberation proxy (late energy decay), 0 dry .. 1 very reverberant"),
    "scene.background": ("", "'none', 'noise' or 'music' by the extractor's decision"),
    "events.laughter": ("prob", "laughter evidence (YAMNet, or a plugged-in tagger)"),
    "events.breath": ("prob", "audible breath evidence"),
    "events.long_pause": ("count", "pauses >= 700 ms inside the segment"),
    # emotion
    "emotion.arousal": ("z", "prosodic arousal: energy, pitch and rate relative to the speaker"),
    "emotion.valence_text": ("score", "transcript valence in [-1, 1]"),
    "emotion.model_label": ("", "label of a plugged-in emotion model (emotion2vec)"),
    "emotion.model_scores": ("", "score per class of a plugged-in emotion model"),
    # additions by the priors extractors (additive)
    "pitch.std_hz": ("Hz", "F0 standard deviation in Hz"),
    "pitch.range_hz": ("Hz", "5th-95th percentile F0 range in Hz"),
    "pitch.class": (
        "class",
        "median F0 relative to the speaker's gender norm: -2 very low .. 2 very high (calibration.py)",
    ),
    "pitch.rel_speaker_semitones": ("st", "segment median F0 relative to the speaker's median"),
    "rate.articulation_units_per_s": ("units/s", "rate with internal pauses >= 150 ms removed"),
    "rate.class": (
        "class",
        "speaking rate relative to the language norm: -2 very slow .. 2 very fast (calibration.py)",
    ),
    "rate.rel_speaker": ("ratio", "segment rate over the speaker's mean rate"),
    "pause.internal_s": ("s", "total internal pause time (pauses >= 150 ms)"),
    "gender.p_model": ("prob", "male probability of the voice2gender classifier alone"),
    "gender.p_pitch": ("prob", "male probability from median F0 alone"),
    "gender.p_embedding": ("prob", "male probability of the CAM++ speaker-embedding model alone (gender.py)"),
    "age.years": ("years", "age estimate of a plugged-in age model"),
    "gender.p_male_model2": ("prob", "male probability of a plugged-in age-gender model"),
    "scene.noise_spread_db": (
        "dB",
        "10th-90th percentile spread of the noise residual's frame energy (low: stationary)",
    ),
    "emotion.valence_method": ("", "'vaderSentiment' or 'lexicon-zh'"),
    "events.music": ("prob", "music under or between the speech (YAMNet, or a plugged-in tagger)"),
    "events.singing": ("prob", "singing score of a plugged-in sound event tagger"),
    # YAMNet sound events (priors/events.py): probabilities are 0.5 at the calibrated threshold
    "events.vehicle": ("prob", "road vehicles or engines under or between the speech (YAMNet)"),
    "events.crowd": ("prob", "an audience or crowd: applause, cheering, chatter (YAMNet)"),
    "scene.sound_source": ("", "'traffic' or 'crowd': the noise source YAMNet heard (priors/events.py)"),
    "events.music_over_speech": ("logit", "median YAMNet music minus speech logit (>= 0: music as loud as the voice)"),
    "events.laughter_times": ("s", "[start, end] of the patches where laughter was heard (recording time)"),
    "events.patches": ("count", "YAMNet patches (0.96 s, every 0.48 s) behind the segment's event values"),
    "events.gap_music_share": ("ratio", "share of the gaps between segments with music (YAMNet)"),
    "events.gap_s": ("s", "seconds of gap between segments that YAMNet read"),
    "quality.mos": ("MOS", "Distill-MOS speech quality 1-5 (priors/quality.py; budgeted, not every segment)"),
    # channel (priors/channel.py), on the original audio
    "channel.bandwidth_hz": ("Hz", "effective bandwidth: highest 250 Hz band within 50 dB of the speech band"),
    "channel.origin": ("", "'telephone' (8 kHz origin), 'narrowband' or 'wideband' (16 kHz or more)"),
    "channel.clipped_share": ("ratio", "share of samples at full scale"),
    "channel.peak_dbfs": ("dBFS", "peak sample level"),
    # the timeline's own evidence (priors/voice_fit.py), per segment with a diarizer voice
    VOICE_SIMILARITY: ("cos", "cosine of the segment's voice to its speaker's other segments' mean voice"),
    VOICE_MARGIN: ("cos", "voice similarity minus the highest cosine to another speaker's mean voice"),
    "population.speakers": ("count", "number of speakers in the recording"),
    "population.speech_s": ("s", "total segment duration"),
    "population.pitch_p10": ("Hz", "10th percentile of segment median F0"),
    "population.pitch_p50": ("Hz", "median of segment median F0"),
    "population.pitch_p90": ("Hz", "90th percentile of segment median F0"),
    "population.rate_p10": ("units/s", "10th percentile of segment speaking rate"),
    "population.rate_p50": ("units/s", "median segment speaking rate"),
    "population.rate_p90": ("units/s", "90th percentile of segment speaking rate"),
    "population.energy_p10": ("dBFS", "10th percentile of segment RMS energy"),
    "population.energy_p50": ("dBFS", "median segment RMS energy"),
    "population.energy_p90": ("dBFS", "90th percentile of segment RMS energy"),
}


def unit_of(name: str) -> str:
    return EVIDENCE.get(name, ("", ""))[0]
