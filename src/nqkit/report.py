"""Plain-text tables, result output and the stderr lines shared by the CLI commands.

Every line nqkit writes to stderr for the user goes through :func:`say`, :func:`note`
or :func:`warn` (errors through :class:`nqkit.errors.NqkitError` in :mod:`nqkit.cli`), so
the three kinds read the same everywhere. Two exceptions: the io floor prints its own
``nqkit: note: created directory ...`` in the same form (it imports nothing above it),
and ``nqkit browse`` prints its ``nqkit browse: ...`` lines, which scripts read for the
URL.
"""

from __future__ import annotations

import sys
from collections.abc import Container, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

if TYPE_CHECKING:
    from nqkit.signature import ResultWarning

T = TypeVar("T")


def fmt_value(v: Any, digits: int = 4) -> str:
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    if v is None:
        return "-"
    return str(v)


def format_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, digits: int = 4,
                 title: str | None = None, right: Container[int] | None = None) -> str:
    """Render an aligned text table: the columns in ``right`` right-aligned (by default
    every column but the first, the layout of a metrics table), the others left-aligned.

    Kept by hand rather than taken from a table library: 20 lines whose exact bytes users'
    scripts parse, and ``nqkit --help`` must not import more.
    """
    cells = [[fmt_value(v, digits) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    if right is None:
        right = range(1, len(widths))

    def line(row: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)
        ).rstrip()

    out = []
    if title:
        out.append(title)
    out.append(line(list(headers)))
    out.append("  ".join("-" * w for w in widths))
    out.extend(line(r) for r in cells)
    return "\n".join(out)


def say(message: str, *, file: TextIO | None = None) -> None:
    """One ``nqkit: ...`` line on stderr: what a command did (counts, files written)."""
    print(f"nqkit: {message}", file=file or sys.stderr)


def note(message: str, *, file: TextIO | None = None) -> None:
    """One ``nqkit: note: ...`` line on stderr: worth knowing, nothing is wrong
    (a deprecated spelling, a directory created, an option ignored)."""
    say(f"note: {message}", file=file)


def warn(message: str, *, file: TextIO | None = None) -> None:
    """One ``nqkit: warning: ...`` line on stderr: the result may not mean what the user
    thinks (printed before the result)."""
    say(f"warning: {message}", file=file)


def print_warnings(warnings: Iterable[ResultWarning], file: TextIO | None = None) -> None:
    """One ``nqkit: warning:`` line per warning on stderr, before any result is printed."""
    for w in warnings:
        warn(w.message, file=file)


def progress(iterable: Iterable[T], *, desc: str, total: int | None = None,
             unit: str = "it", file: TextIO | None = None) -> Iterator[T]:
    """Wrap an iterable in a tqdm progress bar on stderr (hidden when stderr is no terminal)."""
    out = file or sys.stderr
    isatty = getattr(out, "isatty", None)
    if isatty is None or not isatty():  # no bar to draw: not even tqdm's import (0.05 s)
        yield from iterable
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        yield from iterable
        return
    yield from tqdm(iterable, desc=desc, total=total, unit=unit, file=out,
                    disable=None, dynamic_ncols=True, leave=False)


def emit_result(result: Any, *, format: str = "table", per_item: str | None = None) -> None:
    """Print a task's :class:`~nqkit.tasks.base.Result` the one way every command does.

    Warnings first (stderr); ``per_item`` receives one JSON line per gold item; then
    ``table`` (the summary table, notes and signature), ``json`` (the official keys plus
    ``warnings``, ``coverage``, ``bootstrap`` and ``signature``) or ``jsonl`` (one line per
    item on stdout, the summary line on stderr).
    """
    import orjson

    from nqkit.io import write_jsonl, write_provenance

    if per_item:  # first: a file that cannot be written is the one line, before warnings
        write_jsonl(per_item, result.item_list())
        write_provenance(per_item, result.signature)  # what the lines are the items of
    print_warnings(result.warnings)
    if format == "jsonl":
        out = sys.stdout
        for item in result.item_list():
            out.write(orjson.dumps(item, option=orjson.OPT_SERIALIZE_NUMPY).decode() + "\n")
        print(result.summary_line(), file=sys.stderr)
    elif format == "json":
        sys.stdout.write(orjson.dumps(result.to_json(), option=orjson.OPT_INDENT_2
                                      | orjson.OPT_SERIALIZE_NUMPY).decode() + "\n")
    else:
        print(result.to_table())
