"""The corpus report: OUT/report.html, one self-contained page of what a corpus holds."""

from .page import write_report

__all__ = ["write_report"]
