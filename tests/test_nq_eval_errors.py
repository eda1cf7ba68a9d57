"""Bad input to ``nqkit eval nq``: one clear line, exit code 2, no partial output.

Each case pins the message: where (file and line, or prediction and example id), what was
found, and how to fix it.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from nqkit.cli import main
from nqkit.data.toy import TOY_PATH

TOY_IDS = [json.loads(line)["example_id"] for line in TOY_PATH.read_text().splitlines()]


def pred(ex_id, **over):
    p = {"example_id": ex_id,
         "long_answer": {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1},
         "long_answer_score": 1.0, "short_answers": [], "short_answers_score": 0.0,
         "yes_no_answer": "NONE"}
    p.update(over)
    return p


def write_preds(tmp_path: Path, items, name="preds.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"predictions": items}))
    return path


def run_eval(capsys, gold, preds, *extra):
    code = main(["eval", "nq", "--gold", str(gold), "--predictions", str(preds), "--no-gold-cache",
                 *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(code, err, *fragments):
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("nqkit: error: ")
    assert "Traceback" not in err
    for f in fragments:
        assert f in lines[0], (f, lines[0])


@pytest.fixture
def good_preds(tmp_path):
    return write_preds(tmp_path, [pred(i) for i in TOY_IDS])


def test_valid_input_scores(capsys, good_preds):
    code, out, _ = run_eval(capsys, TOY_PATH, good_preds)
    assert code == 0 and "long answer" in out and "signature: nq|" in out


def test_truncated_gzip(capsys, tmp_path, good_preds):
    data = gzip.compress(TOY_PATH.read_bytes())
    bad = tmp_path / "dev.jsonl.gz"
    bad.write_bytes(data[: len(data) // 2])
    code, _, err = run_eval(capsys, bad, good_preds)
    assert_one_line_error(code, err, "dev.jsonl.gz:", "truncated or corrupt",
                          "download or copy the file again")


def test_malformed_json_line(capsys, tmp_path, good_preds):
    lines = TOY_PATH.read_text().splitlines()
    lines[2] = lines[2][:-10]
    bad = tmp_path / "dev.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    code, _, err = run_eval(capsys, bad, good_preds)
    assert_one_line_error(code, err, "dev.jsonl:3: malformed JSON",
                          "each line must be one complete JSON object")


def test_missing_key_in_gold(capsys, tmp_path, good_preds):
    lines = TOY_PATH.read_text().splitlines()
    d = json.loads(lines[1])
    del d["annotations"]
    lines[1] = json.dumps(d)
    bad = tmp_path / "dev.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    code, _, err = run_eval(capsys, bad, good_preds)
    assert_one_line_error(code, err, "dev.jsonl:2: missing key 'annotations' in example")


def test_start_not_before_end(capsys, tmp_path):
    span = {"start_byte": 50, "end_byte": 50, "start_token": -1, "end_token": -1}
    preds = write_preds(tmp_path, [pred(i, long_answer=span) for i in TOY_IDS])
    code, _, err = run_eval(capsys, TOY_PATH, preds)
    assert_one_line_error(code, err, "preds.json: predictions[0] (example_id 101)",
                          "long_answer has start_byte >= end_byte (50 >= 50)",
                          "end must exceed start")


def test_half_null_span(capsys, tmp_path):
    span = {"start_byte": -1, "end_byte": -1, "start_token": 3, "end_token": -1}
    items = [pred(i) for i in TOY_IDS]
    items[4] = pred(TOY_IDS[4], short_answers=[span])
    code, _, err = run_eval(capsys, TOY_PATH, write_preds(tmp_path, items))
    assert_one_line_error(code, err, "predictions[4] (example_id 105)",
                          "short_answers[0] is half null (start_token=3, end_token=-1)",
                          "give both token offsets or set both to -1")


def test_yes_no_with_short_spans(capsys, tmp_path):
    span = {"start_byte": 10, "end_byte": 20, "start_token": 1, "end_token": 2}
    items = [pred(i) for i in TOY_IDS]
    items[2] = pred(TOY_IDS[2], short_answers=[span], yes_no_answer="YES")
    code, _, err = run_eval(capsys, TOY_PATH, write_preds(tmp_path, items))
    assert_one_line_error(code, err, "predictions[2] (example_id 103)",
                          "yes_no_answer YES is given together with short answer spans")


def test_invalid_yes_no(capsys, tmp_path):
    items = [pred(i) for i in TOY_IDS]
    items[0] = pred(TOY_IDS[0], yes_no_answer="MAYBE")
    code, _, err = run_eval(capsys, TOY_PATH, write_preds(tmp_path, items))
    assert_one_line_error(code, err, "yes_no_answer is 'MAYBE'", "use YES, NO or NONE")


def test_string_ids_where_gold_has_integers(capsys, tmp_path):
    preds = write_preds(tmp_path, [pred(str(i)) for i in TOY_IDS])
    code, _, err = run_eval(capsys, TOY_PATH, preds)
    assert_one_line_error(code, err, "example_id '101'",
                          "must be an integer as in the gold data, found str",
                          "(numbers, not strings)")


def test_duplicate_prediction_ids(capsys, tmp_path):
    preds = write_preds(tmp_path, [pred(i) for i in TOY_IDS] + [pred(TOY_IDS[3])])
    code, _, err = run_eval(capsys, TOY_PATH, preds)
    assert_one_line_error(code, err, f"predictions[{len(TOY_IDS)}] (example_id 104)",
                          "duplicate prediction for example_id 104",
                          "exactly one prediction per example")


def test_missing_score_key(capsys, tmp_path):
    items = [pred(i) for i in TOY_IDS]
    del items[1]["long_answer_score"]
    code, _, err = run_eval(capsys, TOY_PATH, write_preds(tmp_path, items))
    assert_one_line_error(code, err, "predictions[1] (example_id 102)",
                          "missing key 'long_answer_score'")


def test_wrong_score_type(capsys, tmp_path):
    items = [pred(i) for i in TOY_IDS]
    items[1]["short_answers_score"] = "high"
    code, _, err = run_eval(capsys, TOY_PATH, write_preds(tmp_path, items))
    assert_one_line_error(code, err, "short_answers_score must be a number, found 'high'")


def test_empty_gold_file(capsys, tmp_path, good_preds):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, _, err = run_eval(capsys, empty, good_preds)
    assert_one_line_error(code, err, "empty.jsonl", "holds no examples")


def test_empty_predictions_file(capsys, tmp_path):
    empty = tmp_path / "preds.json"
    empty.write_text("")
    code, _, err = run_eval(capsys, TOY_PATH, empty)
    assert_one_line_error(code, err, "preds.json: the predictions file is empty")


def test_empty_predictions_list(capsys, tmp_path):
    code, _, err = run_eval(capsys, TOY_PATH, write_preds(tmp_path, []))
    assert_one_line_error(code, err, "the predictions list is empty")


def test_malformed_predictions_json(capsys, tmp_path):
    bad = tmp_path / "preds.json"
    bad.write_text('{"predictions": [')
    code, _, err = run_eval(capsys, TOY_PATH, bad)
    assert_one_line_error(code, err, "preds.json: malformed JSON")


def test_wrong_predictions_shape(capsys, tmp_path):
    bad = tmp_path / "preds.json"
    bad.write_text('{"preds": []}')
    code, _, err = run_eval(capsys, TOY_PATH, bad)
    assert_one_line_error(code, err, """expected {"predictions": [...]}, found keys ['preds']""")


def test_missing_predictions_error_names_counts_and_ids(capsys, tmp_path):
    preds = write_preds(tmp_path, [pred(i) for i in TOY_IDS[:4]])
    code, _, err = run_eval(capsys, TOY_PATH, preds)
    assert_one_line_error(code, err, "3 of 7 gold examples have no prediction",
                          "e.g. 105, 106, 107", "--allow-missing")


def test_allow_missing_scores_null_and_reports_coverage(capsys, tmp_path):
    preds = write_preds(tmp_path, [pred(i) for i in TOY_IDS[:4]])
    code, out, _ = run_eval(capsys, TOY_PATH, preds, "--allow-missing")
    assert code == 0
    assert "(4/7 predicted)" in out
    assert "missing:null" in out
    code, out, _ = run_eval(capsys, TOY_PATH, preds, "--allow-missing", "--format", "json")
    assert json.loads(out)["coverage"] == {"predicted": 4, "total": 7}


def test_extra_prediction_ids(capsys, tmp_path):
    preds = write_preds(tmp_path, [pred(i) for i in TOY_IDS] + [pred(999)])
    code, _, err = run_eval(capsys, TOY_PATH, preds)
    assert_one_line_error(code, err, "1 predicted example ids are not in the gold data (e.g. 999)",
                          "--allow-extra")
    code, _, _ = run_eval(capsys, TOY_PATH, preds, "--allow-extra")
    assert code == 0
    # many extra ids: the count, and the first five (sorted as text) as examples
    many = write_preds(tmp_path, [pred(i) for i in TOY_IDS] + [pred(900 + k) for k in range(7)],
                       name="many.json")
    code, _, err = run_eval(capsys, TOY_PATH, many)
    assert_one_line_error(code, err, "7 predicted example ids are not in the gold data "
                          "(e.g. 900, 901, 902)")


def test_gold_glob_matching_nothing(capsys, tmp_path, good_preds):
    code, _, err = run_eval(capsys, tmp_path / "nq-dev-*.jsonl.gz", good_preds)
    assert_one_line_error(code, err, "the gold pattern matches no file")


def test_no_partial_pr_curve_on_error(capsys, tmp_path):
    items = [pred(i) for i in TOY_IDS]
    items[0]["yes_no_answer"] = "MAYBE"
    png = tmp_path / "pr.png"
    code, _, _ = run_eval(capsys, TOY_PATH, write_preds(tmp_path, items), "--pr-curve", str(png))
    assert code == 2
    assert list(tmp_path.iterdir()) == [tmp_path / "preds.json"]


def test_pr_curve_refuses_to_overwrite_an_input(capsys, good_preds):
    code, _, err = run_eval(capsys, TOY_PATH, good_preds, "--pr-curve", str(good_preds))
    assert_one_line_error(code, err, "the output path is one of the inputs")
    assert json.loads(good_preds.read_text())["predictions"]


def _two_shards(tmp_path: Path) -> list[Path]:
    """The toy gold as two shards (read by two worker processes on two or more cores)."""
    lines = TOY_PATH.read_text().splitlines(keepends=True)
    shards = [tmp_path / "g0.jsonl", tmp_path / "g1.jsonl"]
    shards[0].write_text("".join(lines[:3]))
    shards[1].write_text("".join(lines[3:]))
    return shards


def test_a_bad_line_in_a_later_shard_is_one_line(tmp_path, capsys):
    # the error crosses back from the worker process that read the shard (an InputError
    # that could not be unpickled broke the pool with a traceback)
    shards = _two_shards(tmp_path)
    bad = shards[1].read_text().splitlines(keepends=True)
    bad[1] = bad[1].replace('"annotations"', '"annotationz"', 1)
    shards[1].write_text("".join(bad))
    preds = write_preds(tmp_path, [pred(i) for i in TOY_IDS])
    code = main(["eval", "nq", "--gold", str(shards[0]), str(shards[1]), "--predictions",
                 str(preds), "--no-gold-cache"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (f"nqkit: error: {shards[1]}:2: missing key 'annotations' in example — "
                   "check the file is in the Natural Questions format\n")


def test_bad_predictions_stop_the_gold_workers_without_a_word(tmp_path):
    # The gold is read by worker processes while the predictions are read; when the
    # predictions fail, the workers are stopped mid-read (here: blocked on FIFOs nobody
    # writes) and must end silently, leaving the one error line alone on stderr.
    import os
    import subprocess
    import sys

    from conftest import this_tree_env

    fifos = [tmp_path / "g0.jsonl", tmp_path / "g1.jsonl"]
    for f in fifos:
        os.mkfifo(f)
    preds = tmp_path / "preds.json"
    preds.write_text("")
    out = subprocess.run([sys.executable, "-m", "nqkit", "eval", "nq", "--gold", *map(str, fifos),
                          "--predictions", str(preds)], capture_output=True, text=True,
                         timeout=600, env=this_tree_env(NQKIT_HOME=str(tmp_path / "home")))
    assert out.returncode == 2
    assert out.stderr == (f"nqkit: error: {preds}: the predictions file is empty — give a "
                          "non-empty JSON file\n")
