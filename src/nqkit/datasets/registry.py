"""The dataset registry: every dataset nqkit reads, by name, with its official files.

A dataset (``nq/dev``, ``nq-open/dev``, ``dpr/psgs_w100``, ...) is one or more files, each
with its official URL and, where a public download registry publishes them, its md5 and
size in bytes (``None`` where unknown: such a file is still fetched, its size checked when
known and its sha256 recorded). Besides the facts, a dataset carries what a researcher
needs to use it correctly: what it is, its licence, its citation and how it relates to
other splits ("dpr/nq-test.qa has the questions of nq-open/dev"), because "which split is
this?" is the most common source of wrong comparisons in this field.

The built-in registry is data inside the package, beside this module: the facts in
``official-sources.tsv`` (where each file is officially published, with md5 and size where
a public download registry publishes them; the table as published, never edited by hand)
and the prose in ``catalog.json`` (title, format, count, licence, citation, homepage,
description and relations of each dataset). Users add their own datasets as a registry
JSON (``{"format": "nqkit-registry", "version": 1, "datasets": [{"name", "title",
"format", "licence", ..., "files": [{"name", "url", "md5", "size"}]}]}``, see
docs/data.md) or a TSV with the columns ``dataset file url md5
size`` (optionally ``format``, ``licence``, ``description``, ``archive``) — given with
``--registry FILE`` or listed in ``NQKIT_REGISTRY`` (paths separated by ``:``). A name is
defined once: a user registry cannot silently redefine a built-in dataset (fetch the
official files from elsewhere with ``--mirror`` instead).
"""

from __future__ import annotations

import csv
import difflib
import functools
import io
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from nqkit.errors import InputError, examples, location

__all__ = [
    "FORMATS",
    "REGISTRY_ENV",
    "DataFile",
    "Dataset",
    "DatasetRegistry",
    "builtin_registry",
    "load_registry",
    "parse_shards",
    "read_registry_file",
]

REGISTRY_ENV = "NQKIT_REGISTRY"
SOURCES = "official-sources.tsv"  # the built-in files: URL, md5, size (as published)
# further files, for datasets the official table does not list (QA-Overlap's annotations)
MORE_SOURCES = "more-sources.tsv"
CATALOG = "catalog.json"  # the built-in datasets: what each is, licence, citation, ...
# sha256 of built-in files without a published checksum, each with where it comes from
PINS = "pinned-sources.tsv"

# What each format is, for `data list` and for export (see nqkit.datasets.export).
FORMATS: dict[str, str] = {
    "nq": "NQ original JSON lines (HTML, tokens, candidates, annotations)",
    "nq-simplified": "NQ simplified JSON lines (document_text)",
    "nq-open": "JSON lines {question, answer: [...]}",
    "ambignq": "JSON list of AmbigNQ examples",
    "squad": "SQuAD JSON (articles > paragraphs > questions)",
    "dpr-passages": "TSV id, text, title",
    "dpr-biencoder": "JSON list {question, answers, positive_ctxs, ...}",
    "dpr-qa": "TSV question<TAB>['answer', ...]",
    "jsonl": "JSON lines",
    "json": "JSON list",
    "tsv": "TSV with a header line",
}

