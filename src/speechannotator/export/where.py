"""`export --where`: a small, safe filter language over the segment columns, and named presets.

    mos >= 3.5 and overlap_s == 0 and duration >= 1
    language in ['en', 'zh'] and not 'music' in tts_issues
    1 <= duration <= 30 or gender == 'female'

The text is parsed with Python's `ast` and only comparisons, `and` / `or` / `not`, column names,
numbers, strings, lists of them and `null` are accepted; it is turned into closures, never
evaluated as Python. Before anything is exported it is checked: an unknown name, a string
compared with a number column, a bound outside what a column can hold (`mos >= 6`) or bounds
that leave nothing (`duration > 5 and duration < 2`) are errors naming the column. A comparison
with a column that has no value for a segment (null) is false, so `mos >= 3.5` keeps only
segments with a Distill-MOS; `mos == null` selects those without one.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..schema import FIELDS
from .quality import COLUMNS

# Named filters (`--preset NAME`), written in the same language.
PRESETS: dict[str, tuple[str, str]] = {
    "tts-clean": ("tts_issue_count == 0", "no TTS issue at all (see TTS_LIMITS)"),
    "tts-lenient": (
        "not 'overlap' in tts_issues and not 'music' in tts_issues and not 'clipped' in tts_issues "
        "and not 'too_short' in tts_issues and not 'singing' in tts_issues",
        "one speaker, no music, not clipped, at least 1 s; noise and channel allowed",
    ),
    "asr-confident": (
        "not 'asr_uncertain' in tts_issues and not 'no_speech' in tts_issues",
        "transcripts the ASR was sure of",
    ),
}

# Names of the record (text) that --where may use besides the quality columns.
TEXT_NAMES: tuple[str, ...] = ("language", "speaker_id", "recording", "corpus_speaker_id") + tuple(FIELDS)

_OPS: dict[type, tuple[str, Callable[[Any, Any], bool]]] = {
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
    ast.In: ("in", lambda a, b: a in b),
    ast.NotIn: ("not in", lambda a, b: a not in b),
}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}

Row = dict[str, Any]


class WhereError(ValueError):
    """A --where expression that cannot be used; the message names the column or the syntax."""


def kind_of(name: str) -> str | None:
    if name in COLUMNS:
        return COLUMNS[name].kind
    return "text" if name in TEXT_NAMES else None


def known_names() -> list[str]:
    return sorted(set(COLUMNS) | set(TEXT_NAMES))


@dataclass(frozen=True)
class _Bound:
    column: str
    op: str  # <, <=, >, >=, ==
    value: float


@dataclass
class Where:
    """A checked expression: `keeps(row)` says whether a segment's row passes."""

    text: str
    keeps: Callable[[Row], bool]


def _constant(node: ast.AST, text: str) -> Any:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float | str)
        and not isinstance(node.value, bool)
    ):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _constant(node.operand, text)
        if isinstance(v, int | float):
            return -v
    if isinstance(node, ast.Name) and node.id == "null":
        return None
    if isinstance(node, ast.List | ast.Tuple):
        return tuple(_constant(e, text) for e in node.elts)
    raise WhereError(f"{ast.get_source_segment(text, node)!r}: expected a number, a string, null or a list of them")


def _check_value(column: str, op: str, value: Any) -> None:
    kind = kind_of(column)
    values = value if isinstance(value, tuple) else (value,)
    if op in ("in", "not in") and not isinstance(value, tuple) and kind != "list":
        raise WhereError(f"{column} {op} {value!r}: 'in' takes a list, e.g. {column} in ['a', 'b']")
    for v in values:
        if v is None:
            if op not in ("==", "!="):
                raise WhereError(f"{column} {op} null: only == null and != null compare with null")
            continue
        if kind == "number" and not isinstance(v, int | float):
            raise WhereError(f"{column} is a number column; {v!r} is not a number")
        if kind in ("text", "list") and not isinstance(v, str):
            raise WhereError(f"{column} is a text column; compare it with a string, not {v!r}")
    if kind == "number" and isinstance(value, int | float):
        col = COLUMNS[column]
        low = -float("inf") if col.low is None else col.low
        high = float("inf") if col.high is None else col.high
        impossible = (
            (op in (">", ">=") and (value > high or (op == ">" and value == high)))
            or (op in ("<", "<=") and (value < low or (op == "<" and value == low)))
            or (op == "==" and not low <= value <= high)
        )
        if impossible:
            span = f"{col.low if col.low is not None else '-inf'} to {col.high if col.high is not None else 'inf'}"
            raise WhereError(f"{column} {op} {value}: {column} only takes values from {span}; no segment can match")


def _compare(column: str, op: str, value: Any, fn: Callable[[Any, Any], bool]) -> Callable[[Row], bool]:
    if value is None:
        return (lambda row: row.get(column) is None) if op == "==" else (lambda row: row.get(column) is not None)

    def test(row: Row) -> bool:
        got = row.get(column)
        if got is None:
            return False
        return bool(fn(got, value))

    return test


