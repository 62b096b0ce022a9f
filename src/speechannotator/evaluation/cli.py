"""Click commands of SA-Eval: ``eval timeline``, ``eval attributes`` and ``bench run``.

The main CLI registers ``eval_group`` and ``bench_group``; ``python -m
speechannotator.evaluation.cli`` runs them standalone.
"""

from __future__ import annotations

import json
import logging
import math
import sys
from pathlib import Path

import click

from .io import EvalInputError
from .tokenize import UnitChoice


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _fail(exc: Exception) -> None:
    raise click.ClickException(str(exc)) from exc


def _finite_collar(ctx: click.Context, param: click.Parameter, value: float) -> float:
    if not math.isfinite(value) or value < 0:
        raise click.BadParameter(f"must be a finite number of seconds >= 0, got {value}")
    return value


def _input_option(flag: str, help: str):
    """--ref / --hyp: an existing file or folder."""
    return click.option(flag, flag.lstrip("-"), required=True, type=click.Path(exists=True, path_type=Path), help=help)


_json_option = click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON (percent).")
_encoder_option = click.option(
    "--encoder",
    "encoder_spec",
    default="use",
    show_default=True,
    help="Open-Eval encoder: use | gguf[:PATH] | transformers:PATH | openai:URL@MODEL.",
)
_collar_option = click.option(
    "--collar", default=5.0, show_default=True, type=float, callback=_finite_collar, help="tcpCER collar in seconds."
)


@click.group("eval")
def eval_group() -> None:
    """SA-Eval: score timelines and attributes against references."""


@eval_group.command("timeline")
@_input_option("--ref", "Reference file or folder (output-format JSON, SegLST, RTTM or STM).")
@_input_option("--hyp", "Hypothesis file or folder; recordings are matched by name.")
@_collar_option
@click.option(
    "--unit",
    type=click.Choice(["auto", "char", "word"]),
    default="auto",
    show_default=True,
    help="auto: characters when the reference holds CJK text, words otherwise.",
)
@click.option(
    "--engine",
    type=click.Choice(["fast", "meeteval"]),
    default="fast",
    show_default=True,
    help="fast: rapidfuzz Levenshtein for CER/cpCER (same counts), meeteval for tcpCER.",
)
@_json_option
def timeline_cmd(ref: Path, hyp: Path, collar: float, unit: UnitChoice, engine: str, as_json: bool) -> None:
    """CER, cpCER and tcpCER (or WER variants) per recording and pooled."""
    from .timeline import score_timeline

    try:
        scores = score_timeline(ref, hyp, collar=collar, unit=unit, engine=engine)
    except (EvalInputError, ValueError) as exc:
        _fail(exc)
    if as_json:
        click.echo(json.dumps(scores.to_dict(), ensure_ascii=False, indent=2))
        return
    names = [n.upper() for n in scores.names]
    click.echo(f"{'recording':<30} " + " ".join(f"{n:>8}" for n in names))
    for name, rec in scores.per_recording.items():
        click.echo(f"{name:<30} " + " ".join(f"{_fmt(v):>8}" for v in scores.rates(rec).values()))
    click.echo(f"{'pooled':<30} " + " ".join(f"{_fmt(v):>8}" for v in scores.rates().values()))
    click.echo(f"unit={scores.unit} collar={scores.collar:g}s recordings={len(scores.per_recording)}")


@eval_group.command("attributes")
@_input_option("--ref", "Reference output-format JSON file or folder.")
@_input_option("--hyp", "Hypothesis output-format JSON file or folder; recordings matched by name.")
@_encoder_option
@_json_option
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


@click.group("bench")
def bench_group() -> None:
    """SA-Bench: annotate a bench several times and write the paper's tables."""


@bench_group.command("run")
@click.argument("bench_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--runs", default=5, show_default=True, type=click.IntRange(1), help="Runs per setting.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Results folder (default: bench_results/<bench name>). Finished outputs there are reused.",
)
@click.option("--no-review", is_flag=True, help="Add the w/o Loop ablation (Table 3).")
@click.option("--no-context", is_flag=True, help="Add the w/o Context ablation (Table 3).")
@click.option("--no-priors", is_flag=True, help="Add the w/o Priors ablation (Table 3).")
@click.option("--fixed-timeline", is_flag=True, help="Only the fixed-timeline setting (skip Table 1).")
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Pipeline config TOML.",
)
@_encoder_option
@_collar_option
@click.option("--baseline-url", default=None, help="Score an OpenAI-compatible audio model instead of the pipeline.")
@click.option("--baseline-model", default=None, help="Model name at --baseline-url.")
@click.option("--baseline-no-audio", is_flag=True, help="Send the baseline text only (no audio part).")
def bench_run_cmd(
    bench_dir: Path,
    runs: int,
    out_dir: Path | None,
    no_review: bool,
    no_context: bool,
    no_priors: bool,
    fixed_timeline: bool,
    config_path: Path | None,
    encoder_spec: str,
    collar: float,
    baseline_url: str | None,
    baseline_model: str | None,
    baseline_no_audio: bool,
) -> None:
    """Run BENCH_DIR (<case>.<audio> + <case>.json) and write Tables 1-3, CSV, JSON and a chart."""
    from .bench import BenchRunner, BenchSettings
    from .encoders import make_encoder

    ablations = tuple(
        k for k, on in (("no_review", no_review), ("no_context", no_context), ("no_priors", no_priors)) if on
    )
    annotate, name, extra = None, "SpeechAnnotator", {}
    if baseline_url or baseline_model:
        if not (baseline_url and baseline_model):
            raise click.UsageError("--baseline-url and --baseline-model go together")
        if ablations:
            raise click.UsageError("ablations apply to the pipeline, not to a baseline")
        from .baseline import BaselineAnnotator

        annotate = BaselineAnnotator(baseline_url, baseline_model, send_audio=not baseline_no_audio)
        name, fixed_timeline = baseline_model, True
        extra = {"baseline_url": baseline_url}
    try:
        config = None
        if config_path is not None:
            from ..config import load_config

            config = load_config(config_path)
        runner = BenchRunner(
            bench_dir,
            out_dir or Path("bench_results") / bench_dir.resolve().name,
            encoder=make_encoder(encoder_spec),
            config=config,
            annotate=annotate,
            settings=BenchSettings(
                runs=runs,
                ablations=ablations,
                fixed_timeline_only=fixed_timeline,
                collar=collar,
                system_name=name,
                extra=extra,
            ),
        )
        _, files = runner.run()
    except (EvalInputError, ValueError, FileNotFoundError, ImportError) as exc:
        _fail(exc)
    if annotate is not None and getattr(annotate, "logs", None):
        fallbacks = sum(bool(r.audio_fallback) for r in annotate.logs)
        click.echo(
            f"baseline requests: {len(annotate.logs)}; text-only fallbacks: {fallbacks}; "
            f"failed: {sum(bool(r.error) for r in annotate.logs)}"
        )
    click.echo(files["markdown"].read_text(encoding="utf-8"))
    for kind, p in files.items():
        click.echo(f"{kind}: {p}")


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s", stream=sys.stderr)
    click.Group(commands={"eval": eval_group, "bench": bench_group})()


if __name__ == "__main__":
    main()