# every part starts with a letter or digit, so no part is "." or ".." and a dataset's
# directory (NQKIT_HOME/data/<name>) can never lie outside NQKIT_HOME/data
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*)+")
_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
_MD5 = re.compile(r"[0-9a-f]{32}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_TSV_COLUMNS = ("dataset", "file", "url", "md5", "size")
_TSV_OPTIONAL = ("format", "licence", "description", "archive")


@dataclass(frozen=True, slots=True)
class DataFile:
    """One file of a dataset, as officially published."""

    name: str  # file name in the dataset's directory (the last part of the URL, usually)
    url: str  # official location (http, https or file)
    md5: str | None = None  # hex md5 where a public registry publishes it, else None
    size: int | None = None  # bytes where published, else None
    # hex sha256 the registry pins (PINS: published, or from a copy of the official file),
    # and where it comes from; a file with another one is another version of the file
    sha256: str | None = None
    pinned: str = ""


@dataclass(frozen=True, slots=True)
class Dataset:
    """A named dataset: its files and what a researcher needs to know to use it."""

    name: str  # e.g. "nq/dev"
    title: str  # one line: what it is
    format: str  # a key of FORMATS: how its files are read and exported
    files: tuple[DataFile, ...]  # in order (shards sorted)
    licence: str = "unknown"
    citation: str = ""
    homepage: str = ""
    description: str = ""
    relations: tuple[str, ...] = ()  # how it relates to other splits, one sentence each
    count: int | None = None  # number of examples/questions/passages where published
    unit: str = "examples"
    archive: str | None = None  # "zip": the file is an archive, extracted after download
    source: str = "built-in"  # the registry file that defines it

    @property
    def total_size(self) -> int | None:
        """Bytes of all files, or None when any size is unknown."""
        sizes = [f.size for f in self.files]
        return None if any(s is None for s in sizes) else sum(s or 0 for s in sizes)

    @property
    def checksums(self) -> str:
        """``all``, ``some`` or ``none``: how many files have a published md5 or a pinned
        sha256."""
        known = sum(f.md5 is not None or f.sha256 is not None for f in self.files)
        return "all" if known == len(self.files) else "some" if known else "none"

    def select(self, shards: str | None) -> tuple[DataFile, ...]:
        """The files picked by a shard spec (``0-1``, ``0,3,5-7``); all when ``None``."""
        if shards is None:
            return self.files
        return tuple(self.files[i] for i in parse_shards(shards, len(self.files), self.name))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "title": self.title, "format": self.format,
            "count": self.count, "unit": self.unit, "licence": self.licence,
            "citation": self.citation, "homepage": self.homepage,
            "description": self.description, "relations": list(self.relations),
            "archive": self.archive, "source": self.source,
            "files": [{"name": f.name, "url": f.url, "md5": f.md5, "size": f.size,
                       **({"sha256": f.sha256, "pinned": f.pinned} if f.sha256 else {})}
                      for f in self.files],
        }


def parse_shards(spec: str, n: int, name: str = "") -> list[int]:
    """Indices of a shard spec such as ``0-1`` or ``0,3,5-7`` over ``n`` files, in order.

    Shards are numbered from 0 like the official file names (``nq-dev-00`` ... ``-04``).
    """
    where = f"--shards {spec}"
    fix = (f"{name} has {n} file{'s' if n != 1 else ''}, numbered 0-{n - 1}; write e.g. "
           f"--shards 0-{min(1, n - 1)}")
    picked: list[int] = []
    for part in spec.split(","):
        lo_text, dash, hi_text = part.strip().partition("-")
        try:
            lo = int(lo_text)
            hi = int(hi_text) if dash else lo
        except ValueError:
            raise InputError(where, f"expected shard numbers or ranges, found {part!r}",
                             fix) from None
        if lo < 0 or hi >= n or lo > hi:
            raise InputError(where, f"shard range {part.strip()} is outside 0-{n - 1}", fix)
        picked.extend(i for i in range(lo, hi + 1) if i not in picked)
    return sorted(picked)


class DatasetRegistry:
    """Datasets by name; a name is defined once (a duplicate is an error naming both)."""

    def __init__(self, datasets: Iterable[Dataset] = ()) -> None:
        self._items: dict[str, Dataset] = {}
        for ds in datasets:
            self.add(ds)

    def add(self, ds: Dataset) -> Dataset:
        old = self._items.get(ds.name)
        if old is not None:
            mirror = (" (to fetch the official files from elsewhere use --mirror URL)"
                      if old.source == "built-in" else "")
            raise InputError(ds.source, f"dataset {ds.name} is already defined by "
                             f"{old.source}", "choose another name" + mirror)
        self._items[ds.name] = ds
        return ds

    def get(self, name: str) -> Dataset:
        try:
            return self._items[name]
        except KeyError:
            close = difflib.get_close_matches(name, self._items, n=3)
            hint = f"did you mean {examples(close)}?" if close else "see `nqkit data list`"
            raise InputError(None, f"unknown dataset {name!r}", hint) from None

    def names(self) -> list[str]:
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[Dataset]:
        return iter(self._items.values())

    def __len__(self) -> int:
        return len(self._items)


