"""FlashRAG's two answer metrics, verdict for verdict, with flashrag-dev 0.1.2's own
``flashrag/evaluator/metrics.py`` as the oracle: ``ExactMatch`` (``em``) is ``squad``'s
rule, so ``flashrag-em`` is another name for ``squad``; ``Sub_ExactMatch`` (``acc``) is
``containment``. Every pair of ``em_strings.every_pair`` is compared.

flashrag-dev is installed without its requirements (``pip install --no-deps
flashrag-dev==0.1.2``, as ``.ci/run`` does): ``flashrag.evaluator.metrics`` imports only
the standard library and ``flashrag.evaluator.utils``, so it is imported as it is. A metric
is built with a config naming a dataset other than ``curatedtrec`` (whose answers are
regular expressions).
"""

from __future__ import annotations

import pytest

from nqkit.conventions import get_convention

from conftest import require
from em_strings import every_pair

metrics = require("flashrag.evaluator.metrics")


@pytest.mark.parametrize(("metric", "method", "name"), [
    ("ExactMatch", "calculate_em", "flashrag-em"),
    ("Sub_ExactMatch", "calculate_sub_em", "containment"),
])
def test_every_verdict_equals_flashrags_metric(metric, method, name):
    score = getattr(getattr(metrics, metric)({"dataset_name": "nq"}), method)
    ours = get_convention(name)
    cases = every_pair()
    unique = list(dict.fromkeys((s, tuple(gold)) for s, gold in cases))
    differ = [(s, gold) for s, gold in unique
              if (ours.match(s, list(gold)) is not None) != (score(s, list(gold)) == 1.0)]
    assert not differ, f"{len(differ)} of {len(unique)} differ, e.g. {differ[:3]}"
    hits = sum(score(s, list(gold)) for s, gold in unique)
    assert 0.1 * len(unique) < hits < 0.9 * len(unique)


def test_flashrag_em_is_squad_under_its_own_signature():
    assert get_convention("flashrag-em") is get_convention("squad")
    assert get_convention("flashrag-em").name == "squad"
