"""Plain-text tables, result output and the stderr lines shared by the CLI commands.

Every line nqkit writes to stderr for the user goes through :func:`say`, :func:`note`
or :func:`warn` (errors through :class:`nqkit.errors.NqkitError` in :mod:`nqkit.cli`), so
the three kinds read the same everywhere; the progress of long steps goes through
:func:`progress` and :func:`progress_bar` (tqdm bars on a terminal, a plain line about
every :data:`PLAIN_INTERVAL` seconds elsewhere). Two exceptions: the io floor prints its own
``nqkit: note: created directory ...`` in the same form (it imports nothing above it),
and ``nqkit browse`` prints its ``nqkit browse: ...`` lines, which scripts read for the
URL.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
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


PLAIN_INTERVAL = 10.0
"""Seconds between two progress lines when stderr is no terminal (a log, CI), and before
the first one: a step shorter than this prints nothing. Tests set it to 0 to see every
line without waiting."""


def progress(iterable: Iterable[T], *, desc: str, total: int | None = None,
             unit: str = "it", file: TextIO | None = None) -> Iterator[T]:
    """Wrap an iterable in a progress display on stderr, one step per item: a tqdm bar
    on a terminal, plain lines elsewhere (see :func:`progress_bar`); ``total`` defaults
    to ``len(iterable)`` when it has one."""
    yield from _tqdm(iterable, desc=desc, total=total, unit=unit, file=file)


def progress_bar(*, desc: str, total: float | None = None, unit: str = "it",
                 unit_scale: bool = False, initial: float = 0, position: int | None = None,
                 disable: bool = False, file: TextIO | None = None) -> Any:
    """A progress display on stderr to advance by hand (``update(n)``; close it, or use
    it as a context manager). This and :func:`progress` are the one place nqkit makes
    one.

    On a terminal, a tqdm bar (cleared when done; ``position`` stacks bars that run at
    the same time). Anywhere else (a log file, CI), tqdm counts and times but writes one
    plain line at most every :data:`PLAIN_INTERVAL` seconds, the first only after that
    long, so a short step prints nothing::

        nqkit: encoding passages: 12,000/21,000 (57%), 41 s

    ``unit_scale`` shows byte counts as ``1.20GB`` (with ``unit="B"``); ``disable``
    shows nothing (the returned object still counts).
    """
    return _tqdm(None, desc=desc, total=total, unit=unit, unit_scale=unit_scale,
                 initial=initial, position=position, disable=disable, file=file)


def _tqdm(iterable: Iterable[Any] | None, *, desc: str, total: float | None, unit: str,
          unit_scale: bool = False, initial: float = 0, position: int | None = None,
          disable: bool = False, file: TextIO | None = None) -> Any:
    out = file or sys.stderr
    isatty = getattr(out, "isatty", None)
    if isatty is not None and isatty():
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, unit=unit, unit_scale=unit_scale,
                    unit_divisor=1000, initial=initial, position=position, file=out,
                    disable=disable, dynamic_ncols=True, leave=False)
    # miniters=1: the clock is read at every step (tens of nanoseconds), so a step that
    # slows down still gets its line on time (tqdm's monitor thread is off, see below)
    return _plain_lines()(iterable, desc=desc, total=total, unit=unit,
                          unit_scale=unit_scale, unit_divisor=1000, initial=initial,
                          file=out, disable=disable, leave=False,
                          mininterval=PLAIN_INTERVAL, delay=PLAIN_INTERVAL, miniters=1)


@functools.cache
def _plain_lines() -> type[Any]:
    """tqdm with its display replaced by whole lines (tqdm's documented way to change
    the display: overload ``display``), defined when first needed: importing tqdm costs
    0.05 s that ``nqkit --help`` does not pay."""
    from tqdm.std import tqdm

    class PlainLines(tqdm):
        # no monitor thread: every line is written by the thread that advances the count
        monitor_interval = 0

        def display(self, msg: str | None = None, pos: int | None = None) -> bool:
            if msg == "":  # close() clears a terminal's bar: a log has none to clear
                return False
            d = self.format_dict
            if d["elapsed"] < self.delay:  # reset() and refresh() display at once
                return False
            self.fp.write(plain_line(d) + "\n")
            self.fp.flush()
            return True

    return PlainLines


def plain_line(d: Mapping[str, Any]) -> str:
    """The line of a progress display off a terminal, from tqdm's ``format_dict``:
    ``nqkit: DESC: N/TOTAL (P%), S s``, or ``nqkit: DESC: N UNIT, S s`` without a total
    (or once the count passed it)."""
    from tqdm.std import tqdm

    n, total, unit = d["n"], d["total"], d["unit"]

    def count(x: float) -> str:
        if d["unit_scale"]:
            return str(tqdm.format_sizeof(x, unit, d["unit_divisor"]))
        return f"{x:,.0f}"

    if total and n <= total:
        done = f"{count(n)}/{count(total)} ({int(100 * n / total)}%)"
    elif d["unit_scale"]:
        done = count(n)
    else:  # a unit that is a word takes a plural: "3 passages", but "3 q", "3 ex"
        done = f"{count(n)} {unit}{'s' * (n != 1 and len(unit) > 2 and unit[-1] != 's')}"
    return f"nqkit: {d['prefix']}: {done}, {d['elapsed']:,.0f} s"


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