def _check_file(f: DataFile, where: str) -> DataFile:
    if not _FILE.fullmatch(f.name) or f.name.endswith(".part"):
        raise InputError(where, f"file name {f.name!r} must be a plain file name",
                         "use letters, digits, '.', '_' and '-', without a directory")
    scheme = f.url.partition(":")[0].lower()
    if scheme not in ("http", "https", "file"):
        raise InputError(where, f"URL {f.url!r} is not http, https or file",
                         "give the full URL, e.g. https://host/path/file.jsonl")
    if f.md5 is not None and not _MD5.fullmatch(f.md5):
        raise InputError(where, f"md5 {f.md5!r} is not 32 lower-case hex digits",
                         "leave it empty where no checksum is published")
    if f.size is not None and f.size < 0:
        raise InputError(where, f"size {f.size} is negative", "give the size in bytes")
    if f.sha256 is not None and not _SHA256.fullmatch(str(f.sha256)):
        raise InputError(where, f"sha256 {f.sha256!r} is not 64 lower-case hex digits",
                         "leave it out where no checksum is known")
    return f


def _check_dataset(ds: Dataset, where: str) -> Dataset:
    if not _NAME.fullmatch(ds.name):
        raise InputError(where, f"dataset name {ds.name!r} must look like group/name",
                         "use letters, digits, '.', '_', '-' and at least one '/', each part "
                         "starting with a letter or digit (no '..', no leading '/')")
    if ds.format not in FORMATS:
        raise InputError(where, f"unknown format {ds.format!r} for {ds.name}",
                         f"choose one of: {', '.join(FORMATS)}")
    if ds.archive not in (None, "zip"):
        raise InputError(where, f"unknown archive type {ds.archive!r}", "only zip is known")
    if not ds.files:
        raise InputError(where, f"dataset {ds.name} has no file", "list at least one file")
    names = [f.name for f in ds.files]
    if len(set(names)) != len(names):
        raise InputError(where, f"dataset {ds.name} lists a file twice", "file names differ")
    if ds.archive and len(ds.files) != 1:
        raise InputError(where, f"archive dataset {ds.name} must have exactly one file",
                         "one archive per dataset")
    return ds


def _dataset_from_json(obj: Any, where: str, source: str) -> Dataset:
    if not isinstance(obj, dict):
        raise InputError(where, f"expected a dataset object, found {type(obj).__name__}",
                         'each dataset looks like {"name": ..., "files": [...]}')
    try:
        files = tuple(_check_file(DataFile(str(f["name"]), str(f["url"]), f.get("md5"),
                                           None if f.get("size") is None else int(f["size"]),
                                           f.get("sha256"), str(f.get("pinned") or "")),
                                  where)
                      for f in obj["files"])
        ds = Dataset(
            name=str(obj["name"]), title=str(obj.get("title") or obj["name"]),
            format=str(obj.get("format") or _guess_format(files[0].name if files else "")),
            files=files, licence=str(obj.get("licence") or "unknown"),
            citation=str(obj.get("citation") or ""), homepage=str(obj.get("homepage") or ""),
            description=str(obj.get("description") or ""),
            relations=tuple(str(r) for r in obj.get("relations") or ()),
            count=None if obj.get("count") is None else int(obj["count"]),
            unit=str(obj.get("unit") or "examples"), archive=obj.get("archive"),
            source=source)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise InputError(where, f"malformed dataset entry ({e.__class__.__name__}: {e})",
                         'each dataset has "name" and "files": [{"name", "url", "md5", '
                         '"size"}]') from None
    return _check_dataset(ds, where)


