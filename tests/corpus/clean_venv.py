"""A fresh virtual environment holding only some distributions and what they require (tests)."""

from __future__ import annotations

import importlib.metadata as md
import re
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement


def _closure(names: list[str]) -> list[md.Distribution]:
    """The installed distributions `names` need: themselves and their requirements (no extras)."""
    todo, seen = list(names), {}
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        seen[key] = dist = md.distribution(name)
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return [seen[k] for k in sorted(seen)]


def clean_python(folder: Path, distributions: list[str]) -> Path:
    """The python of a new venv in `folder` (no pip, nothing of this one) in which exactly the
    installed `distributions` and their requirements can be imported: their files are linked from
    this environment, as a fresh `pip install` of them would place them."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    for dist in _closure(distributions):
        for top in sorted({f.parts[0] for f in dist.files or [] if f.parts[0] != ".."}):
            src, dst = Path(str(dist.locate_file(top))), site / top
            if src.exists() and not dst.exists() and not top.endswith(".pth"):
                dst.symlink_to(src)
    return python
