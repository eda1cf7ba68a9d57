"""An on-disk cache of NQ gold annotations, so a repeated evaluation takes well under a second.

The key is the list of gold files with their absolute paths, sizes and modification times
(nanoseconds), plus the cache format version; any change to a file gives a new key, so an
entry is never stale. Entries are compact JSON written atomically; a corrupt or unreadable
entry is ignored and rebuilt. The directory is ``$NQKIT_HOME/cache/gold`` (default
``~/.cache/nqkit/gold``) and is safe to delete at any time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

import orjson

from nqkit.formats.nq import Annotation, Span
from nqkit.formats.nq_gold import GoldExample, read_nq_gold
from nqkit.io import PathsLike, atomic_output, expand_paths

CACHE_VERSION = 1


def cache_dir() -> Path:
    home = os.environ.get("NQKIT_HOME")
    if home:
        return Path(home) / "cache" / "gold"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nqkit" / "gold"


def cache_key(files: list[Path], with_types: bool) -> str:
    entries = []
    for f in files:
        st = f.stat()
        entries.append([str(f.resolve()), st.st_size, st.st_mtime_ns])
    blob = orjson.dumps({"v": CACHE_VERSION, "types": with_types, "files": entries})
    return hashlib.sha256(blob).hexdigest()[:32]


def _span(s: Span) -> list[int]:
    return [s.start_byte, s.end_byte, s.start_token, s.end_token]


def _encode(gold: dict[int | str, GoldExample]) -> bytes:
    rows = []
    for ex in gold.values():
        anns = [[a.annotation_id, _span(a.long_answer), a.candidate_index,
                 [_span(s) for s in a.short_answers], a.yes_no_answer] for a in ex.annotations]
        rows.append([ex.example_id, ex.question_text, list(ex.long_types), anns])
    return orjson.dumps(rows)


def _decode(blob: bytes) -> dict[int | str, GoldExample]:
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
    files = expand_paths(paths, what="gold")
    if not cache:
        return read_nq_gold(files, with_types=with_types, workers=workers)
    d = cache_dir()
    keys = [cache_key(files, True)] + ([] if with_types else [cache_key(files, False)])
    for key in keys:
        entry = d / f"{key}.json"
        if entry.exists():
            with contextlib.suppress(OSError, ValueError, TypeError):
                return _decode(entry.read_bytes())
    gold = read_nq_gold(files, with_types=with_types, workers=workers)
    # A cache that cannot be written only makes the next run slower.
    with contextlib.suppress(OSError), atomic_output(d / f"{keys[-1]}.json", "wb") as f:
        f.write(_encode(gold))
    return gold
