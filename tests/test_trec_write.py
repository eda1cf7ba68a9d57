"""The array writers of TREC runs (``write_trec_matrix`` / ``write_trec_blocks``) and the
commands that use them (``nqkit retrieve --trec``, ``nqkit reqa run --trec``).

Oracles: each expected line is an f-string made here from the qid, docid, rank and the
score's text computed independently: ``repr`` of the float for float64 scores, and for
float32 scores ``repr`` of the float of numpy's positional shortest text of the float32
(``np.format_float_positional(..., unique=True)``, not the writer's cast). The commands'
runs are compared with the line-by-line path (``TrecRunLine`` -> ``write_trec_run``) fed
from the DPR results file (retrieve) or from the same top-k arrays (reqa).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import nqkit.formats.trec as trec
from nqkit.cli import main
from nqkit.errors import InputError
from nqkit.formats.trec import (
    TrecBlock,
    TrecRunLine,
    float32_scores,
    read_trec_run,
    top_k,
    write_trec_blocks,
    write_trec_matrix,
    write_trec_run,
)

from conftest import require, small_reqa_task


def f32_text(x: float) -> str:
    """What a float32 score is written as: the float of its shortest float32 text."""
    return repr(float(np.format_float_positional(np.float32(x), unique=True, trim="0")))


def expected(qids, docids, cols, scores, tag: str) -> str:
    out = []
    for qid, crow, srow in zip(qids, cols, scores, strict=True):
        srow = np.asarray(srow)
        for rank, (c, v) in enumerate(zip(crow, srow, strict=True), 1):
            text = f32_text(v) if srow.dtype == np.float32 else repr(float(v))
            out.append(f"{qid} Q0 {docids[int(c)]} {rank} {text} {tag}\n")
    return "".join(out)


def first_difference(got: str, want: str) -> tuple[int, str, str] | None:
    """The first differing line (number, got, wanted); a plain == of 200,000-line texts
    makes pytest's diff take minutes."""
    a, b = got.splitlines(), want.splitlines()
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i, x, y
    return None if len(a) == len(b) else (min(len(a), len(b)), "<length>", "<length>")


def test_the_oracle_itself_on_hand_written_values():
    # the writer's contract on a few values worked out by hand
    assert f32_text(0.1) == "0.1"  # float32(0.1) = 0.100000001490116..., 1 digit suffices
    assert f32_text(1e7) == "10000000.0"  # numpy's own cast writes 1e+07
    assert f32_text(1e-4) == "0.0001"  # numpy's own cast writes 1e-04
    assert f32_text(16777217.0) == "16777216.0"  # 2^24 + 1 is no float32
    assert f32_text(1e-5) == "1e-05"
    assert f32_text(3.4028235e38) == "3.4028235e+38"


def _special_float32() -> np.ndarray:
    """Scores where numpy's and Python's notations part, both sides of each threshold,
    plus ties, negatives, zeros, subnormals and the extremes."""
    out = []
    for t in (1e-5, 1e-4, 1e-3, 1.0, 1e6, 1e7, 1e8, 1e15, 1e16, 1e17):
        c = np.float32(t)
        for direction in (np.float32(0), np.float32(np.inf)):
            x = c
            for _ in range(300):
                out.append(x)
                x = np.nextafter(x, direction)
    out += [0.0, -0.0, 1e-45, 1.17549435e-38, 3.4028235e38, 2.0, 0.5, 123456.79, 7.0, 7.0]
    a = np.array(out, dtype=np.float32)
    return np.concatenate([a, -a])


