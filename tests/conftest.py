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
    # One thread: on shared, oversubscribed cores llama.cpp's OpenMP workers spin-wait on each
    # other; measured 38 tok/s with 1 thread vs 2.7 tok/s with 2 under load 5 on 2 cores.
    server = LlamaServer(gguf, n_ctx=4096, n_threads=1)
    server.start()
    yield server
    server.stop()
