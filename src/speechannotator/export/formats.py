"""The export formats, by name (one module of speechannotator.export each)."""

EXPORT_FORMATS: tuple[str, ...] = ("clips", "jsonl", "lhotse", "hf", "rttm", "seglst", "srt", "vtt", "labelstudio")
