"""Per-field view of a task's evidence and context, honouring each field's contract.

A task carries the union of what its fields' contracts admit; the rules backend must not let
one field reason from evidence that only another field may use. ``FieldView`` filters by the
field's admissible names/prefixes and context scope, and reads values defensively (evidence is
untrusted: a string where a number belongs counts as missing).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from ...calibration import DEFAULT, Calibration
from ...records import Contract, Evidence
from ...schema import Gender


@dataclass
class FieldView:
    field: str
    contract: Contract | None
    evidence: dict[str, Evidence]
    context: dict[str, Any]
    cal: Calibration = DEFAULT  # the thresholds the rules compare this field's evidence with
    cited: list[str] = dataclasses.field(default_factory=list)

    @property
    def scope(self) -> list[str]:
        return list(self.contract.context_scope) if self.contract else ["segment"]

    def _allowed(self, name: str) -> bool:
        return self.contract is not None and self.contract.admits(name)

    def num(self, name: str, cite: bool = True) -> float | None:
        """A finite numeric evidence value, or None when absent, inadmissible or not a number."""
        ev = self.evidence.get(name)
        if ev is None or not self._allowed(name) or isinstance(ev.value, bool):
            return None
        try:
            v = float(ev.value)
        except (TypeError, ValueError):
            return None
        if not math.isfinite(v):
            return None
        if cite and name not in self.cited:
            self.cited.append(name)
        return v

    def text(self, name: str, cite: bool = True) -> str | None:
        ev = self.evidence.get(name)
        if ev is None or not self._allowed(name) or not isinstance(ev.value, str) or not ev.value.strip():
            return None
        if cite and name not in self.cited:
            self.cited.append(name)
        return ev.value.strip()

    def raw(self, name: str) -> Any:
        ev = self.evidence.get(name)
        if ev is None or not self._allowed(name):
            return None
        if name not in self.cited:
            self.cited.append(name)
        return ev.value

    def reliability(self, name: str) -> float:
        ev = self.evidence.get(name)
        try:
            return max(0.0, min(1.0, float(ev.reliability))) if ev is not None else 0.0
        except (TypeError, ValueError):
            return 0.0

    def ctx(self, scope: str, key: str) -> Any:
        """A context item when this field's scope admits it (scope names as in contracts)."""
        if scope not in self.scope:
            return None
        return self.context.get(key)


def speaker_gender(view_num, view_text) -> tuple[Gender | None, float]:
    """(gender or None, probability of that gender) from gender evidence."""
    p = view_num("gender.p_male")
    if p is not None:
        return Gender.with_probability(min(1.0, max(0.0, p)))
    label = view_text("gender.label")
    return (Gender(label), 0.7) if label in tuple(Gender) else (None, 0.0)


def resolve_gender(v: FieldView) -> tuple[Gender | None, float, str]:
    """(gender, probability, source): confident local evidence first, then the speaker's
    aggregate (when the field's scope admits history), then weak local evidence."""
    g, p = speaker_gender(v.num, v.text)
    sp = v.num("speaker.gender.p_male", cite=False)
    sg, sprob = (None, 0.0) if sp is None else Gender.with_probability(sp)
    if g is not None and p >= 0.75:
        return g, p, "local"
    if sg is not None and sprob >= 0.7:
        v.num("speaker.gender.p_male")  # cite it
        return sg, sprob, "speaker"
    if g is not None:
        return g, p, "local"
    return sg, sprob, "speaker" if sg else "none"
