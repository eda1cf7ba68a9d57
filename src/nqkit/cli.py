"""The ``nqkit`` command line: one entry point, subcommands, clear errors.

Each subcommand lives in a module of :mod:`nqkit.commands`, found there
(:func:`nqkit.registry.discover`; adding a module adds its command), that defines
``ORDER`` (where ``nqkit --help`` lists it) and declares ``COMMANDS``, a tuple of
:class:`nqkit.commands.base.Command` (name, group, help, declared settings, ``run``; a
command named like a group of :data:`GROUPS`, such as ``eval``, takes the group's place
and adds its subcommands from a registry on first use). Those modules import only light
modules at top level so that ``nqkit --help`` stays instant; heavy work is imported
inside ``run``. Other modules of the package (helpers such as
:mod:`nqkit.commands.base`) declare no ``COMMANDS`` and are not commands.

Results go to stdout; diagnostics and progress bars go to stderr. Bad input
(:class:`nqkit.errors.InputError`) becomes one line on stderr and exit code 2.

Registry names (``--gold nq-open/dev``) are resolved wherever a path is read: the
``nqkit`` package installs the resolver of :mod:`nqkit.datasets` in :mod:`nqkit.io` when
it is imported (worker processes forked from the command inherit it).

Every command runs inside :func:`nqkit.io.output_transaction`: its output files appear
only when the whole command succeeds. SIGTERM (what ``timeout`` and cluster schedulers
send) unwinds like Ctrl-C, so temporary files are removed and worker processes stopped;
the exit code is 143 (128 + SIGTERM), 130 for Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NoReturn

from nqkit._version import __version__
from nqkit.commands.base import print_help
from nqkit.errors import NqkitError

# The groups of subcommands, in the order `nqkit --help` lists them first; None: the
# group is a declared Command of the same name (its help is there)
GROUPS: dict[str, str | None] = {
    "eval": None,  # nqkit.commands.eval
    "compare": None,  # nqkit.commands.compare
    "convert": "convert between dataset formats",
    "reqa": "ReQA answer-retrieval tasks: build, run, score",
    "data": "datasets by name: list, info, get (verified downloads), verify, path, export, "
            "stats",
    "index": "build passage indexes (BM25, dense) for open-domain retrieval",
    "overlap": "test-train overlap (Lewis et al. 2021): scores by overlap group, the "
               "official QA-Overlap numbers, leak reports",
    "judge": "judges of answers: audit a judge's verdicts against human judgments",
    "explain": "why two runs differ: each difference put down to a named cause",
}


class _Deferred(dict[str, Any]):
    """A subcommand map whose parsers are built on first look-up: ``in``, ``len`` and
    iteration see every name (choices, errors, "did you mean"); ``[name]``, ``get``,
    ``values`` and ``items`` build what they return."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: dict[str, Any] = {}

    def defer(self, name: str, make: Any) -> None:
        self.pending[name] = make
        super().__setitem__(name, None)

    def __getitem__(self, name: str) -> Any:
        make = self.pending.pop(name, None)
        if make is not None:
            super().__setitem__(name, make())
        return super().__getitem__(name)

    def __iter__(self) -> Iterator[str]:  # not dict's: dict(m) then reads m[name]
        return iter(list(super().keys()))

    def get(self, name: str, default: Any = None) -> Any:
        if name not in self:
            return default
        return self[name]

    def values(self) -> Any:
        return [self[name] for name in self]

    def items(self) -> Any:
        return [(name, self[name]) for name in self]


