"""`speechannotator explain OUT/<stem>.json --segment N --field F` (registered by the main CLI)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("explain")
@click.argument("json_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--segment", "segment", type=int, required=True, help="0-based index of the segment in the JSON array")
@click.option("--field", "field", required=True, help="attribute name, e.g. gender, emotion, background_sound")
def explain_command(json_path: Path, segment: int, field: str) -> None:
    """Print the evidence, contract, predictions and review verdicts behind one field."""
    from ..state import STATE_FILE, StateStore
    from .explain import explain

    state = json_path.parent / STATE_FILE
    if not state.is_file():
        raise click.ClickException(f"no state database {state} next to {json_path.name}")
    store = StateStore(state)
    try:
        rec = json_path.stem
        if store.status(rec) is None and not store.segments(rec):
            raise click.ClickException(f"recording {rec!r} is not in {state}")
        try:
            click.echo(explain(store, rec, segment, field))
        except ValueError as exc:
            raise click.ClickException(str(exc)) from exc
    finally:
        store.close()


explain = explain_command  # the name the main CLI imports
