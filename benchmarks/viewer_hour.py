"""Is the review page responsive on a one-hour recording with 600 segments?

    .venv/bin/python benchmarks/viewer_hour.py OUT [--work DIR]

OUT is `examples/dialogue.flac` annotated (`speechannotator annotate examples/dialogue.flac -o OUT`).
The benchmark tiles its audio to one hour (99 copies, real speech throughout) and builds a
state whose 600 segments are copies of OUT's annotated segments (records, latest predictions,
raw speakers spread over 8 labels), spread evenly over the hour. Then, in Debian's chromium,
it times: loading the recording view (all 600 rows, waveform, panel), redrawing the timeline
(whole and zoomed to one minute), scrolling the zoomed window, seeking to segment 500 from the
list, and saving a transcript correction (validation, audit trail, JSON rewrite, page redraw).
Wall times depend on the machine; compare runs on one machine.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from speechannotator.audio import load_audio  # noqa: E402
from speechannotator.output.write import write_output  # noqa: E402
from speechannotator.records import Prediction, Segment  # noqa: E402
from speechannotator.state import STATE_FILE, StateStore  # noqa: E402

TILES, N_SEGMENTS, REC = 99, 600, "hour"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--mute-audio", "--no-first-run"]
CHROMIUM_ARGS += ["--autoplay-policy=no-user-gesture-required"]


def build(src_out: Path, work: Path) -> Path:
    with StateStore(src_out / STATE_FILE, readonly=True) as src:
        rec = src.recordings()[0]
        audio = load_audio(Path(rec["path"]))
        segs, records = src.segments(rec["rec"]), dict(src.records(rec["rec"]))
        preds = src.predictions(rec["rec"])
    tile = audio.duration
    wav = work / "hour.flac"
    sf.write(wav, np.tile(audio.samples, TILES), audio.sample_rate)
    pool = [(t, s) for t in range(TILES) for s in segs]
    pick = [pool[round(j * (len(pool) - 1) / (N_SEGMENTS - 1))] for j in range(N_SEGMENTS)]
    out = work / "out"
    with StateStore(out / STATE_FILE) as st:
        st.begin_recording(REC, str(wav), "viewer-hour", tile * TILES)
        new_segs, items, new_preds, ids = [], [], [], {}
        for n, (t, s) in enumerate(pick):
            key, off = f"seg_{n:05d}", t * tile
            raw = f"{s.speaker}_{t % 4}"
            ids.setdefault(raw, f"spk_{len(ids) + 1:02d}")
            new_segs.append(Segment(key, s.start + off, s.end + off, raw, s.text, s.language, 1.0))
            row = dict(records[s.key])
            row.update(
                start_time=int(round(1000 * (s.start + off))),
                end_time=int(round(1000 * (s.end + off))),
                speaker_id=ids[raw],
                speaker_name=f"Speaker{ids[raw][4:]}",
            )
            items.append((key, row))
            new_preds += [
                Prediction(key, f, p.value, p.confidence, p.evidence, p.round, p.backend, p.status)
                for (k, f), p in preds.items()
                if k == s.key
            ]
        with st.transaction() as c:
            st.set_label_language(c, REC, "en")
            st.write_segments(c, REC, new_segs)
            st.write_predictions(c, REC, new_preds)
            st.write_records(c, REC, items)
        st.set_status(REC, "complete")
        write_output(st, out, REC)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="examples/dialogue.flac annotated")
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="viewer-hour-"))
    t = time.perf_counter()
    out = build(args.out, work)
    print(f"built a {TILES} x tile state with {N_SEGMENTS} segments in {work} ({time.perf_counter() - t:.1f} s)")
    from playwright.sync_api import sync_playwright

    proc = subprocess.Popen(
        [sys.executable, "-m", "speechannotator.cli", "view", str(out), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    rows = []
    try:
        url = re.search(r"http://\S+", proc.stdout.readline()).group(0)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            for label in ("first load (decodes the hour)", "load (reload of the page)"):
                t = time.perf_counter()
                if label.startswith("first"):
                    page.goto(url + f"#/rec/{REC}")
                else:
                    page.reload()
                page.wait_for_selector(f".seg[data-index='{N_SEGMENTS - 1}']")
                page.wait_for_selector("#panel[data-key='seg_00000'] [data-field-card='gender']")
                rows.append((label, time.perf_counter() - t))
            draw = (
                "() => { const t = performance.now(); for (let i = 0; i < 20; i++) drawTimeline(); "
                "return (performance.now() - t) / 20 / 1000; }"
            )
            rows.append(("timeline redraw, whole hour", page.evaluate(draw)))
            page.evaluate("setWindow(1800, 1860)")
            page.wait_for_function("() => view.detail && view.detail.t0 === 1800")
            rows.append(("timeline redraw, one minute", page.evaluate(draw)))
            steps = []
            for _ in range(10):
                t0 = page.evaluate("view.win[0]")
                t = time.perf_counter()
                page.evaluate("setWindow(view.win[0] + 30, view.win[1] + 30)")
                page.wait_for_function(f"() => view.detail && view.detail.t0 > {t0 + 1}")
                steps.append(time.perf_counter() - t)
            rows.append(("scroll 30 s (new detailed peaks, median of 10)", statistics.median(steps)))
            t = time.perf_counter()
            page.click(".seg[data-index='500'] .txt")
            start = page.evaluate("view.rec.segments[500].start_time / 1000")
            page.wait_for_function(f"() => !player.paused && player.currentTime >= {start}")
            rows.append(("seek to segment 500 and play", time.perf_counter() - t))
            page.keyboard.press(" ")
            page.wait_for_selector("#panel[data-key='seg_00500'] textarea[data-field='text']")
            page.fill("textarea[data-field='text']", "a corrected transcript")
            t = time.perf_counter()
            page.click("[data-save='text']")
            page.wait_for_function("() => document.getElementById('toast').textContent === 'saved text'")
            page.wait_for_selector("#panel[data-key='seg_00500'] #audit li")
            rows.append(("save a transcript correction (until redrawn)", time.perf_counter() - t))
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
    for label, seconds in rows:
        print(f"{label:<48} {1000 * seconds:9.1f} ms")


if __name__ == "__main__":
    main()
