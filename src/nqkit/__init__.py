"""nqkit: the Natural Questions family of QA benchmarks in one toolkit.

Data readers and writers (``nqkit.formats``), the official metrics (``nqkit.metrics``),
baselines (``nqkit.baselines``), retrievers (``nqkit.retrieval``) and a browser.
Heavy modules are imported lazily; ``import nqkit`` is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nqkit._version import __version__

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["__version__"]


def _registry_paths(text: str) -> list[Path] | None:
    """Registry names wherever a path is read (``nqkit eval nq-open --gold nq-open/dev``,
    ``read_nq_open("nq-open/dev")``): :func:`nqkit.datasets.names.lookup_paths`, the
    datasets layer imported only when a text that may be a name is read."""
    from nqkit.datasets.names import lookup_paths

    return lookup_paths(text)


def _install_name_resolver() -> None:
    # The io floor knows nothing of the registry above it; the package installs the hook
    # once, for the command line, library callers and forked workers alike.
    from nqkit.io.paths import set_name_resolver

    set_name_resolver(_registry_paths)


_install_name_resolver()
