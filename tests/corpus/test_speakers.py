"""Corpus speaker identity: one real voice, one id across recordings and channels, in any order."""

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from corpus_helpers import write_timeline

from speechannotator.config import load_config
from speechannotator.corpus.speakers import Centroid, _names, cluster
from speechannotator.engine import annotate_corpus
from speechannotator.evaluation.recordings import real_voices as rv
from speechannotator.export import export_corpus

needs_voices = pytest.mark.skipif(not rv.available(), reason="real voices not fetched (scripts/fetch_real_voices.sh)")


def _unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def test_clusters_do_not_depend_on_input_order_and_ids_survive_a_rerun():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(8), rng.standard_normal(8)
    cents = [
        Centroid(rec, "spk_01", _unit(base + 0.2 * rng.standard_normal(8)), 5.0)
        for rec, base in (("r1", a), ("r2", b), ("r3", a), ("r4", b), ("r5", a))
    ]
    labels = cluster(sorted(cents, key=lambda c: c.rec))
    shuffled = sorted(cents, key=lambda c: c.rec[::-1])
    again = cluster(sorted(shuffled, key=lambda c: c.rec))
    assert labels == again == [0, 1, 0, 1, 0]
    groups = [[c for c, label in zip(cents, labels, strict=True) if label == k] for k in (0, 1)]
    assert _names(groups, [], {}, 0.5) == ["voice_001", "voice_002"]
    # A later run where voice_002's members come first keeps both ids.
    previous = [{"id": "voice_001", "members": ["r1:spk_01"]}, {"id": "voice_002", "members": ["r2:spk_01"]}]
    assert _names(groups[::-1], previous, {}, 0.5) == ["voice_002", "voice_001"]
    # An enrolled voice names the cluster nearest it.
    assert _names(groups, previous, {"ada": Centroid("", "ada", _unit(b), 1.0)}, 0.5) == ["voice_001", "ada"]


VOICES = {"allison": 3, "nl_m": 2, "nl_f": 2}  # recordings per voice; one allison over the telephone


def _corpus(root: Path, voices: dict[str, int] = VOICES, first: int = 0) -> tuple[Path, dict[str, str]]:
    """Recordings of four clips each of three real voices, each with its reference timeline."""
    inp, tls = root / "in", root / "tl"
    inp.mkdir(parents=True, exist_ok=True)
    tls.mkdir(exist_ok=True)
    truth = {}
    for voice, n in voices.items():
        clips = rv.clips(voice)
        for k in range(first, first + n):
            group = clips[100 + 4 * k : 104 + 4 * k]  # clips 100+: not those the threshold was tuned on
            x = np.concatenate([np.concatenate([c.samples, np.zeros(6400, np.float32)]) for c in group])
            if voice == "allison" and k == 2:
                x = rv.telephone(x)
            rec = f"{voice}_{k}"
            sf.write(inp / f"{rec}.wav", x, rv.SR)
            write_timeline(tls / f"{rec}.seglst.json", rec, x)
            truth[rec] = voice
    return inp, truth


@needs_voices
def test_real_voices_get_one_id_each_in_one_run_and_one_at_a_time(tmp_path):
    inp, truth = _corpus(tmp_path)
    cfg = load_config(overrides={"agents": {"priors": False}})
    enroll = tmp_path / "enroll"
    enroll.mkdir()
    ada = rv.clips("nl_f")[300]
    sf.write(enroll / "ada.wav", ada.samples, rv.SR)

    one = tmp_path / "one"
    s = annotate_corpus([inp], one, cfg, timeline=tmp_path / "tl", enroll=enroll)
    assert s.ok and s.voices == len(VOICES)
    rows = [json.loads(x) for x in export_corpus(one, "jsonl", tmp_path / "one.jsonl").read_text().splitlines()]
    ids = {r["recording"]: r["corpus_speaker_id"] for r in rows}
    by_voice = {v: {ids[rec] for rec in truth if truth[rec] == v} for v in VOICES}
    assert all(len(s) == 1 for s in by_voice.values()), by_voice  # coverage: one id per voice
    assert len(set().union(*by_voice.values())) == len(VOICES)  # purity: no id shared by two voices
    assert by_voice["nl_f"] == {"ada"}  # the enrolled name
    voices = [json.loads(x) for x in (one / "speakers.jsonl").read_text().splitlines()]
    assert sorted(v["id"] for v in voices) == sorted(set(ids.values()))
    allison = next(v for v in voices if v["id"] in by_voice["allison"])
    assert allison["recordings"] == ["allison_0", "allison_1", "allison_2"] and allison["hours"] > 0
    assert allison["representative"]["recording"] in allison["recordings"]

    # The same files joined one at a time in the order of the run: the same ids and registry.
    same = tmp_path / "same"
    for wav in sorted(inp.glob("*.wav")):
        assert annotate_corpus([wav], same, cfg, timeline=tmp_path / "tl", enroll=enroll).ok
    rows3 = [json.loads(x) for x in export_corpus(same, "jsonl", tmp_path / "same.jsonl").read_text().splitlines()]
    assert {r["recording"]: r["corpus_speaker_id"] for r in rows3} == ids
    assert (same / "speakers.jsonl").read_bytes() == (one / "speakers.jsonl").read_bytes()

    # In reverse order: the same partition (the ids follow the order the voices arrived in).
    many = tmp_path / "many"
    for wav in sorted(inp.glob("*.wav"), reverse=True):
        assert annotate_corpus([wav], many, cfg, timeline=tmp_path / "tl", enroll=enroll).ok
    rows2 = [json.loads(x) for x in export_corpus(many, "jsonl", tmp_path / "many.jsonl").read_text().splitlines()]
    partition = {frozenset(r for r in ids if ids[r] == i) for i in ids.values()}
    ids2 = {r["recording"]: r["corpus_speaker_id"] for r in rows2}
    assert {frozenset(r for r in ids2 if ids2[r] == i) for i in ids2.values()} == partition
    assert ids2["nl_f_0"] == "ada"


