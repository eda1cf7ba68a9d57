"""``--bm25-method lucene-exact``: Pyserini's BM25 through nqkit's commands.

The parity test runs the commands a user runs (``nqkit index build --bm25-method
lucene-exact``, ``nqkit retrieve --trec``, ``nqkit eval retrieval``) over the 3,349 real
passages and the 3,610 questions of nq-test.qa.tsv, and compares with Pyserini 1.6.0's
``LuceneSearcher.batch_search`` over an index Pyserini built of the same passages (the
session's ``pyserini_run`` oracle, shared with tests/test_lucene_bm25.py): the top-100 ids
of every question, their scores, and the answer recall of both runs as ``nqkit eval
retrieval`` computes it. Unlike tests/test_lucene_bm25.py, nqkit's side here analyzes with
its own analyzer (nqkit.text.lucene), so the whole path is checked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nqkit.cli import main
from nqkit.retrieval.corpus import write_passages

from conftest import SHARED, make_passages_module, require, shared_file

F = np.float32
OPTS = ["--retriever", "bm25", "--bm25-method", "lucene-exact"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
    shared_file("data", "nq-open", "nq-open-oracle.jsonl.gz")
    path = tmp_path_factory.mktemp("corpus") / "real.tsv"
    write_passages(path, make_passages_module().real_passages(SHARED))
    return path


SUBSET = 600  # questions searched again by the equivalence tests (the parity tests: all)


@pytest.fixture(scope="module")
def exact_run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """lucene-exact index (7 shards), a top-100 TREC run of all 3,610 questions, and the
    DPR results and TREC run of the first SUBSET questions (``qa_first``: their file),
    one process (results of all 3,610 would be a 230 MB file read by two tests)."""
    d = tmp_path_factory.mktemp("exact")
    qa = shared_file("data", "dpr", "nq-test.qa.tsv")
    out = {"qa": qa, "index": d / "ix", "trec": d / "run.trec", "qa_first": d / "first.tsv",
           "json_first": d / "first.json", "trec_first": d / "first.trec"}
    assert main(["index", "build", "--cluster", "none", "--passages", str(corpus), *OPTS,
                 "--shard-size", "500", "-o", str(out["index"])]) == 0
    assert main(["retrieve", "--cluster", "none", "--index", str(out["index"]), "--gold",
                 str(qa), "--hits", "100", "--trec", str(out["trec"])]) == 0
    out["qa_first"].write_text("".join(qa.read_text(encoding="utf-8")
                                       .splitlines(keepends=True)[:SUBSET]), encoding="utf-8")
    assert main(["retrieve", "--cluster", "none", "--index", str(out["index"]), "--gold",
                 str(out["qa_first"]), "--hits", "100", "-o", str(out["json_first"]),
                 "--trec", str(out["trec_first"])]) == 0
    return out


def _trec_lists(path: Path) -> dict[str, list[tuple[str, float]]]:
    from nqkit.formats.trec import read_trec_run

    out: dict[str, list[tuple[str, float]]] = {}
    for line in read_trec_run(path):
        out.setdefault(line.qid, []).append((line.docid, line.score))
    return out


def test_cli_top100_and_scores_equal_pyserinis(exact_run: dict[str, Path],
                                                pyserini_run: dict[str, Any]) -> None:
    ours = _trec_lists(exact_run["trec"])
    theirs = pyserini_run["pyserini"]  # LuceneSearcher.batch_search: (docid, score)
    n = len(theirs)
    assert n == 3610
    same_ids = same_scores = 0
    diffs: list[str] = []
    for i, hits in enumerate(theirs):
        got = ours.get(str(i), [])
        if [d for d, _ in got] == [d for d, _ in hits]:
            same_ids += 1
            # nqkit writes each float32 score as its shortest text: read back, the float32
            same_scores += [F(s) for _, s in got] == [F(s) for _, s in hits]
        elif len(diffs) < 5:
            diffs.append(f"{pyserini_run['questions'][i]!r}: {[d for d, _ in got[:5]]} vs "
                         f"{[d for d, _ in hits[:5]]}")
    report = f"top-100 ids identical {same_ids}/{n}, scores equal {same_scores}/{n}"
    print(report)
    # measured: every question, ids and scores (no residual); keep it that way (and so
    # the answer recall of the two runs, the same lists, is the same)
    assert same_ids == same_scores == n, report + "; " + "; ".join(diffs)


def test_signature_names_the_flavour_and_the_scores(
        exact_run: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["retrieve", "--cluster", "none", "--index", str(exact_run["index"]),
                 "--gold", str(exact_run["qa"]), "--eval", "--format", "json"]) == 0
    sig = json.loads(capsys.readouterr().out)["signature"]
    assert "|retriever:bm25|k1:0.9|b:0.4|bm25:lucene-exact|stop:lucene|stem:porter|" in sig
    assert "|scores:anserini|" in sig and "bm25s:" not in sig


def test_results_and_trec_run_carry_the_same_scores(exact_run: dict[str, Path]) -> None:
    run = json.loads(exact_run["json_first"].read_text(encoding="utf-8"))
    trec = _trec_lists(exact_run["trec_first"])
    assert len(run) == SUBSET
    for i, r in enumerate(run):
        assert [(c["id"], c["score"]) for c in r["ctxs"]] == trec[str(i)]
    # the first questions' TREC lines are those of the run of all of them
    want = b"".join(line for line in exact_run["trec"].read_bytes().splitlines(keepends=True)
                    if int(line.split(b" ", 1)[0]) < SUBSET)
    assert exact_run["trec_first"].read_bytes() == want


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "params.json"}


def test_local_cluster_gives_the_bytes_of_one_process(
        exact_run: dict[str, Path], corpus: Path, tmp_path: Path) -> None:
    require("dask.distributed")
    ix = tmp_path / "ix"
    assert main(["index", "build", "--passages", str(corpus), *OPTS, "-o", str(ix),
                 "--shard-size", "500", "--cluster", "local", "--workers", "2"]) == 0
    assert json.loads((ix / "params.json").read_text())["build"]["workers"] == 2
    assert _tree_bytes(ix) == _tree_bytes(exact_run["index"])
    run, trec = tmp_path / "run.json", tmp_path / "run.trec"
    assert main(["retrieve", "--index", str(ix), "--gold", str(exact_run["qa_first"]),
                 "--hits", "100", "-o", str(run), "--trec", str(trec), "--cluster", "local",
                 "--workers", "2"]) == 0
    assert run.read_bytes() == exact_run["json_first"].read_bytes()
    assert trec.read_bytes() == exact_run["trec_first"].read_bytes()


def test_other_shardings_give_the_same_run(exact_run: dict[str, Path], corpus: Path,
                                           tmp_path: Path) -> None:
    # one shard, and shards of 97 passages: the tie-break by id string crosses shards
    qa, want_trec = exact_run["qa_first"], exact_run["trec_first"].read_bytes()
    for size in ("5000", "97"):
        ix = tmp_path / f"ix{size}"
        assert main(["index", "build", "--cluster", "none", "--passages", str(corpus), *OPTS,
                     "-o", str(ix), "--shard-size", size]) == 0
        trec = tmp_path / f"run{size}.trec"
        assert main(["retrieve", "--cluster", "none", "--index", str(ix), "--gold",
                     str(qa), "--hits", "100", "--trec", str(trec)]) == 0
        assert trec.read_bytes() == want_trec


# -------------------------------------------------------------- the in-memory path (ReQA)

def test_in_memory_scores_are_lucene_bm25_over_the_analyzer() -> None:
    require("bm25s")
    from nqkit.retrieval.bm25 import BM25Retriever
    from nqkit.retrieval.lucene_bm25 import LuceneBM25, LuceneBM25Settings
    from nqkit.text.lucene import analyze

    docs = ["The U.S. Army's tanks.", "Tanks of the army", "", "a an the", "Armies, tanks!"]
    queries = ["army tanks", "tanks tanks", "the", "unknown words"]
    r = BM25Retriever(k1=0.9, b=0.4, method="lucene-exact")
    got = r.index(docs).scorer(queries)(0, len(queries))
    ix = LuceneBM25.build([analyze(d) for d in docs], [str(i) for i in range(len(docs))],
                          LuceneBM25Settings(0.9, 0.4))
    want = np.stack([ix.scores(analyze(q)) for q in queries])
    assert got.dtype == np.float32 and got.tobytes() == want.tobytes()
    assert (got[0, [0, 1, 4]] > 0).all() and (got[2] == 0).all() and (got[3] == 0).all()
    assert r.settings() == {"retriever": "bm25", "k1": 0.9, "b": 0.4, "bm25": "lucene-exact",
                            "stop": "lucene", "stem": "porter"}


def test_in_memory_lucene_exact_refuses_bm25s_stop_words_and_stemmer() -> None:
    from nqkit.retrieval.bm25 import BM25Retriever

    with pytest.raises(ValueError, match="stopwords and stemmer do not apply"):
        BM25Retriever(method="lucene-exact", stemmer=None)
    with pytest.raises(ValueError, match="stopwords and stemmer do not apply"):
        BM25Retriever(method="lucene-exact", stopwords="none")


def test_reqa_run_with_lucene_exact(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    from conftest import small_reqa_task

    task = small_reqa_task(tmp_path / "task")
    capsys.readouterr()
    assert main(["reqa", "run", "--gold", str(task), "--bm25-method", "lucene-exact",
                 "--no-per-item", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    sig = out["signature"] if "signature" in out else json.dumps(out)
    assert "bm25:lucene-exact|stop:lucene|stem:porter" in sig


def test_ties_go_to_the_smaller_id_string_across_shards(tmp_path: Path) -> None:
    # three identical passages, ids "9", "10" and "100" in three shards (corpus order 9, 10,
    # 100); Lucene's order of tied scores is by id string: "10" < "100" < "9"
    from nqkit.retrieval.corpus import Passage

    corpus = tmp_path / "ties.tsv"
    same = ("Aardvarks eat termites at night.", "Aardvark")
    write_passages(corpus, [Passage("9", *same), Passage("other", "Nothing here.", "X"),
                            Passage("10", *same), Passage("100", *same)])
    qa = tmp_path / "qa.tsv"
    qa.write_text("what do aardvarks eat\t['termites']\n", encoding="utf-8")
    ix, trec = tmp_path / "ix", tmp_path / "run.trec"
    assert main(["index", "build", "--cluster", "none", "--passages", str(corpus), *OPTS,
                 "-o", str(ix), "--shard-size", "2"]) == 0
    assert main(["retrieve", "--cluster", "none", "--index", str(ix), "--gold", str(qa),
                 "--hits", "10", "--trec", str(trec)]) == 0
    hits = _trec_lists(trec)["0"]
    assert [d for d, _ in hits] == ["10", "100", "9"]
    # Anserini's rounding pulls the tied scores apart by 1e-6 steps, in rank order
    top = F(hits[0][1])
    assert top == F(round(float(top), 4))
    assert [F(s) for _, s in hits] == [top, F(top - F(1e-6) * F(1)), F(top - F(1e-6) * F(2))]


def test_an_index_of_another_analyzer_is_refused(exact_run: dict[str, Path]) -> None:
    from nqkit.cluster import open_cluster
    from nqkit.errors import InputError
    from nqkit.retrieval.lucene_bm25 import LuceneBM25Settings
    from nqkit.retrieval.lucene_index import search_lucene
    from nqkit.retrieval.open_index import load_index

    index = load_index(exact_run["index"])
    facts = {**index.params["facts"], "analyzer": "lucene-8.0-english"}
    with open_cluster("none") as cluster, pytest.raises(InputError, match="rebuild it"):
        search_lucene(index.root, index.shards, LuceneBM25Settings(), facts, ["q"], 10,
                      cluster)


def test_a_shard_without_terms_and_a_question_without_terms(tmp_path: Path) -> None:
    # shard 0 holds only stop words and punctuation (Lucene indexes no term for them and
    # does not count them in docCount); a question of stop words matches nothing
    from nqkit.retrieval.corpus import Passage

    corpus = tmp_path / "c.tsv"
    write_passages(corpus, [Passage("1", "the and of", "a"), Passage("2", "...", "!"),
                            Passage("3", "Termites live in mounds.", "Termite")])
    qa = tmp_path / "qa.tsv"
    qa.write_text("where do termites live\t['mounds']\nthe of and\t['x']\n", encoding="utf-8")
    ix, trec = tmp_path / "ix", tmp_path / "run.trec"
    assert main(["index", "build", "--cluster", "none", "--passages", str(corpus), *OPTS,
                 "-o", str(ix), "--shard-size", "2"]) == 0
    facts = json.loads((ix / "params.json").read_text())["facts"]
    assert facts["doc_count"] == 1 and facts["vocabulary"] == 3  # termit, live, mound
    assert main(["retrieve", "--cluster", "none", "--index", str(ix), "--gold", str(qa),
                 "--hits", "10", "--trec", str(trec)]) == 0
    hits = _trec_lists(trec)
    assert [d for d, _ in hits["0"]] == ["3"] and "1" not in hits


@pytest.mark.parametrize("block", [8192, 2])
def test_the_build_analyzes_chunks_as_the_whole_text(tmp_path: Path, block: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # the build analyzes each distinct space-separated chunk once; its arrays must be those
    # of the terms of each whole text (title + "\n" + text), here counted by LuceneBM25;
    # a shard is counted a block of passages at a time (2: a quoted Hebrew text is met in
    # a later block of its shard, and careful passages sit between blocks)
    from nqkit.retrieval import lucene_index
    from nqkit.retrieval.corpus import Passage
    from nqkit.retrieval.lucene_bm25 import LuceneBM25
    from nqkit.text.lucene import analyze

    texts = [("U.S.-based (1990–1995) e-mail  the  The THE", "A title"),
             ("  leading and trailing  ", "t"), ("x" * 300 + " " + "x" * 300, "long"),
             ("👩\u200d 👩\u200d👩 a\u0301 \u0301b 1\ufe0f\u20e3", "emoji"), ("the of and", "a"),
             ("צה\"ל a'ב' R&B dog's dogs' ทดสอบภาษาไทย 東京", "mixed"),
             ("U.S.-based e-mail e-mail", "A title"), ("...", "!"),
             ("a\u202fb (U+202F is ExtendNumLet: one token) c\u00a0d", "other spaces"),
             ('"Quoted" a""b "x y" e-"mail"', '"T" "'),  # quoted fields, read as written
             ("tab\tline\nbreak\x0bvt\x0cff cr\r\nend\x1c", "ascii whitespace")]
    passages = [Passage(f"p{i}", *texts[i % len(texts)]) for i in range(40)]
    # shard 0 is read the careful way (one passage at a time) for a quoted Hebrew text
    # (doubled quotes would change its terms), shard 2 for a NUL byte, passage 30 for its
    # quoted id; the others from the shard's bytes (their Hebrew text has no quote)
    for i in range(5, 40, len(texts)):
        passages[i] = Passage(f"p{i}", "a'ב' R&B dog's ทดสอบภาษาไทย 東京", "mixed")
    passages[3] = Passage("p3", 'צה"ל and "א"ב"', "hebrew quotes")
    passages[21] = Passage("p21", "nul\x00 byte \x00", "nul")
    passages[30] = Passage('p"30\t', "a quoted id", "id")
    corpus = tmp_path / "c.tsv"
    write_passages(corpus, passages)
    ix = tmp_path / "ix"
    monkeypatch.setattr(lucene_index, "_BLOCK", block)
    # what each shard's read from its bytes gave: its ids, or None (unsafe)
    read: list[list[str] | None] = []
    fast_read = lucene_index._read_chunks
    monkeypatch.setattr(lucene_index, "_read_chunks",
                        lambda *a: read.append(fast_read(*a)) or read[-1])
    assert main(["index", "build", "--cluster", "none", "--passages", str(corpus), *OPTS,
                 "-o", str(ix), "--shard-size", "9"]) == 0
    assert read[0] is None and [len(r or []) for r in read[1:]] == [9, 8, 4]
    want = LuceneBM25.build([analyze(f"{p.title}\n{p.text}") for p in passages],
                            [p.id for p in passages], shard_size=9)
    assert json.loads((ix / "bm25" / "vocab.json").read_text()) == want.stats.vocab
    assert np.array_equal(np.load(ix / "bm25" / "doc_freq.npy"), want.stats.doc_freq)
    assert len(want.shards) == 5 and "a\u202fb" in want.stats.vocab
    assert 'צה"ל' in want.stats.vocab and 'א"ב' in want.stats.vocab
    ids = np.concatenate([np.load(ix / "bm25" / f"ids-{i:05d}.npy") for i in range(5)])
    assert ids.tolist() == [p.id for p in passages]
    for i, sh in enumerate(want.shards):
        for kind in ("norms", "terms", "indptr", "rows", "freqs", "data"):
            got = np.load(ix / "bm25" / f"{kind}-{i:05d}.npy")
            assert got.dtype == getattr(sh, kind).dtype, kind
            assert np.array_equal(got, getattr(sh, kind)), (i, kind)


@pytest.mark.parametrize("fields", [[], ["--bm25-fields", "text", "title=0.5"]],
                         ids=["flat", "multifield"])
def test_a_shard_counted_in_parts_gives_the_files_of_one_count(
        corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        fields: list[str]) -> None:
    # with fewer shards than two per worker, a shard is counted by several jobs (parts
    # of at least _BLOCK rows), merged by its score job: every file must be what one
    # count of the whole shard writes. One process here, cut as for 3 workers with
    # blocks of 500 rows: shards of 2,000 and 1,349 passages in 3 and 2 parts.
    from nqkit.retrieval import lucene_index

    argv = ["index", "build", "--cluster", "none", "--passages", str(corpus), *OPTS,
            *fields, "--shard-size", "2000", "-o"]
    assert main([*argv, str(tmp_path / "whole")]) == 0
    cut = lucene_index._parts
    made: list[tuple[int, ...]] = []

    def parts(shard: Any, workers: int, shards: int) -> tuple[int, ...]:
        assert workers == 1  # --cluster none
        made.append(cut(shard, 3, shards))
        return made[-1]

    monkeypatch.setattr(lucene_index, "_BLOCK", 500)
    monkeypatch.setattr(lucene_index, "_parts", parts)
    assert main([*argv, str(tmp_path / "parts")]) == 0
    assert made == [(0, 666, 1333), (0, 674)]
    assert _tree_bytes(tmp_path / "parts") == _tree_bytes(tmp_path / "whole")
    digests = [json.loads((tmp_path / d / "params.json").read_text())["digest"]
               for d in ("whole", "parts")]
    assert digests[0] == digests[1]


def test_questions_searched_in_groups_give_the_run_of_one_search(
        exact_run: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # with fewer shards than two per worker, each shard is searched by several jobs, one
    # per range of questions: the same lists and bytes (one process here, cut as for 12
    # workers: 7 shards, 4 ranges of the 600 questions)
    from nqkit.retrieval import lucene_index

    cut = lucene_index._question_groups
    made: list[list[tuple[int, int]]] = []

    def groups(questions: int, workers: int, shards: int) -> list[tuple[int, int]]:
        made.append(cut(questions, 12, shards))
        return made[-1]

    monkeypatch.setattr(lucene_index, "_question_groups", groups)
    run, trec = tmp_path / "run.json", tmp_path / "run.trec"
    assert main(["retrieve", "--cluster", "none", "--index", str(exact_run["index"]),
                 "--gold", str(exact_run["qa_first"]), "--hits", "100", "-o", str(run),
                 "--trec", str(trec)]) == 0
    assert made == [[(0, 150), (150, 300), (300, 450), (450, 600)]]
    assert trec.read_bytes() == exact_run["trec_first"].read_bytes()
    assert run.read_bytes() == exact_run["json_first"].read_bytes()


def test_no_bm25s_versions_recorded_or_needed(exact_run: dict[str, Path], corpus: Path,
                                              tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil
    import sys

    from nqkit.retrieval.open_index import load_index

    params = json.loads((exact_run["index"] / "params.json").read_text())
    assert set(params["versions"]) == {"nqkit", "numpy"}
    # an index built when lucene-exact still recorded bm25s's versions loads whatever
    # bm25s is installed (it never used it)
    old = tmp_path / "old"
    shutil.copytree(exact_run["index"], old)
    params["versions"].update({"bm25s": "0.0.1", "PyStemmer": "0.0.1"})
    (old / "params.json").write_text(json.dumps(params))
    assert load_index(old).params["versions"]["bm25s"] == "0.0.1"
    # neither bm25s nor PyStemmer is needed to build and search
    monkeypatch.setitem(sys.modules, "bm25s", None)
    monkeypatch.setitem(sys.modules, "Stemmer", None)
    qa = tmp_path / "qa.tsv"
    qa.write_text("who wrote the iliad\t['Homer']\n", encoding="utf-8")
    ix = tmp_path / "ix"
    assert main(["index", "build", "--cluster", "none", "--passages", str(corpus), *OPTS,
                 "-o", str(ix), "--shard-size", "2000"]) == 0
    assert main(["retrieve", "--cluster", "none", "--index", str(ix), "--gold", str(qa),
                 "--hits", "5", "--trec", str(tmp_path / "run.trec")]) == 0
    assert main(["retrieve", "--cluster", "none", "--index", str(old), "--gold", str(qa),
                 "--hits", "5", "--trec", str(tmp_path / "old.trec")]) == 0
    assert (tmp_path / "old.trec").read_bytes() == (tmp_path / "run.trec").read_bytes()
