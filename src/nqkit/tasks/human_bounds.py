"""The human-bounds task: single-annotator and super-annotator scores (NQ paper §5.2).

``nqkit eval human-bounds --gold 'nq-dev-*.jsonl.gz' --num-references 4 --splits all``;
the procedure is :func:`nqkit.metrics.human.human_bounds`. It reads only gold: the
annotators are the predictors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from nqkit.settings import Param, positive_int
from nqkit.tasks.base import TASKS, Result, Settings, Task
from nqkit.vocabulary import GOLD_CACHE

EPILOG = """\
The paper splits 25-way annotations into 5 references and a pool of 20 (super-annotator:
NULL unless >= 8 of the 20 gave a long answer). On the 5-way dev data, use leave one
annotator out:
  nqkit eval human-bounds --gold 'nq-dev-*.jsonl.gz' --num-references 4 --splits all"""


@dataclass(frozen=True, kw_only=True)
class HumanBoundsSettings(Settings):
    """The settings of ``nqkit eval human-bounds`` (declared below); it reads only gold."""

    num_references: int  # annotations per example used as references
    beta: int  # references have an answer when at least this many of them gave one
    votes: int | None  # the super-annotator answers at this many pool votes (None: 8/20)
    splits: Literal["first", "all"]  # first (the first N annotations are the references) or all
    gold_cache: bool  # read and write the gold annotation cache


def score(s: HumanBoundsSettings) -> Result:
    from nqkit.errors import InputError
    from nqkit.formats.gold_cache import load_nq_gold
    from nqkit.metrics.human import human_bounds

    if s.gold is None:
        raise InputError(None, "--gold is required", "nqkit eval human-bounds --gold FILES")
    gold = load_nq_gold(s.gold, cache=s.gold_cache)
    hb = human_bounds([(i, g.annotations) for i, g in gold.items()],
                      references=s.num_references, beta=s.beta, votes=s.votes,
                      splits=s.splits)
    cases = (("single annotator", "long", "single-long", hb.single_long),
             ("single annotator", "short", "single-short", hb.single_short),
             ("super-annotator", "long", "super-long", hb.super_long),
             ("super-annotator", "short", "super-short", hb.super_short))
    official: dict[str, Any] = {"examples": hb.num_examples, "splits": hb.num_splits}
    for _who, _task, key, p in cases:
        official[key] = {"precision": p.precision, "recall": p.recall, "f1": p.f1,
                         "correct": p.correct, "predicted": p.predicted, "gold": p.gold}
    if len(hb.splits_per_example) == 1:
        (per,) = hb.splits_per_example
        how = f"{per:,} reference/pool split{'s' if per != 1 else ''} each"
    else:
        how = f"{hb.num_splits:,} reference/pool splits in all"
    title = (f"NQ human upper bounds: {hb.num_examples:,} examples, {how} "
             f"({hb.references} references, splits={hb.splits})")
    return Result(
        task="human-bounds", title=title,
        headers=("predictor", "task", "F1", "precision", "recall", "correct", "predicted",
                 "gold"),
        rows=[(who, task, p.f1, p.precision, p.recall, p.correct, p.predicted, p.gold)
              for who, task, _key, p in cases],
        signature=hb.signature, official=official, warnings=list(hb.warnings))


TASK = TASKS.add("human-bounds", Task(
    name="human-bounds",
    help="human upper bounds on NQ from k-way annotations (paper §5.2)",
    description="Estimate single-annotator and super-annotator precision/recall/F1 by "
    "splitting each example's annotations into references and a predictor pool.",
    score=score, epilog=EPILOG, settings_type=HumanBoundsSettings,
    common=("gold", "format"), gold_deprecated=(),  # --references was the count here
    gold_help="k-way annotated NQ files (original or simplified; globs)",
    params=(
        Param("num_references", "--num-references", "annotations per example used as "
              "references (default 5)", default=5, type=positive_int, metavar="N",
              deprecated=("--references",)),
        Param("beta", "--beta", "references have an answer when >= K of them gave one "
              "(default 2)", default=2, type=positive_int, metavar="K"),
        Param("votes", "--votes", "super-annotator answers when >= V pool annotators did "
              "(default: 8/20 of the pool, rounded, at least 1)", type=positive_int,
              metavar="V"),
        Param("splits", "--splits", "first: the first N annotations are the references; "
              "all: average over every choice of N references (default first)",
              default="first", choices=("first", "all")),
        GOLD_CACHE,
    ),
    gold_kind="nq"))
