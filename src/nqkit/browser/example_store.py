"""An on-disk store of NQ examples for the browser: random access by example id.

A dev shard is ~1.1 GB of JSON (~180 MB gzipped) and one line (one example) is ~800 KB,
nearly all page HTML and tokens. The browser needs a short summary of every example (for
the index page) and, for one page view, one whole example. So each input file is
converted once into a *shard store*, a directory that describes itself:

* ``params.json`` — the format version, the source file (absolute path, size, mtime in
  ns), how lines are stored, and the number of examples;
* ``offsets.npy`` — int64 ``(n, 2)``: start and end byte of each example's line;
* ``blobs.bin`` — for gzipped inputs only: every line compressed on its own (deflate),
  and ``offsets.npy`` indexes this file. A gzip stream cannot be entered in the middle, so
  per-line blobs make one example ~1 ms to decompress instead of seconds of re-reading the
  shard. For plain ``.jsonl`` inputs the offsets index the source file itself and nothing
  is copied.
* ``summary.json`` — per example: id, question, title, line number, annotations and the
  short/long answer texts the index page shows.

Stores live in ``$NQKIT_HOME/cache/browse`` (default ``~/.cache/nqkit/browse``), one per
input file, in a directory named by a hash of the file's absolute path, size and mtime:
a changed file gets a new store, so a store is never stale. A store is built in a
temporary directory and renamed into place when complete; nothing is ever written next
to the data. Shards are converted in parallel, one process per shard.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import types
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from nqkit.errors import InputError, location
from nqkit.formats.nq import (
    Annotation,
    NqExample,
    SimplifiedNqExample,
    Span,
    _Parser,
    example_from_json,
    is_simplified,
    simplified_from_json,
    tag_type,
    validate_nq_json,
)
from nqkit.formats.nq_gold import GoldExample
from nqkit.io import (
    PathsLike,
    atomic_directory,
    expand_paths,
    is_gzip,
    iter_lines,
    parse_json_line,
)
from nqkit.text.display import join_words, page_words, simplified_words

_compressor: types.ModuleType
try:  # isal compresses several times faster than zlib, in the same deflate format
    from isal import isal_zlib as _compressor
except ImportError:  # pragma: no cover - depends on the platform
    _compressor = zlib

STORE_VERSION = 3  # 2: readable snippet text (nqkit.text.display); 3: every token checked
_SNIPPET_CHARS = 240


def cache_root(override: str | os.PathLike[str] | None = None) -> Path:
    """Where shard stores live: ``override``, else ``$NQKIT_HOME/cache/browse``, else ~/.cache."""
    if override:
        return Path(override)
    from nqkit.io import cache_home

    return cache_home() / "browse"


def store_key(path: Path) -> str:
    from nqkit.io import file_stamp

    blob = orjson.dumps({"v": STORE_VERSION, "path": str(path.resolve()),
                         "stamp": file_stamp(path)})
    return hashlib.sha256(blob).hexdigest()[:32]


# ------------------------------------------------------------------------ summaries

@dataclass(frozen=True, slots=True)
class ExampleSummary:
    """What the index page shows of one example (no page HTML)."""

    example_id: int | str
    shard: int  # index of its file in the store's file list
    row: int  # position in that file's store
    line: int  # 1-based line number in the source file (for messages)
    question: str
    title: str
    simplified: bool  # the source line is in the simplified format
    annotations: tuple[Annotation, ...]
    long_types: tuple[str | None, ...]  # type of each annotation's long answer
    long_text: str  # a snippet of the most agreed long answer ('' when none)
    short_text: str  # the most agreed short answer's text, or YES / NO ('' when none)
    num_candidates: int

    def gold(self) -> GoldExample:
        return GoldExample(self.example_id, self.annotations, self.question, self.long_types)


def _span_list(s: Span) -> list[int]:
    return [s.start_byte, s.end_byte, s.start_token, s.end_token]


def _summary_to_json(s: ExampleSummary) -> list[Any]:
    anns = [[a.annotation_id, _span_list(a.long_answer), a.candidate_index,
             [_span_list(x) for x in a.short_answers], a.yes_no_answer] for a in s.annotations]
    return [s.example_id, s.line, s.question, s.title, s.simplified, anns, list(s.long_types),
            s.long_text, s.short_text, s.num_candidates]


def _summary_from_json(row: list[Any], shard: int, index: int) -> ExampleSummary:
    ex_id, line, q, title, simp, anns, types, long_text, short_text, ncand = row
    annotations = tuple(
        Annotation(aid, Span(*la), ci, tuple(Span(*x) for x in shorts), yn)
        for aid, la, ci, shorts, yn in anns)
    return ExampleSummary(ex_id, shard, index, line, q, title, simp, annotations, tuple(types),
                          long_text, short_text, ncand)


def _tokens_of(d: dict[str, Any]) -> list[str]:
    if "document_tokens" in d:
        return [t["token"] for t in d["document_tokens"]]
    return str(d["document_text"]).split(" ")


def _html_flags(d: dict[str, Any], tokens: list[str]) -> list[bool]:
    if "document_tokens" in d:
        return [bool(t["html_token"]) for t in d["document_tokens"]]
    return [len(t) > 2 and t[0] == "<" and t[-1] == ">" for t in tokens]


def _text_of(d: dict[str, Any], tokens: list[str], html: list[bool]) -> Callable[[int, int], str]:
    """The readable text of a token range of the line (as the example page shows it)."""
    if "document_tokens" not in d:
        return lambda start, end: join_words(*simplified_words(tokens[start:end]))
    data = str(d["document_html"]).encode("utf-8")
    toks = d["document_tokens"]

    def text(start: int, end: int) -> str:
        return join_words(*page_words(data, (
            (t["start_byte"], t["end_byte"], t["token"])
            for t, h in zip(toks[start:end], html[start:end], strict=True) if not h)))

    return text


def summarize_line(line: bytes, where: str | None, shard: int, row: int, lineno: int
                   ) -> ExampleSummary:
    """Validate one NQ line (original or simplified) enough to index it, and summarize it."""
    d = parse_json_line(line, where)
    if not isinstance(d, dict):
        raise InputError(where, f"expected a JSON object, found {type(d).__name__}",
                         "each line must be one NQ example")
    validate_nq_json(d, where, string_ids=True)  # as every nqkit reader checks a line
    p = _Parser(where)
    simplified = is_simplified(d)
    ex_id = p.get(d, "example_id", (int, str), "example")
    question = p.get(d, "question_text", str, "example")
    if simplified:
        p.get(d, "document_text", str, "example")
    else:
        p.get(d, "document_html", str, "example")
        p.get(d, "document_tokens", list, "example")
    cands = p.get(d, "long_answer_candidates", list, "example")
    anns = tuple(p.annotation(a, i, bytes_required=False)
                 for i, a in enumerate(d.get("annotations") or ()))
    try:
        tokens = _tokens_of(d)
        flags = _html_flags(d, tokens)
        text = _text_of(d, tokens, flags)
    except (KeyError, TypeError) as e:
        raise InputError(where, f"malformed document tokens ({e.__class__.__name__}: {e})",
                         "check the file is in the Natural Questions format") from None
    n = len(tokens)

    def check(s: Span, ctx: str) -> None:
        if s.has_tokens and s.end_token > n:
            raise InputError(where, f"{ctx} ends at token {s.end_token} but the document has "
                             f"{n} tokens", "check the file is in the Natural Questions format")

    types: list[str | None] = []
    for i, a in enumerate(anns):
        check(a.long_answer, f"annotations[{i}].long_answer")
        for j, s in enumerate(a.short_answers):
            check(s, f"annotations[{i}].short_answers[{j}]")
        types.append(tag_type(tokens[a.long_answer.start_token])
                     if a.has_long and a.long_answer.has_tokens else None)
    long_text = ""
    longs = Counter((a.long_answer.start_token, a.long_answer.end_token)
                    for a in anns if a.has_long and a.long_answer.has_tokens)
    if longs:
        (s0, e0), _ = longs.most_common(1)[0]
        long_text = text(s0, min(e0, s0 + 80))[:_SNIPPET_CHARS]
    short_text = ""
    shorts = Counter(
        a.yes_no_answer if a.yes_no_answer != "NONE" else
        " / ".join(text(s.start_token, s.end_token)
                   for s in a.short_answers if s.has_tokens)
        for a in anns if a.has_short)
    if shorts:
        short_text = shorts.most_common(1)[0][0][:_SNIPPET_CHARS]
    title = str(d.get("document_title") or "")
    if not title and simplified:
        title = SimplifiedNqExample(ex_id, question, str(d.get("document_url", "")), "", (),
                                    ()).document_title
    return ExampleSummary(ex_id, shard, row, lineno, question, title, simplified, anns,
                          tuple(types), long_text, short_text, len(cands))


# --------------------------------------------------------------------- shard stores

def _build_shard(path: str, shard: int, out_dir: str) -> int:
    """Convert one input file into a store directory at ``out_dir``; returns its size."""
    src = Path(path)
    gz = is_gzip(src)
    st = src.stat()
    with atomic_directory(out_dir, what="shard store", shared=True) as tmp:
        offsets: list[tuple[int, int]] = []
        rows: list[list[Any]] = []
        ids: set[int | str] = set()
        pos = 0
        with open(tmp / "blobs.bin", "wb") if gz else contextlib.nullcontext() as blobs:
            if gz:
                assert blobs is not None
                for lineno, line in iter_lines(src):
                    where = location(src, lineno)
                    s = summarize_line(line, where, shard, len(rows), lineno)
                    _check_unique(ids, s.example_id, where)
                    z = _compressor.compress(line.rstrip(b"\r\n"), 1)
                    blobs.write(z)
                    offsets.append((pos, pos + len(z)))
                    pos += len(z)
                    rows.append(_summary_to_json(s))
            else:
                with open(src, "rb") as f:
                    for lineno, line in enumerate(f, 1):
                        start, pos = pos, pos + len(line)
                        if not line.strip():
                            continue
                        where = location(src, lineno)
                        s = summarize_line(line, where, shard, len(rows), lineno)
                        _check_unique(ids, s.example_id, where)
                        offsets.append((start, start + len(line.rstrip(b"\r\n"))))
                        rows.append(_summary_to_json(s))
        if not rows:
            raise InputError(src, "no examples found (the input is empty)",
                             "give non-empty NQ .jsonl or .jsonl.gz files")
        np.save(tmp / "offsets.npy", np.asarray(offsets, dtype=np.int64).reshape(-1, 2))
        (tmp / "summary.json").write_bytes(orjson.dumps(rows))
        params = {"version": STORE_VERSION, "source": str(src.resolve()),
                  "size": st.st_size, "mtime_ns": st.st_mtime_ns,
                  "storage": "blobs" if gz else "source", "examples": len(rows)}
        (tmp / "params.json").write_bytes(orjson.dumps(params, option=orjson.OPT_INDENT_2))
    return len(rows)


def _check_unique(ids: set[int | str], ex_id: int | str, where: str | None) -> None:
    if ex_id in ids:
        raise InputError(where, f"duplicate example_id {ex_id}",
                         "example ids must be unique; give each shard once")
    ids.add(ex_id)


class ShardStore:
    """Random access to the lines of one converted input file."""

    def __init__(self, directory: Path, source: Path) -> None:
        self.directory = directory
        self.source = source
        params = orjson.loads((directory / "params.json").read_bytes())
        if params.get("version") != STORE_VERSION:
            raise ValueError("store version mismatch")
        self.storage: str = params["storage"]
        self.offsets = np.load(directory / "offsets.npy")
        if len(self.offsets) != params["examples"]:
            raise ValueError("store is incomplete")
        # The file to read lines from is fixed here, never derived from a request.
        self._data_path = directory / "blobs.bin" if self.storage == "blobs" else source

    def summaries(self, shard: int) -> list[ExampleSummary]:
        rows = orjson.loads((self.directory / "summary.json").read_bytes())
        return [_summary_from_json(r, shard, i) for i, r in enumerate(rows)]

    def line(self, row: int) -> bytes:
        start, end = (int(x) for x in self.offsets[row])
        with open(self._data_path, "rb") as f:
            f.seek(start)
            data = f.read(end - start)
        return zlib.decompress(data) if self.storage == "blobs" else data


class ExampleStore:
    """All input files of a browser session: summaries in memory, documents on disk."""

    def __init__(self, files: Sequence[Path], shards: Sequence[ShardStore]) -> None:
        self.files = list(files)
        self.shards = list(shards)
        self.summaries: list[ExampleSummary] = []
        self.by_id: dict[int | str, ExampleSummary] = {}
        for i, sh in enumerate(self.shards):
            for s in sh.summaries(i):
                if s.example_id in self.by_id:
                    raise InputError(location(self.files[i], s.line),
                                     f"duplicate example_id {s.example_id} across files",
                                     "give each shard once; example ids must be unique")
                self.by_id[s.example_id] = s
                self.summaries.append(s)

    def __len__(self) -> int:
        return len(self.summaries)

    def lookup(self, key: str) -> ExampleSummary | None:
        """The example whose id, written as text, is ``key`` (ids may be int or str)."""
        s = self.by_id.get(key)
        if s is None:
            with contextlib.suppress(ValueError):
                s = self.by_id.get(int(key))
        return s

    def load(self, s: ExampleSummary) -> NqExample | SimplifiedNqExample:
        """The full example (page HTML, tokens, candidates), parsed from its stored line."""
        where = location(self.files[s.shard], s.line)
        d = parse_json_line(self.shards[s.shard].line(s.row), where)
        try:
            if s.simplified:
                return simplified_from_json(d, where)
            return example_from_json(d, where)
        except (KeyError, TypeError) as e:
            raise InputError(where, f"malformed example ({e.__class__.__name__}: {e})",
                             "check the file is in the Natural Questions format") from None


def _open_shard(directory: Path, source: Path) -> ShardStore | None:
    try:
        return ShardStore(directory, source)
    except (OSError, ValueError, KeyError):
        return None


def open_store(paths: PathsLike, *, cache_dir: str | os.PathLike[str] | None = None,
               workers: int | None = None, progress: bool = True) -> ExampleStore:
    """Open (building once where needed) the stores of the given NQ files.

    Raises :class:`InputError` on missing or malformed inputs, naming file and line.
    """
    files = expand_paths(paths, what="NQ")
    root = cache_root(cache_dir)
    for f in files:
        if root.resolve() == f.resolve().parent:
            raise InputError(root, "the cache directory is a data directory",
                             "choose a cache directory outside the data directories")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # a place the system refuses (/proc, a read-only mount): one line
        raise InputError(f"--cache-dir {root}", f"cannot be created ({e.strerror or e})",
                         "choose a cache directory you can write to") from None
    dirs = [root / store_key(f) for f in files]
    shards: list[ShardStore | None] = [_open_shard(d, f) for d, f in zip(dirs, files, strict=True)]
    todo = [i for i, s in enumerate(shards) if s is None]
    if todo:
        for i in todo:  # a broken leftover store is rebuilt from scratch
            shutil.rmtree(dirs[i], ignore_errors=True)
        _build(files, dirs, todo, workers, progress)
        for i in todo:
            shards[i] = ShardStore(dirs[i], files[i])
    return ExampleStore(files, [s for s in shards if s is not None])


def _build(files: list[Path], dirs: list[Path], todo: list[int], workers: int | None,
           show: bool) -> None:
    from nqkit.report import progress

    workers = max(1, min(len(todo), workers or os.cpu_count() or 1))
    desc = f"indexing {len(todo)} NQ file{'s' * (len(todo) > 1)} (once)"
    if workers == 1:
        for i in progress(todo, desc=desc, unit="file") if show else todo:
            _build_shard(str(files[i]), i, str(dirs[i]))
        return
    from nqkit.workers import process_pool

    with process_pool(workers) as pool:  # Ctrl-C stops the workers at once, quietly
        futures = [pool.submit(_build_shard, str(files[i]), i, str(dirs[i])) for i in todo]
        done = (f.result() for f in futures)
        for _ in progress(done, desc=desc, total=len(todo), unit="file") if show else done:
            pass
