"""The retrieval task: DPR-style top-k answer recall of retrieval results.

``nqkit eval retrieval --predictions results.json [--gold qa.tsv]``: the results are DPR's
format ``[{question, answers, ctxs: [{id, title, text, score}]}]``; the answers come from
the results unless ``--gold`` gives a questions/answers file (DPR ``.qa.tsv`` or NQ-open
JSONL), joined by question. The scoring is
:func:`nqkit.metrics.answer_recall.score_answer_recall`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nqkit.errors import InputError, for_example
from nqkit.settings import Param
from nqkit.signature import ResultWarning
from nqkit.tasks.base import TASKS, Coverage, Result, Settings, Task
from nqkit.vocabulary import DEFAULT_CUTOFFS, FIRST_QID, PASSAGES, QRELS, TOPK

if TYPE_CHECKING:
    from nqkit.io import PathsLike

PARAMS: tuple[Param, ...] = (
    TOPK,
    PASSAGES.but(help="the passage corpus of a TREC run (DPR psgs_w100.tsv format); with "
                 "it, --predictions is a TREC run and --gold its questions"),
    FIRST_QID,
    QRELS.but(help="TREC qrels of gold passages (qid 0 docid rel; qid = --first-qid + the "
              "question's position in --gold, or in the results without --gold; see nqkit "
              "convert qrels): adds gold-passage recall and splits each answer-recall hit "
              "into gold passage / coincidence / gold unknown"),
    Param("recall", "--recall", "the recall of the headline: answer (DPR's has_answer, "
          "default) or gold-passage (a gold passage of --qrels in the top k, over the "
          "questions whose gold passage is known)", default="answer",
          choices=("answer", "gold-passage")),
)



@dataclass(frozen=True, kw_only=True)
class RetrievalSettings(Settings):
    """The settings of ``nqkit eval retrieval`` (declared in :data:`PARAMS`); the gold is
    optional (the answers inside the results), the predictions are the results."""

    topk: list[int]  # the cut-offs k of top-k answer recall
    passages: str | None  # the passage corpus of a TREC run (None: DPR results JSON)
    first_qid: int  # the TREC run's query id of the first question
    qrels: str | None  # TREC qrels of gold passages (None: answer recall alone)
    recall: str  # the headline recall: "answer" or "gold-passage"


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


def _own_gold(results: Iterable[Any], answers: list[frozenset[str]]) -> Iterator[Any]:
    """The results, noting the answers each carries (its own gold, without --gold)."""
    for r in results:
        answers.append(frozenset(r.answers))
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


@dataclass(frozen=True)
class _Qrels:
    """Gold passages by question number, read from TREC qrels (relevance > 0)."""

    gold: dict[str, frozenset[str]]  # qid -> gold passage ids
    docids: frozenset[str]  # every gold passage id
    lines: int  # relevant lines read
    fingerprint: str  # SHA-256 of the sorted (qid, docid) pairs, 12 hex digits


def _read_qrels(path: str) -> _Qrels:
    import hashlib

    from nqkit.formats.trec import read_trec_qrels

    gold: dict[str, set[str]] = {}
    for q in read_trec_qrels(path):
        if q.relevance > 0:
            gold.setdefault(q.qid, set()).add(q.docid)
    pairs = sorted((qid, d) for qid, ds in gold.items() for d in ds)
    if not pairs:
        raise InputError(path, "the qrels mark no passage relevant (relevance > 0)",
                         "give qrels of gold passages, e.g. from nqkit convert qrels")
    h = hashlib.sha256()
    for qid, d in pairs:
        h.update(f"{qid}\x1f{d}\x1e".encode())
    return _Qrels({q: frozenset(ds) for q, ds in gold.items()},
                  frozenset(d for _, d in pairs), len(pairs), h.hexdigest()[:12])


class _GoldRanks:
    """Passes the results through, noting per question the ranks (within ``depth``) of
    its gold passages (None: gold unknown), which questions of the qrels were scored and
    whether any gold passage id occurs among the retrieved ones."""

    def __init__(self, qrels: _Qrels, qids: dict[str, str] | None, first_qid: int,
                 depth: int) -> None:
        self.qrels, self.qids, self.first_qid, self.depth = qrels, qids, first_qid, depth
        self.ranks: list[tuple[int, ...] | None] = []
        self.gold: frozenset[str] | None = None  # the gold passage ids of the last question
        self.scored_qids: set[str] = set()
        self.retrieved_gold = 0  # gold passage ids retrieved, at any depth
        self.with_ids = False  # some context carries a passage id

    def __call__(self, results: Iterable[Any]) -> Iterator[Any]:
        gold_ids = self.qrels.docids
        for i, r in enumerate(results):
            qid = self.qids.get(r.question) if self.qids is not None \
                else str(self.first_qid + i)
            if qid is not None:
                self.scored_qids.add(qid)
            gold = self.qrels.gold.get(qid) if qid is not None else None
            self.gold = gold
            ids = [c.id for c in r.ctxs]
            self.with_ids = self.with_ids or any(ids)
            self.retrieved_gold += sum(1 for pid in ids if pid in gold_ids)
            self.ranks.append(None if gold is None else tuple(
                rank for rank, pid in enumerate(ids[:self.depth], 1) if pid in gold))
            yield r


def _qrels_checks(qr: _Qrels, g: _GoldRanks, qrels_path: str, results_path: str,
                  in_corpus: set[str] | None, corpus: str | None) -> list[ResultWarning]:
    """Qrels that cannot match are refused; partial matches are warnings with counts."""
    n = len(g.ranks)
    matched = set(qr.gold) & g.scored_qids
    if not matched:
        raise InputError(qrels_path, f"none of the {len(qr.gold):,} questions of the qrels "
                         f"(qids {for_example(map(repr, sorted(qr.gold)[:3]))}) is a question of "
                         f"the results (numbered from --first-qid {g.first_qid})",
                         "give the qrels made for these questions (nqkit convert qrels "
                         "--gold) and the same --first-qid")
    warnings = []
    if in_corpus is not None:
        if not in_corpus:
            raise InputError(qrels_path, f"none of the {len(qr.docids):,} gold passage ids "
                             f"of the qrels is in {corpus} "
                             f"({for_example(map(repr, sorted(qr.docids)[:3]))})",
                             "give the qrels made for this corpus (nqkit convert qrels "
                             "--passages)")
        outside = qr.docids - in_corpus
        if outside:
            warnings.append(ResultWarning(
                "qrels-not-in-corpus", f"{len(outside):,} of {len(qr.docids):,} gold passage "
                f"ids of the qrels are not in {corpus} "
                f"({for_example(map(repr, sorted(outside)[:3]))}); no run over it can find them"))
    elif not g.with_ids:
        raise InputError(results_path, "the results carry no passage ids, so no retrieved "
                         "passage can be matched to the qrels",
                         "give results whose contexts have their 'id'")
    elif not g.retrieved_gold:
        raise InputError(qrels_path, f"none of the {len(qr.docids):,} gold passage ids of "
                         f"the qrels occurs among the retrieved passages of the "
                         f"{n:,} questions ({for_example(map(repr, sorted(qr.docids)[:3]))})",
                         "give the qrels made for the corpus the results come from")
    extra = len(qr.gold) - len(matched)
    if extra:
        warnings.append(ResultWarning(
            "qrels-extra", f"{extra:,} of {len(qr.gold):,} questions of the qrels are not "
            "questions of the results; their gold passages are not used"))
    unknown = sum(1 for r in g.ranks if r is None)
    if unknown:
        warnings.append(ResultWarning(
            "gold-unknown", f"{unknown:,} of {n:,} questions have no gold passage in the "
            "qrels: they are left out of gold-passage recall and counted apart as 'gold "
            "unknown' among the answer-recall hits"))
    return warnings


def _check_numbering(s: RetrievalSettings, path: str) -> list[str] | None:
    """Refuse, before any reading of the run, qrels or a TREC run written by nqkit for
    another question set than ``--gold`` (their sidecars, :mod:`nqkit.io.provenance`):
    their numbers would name other questions, and the recall would mean nothing. Returns
    the questions of ``--gold`` when it had to read them (None: no sidecar to check)."""
    from nqkit.formats.trec import read_questions_answers
    from nqkit.io import read_provenance
    from nqkit.splits import check_numbering

    files = [(o, f) for o, f in (("--qrels", s.qrels), ("--predictions", path))
             if f is not None and (o == "--qrels" or _is_trec(path))]
    provs = [(o, read_provenance(f)) for o, f in files]
    if not any(p is not None and p.questions is not None for _, p in provs):
        return None
    assert s.gold  # only called with it
    asked = [q for q, _ in read_questions_answers(s.gold)]
    for option, prov in provs:
        check_numbering(prov, asked, first_qid=s.first_qid, option=option,
                        against=f"--gold {s.gold}",
                        fix="give the file made for these questions, or the questions it "
                        "was made for (its .provenance.json names them)")
    return asked


def _kept(results: Iterable[Any], keep: Callable[[Any, frozenset[str] | None], object],
          gold_ranks: _GoldRanks | None) -> Iterator[Any]:
    for r in results:
        keep(r, gold_ranks.gold if gold_ranks is not None else None)
        yield r


def score(s: RetrievalSettings, *,
          keep: Callable[[Any, frozenset[str] | None], object] | None = None) -> Result:
    """``nqkit eval retrieval``'s result for the settings ``s``.

    ``keep`` (for a caller that shows the results, such as ``nqkit browse``) is called
    with each scored question's :class:`~nqkit.formats.dpr.DprResult` (joined with the
    gold answers, in the order of the per-item records) and its gold passage ids from
    ``--qrels`` (None without qrels, or when the qrels know no gold passage for it),
    while the stream is scored: the results are read once, by the same code.
    """

    from nqkit.formats.dpr import read_dpr_results
    from nqkit.metrics.answer_recall import score_answer_recall
    from nqkit.report import progress

    if not s.predictions:
        raise InputError(None, "no retrieval results given",
                         "nqkit eval retrieval --predictions results.json")
    if s.recall != "answer" and s.qrels is None:
        raise InputError(None, f"--recall {s.recall} needs the gold passages",
                         "give them with --qrels FILE (nqkit convert qrels writes them)")
    path = os.fspath(s.predictions)
    ks = sorted(set(s.topk))
    qrels = _read_qrels(os.fspath(s.qrels)) if s.qrels is not None else None
    asked = _check_numbering(s, path) if s.gold else None
    in_corpus: set[str] | None = None
    results: Iterable[Any]
    if s.passages is not None or _is_trec(path):
        if not s.gold or s.passages is None:
            raise InputError(path, "a TREC run names passages and question numbers only",
                             "give its questions and answers with --gold (DPR .qa.tsv or "
                             "NQ-open JSONL) and the corpus with --passages psgs_w100.tsv")
        from nqkit.formats.trec import trec_to_dpr_results

        if qrels is not None:
            in_corpus = set()
        results = trec_to_dpr_results(path, s.gold, s.passages,
                                      first_qid=s.first_qid, progress=progress,
                                      also=qrels.docids if qrels is not None else (),
                                      present=in_corpus)
    else:
        results = read_dpr_results(path)  # a stream: one question in memory at a time
    scored: list[str] = []  # the questions scored, in order (for the per-item output)
    missing: list[str] = []  # gold questions without results (scored as not found)
    own_gold: list[frozenset[str]] | None = None  # the answers inside the results
    if s.gold:
        gold = _gold_answers(s.gold)
        results = _joined(results, gold, s, path, missing)
    else:
        own_gold = []
        results = _own_gold(results, own_gold)
    gold_ranks: _GoldRanks | None = None
    run_settings: dict[str, object] | None = None
    if qrels is not None:
        qids = None
        if s.gold:
            from nqkit.formats.gold_qrels import question_numbers
            from nqkit.formats.trec import read_questions_answers

            if asked is None:  # not read yet for the numbering check
                asked = [q for q, _ in read_questions_answers(s.gold)]
            qids = question_numbers(asked, "--gold", s.first_qid)
        gold_ranks = _GoldRanks(qrels, qids, s.first_qid, ks[-1])
        results = gold_ranks(results)
        run_settings = {"recall": s.recall, "qrels": qrels.fingerprint}
    if keep is not None:
        results = _kept(results, keep, gold_ranks)
    if gold_ranks is None or qrels is None:
        result = recall_result(progress(results, desc="answer recall", unit="q"), ks,
                               where=path, run_settings=run_settings, missing=missing)
    else:
        r = score_answer_recall(_noted(progress(results, desc="answer recall", unit="q"),
                                       scored), ks, where=path, run_settings=run_settings)
        if not s.gold:  # numbered by the results' own order: checked once they are read
            from nqkit.io import read_provenance
            from nqkit.splits import check_numbering

            check_numbering(read_provenance(os.fspath(s.qrels or "")), scored,
                            first_qid=s.first_qid, option="--qrels",
                            against=f"the results {path}",
                            fix="give the qrels made for these questions, or --gold with "
                            "the questions they were made for (its .provenance.json names "
                            "them)")
        result = _with_gold(s, r, scored, missing, gold_ranks, qrels,
                            _qrels_checks(qrels, gold_ranks, os.fspath(s.qrels or ""), path,
                                          in_corpus, str(s.passages)), ks)
    # results scored on the answers they carry: a comparison checks they carry the same
    result.item_gold = own_gold
    return result


def recall_result(results: Iterable[Any], topk: Iterable[int], *, where: str | None,
                  run_settings: dict[str, object] | None = None,
                  missing: list[str] | None = None, check: Any = None) -> Result:
    """Top-k answer recall of a stream of :class:`~nqkit.formats.dpr.DprResult` s (already
    joined with their gold answers), as ``nqkit eval retrieval`` gives it without qrels:
    ``nqkit retrieve --eval`` scores its run in memory with this. ``run_settings`` go
    into the signature after the metric's; ``missing`` lists the gold questions the
    results had none for (counted in the coverage, filled in as the stream ends);
    ``check`` is the has-answer check to share (:class:`~nqkit.text.dpr_tokenize.
    AnswerCheck`)."""
    import numpy as np

    from nqkit.metrics.answer_recall import score_answer_recall
    from nqkit.stats import ItemStats

    ks = sorted(set(topk))
    scored: list[str] = []
    missing = [] if missing is None else missing
    r = score_answer_recall(_noted(results, scored), ks, where=where,
                            run_settings=run_settings, check=check)
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


def _with_gold(s: RetrievalSettings, r: Any, scored: list[str], missing: list[str],
               g: _GoldRanks, qrels: _Qrels, extra: list[ResultWarning], ks: list[int]
               ) -> Result:
    """The result with qrels: answer recall, gold-passage recall and the split of the
    answer-recall hits (:mod:`nqkit.metrics.gold_recall`); the headline is ``--recall``."""
    import numpy as np

    from nqkit.metrics.gold_recall import COINCIDENCE, GOLD, GOLD_UNKNOWN, score_gold_split
    from nqkit.signature import mark_signature
    from nqkit.stats import ItemStats

    split = score_gold_split(r.first_hit, g.ranks, ks)
    gold_first = s.recall == "gold-passage"
    names = ("gold-passage recall", "answer recall")
    recalls = (split.gold_recall, r.recall)
    if not gold_first:
        names, recalls = names[::-1], recalls[::-1]
    rows = [(f"top-{k}", recalls[0][k], recalls[1][k], split.hits[k][GOLD],
             split.hits[k][COINCIDENCE], split.hits[k][GOLD_UNKNOWN]) for k in ks]
    warnings = [*result_warnings(r), *extra]
    known = [rk is not None for rk in g.ranks]

    def headline() -> dict[str, ItemStats]:
        if gold_first:
            first = np.array([f if f is not None else np.inf for f in split.first_gold])
            weight = np.array(known, dtype=float)
            # sums of [found, known]: the ratio is recall over the gold-known questions
            return {f"top-{k}": ItemStats(np.stack([(first <= k) * weight, weight], axis=1),
                                          empty_column=1) for k in ks}
        first = np.array([h if h is not None else np.inf for h in r.first_hit], dtype=float)
        return {f"top-{k}": ItemStats.of((first <= k).astype(float)) for k in ks}

    items = [{"question": q, "first_hit": hit, "first_gold": fg, "gold_known": kn,
              "first_hit_kind": kind}
             for q, hit, fg, kn, kind in zip(scored, r.first_hit, split.first_gold, known,
                                              split.kind, strict=True)]
    n = r.num_questions
    return Result(
        task="retrieval",
        title="Top-k " + ("gold-passage" if gold_first else "answer") + " recall, and which "
        "answer-recall hits are gold passages",
        headers=("top-k", *names, "hits: gold", "hits: coincidence", "hits: gold unknown"),
        rows=rows, signature=mark_signature(r.signature, extra),
        official={"recall": {str(k): v for k, v in recalls[0].items()},
                  "num_questions": n, "gold_known": split.gold_known,
                  "answer_recall": {str(k): v for k, v in r.recall.items()},
                  "gold_passage_recall": {str(k): v for k, v in split.gold_recall.items()},
                  "hits": {str(k): {"gold": h[GOLD], "coincidence": h[COINCIDENCE],
                                    "gold_unknown": h[GOLD_UNKNOWN]}
                           for k, h in split.hits.items()},
                  "qrels": {"questions": len(qrels.gold), "passages": len(qrels.docids)}},
        items=items, item_key="question",
        coverage=Coverage(len(scored) - len(missing), len(scored)),
        show_coverage=False, headline=headline, warnings=warnings,
        notes=[f"questions: {n:,}; gold passage known for {split.gold_known:,} (gold-passage "
               f"recall is over these); hits: questions whose first answer-bearing passage "
               f"within k is a gold passage / is not (coincidence) / has no known gold"])


TASK = TASKS.add("retrieval", Task(
    name="retrieval", help="top-k answer recall of retrieval results (DPR has_answer)",
    description="Top-k answer recall of DPR-style results [{question, answers, ctxs: [{id, "
    "title, text, score}]}]: a question counts at k when one of its first k passages "
    "contains an answer's token sequence (DPR simple tokenizer, NFD, lower-cased). "
    "Contexts are taken in file order.",
    score=score, params=PARAMS, settings_type=RetrievalSettings, gold_required=False,
    predictions_required=True,  # or the old positional, resolved before the check
    gold_help="optional questions and answers (DPR .qa.tsv or NQ-open JSONL); default: the "
    "answers inside the results",
    predictions_help="retrieval results JSON (DPR dense_retriever output)",
    headline=tuple(f"top-{k}" for k in DEFAULT_CUTOFFS), headline_from_result=True,
    deprecated_positional="predictions",
))
