"""The command line: a thin layer over the Python API."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from . import __version__
from .assets import AssetError
from .config import Config, load_config
from .corpus.voices_cli import voices_group
from .evaluation.cli import bench_group, eval_group
from .export.formats import EXPORT_FORMATS
from .export.where import PRESETS
from .output.explain import explain_command as explain
from .terminal import echo, printable, warning
from .terminal import error as _fail
from .viewer.cli import import_group, view

INTERRUPTED = 130  # the shell's code for a command ended by SIGINT (128 + 2)


class _Main(click.Group):
    """Every subcommand: Ctrl-C ends with one line and exit status 130 (a rerun resumes), and
    error messages, which may quote file names and file contents, are printed without
    terminal control sequences."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            echo("speechannotator: interrupted; rerun the same command to resume", err=True)
            raise click.exceptions.Exit(INTERRUPTED) from None
        except click.UsageError as exc:  # click prints the usage line; exit status 2
            # click types `message` Final; it is set once in __init__ and read by show(), so
            # rewriting it is how the printed line loses control sequences.
            exc.message = printable(exc.message)  # type: ignore[misc]
            raise
        except click.ClickException as exc:  # the one-line error format of every command
            echo(f"speechannotator: error: {exc.message}", err=True)
            raise click.exceptions.Exit(exc.exit_code) from None


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="speechannotator")
@click.option("-v", "--verbose", is_flag=True, help="Debug logging (tracebacks of failures).")
def main(verbose: bool) -> None:
    """Annotate long speech recordings for controllable speech generation, and evaluate annotations."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )


# `annotate`'s settings flags: click parameter -> (the Config field it sets, fields it implies).
# A flag left out (None) keeps the value of the preset / --config file.
CONFIG_FLAGS: dict[str, tuple[str, dict[str, Any]]] = {
    "preset": ("preset", {}),
    "labels": ("labels", {}),
    "num_speakers": ("diarization.num_speakers", {}),
    "min_speakers": ("diarization.min_speakers", {}),
    "max_speakers": ("diarization.max_speakers", {}),
    "pyannote_path": ("diarization.pyannote_path", {"diarization.backend": "pyannote"}),
    "asr_model": ("asr.model", {}),
    "asr_url": ("asr.url", {"asr.backend": "openai"}),
    "asr_api_model": ("asr.api_model", {}),
    "device": ("asr.device", {}),
    "refine": ("asr.refine", {}),
    "llm_url": ("labeler.url", {"agents.backend": "openai"}),
    "llm_model": ("labeler.model", {"agents.backend": "openai"}),
    "review_rounds": ("agents.review_rounds", {}),
    "review": ("agents.review", {}),
    "context": ("agents.context", {}),
    "priors": ("agents.priors", {}),
    "llm": ("agents.backend", {}),  # its value also names the local model: see FLAG_VALUES
}


def llm_choice(value: str) -> dict[str, Any]:
    """``--llm rules|local[:0.5b|:1.5b]`` as the config fields it sets."""
    kind, _, size = value.partition(":")
    if kind not in ("rules", "local") or (kind == "rules" and size) or (size and size not in ("0.5b", "1.5b")):
        raise ValueError(f"{value!r}: expected rules, local, local:0.5b or local:1.5b")
    return {"agents.backend": kind, **({"local_llm.model": size or "auto"} if kind == "local" else {})}


# Flags whose one value sets several fields: name -> function of the value giving {field: value}.
FLAG_VALUES: dict[str, Callable[[Any], dict[str, Any]]] = {"llm": llm_choice}


def config_overrides(flags: dict[str, Any]) -> dict[str, Any]:
    """The nested override dict ``load_config`` takes, from the given flags and CONFIG_FLAGS."""
    over: dict[str, Any] = {}
    for name, value in flags.items():
        if value is None:
            continue
        field, implied = CONFIG_FLAGS[name]
        values = FLAG_VALUES[name](value) if name in FLAG_VALUES else {field: value}
        for path, v in {**implied, **values}.items():
            *sections, leaf = path.split(".")
            node = over
            for section in sections:
                node = node.setdefault(section, {})
            node[leaf] = v
    return over


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder: <stem>.json per recording and state.sqlite.",
)
@click.option(
    "--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="TOML settings file."
)
@click.option("--preset", type=click.Choice(["cpu", "gpu"]), help="Settings preset (default cpu).")
@click.option("--labels", type=click.Choice(["auto", "zh", "en"]), help="Label language (default: from the speech).")
@click.option(
    "--timeline",
    type=click.Path(exists=True, path_type=Path),
    help="Reference timeline (output JSON, SegLST, RTTM or STM; a folder holds <stem>.<ext> per input): "
    "replaces diarization and ASR.",
)
@click.option("--num-speakers", type=int, help="Exact number of speakers.")
@click.option("--min-speakers", type=int, help="Lower bound on the number of speakers.")
@click.option("--max-speakers", type=int, help="Upper bound on the number of speakers.")
@click.option("--asr-model", help="A faster-whisper model folder (e.g. large-v3).")
@click.option(
    "--asr-url", help="OpenAI-compatible /v1/audio/transcriptions endpoint for ASR (e.g. vLLM serving Qwen3-ASR)."
)
@click.option("--asr-api-model", help="Model name at --asr-url.")
@click.option(
    "--pyannote",
    "pyannote_path",
    type=click.Path(),
    help="A local pyannote diarization pipeline folder (replaces the embedded diarizer).",
)
@click.option(
    "--refine",
    type=click.Choice(["normalize", "llm"]),
    help="Transcript refinement: deterministic (default) or by the [refiner] LLM endpoint.",
)
@click.option("--device", help="ASR device: cpu or cuda.")
@click.option(
    "--llm",
    "llm",
    metavar="rules|local[:0.5b|:1.5b]",
    help="How the agents think: rules (default), or a shipped Qwen2.5 model on the project's own "
    "llama.cpp server (local: the best installed).",
)
@click.option("--llm-url", help="OpenAI-compatible endpoint for the agents (selects the openai backend).")
@click.option("--llm-model", help="Model name at --llm-url.")
@click.option("--review-rounds", type=int, help="Bound on review rounds (default 2).")
@click.option(
    "--no-review", "review", flag_value=False, default=None, help="Ablation: no Review Agent and no relabeling."
)
@click.option(
    "--no-context",
    "context",
    flag_value=False,
    default=None,
    help="Ablation: the planner sees no history, neighbours or summary.",
)
@click.option("--no-priors", "priors", flag_value=False, default=None, help="Ablation: no prior evidence extractors.")
@click.option("--print/--no-print", "show", default=True, help="Print a readable table of the results.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@click.option("-v", "--verbose", is_flag=True, help="Log every stage of every recording (and tracebacks of failures).")
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Run recordings in this process, or on Ray Data (a local runtime, or --ray-address).",
)
@click.option("--ray-address", help="Join an existing Ray cluster (host:port or 'auto') instead of starting one.")
@click.option("--workers", type=int, help="Ray engine: actors in the pool (default: one per CPU of the cluster).")
@click.option(
    "--export",
    "export",
    multiple=True,
    type=click.Choice(EXPORT_FORMATS),
    help="Also export the corpus to OUT/exports/FORMAT (repeatable).",
)
@click.option(
    "--speakers",
    "enroll",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Folder of named example clips (NAME.wav or NAME/*.wav): those voices get NAME as corpus_speaker_id.",
)
def annotate(
    paths, out_dir, config_path, timeline, show, quiet, verbose, engine, ray_address, workers, export, enroll, **flags
):
    """Annotate a corpus (files, folders, JSONL/CSV/Lhotse manifests, datasets folders) into OUT/<id>.json."""
    if verbose:  # the same as `speechannotator -v annotate`
        logging.getLogger().setLevel(logging.DEBUG)
    from .output.files import OutputError

    config = _annotate_config(config_path, flags)

    from .engine import RayOptions, annotate_corpus

    if config.agents.backend == "local":
        _announce_local_llm(config)
    report = _result_reporter(out_dir, show)
    ray_opts = RayOptions(address=ray_address, workers=workers)
    try:
        summary = annotate_corpus(
            list(paths),
            out_dir,
            config,
            engine=engine,
            timeline=timeline,
            ray_options=ray_opts,
            progress=not quiet,
            on_result=report,
            enroll=enroll,
        )
    except AssetError as exc:
        _fail("--llm", str(exc))
        sys.exit(2)
    except OutputError as exc:
        _fail(out_dir, str(exc))
        sys.exit(2)
    except (ConnectionError, RuntimeError, OSError) as exc:  # the engine itself (Ray unreachable, OUT unwritable)
        logging.getLogger("speechannotator").debug("corpus run failed", exc_info=True)
        _fail(ray_address or out_dir, f"{exc.__class__.__name__}: {str(exc).splitlines()[0]}")
        sys.exit(1)
    total = len(summary.done) + len(summary.skipped) + len(summary.failed) + len(summary.no_speech)
    if total == 0:
        _fail(", ".join(map(str, paths)), "no audio files found")
        sys.exit(1)
    if export:
        from .export import export_corpus

        for fmt in export:
            dest = export_corpus(out_dir, fmt, out_dir / "exports" / fmt)
            echo(f"exported {fmt} to {dest}", err=True)
    ok = len(summary.done) + len(summary.skipped)
    if summary.speaker_error:
        warning(out_dir, f"corpus speaker ids not joined: {summary.speaker_error}")
    note = f"; {len(summary.partial)} with failed fields" if summary.partial else ""
    note += f"; nothing to annotate in {len(summary.no_speech)} (no speech or no words)" if summary.no_speech else ""
    echo(f"annotated {ok}/{total} recording(s) into {out_dir}{note} (summary: {out_dir / 'summary.json'})", err=True)
    sys.exit(1 if summary.failed or summary.partial else 0)


def _annotate_config(config_path: Path | None, flags: dict[str, Any]) -> Config:
    """The run's settings from the file and the flags; a bad combination or value exits with status 2."""
    if (flags.get("llm") or "").startswith("local") and (flags.get("llm_url") or flags.get("llm_model")):
        _fail("--llm", "choose either --llm local or --llm-url, not both")
        sys.exit(2)
    try:
        over = config_overrides(flags)
    except ValueError as exc:
        _fail("--llm", str(exc))
        sys.exit(2)
    try:
        return load_config(config_path, over)
    except Exception as exc:  # pydantic / TOML errors: one line
        _fail(config_path or "settings", str(exc).splitlines()[0])
        sys.exit(2)


