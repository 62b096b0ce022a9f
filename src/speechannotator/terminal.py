"""What the command line prints: text from files, references and models is data, so every
line shown on a terminal goes through `printable`, which drops escape and control sequences
(ANSI CSI colours and cursor moves, OSC titles and hyperlinks, other C0/C1 controls)."""

from __future__ import annotations

import re

import click

# ESC [ ... final byte (CSI), ESC ] ... BEL or ESC \ (OSC), ESC P/X/^/_ ... ST (DCS, SOS, PM, APC),
# the 8-bit C1 forms of the same, then any other ESC + one character.
_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"
    r"|\x1b[\s\S]?"
)
# Remaining C0 controls except tab and newline, DEL and C1 controls.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: object) -> str:
    """`text` without terminal control sequences (tabs and newlines kept)."""
    return _CONTROLS.sub("", _SEQUENCES.sub("", str(text)))


def echo(text: object = "", *, err: bool = False) -> None:
    click.echo(printable(text), err=err)


def error(subject: object, cause: object) -> None:
    """The one-line error format: ``speechannotator: error: SUBJECT: cause``."""
    echo(f"speechannotator: error: {subject}: {cause}", err=True)


def warning(subject: object, cause: object) -> None:
    echo(f"speechannotator: warning: {subject}: {cause}", err=True)
