"""The corpus bar speaks in audio hours; the summary sorts and counts what a run did."""

import json

from speechannotator.engine.item_run import ItemResult
from speechannotator.engine.progress import CorpusProgress
from speechannotator.engine.summary import CorpusSummary


def test_bar_shows_audio_hours_throughput_and_eta(monkeypatch):
    clock = iter([0.0, 1800.0, 1800.0, 3600.0, 3600.0])
    monkeypatch.setattr("speechannotator.engine.progress.time.perf_counter", lambda: next(clock))
    bar = CorpusProgress(total=3, total_audio_s=3 * 3600.0, disable=True)
    bar.update(ItemResult(id="a", status="done", duration=3600.0), 3600.0)  # 1 audio-h in half an hour
    text = bar.bar.audio_text
    assert "1.000/3.000 audio-h" in text and "2.0 audio-h/h" in text and "ETA 1:00:00" in text
    bar.update(ItemResult(id="b", status="failed", error="x"), 3600.0)  # counted as done, adds no audio
    assert "1.000/3.000 audio-h" in bar.bar.audio_text and "1.0 audio-h/h" in bar.bar.audio_text
    bar.close()


def test_after_a_resume_the_rate_counts_processed_audio_only_and_the_bar_has_no_stray_comma(monkeypatch, capsys):
    clock = iter([0.0] + [1800.0] * 10)
    monkeypatch.setattr("speechannotator.engine.progress.time.perf_counter", lambda: next(clock))
    bar = CorpusProgress(total=2, total_audio_s=2 * 3600.0)
    bar.update(ItemResult(id="a", status="skipped", duration=3600.0), 3600.0)  # complete before: no work
    assert "1.000/2.000 audio-h, 0.0 audio-h/h" in bar.bar.audio_text
    bar.update(ItemResult(id="b", status="done", duration=3600.0), 3600.0)
    assert "2.000/2.000 audio-h, 2.0 audio-h/h" in bar.bar.audio_text  # 1 h processed in half an hour
    line = str(bar.bar)
    bar.close()
    assert line.startswith("2/2 rec |") and ", 2.000" not in line and "| 2.000/2.000 audio-h" in line, line


def test_summary_lists_done_skipped_failed_and_hours(tmp_path):
    s = CorpusSummary(engine="local")
    for r in (
        ItemResult(id="b", status="done", duration=1800.0),
        ItemResult(id="a", status="skipped", duration=1800.0),
        ItemResult(id="c", status="failed", error="file does not exist"),
    ):
        s.add(r)
    s.wall_time_s = 360.0
    data = json.loads(s.write(tmp_path).read_text())
    assert data["done"] == ["b"] and data["skipped"] == ["a"] and data["recordings"] == 3
    assert data["failed"] == [{"id": "c", "cause": "file does not exist"}]
    assert data["audio_hours"] == 1.0 and data["processed_audio_hours"] == 0.5 and not s.ok
    assert data["audio_hours_per_hour"] == 5.0  # the skipped half hour was no work of this run