def test_float32_scores_are_written_as_the_line_path_writes_them(tmp_path):
    rng = np.random.default_rng(17)
    finite = rng.integers(0, 2**32, 60_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    finite = finite[np.isfinite(finite)]
    values = np.concatenate([_special_float32(), finite,
                             (rng.standard_normal(20_000) * 20).astype(np.float32)])
    k = 100
    values = values[: len(values) // k * k].reshape(-1, k)
    qids = [f"q{i}" for i in range(len(values))]
    docids = [f"d{i}" for i in range(k)]
    cols = np.tile(np.arange(k), (len(values), 1))
    path = tmp_path / "run.trec"
    assert write_trec_matrix(path, qids, docids, cols, values, tag="t", block_size=64) \
        == values.size
    assert first_difference(path.read_text(), expected(qids, docids, cols, values, "t")) is None


def test_float64_scores_are_written_as_their_repr(tmp_path):
    rng = np.random.default_rng(3)
    finite = rng.integers(0, 2**63, 30_000, dtype=np.uint64).view(np.float64)
    finite = finite[np.isfinite(finite)] * rng.choice([-1.0, 1.0], np.isfinite(finite).sum())
    sweep = [np.float64(t) for t in (1e-5, 1e-4, 1e16, 1e17)]
    near = [np.nextafter(t, d) for t in sweep for d in (0.0, np.inf)]
    values = np.concatenate([finite, sweep, near, [0.0, -0.0, 5e-324, 1.7976931348623157e308,
                                                   2 / 3, 2 / 3, -0.1]])
    values = values[: len(values) // 50 * 50].reshape(-1, 50)
    qids = [str(i) for i in range(len(values))]
    docids = [str(1000 + i) for i in range(50)]
    cols = np.tile(np.arange(50)[::-1], (len(values), 1))
    path = tmp_path / "run.trec"
    write_trec_matrix(path, qids, docids, cols, values, tag="hybrid")
    assert first_difference(path.read_text(),
                            expected(qids, docids, cols, values, "hybrid")) is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_top_k_of_a_matrix_with_ties_and_depth_past_the_documents(tmp_path, dtype):
    # depth 10 over 6 documents: every document, in top_k order (ties by column)
    scores = np.array([[3.0, -1.5, 3.0, 0.0, 2.5e6, -7e-6],
                       [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                       [-2.0, -1.0, -3.0, 4e20, 1e-30, 0.25]], dtype=dtype)
    qids, docids = ["10", "11", "12"], ["a", "b", "c", "d", "e", "f"]
    cols, vals = top_k(scores, 10)
    assert cols.shape == (3, 6)
    path, old = tmp_path / "new.trec", tmp_path / "old.trec"
    assert write_trec_matrix(path, qids, docids, cols, vals, tag="x") == 18
    assert path.read_text() == expected(qids, docids, cols, vals, "x")
    # the line path, as the commands built it before
    write_trec_run(old, trec.run_from_scores(qids, docids, scores, depth=10, tag="x"))
    assert path.read_bytes() == old.read_bytes()
    # by hand: the first query's lines
    first = path.read_text().splitlines()[:3]
    big = "2500000.0"
    tiny = "-7e-06" if dtype == np.float32 else repr(-7e-6)
    assert first == [f"10 Q0 e 1 {big} x", "10 Q0 a 2 3.0 x", "10 Q0 c 3 3.0 x"]
    assert path.read_text().splitlines()[5] == "10 Q0 b 6 -1.5 x"
    assert f"10 Q0 f 5 {tiny} x" in path.read_text().splitlines()


def test_ragged_blocks_with_an_empty_query_and_a_docid_table_per_block(tmp_path):
    blocks = [
        TrecBlock(["0", "1"], ["p7", "p3"],
                  [np.array([1, 0]), np.array([], dtype=np.int64)],
                  [np.array([2.5, 1.25], dtype=np.float32), np.array([], dtype=np.float32)]),
        TrecBlock(["2"], ["p9"], [np.array([0])], [np.array([0.1], dtype=np.float32)]),
    ]
    path = tmp_path / "run.trec"
    assert write_trec_blocks(path, blocks, tag="bm25") == 3
    assert path.read_text() == ("0 Q0 p3 1 2.5 bm25\n0 Q0 p7 2 1.25 bm25\n"
                                "2 Q0 p9 1 0.1 bm25\n")
    # gzipped: the same text
    import gzip

    assert write_trec_blocks(tmp_path / "run.trec.gz", blocks, tag="bm25") == 3
    assert gzip.decompress((tmp_path / "run.trec.gz").read_bytes()) == path.read_bytes()


def _line_error(path, qids, docids, cols, scores, tag) -> str:
    """The error of the line path over the same lines."""
    lines = [TrecRunLine(q, docids[c], r, v, tag)
             for q, crow, srow in zip(qids, cols, scores, strict=True)
             for r, (c, v) in enumerate(zip(crow, float32_scores(srow), strict=True), 1)]
    with pytest.raises(InputError) as e:
        write_trec_run(path, lines)
    return str(e.value)


@pytest.mark.parametrize("qids,docids,tag,bad,message", [
    (["1", "2 b"], ["d0", "d1", "d2"], "t", None, "a TREC query id must be non-empty and "
     "without whitespace, found '2 b'"),
    (["1", "2"], ["d0", "d\t1", "d2"], "t", None, "a TREC document id must be non-empty "
     "and without whitespace, found 'd\\t1'"),
    (["1", "2"], ["d0", "d1", ""], "t", None, "a TREC document id must be non-empty"),
    (["1", "2"], ["d0", "d1", "d2"], "my run", None, "a TREC run tag must be non-empty and "
     "without whitespace, found 'my run'"),
    (["1", "2"], ["d0", "d1", "d2"], "t", math.nan, "rank 2 / score nan of query 1 cannot "
     "be written"),
    (["1", "2"], ["d0", "d1", "d2"], "t", math.inf, "rank 2 / score inf of query 1 cannot "
     "be written"),
])
def test_unwritable_runs_are_refused_with_the_line_paths_error(tmp_path, qids, docids, tag,
                                                                bad, message):
    cols = np.array([[0, 1], [1, 2]])
    scores = np.array([[2.0, 1.0], [3.0, 0.5]], dtype=np.float32)
    if bad is not None:
        scores[0, 1] = bad
    path = tmp_path / "run.trec"
    with pytest.raises(InputError) as e:
        write_trec_matrix(path, qids, docids, cols, scores, tag=tag)
    assert message in str(e.value)
    assert "\n" not in str(e.value)
    assert not path.exists() and list(tmp_path.iterdir()) == []  # nothing half-written
    assert str(e.value) == _line_error(path, qids, docids, cols, scores, tag)


def test_an_unwritable_docid_never_retrieved_is_no_error(tmp_path):
    # as the line path: only written docids are checked
    path = tmp_path / "run.trec"
    assert write_trec_matrix(path, ["q"], ["a", "not used", "b"], np.array([[2, 0]]),
                             np.array([[1.0, 0.5]]), tag="t") == 2
    assert path.read_text() == "q Q0 b 1 1.0 t\nq Q0 a 2 0.5 t\n"


def test_the_nan_cli_error_is_one_line(tmp_path, capsys, monkeypatch):
    # through the CLI's error handler: one line, exit 2 (reqa run with a NaN score)
    require("bm25s")
    task = small_reqa_task(tmp_path / "task")
    real = trec.write_trec_blocks

    def poisoned(path, blocks, *, tag):  # type: ignore[no-untyped-def]
        def bad():  # type: ignore[no-untyped-def]
            for b in blocks:
                s = np.array(b.scores, dtype=np.float32)
                s[0, 0] = np.nan
                yield TrecBlock(b.qids, b.docids, b.cols, s)
        return real(path, bad(), tag=tag)

    monkeypatch.setattr(trec, "write_trec_blocks", poisoned)
    run = tmp_path / "run.trec"
    assert main(["reqa", "run", "--gold", str(task), "--trec", str(run), "--hits", "3",
                 "--no-per-item", "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert err.endswith("nqkit: error: rank 1 / score nan of query 0 cannot be written — "
                        "ranks start at 1; scores are finite\n")
    assert err.count("nqkit: error") == 1 and "Traceback" not in err
    assert not run.exists()


# ------------------------------------------------------------------------- the commands

def _old_writer(path, blocks, *, tag):  # type: ignore[no-untyped-def]
    """What the commands wrote before: one TrecRunLine per line, float32 scores through
    float32_scores, others as Python floats, written by write_trec_run."""
    def lines():  # type: ignore[no-untyped-def]
        for b in blocks:
            for q, crow, srow in zip(b.qids, b.cols, b.scores, strict=True):
                srow = np.asarray(srow)
                values = float32_scores(srow) if srow.dtype == np.float32 else srow.tolist()
                for rank, (c, v) in enumerate(zip(np.asarray(crow).tolist(), values,
                                                  strict=True), 1):
                    yield TrecRunLine(q, b.docids[c], rank, v, tag)
    return write_trec_run(path, lines())


@pytest.mark.parametrize("level", ["sentence", "paragraph"])
def test_reqa_run_trec_is_the_line_paths_run(tmp_path, capsys, monkeypatch, level):
    require("bm25s")
    task = small_reqa_task(tmp_path / "task")
    new, old = tmp_path / "new.trec", tmp_path / "old.trec"
    argv = ["reqa", "run", "--gold", str(task), "--level", level, "--hits", "7",
            "--chunk-size", "5", "--no-per-item", "--format", "json"]
    assert main([*argv, "--trec", str(new)]) == 0
    monkeypatch.setattr(trec, "write_trec_blocks", _old_writer)
    assert main([*argv, "--trec", str(old)]) == 0
    capsys.readouterr()
    assert new.read_bytes() == old.read_bytes()
    lines = list(read_trec_run(new))
    queries = (task / "queries.jsonl").read_text().splitlines()
    index = [json.loads(x) for x in (task / "index.jsonl").read_text().splitlines()]
    docs = len(index) if level == "sentence" else len({x["doc_id"] for x in index})
    # depth 7 is past the 4 paragraphs (each query gets all 4), not past the sentences
    assert docs == 4 if level == "paragraph" else docs > 7
    assert len(lines) == min(7, docs) * len(queries)
    assert {ln.tag for ln in lines} == {f"nqkit-bm25-{level}"}
    for t in (line.split()[4] for line in new.read_text().splitlines()):
        assert t == f32_text(float(t))  # float32 shortest text, in repr notation


_PASSAGES = [
    ("101", "Paris", "Paris is the capital and largest city of France."),
    ("102", "Berlin", "Berlin is the capital of Germany and its largest city."),
    ("103", "Seine", "The Seine flows through Paris into the English Channel."),
    ("104", "Rhine", "The Rhine flows from the Alps through Germany to the North Sea."),
    ("105", "Lyon", "Lyon is a city in France at the confluence of the Rhone and Saone."),
    ("106", "Alps", "The Alps are the highest mountain range in Europe."),
    ("107", "Danube", "The Danube flows through Vienna, Budapest and Belgrade."),
    ("108", "Vienna", "Vienna is the capital of Austria on the Danube."),
    ("109", "Madrid", "Madrid is the capital of Spain."),
    ("110", "Tagus", "The Tagus is the longest river of the Iberian Peninsula."),
]
_QUESTIONS = ["what is the capital of france\t['Paris']\n",
              "which river flows through vienna\t['Danube']\n",
              "zzz unmatched words only\t['none']\n",
              "capital city of germany\t['Berlin']\n"]


def _old_run_from_results(results: Path, path: Path, tag: str) -> None:
    """The line path over what the DPR results file holds (ids, scores, in rank order);
    qids are the questions' 0-based line numbers."""
    data = json.loads(results.read_text(encoding="utf-8"))
    write_trec_run(path, (TrecRunLine(str(i), c["id"], rank, c["score"], tag)
                          for i, r in enumerate(data)
                          for rank, c in enumerate(r["ctxs"], 1)))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("corpus")
    tsv = d / "psgs.tsv"
    tsv.write_text("id\ttext\ttitle\n" + "".join(f"{i}\t{t}\t{h}\n" for i, h, t in _PASSAGES),
                   encoding="utf-8")
    qa = d / "qa.tsv"
    qa.write_text("".join(_QUESTIONS), encoding="utf-8")
    return tsv, qa


def test_retrieve_bm25_trec_is_the_line_paths_run(tmp_path, capsys, corpus, monkeypatch):
    require("bm25s")
    tsv, qa = corpus
    ix = tmp_path / "bm25"
    assert main(["index", "build", "--cluster", "none", "--passages", str(tsv),
                 "--retriever", "bm25", "-o", str(ix)]) == 0
    monkeypatch.setattr("nqkit.tasks.retrieve.TREC_BLOCK", 3)  # blocks of 3 questions
    out, new, old = tmp_path / "run.json", tmp_path / "new.trec", tmp_path / "old.trec"
    assert main(["retrieve", "--cluster", "none", "--index", str(ix), "--gold", str(qa),
                 "--hits", "5", "-o", str(out), "--trec", str(new)]) == 0
    capsys.readouterr()
    _old_run_from_results(out, old, "nqkit-bm25")
    assert new.read_bytes() == old.read_bytes()
    counts = [sum(1 for ln in new.read_text().splitlines() if ln.startswith(f"{i} "))
              for i in range(4)]
    assert counts[2] == 0 and counts[0] == 5  # BM25 retrieves nothing for question 2


def test_retrieve_hybrid_trec_is_the_line_paths_run(tmp_path, capsys, corpus):
    # fused float64 scores: written as their repr, as the results file holds them
    require("bm25s")
    require("sentence_transformers")
    tsv, qa = corpus
    ixs = []
    for retriever in ("bm25", "dense"):
        ix = tmp_path / retriever
        assert main(["index", "build", "--cluster", "none", "--passages", str(tsv),
                     "--retriever", retriever, "-o", str(ix),
                     *(["--device", "cpu"] if retriever == "dense" else [])]) == 0
        ixs += ["--index", str(ix)]
    out, new, old = tmp_path / "run.json", tmp_path / "new.trec", tmp_path / "old.trec"
    assert main(["retrieve", "--cluster", "none", *ixs, "--gold", str(qa), "--hits", "8",
                 "--device", "cpu", "-o", str(out), "--trec", str(new), "--tag", "hy"]) == 0
    capsys.readouterr()
    _old_run_from_results(out, old, "hy")
    assert new.read_bytes() == old.read_bytes()
    texts = [line.split()[4] for line in new.read_text().splitlines()]
    assert len(texts) == 4 * 8
    assert max(len(t) for t in texts) > 12  # float64 text, longer than any float32's


def test_misuse_is_a_programming_error_not_a_silent_run(tmp_path):
    # a negative index would pick a docid from the end of a list: refused
    with pytest.raises(ValueError, match="document index -1 is outside the 2 docids"):
        write_trec_matrix(tmp_path / "a", ["q"], ["x", "y"], np.array([[0, -1]]),
                          np.array([[1.0, 0.5]]), tag="t")
    with pytest.raises(ValueError, match="document index 2 is outside the 2 docids"):
        write_trec_matrix(tmp_path / "a", ["q"], ["x", "y"], np.array([[2]]),
                          np.array([[1.0]]), tag="t")
    # float32 and float64 rows in one block would be written differently: refused
    with pytest.raises(ValueError, match="differ in dtype"):
        write_trec_blocks(tmp_path / "a", [TrecBlock(
            ["q", "r"], ["x"], [np.array([0]), np.array([0])],
            [np.array([1.0], np.float32), np.array([1.0])])], tag="t")
    assert list(tmp_path.iterdir()) == []
