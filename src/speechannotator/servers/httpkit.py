"""Small real HTTP servers on 127.0.0.1 for testing and debugging OpenAI-compatible clients.

- ``RecordingProxy`` forwards every request to an upstream server and records the request
  bodies (e.g. to see the prompt and the ``input_audio`` parts a backend really sends). It can
  replace audio parts with a text note before forwarding, which makes a text-only upstream
  behave like a server that accepts audio.
- ``ScriptedServer`` answers chat requests from a Python function: garbage bodies, slow
  answers, HTTP errors, refusals of ``response_format`` and so on.

Both run a stdlib ThreadingHTTPServer in a daemon thread and are context managers.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

AUDIO_NOTE = "[segment audio withheld by proxy]"


@dataclass
class Reply:
    """What a ScriptedServer sends back: a status, a body (dict -> JSON) and an optional delay."""

    status: int = 200
    body: dict[str, Any] | str | bytes = ""
    delay_s: float = 0.0
    content_type: str = "application/json"


def chat_reply(content: str, *, finish_reason: str = "stop") -> Reply:
    """A well-formed chat.completion whose message content is `content`."""
    return Reply(
        body={
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "scripted",
            "choices": [
                {"index": 0, "finish_reason": finish_reason, "message": {"role": "assistant", "content": content}}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    )


def error_reply(status: int, message: str) -> Reply:
    return Reply(status=status, body={"error": {"code": status, "message": message, "type": "invalid_request_error"}})


@dataclass
class Recorded:
    method: str
    path: str
    body: Any  # decoded JSON, or the raw text when it is not JSON
    headers: dict[str, str]  # lower-case names


class _Base:
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.records: list[Recorded] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                owner._handle(self, "GET")

            def do_POST(self) -> None:
                owner._handle(self, "POST")

        self._host = host
        self._httpd = ThreadingHTTPServer((host, port), Handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self._httpd.server_port}"

    @property
    def url(self) -> str:
        return self.base_url + "/v1"

    def start(self):
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r.body for r in self.records if r.path.endswith("/chat/completions") and isinstance(r.body, dict)]

    def _read(self, h: BaseHTTPRequestHandler, method: str) -> tuple[bytes, Any]:
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0)) if method == "POST" else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = raw.decode("utf-8", "replace")
        with self._lock:
            self.records.append(Recorded(method, h.path, body, {k.lower(): v for k, v in h.headers.items()}))
        return raw, body

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, payload: bytes, content_type: str) -> None:
        try:
            h.send_response(status)
            h.send_header("Content-Type", content_type)
            h.send_header("Content-Length", str(len(payload)))
            h.end_headers()
            h.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): nothing to answer

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        raise NotImplementedError


class RecordingProxy(_Base):
    """Forward to `upstream` (a base URL such as http://127.0.0.1:8080), recording each request."""

    def __init__(
        self,
        upstream: str,
        *,
        strip_audio: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
        timeout_s: float = 600.0,
    ) -> None:
        super().__init__(host, port)
        self.upstream = upstream.rstrip("/")
        if self.upstream.endswith("/v1"):
            self.upstream = self.upstream[:-3]
        self.strip_audio = strip_audio
        self.timeout_s = timeout_s

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        raw, body = self._read(h, method)
        if self.strip_audio and isinstance(body, dict):
            body, changed = _without_audio(body)
            if changed:
                raw = json.dumps(body).encode("utf-8")
        req = urllib.request.Request(
            self.upstream + h.path,
            data=raw if method == "POST" else None,
            method=method,
            headers={"Content-Type": h.headers.get("Content-Type", "application/json")},
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                self._send(h, resp.status, resp.read(), resp.headers.get("Content-Type", "application/json"))
        except urllib.error.HTTPError as exc:
            self._send(h, exc.code, exc.read(), exc.headers.get("Content-Type", "application/json"))
        except (urllib.error.URLError, OSError) as exc:
            msg = json.dumps({"error": {"code": 502, "message": f"upstream unreachable: {exc}"}}).encode()
            self._send(h, 502, msg, "application/json")


def _without_audio(body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    changed = False
    messages = []
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, list):
            parts = []
            for p in content:
                if isinstance(p, dict) and p.get("type") == "input_audio":
                    parts.append({"type": "text", "text": AUDIO_NOTE})
                    changed = True
                else:
                    parts.append(p)
            m = {**m, "content": parts}
        messages.append(m)
    return ({**body, "messages": messages} if changed else body), changed


class ScriptedServer(_Base):
    """An OpenAI-style endpoint whose answers come from ``script(request_body, index)``.

    GET /v1/models lists one model named "scripted".
    """

    def __init__(self, script: Callable[[Any, int], Reply], *, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host, port)
        self.script = script
        self._count = 0

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        _, body = self._read(h, method)
        if method == "GET":
            models = {"object": "list", "data": [{"id": "scripted", "object": "model"}]}
            self._send(h, 200, json.dumps(models).encode(), "application/json")
            return
        with self._lock:
            index = self._count
            self._count += 1
        reply = self.script(body, index)
        if reply.delay_s:
            time.sleep(reply.delay_s)
        payload = reply.body
        if isinstance(payload, dict):
            payload = json.dumps(payload, ensure_ascii=False)
        if isinstance(payload, str):
            payload = payload.encode("utf-8")
        self._send(h, reply.status, payload, reply.content_type)
