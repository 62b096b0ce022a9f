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
    assert count(languages=frozenset({"en"})) == 6
    with pytest.raises(ValueError, match="--language zh: no segment has this language"):
        count(languages=frozenset({"zh"}))  # a clear error, not 0 rows
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
    with pytest.raises(ValueError, match="'snr' is not an annotated field"):
        count(min_confidence={"snr": 10.0})
    with pytest.raises(ValueError, match="confidences lie between 0 and 1"):
        count(min_confidence={"gender": 10.0})
    with pytest.raises(ValueError, match="--min-duration 5 is above --max-duration 2"):
        count(min_duration=5, max_duration=2)
    with pytest.raises(ValueError, match="--speaker spk_09: no such speaker"):
        count(speakers=frozenset({"spk_09"}))
    # Filters apply to files as well: an empty export is still a valid one.
    ds_dir = export_corpus(annotated, "hf", tmp_path / "empty", filters=ExportFilter(where="duration > 1000"))
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


def test_every_segment_export_carries_the_quality_columns_with_null_for_missing_sources(annotated, tmp_path):
    """Priors were off: evidence columns are null (never 0); computed columns have values."""
    import datasets
    from lhotse import load_manifest

    from speechannotator.export.quality import QUALITY_COLUMNS

    names = {c.name for c in QUALITY_COLUMNS} | {"tts_issues", "tts_issue_count"}
    rows = [json.loads(x) for x in export_corpus(annotated, "jsonl", tmp_path / "q.jsonl").read_text().splitlines()]
    clips = export_corpus(annotated, "clips", tmp_path / "clips")
    meta = [json.loads(x) for x in (clips / "metadata.jsonl").read_text().splitlines()]
    ds = datasets.load_from_disk(str(export_corpus(annotated, "hf", tmp_path / "hf")))
    sups = load_manifest(export_corpus(annotated, "lhotse", tmp_path / "lh") / "supervisions.jsonl.gz")
    assert all(names <= set(r) for r in rows + meta) and names <= set(ds.column_names)
    assert all(names - {"duration"} <= set(s.custom) for s in sups)
    for r in rows:
        assert r["mos"] is None and r["snr_db"] is None  # no source: null
        assert r["overlap_s"] == 0.0  # the reference timelines' turns do not overlap
        assert r["words_per_s"] > 0 and r["chars_per_s"] > r["words_per_s"]
        assert r["conf_gender"] == r["confidence"]["gender"]
        assert r["tts_issue_count"] == len(r["tts_issues"])
        assert ("too_short" in r["tts_issues"]) == (r["duration"] < 1.0)
    first = ds.remove_columns("audio")[0]
    assert first["mos"] is None and first["tts_issues"] == rows[0]["tts_issues"]


def test_where_expressions_and_presets_select_what_they_say(annotated, tmp_path):
    from click.testing import CliRunner

    from speechannotator.cli import main

    rows = [json.loads(x) for x in export_corpus(annotated, "jsonl", tmp_path / "a.jsonl").read_text().splitlines()]

    def ids(**kw):
        return [s.uid for r in corpus_view(annotated, ExportFilter(**kw)) for s in r.segments]

    cut = sorted(r["duration"] for r in rows)[3]
    assert ids(where=f"duration >= {cut}") == [r["id"] for r in rows if r["duration"] >= cut]
    assert ids(where=f"{cut} <= duration <= 100") == ids(where=f"duration >= {cut}")  # chained, turned around
    assert ids(where=f"not duration >= {cut}") == [r["id"] for r in rows if r["duration"] < cut]
    assert ids(where="speaker_id == 'spk_02' or recording in ['row/0']") == [
        r["id"] for r in rows if r["speaker_id"] == "spk_02" or r["recording"] == "row/0"
    ]
    assert ids(where="'too_short' in tts_issues") == [r["id"] for r in rows if "too_short" in r["tts_issues"]]
    assert ids(where="mos == null") == [r["id"] for r in rows] and ids(where="mos >= 3.5") == []  # null never passes
    assert ids(preset="tts-clean") == [r["id"] for r in rows if not r["tts_issues"]]
    assert ids(preset="tts-clean", where=f"duration >= {cut}") == [
        r["id"] for r in rows if not r["tts_issues"] and r["duration"] >= cut
    ]
    bad = {
        "mos >= 6": "mos only takes values from 1.0 to 5.0",
        "duration > 5 and duration < 2": "duration > 5 and duration < 2: an empty range",
        "snr > 10": "unknown column 'snr'",
        "gender >= 0.5": "gender is a text column",
        "duration == 'long'": "duration is a number column",
        "__import__('os').system('true')": "not a comparison",
        "duration >= 1 or": "cannot parse",
        "mos > duration": "compare a column with a value",
        "tts_issues == 'music'": "tts_issues is a list",
    }
    for text, message in bad.items():
        with pytest.raises(ValueError, match=re.escape(message)):
            ids(where=text)
    with pytest.raises(ValueError, match="unknown preset"):
        ids(preset="nope")
    # The CLI: the example runs (null mos keeps nothing here: a warning, exit 0); errors exit 1.
    where = "mos >= 3.5 and overlap_s == 0 and duration >= 1"
    res = CliRunner().invoke(
        main, ["export", str(annotated), "--to", "jsonl", "-o", str(tmp_path / "w"), "--where", where]
    )
    assert res.exit_code == 0 and "no segment matched the filters; the export is empty" in res.output, res.output
    res = CliRunner().invoke(
        main, ["export", str(annotated), "--to", "jsonl", "-o", str(tmp_path / "p"), "--preset", "tts-clean"]
    )
    assert res.exit_code == 0 and f"({len(ids(preset='tts-clean'))} segments)" in res.output, res.output
    for args in (["--where", "snr > 1"], ["--language", "english"], ["--min-confidence", "snr=10"]):
        res = CliRunner().invoke(main, ["export", str(annotated), "--to", "jsonl", "-o", str(tmp_path / "e"), *args])
        assert res.exit_code == 1 and "error:" in res.output, (args, res.output)


