"""Metric signatures: every setting that changes a number, the version last.

``nq|long-thr:2|short-thr:2|missing:error|v0.1.0`` — printed under every result table and
stored in every JSON result, so that two numbers can be compared only when their
signatures are equal (the idea of sacrebleu's signatures).
"""

from __future__ import annotations

from collections.abc import Mapping

from nqkit import __version__


def make_signature(task: str, settings: Mapping[str, object]) -> str:
    """Build ``task|key:value|...|vX.Y.Z`` from ordered settings."""
    parts = [task]
    for key, value in settings.items():
        if isinstance(value, bool):
            value = "yes" if value else "no"
        parts.append(f"{key}:{value}")
    parts.append(f"v{__version__}")
    return "|".join(parts)
