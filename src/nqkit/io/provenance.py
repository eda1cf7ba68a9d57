"""Where a file nqkit wrote came from: a sidecar beside it, checked when it is read back.

A qrels file, overlap labels, a TREC run or a per-item file is written in its own format,
which other tools read (trec_eval, pytrec_eval, ir_measures and the official QA-Overlap
script refuse comment lines), so what made it goes beside it, in ``FILE.provenance.json``:

* ``signature``: the signature of what made the file (``qrels|source:…``,
  ``overlap|test:…|train:…|qproxy:…``, the run's or the result's);
* ``questions``: for a file whose lines are tied to a question set by number (qrels and
  TREC runs: qid = ``first-qid`` + a question's line; overlap labels: id = a row of the
  test file), that set: its split label, its size, the first qid and four bytes of each
  question's fingerprint in order;
* ``sha256`` of the file's bytes, ``command`` (the command line that wrote it) and the
  nqkit version.

Reading it back (:func:`read_provenance`) trusts the sidecar only when the file's bytes
still have its sha256 (a file edited or rewritten by another tool since keeps its name,
not its origin: a warning says so and the file is read as a foreign one); questions whose
numbers name other questions in the set the file was numbered by are refused in one line
(:func:`nqkit.splits.check_numbering`). A file without a sidecar is read as before, as any other
tool's file.

The sidecar is written inside the command's output transaction, so the file and its
sidecar appear together or not at all, and the collision check counts it among the
outputs (:func:`nqkit.io.check_collisions`).
"""

from __future__ import annotations

import contextvars
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nqkit.io.paths import STDIO, PathLike, sidecar

__all__ = [
    "Provenance",
    "command_line",
    "read_provenance",
    "write_provenance",
]

FORMAT = 1

# the command line being run (set by nqkit.cli.main), written into every sidecar
command_line: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "nqkit_command_line", default=None)


def _sha256(path: PathLike) -> str:
    from nqkit.io.content import sha256_file

    return sha256_file(Path(path))


@dataclass(frozen=True)
class Provenance:
    """What a sidecar says about its file (read back by :func:`read_provenance`)."""

    path: str  # the file it describes
    signature: str  # what made the file
    questions: dict[str, Any] | None = None  # the question set its numbers refer to
    command: str | None = None  # the command line that wrote it
    version: str = ""  # the nqkit that wrote it
    extra: dict[str, Any] = field(default_factory=dict)

    def parts(self) -> dict[str, str]:
        """The signature's ``key:value`` fields (the task name and version left out)."""
        out: dict[str, str] = {}
        for part in self.signature.split("|")[1:]:
            key, sep, value = part.partition(":")
            if sep:  # the version (v0.1.0) has none
                out[key] = value
        return out

    @property
    def kind(self) -> str:
        """The signature's first field: ``qrels``, ``overlap``, ``retrieval``…"""
        return self.signature.split("|", 1)[0]


def write_provenance(path: PathLike, signature: str, *,
                     questions: Mapping[str, Any] | None = None,
                     extra: Mapping[str, Any] | None = None) -> None:
    """Write the sidecar of the output ``path`` (just written, maybe still staged in the
    command's output transaction); nothing for standard output."""
    from nqkit._version import __version__
    from nqkit.io.writing import staged_path, write_json

    if os.fspath(path) == STDIO:
        return
    record: dict[str, Any] = {
        "format": FORMAT, "file": Path(path).name, "sha256": _sha256(staged_path(path)),
        "signature": signature}
    if questions is not None:
        record["questions"] = dict(questions)
    if extra:
        record.update(extra)
    record["command"] = command_line.get()
    record["nqkit"] = __version__
    write_json(sidecar(path), record)


def read_provenance(path: PathLike) -> Provenance | None:
    """The provenance of ``path`` from its sidecar, or None: no sidecar, a path that is no
    regular file, or a sidecar that does not describe the file's bytes (then a warning
    says the file is read as a foreign one)."""
    import orjson

    def warn(message: str) -> None:  # as nqkit.report.warn (io sits below report)
        print(f"nqkit: warning: {message}", file=sys.stderr)

    text = os.fspath(path)
    if text == STDIO or not os.path.isfile(text):
        return None
    side = sidecar(text)
    if not side.is_file():
        return None
    try:
        record = orjson.loads(side.read_bytes())
        if not isinstance(record, dict) or not isinstance(record.get("signature"), str):
            raise ValueError("no signature")
        sha = record.get("sha256")
    except (OSError, ValueError) as e:
        warn(f"{side}: not a provenance file nqkit can read ({e}); {text} is read as a "
             "file of unknown origin")
        return None
    if sha != _sha256(text):
        warn(f"{text} has changed since nqkit wrote it (its bytes no longer have the "
             f"sha256 of {side.name}): its recorded provenance is not used")
        return None
    known = {"format", "file", "sha256", "signature", "questions", "command", "nqkit"}
    questions = record.get("questions")
    return Provenance(text, record["signature"],
                      questions if isinstance(questions, dict) else None,
                      record.get("command"), str(record.get("nqkit", "")),
                      {k: v for k, v in record.items() if k not in known})
