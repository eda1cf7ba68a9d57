"""``nqkit eval nq-open --adjudicated`` is oqaeval's AnnotatedEM (Kamalloo et al. 2023).

oqaeval's own ``eval._evaluate`` with an annotation file is the oracle (imported from
``shared/oracles`` with ``oqaeval.llm``, its GPT judge, replaced by a module with an
empty ``OpenAIProxy``): on the 12 released systems with ``NQ301_human.tsv`` (also equal
to ``golden/openqa-eval/annotated_em.json``), and on generated judgments files that hold
every case the rule distinguishes — an unacceptable answer that is a gold answer (also in
another case), an acceptable one that is not, judgments that remove every gold answer
(the prediction judged, or not: then the question is left out), a judged question not in
the gold, a trailing ``?`` on either side, duplicate and conflicting rows, empty and
oddly spelled verdicts. Per question, the oracle's AnnotatedEM column must equal nqkit's
``adjudicated`` verdict.

The few-shot InstructGPT file lists several answers for 16 questions, which nqkit
refuses as predictions (tests/test_harness_files.py); oqaeval reads the first of them,
so that file is given to nqkit with the first answer as its prediction.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

from nqkit.cli import main
from nqkit.text.question_key import question_key

from conftest import oqaeval_eval, require, shared_file

require("regex")

DATA = ("data", "openqa-eval")
NAMES = ["NQ301_text-davinci-003_fewshot-n64.jsonl", "NQ301_text-davinci-003_zeroshot.jsonl",
         "NQ_ANCE-plus_FiD.jsonl", "NQ_Contriever_FiD.jsonl", "NQ_DPR.jsonl",
         "NQ_EMDR2.jsonl", "NQ_EviGen.jsonl", "NQ_FiD-KD.jsonl", "NQ_FiD.jsonl",
         "NQ_GAR-plus_FiD.jsonl", "NQ_R2D2.jsonl", "NQ_Rocketv2_FiD.jsonl"]
HEADER = "id\tQuestion\tModel answer\tAcceptable?\tannotator1\n"


@pytest.fixture(scope="module")
def oqaeval():
    with oqaeval_eval() as module:
        yield module


def oracle(oqaeval, predictions: Path, judgments: Path, tmp: Path) -> dict:
    """oqaeval's scores of a {question, answer, prediction} file, and its per-question
    AnnotatedEM (from the TSV it writes), by oqaeval's question key."""
    out = tmp / "oracle_eval.tsv"
    got = oqaeval._evaluate(predictions, None, None, out, judgments, overwrite_cache=True)
    with out.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return {"EM": got["EM"], "AnnotatedEM": got["AnnotatedEM"],
            "per_question": {question_key(r["Question"]): int(r["AnnotatedEM"])
                             for r in rows}}


def ours(capsys, gold: Path, predictions: Path, judgments: Path, *more: str) -> dict:
    assert main(["eval", "nq-open", "--gold", str(gold), "--predictions", str(predictions),
                 "--adjudicated", str(judgments), "--format", "json", *more]) == 0, \
        capsys.readouterr().err
    summary = json.loads(capsys.readouterr().out)
    assert main(["eval", "nq-open", "--gold", str(gold), "--predictions", str(predictions),
                 "--adjudicated", str(judgments), "--format", "jsonl", *more]) == 0
    items = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    summary["per_question"] = {question_key(it["question"]): int(it["adjudicated"])
                               for it in items if it.get("adjudicated") is not None}
    return summary


def as_oqaeval_reads(name: str, tmp: Path) -> Path:
    """The released file, a list prediction replaced by its first answer (stripped), as
    oqaeval's read_predict_file takes it."""
    path = shared_file(*DATA, "model_outputs", name)
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    if all(isinstance(r["prediction"], str) for r in rows):
        return path
    for r in rows:
        if isinstance(r["prediction"], list):
            r["prediction"] = r["prediction"][0].strip()
    out = tmp / name
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return out


# ------------------------------------------------------------------ released files

