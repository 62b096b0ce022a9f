import warnings

import pytest

from speechannotator.evaluation.recordings import known_truth as C

warnings.filterwarnings("ignore", message="pkg_resources")


@pytest.fixture(scope="session")
def espeak_ok():
    if not C.have_espeak():
        pytest.skip("espeak-ng not installed")
    return True


@pytest.fixture(scope="session")
def small_recording(espeak_ok):
    """Two speakers (a male LibriVox reader and a female espeak voice), four segments."""
    lv = C.librivox()
    clips = [
        (lv[0][0], "A", lv[0][1], "en"),
        (C.espeak(C.TEXTS[0], "en-us+f2", 65, 170), "B", C.TEXTS[0], "en"),
        (lv[3][0], "A", lv[3][1], "en"),
        (C.espeak(C.TEXTS[1], "en-us+f2", 65, 260), "B", C.TEXTS[1], "en"),
    ]
    return C.recording(clips)


@pytest.fixture(scope="session")
def small_evidence(small_recording):
    from speechannotator.priors import extract_priors

    audio, segs = small_recording
    return audio, segs, extract_priors(audio, segs)
