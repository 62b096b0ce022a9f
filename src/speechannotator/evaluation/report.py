"""Bench tables (Markdown, CSV, JSON) and a bar chart, from per-run scores.

Table 1: timeline metrics per system. Table 2: attribute scores per field, category and
average per system. Table 3: the same for the full system and its ablations.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..schema import FIELD_GROUPS, FIELDS, GROUP_NAMES, Group
from .stats import MeanStd, mean_std


@dataclass
class VariantRuns:
    """Per-run figures of one system variant (percent)."""

    name: str
    timeline: list[dict[str, float | None]] = field(default_factory=list)  # per run: {"cer": ..}
    attributes: list[dict] = field(default_factory=list)  # per run: AttributeScores.to_dict()
    failures: list[str] = field(default_factory=list)

    def timeline_stats(self) -> dict[str, MeanStd]:
        keys = list(self.timeline[0]) if self.timeline else []
        return {k: mean_std(r[k] for r in self.timeline) for k in keys}

    def field_stats(self) -> dict[str, MeanStd]:
        return {f: mean_std(r["fields"][f] for r in self.attributes) for f in FIELDS}

    def category_stats(self) -> dict[str, MeanStd]:
        return {g.value: mean_std(r["categories"][g.value] for r in self.attributes) for g in Group}

    def macro_stats(self) -> MeanStd:
        return mean_std(r["macro"] for r in self.attributes)


def _label(metric: str) -> str:
    return {"cer": "CER", "cpcer": "cpCER", "tcpcer": "tcpCER", "wer": "WER", "cpwer": "cpWER", "tcpwer": "tcpWER"}[
        metric
    ]


def table1_md(variants: list[VariantRuns]) -> str:
    rows = [v for v in variants if v.timeline]
    if not rows:
        return ""
    metrics = list(rows[0].timeline[0])
    out = ["| System | " + " | ".join(f"{_label(m)}↓" for m in metrics) + " |", "| --- |" + " --- |" * len(metrics)]
    for v in rows:
        st = v.timeline_stats()
        out.append(f"| {v.name} | " + " | ".join(st[m].fmt() for m in metrics) + " |")
    return "\n".join(out)


def attribute_table_md(variants: list[VariantRuns], first_col: str = "Field") -> str:
    rows = [v for v in variants if v.attributes]
    if not rows:
        return ""
    out = [
        f"| {first_col} | Category | " + " | ".join(v.name for v in rows) + " |",
        "| --- | --- |" + " --- |" * len(rows),
    ]
    stats = [(v.field_stats(), v.category_stats(), v.macro_stats()) for v in rows]
    for f in FIELDS:
        g = GROUP_NAMES[FIELD_GROUPS[f]]["en"]
        out.append(f"| {f} | {g} | " + " | ".join(s[0][f].fmt() for s in stats) + " |")
    for g in Group:
        out.append(
            f"| *{GROUP_NAMES[g]['en']}* | category mean | " + " | ".join(s[1][g.value].fmt() for s in stats) + " |"
        )
    out.append("| **Average** | macro (15 fields) | " + " | ".join(s[2].fmt() for s in stats) + " |")
    return "\n".join(out)


def write_csvs(
    out_dir: Path, table1: list[VariantRuns], table2: list[VariantRuns], table3: list[VariantRuns]
) -> list[Path]:
    written = []
    p = out_dir / "table1_timeline.csv"
    with p.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["system", "metric", "mean", "std", "runs"])
        for v in table1:
            for m, s in v.timeline_stats().items():
                w.writerow([v.name, m, s.mean, s.std, s.n])
    written.append(p)
    for name, variants in (("table2_attributes.csv", table2), ("table3_ablations.csv", table3)):
        if not variants:
            continue
        p = out_dir / name
        with p.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["system", "row", "kind", "mean", "std", "runs"])
            for v in variants:
                for f, s in v.field_stats().items():
                    w.writerow([v.name, f, "field", s.mean, s.std, s.n])
                for g, s in v.category_stats().items():
                    w.writerow([v.name, g, "category", s.mean, s.std, s.n])
                s = v.macro_stats()
                w.writerow([v.name, "average", "macro", s.mean, s.std, s.n])
        written.append(p)
    return written


def results_json(variants: list[VariantRuns], settings: dict) -> dict:
    return {
        "settings": settings,
        "variants": {
            v.name: {
                "timeline": {k: s.to_dict() for k, s in v.timeline_stats().items()},
                "fields": {k: s.to_dict() for k, s in v.field_stats().items()} if v.attributes else {},
                "categories": {k: s.to_dict() for k, s in v.category_stats().items()} if v.attributes else {},
                "macro": v.macro_stats().to_dict() if v.attributes else None,
                "runs": {"timeline": v.timeline, "attributes": v.attributes},
                "failures": v.failures,
            }
            for v in variants
        },
    }


def bar_chart(variants: list[VariantRuns], path: Path, title: str) -> Path | None:
    """Grouped bars of per-field means with std error bars, one colour per variant."""
    rows = [v for v in variants if v.attributes]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    labels = list(FIELDS) + ["average"]
    x = np.arange(len(labels))
    width = 0.8 / len(rows)
    fig, ax = plt.subplots(figsize=(max(8, len(labels) * 0.7), 4.5), dpi=110)
    for k, v in enumerate(rows):
        st = [*v.field_stats().values(), v.macro_stats()]
        means = [s.mean if s.mean is not None else 0.0 for s in st]
        errs = [s.std or 0.0 for s in st]
        ax.bar(x + (k - (len(rows) - 1) / 2) * width, means, width, yerr=errs, capsize=2, label=v.name)
    ax.set_xticks(x, labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("score (%)")
    ax.set_ylim(0, 100)
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def write_report(out_dir: Path, variants: list[VariantRuns], settings: dict, *, full_name: str) -> dict[str, Path]:
    """Write tables.md, the CSVs, results.json and chart.png; return what was written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    table1 = [v for v in variants if v.timeline]
    full = [v for v in variants if v.name == full_name and v.attributes]
    ablations = [v for v in variants if v.attributes] if len([v for v in variants if v.attributes]) > 1 else []
    runs = settings.get("runs")
    md = [
        f"# SA-Bench results ({settings.get('bench', '')})",
        "",
        f"Runs: {runs}; encoder: {settings.get('encoder')}; collar: {settings.get('collar')} s. "
        "Entries are mean ± sample std over runs, in percent.",
    ]
    if table1:
        md += ["", "## Table 1: speaker-aware timeline (lower is better)", "", table1_md(table1)]
    if full:
        md += ["", "## Table 2: attributes, fixed-timeline setting (higher is better)", "", attribute_table_md(full)]
    if ablations:
        md += ["", "## Table 3: ablations, fixed-timeline setting", "", attribute_table_md(ablations, "Field")]
    files = {"markdown": out_dir / "tables.md", "json": out_dir / "results.json"}
    files["markdown"].write_text("\n".join(md) + "\n", encoding="utf-8")
    files["json"].write_text(
        json.dumps(results_json(variants, settings), ensure_ascii=False, indent=2), encoding="utf-8"
    )
    for p in write_csvs(out_dir, table1, full, ablations):
        files[p.stem] = p
    chart = bar_chart(ablations or full, out_dir / "chart.png", "SA-Bench attribute scores (mean ± std)")
    if chart:
        files["chart"] = chart
    return files
