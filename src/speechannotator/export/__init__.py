"""Training-ready exports of an annotated corpus: pure functions of OUT/*.json, OUT/state.sqlite, OUT/corpus.jsonl."""

from .api import export_corpus
from .corpus_view import ExportFilter, corpus_view
from .formats import EXPORT_FORMATS

__all__ = ["EXPORT_FORMATS", "ExportFilter", "corpus_view", "export_corpus"]
