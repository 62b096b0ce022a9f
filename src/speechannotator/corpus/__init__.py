"""Corpus input: every kind of input becomes CorpusItems with unique ids that name their outputs."""

from .item import CorpusItem, check_id, load_item_audio
from .manifest import read_manifest, write_manifest
from .sources import Corpus, attach_timelines, read_corpus

__all__ = [
    "Corpus",
    "CorpusItem",
    "attach_timelines",
    "check_id",
    "load_item_audio",
    "read_corpus",
    "read_manifest",
    "write_manifest",
]
