"""The shipped SA-Bench-mini: valid references, size limits, deterministic rebuild, and a
perfect annotator scoring 0 % error / 100 % on it through the real runner."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import soundfile as sf

from speechannotator.evaluation.bench import BenchRunner, BenchSettings, discover_cases
from speechannotator.schema import validate_records

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "sa_bench_mini"


def test_shipped_bench_is_small_and_valid():
    cases = discover_cases(BENCH)
    assert 4 <= len(cases) <= 6
    assert sum(p.stat().st_size for p in BENCH.iterdir() if p.is_file()) < 3 * 1024 * 1024
    for case in cases:
        info = sf.info(str(case.audio))
        assert 20 <= info.duration <= 40 and info.samplerate == 16000
        records = validate_records(case.records)
        assert all(0 <= r.start_time < r.end_time <= info.duration * 1000 + 1 for r in records)
        assert all(r.gender in ("male", "female") and r.speed and r.pitch and r.background_sound for r in records)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")
def test_builder_regenerates_the_shipped_bench_byte_for_byte(tmp_path):
    builder = ROOT / "scripts" / "build_sa_bench_mini.py"
    subprocess.run([sys.executable, str(builder), str(tmp_path)], check=True, capture_output=True)
    built = sorted(p.name for p in tmp_path.iterdir())
    shipped = sorted(p.name for p in BENCH.iterdir() if p.suffix in (".flac", ".json"))
    assert built == shipped
    for name in built:
        a = hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
        b = hashlib.sha256((BENCH / name).read_bytes()).hexdigest()
        assert a == b, name


def test_reference_copy_scores_perfectly(tmp_path, char_bag):
    def oracle(path, *, out_dir, config, timeline=None):
        return json.loads((BENCH / f"{Path(path).stem}.json").read_text(encoding="utf-8"))

    results, _ = BenchRunner(BENCH, tmp_path, encoder=char_bag, annotate=oracle, settings=BenchSettings(runs=1)).run()
    (v,) = results
    assert v.timeline == [{"wer": 0.0, "cpwer": 0.0, "tcpwer": 0.0}]
    means = v.attributes[0]["fields"]
    assert means["gender"] == means["pitch"] == means["background_sound"] == 100.0
    assert means["age"] is None  # not annotated in this bench
