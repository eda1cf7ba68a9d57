"""Declared settings, and the number types of every command-line option.

A task declares its settings once as :class:`Param` records; its command-line options are
built from those declarations (``nqkit compare TASK``). The ``type=`` helpers below
(:func:`int_in`, :func:`float_in`, :data:`positive_int`) check numbers for every command:
a value out of range becomes one line ``nqkit: error: argument --k1: must be >= 0, found
-1`` and exit code 2 (see :class:`nqkit.cli.NqkitArgumentParser`), before any file is read.
Only ``argparse`` is imported here, so ``nqkit --help`` stays instant.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

__all__ = [
    "DeprecatedOption",
    "Param",
    "add_deprecated",
    "check_record",
    "float_in",
    "format_param",
    "int_in",
    "output_param",
    "positive_int",
    "settings_values",
]


@dataclass(frozen=True, slots=True)
class Param:
    """One declared setting: its command-line flag, type, default and help."""

    name: str  # keyword of score() and attribute of the parsed arguments
    flag: str  # e.g. "--long-threshold"; without a leading "-", a positional argument
    help: str
    default: Any = None
    type: Callable[[str], Any] | None = None
    choices: tuple[Any, ...] | None = None
    # "store_true", "append" (one value per use), "extend" (values of every use, nargs
    # each), or "boolean" for --FLAG / --no-FLAG
    action: str | None = None
    nargs: str | int | None = None
    metavar: str | None = None
    required: bool = False
    # old spellings, accepted for one release with a one-line notice (hidden from --help)
    deprecated: tuple[str, ...] = ()
    output: bool = False  # a file the command writes: checked against the inputs first
    input: bool = False  # a file (or files) the command reads: never an output
    # adds to what is printed and changes no number (eval's --explain, --breakdown):
    # commands that print something else (compare) do not take it
    report: bool = False
    short: str | None = None  # e.g. "-o"
    # the registered names "{names}" in the help stands for, read when the option is added
    # (a registry: adding a member changes no help text by hand)
    names: Callable[[], Sequence[str]] | None = None

    def but(self, **changes: Any) -> Param:
        """This declaration as one command uses it: another default, help, requirement or
        old spelling. The flag and the library argument are the concept's, never changed
        (:mod:`nqkit.vocabulary` declares each once)."""
        fixed = sorted(k for k in ("name", "flag", "short") if k in changes)
        if fixed:
            raise TypeError(f"{self.flag}: {', '.join(fixed)} cannot be changed; declare "
                            "another setting instead")
        out = replace(self, **changes)
        if out.action == "extend" and out.nargs is None:
            # argparse would extend the list by the characters of the one value
            raise TypeError(f"{self.flag}: a single value (nargs=None) needs action=None "
                            "or 'append', not 'extend'")
        return out

    def _mark(self, action: argparse.Action) -> None:
        """The file role of the option, for the collision check every command gets before
        it runs (:func:`nqkit.io.check_collisions`, called by :mod:`nqkit.cli`)."""
        role = _io_role(self)
        if role is not None:
            action.nqkit_role = role  # type: ignore[attr-defined]

    def add_to(self, parser: argparse.ArgumentParser, *, enforce: bool = True) -> None:
        """Add the option (or positional) to ``parser``. A required option is enforced by
        argparse, unless it has an old spelling or ``enforce`` is false: then the caller
        checks it after parsing (:func:`settings_values`), and only the usage line shows
        it as required (see ``shown_required`` in :mod:`nqkit.cli`)."""
        if not self.flag.startswith("-"):
            # "*" without a default would be reported as a missing argument when absent
            optional = {"default": self.default} if self.nargs in ("?", "*") else {}
            positional = parser.add_argument(self.name, nargs=self.nargs, help=self.help,
                                             metavar=self.metavar, **optional)
            self._mark(positional)
            return
        shown = f"{self.short}/{self.flag}" if self.short else self.flag
        for old in self.deprecated:
            if self.action == "boolean":  # the old spelling is the negative one
                add_deprecated(parser, old, f"--no-{self.flag[2:]}", self.name, const=False)
            elif self.action == "store_true":
                add_deprecated(parser, old, shown, self.name, const=True)
            elif self.action in ("append", "extend"):
                add_deprecated(parser, old, shown, self.name, type=self.type,
                               nargs=self.nargs if self.action == "extend" else None,
                               accumulate=self.action)
            else:
                add_deprecated(parser, old, shown, self.name, nargs=self.nargs,
                               type=self.type)
        text = self.help
        if self.names is not None:
            text = text.replace("{names}", ", ".join(self.names()))
        kwargs: dict[str, Any] = {"dest": self.name, "help": text}
        if self.action == "boolean":
            kwargs.update(action=argparse.BooleanOptionalAction, default=self.default)
        elif self.action in ("append", "extend"):  # repeatable: each value typed and named
            kwargs.update(action=self.action, default=self.default, type=self.type,
                          choices=self.choices, metavar=self.metavar,
                          nargs=self.nargs if self.action == "extend" else None)
            kwargs = {k: v for k, v in kwargs.items() if v is not None or k == "default"}
        elif self.action:
            kwargs.update(action=self.action, default=self.default)
        else:
            kwargs.update(default=self.default, type=self.type, choices=self.choices,
                          nargs=self.nargs, metavar=self.metavar)
            kwargs = {k: v for k, v in kwargs.items() if v is not None or k == "default"}
        # with an old spelling, the requirement is checked after parsing (Task.settings)
        if self.required and enforce and not self.deprecated:
            kwargs["required"] = True
        action = parser.add_argument(*filter(None, (self.short, self.flag)), **kwargs)
        self._mark(action)
        if self.required and not action.required:
            action.shown_required = True  # type: ignore[attr-defined]
            # an old spelling may stand in for it: the parser checks it once parsed
            # (nqkit.cli), unless the caller checks it itself (enforce=False)
            action.required_after = enforce  # type: ignore[attr-defined]


def _io_role(param: Param) -> str | None:
    return "output" if param.output else "input" if param.input else None


def format_param(*choices: str, default: str | None = "table", help: str | None = None
                 ) -> Param:
    """``--format``, with the same spelling and help wherever a command prints results:
    ``table`` (aligned text), ``json`` (one document), ``jsonl`` (one line per record).
    ``help=""`` lists the option without a line of help (as ``reqa build`` and ``index
    build`` always have)."""
    text = help if help is not None else f"{' or '.join(choices)} (default {default})"
    return Param("format", "--format", text, default=default, choices=tuple(choices))


def output_param(help: str, *, metavar: str | None = "FILE", required: bool = True,
                 dest: str = "output", deprecated: Sequence[str] = ()) -> Param:
    """``-o/--output``: the file (or directory) a command writes."""
    return Param(dest, "--output", help, required=required, metavar=metavar, short="-o",
                 output=True, deprecated=tuple(deprecated))


class DeprecatedOption(argparse.Action):
    """An old spelling of an option: stores like the new one, with a one-line notice.

    ``nqkit: note: --references is deprecated and will be removed in the next release;
    use --gold`` goes to stderr once per use; the value lands where the new option's would.
    """

    def __init__(self, option_strings: Sequence[str], dest: str, new: str = "",
                 const: Any = None, nargs: Any = None, type: Any = None,
                 default: Any = argparse.SUPPRESS, accumulate: str | None = None,
                 **kwargs: Any) -> None:
        self.new = new
        self.accumulate = accumulate  # "append" or "extend": added to the new option's list
        if const is not None:
            nargs = 0
        super().__init__(option_strings, dest, nargs=nargs, const=const, type=type,
                         default=default, help=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        from nqkit.report import note

        note(f"{option_string or 'this spelling'} is deprecated and will be removed in the "
             f"next release; use {self.new}")
        value = self.const if self.nargs == 0 else values
        if self.accumulate is not None:
            items = list(getattr(namespace, self.dest, None) or [])
            value = [*items, *value] if self.accumulate == "extend" else [*items, value]
        setattr(namespace, self.dest, value)


def add_deprecated(parser: argparse.ArgumentParser, old: str, new: str, dest: str, *,
                   const: Any = None, nargs: Any = None, type: Any = None,
                   accumulate: str | None = None) -> None:
    """Accept ``old`` as a hidden spelling of ``new`` (see :class:`DeprecatedOption`)."""
    parser.add_argument(old, dest=dest, action=DeprecatedOption, new=new, const=const,
                        nargs=nargs, type=type, accumulate=accumulate)


def _range_text(lo: float | None, hi: float | None) -> str:
    if lo is not None and hi is not None:
        return f"in [{lo:g}, {hi:g}]"
    return f">= {lo:g}" if lo is not None else f"<= {hi:g}"


def int_in(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """An integer in ``[lo, hi]`` (either bound may be open)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, found {text!r:.30}"
                                             ) from None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"must be {_range_text(lo, hi)}, found {value}")
        return value

    parse.__name__ = "integer"
    return parse