def _member(value: str, column: str, negate: bool) -> Callable[[Row], bool]:
    def test(row: Row) -> bool:
        got = row.get(column) or ()
        return (value not in got) if negate else (value in got)

    return test


def _compile(node: ast.AST, text: str, bounds: list[_Bound] | None) -> Callable[[Row], bool]:
    """`bounds` collects the numeric bounds of a conjunction (None below an or / not)."""
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            parts = [_compile(v, text, bounds) for v in node.values]
            return lambda row: all(p(row) for p in parts)
        parts = [_compile(v, text, None) for v in node.values]
        return lambda row: any(p(row) for p in parts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _compile(node.operand, text, None)
        return lambda row: not inner(row)
    if isinstance(node, ast.Compare):
        return _compile_compare(node, text, bounds)
    if isinstance(node, ast.Name):
        raise WhereError(f"{node.id!r} alone is not a condition: compare it, e.g. {node.id} >= 1")
    raise WhereError(f"{ast.get_source_segment(text, node)!r}: not a comparison")


def _side(node: ast.AST, text: str) -> tuple[str | None, Any]:
    """(column name, None) for a column, (None, value) for a constant."""
    if isinstance(node, ast.Name) and node.id != "null":
        if kind_of(node.id) is None:
            raise WhereError(f"unknown column {node.id!r} (known: {', '.join(known_names())})")
        return node.id, None
    return None, _constant(node, text)


def _compile_compare(node: ast.Compare, text: str, bounds: list[_Bound] | None) -> Callable[[Row], bool]:
    parts = []
    operands = [node.left, *node.comparators]
    for left, op_node, right in zip(operands, node.ops, operands[1:], strict=False):
        if type(op_node) not in _OPS:
            raise WhereError(f"{ast.get_source_segment(text, node)!r}: unsupported comparison")
        op, fn = _OPS[type(op_node)]
        (lcol, lval), (rcol, rval) = _side(left, text), _side(right, text)
        if lcol and rcol:
            raise WhereError(f"{lcol} {op} {rcol}: compare a column with a value, not with another column")
        if not lcol and not rcol:
            raise WhereError(f"{ast.get_source_segment(text, node)!r}: names no column")
        if rcol and op in ("in", "not in"):
            if kind_of(rcol) != "list":
                raise WhereError(f"{lval!r} {op} {rcol}: put the column first, e.g. {rcol} in [...]")
            if not isinstance(lval, str):  # 'music' in tts_issues
                raise WhereError(f"{lval!r} {op} {rcol}: {rcol} holds strings")
            parts.append(_member(lval, rcol, op == "not in"))
            continue
        if rcol:  # 3 <= duration: turned around, duration >= 3
            column, value, op = rcol, lval, _FLIP[op]
            fn = next(f for o, f in _OPS.values() if o == op)
        else:
            column, value = str(lcol), rval
        if kind_of(column) == "list":
            raise WhereError(f"{column} is a list: test membership, e.g. 'music' in {column}")
        _check_value(column, op, value)
        if bounds is not None and isinstance(value, int | float) and op in ("<", "<=", ">", ">=", "=="):
            bounds.append(_Bound(column, op, float(value)))
        parts.append(_compare(column, op, value, fn))
    return lambda row: all(p(row) for p in parts)


def _check_bounds(bounds: list[_Bound]) -> None:
    """Bounds of one conjunction that leave no value: `duration > 5 and duration < 2`."""
    by_col: dict[str, list[_Bound]] = {}
    for b in bounds:
        by_col.setdefault(b.column, []).append(b)
    for col, bs in by_col.items():
        lows = [b for b in bs if b.op in (">", ">=", "==")]
        highs = [b for b in bs if b.op in ("<", "<=", "==")]
        for lo in lows:
            for hi in highs:
                strict = lo.op == ">" or hi.op == "<"
                if lo.value > hi.value or (strict and lo.value == hi.value):
                    both = f"{col} {lo.op} {lo.value:g} and {col} {hi.op} {hi.value:g}"
                    raise WhereError(f"{both}: an empty range, no segment can match")


def parse_where(text: str) -> Where:
    """Parse and check a --where expression (WhereError naming the problem)."""
    source = " ".join(text.split())
    if not source:
        raise WhereError("empty expression")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise WhereError(f"cannot parse {source!r}: {exc.msg} (at column {exc.offset})") from None
    bounds: list[_Bound] = []
    keeps = _compile(tree.body, source, bounds)
    _check_bounds(bounds)
    return Where(source, keeps)


def preset_expression(name: str) -> str:
    if name not in PRESETS:
        raise WhereError(f"unknown preset {name!r} (one of {', '.join(PRESETS)})")
    return PRESETS[name][0]
