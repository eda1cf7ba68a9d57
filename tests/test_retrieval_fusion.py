"""Fusion, top-k selection, question readers and the cluster seam (fast, no index)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from nqkit.cluster import open_cluster, validate_spec
from nqkit.errors import InputError
from nqkit.retrieval.fusion import fuse_normalized, fuse_rrf
from nqkit.retrieval.questions import read_questions
from nqkit.retrieval.topk import merge_topk, topk_of_row, topk_rows

from conftest import require, shared_file


def _hits(pairs: list[tuple[int, float]]) -> tuple[np.ndarray, np.ndarray]:
    return (np.asarray([r for r, _ in pairs], dtype=np.int64),
            np.asarray([s for _, s in pairs], dtype=np.float64))


def _pyserini_hybrid(dense: dict[int, float], sparse: dict[int, float], alpha: float,
                     k: int) -> list[tuple[int, float]]:
    """Pyserini's HybridSearcher._hybrid_results with normalization=True, re-written."""
    dmin, dmax = min(dense.values()), max(dense.values())
    smin, smax = min(sparse.values()), max(sparse.values())
    out = []
    for doc in set(dense) | set(sparse):
        s = sparse.get(doc, smin)
        d = dense.get(doc, dmin)
        s = (s - (smin + smax) / 2) / (smax - smin)
        d = (d - (dmin + dmax) / 2) / (dmax - dmin)
        out.append((doc, alpha * s + d))
    return sorted(out, key=lambda x: (-x[1], x[0]))[:k]


def test_normalized_fusion_is_pyserinis() -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        sparse = {int(r): float(s) for r, s in zip(rng.choice(60, 20, replace=False),
                                                    rng.uniform(5, 30, 20), strict=True)}
        dense = {int(r): float(s) for r, s in zip(rng.choice(60, 20, replace=False),
                                                   rng.uniform(-0.2, 0.9, 20), strict=True)}
        alpha = float(rng.uniform(0.1, 2))
        s_hits = _hits(sorted(sparse.items(), key=lambda x: -x[1]))
        d_hits = _hits(sorted(dense.items(), key=lambda x: -x[1]))
        rows, scores = fuse_normalized(s_hits, d_hits, alpha, 10)
        want = _pyserini_hybrid(dense, sparse, alpha, 10)
        assert rows.tolist() == [r for r, _ in want]
        assert scores.tolist() == pytest.approx([s for _, s in want], abs=1e-12)


def test_rrf_by_hand() -> None:
    a = _hits([(5, 9.0), (2, 8.0), (7, 1.0)])
    b = _hits([(2, 0.9), (9, 0.5)])
    rows, scores = fuse_rrf([a, b], 10)
    # 2: 1/62 + 1/61; 5: 1/61; 9: 1/62; 7: 1/63
    assert rows.tolist() == [2, 5, 9, 7]
    assert scores.tolist() == [1 / 62 + 1 / 61, 1 / 61, 1 / 62, 1 / 63]


def test_topk_ties_by_row_and_merge_is_associative() -> None:
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 4, size=(6, 50)).astype(np.float32)  # many ties
    for r, (rows, vals) in enumerate(topk_rows(scores, 7, offset=100)):
        want = sorted(range(50), key=lambda j: (-scores[r, j], j))[:7]
        assert rows.tolist() == [100 + j for j in want]
        assert vals.tolist() == [scores[r, j] for j in want]
        halves = [topk_of_row(scores[r, :23], 7, offset=100),
                  topk_of_row(scores[r, 23:], 7, offset=123)]
        assert merge_topk(halves, 7)[0].tolist() == rows.tolist()
    pos = topk_of_row(np.asarray([0, 2, 0, 2, 1], np.float32), 10, positive_only=True)
    assert pos[0].tolist() == [1, 3, 4]


