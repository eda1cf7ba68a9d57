"""The retrieval-run view of ``nqkit browse --task retrieval`` (an
:class:`~nqkit.browser.open_model.OpenView`; two runs side by side come from
:class:`~nqkit.browser.open_model.PairView`).

Index: the recall summary and signature of ``nqkit eval retrieval`` for the same inputs;
per question the rank of the first passage with an answer and, with ``--qrels``, of the
first gold passage and the kind of the first hit (gold passage / coincidence / gold
unknown, as ``eval retrieval --qrels`` splits them); filters by hit or no hit within each
k, by first-hit rank bucket and, with qrels, by whether the gold passage was retrieved and
by the kind of the first hit; search over the question and its answers.

Question page: the ranked passages with the answer strings highlighted where DPR's
``has_answer`` finds them (``<mark>`` built by :func:`nqkit.browser.render.mark_spans`
from the character spans of :meth:`~nqkit.browser.run_model.RetrievalRun.passages_of`,
every character of the passage escaped), the gold passages marked, the first hit marked.

The key of a question (shown as "qid N", its page ``/qid/N``) is its TREC query id, the
number the run and the qrels give it: ``--first-qid`` (0 by default) + its 0-based line in
``--gold`` (:func:`~nqkit.browser.run_model.question_qids`); the rows are in the order
``nqkit eval retrieval --per-item`` lists the questions (the order of the results; of the
questions file for a TREC run), the order ``nqkit compare retrieval`` pairs two runs in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from markupsafe import Markup

from nqkit.browser.open_model import Column, Filter, OpenRow, OpenView, summary_of
from nqkit.browser.render import mark_spans
from nqkit.browser.run_model import HIT_KINDS, RetrievalRun, load_run, rank_buckets
from nqkit.errors import InputError
from nqkit.metrics.gold_recall import COINCIDENCE, GOLD, GOLD_UNKNOWN
from nqkit.vocabulary import DEFAULT_CUTOFFS

__all__ = ["headline_metric", "load_retrieval_view"]

NO_HIT = "none"
GOLD_FOUND = {"found": "retrieved", "missed": "not retrieved", "unknown": "not known"}


def headline_metric(ks: tuple[int, ...]) -> str:
    """The metric the side-by-side view orders the questions that differ by first (it
    compares every cut-off): top-20 answer recall (DPR's headline, Karpukhin et al.
    2020, Table 2) when 20 is a cut-off, else the largest k."""
    return "top-20" if 20 in ks else f"top-{ks[-1]}"


class _PassageList:
    """The ranked passages of one question as HTML, built once per page prefix of their
    anchors ("" alone, "a" / "b" side by side) and kept with the question's details: a
    list of 100 passages costs a few milliseconds to build, a cached one nothing.

    Every string of the run is escaped here (titles and ids by :func:`html.escape`, texts
    by :func:`~nqkit.browser.render.mark_spans`, whose only markup is its own marks); the
    rest is the fixed markup of the page.
    """

    def __init__(self, shown: list[dict[str, Any]], depth: int) -> None:
        self.shown, self.depth = shown, depth
        self.built: dict[str, Markup] = {}

    def __call__(self, side: str = "") -> Markup:
        if side not in ("", "a", "b"):
            raise ValueError(f"not a side of the page: {side!r}")
        out = self.built.get(side)
        if out is None:
            out = self.built[side] = Markup("".join(self._item(p, side) for p in self.shown))
        return out

    def _item(self, p: dict[str, Any], side: str) -> str:
        from html import escape

        cls = "".join(c for c, on in ((" has", p["has_answer"]), (" gold", p["is_gold"]),
                                      (" beyond", not p["counted"])) if on)
        badges = []
        if p["first"]:
            badges.append('<span class="oc oc-firsthit">first hit</span>')
        if p["is_gold"]:
            badges.append('<span class="oc oc-gold-passage">gold passage</span>')
        if p["has_answer"] and not p["first"]:
            badges.append('<span class="oc oc-answer">answer</span>')
        if not p["counted"]:
            badges.append(f'<span class="dim small">beyond top {self.depth}: not counted'
                          "</span>")
        score = "" if p["score"] is None else f' <span class="score">{p["score"]:.4f}</span>'
        return (f'<li class="psg{cls}" id="{side}r{p["rank"]}" data-rank="{p["rank"]}">'
                f'<div class="phead"><span class="rank">{p["rank"]}</span> '
                f'<span class="ptitle">{escape(p["title"])}</span> {" ".join(badges)} '
                f'<span class="pid id">{escape(p["id"])}</span>{score}</div>'
                f'<div class="ptext">{p["html"]}</div></li>')


def _load(predictions: str, allow_missing: bool | None, **settings: Any) -> RetrievalRun:
    """The run scored as ``nqkit eval retrieval`` scores it; ``allow_missing=None``: without
    ``--allow-missing`` first, so that when every question has results the policy, and so
    the signature, is the command's default (as the other views do)."""
    if allow_missing is not None:
        return load_run(predictions, allow_missing=allow_missing, **settings)
    try:
        return load_run(predictions, **settings)
    except InputError as first:
        if "--allow-missing" not in first.fix:
            raise
        try:
            return load_run(predictions, allow_missing=True, **settings)
        except InputError:
            raise first from None


