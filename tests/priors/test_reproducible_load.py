"""Evidence must not depend on machine load: budgets count windows, never elapsed time."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

from speechannotator.config import PriorsSettings


def _extract(recording, settings):
    from speechannotator.priors import extract_priors

    audio, segs = recording
    evs = extract_priors(audio, segs, settings=settings)
    return json.dumps([dataclasses.asdict(e) for e in evs], sort_keys=True, default=str).encode()


def test_evidence_bytes_identical_idle_and_under_load(small_recording):
    audio, _ = small_recording
    # Three DNSMOS windows; the window cost is set far below DNSMOS's real cost, so a budget
    # that spent elapsed seconds would stop after the first window under any load.
    cost = 0.01
    s = PriorsSettings(enhancer="none", dnsmos_rtf_budget=3 * cost / audio.duration + 1e-9, dnsmos_window_cost_s=cost)
    idle = _extract(small_recording, s)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3)]
    try:
        loaded = _extract(small_recording, s)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert idle == loaded
    evs = json.loads(idle)
    seg_keys = {e["key"] for e in evs if e["name"] == "pitch.median_hz" and e["key"].startswith("seg_")}
    per_speaker = [e for e in evs if e["name"] == "scene.dnsmos_ovrl" and e["key"].startswith("speaker:")]
    per_segment = [e for e in evs if e["name"] == "scene.dnsmos_ovrl" and e["key"] in seg_keys]
    # one window per speaker (2), the third window scores one evenly spaced segment
    assert len(per_speaker) == 2 and len(per_segment) == 1
