"""DPR passage files read exactly as DPR's own loader reads them.

DPR reads ``psgs_w100.tsv`` with ``csv.reader(open(path), delimiter="\\t")``: text mode
(``"\\r\\n"`` and a lone ``"\\r"`` end a line as ``"\\n"`` does) and csv's quoting (a quoted
field may hold tabs, doubled quotes and line breaks). The oracle here is that loader
itself, run on the same bytes; nqkit's reader (:mod:`nqkit.formats.dpr`) must give the same
``(id, text, title)`` for every passage and the line each starts on, or refuse a file whose
records csv.reader does not read as passages, at the line the bad record starts on (a quote
that is never closed: at the line it opens). Its documented differences from the loader:
a byte order mark is dropped (DPR reads it into the header's id), blank lines are skipped
(DPR fails on them) and an unclosed quote is an error (csv.reader reads the rest of the
file into that field).

Then the writer against csv.writer, every real passage held in ../shared written by
csv.writer and read back, and an index build and retrieval over a corpus whose passages
span lines.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from nqkit.cli import main
from nqkit.errors import InputError
from nqkit.formats.dpr import _passage_rows, read_dpr_passages
from nqkit.retrieval.corpus import (
    Passage,
    format_passage_line,
    parse_passage_line,
    read_passages,
    write_passages,
)

from conftest import require, shared_file

HEADER = "id\ttext\ttitle"
GENERATED_FILES = 40_000
_TERMINATOR = re.compile(r"\r\n|\r|\n")
_BLANK = " \x0b\x0c"


def _row(pid: str, text: str, title: str) -> tuple[str, str, str]:
    return pid, text, title


# ------------------------------------------------------------------------------- oracle

Expected = tuple[list[tuple[int, tuple[str, ...]]], tuple[str, int | None] | None]


def dpr_loader(data: bytes) -> Expected:
    """What DPR's loader makes of ``data``: ``(passages, error)``, each passage ``(line,
    fields)``, ``error`` ``(kind, line)`` for the record nqkit must refuse (``None``: none).

    csv.reader runs over the file as DPR opens it (``TextIOWrapper`` with its default
    universal newlines, as ``open(path)``); only the byte order mark is taken off first.
    Lines are numbered by ``"\\n"`` as nqkit numbers them (a lone ``"\\r"`` ends a line
    for csv.reader, not for an editor)."""
    text = data.decode("utf-8").removeprefix("\ufeff")
    physical = [0, 1]  # the physical line of each universal line (1-based)
    line = 1
    for m in _TERMINATOR.finditer(text):
        line += "\n" in m.group()
        physical.append(line)
    universal = list(io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))
    exhausted = False

    def lines():  # type: ignore[no-untyped-def]
        nonlocal exhausted
        yield from universal
        exhausted = True

    reader = csv.reader(lines(), delimiter="\t")
    passages: list[tuple[int, tuple[str, ...]]] = []
    header = True
    while True:
        start = reader.line_num + 1
        try:
            fields = next(reader)
        except StopIteration:
            break
        if exhausted:  # the iterator ran out inside a record: a quoted field never closed
            opened = (len(universal) - fields[-1].count("\n")
                      + (universal[-1].endswith("\n")))
            return passages, ("unclosed", physical[opened])
        where = physical[start]
        if not fields or (len(fields) == 1 and '"' not in universal[start - 1]
                          and not fields[0].strip(_BLANK)):
            continue  # a blank line
        if header:
            assert fields == ["id", "text", "title"]
            header = False
            continue
        if len(fields) != 3:
            return passages, ("count", where)
        if not fields[0]:
            return passages, ("empty id", where)
        passages.append((where, tuple(fields)))
    return passages, (None if passages else ("no passage", None))


PROBLEMS = {"unclosed": "is never closed", "count": "expected 3 tab-separated fields",
            "empty id": "empty passage id", "no passage": "header and no passage"}


def nqkit_reads(data: bytes, name: str = "f.tsv") -> Expected:
    """nqkit's reader over the same bytes, in memory (the lines a file would give)."""
    got: list[tuple[int, tuple[str, ...]]] = []
    try:
        for line, row in _passage_rows(name, enumerate(io.BytesIO(data), 1), _row, True,
                                       None):
            got.append((line, row))
    except InputError as e:
        assert e.where is not None
        _, _, line_text = e.where.rpartition(":")
        kinds = [k for k, p in PROBLEMS.items() if p in e.problem]
        assert len(kinds) == 1, e.message
        return got, (kinds[0], int(line_text) if e.where != name else None)
    return got, None


