"""The review page's HTTP server (Starlette): a session token on every request, fixed routes,
only the audio that the state names, the state opened read-only for reads.

Every route takes the recording id and segment key as query parameters and looks them up
in the state; no request string is ever joined to a file path.
"""

from __future__ import annotations

import json
import logging
import secrets
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import soundfile as sf
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..audio import AudioError, load_audio
from ..corpus.voice_decisions import VoiceError
from ..corpus.voice_edits import merge_voices, split_voice
from ..output.decisions import EditError
from ..output.write import output_path
from ..state import STATE_FILE, StateStore
from . import audioview, data
from . import voices as voices_view
from .edits import Conflict, add_segment, apply_edit, delete_segment, mark_reviewed, merge_with_next, split_segment

log = logging.getLogger(__name__)

TOKEN_PARAM = "token"
TOKEN_HEADER = "x-session-token"
_STATIC = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}
# The page loads nothing from elsewhere and runs no inline script: data can never become code.
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS = {
    "content-security-policy": _CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
}


def new_token() -> str:
    return secrets.token_urlsafe(24)


class TokenGuard:
    """ASGI middleware: refuse any request without the session token (403).

    GETs may carry it in the URL (the page's address, the audio element's src); state-changing
    requests must send it in a header, which a cross-site form cannot do.
    """

    def __init__(self, app: ASGIApp, token: str):
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope)
        given = request.headers.get(TOKEN_HEADER, "")
        if not given and request.method in ("GET", "HEAD"):
            given = request.query_params.get(TOKEN_PARAM, "")
        if not (given and secrets.compare_digest(given.encode(), self.token.encode())):
            return await PlainTextResponse("forbidden: missing or wrong session token", 403, headers=_HEADERS)(
                scope, receive, send
            )

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [
                    (k.encode(), v.encode()) for k, v in _HEADERS.items() if k.encode() not in have
                ]
            await send(message)

        await self.app(scope, receive, send_with_headers)


