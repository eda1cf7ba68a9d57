"""``-`` is standard input where a file is read and standard output where one is written."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import this_tree_env


def nqkit(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nqkit", *args], input=stdin,
                          capture_output=True, text=True, env=this_tree_env(), timeout=120)


def test_predictions_from_stdin_and_per_item_to_stdout(tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"question": "q1", "answer": ["Paris"]}) + "\n"
                    + json.dumps({"question": "q2", "answer": ["Rome"]}) + "\n",
                    encoding="utf-8")
    # JSON lines on stdin; the reader looks at the first line before parsing: both work
    preds = (json.dumps({"question": "q1", "prediction": "paris"}) + "\n"
             + json.dumps({"question": "q2", "prediction": "Berlin"}) + "\n")
    p = nqkit("eval", "nq-open", "--gold", str(gold), "--predictions", "-", "--format",
              "jsonl", stdin=preds)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert [(r["question"], r["correct"]) for r in rows] == [("q1", True), ("q2", False)]
    # the mapping form {question: answer} from stdin too, and --per-item to stdout
    p = nqkit("eval", "nq-open", "--gold", str(gold), "--predictions", "-", "--per-item", "-",
              "--format", "json", stdin=json.dumps({"q1": "Rome", "q2": "Rome"}))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert [json.loads(x)["correct"] for x in lines[:2]] == [False, True]
    assert json.loads("\n".join(lines[2:]))["accuracy"] == 0.5
    assert not list(tmp_path.glob("-*")) and not (tmp_path / "-").exists()
