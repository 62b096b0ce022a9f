"""Fault handling of the openai backend against real local HTTP servers.

ScriptedServer answers garbage, sleeps past the timeout, returns HTTP errors or refuses
json_schema; a real llama.cpp server is killed mid-run. Nothing may raise out of the backend,
retries must be bounded, and every outcome must be on record (failed predictions, verdicts
with "review unavailable", stats).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import pytest

from speechannotator.agents.backend import ComposeTask, LabelTask
from speechannotator.agents.compose import compose_task
from speechannotator.agents.openai.backend import OpenAIBackend, OpenAIOptions, field_choices
from speechannotator.config import EndpointConfig
from speechannotator.llm_client import LOCAL_DUMMY_KEY
from speechannotator.records import Evidence, Prediction, Segment
from speechannotator.schema import LABELED_FIELDS, AgeGroup, Gender
from speechannotator.servers.httpkit import Reply, ScriptedServer, chat_reply, error_reply
from speechannotator.servers.llamacpp import LlamaServer

OPTS = OpenAIOptions(max_value_chars=8, max_cited=1, max_compose_chars=40, retry_backoff_s=0.01)


def seg(key: str = "seg_00001") -> Segment:
    return Segment(key=key, start=0.0, end=2.0, speaker="A", text="hello there", language="en")


def task(fields: list[str], key: str = "seg_00001", lang: str = "en") -> LabelTask:
    ev = {"pitch.mean_hz": Evidence(key, "pitch.mean_hz", 210.0, "Hz")}
    return LabelTask(segment=seg(key), fields=fields, contracts={}, evidence=ev, context={}, label_language=lang)


def endpoint(url: str, **kw) -> EndpointConfig:
    return EndpointConfig(url=url, timeout_s=kw.pop("timeout_s", 5.0), max_retries=kw.pop("max_retries", 2), **kw)


def requested_fields(body: dict) -> list[str]:
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        return rf["json_schema"]["schema"]["required"]
    return []


def answer(fields: list[str], values: dict[str, str] | None = None) -> str:
    values = values or {}
    return json.dumps(
        {
            f: {
                # one of the field's typed choices where it has them (an enum in the schema)
                "value": values.get(f, "female" if f == "gender" else field_choices([f], "en").get(f, ["calm"])[0]),
                "confidence": 70,
                "evidence": ["pitch.mean_hz"],
            }
            for f in fields
        }
    )


def assert_all_failed(preds: dict[str, Prediction], fields: list[str], fragment: str) -> None:
    assert set(preds) == set(fields)
    for p in preds.values():
        assert p.status == "failed" and p.value is None and fragment in p.error, p.error


def test_garbage_body_fails_fields_after_bounded_retries():
    with ScriptedServer(lambda b, i: Reply(body="<html>definitely not json", content_type="text/plain")) as srv:
        backend = OpenAIBackend(endpoint(srv.url, max_retries=2), options=OPTS)
        preds = backend.label(task(["gender", "emotion"]))
        n = len(srv.chat_requests())
    assert_all_failed(preds, ["gender", "emotion"], "")
    assert n == 3 and backend.stats.retries == 2
    assert backend.stats.failures == 1 and backend.stats.failed_fields == 2


def test_invalid_json_content_is_retried_then_failed():
    with ScriptedServer(lambda b, i: chat_reply("Sure! The gender is female and she sounds calm {oops")) as srv:
        backend = OpenAIBackend(endpoint(srv.url, max_retries=1, temperature=0.0), options=OPTS)
        preds = backend.label(task(["gender", "emotion"]))
        bodies = srv.chat_requests()
    assert_all_failed(preds, ["gender", "emotion"], "invalid answer")
    assert len(bodies) == 2
    # temperature 0 would repeat the same bad answer: the re-ask raises it
    assert bodies[0]["temperature"] == 0.0 and bodies[1]["temperature"] >= OPTS.retry_temperature


def test_fenced_json_with_aliases_is_repaired():
    content = "Here you go:\n```json\n" + answer(["gender", "age"], {"gender": "Male voice", "age": "old"}) + "\n```"
    with ScriptedServer(lambda b, i: chat_reply(content)) as srv:
        backend = OpenAIBackend(endpoint(srv.url), options=OPTS)
        zh = backend.label(task(["gender", "age"], lang="zh"))
    assert (zh["gender"].value, zh["age"].value) == (Gender.MALE, AgeGroup.ELDERLY)  # read into typed values
    assert zh["gender"].status == "ok" and zh["gender"].confidence == pytest.approx(0.7)
    assert backend.stats.repairs == 2 and backend.stats.retries == 0


def test_only_missing_fields_are_asked_again():
    def script(body, i):
        fields = requested_fields(body)
        return chat_reply(answer(fields[:1]))  # answers one field per call

    with ScriptedServer(script) as srv:
        backend = OpenAIBackend(endpoint(srv.url, max_retries=3), options=OPTS)
        preds = backend.label(task(["gender", "emotion", "pitch"]))
        asked = [requested_fields(b) for b in srv.chat_requests()]
    assert asked == [["gender", "emotion", "pitch"], ["emotion", "pitch"], ["pitch"]]
    assert all(p.status == "ok" for p in preds.values())
    assert backend.stats.label_calls == 1 and backend.stats.retries == 2


def test_slow_server_times_out_without_waiting_for_it():
    with ScriptedServer(lambda b, i: Reply(delay_s=3.0, body={"choices": []})) as srv:
        backend = OpenAIBackend(endpoint(srv.url, timeout_s=0.4, max_retries=1), options=OPTS)
        t0 = time.monotonic()
        preds = backend.label(task(["gender"]))
        elapsed = time.monotonic() - t0
        n = len(srv.chat_requests())
    assert_all_failed(preds, ["gender"], "timeout")
    assert n == 2 and elapsed < 2.5


def test_http_500_retries_are_bounded_and_recover():
    with ScriptedServer(lambda b, i: error_reply(500, "internal error")) as srv:
        backend = OpenAIBackend(endpoint(srv.url, max_retries=2), options=OPTS)
        preds = backend.label(task(["gender"]))
        n = len(srv.chat_requests())
    assert_all_failed(preds, ["gender"], "HTTP 500")
    assert n == 3 and backend.stats.retries == 2

    flaky = lambda b, i: error_reply(503, "busy") if i == 0 else chat_reply(answer(requested_fields(b)))  # noqa: E731
    with ScriptedServer(flaky) as srv:
        backend = OpenAIBackend(endpoint(srv.url, max_retries=2), options=OPTS)
        preds = backend.label(task(["gender"]))
        assert len(srv.chat_requests()) == 2
    assert preds["gender"].status == "ok" and preds["gender"].value == "female"


def test_client_error_is_not_retried():
    with ScriptedServer(lambda b, i: error_reply(404, "model 'nope' not found")) as srv:
        backend = OpenAIBackend(endpoint(srv.url, model="nope", max_retries=3), options=OPTS)
        preds = backend.label(task(["gender"]))
        assert len(srv.chat_requests()) == 1
    assert_all_failed(preds, ["gender"], "HTTP 404")


def test_json_schema_refusal_falls_back_to_json_object_with_schema_in_prompt():
    def script(body, i):
        if body["response_format"]["type"] == "json_schema":
            return error_reply(400, "response_format type 'json_schema' is not supported")
        return chat_reply(answer(["gender", "emotion"]))

    with ScriptedServer(script) as srv:
        backend = OpenAIBackend(endpoint(srv.url, max_retries=0), options=OPTS)
        preds = backend.label(task(["gender", "emotion"]))
        backend.label(task(["gender", "emotion"], key="seg_00002"))
        bodies = srv.chat_requests()
    assert all(p.status == "ok" for p in preds.values())
    assert [b["response_format"]["type"] for b in bodies] == ["json_schema", "json_object", "json_object"]
    assert "must match this JSON schema" in bodies[1]["messages"][-1]["content"]
    assert len(backend.stats.format_fallbacks) == 1 and backend.stats.retries == 0


def test_a_failing_caption_call_falls_back_to_the_composer():
    with ScriptedServer(lambda b, i: error_reply(500, "down")) as srv:
        backend = OpenAIBackend(endpoint(srv.url, max_retries=1), options=replace(OPTS, llm_caption=True))
        compose = ComposeTask(
            segment=seg(), values={"gender": Gender.MALE}, evidence={}, context={}, label_language="en"
        )
        composed = backend.compose(compose)
    assert composed == compose_task(compose)  # the rules' composer, when the endpoint gives no caption
    assert backend.stats.failures == 1 and backend.stats.compose_calls == 1 and len(srv.chat_requests()) == 2


def test_server_killed_mid_run(llama_server):
    """A real llama.cpp server dies during a 13-field request and stays down for the next segment."""
    server = LlamaServer(llama_server.gguf_path, n_ctx=2048, n_threads=1).start()
    try:
        backend = OpenAIBackend(endpoint(server.url, timeout_s=120.0, max_retries=1), options=OPTS)
        outcome: dict = {}

        def run() -> None:
            outcome["preds"] = backend.label(task(list(LABELED_FIELDS)))
            outcome["done"] = time.monotonic()

        worker = threading.Thread(target=run)
        worker.start()
        time.sleep(0.8)  # the request is in flight: 13 fields take seconds to generate
        killed = time.monotonic()
        server.kill()
        worker.join(60)
        assert not worker.is_alive()
        assert outcome["done"] > killed
        assert_all_failed(outcome["preds"], list(LABELED_FIELDS), "connection")
        later = backend.label(task(["gender"], key="seg_00002"))
        assert_all_failed(later, ["gender"], "connection")
        assert backend.stats.label_calls == 2 and backend.stats.failed_fields == len(LABELED_FIELDS) + 1
    finally:
        server.stop()


def test_api_key_from_environment(monkeypatch):
    with ScriptedServer(lambda b, i: chat_reply(answer(["gender"]))) as srv:
        monkeypatch.delenv("SA_TEST_KEY", raising=False)
        OpenAIBackend(endpoint(srv.url, api_key_env="SA_TEST_KEY"), options=OPTS).label(task(["gender"]))
        monkeypatch.setenv("SA_TEST_KEY", "sk-test-123")
        OpenAIBackend(endpoint(srv.url, api_key_env="SA_TEST_KEY"), options=OPTS).label(task(["gender"]))
        auth = [r.headers.get("authorization") for r in srv.records if r.method == "POST"]
    assert auth == [f"Bearer {LOCAL_DUMMY_KEY}", "Bearer sk-test-123"]
    monkeypatch.delenv("SA_TEST_KEY")
    with pytest.raises(ValueError, match="SA_TEST_KEY"):
        OpenAIBackend(EndpointConfig(url="https://api.example.com/v1", api_key_env="SA_TEST_KEY"))
    with pytest.raises(ValueError, match="url is not set"):
        OpenAIBackend(EndpointConfig())
