"""What the open-domain views of ``nqkit browse`` show: rows, filters, queries, summaries.

A view (:class:`OpenView`) is everything the index and the question pages need of one
kind of file, computed once at load: one :class:`OpenRow` per gold item (its key, the
question, the per-item headline values, the filter tags and the text searched), the
filters and sorts it offers, the :class:`Summary` on top of the index (the headline
metrics and the signature exactly as ``nqkit eval TASK`` prints them), and, for one row,
the context of its question page and the template fragment that shows it.

:class:`PairView` puts two views of the same task over the same gold side by side: the
items where the systems differ first, ordered by how much each changes the headline metric,
and the paired test of the whole set (from ``nqkit compare``) on top. It is built from
any two views, so every view gets it.

Nothing here renders HTML: every string is data, escaped by the templates.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nqkit.browser.model import PAGE_SIZE
from nqkit.errors import InputError

__all__ = [
    "PAGE_SIZE",
    "Column",
    "Filter",
    "JudgedPair",
    "OpenQuery",
    "OpenRow",
    "OpenView",
    "PairView",
    "Summary",
    "summary_of",
]


@dataclass
class OpenRow:
    """One gold item as the index lists it."""

    key: str  # its id in its files, and its address /qid/KEY (see OpenView.key_label)
    position: int  # in gold order, from 0
    question: str
    values: dict[str, float | None] = field(default_factory=dict)  # per-item headline values
    tags: dict[str, str] = field(default_factory=dict)  # filter name -> this item's value
    search: str = ""  # lower-cased text the search box looks in (question, answers, ...)
    cells: dict[str, str] = field(default_factory=dict)  # short texts the index shows


@dataclass(frozen=True)
class JudgedPair:
    """The verdicts on one question's (question, prediction) pair when people judged it
    (``nqkit browse --judgments``): the human one, the exact match the view shows, and a
    judge's (``--verdicts``) when given; where each disagrees with the human one."""

    answer: str  # the prediction judged, as written (the judgments' "Model answer")
    human: bool  # Acceptable? of the judgments file (the annotators' majority)
    votes: tuple[tuple[str, str], ...]  # the annotators' own votes as written, if any
    exact_match: bool  # the view's verdict on the same prediction (correct: True)
    judge: bool | None  # the judge's verdict; None: no judge given, or none on this pair
    where: str | None = None  # the judgment's file:line

    @property
    def em_disagrees(self) -> bool:
        return self.exact_match != self.human

    @property
    def judge_disagrees(self) -> bool:
        return self.judge is not None and self.judge != self.human


@dataclass(frozen=True)
class Filter:
    """A filter of the index: the URL parameter ``name`` takes one of ``options``."""

    name: str
    label: str
    options: tuple[tuple[str, str], ...]  # (value, label); "" (any) is always allowed

    def allows(self, value: str) -> bool:
        return any(v == value for v, _ in self.options)


@dataclass(frozen=True)
class Column:
    """A column of the index table: a per-item value (``value``) or a text (``cell``)."""

    key: str
    label: str
    kind: str = "value"  # value: row.values[key], a number; cell: row.cells[key], a text;
    # verdict: row.tags[key], shown as a coloured label
    sortable: bool = True


@dataclass
class Summary:
    """The top of the index: the metrics table and the signature as a command prints them.

    ``headers`` and ``rows`` are the command's table, its cells already formatted as the
    command formats them; ``command`` is the command line whose numbers they are.
    """

    title: str
    headers: tuple[str, ...]
    rows: list[tuple[str, ...]]
    signature: str
    command: str
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # more tables under the first: (title, headers, rows), formatted like the first
    tables: list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]] = field(
        default_factory=list)


def summary_of(result: Any, command: str) -> Summary:
    """The summary of a :class:`nqkit.tasks.base.Result`: its table (cells formatted by
    :func:`nqkit.report.fmt_value` with the result's digits, as ``to_table`` prints them),
    its signature, warnings and notes."""
    from nqkit.report import fmt_value

    title = result.title
    if result.coverage is not None and result.show_coverage:
        title += f" ({result.coverage})"
    rows = [tuple(fmt_value(v, result.digits) for v in row) for row in result.rows]
    return Summary(title=title, headers=tuple(result.headers), rows=rows,
                   signature=result.signature, command=command,
                   warnings=[w.message for w in result.warnings],
                   notes=[n for n in result.notes if n.strip() and "\n" not in n])


