"""Run statistics: mean ± sample standard deviation over runs, as in the paper's tables."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class MeanStd:
    mean: float | None
    std: float | None
    n: int

    def fmt(self, digits: int = 2) -> str:
        if self.mean is None:
            return "n/a"
        if self.n < 2 or self.std is None:
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {self.std:.{digits}f}"

    def to_dict(self) -> dict:
        return {"mean": self.mean, "std": self.std, "n": self.n}


def mean_std(values: Iterable[float | None]) -> MeanStd:
    """Mean and sample std (n-1) of the defined values; std is 0 for a single run."""
    vals = [float(v) for v in values if v is not None]
    if not vals:
        return MeanStd(None, None, 0)
    m = sum(vals) / len(vals)
    sd = math.sqrt(sum((v - m) ** 2 for v in vals) / (len(vals) - 1)) if len(vals) > 1 else 0.0
    return MeanStd(m, sd, len(vals))
