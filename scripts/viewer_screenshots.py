"""Screenshots of the review page for docs/: the corpus list and a recording view.

    .venv/bin/python scripts/viewer_screenshots.py OUT [--rec dialogue --segment 3 --field emotion]

OUT is an annotated output folder. Uses Debian's chromium (/usr/bin/chromium) through Playwright.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
    "--mute-audio",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--rec", default="dialogue")
    ap.add_argument("--segment", type=int, default=3)
    ap.add_argument("--field", default="gender", help="the attribute whose trail is shown opened")
    ap.add_argument("--docs", type=Path, default=ROOT / "docs")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    proc = subprocess.Popen(
        [sys.executable, "-m", "speechannotator.cli", "view", str(args.out), "--port", "0", "--reviewer", "reviewer"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = re.search(r"http://\S+", proc.stdout.readline()).group(0)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1360, "height": 560}, device_scale_factor=1)
            page.goto(url)
            page.wait_for_selector("#corpus tbody tr")
            page.screenshot(path=str(args.docs / "viewer-corpus.png"))
            page.set_viewport_size({"width": 1360, "height": 1500})
            page.click(f"#corpus tbody tr[data-rec='{args.rec}']")
            page.wait_for_selector(f".seg[data-index='{args.segment}']")
            page.click(f".seg[data-index='{args.segment}'] .idx")
            page.wait_for_selector(f"[data-field-card='{args.field}']")
            page.check("#spec")  # the spectrogram band under the waveform
            page.wait_for_function("() => view.specImg")
            page.wait_for_timeout(1200)  # let the segment play a little: the playhead moves on
            page.keyboard.press(" ")
            page.click(f"[data-field-card='{args.field}'] summary")
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(args.docs / "viewer-recording.png"))
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
    print(f"wrote {args.docs / 'viewer-corpus.png'} and {args.docs / 'viewer-recording.png'}")


if __name__ == "__main__":
    main()
