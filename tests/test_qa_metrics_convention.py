"""``--convention qa-metrics`` equals qa-metrics 0.2.42's ``em_match`` on every pair of
``em_strings.every_pair`` (the gold list as ``reference``, the prediction as
``candidate``).

qa-metrics is a test oracle only, installed without its requirements (``pip install
--no-deps qa-metrics==0.2.42``, as ``.ci/run`` does). Its package ``__init__`` and
``utils/tools.py`` import nltk (and download its data at import), contractions, requests
and tqdm for its other metrics; ``em_match`` needs none of them. So the two files it runs,
``qa_metrics/utils/tools.py`` and ``qa_metrics/em.py``, are loaded from the installed
package by path (:func:`_load_em`), with empty stand-ins for ``contractions`` and
``nltk`` (``download`` a no-op) and without the package's ``__init__``; ``regex``, which
its normalization does use, is the real one.
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import sys
import types

import pytest

from nqkit.conventions import get_convention

from conftest import require
from em_strings import every_pair, hard

require("regex")  # qa-metrics writes its article pattern with it


def _load_em():
    spec = importlib.util.find_spec("qa_metrics")
    if spec is None or not spec.submodule_search_locations:
        require("qa_metrics")  # skips (fails under CI) with the reason
    root = next(iter(spec.submodule_search_locations))
    nltk = types.ModuleType("nltk")
    nltk.download = lambda *a, **k: None
    stem, corpus, tokenize = (types.ModuleType(f"nltk.{n}") for n in ("stem", "corpus",
                                                                         "tokenize"))
    stem.WordNetLemmatizer = type("WordNetLemmatizer", (), {})
    corpus.wordnet = None
    tokenize.word_tokenize = None
    stand_ins = {"contractions": types.ModuleType("contractions"), "nltk": nltk,
                 "nltk.stem": stem, "nltk.corpus": corpus, "nltk.tokenize": tokenize}
    package = types.ModuleType("qa_metrics")
    package.__path__ = [root]
    utils = types.ModuleType("qa_metrics.utils")
    utils.__path__ = [f"{root}/utils"]
    saved = {k: sys.modules.get(k) for k in [*stand_ins, "qa_metrics", "qa_metrics.utils",
                                            "qa_metrics.utils.tools", "qa_metrics.em"]}
    try:
        sys.modules.update(stand_ins)
        sys.modules.update({"qa_metrics": package, "qa_metrics.utils": utils})
        for name, path in (("qa_metrics.utils.tools", f"{root}/utils/tools.py"),
                           ("qa_metrics.em", f"{root}/em.py")):
            loader = importlib.machinery.SourceFileLoader(name, path)
            module = importlib.util.module_from_spec(
                importlib.util.spec_from_loader(name, loader))
            sys.modules[name] = module
            loader.exec_module(module)
        # its two normalizations are pure functions of a string: memoized, em_match runs
        # as written on 320,000 gold answers in a few seconds
        module.normalize_answer = functools.cache(module.normalize_answer)
        module.remove_punctuation = functools.cache(module.remove_punctuation)
        return module.em_match
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


@pytest.fixture(scope="module")
def em_match():
    return _load_em()


def test_every_verdict_equals_em_match(em_match):
    ours = get_convention("qa-metrics")
    cases = every_pair()
    assert len(cases) > 180_000
    unique = list(dict.fromkeys((s, tuple(gold)) for s, gold in cases))
    theirs = {pair: em_match(list(pair[1]), pair[0]) for pair in unique}
    differ = [(s, gold) for (s, gold), v in theirs.items()
              if (ours.match(s, list(gold)) is not None) != v]
    assert not differ, f"{len(differ)} of {len(unique)} differ, e.g. {differ[:3]}"
    hits = [theirs[s, tuple(gold)] for s, gold in cases]
    assert 0.2 * len(cases) < sum(hits) < 0.9 * len(cases)
    assert 0 < sum(hits[-len(hard()):]) < len(hard())


@pytest.mark.parametrize(("prediction", "gold", "expected"), [
    ("The Beatles were the band", ["beatles"], True),  # the gold inside the prediction
    ("beatles", ["The Beatles band"], False),  # not the other way round
    ("in 1990", ["1"], True),  # inside a word
    ("\u00bfqu\u00e9?", ["qu\u00e9"], True),  # every Unicode punctuation mark goes
    ("", [""], False),  # an empty candidate meets nothing
    (" ", [""], True),  # any other meets a gold answer that normalizes to nothing
    ("rock \u2019n\u2019 roll", ["rock n roll"], True),
])
def test_the_rule_by_hand(em_match, prediction, gold, expected):
    assert (get_convention("qa-metrics").match(prediction, gold) is not None) is expected
    assert em_match(gold, prediction) is expected
