"""Open-domain retrieval over DPR passages: corpus, index directories, sharding, runs.

The corpus is built from the real passages in ../shared (benchmarks/make_passages.py:
the biencoder sample's passages and the NQ-open oracle's gold passages, 3,349 distinct).
Expected values come from independent computations: bm25s's own single index over the
whole corpus, brute-force sorting, hashlib, Pyserini's fusion re-written here, and the
metric functions of ``nqkit eval retrieval``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import itertools
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from nqkit.cli import main
from nqkit.cluster import open_cluster
from nqkit.errors import InputError
from nqkit.retrieval.corpus import Passage, read_passages, write_passages
from nqkit.retrieval.open_index import index_digest, load_index

from conftest import ROOT, SHARED, require, shared_file

BM25_OPTS = ["--retriever", "bm25"]


def _make_passages():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("make_passages",
                                                  ROOT / "benchmarks" / "make_passages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def real_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
    shared_file("data", "nq-open", "nq-open-oracle.jsonl.gz")
    mp = _make_passages()
    path = tmp_path_factory.mktemp("corpus") / "real.tsv"
    write_passages(path, mp.real_passages(SHARED))
    return path


@pytest.fixture(scope="module")
def questions() -> list[tuple[str, tuple[str, ...]]]:
    from nqkit.formats.dpr import read_dpr_qa_tsv

    return list(read_dpr_qa_tsv(shared_file("data", "dpr", "nq-test.qa.tsv")))


# ----------------------------------------------------------------------------- corpus

def test_real_corpus_counts_and_fingerprint(real_corpus: Path) -> None:
    passages = list(read_passages(real_corpus))
    assert len(passages) == 3349  # 749 distinct biencoder + 2,600 distinct oracle passages
    assert len({p.id for p in passages}) == 3349
    assert passages[0].id == "11828866"  # first positive context of the biencoder sample
    h = hashlib.sha256()
    for p in passages:
        h.update(f"{p.id}\x1f{p.text}\x1f{p.title}\x1e".encode())
    from nqkit.retrieval.corpus import CorpusFingerprint

    fp = CorpusFingerprint()
    for p in passages:
        fp.update(p)
    assert fp.hexdigest() == h.hexdigest()


def test_corpus_quotes_follow_dprs_csv_reader(tmp_path: Path) -> None:
    import csv
    import gzip

    # tabs and line breaks are kept, quoted as csv.writer quotes them
    p = Passage("7", 'He said "hi" to\tthem\nand left', 'A "title"')
    path = tmp_path / "c.tsv.gz"
    write_passages(path, [p, Passage("8", "plain", "T")])
    with gzip.open(path, "rt", encoding="utf-8") as f:  # DPR's loader
        rows = list(csv.reader(f, delimiter="\t"))
    assert rows == [["id", "text", "title"], ["7", 'He said "hi" to\tthem\nand left',
                                              'A "title"'], ["8", "plain", "T"]]
    assert [tuple(x) for x in rows[1:]] == [(q.id, q.text, q.title)
                                            for q in read_passages(path)]


@pytest.mark.parametrize("content,where,problem", [
    ("id\ttext\ttitle\n1\tok\tT\n2\tmissing title\n", "c.tsv:3", "expected 3 tab-separated"),
    ("text\tid\ttitle\n1\tok\tT\n", "c.tsv:1", "expected the header"),
    ("id\ttext\ttitle\n", "c.tsv", "header and no passage"),
])
def test_corpus_errors_name_file_and_line(tmp_path: Path, content: str, where: str,
                                          problem: str) -> None:
    path = tmp_path / "c.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as e:
        list(read_passages(path))
    assert e.value.where is not None and e.value.where.endswith(where)
    assert problem in e.value.problem


def test_duplicate_ids_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require("bm25s")
    path = tmp_path / "c.tsv"
    write_passages(path, [Passage("1", "a b c", "T"), Passage("2", "d e", "T"),
                          Passage("1", "f g", "T")])
    assert main(["index", "build", "--cluster", "none", "--passages", str(path), *BM25_OPTS,
                 "-o", str(tmp_path / "ix")]) == 2
    assert "1 passage id occurs more than once ('1')" in capsys.readouterr().err
    assert not (tmp_path / "ix").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".ix.")]  # no half index


# ----------------------------------------------------------------- BM25: global statistics

def _bm25_reference(passages: list[Passage], method: str):  # type: ignore[no-untyped-def]
    """One bm25s index over the whole corpus (the library's own code path)."""
    bm25s = require("bm25s")
    Stemmer = require("Stemmer")
    stem = Stemmer.Stemmer("english")
    tokens = bm25s.tokenize([f"{p.title} {p.text}" for p in passages], stopwords="en",
                            stemmer=stem, return_ids=False, show_progress=False)
    model = bm25s.BM25(k1=0.9, b=0.4, method=method)
    model.index(tokens, show_progress=False)

    def scores(question: str) -> np.ndarray | None:
        q = bm25s.tokenize([question], stopwords="en", stemmer=stem, return_ids=False,
                           show_progress=False)[0]
        if not [t for t in q if t in model.vocab_dict]:
            return None
        return np.asarray(model.get_scores(q), dtype=np.float32)

    return scores


def _brute_topk(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    order = sorted((i for i in range(scores.shape[0]) if scores[i] > 0),
                   key=lambda i: (-float(scores[i]), i))
    return [(i, float(scores[i])) for i in order[:k]]


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire"])
def test_sharded_bm25_equals_one_bm25s_index_exactly(real_corpus: Path, tmp_path: Path,
                                                     questions: list, method: str) -> None:
    from nqkit.retrieval.bm25_index import (
        BM25Settings,
        search_bm25,
        shard_scores,
        tokenize_queries,
    )
    from nqkit.retrieval.open_index import build_index, load_index

    passages = list(read_passages(real_corpus))
    reference = _bm25_reference(passages, method)
    settings = BM25Settings(method=method)
    with open_cluster("none") as cluster:
        build_index(real_corpus, tmp_path / "ix", "bm25", cluster, shard_size=500,
                    settings=settings)
    index = load_index(tmp_path / "ix")
    assert len(index.shards) == 7
    qs = [q for q, _ in questions[:80]]
    ids = tokenize_queries(index.root, settings, qs)
    with open_cluster("none") as cluster:
        hits, _ = search_bm25(index.root, index.shards, settings, qs, 100, cluster)
    compared = 0
    for q, qids, (rows, scores) in zip(qs, ids, hits, strict=True):
        want = reference(q)
        if want is None:
            assert rows.shape[0] == 0
            continue
        got = np.concatenate([shard_scores(index.root, s, qids) for s in index.shards])
        assert got.dtype == np.float32 and np.array_equal(got, want), q
        assert [(int(r), float(s)) for r, s in zip(rows, scores, strict=True)] == \
            _brute_topk(want, 100)
        compared += 1
    assert compared  # not vacuous


def test_bm25_ties_break_by_passage_order_across_shards(real_corpus: Path, tmp_path: Path,
                                                        questions: list) -> None:
    require("bm25s")
    from nqkit.retrieval.bm25_index import BM25Settings, search_bm25, shard_scores
    from nqkit.retrieval.bm25_index import tokenize_queries as tq
    from nqkit.retrieval.open_index import build_index, load_index

    # the corpus twice (new ids): every passage has a twin with the same score, in another
    # shard; the earlier copy must always come first
    real = list(read_passages(real_corpus))[:600]
    twice = real + [Passage(f"copy-{p.id}", p.text, p.title) for p in real]
    corpus = tmp_path / "twice.tsv"
    write_passages(corpus, twice)
    settings = BM25Settings()
    with open_cluster("none") as cluster:
        build_index(corpus, tmp_path / "ix", "bm25", cluster, shard_size=250, settings=settings)
        index = load_index(tmp_path / "ix")
        qs = [q for q, _ in questions[:40]]
        hits, _ = search_bm25(index.root, index.shards, settings, qs, 20, cluster)
    ids = tq(index.root, settings, qs)
    ties = 0
    for qids, (rows, scores) in zip(ids, hits, strict=True):
        full = np.concatenate([shard_scores(index.root, s, qids) for s in index.shards])
        assert [(int(r), float(s)) for r, s in zip(rows, scores, strict=True)] == \
            _brute_topk(full, 20)
        for a, b in itertools.pairwise(rows):
            if full[a] == full[b]:
                assert a < b
                ties += 1
    assert ties > 100


# ------------------------------------------------------------------ params.json is checked

@pytest.fixture(scope="module")
def bm25_index(real_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    require("bm25s")
    out = tmp_path_factory.mktemp("bm25") / "ix"
    assert main(["index", "build", "--cluster", "none", "--passages", str(real_corpus), *BM25_OPTS,
                 "-o", str(out),
                 "--shard-size", "1000", "--format", "json"]) == 0
    return out


def _copy_index(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_params_mismatch_refused(bm25_index: Path, tmp_path: Path) -> None:


    load_index(bm25_index)  # the original loads
    ix = _copy_index(bm25_index, tmp_path / "v")
    params = json.loads((ix / "params.json").read_text())
    params["versions"]["bm25s"] = "0.0.1"
    (ix / "params.json").write_text(json.dumps(params))
    with pytest.raises(InputError) as e:
        load_index(ix)
    assert "built with bm25s 0.0.1" in e.value.problem
    assert "install bm25s==0.0.1" in e.value.fix

    ix = _copy_index(bm25_index, tmp_path / "f")
    shard = ix / "bm25" / "data-00001.npy"
    shard.write_bytes(shard.read_bytes()[:-4])
    with pytest.raises(InputError, match=r"bm25/data-00001.npy has [\d,]+ bytes, the build had"):
        load_index(ix)

    ix = _copy_index(bm25_index, tmp_path / "n")
    params = json.loads((ix / "params.json").read_text())
    params["corpus"]["passages"] = 3350
    (ix / "params.json").write_text(json.dumps(params))
    with pytest.raises(InputError, match="the shards do not cover the 3,350 passages"):
        load_index(ix)

    ix = _copy_index(bm25_index, tmp_path / "fmt")
    params = json.loads((ix / "params.json").read_text())
    params["format_version"] = 99
    (ix / "params.json").write_text(json.dumps(params))
    with pytest.raises(InputError, match="index format version 99"):
        load_index(ix)


def test_hybrid_of_two_corpora_refused(bm25_index: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    ix = _copy_index(bm25_index, tmp_path / "other")
    params = json.loads((ix / "params.json").read_text())
    params["corpus"]["fingerprint"] = "0" * 64
    params["retriever"] = "bm25"
    params["digest"] = index_digest(params)  # a consistent index of another corpus
    (ix / "params.json").write_text(json.dumps(params))
    qa = shared_file("data", "dpr", "nq-test.qa.tsv")
    code = main(["retrieve", "--cluster", "none", "--index", str(bm25_index), "--index", str(ix),
                 "--gold",
                 str(qa), "-o", str(tmp_path / "run.json")])
    assert code == 2
    assert "was built from another corpus (fingerprint 000000000000" in capsys.readouterr().err
    assert not (tmp_path / "run.json").exists()


def test_existing_index_never_overwritten(bm25_index: Path, real_corpus: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    before = (bm25_index / "params.json").read_bytes()
    assert main(["index", "build", "--cluster", "none", "--passages", str(real_corpus), *BM25_OPTS,
                 "-o", str(bm25_index)]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert (bm25_index / "params.json").read_bytes() == before


# ------------------------------------------------------------------- runs: format and eval

@pytest.fixture(scope="module")
def bm25_run(bm25_index: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("run")
    qa = d / "qa.tsv"
    lines = shared_file("data", "dpr", "nq-test.qa.tsv").read_text(encoding="utf-8")
    qa.write_text("".join(lines.splitlines(keepends=True)[:100]), encoding="utf-8")
    out = {"qa": qa, "json": d / "run.json", "trec": d / "run.trec"}
    assert main(["retrieve", "--cluster", "none", "--index", str(bm25_index), "--gold",
                 str(qa), "--hits",
                 "100", "-o", str(out["json"]), "--trec", str(out["trec"]), "--eval",
                 "--format", "json"]) == 0
    return out


def test_run_is_dpr_results_with_dpr_has_answer(bm25_run: dict[str, Path],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from nqkit.formats.dpr import read_dpr_qa_tsv, read_dpr_results
    from nqkit.metrics.answer_recall import passage_has_answer

    raw = json.loads(bm25_run["json"].read_text(encoding="utf-8"))
    assert set(raw[0]) == {"question", "answers", "ctxs"}
    assert set(raw[0]["ctxs"][0]) == {"id", "title", "text", "score", "has_answer"}
    gold = list(read_dpr_qa_tsv(bm25_run["qa"]))
    results = list(read_dpr_results(bm25_run["json"]))
    assert [(r.question, r.answers) for r in results] == gold
    flags = 0
    for r in results:
        assert 0 < len(r.ctxs) <= 100
        scores = [c.score for c in r.ctxs]
        assert scores == sorted(scores, reverse=True)
        for c in r.ctxs:
            assert c.has_answer == passage_has_answer(r.answers, c.text)
            flags += bool(c.has_answer)
    assert flags  # not vacuous: some contexts have the answer
    # `nqkit eval retrieval` recomputes the DPR check: no flag disagrees, same recall
    capsys.readouterr()
    assert main(["eval", "retrieval", str(bm25_run["json"]), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "differs" not in captured.err
    ev = json.loads(captured.out)
    first_hit = [next((i for i, c in enumerate(r.ctxs, 1) if c.has_answer), None)
                 for r in results]
    for k in (1, 5, 20, 100):
        want = sum(1 for h in first_hit if h is not None and h <= k) / len(results)
        assert ev["recall"][str(k)] == want


def test_eval_signature_names_corpus_and_settings(bm25_index: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:


    qa = tmp_path / "qa.tsv"
    qa.write_text("who got the first nobel prize in physics\t['Wilhelm Conrad Röntgen']\n",
                  encoding="utf-8")
    assert main(["retrieve", "--cluster", "none", "--index", str(bm25_index), "--gold",
                 str(qa), "--hits",
                 "5", "-o", str(tmp_path / "r.json"), "--eval"]) == 0
    out = capsys.readouterr().out
    fp = load_index(bm25_index).fingerprint[:12]
    digest = load_index(bm25_index).digest[:12]
    sig = next(line for line in out.splitlines() if line.startswith("signature: "))
    # the keys of the computation first, as `eval retrieval` prints them for the same
    # numbers (one question of NQ-open dev: a subset), then the run's settings
    assert sig.startswith("signature: retrieval|split:nq-open/dev[1#")
    assert ("]|recall:answer|tok:dpr-simple-nfd|field:text|"
            f"corpus:{fp}|passages:3349|index:{digest}|retriever:bm25|k1:0.9|b:0.4|"
            "bm25:lucene|") in sig
    assert sig.endswith("|v0.1.0")
    assert main(["eval", "retrieval", "--predictions", str(tmp_path / "r.json"), "--topk", "1",
                 "5"]) == 0
    evaluated = next(line for line in capsys.readouterr().out.splitlines()
                     if line.startswith("signature: "))
    assert sig.startswith(evaluated.removesuffix("|v0.1.0") + f"|corpus:{fp}|")
    # the gold passage of this question is in the corpus and contains the answer
    run = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert run[0]["ctxs"][0]["has_answer"] is True
    assert "top-1  " in out and "1.0000" in out


def test_retrieve_topk_is_the_old_spelling_of_hits(
        bm25_index: Path, bm25_run: dict[str, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`retrieve --hits` is the depth (Pyserini's name; `eval retrieval --topk` is the list
    of cut-offs, as in Pyserini's evaluation): the old `--topk` gives the same run, with one
    note."""
    base = ["retrieve", "--cluster", "none", "--index", str(bm25_index), "--gold",
            str(bm25_run["qa"])]
    capsys.readouterr()
    assert main([*base, "--hits", "7", "--trec", str(tmp_path / "new.trec")]) == 0
    assert "deprecated" not in capsys.readouterr().err
    assert main([*base, "--topk", "7", "--trec", str(tmp_path / "old.trec")]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "deprecated" in line]
    assert notes == ["nqkit: note: --topk is deprecated and will be removed in the next "
                     "release; use --hits"]
    assert (tmp_path / "old.trec").read_bytes() == (tmp_path / "new.trec").read_bytes()
    ranks = [int(line.split()[3]) for line in (tmp_path / "new.trec").read_text().splitlines()]
    assert max(ranks) == 7


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_trec_only_and_eval_only_runs_equal_the_full_run(
        bm25_index: Path, bm25_run: dict[str, Path], tmp_path: Path, fmt: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """-o is optional with --trec or --eval: the TREC run and the printed recall are those
    of a run that also writes the results file, and nothing else is written."""
    base = ["retrieve", "--cluster", "none", "--index", str(bm25_index), "--gold",
            str(bm25_run["qa"]), "--hits", "100", "--format", fmt]
    capsys.readouterr()
    assert main([*base, "-o", str(tmp_path / "full.json"), "--eval"]) == 0
    full = capsys.readouterr().out
    assert main([*base, "--eval"]) == 0
    captured = capsys.readouterr()
    assert captured.out == full
    assert "results written" not in captured.err
    assert main([*base, "--trec", str(tmp_path / "only.trec")]) == 0
    assert capsys.readouterr().out == ""
    assert (tmp_path / "only.trec").read_bytes() == bm25_run["trec"].read_bytes()
    # each written file with its provenance beside it (tests/test_provenance.py)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "full.json", "full.json.provenance.json", "only.trec", "only.trec.provenance.json"]
    assert (tmp_path / "full.json").read_bytes() == bm25_run["json"].read_bytes()


def test_a_run_with_nothing_to_write_or_print_is_refused(
        bm25_index: Path, bm25_run: dict[str, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["retrieve", "--cluster", "none", "--index", str(bm25_index), "--gold",
                 str(bm25_run["qa"])]) == 2
    assert capsys.readouterr().err == (
        "nqkit: error: nothing to write or print — give -o FILE for the DPR results, --trec "
        "FILE for a TREC run, or --eval for the answer recall\n")


def test_retrieve_reports_the_time_of_each_step(
        bm25_index: Path, bm25_run: dict[str, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["retrieve", "--cluster", "none", "--index", str(bm25_index), "--gold",
                 str(bm25_run["qa"]), "-o", str(tmp_path / "r.json"), "--trec",
                 str(tmp_path / "r.trec"), "--eval"]) == 0
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("nqkit: time: ")
    labels = [part.rsplit(" ", 2)[0] for part in last.removeprefix("nqkit: time: ")
              .split("; ")[0].split(", ")]
    assert labels == ["reading", "search", "results", "TREC run", "eval"]
    assert last.split("; ")[1].startswith("total ")


def test_long_steps_show_progress(bm25_index: Path, bm25_run: dict[str, Path],
                                  real_corpus: Path, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Writing the results and the TREC run and scoring go through nqkit.report.progress
    (a tqdm bar on stderr when it is a terminal), in `retrieve` and in `eval retrieval`."""
    import nqkit.report

    shown: list[str] = []
    plain = nqkit.report.progress

    def recording(items, *, desc, **kwargs):  # type: ignore[no-untyped-def]
        shown.append(desc)
        return plain(items, desc=desc, **kwargs)

    monkeypatch.setattr(nqkit.report, "progress", recording)
    run, trec = tmp_path / "r.json", tmp_path / "r.trec"
    assert main(["retrieve", "--cluster", "none", "--index", str(bm25_index), "--gold",
                 str(bm25_run["qa"]), "-o", str(run), "--trec", str(trec), "--eval"]) == 0
    assert shown == ["BM25 search", "writing results", "writing the TREC run", "answer recall"]
    shown.clear()
    assert main(["eval", "retrieval", "--predictions", str(run)]) == 0
    assert shown == ["answer recall"]
    shown.clear()
    assert main(["eval", "retrieval", "--predictions", str(trec), "--gold",
                 str(bm25_run["qa"]), "--passages", str(real_corpus)]) == 0
    assert shown == ["reading the TREC run", "reading the passages", "answer recall"]


def test_trec_run_matches_results(bm25_run: dict[str, Path]) -> None:
    run = json.loads(bm25_run["json"].read_text(encoding="utf-8"))
    lines = bm25_run["trec"].read_text(encoding="utf-8").splitlines()
    assert len(lines) == sum(len(r["ctxs"]) for r in run)
    it = iter(lines)
    for qid, r in enumerate(run):
        for rank, c in enumerate(r["ctxs"], 1):
            fields = next(it).split(" ")
            assert fields[:4] == [str(qid), "Q0", c["id"], str(rank)]
            assert float(fields[4]) == c["score"]
            assert np.float32(fields[4]) == np.float32(c["score"])  # exact float32 text
            assert fields[4] == str(np.float32(c["score"]))  # at float32 length
            assert fields[5] == "nqkit-bm25"


def test_trec_run_reads_back_as_the_results_and_scores_alike(
        bm25_run: dict[str, Path], real_corpus: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    from nqkit.formats.trec import ranked, read_trec_run

    run = json.loads(bm25_run["json"].read_text(encoding="utf-8"))
    groups = ranked(read_trec_run(bm25_run["trec"]))  # by score, as trec_eval orders
    assert list(groups) == [str(i) for i in range(len(run))]
    for qid, r in enumerate(run):
        assert [(x.docid, x.rank, x.score) for x in groups[str(qid)]] == [
            (c["id"], rank, c["score"]) for rank, c in enumerate(r["ctxs"], 1)]
    recall = {}
    for name, extra in (("json", []), ("trec", ["--passages", str(real_corpus)])):
        assert main(["eval", "retrieval", "--gold", str(bm25_run["qa"]), "--predictions",
                     str(bm25_run[name]), *extra, "--topk", "1", "5", "20", "100",
                     "--format", "json"]) == 0
        recall[name] = json.loads(capsys.readouterr().out)["recall"]
    assert recall["trec"] == recall["json"]


# ----------------------------------------------------------- Dask: byte-for-byte equality

def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "params.json"}


def test_local_cluster_bm25_equals_one_process(bm25_index: Path, bm25_run: dict[str, Path],
                                               real_corpus: Path, tmp_path: Path) -> None:
    require("dask.distributed")
    ix = tmp_path / "ix"
    assert main(["index", "build", "--passages", str(real_corpus), *BM25_OPTS, "-o", str(ix),
                 "--shard-size", "1000", "--cluster", "local", "--workers", "2"]) == 0
    assert json.loads((ix / "params.json").read_text())["build"]["workers"] == 2
    assert _tree_bytes(ix) == _tree_bytes(bm25_index)
    run, trec = tmp_path / "run.json", tmp_path / "run.trec"
    assert main(["retrieve", "--cluster", "none", "--index", str(ix), "--gold",
                 str(bm25_run["qa"]),
                 "-o", str(run), "--trec", str(trec), "--cluster", "local",
                 "--workers", "2"]) == 0
    assert run.read_bytes() == bm25_run["json"].read_bytes()
    assert trec.read_bytes() == bm25_run["trec"].read_bytes()


@contextlib.contextmanager
def _restored_environ(saved: dict[str, str]) -> Iterator[None]:
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """The address of a 2-worker Dask cluster on 127.0.0.1, started once for this module:
    ``--cluster tcp://HOST:PORT`` (an existing scheduler whose workers see the same
    files). Its worker processes import what the jobs need once for every test."""
    require("dask.distributed")
    import distributed

    # Dask's nanny leaves its worker settings (OPENBLAS_NUM_THREADS=1, ...) in this
    # process's environment, where later subprocesses of the session would inherit them
    saved = dict(os.environ)
    with _restored_environ(saved), distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def test_scheduler_address_bm25_equals_one_process(bm25_index: Path, bm25_run: dict[str, Path],
                                                   real_corpus: Path, tmp_path: Path,
                                                   scheduler: str) -> None:
    # --cluster tcp://HOST:PORT: same bytes as one process
    assert scheduler.startswith("tcp://127.0.0.1:")
    ix = tmp_path / "ix"
    assert main(["index", "build", "--passages", str(real_corpus), *BM25_OPTS, "-o", str(ix),
                 "--shard-size", "1000", "--cluster", scheduler]) == 0
    assert json.loads((ix / "params.json").read_text())["build"]["workers"] == 2
    assert _tree_bytes(ix) == _tree_bytes(bm25_index)
    run, trec = tmp_path / "run.json", tmp_path / "run.trec"
    assert main(["retrieve", "--index", str(ix), "--gold", str(bm25_run["qa"]),
                 "-o", str(run), "--trec", str(trec), "--cluster", scheduler]) == 0
    assert run.read_bytes() == bm25_run["json"].read_bytes()
    assert trec.read_bytes() == bm25_run["trec"].read_bytes()


@pytest.fixture(scope="module")
def small_corpus(real_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("small") / "small.tsv"
    write_passages(path, list(read_passages(real_corpus))[:24])
    return path


def test_index_build_starts_from_its_preset(small_corpus: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    require("bm25s")
    cases = [([], (0.9, 0.4)), (["--preset", "reqa"], (1.5, 0.75)),
             (["--preset", "reqa", "--b", "0.5"], (1.5, 0.5))]
    for i, (argv, want) in enumerate(cases):
        out = tmp_path / f"ix{i}"
        assert main(["index", "build", "--cluster", "none", "--passages", str(small_corpus),
                     "--retriever", "bm25", "-o", str(out), *argv, "--format", "json"]) == 0
        settings = json.loads((out / "params.json").read_text(encoding="utf-8"))["settings"]
        assert (settings["k1"], settings["b"]) == want
    capsys.readouterr()


def test_dense_on_a_cluster_equals_one_process_and_sentence_transformers(
        small_corpus: Path, tmp_path: Path, scheduler: str) -> None:
    # on the module's 2-worker scheduler (its workers import torch once for the build and
    # the search); --cluster local for a dense build: tests/test_progress.py
    require("sentence_transformers")
    from nqkit.metrics.ranking import dot_scores
    from nqkit.retrieval.dense import default_model_path

    qa = tmp_path / "qa.tsv"
    qa.write_text("who sings does he love me with reba\t['Linda Davis']\n"
                  "where do the great lakes meet the ocean\t['the Saint Lawrence River']\n",
                  encoding="utf-8")
    outs = {}
    for mode, spec in (("none", "none"), ("cluster", scheduler)):
        ix = tmp_path / f"ix-{mode}"
        assert main(["index", "build", "--passages", str(small_corpus), "--retriever", "dense",
                     "-o", str(ix), "--shard-size", "8", "--device", "cpu",
                     "--cluster", spec]) == 0
        run = tmp_path / f"{mode}.json"
        assert main(["retrieve", "--index", str(ix), "--gold", str(qa), "--hits", "10",
                     "-o", str(run), "--device", "cpu", "--cluster", spec]) == 0
        outs[mode] = (ix, run)
    assert json.loads((outs["cluster"][0] / "params.json").read_text())["build"]["workers"] == 2
    assert _tree_bytes(outs["none"][0]) == _tree_bytes(outs["cluster"][0])
    assert outs["none"][1].read_bytes() == outs["cluster"][1].read_bytes()
    # independent: sentence-transformers on each shard's texts (the same batches)
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(default_model_path(), device="cpu")
    passages = list(read_passages(small_corpus))
    embs = []
    for lo in range(0, 24, 8):
        texts = [f"{p.title} {p.text}" for p in passages[lo:lo + 8]]
        embs.append(model.encode(texts, batch_size=64, normalize_embeddings=True))
    emb = np.concatenate(embs).astype(np.float32)
    stored = np.concatenate([np.load(outs["none"][0] / "dense" / f"emb-{i:05d}.npy")
                             for i in range(3)])
    assert np.array_equal(stored, emb)
    q = model.encode(["who sings does he love me with reba",
                      "where do the great lakes meet the ocean"], batch_size=64,
                     normalize_embeddings=True).astype(np.float32)
    scores = dot_scores(q, emb)
    run = json.loads(outs["none"][1].read_text(encoding="utf-8"))
    for i, r in enumerate(run):
        want = sorted(range(24), key=lambda j: (-float(scores[i, j]), j))[:10]
        assert [c["id"] for c in r["ctxs"]] == [passages[j].id for j in want]
        assert [c["score"] for c in r["ctxs"]] == \
            [float(str(np.float32(scores[i, j]))) for j in want]


@pytest.mark.parametrize("ann", ["hnsw", "ivfpq"])
def test_faiss_index_returns_every_passage_of_a_tiny_corpus(small_corpus: Path, tmp_path: Path,
                                                            ann: str) -> None:
    require("faiss")
    require("sentence_transformers")
    tiny = tmp_path / "tiny.tsv"
    passages = list(read_passages(small_corpus))[:8]
    write_passages(tiny, passages)
    ix = tmp_path / "ix"
    assert main(["index", "build", "--cluster", "none", "--passages", str(tiny), "--retriever",
                 "dense", "-o",
                 str(ix), "--device", "cpu", "--ann", ann]) == 0
    assert (ix / "dense" / f"{ann}.faiss").is_file()
    qa = tmp_path / "qa.tsv"
    qa.write_text("who sings does he love me with reba\t['Linda Davis']\n", encoding="utf-8")
    run = tmp_path / "run.json"
    assert main(["retrieve", "--cluster", "none", "--index", str(ix), "--gold", str(qa),
                 "--hits", "8",
                 "-o", str(run), "--device", "cpu"]) == 0
    ctxs = json.loads(run.read_text(encoding="utf-8"))[0]["ctxs"]
    assert sorted(c["id"] for c in ctxs) == sorted(p.id for p in passages)
    scores = [c["score"] for c in ctxs]
    assert scores == sorted(scores, reverse=True)
    if ann == "hnsw":  # HNSW over 8 flat vectors finds the exact inner products
        from sentence_transformers import SentenceTransformer

        from nqkit.retrieval.dense import default_model_path

        model = SentenceTransformer(default_model_path(), device="cpu")
        q = model.encode(["who sings does he love me with reba"], normalize_embeddings=True)
        exact = (np.load(ix / "dense" / "emb-00000.npy").astype(np.float64)
                 @ q[0].astype(np.float64))
        order = sorted(range(8), key=lambda j: (-exact[j], j))
        assert [c["id"] for c in ctxs] == [passages[j].id for j in order]
        assert scores == pytest.approx([exact[j] for j in order], rel=1e-5)


def test_a_dense_build_reads_each_model_file_once(small_corpus: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's fingerprint (settings) and params.json's model_files come from one
    pass over the model directory, and model_files still holds each file's own SHA-256
    and size."""
    require("sentence_transformers")
    import nqkit.io
    from nqkit.retrieval import encoders
    from nqkit.retrieval.dense import default_model_path

    model = Path(default_model_path()).resolve()
    hashed: list[Path] = []
    real = nqkit.io.sha256_files

    def counting(paths: list[Path], **kw: object) -> dict[Path, str]:
        hashed.extend(Path(p).resolve() for p in paths
                      if Path(p).resolve().is_relative_to(model))
        return real(paths, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(nqkit.io, "sha256_files", counting)
    monkeypatch.setattr(encoders, "_DIGESTS", {})  # nothing hashed before in this process
    ix = tmp_path / "ix"
    assert main(["index", "build", "--passages", str(small_corpus), "--retriever", "dense",
                 "-o", str(ix), "--device", "cpu", "--cluster", "none"]) == 0
    files = sorted(p.resolve() for p in model.rglob("*") if p.is_file())
    assert sorted(hashed) == files  # each once
    manifest = json.loads((ix / "params.json").read_text(encoding="utf-8"))["model_files"]
    assert manifest == {p.relative_to(model).as_posix(): {
        "bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
        for p in files}


def test_dense_model_with_corrupt_config_is_one_line(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A --model directory whose config.json is not JSON: one error line naming it, no
    traceback from transformers, no index and no half-built directory left (this is a
    catalogue row kept here, where torch is loaded anyway, to keep the catalogue fast)."""
    require("sentence_transformers")
    corpus = tmp_path / "c.tsv"
    write_passages(corpus, [Passage("1", "a b c", "T"), Passage("2", "d e", "T")])
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_bytes(b"{not json")
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["index", "build", "--cluster", "none", "--passages", str(corpus),
                 "--retriever", "dense", "--model", str(model), "-o", str(tmp_path / "ix")]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [err.rstrip("\n")]
    assert err.startswith(f"nqkit: error: {model}: cannot load the sentence-transformers "
                          "model (OSError: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_run_tag_with_spaces_is_refused_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the tag is checked first: no index or questions are read, no output is written
    out, trec = tmp_path / "r.json", tmp_path / "r.trec"
    assert main(["retrieve", "--index", str(tmp_path / "missing"), "--gold",
                 str(tmp_path / "missing.tsv"), "-o", str(out), "--trec", str(trec),
                 "--tag", "my run"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "nqkit: error: --tag my run: the run tag must be one word — give a tag without spaces"]
    assert not out.exists() and not trec.exists()


def test_a_trec_run_over_the_results_file_names_both_options(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    assert main(["retrieve", "--index", str(tmp_path / "missing"), "--gold",
                 str(tmp_path / "missing.tsv"), "-o", str(out), "--trec", str(out)]) == 2
    assert capsys.readouterr().err == (f"nqkit: error: --trec {out}: is also the -o output — "
                                       "give each output a path of its own\n")
    assert not out.exists()


def test_a_store_build_ended_by_a_bad_passage_closes_its_open_shard(tmp_path):
    # The second passage has two columns: the build ends there with the first shard open;
    # left to the garbage collector, the file would be closed late, with a ResourceWarning.
    import gc
    import warnings

    from nqkit.retrieval.passage_store import write_store

    corpus = tmp_path / "bad.tsv"
    corpus.write_text("id\ttext\ttitle\n1\tsome text\tA title\n2\tno title\n", encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with pytest.raises(InputError):
            write_store(corpus, tmp_path / "store", shard_size=10)
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_store_ids_read_without_parsing_equal_the_passages_ids(tmp_path: Path) -> None:
    # ids that the writer quotes (a tab, a quote, a line break), a quote in the text only,
    # non-ASCII: the ids read up to the first tab must be the passages' own, in any order
    # of rows and across shards
    from nqkit.retrieval.passage_store import PassageStore, write_store

    passages = [Passage("1", 'He said "hi"', "T"), Passage('a"b', "x", "T"),
                Passage("c\td", "y\tz", "T"), Passage("é", "line\nbreak", "Ü"),
                Passage('"q"', "w", '"t"'), Passage("plain", "text", "title"),
                Passage("e\nf", "v", "T")]
    corpus = tmp_path / "c.tsv"
    write_passages(corpus, passages)
    info = write_store(corpus, tmp_path / "store", shard_size=3)
    store = PassageStore(tmp_path / "store", info.shards)
    rows = [0, 1, 2, 3, 4, 5, 6, 5, 0, 6]
    assert store.ids(rows) == [passages[r].id for r in rows]
    with pytest.raises(IndexError):
        store.ids([7])
    store.close()
