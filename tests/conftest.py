"""Shared pytest fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def llama_server():
    """One real llama.cpp OpenAI-compatible server (SmolLM2-135M) for the whole test session.

    ``llama_server.url`` is the OpenAI base URL (.../v1), ``llama_server.base_url`` the root.
    SmolLM2 is tiny: use it to test plumbing, schemas and fault handling, not label quality.
    """
    pytest.importorskip("xllamacpp")
    from speechannotator.servers.llamacpp import LlamaServer, ServerError, smollm2_gguf

    try:
        gguf = smollm2_gguf()
    except ServerError as exc:
        pytest.skip(str(exc))
    server = LlamaServer(gguf, n_ctx=4096)
    server.start()
    yield server
    server.stop()
