"""speechannotator report OUT: OUT/report.html, with every chart inline (no CDN, no script).

What a dataset builder asks of a corpus before training: how many hours per voice, language and
channel; how the annotated voices spread (gender, age, pitch, speed, emotion, background); the
quality distributions; and how much each curation preset (export --preset) would keep.
"""

from __future__ import annotations

from collections import defaultdict
from html import escape
from pathlib import Path
from typing import Any

from ..atomic import write_text_atomic
from ..export.corpus_view import ExportFilter, corpus_view
from ..export.where import PRESETS
from . import svg

REPORT_FILE = "report.html"
TOP = 15  # bars per categorical chart; the rest are summed as "other"
CATEGORIES = (  # (field of the record, title)
    ("gender", "gender"),
    ("age", "age"),
    ("emotion", "emotion"),
    ("background_sound", "background sound"),
)
HISTOGRAMS = (  # (column, unit, title)
    ("pitch_hz", "Hz", "pitch (median F0)"),
    ("words_per_s", "words/s", "speed (words per second)"),
    ("duration", "s", "segment duration"),
    ("snr_db", "dB", "SNR"),
    ("mos", "MOS", "Distill-MOS"),
    ("dnsmos_ovrl", "MOS", "DNSMOS overall"),
    ("asr_word_logprob", "ln p", "ASR word log-probability"),
)

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1180px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
.grid { display: flex; flex-wrap: wrap; gap: 18px; }
.card { border: 1px solid #e2e2e2; border-radius: 6px; padding: 8px 12px; }
.card h3 { font-size: 14px; margin: 4px 0 6px; }
.lbl, .val { font-size: 11px; fill: #333; }
table { border-collapse: collapse; } td, th { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: right; }
td:first-child, th:first-child, td:last-child, th:last-child { text-align: left; }
.empty { color: #888; font-style: italic; }
"""


def _head(value: Any) -> str:
    """The label a free-text value leads with: 'neutral (moderate)' -> 'neutral'."""
    text = str(value or "").strip()
    for sep in (" (", ",", ";", "，", "（"):
        text = text.split(sep)[0]
    return text.strip() or "(empty)"


def _top(hours: dict[str, float]) -> list[tuple[str, float]]:
    items = sorted(hours.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(items) > TOP:
        items = items[: TOP - 1] + [("other", sum(v for _, v in items[TOP - 1 :]))]
    return [(k, round(v, 4)) for k, v in items]


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _card(title: str, body: str) -> str:
    return f'<div class="card"><h3>{escape(title)}</h3>{body}</div>'


def build_report(out_dir: str | Path) -> str:
    """The report page of an annotation folder, as HTML text."""
    view = corpus_view(out_dir)
    rows = [(seg, seg.columns) for rec in view for seg in rec.segments]
    voice_h: dict[str, float] = defaultdict(float)
    lang_h: dict[str, float] = defaultdict(float)
    channel_h: dict[str, float] = defaultdict(float)
    cat_h: dict[str, dict[str, float]] = {f: defaultdict(float) for f, _ in CATEGORIES}
    for seg, cols in rows:
        h = seg.duration / 3600
        voice_h[str(cols.get("corpus_speaker_id") or seg.speaker)] += h
        lang_h[str(cols.get("language") or "(none)")] += h
        channel_h[str(cols.get("channel") or "unknown")] += h
        for f, _ in CATEGORIES:
            cat_h[f][_head(seg.record.get(f))] += h
    total_h = sum(seg.duration for seg, _ in rows) / 3600
    recordings_h = sum(r.duration for r in view) / 3600

    preset_rows = []
    for name, (expr, doc) in PRESETS.items():
        kept = corpus_view(out_dir, ExportFilter(preset=name))
        n = sum(len(r.segments) for r in kept)
        hours = sum(s.duration for r in kept for s in r.segments) / 3600
        share = hours / total_h if total_h else 0.0
        preset_rows.append((name, doc, expr, n, hours, share))

    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>Corpus report: {escape(Path(out_dir).resolve().name)}</title><style>{STYLE}</style></head><body>",
        f"<h1>Corpus report: {escape(str(Path(out_dir).resolve().name))}</h1>",
        f"<p id='totals'>{len(view)} recordings ({recordings_h:.3f} h of audio), {len(rows)} segments "
        f"({total_h:.3f} h of speech), {_n(len(voice_h), 'voice')}, {_n(len(lang_h), 'language')}.</p>",
        "<h2>Hours</h2><div class='grid'>",
        _card("per voice", svg.bars(_top(voice_h), "h", "hours per voice")),
        _card("per language", svg.bars(_top(lang_h), "h", "hours per language")),
        _card("per channel", svg.bars(_top(channel_h), "h", "hours per channel")),
        "</div><h2>Voices (hours per annotated value)</h2><div class='grid'>",
    ]
    parts += [_card(title, svg.bars(_top(cat_h[f]), "h", title)) for f, title in CATEGORIES]
    parts.append("</div><h2>Distributions (segments)</h2><div class='grid'>")
    for col, unit, title in HISTOGRAMS:
        values = [cols.get(col) for _, cols in rows]
        parts.append(_card(title, svg.histogram([v for v in values if v is not None], unit, title)))
    parts.append("</div><h2>Curation presets (export --preset)</h2>")
    parts.append(
        "<table id='presets'><tr><th>preset</th><th>keeps segments</th><th>hours</th><th>share</th><th>rule</th></tr>"
    )
    for name, doc, expr, n, hours, share in preset_rows:
        parts.append(
            f"<tr data-preset='{escape(name)}'><td>{escape(name)}</td><td>{n}</td><td>{hours:.3f}</td>"
            f"<td>{share:.0%}</td><td title='{escape(expr)}'>{escape(doc)}</td></tr>"
        )
    parts.append("</table>")
    parts.append(
        _card("hours kept per preset", svg.bars([(n, round(h, 4)) for n, _, _, _, h, _ in preset_rows], "h", "presets"))
    )
    issues: dict[str, float] = defaultdict(float)
    for seg, cols in rows:
        for reason in cols.get("tts_issues") or ():
            issues[reason] += seg.duration / 3600
    parts.append("<h2>TTS issues (hours of segments raising each)</h2>")
    parts.append(_card("tts_issues", svg.bars(_top(issues), "h", "tts issues")))
    parts.append("</body></html>\n")
    return "".join(parts)


def write_report(out_dir: str | Path) -> Path:
    """Write OUT/report.html (atomically) and return its path."""
    path = Path(out_dir) / REPORT_FILE
    write_text_atomic(path, build_report(out_dir))
    return path