@dataclass
class OpenView:
    """One kind of file, loaded and scored, as the open-domain browser shows it.

    ``detail(row)`` gives the context of the row's question page; the page includes the
    template ``template`` with that context as ``d`` (and the view as ``view``).
    Every item is named, shown and routed (``/qid/KEY``) by the key its files give it:
    ``key_label`` ``"qid"`` for a numbered view, whose key is the item's TREC query id
    (``--first-qid`` + its 0-based line in the gold, as ``nqkit retrieve --trec`` and
    ``nqkit convert qrels`` number it), ``"id"`` for one whose gold gives ids. Links of the
    earlier ``/item/N`` form (N the 1-based line) find their row in ``old_keys``.
    ``headline`` names the per-item value (a key of ``row.values``) the index shows;
    ``headline_stats`` gives the task Result's per-item statistics of its headline
    metrics (name -> :class:`nqkit.stats.ItemStats`, rows in the order of ``rows``), which
    the side-by-side view compares, ``metric`` first.
    """

    task: str  # the task name of `nqkit eval TASK`
    title: str  # what the page calls the files, e.g. "NQ-open"
    name: str  # the predictions file's name
    rows: list[OpenRow]
    summary: Summary
    detail: Callable[[OpenRow], dict[str, Any]]
    template: str
    filters: tuple[Filter, ...] = ()
    columns: tuple[Column, ...] = ()
    headline: str = ""
    headline_stats: Callable[[], Any] | None = None
    item_word: str = "question"
    search_hint: str = "Search questions or answers"
    # the headline metric's name in `nqkit compare TASK` (a key of the task's headline)
    metric: str = ""
    result: Any = None  # the task's Result (nqkit.tasks.base.Result), for nqkit compare
    allow_missing: bool = False  # scored as `nqkit eval TASK --allow-missing`
    allow_extra: bool = False  # predictions for items not in the gold were left out
    key_label: str = "qid"  # what the key is: "qid" (numbered from 0) or "id" (the gold's)
    # the judged pairs (--judgments) by row key; rows absent are not judged. None: no
    # judgments given
    judged: dict[str, JudgedPair] | None = None
    by_key: dict[str, OpenRow] = field(init=False)
    old_keys: dict[str, OpenRow] = field(init=False)

    def __post_init__(self) -> None:
        self.by_key = {r.key: r for r in self.rows}
        self.old_keys = old_keys(self.rows, self.key_label)

    # base.html reads these three
    @property
    def has_predictions(self) -> bool:
        return True

    @property
    def predictions_name(self) -> str:
        return self.name

    def sorts(self) -> dict[str, str]:
        out = {"": "gold order", "question": "question"}
        out.update((c.key, c.label) for c in self.columns if c.sortable)
        return out

    def select(self, q: OpenQuery) -> list[OpenRow]:
        """The rows matching the query's search and filters, in its sort order."""
        rows = _matching(self.rows, q)
        if q.sort:
            rows = sorted(rows, key=self._sort_key(q.sort), reverse=q.desc)
        elif q.desc:
            rows = rows[::-1]
        return rows

    def _sort_key(self, key: str) -> Callable[[OpenRow], Any]:
        if key == "question":
            return lambda r: (r.question.lower(), r.position)
        col = next((c for c in self.columns if c.key == key), None)
        if col is not None and col.kind == "value":
            return lambda r: (_num(r.values.get(key)), r.position)
        if col is not None and col.kind == "verdict":
            return lambda r: (r.tags.get(key, ""), r.position)
        return lambda r: (r.cells.get(key, ""), r.position)


def old_keys(rows: Sequence[OpenRow], key_label: str) -> dict[str, OpenRow]:
    """The rows by the keys of their earlier ``/item/KEY`` links: a numbered view's were
    the 1-based line (now the 0-based qid), an id's were the id itself."""
    if key_label == "qid":
        return {str(r.position + 1): r for r in rows}
    return {r.key: r for r in rows}


def _matching(rows: list[OpenRow], q: OpenQuery) -> list[OpenRow]:
    """The rows the query's search and filters keep, in their order: a search that is a
    row's key finds that row; otherwise the rows whose search text contains it."""
    if q.q:
        exact = [r for r in rows if r.key == q.q]
        needle = q.q.lower()
        rows = exact or [r for r in rows if needle in r.search]
    for name, value in q.filters.items():
        rows = [r for r in rows if r.tags.get(name) == value]
    return rows


def _num(v: float | None) -> float:
    return float("-inf") if v is None else v


