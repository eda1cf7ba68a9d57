"""File access shared by every format: the floor of nqkit, importing nothing above it.

* :mod:`nqkit.io.paths` — inputs: a path, a glob pattern or a list of either
  (:func:`expand_paths`), ``-`` for standard input, registry names through a resolver the
  datasets layer installs (:func:`set_name_resolver`); shards are read in sorted order.
* :mod:`nqkit.io.reading` — gzip (``isal`` when installed), lines, JSON lines, JSON.
* :mod:`nqkit.io.writing` — atomic output files (:func:`atomic_output`) and directories
  (:func:`atomic_directory`), output checks before any work, and the output transaction
  every CLI command runs in.

Every public name is importable from ``nqkit.io`` itself.
"""

from __future__ import annotations

from nqkit.io.paths import (
    STDIO,
    ExpandedPaths,
    NameResolver,
    PathLike,
    PathsLike,
    expand_paths,
    is_regular_file,
    name_resolver,
    set_name_resolver,
)
from nqkit.io.reading import (
    decode_utf8,
    gc_paused,
    is_gzip,
    iter_jsonl,
    iter_line_spans,
    iter_lines,
    open_binary,
    parse_json_line,
    read_json,
)
from nqkit.io.writing import (
    atomic_directory,
    atomic_output,
    check_new_directory,
    check_output,
    ensure_not_input,
    make_temp,
    output_transaction,
    remove_stale_temps,
    staged_path,
    write_json,
    write_jsonl,
)

__all__ = [
    "STDIO",
    "ExpandedPaths",
    "NameResolver",
    "PathLike",
    "PathsLike",
    "atomic_directory",
    "atomic_output",
    "check_new_directory",
    "check_output",
    "decode_utf8",
    "ensure_not_input",
    "expand_paths",
    "gc_paused",
    "is_gzip",
    "is_regular_file",
    "iter_jsonl",
    "iter_line_spans",
    "iter_lines",
    "make_temp",
    "name_resolver",
    "open_binary",
    "output_transaction",
    "parse_json_line",
    "read_json",
    "remove_stale_temps",
    "set_name_resolver",
    "staged_path",
    "write_json",
    "write_jsonl",
]
