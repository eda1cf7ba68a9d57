"""Provenance of the files nqkit writes (issue 30): every qrels file, overlap labels,
TREC run, results and per-item file gets a ``.provenance.json`` beside it; read back,
what made the file stays in the signature and a file numbered by another question set
is refused in one line."""

from __future__ import annotations

import gzip
import json

import pytest

from nqkit.cli import main

from conftest import SHARED, shared_file


# imported when used, so that each test of this file fails alone on a tree without them
def sidecar(path):
    from nqkit.io import sidecar

    return sidecar(path)


def read_provenance(path):
    from nqkit.io import read_provenance

    return read_provenance(path)


def question_set(questions):
    from nqkit.splits import question_set

    return question_set(questions)


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def _jsonl(path, records):
    return _write(path, "".join(json.dumps(r) + "\n" for r in records))


def _sidecar(path):
    return json.loads(sidecar(path).read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------ qrels

@pytest.fixture
def qrels_case(tmp_path):
    """A corpus, two question files (the same questions in another order), an oracle file
    and a DPR results file over the corpus, all small enough to check by hand."""
    passages = _write(tmp_path / "psgs.tsv", "id\ttext\ttitle\n"
                      "a\tParis is the capital of France\tParis\n"
                      "b\tJupiter is the largest planet\tJupiter\n"
                      "c\tRome is in Italy\tRome\n")
    qa = _write(tmp_path / "qa.tsv", "capital of france\t['Paris']\n"
                "largest planet\t['Jupiter']\n")
    swapped = _write(tmp_path / "swapped.tsv", "largest planet\t['Jupiter']\n"
                     "capital of france\t['Paris']\n")
    oracle = tmp_path / "oracle.jsonl.gz"
    with gzip.open(oracle, "wt", encoding="utf-8") as f:
        for q, title, text in (("capital of france", "Paris", "Paris is the capital of France"),
                               ("largest planet", "Jupiter", "Jupiter is the largest planet")):
            f.write(json.dumps({"question": q, "answers": ["x"], "ctxs": [
                {"title": title, "text": text, "hasanswer": True, "isgold": True}]}) + "\n")
    ctx = {"a": ("Paris", "Paris is the capital of France"),
           "b": ("Jupiter", "Jupiter is the largest planet"), "c": ("Rome", "Rome is in Italy")}
    results = tmp_path / "results.json"
    results.write_text(json.dumps([
        {"question": q, "answers": [ans], "ctxs": [
            {"id": pid, "title": ctx[pid][0], "text": ctx[pid][1], "score": 1.0}
            for pid in order]}
        for q, ans, order in (("capital of france", "Paris", "ca"),
                              ("largest planet", "Jupiter", "bc"))]), encoding="utf-8")
    return {"passages": passages, "qa": qa, "swapped": swapped, "oracle": str(oracle),
            "results": str(results), "dir": tmp_path}


def _convert_qrels(c, capsys, questions):
    """``nqkit convert qrels`` of the case's oracle for the question file ``questions``
    (a key of the case): the qrels path and the signature printed."""
    out = c["dir"] / "gold.qrels"
    assert main(["convert", "qrels", "--oracle", c["oracle"], "--gold", c[questions],
                 "--passages", c["passages"], "-o", str(out)]) == 0
    return out, capsys.readouterr().out.strip()


def test_convert_qrels_writes_where_they_came_from(qrels_case, capsys):
    out, printed = _convert_qrels(qrels_case, capsys, "qa")
    assert out.read_text() == "0 0 a 1\n1 0 b 1\n"  # the qrels themselves: unchanged format
    side = _sidecar(out)
    assert side["signature"] == printed
    assert side["questions"]["count"] == 2 and side["questions"]["first-qid"] == 0
    assert side["questions"]["keys"] == question_set(
        ["capital of france", "largest planet"])["keys"]
    assert side["command"].startswith("nqkit convert qrels --oracle ")
    assert side["sha256"] == __import__("hashlib").sha256(out.read_bytes()).hexdigest()


def test_qrels_of_another_question_set_are_refused(qrels_case, capsys):
    c = qrels_case
    out, _ = _convert_qrels(c, capsys, "qa")
    base = ["eval", "retrieval", "--predictions", c["results"], "--qrels", str(out),
            "--format", "json", "--topk", "1", "2"]
    # their own questions: gold-passage recall by hand (q0's gold a at 2, q1's b at 1)
    assert main([*base, "--gold", c["qa"]]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["gold_passage_recall"]["1"] == 0.5 and got["gold_passage_recall"]["2"] == 1.0
    # the same questions in another order: the numbers would name the wrong questions
    assert main([*base, "--gold", c["swapped"]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"nqkit: error: --qrels {out}: numbered "
                                                   "by the questions of custom (2 questions)")
    # numbered from another first qid
    assert main([*base, "--gold", c["qa"], "--first-qid", "1"]) == 2
    assert "numbered from qid 0, not --first-qid 1" in capsys.readouterr().err
    # a planted defect: the qrels edited after nqkit wrote them are a foreign file, said
    out.write_text("1 0 a 1\n0 0 b 1\n")
    assert main([*base, "--gold", c["swapped"]]) == 0
    captured = capsys.readouterr()
    assert "has changed since nqkit wrote it" in captured.err
    assert json.loads(captured.out)["gold_passage_recall"]["2"] == 1.0


def test_qrels_numbered_by_the_results_are_checked_once_they_are_read(qrels_case, capsys):
    c = qrels_case
    out, _ = _convert_qrels(c, capsys, "swapped")
    # no --gold: qid = position in the results, whose order is qa.tsv's, not swapped.tsv's
    assert main(["eval", "retrieval", "--predictions", c["results"], "--qrels",
                 str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"nqkit: error: --qrels {out}: numbered by the questions")


# ---------------------------------------------------------------------- overlap labels

@pytest.fixture
def overlap_case(tmp_path):
    test = _jsonl(tmp_path / "test.jsonl", [
        {"question": "who wrote hamlet", "answer": ["Shakespeare"]},
        {"question": "capital of france", "answer": ["Paris"]},
        {"question": "largest planet in the solar system", "answer": ["Jupiter"]}])
    train = _jsonl(tmp_path / "train.jsonl", [
        {"question": "who wrote the play hamlet", "answer": ["Shakespeare"]},
        {"question": "what city is the capital of france", "answer": ["Paris"]},
        {"question": "who painted the mona lisa", "answer": ["Leonardo da Vinci"]}])
    preds = _jsonl(tmp_path / "preds.jsonl", [
        {"question": "who wrote hamlet", "prediction": "Shakespeare"},
        {"question": "capital of france", "prediction": "Lyon"},
        {"question": "largest planet in the solar system", "prediction": "Jupiter"}])
    return {"test": test, "train": train, "preds": preds, "dir": tmp_path}


def _labels(c, capsys, out):
    assert main(["overlap", "labels", "--gold", c["test"], "--train", c["train"], "-o",
                 str(out)]) == 0
    err = capsys.readouterr().err
    return err.split("signature: ", 1)[1].strip()


def test_proxy_labels_read_back_stay_named_as_a_proxy(overlap_case, capsys):
    c = overlap_case
    labels = c["dir"] / "labels.jsonl"
    made = _labels(c, capsys, labels)
    assert "qproxy:tfidf-cos>=0.5" in made and "train:" in made
    assert _sidecar(labels)["signature"] == made
    # overlap score with the labels: the signature says a proxy made them, on which train
    assert main(["overlap", "score", "--gold", c["test"], "--annotations", str(labels),
                 "--annotated-test", c["test"], "--predictions", c["preds"],
                 "--format", "json"]) == 0
    sig = json.loads(capsys.readouterr().out)["signature"]
    parts = dict(p.split(":", 1) for p in sig.split("|")[1:] if ":" in p)
    train_split = dict(p.split(":", 1) for p in made.split("|")[1:] if ":" in p)["train"]
    assert parts["labels"].startswith("nqkit#")
    assert parts["qproxy"] == "tfidf-cos>=0.5" and parts["train"] == train_split
    assert parts["qscope"] == "same-answer" and parts["answers"] == "squad"
    # overlap official: the same parts after annotations
    rows = _write(c["dir"] / "rows.jsonl", "".join(
        json.dumps({"id": i, "prediction": p}) + "\n"
        for i, p in enumerate(("Shakespeare", "Lyon", "Jupiter"))))
    assert main(["overlap", "official", "--annotations", str(labels), "--gold", c["test"],
                 "--predictions", rows, "--format", "json"]) == 0
    sig = json.loads(capsys.readouterr().out)["signature"]
    assert "|qproxy:tfidf-cos>=0.5|" in sig and f"|train:{train_split}|" in sig
    # the browser's groups come from the same function
    from nqkit.analysis.overlap import load_qa_set
    from nqkit.tasks.overlap import overlap_groups

    a = overlap_groups(load_qa_set(c["test"]), annotations=str(labels),
                       annotated_test=c["test"])
    assert a.source["qproxy"] == "tfidf-cos>=0.5" and a.source["labels"].startswith("nqkit#")


def test_official_format_labels_without_sidecar_keep_their_name(overlap_case, capsys):
    c = overlap_case
    labels = c["dir"] / "labels.jsonl"
    _labels(c, capsys, labels)
    sidecar(labels).unlink()  # as a file of the official format from elsewhere
    assert main(["overlap", "score", "--gold", c["test"], "--annotations", str(labels),
                 "--annotated-test", c["test"], "--predictions", c["preds"],
                 "--format", "json"]) == 0
    sig = json.loads(capsys.readouterr().out)["signature"]
    assert "|labels:qa-overlap#" in sig and "qproxy" not in sig


def test_labels_of_another_test_file_are_refused(overlap_case, capsys):
    c = overlap_case
    labels = c["dir"] / "labels.jsonl"
    _labels(c, capsys, labels)
    other = _jsonl(c["dir"] / "other.jsonl", [
        {"question": "capital of france", "answer": ["Paris"]},
        {"question": "who wrote hamlet", "answer": ["Shakespeare"]},
        {"question": "largest planet in the solar system", "answer": ["Jupiter"]}])
    assert main(["overlap", "score", "--gold", c["test"], "--annotations", str(labels),
                 "--annotated-test", other, "--predictions", c["preds"]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--annotations {labels}: numbered by the questions" \
        in err


# ----------------------------------------------------------------- runs and per-item

def test_per_item_files_say_what_made_them(tmp_path, capsys):
    gold = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    preds = shared_file("golden", "nq-open", "first_answer.predictions.jsonl")
    per = tmp_path / "items.jsonl"
    assert main(["eval", "nq-open", "--gold", str(gold), "--predictions", str(preds),
                 "--per-item", str(per), "--format", "json"]) == 0
    sig = json.loads(capsys.readouterr().out)["signature"]
    prov = read_provenance(per)
    assert prov is not None and prov.signature == sig and prov.kind == "nq-open"


def test_a_trec_run_of_other_questions_is_refused(tmp_path, capsys):
    from conftest import make_passages_module

    module = make_passages_module()
    corpus = tmp_path / "psgs.tsv"
    module.write_passages(corpus, module.real_passages(SHARED))
    qa = shared_file("data", "dpr", "nq-test.qa.tsv")
    lines = qa.read_text(encoding="utf-8").splitlines()[:20]
    first = _write(tmp_path / "first.tsv", "\n".join(lines[:10]) + "\n")
    second = _write(tmp_path / "second.tsv", "\n".join(lines[10:]) + "\n")
    index = tmp_path / "ix"
    assert main(["index", "build", "--cluster", "none", "--passages", str(corpus),
                 "--retriever", "bm25", "-o", str(index)]) == 0
    run = tmp_path / "run.trec"
    assert main(["retrieve", "--cluster", "none", "--index", str(index), "--gold", first,
                 "--trec", str(run), "--hits", "5"]) == 0
    capsys.readouterr()
    prov = read_provenance(run)
    assert prov is not None and prov.kind == "run" and prov.questions["count"] == 10
    assert "retriever:bm25" in prov.signature
    base = ["eval", "retrieval", "--predictions", str(run), "--passages", str(corpus)]
    assert main([*base, "--gold", first]) == 0
    capsys.readouterr()
    assert main([*base, "--gold", second]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--predictions {run}: numbered by the questions" in err


def test_reqa_ranks_say_which_retriever_made_them(tmp_path, capsys):
    from nqkit.formats.reqa import build_from_squad, save_task
    from nqkit.formats.squad import squad_articles_from_json

    context = "Paris is in France. Berlin is in Germany. Rome is in Italy."
    doc = {"data": [{"title": "T", "paragraphs": [{"context": context, "qas": [
        {"id": "1", "question": "Where is Paris?",
         "answers": [{"text": "France", "answer_start": context.index("France")}]},
        {"id": "2", "question": "Where is Rome?",
         "answers": [{"text": "Italy", "answer_start": context.index("Italy")}]}]}]}]}
    task_dir = tmp_path / "task"
    save_task(build_from_squad(squad_articles_from_json(doc, "t"), {"source": "squad"}),
              task_dir)
    ranks, run = tmp_path / "ranks.jsonl", tmp_path / "run.trec"
    assert main(["reqa", "run", "--gold", str(task_dir), "--retriever", "bm25",
                 "--per-item", str(ranks), "--trec", str(run), "--format", "json"]) == 0
    run_sig = json.loads(capsys.readouterr().out)["signature"]
    assert "retriever:bm25" in run_sig
    for path in (ranks, run):
        prov = read_provenance(path)
        assert prov is not None and prov.signature == run_sig


def test_an_output_whose_sidecar_would_overwrite_an_input_is_refused(tmp_path, capsys):
    gold = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    preds = tmp_path / "p.jsonl"
    preds.write_bytes(shared_file("golden", "nq-open",
                                  "first_answer.predictions.jsonl").read_bytes())
    keep = tmp_path / "items.jsonl.provenance.json"
    keep.write_bytes(preds.read_bytes())
    assert main(["eval", "nq-open", "--gold", str(gold), "--predictions", str(keep),
                 "--per-item", str(tmp_path / "items.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "its provenance file would be written over an input" \
        in err
    assert keep.read_bytes() == preds.read_bytes()
    assert not (tmp_path / "items.jsonl").exists()


def test_numbering_accepts_any_part_numbered_alike_and_names_what_is_not():
    from nqkit.errors import InputError
    from nqkit.io.provenance import Provenance
    from nqkit.splits import check_numbering

    every = [f"question number {i}" for i in range(50)]
    prov = Provenance("gold.qrels", "qrels|x:y|v0", question_set(every))

    def check(questions, first_qid):
        check_numbering(prov, questions, first_qid=first_qid, option="--qrels",
                        against="--gold q.tsv", fix="fix")

    check(every, 0)
    check(every[:30], 0)  # a prefix: qid i is still question i
    check(every[20:35], 20)  # a slice numbered from its first qid
    with pytest.raises(InputError, match=r"numbered from qid 0, not --first-qid 5"):
        check(every, 5)
    with pytest.raises(InputError, match=r"for 15 of the 15 questions of --gold q.tsv "
                                         r"\(custom \(15 questions\)\) the qid names "
                                         r"another question there \(qid 0 'question number "
                                         r"20', 1 'question number 21', 2 'question"):
        check(every[20:35], 0)  # the slice numbered from 0: every qid names another
    with pytest.raises(InputError, match=r"for 1 of the 51"):
        check([*every, "one more"], 0)  # qid 50 names no question there
    swapped = [every[1], every[0], *every[2:]]
    with pytest.raises(InputError, match=r"for 2 of the 50 .* \(qid 0 'question number 1', "
                                         r"1 'question number 0'\)"):
        check(swapped, 0)