@dataclass
class Viewer:
    """The server's settings and its cache of decoded audio."""

    out_dir: Path
    token: str
    reviewer: str
    _tmp: tempfile.TemporaryDirectory = field(default_factory=lambda: tempfile.TemporaryDirectory(prefix="sa-view-"))
    _audio: dict[str, tuple[Path, list[list[float]]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    corpus_rows: data.CorpusRows = field(default_factory=data.CorpusRows)

    @property
    def state_path(self) -> Path:
        return self.out_dir / STATE_FILE

    @contextmanager
    def reader(self) -> Iterator[StateStore]:
        store = StateStore(self.state_path, readonly=True)
        try:
            yield store
        finally:
            store.close()

    def decoded(self, rec: str) -> tuple[Path, list[list[float]]]:
        """A 16-bit WAV of the recording as the pipeline heard it (16 kHz mono), and its peaks."""
        with self._lock:
            if rec not in self._audio:
                with self.reader() as store:
                    src = data.audio_path(store, rec)
                audio = load_audio(src)
                wav = Path(self._tmp.name) / f"{len(self._audio):05d}.wav"  # never a name from a request
                sf.write(wav, audio.samples, audio.sample_rate, subtype="PCM_16")
                self._audio[rec] = (wav, data.peaks(audio.samples))
            return self._audio[rec]

    def close(self) -> None:
        self._tmp.cleanup()


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def json_body(request: Request) -> Any:
    """The request's JSON body, or the 400 answer when it is not JSON (Infinity and NaN refused)."""
    try:
        return json.loads(await request.body(), parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        return _error(400, f"the body must be JSON: {exc}"[:200])


def _rec(request: Request) -> str:
    rec = request.query_params.get("rec")
    if not rec:
        raise data.NotFound("no recording named (?rec=)")
    return rec


class _Routes:
    """The review page's routes over one Viewer (each a method: make_app names them in the table)."""

    def __init__(self, viewer: Viewer) -> None:
        self.viewer = viewer
        self.static = resources.files(__package__) / "static"

    def index(self, request: Request) -> Response:
        html = (self.static / "index.html").read_text(encoding="utf-8").replace("{{token}}", self.viewer.token)
        return Response(html, media_type="text/html; charset=utf-8")

    def static_file(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _STATIC:  # a fixed list: nothing else of the package, nothing outside it
            return PlainTextResponse("not found", 404)
        return Response((self.static / name).read_bytes(), media_type=_STATIC[name])

    def busy_or_raise(self, rec: str | None, exc: Exception) -> Response:
        """An unexpected fault while a run rewrites the recording is that run's doing: 409, not 500."""
        try:
            with self.viewer.reader() as store:
                status = data.recording_row(store, rec)["status"] if rec else "complete"
        except Exception:  # noqa: BLE001 - the state itself mid-rewrite
            status = "unknown"
        if status != "complete":
            return _error(409, f"recording {rec!r} is being annotated ({exc.__class__.__name__}); try again when done")
        raise exc

    def write_failed(self, rec: str, exc: Exception, what: str) -> Response:
        """The answer to a write that raised: 404 unknown, 409 busy or stale, 400 refused; any other
        fault is decided by the recording's status (busy_or_raise)."""
        if isinstance(exc, data.NotFound):
            return _error(404, str(exc))
        if isinstance(exc, data.Busy):
            return _error(409, str(exc))
        if isinstance(exc, Conflict):
            return JSONResponse({"error": str(exc), "current": exc.current, "by": exc.who}, status_code=409)
        if isinstance(exc, EditError):
            return _error(400, str(exc))
        log.debug("%s failed", what, exc_info=exc)
        return self.busy_or_raise(rec, exc)

    def guarded(self, fn: Callable[[Request], Response]) -> Callable[[Request], Response]:
        """A read route whose faults become answers: 404 unknown, 409 busy, 400 refused."""

        def endpoint(request: Request) -> Response:
            try:
                return fn(request)
            except data.NotFound as exc:
                return _error(404, str(exc))
            except data.Busy as exc:
                return _error(409, str(exc))
            except (EditError, audioview.WindowError) as exc:
                return _error(400, str(exc))
            except AudioError as exc:
                return _error(404, f"the recording's audio cannot be read: {exc}")
            except Exception as exc:  # noqa: BLE001 - decided by the recording's status
                log.debug("request failed", exc_info=True)
                return self.busy_or_raise(request.query_params.get("rec"), exc)

        return endpoint

    def corpus(self, request: Request) -> Response:
        q = request.query_params
        try:
            offset, limit = int(q.get("offset", "0")), int(q.get("limit", str(data.CORPUS_PAGE)))
        except ValueError:
            raise EditError("offset and limit must be integers") from None
        with self.viewer.reader() as store:
            rows = self.viewer.corpus_rows.rows(store)
        page = data.corpus_page(
            rows,
            offset=offset,
            limit=limit,
            sort=q.get("sort", "rec"),
            asc=q.get("asc", "1") != "0",
            name=q.get("name", ""),
            field=q.get("field", ""),
            flag=q.get("flag", "relabeled"),
        )
        return JSONResponse({**page, "reviewer": self.viewer.reviewer, "out_dir": str(self.viewer.out_dir)})

    def recording(self, request: Request) -> Response:
        rec = _rec(request)
        with self.viewer.reader() as store:
            payload = data.recording(store, rec)
        try:
            payload["peaks"] = self.viewer.decoded(rec)[1]
        except AudioError as exc:
            payload["peaks"], payload["audio_error"] = [], str(exc)
        return JSONResponse(payload)

    def segment(self, request: Request) -> Response:
        key = request.query_params.get("key", "")
        with self.viewer.reader() as store:
            return JSONResponse(data.segment(store, _rec(request), key))

    def audio(self, request: Request) -> Response:
        wav, _ = self.viewer.decoded(_rec(request))
        return FileResponse(wav, media_type="audio/wav")  # answers Range requests

    def _window(self, request: Request) -> tuple[Path, audioview.Window]:
        wav, _ = self.viewer.decoded(_rec(request))
        try:
            t0, t1 = float(request.query_params.get("t0", "")), float(request.query_params.get("t1", ""))
            columns = int(request.query_params.get("columns", ""))
        except ValueError:
            raise audioview.WindowError("t0, t1 (seconds) and columns (an integer) are required") from None
        return wav, audioview.window(wav, t0, t1, columns)

    def window_peaks(self, request: Request) -> Response:
        wav, w = self._window(request)
        return JSONResponse({"peaks": audioview.window_peaks(wav, w)})

    def spectrogram(self, request: Request) -> Response:
        wav, w = self._window(request)
        return JSONResponse(audioview.spectrogram(wav, w))

    def output(self, request: Request) -> Response:
        rec = _rec(request)
        with self.viewer.reader() as store:
            data.recording_row(store, rec)
        path = output_path(self.viewer.out_dir, rec).resolve()
        if not path.is_relative_to(self.viewer.out_dir.resolve()) or not path.is_file():
            return _error(404, f"no output JSON for {rec!r} under the output folder")
        return FileResponse(path, media_type="application/json")

    async def edit(self, request: Request) -> Response:
        body = await json_body(request)
        if isinstance(body, Response):
            return body
        if not isinstance(body, dict) or not all(isinstance(body.get(k), str) for k in ("rec", "key", "field")):
            return _error(400, "the body must hold rec, key and field strings and a value")
        if "value" not in body:
            return _error(400, "no value")
        note = body.get("note", "")
        extra = {"expect": body["expect"]} if "expect" in body else {}
        try:
            row = await run_in_threadpool(
                apply_edit,
                self.viewer.state_path,
                self.viewer.out_dir,
                body["rec"],
                body["key"],
                body["field"],
                body["value"],
                self.viewer.reviewer,
                note if isinstance(note, str) else "",
                **extra,
            )
        except Exception as exc:  # noqa: BLE001 - write_failed answers each kind
            return self.write_failed(body["rec"], exc, "edit")
        return JSONResponse({"ok": True, "row": row})

    async def review(self, request: Request) -> Response:
        body = await json_body(request)
        if isinstance(body, Response):
            return body
        if not isinstance(body, dict) or not all(isinstance(body.get(k), str) for k in ("rec", "key")):
            return _error(400, "the body must hold rec and key strings and reviewed: true or false")
        if not isinstance(body.get("reviewed"), bool):
            return _error(400, "reviewed must be true or false")
        try:
            added = await run_in_threadpool(
                mark_reviewed,
                self.viewer.state_path,
                self.viewer.out_dir,
                body["rec"],
                body["key"],
                body["reviewed"],
                self.viewer.reviewer,
            )
        except Exception as exc:  # noqa: BLE001 - write_failed answers each kind
            return self.write_failed(body["rec"], exc, "review mark")
        return JSONResponse({"ok": True, "added": added})

    async def structural(self, request: Request) -> Response:
        """Delete or restore a segment ({"deleted": bool}) or merge it with the next ("/api/merge")."""
        body = await json_body(request)
        if isinstance(body, Response):
            return body
        if not isinstance(body, dict) or not all(isinstance(body.get(k), str) for k in ("rec", "key")):
            return _error(400, "the body must hold rec and key strings")
        merge = request.url.path.endswith("/merge")
        if not merge and not isinstance(body.get("deleted"), bool):
            return _error(400, "deleted must be true or false")
        args = (self.viewer.state_path, self.viewer.out_dir, body["rec"], body["key"])
        try:
            if merge:
                row = await run_in_threadpool(merge_with_next, *args, self.viewer.reviewer)
                return JSONResponse({"ok": True, "row": row})
            await run_in_threadpool(delete_segment, *args, body["deleted"], self.viewer.reviewer)
        except Exception as exc:  # noqa: BLE001 - write_failed answers each kind
            return self.write_failed(body["rec"], exc, "structural edit")
        return JSONResponse({"ok": True})

    async def create(self, request: Request) -> Response:
        """Split a segment ("/api/split": rec, key, at ms, optional texts [first, second]) or add
        one ("/api/add": rec, start, end ms, speaker, text); answers the new segment's key and row."""
        body = await json_body(request)
        if isinstance(body, Response):
            return body
        split = request.url.path.endswith("/split")
        need = ("rec", "key") if split else ("rec", "speaker", "text")
        if not isinstance(body, dict) or not all(isinstance(body.get(k), str) for k in need):
            return _error(400, f"the body must hold {', '.join(need)} strings")
        missing = [k for k in (("at",) if split else ("start", "end")) if k not in body]
        if missing:
            return _error(400, f"no {missing[0]}")
        texts = body.get("texts")
        if split and texts is not None and not (isinstance(texts, list) and len(texts) == 2):
            return _error(400, "texts must be a list of two strings: the first part's and the second's")
        try:
            if split:
                parts = None if texts is None else tuple(texts)
                at = (body["rec"], body["key"], body["at"], self.viewer.reviewer, parts)
                got = await run_in_threadpool(split_segment, self.viewer.state_path, self.viewer.out_dir, *at)
            else:
                new = (body["rec"], body["start"], body["end"], body["speaker"], body["text"], self.viewer.reviewer)
                got = await run_in_threadpool(add_segment, self.viewer.state_path, self.viewer.out_dir, *new)
        except Exception as exc:  # noqa: BLE001 - write_failed answers each kind
            return self.write_failed(body["rec"], exc, "split/add")
        return JSONResponse({"ok": True, **got})

    def voices(self, request: Request) -> Response:
        with self.viewer.reader() as store:
            payload = voices_view.voices(store, self.viewer.out_dir)
        return JSONResponse({**payload, "reviewer": self.viewer.reviewer})

    async def voice_decision(self, request: Request) -> Response:
        """Merge two corpus voices ({"keep", "absorb"}) or split a recording's speaker off its
        voice ({"rec", "speaker"}); recorded as the reviewer's decision, speakers.jsonl rewritten."""
        body = await json_body(request)
        if isinstance(body, Response):
            return body
        merge = request.url.path.endswith("/merge")
        names = ("keep", "absorb") if merge else ("rec", "speaker")
        if not isinstance(body, dict) or not all(isinstance(body.get(k), str) for k in names):
            return _error(400, f"the body must hold {' and '.join(names)} strings")
        try:
            if merge:
                did = await run_in_threadpool(
                    merge_voices, self.viewer.out_dir, body["keep"], body["absorb"], who=self.viewer.reviewer
                )
                return JSONResponse({"ok": True, "decision": did, "voice": body["keep"]})
            did, new = await run_in_threadpool(
                split_voice, self.viewer.out_dir, body["rec"], body["speaker"], who=self.viewer.reviewer
            )
            return JSONResponse({"ok": True, "decision": did, "voice": new})
        except VoiceError as exc:
            return _error(400, str(exc))
        except Exception as exc:  # noqa: BLE001 - e.g. a recording's output mid-rewrite by a run
            log.debug("voice decision failed", exc_info=True)
            return _error(409, f"the voices cannot be rewritten now ({exc.__class__.__name__}: {exc})"[:300])


def make_app(viewer: Viewer) -> ASGIApp:
    r = _Routes(viewer)
    app = Starlette(
        routes=[
            Route("/", r.index),
            Route("/static/{name}", r.static_file),
            Route("/api/corpus", r.guarded(r.corpus)),
            Route("/api/recording", r.guarded(r.recording)),
            Route("/api/segment", r.guarded(r.segment)),
            Route("/api/audio", r.guarded(r.audio), methods=["GET", "HEAD"]),
            Route("/api/output", r.guarded(r.output)),
            Route("/api/peaks", r.guarded(r.window_peaks)),
            Route("/api/spectrogram", r.guarded(r.spectrogram)),
            Route("/api/edit", r.edit, methods=["POST"]),
            Route("/api/review", r.review, methods=["POST"]),
            Route("/api/delete", r.structural, methods=["POST"]),
            Route("/api/merge", r.structural, methods=["POST"]),
            Route("/api/split", r.create, methods=["POST"]),
            Route("/api/add", r.create, methods=["POST"]),
            Route("/api/voices", r.guarded(r.voices)),
            Route("/api/voices/merge", r.voice_decision, methods=["POST"]),
            Route("/api/voices/split", r.voice_decision, methods=["POST"]),
        ]
    )
    return TokenGuard(app, viewer.token)
