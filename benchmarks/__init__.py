"""Reproducible measurements over the public API: run as `python -m benchmarks.<name>` from the repository root."""
