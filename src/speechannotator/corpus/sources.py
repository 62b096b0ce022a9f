"""Read a corpus from what users have: files, folders, JSONL/CSV manifests, Lhotse manifests, HF datasets.

Every input becomes `CorpusItem`s with unique ids. A manifest's `id` is kept; otherwise the id is
the audio path relative to the input root without its extension (`a/x.wav` -> `a/x`), so outputs
mirror the input tree and `a/x.wav` and `b/x.wav` no longer collide. Where two inputs would still
share an id (`x.wav` beside `x.flac`) both keep their extension; an id that stays taken is an error
for that input alone, and the rest of the corpus goes on.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..audio import AUDIO_EXTENSIONS, AudioError, check_audio_file
from .item import CorpusItem, check_id

MANIFEST_FIELDS = ("audio_filepath", "id", "duration", "language", "num_speakers", "timeline")
HF_MARKERS = ("dataset_info.json", "dataset_dict.json", "state.json")


@dataclass
class Corpus:
    items: list[CorpusItem] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (input or id, one-line cause)

    @property
    def known_seconds(self) -> float:
        return sum(i.duration or 0.0 for i in self.items)


@dataclass
class _Candidate:
    item: CorpusItem
    explicit: bool  # the id came from a manifest, not from a path
    alt_id: str | None = None  # the id with the extension kept, for path-derived ids
    origin: str = ""


def _strip_ext(rel: str) -> str:
    p = Path(rel)
    return str(p.with_suffix("")).replace(os.sep, "/") if p.suffix else rel


def _rel_id(path: Path, root: Path) -> tuple[str, str]:
    try:
        rel = path.resolve().relative_to(root).as_posix()
    except ValueError:
        rel = path.name
    return _strip_ext(rel), rel


def _open_text(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")


def _first_record(path: Path) -> dict[str, Any] | None:
    try:
        with _open_text(path) as f:
            for line in f:
                if line.strip():
                    obj = json.loads(line)
                    return obj if isinstance(obj, dict) else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, EOFError):
        return None
    return None


def is_hf_dataset(path: Path) -> bool:
    return path.is_dir() and any((path / m).exists() for m in HF_MARKERS)


def _opt_float(v: Any) -> float | None:
    return None if v in (None, "") else float(v)


def _opt_int(v: Any) -> int | None:
    return None if v in (None, "") else int(v)


def _header_duration(path: Path) -> float | None:
    import soundfile as sf

    try:
        return float(sf.info(str(path)).duration)
    except Exception:  # not readable by libsndfile: known once loaded
        return None


def _manifest_rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, row) per entry; a row that cannot be parsed comes back as its cause."""
    if path.suffix.lower() == ".csv":
        with path.open(encoding="utf-8", newline="") as f:
            for n, row in enumerate(csv.DictReader(f), start=2):
                yield n, {k.strip(): (v.strip() if isinstance(v, str) else v) for k, v in row.items() if k}
        return
    with _open_text(path) as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                yield n, f"not JSON ({exc.msg})"
                continue
            yield n, obj if isinstance(obj, dict) else "not a JSON object"


def _from_manifest(path: Path) -> tuple[list[_Candidate], list[tuple[str, str]]]:
    base = path.resolve().parent
    cands, errors = [], []
    for n, row in _manifest_rows(path):
        where = f"{path}:{n}"
        if isinstance(row, str):
            errors.append((where, row))
            continue
        audio = row.get("audio_filepath")
        if not audio:
            errors.append((where, "no audio_filepath"))
            continue
        audio_path = Path(audio) if Path(audio).is_absolute() else base / audio
        try:
            timeline = row.get("timeline") or None
            if timeline and not Path(timeline).is_absolute():
                timeline = str(base / timeline)
            item = CorpusItem(
                id=str(row["id"]) if row.get("id") not in (None, "") else "",
                path=str(audio_path),
                duration=_opt_float(row.get("duration")) or _header_duration(audio_path),
                language=row.get("language") or None,
                num_speakers=_opt_int(row.get("num_speakers")),
                timeline=timeline,
            )
        except (TypeError, ValueError) as exc:
            errors.append((where, f"bad field value ({exc})"))
            continue
        if item.id:
            cands.append(_Candidate(item, explicit=True, origin=where))
        else:
            cands.append(_Candidate(item, explicit=False, origin=where))
    # Ids from paths: relative to the manifest's folder when every entry lies under it, else to the
    # entries' common root, so that absolute /x/a/talk.wav and /x/b/talk.wav stay a/talk and b/talk.
    pathless = [c for c in cands if not c.explicit]
    root = _manifest_root(base, [Path(c.item.path) for c in pathless])
    for c in pathless:
        c.item = replace(c.item, id=_rel_id(Path(c.item.path), root)[0])
        c.alt_id = _rel_id(Path(c.item.path), root)[1]
    return cands, errors