FRESH_READER = """
import importlib.util, io, json, sys
# a fresh machine: datasets and soundfile, no torchcodec, no torch, not this project
assert not any(importlib.util.find_spec(m) for m in ("torchcodec", "torch", "speechannotator"))
import datasets, soundfile as sf
ds = datasets.load_from_disk(sys.argv[1])
out = []
for i in (0, len(ds) - 1):
    row = ds[i]
    x, sr = sf.read(io.BytesIO(row["audio"]["bytes"]), dtype="float32")
    out.append({"sr": sr, "n": len(x), "rate": row["sample_rate"], "span": row["clip_end"] - row["clip_start"]})
print(json.dumps({"rows": len(ds), "decode": ds.features["audio"].decode, "read": out}))
"""


def test_hf_export_streams_into_shards_and_decodes_in_a_clean_venv(annotated, tmp_path, monkeypatch):
    import os
    import subprocess

    from clean_venv import clean_python

    import speechannotator.export.hf_export as hf

    monkeypatch.setattr(hf, "MAX_SHARD_SIZE", "20KB")  # several shards from a small corpus
    monkeypatch.setattr(hf, "WRITER_BATCH_ROWS", 2)
    dest = export_corpus(annotated, "hf", tmp_path / "hf", rate="24000")
    assert len(list(dest.glob("data-*.arrow"))) > 1
    assert not list(tmp_path.glob(".hf-build-*"))  # the streaming cache is gone
    python = clean_python(tmp_path / "venv", ["datasets", "soundfile"])  # the documented reading recipe's needs
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    res = subprocess.run(
        [str(python), "-c", FRESH_READER, str(dest)], capture_output=True, text=True, timeout=300, env=env
    )
    assert res.returncode == 0, res.stderr[-2000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["rows"] == 6 and got["decode"] is False
    for r in got["read"]:
        assert r["sr"] == r["rate"] == 24000 and abs(r["n"] / r["sr"] - r["span"]) < 0.002


@pytest.mark.parametrize("rate", ["22050", "44100"])
def test_clip_rates_loudness_edges_and_padding(annotated, tmp_path, rate):
    import pyloudnorm

    from speechannotator.export.audio_source import ClipOptions

    clip = ClipOptions(rate=rate, loudness=-23.0, edges=0.1, pad=0.05)
    dest = export_corpus(annotated, "clips", tmp_path / "c", clip=clip)
    meta = [json.loads(x) for x in (dest / "metadata.jsonl").read_text().splitlines()]
    assert len(meta) == 6
    for m in meta:
        x, sr = sf.read(dest / m["file_name"], dtype="float32")
        assert sr == m["sample_rate"] == int(rate)
        assert m["clip_start"] == max(0.0, round(m["start"] - 0.1, 3))  # widened by the recording's audio
        assert abs(len(x) / sr - (m["clip_end"] - m["clip_start"] + 0.1)) < 0.002  # plus 50 ms silence each end
        pad = int(0.05 * sr)
        assert not np.any(x[:pad]) and not np.any(x[-pad:])
        inner = x[pad:-pad]
        if len(inner) >= 0.4 * sr:
            assert pyloudnorm.Meter(sr).integrated_loudness(inner.astype(np.float64)) == pytest.approx(-23.0, abs=0.6)
    trimmed = export_corpus(annotated, "clips", tmp_path / "t", clip=ClipOptions(edges=-0.1))
    rows = [json.loads(x) for x in (trimmed / "metadata.jsonl").read_text().splitlines()]
    assert all(r["clip_end"] - r["clip_start"] == pytest.approx(r["duration"] - 0.2, abs=0.002) for r in rows)
    with pytest.raises(ValueError, match="clip rate must be one of"):
        export_corpus(annotated, "clips", tmp_path / "bad", clip=ClipOptions(rate="8000"))
