"""The ``nqkit browse`` web app: index, example and full-page views (FastAPI + Jinja2).

Safety rules the routes keep:

* No request parameter ever reaches the file system: examples are found by id in an
  in-memory table, templates and static files are read once at start-up, and the only
  file read per request is the example's own store, whose path was fixed at start-up.
* Page HTML from the dataset is third-party content: every fragment shown is sanitized
  by an allow-list (:mod:`nqkit.browser.render`); every response carries a strict
  Content-Security-Policy (scripts only from this app, no inline scripts, no external
  loads); the full page is served with a ``sandbox`` CSP and shown in a sandboxed iframe.
  The document's own URL is a link only when it is http(s).
* Only requests whose ``Host`` header names this server (127.0.0.1, localhost, [::1], the
  address it listens on, names allowed explicitly; with its port) are answered; others get
  400. A web page elsewhere cannot reach the app by pointing a DNS name of its own at
  127.0.0.1 (DNS rebinding).
* Every page answers ``HEAD`` as well as ``GET``.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from importlib import resources
from types import SimpleNamespace
from typing import Any, Generic, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import DictLoader, Environment, select_autoescape
from starlette.exceptions import HTTPException as StarletteHTTPException

from nqkit._version import __version__
from nqkit.browser.model import (
    GOLD_FILTERS,
    OUTCOMES,
    PAGE_SIZE,
    SORTS,
    Dataset,
    Query,
    Row,
    long_agreement,
    short_agreement,
    span_key,
)
from nqkit.browser.render import (
    highlight_original,
    highlight_simplified,
    http_url,
    num_tokens,
    render_span,
    sanitize,
    token_text,
)
from nqkit.errors import InputError
from nqkit.formats.nq import NULL_SPAN, NqExample, SimplifiedNqExample, Span
from nqkit.metrics.nq import span_equal

APP_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
           "frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
# The document itself: no scripts at all (sandbox without allow-scripts), no loads.
DOC_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
           "sandbox; base-uri 'none'; form-action 'none'; frame-ancestors 'self'")
GET_HEAD = ["GET", "HEAD"]
STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".svg": "image/svg+xml", ".png": "image/png"}

DOC_STYLE = """
body{font:15px/1.55 Georgia,'DejaVu Serif',serif;max-width:60rem;margin:1.5rem auto;
padding:0 1.5rem;color:#1d1d1f;background:#fff}
table{border-collapse:collapse;margin:.8em 0;font:13px/1.4 system-ui,sans-serif}
td,th{border:1px solid #d4d4d8;padding:.25em .5em;vertical-align:top}
th{background:#f4f4f5}
mark{background:none;color:inherit;border-radius:2px}
mark.gl{background:#fff3bf}
mark.pl{box-shadow:inset 0 -2px 0 #4c6ef5}
mark.gs{background:#ffd43b;font-weight:600}
mark.ps{outline:2px solid #4c6ef5;outline-offset:0}
mark.gl.pl{background:#fff3bf}
.img-alt{color:#868e96;font-style:italic}
#nqkit-long{display:block;scroll-margin-top:2rem}
"""


def _load_package_files(sub: str) -> dict[str, str]:
    base = resources.files("nqkit.browser").joinpath(sub)
    return {p.name: p.read_text(encoding="utf-8") for p in base.iterdir() if p.is_file()}


def allowed_hosts(host: str, port: int, extra: Iterable[str] = ()) -> frozenset[str]:
    """The ``Host`` header values a server listening on ``host``:``port`` answers to.

    Loopback names always; ``host`` itself and the ``extra`` names (for a server reached
    under another name or address, e.g. when listening on 0.0.0.0). Each with the port,
    and also without it on port 80 (browsers leave the default port out).
    """
    names = {"127.0.0.1", "localhost", "[::1]"}
    for name in (host, *extra):
        name = name.strip().lower()
        if name:
            names.add(f"[{name}]" if ":" in name and not name.startswith("[") else name)
    values = {f"{n}:{port}" for n in names}
    if port == 80:
        values |= names
    return frozenset(values)


_SECURITY_HEADERS = ((b"content-security-policy", APP_CSP.encode()),
                     (b"x-content-type-options", b"nosniff"),
                     (b"referrer-policy", b"no-referrer"))


class _Guard:
    """ASGI middleware: refuse foreign ``Host`` headers, add security headers, empty HEAD bodies.

    A plain ASGI wrapper rather than ``@app.middleware("http")``: that one runs every
    response through an extra task and memory stream, which costs latency under load.
    """

    def __init__(self, app: Any, hosts: frozenset[str]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = next((v for k, v in scope["headers"] if k == b"host"), b"")
        if host.decode("latin-1").lower() not in self.hosts:
            shown = host.decode("latin-1")[:100]
            body = (f"400 Bad Request: this server does not answer to the host {shown!r}; "
                    "use http://127.0.0.1:PORT/ or start nqkit browse with --allow-host "
                    "NAME\n").encode()
            await send({"type": "http.response.start", "status": 400, "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *_SECURITY_HEADERS]})
            await send({"type": "http.response.body",
                        "body": b"" if scope["method"] == "HEAD" else body})
            return
        head = scope["method"] == "HEAD"

        async def send_guarded(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                names = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in _SECURITY_HEADERS if k not in names]
                message = {**message, "headers": headers}
            elif head and message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app(scope, receive, send_guarded)


def app_shell(template_globals: dict[str, Any], blank_query: Callable[[], Any], *,
              host: str = "127.0.0.1", port: int = 8080, allow_hosts: Iterable[str] = (),
              ) -> tuple[FastAPI, Callable[..., HTMLResponse]]:
    """What every browse app shares: the templates (autoescaped), the ``Host`` guard and
    security headers (:class:`_Guard`), the 404 / error pages and the static files.

    Returns the app and ``page(template, status=200, **context)``, which renders one of
    the package's templates. ``template_globals`` are visible to every template
    (``base.html`` reads ``ds``: its ``rows``, ``has_predictions`` and
    ``predictions_name``); ``blank_query()`` is the search state of the 404 and error
    pages.
    """
    env = Environment(loader=DictLoader(_load_package_files("templates")),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.globals.update(version=__version__, urlencode=urllib.parse.urlencode, **template_globals)
    static = {name: text.encode("utf-8") for name, text in _load_package_files("static").items()}
    app = FastAPI(title="nqkit browse", docs_url=None, redoc_url=None, openapi_url=None)

    def page(template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        return HTMLResponse(env.get_template(template).render(**ctx), status_code=status)

    app.add_middleware(_Guard, hosts=allowed_hosts(host, port, allow_hosts))

    @app.exception_handler(StarletteHTTPException)
    async def not_found(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return page("404.html", 404, what=exc.detail if exc.detail != "Not Found" else "",
                        query=blank_query())
        return page("error.html", exc.status_code, message=str(exc.detail),
                    query=blank_query())

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        return page("404.html", 404, what="", query=blank_query())

    @app.exception_handler(InputError)
    async def input_error(request: Request, exc: InputError) -> Response:
        return page("error.html", 500, message=exc.message, query=blank_query())

    @app.api_route("/static/{name}", methods=GET_HEAD)
    def static_file(name: str) -> Response:
        data = static.get(name)
        if data is None:
            raise StarletteHTTPException(404, "")
        ext = name[name.rfind("."):]
        return Response(data, media_type=STATIC_TYPES.get(ext, "application/octet-stream"),
                        headers={"Cache-Control": "max-age=600"})

    return app, page


def create_app(ds: Dataset, *, host: str = "127.0.0.1", port: int = 8080,
               allow_hosts: Iterable[str] = ()) -> FastAPI:
    """Build the web app over a loaded :class:`Dataset`, to be served on ``host``:``port``.

    ``host``, ``port`` and ``allow_hosts`` decide which ``Host`` headers are answered
    (:func:`allowed_hosts`); any other gets 400.
    """
    app, page = app_shell(dict(ds=ds, OUTCOMES=OUTCOMES, GOLD_FILTERS=GOLD_FILTERS,
                               SORTS=SORTS, http_url=http_url,
                               long_agreement=long_agreement,
                               short_agreement=short_agreement),
                          Query, host=host, port=port, allow_hosts=allow_hosts)
    app.state.dataset = ds
    pr_png: list[bytes] = []

    @app.api_route("/", methods=GET_HEAD, response_class=HTMLResponse)
    def index(request: Request) -> Response:
        q = Query.from_params(request.query_params)
        rows = ds.select(q)
        if q.q and len(rows) == 1 and str(rows[0].summary.example_id) == q.q:
            return RedirectResponse(_example_url(rows[0], q.params(q="", page="")), 303)
        pages = max(1, -(-len(rows) // PAGE_SIZE))
        q.page = min(q.page, pages)
        start = (q.page - 1) * PAGE_SIZE
        return page("index.html", query=q, rows=rows[start:start + PAGE_SIZE], total=len(rows),
                    start=start, pages=pages, counts=ds.outcome_counts(),
                    link=lambda **kw: "/?" + urllib.parse.urlencode(q.params(**kw)),
                    example_url=lambda r: _example_url(r, q.params(page="")))

    @app.api_route("/pr-curve.png", methods=GET_HEAD)
    def pr_curve() -> Response:
        if ds.result is None:
            raise StarletteHTTPException(404, "no predictions loaded")
        if not pr_png:
            from nqkit.analysis.plots import pr_curve_png

            pr_png.append(pr_curve_png({"long": ds.result.long, "short": ds.result.short},
                                       title=ds.predictions_name or "Natural Questions",
                                       thumbnail=True))
        return Response(pr_png[0], media_type="image/png",
                        headers={"Cache-Control": "max-age=3600"})

    def find(key: str) -> Row:
        s = ds.store.lookup(key)
        if s is None:
            raise StarletteHTTPException(404, f"No example with id {key[:40]!r}.")
        return ds.by_id[s.example_id]

    # Rendered examples and documents, by example id: parsing a page and sanitizing it is
    # what a request costs (tens of ms for a long page), and users come back to the same
    # pages (the full-page view reloads its document, next/previous go back and forth).
    views: _Lru[tuple[SimpleNamespace, dict[str, Any]]] = _Lru(64)
    documents: _Lru[str] = _Lru(16)

    @app.api_route("/example/{key}", methods=GET_HEAD, response_class=HTMLResponse)
    def example(key: str, request: Request) -> Response:
        t0 = time.perf_counter()
        row = find(key)
        q = Query.from_params(request.query_params)
        cached = views.get(row.summary.example_id)
        if cached is None:
            full = ds.store.load(row.summary)
            # Only what the template reads of the example: the parsed page is large.
            cached = (SimpleNamespace(example_id=full.example_id,
                                      question_text=full.question_text,
                                      document_url=full.document_url,
                                      annotations=full.annotations),
                      example_view(ds, row, full))
            views.put(row.summary.example_id, cached)
        ex, view = cached
        nav = _neighbours(ds, row, q)
        return page("example.html", row=row, ex=ex, v=view, query=q, nav=nav,
                    qs=urllib.parse.urlencode(q.params(page="")),
                    elapsed_ms=(time.perf_counter() - t0) * 1000)

    @app.api_route("/example/{key}/page", methods=GET_HEAD, response_class=HTMLResponse)
    def full_page(key: str, request: Request) -> Response:
        row = find(key)
        q = Query.from_params(request.query_params)
        pred = ds.predictions.get(row.summary.example_id)
        return page("page.html", row=row, pred=pred, query=q,
                    qs=urllib.parse.urlencode(q.params(page="")),
                    anchor=request.query_params.get("at", "long"))

    @app.api_route("/example/{key}/document", methods=GET_HEAD, response_class=HTMLResponse)
    def document(key: str) -> Response:
        row = find(key)
        html = documents.get(row.summary.example_id)
        if html is None:
            body = document_html(ds, row, ds.store.load(row.summary))
            html = (f'<!doctype html><html><head><meta charset="utf-8"><title>document</title>'
                    f"<style>{DOC_STYLE}</style></head><body>{body}</body></html>")
            documents.put(row.summary.example_id, html)
        return HTMLResponse(html, headers={"Content-Security-Policy": DOC_CSP,
                                           "X-Frame-Options": "SAMEORIGIN"})

    return app


_T = TypeVar("_T")


class _Lru(Generic[_T]):
    """A small thread-safe least-recently-used cache (routes run in a thread pool)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[int | str, _T] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: int | str) -> _T | None:
        with self.lock:
            value = self.items.get(key)
            if value is not None:
                self.items.move_to_end(key)
            return value

    def put(self, key: int | str, value: _T) -> None:
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)


def _example_url(row: Row, params: dict[str, str]) -> str:
    key = urllib.parse.quote(str(row.summary.example_id), safe="")
    qs = urllib.parse.urlencode(params)
    return f"/example/{key}" + (f"?{qs}" if qs else "")


def _neighbours(ds: Dataset, row: Row, q: Query) -> dict[str, Any]:
    rows = ds.select(q)
    params = q.params(page="")
    try:
        i = next(k for k, r in enumerate(rows) if r is row)
    except StopIteration:
        return {"position": None, "total": len(rows), "prev": None, "next": None}
    return {"position": i + 1, "total": len(rows),
            "prev": _example_url(rows[i - 1], params) if i > 0 else None,
            "next": _example_url(rows[i + 1], params) if i + 1 < len(rows) else None}


# ------------------------------------------------------------------- example view

def _candidate_of(ex: NqExample | SimplifiedNqExample, span: Span) -> int:
    if span.is_null:
        return -1
    for i, c in enumerate(ex.long_answer_candidates):
        if span_equal(c.span, span):
            return i
    return -1


def _depths(parents: tuple[int, ...]) -> list[int]:
    depths = [0] * len(parents)
    for i, p in enumerate(parents):  # parents come before children
        depths[i] = depths[p] + 1 if p >= 0 else 0
    return depths


def example_view(ds: Dataset, row: Row, ex: NqExample | SimplifiedNqExample) -> dict[str, Any]:
    """Everything the example page shows, computed from the parsed example."""
    anns = ex.annotations
    pred = ds.predictions.get(ex.example_id)
    n_tok = num_tokens(ex)

    def text(s: Span, limit: int = 0) -> str:
        if not s.has_tokens or s.end_token > n_tok:
            return ""
        return token_text(ex, s.start_token, s.end_token, limit)

    long_counts = Counter(span_key(a.long_answer) for a in anns if a.has_long)
    short_key = [(a.yes_no_answer,) if a.yes_no_answer != "NONE"
                 else tuple(sorted(span_key(s) for s in a.short_answers if not s.is_null))
                 for a in anns]
    short_counts = Counter(k for k, a in zip(short_key, anns, strict=True) if a.has_short)
    annotations = []
    for i, a in enumerate(anns):
        cand = a.candidate_index if a.candidate_index >= 0 else _candidate_of(ex, a.long_answer)
        annotations.append({
            "n": i + 1,
            "has_long": a.has_long,
            "candidate": cand,
            "type": ex.candidate_type(cand) if cand >= 0 else "",
            "long_text": text(a.long_answer, 30),
            "long_agree": long_counts[span_key(a.long_answer)] if a.has_long else 0,
            "shorts": [text(s) for s in a.short_answers if not s.is_null],
            "yes_no": a.yes_no_answer,
            "short_agree": short_counts[short_key[i]] if a.has_short else 0,
        })

    gold_shorts: list[Span] = [s for a in anns for s in a.short_answers if not s.is_null]
    pred_long = pred.long_answer if pred else NULL_SPAN
    pred_shorts = [s for s in pred.short_answers if not s.is_null] if pred else []
    highlights = [(s, "gs") for s in gold_shorts] + [(s, "ps") for s in pred_shorts]

    # The gold long answer shown: the one most annotators chose.
    gold_long = NULL_SPAN
    if long_counts:
        key = long_counts.most_common(1)[0][0]
        gold_long = next(a.long_answer for a in anns if span_key(a.long_answer) == key)
    blocks = []
    if not gold_long.is_null and gold_long.has_tokens:
        blocks.append({"kind": "gold", "candidate": _candidate_of(ex, gold_long),
                       "agree": long_counts[span_key(gold_long)],
                       "html": render_span(ex, gold_long.start_token, gold_long.end_token,
                                           highlights),
                       "same_as_pred": span_equal(gold_long, pred_long)})
    if not pred_long.is_null and pred_long.has_tokens and not span_equal(gold_long, pred_long):
        # Translate byte-only predictions to tokens through the candidate they equal.
        blocks.append({"kind": "pred", "candidate": _candidate_of(ex, pred_long),
                       "agree": 0,
                       "html": render_span(ex, pred_long.start_token, pred_long.end_token,
                                           highlights),
                       "same_as_pred": True})

    chosen: Counter[int] = Counter()
    for ann in annotations:
        cand_index: int = ann["candidate"]  # type: ignore[assignment]
        if cand_index >= 0:
            chosen[cand_index] += 1
    pred_cand = _candidate_of(ex, pred_long)
    depths = _depths(ex.candidate_parents)
    candidates = [{
        "i": i, "depth": depths[i], "type": ex.candidate_type(i),
        "annotators": chosen[i], "predicted": i == pred_cand,
        "tokens": c.span.end_token - c.span.start_token,
        "preview": text(c.span, 24),
    } for i, c in enumerate(ex.long_answer_candidates)]

    prediction = None
    if pred is not None:
        prediction = {
            "long_candidate": pred_cand,
            "long_text": text(pred_long, 30),
            "long_null": pred_long.is_null,
            "long_score": pred.long_answer_score,
            "short_texts": [text(s) for s in pred_shorts],
            "yes_no": pred.yes_no_answer,
            "short_score": pred.short_answers_score,
            "long_outcome": row.long_outcome, "short_outcome": row.short_outcome,
        }
    thresholds = None
    if ds.result is not None:
        thresholds = {"long": ds.result.long.best_threshold,
                      "short": ds.result.short.best_threshold}
    return {"annotations": annotations, "blocks": blocks, "candidates": candidates,
            "prediction": prediction, "thresholds": thresholds,
            "num_chosen": sum(1 for c in candidates if c["annotators"] or c["predicted"])}


def document_html(ds: Dataset, row: Row, ex: NqExample | SimplifiedNqExample) -> str:
    """The whole page, sanitized, with gold and predicted spans marked by their offsets."""
    pred = ds.predictions.get(ex.example_id)
    hl: list[tuple[Span, str]] = []
    for a in ex.annotations:
        if a.has_long:
            hl.append((a.long_answer, "gl"))
        hl.extend((s, "gs") for s in a.short_answers if not s.is_null)
    if pred is not None:
        if not pred.long_answer.is_null:
            hl.append((pred.long_answer, "pl"))
        hl.extend((s, "ps") for s in pred.short_answers if not s.is_null)
    anchors: dict[int, str] = {}
    for i, c in enumerate(ex.long_answer_candidates):
        anchors.setdefault(c.span.start_token, f"nqkit-c{i}")
    target = next((a.long_answer for a in ex.annotations if a.has_long), None)
    if target is None and pred is not None and not pred.long_answer.is_null:
        target = pred.long_answer
    n = num_tokens(ex)
    if target is not None and target.has_tokens:
        anchors[target.start_token] = ("nqkit-long " + anchors.get(target.start_token, "")
                                       ).strip()
    if isinstance(ex, NqExample):
        raw = highlight_original(ex, 0, n, hl, anchors)
    else:
        raw = highlight_simplified(ex, 0, n, hl, anchors)
    return sanitize(raw)