def _announce_local_llm(config: Config) -> None:
    """Name the local model the run will use; none installed exits with status 2."""
    from .assets import resolve_local_llm

    try:
        m = resolve_local_llm(config.local_llm.model)
    except AssetError as exc:  # e.g. --llm local with no local model installed
        _fail("--llm", str(exc))
        sys.exit(2)
    how = "best installed" if config.local_llm.model == "auto" else "as named"
    echo(f"agents: local LLM {m.title} ({how}; served by llama.cpp on 127.0.0.1)", err=True)


def _result_reporter(out_dir: Path, show: bool) -> Callable[[Any, Any], None]:
    """What `annotate` prints as each recording finishes: its error or warnings, and with
    `show` its segments."""
    from .output.table import render

    def report(item, result) -> None:
        if result.status == "failed":
            _fail(item.source if item is not None else result.id, result.error or "failed")
            return
        where = item.source if item is not None else result.id
        for text in (result.notes, result.warning):
            if text:
                warning(where, text)
        if result.status == "no_speech":
            warning(where, result.error)
            return
        if show and item is not None:
            from .schema import SegmentRecord

            data = json.loads((out_dir / f"{item.id}.json").read_text(encoding="utf-8"))
            note = " (already complete, skipped)" if result.status == "skipped" else ""
            title = f"{Path(item.path).name} -> {out_dir / (item.id + '.json')}{note}"
            echo(render([SegmentRecord.model_validate(d) for d in data], title=title))

    return report


