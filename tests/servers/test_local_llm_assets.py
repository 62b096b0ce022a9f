"""Local LLM assets: part lookup, the checked join, the refusal of a wrong file, thread choice."""

from __future__ import annotations

import hashlib
import sys

import pytest

from speechannotator import assets
from speechannotator.assets import AssetError, LocalLLM, local_llm_gguf
from speechannotator.atomic import TEMP_PREFIX
from speechannotator.servers.local_llm import choose_threads


def _fake_model(tmp_path, monkeypatch, chunks: list[bytes], sha: str) -> LocalLLM:
    """A LocalLLM whose part packages are tiny modules on sys.path (with dist metadata)."""
    site = tmp_path / "site"
    for i, chunk in enumerate(chunks, 1):
        pkg = site / f"fake_llm_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)
        (pkg / "__init__.py").write_text(
            "import os\ndef get_part_path():\n"
            f"    return os.path.join(os.path.dirname(__file__), 'data', 'part{i:02d}.bin')\n"
        )
        info = site / f"fake_llm_part{i}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fake-llm-part{i}\nVersion: 1.0\n")
    monkeypatch.syspath_prepend(str(site))
    model = LocalLLM("fake", "Fake-LLM", "fake-llm-part", len(chunks), "1.0", sha, "fake.gguf")
    monkeypatch.setitem(assets.LOCAL_LLMS, "fake", model)
    monkeypatch.setenv("SPEECHANNOTATOR_MODELS", str(tmp_path / "models"))
    return model


def test_parts_join_in_order_and_the_stamp_skips_rehashing(tmp_path, monkeypatch):
    chunks = [b"GGUF-first-", b"second-", b"third"]
    _fake_model(tmp_path, monkeypatch, chunks, hashlib.sha256(b"".join(chunks)).hexdigest())
    path = local_llm_gguf("fake")
    assert path.read_bytes() == b"GGUF-first-second-third"
    assert path.with_name("fake.gguf.sha256").exists()
    assert not list(path.parent.glob(f"{TEMP_PREFIX}*"))
    assert local_llm_gguf("fake", prepare=False) == path
    for i in range(1, 4):
        sys.modules.pop(f"fake_llm_part{i}", None)


def test_a_join_with_another_sha256_is_refused_and_leaves_nothing(tmp_path, monkeypatch):
    _fake_model(tmp_path, monkeypatch, [b"tampered", b"bytes"], "0" * 64)
    with pytest.raises(AssetError, match="refusing"):
        local_llm_gguf("fake")
    assert not any((tmp_path / "models").iterdir())
    for i in range(1, 3):
        sys.modules.pop(f"fake_llm_part{i}", None)


def test_a_prepared_file_that_was_altered_is_refused(tmp_path, monkeypatch):
    chunks = [b"good-", b"model"]
    _fake_model(tmp_path, monkeypatch, chunks, hashlib.sha256(b"".join(chunks)).hexdigest())
    path = local_llm_gguf("fake")
    path.write_bytes(b"good-modeL")  # same size, one byte changed, new mtime: the stamp no longer matches
    with pytest.raises(AssetError, match="sha256 differs"):
        local_llm_gguf("fake", prepare=False)
    assert local_llm_gguf("fake").read_bytes() == b"good-model"  # prepare joins it again
    for i in range(1, 3):
        sys.modules.pop(f"fake_llm_part{i}", None)


def test_missing_parts_name_the_pinned_packages(tmp_path, monkeypatch):
    model = LocalLLM("absent", "Absent", "surely-not-installed-part", 2, "9.9", "0" * 64, "absent.gguf")
    monkeypatch.setitem(assets.LOCAL_LLMS, "absent", model)
    monkeypatch.setenv("SPEECHANNOTATOR_MODELS", str(tmp_path))
    assert assets.local_llm_missing(model) == ["surely-not-installed-part1==9.9", "surely-not-installed-part2==9.9"]
    with pytest.raises(AssetError, match="surely-not-installed-part1==9.9"):
        local_llm_gguf("absent")


def test_auto_prefers_the_larger_installed_model(monkeypatch):
    monkeypatch.setattr(assets, "local_llm_missing", lambda m: [] if m.name == "0.5b" else ["x==1"])
    assert assets.resolve_local_llm("auto").name == "0.5b"
    monkeypatch.setattr(assets, "local_llm_missing", lambda m: [])
    assert assets.resolve_local_llm("auto").name == "1.5b"
    monkeypatch.setattr(assets, "local_llm_missing", lambda m: ["x==1"])
    with pytest.raises(AssetError, match="no local LLM"):
        assets.resolve_local_llm("auto")


def test_threads_follow_the_idle_cores():
    assert choose_threads(idle=1.9, cpus=2) == 2
    assert choose_threads(idle=0.9, cpus=2) == 1  # another process keeps a core busy
    assert choose_threads(idle=0.05, cpus=2) == 1  # never zero
    assert choose_threads(idle=7.6, cpus=8) == 7
    assert choose_threads(3, idle=0.0, cpus=2) == 3  # an explicit setting wins
