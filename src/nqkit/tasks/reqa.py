"""The ReQA task: MRR and R@k of a ranking run over a ReQA task (Ahmad et al. 2019, §3).

``nqkit reqa run TASK`` ranks and scores in one go (and writes the per-query ranks with
``--per-item``); ``nqkit eval reqa --gold TASK --predictions RANKS.jsonl`` scores such a
ranks file again, and ``nqkit compare reqa --gold TASK A.jsonl B.jsonl`` tests two runs.
A question asked by several queries counts once, with its best rank (the paper's Eq. 1-2).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from nqkit.tasks.base import TASKS, Result, Settings, Task

if TYPE_CHECKING:
    from nqkit.metrics.ranking import QueryRanks, RankingResult

LEVELS = (("sentence", "sentence"), ("document", "paragraph"))  # metric level -> table name


def ranking_result(questions: Sequence[str], ranks: QueryRanks, r: RankingResult, *,
                   title: str = "ReQA") -> Result:
    """A ReQA ranking as the :class:`~nqkit.tasks.base.Result` every task returns.

    JSON keys follow the table: ``queries``, ``distinct_questions``, ``index_size`` and a
    block per level named ``sentence`` / ``paragraph``.
    """
    rows = []
    official: dict[str, Any] = {"index_size": r.index_size, "queries": r.questions,
                                "distinct_questions": r.distinct_questions}
    for name, label in LEVELS:
        if name in r.levels:
            m = r.levels[name]
            rows.append((label, *m.values()))
            official[label] = dict(m)
    headers = ("level", *(k.upper() for k in next(iter(r.levels.values()))))

    @functools.cache
    def best() -> dict[str, dict[str, float]]:
        # Per level, each distinct question's best rank (first-seen order): computed once,
        # when the per-item records or the headline statistics are first asked for.
        out: dict[str, dict[str, float]] = {}
        for name, label in LEVELS:
            arr = getattr(ranks, name)
            if arr is None:
                continue
            b: dict[str, float] = {}
            for q, rank in zip(questions, arr.tolist(), strict=True):
                b[q] = min(rank, b.get(q, float("inf")))
            out[label] = b
        return out

    def items() -> list[dict[str, Any]]:
        per = best()
        return [{"question": q, **{f"{label}_rank": per[label][q] for label in per}}
                for q in dict.fromkeys(questions)]

    def headline() -> dict[str, Any]:
        import numpy as np

        from nqkit.stats import ItemStats

        out: dict[str, Any] = {}
        ks = [int(k[2:]) for k in next(iter(r.levels.values())) if k.startswith("r@")]
        for label, per in best().items():
            arr = np.fromiter(per.values(), dtype=float, count=len(per))
            out[f"{label} MRR"] = ItemStats.of(1.0 / arr)
            for k in ks:
                out[f"{label} R@{k}"] = ItemStats.of((arr <= k).astype(float))
        return out

    return Result(task="reqa", title=title, headers=headers, rows=rows,
                  signature=r.signature, official=official, items=items, item_key="question",
                  headline=headline, digits=3)


def _read_ranks(path: str, task: Any, *, allow_missing: bool, allow_extra: bool,
                ) -> tuple[list[str], Any]:
    import numpy as np

    from nqkit.errors import InputError, for_example
    from nqkit.io import iter_jsonl
    from nqkit.metrics.ranking import QueryRanks

    n = len(task.queries)
    sentence = np.full(n, np.inf)
    document = np.full(n, np.inf)
    seen = np.zeros(n, dtype=bool)
    has = {"sentence": False, "document": False}
    extra: list[str] = []
    for lineno, rec in enumerate(iter_jsonl(path, what="ranks"), 1):
        where = f"{path}:{lineno}"
        q = rec.get("query")
        if not isinstance(q, int) or isinstance(q, bool) or q < 0:
            raise InputError(where, f"'query' must be a query number, found {q!r:.40}",
                             "give the ranks written by `nqkit reqa run --per-item`")
        if q >= n:
            extra.append(str(q))
            continue
        if rec.get("question") is not None and rec["question"] != task.queries[q].question:
            raise InputError(where, f"query {q} is {rec['question']!r:.60} here but "
                             f"{task.queries[q].question!r:.60} in the task",
                             "score the ranks against the task they were computed on")
        for key, arr, level in (("sentence_rank", sentence, "sentence"),
                                ("paragraph_rank", document, "document")):
            v = rec.get(key)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int | float) or not v >= 1:
                raise InputError(where, f"{key} must be a rank >= 1, found {v!r:.40}",
                                 "ranks start at 1 (ties averaged)")
            arr[q] = float(v)
            has[level] = True
        seen[q] = True
    if extra and not allow_extra:
        raise InputError(path, f"{len(extra):,} query number(s) beyond the task's {n:,} "
                         f"queries ({for_example(extra)})",
                         "check the task directory, or pass --allow-extra to ignore them")
    missing = np.flatnonzero(~seen)
    if len(missing) == n:
        raise InputError(path, "no ranks for any query of the task",
                         "give the ranks written by `nqkit reqa run --per-item`")
    if len(missing) and not allow_missing:
        raise InputError(path, f"{len(missing):,} of {n:,} queries have no ranks "
                         f"({for_example(str(i) for i in missing)})",
                         "rank every query, or pass --allow-missing to count them as misses")
    ranks = QueryRanks(sentence if has["sentence"] else None,
                       document if has["document"] else None)
    if ranks.sentence is None and ranks.document is None:
        raise InputError(path, "no sentence_rank or paragraph_rank in any line",
                         "give the ranks written by `nqkit reqa run --per-item`")
    return [q.question for q in task.queries], ranks


def score(s: Settings) -> Result:
    from nqkit.errors import InputError
    from nqkit.formats.reqa import load_task
    from nqkit.metrics.ranking import aggregate_ranks

    gold, path = s.inputs()
    dirs = [gold] if isinstance(gold, str | os.PathLike) else list(gold)
    if len(dirs) != 1:
        raise InputError(None, f"--gold takes one ReQA task directory, got {len(dirs)}",
                         "nqkit eval reqa --gold TASK_DIR --predictions RANKS.jsonl")
    task = load_task(dirs[0])
    questions, ranks = _read_ranks(path, task, allow_missing=s.allow_missing,
                                   allow_extra=s.allow_extra)
    settings = {"missing": "miss"} if s.allow_missing else {}
    r = aggregate_ranks(questions, ranks, index_size=len(task.index), settings=settings)
    source = task.params.get("source", "?")
    return ranking_result(questions, ranks, r, title=f"ReQA {source}: ranks of {path}")


TASK = TASKS.add("reqa", Task(
    name="reqa", help="ReQA MRR and R@k of a ranks file (from `nqkit reqa run --per-item`)",
    description="Score per-query ranks ({query, question, sentence_rank, paragraph_rank} "
    "JSON lines, ties averaged) against a ReQA task directory: MRR and R@1/5/10 over "
    "distinct questions, each with its best rank (ReQA, Eq. 1-2).",
    score=score, settings_type=Settings,
    gold_help="the ReQA task directory (from `nqkit reqa build`)",
    predictions_help="per-query ranks (JSON lines from `nqkit reqa run --per-item`)",
    headline=("sentence MRR", "sentence R@1", "paragraph MRR", "paragraph R@1"),
))
