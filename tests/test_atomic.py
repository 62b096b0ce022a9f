"""The one atomic write: the target holds the old content or the new, and no temporary stays."""

from __future__ import annotations

import os

import pytest

from speechannotator.atomic import TEMP_PREFIX, atomic_path, write_text_atomic


def test_write_text_atomic_replaces_the_file_and_creates_its_folder(tmp_path):
    path = tmp_path / "a" / "b" / "out.json"
    assert write_text_atomic(path, "first\n") == path
    write_text_atomic(path, "zweite 第二\n")
    assert path.read_text(encoding="utf-8") == "zweite 第二\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["out.json"]


def test_a_failed_write_keeps_the_old_file_and_removes_the_temporary(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert path.read_text() == "old"
    assert not list(tmp_path.glob(f"{TEMP_PREFIX}*"))


def test_the_temporary_name_is_short_and_takes_the_umask(tmp_path):
    path = tmp_path / ("s" * 250 + ".json")  # a name near NAME_MAX: the temporary must not grow it
    with atomic_path(path) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(TEMP_PREFIX) and len(tmp.name) < 40
        tmp.write_text("x")
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_folder_replaces_the_old_folder_whole_or_not_at_all(tmp_path):
    target = tmp_path / "model"
    target.mkdir()
    (target / "stale.bin").write_text("old")
    with pytest.raises(ValueError), atomic_path(target, directory=True) as tmp:
        (tmp / "part.bin").write_text("half")
        raise ValueError("bad hash")
    assert sorted(p.name for p in target.iterdir()) == ["stale.bin"]
    with atomic_path(target, directory=True) as tmp:
        (tmp / "model.bin").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == ["model.bin"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