class _LazySubParsers(argparse._SubParsersAction):
    """Subcommands as argparse's, plus :meth:`add_lazy_parser`: a parser made only when
    its command is parsed or its help shown (``nqkit`` builds one parser per command
    line, not one per command: some 40 parsers and 200 options cost ~20 ms a call)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._name_parser_map = self.choices = _Deferred()

    def add_lazy_parser(self, name: str, build: Any, **kwargs: Any) -> None:
        """``add_parser(name, **kwargs)``, then ``build(parser)``, both on first use."""
        if name in self._name_parser_map:
            raise argparse.ArgumentError(self, f"conflicting subparser: {name}")
        kwargs.setdefault("prog", f"{self._prog_prefix} {name}")
        if "help" in kwargs:
            self._choices_actions.append(
                self._ChoicesPseudoAction(name, (), kwargs.pop("help")))

        def make() -> argparse.ArgumentParser:
            parser = self._parser_class(**kwargs)
            build(parser)
            return parser

        self._name_parser_map.defer(name, make)  # type: ignore[attr-defined]


class NqkitArgumentParser(argparse.ArgumentParser):
    """argparse with the house error format: one line on stderr, exit code 2.

    Subcommand parsers inherit the class, so a wrong option or an out-of-range number
    anywhere reads ``nqkit: error: nqkit eval nq: argument --bootstrap: ... — see
    `nqkit eval nq --help``` instead of a usage block. Their parsers are made on first
    use (:class:`_LazySubParsers`).
    """

    def __init__(self, *args: Any, populate: Any = None, intermixed: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", "parsers", _LazySubParsers)
        self._populate = populate
        # positionals may come before and after options (``NAME --train T IN OUT``)
        self._intermixed = intermixed
        self._in_intermixed = False

    def _ensure(self) -> None:
        """Add the arguments now: ``populate(parser)`` runs on first parse or help, so
        commands whose options come from registries cost nothing at ``nqkit --help``."""
        populate, self._populate = self._populate, None
        if populate is not None:
            populate(self)

    # the parser of the (sub)command being parsed: the last one whose parse started
    _active: NqkitArgumentParser | None = None

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._ensure()
        NqkitArgumentParser._active = self
        if self._intermixed and not self._in_intermixed:
            # argparse's intermixed parsing calls this method again: once is enough
            self._in_intermixed = True
            try:
                parsed = self.parse_known_intermixed_args(args, namespace)
            finally:
                self._in_intermixed = False
            return self._required_given(parsed)
        parsed = super().parse_known_args(args, namespace)
        return parsed if self._in_intermixed else self._required_given(parsed)

    def _required_given(self, parsed: Any) -> Any:
        """A required option that an old spelling may stand in for is checked here, once
        both spellings had their chance (:meth:`nqkit.settings.Param.add_to`); the
        namespace keeps the parser of the (sub)command that parsed it (the deepest one)."""
        namespace = parsed[0]
        if not hasattr(namespace, "nqkit_parser"):
            namespace.nqkit_parser = self
        missing = [a.option_strings[-1] for a in self._actions
                   if getattr(a, "required_after", False)
                   and getattr(namespace, a.dest, None) is None]
        if missing:
            self.error(f"the following arguments are required: {', '.join(missing)}")
        return parsed

    def format_help(self) -> str:
        self._ensure()
        with self._required_shown():
            return super().format_help()

    def format_usage(self) -> str:
        self._ensure()
        with self._required_shown():
            return super().format_usage()

    @contextlib.contextmanager
    def _required_shown(self) -> Iterator[None]:
        """Options required but checked after parsing (an old spelling may stand in for
        them: :meth:`nqkit.settings.Param.add_to`) show in the usage line as required,
        without brackets, as argparse shows the ones it checks itself."""
        shown = [a for a in self._actions
                 if getattr(a, "shown_required", False) and not a.required]
        for a in shown:
            a.required = True
        try:
            yield
        finally:
            for a in shown:
                a.required = False

    def error(self, message: str) -> NoReturn:
        message = " ".join(message.split())  # argparse may wrap long choice lists
        parser: argparse.ArgumentParser = self
        if message.startswith("unrecognized arguments:") and self._active is not None:
            # argparse reports them at the top; they belong to the command being parsed
            parser = self._active
        hint = did_you_mean(parser, message)
        self.exit(2, f"nqkit: error: {parser.prog}: {message}{hint} — see "
                     f"`{parser.prog} --help`\n")


_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)$")


def did_you_mean(parser: argparse.ArgumentParser, message: str) -> str:
    """`` — did you mean --gold?`` for a typo'd option or command (the nearest visible
    spelling by :func:`difflib.get_close_matches`), or ``""``."""
    import difflib

    if message.startswith("unrecognized arguments:"):
        words = [w for w in message.split(":", 1)[1].split() if w.startswith("-")]
        known = [o for a in parser._actions if a.help != argparse.SUPPRESS
                 for o in a.option_strings if o.startswith("--")]
        for word in words:
            close = difflib.get_close_matches(word.split("=", 1)[0], known, n=1)
            if close:
                return f"; did you mean {close[0]}?"
        return ""
    m = _CHOICE.search(message)
    if m:
        choices = re.findall(r"'([^']*)'", m.group(2))
        close = difflib.get_close_matches(m.group(1), choices, n=1)
        if close:
            return f"; did you mean {close[0]!r}?"
    return ""


def command_modules() -> list[Any]:
    """The modules of :mod:`nqkit.commands` that define a command, in ``ORDER``."""
    from nqkit.registry import discover

    found = [m for m in discover("nqkit.commands") if hasattr(m, "COMMANDS")]
    return sorted(found, key=lambda m: (getattr(m, "ORDER", float("inf")), m.__name__))


def build_parser() -> argparse.ArgumentParser:
    parser = NqkitArgumentParser(
        prog="nqkit",
        description="Natural Questions, NQ-open, AmbigQA and ReQA: data, official metrics, "
        "baselines and a browser.",
    )
    parser.add_argument("--version", action="version", version=f"nqkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = command_modules()
    used = {c.group for m in modules for c in m.COMMANDS}
    # a declared command named like a group (its subcommands from a registry) takes the
    # group's place in the listing
    as_group = {c.name: c for m in modules for c in m.COMMANDS
                if c.group is None and c.name in GROUPS}
    members: dict[str, list[Any]] = {}  # a group's commands, in order

    def add_group(gp: argparse.ArgumentParser, group: str) -> None:
        group_sub = gp.add_subparsers(dest=f"{group}_command", metavar="COMMAND")
        for command in members[group]:
            command.add_to(group_sub)
        gp.set_defaults(func=lambda _args: print_help(gp))

    for group, help_text in GROUPS.items():
        if group in as_group:
            as_group[group].add_to(sub)
        elif group in used and help_text is not None:
            members[group] = []
            sub.add_lazy_parser(  # type: ignore[attr-defined]
                group, lambda gp, _g=group: add_group(gp, _g), help=help_text,
                description=help_text)
    for module in modules:
        for command in module.COMMANDS:
            if command.group is None and command.name in as_group:
                continue  # added in its group's place
            if command.group:
                members[command.group].append(command)
            else:
                command.add_to(sub)
    return parser


def walk_parsers(parser: argparse.ArgumentParser | None = None, path: str = "nqkit"
                 ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every (sub)command's parser, with its command line (``nqkit eval nq``), its
    registry-built subcommands included."""
    parser = parser if parser is not None else build_parser()
    if isinstance(parser, NqkitArgumentParser):
        parser._ensure()
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk_parsers(sub, f"{path} {name}")


