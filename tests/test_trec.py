"""TREC runs and qrels (nqkit.formats.trec): reading, writing, round trips, errors with
file:line, top-k selection, the DPR passage reader, TREC run -> DPR results, and
``nqkit reqa run --trec``.

Oracles: hand-written lines; Python's ``csv`` module for the passage file quoting; a full
stable sort for top-k; DPR results built by hand from the same passages.
"""

from __future__ import annotations

import csv
import gzip
import json
import random
from pathlib import Path

import numpy as np
import pytest

from nqkit.cli import main
from nqkit.errors import InputError
from nqkit.formats.dpr import DprContext, DprResult, read_dpr_passages
from nqkit.formats.trec import (
    TrecQrel,
    TrecRunLine,
    float32_scores,
    ranked,
    read_questions_answers,
    read_trec_qrels,
    read_trec_run,
    run_from_scores,
    top_k,
    trec_to_dpr_results,
    write_trec_qrels,
    write_trec_run,
)
from nqkit.metrics.answer_recall import score_answer_recall

from conftest import require, shared_file, small_reqa_task

RUN = """\
3 Q0 d7 1 12.5 bm25
3 Q0 d2 2 12.5 bm25
3 Q0 d9 3 -0.25 bm25
1 Q0 d2 1 7 bm25
"""


