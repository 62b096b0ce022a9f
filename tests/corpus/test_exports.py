"""Every export format, read back through its own library (Lhotse, datasets, meeteval) or parsed."""

import io
import json
import re
import sqlite3

import numpy as np
import pytest
import soundfile as sf
from corpus_helpers import timeline_manifest, voices, write_timeline

from speechannotator.config import load_config
from speechannotator.engine import annotate_corpus
from speechannotator.export import EXPORT_FORMATS, ExportFilter, corpus_view, export_corpus
from synth import SR

ATTRIBUTES = (
    "caption",
    "contextual_inference",
    "gender",
    "age",
    "accent",
    "pitch",
    "speed",
    "rhythm",
    "tone",
    "texture",
    "pronunciation",
    "emotion",
    "paralinguistic",
    "background_sound",
    "environment",
)


@pytest.fixture(scope="module")
def annotated(tmp_path_factory):
    """Four recordings (manifest files, a Lhotse cut, a datasets row) on reference timelines, rules backend."""
    import datasets
    from lhotse import CutSet, Recording

    root = tmp_path_factory.mktemp("exports")
    manifest = timeline_manifest(root, 3)
    # Two speakers in the first recording: a turn each.
    first = json.loads(manifest.read_text().splitlines()[0])
    tl = root / first["timeline"]
    seg = json.loads(tl.read_text())[0]
    mid = round((seg["start_time"] + seg["end_time"]) / 2, 2)
    tl.write_text(
        json.dumps(
            [
                {**seg, "end_time": mid, "words": "Hello there,"},
                {**seg, "speaker": "B", "start_time": mid, "words": "this is the first short recording."},
            ]
        )
    )
    # A cut out of a 48 kHz stereo file (source rate exports keep 48 kHz).
    import soxr

    x = voices()[3]
    x48 = soxr.resample(x, SR, 48000)
    sf.write(root / "long48k.wav", np.stack([x48, x48], axis=1), 48000)
    cut = CutSet.from_manifests(recordings=[Recording.from_file(root / "long48k.wav", recording_id="long")])[0]
    CutSet.from_cuts([cut.truncate(offset=0.2, duration=3.0).with_id("cut/one")]).to_file(root / "cuts.jsonl.gz")
    y = voices()[4]
    buf = io.BytesIO()
    sf.write(buf, y, SR, format="WAV")
    hf = datasets.Dataset.from_dict({"audio": [{"bytes": buf.getvalue(), "path": "r.wav"}], "id": ["row/0"]})
    hf.cast_column("audio", datasets.Audio()).save_to_disk(str(root / "hf"))
    tls = root / "tls"
    (tls / "cut").mkdir(parents=True)
    (tls / "row").mkdir()
    write_timeline(tls / "cut" / "one.seglst.json", "cut/one", x[int(0.2 * SR) : int(3.2 * SR)], "a reader")
    write_timeline(tls / "row" / "0.seglst.json", "row/0", y, "another reader")
    out = root / "out"
    cfg = load_config(overrides={"agents": {"priors": False}})
    s1 = annotate_corpus([manifest], out, cfg)
    s2 = annotate_corpus([root / "cuts.jsonl.gz", root / "hf"], out, cfg, timeline=tls)
    assert s1.ok and s2.ok, (s1.failed, s2.failed)
    return out


def test_view_reads_every_complete_recording(annotated):
    view = corpus_view(annotated)
    assert [r.id for r in view] == ["audio/a/x", "audio/b/x", "audio/b/y", "cut/one", "row/0"]
    first = view[0]
    assert [s.record["speaker_id"] for s in first.segments] == ["spk_01", "spk_02"]
    assert all(s.key.startswith("seg_") and s.confidence for r in view for s in r.segments)


