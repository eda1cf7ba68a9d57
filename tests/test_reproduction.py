"""``eval nq-open --published NUMBER``: does a run reproduce a paper's number, and if not,
which convention or extraction would (issue 31 §5). Expected values come from the
formulas in nqkit.analysis.reproduction's docstring, computed here by hand, and from
scoring the same files under each convention separately."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from nqkit.analysis.reproduction import false_alarm_rate, parse_published
from nqkit.cli import main
from nqkit.errors import InputError

from conftest import shared_file


@pytest.mark.parametrize(("text", "value", "half", "percent"), [
    ("44.1", 0.441, 0.0005, True), ("44", 0.44, 0.005, True), ("44.12", 0.4412, 0.00005, True),
    ("0.441", 0.441, 0.0005, False), ("1", 1.0, 0.5, False)])
def test_a_published_number_is_read_as_printed(text, value, half, percent) -> None:
    p = parse_published(text)
    assert p.value == pytest.approx(value) and p.half_unit == pytest.approx(half)
    assert p.percent is percent


@pytest.mark.parametrize("text", ["abc", "-1", "101", "1e1", "nan", ""])
def test_a_number_that_is_no_exact_match_is_refused(text) -> None:
    with pytest.raises(InputError, match="expected an exact match as printed"):
        parse_published(text)


def test_rounding_decides_equal() -> None:
    assert parse_published("46.8").rounds_to(1690 / 3610)  # 46.814...
    assert not parse_published("46.9").rounds_to(1690 / 3610)
    assert parse_published("0.468").rounds_to(1690 / 3610)


def _fid(tmp_path):
    """The released FiD answers on NQ-open dev, as official prediction lines."""
    preds = tmp_path / "fid.jsonl"
    with preds.open("w", encoding="utf-8") as out:
        for line in shared_file("data", "openqa-eval", "model_outputs",
                                "NQ_FiD.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            out.write(json.dumps({"question": row["question"],
                                  "prediction": row["prediction"]}) + "\n")
    return str(shared_file("data", "nq-open", "NQ-open.dev.jsonl")), str(preds)


def _correct(capsys, gold, preds, convention) -> int:
    assert main(["eval", "nq-open", "--gold", gold, "--predictions", preds,
                 "--convention", convention, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["num_correct"]


def test_a_gap_is_attributed_to_the_convention_that_meets_the_number(tmp_path, capsys):
    gold, preds = _fid(tmp_path)
    official, lm_eval = (_correct(capsys, gold, preds, c) for c in ("orqa", "lm-eval-v4"))
    published = f"{100 * lm_eval / 3610:.1f}"  # what a paper scored with lm-eval prints
    assert main(["eval", "nq-open", "--gold", gold, "--predictions", preds,
                 "--published", published, "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)["reproduction"]
    p = official / 3610
    band = 1.959963984540054 * math.sqrt(2 * p * (1 - p) / 3610) + 0.0005
    assert rep["noise_band"] == pytest.approx(band)
    assert rep["delta"] == pytest.approx(p - float(published) / 100)
    assert rep["interval"] == pytest.approx([rep["delta"] - band, rep["delta"] + band])
    assert rep["verdict"] == "differs"  # 46.8 against 42.5: outside 2.4 points
    rows = {(r["convention"], r["extract"]): r for r in rep["rows"]}
    assert rows["orqa", "none"]["num_correct"] == official
    assert rows["lm-eval-v4", "none"]["num_correct"] == lm_eval
    assert rows["lm-eval-v4", "none"]["verdict"] == "equal"
    assert rep["summary"].startswith("differs: under orqa the run is +")
    assert "the published number is met under lm-eval-v4 (" in rep["summary"]
    # the table says the same, the user's own rule first
    assert main(["eval", "nq-open", "--gold", gold, "--predictions", preds,
                 "--published", published]) == 0
    lines = [" ".join(x.split()) for x in capsys.readouterr().out.splitlines()]
    at = next(i for i, x in enumerate(lines) if x.startswith("convention extract"))
    assert lines[at + 2].startswith(f"orqa none {100 * p:.2f}")
    assert lines[at + 2].endswith("differs (yours)")


def test_the_official_number_is_reproduced(tmp_path, capsys):
    gold, preds = _fid(tmp_path)
    official = _correct(capsys, gold, preds, "orqa")
    for published, verdict in ((f"{100 * official / 3610:.1f}", "equal"),
                               (f"{100 * official / 3610 + 1:.1f}", "within noise")):
        assert main(["eval", "nq-open", "--gold", gold, "--predictions", preds,
                     "--published", published, "--format", "json"]) == 0
        rep = json.loads(capsys.readouterr().out)["reproduction"]
        assert rep["verdict"] == verdict, published


def test_regex_gold_has_nothing_to_explain_with(tmp_path, capsys):
    gold = tmp_path / "trec.jsonl"
    gold.write_text(json.dumps({"question": "q", "answer": ["Par.s"]}) + "\n", encoding="utf-8")
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"question": "q", "prediction": "Paris"}) + "\n",
                     encoding="utf-8")
    assert main(["eval", "nq-open", "--gold", str(gold), "--predictions", str(preds),
                 "--regex", "--published", "50"]) == 2
    assert "regular-expression gold has one rule only" in capsys.readouterr().err


def test_the_noise_band_is_calibrated_by_simulation():
    """Two runs of one system fall outside the band about 5% of the time when every
    question has the same chance (the worst case the band is built for) and far less when
    questions differ in difficulty as they do (the chances of 10 released systems); the
    figures are those of docs/nq-open-ambigqa.md."""
    flat = false_alarm_rate(np.full(3610, 0.486), trials=4000, seed=0)
    assert 0.035 <= flat <= 0.06
    gold = {json.loads(x)["question"]: json.loads(x)["answer"] for x in shared_file(
        "data", "nq-open", "NQ-open.dev.jsonl").read_text(encoding="utf-8").splitlines()}
    from nqkit.conventions import get_convention

    orqa = get_convention("orqa")
    hits = np.zeros(len(gold))
    position = {q: i for i, q in enumerate(gold)}
    systems = sorted(shared_file("data", "openqa-eval", "model_outputs").glob("NQ_*.jsonl"))
    for path in systems:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            p = row["prediction"]
            p = p if isinstance(p, str) else ", ".join(p)
            hits[position[row["question"]]] += orqa.match(p, gold[row["question"]]) is not None
    assert len(systems) == 10
    real = false_alarm_rate(hits / len(systems), trials=4000, seed=0)
    assert real < 0.01