@dataclass
class OpenQuery:
    """The index page's request: search, the view's filters, sort and page (all from the
    URL; unknown parameters and values are ignored)."""

    q: str = ""
    filters: dict[str, str] = field(default_factory=dict)
    sort: str = ""
    desc: bool = False
    page: int = 1

    @classmethod
    def from_params(cls, params: Mapping[str, str], view: OpenView | PairView) -> OpenQuery:
        try:
            page = max(1, min(10**6, int(params.get("page", "1"))))
        except ValueError:
            page = 1
        filters = {f.name: params[f.name] for f in view.filters
                   if params.get(f.name) and f.allows(params[f.name])}
        sort = params.get("sort", "")
        return cls(q=params.get("q", "")[:200].strip(), filters=filters,
                   sort=sort if sort in view.sorts() else "",
                   desc=params.get("desc", "") in ("1", "true", "on"), page=page)

    def params(self, **changes: Any) -> dict[str, str]:
        """The non-default parameters, with ``changes`` applied (for links)."""
        d: dict[str, Any] = {"q": self.q, **self.filters, "sort": self.sort,
                             "desc": "1" if self.desc else "", "page": self.page}
        d.update(changes)
        out = {k: str(v) for k, v in d.items() if v not in ("", None)}
        if out.get("page") == "1":
            del out["page"]
        return out

    def link(self, **changes: Any) -> str:
        return "/?" + urllib.parse.urlencode(self.params(**changes))

    @property
    def filtered(self) -> bool:
        return bool(self.q or self.filters)

    def cache_key(self) -> tuple[Any, ...]:
        return (self.q, tuple(sorted(self.filters.items())), self.sort, self.desc)


# ------------------------------------------------------------------- side by side

CHANGE_FILTER = Filter("change", "B against A", (
    ("b-better", "B better"), ("a-better", "A better"), ("differ", "differ, no change"),
    ("same", "same"),
))
DIFFERS_FILTER = Filter("differs", "systems", (("differ", "differ"), ("same", "the same")))


