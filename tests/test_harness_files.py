"""Harness output files read as NQ-open predictions (and gold): lm-evaluation-harness
``--log_samples``, FlashRAG's ``intermediate_data.json``, oqaeval-style lines
(:mod:`nqkit.formats.harness`), recognised by their content; a FIFO read once.

The lm-eval and FlashRAG files are written by the harnesses' own code
(``tests/harness_files.py``) from released predictions; every expected number comes from
elsewhere: the official script's outputs (``golden/nq-open``), lm-eval's own per-sample
``exact_match``, or the same predictions scored as plain official lines.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from nqkit.cli import main
from nqkit.formats.nq_open import read_nq_open, read_predictions

from conftest import shared_file
from harness_files import write_flashrag_data, write_lm_eval_samples

GOLDEN = ("empty", "first_answer", "last_answer_perturbed", "mixed", "shuffled")


def _rows(name: str) -> list[tuple[str, list[str], str]]:
    """(question, gold, prediction) of a released oqaeval file; the 16 list predictions of
    the few-shot run (the authors' split of one generation) joined as one generation."""
    path = shared_file("data", "openqa-eval", "model_outputs", name)
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        p = r["prediction"]
        out.append((r["question"], r["answer"], ", ".join(p) if isinstance(p, list) else p))
    return out


def _lines(path: Path, objs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def _eval(capsys, *args: str) -> dict:
    assert main(["eval", "nq-open", *args, "--format", "json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _items(capsys, *args: str) -> list[bool]:
    assert main(["eval", "nq-open", *args, "--format", "jsonl"]) == 0
    return [json.loads(x)["correct"] for x in capsys.readouterr().out.splitlines()]


def _dev_gold() -> dict[str, list[str]]:
    path = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    return {r["question"]: r["answer"] for r in map(json.loads, path.read_text(
        encoding="utf-8").splitlines())}


# ------------------------------------------------------- parity with the official script

SHAPES = ("lm-eval-samples", "flashrag", "oqaeval")


@pytest.mark.parametrize(("name", "shape"), [(name, SHAPES[i % len(SHAPES)])
                                             for i, name in enumerate(GOLDEN)])
def test_every_shape_scores_the_golden_predictions_as_the_official_script(
        tmp_path, capsys, name, shape):
    """The 5 golden prediction files, each written in one harness's shape (the shapes in
    turn, so each holds two or one of them; their gold from NQ-open dev), score exactly as
    the official script scored them."""
    official = json.loads(shared_file("golden", "nq-open", f"{name}.official.json")
                          .read_text(encoding="utf-8"))
    gold = _dev_gold()
    preds = [json.loads(x) for x in shared_file("golden", "nq-open", f"{name}.predictions"
                                                ".jsonl").read_text(encoding="utf-8")
             .splitlines()]
    rows = [(p["question"], gold[p["question"]], p["prediction"]) for p in preds]
    if shape == "lm-eval-samples":
        path = write_lm_eval_samples(tmp_path, rows, cut=False)
    elif shape == "flashrag":
        path = write_flashrag_data(tmp_path / "intermediate_data.json", rows)
    else:
        path = _lines(tmp_path / "oqaeval.jsonl", [
            {"question": q, "answer": a, "prediction": p} for q, a, p in rows])
    dev = str(shared_file("data", "nq-open", "NQ-open.dev.jsonl"))
    got = _eval(capsys, "--gold", dev, "--predictions", str(path), "--allow-missing")
    assert {k: got[k] for k in official} == official, shape
    assert f"|preds:{shape}|" in got["signature"]
    assert read_predictions(path).format == shape


# ------------------------------------------------------------- lm-evaluation-harness

@pytest.fixture(scope="module")
def lm_eval_runs(tmp_path_factory) -> dict[str, Path]:
    """Two lm-eval runs over the 301 annotated NQ-open questions: InstructGPT zero-shot
    and few-shot, the generations stored cut as lm-eval's backends store them."""
    d = tmp_path_factory.mktemp("lm-eval")
    return {name: write_lm_eval_samples(d / name, _rows(f"NQ301_text-davinci-003_{name}"
                                                       ".jsonl"), model=name)
            for name in ("zeroshot", "fewshot-n64")}


def test_lm_eval_samples_equal_lm_evals_own_verdicts(lm_eval_runs, capsys):
    """The file as its own gold and predictions, under --convention lm-eval-v4: each
    question's verdict is the exact_match lm-eval wrote next to it."""
    for path in lm_eval_runs.values():
        samples = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        args = ("--gold", str(path), "--predictions", str(path), "--convention",
                "lm-eval-v4")
        got = _eval(capsys, *args)
        assert got["num_total"] == len(samples) == 301
        assert got["num_correct"] == sum(s["exact_match"] for s in samples)
        assert _items(capsys, *args) == [s["exact_match"] == 1.0 for s in samples]
        assert got["signature"].endswith("|match:em-lm-eval-v4|missing:error|"
                                         "preds:lm-eval-samples|v" + got["signature"]
                                         .rsplit("|v", 1)[1])
    # the two runs differ: the comparison below is not of equal systems
    a, b = (sum(json.loads(x)["exact_match"] for x in p.read_text().splitlines())
            for p in lm_eval_runs.values())
    assert a != b


@pytest.mark.parametrize("cut", [True, False])
def test_resps_and_filtered_resps_give_the_same_verdicts(tmp_path, capsys, cut):
    """The prediction is the raw generation ``resps[0][0]``; lm-eval-v4 cuts it itself,
    so scoring ``filtered_resps[0]`` (written as plain lines) gives the same verdicts,
    whether the backend stored the generation cut or whole."""
    rows = _rows("NQ301_text-davinci-003_zeroshot.jsonl")
    path = write_lm_eval_samples(tmp_path, rows, cut=cut)
    samples = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    filtered = _lines(tmp_path / "filtered.jsonl", [
        {"question": s["doc"]["question"], "prediction": s["filtered_resps"][0]}
        for s in samples])
    raw = _items(capsys, "--gold", str(path), "--predictions", str(path),
                 "--convention", "lm-eval-v4")
    assert raw == _items(capsys, "--gold", str(path), "--predictions", str(filtered),
                         "--convention", "lm-eval-v4")
    # lm-eval's own verdicts, its backend's cut included
    stored = samples if cut else [json.loads(x) for x in write_lm_eval_samples(
        tmp_path / "cut", rows).read_text(encoding="utf-8").splitlines()]
    assert raw == [s["exact_match"] == 1.0 for s in stored]
    if not cut:  # the whole generations are what the file holds, and what nqkit read
        assert [p.prediction for p in read_predictions(path).predictions] == \
            [g for _, _, g in rows]


def test_compare_two_lm_eval_runs_as_plain_lines(lm_eval_runs, tmp_path, capsys):
    """``nqkit compare nq-open`` on two samples files (one as the gold) prints the numbers
    of the same generations compared as plain lines against the same gold."""
    a, b = lm_eval_runs["zeroshot"], lm_eval_runs["fewshot-n64"]
    common = ["--convention", "lm-eval-v4", "--resamples", "200", "--trials", "500",
              "--format", "json"]
    assert main(["compare", "nq-open", "--gold", str(a), str(a), str(b), *common]) == 0
    harness = json.loads(capsys.readouterr().out)
    plain = []
    for name, path in (("a", a), ("b", b)):
        samples = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        plain.append(str(_lines(tmp_path / f"{name}.jsonl", [
            {"question": s["doc"]["question"], "prediction": s["resps"][0][0]}
            for s in samples])))
    gold = _lines(tmp_path / "gold.jsonl", [
        {"question": s["doc"]["question"], "answer": s["doc"]["answer"]}
        for s in map(json.loads, a.read_text(encoding="utf-8").splitlines())])
    assert main(["compare", "nq-open", "--gold", str(gold), *plain, *common]) == 0
    lines = json.loads(capsys.readouterr().out)
    assert harness["metrics"] == lines["metrics"]
    assert "preds:lm-eval-samples" in harness["signature"]
    assert "preds:" not in lines["signature"]


def test_a_second_filter_repeats_the_questions_and_is_skipped(tmp_path, capsys):
    rows = _rows("NQ301_text-davinci-003_zeroshot.jsonl")[:20]
    path = write_lm_eval_samples(tmp_path, rows)
    samples = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    other = [{**s, "filter": "strict-match", "filtered_resps": ["x"]} for s in samples]
    _lines(path, samples + other)
    assert len(read_predictions(path).predictions) == 20
    assert len(list(read_nq_open(path))) == 20


# ------------------------------------------------------------------------- FlashRAG

def test_flashrag_data_as_gold_and_predictions(tmp_path, capsys):
    """FlashRAG's saved data of FiD's 3,610 answers, as its own gold: the numbers of the
    same answers as plain lines against the same gold lists."""
    rows = _rows("NQ_FiD.jsonl")
    path = write_flashrag_data(tmp_path / "intermediate_data.json", rows)
    gold = _lines(tmp_path / "gold.jsonl", [{"question": q, "answer": a} for q, a, _ in rows])
    preds = _lines(tmp_path / "preds.jsonl", [{"question": q, "prediction": p}
                                              for q, _, p in rows])
    for convention in ("orqa", "containment"):
        got = _eval(capsys, "--gold", str(path), "--predictions", str(path),
                    "--convention", convention)
        want = _eval(capsys, "--gold", str(gold), "--predictions", str(preds),
                     "--convention", convention)
        assert {k: got[k] for k in ("accuracy", "num_correct", "num_total")} == \
            {k: want[k] for k in ("accuracy", "num_correct", "num_total")}
        assert got["signature"] == want["signature"].replace(
            "|missing:error|", "|missing:error|preds:flashrag|")
    assert 1000 < got["num_correct"] < 3610


# -------------------------------------------------------------------------- oqaeval

def test_every_oqaeval_file_scores_as_its_plain_lines(tmp_path, capsys):
    """Each released file with a string per prediction, as its own gold, scores as its
    predictions written as plain lines against its gold lists written as NQ-open lines."""
    folder = shared_file("data", "openqa-eval", "model_outputs")
    names = sorted(p.name for p in folder.glob("*.jsonl"))
    assert len(names) == 12
    scored = 0
    for name in names:
        path = folder / name
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        if not all(isinstance(r["prediction"], str) for r in rows):
            continue  # the few-shot run lists some answers: not one prediction string
        gold = _lines(tmp_path / "gold.jsonl", [{"question": r["question"],
                                                 "answer": r["answer"]} for r in rows])
        preds = _lines(tmp_path / "preds.jsonl", [{"question": r["question"],
                                                   "prediction": r["prediction"]}
                                                  for r in rows])
        got = _eval(capsys, "--gold", str(path), "--predictions", str(path))
        want = _eval(capsys, "--gold", str(gold), "--predictions", str(preds))
        assert got["num_correct"] == want["num_correct"], name
        assert got["signature"] == want["signature"].replace(
            "|missing:error|", "|missing:error|preds:oqaeval|")
        scored += 1
    assert scored == 11


def test_a_list_prediction_is_one_clear_line(capsys):
    path = shared_file("data", "openqa-eval", "model_outputs",
                       "NQ301_text-davinci-003_fewshot-n64.jsonl")
    assert main(["eval", "nq-open", "--gold", str(path), "--predictions", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"nqkit: error: {path}:") and err.count("\n") == 1
    assert "'prediction' must be a string, found list" in err


# ------------------------------------------------------------------ overlap score

def test_overlap_score_reads_a_samples_file(lm_eval_runs, capsys):
    path = lm_eval_runs["zeroshot"]
    train = shared_file("data", "dpr", "nq-dev.qa.tsv")
    assert main(["overlap", "score", "--gold", str(path), "--train", str(train),
                 "--predictions", str(path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "preds:lm-eval-samples" in out["signature"]


# ------------------------------------------------------------------------ the shapes

def test_an_unknown_shape_is_one_clear_line(tmp_path, capsys):
    gold = _lines(tmp_path / "gold.jsonl", [{"question": "q", "answer": ["a"]}])
    bad = _lines(tmp_path / "run.jsonl", [{"id": 1, "text": "a"}, {"id": 2, "text": "b"}])
    assert main(["eval", "nq-open", "--gold", str(gold), "--predictions", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == (f"nqkit: error: {bad}:1: an object with keys id, text is no "
                   "predictions shape nqkit reads — give JSON lines {\"question\", "
                   "\"prediction\"}, an object {question: prediction}, "
                   "lm-evaluation-harness --log_samples output or FlashRAG's "
                   "intermediate_data.json\n")


def test_a_broken_sample_names_its_line(tmp_path, capsys):
    rows = _rows("NQ301_text-davinci-003_zeroshot.jsonl")[:3]
    path = write_lm_eval_samples(tmp_path, rows)
    samples = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    samples[1]["resps"] = []
    _lines(path, samples)
    assert main(["eval", "nq-open", "--gold", str(path), "--predictions", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"nqkit: error: {path}:2: 'resps' must hold the generation")
    assert err.count("\n") == 1


# ---------------------------------------------------------------------- FIFO, read once

def _fifo(tmp_path: Path, data: bytes, name: str) -> tuple[Path, threading.Thread]:
    fifo = tmp_path / name
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return fifo, t


@pytest.mark.parametrize("shape", ["lines", "object", "list", "lm-eval-samples",
                                   "flashrag", "oqaeval"])
def test_every_shape_is_read_once_from_a_fifo(tmp_path, capsys, shape):
    """``--predictions <(cat preds)``: the file is read once, shape and records from the
    same bytes (the shape was looked at on a first opening, which lost the bytes)."""
    rows = _rows("NQ301_text-davinci-003_zeroshot.jsonl")
    gold = _lines(tmp_path / "gold.jsonl", [{"question": q, "answer": a} for q, a, _ in rows])
    plain = [{"question": q, "prediction": p} for q, _, p in rows]
    if shape == "lm-eval-samples":
        data = write_lm_eval_samples(tmp_path / "lm", rows, cut=False).read_bytes()
    elif shape == "flashrag":
        data = write_flashrag_data(tmp_path / "fr.json", rows).read_bytes()
    elif shape == "oqaeval":
        data = "".join(json.dumps({"question": q, "answer": a, "prediction": p}) + "\n"
                       for q, a, p in rows).encode()
    elif shape == "object":
        data = json.dumps({q: p for q, _, p in rows}, indent=1).encode()
    elif shape == "list":
        data = json.dumps(plain).encode()
    else:
        data = "".join(json.dumps(o) + "\n" for o in plain).encode()
    want = _eval(capsys, "--gold", str(gold), "--predictions",
                 str(_lines(tmp_path / "plain.jsonl", plain)))
    fifo, writer = _fifo(tmp_path, data, "preds")
    got = _eval(capsys, "--gold", str(gold), "--predictions", str(fifo))
    writer.join(5)
    assert got["num_correct"] == want["num_correct"] and got["num_total"] == 301
    assert 0 < got["num_correct"] < 301


def test_an_lm_eval_run_is_compared_with_plain_lines(lm_eval_runs, tmp_path, capsys):
    """The shape a file was read from is where its predictions came from, not a setting:
    an lm-eval run compares with another system's plain lines under one rule."""
    a = lm_eval_runs["zeroshot"]
    samples = [json.loads(x) for x in lm_eval_runs["fewshot-n64"].read_text(
        encoding="utf-8").splitlines()]
    b = _lines(tmp_path / "b.jsonl", [{"question": s["doc"]["question"],
                                       "prediction": s["resps"][0][0]} for s in samples])
    common = ["--convention", "lm-eval-v4", "--resamples", "200", "--trials", "500",
              "--format", "json"]
    assert main(["compare", "nq-open", "--gold", str(a), str(a), str(b), *common]) == 0
    mixed = json.loads(capsys.readouterr().out)
    assert main(["compare", "nq-open", "--gold", str(a), str(a),
                 str(lm_eval_runs["fewshot-n64"]), *common]) == 0
    assert mixed["metrics"] == json.loads(capsys.readouterr().out)["metrics"]
