"""Golden parity: every official NQ evaluation output is reproduced (all 20 keys, 1e-9)."""

from __future__ import annotations

import json
import math

import pytest

from nqkit.cli import main
from nqkit.formats.nq_gold import read_nq_gold
from nqkit.formats.nq_predictions import read_nq_predictions
from nqkit.metrics.nq import evaluate_nq

from conftest import SHARED, shared_file

CASES = [
    (folder, name)
    for folder in ("nq-eval", "nq-eval-yesno")
    for name in ("all_null", "annotator0", "annotator1", "annotator2", "annotator3",
                 "annotator4", "byte_only_ties", "dup_short_spans", "mixed0", "mixed1",
                 "mixed2", "mixed3", "random0", "random1", "random2", "token_only_ties",
                 "wrong_bytes_right_tokens")
]


def gold_path(folder: str):
    if folder == "nq-eval":
        return shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    return shared_file("golden", "nq-eval-yesno", "gold.jsonl.gz")


def test_every_golden_file_is_covered():
    found = {(p.parent.name, p.name.split(".")[0])
             for d in ("nq-eval", "nq-eval-yesno")
             for p in (SHARED / "golden" / d).glob("*.predictions.json")}
    if not found:
        shared_file("golden", "nq-eval")  # skips or fails with the reason
    assert found == set(CASES)


@pytest.mark.parametrize(("folder", "name"), CASES)
def test_library_matches_official(folder, name):
    official = json.loads(shared_file("golden", folder, f"{name}.official.json").read_text())
    gold = read_nq_gold(gold_path(folder), workers=1)
    preds = read_nq_predictions(shared_file("golden", folder, f"{name}.predictions.json"))
    got = evaluate_nq(gold, preds).metrics
    assert set(got) == set(official)
    for key, value in official.items():
        assert math.isclose(got[key], value, rel_tol=0, abs_tol=1e-9), key


@pytest.mark.parametrize(("folder", "name"), [("nq-eval", "mixed0"), ("nq-eval-yesno", "mixed2")])
def test_cli_json_is_a_drop_in(folder, name, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("NQKIT_HOME", str(tmp_path))
    official = json.loads(shared_file("golden", folder, f"{name}.official.json").read_text())
    code = main(["eval", "nq", "--gold", str(gold_path(folder)), "--predictions",
                 str(shared_file("golden", folder, f"{name}.predictions.json")),
                 "--format", "json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["signature"].startswith("nq|long-thr:2|short-thr:2|missing:error|v")
    for key, value in official.items():
        assert math.isclose(out[key], value, abs_tol=1e-9), key


def test_simplified_gold_scores_token_predictions_like_original(tmp_path):
    """Simplified-format gold (tokens only) gives the same numbers for token predictions."""
    original = read_nq_gold(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz"), workers=1)
    simplified = read_nq_gold(shared_file("data", "nq", "simplified-nq-dev-sample10.jsonl"),
                              workers=1)
    preds = read_nq_predictions(
        shared_file("golden", "nq-eval", "token_only_ties.predictions.json"))
    assert evaluate_nq(simplified, preds).metrics == evaluate_nq(original, preds).metrics