def _manifest_root(base: Path, audio: list[Path]) -> Path:
    """The folder a manifest's path-derived ids are relative to."""
    resolved = [a.resolve() for a in audio]
    if all(base == r.parent or base in r.parents for r in resolved):
        return base
    return Path(os.path.commonpath([str(r.parent) for r in resolved]))


def _from_lhotse(path: Path) -> tuple[list[_Candidate], list[tuple[str, str]]]:
    from lhotse import CutSet, RecordingSet, load_manifest

    manifest = load_manifest(path)
    cands, errors = [], []
    if isinstance(manifest, RecordingSet):
        entries = [(r, 0.0, None, r.id) for r in manifest]
    elif isinstance(manifest, CutSet):
        entries = []
        for cut in manifest:
            rec = getattr(cut, "recording", None)
            if rec is None:
                errors.append((f"{path}:{cut.id}", "the cut has no recording"))
                continue
            whole = abs(cut.start) < 1e-6 and abs(cut.duration - rec.duration) < 1e-3
            entries.append((rec, cut.start, None if whole else cut.duration, cut.id))
    else:
        return [], [(str(path), f"a Lhotse {type(manifest).__name__} holds no audio to annotate")]
    for rec, offset, span, rec_id in entries:
        files = [s for s in rec.sources if s.type == "file"]
        if len(rec.sources) != 1 or not files:
            errors.append((f"{path}:{rec_id}", "only recordings with one audio file are supported"))
            continue
        src = Path(files[0].source)
        audio_path = src if src.is_absolute() else path.resolve().parent / src
        item = CorpusItem(
            id=rec_id,
            path=str(audio_path),
            offset=float(offset),
            span=span,
            duration=float(span if span is not None else rec.duration - offset),
        )
        cands.append(_Candidate(item, explicit=True, origin=f"{path}:{rec_id}"))
    return cands, errors


def _from_hf(path: Path) -> tuple[list[_Candidate], list[tuple[str, str]]]:
    import datasets

    loaded = datasets.load_from_disk(str(path))
    splits = list(loaded.items()) if isinstance(loaded, datasets.DatasetDict) else [(None, loaded)]
    cands, errors = [], []
    for split, ds in splits:
        column = next((name for name, feat in ds.features.items() if isinstance(feat, datasets.Audio)), None)
        if column is None:
            errors.append((f"{path}#{split or ''}", "no audio column (a datasets.Audio feature)"))
            continue
        ids = ds["id"] if "id" in ds.column_names else None
        width = max(6, len(str(len(ds))))
        for i in range(len(ds)):
            rec = str(ids[i]) if ids is not None else f"{split + '/' if split else ''}{i:0{width}d}"
            item = CorpusItem(id=rec, path=str(path.resolve()), kind="hf", split=split, index=i, column=column)
            cands.append(_Candidate(item, explicit=ids is not None, origin=f"{path}#{split or ''}/{i}"))
    return cands, errors


def _kind(path: Path) -> str:
    if path.is_dir():
        return "hf" if is_hf_dataset(path) else "folder"
    name = path.name.lower()
    if name.endswith(".csv"):
        return "manifest"
    if name.endswith((".jsonl", ".json", ".jsonl.gz", ".json.gz")):
        first = _first_record(path)
        if first is not None and "audio_filepath" in first:
            return "manifest"
        lhotse_keys = "sources" in first or "recording" in first if first is not None else False
        if first is not None and (lhotse_keys or first.get("type") in ("MonoCut", "MultiCut")):
            return "lhotse"
        if first is not None:
            return "unknown"
    return "file"  # audio, or something load_audio rejects with its own cause


