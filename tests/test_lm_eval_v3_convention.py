"""``--convention lm-eval-v3`` equals lm-evaluation-harness's ``nq_open`` task as it was
before its PR #1305 (issue 31), question by question.

The oracle is lm-eval's own code (0.4.13, installed as for ``lm-eval-v4``): its Hugging Face
backend's stop cut (``postprocess_generated_text``) and ``exact_match_hf_evaluate``, run
with the task's settings of that time, read from the task file's own lines below (lm-eval
0.4.0's ``nq_open.yaml``, byte for byte in the parts that score; the stops and metric
settings are those of PR #1305's parent), and each gold answer scored on its own with a
hit when any scores (0.4.0's ``ConfigurableTask.process_results`` for multiple targets).
One step of that time is no longer in lm-eval: its ``remove_whitespace`` filter dropped one
leading space (``if resp.startswith(" "): resp = resp[1:]``, lm-eval 0.4.0 and 0.4.1
``lm_eval/filters/extraction.py``), where 0.4.13's strips both ends; that line is the one
step written here. Every pair of ``em_strings.every_pair`` is compared.
"""

from __future__ import annotations

import pytest

from nqkit.conventions import get_convention

from conftest import require
from em_strings import every_pair, hard

require("lm_eval")  # the oracle: README's test command installs lm-eval 0.4.13
yaml = require("yaml")

# lm-eval 0.4.0 lm_eval/tasks/nq_open/nq_open.yaml, the lines that decide a verdict
OLD_TASK = r'''
generation_kwargs:
  until:
    - "\n"
    - "."
    - ","
  do_sample: false
  temperature: 0.0
filter_list:
  - name: remove_whitespace
    filter:
      - function: remove_whitespace
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    ignore_punctuation: true
    regexes_to_ignore:
    - "\ban|a|the\b"
metadata:
  - version: 0.0
'''


def _oracle():
    from lm_eval.api.metrics import exact_match_hf_evaluate
    from lm_eval.models.utils import postprocess_generated_text

    config = yaml.safe_load(OLD_TASK)
    until = config["generation_kwargs"]["until"]
    (metric,) = config["metric_list"]
    settings = {k: metric[k] for k in ("ignore_case", "ignore_punctuation",
                                       "regexes_to_ignore")}
    # YAML reads \b in a double-quoted string as the backspace character
    assert settings["regexes_to_ignore"] == ["\x08an|a|the\x08"]
    steps = [f["function"] for f in config["filter_list"][0]["filter"]]
    assert steps == ["remove_whitespace", "take_first"]

    def verdict(generation: str, gold: list[str]) -> bool:
        text = postprocess_generated_text(generation, until, None)
        if text.startswith(" "):  # remove_whitespace of that time
            text = text[1:]
        # 0.4.0 scored each gold answer on its own; one call over the list gives the
        # same verdicts (the comparison is element by element) except where numpy's
        # lower-casing depends on the array's width: "İ" lower-cases to two characters,
        # cut to the widest string of the array
        if not any("\u0130" in g for g in gold):
            return bool(exact_match_hf_evaluate(references=gold, predictions=[text] * len(gold),
                                                **settings)["exact_match"] > 0)
        return any(exact_match_hf_evaluate(references=[g], predictions=[text],
                                           **settings)["exact_match"] for g in gold)

    return verdict


def test_the_stops_are_those_of_lm_eval_v4():
    from nqkit.text.extract import LM_EVAL_STOPS as STOPS

    assert tuple(yaml.safe_load(OLD_TASK)["generation_kwargs"]["until"]) == STOPS


def test_every_verdict_equals_lm_evals_own_code():
    verdict = _oracle()
    ours = get_convention("lm-eval-v3")
    cases = every_pair()
    assert len(cases) > 180_000
    unique = list(dict.fromkeys((s, tuple(gold)) for s, gold in cases))
    theirs = dict(zip(unique, (verdict(s, list(gold)) for s, gold in unique), strict=True))
    differ = [(s, gold) for (s, gold), v in theirs.items()
              if (ours.match(s, gold) is not None) != v]
    assert not differ, f"{len(differ)} of {len(cases)} differ, e.g. {differ[:3]}"
    # the pairs reach both verdicts often, the hard strings too
    hits = [theirs[s, tuple(gold)] for s, gold in cases]
    assert 0.1 * len(cases) < sum(hits) < 0.8 * len(cases)
    assert 0 < sum(hits[-len(hard()):]) < len(hard())


@pytest.mark.parametrize(("generation", "gold", "expected"), [
    ("Paris", ["Paris"], True),
    ("PARIS", ["Paris"], False),  # "a" deleted from "Paris" only: "pris" vs "paris"
    ("paris", ["PARIS"], False),
    ("Pris", ["Paris"], True),  # the deleted letter is not missed
    ("The Beatles", ["Beatles"], False),  # no article is removed
    (" Paris.", ["Paris"], True),  # one leading space dropped, cut at "."
    ("  Paris", ["Paris"], False),  # only one
    ("Paris ", ["Paris"], False),  # trailing space kept
    ("\u0130stanbul", ["\u0130stanbul"], True),
])
def test_the_rule_by_hand(generation, gold, expected):
    assert (get_convention("lm-eval-v3").match(generation, gold) is not None) is expected
    assert _oracle()(generation, gold) is expected
