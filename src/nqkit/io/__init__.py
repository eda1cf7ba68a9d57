"""File access shared by every format: the floor of nqkit, importing nothing above it.

* :mod:`nqkit.io.paths` — inputs: a path, a glob pattern or a list of either
  (:func:`expand_paths`), ``-`` for standard input, registry names through a resolver the
  datasets layer installs (:func:`set_name_resolver`); shards are read in sorted order.
* :mod:`nqkit.io.reading` — gzip (``isal`` when installed), lines, JSON lines, JSON.
* :mod:`nqkit.io.writing` — atomic output files (:func:`atomic_output`) and directories
  (:func:`atomic_directory`), output checks before any work, and the output transaction
  every CLI command runs in.
* :mod:`nqkit.io.content` — SHA-256 of files and the record of file states already
  verified, so an artifact is trusted for its content and hashed once per state.
* :mod:`nqkit.io.provenance` — where a file nqkit wrote came from: its sidecar
  (``FILE.provenance.json``), written with it and checked when it is read back.

Every public name is importable from ``nqkit.io`` itself.
"""

from __future__ import annotations

from nqkit.io import content, paths, provenance, reading, writing
from nqkit.io.content import *  # noqa: F403
from nqkit.io.paths import *  # noqa: F403 - the names of each module's __all__
from nqkit.io.provenance import *  # noqa: F403
from nqkit.io.reading import *  # noqa: F403
from nqkit.io.writing import *  # noqa: F403

__all__ = [*content.__all__, *paths.__all__, *provenance.__all__, *reading.__all__,
           *writing.__all__]