def vocabulary_table() -> str:
    """docs/vocabulary.md's table: each concept of :data:`nqkit.vocabulary.TERMS`, its
    flag, library argument and signature key, the commands that take it and the old
    spellings each still accepts (read from the commands' parsers)."""
    from nqkit.settings import DeprecatedOption
    from nqkit.vocabulary import TERMS

    used: dict[str, list[str]] = {}
    old: dict[str, dict[str, list[str]]] = {}
    for path, parser in walk_parsers():
        command = path.removeprefix("nqkit ")
        for action in parser._actions:
            if isinstance(action, DeprecatedOption):
                for o in action.option_strings:
                    old.setdefault(action.dest, {}).setdefault(o, []).append(command)
            elif action.help != argparse.SUPPRESS:
                used.setdefault(action.dest, []).append(command)
    def listed(commands: Iterable[str], most: int) -> str:
        names = sorted(set(commands))
        if len(names) > most:
            return f"{len(names)} commands"
        return ", ".join(f"`{c}`" for c in names)

    rows = ["| concept | flag | library argument | signature key | commands | old spellings "
            "(one release) |", "|---|---|---|---|---|---|"]
    for t in TERMS:
        p = t.param
        if p.flag.startswith("-"):
            flag = f"`{p.short}/{p.flag}`" if p.short else f"`{p.flag}`"
        else:
            flag = f"positional `{p.metavar}`"
        olds = "; ".join(f"`{o}` ({listed(cs, 3)})"
                         for o, cs in sorted(old.get(p.name, {}).items()))
        rows.append(f"| {t.concept} | {flag} | `{p.name}` | {t.signature or '-'} | "
                    f"{listed(used.get(p.name, ()), 4) or '-'} | {olds or '-'} |")
    return "\n".join(rows) + "\n"


