"""The retrieval task: DPR-style top-k answer recall of retrieval results.

``nqkit eval retrieval --predictions results.json [--gold qa.tsv]``: the results are DPR's
format ``[{question, answers, ctxs: [{id, title, text, score}]}]``; the answers come from
the results unless ``--gold`` gives a questions/answers file (DPR ``.qa.tsv`` or NQ-open
JSONL), joined by question. The scoring is
:func:`nqkit.metrics.answer_recall.score_answer_recall`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nqkit.errors import InputError
from nqkit.settings import Param, int_in, positive_int
from nqkit.signature import ResultWarning
from nqkit.tasks.base import TASKS, Coverage, Result, Settings, Task

if TYPE_CHECKING:
    from nqkit.io import PathsLike

PARAMS: tuple[Param, ...] = (
    Param("topk", "--topk", "cut-offs (default: 1 5 20 100)", default=[1, 5, 20, 100],
          type=positive_int, nargs="+", metavar="K"),
    Param("passages", "--passages", "the passage corpus of a TREC run (DPR psgs_w100.tsv "
          "format); with it, --predictions is a TREC run and --gold its questions",
          metavar="TSV"),
    Param("first_qid", "--first-qid", "the TREC run's query id of the first question "
          "(default 0, as Pyserini numbers DPR topics)", default=0, type=int_in(0)),
)



@dataclass(frozen=True, kw_only=True)
class RetrievalSettings(Settings):
    """The settings of ``nqkit eval retrieval`` (declared in :data:`PARAMS`); the gold is
    optional (the answers inside the results), the predictions are the results."""

    topk: list[int]  # the cut-offs k of top-k answer recall
    passages: str | None  # the passage corpus of a TREC run (None: DPR results JSON)
    first_qid: int  # the TREC run's query id of the first question


TREC_SUFFIXES = (".trec", ".trec.gz", ".run", ".run.gz", ".txt", ".txt.gz")


def _is_trec(path: str) -> bool:
    """A TREC run by its name (``.trec``, ``.run``, ``.txt``); DPR results are JSON."""
    return str(path).endswith(TREC_SUFFIXES)


def _gold_answers(paths: PathsLike) -> dict[str, tuple[str, ...]]:
    from nqkit.formats.dpr import read_dpr_qa_tsv
    from nqkit.formats.nq_open import read_nq_open
    from nqkit.io import expand_paths

    out: dict[str, tuple[str, ...]] = {}
    for path in expand_paths(paths, what="gold"):
        if path.name.endswith((".tsv", ".tsv.gz", ".csv")):
            out.update(read_dpr_qa_tsv(path))
        else:
            out.update((ex.question, ex.answers) for ex in read_nq_open(path))
    return out


def _noted(results: Iterable[Any], questions: list[str]) -> Iterator[Any]:
    for r in results:
        questions.append(r.question)
        yield r


def result_warnings(r: Any) -> list[ResultWarning]:
    """Every warning of an answer-recall result (the metric's and has_answer notices)."""
    lines = list(r.warnings)
    if r.flag_disagreements:
        lines.append(ResultWarning("has-answer-flags", f"{r.flag_disagreements:,} context(s) "
                                   "carry a has_answer flag that differs from the DPR string "
                                   "check recomputed here"))
    return lines


def _joined(results: Iterable[Any], gold: dict[str, tuple[str, ...]], s: RetrievalSettings,
            path: str, missing: list[str]) -> Iterator[Any]:
    """The results with the gold answers, read as a stream: a question not in the gold is
    left out (or refused), and the gold questions never asked follow with no context
    (listed in ``missing``, for the coverage). The checks of the join (split, extra and
    missing questions) run when the results end, in that order, so they see every question
    and come before any number."""
    from nqkit.formats.dpr import DprResult
    from nqkit.splits import check_split

    seen: set[str] = set()
    extra: list[str] = []
    for r in results:
        seen.add(r.question)
        answers = gold.get(r.question)
        if answers is None:
            extra.append(r.question)
        elif not extra or s.allow_extra:  # after a refused one, only count the rest
            yield DprResult(r.question, answers, r.ctxs)
    # results of another known split: one line naming both, before any number
    check_split(gold.keys(), seen, where=path)
    if extra and not s.allow_extra:
        raise InputError(path, f"{len(extra):,} question(s) of the results are not in the "
                         f"gold (e.g. {'; '.join(map(repr, extra[:3]))})",
                         "check the split, or pass --allow-extra to ignore them")
    missing.extend(q for q in gold if q not in seen)
    if missing and not s.allow_missing:
        raise InputError(path, f"{len(missing):,} of {len(gold):,} gold questions have no "
                         f"results (e.g. {'; '.join(map(repr, missing[:3]))})",
                         "retrieve for every question, or pass --allow-missing to count "
                         "them as not found")
    for q in missing:
        yield DprResult(q, gold[q], ())


def score(s: RetrievalSettings) -> Result:
    import numpy as np

    from nqkit.formats.dpr import read_dpr_results
    from nqkit.metrics.answer_recall import score_answer_recall
    from nqkit.report import progress
    from nqkit.stats import ItemStats

    if not s.predictions:
        raise InputError(None, "no retrieval results given",
                         "nqkit eval retrieval --predictions results.json")
    path = os.fspath(s.predictions)
    results: Iterable[Any]
    if s.passages is not None or _is_trec(path):
        if not s.gold or s.passages is None:
            raise InputError(path, "a TREC run names passages and question numbers only",
                             "give its questions and answers with --gold (DPR .qa.tsv or "
                             "NQ-open JSONL) and the corpus with --passages psgs_w100.tsv")
        from nqkit.formats.trec import trec_to_dpr_results

        results = trec_to_dpr_results(path, s.gold, s.passages,
                                      first_qid=s.first_qid, progress=progress)
    else:
        results = read_dpr_results(path)  # a stream: one question in memory at a time
    scored: list[str] = []  # the questions scored, in order (for the per-item output)
    missing: list[str] = []  # gold questions without results (scored as not found)
    if s.gold:
        gold = _gold_answers(s.gold)
        results = _joined(results, gold, s, path, missing)
    ks = sorted(set(s.topk))
    r = score_answer_recall(_noted(progress(results, desc="answer recall", unit="q"),
                                   scored), ks, where=path)
    items = [{"question": q, "first_hit": hit}
             for q, hit in zip(scored, r.first_hit, strict=True)]

    def headline() -> dict[str, ItemStats]:
        first = np.array([h if h is not None else np.inf for h in r.first_hit], dtype=float)
        return {f"top-{k}": ItemStats.of((first <= k).astype(float)) for k in ks}

    return Result(
        task="retrieval", title="Top-k answer recall", headers=("top-k", "answer recall"),
        rows=[(f"top-{k}", v) for k, v in r.recall.items()], signature=r.signature,
        official={"recall": {str(k): v for k, v in r.recall.items()},
                  "num_questions": r.num_questions},
        items=items, item_key="question",
        coverage=Coverage(len(scored) - len(missing), len(scored)),
        show_coverage=False, headline=headline, warnings=result_warnings(r),
        notes=[f"questions: {r.num_questions:,}"])


TASK = TASKS.add("retrieval", Task(
    name="retrieval", help="top-k answer recall of retrieval results (DPR has_answer)",
    description="Top-k answer recall of DPR-style results [{question, answers, ctxs: [{id, "
    "title, text, score}]}]: a question counts at k when one of its first k passages "
    "contains an answer's token sequence (DPR simple tokenizer, NFD, lower-cased). "
    "Contexts are taken in file order.",
    score=score, params=PARAMS, settings_type=RetrievalSettings, gold_required=False,
    predictions_required=False,
    gold_help="optional questions and answers (DPR .qa.tsv or NQ-open JSONL); default: the "
    "answers inside the results",
    predictions_help="retrieval results JSON (DPR dense_retriever output)",
    headline=("top-1", "top-5", "top-20", "top-100"),
    deprecated_positional="predictions",
))