def read_corpus(inputs: list[str | Path], *, extensions: tuple[str, ...] = AUDIO_EXTENSIONS) -> Corpus:
    """All recordings named by `inputs`, with unique output ids (sorted by id)."""
    cands: list[_Candidate] = []
    errors: list[tuple[str, str]] = []
    loose: list[tuple[Path, Path]] = []  # (audio file, the folder its id is relative to)
    for raw in inputs:
        p = Path(raw)
        kind = _kind(p) if p.exists() else "file"
        try:
            if kind == "folder":
                found = sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() in extensions)
                loose += [(q, p.resolve()) for q in found]
            elif kind == "manifest":
                c, e = _from_manifest(p)
                cands += c
                errors += e
            elif kind == "lhotse":
                c, e = _from_lhotse(p)
                cands += c
                errors += e
            elif kind == "hf":
                c, e = _from_hf(p)
                cands += c
                errors += e
            elif kind == "unknown":
                cause = "a JSON manifest whose first record has neither audio_filepath nor Lhotse fields"
                errors.append((str(p), cause))
            else:
                check_audio_file(p)  # a missing file, a link loop or a pipe: one line, before anything opens it
                loose.append((p, p.resolve().parent))
        except AudioError as exc:
            errors.append((str(p), str(exc)))
        except Exception as exc:  # an unreadable manifest: one line, the other inputs go on
            errors.append((str(p), f"cannot read {kind} ({exc.__class__.__name__}: {str(exc).splitlines()[0][:160]})"))
    if loose:
        # Ids relative to the common root of the inputs: `annotate a/ b/` keeps a/x and b/x apart.
        root = Path(os.path.commonpath([str(r) for _, r in loose]))
        seen: set[str] = set()
        for q, _ in loose:
            if os.path.realpath(q) in seen:
                continue  # the same file named twice (or through a link) is annotated once
            seen.add(os.path.realpath(q))
            rec, rel = _rel_id(q, root)
            item = CorpusItem(id=rec, path=str(q.resolve()), duration=_header_duration(q))
            cands.append(_Candidate(item, explicit=False, alt_id=rel, origin=str(q)))
    return _assign(cands, errors)


def _assign(cands: list[_Candidate], errors: list[tuple[str, str]]) -> Corpus:
    counts: dict[str, int] = {}
    for c in cands:
        counts[c.item.id] = counts.get(c.item.id, 0) + 1
    taken: dict[str, str] = {}
    items = []
    for c in cands:
        rec = c.item.id
        if counts[rec] > 1 and not c.explicit and c.alt_id:
            rec = c.alt_id  # x.wav beside x.flac: both keep their extension
        problem = check_id(rec)
        if problem is None and rec in taken:
            problem = f"recording id {rec!r} of {c.item.source} is already given to {taken[rec]}; outputs would collide"
        if problem is not None:
            errors.append((c.origin, problem))
            continue
        first = c.item.source
        taken[rec] = first if c.origin.startswith(first) else f"{first} ({c.origin})"
        items.append(replace(c.item, id=rec))
    items.sort(key=lambda i: i.id)
    return Corpus(items=items, errors=errors)


def attach_timelines(corpus: Corpus, timeline: Path) -> Corpus:
    """`--timeline`: one file for a single recording, or a folder of <id>.<ext> (or <stem>.<ext>)."""
    items, errors = [], list(corpus.errors)
    for item in corpus.items:
        if item.timeline:
            items.append(item)
            continue
        if not timeline.is_dir():
            items.append(replace(item, timeline=str(timeline)))
            continue
        target = timeline / item.id
        matches = []
        if target.parent.is_dir():
            matches = sorted(q for q in target.parent.glob(f"{target.name}.*") if q.is_file())
        if not matches:
            stem = Path(item.id).name
            matches = sorted(q for q in timeline.iterdir() if q.is_file() and q.name.split(".")[0] == stem)
        if not matches:
            errors.append((item.id, f"no reference timeline named {item.id}.* in {timeline}"))
            continue
        items.append(replace(item, timeline=str(matches[0])))
    return Corpus(items=items, errors=errors)
