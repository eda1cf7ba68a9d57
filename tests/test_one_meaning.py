"""An option means one thing, and is refused where it would be ignored (issue 30).

* a hybrid's settings (--fusion, --weight, --alpha, --depth, --parts) given to a run that
  fuses nothing: one line, not ignored;
* eval's report options (--explain, --breakdown, --pr-curve) are not options of compare,
  which prints its own table;
* the two BM25 flavours' runs carry different TREC tags;
* the short-lists warning names BM25 only when the run says it was BM25.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nqkit.cli import main

from conftest import SHARED, make_passages_module, require, shared_file


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    require("bm25s")
    d = tmp_path_factory.mktemp("one-meaning")
    module = make_passages_module()
    passages = d / "real.tsv"
    module.write_passages(passages, module.real_passages(SHARED))
    qa = d / "qa200.tsv"  # 2 of these 200 questions share a term with fewer than 100
    qa.write_text("".join(shared_file("data", "dpr", "nq-test.qa.tsv").read_text(
        encoding="utf-8").splitlines(keepends=True)[:200]), encoding="utf-8")
    out = {"passages": passages, "qa": qa, "bm25": d / "bm25", "exact": d / "exact"}
    for key, more in (("bm25", []), ("exact", ["--bm25-method", "lucene-exact"])):
        assert main(["index", "build", "--passages", str(passages), "--retriever", "bm25",
                     "-o", str(out[key]), "--cluster", "none", *more]) == 0
    return out


@pytest.mark.parametrize("extra", [["--fusion", "rrf"], ["--alpha", "0.5"],
                                   ["--depth", "50"], ["--fusion", "norm", "--alpha", "2"]])
def test_a_hybrid_setting_on_one_index_is_refused(small, tmp_path, capsys, extra):
    out = tmp_path / "run.json"
    assert main(["retrieve", "--index", str(small["bm25"]), "--gold", str(small["qa"]),
                 "-o", str(out), "--cluster", "none", *extra]) == 2
    err = capsys.readouterr().err
    given = " ".join(w for w in extra if w.startswith("--"))
    assert err == (f"nqkit: error: {given}: set a hybrid's fusion, and one --index is no "
                   "hybrid run — drop them, or give a second --index to fuse with\n")
    assert not out.exists()


def test_a_hybrid_setting_on_a_single_retriever_is_refused(tmp_path, capsys):
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps({"version": "1.1", "data": [{"title": "t", "paragraphs": [
        {"context": "Paris is the capital of France.", "qas": [
            {"id": "1", "question": "what is the capital of france",
             "answers": [{"text": "Paris", "answer_start": 0}]}]}]}]}), encoding="utf-8")
    assert main(["reqa", "build", "--from", "squad", str(squad), "-o",
                 str(tmp_path / "t")]) == 0
    capsys.readouterr()
    for extra in (["--weight", "0.3"], ["--parts", "bm25", "dense"]):
        assert main(["reqa", "run", "--gold", str(tmp_path / "t"), "--retriever", "bm25",
                     "--no-per-item", *extra]) == 2
        err = capsys.readouterr().err
        assert err == (f"nqkit: error: {extra[0]}: set a hybrid's fusion, and --retriever "
                       "bm25 is no hybrid — drop them, or use --retriever hybrid\n")


@pytest.mark.parametrize(("task", "option"), [("nq-open", "--explain"), ("nq", "--breakdown"),
                                              ("nq", "--pr-curve")])
def test_compare_takes_no_report_option_of_eval(capsys, task, option):
    with pytest.raises(SystemExit):
        main(["compare", task, "--help"])
    assert option not in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["eval", task, "--help"])
    assert option in capsys.readouterr().out


def test_two_bm25_flavours_write_two_tags(small, tmp_path, capsys):
    tags = []
    for key in ("bm25", "exact"):
        trec = tmp_path / f"{key}.trec"
        assert main(["retrieve", "--index", str(small[key]), "--gold", str(small["qa"]),
                     "--trec", str(trec), "--hits", "3", "--cluster", "none"]) == 0
        tags.append({line.split()[5] for line in trec.read_text().splitlines()})
    assert tags == [{"nqkit-bm25"}, {"nqkit-bm25-lucene-exact"}]
    capsys.readouterr()


def test_the_short_lists_warning_names_bm25_only_for_a_bm25_run(small, tmp_path, capsys):
    # a results file says nothing of its retriever: the warning does not name one as
    # the cause; the same run scored by retrieve --eval (which knows it) does
    run = tmp_path / "run.json"
    assert main(["retrieve", "--index", str(small["bm25"]), "--gold", str(small["qa"]),
                 "-o", str(run), "--hits", "100", "--eval", "--cluster", "none"]) == 0
    searched = capsys.readouterr().err
    assert main(["eval", "retrieval", "--predictions", str(run)]) == 0
    scored = capsys.readouterr().err
    assert "2 of 200 questions have fewer than 100 contexts" in searched
    assert "(BM25 returns only passages that share a term" in searched
    assert "(a lexical retriever such as BM25 returns only" in scored


# ---------------------------------------------------------------------------- --allow-extra

def _nq_open_files(tmp_path: Path) -> tuple[str, str]:
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"question": f"q{i}", "answer": [f"a{i}"]}) + "\n"
                            for i in range(4)), encoding="utf-8")
    preds = tmp_path / "preds.jsonl"  # every gold question, and two the gold has not
    preds.write_text("".join(json.dumps({"question": q, "prediction": p}) + "\n"
                             for q, p in [("q0", "a0"), ("q1", "x"), ("q2", "a2"), ("q3", "x"),
                                          ("other 1", "y"), ("other 2", "z")]),
                     encoding="utf-8")
    return str(gold), str(preds)


def _ambig_files(tmp_path: Path) -> tuple[str, str]:
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps([{"id": str(i), "question": f"q{i}", "annotations": [
        {"type": "singleAnswer", "answer": [f"a{i}"]}]} for i in range(3)]), encoding="utf-8")
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({"0": ["a0"], "1": ["x"], "2": ["a2"], "9": ["y"]}),
                     encoding="utf-8")
    return str(gold), str(preds)


@pytest.mark.parametrize("kind", ["eval-nq-open", "eval-ambigqa", "overlap-nq-open",
                                  "overlap-ambigqa", "compare-nq-open"])
def test_allow_extra_means_one_thing_everywhere(tmp_path, capsys, kind):
    nq_open = kind.endswith("nq-open")
    gold, preds = (_nq_open_files if nq_open else _ambig_files)(tmp_path)
    if kind.startswith("eval"):
        argv = ["eval", kind[5:], "--gold", gold, "--predictions", preds, "--format", "json"]
    elif kind.startswith("overlap"):
        argv = ["overlap", "score", "--gold", gold, "--train", gold, "--predictions", preds,
                "--format", "json"]
    else:
        argv = ["compare", "nq-open", "--gold", gold, preds, preds, "--resamples", "50",
                "--trials", "10", "--format", "json"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--allow-extra to ignore them" in err, err
    assert ("2 prediction(s) are for questions not in the gold" if nq_open else
            "1 predicted id(s) are not in the gold (e.g. 9)") in err
    assert main([*argv, "--allow-extra"]) == 0
    got = json.loads(capsys.readouterr().out)
    if kind == "eval-nq-open":  # the official rule over the gold's 4 questions: 2 right
        assert got["accuracy"] == 0.5
    elif kind == "eval-ambigqa":  # 2 of 3 ids right
        assert got["metrics"]["F1 answer"]["all"] == pytest.approx(2 / 3)
    elif kind.startswith("overlap"):
        assert got["groups"]["total"]["n"] == (4 if nq_open else 3)


# ---------------------------------------------------------------------------- another task's files

@pytest.mark.parametrize(("argv", "message"), [
    (["eval", "nq-open", "--gold", "{ambig}", "--predictions", "{open_preds}"],
     "{ambig}: this looks like AmbigNQ gold, not NQ-open — use `nqkit eval ambigqa`"),
    (["eval", "ambigqa", "--gold", "{open}", "--predictions", "{ambig_preds}"],
     "{open}: this looks like NQ-open gold, not AmbigNQ — use `nqkit eval nq-open`"),
    (["eval", "nq", "--gold", "{open}", "--predictions", "{nq_preds}"],
     "{open}: this looks like NQ-open gold, not Natural Questions (original or simplified) "
     "— use `nqkit eval nq-open`"),
    (["compare", "ambigqa", "--gold", "{nq}", "{ambig_preds}", "{ambig_preds}"],
     "{nq}: this looks like Natural Questions (original or simplified) gold, not AmbigNQ — "
     "use `nqkit compare nq`"),
    (["eval", "nq-open", "--gold", "{open_preds}", "--predictions", "{open}"],
     "--predictions {open}: looks like NQ-open gold, and --gold {open_preds} like "
     "predictions — give the gold with --gold and the predictions with --predictions "
     "(swapped?)"),
    (["eval", "nq", "--gold", "{nq_preds}", "--predictions", "{nq}"],
     "--predictions {nq}: looks like Natural Questions (original or simplified) gold, and "
     "--gold {nq_preds} like predictions — give the gold with --gold and the predictions "
     "with --predictions (swapped?)"),
])
def test_another_tasks_gold_or_swapped_files_are_named(capsys, argv, message):
    files = {"ambig": shared_file("data", "ambignq", "dev_light.json"),
             "open": shared_file("data", "nq-open", "NQ-open.dev.jsonl"),
             "nq": shared_file("data", "nq", "nq-dev-sample10.jsonl.gz"),
             "open_preds": shared_file("golden", "nq-open", "first_answer.predictions.jsonl"),
             "ambig_preds": shared_file("golden", "ambigqa", "answers_noisy.predictions.json"),
             "nq_preds": shared_file("golden", "nq-eval", "mixed0.predictions.json")}
    words = [str(files[w[1:-1]]) if w.startswith("{") else w for w in argv]
    assert main(words) == 2
    want = message
    for key, path in files.items():
        want = want.replace("{" + key + "}", str(path))
    assert capsys.readouterr().err == f"nqkit: error: {want}\n"


def test_a_file_that_carries_gold_and_predictions_may_be_both(tmp_path, capsys):
    both = tmp_path / "both.jsonl"  # {question, answer, prediction}, as oqaeval's files
    both.write_text("".join(json.dumps({"question": f"q{i}", "answer": [f"a{i}"],
                                        "prediction": f"a{i % 2}"}) + "\n" for i in range(4)),
                    encoding="utf-8")
    assert main(["eval", "nq-open", "--gold", str(both), "--predictions", str(both),
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == 0.5
