"""Named exact-match conventions for open-domain QA, one module each.

Each module of this package declares one published rule and registers it
(:func:`nqkit.conventions.base.register`); the package is searched on first use, so adding
a convention is adding a module (see docs/contributing.md). :func:`get_convention` and
:func:`convention_names` are what the tasks, ``nqkit overlap`` and the browser use.
"""

from __future__ import annotations

from nqkit.conventions.base import (
    EmConvention,
    convention_names,
    get_convention,
    register,
)

__all__ = ["EmConvention", "convention_names", "get_convention", "register"]
