"""Slots for the paper's heavier models, loaded from a local path when configured.

Each slot loads lazily, once; when the path is unset the slot is silent, and when the path
or the package is missing it logs one clear message and is skipped. None of these weights
ship in a package (docs/models.md), so on the CPU default they are all off.

* emotion2vec_plus (FunASR ``AutoModel``): ``emotion2vec_path`` = the model directory.
* sound events: PANNs CNN14 checkpoint (``.pth``, needs ``panns_inference``) or any ONNX
  AudioSet tagger (CED / BEATs exports) taking a 16 kHz waveform ``[1, n]`` and returning
  527 scores, with the AudioSet ``class_labels_indices.csv`` beside it or at
  ``sound_event_labels``.
* age/gender: audeering ``wav2vec2-large-robust-24-ft-age-gender`` directory (HF format,
  needs ``transformers``), or its ONNX export (``model.onnx`` in the directory).
"""

from __future__ import annotations

import csv
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)
SR = 16000
AGE_BANDS = ((13, "child"), (20, "teenager"), (40, "young adult"), (60, "middle-aged"), (200, "elderly"))
# AudioSet display names that map to paralinguistic / scene evidence.
EVENT_MAP = {
    "Laughter": "events.laughter",
    "Giggle": "events.laughter",
    "Chuckle, chortle": "events.laughter",
    "Breathing": "events.breath",
    "Gasp": "events.breath",
    "Sigh": "events.breath",
    "Music": "events.music",
    "Singing": "events.singing",
}


def age_band(years: float) -> str:
    for limit, name in AGE_BANDS:
        if years < limit:
            return name
    return "elderly"


class _Slot:
    name = "slot"

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._model: Any = None
        self._dead = path is None

    def _load(self) -> Any:
        raise NotImplementedError

    def model(self) -> Any:
        if self._dead:
            return None
        if self._model is None:
            if not os.path.exists(str(self.path)):
                log.warning("%s slot skipped: %s does not exist", self.name, self.path)
                self._dead = True
                return None
            try:
                self._model = self._load()
            except ImportError as exc:
                log.warning("%s slot skipped: package missing (%s)", self.name, exc)
                self._dead = True
            except Exception as exc:
                log.warning(
                    "%s slot skipped: cannot load %s (%s: %s)", self.name, self.path, exc.__class__.__name__, exc
                )
                self._dead = True
        return self._model


class Emotion2Vec(_Slot):
    name = "emotion2vec"

    def _load(self) -> Any:
        from funasr import AutoModel  # import-guarded: FunASR is optional

        return AutoModel(model=self.path, disable_update=True, device="cpu")

    def __call__(self, x: np.ndarray) -> tuple[str, dict[str, float]] | None:
        m = self.model()
        if m is None or len(x) < int(0.3 * SR):
            return None
        res = m.generate(np.asarray(x, np.float32), granularity="utterance", extract_embedding=False)
        labels, scores = res[0]["labels"], [float(s) for s in res[0]["scores"]]
        # Labels look like "生气/angry"; keep the English part.
        names = [str(lab).split("/")[-1] for lab in labels]
        best = int(np.argmax(scores))
        return names[best], dict(zip(names, scores))


class SoundEvents(_Slot):
    name = "sound events"

    def __init__(self, path: str | None, labels: str | None = None) -> None:
        super().__init__(path)
        self.labels_path = labels
        self.labels: list[str] = []
        self.kind = ""

    def _read_labels(self) -> list[str]:
        cand = [self.labels_path] if self.labels_path else []
        cand.append(str(Path(str(self.path)).with_name("class_labels_indices.csv")))
        for c in cand:
            if c and os.path.exists(c):
                with open(c, newline="", encoding="utf-8") as fh:
                    return [row["display_name"] for row in csv.DictReader(fh)]
        raise FileNotFoundError("AudioSet class_labels_indices.csv not found beside the model")

    def _load(self) -> Any:
        if str(self.path).endswith(".onnx"):
            import onnxruntime as ort

            self.kind, self.labels = "onnx", self._read_labels()
            return ort.InferenceSession(str(self.path), providers=["CPUExecutionProvider"])
        from panns_inference import AudioTagging, labels  # import-guarded

        self.kind, self.labels = "panns", list(labels)
        return AudioTagging(checkpoint_path=str(self.path), device="cpu")

    def __call__(self, x: np.ndarray) -> dict[str, float] | None:
        m = self.model()
        if m is None or len(x) < int(0.5 * SR):
            return None
        if self.kind == "panns":
            import soxr

            x32 = soxr.resample(np.asarray(x, np.float32), SR, 32000)  # CNN14 runs at 32 kHz
            clip, _ = m.inference(x32[None, :])
            scores = np.asarray(clip)[0]
        else:
            inp = m.get_inputs()[0].name
            scores = np.asarray(m.run(None, {inp: np.asarray(x, np.float32)[None, :]})[0]).reshape(-1)
            if scores.min() < 0 or scores.max() > 1:
                scores = 1 / (1 + np.exp(-scores))
        out: dict[str, float] = {}
        for label, score in zip(self.labels, scores):
            name = EVENT_MAP.get(label)
            if name:
                out[name] = max(out.get(name, 0.0), float(score))
        return out


