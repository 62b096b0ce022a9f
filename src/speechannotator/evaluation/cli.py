"""Click commands of SA-Eval: ``eval timeline``, ``eval attributes`` and ``bench run``.

The main CLI registers ``eval_group`` and ``bench_group``; ``python -m
speechannotator.evaluation.cli`` runs them standalone.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import click

from .io import EvalInputError


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _fail(exc: Exception) -> None:
    raise click.ClickException(str(exc)) from exc


@click.group("eval")
def eval_group() -> None:
    """SA-Eval: score timelines and attributes against references."""


@eval_group.command("timeline")
@click.option("--ref", "ref", required=True, type=click.Path(exists=True, path_type=Path),
              help="Reference file or folder (output-format JSON, SegLST or STM).")
@click.option("--hyp", "hyp", required=True, type=click.Path(exists=True, path_type=Path),
              help="Hypothesis file or folder; recordings are matched by name.")
@click.option("--collar", default=5.0, show_default=True, type=float, help="tcpCER collar in seconds.")
@click.option("--unit", type=click.Choice(["auto", "char", "word"]), default="auto", show_default=True,
              help="auto: characters when the reference holds CJK text, words otherwise.")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON (percent).")
def timeline_cmd(ref: Path, hyp: Path, collar: float, unit: str, as_json: bool) -> None:
    """CER, cpCER and tcpCER (or WER variants) per recording and pooled."""
    from .timeline import score_timeline

    try:
        scores = score_timeline(ref, hyp, collar=collar, unit=unit)  # type: ignore[arg-type]
    except (EvalInputError, ValueError) as exc:
        _fail(exc)
    if as_json:
        click.echo(json.dumps(scores.to_dict(), ensure_ascii=False, indent=2))
        return
    names = [n.replace("cp", "cp").upper() for n in scores.names]
    click.echo(f"{'recording':<30} " + " ".join(f"{n:>8}" for n in names))
    for name, rec in scores.per_recording.items():
        click.echo(f"{name:<30} " + " ".join(f"{_fmt(v):>8}" for v in scores.rates(rec).values()))
    click.echo(f"{'pooled':<30} " + " ".join(f"{_fmt(v):>8}" for v in scores.rates().values()))
    click.echo(f"unit={scores.unit} collar={scores.collar:g}s recordings={len(scores.per_recording)}")


@eval_group.command("attributes")
@click.option("--ref", "ref", required=True, type=click.Path(exists=True, path_type=Path),
              help="Reference output-format JSON file or folder.")
@click.option("--hyp", "hyp", required=True, type=click.Path(exists=True, path_type=Path),
              help="Hypothesis output-format JSON file or folder; recordings matched by name.")
@click.option("--encoder", "encoder_spec", default="use", show_default=True,
              help="Open-Eval encoder: use | gguf[:PATH] | transformers:PATH | openai:URL@MODEL.")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON (percent).")
def attributes_cmd(ref: Path, hyp: Path, encoder_spec: str, as_json: bool) -> None:
    """Closed-Eval (gender, age) and Open-Eval (13 fields): fields, categories, macro."""
    from .attributes import score_attributes
    from .encoders import make_encoder
    from .io import load_records, pair_sessions

    try:
        refs, hyps = load_records(ref), load_records(hyp)
        pair_sessions(refs, hyps, ref_path=ref, hyp_path=hyp)
        encoder = make_encoder(encoder_spec)
        scores = score_attributes(refs, hyps, encoder)
    except (EvalInputError, ValueError, FileNotFoundError, ImportError) as exc:
        _fail(exc)
    if as_json:
        click.echo(json.dumps(scores.to_dict(), ensure_ascii=False, indent=2))
        return
    d = scores.to_dict()
    for f, v in d["fields"].items():
        c = d["counts"][f]
        click.echo(f"{f:<22} {_fmt(v):>7}   (n={c['scored']}, missing={c['missing']})")
    for g, v in d["categories"].items():
        click.echo(f"{g:<34} {_fmt(v):>7}")
    click.echo(f"{'macro':<22} {_fmt(d['macro']):>7}")
    click.echo(f"encoder: {scores.encoder}; segments: {scores.segments} ({scores.unmatched_segments} unmatched)")


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s", stream=sys.stderr)
    cli = click.Group(commands={"eval": eval_group})
    try:
        from .bench_cli import bench_group  # noqa: F401  (registered below when present)
    except ImportError:
        pass
    else:
        cli.add_command(bench_group)
    cli()


if __name__ == "__main__":
    main()