def test_read_a_hand_written_run_and_qrels(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text(RUN)
    lines = list(read_trec_run(run))
    assert [(x.qid, x.docid, x.rank, x.score, x.tag) for x in lines] == [
        ("3", "d7", 1, 12.5, "bm25"), ("3", "d2", 2, 12.5, "bm25"),
        ("3", "d9", 3, -0.25, "bm25"), ("1", "d2", 1, 7.0, "bm25")]
    assert lines[2].where == f"{run}:3"
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("3 0 d2 1\n3 0 d9 0\n1 0 d5 2\n")
    assert list(read_trec_qrels(qrels)) == [TrecQrel("3", "d2", 1), TrecQrel("3", "d9", 0),
                                             TrecQrel("1", "d5", 2)]


def test_round_trips_are_exact_plain_and_gzipped(tmp_path):
    rng = random.Random(0)
    scores = [0.1, 1e-300, -3.5, 123456789.12345679, 2 / 3, 0.0, rng.random(), -1e17]
    lines = [TrecRunLine(f"q{i % 3}", f"doc-{i}", i + 1, s, "run_A")
             for i, s in enumerate(scores)]
    for name in ("run.txt", "run.txt.gz"):
        path = tmp_path / name
        assert write_trec_run(path, lines) == len(lines)
        assert list(read_trec_run(path)) == lines
    assert gzip.decompress((tmp_path / "run.txt.gz").read_bytes()).startswith(
        b"q0 Q0 doc-0 1 0.1 run_A\n")
    qrels = [TrecQrel("1", "a", 1), TrecQrel("2", "b", 0, "Q0")]
    assert write_trec_qrels(tmp_path / "q.txt", qrels) == 2
    assert (tmp_path / "q.txt").read_text() == "1 0 a 1\n2 Q0 b 0\n"
    assert list(read_trec_qrels(tmp_path / "q.txt")) == qrels


@pytest.mark.parametrize(("text", "message"), [
    ("1 Q0 d 1 2.0\n", "run.txt:1: expected 6 whitespace-separated columns, found 5"),
    ("1 Q0 d 1 2 x\n1 Q0 e zero 1 x\n", "run.txt:2: the rank must be a positive integer, "
                                        "found 'zero'"),
    ("1 Q0 d 0 2 x\n", "run.txt:1: the rank must be a positive integer, found '0'"),
    ("1 Q0 d 1 nan x\n", "run.txt:1: the score must be a finite number, found 'nan'"),
    ("1 Q0 d 1 1.5e x\n", "run.txt:1: the score must be a finite number, found '1.5e'"),
    ("\n\n", "run.txt: the TREC run file is empty"),
])
def test_bad_runs_name_file_and_line(tmp_path, text, message):
    run = tmp_path / "run.txt"
    run.write_text(text)
    with pytest.raises(InputError) as e:
        list(read_trec_run(run))
    assert e.value.message.replace(f"{tmp_path}/", "").startswith(message)


def test_bad_qrels_and_unwritable_ids(tmp_path):
    q = tmp_path / "qrels.txt"
    q.write_text("1 0 d yes\n")
    with pytest.raises(InputError, match=r"qrels.txt:1: the relevance must be an integer"):
        list(read_trec_qrels(q))
    with pytest.raises(InputError, match="without whitespace"):
        write_trec_run(tmp_path / "r.txt", [TrecRunLine("a b", "d", 1, 1.0, "t")])
    assert not (tmp_path / "r.txt").exists()  # nothing partial


def test_ranked_orders_by_score_then_rank_then_file_order_and_refuses_duplicates(tmp_path):
    lines = [TrecRunLine("q", "a", 3, 1.0, "t"), TrecRunLine("q", "b", 1, 1.0, "t"),
             TrecRunLine("q", "c", 9, 5.0, "t"), TrecRunLine("p", "a", 1, 0.0, "t"),
             TrecRunLine("q", "d", 1, 1.0, "t")]
    groups = ranked(lines)
    assert list(groups) == ["q", "p"]
    assert [x.docid for x in groups["q"]] == ["c", "b", "d", "a"]
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d 1 2 x\n1 Q0 d 2 1 x\n")
    with pytest.raises(InputError, match=r"run.txt:2: document 'd' is retrieved twice for "
                       r"query '1'"):
        ranked(read_trec_run(run))


def test_top_k_equals_a_full_stable_sort_with_ties():
    rng = np.random.default_rng(1)
    for n_cols, depth in ((1, 1), (7, 3), (50, 10), (50, 50), (20, 100)):
        scores = rng.integers(0, 4, size=(6, n_cols)).astype(np.float32)  # many ties
        cols, vals = top_k(scores, depth)
        for row, got_c, got_v in zip(scores, cols, vals, strict=True):
            want = sorted(range(n_cols), key=lambda c, row=row: (-row[c], c))[:depth]
            assert got_c.tolist() == want
            assert got_v.tolist() == [row[c] for c in want]
    lines = list(run_from_scores(["q1", "q2"], ["a", "b", "c"],
                                 np.array([[0.5, 2.0, 0.5], [1.0, 1.0, 3.0]]), depth=2,
                                 tag="t"))
    assert [(x.qid, x.docid, x.rank, x.score) for x in lines] == [
        ("q1", "b", 1, 2.0), ("q1", "a", 2, 0.5), ("q2", "c", 1, 3.0), ("q2", "a", 2, 1.0)]


def test_float32_scores_are_written_at_float32_length_and_read_back_exactly(tmp_path):
    # By hand: float32(0.1) = 0.100000001490116..., whose shortest float32 text is "0.1";
    # the float32 after 1.0 is 1 + 2**-23 = 1.00000011920928955..., shortest "1.0000001"
    # (1.0000000 and 1.0000002 round to other float32s); 15.17415 has 7 digits and the
    # float32 spacing there is 2**-20 (about 9.5e-7), so no shorter text reaches it.
    widened = [float(np.float32(15.17415)), 1 + 2**-23, 1.0, float(np.float32(0.1)), -0.5]
    want = [15.17415, 1.0000001, 1.0, 0.1, -0.5]
    assert float32_scores(np.array(widened, dtype=np.float32)) == want
    assert float32_scores(widened) == want
    # Pyserini's %.6f would tie the second and third; trec_eval would then order them by
    # docid (d2 before d1), not as the retriever did
    assert f"{widened[1]:.6f}" == f"{widened[2]:.6f}"
    lines = [TrecRunLine("7", f"d{i}", i + 1, v, "t") for i, v in enumerate(want)]
    run = tmp_path / "run.txt"
    assert write_trec_run(run, lines) == 5
    assert run.read_text() == ("7 Q0 d0 1 15.17415 t\n7 Q0 d1 2 1.0000001 t\n"
                               "7 Q0 d2 3 1.0 t\n7 Q0 d3 4 0.1 t\n7 Q0 d4 5 -0.5 t\n")
    back = list(read_trec_run(run))
    assert back == lines  # same scores, ranks, ids
    assert [x.docid for x in ranked(back)["7"]] == ["d0", "d1", "d2", "d3", "d4"]
    # a float32 score matrix gives the same floats through run_from_scores
    got = list(run_from_scores(["q"], ["a", "b"], np.array([[0.1, 1 + 2**-23]], np.float32),
                               depth=2, tag="t"))
    assert [(x.docid, x.score) for x in got] == [("b", 1.0000001), ("a", 0.1)]


def test_float32_scores_keep_every_order_and_tie_and_the_float32_text():
    # Brute force over random float32 bit patterns and their neighbours: the written
    # float reads back (as float32) to the same float32, is strictly ordered like the
    # float32s, and (where numpy and Python both print positionally) is numpy's text.
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**32, size=20_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = x[np.isfinite(x)]
    x = np.sort(np.concatenate([x, np.nextafter(x, np.float32(np.inf)), x[:100]]))
    got = float32_scores(x)
    assert np.array_equal(np.asarray(got, dtype=np.float32), x)
    for a, b, fa, fb in zip(got, got[1:], x.tolist(), x[1:].tolist(), strict=False):
        assert (a < b) == (fa < fb) and (a == b) == (fa == fb)
    checked = 0
    for v, f in zip(got, x.tolist(), strict=True):
        if 1e-4 <= abs(f) < 1e6:
            assert repr(v) == str(np.float32(f))
            checked += 1
    assert checked > 100


# --------------------------------------------------------------------------- DPR

def _biencoder() -> list[dict]:
    return json.loads(shared_file("data", "dpr", "biencoder-nq-dev-sample5.json").read_text())


def _corpus(tmp_path: Path) -> tuple[Path, dict[str, dict]]:
    """A psgs_w100-style TSV of the sample's real passages, written by the csv module."""
    passages: dict[str, dict] = {}
    for rec in _biencoder():
        for key in ("positive_ctxs", "negative_ctxs", "hard_negative_ctxs"):
            for c in rec[key]:
                passages.setdefault(str(c["passage_id"]), c)
    path = tmp_path / "psgs.tsv"
    with path.open("w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["id", "text", "title"])
        for pid, c in passages.items():
            w.writerow([pid, c["text"], c["title"]])
    return path, passages


def test_passage_reader_reads_csv_quoting_like_the_csv_module(tmp_path):
    path, passages = _corpus(tmp_path)
    assert any('"' in c["text"] for c in passages.values())  # quoting is exercised
    with path.open(newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))[1:]
    got = list(read_dpr_passages(path))
    assert [(p.id, p.text, p.title) for p in got] == [tuple(r[:3]) for r in rows]
    some = [rows[3][0], rows[0][0]]
    assert [p.id for p in read_dpr_passages(path, ids=some)] == [rows[0][0], rows[3][0]]
    bad = tmp_path / "bad.tsv"
    bad.write_text("id\ttext\ttitle\n1\tonly two\n")
    with pytest.raises(InputError, match=r"bad.tsv:2: expected 3 tab-separated fields"):
        list(read_dpr_passages(bad))


def test_passage_reader_unquotes_only_fully_quoted_fields(tmp_path):
    # A quote at one end only is text (a 12" record, a title ending in a quote), as the
    # csv module reads it; a field quoted at both ends loses the quotes, doubled quotes
    # inside become single.
    path = tmp_path / "psgs.tsv"
    path.write_text('id\ttext\ttitle\n'
                    '1\tA 12" record\tVinyl "LP"\n'
                    '2\t"He said ""yes"""\t"Quoted"\n'
                    '3\tx\t""\n')
    with path.open(newline="") as f:
        rows = [tuple(r) for r in csv.reader(f, delimiter="\t")][1:]
    assert rows == [("1", 'A 12" record', 'Vinyl "LP"'), ("2", 'He said "yes"', "Quoted"),
                    ("3", "x", "")]
    assert [(p.id, p.text, p.title) for p in read_dpr_passages(path)] == rows


def test_trec_run_to_dpr_results_scores_like_the_equivalent_results(tmp_path):
    corpus, passages = _corpus(tmp_path)
    recs = _biencoder()
    qa = tmp_path / "qa.tsv"
    qa.write_text("".join(f"{r['question']}\t{r['answers']!r}\n" for r in recs))
    # query i retrieves: a hard negative, then its positive, then another question's
    # positive (scores decreasing); question 4 is absent from the run
    lines, expected = [], []
    for i, r in enumerate(recs):
        pos = str(r["positive_ctxs"][0]["passage_id"])
        neg = str(r["hard_negative_ctxs"][0]["passage_id"])
        other = str(recs[(i + 1) % len(recs)]["positive_ctxs"][0]["passage_id"])
        chosen = [(neg, 3.0), (pos, 2.0), (other, 1.0)] if i < 4 else []
        for rank, (pid, score) in enumerate(chosen, 1):
            # ranks written in reverse: the order must come from the scores
            lines.append(TrecRunLine(str(i), pid, 4 - rank, score, "hand"))
        expected.append(DprResult(r["question"], tuple(r["answers"]), tuple(
            DprContext(pid, passages[pid]["title"], passages[pid]["text"], score=s)
            for pid, s in chosen)))
    run = tmp_path / "run.trec"
    write_trec_run(run, lines)
    got = trec_to_dpr_results(run, qa, corpus)
    assert got == expected
    assert trec_to_dpr_results(run, qa, corpus, depth=1)[0].ctxs == expected[0].ctxs[:1]
    # the same results through the DPR JSON reader score the same
    as_json = tmp_path / "results.json"
    as_json.write_text(json.dumps([{"question": r.question, "answers": list(r.answers),
                                    "ctxs": [{"id": c.id, "title": c.title, "text": c.text,
                                              "score": c.score} for c in r.ctxs]}
                                   for r in expected]))
    from nqkit.formats.dpr import read_dpr_results

    a = score_answer_recall(got, [1, 2, 3])
    b = score_answer_recall(list(read_dpr_results(as_json)), [1, 2, 3])
    assert (a.recall, a.first_hit) == (b.recall, b.first_hit)
    assert a.signature == b.signature and a.signature.startswith("retrieval|split:")


def test_trec_to_dpr_errors(tmp_path):
    corpus, _ = _corpus(tmp_path)
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"question": "q one", "answer": ["a"]}\n'
                  '{"question": "q two", "answer": ["b"]}\n')
    assert read_questions_answers(qa) == [("q one", ("a",)), ("q two", ("b",))]
    run = tmp_path / "run.txt"
    run.write_text("0 Q0 11828866 1 1 t\n2 Q0 11828866 1 1 t\n")
    with pytest.raises(InputError) as e:
        trec_to_dpr_results(run, qa, corpus)
    assert e.value.message == (
        f"{run}:2: query id '2' is not a question number: the 2 questions are numbered 0 to 1 "
        "in file order — give the questions file the run was made for (or --first-qid when "
        "the run numbers them from 1)")
    # a query id that is no number is no question either (not question 0)
    run.write_text("q1 Q0 11828866 1 1 t\n")
    with pytest.raises(InputError) as e:
        trec_to_dpr_results(run, qa, corpus)
    assert e.value.message.startswith(f"{run}:1: query id 'q1' is not a question number: ")
    run.write_text("1 Q0 11828866 1 1 t\n2 Q0 11828866 1 1 t\n")
    got = trec_to_dpr_results(run, qa, corpus, first_qid=1)  # qids 1..2
    assert [len(r.ctxs) for r in got] == [1, 1]
    run.write_text("0 Q0 nope 1 1 t\n0 Q0 11828866 2 0.5 t\n")
    with pytest.raises(InputError, match=r"psgs.tsv: 1 document\(s\) of the run are not in "
                       r"the passage file \(e.g. 'nope'\)"):
        trec_to_dpr_results(run, qa, corpus)


