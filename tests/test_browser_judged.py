"""``nqkit browse --task nq-open --judgments TSV [--verdicts FILE]`` (issue 32, part 2):
each judged (question, prediction) pair shows its human verdict beside the exact match and
a judge's verdict, with filters to the judged pairs and to the disagreements.

Expected values are computed here from the released files themselves, with :mod:`csv`
and :mod:`json`, not with nqkit's readers or join: the judged pairs are the rows of
``NQ301_human.tsv`` whose question (lower-cased, spaces collapsed, a final ``?`` aside)
and model answer (as written) are a question of ``NQ_DPR.jsonl`` and its prediction; the
exact match is re-derived with ORQA's normalization written out below (Lee et al. 2019,
the rule ``nqkit eval nq-open`` applies by default). On these files that simple key finds
the same pairs as oqaeval's tokenizer key; the join itself is checked against the audit's
in ``tests/test_judge_audit.py``.
"""

from __future__ import annotations

import csv
import hashlib
import html
import json
import re
import string
import unicodedata
from pathlib import Path

import pytest

from conftest import require, shared_file

require("fastapi")
require("httpx")

from fastapi.testclient import TestClient

from nqkit.browser.open_app import create_open_app
from nqkit.browser.open_model import OpenQuery, OpenView

DATA = ("data", "openqa-eval")
BASE = "http://127.0.0.1:8080"


def _key(question: str) -> str:
    return " ".join(question.lower().split()).rstrip("?").rstrip()


