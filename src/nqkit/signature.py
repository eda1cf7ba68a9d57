"""Metric signatures: every setting that changes a number, the version last.

``nq|long-thr:2|short-thr:2|missing:error|v0.1.0`` — printed under every result table and
stored in every JSON result, so that two numbers can be compared only when their
signatures are equal (the idea of sacrebleu's signatures).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nqkit._version import __version__


@dataclass(frozen=True, slots=True)
class ResultWarning:
    """A number that is computed correctly but means less than it seems.

    Printed first (``nqkit: warning: <message>`` on stderr), kept in JSON output under
    ``warnings``, and marked in the signature as ``warn:<code>+<code>`` so that a number
    carrying a warning is never compared as if it were clean. A warning never changes a
    number; where a number cannot mean anything the run is refused instead.
    """

    code: str  # short mark for the signature, e.g. "all-null"
    message: str  # one line: what was found, what it does to the number, what fixes it

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


def make_signature(task: str, settings: Mapping[str, object],
                   warnings: Iterable[ResultWarning] = ()) -> str:
    """Build ``task|key:value|...|vX.Y.Z`` from ordered settings (and warning marks)."""
    parts = [task]
    for key, value in settings.items():
        if isinstance(value, bool):
            value = "yes" if value else "no"
        parts.append(f"{key}:{value}")
    parts.append(f"v{__version__}")
    return mark_signature("|".join(parts), warnings)


def mark_signature(signature: str, warnings: Iterable[ResultWarning]) -> str:
    """Insert ``warn:code+code`` before the version of ``signature`` (no-op without any);
    a signature that is marked already keeps one mark, the new codes added to it."""
    new = [w.code for w in warnings]
    if not new:
        return signature
    parts = signature.split("|")
    tail = [parts.pop()] if len(parts) > 1 and not parts[-1].startswith("warn:") else []
    codes = parts.pop().removeprefix("warn:").split("+") \
        if len(parts) > 1 and parts[-1].startswith("warn:") else []
    for code in new:
        if code not in codes:
            codes.append(code)
    return "|".join([*parts, "warn:" + "+".join(codes), *tail])


def warnings_json(warnings: Sequence[ResultWarning]) -> list[dict[str, str]]:
    return [w.to_json() for w in warnings]
