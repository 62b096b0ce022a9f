"""The deterministic, evidence-grounded backend: the CPU default.

Labeling rules live in label.py / prosody.py and review checks in review.py; their thresholds
are the calibration table (speechannotator/calibration.py, ``Config.calibration``); composition
(agents/compose.py) and the surface forms (agents/phrases) are shared with finalize, which falls
back on the same composer.
"""

from __future__ import annotations

from ...calibration import DEFAULT, Calibration
from ...records import Prediction, Verdict
from ..backend import ComposeTask, LabelTask, ReviewTask
from ..compose import compose_task
from .label import label_task
from .review import review_task


class RulesBackend:
    """Backend protocol implementation without any model: label, review, compose."""

    name = "rules"
    wants_audio = False  # reasons over evidence and transcript; segment audio is not needed
    calibration: Calibration = DEFAULT

    def __init__(self, calibration: Calibration = DEFAULT) -> None:
        self.calibration = calibration

    def label(self, task: LabelTask) -> dict[str, Prediction]:
        return label_task(task, self.name, self.calibration)

    def review(self, task: ReviewTask) -> dict[str, Verdict]:
        return review_task(task, self.calibration)

    def compose(self, task: ComposeTask) -> dict[str, str]:
        return compose_task(task)
