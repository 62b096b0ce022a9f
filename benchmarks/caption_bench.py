"""How the captions of annotated recordings read: repeats, texture words against gender, contradictions.

    speechannotator annotate benchmarks/sa_bench_mini/*.flac -o OUT
    python benchmarks/caption_bench.py OUT/*.json [--show N]

Per caption it counts (reading the output JSON only, through the package's public schema):

- a repeated run: the same three words said twice in one caption (Chinese: the same four
  characters, punctuation ignored), e.g. "falling clearly at the end ... slightly falling at the end";
- "deep" (低沉) texture or caption words for a voice whose reviewed gender is female;
- a caption that names the other gender than the record's (schema.genders_named).

Target (docs/agents-llm.md): at most 1 caption in 20 with a repeated run, none of the others.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from speechannotator.schema import Gender, canonical_closed, genders_named, has_cjk


def units(text: str) -> list[str]:
    """Words (Latin) or characters (CJK), lower case, without punctuation."""
    if has_cjk(text):
        return re.findall(r"[\u3400-\u9fff]", text)
    return re.findall(r"[a-z']+", text.lower())


def repeated_run(text: str) -> str | None:
    """The first run of three words (four CJK characters) that the text says twice, or None."""
    n = 4 if has_cjk(text) else 3
    u = units(text)
    seen: set[tuple[str, ...]] = set()
    for i in range(len(u) - n + 1):
        gram = tuple(u[i : i + n])
        if gram in seen:
            return ("" if n == 4 else " ").join(gram)
        seen.add(gram)
    return None


def problems(row: dict) -> list[str]:
    """What is wrong with one record's caption (empty: nothing this bench reads)."""
    caption, out = row.get("caption", ""), []
    run = repeated_run(caption)
    if run:
        out.append(f"repeats {run!r}")
    gender = canonical_closed("gender", row.get("gender"))
    if gender == "female" and any(w in f"{row.get('texture', '')} {caption}".lower() for w in ("deep", "低沉")):
        out.append("deep voice for a woman")
    named = genders_named(caption)
    if gender in tuple(Gender) and Gender(gender).other in named and gender not in named:
        out.append(f"names a {Gender(gender).other} voice")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outputs", nargs="+", type=Path, help="output JSON files (<stem>.json)")
    ap.add_argument("--show", type=int, default=5, help="captions with a problem to print")
    args = ap.parse_args(argv)
    loaded = [json.loads(p.read_text(encoding="utf-8")) for p in args.outputs]
    rows = [r for data in loaded if isinstance(data, list) for r in data]  # summary.json is not a record list
    found = [(r, problems(r)) for r in rows]
    bad = [(r, why) for r, why in found if why]
    kinds = {k: sum(any(w.startswith(k) for w in why) for _, why in found) for k in ("repeats", "deep", "names")}
    print(f"{len(rows)} captions; with a repeated run {kinds['repeats']}, deep for a woman {kinds['deep']}, "
          f"other gender named {kinds['names']}")  # fmt: skip
    for r, why in bad[: args.show]:
        print(f"- {'; '.join(why)}: {r['caption']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
