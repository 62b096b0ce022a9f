"""The corpus progress bar: recordings and audio hours done, throughput in audio-h per hour, ETA."""

from __future__ import annotations

import sys
import time

from .item_run import ItemResult

PROCESSED = ("done", "no_speech")  # statuses whose audio this run decoded and annotated


def _hms(seconds: float) -> str:
    s = int(max(0, seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _bar_class():
    from tqdm import tqdm

    class AudioBar(tqdm):
        """tqdm puts ", " before any postfix; our audio text is a field of its own instead."""

        audio_text = ""

        @property
        def format_dict(self):
            return {**super().format_dict, "audio": self.audio_text}

    return AudioBar


class CorpusProgress:
    """A tqdm bar over recordings whose text speaks in audio hours (the unit corpora are sized in).

    The ETA divides the audio still to do by the audio-h/h reached so far; where durations are not
    known in advance it falls back to recordings. The rate counts audio processed by this run only:
    recordings skipped as complete (a resume) advance the bar but not the rate.
    """

    def __init__(self, total: int, total_audio_s: float, *, disable: bool = False):
        self.total, self.total_audio_s = total, total_audio_s
        self.audio_s = 0.0  # of every finished recording, skipped ones included
        self.processed_s = 0.0  # annotated by this run: what the rate is made of
        self.known_s = 0.0  # audio of the finished recordings as counted in total_audio_s
        self.t0 = time.perf_counter()
        self.bar = _bar_class()(
            total=total,
            unit="rec",
            disable=disable or total == 0,
            file=sys.stderr,
            dynamic_ncols=True,
            bar_format="{desc}{n_fmt}/{total_fmt} rec |{bar}| {audio}",
        )
        self._refresh()

    def stage(self, rec: str, stage: str) -> None:
        self.bar.set_description_str(f"{rec[-24:]}: {stage} ", refresh=True)

    def clear(self) -> None:
        self.bar.clear()

    def update(self, result: ItemResult, known_duration: float | None = None) -> None:
        self.audio_s += result.duration
        if result.status in PROCESSED:
            self.processed_s += result.duration
        self.known_s += known_duration if known_duration is not None else result.duration
        self.bar.update(1)
        self._refresh()

    def _refresh(self) -> None:
        hours = time.perf_counter() - self.t0
        rate = (self.processed_s / 3600) / (hours / 3600) if hours > 0 and self.processed_s else 0.0
        done_n = self.bar.n
        if self.total_audio_s > 0 and rate > 0:
            eta = (max(0.0, self.total_audio_s - self.known_s) / 3600) / rate * 3600
        elif done_n:
            eta = hours / done_n * (self.total - done_n)
        else:
            eta = None
        total_h = f"/{self.total_audio_s / 3600:.3f}" if self.total_audio_s else ""
        eta_text = _hms(eta) if eta is not None else "?"
        text = f"{self.audio_s / 3600:.3f}{total_h} audio-h, {rate:.1f} audio-h/h, ETA {eta_text}"
        self.bar.audio_text = text
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()