class AgeGender(_Slot):
    name = "age-gender"

    def _load(self) -> Any:
        onnx = Path(str(self.path)) / "model.onnx"
        if onnx.exists():
            import onnxruntime as ort

            return ("onnx", ort.InferenceSession(str(onnx), providers=["CPUExecutionProvider"]))
        import torch
        from torch import nn
        from transformers import Wav2Vec2FeatureExtractor, Wav2Vec2Model, Wav2Vec2PreTrainedModel

        class Head(nn.Module):
            def __init__(self, config, n):
                super().__init__()
                self.dense = nn.Linear(config.hidden_size, config.hidden_size)
                self.dropout = nn.Dropout(config.final_dropout)
                self.out_proj = nn.Linear(config.hidden_size, n)

            def forward(self, h):
                return self.out_proj(self.dropout(torch.tanh(self.dense(self.dropout(h)))))

        class AgeGenderModel(Wav2Vec2PreTrainedModel):  # the model card's architecture
            def __init__(self, config):
                super().__init__(config)
                self.wav2vec2 = Wav2Vec2Model(config)
                self.age = Head(config, 1)
                self.gender = Head(config, 3)
                self.init_weights()

            def forward(self, x):
                h = self.wav2vec2(x)[0].mean(dim=1)
                return self.age(h), torch.softmax(self.gender(h), dim=1)

        fe = Wav2Vec2FeatureExtractor.from_pretrained(str(self.path))
        model = AgeGenderModel.from_pretrained(str(self.path)).eval()
        return ("hf", (fe, model))

    def __call__(self, x: np.ndarray) -> dict[str, Any] | None:
        m = self.model()
        if m is None or len(x) < int(0.5 * SR):
            return None
        kind, obj = m
        x = np.asarray(x, np.float32)
        if kind == "onnx":
            x = (x - x.mean()) / (x.std() + 1e-7)
            outs = obj.run(None, {obj.get_inputs()[0].name: x[None, :]})
            named = {o.name: v for o, v in zip(obj.get_outputs(), outs)}
            age = float(np.asarray(next(v for k, v in named.items() if "age" in k)).reshape(-1)[0])
            gender = np.asarray(next(v for k, v in named.items() if "gender" in k)).reshape(-1)
            if gender.min() < 0 or abs(gender.sum() - 1) > 1e-3:
                gender = np.exp(gender - gender.max()) / np.exp(gender - gender.max()).sum()
        else:
            import torch

            from ..torch_threads import plugin_threads, torch_threads

            fe, model = obj
            inp = fe(x, sampling_rate=SR, return_tensors="pt").input_values
            with torch.no_grad(), torch_threads(plugin_threads()):  # same digits after a resume
                a, g = model(inp)
            age, gender = float(a[0, 0]), g[0].numpy()
        years = 100.0 * age  # the model predicts age / 100
        female, male, child = (float(v) for v in gender[:3])
        return {
            "age.years": years,
            "age.band": "child" if child > max(female, male) else age_band(years),
            "gender.p_male_model2": male / max(1e-6, male + female),
        }


class Slots:
    """All configured slots of one extraction run."""

    def __init__(self, settings: Any) -> None:
        self.emotion = Emotion2Vec(settings.emotion2vec_path)
        self.events = SoundEvents(settings.sound_event_path, settings.sound_event_labels)
        self.age_gender = AgeGender(settings.age_gender_path)