class PairView:
    """Two views of one task over the same gold items, side by side.

    For every headline metric of the task (the ones ``nqkit compare`` tests) each row
    carries both systems' per-item values and ``delta``: the change of A's score when
    this item's statistics are B's instead of A's (for a mean, ``(b_i - a_i) / n``).
    By default the rows where the systems differ in any headline metric come first,
    ordered by ``|delta|`` of the first metric, largest first; a sort per metric orders
    by its own change. Filters: how B fares against A on the first metric, and each
    view's own filters for A and for B.
    """

    item_word = "question"

    def __init__(self, a: OpenView, b: OpenView, comparison: Summary) -> None:
        import numpy as np

        from nqkit.tasks.base import get_task

        if [r.key for r in a.rows] != [r.key for r in b.rows]:
            raise InputError(None, "the two prediction files were scored on different gold "
                             "items", "give both the same gold and settings")
        if a.headline_stats is None or b.headline_stats is None:
            raise InputError(None, f"the {a.title} view has no per-item statistics to compare",
                             "browse one predictions file at a time")
        self.a, self.b, self.comparison = a, b, comparison
        self.task, self.title, self.key_label = a.task, a.title, a.key_label
        self.template = "open_pair_item.html"
        self.search_hint = a.search_hint
        sa, sb = a.headline_stats(), b.headline_stats()
        # the metrics nqkit compare tests, in its order, the view's own first
        names = get_task(a.task).tested_metrics(sa, sb)
        if not names:  # the two views share no headline metric
            raise InputError(None, f"nqkit compare {a.task} finds no metric both systems "
                             f"have ({', '.join(sa)} against {', '.join(sb)})",
                             "give both the same settings")
        self.metrics = [m for m in names if m == a.metric] + \
            [m for m in names if m != a.metric]
        n = len(a.rows)
        deltas, values_a, values_b = {}, {}, {}
        differs = np.zeros(n, dtype=bool)
        for m in self.metrics:
            ia, ib = sa[m], sb[m]
            total = ia.rows.sum(axis=0)
            swapped = np.asarray(ia.compute(total[None, :] - ia.rows + ib.rows), dtype=float)
            diff = np.any(ia.rows != ib.rows, axis=1)
            differs |= diff
            deltas[m] = np.where(diff, swapped - float(ia.compute(total)), 0.0)
            values_a[m], values_b[m] = _item_values(ia), _item_values(ib)
        first = self.metrics[0]
        self.rows: list[OpenRow] = []
        for i, (ra, rb) in enumerate(zip(a.rows, b.rows, strict=True)):
            d = float(deltas[first][i])
            change = ("same" if not differs[i] else "b-better" if d > 0
                      else "a-better" if d < 0 else "differ")
            tags = {"change": change, "differs": "differ" if differs[i] else "same",
                    **{f"a_{k}": v for k, v in ra.tags.items()},
                    **{f"b_{k}": v for k, v in rb.tags.items()}}
            values: dict[str, float | None] = {}
            for m in self.metrics:
                values[f"a|{m}"] = values_a[m][i]
                values[f"b|{m}"] = values_b[m][i]
                values[f"d|{m}"] = float(deltas[m][i])
            self.rows.append(OpenRow(
                key=ra.key, position=ra.position, question=ra.question, values=values,
                tags=tags, search=ra.search + "\n" + rb.search,
                cells={"differs": "1" if differs[i] else ""}))
        self.by_key = {r.key: r for r in self.rows}
        self.old_keys = old_keys(self.rows, self.key_label)
        self.filters = (
            DIFFERS_FILTER,
            Filter("change", f"B against A ({first})", CHANGE_FILTER.options),
            *(Filter(f"a_{f.name}", f"A {f.label}", f.options) for f in a.filters),
            *(Filter(f"b_{f.name}", f"B {f.label}", f.options) for f in b.filters))
        self.num_differ = int(differs.sum())

    # base.html reads these three
    @property
    def has_predictions(self) -> bool:
        return True

    @property
    def predictions_name(self) -> str:
        return f"A = {self.a.name}, B = {self.b.name}"

    @property
    def name(self) -> str:
        return self.predictions_name

    def sorts(self) -> dict[str, str]:
        out = {"": f"largest change of {self.metrics[0]} first"}
        out.update((f"change{k}", f"largest change of {m} first")
                   for k, m in enumerate(self.metrics[1:], 1))
        out.update({"position": "gold order", "question": "question", "a": "A", "b": "B",
                    "delta": "B - A"})
        return out

    def shown_metric(self, q: OpenQuery) -> str:
        """The metric whose values the index shows: the one sorted by, else the first."""
        if q.sort.startswith("change") and q.sort[6:].isdigit():
            return self.metrics[int(q.sort[6:])]
        return self.metrics[0]

    def select(self, q: OpenQuery) -> list[OpenRow]:
        rows = _matching(self.rows, q)
        m = self.shown_metric(q)
        if q.sort in ("", *(f"change{k}" for k in range(1, len(self.metrics)))):
            return sorted(rows, key=lambda r: (not r.cells["differs"],
                                               -abs(_num(r.values[f"d|{m}"])), r.position),
                          reverse=q.desc)
        keys: dict[str, Callable[[OpenRow], Any]] = {
            "position": lambda r: r.position,
            "question": lambda r: (r.question.lower(), r.position),
            "a": lambda r: (_num(r.values[f"a|{m}"]), r.position),
            "b": lambda r: (_num(r.values[f"b|{m}"]), r.position),
            "delta": lambda r: (_num(r.values[f"d|{m}"]), r.position),
        }
        return sorted(rows, key=keys[q.sort], reverse=q.desc)

    def detail(self, row: OpenRow) -> dict[str, Any]:
        return {"a": self.a.detail(self.a.by_key[row.key]),
                "b": self.b.detail(self.b.by_key[row.key]),
                "row_a": self.a.by_key[row.key], "row_b": self.b.by_key[row.key]}


def _item_values(stats: Any) -> list[float | None]:
    """Each item's own value of a mean metric (rows ``[score, weight]``: score / weight;
    None where the item does not count, weight 0, e.g. a single-answer question in a
    multi-only mean); None for every item of any other kind of metric."""
    from nqkit.stats import mean_score

    rows = stats.rows
    if stats.compute is not mean_score or rows.shape[1] != 2:
        return [None] * len(rows)
    return [float(s / w) if w else None for s, w in rows.tolist()]


def neighbours(rows: Sequence[OpenRow], row: OpenRow) -> tuple[int | None, OpenRow | None,
                                                                 OpenRow | None]:
    """The 1-based position of ``row`` among ``rows`` and the rows before and after it."""
    for i, r in enumerate(rows):
        if r is row:
            return (i + 1, rows[i - 1] if i > 0 else None,
                    rows[i + 1] if i + 1 < len(rows) else None)
    return None, None, None
