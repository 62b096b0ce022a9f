"""The shared state: one SQLite database (WAL mode) per output directory.

Every artifact of a recording lives here, keyed by (recording, segment key): the segment
table, prior evidence, field contracts, predictions of every review round, review
verdicts and the final records. A stage writes its outputs and its completion mark in one
transaction, so a killed run leaves either the whole stage or nothing, and a rerun resumes
at the first stage that is not marked done.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .records import Anchor, Contract, Decision, Evidence, Prediction, Segment, Verdict, VoiceDecision
from .schema import LabelLanguage

STATE_FILE = "state.sqlite"  # its name in an output folder, next to the JSON outputs
SCHEMA_VERSION = 2  # 2: recordings.label_language

_DDL = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS recordings (
    rec TEXT PRIMARY KEY, path TEXT NOT NULL, fingerprint TEXT NOT NULL,
    duration REAL, status TEXT NOT NULL, error TEXT NOT NULL DEFAULT '',
    updated REAL NOT NULL, label_language TEXT
);
CREATE TABLE IF NOT EXISTS stages (
    rec TEXT NOT NULL, stage TEXT NOT NULL, done_at REAL NOT NULL, info TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (rec, stage)
);
CREATE TABLE IF NOT EXISTS segments (
    rec TEXT NOT NULL, key TEXT NOT NULL, start REAL NOT NULL, "end" REAL NOT NULL,
    speaker TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (rec, key)
);
CREATE TABLE IF NOT EXISTS evidence (
    rec TEXT NOT NULL, key TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (rec, key, name)
);
CREATE TABLE IF NOT EXISTS contracts (
    rec TEXT NOT NULL, key TEXT NOT NULL, field TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (rec, key, field)
);
CREATE TABLE IF NOT EXISTS predictions (
    rec TEXT NOT NULL, key TEXT NOT NULL, field TEXT NOT NULL, round INTEGER NOT NULL,
    data TEXT NOT NULL, PRIMARY KEY (rec, key, field, round)
);
CREATE TABLE IF NOT EXISTS verdicts (
    rec TEXT NOT NULL, key TEXT NOT NULL, field TEXT NOT NULL, round INTEGER NOT NULL,
    data TEXT NOT NULL, PRIMARY KEY (rec, key, field, round)
);
CREATE TABLE IF NOT EXISTS records (
    rec TEXT NOT NULL, key TEXT NOT NULL, position INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (rec, key)
);
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, rec TEXT NOT NULL, key TEXT NOT NULL, field TEXT NOT NULL,
    old TEXT NOT NULL, new TEXT NOT NULL, who TEXT NOT NULL, at REAL NOT NULL, note TEXT NOT NULL DEFAULT '',
    anchor TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS voice_decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, action TEXT NOT NULL, voice TEXT NOT NULL, data TEXT NOT NULL,
    who TEXT NOT NULL, at REAL NOT NULL, note TEXT NOT NULL DEFAULT ''
);
"""
# The audit trails refuse updates and deletes in the database itself (one statement each).
_TRIGGERS = tuple(
    f"CREATE TRIGGER IF NOT EXISTS {table}_no_{op.lower()} BEFORE {op} ON {table} "
    "BEGIN SELECT RAISE(ABORT, 'human decisions are append-only'); END"
    for table in ("decisions", "voice_decisions")
    for op in ("UPDATE", "DELETE")
)

# Machine outputs, reset when a recording's fingerprint changes. Human decisions are not among
# them: they are an append-only audit trail that outlives reruns.
_PER_RECORDING_TABLES = ("stages", "segments", "evidence", "contracts", "predictions", "verdicts", "records")