def float_in(lo: float | None = None, hi: float | None = None) -> Callable[[str], float]:
    """A finite number in ``[lo, hi]`` (either bound may be open)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, found {text!r:.30}"
                                             ) from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, found {text!r:.30}")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"must be {_range_text(lo, hi)}, found {value:g}")
        return value

    parse.__name__ = "number"
    return parse


positive_int = int_in(1)  # counts, sizes, thresholds of at least one


def check_record(kind: str, name: str, record: type, declared: Sequence[Param],
                 inherited: type | None = None) -> None:
    """A settings record (a dataclass) and its declarations name the same settings (the
    fields of ``inherited``, a base record, aside), or ``TypeError``: a task or system
    whose record and options disagree is never built."""
    own = {f.name for f in fields(record)} - (
        {f.name for f in fields(inherited)} if inherited is not None else set())
    names = {p.name for p in declared}
    if own != names:
        raise TypeError(f"{kind} {name!r}: the fields of {record.__name__} {sorted(own)} "
                        f"are not its declared settings {sorted(names)}")


def settings_values(kind: str, name: str, params: Sequence[Param], given: dict[str, Any],
                    hint: Callable[[Param], str],
                    defaults: Sequence[Param] | None = None) -> dict[str, Any]:
    """The given settings over the declared defaults (of ``defaults``, by default
    ``params``). A name not in ``params`` is a ``TypeError`` listing the known ones; a
    required setting left unset is one :class:`~nqkit.errors.InputError` line whose fix
    is ``hint(param)``."""
    known = {p.name for p in params}
    given = _renamed(kind, name, params, given, known)
    unknown = sorted(set(given) - known)
    if unknown:
        raise TypeError(f"{kind} {name!r} has no setting(s) {unknown}; known: {sorted(known)}")
    out = {p.name: p.default for p in (params if defaults is None else defaults)}
    out.update(given)
    for p in params:  # an old spelling may stand in for a required option
        if p.required and out[p.name] is None:
            from nqkit.errors import InputError

            raise InputError(None, f"{p.flag} is required", hint(p))
    return out


def _renamed(kind: str, name: str, params: Sequence[Param], given: dict[str, Any],
             known: set[str]) -> dict[str, Any]:
    """``given`` with old keyword names (those of a declaration's old flags: ``bootstrap``
    for ``--bootstrap``) under their new ones, each with a ``DeprecationWarning``: a
    library caller gets the release of grace a command-line user gets."""
    # (an old spelling of a --FLAG/--no-FLAG pair is the negative one: not a keyword)
    old_names = {d.lstrip("-").replace("-", "_"): p.name for p in params
                 for d in p.deprecated if d.startswith("--") and p.action != "boolean"}
    renamed = {k: old_names[k] for k in given if k not in known and k in old_names}
    if not renamed:
        return given
    import warnings

    out = dict(given)
    for old, new in renamed.items():
        if new in given:
            raise TypeError(f"{kind} {name!r}: {old}= and {new}= name the same setting; "
                            f"give {new}= only")
        warnings.warn(f"{kind} {name!r}: the setting {old}= is deprecated and will be "
                      f"removed in the next release; use {new}=", DeprecationWarning,
                      stacklevel=4)
        out[new] = out.pop(old)
    return out
