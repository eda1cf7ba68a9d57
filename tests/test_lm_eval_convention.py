"""``--convention lm-eval-v4`` equals lm-evaluation-harness's ``nq_open`` task (issue 31),
question by question, with lm-eval 0.4.13's own code as the oracle: its task file (the
stops, the filters, the metric's settings), its Hugging Face backend's stop-sequence cut
(``postprocess_generated_text``), its ``remove_whitespace`` and ``take_first`` filters,
its ``exact_match_hf_evaluate`` and the task's any-gold rule (``ConfigurableTask.
process_results``: a hit when the metric over the gold list is above 0).

lm-eval is a test oracle only (installed without its requirements: these functions need
numpy, sacrebleu and requests; docs/testing.md). The generations are every shape an LLM
prints, built from the 3,610 NQ-open dev questions' own gold answers and a released
system's predictions: whitespace, case, articles, punctuation, lists, sentences, answers
after a first line, a trailing NUL.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nqkit.cli import main
from nqkit.conventions import get_convention

from conftest import require, shared_file
from em_strings import llm_shapes

lm_eval = require("lm_eval")  # the oracle: README's test command installs lm-eval 0.4.13


def _task_config() -> dict:
    import yaml

    path = Path(lm_eval.__file__).parent / "tasks" / "nq_open" / "nq_open.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _oracle():
    """lm-eval's verdict on one (generation, gold list), by its own functions."""
    from lm_eval.api.metrics import exact_match_hf_evaluate
    from lm_eval.filters.extraction import WhitespaceFilter
    from lm_eval.filters.selection import TakeFirstFilter
    from lm_eval.models.utils import postprocess_generated_text

    config = _task_config()
    assert config["metadata"]["version"] == 4.0
    until = config["generation_kwargs"]["until"]
    (metric,) = config["metric_list"]
    assert metric["metric"] == "exact_match"
    settings = {k: metric[k] for k in ("ignore_case", "ignore_punctuation",
                                       "regexes_to_ignore")}
    steps = [f["function"] for f in config["filter_list"][0]["filter"]]
    assert steps == ["remove_whitespace", "take_first"]

    def verdict(generation: str, gold: list[str]) -> bool:
        text = postprocess_generated_text(generation, until, None)
        resps = WhitespaceFilter().apply([[text]], [{}])
        (result,) = TakeFirstFilter().apply(resps, [{}])
        score = exact_match_hf_evaluate(references=gold, predictions=[result] * len(gold),
                                        **settings)["exact_match"]
        return bool(score > 0.0)

    return verdict


def _generations() -> list[tuple[str, list[str]]]:
    """Every shape an LLM prints, for each of the 3,610 NQ-open dev questions."""
    return llm_shapes()


def test_every_verdict_equals_lm_evals_own_pipeline():
    verdict = _oracle()
    ours = get_convention("lm-eval-v4")
    cases = _generations()
    assert len(cases) >= 3610 * 20
    differ = [(s, gold) for s, gold in cases
              if (ours.match(s, gold) is not None) != verdict(s, gold)]
    assert not differ, f"{len(differ)} of {len(cases)} differ, e.g. {differ[:3]}"
    # the shapes reach both verdicts often: the comparison is not trivially all-False
    hits = sum(ours.match(s, gold) is not None for s, gold in cases)
    assert 0.2 * len(cases) < hits < 0.8 * len(cases)


def test_every_hard_string_and_released_answer_equals_lm_evals_own_pipeline():
    """The shared pairs of the other conventions' oracle tests (released answers of 12
    systems, hard strings: NULs, "İ" whose lower case is two characters, combining marks,
    articles, punctuation) through lm-eval's own pipeline: numpy's arrays drop trailing
    NULs and lower-case within the width of their longest string."""
    from em_strings import hard, released

    verdict = _oracle()
    ours = get_convention("lm-eval-v4")
    cases = released() + hard()
    differ = [(s, gold) for s, gold in cases
              if (ours.match(s, gold) is not None) != verdict(s, gold)]
    assert not differ, f"{len(differ)} of {len(cases)} differ, e.g. {differ[:3]}"
    # the two the earlier rule missed, by hand: "Paris\0!" loses its "!" and then its
    # NUL; "İstanbul" alone lower-cases to "i̇stanbu", beside a longer gold it keeps its "l"
    assert ours.match("Paris\0!", ["Paris"]) == "Paris" and verdict("Paris\0!", ["Paris"])
    gold = ["\u0130stanbul", "Constantinople"]
    assert ours.match("\u0130stanbul", gold) is None and not verdict("\u0130stanbul", gold)
    assert ours.match("\u0130stanbul", ["\u0130stanbul"]) is not None


