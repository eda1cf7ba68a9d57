"""Typed errors for bad input.

Every problem a user can cause (a malformed file, a wrong id, an invalid span) raises
:class:`InputError`. Its message is one line naming where (file and line, or example id),
what was found, what was expected and how to fix it. The CLI prints it to stderr as
``nqkit: error: <message>`` and exits with code 2, without a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

MAX_EXAMPLES = 3  # a message lists at most this many examples, after the count


class NqkitError(Exception):
    """Base class of all errors nqkit raises on purpose."""


class InputError(NqkitError, ValueError):
    """Bad input given by the user.

    ``where`` is a location such as ``dev-00.jsonl.gz:412`` or ``predictions.json``;
    ``problem`` says what was found and what was expected; ``fix`` says how to repair it.
    """

    def __init__(self, where: str | os.PathLike[str] | None, problem: str, fix: str = "") -> None:
        self.where = os.fspath(where) if where is not None else None
        self.problem = problem
        self.fix = fix
        super().__init__(self.message)

    def __reduce__(self) -> tuple[type[InputError], tuple[str | None, str, str]]:
        # Exceptions pickle as cls(*args), and args is the one message here: without this
        # an InputError raised in a worker process (`data stats -j N`) cannot cross back,
        # and the pool breaks with a traceback instead of the one-line error.
        return (self.__class__, (self.where, self.problem, self.fix))

    @property
    def message(self) -> str:
        text = f"{self.where}: {self.problem}" if self.where else self.problem
        if self.fix:
            text += f" — {self.fix}"
        return text


def source_tree(package_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The root of the source checkout nqkit runs from (``ROOT/src/nqkit`` with
    ``ROOT/pyproject.toml`` naming nqkit: an editable install or ``PYTHONPATH=src``), or
    ``None`` for an installed wheel. ``package_dir`` defaults to this package's directory.
    """
    pkg = Path(package_dir) if package_dir is not None else Path(__file__).resolve().parent
    root = pkg.parent.parent
    pyproject = root / "pyproject.toml"
    if pkg.parent.name != "src" or not pyproject.is_file():
        return None
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return root if 'name = "nqkit"' in text else None


def install_hint(extra: str, package_dir: str | os.PathLike[str] | None = None) -> str:
    """The pip command that installs the optional dependencies ``extra`` where nqkit runs.

    From a source checkout: ``pip install -e ".[extra]"`` (``.`` when the current
    directory is the checkout, else its path); from an installed package:
    ``pip install "nqkit[extra]"``. Quoted, so shells that glob ``[...]`` (zsh) take it.
    """
    root = source_tree(package_dir)
    if root is None:
        return f'pip install "nqkit[{extra}]"'
    try:
        here = Path.cwd().resolve() == root
    except OSError:
        here = False
    return f'pip install -e "{"." if here else root}[{extra}]"'


class MissingDependencyError(NqkitError, ImportError):
    """An optional dependency is not installed; the message names the command that
    installs it in the way nqkit was installed (see :func:`install_hint`)."""

    def __init__(self, package: str, extra: str, what: str | None = None) -> None:
        need = f"{what} needs {package}" if what else f"{package} is needed"
        super().__init__(f"{need}, which is not installed — {install_hint(extra)}")


def location(path: str | os.PathLike[str] | None, line: int | None = None) -> str | None:
    """``path:line`` for messages (``line`` is 1-based)."""
    if path is None:
        return None
    p = os.fspath(path)
    return f"{p}:{line}" if line is not None else p


def examples(items: Iterable[object], *, limit: int = MAX_EXAMPLES, width: int | None = 50,
             quote: bool = False, more: bool = True) -> str:
    """At most ``limit`` items for a message, each cut to ``width`` characters (``None``
    for paths, which are shown whole).

    Messages that list ids, questions, keys or files use this so that one error stays one
    short line however many items are wrong: ``"a, b, c and 3,607 more"`` (without the
    count of the rest when ``more`` is false: the message gives the count itself).
    """
    shown: list[str] = []
    rest = 0
    for item in items:
        if len(shown) < limit:
            text = repr(item) if quote else str(item)
            shown.append(text if width is None or len(text) <= width else text[: width - 3] + "...")
        elif not more:
            break
        else:
            rest += 1
    out = ", ".join(shown)
    return f"{out} and {rest:,} more" if rest else out


def for_example(items: Iterable[object], limit: int = MAX_EXAMPLES) -> str:
    """``e.g. a, b, c``: :func:`examples` for a message that gives the count itself."""
    return "e.g. " + examples(items, limit=limit, width=None, more=False)
