"""An on-disk cache of NQ gold annotations, so a repeated evaluation takes well under a second.

The key is the list of gold files with their absolute paths and stamps (size, modification
and change times in nanoseconds, inode, device; :func:`nqkit.io.file_stamp`), plus the
cache format version; any write to a file changes its change time, which no program can
set back, so an entry is never stale. Files that are not regular (a FIFO, ``<(zcat ...)``) are never
cached: their name says nothing about their content.

An entry verifies itself: its first line is a header naming the format, its version, the
key and the SHA-256 of the body (compact JSON) that follows. An entry whose header, version,
key or checksum does not match, or whose body does not decode into well-formed records, is
ignored and rebuilt (one note on stderr), so an edited, truncated or foreign entry can never
change a number. The directory is ``$NQKIT_HOME/cache/gold`` (default
``~/.cache/nqkit/gold``) and is safe to delete at any time.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
from typing import Any

import orjson

from nqkit.errors import NqkitError
from nqkit.formats.nq import Annotation, Span
from nqkit.formats.nq_gold import GoldExample, PendingGold
from nqkit.io import (
    PathsLike,
    atomic_output,
    cache_home,
    expand_paths,
    file_stamp,
    gc_paused,
    is_regular_file,
)

CACHE_VERSION = 3  # 3: keyed by the full stamp
_MAGIC = "nqkit-gold-cache"


class _BadEntry(Exception):
    """A cache entry that cannot be trusted (the reason is the message)."""


def cache_dir() -> Path:
    return cache_home() / "gold"


def cache_key(files: list[Path], with_types: bool) -> str:
    entries = []
    for f in files:
        entries.append([str(f.resolve()), *file_stamp(f)])
    blob = orjson.dumps({"v": CACHE_VERSION, "types": with_types, "files": entries})
    return hashlib.sha256(blob).hexdigest()[:32]


def _span(s: Span) -> list[int]:
    return [s.start_byte, s.end_byte, s.start_token, s.end_token]


def _encode(gold: dict[int | str, GoldExample], key: str) -> bytes:
    """A self-verifying entry: a header line (format, version, key, body checksum), the body."""
    rows = []
    for ex in gold.values():
        anns = [[a.annotation_id, _span(a.long_answer), a.candidate_index,
                 [_span(s) for s in a.short_answers], a.yes_no_answer] for a in ex.annotations]
        rows.append([ex.example_id, ex.question_text, list(ex.long_types), anns])
    body = orjson.dumps(rows)
    header = orjson.dumps({"format": _MAGIC, "version": CACHE_VERSION, "key": key,
                           "sha256": hashlib.sha256(body).hexdigest(), "size": len(body)})
    return header + b"\n" + body


def _verified_body(blob: bytes, key: str) -> bytes:
    """The body of an entry whose header and checksum match, else :class:`_BadEntry`."""
    head, sep, body = blob.partition(b"\n")
    try:
        header: Any = orjson.loads(head) if sep else None
    except orjson.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("format") != _MAGIC:
        raise _BadEntry("not a gold cache entry")
    if header.get("version") != CACHE_VERSION:
        raise _BadEntry(f"format version {header.get('version')!r}, expected {CACHE_VERSION}")
    if header.get("key") != key:
        raise _BadEntry("written for other gold files")
    if header.get("size") != len(body) or header.get("sha256") != hashlib.sha256(
            body).hexdigest():
        raise _BadEntry("checksum mismatch (truncated or modified)")
    return body


def _decode(blob: bytes, key: str) -> dict[int | str, GoldExample]:
    body = _verified_body(blob, key)
    try:
        with gc_paused():
            return _decode_body(body)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
        raise _BadEntry(f"malformed records ({e.__class__.__name__})") from e


def _decode_body(blob: bytes) -> dict[int | str, GoldExample]:
    gold: dict[int | str, GoldExample] = {}
    spans: dict[tuple[int, ...], Span] = {}  # frozen, so equal spans can share one object

    def span(offsets: list[int]) -> Span:
        key = tuple(offsets)
        s = spans.get(key)
        if s is None:
            s = spans[key] = Span(*offsets)
        return s

    for ex_id, question, types, anns in orjson.loads(blob):
        annotations = tuple(
            Annotation(aid, span(la), ci, tuple(span(s) for s in shorts), yn)
            for aid, la, ci, shorts, yn in anns)
        gold[ex_id] = GoldExample(ex_id, annotations, question, tuple(types))
    return gold


def load_nq_gold(paths: PathsLike, *, with_types: bool = False, cache: bool = True,
                 workers: int | None = None) -> dict[int | str, GoldExample]:
    """Gold annotations by example id, from the cache when the files are unchanged.

    ``with_types`` also reads each annotated long answer's type (for breakdowns).
    """
    with start_nq_gold(paths, with_types=with_types, cache=cache, workers=workers) as pending:
        return pending.result()


def start_nq_gold(paths: PathsLike, *, with_types: bool = False, cache: bool = True,
                  workers: int | None = None) -> PendingGold:
    """Start loading the gold (see :func:`load_nq_gold`): a cache hit is read at once, a
    miss is read by worker processes while the caller goes on (and is then cached)::

        with start_nq_gold(files) as pending:
            predictions = read_nq_predictions(path)  # overlaps the gold reading
            gold = pending.result()
    """
    files = expand_paths(paths, what="gold")
    names = [str(f) for f in files]
    if not cache or not all(is_regular_file(f) for f in files):
        return PendingGold(names, with_types=with_types, workers=workers)
    d = cache_dir()
    keys = [cache_key(files, True)] + ([] if with_types else [cache_key(files, False)])
    for key in keys:
        entry = d / f"{key}.json"
        try:
            blob = entry.read_bytes()
        except OSError:
            continue
        try:
            return PendingGold.done(_decode(blob, key))
        except _BadEntry as e:
            from nqkit.report import note

            note(f"ignored the gold cache entry {entry} ({e}); rebuilding it")
            with contextlib.suppress(OSError):
                entry.unlink()

    def write(gold: dict[int | str, GoldExample]) -> None:
        # A cache that cannot be written only makes the next run slower.
        with contextlib.suppress(OSError, NqkitError), atomic_output(
                d / f"{keys[-1]}.json", "wb", cache=True) as f:
            f.write(_encode(gold, keys[-1]))

    return PendingGold(names, with_types=with_types, workers=workers, then=write)
