"""Constants and the server runner shared by the review page's tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "dialogue.flac"
REFERENCE = ROOT / "examples" / "dialogue.seglst.json"
CHROMIUM = "/usr/bin/chromium"  # Debian's chromium (scripts/setup.sh); never a downloaded browser
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
]
# Transcripts that would run script if the page ever parsed data as HTML.
XSS_TEXT = '<script>window.__xss = 1</script>Was he a bad man? <img src=x onerror="window.__xss = 2">'
XSS_INDEX = 2


def output_row(start: int, end: int, sid: str, name: str, text: str = "hello", **fields: str) -> dict:
    """One record of the demo format: the given speaker, times and text, the other fields "none"
    unless ``fields`` sets them."""
    from speechannotator.schema import OUTPUT_KEYS

    row = dict.fromkeys(OUTPUT_KEYS, "none")
    row.update(
        speaker_id=sid,
        speaker_name=name,
        text=text,
        text_and_paralanguage=text + " [pause]",
        start_time=start,
        end_time=end,
        language="en",
        **fields,
    )
    return row


def annotate_example(out: Path, timeline: Path | None, settings: Path) -> None:
    """Annotate the bundled example into `out` on `timeline` (None: the pipeline's own) with
    `settings` (also a rerun)."""
    from click.testing import CliRunner

    from speechannotator.cli import main

    args = ["annotate", str(EXAMPLE), "-o", str(out), "-q", "--no-print", "--config", str(settings)]
    if timeline is not None:
        args[2:2] = ["--timeline", str(timeline)]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output


class ViewServer:
    def __init__(self, out: Path, reviewer: str = "tester", env: dict | None = None):
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
            **(env or {}),
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "speechannotator.cli", "view", str(out), "--port", "0", "--reviewer", reviewer],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        line = self.proc.stdout.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", line)
        if m is None:
            self.proc.kill()
            raise AssertionError(f"no URL printed: {line!r} {self.proc.stderr.read()}")
        self.base, self.token = m.group(1), m.group(2)
        self.url = f"{self.base}/?token={self.token}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