@pytest.mark.parametrize("name", NAMES)
def test_every_released_system_equals_oqaeval_and_the_golden(name, oqaeval, tmp_path,
                                                             capsys):
    golden = json.loads(shared_file("golden", "openqa-eval", "annotated_em.json")
                        .read_text(encoding="utf-8"))[name]
    human = shared_file(*DATA, "NQ301_human.tsv")
    theirs = oracle(oqaeval, shared_file(*DATA, "model_outputs", name), human, tmp_path)
    path = as_oqaeval_reads(name, tmp_path)
    got = ours(capsys, path, path, human)
    a = got["adjudicated"]
    assert (a["num_correct"], a["num_total"]) == (sum(theirs["AnnotatedEM"]),
                                                  len(theirs["AnnotatedEM"]))
    assert a["num_total"] == a["covered"] == 150
    assert a["accuracy"] == pytest.approx(golden["AnnotatedEM"], abs=1e-12)
    assert a["num_correct_before"] == sum(theirs["EM"])
    assert a["accuracy_before"] == pytest.approx(golden["EM"], abs=1e-12)
    assert got["per_question"] == theirs["per_question"]
    fingerprint = hashlib.sha256(human.read_bytes()).hexdigest()
    assert f"|adjudicated:{fingerprint[:12]}|" in got["signature"]


