"""The bench runner with an injected annotator that corrupts the references in a controlled way."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

from speechannotator.evaluation.bench import BenchRunner, BenchSettings, discover_cases
from speechannotator.evaluation.cli import bench_group

from .conftest import record

CASES = {
    "c1": [
        record(0, 2000, "spk_01", "hello there my friend", gender="male", pitch="low pitch", speed="slow"),
        record(2500, 4000, "spk_02", "good morning to you", gender="female", pitch="high pitch", speed="fast"),
        record(4500, 6000, "spk_01", "how are you today", gender="male", pitch="low pitch", speed="slow"),
        record(6500, 8000, "spk_02", "very well thank you", gender="female", pitch="high pitch", speed="fast"),
    ],
    "c2": [
        record(0, 3000, "spk_01", "one two three four", gender="female", pitch="mid pitch", speed="moderate"),
        record(3500, 5000, "spk_01", "five six seven eight", gender="female", pitch="mid pitch", speed="moderate"),
    ],
}
FLIP = {"male": "female", "female": "male"}


@pytest.fixture
def bench(tmp_path):
    root = tmp_path / "bench"
    root.mkdir()
    for name, recs in CASES.items():
        sf.write(root / f"{name}.flac", np.zeros(16000, dtype=np.float32), 16000)
        (root / f"{name}.json").write_text(json.dumps(recs), encoding="utf-8")
    (root / "notes.json").write_text("{}")  # no audio beside it: not a case
    return root


class CorruptingAnnotator:
    """Run k flips the gender of the first k-1 segments of c1; the w/o Loop ablation flips one
    more; free-timeline runs drop the last word of every segment and swap speaker names."""

    def __init__(self):
        self.calls = []

    def __call__(self, path, *, out_dir, config, timeline=None):
        run = int(out_dir.name.removeprefix("run"))
        self.calls.append((path.stem, out_dir.parent.name, run, timeline is not None))
        if path.stem == "c2" and out_dir.parent.name == "wo-context":
            raise RuntimeError("simulated crash")
        refs = CASES[path.stem]
        out = [dict(r) for r in refs]
        if timeline is None:
            for r in out:
                r["text"] = " ".join(r["text"].split()[:-1])
                r["speaker_id"] = {"spk_01": "spk_02", "spk_02": "spk_01"}[r["speaker_id"]]
            return out
        flips = (run - 1) + (0 if config.agents.review else 1)
        if path.stem == "c1":
            for r in out[:flips]:
                r["gender"] = FLIP[r["gender"]]
        return out


def test_runner_tables_statistics_and_ablations(bench, tmp_path, char_bag):
    ann = CorruptingAnnotator()
    runner = BenchRunner(
        bench,
        tmp_path / "out",
        encoder=char_bag,
        annotate=ann,
        settings=BenchSettings(runs=3, ablations=("no_review", "no_context")),
    )
    results, files = runner.run()
    byname = {v.name: v for v in results}
    full, noloop, noctx = byname["SpeechAnnotator"], byname["w/o Loop"], byname["w/o Context"]
    # Table 1: every segment loses 1 of 4 words -> WER 25 %; speakers swapped consistently -> cpWER 25 %.
    assert full.timeline == [{"wer": 25.0, "cpwer": 25.0, "tcpwer": 25.0}] * 3
    # Table 2: 6 reference segments; run k flips k-1 genders -> 100, 83.33, 66.67.
    g = full.field_stats()["gender"]
    assert g.mean == pytest.approx(100 * (6 + 5 + 4) / 18)
    assert g.std == pytest.approx(np.std([100, 500 / 6, 400 / 6], ddof=1))
    assert noloop.field_stats()["gender"].mean == pytest.approx(100 * (5 + 4 + 3) / 18)
    assert full.field_stats()["pitch"].mean == 100.0 and full.field_stats()["pitch"].std == 0.0
    # The crashing case scores 0 on all its segments (2 of 6) and is reported.
    assert noctx.field_stats()["pitch"].mean == pytest.approx(100 * 4 / 6)
    assert len(noctx.failures) == 3 and "simulated crash" in noctx.failures[0]
    # Every table was written, and the CSV agrees with the in-memory statistics.
    md = files["markdown"].read_text()
    assert "Table 1" in md and "Table 2" in md and "Table 3" in md and "w/o Loop" in md
    rows = list(csv.DictReader(files["table2_attributes"].open()))
    gender = next(r for r in rows if r["row"] == "gender")
    assert float(gender["mean"]) == pytest.approx(g.mean)
    assert files["chart"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads(files["json"].read_text())
    assert saved["settings"]["encoder"] == char_bag.name
    assert saved["variants"]["w/o Loop"]["fields"]["gender"]["n"] == 3
    # Resume: a second run reuses every finished output.
    before = len(ann.calls)
    runner.run()
    assert len(ann.calls) == before + 3  # only the crashed cases are retried


def test_cli_fixed_timeline_only(bench, tmp_path, monkeypatch):
    import speechannotator.evaluation.bench as bench_mod

    ann = CorruptingAnnotator()
    monkeypatch.setattr(bench_mod, "_default_annotate", lambda: ann)
    res = CliRunner().invoke(
        bench_group, ["run", str(bench), "--runs", "2", "--fixed-timeline", "--no-priors", "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 0, res.output
    assert all(fixed for *_, fixed in ann.calls) and len(ann.calls) == 2 * 2 * 2
    assert "Table 1" not in res.output and "w/o Priors" in res.output


def test_discover_rejects_empty_folder(tmp_path):
    with pytest.raises(ValueError, match="no <case>"):
        discover_cases(tmp_path)
