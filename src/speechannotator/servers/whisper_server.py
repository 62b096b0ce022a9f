"""A small OpenAI-compatible transcription server for a faster-whisper model folder.

    python -m speechannotator.servers.whisper_server [--model DIR] [--host 127.0.0.1] [--port 8100]

Serves `POST /v1/audio/transcriptions` (multipart: file, model, language, prompt,
response_format = json | text | verbose_json, timestamp_granularities[] = word | segment),
`GET /v1/models` and `GET /health`. verbose_json carries the language code, segments with
Whisper's quality statistics (avg_logprob, compression_ratio, no_speech_prob) and words with
times, as OpenAI's API and vLLM's return them. Standard library HTTP server (one request
at a time per connection thread, decoding serialized by a lock): meant for tests and a
local stand-in for a vLLM endpoint, not for production traffic.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import threading
from dataclasses import dataclass
from email.parser import BytesParser
from email.policy import HTTP
from email.utils import collapse_rfc2231_value
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

MAX_BODY = 200 << 20  # 200 MB of audio per request


class BadRequest(ValueError):
    pass


def parse_multipart(content_type: str, body: bytes) -> dict[str, list]:
    """Form fields of a multipart/form-data body: name -> list of str (fields) or bytes (files)."""
    if "multipart/form-data" not in (content_type or ""):
        raise BadRequest("expected multipart/form-data")
    msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    if not msg.is_multipart():
        raise BadRequest("malformed multipart body")
    fields: dict[str, list] = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if isinstance(name, tuple):  # an RFC 2231 encoded name: (charset, language, value)
            name = collapse_rfc2231_value(name)
        if not name:
            continue
        payload = part.get_payload(decode=True)
        if not isinstance(payload, bytes):  # a part without content (or a nested message)
            payload = b""
        value = payload if part.get_filename() is not None else payload.decode("utf-8", "replace")
        fields.setdefault(name, []).append(value)
    return fields


def decode_audio(data: bytes, sr: int = 16000) -> np.ndarray:
    """Any container soundfile or PyAV reads -> 16 kHz mono float32."""
    import soundfile as sf
    import soxr

    try:
        x, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except Exception:
        try:
            import av

            with av.open(io.BytesIO(data), mode="r") as f:
                resampler = av.AudioResampler(format="flt", layout="mono", rate=sr)
                chunks = [r.to_ndarray().reshape(-1) for fr in f.decode(audio=0) for r in resampler.resample(fr)]
            x, rate = (np.concatenate(chunks)[:, None] if chunks else np.zeros((0, 1), np.float32)), sr
        except Exception as exc:
            raise BadRequest(f"file is not decodable audio ({exc.__class__.__name__})") from exc
    x = x.mean(axis=1)
    if rate != sr:
        x = soxr.resample(x, rate, sr)
    if not len(x) or not np.isfinite(x).all():
        raise BadRequest("file holds no valid audio samples")
    return x.astype(np.float32)


class WhisperService:
    def __init__(self, model_dir: str | None = None, device: str = "cpu", compute_type: str = "int8"):
        from ..config import AsrConfig
        from ..frontend.asr_whisper import whisper_model

        self.cfg = AsrConfig(model=model_dir, device=device, compute_type=compute_type)
        self.model = whisper_model(self.cfg)
        self.name = model_dir or "whisper-base"
        self.lock = threading.Lock()

    def transcribe(self, audio: np.ndarray, language: str | None, prompt: str | None, words: bool) -> dict:
        from ..frontend.asr_types import ZH_PROMPT

        with self.lock:
            parts, info = self.model.transcribe(
                audio,
                language=language or None,
                beam_size=self.cfg.beam_size,
                temperature=self.cfg.temperature,
                word_timestamps=words,
                condition_on_previous_text=False,
                vad_filter=False,
                initial_prompt=prompt or (ZH_PROMPT if language == "zh" else None),
            )
            parts = list(parts)
        segments = [
            {
                "id": i,
                "seek": p.seek,
                "start": round(p.start, 3),
                "end": round(p.end, 3),
                "text": p.text,
                "tokens": list(p.tokens),
                "temperature": p.temperature or 0.0,
                "avg_logprob": p.avg_logprob,
                "compression_ratio": p.compression_ratio,
                "no_speech_prob": p.no_speech_prob,
            }
            for i, p in enumerate(parts)
        ]
        out = {
            "task": "transcribe",
            "language": info.language,
            "duration": round(len(audio) / 16000, 3),
            "text": "".join(p.text for p in parts).strip(),
            "segments": segments,
        }
        if words:
            out["words"] = [
                {
                    "word": w.word,
                    "start": round(w.start, 3),
                    "end": round(w.end, 3),
                    "probability": round(w.probability, 4),
                }
                for p in parts
                for w in (p.words or [])
            ]
        return out


@dataclass(frozen=True)
class TranscriptionRequest:
    """A /v1/audio/transcriptions form, checked and its audio decoded."""

    audio: np.ndarray
    response_format: str  # json, text or verbose_json
    language: str | None
    prompt: str | None
    words: bool  # word timestamps: verbose_json asking for words (or for no granularity at all)

    @classmethod
    def parse(cls, content_type: str, body: bytes) -> TranscriptionRequest:
        """The request of a multipart body; BadRequest says what is missing or unsupported."""
        form = parse_multipart(content_type, body)
        files = [v for v in form.get("file", []) if isinstance(v, bytes)]
        if not files:
            raise BadRequest("missing 'file'")
        fmt = (form.get("response_format") or ["json"])[0]
        if fmt not in ("json", "text", "verbose_json"):
            raise BadRequest(f"unsupported response_format {fmt!r}")
        granularity = set(form.get("timestamp_granularities[]", []) + form.get("timestamp_granularities", []))
        audio = decode_audio(files[0])
        language = (form.get("language") or [None])[0]
        prompt = (form.get("prompt") or [None])[0]
        words = fmt == "verbose_json" and ("word" in granularity or not granularity)
        return cls(audio, fmt, language, prompt, words)


def make_handler(service: WhisperService):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet: tests start this in process
            pass

        def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _error(self, code: int, message: str) -> None:
            self._send(
                code,
                json.dumps({"error": {"message": message, "type": "invalid_request_error", "code": code}}).encode(),
            )

        def do_GET(self):
            if self.path.rstrip("/") == "/health":
                self._send(200, b'{"status":"ok"}')
            elif self.path.rstrip("/") == "/v1/models":
                self._send(
                    200,
                    json.dumps(
                        {"object": "list", "data": [{"id": service.name, "object": "model", "owned_by": "local"}]}
                    ).encode(),
                )
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self):
            if self.path.rstrip("/") != "/v1/audio/transcriptions":
                self._error(404, f"no route {self.path}")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY:
                self._error(413 if length > MAX_BODY else 400, "request body missing or too large")
                return
            body = self.rfile.read(length)
            try:
                req = TranscriptionRequest.parse(self.headers.get("Content-Type", ""), body)
            except BadRequest as exc:
                self._error(400, str(exc))
                return
            try:
                result = service.transcribe(req.audio, req.language, req.prompt, words=req.words)
            except Exception as exc:  # model failure: a 500 with the cause, the server stays up
                self._error(500, f"{exc.__class__.__name__}: {exc}")
                return
            fmt = req.response_format
            if fmt == "text":
                self._send(200, result["text"].encode(), "text/plain; charset=utf-8")
            elif fmt == "json":
                self._send(200, json.dumps({"text": result["text"]}, ensure_ascii=False).encode())
            else:
                self._send(200, json.dumps(result, ensure_ascii=False).encode())

    return Handler


def serve(
    model_dir: str | None = None, host: str = "127.0.0.1", port: int = 0, device: str = "cpu"
) -> ThreadingHTTPServer:
    """A started server (call .serve_forever() or run it in a thread); port 0 picks a free one."""
    service = WhisperService(model_dir, device, "int8" if device == "cpu" else "float16")
    server = ThreadingHTTPServer((host, port), make_handler(service))
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="OpenAI-compatible /v1/audio/transcriptions for a faster-whisper model")
    ap.add_argument("--model", help="faster-whisper model folder (default: the shipped Whisper base)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8100)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    server = serve(args.model, args.host, args.port, args.device)
    print(f"listening on http://{args.host}:{server.server_port}/v1", flush=True, file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