def _guess_format(file_name: str) -> str:
    base = file_name[:-3] if file_name.endswith(".gz") else file_name
    if base.endswith(".jsonl"):
        return "jsonl"
    if base.endswith(".json"):
        return "json"
    if base.endswith(".zip"):
        return "json"
    return "tsv"


def _parse_json_registry(data: bytes, source: str) -> list[Dataset]:
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise InputError(source, f"malformed JSON ({e})",
                         "a registry is nqkit's registry JSON (docs/data.md), or a TSV"
                         ) from None
    items = doc.get("datasets") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise InputError(source, "expected {\"datasets\": [...]} or a list of datasets",
                         "see `nqkit data info NAME --format json` for the shape")
    return [_dataset_from_json(obj, f"{source}: dataset {i}", source)
            for i, obj in enumerate(items)]


def _parse_tsv_registry(text: str, source: str) -> list[Dataset]:
    lines = [(i, line) for i, line in enumerate(text.splitlines(), 1)
             if line.strip() and not line.startswith("#")]
    if not lines:
        raise InputError(source, "the registry holds no dataset", "add dataset lines")
    header_no, header_line = lines[0]
    header = [h.strip() for h in header_line.split("\t")]
    if tuple(header[:5]) != _TSV_COLUMNS:
        raise InputError(location(source, header_no),
                         f"expected the header {' '.join(_TSV_COLUMNS)} (tab-separated), "
                         f"found {' '.join(header)!r:.80}",
                         "use the columns of official-sources.tsv")
    unknown = [h for h in header[5:] if h not in _TSV_OPTIONAL]
    if unknown:
        raise InputError(location(source, header_no), f"unknown column {unknown[0]!r}",
                         f"optional columns are {', '.join(_TSV_OPTIONAL)}")
    grouped: dict[str, dict[str, Any]] = {}
    for lineno, line in lines[1:]:
        where = location(source, lineno) or source
        row = next(csv.reader(io.StringIO(line), delimiter="\t"))
        if len(row) > len(header):
            raise InputError(where, f"{len(row)} columns, the header has {len(header)}",
                             "separate columns with one tab")
        cells = dict(zip(header, row + [""] * (len(header) - len(row)), strict=True))
        if not cells["dataset"] or not cells["file"] or not cells["url"]:
            raise InputError(where, "dataset, file and url are required",
                             "fill the first three columns")
        try:
            size = int(cells["size"]) if cells["size"] else None
        except ValueError:
            raise InputError(where, f"size {cells['size']!r} is not a number of bytes",
                             "leave it empty when unknown") from None
        f = _check_file(DataFile(cells["file"], cells["url"], cells["md5"] or None, size),
                        where)
        entry = grouped.setdefault(cells["dataset"], {"where": where, "files": [],
                                                      "meta": {}})
        entry["files"].append(f)
        for key in _TSV_OPTIONAL:
            if cells.get(key):
                entry["meta"][key] = cells[key]
    out = []
    for name, entry in grouped.items():
        meta = entry["meta"]
        files = tuple(entry["files"])
        ds = Dataset(name=name, title=meta.get("description") or f"{name} (user registry)",
                     format=meta.get("format") or _guess_format(files[0].name), files=files,
                     licence=meta.get("licence") or "unknown",
                     description=meta.get("description") or "", archive=meta.get("archive"),
                     source=source)
        out.append(_check_dataset(ds, entry["where"]))
    return out


