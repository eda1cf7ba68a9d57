"""Typed errors for bad input.

Every problem a user can cause (a malformed file, a wrong id, an invalid span) raises
:class:`InputError`. Its message is one line naming where (file and line, or example id),
what was found, what was expected and how to fix it. The CLI prints it to stderr as
``nqkit: error: <message>`` and exits with code 2, without a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

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

    @property
    def message(self) -> str:
        text = f"{self.where}: {self.problem}" if self.where else self.problem
        if self.fix:
            text += f" — {self.fix}"
        return text


class MissingDependencyError(NqkitError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, package: str, extra: str, what: str | None = None) -> None:
        need = f"{what} needs {package}" if what else f"{package} is needed"
        super().__init__(f"{need}, which is not installed — pip install nqkit[{extra}]")


def location(path: str | os.PathLike[str] | None, line: int | None = None) -> str | None:
    """``path:line`` for messages (``line`` is 1-based)."""
    if path is None:
        return None
    p = os.fspath(path)
    return f"{p}:{line}" if line is not None else p


def examples(items: Iterable[object], limit: int = MAX_EXAMPLES) -> str:
    """``e.g. a, b, c``: the first ``limit`` items, so that a message stays one short line.

    The message itself gives the count; this gives a few examples to look at.
    """
    shown: list[str] = []
    for item in items:
        if len(shown) == limit:
            break
        shown.append(str(item))
    return "e.g. " + ", ".join(shown)
