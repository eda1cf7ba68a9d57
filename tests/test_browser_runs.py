"""The browser's retrieval runs (:mod:`nqkit.browser.run_model`): what it shows against
``nqkit eval retrieval`` run as a command, against plain loops over the files, and by hand.

The real runs are BM25 runs over the 3,349 real passages for 200 NQ-open dev questions,
made by ``nqkit index build`` / ``nqkit retrieve`` (the session fixture
``real_bm25_runs`` of conftest.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from nqkit.browser.render import mark_spans
from nqkit.browser.run_model import RetrievalRun, load_run, rank_buckets
from nqkit.cli import main
from nqkit.errors import InputError
from nqkit.text.dpr_tokenize import (
    TokenOffsets,
    answer_char_spans,
    has_answer,
    simple_token_offsets,
    simple_tokenize,
    tokenize_answer,
)


def _eval_table(capsys: pytest.CaptureFixture[str], args: list[str]) -> list[str]:
    capsys.readouterr()
    assert main(["eval", "retrieval", *args]) == 0
    return capsys.readouterr().out.splitlines()


def _runs(r: dict[str, Path]) -> dict[str, dict[str, Any]]:
    """The inputs of each real run, as load_run's keywords."""
    trec = {"gold": str(r["qa"]), "passages": str(r["passages"])}
    return {
        "json": {"predictions": r["json"], "gold": str(r["qa"])},
        "json-no-gold": {"predictions": r["json"]},
        "trec-qrels": {"predictions": r["trec"], **trec, "qrels": str(r["qrels"])},
        "trec2-gold-first": {"predictions": r["trec2"], **trec, "qrels": str(r["qrels"]),
                             "recall": "gold-passage", "topk": [1, 3, 10, 100]},
    }


@pytest.fixture(scope="module")
def loaded(real_bm25_runs: dict[str, Path]) -> dict[str, RetrievalRun]:
    return {name: load_run(**kw) for name, kw in _runs(real_bm25_runs).items()}


@pytest.mark.parametrize("name", ["json", "json-no-gold", "trec-qrels", "trec2-gold-first"])
def test_summary_is_the_eval_table(loaded: dict[str, RetrievalRun], name: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The numbers, their formatting and the signature are those the command prints for
    the same inputs (run with the command line the browser names)."""
    import shlex

    run = loaded[name]
    lines = _eval_table(capsys, shlex.split(run.eval_command)[3:])
    headers, rows = run.summary_table()
    assert lines[-1] == f"signature: {run.signature}"
    table_rows = [ln.split() for ln in lines if re.match(r"top-\d", ln)]
    assert table_rows == [list(row) for row in rows]
    assert len(rows) == len(run.ks) and rows[0][0] == f"top-{run.ks[0]}"
    header_line = next(ln for ln in lines if ln.startswith("top-k"))
    assert header_line.split() == " ".join(headers).split()


def test_per_question_values_are_the_per_item_records(
        loaded: dict[str, RetrievalRun], real_bm25_runs: dict[str, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    run = loaded["trec-qrels"]
    items = tmp_path / "items.jsonl"
    _eval_table(capsys, [*run.eval_args, "--per-item", str(items)])
    records = [json.loads(ln) for ln in items.read_text(encoding="utf-8").splitlines()]
    assert [(r["question"], r["first_hit"], r["first_gold"], r["first_hit_kind"])
            for r in records] == [(q.question, q.first_hit, q.first_gold, q.hit_kind)
                                  for q in run.questions]


def test_passages_scores_and_gold_marks_against_the_files(
        loaded: dict[str, RetrievalRun], real_bm25_runs: dict[str, Path]) -> None:
    """Ranked passages and scores as the DPR results file lists them; gold passages as the
    qrels file lists them (read here with plain Python)."""
    raw = json.loads(real_bm25_runs["json"].read_text(encoding="utf-8"))
    run = loaded["json"]
    assert len(run.questions) == len(raw) == 200
    for q, r in zip(run.questions, raw, strict=True):
        views = run.passages_of(q)
        assert [(v.passage.id, v.passage.title, v.passage.text, v.score) for v in views] == \
            [(c["id"], c["title"], c["text"], c["score"]) for c in r["ctxs"]]
        assert all(v.is_gold is None for v in views)  # no qrels: nothing is known
    # each distinct passage is kept once, shared by the questions that retrieved it
    assert len(run.passages) == len({c["id"] for r in raw for c in r["ctxs"]}) < 3349
    gold: dict[int, set[str]] = {}
    for line in real_bm25_runs["qrels"].read_text().splitlines():
        qid, _, pid, rel = line.split()
        if int(rel) > 0:
            gold.setdefault(int(qid), set()).add(pid)
    trec = loaded["trec-qrels"]
    marked = 0
    for i, q in enumerate(trec.questions):
        assert q.gold == (frozenset(gold[i]) if i in gold else None)
        views = trec.passages_of(q)
        marks = [v.is_gold for v in views]
        if i not in gold:
            assert marks == [None] * len(views)
        else:
            assert marks == [v.passage.id in gold[i] for v in views]
            ranks = [v.rank for v in views if v.is_gold]
            assert q.first_gold == (ranks[0] if ranks else None)
            marked += len(ranks)
    assert marked > 100


def test_highlights_iff_has_answer_on_every_real_passage(
        loaded: dict[str, RetrievalRun]) -> None:
    """Over every ranked passage of every real run: the passage has highlight spans
    exactly when DPR's has_answer holds for it (each text tokenized once here, with and
    without offsets: the same tokens); each span holds an answer's tokens; the first
    passage with spans (within the largest k) is the command's first hit."""
    tokens: dict[str, tuple[list[str], TokenOffsets]] = {}
    checked = with_spans = 0
    for run in (loaded["json"], loaded["trec2-gold-first"]):
        for q in run.questions:
            answers = [tokenize_answer(a) for a in q.answers]
            first = None
            for v in run.passages_of(q):
                text = v.passage.text
                if text not in tokens:
                    tokens[text] = (simple_tokenize(text), simple_token_offsets(text))
                    assert tokens[text][1][0] == tokens[text][0]
                toks, offsets = tokens[text]
                has = has_answer(answers, toks)
                spans = answer_char_spans(answers, text, offsets=offsets)
                assert v.has_answer == has == bool(spans), (q.question, v.rank)
                assert list(v.spans) == spans
                for a, b in spans:
                    words = simple_tokenize(text[a:b])
                    assert any(words[i:i + len(ans)] == list(ans) for ans in answers if ans
                               for i in range(len(words))), (text[a:b], q.answers)
                if has and first is None and v.counted:
                    first = v.rank
                checked += 1
                with_spans += has
            assert q.first_hit == first
    assert checked > 39_000 and with_spans > 500