def test_jsonl_has_one_record_per_segment_with_the_attributes(annotated, tmp_path):
    path = export_corpus(annotated, "jsonl", tmp_path / "all.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == sum(len(r.segments) for r in corpus_view(annotated)) == 6
    for row in rows:
        assert all(row[a] for a in ATTRIBUTES if a != "paralinguistic")
        assert row["end"] > row["start"] and row["source"] and row["speaker"].startswith(row["recording"] + ":")
    assert rows[0]["text"] == "Hello there," and rows[1]["speaker"] == "audio/a/x:spk_02"


@pytest.mark.parametrize("rate", ["16000", "source"])
def test_clips_cut_each_segment_at_the_asked_rate(annotated, tmp_path, rate):
    dest = export_corpus(annotated, "clips", tmp_path / "clips", rate=rate)
    meta = [json.loads(line) for line in (dest / "metadata.jsonl").read_text().splitlines()]
    assert len(meta) == 6
    for m in meta:
        info = sf.info(dest / m["file_name"])
        want_sr = 48000 if (rate == "source" and m["recording"] == "cut/one") else SR
        assert info.samplerate == m["sample_rate"] == want_sr
        assert abs(info.duration - m["duration"]) < 0.002
        assert all(a in m for a in ATTRIBUTES) and m["text"]
    # The cut's clip holds the cut's audio, not the file's beginning.
    cut_meta = next(m for m in meta if m["recording"] == "cut/one")
    clip, sr = sf.read(dest / cut_meta["file_name"], dtype="float32")
    src, _ = sf.read(annotated.parent / "long48k.wav", dtype="float32")
    if rate == "source":
        a = int(round((0.2 + cut_meta["start"]) * sr))
        np.testing.assert_allclose(clip, src.mean(axis=1)[a : a + len(clip)], atol=1e-4)


def test_lhotse_loads_recordings_and_supervisions(annotated, tmp_path):
    from lhotse import CutSet, load_manifest

    dest = export_corpus(annotated, "lhotse", tmp_path / "lh")
    recs = load_manifest(dest / "recordings.jsonl.gz")
    sups = load_manifest(dest / "supervisions.jsonl.gz")
    assert sorted(recs.ids) == ["audio/a/x", "audio/b/x", "audio/b/y", "cut/one", "row/0"]
    assert len(sups) == 6
    cut_sup = next(s for s in sups if s.recording_id == "cut/one")
    assert cut_sup.start >= 0.2  # placed in the whole file, past the cut's offset
    assert set(ATTRIBUTES) - {"text"} <= set(cut_sup.custom) and cut_sup.custom["confidence"]
    cuts = CutSet.from_manifests(recordings=recs, supervisions=sups).trim_to_supervisions()
    audio = cuts[0].load_audio()  # Lhotse reads the audio it was pointed at
    assert audio.shape[-1] == pytest.approx(cuts[0].duration * recs[cuts[0].recording_id].sampling_rate, abs=2)


def test_hf_folder_opens_with_load_from_disk(annotated, tmp_path):
    import datasets

    dest = export_corpus(annotated, "hf", tmp_path / "hf", filters=ExportFilter(max_duration=30))
    ds = datasets.load_from_disk(str(dest))
    assert len(ds) == 6 and isinstance(ds.features["audio"], datasets.Audio)
    assert set(ATTRIBUTES) <= set(ds.column_names)
    raw = ds.cast_column("audio", datasets.Audio(decode=False))[0]
    x, sr = sf.read(io.BytesIO(raw["audio"]["bytes"]), dtype="float32")
    assert sr == SR and abs(len(x) / sr - raw["duration"]) < 0.002


def test_timelines_rttm_and_seglst_load_in_meeteval(annotated, tmp_path):
    from meeteval.io import RTTM, SegLST

    rttm = RTTM.load(export_corpus(annotated, "rttm", tmp_path / "c.rttm"))
    assert len(rttm.lines) == 6 and {line.filename for line in rttm.lines} >= {"audio/a/x", "row/0"}
    seglst = SegLST.load(export_corpus(annotated, "seglst", tmp_path / "c.seglst.json"))
    assert len(seglst) == 6 and seglst[0]["words"] == "Hello there,"


@pytest.mark.parametrize("kind", ["srt", "vtt"])
def test_subtitles_per_recording(annotated, tmp_path, kind):
    dest = export_corpus(annotated, kind, tmp_path / kind)
    text = (dest / "audio" / "a" / f"x.{kind}").read_text()
    sep = "," if kind == "srt" else "."
    stamps = re.findall(rf"(\d\d:\d\d:\d\d{re.escape(sep)}\d\d\d) --> (\d\d:\d\d:\d\d{re.escape(sep)}\d\d\d)", text)
    assert len(stamps) == 2 and "[spk_02] this is the first short recording." in text
    assert text.startswith("WEBVTT\n\n") == (kind == "vtt")
    assert len(list(dest.rglob(f"*.{kind}"))) == 5


def test_labelstudio_tasks_with_predictions(annotated, tmp_path):
    dest = export_corpus(annotated, "labelstudio", tmp_path / "ls")
    tasks = json.loads((dest / "tasks.json").read_text())
    assert len(tasks) == 5
    first = tasks[0]
    result = first["predictions"][0]["result"]
    assert {r["type"] for r in result} == {"labels", "textarea", "choices"}
    assert [r["value"]["labels"] for r in result if r["type"] == "labels"] == [["spk_01"], ["spk_02"]]
    assert first["data"]["audio"].startswith("/data/local-files/?d=")
    config = (dest / "config.xml").read_text()
    assert '<Label value="spk_01"/>' in config and 'toName="audio"' in config
    row = next(t for t in tasks if t["data"]["recording"] == "row/0")
    assert (dest / "audio" / "row" / "0.flac").exists() and row["data"]["audio"].endswith("row/0.flac")


def test_filters(annotated, tmp_path):
    def count(**kw):
        return sum(len(r.segments) for r in corpus_view(annotated, ExportFilter(**kw)))

    all_durations = sorted(s.duration for r in corpus_view(annotated) for s in r.segments)
    assert count() == 6
    assert count(min_duration=all_durations[2]) == 4
    assert count(max_duration=all_durations[0]) == 1
    assert count(languages=frozenset({"en"})) == 6 and count(languages=frozenset({"zh"})) == 0
    assert count(speakers=frozenset({"spk_02"})) == 1
    assert count(speakers=frozenset({"audio/a/x:spk_01"})) == 1
    # Confidence bounds read the state's latest predictions.
    with sqlite3.connect(annotated / "state.sqlite") as c:
        sql = "SELECT rec, key, round, data FROM predictions WHERE field='emotion' ORDER BY round"
        rows = c.execute(sql).fetchall()
    latest = {}
    for rec, key, _, data in rows:
        latest[(rec, key)] = json.loads(data)["confidence"]
    bound = sorted(latest.values())[len(latest) // 2]
    want = sum(1 for v in latest.values() if v >= bound)
    assert count(min_confidence={"emotion": bound}) == want
    assert count(min_confidence={"no_such_field": 0.0}) == 0
    # Filters apply to files as well: an empty export is still a valid one.
    ds_dir = export_corpus(annotated, "hf", tmp_path / "empty", filters=ExportFilter(languages=frozenset({"zh"})))
    import datasets

    assert len(datasets.load_from_disk(str(ds_dir))) == 0


def test_every_format_is_exported_by_the_cli(annotated, tmp_path):
    from click.testing import CliRunner

    from speechannotator.cli import main

    for fmt in EXPORT_FORMATS:
        res = CliRunner().invoke(
            main,
            [
                "export",
                str(annotated),
                "--to",
                fmt,
                "-o",
                str(tmp_path / fmt),
                "--min-duration",
                "0.5",
                "--min-confidence",
                "gender=0",
            ],
        )
        assert res.exit_code == 0, (fmt, res.output)
        assert (tmp_path / fmt).exists()
    bad = CliRunner().invoke(
        main, ["export", str(annotated), "--to", "jsonl", "-o", str(tmp_path / "x"), "--min-confidence", "gender"]
    )
    assert bad.exit_code != 0 and "FIELD=VALUE" in bad.output


def test_annotate_export_flag_writes_the_export_after_the_run(tmp_path):
    from click.testing import CliRunner

    from speechannotator.cli import main

    manifest = timeline_manifest(tmp_path / "c", 2)
    out = tmp_path / "out"
    res = CliRunner().invoke(
        main,
        [
            "annotate",
            str(manifest),
            "-o",
            str(out),
            "-q",
            "--no-print",
            "--no-priors",
            "--export",
            "jsonl",
            "--export",
            "rttm",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (out / "exports" / "jsonl" / "segments.jsonl").read_text().splitlines()]
    assert [r["recording"] for r in rows] == ["audio/a/x", "audio/b/x"]
    assert (out / "exports" / "rttm" / "corpus.rttm").read_text().count("SPEAKER") == 2
    assert json.loads((out / "summary.json").read_text())["done"] == ["audio/a/x", "audio/b/x"]