def test_a_gold_answer_with_a_stop_is_not_met_by_itself():
    """A gold answer with a stop in it (``Washington, D.C.``) is compared uncut: a perfect
    system's verbatim answer is cut at the "," and misses; only a generation without the
    stops meets it (punctuation goes in the normalization)."""
    verdict = _oracle()
    ours = get_convention("lm-eval-v4")
    gold = ["Washington, D.C."]
    assert not verdict("Washington, D.C.", gold)
    assert ours.match("Washington, D.C.", gold) is None
    assert verdict("Washington DC", gold)
    assert ours.match("Washington DC", gold) == "Washington, D.C."


def test_the_convention_through_eval(tmp_path, capsys):
    gold = tmp_path / "gold.jsonl"
    rows = (("q1", ["Paris"]), ("q2", ["Washington, D.C."]), ("q3", ["the Beatles"]))
    gold.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in rows),
                    encoding="utf-8")
    preds = tmp_path / "preds.jsonl"
    said = (("q1", " Paris.\nIt is the capital."), ("q2", "Washington, D.C."),
            ("q3", "Beatles"))
    preds.write_text("".join(json.dumps({"question": q, "prediction": p}) + "\n"
                             for q, p in said), encoding="utf-8")
    assert main(["eval", "nq-open", "--gold", str(gold), "--predictions", str(preds),
                 "--convention", "lm-eval-v4", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    # q1 cut at "." then stripped: Paris; q2's gold is never met; q3: the article goes
    assert got["accuracy"] == pytest.approx(2 / 3)
    assert "|match:em-lm-eval-v4|" in got["signature"]


def test_the_ceiling_is_lm_evals_own_on_every_gold_answer(tmp_path, capsys):
    """A system answering every NQ-open dev question with each of its gold answers,
    verbatim, through lm-eval's own pipeline: the questions none of them scores are the
    ones nqkit names, and the ceiling it reports is the share of the others (the issue's
    figures: 310 of 3,610, 91.4%)."""
    verdict = _oracle()
    path = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    gold = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    never = [g["question"] for g in gold
             if not any(verdict(a, g["answer"]) for a in g["answer"])]
    assert len(never) == 310
    preds = tmp_path / "first-gold.jsonl"  # any predictions: the ceiling is the gold's
    preds.write_text("".join(json.dumps({"question": g["question"],
                                         "prediction": g["answer"][0]}) + "\n"
                             for g in gold), encoding="utf-8")
    assert main(["eval", "nq-open", "--gold", str(path), "--predictions", str(preds),
                 "--convention", "lm-eval-v4", "--explain", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    (warning,) = [w for w in got["warnings"] if w["code"] == "ceiling"]
    assert f"{len(never):,} of the 3,610 questions" in warning["message"]
    assert repr(never[0]) in warning["message"]  # the first of them, in gold order
    ceiling = (len(gold) - len(never)) / len(gold)
    assert f"at most {ceiling:.4f}" in warning["message"]
    assert got["conventions"]["lm-eval-v4"]["ceiling"] == pytest.approx(ceiling)
    # the official rule credits every question answered with its gold, and warns nothing
    assert got["conventions"]["orqa"]["ceiling"] == 1.0
    assert main(["eval", "nq-open", "--gold", str(path), "--predictions", str(preds),
                 "--format", "json"]) == 0
    assert not [w for w in json.loads(capsys.readouterr().out)["warnings"]
                if w["code"] == "ceiling"]


def test_the_lm_eval_stops_extraction_is_lm_evals_own_cut():
    """``--extract lm-eval-stops`` (any convention after it) cuts as lm-eval's backend and
    ``remove_whitespace`` filter do, on every generation of the oracle test above."""
    from lm_eval.filters.extraction import WhitespaceFilter
    from lm_eval.models.utils import postprocess_generated_text

    from nqkit.text.extract import get_extractor

    until = _task_config()["generation_kwargs"]["until"]
    ours = get_extractor("lm-eval-stops")
    cases = _generations()
    theirs = WhitespaceFilter().apply(
        [[postprocess_generated_text(g, until, None)] for g, _ in cases], [{}] * len(cases))
    diffs = [g for (g, _), (t,) in zip(cases, theirs, strict=True) if ours.apply(g)[0] != t]
    assert len(cases) > 80_000 and diffs == []
