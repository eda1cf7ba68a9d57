"""What a file looks like: NQ, NQ-open or AmbigNQ gold, or predictions of them.

Read from the first 64 KB of a file, for one clear line when a command is given the files
of another task (``this looks like AmbigNQ gold, not NQ-open — use nqkit eval ambigqa``)
or the gold and the predictions the wrong way round, instead of the reader's "malformed
JSON" on a valid file. A file that is none of these clearly (or a pipe, read once by its
own reader) is left to the task's reader, which explains.
"""

from __future__ import annotations

from typing import Any

from nqkit.errors import InputError
from nqkit.io import PathsLike, expand_paths

__all__ = ["KIND_NAMES", "check_gold_kind", "check_not_swapped", "sniff_gold", "sniff_predictions"]

KIND_NAMES = {"nq": "Natural Questions (original or simplified)", "nq-open": "NQ-open",
               "ambigqa": "AmbigNQ"}


def _head(paths: PathsLike) -> bytes | None:
    """The first 64 KB of the first file, or None (a pipe is read once, by the task's own
    reader; a file that cannot be read is its reader's to report)."""
    from nqkit.io import open_binary
    from nqkit.io.paths import is_regular_file

    try:
        first = expand_paths(paths, what="gold")[0]
        if not is_regular_file(first):
            return None
        with open_binary(first) as f:
            head: bytes = f.read(1 << 16)
    except (InputError, OSError, EOFError):
        return None
    return head


def sniff_gold(gold: PathsLike) -> str | None:
    """What the first gold file looks like: ``nq``, ``nq-open``, ``ambigqa``, or None when
    it is none of them clearly (then the task's own reader decides and explains)."""
    import orjson

    head = _head(gold)
    if head is None:
        return None
    text = head.lstrip()
    if text.startswith(b"["):
        if b'"singleAnswer"' in head or b'"multipleQAs"' in head:
            return "ambigqa"
        return None
    if not text.startswith(b"{"):
        return None
    if any(k in head for k in (b'"document_html"', b'"document_text"',
                               b'"long_answer_candidates"')):
        return "nq"
    line = text.split(b"\n", 1)[0]
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if isinstance(obj, dict) and isinstance(obj.get("question"), str) and "annotations" \
            not in obj and isinstance(obj.get("answer", obj.get("answers")), list):
        return "nq-open"
    return None


def check_gold_kind(task: str, gold: PathsLike, *, command: str = "browse") -> None:
    """One clear error when the gold is clearly another task's, with the command or flag
    that fits: ``browse --task KIND`` (``command`` "browse"), ``nqkit eval KIND``
    ("eval"), ``nqkit compare KIND`` ("compare")."""
    kind = sniff_gold(gold)
    if kind is None or kind == task or (task == "retrieval" and kind == "nq-open"):
        return
    first = expand_paths(gold, what="gold")[0]
    if command == "browse":
        fix = "drop --task (nq is the default)" if kind == "nq" else f"add --task {kind}"
    else:
        fix = f"use `nqkit {command} {kind}`"
    raise InputError(first, f"this looks like {KIND_NAMES[kind]} gold, not "
                     f"{KIND_NAMES.get(task, task)}", fix)


def sniff_predictions(path: Any) -> str | None:
    """``nq-open`` for a file whose first line is an object with a ``prediction`` (NQ-open
    predictions), ``nq`` for an object with ``predictions`` (official NQ predictions), None
    otherwise (or when it cannot be read here)."""
    import orjson

    head = _head(path)
    if head is None:
        return None
    text = head.lstrip()
    if text.startswith(b"{") and b'"predictions"' in head[:4096]:
        return "nq"
    try:
        obj = orjson.loads(text.split(b"\n", 1)[0])
    except orjson.JSONDecodeError:
        return None
    if isinstance(obj, dict) and "prediction" in obj and "question" in obj:
        return "nq-open"
    return None


def check_not_swapped(task: str, gold: PathsLike, predictions: Any) -> None:
    """One clear error when the predictions file is clearly the task's gold and the gold
    its predictions: the two files given the wrong way round."""
    if (task not in KIND_NAMES or sniff_gold(predictions) != task
            or sniff_predictions(predictions) == task):  # a file may carry both
        return
    first = expand_paths(gold, what="gold")[0]
    if sniff_predictions(first) == task:
        raise InputError(f"--predictions {predictions}", f"looks like {KIND_NAMES[task]} "
                         f"gold, and --gold {first} like predictions", "give the gold with "
                         "--gold and the predictions with --predictions (swapped?)")
