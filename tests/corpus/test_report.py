"""The corpus report: self-contained (no external resource, no script), escaped, rendered by Chromium."""

import re
import sys
from pathlib import Path

from click.testing import CliRunner

from speechannotator.cli import main
from speechannotator.export import ExportFilter, corpus_view

sys.path.insert(0, str(Path(__file__).parents[1] / "viewer"))
from viewer_helpers import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

pytest_plugins = ["test_exports"]  # the `annotated` corpus (five recordings on reference timelines)


def test_report_is_self_contained_and_its_numbers_come_from_the_corpus(annotated, tmp_path):
    res = CliRunner().invoke(main, ["report", str(annotated)])
    assert res.exit_code == 0, res.output
    page = (annotated / "report.html").read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing fetched from anywhere
    assert "<script" not in page and page.count("<svg") >= 10
    view = corpus_view(annotated)
    n = sum(len(r.segments) for r in view)
    assert f"{len(view)} recordings" in page and f"{n} segments" in page
    kept = sum(len(r.segments) for r in corpus_view(annotated, ExportFilter(preset="tts-clean")))
    assert re.search(rf"<tr data-preset='tts-clean'><td>tts-clean</td><td>{kept}</td>", page)


def test_report_renders_in_chromium_with_escaped_labels(annotated, tmp_path):
    from playwright.sync_api import sync_playwright

    out = tmp_path / "out"
    import shutil

    shutil.copytree(annotated, out)
    # A label that is markup must show as text (annotations and ids are data).
    first = sorted(out.rglob("x.json"))[0]
    first.write_text(
        first.read_text().replace('"female"', '"<img src=x onerror=alert(1)>"').replace('"male"', '"<b>m</b>"')
    )
    from speechannotator.report import write_report

    path = write_report(out)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        errors, requests = [], []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(path.as_uri())
        assert page.locator("svg.chart").count() >= 10
        bars = page.eval_on_selector_all("svg.chart rect", "els => els.map(e => e.getBBox().width)")
        assert bars and max(bars) > 50  # the charts drew
        assert page.locator("img").count() == 0 and page.locator("svg b").count() == 0
        assert "tts-clean" in page.inner_text("#presets")
        browser.close()
    assert errors == [] and all(u.startswith("file://") for u in requests), (errors, requests)