def _voice_of(out: Path, tmp: Path) -> dict[str, str]:
    rows = [json.loads(x) for x in export_corpus(out, "jsonl", tmp / "rows.jsonl").read_text().splitlines()]
    ids = {(r["recording"], r["corpus_speaker_id"]) for r in rows}
    assert len(ids) == len({rec for rec, _ in ids})  # one voice per recording here
    return dict(ids)


@needs_voices
def test_voice_merge_and_split_are_decisions_that_survive_reruns_and_new_recordings(tmp_path):
    from click.testing import CliRunner

    from speechannotator.cli import main
    from speechannotator.corpus.voice_decisions import VoiceError, read_voice_decisions
    from speechannotator.corpus.voice_edits import merge_voices, split_voice

    cfg = load_config(overrides={"agents": {"priors": False}})
    inp, _ = _corpus(tmp_path, {"allison": 1, "nl_m": 1, "nl_f": 1})
    out = tmp_path / "out"
    assert annotate_corpus([inp], out, cfg, timeline=tmp_path / "tl").ok
    ids = _voice_of(out, tmp_path)
    allison, nl_m = ids["allison_0"], ids["nl_m_0"]
    assert len(set(ids.values())) == 3

    merge_voices(out, allison, nl_m, who="ana", note="same person")
    written = {json.loads(x)["corpus_speaker_id"] for x in (tmp_path / "rows.jsonl").read_text().splitlines()}
    assert len(written) == 2  # the export made before was written again with the merged ids
    ids = _voice_of(out, tmp_path)
    assert ids["nl_m_0"] == ids["allison_0"] == allison and len(set(ids.values())) == 2
    with pytest.raises(VoiceError, match="no voice"):
        merge_voices(out, allison, nl_m)  # nl_m's id is gone

    # New recordings of both merged voices join the registry: the merge holds for them too.
    _corpus(tmp_path, {"allison": 1, "nl_m": 1}, first=1)
    assert annotate_corpus([inp], out, cfg, timeline=tmp_path / "tl").ok
    ids = _voice_of(out, tmp_path)
    assert ids["nl_m_1"] == ids["nl_m_0"] == ids["allison_1"] == allison

    spk = json.loads((out / "nl_m_0.json").read_text())[0]["speaker_id"]
    _, new = split_voice(out, "nl_m_0", spk, who="bo")
    ids = _voice_of(out, tmp_path)
    assert ids["nl_m_0"] == new not in (allison, ids["nl_f_0"]) and ids["nl_m_1"] == allison
    before = (out / "speakers.jsonl").read_bytes()
    assert annotate_corpus([inp], out, cfg, timeline=tmp_path / "tl").ok  # a rerun replays both decisions
    assert (out / "speakers.jsonl").read_bytes() == before

    trail = read_voice_decisions(out)
    assert [(d.action, d.voice, d.who) for d in trail] == [("merge", allison, "ana"), ("split", new, "bo")]
    listing = CliRunner().invoke(main, ["voices", "list", str(out)])
    assert listing.exit_code == 0, listing.output
    assert f"merged {nl_m} into {allison} by ana (same person)" in listing.output
    assert f"split nl_m_0:{spk} off {allison} as {new} by bo" in listing.output
    bad = CliRunner().invoke(main, ["voices", "split", str(out), "nl_m_0", "spk_99"])
    assert bad.exit_code != 0 and "no voice holds speaker 'spk_99'" in bad.output


