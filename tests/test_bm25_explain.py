"""``nqkit explain bm25`` (:mod:`nqkit.retrieval.bm25_explain`): every list that differs
between two BM25 runs is put down to exactly one cause.

On the real passages (3,349, as ``tests/test_retrieval_index.py`` builds them) and every
10th question of ``nq-test.qa.tsv`` (361 questions, to keep the file near 10 s): the two
runs are made by ``nqkit index build`` and ``nqkit retrieve``, the lists that differ are
counted from their DPR results files (independently of the explanation), and the causes
must add up to that count, with the chain's ends equal to the two runs. On hand-built
corpora where one cause alone applies, the expected lists are worked out by hand in the
comments (bm25s: ties by corpus position; Lucene: ties by id string).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nqkit.cli import main
from nqkit.retrieval.bm25_explain import (
    CAUSES,
    MISSING,
    UNREPRODUCED,
    Bm25Setup,
    Corpus,
    chain,
    explain_bm25,
    ranked_lists,
    setup_of_index,
)
from nqkit.retrieval.corpus import write_passages

from conftest import SHARED, make_passages_module, require, shared_file

EVERY = 10  # every 10th question of nq-test.qa.tsv
BM25S = {"k1": 0.9, "b": 0.4, "method": "lucene", "stopwords": "en", "stemmer": "english",
         "fields": "title+text"}
EXACT = {"k1": 0.9, "b": 0.4, "method": "lucene-exact", "stopwords": "lucene",
         "stemmer": "porter", "fields": "title+text"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Both indexes of the real passages and their top-100 runs of the question subset."""
    require("bm25s")
    shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
    shared_file("data", "nq-open", "nq-open-oracle.jsonl.gz")
    d = tmp_path_factory.mktemp("explain")
    corpus = d / "real.tsv"
    write_passages(corpus, make_passages_module().real_passages(SHARED))
    lines = shared_file("data", "dpr", "nq-test.qa.tsv").read_text(encoding="utf-8")
    qa = d / "sub.qa.tsv"
    qa.write_text("".join(lines.splitlines(keepends=True)[::EVERY]), encoding="utf-8")
    out: dict[str, Any] = {"qa": qa}
    for name, opts in (("a", []), ("b", ["--bm25-method", "lucene-exact"])):
        ix = d / name
        assert main(["index", "build", "--cluster", "none", "--passages", str(corpus),
                     "--retriever", "bm25", *opts, "-o", str(ix)]) == 0
        assert main(["retrieve", "--cluster", "none", "--index", str(ix), "--gold", str(qa),
                     "--hits", "100", "-o", str(d / f"{name}.json")]) == 0
        results = json.loads((d / f"{name}.json").read_text(encoding="utf-8"))
        out[name] = ix
        out[f"{name}_lists"] = [tuple(c["id"] for c in r["ctxs"]) for r in results]
        out["questions"] = [r["question"] for r in results]
    return out


