"""`speechannotator view OUT [--port N]` (registered by the main CLI)."""

from __future__ import annotations

import getpass
import ipaddress
import signal
import socket
import sys
from pathlib import Path

import click

LOOPBACK = "127.0.0.1"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command("view")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--port", type=int, default=8765, show_default=True, help="TCP port (0: any free port).")
@click.option(
    "--host", default=LOOPBACK, show_default=True, help="Address to bind; other than loopback needs --allow-remote."
)
@click.option("--allow-remote", is_flag=True, help="Permit a non-loopback --host (anyone who gets the URL can edit).")
@click.option("--reviewer", default=None, help="Name recorded with every correction (default: the login name).")
def view_command(out_dir: Path, port: int, host: str, allow_remote: bool, reviewer: str | None) -> None:
    """Serve a local page to review and correct the annotations in OUT."""
    import uvicorn

    from ..state import STATE_FILE
    from .server import Viewer, make_app, new_token

    if not (out_dir / STATE_FILE).is_file():
        raise click.ClickException(f"no state database {out_dir / STATE_FILE} (annotate into {out_dir} first)")
    if not _is_loopback(host):
        if not allow_remote:
            raise click.ClickException(f"--host {host} is not a loopback address; add --allow-remote to bind it anyway")
        click.echo(
            f"WARNING: serving on {host}: anyone on that network who gets the URL can read and edit "
            f"{out_dir}; the traffic is not encrypted",
            err=True,
        )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)  # connections queue from now on: the printed address works at once
    except OSError as exc:
        raise click.ClickException(f"cannot bind {host}:{port}: {exc.strerror or exc}") from exc
    viewer = Viewer(out_dir=out_dir.resolve(), token=new_token(), reviewer=reviewer or getpass.getuser())
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    click.echo(f"review page: http://{shown}:{sock.getsockname()[1]}/?token={viewer.token}", err=False)
    click.echo("press Ctrl+C to stop", err=True)
    server = uvicorn.Server(uvicorn.Config(make_app(viewer), log_level="warning", lifespan="off"))
    # uvicorn shuts down gracefully on SIGTERM, then raises the signal again under the handler
    # found before it started: make that an exit through `finally`, which removes the decoded WAVs.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        server.run(sockets=[sock])
    finally:
        viewer.close()
        sock.close()


view = view_command  # the name the main CLI imports


@click.group("import")
def import_group() -> None:
    """Bring answers made in other annotation tools back into an output folder."""


@import_group.command("labelstudio")
@click.argument("export", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
def import_labelstudio_command(export: Path, out_dir: Path) -> None:
    """Label Studio's JSON export EXPORT (tasks from `export labelstudio`) into OUT's audit trail."""
    from ..state import STATE_FILE
    from .labelstudio_import import ImportFileError, import_labelstudio

    if not (out_dir / STATE_FILE).is_file():
        raise click.ClickException(f"no state database {out_dir / STATE_FILE}")
    try:
        report = import_labelstudio(export, out_dir)
    except ImportFileError as exc:
        raise click.ClickException(str(exc)) from exc
    for line in report.applied:
        click.echo(f"applied: {line}")
    for line in report.skipped:
        click.echo(f"skipped: {line}", err=True)
    click.echo(
        f"{len(report.applied)} decision(s) recorded, {report.unchanged} answer(s) unchanged, "
        f"{len(report.skipped)} skipped"
    )