def _tsv(name: str) -> dict[tuple[str, str], dict[str, str]]:
    """The first row of each (question key, answer) pair with a Yes/No verdict."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    with shared_file(*DATA, name).open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["Acceptable?"].strip().lower() in ("yes", "no"):
                out.setdefault((_key(row["Question"]), row["Model answer"]), row)
    return out


def _orqa_normalize(s: str) -> str:
    s = unicodedata.normalize("NFD", s).lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def _yes(row: dict[str, str]) -> bool:
    return row["Acceptable?"].strip().lower() == "yes"


@pytest.fixture(scope="module")
def system() -> Path:
    return shared_file(*DATA, "model_outputs", "NQ_DPR.jsonl")


@pytest.fixture(scope="module")
def expected(system: Path) -> dict[str, dict[str, object]]:
    """Per judged question (its 0-based line, the view's key): the human row, whether the
    exact match credits the prediction, and GPT-4's verdict (None: none)."""
    human, gpt4 = _tsv("NQ301_human.tsv"), _tsv("NQ301_gpt-4.tsv")
    out = {}
    for i, line in enumerate(system.read_text(encoding="utf-8").splitlines()):
        obj = json.loads(line)
        pair = (_key(obj["question"]), obj["prediction"])
        if pair in human:
            em = _orqa_normalize(obj["prediction"]) in {_orqa_normalize(a)
                                                         for a in obj["answer"]}
            out[str(i)] = {"row": human[pair], "em": em,
                           "judge": _yes(gpt4[pair]) if pair in gpt4 else None}
    return out


@pytest.fixture(scope="module")
def view(system: Path) -> OpenView:
    from nqkit.browser.serve import load_open

    v = load_open("nq-open", system, [str(system)],
                  judgments=str(shared_file(*DATA, "NQ301_human.tsv")),
                  verdicts=str(shared_file(*DATA, "NQ301_gpt-4.tsv")))
    assert isinstance(v, OpenView)
    return v


def _count(view: OpenView, **filters: str) -> int:
    return len(view.select(OpenQuery(filters=filters)))


def test_the_judged_pairs_and_their_verdicts_are_the_tsv_rows(view: OpenView,
                                                               expected: dict) -> None:
    assert view.judged is not None
    assert 50 < len(expected) < len(view.rows)  # most questions of the 3,610 are not judged
    assert sorted(view.judged) == sorted(expected)
    for key, e in expected.items():
        p, row = view.judged[key], e["row"]
        assert p.human == _yes(row), key
        assert p.votes == tuple((c, row[c].strip()) for c in
                                ("annotator1", "annotator2", "annotator3")), key
        assert p.exact_match == e["em"], key
        assert p.judge == e["judge"], key
    # the view's own verdict column says the same exact match
    assert all((view.by_key[k].tags["verdict"] == "correct") == e["em"]
               for k, e in expected.items())


def test_filters_count_the_judged_pairs_and_the_disagreements(view: OpenView,
                                                              expected: dict) -> None:
    n = len(expected)
    human_em = sum(_yes(e["row"]) != e["em"] for e in expected.values())
    human_judge = sum(e["judge"] is not None and _yes(e["row"]) != e["judge"]
                      for e in expected.values())
    silent = sum(e["judge"] is None for e in expected.values())
    assert human_em > 0 and human_judge > 0  # both filters have something to find
    assert _count(view, judged="judged") == n
    assert _count(view, judged="not judged") == len(view.rows) - n
    assert _count(view, human="not judged") == len(view.rows) - n
    assert _count(view, human="acceptable") == sum(_yes(e["row"]) for e in expected.values())
    assert _count(view, human_em="disagree") == human_em
    assert _count(view, human_em="agree") == n - human_em
    assert _count(view, human_judge="disagree") == human_judge
    assert _count(view, human_judge="no verdict") == silent
    assert _count(view, human_em="disagree", human_judge="disagree") == sum(
        _yes(e["row"]) != e["em"] and e["judge"] is not None and _yes(e["row"]) != e["judge"]
        for e in expected.values())
    title, _, rows = view.summary.tables[-1]
    assert title == "human judgments of these predictions"
    table = dict(rows)
    assert table["judged pairs"] == f"{n}/{len(view.rows):,}"
    assert table["human ≠ exact match"] == f"{human_em}/{n}"
    assert table["human ≠ judge"] == f"{human_judge}/{n - silent}"


def test_a_known_pair_renders_with_its_verdicts_and_provenance(view: OpenView,
                                                               expected: dict) -> None:
    # a real row of NQ301_human.tsv where the people accept what exact match rejects
    key, e = next((k, e) for k, e in expected.items() if _yes(e["row"]) and not e["em"])
    row = e["row"]
    client = TestClient(create_open_app(view), base_url=BASE)
    page = client.get(f"/qid/{key}").text
    card = page[page.index('<section class="card judged">'):]
    card = card[:card.index("</section>")]
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", card)).split())
    assert "human" in text and "acceptable" in text and "not acceptable" not in \
        text.split("exact match")[0]
    for c in ("annotator1", "annotator2", "annotator3"):
        assert f"{c}: {row[c].strip() or '—'}" in text
    assert '<tr class="j-em disagree">' in card and "≠ disagrees" in card
    judge = "acceptable" if e["judge"] else "not acceptable"
    assert f'<span class="oc oc-{judge.replace(" ", "-")}">{judge}</span>' in \
        card[card.index('class="j-judge'):]
    # an unjudged question says so, never "not acceptable"
    other = next(r.key for r in view.rows if r.key not in expected
                 and r.tags["verdict"] != "no prediction")
    page = client.get(f"/qid/{other}").text
    assert "oc-not-judged" in page and "oc-not-acceptable" not in page
    # the index: the filter keeps the disagreements, the fingerprints are shown
    index = client.get("/?human_em=disagree").text
    n = sum(_yes(x["row"]) != x["em"] for x in expected.values())
    assert f'<b id="total">{n}</b>' in index
    assert f'data-key="{key}"' in index and "≠ EM" in index
    for name in ("NQ301_human.tsv", "NQ301_gpt-4.tsv"):
        digest = hashlib.sha256(shared_file(*DATA, name).read_bytes()).hexdigest()[:12]
        assert f"{name} (sha256 {digest})" in index


def _browse(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    from nqkit.cli import main

    capsys.readouterr()
    code = main(["browse", "--port", "0", *argv])
    return code, capsys.readouterr().err


def test_refusals_are_one_line(system: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    gpt4 = str(shared_file(*DATA, "NQ301_gpt-4.tsv"))
    human = str(shared_file(*DATA, "NQ301_human.tsv"))
    code, err = _browse(capsys, "--task", "nq-open", "--gold", str(system), "--predictions",
                        str(system), "--verdicts", gpt4)
    assert code == 2 and "--verdicts needs --judgments" in err and err.count("\n") == 1
    code, err = _browse(capsys, "--gold", str(system), "--judgments", human)
    assert code == 2 and "--judgments is for --task nq-open, not nq" in err
    other = tmp_path / "other.tsv"
    other.write_text("Question\tModel answer\tAcceptable?\nwho am i\tnobody\tYes\n",
                     encoding="utf-8")
    code, err = _browse(capsys, "--task", "nq-open", "--gold", str(system), "--predictions",
                        str(system), "--judgments", str(other))
    assert code == 2 and err.count("\n") == 1
    assert "other.tsv: none of the 1 judged (question, answer) pairs" in err


def test_annotator_votes_are_kept_as_written_and_never_scored(tmp_path: Path) -> None:
    from nqkit.formats.judgments import read_judgments

    with_votes = tmp_path / "votes.tsv"
    with_votes.write_text("Question\tModel answer\tAcceptable?\tannotator1\tAnnotator2\n"
                          "q\ta\tYes\t No \t\n", encoding="utf-8")
    (j,) = read_judgments(with_votes).judgments
    assert (j.acceptable, j.votes) == (True, (("annotator1", "No"), ("Annotator2", "")))
    plain = tmp_path / "plain.tsv"
    plain.write_text("Question\tModel answer\tAcceptable?\nq\ta\tNo\n", encoding="utf-8")
    (j,) = read_judgments(plain).judgments
    assert (j.acceptable, j.votes) == (False, ())