def check_files(args: argparse.Namespace) -> None:
    """Before a command runs: none of its outputs is one of its inputs or another output
    (:func:`nqkit.io.check_collisions`), by the file roles its declarations give its
    options (``Param(output=True)``, ``Param(input=True)``)."""
    from nqkit.io import check_collisions

    parser = getattr(args, "nqkit_parser", None)
    if parser is None:
        return
    roles: dict[str, list[tuple[str, Any]]] = {"input": [], "output": []}
    for action in parser._actions:
        role = getattr(action, "nqkit_role", None)
        value = getattr(args, action.dest, None)
        if role is None or value is None:
            continue
        label = action.option_strings[0] if action.option_strings else str(
            action.metavar or action.dest)
        values = value if isinstance(value, list | tuple) else [value]
        roles[role].extend((label, v) for v in values if isinstance(v, str | os.PathLike))
    check_collisions(roles["output"], roles["input"])


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the process receives SIGTERM.

    A ``KeyboardInterrupt``, so everything that cleans up after Ctrl-C (``finally``
    blocks, worker pools, temporary files) cleans up after SIGTERM too.
    """


class _Failed(Exception):
    """A command returned a non-zero exit code: its outputs are discarded."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


_UNWINDING_PID = 0  # the process whose SIGTERM unwinds (set by _sigterm_unwinds)


def _raise_terminated(signum: int, frame: Any) -> None:
    if os.getpid() != _UNWINDING_PID:
        # a worker forked from the command, stopped before its pool initializer replaced
        # this inherited handler (nqkit.workers): it ends as SIGTERM ends any process,
        # without a traceback of its own
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    raise Terminated


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """Turn SIGTERM into :class:`Terminated` while the block runs (main thread only)."""
    global _UNWINDING_PID
    _UNWINDING_PID = os.getpid()
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    from nqkit.io import output_transaction

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # a usage error, already reported in one line: return its code
        if e.code in (0, None):
            raise  # --help and --version
        return e.code if isinstance(e.code, int) else 2
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    import shlex

    from nqkit.io.provenance import command_line

    command_line.set("nqkit " + shlex.join(sys.argv[1:] if argv is None else argv))
    try:
        with _sigterm_unwinds(), output_transaction():
            check_files(args)
            code = int(func(args) or 0)
            if code:
                raise _Failed(code)
    except _Failed as e:
        return e.code
    except NqkitError as e:
        print(f"nqkit: error: {e}", file=sys.stderr)
        return 2
    except Terminated:
        print("nqkit: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("nqkit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