def _connect_readonly(path: Path) -> sqlite3.Connection:
    """Open the database without writing anything (``mode=ro``). In a folder we cannot write,
    a WAL database whose -shm file is gone can only be opened as immutable (no other writer
    can exist there either)."""
    if not path.is_file():
        raise sqlite3.OperationalError(f"no state database at {path}")
    uri = "file:" + quote(str(path.resolve()))
    for query in ("?mode=ro", "?mode=ro&immutable=1"):
        conn = sqlite3.connect(uri + query, uri=True, timeout=60.0, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("SELECT count(*) FROM meta").fetchone()
            return conn
        except sqlite3.OperationalError:
            conn.close()
            if query.endswith("immutable=1"):
                raise
    raise AssertionError("unreachable")


def _inserted_id(cur: sqlite3.Cursor) -> int:
    """The id of the row an INSERT on `cur` just made (sqlite3 types it Optional: None before any)."""
    if cur.lastrowid is None:
        raise RuntimeError("the INSERT made no row")
    return cur.lastrowid


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class StateStore:
    """Access to the state database. One instance per process; safe across threads."""

    def __init__(self, path: str | Path, *, readonly: bool = False):
        self.path = Path(path)
        self._lock = threading.RLock()
        self.readonly = readonly
        if readonly:  # explain / view: never write, so a read-only results folder works
            self._conn = _connect_readonly(self.path)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(self.path), timeout=60.0, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=60000")
        with self.transaction() as c:
            for stmt in _DDL.strip().split(";"):
                if stmt.strip():
                    c.execute(stmt)
            for stmt in _TRIGGERS:
                c.execute(stmt)
            columns = {row[1] for row in c.execute("PRAGMA table_info(recordings)")}
            if "label_language" not in columns:  # a version-1 state
                c.execute("ALTER TABLE recordings ADD COLUMN label_language TEXT")
            if "anchor" not in {row[1] for row in c.execute("PRAGMA table_info(decisions)")}:
                c.execute(
                    "ALTER TABLE decisions ADD COLUMN anchor TEXT NOT NULL DEFAULT ''"
                )  # decisions before anchors
            c.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> StateStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All writes inside happen atomically (BEGIN IMMEDIATE ... COMMIT)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")

    def _query(self, sql: str, args: Iterable[Any] = ()) -> list[tuple]:
        with self._lock:
            return self._conn.execute(sql, tuple(args)).fetchall()

    # -- recordings ---------------------------------------------------------------------

    def begin_recording(self, rec: str, path: str, fingerprint: str, duration: float | None = None) -> bool:
        """Register a recording. Returns True when earlier work on it can be resumed.

        A recording whose fingerprint (audio content + settings) changed is reset, so that
        stale stages never mix with new ones.
        """
        with self.transaction() as c:
            row = c.execute("SELECT fingerprint FROM recordings WHERE rec=?", (rec,)).fetchone()
            resumable = row is not None and row[0] == fingerprint
            if row is not None and not resumable:
                for table in _PER_RECORDING_TABLES:
                    c.execute(f"DELETE FROM {table} WHERE rec=?", (rec,))
            c.execute(
                "INSERT INTO recordings (rec, path, fingerprint, duration, status, updated) VALUES (?,?,?,?,?,?) "
                "ON CONFLICT(rec) DO UPDATE SET path=excluded.path, fingerprint=excluded.fingerprint, "
                "duration=excluded.duration, status=CASE WHEN recordings.fingerprint=excluded.fingerprint "
                "THEN recordings.status ELSE 'running' END, updated=excluded.updated, "
                "label_language=CASE WHEN recordings.fingerprint=excluded.fingerprint "
                "THEN recordings.label_language ELSE NULL END",
                (rec, path, fingerprint, duration, "running", time.time()),
            )
        return resumable

    def recording(self, rec: str) -> dict[str, Any] | None:
        rows = self._query("SELECT path, fingerprint, status FROM recordings WHERE rec=?", (rec,))
        return dict(zip(("path", "fingerprint", "status"), rows[0])) if rows else None

    def status(self, rec: str) -> tuple[str, str] | None:
        rows = self._query("SELECT status, fingerprint FROM recordings WHERE rec=?", (rec,))
        return rows[0] if rows else None

    def set_status(self, rec: str, status: str, error: str = "") -> None:
        with self.transaction() as c:
            c.execute(
                "UPDATE recordings SET status=?, error=?, updated=? WHERE rec=?", (status, error, time.time(), rec)
            )

    def recordings(self) -> list[dict[str, Any]]:
        rows = self._query("SELECT rec, path, fingerprint, duration, status, error FROM recordings ORDER BY rec")
        keys = ("rec", "path", "fingerprint", "duration", "status", "error")
        return [dict(zip(keys, r)) for r in rows]

    # -- stages -------------------------------------------------------------------------

    def recording_versions(self) -> dict[str, tuple]:
        """Per recording, a value that changes whenever a run (its start or its end) or a human
        decision touches it: (updated, status, decision count, last decision id)."""
        try:
            rows = self._query(
                "SELECT r.rec, r.updated, r.status, COUNT(d.id), MAX(d.id) FROM recordings r "
                "LEFT JOIN decisions d ON d.rec = r.rec GROUP BY r.rec"
            )
        except sqlite3.OperationalError:  # a read-only state written before decisions existed
            rows = [(r, u, st, 0, None) for r, u, st in self._query("SELECT rec, updated, status FROM recordings")]
        return {rec: tuple(rest) for rec, *rest in rows}

    def stage_done(self, rec: str, stage: str) -> bool:
        return bool(self._query("SELECT 1 FROM stages WHERE rec=? AND stage=?", (rec, stage)))

    def stage_info(self, rec: str, stage: str) -> dict[str, Any] | None:
        rows = self._query("SELECT info FROM stages WHERE rec=? AND stage=?", (rec, stage))
        return json.loads(rows[0][0]) if rows else None

    @staticmethod
    def mark_stage(c: sqlite3.Connection, rec: str, stage: str, info: dict[str, Any] | None = None) -> None:
        c.execute("INSERT OR REPLACE INTO stages VALUES (?,?,?,?)", (rec, stage, time.time(), _dump(info or {})))

    # -- label language -------------------------------------------------------------------

    def clear_stages(self, rec: str, stages: Iterable[str]) -> None:
        """Drop the done marks of `stages`, so that the next run redoes them."""
        with self.transaction() as c:
            c.executemany("DELETE FROM stages WHERE rec=? AND stage=?", [(rec, str(s)) for s in stages])

    @staticmethod
    def set_label_language(c: sqlite3.Connection, rec: str, lang: LabelLanguage) -> None:
        """Chosen once per recording, with its segment table; plan, label, review and finalize read it."""
        if lang not in ("zh", "en"):
            raise ValueError(f"label language must be 'zh' or 'en', got {lang!r}")
        c.execute("UPDATE recordings SET label_language=? WHERE rec=?", (lang, rec))

    def label_language(self, rec: str) -> LabelLanguage:
        rows = self._query("SELECT label_language FROM recordings WHERE rec=?", (rec,))
        if not rows or rows[0][0] not in ("zh", "en"):
            raise ValueError(f"{rec}: no label language in the state; run the timeline stage first")
        return rows[0][0]

    # -- segments -----------------------------------------------------------------------

    @staticmethod
    def write_segments(c: sqlite3.Connection, rec: str, segments: list[Segment]) -> None:
        c.execute("DELETE FROM segments WHERE rec=?", (rec,))
        c.executemany(
            'INSERT INTO segments (rec, key, start, "end", speaker, data) VALUES (?,?,?,?,?,?)',
            [(rec, s.key, s.start, s.end, s.speaker, _dump(s.to_json())) for s in segments],
        )

    def segments(self, rec: str) -> list[Segment]:
        rows = self._query('SELECT data FROM segments WHERE rec=? ORDER BY start, "end", key', (rec,))
        return [Segment.from_json(json.loads(r[0])) for r in rows]

    # -- evidence -----------------------------------------------------------------------

    @staticmethod
    def write_evidence(c: sqlite3.Connection, rec: str, items: Iterable[Evidence]) -> None:
        c.executemany(
            "INSERT OR REPLACE INTO evidence VALUES (?,?,?,?)",
            [(rec, e.key, e.name, _dump(asdict(e))) for e in items],
        )

    def evidence(self, rec: str) -> dict[str, dict[str, Evidence]]:
        """All evidence of a recording: {key: {name: Evidence}}."""
        out: dict[str, dict[str, Evidence]] = defaultdict(dict)
        for key, name, data in self._query("SELECT key, name, data FROM evidence WHERE rec=?", (rec,)):
            out[key][name] = Evidence(**json.loads(data))
        return dict(out)

    # -- contracts, predictions, verdicts ------------------------------------------------

    @staticmethod
    def write_contracts(c: sqlite3.Connection, rec: str, items: Iterable[Contract]) -> None:
        """Replace the recording's contracts (a plan is always written whole)."""
        c.execute("DELETE FROM contracts WHERE rec=?", (rec,))
        c.executemany(
            "INSERT OR REPLACE INTO contracts VALUES (?,?,?,?)",
            [(rec, x.key, x.field, _dump(asdict(x))) for x in items],
        )

    def contracts(self, rec: str) -> dict[tuple[str, str], Contract]:
        rows = self._query("SELECT key, field, data FROM contracts WHERE rec=?", (rec,))
        return {(k, f): Contract(**json.loads(d)) for k, f, d in rows}

    @staticmethod
    def clear_predictions(c: sqlite3.Connection, rec: str) -> None:
        """Drop every prediction and verdict of a recording: round 0 of labeling starts over."""
        c.execute("DELETE FROM predictions WHERE rec=?", (rec,))
        c.execute("DELETE FROM verdicts WHERE rec=?", (rec,))

    @staticmethod
    def write_predictions(c: sqlite3.Connection, rec: str, items: Iterable[Prediction]) -> None:
        c.executemany(
            "INSERT OR REPLACE INTO predictions VALUES (?,?,?,?,?)",
            [(rec, p.key, p.field, p.round, _dump(asdict(p))) for p in items],
        )

    def predictions(self, rec: str, *, all_rounds: bool = False) -> dict[tuple[str, str], Any]:
        """Latest prediction per (key, field); with all_rounds, the list of every round."""
        rows = self._query("SELECT key, field, round, data FROM predictions WHERE rec=? ORDER BY round", (rec,))
        if all_rounds:
            trail: dict[tuple[str, str], list[Prediction]] = defaultdict(list)
            for k, f, _, d in rows:
                trail[(k, f)].append(Prediction(**json.loads(d)))
            return dict(trail)
        return {(k, f): Prediction(**json.loads(d)) for k, f, _, d in rows}

    @staticmethod
    def write_verdicts(c: sqlite3.Connection, rec: str, items: Iterable[Verdict]) -> None:
        c.executemany(
            "INSERT OR REPLACE INTO verdicts VALUES (?,?,?,?,?)",
            [(rec, v.key, v.field, v.round, _dump(asdict(v))) for v in items],
        )

    def verdicts(self, rec: str) -> dict[tuple[str, str], list[Verdict]]:
        rows = self._query("SELECT key, field, data FROM verdicts WHERE rec=? ORDER BY round", (rec,))
        out: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
        for k, f, d in rows:
            out[(k, f)].append(Verdict(**json.loads(d)))
        return dict(out)

    # -- final records ------------------------------------------------------------------

    @staticmethod
    def write_records(c: sqlite3.Connection, rec: str, items: list[tuple[str, dict[str, Any]]]) -> None:
        c.execute("DELETE FROM records WHERE rec=?", (rec,))
        c.executemany(
            "INSERT INTO records VALUES (?,?,?,?)",
            [(rec, key, i, _dump(data)) for i, (key, data) in enumerate(items)],
        )

    def records(self, rec: str) -> list[tuple[str, dict[str, Any]]]:
        rows = self._query("SELECT key, data FROM records WHERE rec=? ORDER BY position", (rec,))
        return [(k, json.loads(d)) for k, d in rows]

    # -- human decisions (append-only audit trail) ---------------------------------------

    def add_decision(
        self,
        rec: str,
        key: str,
        field: str,
        old: Any,
        new: Any,
        who: str,
        note: str = "",
        anchor: Anchor | None = None,
    ) -> int:
        """Append one human decision; returns its id. Nothing earlier is changed. A ``key`` ending
        in ``{id}`` names a segment made by this very decision (``corrections.ADDED_FIELD``): it
        is filled with the decision's own id, taken in the same transaction."""
        with self.transaction() as c:
            template, made = key, None
            if template.endswith("{id}"):  # ids are never reused: no row is ever deleted (_TRIGGERS)
                (seq,) = c.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM decisions").fetchone()
                made = max(seq, self._next_sequence(c))
                key = template.replace("{id}", str(made))
            cur = c.execute(
                "INSERT INTO decisions (rec, key, field, old, new, who, at, note, anchor) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    rec,
                    key,
                    field,
                    _dump(old),
                    _dump(new),
                    who,
                    time.time(),
                    note,
                    _dump(asdict(anchor)) if anchor else "",
                ),
            )
            row_id = _inserted_id(cur)
            if made is not None and made != row_id:  # rolled back with the transaction
                raise RuntimeError(f"decision id {row_id} does not match the key {key}")
            return row_id

    @staticmethod
    def _next_sequence(c: sqlite3.Connection) -> int:
        row = c.execute("SELECT seq FROM sqlite_sequence WHERE name='decisions'").fetchone()
        return int(row[0]) + 1 if row else 1

    def decisions(self, rec: str) -> list[Decision]:
        """Every human decision on a recording, oldest first."""
        cols = "id, key, field, old, new, who, at, note"
        try:
            try:
                rows = self._query(f"SELECT {cols}, anchor FROM decisions WHERE rec=? ORDER BY id", (rec,))
            except sqlite3.OperationalError:  # a read-only state written before anchors existed
                rows = [(*r, "") for r in self._query(f"SELECT {cols} FROM decisions WHERE rec=? ORDER BY id", (rec,))]
        except sqlite3.OperationalError:  # a read-only state written before decisions existed
            return []
        return [
            Decision(i, k, f, json.loads(o), json.loads(n), w, a, note, Anchor(**json.loads(an)) if an else None)
            for i, k, f, o, n, w, a, note, an in rows
        ]

    # -- corpus voice decisions (append-only; corpus/voice_decisions.py applies them) -----

    def add_voice_decision(self, action: str, voice: str, payload: dict[str, Any], who: str, note: str = "") -> int:
        """Append one merge or split of corpus voices; returns its id."""
        with self.transaction() as c:
            cur = c.execute(
                "INSERT INTO voice_decisions (action, voice, data, who, at, note) VALUES (?,?,?,?,?,?)",
                (action, voice, _dump(payload), who, time.time(), note),
            )
            return _inserted_id(cur)

    def voice_decisions(self) -> list[VoiceDecision]:
        """Every corpus voice decision, oldest first."""
        try:
            rows = self._query("SELECT id, action, voice, data, who, at, note FROM voice_decisions ORDER BY id")
        except sqlite3.OperationalError:  # a read-only state written before voice decisions existed
            return []
        return [VoiceDecision(i, a, v, json.loads(d), w, at, n) for i, a, v, d, w, at, n in rows]
