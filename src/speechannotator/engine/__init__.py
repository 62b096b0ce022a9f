"""Engines that run the per-recording pipeline over a corpus: `local` (one process) and `ray` (Ray Data)."""

from .item_run import ItemResult, annotate_item
from .ray_engine import RayOptions
from .run import annotate_corpus
from .summary import CorpusSummary

__all__ = ["CorpusSummary", "ItemResult", "RayOptions", "annotate_corpus", "annotate_item"]
