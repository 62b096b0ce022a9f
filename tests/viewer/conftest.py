"""Fixtures for the review page: one real annotated recording, a running `speechannotator view`,
and the system's headless Chromium driven by Playwright."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from viewer_helpers import CHROMIUM, CHROMIUM_ARGS, REFERENCE, XSS_INDEX, XSS_TEXT, ViewServer, annotate_example  # noqa: E402


@pytest.fixture(scope="session")
def annotated(tmp_path_factory):
    """examples/dialogue.flac annotated through stages 7-12 on a reference timeline whose third
    transcript carries script and an <img onerror>: (out_dir, timeline path, settings path)."""
    work = tmp_path_factory.mktemp("viewer")
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))
    ref[XSS_INDEX]["words"] = XSS_TEXT
    timeline = work / "dialogue.seglst.json"
    timeline.write_text(json.dumps(ref), encoding="utf-8")
    out = work / "out"
    settings = work / "settings.toml"
    settings.write_text("[priors]\nenhance = false\n")  # speech enhancement is half the cost and the page needs none
    annotate_example(out, timeline, settings)
    # Tests that edit through the shared server change this folder (a speaker correction, a
    # rerun that applies it): tests about the annotation as the pipeline left it use this copy.
    shutil.copytree(out, work / "pristine")
    return out, timeline, settings


@pytest.fixture(scope="session")
def pristine(annotated):
    """The annotated folder as the pipeline wrote it, before any test's edits (copy it to change it)."""
    return annotated[0].parent / "pristine"


@pytest.fixture(scope="session")
def view_server(annotated):
    server = ViewServer(annotated[0])
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()
