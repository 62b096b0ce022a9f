import numpy as np
import pytest
import scipy.signal as ss

from speechannotator.audio import Audio
from speechannotator.config import PriorsSettings
from speechannotator.enhance import enhance
from speechannotator.evaluation.recordings import known_truth as C


def _audio(x):
    return Audio(
        samples=x.astype(np.float32), sample_rate=16000, path="<t>", original_sample_rate=16000, original_channels=1
    )


@pytest.fixture(scope="module")
def clean(espeak_ok):
    return C.espeak(C.TEXTS[2], "en-us+m3", 50)


def test_enhance_aligns_and_denoises(clean):
    rng = np.random.default_rng(0)
    noisy = C.mix(clean, C.noise("white", len(clean), rng), 5)
    ref = clean * (np.max(np.abs(noisy)) and 1.0)
    y = enhance(_audio(noisy), PriorsSettings())
    assert len(y) == len(noisy)
    cc = ss.correlate(y, clean, mode="full", method="fft")
    assert abs(int(np.argmax(cc)) - (len(clean) - 1)) <= 2  # the model delay is removed

    def snr(est):
        g = np.dot(est, ref) / np.dot(ref, ref)
        return 10 * np.log10(np.sum((g * ref) ** 2) / np.sum((est - g * ref) ** 2))

    assert snr(y) > snr(noisy) + 5


def test_enhance_off_and_unknown_enhancer_return_original(clean, caplog):
    a = _audio(clean)
    assert np.array_equal(enhance(a, PriorsSettings(enhance=False)), clean)
    assert np.array_equal(enhance(a, PriorsSettings(enhancer="nope")), clean)
    assert "not supported" in caplog.text


def test_background_none_noise_music(clean):
    from speechannotator.priors import extract_priors

    rng = np.random.default_rng(3)
    clips = [
        (clean, "A", C.TEXTS[2], "en"),
        (C.mix(clean, C.noise("pink", len(clean), rng), 10), "A", C.TEXTS[2], "en"),
        (C.mix(clean, C.music(len(clean), rng), 10), "A", C.TEXTS[2], "en"),
    ]
    audio, segs = C.recording(clips)
    t = {(e.key, e.name): e.value for e in extract_priors(audio, segs)}
    assert [t[(s.key, "scene.background")] for s in segs] == ["none", "noise", "music"]
    assert t[(segs[1].key, "snr.db")] < t[(segs[0].key, "snr.db")] - 10
    assert t[(segs[2].key, "scene.music_prob")] > 0.5


def test_reverb_proxy_orders_rooms(clean):
    import subprocess
    import tempfile

    import soundfile as sf

    from speechannotator.priors.scene import reverb_proxy

    with tempfile.TemporaryDirectory() as d:
        sf.write(f"{d}/a.wav", clean, 16000)
        subprocess.run(["sox", f"{d}/a.wav", f"{d}/b.wav", "reverb", "60", "50", "100"], check=True)
        wet, _ = sf.read(f"{d}/b.wav", dtype="float32")
    assert reverb_proxy(clean) < 0.2 < 0.6 < reverb_proxy(wet[:, 0] if wet.ndim > 1 else wet)


def test_slots_absent_are_skipped(caplog, tmp_path):
    from speechannotator.priors.slots import Slots

    s = Slots(PriorsSettings(emotion2vec_path=str(tmp_path / "missing"), sound_event_path=None))
    x = np.zeros(16000, np.float32)
    assert s.emotion(x) is None and s.events(x) is None and s.age_gender(x) is None
    assert "emotion2vec slot skipped" in caplog.text


def test_residual_check_tells_babble_from_music(clean):
    """What an enhancer removes from babble is talkers; from a music bed it is music.

    Each residual keeps some of the foreground voice, as DeepFilterNet's does."""
    import doctest

    from speechannotator.priors import scene

    result = doctest.testmod(scene)
    assert result.attempted >= 1 and result.failed == 0
    rng = np.random.default_rng(11)
    n = len(clean)
    babble = C.noise("babble", n, rng)
    bed = C.music(n, rng)
    leak = 0.3 * clean / (np.std(clean) + 1e-9)
    for bg, is_speech in ((babble, True), (bed, False)):
        bg = bg / (np.std(bg) + 1e-9) * 0.05
        assert scene.residual_is_speech(clean + bg + 0.05 * leak, clean) is is_speech
    # Both classes over 0.5 in every frame: only the means say which one is surer.
    assert scene.speech_over_music(np.array([[0.9, 0.0, 0.6], [0.8, 0.0, 0.7]]))
    assert not scene.speech_over_music(np.array([[0.6, 0.0, 0.9], [0.7, 0.0, 0.8]]))


def test_dnsmos_scores_are_speechmoss_own_without_the_p808_pass(clean):
    """DnsmosBudget runs only the P.835 model; its three scores are exactly speechmos's."""
    import os

    from speechmos import dnsmos as dm

    from speechannotator.priors import scene

    base = os.path.dirname(dm.__file__)
    ref = dm.DNSMOS(*(os.path.join(base, "dnsmos_models", f) for f in ("sig_bak_ovr.onnx", "model_v8.onnx")))
    noisy = (clean + 0.02 * np.random.default_rng(3).standard_normal(len(clean))).astype(np.float32)
    for x in (clean, noisy):
        got = scene.DnsmosBudget(100.0, 1.0, 0.1).score(x)
        n = int(scene.dm_len() * 16000)
        window = np.tile(x, int(np.ceil(n / len(x))))[: n + 1] if len(x) < n else x[: n + 1]
        want = ref(np.clip(window, -1, 1), 16000, False)
        assert got == {f"scene.dnsmos_{k}": float(want[f"{k}_mos"]) for k in ("sig", "bak", "ovrl")}
