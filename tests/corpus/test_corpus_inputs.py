"""Corpus input: every input kind becomes items with unique ids; audio loads as the source says."""

import csv
import json
import re

import numpy as np
import pytest
import soundfile as sf
from corpus_helpers import tree_corpus, voices

from speechannotator.audio import load_audio
from speechannotator.corpus import CorpusItem, check_id, load_item_audio, read_corpus
from speechannotator.evaluation.recordings import ami
from synth import SR


def test_folder_ids_mirror_the_tree_and_same_names_do_not_collide(tmp_path):
    files = tree_corpus(tmp_path / "in")
    corpus = read_corpus([tmp_path / "in"])
    assert corpus.errors == []
    assert [i.id for i in corpus.items] == sorted(files)  # a/x and b/x both kept
    assert {i.id: i.path for i in corpus.items} == {k: str(v.resolve()) for k, v in files.items()}
    assert all(i.duration and 2.0 < i.duration < 6.0 for i in corpus.items)  # from the headers
    # Two folders given: ids relative to their common root keep them apart too.
    two = read_corpus([tmp_path / "in" / "a", tmp_path / "in" / "b"])
    assert [i.id for i in two.items] == ["a/x", "b/x", "b/y"]
    # Two files given by path.
    files2 = read_corpus([files["a/x"], files["b/x"]])
    assert [i.id for i in files2.items] == ["a/x", "b/x"]


def test_same_stem_in_one_folder_keeps_extensions(tmp_path):
    x = voices()[0]
    sf.write(tmp_path / "x.wav", x, SR)
    sf.write(tmp_path / "x.flac", x, SR)
    corpus = read_corpus([tmp_path])
    assert [i.id for i in corpus.items] == ["x.flac", "x.wav"] and corpus.errors == []


def test_ids_that_cannot_name_an_output_are_refused():
    assert check_id("a/b") is None
    for bad in ("", "../x", "/abs", "a//b", "a/./b", "summary", "corpus", "a\\b"):
        assert check_id(bad), bad