# ---------------------------------------------------------------------------- generator

_ATOMS = ["a", "b", "Zq", " ", "  ", '"', '""', "\t", "\n", "\r\n", "\r", "é", "日本",
          "\U0001f600", "\x00", "\x0b", "'", ",", 'x"y', "\u2028", "\ufeff"]
_SAFE = ["a", "b", "Zq", " ", "é", "日本", "\U0001f600", "'", ",", "id", "9"]


def _text(rng: random.Random, atoms: list[str], most: int) -> str:
    return "".join(rng.choice(atoms) for _ in range(rng.randrange(most + 1)))


def hostile_file(rng: random.Random) -> bytes:
    """A small TSV: DPR's header, then records as csv.writer writes them (fields full of
    quotes, tabs and line breaks), raw runs of hostile characters, blank lines; CRLF, lone
    CR or LF endings, a byte order mark, no final line break."""
    ending = rng.choice(["\n", "\n", "\r\n", "\r"])
    out = io.StringIO()
    if rng.random() < 0.1:
        out.write("\ufeff")
    out.write(HEADER + ending)
    writer = csv.writer(out, delimiter="\t", lineterminator=ending)
    for _ in range(rng.randrange(4)):
        kind = rng.random()
        if kind < 0.45:  # a well-formed record, quoted by csv.writer where needed
            pid = _text(rng, _SAFE, 3) or "1"
            writer.writerow([pid, _text(rng, _ATOMS, 6), _text(rng, _ATOMS, 3)])
        elif kind < 0.9:  # raw hostile characters, quotes anywhere
            n = rng.choice([1, 2, 3, 3, 3, 4])
            out.write("\t".join(_text(rng, _ATOMS, 4) for _ in range(n)))
            out.write(rng.choice([ending, ending, "\n", "\r", "\r\n"]))
        else:  # a blank line
            out.write(rng.choice(["", " ", "  ", "\x0b", "\t\t"]) + ending)
    data = out.getvalue()
    if rng.random() < 0.2:
        data = data.rstrip("\r\n")
    return data.encode("utf-8")


def test_hostile_files_read_as_dprs_csv_reader_reads_them() -> None:
    rng = random.Random(20240519)
    t0 = time.perf_counter()
    outcomes: dict[str, int] = {}
    multi_line = 0
    for i in range(GENERATED_FILES):
        data = hostile_file(rng)
        expected = dpr_loader(data)
        got = nqkit_reads(data)
        assert got == expected, f"file {i}: {data!r}"
        kind = expected[1][0] if expected[1] else "read"
        outcomes[kind] = outcomes.get(kind, 0) + 1
        multi_line += any("\n" in f for _, row in expected[0] for f in row)
    seconds = time.perf_counter() - t0
    # every outcome is exercised, often
    assert min(outcomes.values()) > 400 and len(outcomes) == 5, outcomes
    assert outcomes["read"] > 8_000 and multi_line > 4_000, (outcomes, multi_line)
    print(f"{GENERATED_FILES:,} files in {seconds:.1f} s: {outcomes}, "
          f"{multi_line:,} with a passage spanning lines")


