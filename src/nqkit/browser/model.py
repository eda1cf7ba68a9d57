"""What the browser knows about a dataset: summaries, gold labels, prediction outcomes, queries.

Outcomes come from the official evaluation (:func:`nqkit.metrics.nq.evaluate_nq`, the
code behind ``nqkit eval nq``), read at the overall best-F1 threshold — the operating point
the metric reports — so the labels add up to the precision and recall shown on top:

* **correct** — a prediction at or above the threshold that the official rules accept;
* **wrong** — a prediction at or above the threshold, the gold has an answer, no match;
* **false positive** — a prediction at or above the threshold where the gold has none;
* **missed** — the gold has an answer but there is no prediction at or above the threshold;
* **null** — neither the gold nor the (thresholded) prediction has an answer.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nqkit.analysis.nq_breakdown import question_word
from nqkit.browser.example_store import ExampleStore, ExampleSummary, open_store
from nqkit.formats.nq import Span
from nqkit.formats.nq_predictions import NqPrediction, read_nq_predictions
from nqkit.io import PathsLike
from nqkit.metrics.nq import AnswerStat, NqResult, gold_has_long, gold_has_short
from nqkit.tasks.nq import gold_label, score_predictions

OUTCOMES: tuple[str, ...] = ("correct", "wrong", "missed", "false positive", "null")
GOLD_FILTERS: dict[str, str] = {
    "": "any gold",
    "long": "has long answer",
    "short": "has short answer",
    "yesno": "yes/no answer",
    "nolong": "no long answer (null)",
    "long-noshort": "long but no short",
}
SORTS: dict[str, str] = {
    "": "file order",
    "id": "example id",
    "question": "question",
    "title": "title",
    "type": "long-answer type",
    "agree": "long-answer agreement",
    "long_score": "long score",
    "short_score": "short score",
}
PAGE_SIZE = 50
THRESHOLD = 2  # the official >=2-of-5 rule


def outcome(stat: AnswerStat, threshold: float) -> str:
    """The label of one example's prediction for one task at ``threshold``."""
    predicted = stat.pred_has_answer and stat.score >= threshold
    if predicted and stat.is_correct:
        return "correct"
    if predicted:
        return "wrong" if stat.gold_has_answer else "false positive"
    return "missed" if stat.gold_has_answer else "null"


@dataclass
class Row:
    """One example as the index page lists it."""

    summary: ExampleSummary
    position: int  # in file order over all shards
    has_long: bool
    has_short: bool
    yes_no: str  # YES / NO when >= 2 annotators answered yes/no alike, else ""
    long_type: str  # gold long-answer type, or "null"
    long_given: int  # annotators with a non-null long answer (the official rule counts them)
    word: str  # question word
    # The long answer most annotators chose (the gold long answer the example page shows):
    # how many chose it, how many different long answers were chosen that often, its type.
    long_top: int = 0
    long_top_ties: int = 0
    long_top_type: str = ""
    short_given: int = 0  # annotators with a short answer (spans or yes/no)
    yes_no_given: int = 0  # annotators who answered ``yes_no``
    long_outcome: str = ""
    short_outcome: str = ""
    long_score: float | None = None
    short_score: float | None = None

    @property
    def short_span_text(self) -> str:
        """The text of the gold short answer most annotators gave, when the gold has a
        short answer that is not YES/NO; "" when there is none or the most common one is
        a single annotator's yes/no (then no span text stands for the gold)."""
        if not self.has_short or self.yes_no:
            return ""
        text = self.summary.short_text
        if any(a.yes_no_answer == text for a in self.summary.annotations):
            return ""
        return text


@dataclass
class Query:
    """The index page's request: search, filters, sort and page (all from the URL)."""

    q: str = ""
    gold: str = ""
    type: str = ""
    word: str = ""
    long: str = ""
    short: str = ""
    sort: str = ""
    desc: bool = False
    page: int = 1

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Query:
        def pick(key: str, allowed: Any) -> str:
            v = params.get(key, "")
            return v if v in allowed else ""

        try:
            page = max(1, min(10**6, int(params.get("page", "1"))))
        except ValueError:
            page = 1
        return cls(
            q=params.get("q", "")[:200].strip(),
            gold=pick("gold", GOLD_FILTERS),
            type=pick("type", (*_TYPES, "null")),
            word=pick("word", _WORDS),
            long=pick("long", OUTCOMES),
            short=pick("short", OUTCOMES),
            sort=pick("sort", SORTS),
            desc=params.get("desc", "") in ("1", "true", "on"),
            page=page,
        )

    def params(self, **changes: Any) -> dict[str, str]:
        """The non-default parameters, with ``changes`` applied (for links)."""
        d: dict[str, Any] = {"q": self.q, "gold": self.gold, "type": self.type,
                             "word": self.word, "long": self.long, "short": self.short,
                             "sort": self.sort, "desc": "1" if self.desc else "",
                             "page": self.page}
        d.update(changes)
        out = {k: str(v) for k, v in d.items() if v not in ("", None)}
        if out.get("page") == "1":
            del out["page"]
        return out

    @property
    def filtered(self) -> bool:
        return any((self.q, self.gold, self.type, self.word, self.long, self.short))