def _confidence_bounds(values: tuple[str, ...]) -> dict[str, float]:
    bounds = {}
    for v in values:
        name, sep, num = v.partition("=")
        try:
            bounds[name.strip()] = float(num)
        except ValueError:
            raise click.BadParameter(
                f"{v!r}: expected FIELD=VALUE, e.g. emotion=0.6", param_hint="--min-confidence"
            ) from None
        if not sep or not name.strip():
            raise click.BadParameter(f"{v!r}: expected FIELD=VALUE", param_hint="--min-confidence")
    return bounds


@main.command()
@click.argument("out_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--to", "fmt", required=True, type=click.Choice(EXPORT_FORMATS), help="Export format.")
@click.option(
    "-o",
    "--output",
    "dest",
    required=True,
    type=click.Path(path_type=Path),
    help="Destination folder (or file for jsonl, rttm, seglst).",
)
@click.option(
    "--rate",
    type=click.Choice(["16000", "22050", "24000", "44100", "source"]),
    default="16000",
    show_default=True,
    help="clips and hf: the clips' sample rate (or the source's own).",
)
@click.option(
    "--loudness", type=float, help="clips and hf: normalise each clip to this BS.1770 loudness (LUFS, e.g. -23)."
)
@click.option(
    "--edges",
    type=float,
    default=0.0,
    help="clips and hf: seconds to widen (> 0, with the recording's audio) or trim (< 0) each segment edge.",
)
@click.option("--pad", type=float, default=0.0, help="clips and hf: seconds of silence added at each end of a clip.")
@click.option("--min-duration", type=float, help="Keep segments at least this long (seconds).")
@click.option("--max-duration", type=float, help="Keep segments at most this long (seconds).")
@click.option("--language", "languages", multiple=True, help="Keep segments in this language (repeatable).")
@click.option(
    "--speaker", "speakers", multiple=True, help="Keep this speaker: spk_01, or RECORDING:spk_01 (repeatable)."
)
@click.option(
    "--min-confidence",
    "confidences",
    multiple=True,
    help="FIELD=VALUE: keep segments whose FIELD confidence in the state is at least VALUE (repeatable).",
)
@click.option(
    "--where",
    help="Keep segments matching an expression over the quality columns and fields, "
    'e.g. "mos >= 3.5 and overlap_s == 0 and duration >= 1" (docs/scale.md lists the columns).',
)
@click.option("--preset", type=click.Choice(sorted(PRESETS)), help="A named --where (combined with --where by and).")
def export(
    out_dir,
    fmt,
    dest,
    rate,
    loudness,
    edges,
    pad,
    min_duration,
    max_duration,
    languages,
    speakers,
    confidences,
    where,
    preset,
):
    """Export an annotated corpus (OUT) to a training-ready format."""
    from .export import ExportFilter, export_corpus
    from .export.audio_source import ClipOptions

    filters = ExportFilter(
        min_duration=min_duration,
        max_duration=max_duration,
        languages=frozenset(languages),
        speakers=frozenset(speakers),
        min_confidence=_confidence_bounds(confidences),
        where=where,
        preset=preset,
    )
    kept: list[int] = []
    try:
        clip = ClipOptions(rate=rate, loudness=loudness, edges=edges, pad=pad)
        path = export_corpus(out_dir, fmt, dest, filters, clip=clip, on_count=kept.append)
    except (OSError, ValueError) as exc:
        _fail(out_dir, str(exc).splitlines()[0])
        sys.exit(1)
    if kept and kept[0] == 0:
        warning(dest, "no segment matched the filters; the export is empty")
    echo(f"exported {fmt} ({kept[0] if kept else 0} segments) to {path}", err=True)


@main.command()
@click.argument("out_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
def report(out_dir):
    """Write OUT/report.html: hours per voice, language and channel, distributions, quality, presets."""
    from .report import write_report

    try:
        path = write_report(out_dir)
    except (OSError, ValueError) as exc:
        _fail(out_dir, str(exc).splitlines()[0])
        sys.exit(1)
    echo(f"report written to {path}", err=True)


# Subcommands that live with their subsystems.
main.add_command(eval_group)
main.add_command(bench_group)
main.add_command(explain)
main.add_command(view)
main.add_command(import_group)
main.add_command(voices_group)

if __name__ == "__main__":
    main()
