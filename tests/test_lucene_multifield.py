"""Multifield BM25 (``--bm25-fields text title``) against Anserini's multifield search.

Unit cases are computed here by hand: the field spellings, Anserini's empty-document rule,
a clause's weight ``(count * fieldWeight) * idf`` in float32, and how the fields' sums are
combined (weight-1 fields flattened into one double sum, other weights rounded to float32
first). The parity tests index passages with Pyserini 1.6.0's Anserini jar
(``IndexCollection -fields title``: ``contents`` = the text, ``title`` = the title) and
search with the query ``SearchCollection -fields contents=1.0 title=1.0`` builds
(tests/lucene_fields_oracle.py, tests/AnseriniFieldsSearch.java), then compare every
top-100 list and its scores with nqkit's: Lucene's raw float32 scores with
:class:`~nqkit.retrieval.lucene_bm25.MultiFieldBM25` over nqkit's analyzer (the in-memory
path), and what ``SimpleSearcher.search_fields`` returns with ``nqkit index build`` /
``nqkit retrieve`` (the sharded path). Two corpora: the 3,349 real passages with the
NQ-open dev questions of nq-test.qa.tsv (weights 1 and 1), and the 2,067 paragraphs of
SQuAD 1.1 dev under their article titles with SQuAD's own dev questions (title weight 0.5:
a nested field, rounded to float32 before the outer sum); replacing either rule of that
sum by the other fails the parity test on some lists. The suite searches every 20th
question of the 3,610 and every 60th SQuAD question (181 and 177: the oracle's JVM costs
some 10 ms a question); ``NQKIT_FULL_ORACLE=1`` searches all 3,610 of each (measured: all
equal, docs/retrieval.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nqkit.cli import main
from nqkit.retrieval.corpus import Passage, write_passages
from nqkit.retrieval.lucene_bm25 import (
    FLAT,
    LuceneBM25,
    MultiFieldBM25,
    combine_fields,
    field_texts,
    field_weights,
    fields_spec,
    term_weight,
)

from conftest import SHARED, java21_home, make_passages_module, require, shared_file

F = np.float32
OPTS = ["--retriever", "bm25", "--bm25-method", "lucene-exact"]
FULL = os.environ.get("NQKIT_FULL_ORACLE", "") not in ("", "0")


# ------------------------------------------------------------------------ by hand

def test_field_spellings() -> None:
    assert field_weights("title+text") == {FLAT: 1.0}
    assert field_weights("text,title=0.5") == {"text": 1.0, "title": 0.5}
    assert fields_spec({"title": 0.5, "text": 1.0}) == "text=1,title=0.5"
    assert fields_spec({"title": 0.1}) == "title=0.1"  # float32's shortest text
    for bad in ("text,text", "body", "text=0", "title=-1", "text=inf", "title+text,text"):
        with pytest.raises(ValueError):
            field_weights(bad)


def test_what_each_field_holds() -> None:
    assert field_texts("T", "x y", FLAT) == "T\nx y"
    assert field_texts("T", "x y", "text") == "x y" and field_texts("T", "x", "title") == "T"
    # Anserini skips a document whose contents (the text) is empty after Java's trim(),
    # which strips every code point up to U+0020, and not U+00A0
    assert field_texts("T", " \t\x00\x1f ", "title") == ""
    assert field_texts("T", "\u00a0", "title") == "T"


def test_a_clause_weight_is_count_times_field_weight_times_idf() -> None:
    idf = F(1.2345678)
    assert term_weight(3, 0.3, idf) == F(F(F(3) * F(0.3)) * idf)
    assert term_weight(1, 1.0, idf) == idf
    # not the double product rounded once: (3 * 0.3) * idf differs in its last bit
    assert term_weight(3, 0.3, idf) != F(3 * 0.3 * float(idf))


def test_weight_one_fields_share_one_double_sum_other_weights_are_rounded_first() -> None:
    u = 2.0**-23  # float32's spacing at 1
    a, b = 1 + 0.55 * u, 1 + 0.48 * u  # as floats: 1 + u and 1
    rows = np.asarray([7])
    # both flattened: a + b = 2 + 1.03 u rounds up to 2 + 2u (float32's spacing at 2)
    got = combine_fields([(rows, np.asarray([a]), 1.0), (rows, np.asarray([b]), 1.0)])
    assert got[0].tolist() == [7] and got[1].tolist() == [F(2 + 2 * u)]
    # both nested: (1 + u) + 1 = 2 + u is a tie, to even: 2
    got = combine_fields([(rows, np.asarray([a]), 0.5), (rows, np.asarray([b]), 0.5)])
    assert got[1].tolist() == [F(2)]
    # a row matched in one field only
    got = combine_fields([(np.asarray([1, 3]), np.asarray([a, b]), 1.0),
                          (np.asarray([3]), np.asarray([1.0]), 2.0)])
    assert got[0].tolist() == [1, 3] and got[1].tolist() == [F(a), F(b + 1.0)]


def _clause(weight: np.float32, freq: int, length: int, avgdl: np.float32) -> np.float32:
    k1, b = F(0.9), F(0.4)
    inv = F(F(1) / F(k1 * F(F(F(1) - b) + F(F(b * F(length)) / avgdl))))
    return F(weight - F(weight / F(F(1) + F(F(freq) * inv))))


def test_two_fields_by_hand() -> None:
    # each field its own statistics: text avgdl 6/3, title avgdl 3/2 (one empty title)
    text = [["a", "b", "c"], ["a", "a"], ["b"]]
    title = [["a"], [], ["a", "b"]]
    ix = MultiFieldBM25.build({"text": text, "title": title}, ["x", "y", "z"],
                              {"text": 1.0, "title": 0.5})
    assert ix.indexes["title"].stats.doc_count == 2
    idf_text_a = F(np.log(1 + (3 - 2 + 0.5) / (2 + 0.5)))
    idf_title_a = F(np.log(1 + (2 - 2 + 0.5) / (2 + 0.5)))
    avg_text, avg_title = F(6 / 3), F(3 / 2)
    want_x = F(float(_clause(idf_text_a, 1, 3, avg_text))
               + float(F(_clause(F(F(0.5) * idf_title_a), 1, 1, avg_title))))
    want_y = _clause(idf_text_a, 2, 2, avg_text)
    want_z = _clause(F(F(0.5) * idf_title_a), 1, 2, avg_title)
    rows, scores = ix.matches(["a"])
    assert rows.tolist() == [0, 1, 2]
    assert scores.tolist() == [want_x, want_y, want_z]
    # the query's count multiplies the field weight, in float32
    _, twice = ix.matches(["a", "a"])
    assert twice[2] == _clause(F(F(F(2) * F(0.5)) * idf_title_a), 1, 2, avg_title)
    top, _ = ix.search(["a"], 2)
    assert [ix.ids[r] for r in top] == [ix.ids[r] for r in np.argsort(-scores)[:2]]


def test_one_field_of_weight_one_is_the_flat_search_of_that_field() -> None:
    docs = [["a", "b"], ["b", "b", "c"], [], ["c"]]
    ids = ["1", "2", "3", "4"]
    one = LuceneBM25.build(docs, ids)
    multi = MultiFieldBM25.build({"text": docs}, ids, {"text": 1.0})
    for q in (["b"], ["b", "c", "c"], ["z"]):
        assert [x.tolist() for x in multi.search(q, 3)] == [x.tolist() for x in one.search(q, 3)]


# ------------------------------------------------------------------- the command line

def test_bm25_fields_is_refused_in_one_line(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "c.tsv"
    write_passages(corpus, [Passage("1", "Termites live in mounds.", "Termite")])
    for extra, message in (
            (["--bm25-fields", "text", "body"], "--bm25-fields: 'text body' is not title+text"),
            (["--bm25-fields", "title=0"], "positive weights"),
            (["--bm25-method", "lucene", "--bm25-fields", "text", "title"],
             "--bm25-fields: text=1,title=1 needs --bm25-method lucene-exact")):
        capsys.readouterr()
        opts = OPTS[:2] + (["--bm25-method", "lucene-exact"] if "--bm25-method" not in extra
                           else [])
        code = main(["index", "build", "--cluster", "none", "--passages", str(corpus), *opts,
                     *extra, "-o", str(tmp_path / "ix")])
        err = capsys.readouterr().err
        assert code == 2 and message in err and "Traceback" not in err, err
        assert not (tmp_path / "ix").exists()


def _hard_passages() -> list[Passage]:
    """Passages whose titles and texts hold strings the analyzer treats specially, some
    with empty or stop-word-only fields, and repeated texts (ties across shards)."""
    texts = [("U.S.-based e-mail (1990–1995) the The", "U.S. Army"),
             ("Termites live in mounds; the mounds are tall.", "Termite"),
             ("the of and", "Termite mounds"), ("Mounds of termites.", "the"),
             ("  ", "Orphan title"),  # empty text: Anserini skips the document
             ("dog's dogs' R&B 東京 a\u202fb", "Dogs' R&B"),
             ('"Quoted" a""b e-"mail"', '"T" "'), ("x " * 120, "Long text"),
             ("Termites live in mounds; the mounds are tall.", "Termite")]
    return [Passage(str(i * 37 % 101), *texts[i % len(texts)]) for i in range(45)]


def test_sharded_path_equals_the_in_memory_index(tmp_path: Path) -> None:
    from nqkit.text.lucene import analyze

    passages = _hard_passages()
    corpus, qa = tmp_path / "c.tsv", tmp_path / "qa.tsv"
    write_passages(corpus, passages)
    questions = ["where do termites live", "U.S. army e-mail", "dogs R&B mounds mounds",
                 "orphan title", "the of and", "long text x"]
    qa.write_text("".join(f"{q}\t['x']\n" for q in questions), encoding="utf-8")
    weights = {"text": 1.0, "title": 0.3}
    want = MultiFieldBM25.build(
        {f: [analyze(field_texts(p.title, p.text, f)) for p in passages] for f in weights},
        [p.id for p in passages], weights)
    from nqkit.retrieval.lucene_bm25 import anserini_adjust

    runs = []
    for size in ("7", "1000"):
        ix, trec = tmp_path / f"ix{size}", tmp_path / f"run{size}.trec"
        assert main(["index", "build", "--cluster", "none", "--passages", str(corpus), *OPTS,
                     "--bm25-fields", "title=0.3", "text", "--shard-size", size,
                     "-o", str(ix)]) == 0
        assert main(["retrieve", "--cluster", "none", "--index", str(ix), "--gold", str(qa),
                     "--hits", "20", "--trec", str(trec)]) == 0
        runs.append(trec.read_bytes())
        got = _trec_lists(trec)
        for i, q in enumerate(questions):
            rows, scores = want.search(analyze(q), 20)
            expected = [(want.ids[r], s) for r, s in zip(rows, anserini_adjust(scores),
                                                         strict=True)]
            assert [(d, F(s)) for d, s in got.get(str(i), [])] == expected, q
    assert runs[0] == runs[1]  # the sharding changes nothing
    facts = json.loads((tmp_path / "ix7" / "params.json").read_text())
    assert facts["settings"]["fields"] == "text=1,title=0.3"
    title = facts["facts"]["fields"]["title"]
    assert title["doc_count"] == want.indexes["title"].stats.doc_count
    # the orphan title's passage (empty text) is in no field, as Anserini skips it
    assert "orphan" not in json.loads((tmp_path / "ix7" / "bm25-title" / "vocab.json")
                                      .read_text())


def _trec_lists(path: Path) -> dict[str, list[tuple[str, float]]]:
    from nqkit.formats.trec import read_trec_run

    out: dict[str, list[tuple[str, float]]] = {}
    for line in read_trec_run(path):
        out.setdefault(line.qid, []).append((line.docid, line.score))
    return out


# ----------------------------------------------------------- parity with Anserini

def _squad() -> tuple[list[Passage], list[tuple[str, list[str]]]]:
    """SQuAD 1.1 dev: every paragraph as a passage under its article's title (underscores
    as spaces), ids ``s<article>-<paragraph>``; every question with its answers."""
    data = json.loads(shared_file("data", "squad", "dev-v1.1.json").read_text("utf-8"))
    passages, questions = [], []
    for a, article in enumerate(data["data"]):
        title = article["title"].replace("_", " ")
        for p, para in enumerate(article["paragraphs"]):
            passages.append(Passage(f"s{a}-{p}", para["context"], title))
            for qa in para["qas"]:
                q = " ".join(qa["question"].split())
                questions.append((q, [x["text"] for x in qa["answers"]]))
    return passages, questions


def _nqkit_side(tmp: Path, passages: list[Passage], questions: list[tuple[str, list[str]]],
                weights: dict[str, float], oracle: dict[str, Any]) -> dict[str, Any]:
    """nqkit's in-memory lists and its CLI run of the questions, beside Anserini's."""
    from nqkit.text.lucene import analyze

    qs = [q for q, _ in questions]
    corpus, qa = tmp / "corpus.tsv", tmp / "qa.tsv"
    write_passages(corpus, passages)
    qa.write_text("".join(f"{q}\t{json.dumps(a)}\n" for q, a in questions), encoding="utf-8")
    memory = MultiFieldBM25.build(
        {f: [analyze(field_texts(p.title, p.text, f)) for p in passages] for f in weights},
        [p.id for p in passages], weights, shard_size=500)
    in_memory = []
    for q in qs:
        rows, scores = memory.search(analyze(q), 100)
        in_memory.append([(memory.ids[r], s) for r, s in zip(rows, scores.tolist(),
                                                              strict=True)])
    ix, trec = tmp / "ix", tmp / "run.trec"
    spec = [f"{f}={w!r}" for f, w in weights.items()]
    assert main(["index", "build", "--cluster", "none", "--passages", str(corpus), *OPTS,
                 "--bm25-fields", *spec, "--shard-size", "500", "-o", str(ix)]) == 0
    assert main(["retrieve", "--cluster", "none", "--index", str(ix), "--gold", str(qa),
                 "--hits", "100", "--trec", str(trec)]) == 0
    cli = _trec_lists(trec)
    return {"questions": qs, "oracle": oracle, "memory": in_memory, "model": memory,
            "cli": [cli.get(str(i), []) for i in range(len(qs))], "corpus": corpus,
            "qa": qa, "index": ix, "trec": trec}


def _agreement(run: dict[str, Any]) -> tuple[int, int, int, list[str]]:
    same_raw = same_cli = 0
    diffs: list[str] = []
    for i, q in enumerate(run["questions"]):
        raw = [(d, F(s)) for d, s in run["oracle"]["lucene"][i]]
        returned = [(d, F(s)) for d, s in run["oracle"]["anserini"][i]]
        ok_raw = [(d, F(s)) for d, s in run["memory"][i]] == raw
        ok_cli = [(d, F(s)) for d, s in run["cli"][i]] == returned
        same_raw += ok_raw
        same_cli += ok_cli
        if not (ok_raw and ok_cli) and len(diffs) < 5:
            diffs.append(f"{q!r}: {run['cli'][i][:3]} vs {returned[:3]}")
    return len(run["questions"]), same_raw, same_cli, diffs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Both corpora, Anserini's side in one JVM: ``real``, the real passages with text and
    title at weight 1 and every 20th NQ-open dev question; ``squad``, SQuAD dev's
    paragraphs with title weight 0.5 and every 60th SQuAD dev question (all 3,610, spread
    over the file, of each under NQKIT_FULL_ORACLE=1)."""
    shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
    shared_file("data", "nq-open", "nq-open-oracle.jsonl.gz")
    home = java21_home()
    from lucene_fields_oracle import Job, anserini_runs
    from nqkit.formats.dpr import read_dpr_qa_tsv

    qa = list(read_dpr_qa_tsv(shared_file("data", "dpr", "nq-test.qa.tsv")))
    assert len(qa) == 3610
    real_q = [(q, list(a)) for q, a in (qa if FULL else qa[::20])]
    real_p = list(make_passages_module().real_passages(SHARED))
    squad_p, squad_all = _squad()
    assert len(squad_p) == 2067 and len(squad_all) == 10570
    squad_q = ([squad_all[i * len(squad_all) // 3610] for i in range(3610)] if FULL
               else squad_all[::60])
    cases = {"real": (real_p, real_q, {"text": 1.0, "title": 1.0}),
             "squad": (squad_p, squad_q, {"text": 1.0, "title": 0.5})}
    tmp = {name: tmp_path_factory.mktemp(f"{name}-mf") for name in cases}
    oracles = anserini_runs([Job(p, [q for q, _ in qs], tmp[name] / "anserini", w)
                             for name, (p, qs, w) in cases.items()], home)
    return {name: _nqkit_side(tmp[name], p, qs, w, oracle)
            for (name, (p, qs, w)), oracle in zip(cases.items(), oracles, strict=True)}


@pytest.mark.parametrize(("case", "what", "sample"), [
    ("real", "real passages", 181), ("squad", "SQuAD dev paragraphs (title 0.5)", 177)])
def test_top100_and_scores_equal_anserinis(runs: dict[str, dict[str, Any]], case: str,
                                           what: str, sample: int) -> None:
    n, same_raw, same_cli, diffs = _agreement(runs[case])
    report = (f"multifield, {what}: Lucene scores and lists equal {same_raw}/{n} (in "
              f"memory), SimpleSearcher's equal {same_cli}/{n} (index build + retrieve)")
    print(report)
    assert n == (3610 if FULL else sample)
    # measured: every question of both (no residual); keep it that way
    assert same_raw == same_cli == n, report + "; " + "; ".join(diffs)


def _variant_top100(ix: MultiFieldBM25, tokens: list[str], rule: str
                    ) -> list[tuple[str, np.float32]]:
    """The in-memory search with Anserini's rule of the fields' sum replaced by a
    plausible other: every field flattened into one double sum, or every field rounded
    to float32 before the outer sum (``rule`` "rules": Anserini's, as combine_fields)."""
    parts = []
    for name, sub in ix.indexes.items():
        w = ix.weights[name]
        rows, sums = sub.field_sums(tokens, w)
        nested = {"rules": w != 1.0, "all flattened": False, "all nested": True}[rule]
        parts.append((rows, sums, 0.5 if nested else 1.0))  # combine_fields: 1 = flattened
    cand, vals = combine_fields(parts)
    order = np.lexsort((ix.id_rank[cand], -vals.astype(np.float64)))[:100]
    return [(ix.ids[r], v) for r, v in zip(cand[order], vals[order], strict=True)]


def test_the_parity_check_tells_the_sum_rules_apart(runs: dict[str, dict[str, Any]]
                                                    ) -> None:
    """Lucene's flattening of weight-1 fields and its float32 score of a nested field
    (other weights) each matter: the other rule fails the parity test on some lists."""
    from nqkit.text.lucene import analyze

    counts: dict[str, dict[str, int]] = {}
    for corpus in ("real", "squad"):
        run = runs[corpus]
        counts[corpus] = {"rules": 0, "all flattened": 0, "all nested": 0}
        for i, q in enumerate(run["questions"]):
            want = [(d, F(x)) for d, x in run["oracle"]["lucene"][i]]
            for rule in counts[corpus]:
                counts[corpus][rule] += _variant_top100(run["model"], analyze(q), rule) == want
    print(counts)
    n_real, n_squad = len(runs["real"]["questions"]), len(runs["squad"]["questions"])
    assert counts["real"]["rules"] == n_real and counts["squad"]["rules"] == n_squad
    # real: both fields at weight 1, so "all flattened" is the rule itself
    assert counts["real"]["all flattened"] == n_real
    # measured: 121 of 361 (every field rounded first) and 344 of 353 (the title at 0.5
    # not rounded before the outer sum) on every 10th / 30th question; the suite's
    # every 20th / 60th: 50 of 181 and 171 of 177
    assert counts["real"]["all nested"] < 0.5 * n_real
    assert counts["squad"]["all flattened"] < n_squad


def test_signature_names_the_fields(runs: dict[str, dict[str, Any]],
                                    capsys: pytest.CaptureFixture[str]) -> None:
    real_mf = runs["real"]
    capsys.readouterr()
    assert main(["retrieve", "--cluster", "none", "--index", str(real_mf["index"]),
                 "--gold", str(real_mf["qa"]), "--hits", "20", "--eval",
                 "--format", "json"]) == 0
    sig = json.loads(capsys.readouterr().out)["signature"]
    assert "|bm25:lucene-exact|stop:lucene|stem:porter|fields:text=1,title=1|" in sig
    # the TREC run's tag tells it from a flat lucene-exact run's
    assert real_mf["trec"].read_text().split("\n", 1)[0].endswith(
        " nqkit-bm25-lucene-exact-multifield")


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "params.json"}


def test_local_cluster_gives_the_bytes_of_one_process(runs: dict[str, dict[str, Any]],
                                                      tmp_path: Path) -> None:
    require("dask.distributed")
    real_mf = runs["real"]
    ix = tmp_path / "ix"
    assert main(["index", "build", "--passages", str(real_mf["corpus"]), *OPTS,
                 "--bm25-fields", "text=1.0", "title=1.0", "-o", str(ix), "--shard-size",
                 "500", "--cluster", "local", "--workers", "2"]) == 0
    params = json.loads((ix / "params.json").read_text())
    assert params["build"]["workers"] == 2
    assert params["facts"]["fields"] == json.loads(
        (real_mf["index"] / "params.json").read_text())["facts"]["fields"]
    assert _tree_bytes(ix) == _tree_bytes(real_mf["index"])
    trec = tmp_path / "run.trec"
    assert main(["retrieve", "--index", str(ix), "--gold", str(real_mf["qa"]), "--hits",
                 "100", "--trec", str(trec), "--cluster", "local", "--workers", "2"]) == 0
    assert trec.read_bytes() == real_mf["trec"].read_bytes()


@pytest.mark.parametrize(("retriever", "given", "flags"), [
    ("dense", ["--bm25-method", "lucene-exact"], "--bm25-method"),
    ("dense", ["--bm25-fields", "text", "title", "--k1", "1.2"], "--k1, --bm25-fields"),
])
def test_a_setting_of_another_retriever_is_refused_not_ignored(
        tmp_path, capsys, retriever, given, flags):
    # before, a dense build took BM25 settings silently (and ran for minutes)
    corpus = tmp_path / "p.tsv"
    corpus.write_text("id\ttext\ttitle\n1\tsome text\tA title\n", encoding="utf-8")
    out = tmp_path / "ix"
    assert main(["index", "build", "--passages", str(corpus), "--retriever", retriever,
                 "-o", str(out), "--cluster", "none", *given]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"nqkit: error: {flags}: {'is' if ',' not in flags else 'are'} not a "
                   f"setting of --retriever {retriever} — drop {flags}, or choose the "
                   "retriever it belongs to")
    assert not out.exists()