_TYPES = ("paragraph", "table", "table row", "list", "list item", "other")
_WORDS = ("who", "when", "where", "what", "how", "which", "other")


@dataclass
class Dataset:
    """The loaded examples and, optionally, one system's predictions scored on them."""

    store: ExampleStore
    predictions: dict[int | str, NqPrediction] = field(default_factory=dict)
    predictions_name: str = ""
    result: NqResult | None = None
    extra_predictions: int = 0
    # the flags ``nqkit eval nq`` needs to score these files as the browser does
    eval_flags: tuple[str, ...] = ()
    rows: list[Row] = field(default_factory=list)
    types: tuple[str, ...] = _TYPES
    words: tuple[str, ...] = _WORDS

    def __post_init__(self) -> None:
        stats: dict[int | str, tuple[AnswerStat, AnswerStat]] = {}
        lthr = sthr = 0.0
        if self.result is not None:
            r = self.result
            stats = {i: (lst, sst) for i, lst, sst in
                     zip(r.example_ids, r.long_stats, r.short_stats, strict=True)}
            lthr, sthr = r.long.best_threshold, r.short.best_threshold
        for pos, s in enumerate(self.store.summaries):
            anns = s.annotations
            yn = [a.yes_no_answer for a in anns if a.yes_no_answer != "NONE"]
            yes_no = next((v for v in ("YES", "NO") if yn.count(v) >= THRESHOLD), "")
            row = Row(s, pos, gold_has_long(anns, THRESHOLD), gold_has_short(anns, THRESHOLD),
                      yes_no, s.gold().long_type(THRESHOLD) or "null",
                      sum(a.has_long for a in anns), question_word(s.question),
                      short_given=sum(a.has_short for a in anns),
                      yes_no_given=yn.count(yes_no) if yes_no else 0)
            longs = Counter(span_key(a.long_answer) for a in anns if a.has_long)
            if longs:
                top = longs.most_common(1)[0]
                row.long_top = top[1]
                row.long_top_ties = sum(1 for c in longs.values() if c == top[1])
                row.long_top_type = next(
                    (t for a, t in zip(anns, s.long_types, strict=False)
                     if a.has_long and span_key(a.long_answer) == top[0] and t), "")
            if s.example_id in stats:
                lst, sst = stats[s.example_id]
                row.long_outcome, row.short_outcome = outcome(lst, lthr), outcome(sst, sthr)
                pred = self.predictions.get(s.example_id)
                if pred is not None:
                    row.long_score, row.short_score = pred.long_answer_score, \
                        pred.short_answers_score
            self.rows.append(row)
        self.by_id = {r.summary.example_id: r for r in self.rows}

    @property
    def has_predictions(self) -> bool:
        return self.result is not None

    def outcome_counts(self) -> dict[str, dict[str, int]]:
        counts = {t: dict.fromkeys(OUTCOMES, 0) for t in ("long", "short")}
        for r in self.rows:
            if r.long_outcome:
                counts["long"][r.long_outcome] += 1
                counts["short"][r.short_outcome] += 1
        return counts

    def select(self, q: Query) -> list[Row]:
        """The rows matching the query's search and filters, in its sort order."""
        rows = self.rows
        if q.q:
            needle = q.q.lower()
            exact = [r for r in rows if str(r.summary.example_id) == q.q]
            rows = exact or [r for r in rows if needle in r.summary.question.lower()
                             or needle in r.summary.title.lower()]
        if q.gold:
            rows = [r for r in rows if _gold_match(r, q.gold)]
        if q.type:
            rows = [r for r in rows if r.long_type == q.type]
        if q.word:
            rows = [r for r in rows if r.word == q.word]
        if q.long:
            rows = [r for r in rows if r.long_outcome == q.long]
        if q.short:
            rows = [r for r in rows if r.short_outcome == q.short]
        if q.sort:
            rows = sorted(rows, key=_SORT_KEYS[q.sort], reverse=q.desc)
        elif q.desc:
            rows = rows[::-1]
        return rows