def test_files_on_disk_read_as_in_memory(tmp_path: Path) -> None:
    """The same reader through real files, plain and gzipped (a batch of the generated
    files: opening files is the slow part, the parsing is tested above)."""
    rng = random.Random(7)
    for i in range(300):
        data = hostile_file(rng)
        path = tmp_path / (f"{i}.tsv.gz" if i % 2 else f"{i}.tsv")
        path.write_bytes(gzip.compress(data, mtime=0) if i % 2 else data)
        expected = nqkit_reads(data, str(path))
        got: list[tuple[int, tuple[str, ...]]] = []
        error = None
        try:
            for line, p in read_passages(path, with_lines=True):  # type: ignore[misc]
                got.append((line, (p.id, p.text, p.title)))
        except InputError as e:
            assert e.where is not None
            kind = next(k for k, v in PROBLEMS.items() if v in e.problem)
            error = (kind, int(e.where.rpartition(":")[2]) if e.where != str(path) else None)
        assert (got, error) == expected


@pytest.mark.parametrize("content,line,problem,hint", [
    # a line break or a tab inside a quoted field is text, as for csv.reader
    ('1\t"two\nlines"\tT\n2\t"a ""b"" \tc"\tT\n', None, None, None),
    ('1\tok\tT\n2\t"never closed\tT\n3\tx\tT\n', 3, "is never closed", 'write a quote'),
    ('1\tok\tT\n2\tx\t"title\n\n', 3, "is never closed", None),
    ('1\tok\tT\n2\tsays "hi"\tT\tmore\n', 3, "found 4", "holds a quote"),
    ('1\tok\tT\n2\tmissing title\n', 3, "found 2", "as in DPR's psgs_w100.tsv"),
    ('1\t"a"\n\t"b"\tT\n', 2, "found 2", "holds a quote"),
    ('1\t"a\n\tb"\tT\n2\tx\n', 4, "found 2", "as in DPR's"),
    ('\t"x\ny"\tT\n', 2, "empty passage id", None),
])
def test_errors_name_the_line_a_record_or_quote_starts_on(tmp_path: Path, content: str,
                                                          line: int | None,
                                                          problem: str | None,
                                                          hint: str | None) -> None:
    path = tmp_path / "c.tsv"
    path.write_bytes(f"{HEADER}\n{content}".encode())
    if line is None:
        assert [(p.id, p.text, p.title) for p in read_passages(path)] == [
            ("1", "two\nlines", "T"), ("2", 'a "b" \tc', "T")]
        return
    with pytest.raises(InputError) as e:
        list(read_passages(path))
    assert e.value.where == f"{path}:{line}"
    assert problem in e.value.problem
    if hint:
        assert hint in e.value.fix
    assert len(e.value.message) < 300


