"""Per-speaker aggregates and recording-level population statistics of segment evidence.

Numeric evidence aggregates as a mean weighted by segment duration times reliability (a
speaker's statistics over all its segments, names.py); gender fuses the segments' log-odds;
categorical evidence takes the duration-weighted mode. The recording key additionally holds
population spreads (10th/90th percentiles) so labels can be relative to the population.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from speechannotator.records import RECORDING_KEY, Evidence, speaker_key
from speechannotator.schema import Gender

# Evidence that is a count or a decision per segment, not a level: no mean over segments.
_NO_MEAN = {"gender.p_male", "gender.label", "gender.p_model", "gender.p_pitch", "pitch.class", "rate.class"}


def _weighted(items: list[tuple[float, float]]) -> float:
    w = sum(wi for _, wi in items)
    return sum(v * wi for v, wi in items) / w if w > 0 else float(np.mean([v for v, _ in items]))


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def aggregate(
    key: str, evs: list[Evidence], durations: dict[str, float], template: dict[str, Evidence]
) -> list[Evidence]:
    """Aggregate the segment evidence ``evs`` (many segment keys) under ``key``."""
    num: dict[str, list[tuple[float, float]]] = defaultdict(list)
    cat: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    rel: dict[str, list[float]] = defaultdict(list)
    gender: list[tuple[float, float]] = []
    for e in evs:
        d = durations.get(e.key, 0.0)
        if e.name == "gender.p_male" and e.value is not None:
            gender.append((_logit(float(e.value)), d * max(e.reliability, 0.05)))
            continue
        if e.name in _NO_MEAN or e.value is None:
            continue
        if isinstance(e.value, (bool, str)):
            cat[e.name][str(e.value)] += d
        elif isinstance(e.value, (int, float)) and math.isfinite(float(e.value)):
            num[e.name].append((float(e.value), d * max(e.reliability, 0.05)))
        else:
            continue
        rel[e.name].append(e.reliability)
    out: list[Evidence] = []

    def mk(name: str, value, reliability: float) -> Evidence:
        t = template.get(name)
        return Evidence(
            key=key,
            name=name,
            value=value,
            unit=t.unit if t else "",
            extractor=(t.extractor if t else "priors") + "+aggregate",
            model=t.model if t else "",
            version=t.version if t else "",
            reliability=float(min(1.0, reliability)),
        )

    n_seg = len({e.key for e in evs})
    support = min(1.0, 0.5 + 0.1 * n_seg)  # more segments, steadier aggregate
    for name, items in num.items():
        out.append(mk(name, _weighted(items), float(np.mean(rel[name])) * support))
    for name, counts in cat.items():
        out.append(mk(name, max(counts.items(), key=lambda kv: kv[1])[0], float(np.mean(rel[name])) * support))
    if gender:
        z = sum(lo * w for lo, w in gender) / max(1e-9, sum(w for _, w in gender))
        # Log-odds average, then scaled by the evidence mass so many agreeing segments firm up.
        mass = min(3.0, 1.0 + 0.25 * (len(gender) - 1))
        p = 1.0 / (1.0 + math.exp(-z * mass))
        agree = float(np.mean([(lo > 0) == (z > 0) for lo, _ in gender]))
        out.append(mk("gender.p_male", p, abs(p - 0.5) * 2 * agree))
        out.append(mk("gender.label", Gender.of_p_male(p).value, abs(p - 0.5) * 2 * agree))
    return out


def speaker_aggregates(
    evs: list[Evidence], speakers: dict[str, str], durations: dict[str, float], template: dict[str, Evidence]
) -> list[Evidence]:
    by_spk: dict[str, list[Evidence]] = defaultdict(list)
    for e in evs:
        if e.key in speakers:
            by_spk[speakers[e.key]].append(e)
    out: list[Evidence] = []
    for spk, items in by_spk.items():
        out.extend(aggregate(speaker_key(spk), items, durations, template))
    return out


def population(
    evs: list[Evidence], speakers: dict[str, str], durations: dict[str, float], template: dict[str, Evidence]
) -> list[Evidence]:
    out = aggregate(RECORDING_KEY, evs, durations, template)
    out = [e for e in out if not e.name.startswith("gender.")]  # a recording has no gender
    spk = sorted(set(speakers.values()))
    out.append(Evidence(RECORDING_KEY, "population.speakers", len(spk), "count", "priors.aggregate", reliability=1.0))
    out.append(
        Evidence(
            RECORDING_KEY,
            "population.speech_s",
            float(sum(durations.values())),
            "s",
            "priors.aggregate",
            reliability=1.0,
        )
    )
    for name, short in (("pitch.median_hz", "pitch"), ("rate.units_per_s", "rate"), ("energy.rms_db", "energy")):
        vals = [float(e.value) for e in evs if e.name == name and isinstance(e.value, (int, float))]
        if len(vals) >= 3:
            p10, p50, p90 = np.percentile(vals, [10, 50, 90])
            t = template.get(name)
            for q, v in (("p10", p10), ("p50", p50), ("p90", p90)):
                out.append(
                    Evidence(
                        RECORDING_KEY,
                        f"population.{short}_{q}",
                        float(v),
                        t.unit if t else "",
                        "priors.aggregate",
                        reliability=min(1.0, len(vals) / 10),
                    )
                )
    return out