# --------------------------------------------------------------------------- reqa run --trec

def test_reqa_run_writes_its_ranking_as_a_trec_run(tmp_path, capsys):
    require("bm25s")
    task = small_reqa_task(tmp_path / "task")
    index = [json.loads(x)["sentence"] for x in (task / "index.jsonl").read_text().splitlines()]
    queries = [json.loads(x) for x in (task / "queries.jsonl").read_text().splitlines()]
    run, ranks = tmp_path / "bm25.trec", tmp_path / "ranks.jsonl"
    assert main(["reqa", "run", "--gold", str(task), "--trec", str(run), "--hits", "5",
                 "--per-item", str(ranks), "--format", "json"]) == 0
    assert "TREC run" in capsys.readouterr().err
    groups = ranked(read_trec_run(run))
    assert list(groups) == [str(i) for i in range(len(queries))]
    # float32 BM25 scores, written in their shortest float32 text as retrieve writes them
    # (not the float32 widened to 17 digits)
    texts = [line.split()[4] for line in run.read_text().splitlines()]
    assert all(str(np.float32(float(t))) == t for t in texts)
    assert max(len(t.replace("-", "").replace(".", "").lstrip("0")) for t in texts) <= 9
    per_query = [json.loads(x) for x in ranks.read_text().splitlines()]
    checked = 0
    for i, q in enumerate(queries):
        lines = groups[str(i)]
        assert [x.rank for x in lines] == [1, 2, 3, 4, 5]
        assert [x.score for x in lines] == sorted((x.score for x in lines), reverse=True)
        assert all(x.tag == "nqkit-bm25-sentence" for x in lines)
        top = index[int(lines[0].docid[1:])]
        # an untied rank 1 in the ranks file is the run's first sentence, and a target
        # outside the top 5 never appears in it
        if per_query[i]["sentence_rank"] == 1.0:
            assert top == q["answer_sentence"]
            checked += 1
        if per_query[i]["sentence_rank"] > 5.5:
            assert q["answer_sentence"] not in {index[int(x.docid[1:])] for x in lines}
    assert checked > 5
