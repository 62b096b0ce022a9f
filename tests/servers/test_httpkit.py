"""The recording proxy and the scripted server (stdlib HTTP on 127.0.0.1)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from speechannotator.servers.httpkit import AUDIO_NOTE, RecordingProxy, ScriptedServer, chat_reply, error_reply


def post(url: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


AUDIO_BODY = {
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                {"type": "text", "text": "hi"},
            ],
        }
    ]
}


def test_proxy_records_forwards_and_passes_errors_through():
    script = lambda b, i: (
        error_reply(500, "audio input is not supported") if "input_audio" in json.dumps(b) else chat_reply("ok")
    )  # noqa: E731
    with ScriptedServer(script) as upstream, RecordingProxy(upstream.base_url) as proxy:
        status, body = post(proxy.url + "/chat/completions", AUDIO_BODY)
        assert status == 500 and "audio" in body["error"]["message"]
        assert proxy.chat_requests() == [AUDIO_BODY] == upstream.chat_requests()


def test_proxy_can_strip_audio_before_forwarding():
    with (
        ScriptedServer(lambda b, i: chat_reply("ok")) as upstream,
        RecordingProxy(upstream.url, strip_audio=True) as proxy,
    ):
        status, body = post(proxy.url + "/chat/completions", AUDIO_BODY)
        assert status == 200 and body["choices"][0]["message"]["content"] == "ok"
        assert proxy.chat_requests() == [AUDIO_BODY]  # recorded as sent
        forwarded = upstream.chat_requests()[0]["messages"][0]["content"]
        assert forwarded[0] == {"type": "text", "text": AUDIO_NOTE} and forwarded[1]["text"] == "hi"


def test_proxy_reports_an_unreachable_upstream_as_502():
    with ScriptedServer(lambda b, i: chat_reply("ok")) as dead:
        url = dead.base_url
    with RecordingProxy(url) as proxy:
        status, body = post(proxy.url + "/chat/completions", {"messages": []})
    assert status == 502 and "unreachable" in body["error"]["message"]


def test_scripted_server_counts_requests():
    with ScriptedServer(lambda b, i: chat_reply(f"answer {i}")) as srv:
        answers = [
            post(srv.url + "/chat/completions", {"n": n})[1]["choices"][0]["message"]["content"] for n in range(3)
        ]
    assert answers == ["answer 0", "answer 1", "answer 2"]
    assert [r["n"] for r in srv.chat_requests()] == [0, 1, 2]