def test_jsonl_and_csv_manifests(tmp_path):
    files = tree_corpus(tmp_path / "audio", 3)
    rows = [
        {"audio_filepath": "audio/a/x.wav", "id": "spk1/utt1", "duration": 3.5, "language": "en", "num_speakers": 1},
        {"audio_filepath": str(files["b/x"].resolve())},  # absolute path, id from the path
        {"audio_filepath": "audio/b/y.flac", "id": "spk1/utt1"},  # the same id again: refused, the rest go on
        {"audio_filepath": "audio/b/y.flac", "id": "../escape"},
        {"id": "nothing"},
    ]
    jsonl = tmp_path / "m.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{not json\n")
    corpus = read_corpus([jsonl])
    by_id = {i.id: i for i in corpus.items}
    assert sorted(by_id) == ["audio/b/x", "spk1/utt1"]
    first = by_id["spk1/utt1"]
    assert (first.duration, first.language, first.num_speakers) == (3.5, "en", 1)
    assert first.path == str((tmp_path / "audio/a/x.wav").resolve())
    causes = " | ".join(f"{w}: {c}" for w, c in corpus.errors)
    assert len(corpus.errors) == 4, causes
    assert "already given" in causes and "'..'" in causes and "no audio_filepath" in causes and "not JSON" in causes
    assert f"{jsonl}:3" in causes and f"{jsonl}:6" in causes  # line numbers name the entry

    with (tmp_path / "m.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["audio_filepath", "id", "duration", "language", "num_speakers", "timeline"])
        w.writeheader()
        w.writerow(
            {
                "audio_filepath": "audio/a/x.wav",
                "id": "one",
                "duration": "",
                "language": "zh",
                "num_speakers": "2",
                "timeline": "",
            }
        )
        w.writerow(
            {
                "audio_filepath": "audio/b/y.flac",
                "id": "",
                "duration": "",
                "language": "",
                "num_speakers": "",
                "timeline": "tl.json",
            }
        )
    corpus = read_corpus([tmp_path / "m.csv"])
    assert corpus.errors == []
    two, one = corpus.items  # sorted by id
    assert (one.id, one.language, one.num_speakers) == ("one", "zh", 2) and one.duration > 2
    assert two.id == "audio/b/y" and two.timeline == str(tmp_path.resolve() / "tl.json") and two.language is None


def test_manifest_ids_from_absolute_paths_never_collide_and_duplicates_name_both_files(tmp_path):
    from lhotse import Recording, RecordingSet

    x = voices()[0]
    for name in ("data/a/talk.wav", "data/b/talk.wav"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        sf.write(tmp_path / name, x, SR)
    (tmp_path / "lists").mkdir()
    m = tmp_path / "lists" / "m.jsonl"  # NeMo style: absolute paths outside the manifest's folder, no id
    m.write_text(
        "".join(
            json.dumps({"audio_filepath": str(tmp_path / n)}) + "\n" for n in ("data/a/talk.wav", "data/b/talk.wav")
        )
    )
    corpus = read_corpus([m])
    assert corpus.errors == [] and [i.id for i in corpus.items] == ["a/talk", "b/talk"]

    dup = tmp_path / "lists" / "dup.jsonl"
    dup.write_text(
        "".join(
            json.dumps({"audio_filepath": str(tmp_path / n), "id": "talk"}) + "\n"
            for n in ("data/a/talk.wav", "data/b/talk.wav")
        )
    )
    [(where, cause)] = read_corpus([dup]).errors
    assert str(tmp_path / "data/a/talk.wav") in cause and str(tmp_path / "data/b/talk.wav") in cause, cause
    assert where == f"{dup}:2"

    recs = RecordingSet.from_recordings(
        Recording.from_file(tmp_path / n, recording_id="talk") for n in ("data/a/talk.wav", "data/b/talk.wav")
    )
    recs.to_file(tmp_path / "lists" / "recs.jsonl")
    [(_, cause)] = read_corpus([tmp_path / "lists" / "recs.jsonl"]).errors
    assert str(tmp_path / "data/a/talk.wav") in cause and str(tmp_path / "data/b/talk.wav") in cause, cause


def test_lhotse_recordings_and_cuts(tmp_path):
    from lhotse import CutSet, Recording, RecordingSet

    files = tree_corpus(tmp_path / "audio", 2)
    recs = RecordingSet.from_recordings(
        Recording.from_file(p, recording_id=f"rec-{i}") for i, p in enumerate(files.values())
    )
    recs.to_file(tmp_path / "recordings.jsonl.gz")
    corpus = read_corpus([tmp_path / "recordings.jsonl.gz"])
    assert [i.id for i in corpus.items] == ["rec-0", "rec-1"] and corpus.errors == []
    assert corpus.items[0].offset == 0.0 and corpus.items[0].span is None

    whole = CutSet.from_manifests(recordings=recs)
    part = whole[0].truncate(offset=0.5, duration=1.5).with_id("part")
    CutSet.from_cuts([whole[1], part]).to_file(tmp_path / "cuts.jsonl.gz")
    corpus = read_corpus([tmp_path / "cuts.jsonl.gz"])
    by_id = {i.id: i for i in corpus.items}
    assert set(by_id) == {"part", whole[1].id}
    assert (by_id["part"].offset, by_id["part"].span) == (0.5, 1.5) and by_id[whole[1].id].span is None
    audio = load_item_audio(by_id["part"])
    full = load_audio(by_id["part"].path).samples
    assert len(audio.samples) == int(1.5 * SR)
    np.testing.assert_allclose(audio.samples, full[int(0.5 * SR) : int(2.0 * SR)], atol=1e-4)


def test_hf_datasets_folder_with_an_audio_column(tmp_path):
    import datasets

    xs = voices()[:3]
    rows = {"audio": [], "id": [], "text": []}
    for i, x in enumerate(xs):
        sf.write(tmp_path / f"{i}.wav", x, SR)
        rows["audio"].append({"bytes": (tmp_path / f"{i}.wav").read_bytes(), "path": f"{i}.wav"})
        rows["id"].append(f"utt/{i}")
        rows["text"].append("t")
    ds = datasets.Dataset.from_dict(rows).cast_column("audio", datasets.Audio())
    datasets.DatasetDict({"train": ds, "test": ds.select([0])}).save_to_disk(str(tmp_path / "hf"))
    corpus = read_corpus([tmp_path / "hf"])
    # The test split repeats utt/0: an id never names two outputs.
    assert [i.id for i in corpus.items] == ["utt/0", "utt/1", "utt/2"]
    assert len(corpus.errors) == 1 and "already given" in corpus.errors[0][1]
    item = corpus.items[1]
    assert item.kind == "hf" and item.column == "audio"
    np.testing.assert_allclose(load_item_audio(item).samples, load_audio(tmp_path / "1.wav").samples, atol=1e-6)
    # Without an id column the row number names the recording.
    ds.remove_columns("id").save_to_disk(str(tmp_path / "hf2"))
    assert [i.id for i in read_corpus([tmp_path / "hf2"]).items] == ["000000", "000001", "000002"]
    # Items travel as JSON (to Ray actors) and come back equal.
    assert CorpusItem.from_json(json.loads(item.dumps())) == item


def test_an_unreadable_manifest_is_one_error_and_other_inputs_go_on(tmp_path):
    files = tree_corpus(tmp_path / "audio", 1)
    (tmp_path / "other.jsonl").write_text('{"something": 1}\n')
    corpus = read_corpus([tmp_path / "other.jsonl", files["a/x"]])
    assert [i.id for i in corpus.items] == ["x"]
    assert len(corpus.errors) == 1 and "neither audio_filepath nor Lhotse" in corpus.errors[0][1]


@pytest.mark.parametrize("name", ["missing.wav"])
def test_a_missing_file_is_one_error_naming_it_and_the_cause(tmp_path, name):
    corpus = read_corpus([tmp_path / name, tmp_path])
    assert corpus.items == []
    assert corpus.errors == [(str(tmp_path / name), "file does not exist")]


def test_no_speech_truncated_and_corrupt_inputs_each_get_their_own_line(tmp_path):
    """A dithered silence is "no speech found" (not an annotated []), a truncated mp3 is annotated
    with a warning, a corrupt header is called corrupt; the summary keeps each apart."""
    import struct

    from click.testing import CliRunner

    from speechannotator.cli import main

    rng = np.random.default_rng(0)
    inp = tmp_path / "in"
    inp.mkdir()
    sf.write(inp / "silence.wav", rng.integers(-1, 2, 3 * SR) / 32768, SR, subtype="PCM_16")  # sox-style dither
    x = voices()[3]
    sf.write(inp / "talk.mp3", x, SR, format="MP3")
    data = (inp / "talk.mp3").read_bytes()
    (inp / "talk.mp3").write_bytes(data[: int(len(data) * 0.6)])
    sf.write(inp / "bad.wav", x, SR, subtype="PCM_16")
    raw = bytearray((inp / "bad.wav").read_bytes())
    i = raw.find(b"data")
    raw[i + 4 : i + 8] = struct.pack("<I", 100)
    (inp / "bad.wav").write_bytes(raw)
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["annotate", str(inp), "-o", str(out), "--no-priors", "-q", "--no-print"])
    err = res.output
    assert res.exit_code == 1, err  # the corrupt file failed
    assert re.search(r"error: .*bad\.wav: corrupt header", err), err
    assert "too short" not in err
    assert re.search(r"warning: .*silence\.wav: no speech found", err), err
    assert re.search(r"warning: .*talk\.mp3: the file is truncated: decoded [\d.]+ s of the [\d.]+ s", err), err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["no_speech"] == ["silence"] and "silence" not in summary["done"]
    assert summary["done"] == ["talk"] and [w["id"] for w in summary["with_warnings"]] == ["talk"]
    assert [f["id"] for f in summary["failed"]] == ["bad"]
    assert "annotated 1/3 recording(s)" in err and "nothing to annotate in 1 (no speech or no words)" in err


@pytest.mark.skipif(not ami.available(), reason="AMI clips not fetched (scripts/fetch_real_voices.sh)")
def test_speech_without_words_is_told_apart_from_silence(tmp_path):
    """AMI trn01 (quiet, far talkers; its few turns under a second or overlapped): the diarizer keeps
    half a second of speech and Whisper finds no words in it. The output is empty, as for silence,
    but the warning says speech was there, so a user knows the file is worth a look."""
    from click.testing import CliRunner

    from speechannotator.cli import main

    (m,) = [m for m in ami.meetings(("train",)) if m.name == "trn01"]
    inp = tmp_path / "in"
    inp.mkdir()
    sf.write(inp / "trn01.wav", ami.load(m), 16000)
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["annotate", str(inp), "-o", str(out), "--no-priors", "-q", "--no-print"])
    err = res.output
    said = r"warning: .*trn01\.wav: speech detected \([\d.]+ s decoded\) but no words transcribed"
    assert re.search(said, err), err
    assert json.loads((out / "summary.json").read_text())["no_speech"] == ["trn01"]
    assert json.loads((out / "trn01.json").read_text()) == []