def span_key(s: Span) -> tuple[int, int, int, int]:
    return (s.start_byte, s.end_byte, s.start_token, s.end_token)


def long_agreement(r: Row) -> str:
    """What the annotator count next to the gold long answer means, in words.

    ``k of n``: of all ``n`` annotators of the example, the ``k`` who chose the long
    answer most annotators chose (the gold long answer the example page shows), or, when
    there is no gold long answer, the ``k`` who gave any long answer.
    """
    n = len(r.summary.annotations)
    if not r.has_long:
        text = f"{r.long_given} of {n} annotators gave a long answer"
        return text + (f"; at least {THRESHOLD} needed" if r.long_given else "")
    others = r.long_given - r.long_top * r.long_top_ties
    none = n - r.long_given
    if r.long_top_ties == 1:
        text = f"{r.long_top} of {n} annotators chose this {r.long_top_type or 'candidate'}"
    else:
        text = (f"{r.long_top_ties} different candidates chosen by {r.long_top} of {n} "
                "annotators each")
    rest = []
    if others:
        rest.append(f"{others} chose {'another candidate' if others == 1 else 'others'}")
    if none:
        rest.append(f"{none} gave no long answer")
    return text + ("; " + ", ".join(rest) if rest else "")


def short_agreement(r: Row) -> str:
    """The annotator count next to the gold short answer, in words (``k of n``: of all
    ``n`` annotators, the ``k`` who answered the gold's YES/NO, else those who gave any
    short answer: spans or yes/no, as the official rule counts them)."""
    n = len(r.summary.annotations)
    if r.yes_no:
        return f"{r.yes_no_given} of {n} annotators answered {r.yes_no}"
    text = f"{r.short_given} of {n} annotators gave a short answer"
    if not r.has_short and r.short_given:
        text += f"; at least {THRESHOLD} needed"
    return text


def _gold_match(r: Row, f: str) -> bool:
    return {"long": r.has_long, "short": r.has_short, "yesno": bool(r.yes_no),
            "nolong": not r.has_long, "long-noshort": r.has_long and not r.has_short}[f]


def _id_key(r: Row) -> tuple[int, Any]:
    i = r.summary.example_id
    return (0, i) if isinstance(i, int) else (1, str(i))


def _score_key(v: float | None) -> float:
    return float("-inf") if v is None else v


_SORT_KEYS: dict[str, Any] = {
    "id": _id_key,
    "question": lambda r: r.summary.question.lower(),
    "title": lambda r: r.summary.title.lower(),
    "type": lambda r: (r.long_type, r.position),
    "agree": lambda r: (r.long_top, r.long_given, r.position),
    "long_score": lambda r: (_score_key(r.long_score), r.position),
    "short_score": lambda r: (_score_key(r.short_score), r.position),
}


def load_dataset(gold: PathsLike, predictions: str | None = None, *,
                 cache_dir: str | os.PathLike[str] | None = None, workers: int | None = None,
                 progress: bool = True) -> Dataset:
    """Open the store of the gold files (building it once) and score the predictions.

    Predictions are read, validated and scored by the code of ``nqkit eval nq`` (same
    errors, same numbers, same signature). Where that command would refuse the files, the
    browser scores them as ``nqkit eval nq`` does with the flag that accepts them, and
    shows that flag: examples without a prediction are scored as null
    (``--allow-missing``, marked ``missing:null`` in the signature) and predictions for
    ids outside the loaded files are ignored and counted (``--allow-extra``), so a subset
    of shards can be browsed with a prediction file for the whole set. When every example
    has a prediction and every prediction an example, the policy is the command's
    default, and so is the signature.
    """
    store = open_store(gold, cache_dir=cache_dir, workers=workers, progress=progress)
    if predictions is None:
        return Dataset(store)
    preds = read_nq_predictions(predictions)
    gold_ex = {s.example_id: s.gold() for s in store.summaries}
    allow_missing = any(i not in preds for i in gold_ex)
    extra = sum(1 for i in preds if i not in gold_ex)
    result = score_predictions(gold_ex, preds, predictions, allow_missing=allow_missing,
                               allow_extra=bool(extra), gold_where=gold_label(gold))
    flags = tuple(f for f, on in (("--allow-missing", allow_missing),
                                  ("--allow-extra", bool(extra))) if on)
    return Dataset(store, preds, Path(predictions).name, result, extra, eval_flags=flags)
