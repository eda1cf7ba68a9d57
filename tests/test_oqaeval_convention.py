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

import importlib
import sys
import types

import pytest

from nqkit.conventions import get_convention

from conftest import SHARED, require, shared_file
from em_strings import every_pair

require("regex")


@pytest.fixture(scope="module")
def oqaeval():
    shared_file("oracles", "oqaeval", "eval.py")
    llm = types.ModuleType("oqaeval.llm")
    llm.OpenAIProxy = type("OpenAIProxy", (), {})
    stand_ins = {"oqaeval.llm": llm}
    if importlib.util.find_spec("datasets") is None:
        stand_ins["datasets"] = types.ModuleType("datasets")
    saved_path = list(sys.path)
    saved = {k: sys.modules.get(k) for k in [*stand_ins, "oqaeval", "oqaeval.eval",
                                            "oqaeval.data_utils", "oqaeval.squad_evaluate"]}
    try:
        sys.path.insert(0, str(SHARED / "oracles"))
        sys.modules.update(stand_ins)
        yield importlib.import_module("oqaeval.eval")
    finally:
        sys.path[:] = saved_path
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


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
