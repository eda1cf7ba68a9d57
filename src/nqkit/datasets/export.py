"""Export any registry dataset as JSON lines or Parquet, streaming.

Each format becomes flat-ish records, one per example (the unit researchers exchange):

* JSON-lines formats (NQ original and simplified, NQ-open, EfficientQA): each line as it
  is (the JSONL export copies the bytes of each line, checked to be a JSON object).
* JSON lists (AmbigNQ, DPR bi-encoder data): each element, read incrementally so that a
  multi-GB list (``biencoder-nq-train``) never sits in memory.
* SQuAD: one record per question ``{id, title, context, question, answers: [{text,
  answer_start}]}`` (the layout of the Hugging Face ``squad`` dataset, answers as a list).
* DPR QA files: ``{question, answers}``; DPR passages (read as DPR's csv.reader reads
  them, the one passage reader of :mod:`nqkit.formats.dpr`) and any TSV with a header:
  one record per row keyed by the header (``id``, ``text``, ``title``), values as text.

When the files are the members of an archive (AmbigNQ's train and dev), each record also
gets ``"file"`` (the member's name) so that the splits stay apart.

In Parquet, the ids of NQ (``example_id``, and each annotation's ``annotation_id``) are
strings, as in the Hugging Face ``natural_questions`` dataset: they are 64-bit integers,
``example_id`` signed and ``annotation_id`` unsigned (about half of them are beyond
2**63), so no one integer column holds both, and a reader joining on them needs one
type. JSON lines keep them as the numbers of the source.

Parquet is written in batches (``pyarrow.parquet.ParquetWriter``), with the schema
inferred by pyarrow from the first batch; when a later batch does not fit it (a field
first seen later, or an integer field that turns out to hold floats), the file is written
again with the schema unified over all batches. A field absent from a record is null in
Parquet. Memory stays bounded by one batch (about 32 MB of source text).
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from nqkit.datasets.registry import Dataset
from nqkit.errors import InputError, MissingDependencyError, location
from nqkit.io import iter_lines, open_binary, parse_json_line, read_json

__all__ = ["Row", "export_dataset", "iter_json_list", "iter_rows", "write_jsonl_rows",
           "write_parquet_rows"]

Row = tuple[dict[str, Any], bytes | None, int]  # record, its JSON line if verbatim, size
BATCH_BYTES = 32 << 20
BATCH_ROWS = 10_000
_READ_CHARS = 1 << 22


def iter_json_list(path: Path) -> Iterator[tuple[Any, int]]:
    """Yield ``(element, characters)`` of a file holding one JSON list, incrementally.

    ``json.JSONDecoder.raw_decode`` decodes one element at a time from a growing text
    buffer: an element cut by the end of the buffer fails to decode (or, for a bare
    number, ends exactly at the buffer's end) and is retried with twice the text, so the
    work stays linear and memory is bounded by the largest element.
    """
    decoder = json.JSONDecoder()
    where = str(path)
    with open_binary(path) as raw:
        f = io.TextIOWrapper(raw, encoding="utf-8")
        buf, pos, eof, index = "", 0, False, 0

        def more(n: int) -> bool:
            nonlocal buf, pos, eof
            try:
                chunk = f.read(n)
            except UnicodeDecodeError as e:
                raise InputError(where, f"invalid UTF-8 ({e.reason})",
                                 "save the file as UTF-8") from None
            buf, pos = buf[pos:] + chunk, 0
            eof = not chunk
            return bool(chunk)

        def skip_space() -> str:
            nonlocal pos
            while True:
                while pos < len(buf) and buf[pos] in " \t\r\n":
                    pos += 1
                if pos < len(buf):
                    return buf[pos]
                if not more(_READ_CHARS):
                    return ""

        if skip_space() != "[":
            raise InputError(where, "expected a JSON list ([...])",
                             "give the dataset's JSON file as published")
        pos += 1
        if skip_space() == "]":
            return
        want = _READ_CHARS
        while True:
            try:
                obj, end = decoder.raw_decode(buf, pos)
                complete = end < len(buf) or eof
            except json.JSONDecodeError as e:
                if eof:
                    raise InputError(f"{where}: item {index}", f"malformed JSON ({e.msg})",
                                     "the file is truncated or corrupt: fetch it again"
                                     ) from None
                complete = False
            if not complete:
                more(want)
                want *= 2
                continue
            want = _READ_CHARS
            yield obj, end - pos
            index += 1
            pos = end
            sep = skip_space()
            pos += 1
            if sep == "]":
                return
            if sep != ",":
                found = repr(sep) if sep else "the end of the file"
                raise InputError(f"{where}: after item {index - 1}",
                                 f"expected ',' or ']', found {found}",
                                 "the file is truncated or corrupt: fetch it again")
            skip_space()


def _jsonl_rows(paths: Sequence[Path]) -> Iterator[Row]:
    for path in paths:
        for lineno, line in iter_lines(path):
            where = location(path, lineno)
            obj = parse_json_line(line, where)
            if not isinstance(obj, dict):
                raise InputError(where, f"expected a JSON object, found {type(obj).__name__}",
                                 "each line must be one JSON object")
            yield obj, line.rstrip(b"\r\n"), len(line)


def _list_rows(paths: Sequence[Path]) -> Iterator[Row]:
    for path in paths:
        for i, (obj, size) in enumerate(iter_json_list(path)):
            if not isinstance(obj, dict):
                raise InputError(f"{path}: item {i}", f"expected a JSON object, found "
                                 f"{type(obj).__name__}", "each item must be an object")
            yield obj, None, size


def _squad_rows(paths: Sequence[Path]) -> Iterator[Row]:
    from nqkit.formats.squad import squad_articles_from_json

    for path in paths:
        doc = read_json(path, what="SQuAD")
        for article in squad_articles_from_json(doc, str(path)):
            for para in article.paragraphs:
                for qa in para.qas:
                    row = {"id": qa.id, "title": article.title, "context": para.context,
                           "question": qa.question,
                           "answers": [{"text": a.text, "answer_start": a.answer_start}
                                       for a in qa.answers]}
                    yield row, None, len(qa.question) + 64 + sum(len(a.text)
                                                                 for a in qa.answers)


def _dpr_qa_rows(paths: Sequence[Path]) -> Iterator[Row]:
    from nqkit.formats.dpr import read_dpr_qa_tsv

    for path in paths:
        for question, answers in read_dpr_qa_tsv(path):
            yield {"question": question, "answers": list(answers)}, None, len(question) + 32


def _dpr_passage_rows(paths: Sequence[Path]) -> Iterator[Row]:
    # the one reader of DPR passage files: fields as DPR's csv.reader reads them
    from nqkit.formats.dpr import read_passage_rows

    def row(pid: str, text: str, title: str) -> Row:
        return {"id": pid, "text": text, "title": title}, None, len(pid) + len(text) + len(title)

    for path in paths:
        for _, r in read_passage_rows(path, row, header=True):
            yield r


def _tsv_rows(paths: Sequence[Path]) -> Iterator[Row]:
    # DPR's own reader is csv.reader(delimiter="\t") with the default quoting: passage
    # texts are wrapped in double quotes with "" inside, so a plain split would be wrong.
    csv.field_size_limit(1 << 30)
    for path in paths:
        with open_binary(path) as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            reader = csv.reader(text, delimiter="\t")
            try:
                header = next(reader, None)
                if not header:
                    raise InputError(path, "the TSV file is empty", "give a TSV with a header")
                for row in reader:
                    if not row:
                        continue
                    if len(row) != len(header):
                        raise InputError(location(path, reader.line_num),
                                         f"{len(row)} columns, the header has {len(header)}",
                                         "each row has one value per header column")
                    yield dict(zip(header, row, strict=True)), None, sum(map(len, row))
            except UnicodeDecodeError as e:
                raise InputError(location(path, reader.line_num + 1),
                                 f"invalid UTF-8 ({e.reason})", "save the file as UTF-8"
                                 ) from None


_READERS: dict[str, Callable[[Sequence[Path]], Iterator[Row]]] = {
    "nq": _jsonl_rows, "nq-simplified": _jsonl_rows, "nq-open": _jsonl_rows,
    "jsonl": _jsonl_rows, "ambignq": _list_rows, "dpr-biencoder": _list_rows,
    "json": _list_rows, "squad": _squad_rows, "dpr-qa": _dpr_qa_rows,
    "dpr-passages": _dpr_passage_rows, "tsv": _tsv_rows,
}


def iter_rows(ds: Dataset, paths: Sequence[Path]) -> Iterator[Row]:
    """The records of ``ds`` read from its local ``paths`` (see the module docstring)."""
    reader = _READERS[ds.format]
    if ds.archive and len(paths) > 1:
        for path in paths:
            for obj, _, size in reader([path]):
                yield {"file": path.name, **obj}, None, size
        return
    yield from reader(paths)


_STRING_IDS = {"nq", "nq-simplified"}  # formats whose ids go to Parquet as strings


def _nq_ids_as_strings(rows: Iterator[Row]) -> Iterator[Row]:
    """NQ records with ``example_id`` and every ``annotation_id`` as decimal strings
    (what the Hugging Face dataset does; see the module docstring)."""
    for obj, line, size in rows:
        obj = dict(obj)
        if isinstance(obj.get("example_id"), int):
            obj["example_id"] = str(obj["example_id"])
        annotations = obj.get("annotations")
        if isinstance(annotations, list):
            obj["annotations"] = [
                {**a, "annotation_id": str(a["annotation_id"])}
                if isinstance(a, dict) and isinstance(a.get("annotation_id"), int) else a
                for a in annotations]
        yield obj, line, size


def write_jsonl_rows(rows: Iterator[Row], out: IO[bytes]) -> int:
    """Write records as JSON lines (verbatim lines where the source is JSON lines)."""
    n = 0
    for obj, line, _ in rows:
        out.write(line if line is not None else orjson.dumps(obj))
        out.write(b"\n")
        n += 1
    return n


def _batches(rows: Iterator[Row], batch_bytes: int, batch_rows: int
             ) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    size = 0
    for obj, _, n in rows:
        batch.append(obj)
        size += n
        if size >= batch_bytes or len(batch) >= batch_rows:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


class _SchemaChanged(Exception):
    pass


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError("pyarrow", "parquet", "Parquet export") from None
    return pa, pq


def write_parquet_rows(rows: Callable[[], Iterator[Row]], out: IO[bytes], *,
                       batch_bytes: int = BATCH_BYTES, batch_rows: int = BATCH_ROWS,
                       where: str = "") -> int:
    """Write records to Parquet in batches; ``rows`` is called again (a second pass) only
    when the schema of the first batch does not fit a later one. ``out`` must be seekable.
    """
    pa, pq = _pyarrow()
    try:
        return _parquet_pass(pa, pq, rows(), out, None, batch_bytes, batch_rows)
    except _SchemaChanged:
        pass
    schemas = []
    for batch in _batches(rows(), batch_bytes, batch_rows):
        schemas.append(_table(pa, batch, None, where).schema)
        if len(schemas) > 64:  # keep the list short on long datasets
            schemas = [_unify(pa, schemas, where)]
    schema = _unify(pa, schemas, where)
    out.seek(0)
    out.truncate()
    return _parquet_pass(pa, pq, rows(), out, schema, batch_bytes, batch_rows)


def _unify(pa: Any, schemas: list[Any], where: str) -> Any:
    try:
        return pa.unify_schemas(schemas, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
        raise InputError(where, f"the records have incompatible types for Parquet ({e})",
                         "export with --format jsonl") from None


def _table(pa: Any, batch: list[dict[str, Any]], schema: Any, where: str) -> Any:
    try:
        return pa.Table.from_pylist(batch, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError,
            OverflowError) as e:
        raise InputError(where, f"cannot convert the records to Parquet ({e})",
                         "export with --format jsonl") from None


def _fits(pa: Any, got: Any, want: Any) -> bool:
    """Whether a batch's type can be cast to the file's without losing anything: pyarrow
    casts a struct to one with fewer fields by dropping the others, silently, so every
    struct field of the batch must exist in the file's type (recursively)."""
    types = pa.types
    if types.is_null(got):
        return True
    if types.is_struct(got):
        if not types.is_struct(want):
            return False
        names = {want.field(i).name: want.field(i).type for i in range(want.num_fields)}
        return all(got.field(i).name in names and
                   _fits(pa, got.field(i).type, names[got.field(i).name])
                   for i in range(got.num_fields))
    if types.is_list(got) or types.is_large_list(got):
        return (types.is_list(want) or types.is_large_list(want)) and _fits(
            pa, got.value_type, want.value_type)
    return True  # scalars: the cast itself is safe (it raises rather than truncate)


def _parquet_pass(pa: Any, pq: Any, rows: Iterator[Row], out: IO[bytes], schema: Any,
                  batch_bytes: int, batch_rows: int) -> int:
    writer = None
    n = 0
    try:
        for batch in _batches(rows, batch_bytes, batch_rows):
            if schema is not None:
                table = _table(pa, batch, schema, "")
            else:
                table = _table(pa, batch, None, "")
                if writer is not None and not table.schema.equals(writer.schema):
                    try:
                        if set(table.schema.names) != set(writer.schema.names) or not all(
                                _fits(pa, table.schema.field(n).type, writer.schema.field(n).type)
                                for n in writer.schema.names):
                            raise _SchemaChanged
                        table = table.select(writer.schema.names).cast(writer.schema)
                    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError,
                            ValueError) as e:
                        raise _SchemaChanged from e
            if writer is None:
                writer = pq.ParquetWriter(out, table.schema, compression="zstd")
            writer.write_table(table)
            n += len(batch)
        if writer is None:  # no record at all: an empty file with an empty schema
            writer = pq.ParquetWriter(out, schema or pa.schema([]), compression="zstd")
    finally:
        if writer is not None:
            writer.close()
    return n