def read_registry_file(path: str | os.PathLike[str]) -> list[Dataset]:
    """The datasets of a user registry: nqkit's JSON format, or the official-sources TSV."""
    source = os.fspath(path)
    try:
        data = Path(source).read_bytes()
    except OSError as e:
        raise InputError(source, f"cannot read the registry file ({e.strerror})",
                         f"check --registry and {REGISTRY_ENV}") from None
    if data.lstrip()[:1] in (b"{", b"["):
        return _parse_json_registry(data, source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(source, "the registry is not UTF-8 text", "save it as UTF-8") from None
    return _parse_tsv_registry(text, source)


def _official_files(text: str) -> dict[str, list[dict[str, Any]]]:
    """``dataset -> [file facts]`` of the official-sources table, in its order."""
    out: dict[str, list[dict[str, Any]]] = {}
    rows = csv.reader((line for line in text.splitlines() if not line.startswith("#")),
                      delimiter="\t")
    next(rows)  # the header: dataset file url md5 size
    for row in rows:
        if row:
            dataset, name, url, md5, size = (row + [""] * 5)[:5]
            out.setdefault(dataset, []).append({"name": name, "url": url, "md5": md5 or None,
                                                "size": int(size) if size else None})
    return out


def _pins(text: str) -> dict[tuple[str, str], tuple[str, str]]:
    """``(dataset, file) -> (sha256, provenance)`` of the pinned-sources table."""
    rows = csv.reader((line for line in text.splitlines() if not line.startswith("#")),
                      delimiter="\t")
    next(rows)  # the header: dataset file sha256 provenance
    return {(row[0], row[1]): (row[2], row[3]) for row in rows if row}


@functools.lru_cache(maxsize=1)
def _builtin() -> tuple[Dataset, ...]:
    here = resources.files("nqkit.datasets")
    files = _official_files(here.joinpath(SOURCES).read_text(encoding="utf-8"))
    files.update(_official_files(here.joinpath(MORE_SOURCES).read_text(encoding="utf-8")))
    catalog = orjson.loads(here.joinpath(CATALOG).read_bytes())["datasets"]
    if set(files) != set(catalog):  # a packaging mistake, never the user's
        raise RuntimeError(f"{SOURCES} and {CATALOG} disagree on "
                           f"{sorted(set(files) ^ set(catalog))}")
    pins = _pins(here.joinpath(PINS).read_text(encoding="utf-8"))
    unknown = set(pins) - {(d, f["name"]) for d, facts in files.items() for f in facts}
    if unknown or any(not _SHA256.fullmatch(sha) for sha, _ in pins.values()):
        raise RuntimeError(f"{PINS}: unknown files or malformed sha256 ({sorted(unknown)})")
    for dataset, facts in files.items():
        for f in facts:
            f["sha256"], f["pinned"] = pins.get((dataset, f["name"]), (None, ""))
    return tuple(_dataset_from_json({"name": name, **catalog[name], "files": facts},
                                    f"built-in {name}", "built-in")
                 for name, facts in files.items())


def builtin_registry() -> DatasetRegistry:
    """The datasets nqkit knows by itself: the files of ``official-sources.tsv`` (then of
    ``more-sources.tsv``) with what ``catalog.json`` says of each dataset (all beside this
    module)."""
    return DatasetRegistry(_builtin())


def env_registry_files() -> list[str]:
    """Registry files listed in ``NQKIT_REGISTRY`` (``os.pathsep``-separated)."""
    return [p for p in os.environ.get(REGISTRY_ENV, "").split(os.pathsep) if p]


def load_registry(extra: Sequence[str | os.PathLike[str]] = (), *,
                  env: bool = True) -> DatasetRegistry:
    """The built-in registry plus ``NQKIT_REGISTRY`` (when ``env``) plus ``extra`` files."""
    reg = builtin_registry()
    files = [*(env_registry_files() if env else []), *(os.fspath(p) for p in extra)]
    seen: set[str] = set()
    for f in files:
        key = os.path.realpath(f)
        if key in seen:  # the same file named twice (env and --registry) is one source
            continue
        seen.add(key)
        for ds in read_registry_file(f):
            reg.add(ds)
    return reg
