"""One OpenAI-compatible chat endpoint: request building, fault classification, capability fallback.

The one chat client of the project: the openai agent backend, the LLM transcript refiner and the
baseline runner all send their requests through ``ChatClient``.

``ChatClient.chat`` sends exactly one HTTP request and either returns the answer text or raises
a ``CallError`` that says whether a retry can help. Two refusals are capability negotiation,
not faults: a server that rejects ``response_format`` json_schema is downgraded to json_object
(schema in the prompt) and then to plain text; a server that rejects ``input_audio`` parts
raises ``AudioRejected`` so the caller drops audio for the rest of the run. The retry loop lives
in the backend, which knows which fields are still missing.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import threading
from dataclasses import dataclass, field, fields
from typing import Any, Literal
from urllib.parse import urlparse

from .config import EndpointConfig

log = logging.getLogger(__name__)

FormatMode = Literal["json_schema", "json_object", "text"]
_NEXT_MODE: dict[str, FormatMode] = {"json_schema": "json_object", "json_object": "text"}
LOCAL_DUMMY_KEY = "sk-local-no-key"

_AUDIO_REFUSAL = re.compile(r"audio|input_audio|modalit|multimodal|mmproj|content[ _-]?(part|type)", re.I)
_FORMAT_REFUSAL = re.compile(r"response_format|json_schema|json schema|schema|grammar|structured output", re.I)


@dataclass
class BackendStats:
    """Counters of one backend instance (thread-safe increments through ``add``)."""

    label_calls: int = 0  # logical calls: one per segment and round
    review_calls: int = 0
    compose_calls: int = 0
    requests: int = 0  # HTTP requests sent, retries and fallbacks included
    retries: int = 0  # extra attempts after a fault or an invalid answer
    failures: int = 0  # logical calls that ended with at least one field given up
    failed_fields: int = 0
    review_unavailable: int = 0  # fields accepted because their review call failed
    repairs: int = 0  # answers made valid by repair (fenced JSON, alias values, dropped citations)
    text_rejections: int = 0  # model-written captions refused (they contradicted a reviewed value)
    audio_requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # llama.cpp's own timings (its responses carry them): prompt tokens served from the prompt
    # cache, and milliseconds spent reading prompts and writing answers.
    cached_tokens: int = 0
    prompt_ms: int = 0
    predicted_ms: int = 0
    audio_fallback: str = ""  # why audio was turned off for the run ("" while it is on or unused)
    format_fallbacks: list[str] = field(default_factory=list)
    segments: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **deltas: int) -> None:
        with self._lock:
            for name, delta in deltas.items():
                setattr(self, name, getattr(self, name) + delta)

    def note_segment(self, key: str) -> None:
        with self._lock:
            self.segments.add(key)

    @property
    def llm_calls(self) -> int:
        return self.label_calls + self.review_calls + self.compose_calls

    def calls_per_segment(self) -> float:
        return self.llm_calls / len(self.segments) if self.segments else 0.0

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            d = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}
            d["format_fallbacks"] = list(self.format_fallbacks)
            d["segments"] = len(self.segments)
        d["llm_calls"] = self.llm_calls
        d["calls_per_segment"] = round(self.calls_per_segment(), 3)
        return d


class CallError(Exception):
    """A request that produced no usable answer text."""

    def __init__(self, kind: str, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.kind, self.retryable = kind, retryable


class AudioRejected(CallError):
    def __init__(self, message: str) -> None:
        super().__init__("audio_rejected", message, retryable=True)


class FormatRejected(CallError):
    def __init__(self, message: str) -> None:
        super().__init__("format_rejected", message, retryable=True)


def _is_local(host: str) -> bool:
    if host in {"localhost", "ip6-localhost"} or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_unspecified


def base_url(url: str) -> str:
    """Normalize an endpoint URL to the OpenAI base URL (adds /v1 when the path is empty)."""
    parsed = urlparse(url.strip())
    if parsed.scheme not in {"http", "https"} or not parsed.netloc:
        raise ValueError(f"endpoint url {url!r} is not an http(s) URL")
    path = parsed.path.rstrip("/")
    if path.endswith("/chat/completions"):
        path = path[: -len("/chat/completions")]
    return f"{parsed.scheme}://{parsed.netloc}{path or '/v1'}"


def resolve_api_key(endpoint: EndpointConfig, role: str) -> str:
    key = os.environ.get(endpoint.api_key_env, "").strip()
    if key:
        return key
    host = urlparse(endpoint.url or "").hostname or ""
    if _is_local(host):
        return LOCAL_DUMMY_KEY  # local servers (vLLM, llama.cpp, Ollama) ignore the key
    raise ValueError(
        f"{role} endpoint {endpoint.url} needs an API key: set the environment variable {endpoint.api_key_env}"
    )


def _error_text(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        msg = err.get("message") if isinstance(err, dict) else err
        if msg:
            return " ".join(str(msg).split())[:300]
    return " ".join(str(getattr(exc, "message", "") or exc).split())[:300]


class ChatClient:
    """Chat completions on one endpoint with JSON output; one request per ``chat`` call."""

    def __init__(
        self,
        endpoint: EndpointConfig,
        *,
        role: str,
        stats: BackendStats | None = None,
        max_tokens: int | None = None,
        client: Any = None,
    ) -> None:
        """``client`` replaces the ``openai.OpenAI`` instance (anything with ``chat.completions.create``)."""
        import openai

        if not endpoint.url:
            raise ValueError(f"{role} endpoint url is not set (config [{role}] url)")
        self.endpoint, self.role, self.max_tokens = endpoint, role, max_tokens
        self.stats = stats if stats is not None else BackendStats()
        self.url = base_url(endpoint.url)
        self._openai = openai
        self._client = (
            client
            if client is not None
            else openai.OpenAI(
                base_url=self.url,
                api_key=resolve_api_key(endpoint, role),
                timeout=endpoint.timeout_s,
                max_retries=0,  # retries are ours: counted, bounded, and aware of missing fields
            )
        )
        self.format_mode: FormatMode = "json_schema"
        self._model = endpoint.model
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._discover_model()
        return self._model

    def _discover_model(self) -> str:
        """The first served model id; servers with one model (llama.cpp, vLLM) need no name."""
        try:
            models = self._client.models.list()
            first = next(iter(models.data), None)
            if first is not None and getattr(first, "id", None):
                return str(first.id)
        except Exception as exc:  # a discovery fault is not fatal: the server may ignore the name
            log.warning("%s endpoint %s: cannot list models (%s)", self.role, self.url, exc)
        return "default"

    def _response_format(self, schema: dict[str, Any], name: str) -> dict[str, Any] | None:
        if self.format_mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
        if self.format_mode == "json_object":
            return {"type": "json_object"}
        return None

    def _downgrade_format(self, reason: str) -> None:
        with self._lock:
            nxt = _NEXT_MODE.get(self.format_mode)
            if nxt is None:
                return
            note = f"{self.role}: {self.format_mode} rejected ({reason}); using {nxt}"
            self.format_mode = nxt
        self.stats.format_fallbacks.append(note)
        log.warning(note)

    def chat(
        self,
        system: str | None,
        user_text: str,
        schema: dict[str, Any],
        *,
        schema_name: str,
        audio_wav_b64: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        cache_slot: int | None = None,
        sampling: dict[str, Any] | None = None,
    ) -> str:
        """One chat request; ``cache_slot`` pins it to a llama.cpp server slot (``id_slot``),
        whose cached prompt prefix it then reuses; ``sampling``: extra sampler settings of the
        server (llama.cpp's ``dry_multiplier`` ...); both only for servers that know the fields."""
        content: Any = user_text
        if audio_wav_b64 is not None:
            content = [
                {"type": "input_audio", "input_audio": {"data": audio_wav_b64, "format": "wav"}},
                {"type": "text", "text": user_text},
            ]
        messages = [{"role": "system", "content": system}] if system is not None else []
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [*messages, {"role": "user", "content": content}],
            "temperature": self.endpoint.temperature if temperature is None else temperature,
        }
        if max_tokens or self.max_tokens:
            kwargs["max_tokens"] = max_tokens or self.max_tokens
        extra: dict[str, Any] = dict(sampling or {})
        if cache_slot is not None:
            extra["id_slot"] = int(cache_slot)
        if extra:
            kwargs["extra_body"] = extra
        mode = self.format_mode
        rf = self._response_format(schema, schema_name)
        if rf is not None:
            kwargs["response_format"] = rf
        self.stats.add(requests=1, audio_requests=int(audio_wav_b64 is not None))
        oa = self._openai
        try:
            resp = self._client.chat.completions.create(**kwargs)
        except oa.APITimeoutError as exc:
            raise CallError("timeout", f"no answer within {self.endpoint.timeout_s:g} s", retryable=True) from exc
        except oa.APIConnectionError as exc:
            why = _error_text(exc.__cause__ or exc)
            raise CallError("connection", f"cannot reach {self.url} ({why})", retryable=True) from exc
        except oa.APIStatusError as exc:
            status, msg = exc.status_code, _error_text(exc)
            if audio_wav_b64 is not None and status in (400, 415, 422, 500, 501) and _AUDIO_REFUSAL.search(msg):
                raise AudioRejected(f"HTTP {status}: {msg}") from exc
            if mode != "text" and status in (400, 422, 500, 501) and _FORMAT_REFUSAL.search(msg):
                if self.format_mode == mode:
                    self._downgrade_format(f"HTTP {status}: {msg}")
                raise FormatRejected(f"HTTP {status}: {msg}") from exc
            retryable = status >= 500 or status in (408, 409, 429)
            raise CallError("http", f"HTTP {status}: {msg}", retryable=retryable) from exc
        except Exception as exc:  # an unparsable body or any client-side surprise is a bad answer
            why = f"{exc.__class__.__name__}: {_error_text(exc)}"
            raise CallError("invalid", f"unreadable response ({why})", retryable=True) from exc
        return self._answer_text(resp)

    def _answer_text(self, resp: Any) -> str:
        usage = getattr(resp, "usage", None)
        if usage is not None:
            self.stats.add(
                prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            )
        timings = getattr(resp, "timings", None)
        if timings is None:
            timings = (getattr(resp, "model_extra", None) or {}).get("timings")
        if isinstance(timings, dict):
            try:
                self.stats.add(
                    cached_tokens=int(timings.get("cache_n") or 0),
                    prompt_ms=round(float(timings.get("prompt_ms") or 0)),
                    predicted_ms=round(float(timings.get("predicted_ms") or 0)),
                )
            except (TypeError, ValueError):  # a server's own extension: never fatal
                pass
        choices = getattr(resp, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise CallError("invalid", f"response has no choices ({str(resp)[:80]!r})", retryable=True)
        message = getattr(choices[0], "message", None)
        text = getattr(message, "content", None)
        if not isinstance(text, str) or not text.strip():
            raise CallError("invalid", "answer is empty", retryable=True)
        if getattr(choices[0], "finish_reason", None) == "length":
            log.info("%s answer hit max_tokens; it may be truncated", self.role)
        return text
