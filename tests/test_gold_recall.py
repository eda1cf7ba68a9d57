"""Answer recall beside gold-passage recall (``eval retrieval --qrels``, ``--recall
gold-passage``) and the qrels of ``nqkit convert qrels``: tiny cases worked out by hand,
refusals of qrels that cannot match, and the real oracle file over the real passages."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from nqkit.cli import main
from nqkit.metrics.gold_recall import score_gold_split

from conftest import SHARED, make_passages_module, require, shared_file


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


# ------------------------------------------------------------------ the metric by hand

def test_split_and_gold_recall_by_hand():
    first_hit = [1, 1, 2, None, 4]
    gold_ranks = [(1,),    # q1: the first hit is the gold passage
                  (3,),    # q2: the first hit (rank 1) is not gold: a coincidence
                  None,    # q3: gold unknown
                  (),      # q4: gold known, never retrieved, no hit
                  (2, 4)]  # q5: the first hit (rank 4) is a gold passage (another at 2)
    r = score_gold_split(first_hit, gold_ranks, [5, 1, 3])
    assert r.kind == ["gold", "coincidence", "gold-unknown", None, "gold"]
    assert r.first_gold == [1, 3, None, None, 2]
    assert r.gold_known == 4
    # gold-known questions q1, q2, q4, q5 with first gold 1, 3, -, 2
    assert r.gold_recall == {1: 1 / 4, 3: 3 / 4, 5: 3 / 4}
    assert r.hits == {1: {"gold": 1, "coincidence": 1, "gold-unknown": 0},
                      3: {"gold": 1, "coincidence": 1, "gold-unknown": 1},
                      5: {"gold": 2, "coincidence": 1, "gold-unknown": 1}}
    # every answer-recall hit is in exactly one group
    for k, split in r.hits.items():
        assert sum(split.values()) == sum(1 for h in first_hit if h is not None and h <= k)


def test_split_refuses_what_cannot_mean_anything():
    with pytest.raises(ValueError, match="no question has a known gold passage"):
        score_gold_split([1, None], [None, None], [1])
    with pytest.raises(ValueError, match="2 first hits for 1 gold lists"):
        score_gold_split([1, None], [()], [1])


# ------------------------------------------------------------- eval retrieval --qrels

def _ctx(pid, text):
    return {"id": pid, "title": "t", "text": text, "score": 1.0}


@pytest.fixture
def tiny(tmp_path):
    results = [
        # q0: rank 1 holds "Paris" but is not the gold passage (a coincidence); gold at 2
        {"question": "capital of france", "answers": ["Paris"],
         "ctxs": [_ctx("p1", "Paris is a city in Texas"),
                  _ctx("p2", "Paris is the capital of France")]},
        # q1: the answer first at rank 2, which is the gold passage
        {"question": "largest planet", "answers": ["Jupiter"],
         "ctxs": [_ctx("p3", "Saturn has rings"), _ctx("p4", "Jupiter is the largest")]},
        # q2: no gold passage known; its hit at rank 1 is 'gold unknown'
        {"question": "who wrote hamlet", "answers": ["Shakespeare"],
         "ctxs": [_ctx("p5", "Shakespeare wrote Hamlet"), _ctx("p6", "x")]},
    ]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    qrels = _write(tmp_path / "gold.qrels", "0 0 p2 1\n1 0 p4 1\n1 0 p9 0\n")
    return str(path), qrels


def _json(capsys, *args):
    assert main(["eval", "retrieval", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_eval_with_qrels_by_hand(tiny, tmp_path, capsys):
    results, qrels = tiny
    items = tmp_path / "items.jsonl"
    got = _json(capsys, "--predictions", results, "--qrels", qrels, "--topk", "1", "2",
                "--per-item", str(items))
    assert got["recall"] == got["answer_recall"] == {"1": 2 / 3, "2": 1.0}
    assert got["gold_passage_recall"] == {"1": 0.0, "2": 1.0}  # over q0 and q1
    assert got["gold_known"] == 2 and got["num_questions"] == 3
    assert got["hits"] == {"1": {"gold": 0, "coincidence": 1, "gold_unknown": 1},
                           "2": {"gold": 1, "coincidence": 1, "gold_unknown": 1}}
    assert got["qrels"] == {"questions": 2, "passages": 2}  # relevance 0 is not gold
    fp = hashlib.sha256(b"0\x1fp2\x1e1\x1fp4\x1e").hexdigest()[:12]
    assert f"|recall:answer|tok:dpr-simple-nfd|field:text|qrels:{fp}|" in got["signature"]
    assert "warn:gold-unknown" in got["signature"]
    assert [w["code"] for w in got["warnings"]] == ["gold-unknown"]
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    assert [(r["first_hit"], r["first_gold"], r["gold_known"], r["first_hit_kind"])
            for r in rows] == [(1, 2, True, "coincidence"), (2, 2, True, "gold"),
                               (1, None, False, "gold-unknown")]


def test_recall_gold_passage_is_the_headline(tiny, capsys):
    results, qrels = tiny
    got = _json(capsys, "--predictions", results, "--qrels", qrels, "--topk", "1", "2",
                "--recall", "gold-passage")
    assert got["recall"] == {"1": 0.0, "2": 1.0}
    assert got["answer_recall"] == {"1": 2 / 3, "2": 1.0}
    assert "|recall:gold-passage|" in got["signature"]
    assert main(["eval", "retrieval", "--predictions", results, "--qrels", qrels,
                 "--topk", "1", "2", "--recall", "gold-passage"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[1].split() == ["top-k", "gold-passage", "recall", "answer", "recall",
                                "hits:", "gold", "hits:", "coincidence", "hits:", "gold",
                                "unknown"]
    assert table[3].split() == ["top-1", "0.0000", "0.6667", "0", "1", "1"]
    assert table[4].split() == ["top-2", "1.0000", "1.0000", "1", "1", "1"]


def test_without_qrels_nothing_changes(tiny, capsys):
    results, _ = tiny
    got = _json(capsys, "--predictions", results, "--topk", "1", "2")
    assert set(got) == {"recall", "num_questions", "signature"}
    assert "qrels" not in got["signature"]


@pytest.mark.parametrize(("qrels", "message"), [
    ("7 0 p2 1\n8 0 p4 1\n", "none of the 2 questions of the qrels (qids e.g. '7', '8')"),
    ("0 0 x1 1\n1 0 x2 1\n", "none of the 2 gold passage ids of the qrels occurs among the "
                             "retrieved passages of the 3 questions"),
    ("0 0 p2 0\n", "the qrels mark no passage relevant"),
    ("0 p2 1\n", "expected 4 whitespace-separated columns"),
])
def test_qrels_that_cannot_match_are_refused(tiny, tmp_path, capsys, qrels, message):
    results, _ = tiny
    path = _write(tmp_path / "bad.qrels", qrels)
    assert main(["eval", "retrieval", "--predictions", results, "--qrels", path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("nqkit: error: ") and message in err[0]


def test_gold_passage_recall_needs_qrels(tiny, capsys):
    results, _ = tiny
    assert main(["eval", "retrieval", "--predictions", results, "--recall",
                 "gold-passage"]) == 2
    assert "--recall gold-passage needs the gold passages" in capsys.readouterr().err


def test_qrels_of_other_questions_are_a_warning_with_counts(tiny, tmp_path, capsys):
    results, _ = tiny
    path = _write(tmp_path / "more.qrels", "0 0 p2 1\n1 0 p4 1\n5 0 p1 1\n")
    got = _json(capsys, "--predictions", results, "--qrels", path, "--topk", "2")
    warning = next(w for w in got["warnings"] if w["code"] == "qrels-extra")
    assert warning["message"].startswith("1 of 3 questions of the qrels are not questions")
    assert got["gold_passage_recall"] == {"2": 1.0}


def test_qrels_with_a_trec_run_are_checked_against_the_corpus(tmp_path, capsys):
    passages = _write(tmp_path / "psgs.tsv", "id\ttext\ttitle\n"
                      "1\tParis is the capital of France\tParis\n"
                      "2\tParis, Texas is a film\tParis, Texas\n"
                      "3\tThe Seine flows through Paris\tSeine\n")
    qa = _write(tmp_path / "qa.tsv", "capital of france\t['Paris']\n"
                "river in paris\t['Seine']\n")
    # question 0: 2 (a coincidence: 'Paris' but not gold), 1 (gold);
    # question 1: 3 (gold and holds 'Seine')
    run = _write(tmp_path / "run.trec", "0 Q0 2 1 9.0 t\n0 Q0 1 2 8.0 t\n1 Q0 3 1 7.0 t\n")
    qrels = _write(tmp_path / "gold.qrels", "0 0 1 1\n1 0 3 1\n1 0 99 1\n")
    got = _json(capsys, "--gold", qa, "--predictions", run, "--passages", passages,
                "--qrels", qrels, "--topk", "1", "2")
    assert got["answer_recall"] == {"1": 1.0, "2": 1.0}
    assert got["gold_passage_recall"] == {"1": 0.5, "2": 1.0}
    assert got["hits"]["1"] == {"gold": 1, "coincidence": 1, "gold_unknown": 0}
    warning = next(w for w in got["warnings"] if w["code"] == "qrels-not-in-corpus")
    assert warning["message"].startswith("1 of 3 gold passage ids of the qrels are not in")
    # numbered from 1: the same qrels shifted, with --first-qid 1
    run1 = _write(tmp_path / "run1.trec", "1 Q0 2 1 9.0 t\n1 Q0 1 2 8.0 t\n2 Q0 3 1 7.0 t\n")
    qrels1 = _write(tmp_path / "gold1.qrels", "1 0 1 1\n2 0 3 1\n")
    got = _json(capsys, "--gold", qa, "--predictions", run1, "--passages", passages,
                "--qrels", qrels1, "--topk", "1", "2", "--first-qid", "1")
    assert got["gold_passage_recall"] == {"1": 0.5, "2": 1.0}
    # no gold id in the corpus: refused
    none = _write(tmp_path / "none.qrels", "0 0 98 1\n1 0 99 1\n")
    assert main(["eval", "retrieval", "--gold", qa, "--predictions", run, "--passages",
                 passages, "--qrels", none]) == 2
    assert "none of the 2 gold passage ids of the qrels is in" in capsys.readouterr().err


# ------------------------------------------------------------------- convert qrels

def test_convert_qrels_from_an_oracle_file_by_hand(tmp_path, capsys):
    passages = _write(tmp_path / "psgs.tsv", "id\ttext\ttitle\n"
                      "a\tParis is the capital of France\tParis\n"
                      "b\tJupiter is  the largest planet\tJupiter\n"
                      "c\tJupiter is the largest planet\tJupiter\n"
                      "d\tunrelated\tOther\n")
    qa = _write(tmp_path / "qa.tsv", "q zero\t['x']\nq one\t['y']\nq two\t['z']\n")

    def line(question, title, text, gold=True):
        return json.dumps({"question": question, "answers": ["a"],
                           "ctxs": [{"title": title, "text": text, "hasanswer": True,
                                     "isgold": gold}]}) + "\n"

    oracle = tmp_path / "oracle.jsonl.gz"
    with gzip.open(oracle, "wt", encoding="utf-8") as f:
        f.write(line("q one", "Jupiter", "Jupiter is\tthe largest\nplanet"))  # b and c
        f.write(line("q zero", "Paris", "Paris is the capital of France"))  # a
        f.write(line("q two", "Oslo", "Oslo is not in the corpus"))  # gold unknown
        f.write(line("not asked", "Paris", "Paris is the capital of France"))
    out = tmp_path / "gold.qrels"
    assert main(["convert", "qrels", "--oracle", str(oracle), "--gold", qa,
                 "--passages", passages, "-o", str(out)]) == 0
    assert out.read_text() == "0 0 a 1\n1 0 b 1\n1 0 c 1\n"
    captured = capsys.readouterr()
    assert captured.out.startswith("qrels|source:nq-open-oracle|match:title+text-ws|corpus:")
    assert "1 of 4 questions of" in captured.err  # "not asked"
    assert "1 of 3 gold passages are not in the corpus" in captured.err  # Oslo
    assert "3 qrels for 2 of 3 questions" in captured.err
    # nothing matches: refused, no file written
    assert main(["convert", "qrels", "--oracle", str(oracle), "--gold", qa,
                 "--passages", _write(tmp_path / "other.tsv", "id\ttext\ttitle\nz\ty\tx\n"),
                 "-o", str(tmp_path / "none.qrels")]) == 2
    assert "none of the 3 gold passages is in the corpus of 1 passages" \
        in capsys.readouterr().err
    assert not (tmp_path / "none.qrels").exists()
    other_qa = _write(tmp_path / "other-qa.tsv", "something else\t['x']\n")
    assert main(["convert", "qrels", "--oracle", str(oracle), "--gold", other_qa,
                 "--passages", passages, "-o", str(tmp_path / "none.qrels")]) == 2
    assert "none of the 4 questions of the source is in the questions file" \
        in capsys.readouterr().err


def test_convert_qrels_from_the_biencoder_sample(tmp_path, capsys):
    bi = shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
    qa = shared_file("data", "dpr", "nq-dev.qa.tsv")
    corpus = tmp_path / "real.tsv"
    module = make_passages_module()
    module.write_passages(corpus, module.real_passages(SHARED))
    out = tmp_path / "bi.qrels"
    assert main(["convert", "qrels", "--biencoder", str(bi), "--gold", str(qa),
                 "--passages", str(corpus), "-o", str(out)]) == 0
    # expected: positive passage ids of each record, first occurrence order, numbered by
    # the record's line in nq-dev.qa.tsv (read here with plain Python)
    lines = qa.read_text(encoding="utf-8").splitlines()
    number = {}
    for i, ln in enumerate(lines):
        number.setdefault(ln.split("\t")[0], i)
    expected = []
    for rec in json.loads(bi.read_text(encoding="utf-8")):
        if rec["question"] in number:
            ids = dict.fromkeys(str(c["passage_id"]) for c in rec["positive_ctxs"])
            expected += [f"{number[rec['question']]} 0 {pid} 1" for pid in ids]
    assert out.read_text().splitlines() == expected
    assert len(expected) == 17
    assert "1 of 5 questions" in capsys.readouterr().err


def test_real_oracle_qrels_and_a_real_bm25_run(tmp_path, capsys):
    """The oracle's gold passages over the 3,349 real passages, and a BM25 run of the
    first 300 NQ-open dev questions, checked against plain loops over the files."""
    require("bm25s")
    oracle = shared_file("data", "nq-open", "nq-open-oracle.jsonl.gz")
    qa = shared_file("data", "dpr", "nq-test.qa.tsv")
    module = make_passages_module()
    corpus = tmp_path / "real.tsv"
    module.write_passages(corpus, module.real_passages(SHARED))
    qrels = tmp_path / "oracle.qrels"
    assert main(["convert", "qrels", "--oracle", str(oracle), "--gold", str(qa),
                 "--passages", str(corpus), "-o", str(qrels)]) == 0
    capsys.readouterr()
    # independently: the corpus holds every oracle passage (tabs and line breaks made
    # spaces by make_passages), so every oracle question has a gold passage: one of its
    # qrels passages is its oracle passage up to that change, and any other differs from
    # it in whitespace only (the same passage twice in the corpus, e.g. a double space)
    number = {ln.split("\t")[0]: i for i, ln in
              enumerate(qa.read_text(encoding="utf-8").splitlines())}
    with gzip.open(oracle, "rt", encoding="utf-8") as f:
        gold = {number[r["question"]]: r["ctxs"][0] for r in map(json.loads, f)}
    texts = {p.id: (p.title, p.text) for p in module.real_passages(SHARED)}
    pairs = [ln.split() for ln in qrels.read_text().splitlines()]
    assert {int(q) for q, _, _, _ in pairs} == set(gold) and len(gold) == 2655

    def one_line(s):
        return s.replace("\t", " ").replace("\r", " ").replace("\n", " ")

    exact = set()
    for q, _, pid, rel in pairs:
        title, text = gold[int(q)]["title"], gold[int(q)]["text"]
        assert rel == "1"
        if texts[pid] == (one_line(title), one_line(text)):
            exact.add(int(q))
        else:
            assert [s.split() for s in texts[pid]] == [title.split(), text.split()]
    assert exact == set(gold)
    # a real run: BM25 over the real passages, the first 300 questions
    qa300 = _write(tmp_path / "qa300.tsv", "".join(
        qa.read_text(encoding="utf-8").splitlines(keepends=True)[:300]))
    assert main(["index", "build", "--passages", str(corpus), "--retriever", "bm25", "-o",
                 str(tmp_path / "idx"), "--cluster", "none"]) == 0
    run = tmp_path / "run.json"
    assert main(["retrieve", "--index", str(tmp_path / "idx"), "--gold", qa300,
                 "-o", str(run), "--cluster", "none"]) == 0
    capsys.readouterr()
    got = _json(capsys, "--predictions", str(run), "--gold", qa300, "--qrels", str(qrels))
    assert any(w["code"] == "qrels-extra" for w in got["warnings"])
    by_q: dict[str, set[str]] = {}
    for q, _, pid, _ in pairs:
        by_q.setdefault(q, set()).add(pid)
    results = json.loads(run.read_text(encoding="utf-8"))
    for k in (1, 5, 20, 100):
        known = found = 0
        split = {"gold": 0, "coincidence": 0, "gold_unknown": 0}
        for i, r in enumerate(results):
            ids = by_q.get(str(i))
            top = r["ctxs"][:k]
            hit = next((c for c in top if c["has_answer"]), None)
            if ids is not None:
                known += 1
                found += any(c["id"] in ids for c in top)
            if hit is not None:
                split["gold_unknown" if ids is None else
                      "gold" if hit["id"] in ids else "coincidence"] += 1
        assert got["gold_passage_recall"][str(k)] == found / known
        assert got["hits"][str(k)] == split
        assert sum(split.values()) == round(got["answer_recall"][str(k)] * 300)
    assert got["gold_known"] == sum(1 for i in range(300) if i in gold)


def test_convert_qrels_refuses_what_it_took_without_a_word(tmp_path, capsys):
    """Issue 30: a passage id given twice (its qrels would name either passage), a gold
    context without its title (half of what it is matched by) and an "isgold" that is not
    a JSON boolean (the string "true" made the gold passage silently not gold)."""
    qa = _write(tmp_path / "qa.tsv", "q zero\t['x']\nq one\t['y']\n")
    passages = "id\ttext\ttitle\na\tParis is the capital\tParis\nb\tJupiter\tJupiter\n"

    def oracle(*ctxs):
        path = tmp_path / "oracle.jsonl"
        path.write_text("".join(json.dumps({"question": q, "answers": ["a"], "ctxs": [c]})
                                + "\n" for q, c in zip(("q zero", "q one"), ctxs, strict=True)),
                        encoding="utf-8")
        return str(path)

    paris = {"title": "Paris", "text": "Paris is the capital", "isgold": True}
    jupiter = {"title": "Jupiter", "text": "Jupiter", "isgold": True}
    out = tmp_path / "gold.qrels"

    def refused(oracle_file, corpus=passages):
        psgs = _write(tmp_path / "psgs.tsv", corpus)
        assert main(["convert", "qrels", "--oracle", oracle_file, "--gold", qa,
                     "--passages", psgs, "-o", str(out)]) == 2
        assert not out.exists()
        (line,) = capsys.readouterr().err.splitlines()
        return line.replace(str(tmp_path) + "/", "")

    assert refused(oracle(paris, jupiter), passages + "a\tagain\tParis\n") == (
        "nqkit: error: psgs.tsv:4: passage id 'a' already names the passage at line 2 — "
        "give every passage a unique id (runs and qrels name passages by id)")
    assert refused(oracle(paris, jupiter), passages + "b\tx\tX\na\ty\tY\nb\tz\tZ\n") == (
        "nqkit: error: psgs.tsv:4: passage id 'b' already names the passage at line 3; 2 "
        "ids occur more than once (e.g. 'b', 'a') — give every passage a unique id (runs "
        "and qrels name passages by id)")
    assert refused(oracle(paris, {**jupiter, "isgold": "true"})) == (
        'nqkit: error: oracle.jsonl:2: context 1 has "isgold": "true", expected true or '
        'false (a JSON boolean) — mark each context "isgold": true or "isgold": false, '
        "without quotes")
    no_flag = {k: v for k, v in jupiter.items() if k != "isgold"}
    assert "oracle.jsonl:2: context 1 has no 'isgold', expected true or false" \
        in refused(oracle(paris, no_flag))
    no_title = {k: v for k, v in paris.items() if k != "title"}
    assert refused(oracle(no_title, jupiter)) == (
        "nqkit: error: oracle.jsonl:1: gold context 1 has no 'title' — give each gold "
        "passage its Wikipedia page title: gold passages are matched to the corpus by title "
        "and text (match:title+text-ws)")
    assert "oracle.jsonl:1: gold context 1 has an empty 'title'" \
        in refused(oracle({**paris, "title": " "}, jupiter))
    # a context that is not gold needs no title; the file is converted
    psgs = _write(tmp_path / "psgs.tsv", passages)
    assert main(["convert", "qrels", "--oracle",
                 oracle(paris, {**no_title, "isgold": False}), "--gold", qa,
                 "--passages", psgs, "-o", str(out)]) == 0
    assert out.read_text() == "0 0 a 1\n"


def test_a_trec_run_over_a_corpus_giving_one_id_to_two_passages_is_refused(tmp_path, capsys):
    qa = _write(tmp_path / "qa.tsv", "capital of france\t['Paris']\n")
    run = _write(tmp_path / "run.trec", "0 Q0 a 1 2.5 t\n0 Q0 b 2 1.5 t\n")
    ok = "id\ttext\ttitle\na\tParis is in France\tParis\nb\tRome is in Italy\tRome\n"
    base = ["eval", "retrieval", "--predictions", run, "--gold", qa, "--format", "json"]
    # the same passage twice under its id: harmless, read as once
    same = _write(tmp_path / "same.tsv", ok + "a\tParis is in France\tParis\n")
    assert main([*base, "--passages", same]) == 0
    assert json.loads(capsys.readouterr().out)["recall"]["1"] == 1.0
    # id 'a' given to another passage after it: the run's rank 1 could be either
    two = _write(tmp_path / "two.tsv", ok + "a\tBerlin is in Germany\tBerlin\n")
    assert main([*base, "--passages", two]) == 2
    err = capsys.readouterr().err
    assert err == f"nqkit: error: {two}: 1 id(s) the run names are given to two different " \
        "passages (e.g. 'a') — give each passage an id of its own\n"
