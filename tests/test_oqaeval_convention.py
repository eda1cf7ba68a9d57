"""``oqaeval`` (the EM of Kamalloo et al.'s evaluation, ``ehsk/OpenQA-eval``) is ``squad``'s
rule, verdict for verdict, with its own ``eval.em_eval`` as the oracle on every pair of
``em_strings.every_pair``; so ``oqaeval`` is another name for ``squad``.

The package is imported from ``shared/oracles`` (its README): ``oqaeval.llm`` (its GPT
judge, which imports ``openai``) is replaced by a module with an empty ``OpenAIProxy``;
``data_utils`` imports ``datasets`` (for reading hub datasets by name, not called here),
given an empty stand-in when it is not installed, and ``regex`` (its tokenizer), the real
one. The prediction goes through ``read_predict_file``'s ``strip()`` before ``em_eval``, as
``evaluate_file`` does.
"""

from __future__ import annotations

import pytest

from nqkit.conventions import get_convention

from conftest import oqaeval_eval, require
from em_strings import every_pair

require("regex")


@pytest.fixture(scope="module")
def oqaeval():
    with oqaeval_eval() as module:
        yield module


def test_every_verdict_equals_em_eval(oqaeval):
    ours = get_convention("oqaeval")
    cases = every_pair()
    unique = list(dict.fromkeys((s, tuple(gold)) for s, gold in cases))

    def theirs(prediction: str, gold: tuple[str, ...]) -> bool:
        return oqaeval.em_eval(oqaeval.Question("q", list(gold)), prediction.strip()) == 1

    differ = [(s, gold) for s, gold in unique
              if (ours.match(s, list(gold)) is not None) != theirs(s, gold)]
    assert not differ, f"{len(differ)} of {len(unique)} differ, e.g. {differ[:3]}"
    assert get_convention("oqaeval").name == "squad"