def test_real_passages_every_differing_list_has_one_cause(
        runs: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    differing = sum(a != b for a, b in zip(runs["a_lists"], runs["b_lists"], strict=True))
    assert len(runs["questions"]) == 361 and differing > 300  # the runs do differ
    capsys.readouterr()
    assert main(["explain", "bm25", "--index", str(runs["a"]), "--index", str(runs["b"]),
                 "--gold", str(runs["qa"]), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["questions"] == 361 and got["differing"] == differing
    assert sum(c["questions"] for c in got["causes"]) == differing
    assert got["reproduced_a"] == got["reproduced_b"] == 361  # the chain's ends are the runs
    assert got["steps"] == ["analyzer", "scoring", "tie order"]
    causes = {c["cause"]: c["questions"] for c in got["causes"]}
    assert UNREPRODUCED not in causes and MISSING not in causes
    assert causes["scoring"] > 0 and causes["tie order"] > 0
    assert not got["warnings"]
    a_digest = json.loads((runs["a"] / "params.json").read_text())["digest"][:12]
    b_digest = json.loads((runs["b"] / "params.json").read_text())["digest"][:12]
    assert f"a-index:{a_digest}" in got["signature"]
    assert f"b-index:{b_digest}|b-corpus:" in got["signature"]
    assert "b-bm25:lucene-exact" in got["signature"] and "|hits:100|" in got["signature"]
    assert got["signature"].startswith("explain|split:nq-open/dev[361#")


def test_real_passages_chain_ends_are_the_two_runs(runs: dict[str, Any]) -> None:
    """Stage 0 (bm25s in memory) gives run A's lists, the last stage run B's, read from
    the files ``nqkit retrieve`` wrote, for every question; a tie-order question's two
    lists hold the same passages."""
    from nqkit.retrieval.bm25_explain import _corpus
    from nqkit.retrieval.open_index import load_index

    a, b = load_index(runs["a"]), load_index(runs["b"])
    corpus = _corpus(a)
    assert len(corpus.ids) == 3349
    assert setup_of_index(a.settings()) == Bm25Setup("bm25s:en:english", "bm25s:lucene",
                                                     0.9, 0.4)
    cache: dict[Any, Any] = {}
    qs = runs["questions"]
    assert ranked_lists(corpus, setup_of_index(a.settings()), qs, 100, cache) == runs["a_lists"]
    assert ranked_lists(corpus, setup_of_index(b.settings()), qs, 100, cache) == runs["b_lists"]
    e = explain_bm25(corpus, setup_of_index(a.settings()), runs["a_lists"], corpus,
                     setup_of_index(b.settings()), runs["b_lists"], qs, 100)
    # a tie-order question: Lucene's lists before and after the tie step hold the same
    # raw scores rank by rank (only equal scores change places, also at the depth cut)
    from nqkit.retrieval.lucene_bm25 import LuceneBM25
    from nqkit.text.lucene import analyze, analyze_many

    lucene = LuceneBM25.build(analyze_many([f"{t}\n{x}" for t, x in
                                            zip(corpus.titles, corpus.texts, strict=True)]),
                              corpus.ids)
    row = {pid: r for r, pid in enumerate(corpus.ids)}
    pre_tie = ranked_lists(corpus, Bm25Setup("lucene", "lucene", 0.9, 0.4), qs, 100, cache)
    ties = [i for i, c in enumerate(e.per_question) if c == "tie order"]
    assert len(ties) > 100
    for i in ties:
        scores = lucene.scores(analyze(qs[i]))
        assert pre_tie[i] != runs["b_lists"][i]
        assert ([scores[row[p]] for p in pre_tie[i]]
                == [scores[row[p]] for p in runs["b_lists"][i]])


# --------------------------------------------------------------- one cause at a time

A = Bm25Setup("bm25s:en:english", "bm25s:lucene", 0.9, 0.4)  # nqkit's default flavour
B = Bm25Setup("lucene", "lucene", 0.9, 0.4, ties="id")  # lucene-exact


def _corpus(*docs: tuple[str, str]) -> Corpus:
    """(id, text) passages with empty titles."""
    return Corpus(tuple(i for i, _ in docs), ("",) * len(docs), tuple(t for _, t in docs))


def _explain(corpus: Corpus, a: list[tuple[str, ...]], b: list[tuple[str, ...]],
             questions: list[str], corpus_b: Corpus | None = None) -> Any:
    require("bm25s")
    return explain_bm25(corpus, A, a, corpus_b or corpus, B, b, questions, 10)


def _only(e: Any, cause: str) -> None:
    assert e.differing == 1 and e.counts[cause] == 1
    assert sum(e.counts.values()) == 1 and set(e.counts) == set(CAUSES)


def test_equal_scores_are_tie_order() -> None:
    # two equal texts: bm25s keeps corpus order (9, 10), Lucene the id string ("10" < "9")
    corpus = _corpus(("9", "zebra w001"), ("10", "zebra w001"), ("11", "w002"))
    e = _explain(corpus, [("9", "10")], [("10", "9")], ["zebra"])
    _only(e, "tie order")
    assert e.reliable and e.examples["tie order"] == ["zebra"]


def test_one_letter_token_is_the_analyzer() -> None:
    # bm25s drops the one-letter "x": only passage 2 matches "x w002"; Lucene keeps it, and
    # 2 (one term) scores above 1 (two terms of the same idf) under either scoring
    corpus = _corpus(("1", "x w001"), ("2", "w002"))
    _only(_explain(corpus, [("2",)], [("2", "1")], ["x w002"]), "analyzer")


def test_stemming_difference_is_the_analyzer() -> None:
    # Snowball: generous -> generous, general -> general; Lucene's Porter: both -> gener
    corpus = _corpus(("1", "general w001"), ("2", "generous"))
    _only(_explain(corpus, [("2",)], [("2", "1")], ["generous"]), "analyzer")


def test_length_byte_is_the_scoring() -> None:
    # passage a has 41 terms, b 40: bm25s ranks the shorter b first; Lucene stores both
    # lengths in the same byte (40 and 41 share one), so they tie and a wins on its id
    fill = " ".join(f"w{i:03d}" for i in range(39))
    corpus = _corpus(("a", f"zebra {fill} w999"), ("b", f"zebra {fill}"))
    _only(_explain(corpus, [("b", "a")], [("a", "b")], ["zebra"]), "scoring")


def test_the_last_step_that_changes_a_list_is_its_cause() -> None:
    # bm25s drops "x": 9 and 10 tie on "zebra" -> (9, 10); Lucene's tokens add 5 ("x": idf
    # log(1 + 2.5 / 1.5) = 0.98 against zebra's log(1 + 1.5 / 2.5) = 0.47; with 101 terms
    # against an average of 35, 0.98 * 0.74 = 0.72 > 0.47 * 1.22 = 0.57) in first place:
    # (5, 9, 10); Lucene's scoring keeps it; its tie order gives (5, 10, 9). The analyzer
    # changed the list first, the tie order last: the cause is the tie order.
    fill = " ".join(f"w{i:03d}" for i in range(100))
    corpus = _corpus(("9", "zebra w900"), ("10", "zebra w901"), ("5", f"x {fill}"))
    e = _explain(corpus, [("9", "10")], [("5", "10", "9")], ["zebra x"])
    _only(e, "tie order")
    assert e.changed == {"analyzer": 1, "scoring": 0, "tie order": 1}


def test_passage_missing_from_the_other_corpus() -> None:
    corpus_a = _corpus(("1", "zebra"), ("2", "w001"))
    corpus_b = _corpus(("2", "w001"), ("3", "zebra"))
    e = _explain(corpus_a, [("1",)], [("3",)], ["zebra"], corpus_b)
    _only(e, MISSING)
    assert e.steps[0] == "passages"


def test_lists_the_chain_cannot_give_are_not_reproduced() -> None:
    # run A claims passage 2 for "zebra", which bm25s never returns: said, not hidden
    corpus = _corpus(("1", "zebra"), ("2", "w001"))
    e = _explain(corpus, [("2",)], [("1",)], ["zebra"])
    _only(e, UNREPRODUCED)
    assert (e.reproduced_a, e.reproduced_b, e.reliable) == (0, 1, False)


def test_same_lists_are_not_counted() -> None:
    corpus = _corpus(("1", "zebra"), ("2", "w001"))
    e = _explain(corpus, [("1",)], [("1",)], ["zebra"])
    assert e.differing == 0 and sum(e.counts.values()) == 0 and e.per_question == [None]


def test_chain_steps_only_where_the_setups_differ() -> None:
    assert [n for n, _ in chain(A, B, True)] == ["analyzer", "scoring", "tie order"]
    mf = Bm25Setup("lucene", "lucene", 1.2, 0.75, "text=1,title=1", "id")
    assert [n for n, _ in chain(A, mf, False)] == ["passages", "analyzer", "k1/b", "scoring",
                                                   "fields", "tie order"]
    # back to bm25s: the fields go flat before the scoring leaves Lucene
    assert [n for n, _ in chain(mf, A, True)] == ["analyzer", "k1/b", "fields", "scoring",
                                                  "tie order"]
    assert chain(A, A, True) == []
    assert chain(A, mf, True)[-1][1] == mf  # the last stage is B's setup


def test_one_index_is_refused(runs: dict[str, Any], capsys: pytest.CaptureFixture[str]
                              ) -> None:
    assert main(["explain", "bm25", "--index", str(runs["a"]), "--gold",
                 str(runs["qa"])]) == 2
    err = capsys.readouterr().err
    assert "give two --index directories, got 1" in err and "Traceback" not in err


def _index(d: Path, name: str, rows: list[tuple[str, str]], *opts: str) -> Path:
    tsv = d / f"{name}.tsv"
    tsv.write_text("id\ttext\ttitle\n" + "".join(f"{i}\t{t}\t\n" for i, t in rows),
                   encoding="utf-8")
    out = d / name
    assert main(["index", "build", "--cluster", "none", "--passages", str(tsv),
                 "--retriever", "bm25", *opts, "-o", str(out)]) == 0
    return out


def test_two_corpora_through_the_command(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    # "zebra" is passage 1 in A's corpus and passage 3 in B's: a missing passage; "w001"
    # finds passage 2 in both, so its list is the same
    require("bm25s")
    a = _index(tmp_path, "a", [("1", "zebra"), ("2", "w001")])
    b = _index(tmp_path, "b", [("2", "w001"), ("3", "zebra")], "--bm25-method",
               "lucene-exact")
    qa = tmp_path / "q.qa.tsv"
    qa.write_text("zebra\t['x']\nw001\t['y']\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["explain", "bm25", "--index", str(a), "--index", str(b), "--gold", str(qa),
                 "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["steps"][0] == "passages" and got["differing"] == 1
    assert {c["cause"]: c["questions"] for c in got["causes"]}[MISSING] == 1
    assert got["reproduced_a"] == got["reproduced_b"] == 2
    corpora = {p.split(":")[0]: p.split(":")[1] for p in got["signature"].split("|")[1:-1]}
    assert corpora["a-corpus"] != corpora["b-corpus"]


def test_an_unreproduced_chain_warns_and_marks_the_signature(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    import nqkit.retrieval.bm25_explain as bx

    require("bm25s")
    rows = [("9", "zebra"), ("10", "zebra")]
    a = _index(tmp_path, "a", rows)
    b = _index(tmp_path, "b", rows, "--bm25-method", "lucene-exact")
    qa = tmp_path / "q.qa.tsv"
    qa.write_text("zebra\t['x']\n", encoding="utf-8")
    real = bx.explain_indexes

    def off_by_one(*args: Any, **kwargs: Any) -> Any:  # as if run B were not lucene-exact's
        e, la, lb = real(*args, **kwargs)
        return replace(e, reproduced_b=e.reproduced_b - 1), la, lb

    monkeypatch.setattr(bx, "explain_indexes", off_by_one)
    capsys.readouterr()
    assert main(["explain", "bm25", "--index", str(a), "--index", str(b), "--gold",
                 str(qa)]) == 0
    out, err = capsys.readouterr()
    assert "nqkit: warning: the chain of in-memory setups reproduces run A for 1 and run " \
           "B for 0 of 1 questions" in err
    assert "|warn:unreproduced|v" in out
    assert "tie order" in out  # the tie of 9 and 10 is still explained