def test_the_official_number_is_unchanged(capsys):
    path = shared_file(*DATA, "model_outputs", "NQ_DPR.jsonl")
    assert main(["eval", "nq-open", "--gold", str(path), "--predictions", str(path),
                 "--format", "json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    got = ours(capsys, path, path, shared_file(*DATA, "NQ301_human.tsv"))
    for key in ("accuracy", "num_correct", "num_total", "missing_predictions"):
        assert got[key] == plain[key]
    assert got["signature"].replace(
        f"|adjudicated:{got['adjudicated']['sha256'][:12]}", "") == plain["signature"]


def test_the_table_has_its_own_rows(capsys):
    path = shared_file(*DATA, "model_outputs", "NQ_FiD.jsonl")
    assert main(["eval", "nq-open", "--gold", str(path), "--predictions", str(path),
                 "--adjudicated", str(shared_file(*DATA, "NQ301_human.tsv"))]) == 0
    out = capsys.readouterr().out
    assert "adjudicated exact match       0.6600" in out
    assert "adjudicated correct           99/150" in out
    assert "adjudicated questions      150/3,610" in out
    assert "exact match                   0.4648" in out


# ------------------------------------------------------------- generated judgments

def _variations(rows: list[dict], seed: int) -> tuple[list[dict], str]:
    """A gold with predictions (a sample of a released file, some questions reworded)
    and judgments of every kind the rule distinguishes, as TSV text."""
    rng = random.Random(seed)
    sample = [dict(r) for r in rng.sample(rows, 60)]
    lines: list[tuple[str, str, str]] = []
    for i, r in enumerate(sample):
        q, gold, pred = r["question"], r["answer"], r["prediction"]
        kind = i % 12
        if kind == 0:  # a gold answer judged unacceptable
            lines.append((q, rng.choice(gold), "No"))
        elif kind == 1:  # the prediction judged acceptable (mostly not a gold answer)
            lines.append((q, pred, "Yes"))
        elif kind == 2:  # every gold answer removed, the prediction judged unacceptable
            lines += [(q, a, "no") for a in gold] + [(q, pred, " NO ")]
        elif kind == 3:  # every gold answer removed, the prediction not judged
            lines += [(q, a, "No") for a in gold]
        elif kind == 4:  # removed through its upper-cased spelling; duplicate rows
            r["answer"] = gold = [gold[0].lower(), *gold[1:]]
            r["prediction"] = gold[0]
            lines += [(q, gold[0].upper(), "No"), (q, gold[0].upper(), "No"),
                      (q, pred, "Yes"), (q, pred, "Yes")]
        elif kind == 5:  # the same answer judged both ways, and an empty verdict
            lines += [(q, pred, "Yes"), (q, pred, "No"), (q, gold[0], "")]
        elif kind == 6:  # the judgments ask it with a '?', the gold without
            r["question"] = q.rstrip("?").rstrip()
            lines.append((r["question"] + "?", pred, "yes"))
        elif kind == 7:  # the gold asks with a '?', the judgments without: not covered
            r["question"] = q + "?"
            lines.append((q, pred, "Yes"))
        elif kind == 8:  # other case and spacing in the judged question
            lines.append(("  " + q.upper().replace(" ", "  "), pred, "Yes"))
        elif kind == 9:  # a contraction: its case matters before lower-casing
            r["question"] = "don't " + q
            lines.append(("Don't " + q, pred, "Yes"))
            lines.append(("don't   " + q, gold[0], "No"))
        elif kind == 10:  # a question not in the gold
            lines.append((q + " in another world", pred, "Yes"))
        else:  # an answer with stray spaces: judged as written, the prediction stripped
            lines.append((q, f" {pred} ", "Yes"))
    rng.shuffle(lines)
    text = HEADER + "".join(f"{n}\t{q}\t{a}\t{v}\t{v}\n" for n, (q, a, v) in
                            enumerate(lines))
    return sample, text


@pytest.mark.parametrize("seed", range(6))
def test_generated_judgments_equal_oqaeval(seed, oqaeval, tmp_path, capsys, caplog):
    path = shared_file(*DATA, "model_outputs", "NQ_FiD.jsonl")
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if "\t" not in r["prediction"] and '"' not in r["prediction"]
            and r["prediction"].strip()]
    sample, text = _variations(rows, seed)
    both = tmp_path / "both.jsonl"
    both.write_text("".join(json.dumps(r) + "\n" for r in sample), encoding="utf-8")
    judgments = tmp_path / "judgments.tsv"
    judgments.write_text(text, encoding="utf-8")
    with caplog.at_level("WARNING", logger="eval"):
        theirs = oracle(oqaeval, both, judgments, tmp_path)
    left_out = sum("could not be evaluated after applying" in r.message
                   for r in caplog.records)
    got = ours(capsys, both, both, judgments)
    a = got["adjudicated"]
    assert (a["num_correct"], a["num_total"]) == (sum(theirs["AnnotatedEM"]),
                                                  len(theirs["AnnotatedEM"]))
    assert a["num_correct_before"] == sum(theirs["EM"])
    assert got["per_question"] == theirs["per_question"]
    # every kind happened: questions left out, questions outside the gold
    assert a["unscorable"] == left_out >= 5 and a["not_in_gold"] >= 5
    assert a["covered"] == a["num_total"] + a["unscorable"] < len(sample)


def test_a_separate_gold_file_is_joined_by_question(oqaeval, tmp_path, capsys):
    """--gold NQ-open lines and --predictions plain lines score as the one file."""
    path = shared_file(*DATA, "model_outputs", "NQ_EMDR2.jsonl")
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    gold, preds = tmp_path / "gold.jsonl", tmp_path / "preds.jsonl"
    gold.write_text("".join(json.dumps({"question": r["question"], "answer": r["answer"]})
                            + "\n" for r in rows), encoding="utf-8")
    preds.write_text("".join(json.dumps({"question": r["question"],
                                         "prediction": r["prediction"]}) + "\n"
                             for r in rows), encoding="utf-8")
    human = shared_file(*DATA, "NQ301_human.tsv")
    assert ours(capsys, gold, preds, human)["adjudicated"] == ours(
        capsys, path, path, human)["adjudicated"]


def test_the_question_key_is_oqaevals(oqaeval):
    tokenizer = sys.modules["oqaeval.data_utils"].SimpleTokenizer()
    texts = ["who sang don't stop believin'?", "Don't Stop Me Now", "what’s a--b?",
             "I wanna, gonna, gimme!  ain't won't can't didn't doesn't",
             "Café  naïve\u0301 — 3.14 km²?", "tab\tand\nnewline ?", "", "¿qué?  ",
             "caN'T DOESN'T", "x--y---z", "who is the ceo of at&t (2018)?"]
    for text in texts:
        assert question_key(text) == tokenizer.tokenize(text, as_string=True).lower()


# ------------------------------------------------------------------------ refusals

def _one_line_error(capsys, *args: str) -> str:
    assert main(["eval", "nq-open", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nqkit: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(("text", "message"), [
    (HEADER + "1\twho?\tx\tmaybe\t\n", "judgments.tsv:2: 'Acceptable?' is 'maybe', not Yes "
     "or No — write Yes or No, or leave it empty for an answer not judged"),
    ("id\tQuestion\tAnswer\tAcceptable?\n1\twho?\tx\tYes\n", "judgments.tsv:1: the header "
     "lacks 'Model answer'"),
    (HEADER + "1\twho?\n", "judgments.tsv:2: the row has 2 of the 5 columns"),
    ("", "judgments.tsv: the judgments file is empty"),
    (HEADER + "1\twho?\tx\t \t\n", "judgments.tsv: the judgments file holds no judgment"),
    (HEADER + "1\tnot a question of this gold\tx\tYes\t\n", "judgments.tsv: none of the 1 "
     "judged question(s) is a question of the gold (e.g. 'not a question of this gold')"),
])
def test_bad_judgments_are_one_clear_line(text, message, tmp_path, capsys):
    path = shared_file(*DATA, "model_outputs", "NQ_FiD.jsonl")
    judgments = tmp_path / "judgments.tsv"
    judgments.write_text(text, encoding="utf-8")
    err = _one_line_error(capsys, "--gold", str(path), "--predictions", str(path),
                          "--adjudicated", str(judgments))
    assert f"nqkit: error: {judgments.parent}/{message}" in err


def test_judgments_that_leave_nothing_to_score_are_refused(tmp_path, capsys):
    both = tmp_path / "both.jsonl"
    both.write_text(json.dumps({"question": "who?", "answer": ["a"], "prediction": "b"})
                    + "\n", encoding="utf-8")
    judgments = tmp_path / "judgments.tsv"
    judgments.write_text(HEADER + "1\twho?\ta\tNo\t\n", encoding="utf-8")
    err = _one_line_error(capsys, "--gold", str(both), "--predictions", str(both),
                          "--adjudicated", str(judgments))
    assert "remove every gold answer of all 1 questions" in err


def test_regex_gold_is_refused(tmp_path, capsys):
    path = shared_file(*DATA, "model_outputs", "NQ_FiD.jsonl")
    err = _one_line_error(capsys, "--gold", str(path), "--predictions", str(path),
                          "--regex", "--adjudicated",
                          str(shared_file(*DATA, "NQ301_human.tsv")))
    assert "--adjudicated: judgments amend answer strings" in err


def test_crlf_judgments_read_as_oqaeval_reads_them(oqaeval, tmp_path, capsys):
    path = shared_file(*DATA, "model_outputs", "NQ_R2D2.jsonl")
    judgments = tmp_path / "human_crlf.tsv"
    judgments.write_bytes(shared_file(*DATA, "NQ301_human.tsv").read_bytes()
                          .replace(b"\n", b"\r\n"))
    theirs = oracle(oqaeval, path, judgments, tmp_path)
    a = ours(capsys, path, path, judgments)["adjudicated"]
    assert (a["num_correct"], a["num_total"]) == (sum(theirs["AnnotatedEM"]), 150)


def test_a_judged_question_without_prediction_follows_the_missing_policy(tmp_path, capsys):
    """oqaeval drops it; nqkit refuses it, or scores it wrong with --allow-missing, as it
    does for the official number."""
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"question": q, "answer": ["a"]}) + "\n"
                            for q in ("who?", "what?")), encoding="utf-8")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"question": "who?", "prediction": "b"}) + "\n",
                     encoding="utf-8")
    judgments = tmp_path / "judgments.tsv"
    judgments.write_text(HEADER + "1\twho?\tb\tYes\t\n2\twhat?\ta\tYes\t\n",
                         encoding="utf-8")
    _one_line_error(capsys, "--gold", str(gold), "--predictions", str(preds),
                    "--adjudicated", str(judgments))
    a = ours(capsys, gold, preds, judgments, "--allow-missing")["adjudicated"]
    assert (a["num_correct"], a["num_total"], a["covered"]) == (1, 2, 2)