def load_retrieval_view(gold: Any, predictions: str, *, passages: str | None = None,
                        qrels: str | None = None, first_qid: int = 0,
                        topk: list[int] | None = None, allow_missing: bool | None = None,
                        ) -> OpenView:
    """A retrieval run (DPR results JSON, or a TREC run with ``passages``) over the
    questions and answers of ``gold``, scored by ``nqkit eval retrieval``'s code."""
    run = _load(predictions, allow_missing, gold=gold, passages=passages, qrels=qrels,
                first_qid=first_qid, topk=topk or list(DEFAULT_CUTOFFS))
    ks = run.ks
    buckets = rank_buckets(ks)
    rows: list[OpenRow] = []
    for q in run.questions:
        hit = q.first_hit
        tags = {f"top{k}": "hit" if q.hit_within(k) else "miss" for k in ks}
        tags["first"] = NO_HIT if hit is None else next(
            label for label, low, high in buckets if low <= hit <= high)
        values: dict[str, Any] = {f"top-{k}": 1.0 if q.hit_within(k) else 0.0 for k in ks}
        values["first_hit"] = hit
        if run.has_qrels:
            values["first_gold"] = q.first_gold
            tags["gold"] = ("unknown" if q.gold is None else
                            "found" if q.first_gold is not None else "missed")
            tags["kind"] = HIT_KINDS[q.hit_kind] if q.hit_kind else ""
        rows.append(OpenRow(key=q.qid, position=q.position, question=q.question,
                            values=values, tags=tags, search=q.search_text,
                            cells={"answers": " | ".join(q.answers)}))

    def detail(row: OpenRow) -> dict[str, Any]:
        q = run.questions[row.position]
        shown = []
        for v in run.passages_of(q):
            shown.append({"rank": v.rank, "id": v.passage.id, "title": v.passage.title,
                          "html": Markup(mark_spans(v.passage.text, v.spans)),
                          "score": v.score, "has_answer": v.has_answer,
                          "is_gold": v.is_gold, "counted": v.counted,
                          "first": v.rank == q.first_hit})
        return {"answers": list(q.answers), "first_hit": q.first_hit,
                "first_gold": q.first_gold, "kind": HIT_KINDS.get(q.hit_kind or "", ""),
                "gold_known": None if not run.has_qrels else q.gold is not None,
                "num_gold": len(q.gold or ()), "passages": shown, "depth": run.depth,
                "with_answer": sum(1 for p in shown if p["has_answer"] and p["counted"]),
                "answer_ranks": [p["rank"] for p in shown if p["has_answer"]],
                "gold_ranks": [p["rank"] for p in shown if p["is_gold"]],
                "signature": run.signature, "passage_list": _PassageList(shown, run.depth)}

    metric = headline_metric(ks)

    filters = [Filter(f"top{k}", f"top-{k}", (("hit", "answer found"),
                                               ("miss", "no answer")))
               for k in ks]
    filters.append(Filter("first", "first hit at rank",
                          (*((label, label) for label, _, _ in buckets),
                           (NO_HIT, f"none in the top {ks[-1]}"))))
    columns = [Column("answers", "gold answers", "cell", sortable=False),
               Column("first_hit", "first hit")]
    if run.has_qrels:
        filters.append(Filter("gold", "gold passage", tuple(GOLD_FOUND.items())))
        filters.append(Filter("kind", "first hit is", tuple(
            (HIT_KINDS[k], HIT_KINDS[k]) for k in (GOLD, COINCIDENCE, GOLD_UNKNOWN))))
        columns += [Column("first_gold", "first gold"), Column("kind", "first hit is",
                                                                "verdict")]
    return OpenView(
        task="retrieval", title="retrieval run", name=Path(predictions).name, rows=rows,
        summary=summary_of(run.result, run.eval_command), detail=detail,
        template="open_retrieval.html", filters=tuple(filters), columns=tuple(columns),
        headline=metric, metric=metric, headline_stats=run.result.headline_stats,
        result=run.result,
        allow_missing="--allow-missing" in run.eval_args,
        search_hint="Search questions or answers")
