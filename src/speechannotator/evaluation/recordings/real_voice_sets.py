"""The real-voice development sets: seeded conversation specs for `real_voices.build`.

`DEV_SET` is what the timeline rules were developed on (the `*_c` added later, the `*_h` held
out), `HELD_OUT_2` a second held-out set, `DEV_SET_3` more development conversations (stop 33),
`HELD_OUT_3` a third held-out set (stop 33), `QUICK_SET` and `CORE_SET` subsets for quick runs and
the 2-4 speaker targets, `long_spec` one long recording of returning voices (docs/timeline.md).
"""

from __future__ import annotations

from speechannotator.evaluation.recordings.real_voices import Spec

# The development set. Same-gender pairs: allison/nl_f/slt/hts2a/forig are women; the rest men.
DEV_SET: tuple[Spec, ...] = (
    Spec("mf_nl_clean", ("nl_f", "nl_m"), 12, "clean", seed=1),
    Spec("mf_nl_music", ("nl_m", "nl_f"), 12, "music", 12.0, seed=2),
    Spec("ff_tel", ("allison", "nl_f"), 12, "telephone", seed=3),
    Spec("ff_tel_b", ("nl_f", "allison"), 10, "telephone", seed=4),
    Spec("ff_noise", ("allison", "nl_f"), 12, "noise", 10.0, seed=5),
    Spec("mm_reverb", ("librivox", "nl_m"), 10, "reverb", seed=6),
    Spec("mm_tel", ("nl_m", "ve9qrp"), 12, "telephone", seed=7),
    Spec("mm_noise", ("ve9qrp", "librivox"), 10, "noise", 5.0, seed=8),
    Spec("mf_music", ("allison", "librivox"), 10, "music", 15.0, seed=9),
    Spec("mf_en_clean", ("awb", "slt"), 4, "clean", seed=10, backchannel_prob=0.0),
    Spec("mm_zh_nl", ("zh_m", "nl_m"), 10, "clean", seed=11),
    Spec("fff_tel", ("allison", "nl_f", "slt"), 12, "telephone", seed=12),
    Spec("mfm_clean", ("allison", "librivox", "nl_m"), 14, "clean", seed=13),
    Spec("mmf_reverb", ("nl_f", "nl_m", "ve9qrp"), 14, "reverb", seed=14),
    Spec("ffff_clean", ("allison", "nl_f", "hts2a", "forig"), 14, "clean", seed=15),
    Spec("mfmf_music", ("allison", "nl_f", "librivox", "nl_m"), 16, "music", 15.0, seed=16),
    Spec("mmmm_tel", ("vk5qi", "nl_m", "ve9qrp", "librivox"), 16, "telephone", seed=17),
    Spec("five_noise", ("allison", "nl_f", "librivox", "nl_m", "zh_m"), 18, "noise", 20.0, seed=18),
    Spec("six_clean", ("allison", "nl_f", "librivox", "nl_m", "awb", "vk5qi"), 20, "clean", seed=19),
    # Added later (not looked at while the clustering rules were chosen): other voice pairings,
    # so the 2-4 speaker count is judged on 25 conversations.
    Spec("mf_tel_c", ("forig", "morig"), 12, "telephone", seed=20),
    Spec("mm_clean_c", ("hts1a", "mmt1"), 12, "clean", seed=21),
    Spec("ff_music_c", ("hts2a", "nl_f"), 12, "music", 12.0, seed=22),
    Spec("mf_noise_c", ("slt", "librivox"), 10, "noise", 15.0, seed=23),
    Spec("mmm_tel_c", ("morig", "nl_m", "awb"), 14, "telephone", seed=24),
    Spec("fmf_reverb_c", ("allison", "mmt1", "forig"), 14, "reverb", seed=25),
    Spec("ffm_noise_c", ("nl_f", "hts2a", "ve9qrp"), 14, "noise", 10.0, seed=26),
    Spec("mfmf_tel_c", ("hts1a", "forig", "vk5qi", "allison"), 16, "telephone", seed=27),
    # Held out (session 3): written down before any rule was judged on them, to check rules chosen on
    # the 27 above; same-gender pairs on every channel.
    Spec("ff_noise_h", ("nl_f", "hts2a"), 12, "noise", 10.0, seed=40),
    Spec("mm_reverb_h", ("awb", "ve9qrp"), 10, "reverb", seed=41),
    Spec("ff_tel_h", ("forig", "slt"), 10, "telephone", seed=42),
    Spec("mf_music_h", ("allison", "nl_m"), 12, "music", 12.0, seed=43),
    Spec("mmf_noise_h", ("librivox", "vk5qi", "nl_f"), 14, "noise", 15.0, seed=44),
    Spec("fff_reverb_h", ("allison", "nl_f", "hts2a"), 14, "reverb", seed=45),
    Spec("mfm_tel_h", ("nl_m", "allison", "zh_m"), 14, "telephone", seed=46),
    Spec("ffmm_clean_h", ("slt", "nl_f", "librivox", "awb"), 16, "clean", seed=47),
    Spec("mm_tel_h", ("librivox", "nl_m"), 12, "telephone", seed=48),
    Spec("ff_clean_h", ("allison", "forig"), 12, "clean", seed=49),
    Spec("mfmf_noise_h", ("allison", "nl_m", "nl_f", "ve9qrp"), 16, "noise", 10.0, seed=50),
    Spec("ff_music_h", ("nl_f", "allison"), 12, "music", 12.0, seed=51),
)
# Held out again (stop 20): written down and committed before any rule of that stop was judged on
# them, because the 12 `*_h` above had since been looked at while rules were chosen. New seeds,
# the hard pairings (Allison + forig, the two Dutch actors, two women in noise) on every channel.
HELD_OUT_2: tuple[Spec, ...] = (
    Spec("ff_tel_h2", ("allison", "forig"), 12, "telephone", seed=60),
    Spec("ff_reverb_h2", ("forig", "allison"), 12, "reverb", seed=61),
    Spec("ff_noise_h2", ("allison", "nl_f"), 12, "noise", 10.0, seed=62),
    Spec("ff_noise15_h2", ("hts2a", "forig"), 10, "noise", 15.0, seed=63),
    Spec("mm_tel_h2", ("nl_m", "librivox"), 12, "telephone", seed=64),
    Spec("mm_noise_h2", ("hts1a", "vk5qi"), 12, "noise", 10.0, seed=65),
    Spec("mf_reverb_h2", ("nl_f", "nl_m"), 12, "reverb", seed=66),
    Spec("mf_tel_h2", ("allison", "morig"), 10, "telephone", seed=67),
    Spec("mf_music_h2", ("hts2a", "mmt1"), 12, "music", 10.0, seed=68),
    Spec("fff_tel_h2", ("forig", "hts2a", "nl_f"), 14, "telephone", seed=69),
    Spec("mmm_noise_h2", ("ve9qrp", "nl_m", "librivox"), 14, "noise", 15.0, seed=70),
    Spec("ffm_reverb_h2", ("allison", "nl_f", "zh_m"), 14, "reverb", seed=71),
    Spec("mfmf_clean_h2", ("nl_m", "forig", "librivox", "allison"), 16, "clean", seed=72),
    Spec("ffmm_tel_h2", ("allison", "nl_f", "nl_m", "hts1a"), 16, "telephone", seed=73),
    Spec("mm_clean_h2", ("zh_m", "librivox"), 10, "clean", seed=74),
    Spec("ff_music_h2", ("forig", "nl_f"), 12, "music", 12.0, seed=75),
)
# A third development set (stop 33), written down before the default was measured on it: the
# development 25 had no count miss left and the held-out sets may not choose rules, so this is
# development data for the count. New seeds; the Dutch actress (in most misses left) in every
# channel and in 2-4 speaker conversations, same-gender pairs and two men in reverberation.
DEV_SET_3: tuple[Spec, ...] = (
    Spec("ff_tel_d3", ("nl_f", "hts2a"), 12, "telephone", seed=80),
    Spec("ff_noise_d3", ("nl_f", "forig"), 12, "noise", 10.0, seed=81),
    Spec("ff_reverb_d3", ("nl_f", "slt"), 12, "reverb", seed=82),
    Spec("mf_reverb_d3", ("nl_m", "nl_f"), 12, "reverb", seed=83),
    Spec("mf_noise_d3", ("nl_f", "awb"), 12, "noise", 10.0, seed=84),
    Spec("ff_music_d3", ("allison", "nl_f"), 12, "music", 12.0, seed=85),
    Spec("ff_clean_d3", ("nl_f", "forig"), 12, "clean", seed=86),
    Spec("mm_reverb_d3", ("hts1a", "librivox"), 10, "reverb", seed=87),
    Spec("mm_reverb2_d3", ("nl_m", "vk5qi"), 12, "reverb", seed=88),
    Spec("mm_noise_d3", ("awb", "morig"), 12, "noise", 10.0, seed=89),
    Spec("mm_tel_d3", ("mmt1", "ve9qrp"), 12, "telephone", seed=90),
    Spec("mm_music_d3", ("zh_m", "nl_m"), 12, "music", 12.0, seed=91),
    Spec("ff_tel2_d3", ("slt", "allison"), 12, "telephone", seed=92),
    Spec("ff_reverb2_d3", ("hts2a", "allison"), 12, "reverb", seed=93),
    Spec("mf_tel_d3", ("nl_f", "vk5qi"), 12, "telephone", seed=94),
    Spec("mf_music_d3", ("nl_f", "hts1a"), 12, "music", 10.0, seed=95),
    Spec("fff_tel_d3", ("nl_f", "allison", "forig"), 14, "telephone", seed=96),
    Spec("fff_noise_d3", ("hts2a", "nl_f", "slt"), 14, "noise", 10.0, seed=97),
    Spec("ffm_reverb_d3", ("nl_f", "forig", "librivox"), 14, "reverb", seed=98),
    Spec("mmf_noise_d3", ("nl_m", "awb", "nl_f"), 14, "noise", 10.0, seed=99),
    Spec("mmm_reverb_d3", ("librivox", "ve9qrp", "mmt1"), 14, "reverb", seed=101),
    Spec("mmm_tel_d3", ("hts1a", "nl_m", "vk5qi"), 14, "telephone", seed=102),
    Spec("mfmf_noise_d3", ("nl_f", "nl_m", "allison", "awb"), 16, "noise", 10.0, seed=103),
    Spec("ffmm_reverb_d3", ("nl_f", "slt", "nl_m", "ve9qrp"), 16, "reverb", seed=104),
    Spec("fmfm_tel_d3", ("nl_f", "librivox", "forig", "morig"), 16, "telephone", seed=105),
    Spec("ffff_music_d3", ("nl_f", "allison", "slt", "hts2a"), 16, "music", 15.0, seed=106),
    Spec("mmmm_noise_d3", ("awb", "librivox", "nl_m", "vk5qi"), 16, "noise", 15.0, seed=107),
    Spec("ffm_clean_d3", ("nl_f", "allison", "zh_m"), 14, "clean", seed=108),
)
# Held out a third time (stop 33): written down and committed before any rule was scored on it,
# because the held-out sets above were seen after cnt3's rules were chosen. New seeds 120-141, the
# same channels and mixes as the held-out sets above: the Dutch actress and same-gender pairs.
HELD_OUT_3: tuple[Spec, ...] = (
    Spec("ff_tel_h3", ("nl_f", "slt"), 12, "telephone", seed=120),
    Spec("ff_noise_h3", ("forig", "nl_f"), 12, "noise", 10.0, seed=121),
    Spec("ff_reverb_h3", ("allison", "hts2a"), 12, "reverb", seed=122),
    Spec("ff_music_h3", ("slt", "forig"), 12, "music", 12.0, seed=123),
    Spec("ff_clean_h3", ("hts2a", "nl_f"), 10, "clean", seed=124),
    Spec("mm_tel_h3", ("awb", "nl_m"), 12, "telephone", seed=125),
    Spec("mm_noise_h3", ("librivox", "mmt1"), 12, "noise", 15.0, seed=126),
    Spec("mm_reverb_h3", ("vk5qi", "morig"), 10, "reverb", seed=127),
    Spec("mm_music_h3", ("ve9qrp", "hts1a"), 12, "music", 10.0, seed=128),
    Spec("mf_reverb_h3", ("nl_f", "zh_m"), 12, "reverb", seed=129),
    Spec("mf_noise_h3", ("allison", "nl_m"), 12, "noise", 10.0, seed=130),
    Spec("mf_tel_h3", ("nl_f", "morig"), 12, "telephone", seed=131),
    Spec("mf_clean_h3", ("slt", "vk5qi"), 10, "clean", seed=132),
    Spec("fff_noise_h3", ("nl_f", "forig", "allison"), 14, "noise", 10.0, seed=133),
    Spec("ffm_tel_h3", ("hts2a", "nl_f", "awb"), 14, "telephone", seed=134),
    Spec("mmf_reverb_h3", ("nl_m", "librivox", "nl_f"), 14, "reverb", seed=135),
    Spec("mmm_clean_h3", ("mmt1", "zh_m", "ve9qrp"), 14, "clean", seed=136),
    Spec("mfm_music_h3", ("morig", "slt", "nl_m"), 14, "music", 12.0, seed=137),
    Spec("ffmm_noise_h3", ("nl_f", "allison", "ve9qrp", "hts1a"), 16, "noise", 10.0, seed=138),
    Spec("mfmf_reverb_h3", ("awb", "nl_f", "nl_m", "forig"), 16, "reverb", seed=139),
    Spec("ffff_tel_h3", ("slt", "nl_f", "forig", "allison"), 16, "telephone", seed=140),
    Spec("mmmm_clean_h3", ("nl_m", "vk5qi", "librivox", "mmt1"), 16, "clean", seed=141),
)
QUICK_SET = tuple(
    s for s in DEV_SET if s.name in ("mf_nl_clean", "ff_tel", "mm_tel", "mf_music", "fff_tel", "mfmf_music")
)
# The 2-4 speaker core the targets are judged on when the whole set is too slow to run.
CORE_SET = tuple(
    s
    for s in DEV_SET
    if s.name
    in (
        "mf_nl_clean",
        "ff_tel",
        "ff_tel_b",
        "ff_noise",
        "mm_reverb",
        "mm_tel",
        "mf_music",
        "fff_tel",
        "ffff_clean",
        "mfmf_music",
    )
)
LONG_VOICES = ("nl_f", "nl_m", "allison", "librivox", "zh_m", "ve9qrp", "vk5qi", "mmt1", "awb", "slt", "hts1a", "hts2a")


def long_spec(minutes: float, seed: int = 100, channel: str = "clean") -> Spec:
    """Twelve voices returning in random order for at least `minutes` (turns advance the clock by
    about 3.8 s on average, pauses and overlaps included; 3.6 s per turn is planned so the recording
    is not shorter than asked: 60 -> 63 min)."""
    return Spec(f"long_{minutes:g}min", LONG_VOICES, int(minutes * 60 / 3.6), channel, seed=seed, overlap_prob=0.1)