def test_a_run_away_quote_stops_at_the_limit(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import nqkit.formats.dpr as dpr

    monkeypatch.setattr(dpr, "MAX_QUOTED", 1000)
    path = tmp_path / "c.tsv"
    path.write_text(f"{HEADER}\n1\tok\tT\n2\t\"stray\tT\n" + "3\tword word\tT\n" * 500,
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"c.tsv:3: the quoted field opening on this line "
                                         r"is not closed within 1,000 characters"):
        list(read_passages(path))


def test_line_numbers_count_physical_lines(tmp_path: Path) -> None:
    # CRLF, a lone CR (a line break for csv.reader in text mode, not for an editor), BOM
    path = tmp_path / "c.tsv"
    path.write_bytes(b"\xef\xbb\xbfid\ttext\ttitle\r\n1\t\"a\r\nb\"\tT\r\n"
                     b"2\tx\tT\r3\t\"q\rr\"\tT\n\n4\tlast\tT")
    assert [(line, (p.id, p.text, p.title))
            for line, p in read_passages(path, with_lines=True)] == [  # type: ignore[misc]
        (2, ("1", "a\nb", "T")), (4, ("2", "x", "T")), (4, ("3", "q\nr", "T")),
        (6, ("4", "last", "T"))]


# ------------------------------------------------------------------------------- writer

def _fields(rng: random.Random) -> tuple[str, str, str]:
    return (_text(rng, _ATOMS, 4) or "1", _text(rng, _ATOMS, 8), _text(rng, _ATOMS, 4))


def test_writer_writes_what_csv_writer_writes_and_reads_back(tmp_path: Path) -> None:
    rng = random.Random(3)
    rows = [_fields(rng) for _ in range(5000)]
    path = tmp_path / "w.tsv"
    write_passages(path, [Passage(*r) for r in rows])
    # a "\r" comes back from DPR's text-mode read as "\n", whatever is written: written so
    def universal(s: str) -> str:
        return s.replace("\r\n", "\n").replace("\r", "\n")

    expected = [tuple(map(universal, r)) for r in rows]
    with open(path, encoding="utf-8") as f:  # DPR's loader
        assert [tuple(r) for r in csv.reader(f, delimiter="\t")][1:] == expected
    assert [(p.id, p.text, p.title) for p in read_passages(path)] == expected
    buf = io.StringIO()
    csv.writer(buf, delimiter="\t", lineterminator="\n").writerows(expected)
    assert path.read_text(encoding="utf-8") == HEADER + "\n" + buf.getvalue()
    for r in expected:  # one record at a time, as the passage store reads them
        assert parse_passage_line(format_passage_line(Passage(*r))[:-1], None) == Passage(*r)


def test_writer_keeps_plain_passages_byte_identical() -> None:
    # the bytes written before fields were quoted for tabs and line breaks
    p = Passage("17", "Aaron Aaron ( or ; ) is a prophet, it's said", "Aaron")
    assert format_passage_line(p) == "17\tAaron Aaron ( or ; ) is a prophet, it's said\tAaron\n"
    q = Passage("18", 'the "Moses" of', 'A "T"')
    assert format_passage_line(q) == '18\t"the ""Moses"" of"\t"A ""T"""\n'


def test_round_trip_property(tmp_path: Path) -> None:
    hypothesis = require("hypothesis")
    st = hypothesis.strategies
    alphabet = st.sampled_from(["a", " ", '"', "\t", "\n", "\r", "é", "\x00", "\x0b"])
    field = st.text(alphabet=alphabet, max_size=12)
    path = tmp_path / "p.tsv"

    @hypothesis.settings(max_examples=300, deadline=None, database=None)
    @hypothesis.given(st.lists(st.tuples(field.filter(bool), field, field), min_size=1,
                               max_size=5))
    def round_trip(rows: list[tuple[str, str, str]]) -> None:
        def universal(s: str) -> str:
            return s.replace("\r\n", "\n").replace("\r", "\n")

        rows = [tuple(map(universal, r)) for r in rows]  # type: ignore[misc]
        write_passages(path, [Passage(*r) for r in rows])
        assert [(p.id, p.text, p.title) for p in read_passages(path)] == rows
        with open(path, encoding="utf-8") as f:
            assert [tuple(r) for r in csv.reader(f, delimiter="\t")][1:] == rows

    round_trip()


# ------------------------------------------------------------------------ real passages

def real_passages() -> list[tuple[str, str, str]]:
    """Every passage held in ../shared: the contexts of DPR's bi-encoder sample and the
    NQ-open oracle's gold passages (DPR's ``ctxs``), as they are, line breaks included."""
    rows = []
    records = json.loads(shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
                         .read_text(encoding="utf-8"))
    for rec in records:
        for key in ("positive_ctxs", "negative_ctxs", "hard_negative_ctxs"):
            rows += [(str(c["passage_id"]), c["text"], c["title"]) for c in rec[key]]
    with gzip.open(shared_file("data", "nq-open", "nq-open-oracle.jsonl.gz"), "rt",
                   encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            rows += [(f"oracle-{i}-{j}", c["text"], c["title"])
                     for j, c in enumerate(json.loads(line)["ctxs"])]
    return rows


def _csv_file(path: Path, rows: list[tuple[str, str, str]]) -> None:
    opener: Callable[..., io.TextIOBase] = gzip.open if path.suffix == ".gz" else open  # type: ignore[assignment]
    with opener(path, "wt", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(HEADER.split("\t"))
        w.writerows(rows)


@pytest.mark.parametrize("name", ["real.tsv", "real.tsv.gz"])
def test_every_real_passage_read_back_exactly(tmp_path: Path, name: str) -> None:
    rows = real_passages()
    assert len(rows) == 755 + 2655
    assert sum("\n" in t for _, t, _ in rows) == 25  # the multi-line oracle passages
    path = tmp_path / name
    _csv_file(path, rows)
    assert [(p.id, p.text, p.title) for p in read_passages(path)] == rows
    assert [(c.id, c.text, c.title) for c in read_dpr_passages(path)] == rows
    some = {rows[5][0], next(r[0] for r in rows if "\n" in r[1])}
    assert {c.id for c in read_dpr_passages(path, ids=some)} == some
    # and nqkit's writer gives the same bytes as csv.writer
    mine = tmp_path / ("mine" + name)
    write_passages(mine, [Passage(*r) for r in rows])
    opener = gzip.open if name.endswith(".gz") else open
    with opener(mine, "rb") as a, opener(path, "rb") as b:
        assert a.read() == b.read()


def test_index_and_retrieval_return_multi_line_passages_exactly(tmp_path: Path) -> None:
    require("bm25s")
    from nqkit.formats.dpr import read_dpr_results
    from nqkit.retrieval.passage_store import PassageStore, Shard, iter_shard

    rows = list({r[0]: r for r in real_passages()}.values())
    corpus = tmp_path / "corpus.tsv"
    _csv_file(corpus, rows)
    ix = tmp_path / "ix"
    assert main(["index", "build", "--cluster", "none", "--passages", str(corpus),
                 "--retriever", "bm25", "--shard-size", "500", "-o", str(ix)]) == 0
    params = json.loads((ix / "params.json").read_text(encoding="utf-8"))
    shards = tuple(Shard(i, a, b) for i, (a, b) in enumerate(params["shards"]))
    assert len(shards) > 1
    stored = [p for s in shards for p in iter_shard(ix, s)]
    assert [(p.id, p.text, p.title) for p in stored] == rows
    store = PassageStore(ix, shards)
    assert all(store.get(i) == Passage(*r) for i, r in enumerate(rows))
    store.close()
    # retrieve with the questions whose gold passage spans lines
    multi = [r for r in rows if "\n" in r[1]]
    qa = tmp_path / "qa.tsv"
    qa.write_text("".join(f"{r[2]} {r[1].split()[0]}\t['x']\n" for r in multi),
                  encoding="utf-8")
    run = tmp_path / "run.json"
    assert main(["retrieve", "--cluster", "none", "--index", str(ix), "--gold", str(qa),
                 "--hits", "5", "-o", str(run)]) == 0
    by_id = {r[0]: r for r in rows}
    returned = [c for res in read_dpr_results(run) for c in res.ctxs]
    assert all((c.id, c.text, c.title) == by_id[c.id] for c in returned)
    assert sum("\n" in c.text for c in returned) >= len(multi) // 2


def test_a_damaged_passage_store_names_its_line(tmp_path: Path) -> None:
    from nqkit.retrieval.passage_store import PassageStore, iter_shard, write_store

    corpus = tmp_path / "c.tsv"
    write_passages(corpus, [Passage("1", "a\nb", "T"), Passage("2", "x", "T")])
    info = write_store(corpus, tmp_path / "ix", 10)
    shard = tmp_path / "ix" / "passages" / "shard-00000.tsv"
    assert shard.read_bytes() == b'1\t"a\nb"\tT\n2\tx\tT\n'  # records, offsets 0, 10, 16
    assert [p.text for p in iter_shard(tmp_path / "ix", info.shards[0])] == ["a\nb", "x"]
    shard.write_bytes(b'1\t"a\nb"\tT\n2\t"\tT\n')  # same length, an unclosed quote
    store = PassageStore(tmp_path / "ix", info.shards)
    assert store.get(0) == Passage("1", "a\nb", "T")
    with pytest.raises(InputError, match=r"shard-00000.tsv:3: unreadable passage .*never "
                                         r"closed.* rebuild the index"):
        store.get(1)
    store.close()


def test_a_range_of_a_shard_is_read_with_its_padding_and_a_short_file_refused(
        tmp_path: Path) -> None:
    """The lucene-exact count jobs read a range of records into one padded buffer and
    parse careful records from a map of the whole file."""
    from nqkit.retrieval.passage_store import (
        mapped_shard,
        read_shard_bytes,
        shard_offsets,
        shard_passage,
        write_store,
    )

    corpus = tmp_path / "c.tsv"
    write_passages(corpus, [Passage("1", "a\nb", "T"), Passage("2", "x", "T")])
    info = write_store(corpus, tmp_path / "ix", 10)
    s = info.shards[0]
    offsets = shard_offsets(tmp_path / "ix", s)
    assert offsets.tolist() == [0, 10, 16]
    buf = read_shard_bytes(tmp_path / "ix", s, 10, 16, pad=3)
    assert isinstance(buf, bytearray) and bytes(buf) == b"2\tx\tT\n\x00\x00\x00"
    with mapped_shard(tmp_path / "ix", s) as whole:
        assert shard_passage(whole, offsets, 1, tmp_path / "ix", s) == Passage("2", "x", "T")
    shard = tmp_path / "ix" / "passages" / "shard-00000.tsv"
    shard.write_bytes(shard.read_bytes()[:12])  # cut inside the second record
    with pytest.raises(InputError, match=r"shard-00000.tsv: ends at byte 12, its offsets "
                                         r"say 16.* rebuild the index"):
        read_shard_bytes(tmp_path / "ix", s, 10, 16)


# ---------------------------------------------------------------- stray quotes (issue 30)

def _plant_stray_quotes(data: bytes, count: int) -> tuple[bytes, list[tuple[int, int]]]:
    """``data`` (a passage file as csv.writer writes it) with ``count`` stray quotes, each
    opening the text field of a line followed by lines without a quote: csv.reader runs
    that field on to the next quote, taking the lines between into one passage. Returns
    the bytes and, per quote, (its line, the lines csv.reader takes after it)."""
    lines = data.splitlines(keepends=True)
    planted: list[tuple[int, int]] = []
    i = 1
    while len(planted) < count:
        i += 1
        if b'"' in lines[i - 1] or b'"' in lines[i]:
            continue
        pid, text, title = lines[i - 1].split(b"\t")
        lines[i - 1] = pid + b'\t"' + text + b"\t" + title
        j = i + 1
        while b'"' not in lines[j - 1]:  # csv.reader closes the field at the next quote
            j += 1
        planted.append((i, j - i))
        i = j + 1
    return b"".join(lines), planted


def _warnings(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("nqkit: warning:")]


def test_a_stray_quote_is_read_as_csv_reader_reads_it_and_named_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real passages with one stray quote opening a text field: csv.reader (DPR's loader)
    reads the lines after it, up to the next quote, into that passage. nqkit reads the
    same passages and warns once, naming the line and how many lines it took."""
    rows = [r for r in {r[0]: r for r in real_passages()}.values() if "\n" not in r[1]][:300]
    clean = tmp_path / "clean.tsv"
    _csv_file(clean, rows)
    assert list(read_passages(clean)) and not _warnings(capsys.readouterr().err)
    data, [(line, taken)] = _plant_stray_quotes(clean.read_bytes(), 1)
    assert taken > 1  # several passages become one
    expected, error = dpr_loader(data)
    assert error is None and len(expected) == len(rows) - taken
    assert nqkit_reads(data) == (expected, None)
    path = tmp_path / "psgs_w100.tsv"
    path.write_bytes(data)
    got = [(n, (p.id, p.text, p.title))
           for n, p in read_passages(path, with_lines=True)]  # type: ignore[misc]
    assert got == expected
    # the same passages from csv.reader over the file as DPR opens it
    with open(path, encoding="utf-8") as f:
        assert [tuple(r) for r in csv.reader(f, delimiter="\t")][1:] == [e[1] for e in expected]
    err = capsys.readouterr().err
    warned = _warnings(err)
    assert len(warned) == 2 and warned[0] == warned[1].replace(str(path), "f.tsv"), err
    assert (f"{path}: 1 quoted field runs on over the lines that follow, which look like "
            f"passages of their own; as DPR's csv.reader reads the file, each is one "
            f"passage: line {line} (+{taken} lines, to {line + taken})") in warned[1]
    assert 'if a quote is stray, remove it' in warned[1]
    # at the command line: exit 0, the warning once, the index holds csv.reader's passages
    require("bm25s")
    from nqkit.retrieval.passage_store import Shard, iter_shard

    ix = tmp_path / "ix"
    assert main(["index", "build", "--cluster", "none", "--passages", str(path),
                 "--retriever", "bm25", "-o", str(ix)]) == 0
    assert _warnings(capsys.readouterr().err) == [warned[1]]
    params = json.loads((ix / "params.json").read_text(encoding="utf-8"))
    stored = [(p.id, p.text, p.title) for i, (a, b) in enumerate(params["shards"])
              for p in iter_shard(ix, Shard(i, a, b))]
    assert stored == [e[1] for e in expected]


def test_stray_quotes_are_counted_and_three_named_in_every_reader(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Five stray quotes: one warning with three of them and the count of the rest, from
    the line reader, the bulk reader of index build (which hands quoted lines to the
    same code) and convert qrels' corpus reader."""
    from nqkit.formats.dpr import SimpleLines
    from nqkit.retrieval.corpus import read_passages_in_runs

    rows = [r for r in {r[0]: r for r in real_passages()}.values() if "\n" not in r[1]][:600]
    clean = tmp_path / "clean.tsv"
    _csv_file(clean, rows)
    data, planted = _plant_stray_quotes(clean.read_bytes(), 5)
    path = tmp_path / "p.tsv"
    path.write_bytes(data)
    expected = [e[1] for e in dpr_loader(data)[0]]
    capsys.readouterr()
    shown = ", ".join(f"line {a} (+{k} line{'s' if k > 1 else ''}, to {a + k})"
                      for a, k in planted[:3])
    def bulk() -> list[tuple[str, str, str]]:
        out: list[tuple[str, str, str]] = []

        def on_run(block: SimpleLines, a: int, b: int) -> None:  # simple lines, in order
            for i in range(a, b):
                p = parse_passage_line(block.line(i).decode().removesuffix("\n"), None)
                out.append((p.id, p.text, p.title))

        for p in read_passages_in_runs(path, on_run):
            out.append((p.id, p.text, p.title))
        return out

    readers = {
        "lines": lambda: [(p.id, p.text, p.title) for p in read_passages(path)],
        "bulk": bulk,
        "dpr": lambda: [(c.id, c.text, c.title) for c in read_dpr_passages(path)],
    }
    for name, read in readers.items():
        assert read() == expected, name
        warned = _warnings(capsys.readouterr().err)
        assert warned == [f"nqkit: warning: {path}: 5 quoted fields run on over the lines "
                          "that follow, which look like passages of their own; as DPR's "
                          f"csv.reader reads the file, each is one passage: {shown} and 2 "
                          'more — if a quote is stray, remove it (a quote inside a quoted '
                          'field is written "")'], name


def test_line_breaks_inside_a_quoted_field_are_no_stray_quote(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A quoted field holding line breaks (csv.writer's record of a passage with one)
    takes lines without tabs: read, not warned about."""
    data = (f"{HEADER}\n" + format_passage_line(Passage("1", "one\ntwo\nthree", "T"))
            + "2\tx\tT\n").encode()
    assert nqkit_reads(data) == ([(2, ("1", "one\ntwo\nthree", "T")), (5, ("2", "x", "T"))],
                                 None)
    assert not _warnings(capsys.readouterr().err)