def test_questions_from_each_format(tmp_path: Path) -> None:
    qa = read_questions(shared_file("data", "dpr", "nq-test.qa.tsv"))
    nq = read_questions(shared_file("data", "nq-open", "NQ-open.dev.jsonl"))
    assert len(qa) == len(nq) == 3610
    assert qa[0].qid == "0" and qa[0].answers == ("Wilhelm Conrad Röntgen",)
    amb_path = shared_file("data", "ambignq", "dev_light.json")
    amb = read_questions(amb_path)
    raw = json.loads(amb_path.read_text(encoding="utf-8"))
    assert len(amb) == len(raw) == 2002
    for q, obj in zip(amb[:200], raw[:200], strict=True):
        want: list[str] = []
        for ann in obj["annotations"]:
            group = ann["answer"] if ann["type"] == "singleAnswer" else [
                a for pair in ann["qaPairs"] for a in pair["answer"]]
            want.extend(a for a in group if a not in want)
        assert (q.qid, q.question, list(q.answers)) == (obj["id"], obj["question"], want)
    comma = tmp_path / "q.csv"
    with open(comma, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerow(["who, then", repr(["a", "b's"])])
    (q,) = read_questions(comma)
    assert (q.question, q.answers) == ("who, then", ("a", "b's"))
    with pytest.raises(InputError, match="unknown questions format"):
        bad = tmp_path / "q.txt"
        bad.write_text("x\n", encoding="utf-8")
        read_questions(bad)


def _square(x: int) -> int:
    return x * x


def _fail(x: int) -> int:
    raise InputError(f"shard {x}", "bad shard", "fix it")


def test_cluster_none_runs_in_order_and_carries_input_errors() -> None:
    with open_cluster("none") as c:
        assert c.map(_square, [3, 1, 2]) == [9, 1, 4]
        with pytest.raises(InputError) as e:
            c.map(_fail, [5])
    assert (e.value.where, e.value.problem, e.value.fix) == ("shard 5", "bad shard", "fix it")
    assert validate_spec("tcp://10.0.0.1:8786") == "tcp://10.0.0.1:8786"
    with pytest.raises(InputError, match="expected none, local or a scheduler address"):
        validate_spec("yarn")


def test_a_local_cluster_leaves_the_environment_as_it_found_it() -> None:
    # Dask's nanny sets OPENBLAS_NUM_THREADS=1 (and more) in the driver's environment;
    # left there, every later subprocess ran a one-thread BLAS (a golden ReQA test that
    # runs after a cluster in the same session then rounded differently)
    require("dask.distributed")
    import os

    before = dict(os.environ)
    with open_cluster("local", workers=1) as c:
        assert c.map(_square, [2]) == [4]
    assert dict(os.environ) == before


def test_scheduler_address_where_nothing_listens_is_refused_at_once() -> None:
    # Dask alone would retry the refused connection for 20 s before failing
    require("dask.distributed")
    import socket

    # a port this test holds bound without listening: connections to it are refused, and
    # no other process can start listening there meanwhile
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        with pytest.raises(InputError, match="no Dask scheduler listens there") as e, \
                open_cluster(f"tcp://127.0.0.1:{port}"):
            pass
    assert e.value.where == f"--cluster tcp://127.0.0.1:{port}"
    with pytest.raises(InputError, match="expected a scheduler address"), \
            open_cluster("tcp://127.0.0.1:port"):
        pass


def test_questions_without_an_answer_field_name_the_line_shape(tmp_path: Path) -> None:
    # retrieve has no --answer-field, so the message must not send the user to it
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "who", "answers": ["x"]}\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_questions(path)
    assert e.value.where == f"{path}:1"
    assert e.value.problem == ("missing answer field 'answer' (found answers, question) "
                               "(EfficientQA test gold uses "
                               "'answer_and_def_correct_predictions')")
    assert e.value.fix == 'each line must look like {"question": "...", "answer": ["..."]}'


def test_midrange_normalize_by_hand() -> None:
    from nqkit.retrieval.fusion import midrange_normalize

    # mid-range 4, range 4: (2 - 4) / 4, (4 - 4) / 4, (6 - 4) / 4
    s = np.array([2.0, 4.0, 6.0])
    assert midrange_normalize(s, 2.0, 6.0).tolist() == [-0.5, 0.0, 0.5]
    assert midrange_normalize(np.array([3.0, 3.0]), 3.0, 3.0).tolist() == [0.0, 0.0]
    rows = np.array([[2.0, 4.0, 6.0], [5.0, 5.0, 5.0]])
    got = midrange_normalize(rows, rows.min(axis=1, keepdims=True),
                             rows.max(axis=1, keepdims=True))
    assert got.tolist() == [[-0.5, 0.0, 0.5], [0.0, 0.0, 0.0]]


def test_whole_row_fusions_by_hand() -> None:
    from nqkit.retrieval.fusion import fuse_rows

    lexical = np.array([[3.0, 1.0, 0.0]], dtype=np.float32)
    dense = np.array([[0.1, 0.9, 0.5]], dtype=np.float32)
    # norm, alpha 2: lexical (s - 1.5) / 3 = [0.5, -1/6, -0.5]; dense mid-range 0.5, range
    # 0.8: [-0.5, 0.5, 0]; fused 2 * lexical + dense = [0.5, 1/6, -1]
    got = fuse_rows("norm", lexical, dense, alpha=2.0)
    assert got.dtype == np.float32
    assert got[0].tolist() == pytest.approx([0.5, 1 / 6, -1.0], abs=1e-6)
    # rrf: lexical ranks 1, 2, 3; dense ranks 3, 1, 2
    assert fuse_rows("rrf", lexical, dense)[0].tolist() == pytest.approx(
        [1 / 61 + 1 / 63, 1 / 62 + 1 / 61, 1 / 63 + 1 / 62], rel=1e-6)
    # tied scores rank by column order, as the hit lists of retrieve do
    tied = np.array([[1.0, 1.0, 0.0]], dtype=np.float32)
    assert fuse_rows("rrf", tied, tied)[0].tolist() == pytest.approx(
        [2 / 61, 2 / 62, 2 / 63], rel=1e-6)
    with pytest.raises(ValueError, match="fusion"):
        fuse_rows("max", lexical, dense)


def test_a_two_index_run_refuses_a_whole_row_fusion() -> None:
    from types import SimpleNamespace

    from nqkit.retrieval.open_run import check_compatible

    indexes = [SimpleNamespace(root=Path(name), fingerprint="f" * 64, retriever=name,
                               digest=name * 12) for name in ("bm25", "dense")]
    check_compatible(indexes, "norm")  # type: ignore[arg-type]
    check_compatible(indexes, "rrf")  # type: ignore[arg-type]
    with pytest.raises(InputError) as e:
        check_compatible(indexes, "zscore")  # type: ignore[arg-type]
    assert e.value.where == "--fusion zscore"
    assert "top --depth hits" in e.value.problem and e.value.fix == "use --fusion norm or rrf"