def export_dataset(ds: Dataset, paths: Sequence[Path], output: str | os.PathLike[str],
                   fmt: str, *, batch_bytes: int = BATCH_BYTES) -> int:
    """Export the records of ``ds`` (read from its local ``paths``) to ``output``
    (``-``: standard output, JSON lines only). Written atomically; returns the count."""
    from nqkit.io import atomic_output
    from nqkit.report import progress

    if fmt not in ("jsonl", "parquet"):
        raise InputError(f"--format {fmt}", "unknown export format", "choose jsonl or parquet")

    def rows() -> Iterator[Row]:  # NQ train: 307,373 records, 41 GB to read
        return progress(iter_rows(ds, paths), desc=f"exporting {ds.name}", unit="record")

    if os.fspath(output) == "-":
        if fmt != "jsonl":
            raise InputError("-o -", "Parquet cannot be streamed to standard output",
                             "give a file name, or use --format jsonl")
        n = write_jsonl_rows(rows(), sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return n
    with atomic_output(output, "wb", compress=None if fmt == "jsonl" else False) as f:
        if fmt == "jsonl":
            return write_jsonl_rows(rows(), f)
        if ds.format in _STRING_IDS:
            return write_parquet_rows(lambda: _nq_ids_as_strings(rows()), f,
                                      batch_bytes=batch_bytes, where=ds.name)
        return write_parquet_rows(rows, f, batch_bytes=batch_bytes, where=ds.name)
