#!/usr/bin/env bash
# Fetch real recorded sounds that ship in Debian packages into benchmarks/data/real_sounds
# (ignored by git), for the sound-event benchmark (benchmarks/events_bench.py) and its tests.
# Idempotent: a package already unpacked is skipped. Only the files used are kept:
# - asterisk-moh-opsound-wav: five pieces of recorded music on hold (8 kHz, CC-BY-SA-3.0);
# - hedgewars-data: the voice packs' Laugh.ogg, fifteen acted laughs (GPL-2 / various, see
#   its copyright file). The 145 MB package is downloaded once and deleted after unpacking.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${REAL_SOUNDS_DIR:-benchmarks/data/real_sounds}
mkdir -p "$DEST/debs" "$DEST/root"
log() { printf '[real-sounds] %s\n' "$*" >&2; }

fetch() {  # package, then the path patterns (under the package root) to keep
    local p=$1; shift
    [ -f "$DEST/debs/$p.done" ] && return 0
    log "apt-get download $p"
    local tmp; tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download -qq "$p" 2>&1 | { grep -v "unsandboxed" || true; })
    dpkg -x "$tmp"/"${p}"_*.deb "$tmp/x"
    for pat in "$@"; do
        (cd "$tmp/x" && find . -path "$pat" -type f) | while read -r f; do
            mkdir -p "$DEST/root/$(dirname "$f")"
            cp "$tmp/x/$f" "$DEST/root/$f"
        done
    done
    find "$tmp/x" -path "*/usr/share/doc/$p/copyright" -exec cp {} "$DEST/debs/$p.copyright" \;
    rm -rf "$tmp"
    touch "$DEST/debs/$p.done"
}
fetch asterisk-moh-opsound-wav "./usr/share/asterisk/moh/*.wav"
fetch hedgewars-data "./usr/share/games/hedgewars/Data/Sounds/voices/*/Laugh.ogg"
log "ready: $DEST"