def test_voice_decisions_replay_over_a_new_clustering():
    """A merge joins whatever clusters hold its recorded members (also with a newcomer); a split
    takes its member out wherever it fell; ids given by people come first."""
    from speechannotator.corpus.voice_decisions import Group, replay
    from speechannotator.records import VoiceDecision

    merge = VoiceDecision(1, "merge", "voice_001", {"from": "voice_002", "members": ["a:s1", "b:s1"]}, "ana", 0.0)
    split = VoiceDecision(2, "split", "voice_004", {"member": "c:s1", "from": "voice_001"}, "bo", 0.0)
    fresh = [Group(["a:s1", "c:s1"]), Group(["b:s1", "d:s1"]), Group(["e:s1"])]  # d: a new recording
    got = replay(fresh, [merge, split])
    assert [(g.members, g.forced) for g in got] == [
        (["a:s1", "b:s1", "d:s1"], "voice_001"),
        (["e:s1"], None),
        (["c:s1"], "voice_004"),
    ]
    assert replay(fresh, []) == fresh
    a, b = (Centroid(r, "s1", _unit(np.eye(4)[i]), 8.0) for i, r in enumerate("ab"))  # established voices
    previous = [{"id": "voice_001", "members": ["a:s1", "b:s1"]}]
    assert _names([[a], [b]], previous, {}, 0.5, [None, "voice_009"]) == ["voice_001", "voice_009"]
    # The human id wins over the previous registry's vote, and the other group keeps the old id.
    assert _names([[a], [b]], previous, {}, 0.5, ["voice_009", None]) == ["voice_009", "voice_001"]
    assert _names([[a], [b]], previous, {}, 0.5, ["voice_001", None]) == ["voice_001", "voice_002"]


class _SpectrumEncoder:
    """A stand-in for CAM++ whose "embedding" is the span's spectrum in eight 1 kHz bands."""

    def embed(self, audio16k, spans):
        out = []
        for a, b in spans:
            power = np.abs(np.fft.rfft(audio16k[int(a * 16000) : int(b * 16000)], n=16000)[:8000]) ** 2
            out.append(np.sqrt(power.reshape(8, 1000).sum(axis=1)))
        return np.array(out)


def test_centroids_are_of_the_telephone_band_so_a_missing_band_is_not_a_voice():
    from speechannotator.corpus.speakers import similarities, speaker_centroids

    t = np.arange(3 * 16000) / 16000
    voice = np.sin(2 * np.pi * 800 * t) + 0.5 * np.sin(2 * np.pi * 1700 * t)
    studio = (voice + 1.5 * np.sin(2 * np.pi * 6000 * t)).astype(np.float32)  # the band a call lacks
    call = voice.astype(np.float32)
    rows = [{"speaker_id": "spk_01", "start_time": 0, "end_time": 3000}]
    prints = [speaker_centroids(x, rows, _SpectrumEncoder())["spk_01"] for x in (studio, call)]
    assert prints[0].seconds == 3.0
    cents = [Centroid(r, "spk_01", p.vector, p.seconds) for r, p in zip("ab", prints, strict=True)]
    assert similarities(cents)[0, 1] > 0.999
    # as recorded, the 6 kHz band would have made them two voices
    wide = [_unit(_SpectrumEncoder().embed(x, [(0.0, 3.0)])[0]) for x in (studio, call)]
    assert float(wide[0] @ wide[1]) < 0.65


def test_short_speakers_join_the_nearest_voice_on_its_own_threshold():
    a, b, c = np.eye(3)
    longs = [
        Centroid("r1", "s1", _unit(a), 8.0),
        Centroid("r2", "s1", _unit(a + 0.1 * c), 8.0),
        Centroid("r3", "s1", _unit(b), 8.0),
    ]
    near_a = Centroid("r4", "s1", _unit(a + 0.5 * c), 2.0)
    between = Centroid("r5", "s1", _unit(a + 1.2 * b), 2.0)  # near both: joins b, merges nothing
    lost = Centroid("r6", "s1", _unit(c), 2.0)
    labels = cluster(longs + [near_a, between, lost], threshold=0.6, join=0.6)
    assert labels == [0, 0, 1, 0, 1, 2]
    # Under the join threshold a short one stays alone, where linkage at `threshold` would join it.
    assert cluster(longs + [between], threshold=0.5, join=0.99) == [0, 0, 1, 2]
    assert cluster([near_a, lost]) == [0, 1]  # no long speaker: the short ones cluster as usual


def test_a_provisional_voice_absorbed_later_leaves_no_gap_in_the_ids():
    """A 2 s stretch (r2) formed a voice before its own voice was heard enough and joins it now:
    joined one at a time, the files get the ids one run gives them."""
    a, b, c = np.eye(3)
    groups = [
        [Centroid("r1", "s1", _unit(a), 8.0), Centroid("r2", "s1", _unit(a), 2.0)],
        [Centroid("r3", "s1", _unit(b), 2.0)],  # provisional: under MIN_VOICE_S
        [Centroid("r4", "s1", _unit(c), 8.0)],
    ]
    previous = [
        {"id": "voice_001", "members": ["r1:s1"], "provisional": False},
        {"id": "voice_002", "members": ["r2:s1"], "provisional": True},
        {"id": "voice_003", "members": ["r3:s1"], "provisional": True},
    ]
    one_run = _names(groups, [], {}, 0.5)
    assert one_run == ["voice_001", "voice_003", "voice_002"]  # established voices numbered first
    assert _names(groups, previous, {}, 0.5) == one_run
    # An established voice keeps its id whatever arrives.
    assert _names(groups[::-1], previous, {}, 0.5) == ["voice_002", "voice_003", "voice_001"]