def test_spans_by_hand(tmp_path: Path) -> None:
    text = "Paris is the capital of France. PARIS, Texas; Ro\u0308ntgen and Röntgen."
    results = [{"question": "capital of france?", "answers": ["Paris", "röntgen"],
                "ctxs": [{"id": "1", "title": "<b>T</b>", "text": text, "score": 2.5},
                         {"id": "2", "title": "x", "text": "Parisian sparis", "score": 1}]}]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    run = load_run(path, topk=[1, 2])
    first, second = run.passages_of(run.questions[0])
    # "Paris" at 0, "PARIS" at 32, "Ro" + combining diaeresis + "ntgen" (8 characters)
    # at 46, the precomposed "Röntgen" at 59
    assert first.spans == ((0, 5), (32, 37), (46, 54), (59, 66))
    assert [text[a:b] for a, b in first.spans] == ["Paris", "PARIS", "Ro\u0308ntgen",
                                                    "Röntgen"]
    assert second.spans == () and not second.has_answer
    assert run.questions[0].first_hit == 1
    assert mark_spans(text[:12], first.spans) == '<mark class="hl">Paris</mark> is the'


def test_mark_spans_escapes_everything_but_its_marks() -> None:
    text = '<script>alert(1)</script> & "x" <mark>y</mark>'
    out = mark_spans(text, [(8, 13), (26, 27)])
    assert out == ('&lt;script&gt;<mark class="hl">alert</mark>(1)&lt;/script&gt; '
                   '<mark class="hl">&amp;</mark> &quot;x&quot; &lt;mark&gt;y&lt;/mark&gt;')
    with pytest.raises(ValueError, match="not a mark class"):
        mark_spans("x", [], cls='x" onclick="')


def test_rank_buckets() -> None:
    assert rank_buckets([100, 1, 5, 20]) == [("1", 1, 1), ("2-5", 2, 5), ("6-20", 6, 20),
                                             ("21-100", 21, 100)]
    assert rank_buckets([3, 10]) == [("1-3", 1, 3), ("4-10", 4, 10)]


def test_bad_input_is_the_command_error(real_bm25_runs: dict[str, Path],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A TREC run without its corpus: the one-line error of ``nqkit eval retrieval``."""
    with pytest.raises(InputError) as e:
        load_run(real_bm25_runs["trec"], gold=str(real_bm25_runs["qa"]))
    assert main(["eval", "retrieval", "--predictions", str(real_bm25_runs["trec"]),
                 "--gold", str(real_bm25_runs["qa"])]) == 2
    assert e.value.message in capsys.readouterr().err
