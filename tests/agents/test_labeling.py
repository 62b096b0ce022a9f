"""Labeling Agent plumbing: audio only for backends that want it, faults become failed fields."""

import io
import wave

import numpy as np
from agents_helpers import REC, config, dialogue, make_store, stage

from speechannotator import agents
from speechannotator.agents.rules import RulesBackend
from speechannotator.audio import Audio
from speechannotator.output.finalize import finalize


class ListeningBackend(RulesBackend):
    wants_audio = True

    def __init__(self):
        self.seen = []

    def label(self, task):
        self.seen.append(task.audio_wav)
        return super().label(task)


class BrokenBackend(RulesBackend):
    def label(self, task):
        if task.segment.key == "seg_00001":
            raise RuntimeError("endpoint down")
        out = super().label(task)
        out.pop("tone")  # a field the backend forgot
        return out

    def compose(self, task):
        raise RuntimeError("endpoint down")


def test_segment_audio_only_when_wanted(tmp_path):
    segs, evs = dialogue()
    store = make_store(tmp_path, segs, evs)
    audio = Audio(np.zeros(16000 * 12, dtype=np.float32), 16000, "x.wav", 16000, 1)
    agents.plan(stage(store, config(), lang="zh"))
    listening = ListeningBackend()
    agents.label(stage(store, config(), listening, audio))
    with wave.open(io.BytesIO(listening.seen[0])) as w:
        assert w.getframerate() == 16000 and w.getnframes() == 32000  # seg 0 spans 0-2 s
    rules = RulesBackend()
    assert rules.wants_audio is False


def test_backend_faults_become_failed_fields_and_output_survives(tmp_path):
    segs, evs = dialogue()
    store = make_store(tmp_path, segs, evs)
    cfg, backend = config(), BrokenBackend()
    agents.plan(stage(store, cfg, lang="zh"))
    agents.label(stage(store, cfg, backend))
    p = store.predictions(REC)
    assert p[("seg_00001", "gender")].status == "failed" and "endpoint down" in p[("seg_00001", "gender")].error
    assert p[("seg_00000", "tone")].status == "failed" and p[("seg_00000", "gender")].status == "ok"
    assert store.stage_info(REC, "label")["failed"] == 13 + 4
    agents.review(stage(store, cfg, backend))
    v = store.verdicts(REC)[("seg_00001", "gender")][0]
    assert not v.accepted and v.request  # a failed field is flagged for relabel
    recs = finalize(stage(store, cfg, backend))
    # the backend never returns tone and seg 1 always fails: honest none-markers in the output
    assert recs[1].gender == "无" and recs[0].tone == "无" and recs[0].gender == "男声"
    assert all(r.caption and r.contextual_inference for r in recs)  # deterministic compose fallback
