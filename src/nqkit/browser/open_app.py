"""The open-domain views of ``nqkit browse`` (``--task nq-open``, ``ambigqa``, ...).

One app serves one view (:class:`~nqkit.browser.open_model.OpenView`) or two side by side
(:class:`~nqkit.browser.open_model.PairView`): an index with the summary (the headline
metrics and the signature exactly as ``nqkit eval TASK`` prints them; for two systems the
paired test exactly as ``nqkit compare TASK`` prints it), filters, search, sort and pages,
all in the URL (links can be shared); one page per question (``/qid/KEY``, KEY the id
its files give it: :attr:`~nqkit.browser.open_model.OpenView.key_label`) with
next/previous following the filter; earlier ``/item/N`` links redirect there; a 404 page
with a search box.

The security of the NQ browser applies unchanged, from the same code
(:func:`nqkit.browser.app.app_shell`): the ``Host`` guard against DNS rebinding, the
strict Content-Security-Policy (scripts only from ``/static``, none inline), HEAD on every
route, 127.0.0.1 by default. Every string from the data (questions, answers, predictions)
is template text, autoescaped; no template marks data ``|safe``.

How a view plugs in (the NQ-open and AmbigQA views are examples:
:mod:`nqkit.browser.open_views`):

1. Write a loader ``load_<task>_view(gold, predictions, ...) -> OpenView`` that scores the
   predictions with the task's own code (``get_task(TASK).run(...)``, never a copy of a
   metric) and builds, once:

   * ``rows``: one :class:`~nqkit.browser.open_model.OpenRow` per gold item, in gold
     order — ``key`` (the item's id in its files and its address, ``/qid/KEY``; unique:
     the TREC qid, ``--first-qid`` + the 0-based line of the gold, for a numbered view;
     the gold's own id with ``key_label="id"``), ``question``,
     ``values`` (the per-item headline number(s), by column key), ``tags`` (filter name ->
     this item's value), ``search`` (lower-cased text the search box looks in), ``cells``
     (short texts for the index);
   * ``summary``: :func:`~nqkit.browser.open_model.summary_of` of the task's Result with
     the command line whose numbers they are (``nqkit eval TASK --allow-missing`` when
     the browser scored with that flag);
   * ``filters`` (:class:`~nqkit.browser.open_model.Filter`: URL parameter, label, allowed
     values) and ``columns`` (:class:`~nqkit.browser.open_model.Column`: the index
     columns, sortable by their value);
   * ``detail(row) -> dict``: everything the question page shows for that row, and
     ``template``: a fragment in ``browser/templates/`` (e.g. ``open_nq_open.html``)
     that renders it, reading ``d`` (the dict) and ``view``. Data strings go in as plain
     strings: the template escapes them;
   * ``headline`` (the key of ``values`` to compare), ``metric`` (its name among the
     task's headline metrics) and ``headline_stats`` (a function returning the task
     Result's ``headline_stats()[metric]``): with these the side-by-side view
     (:class:`~nqkit.browser.open_model.PairView`) works for the view without more code.

2. Register the loader in :data:`nqkit.browser.open_views.LOADERS` under the task name
   (what ``nqkit browse --task NAME`` accepts) and describe the task's gold in
   :func:`nqkit.browser.open_views.sniff_gold` if it has a recognisable shape.

3. Add the view's pages to the tests (``tests/test_browser_open.py``: numbers against
   ``nqkit eval TASK`` run as a command, the hostile-data test) and to docs/browser.md.
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Iterable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from nqkit.browser.app import GET_HEAD, _Lru, app_shell
from nqkit.browser.open_model import (
    PAGE_SIZE,
    OpenQuery,
    OpenRow,
    OpenView,
    PairView,
    neighbours,
)

__all__ = ["create_open_app", "item_url"]


def item_url(row: OpenRow, params: dict[str, str]) -> str:
    """The question page of ``row``, keeping the index's search and filters."""
    qs = urllib.parse.urlencode(params)
    return "/qid/" + urllib.parse.quote(row.key, safe="") + (f"?{qs}" if qs else "")


def create_open_app(view: OpenView | PairView, *, host: str = "127.0.0.1", port: int = 8080,
                    allow_hosts: Iterable[str] = ()) -> FastAPI:
    """The web app over one loaded view (or two side by side), served on ``host``:``port``
    (the ``Host`` headers it answers: :func:`nqkit.browser.app.allowed_hosts`)."""
    pair = isinstance(view, PairView)
    app, page = app_shell({"ds": view, "view": view, "pair": pair,
                           "item_word": view.item_word, "search_hint": view.search_hint},
                          OpenQuery, host=host, port=port, allow_hosts=allow_hosts)
    app.state.view = view
    # The rows of recent queries: next/previous on a question page select again.
    selections: _Lru[list[OpenRow]] = _Lru(64)
    details: _Lru[dict[str, Any]] = _Lru(256)

    def select(q: OpenQuery) -> list[OpenRow]:
        key = repr(q.cache_key())
        rows = selections.get(key)
        if rows is None:
            rows = view.select(q)
            selections.put(key, rows)
        return rows

    @app.api_route("/", methods=GET_HEAD, response_class=HTMLResponse)
    def index(request: Request) -> Response:
        q = OpenQuery.from_params(request.query_params, view)
        rows = select(q)
        if q.q and len(rows) == 1 and rows[0].key == q.q:
            return RedirectResponse(item_url(rows[0], q.params(q="", page="")), 303)
        pages = max(1, -(-len(rows) // PAGE_SIZE))
        q.page = min(q.page, pages)
        start = (q.page - 1) * PAGE_SIZE
        here = q.params(page="")
        return page("open_index.html", query=q, rows=rows[start:start + PAGE_SIZE],
                    total=len(rows), start=start, pages=pages,
                    item_url=lambda r: item_url(r, here))

    @app.api_route("/item/{key}", methods=GET_HEAD)
    def earlier_item(key: str, request: Request) -> Response:
        # links of the earlier form (a numbered view's 1-based line) keep working
        row = view.old_keys.get(key)
        if row is None:
            raise StarletteHTTPException(404, f"No {view.item_word} {key[:40]!r}.")
        query = request.url.query
        return RedirectResponse(item_url(row, {}) + (f"?{query}" if query else ""), 301)

    @app.api_route("/qid/{key}", methods=GET_HEAD, response_class=HTMLResponse)
    def item(key: str, request: Request) -> Response:
        t0 = time.perf_counter()
        row = view.by_key.get(key)
        if row is None:
            raise StarletteHTTPException(404, f"No {view.item_word} {key[:40]!r}.")
        q = OpenQuery.from_params(request.query_params, view)
        d = details.get(row.key)
        if d is None:
            d = view.detail(row)
            details.put(row.key, d)
        rows = select(q)
        position, prev, nxt = neighbours(rows, row)
        here = q.params(page="")
        return page("open_item.html", row=row, d=d, query=q, position=position,
                    total=len(rows),
                    prev=item_url(prev, here) if prev else None,
                    next=item_url(nxt, here) if nxt else None,
                    back=q.link(), elapsed_ms=(time.perf_counter() - t0) * 1000)

    return app
