"""End-to-end tests of ``nqkit browse`` in a real browser (Debian's Chromium, headless).

The app runs under uvicorn on 127.0.0.1 (a free port) in a background thread; Playwright
drives Chromium through the pages as a user would. Screenshots are saved under
``artifacts/browser/`` (gitignored) for a person to look at.
"""

from __future__ import annotations

import contextlib
import gzip
import http.server
import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import REQUIRE_SHARED, ROOT, require, shared_file

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("NQKIT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-quic", "--no-first-run", "--disable-component-update",
                 "--disable-sync"]
ARTIFACTS = ROOT / "artifacts" / "browser"
NOBEL_ID = -3290814144789249484


# Safety nets only (a hang is the failure): generous, so a loaded 2-core machine where
# Chromium, uvicorn and pytest share the cores never reaches them.
TIMEOUT_S = 120


@contextlib.contextmanager
def _serving(ds):
    """The browser app on a free port of 127.0.0.1 in a thread, for the block's duration."""
    from nqkit.browser.app import create_app

    with _serving_app(lambda port: create_app(ds, port=port)) as url:
        yield url


@contextlib.contextmanager
def _serving_app(make_app):
    """The app ``make_app(port)`` builds, served as :func:`_serving` serves the NQ app."""
    uvicorn = require("uvicorn")

    # The socket is bound here (port 0) and handed to uvicorn, as `nqkit browse` does:
    # finding a free port, closing it and binding it again would let another process take
    # it in between.
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    srv = uvicorn.Server(uvicorn.Config(make_app(port), log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + TIMEOUT_S
    while not srv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the browser app did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(timeout=TIMEOUT_S)
        sock.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from nqkit.browser.model import load_dataset

    gold = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    preds = shared_file("golden", "nq-eval", "annotator0.predictions.json")
    ds = load_dataset(gold, str(preds), cache_dir=tmp_path_factory.mktemp("cache"),
                      progress=False)
    with _serving(ds) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as b:
        yield b


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """Headless Chromium under Playwright, for the block's duration (skipped, or failed
    under CI, without it)."""
    sync_api = require("playwright.sync_api")
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        msg = f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
        if REQUIRE_SHARED:  # CI installs Chromium: its absence there is a failure
            pytest.fail(msg)
        pytest.skip(msg)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM if os.path.exists(CHROMIUM)
                              else shutil.which("chromium"), args=CHROMIUM_ARGS,
                              timeout=TIMEOUT_S * 1000)
        yield b
        b.close()


def _context(browser, **kw):  # type: ignore[no-untyped-def]
    """A browser context whose waits (navigation, locators) time out only after
    TIMEOUT_S, not Playwright's 30 s."""
    ctx = browser.new_context(**kw)
    ctx.set_default_timeout(TIMEOUT_S * 1000)
    ctx.set_default_navigation_timeout(TIMEOUT_S * 1000)
    return ctx


@pytest.fixture
def page(browser):  # type: ignore[no-untyped-def]
    ctx = _context(browser, viewport={"width": 1400, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.errors = errors
    yield pg
    ctx.close()


def _shot(page, name: str) -> Path:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def test_search_open_example_and_filter(server: str, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server + "/")
    rows = page.locator("table.examples tbody tr")
    assert rows.count() == 10
    assert "annotator0.predictions.json" in page.locator("header .meta").inner_text()
    # Metrics on top, with the PR curve image actually decoded by the browser.
    assert page.locator(".metrics table.nums").is_visible()
    assert page.evaluate("document.querySelector('img.prcurve').naturalWidth") > 0
    _shot(page, "01-index")

    page.fill("#search", "nobel")
    page.press("#search", "Enter")
    page.wait_for_url("**/?q=nobel")
    assert rows.count() == 1
    assert "who got the first nobel prize in physics" in rows.first.inner_text()
    _shot(page, "02-search-nobel")

    rows.first.locator("td.q a").click()
    page.wait_for_url(f"**/example/{NOBEL_ID}*")
    assert page.locator("h1.question").inner_text().startswith(
        "who got the first nobel prize in physics")
    # The gold short answer is highlighted inside the rendered long answer.
    marks = page.locator(".card.answer.gold .rendered mark.gs")
    assert marks.count() >= 1
    texts = [t.strip() for t in marks.all_inner_texts()]
    assert any("Wilhelm Conrad Röntgen" in t for t in texts), texts
    # Five annotations, and the candidate tree includes nested candidates.
    assert page.locator("table.anns tbody tr").count() == 5
    assert page.locator("ol.tree li.d1").count() > 0
    _shot(page, "03-example-nobel")

    # The full page: a sandboxed iframe whose document has the highlights but no scripts.
    page.click("#fullpage")
    page.wait_for_url(f"**/example/{NOBEL_ID}/page*")
    frame_el = page.locator("iframe.docframe")
    assert frame_el.get_attribute("sandbox") == ""
    frame = page.frame_locator("iframe.docframe")
    frame.locator("mark.gs").first.wait_for()
    assert "Wilhelm Conrad Röntgen" in " ".join(frame.locator("mark.gs").all_inner_texts())
    assert frame.locator("script").count() == 0
    _shot(page, "04-full-page")

    # Switch a filter on the index: the select submits itself (app.js).
    page.goto(server + "/")
    page.select_option("select[name=gold]", "short")
    page.wait_for_url("**/?*gold=short*")
    assert rows.count() == 2
    page.select_option("select[name=long]", "correct")
    page.wait_for_url("**/?*long=correct*")
    labels = page.locator("table.examples tbody tr td:nth-child(6) .oc").all_inner_texts()
    assert labels and all(t == "correct" for t in labels)
    _shot(page, "05-filtered")
    assert not page.errors, page.errors


def test_unknown_id_gives_404_with_search(server: str, page) -> None:  # type: ignore[no-untyped-def]
    resp = page.goto(server + "/example/12345")
    assert resp is not None and resp.status == 404
    box = page.locator("form.bigsearch input[name=q]")
    box.fill("deadpool")
    box.press("Enter")
    page.wait_for_url("**/?q=deadpool")
    assert page.locator("table.examples tbody tr").count() == 1
    _shot(page, "06-not-found-search")


def test_next_previous_follow_the_filter(server: str, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server + "/?gold=long")
    n = page.locator("table.examples tbody tr").count()
    # Wait for the example page's load, not only for its heading: app.js (deferred) adds
    # the key handler at DOMContentLoaded, after the heading is parsed, so a "j" pressed
    # when the heading shows could reach a page that does not listen yet.
    with page.expect_navigation():
        page.locator("table.examples tbody tr td.q a").first.click()
    seen = [page.locator("h1.question").inner_text()]
    for _ in range(n - 1):
        # wait for the navigation the key starts, not for the current page's load state
        # (already reached: on a busy machine the old page would be read again)
        with page.expect_navigation():
            page.keyboard.press("j")
        seen.append(page.locator("h1.question").inner_text())
    assert len(set(seen)) == n
    assert page.locator("#next").count() == 0  # the last one of the filtered list


def test_what_a_new_user_reads_at_1280_pixels(server: str, browser) -> None:  # type: ignore[no-untyped-def]
    from nqkit.analysis.plots import pr_curve_figure
    from nqkit.metrics.nq import Sweep

    ctx = _context(browser, viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    try:
        page.goto(server + "/")
        page.wait_for_load_state("load")
        # The PR-curve thumbnail: all of it on screen, drawn at twice the size it is shown,
        # so its smallest type (the tick labels, in points at the figure's dpi) shows at
        # 12 CSS pixels or more.
        box = page.evaluate("""() => { const i = document.querySelector('img.prcurve');
            const r = i.getBoundingClientRect();
            return [r.left, r.right, r.width, i.naturalWidth, window.innerWidth]; }""")
        left, right, shown, natural, width = box
        assert width == 1280 and left > 0 and right <= width
        assert (shown, natural) == (400, 800)
        empty = Sweep((), (), (), 0.0, 0.0, 0.0, 0.0)
        fig = pr_curve_figure({"long": empty}, thumbnail=True)
        smallest = min(t.get_fontsize() for t in fig.axes[0].get_xticklabels())
        assert smallest * fig.dpi / 72 * shown / natural >= 12
        # The signature is the one `nqkit eval nq` prints for these files (every example
        # predicted: its default policy, missing:error).
        assert page.locator("#evalcmd").inner_text() == "nqkit eval nq"
        assert page.locator("#signature").inner_text().startswith(
            "nq|long-thr:2|short-thr:2|missing:error|v")
        _shot(page, "07-index-1280")

        page.goto(server + f"/example/{NOBEL_ID}")
        page.wait_for_load_state("load")
        # By hand from the raw annotations: 4 of the 5 annotators chose candidate 1, a
        # paragraph; 4 gave a short answer, twice "Wilhelm Conrad Röntgen, of Germany".
        assert page.locator("#gold-long").inner_text() == (
            "gold long answer: paragraph · 4 of 5 annotators chose this paragraph; 1 chose "
            "another candidate")
        assert page.locator("#gold-short").inner_text() == (
            "gold short answer: “Wilhelm Conrad Röntgen, of Germany” · 4 of 5 annotators "
            "gave a short answer")
        shorts = [t.strip() for t in page.locator("table.anns mark.gs").all_inner_texts()]
        assert shorts.count("Wilhelm Conrad Röntgen, of Germany") == 2
        assert shorts.count("Wilhelm Conrad Röntgen") == 2
        assert not any(" ," in t for t in page.locator("table.anns").all_inner_texts())
        _shot(page, "08-example-1280")
    finally:
        ctx.close()


# ------------------------------------------------------------------- a hostile page

DEADPOOL_ID = 8851020722386421469
HOSTILE_ID = 777


def _hostile_payload(canary: str) -> str:
    """Markup that, if any of it ran or loaded, would reach ``canary`` or mark the window."""
    hit = f"fetch('{canary}/"
    return (
        f"<script>window.__pwned=1;document.title='PWNED';{hit}script')</script>"
        f'<img src="{canary}/img" onerror="window.__pwned=2;{hit}onerror\')">'
        f'<iframe src="{canary}/iframe" onload="{hit}onload\')"></iframe>'
        f"<iframe srcdoc=\"<script>parent.__pwned=3;{hit}srcdoc')</script>\"></iframe>"
        f'<object data="{canary}/object"></object><embed src="{canary}/embed">'
        f"<svg onload=\"{hit}svgonload')\"><script>{hit}svgscript')</script>"
        f'<image href="{canary}/svgimage"/></svg>'
        f'<meta http-equiv="refresh" content="0;url={canary}/refresh">'
        f'<base href="{canary}/base/">'
        f'<form id="f" action="{canary}/form" method="post"><input name="q" value="v">'
        f'<button id="go" formaction="{canary}/formaction">go</button></form>'
        f"<a id=\"js\" href=\"javascript:{hit}jslink')\">click this link</a> "
        f"<b onclick=\"{hit}onclick')\" onmouseover=\"{hit}onmouseover')\">click this</b> "
        f'<link rel="stylesheet" href="{canary}/style.css">'
        f"<style>@import url({canary}/import.css); body{{background:url({canary}/bg.png)}}"
        "</style>"
        f'<span style="background:url({canary}/inline.png)">styled</span> '
        f'<video src="{canary}/video" poster="{canary}/poster"></video>'
        f'<audio src="{canary}/audio" autoplay></audio>'
        f'<input type="image" src="{canary}/inputimage">'
        f'<body onload="{hit}bodyonload\')">'
        "<noscript>an element left open: the rest of the page must still show "
    )


def _write_hostile_copy(src: Path, dest: Path, canary: str) -> str:
    """A copy of the real Deadpool example with the payload inside its gold long answer
    (all byte offsets after it shifted), under a new id and a ``javascript:`` URL."""
    with gzip.open(src, "rt", encoding="utf-8") as f:
        d = next(x for x in map(json.loads, f) if x["example_id"] == DEADPOOL_ID)
    raw = d["document_html"].encode("utf-8")
    payload = _hostile_payload(canary)
    at = d["document_tokens"][520]["start_byte"]  # inside the long answer (518-547)
    n = len(payload.encode("utf-8"))

    def shift(s: dict[str, Any]) -> None:
        if s["start_byte"] >= at:
            s["start_byte"] += n
        if s["end_byte"] > at:
            s["end_byte"] += n

    for t in d["document_tokens"]:
        shift(t)
    for c in d["long_answer_candidates"]:
        shift(c)
    for a in d["annotations"]:
        if a["long_answer"]["start_byte"] >= 0:
            shift(a["long_answer"])
        for s in a["short_answers"]:
            shift(s)
    d["document_html"] = (raw[:at] + payload.encode("utf-8") + raw[at:]).decode("utf-8")
    d["document_url"] = "javascript:fetch('" + canary + "/docurl')"
    d["example_id"] = HOSTILE_ID
    with open(dest, "w", encoding="utf-8") as f:
        f.write(json.dumps(d) + "\n")
    # The payload really sits in the data, and the gold short answer still reads right.
    tok = d["document_tokens"]
    s = d["annotations"][0]["short_answers"][0]
    short = d["document_html"].encode("utf-8")[s["start_byte"]:s["end_byte"]].decode()
    assert short == "May 18, 2018" and tok[s["start_token"]]["token"] == "May"
    return payload


class _Canary(http.server.BaseHTTPRequestHandler):
    server: _CanaryServer

    def _hit(self) -> None:
        self.server.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()

    do_GET = do_POST = _hit

    def log_message(self, *args: Any) -> None:
        pass


class _CanaryServer(http.server.ThreadingHTTPServer):
    """Records the path of every request it gets, from any page, at any time."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Canary)
        self.hits: list[str] = []
        self.url = f"http://127.0.0.1:{self.server_address[1]}"


@contextlib.contextmanager
def _canary() -> Iterator[_CanaryServer]:
    srv = _CanaryServer()
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, list[str]]]:
    """(app URL, canary URL, canary hits) for an app serving the hostile copy."""
    from nqkit.browser.model import load_dataset

    with _canary() as canary:
        d = tmp_path_factory.mktemp("hostile")
        _write_hostile_copy(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz"),
                            d / "hostile.jsonl", canary.url)
        ds = load_dataset(d / "hostile.jsonl", cache_dir=tmp_path_factory.mktemp("cache"),
                          progress=False)
        with _serving(ds) as url:
            yield url, canary.url, canary.hits


def test_hostile_page_runs_nothing_loads_nothing_navigates_nowhere(
        browser, hostile: tuple[str, str, list[str]]) -> None:  # type: ignore[no-untyped-def]
    app, _, hits = hostile  # hits: the requests that reached the app data's canary
    # Control: the same markup, opened as is, does reach a canary (so silence below means
    # the app stopped it, not that the detector is deaf). A canary of its own: requests of
    # the control page can reach it late, after its context is closed (on a busy machine;
    # e.g. the favicon of the page its meta refresh opened), and could not be told apart
    # from the app's on a shared one. Waited for until the first request arrives, however
    # slow the machine, not for a fixed time.
    with _canary() as control:
        ctx = _context(browser)
        raw = ctx.new_page()
        raw.set_content(_hostile_payload(control.url))
        deadline = time.monotonic() + TIMEOUT_S
        while not control.hits and time.monotonic() < deadline:
            raw.wait_for_timeout(50)
        ctx.close()
        assert control.hits, "the control page did not reach the canary"

    ctx = _context(browser, viewport={"width": 1400, "height": 900})
    requests: list[str] = []
    navigations: list[str] = []
    ctx.on("request", lambda r: requests.append(r.url))
    pg = ctx.new_page()
    pg.on("framenavigated", lambda f: navigations.append(f.url))
    try:
        for path in (f"/example/{HOSTILE_ID}", f"/example/{HOSTILE_ID}/page",
                     f"/example/{HOSTILE_ID}/document"):
            url = app + path
            resp = pg.goto(url)
            assert resp is not None and resp.status == 200
            pg.wait_for_load_state("load")
            root = pg.frame_locator("iframe.docframe") if path.endswith("/page") else pg
            # The gold answer after the hostile markup (and the <noscript> left open) shows,
            # highlighted; the link and the handlers are inert.
            gold = root.locator("mark.gs", has_text="May 18, 2018")
            gold.first.wait_for()
            root.locator("text=click this link").first.click()
            root.locator("b", has_text="click this").first.click()
            root.locator("b", has_text="click this").first.hover()
            # The third-party part: the rendered answer cards, or the whole document.
            part = root.locator(".rendered" if path.endswith(str(HOSTILE_ID)) else "body")
            assert part.count() >= 1
            assert part.locator("script, iframe, object, embed, svg, img, form, input, "
                                "button, video, audio, link, meta, base").count() == 0
            assert part.locator("[onclick], [onerror], [onload], [onmouseover], [href], "
                                "[src], [action], [formaction], [style]").count() == 0
            pg.wait_for_timeout(300)  # time for a meta refresh or a late load to happen
            assert pg.url == url, (path, pg.url)
            assert pg.title() != "PWNED"
            assert pg.evaluate("window.__pwned") is None
        # No link to the javascript: document URL on the example page.
        pg.goto(app + f"/example/{HOSTILE_ID}")
        assert pg.locator("a.ext").count() == 0
        assert pg.locator("a[href^='javascript']").count() == 0
        pg.wait_for_timeout(300)
    finally:
        ctx.close()
    assert hits == [], hits
    assert requests and all(u.startswith(app + "/") for u in requests), \
        [u for u in requests if not u.startswith(app + "/")]
    assert navigations and all(u.startswith(app + "/") or u == "about:blank"
                               for u in navigations), navigations


# ------------------------------------------------------------------- open-domain views

# Screenshots of the open-domain views for docs/browser.md (1280 CSS pixels wide) are
# written into docs/ when this is set; otherwise under artifacts/browser/ like the rest.
DOCS_SHOTS = os.environ.get("NQKIT_WRITE_DOCS_SHOTS", "") not in ("", "0")
JEOPARDY = "-6301642079833452476"
PAIR_TESTS = (200, 1000)  # resamples and trials of the side-by-side paired tests


def _doc_shot(page, name: str) -> Path:  # type: ignore[no-untyped-def]
    path = _shot(page, name)
    if DOCS_SHOTS:
        shutil.copyfile(path, ROOT / "docs" / f"{name}.png")
    return path


def _open_app(task: str, gold: Path, predictions: list[Path],  # type: ignore[no-untyped-def]
              **judged: str):

    from nqkit.browser.open_app import create_open_app
    from nqkit.browser.serve import load_open

    view = load_open(task, gold, [str(p) for p in predictions], answer_field="answer",
                     resamples=PAIR_TESTS[0], trials=PAIR_TESTS[1], **judged)
    return lambda port: create_open_app(view, port=port)


JUDGED_SYSTEM = shared_file("data", "openqa-eval", "model_outputs", "NQ_DPR.jsonl")


@pytest.fixture(scope="module")
def open_servers() -> Iterator[dict[str, str]]:
    """NQ-open dev with the `mixed` predictions, AmbigNQ dev with `qa_edited`, and two
    NQ-open systems side by side, each served on its own port."""
    nq_open = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    golden = shared_file("golden", "nq-open", "mixed.predictions.jsonl").parent
    apps = {
        "nq-open": _open_app("nq-open", nq_open, [golden / "mixed.predictions.jsonl"]),
        "ambigqa": _open_app("ambigqa", shared_file("data", "ambignq", "dev_light.json"),
                             [shared_file("golden", "ambigqa", "qa_edited.predictions.json")]),
        "pair": _open_app("nq-open", nq_open, [golden / "first_answer.predictions.jsonl",
                                               golden / "last_answer_perturbed.predictions.jsonl"]),
        # a released system with the human judgments of its answers (browse --judgments)
        "judged": _open_app("nq-open", JUDGED_SYSTEM, [JUDGED_SYSTEM],
                            judgments=str(shared_file("data", "openqa-eval",
                                                      "NQ301_human.tsv"))),
    }
    with contextlib.ExitStack() as stack:
        yield {k: stack.enter_context(_serving_app(make)) for k, make in apps.items()}


def _cli_out(*argv: str) -> str:
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from nqkit.cli import main

    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert main(list(argv)) == 0
    return out.getvalue()


def _table_lines(page, selector: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The rows of a table on the page, each as its cells joined by single spaces."""
    return [" ".join(c.strip() for c in tr.locator("th, td").all_inner_texts())
            for tr in page.locator(f"{selector} tr").all()]


def _cli_lines(out: str, title: str) -> list[str]:
    lines = out.splitlines()
    i = lines.index(title)
    rows = []
    for line in lines[i + 1:]:
        if not line.strip() or line.startswith(("signature:", "(")):
            break
        if set(line.replace(" ", "")) != {"-"}:
            rows.append(" ".join(c for c in line.split("  ") if c.strip()).strip())
    return [" ".join(r.split()) for r in rows]


def test_open_views_show_what_eval_and_compare_print(
        open_servers: dict[str, str], browser) -> None:  # type: ignore[no-untyped-def]
    ctx = _context(browser, viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    gold = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    golden = shared_file("golden", "nq-open", "mixed.predictions.jsonl").parent
    try:
        # NQ-open: the summary is what `nqkit eval nq-open --explain --allow-missing`
        # prints, and its accuracy the official script's (golden/)
        page.goto(open_servers["nq-open"] + "/")
        out = _cli_out("eval", "nq-open", "--gold", str(gold), "--predictions",
                       str(golden / "mixed.predictions.jsonl"), "--allow-missing",
                       "--explain")
        assert [" ".join(r.split()) for r in _table_lines(page, "#metrics")] == \
            _cli_lines(out, "NQ-open exact match")
        official = json.loads((golden / "mixed.official.json").read_text())
        assert f"exact match {official['accuracy']:.4f}" in _table_lines(page, "#metrics")
        assert "signature: " + page.locator("#signature").inner_text() in out.splitlines()
        _doc_shot(page, "browse-nq-open")
        # the filter submits itself: the 400 questions where the conventions disagree
        # (`eval --explain`), then the 3 of them that only the substring rules accept
        page.select_option("select[name=conventions]", "disagree")
        page.wait_for_url("**/?*conventions=disagree*")
        assert page.locator("#total").inner_text() == "400"
        page.select_option("select[name=accepted]",
                           "best-subspan-em + containment + qa-metrics only")
        page.wait_for_url("**/?*accepted=best-subspan-em*")
        rows = page.locator("table.examples tbody tr")
        assert rows.count() == 3
        with page.expect_navigation():
            rows.first.locator("td.q a").click()
        assert page.locator("tr.conv-containment .oc").inner_text() == "correct"
        assert page.locator("tr.conv-orqa .oc").inner_text() == "wrong"
        assert "Why they disagree" in page.locator("p.why").inner_text()
        _doc_shot(page, "browse-nq-open-question")
        first = page.locator("h1.question").inner_text()
        with page.expect_navigation():
            page.keyboard.press("j")  # next within the filter
        assert page.locator("h1.question").inner_text() != first
        assert "2 of 3 (filtered)" in page.locator(".crumbs .pos").inner_text()

        # AmbigQA: the means are the official script's (golden/), to the 4 digits shown
        page.goto(open_servers["ambigqa"] + "/")
        metrics = json.loads(shared_file("golden", "ambigqa", "qa_edited.official.json")
                             .read_text())["metrics"]
        shown = _table_lines(page, "#metrics")
        for name, v in metrics.items():
            assert f"{name} {v['all']:.4f} {v['multi']:.4f}" in shown, name
        page.goto(open_servers["ambigqa"] + f"/qid/{JEOPARDY}")
        assert page.locator("#score-F1-answer").inner_text() == "0.6667"
        assert page.locator("#ann-2 table.pairs").is_visible()
        _doc_shot(page, "browse-ambigqa")

        # Side by side: the paired test is what `nqkit compare` prints
        page.goto(open_servers["pair"] + "/")
        out = _cli_out("compare", "nq-open", "--gold", str(gold), "--resamples",
                       str(PAIR_TESTS[0]), "--trials", str(PAIR_TESTS[1]),
                       str(golden / "first_answer.predictions.jsonl"),
                       str(golden / "last_answer_perturbed.predictions.jsonl"))
        title = page.locator("#cmptitle").inner_text()
        assert [" ".join(r.split()) for r in _table_lines(page, "#cmptable")] == \
            _cli_lines(out, title)
        assert "signature: " + page.locator("#cmpsignature").inner_text() in out.splitlines()
        _doc_shot(page, "browse-side-by-side")
        with page.expect_navigation():
            page.locator("table.examples tbody tr td.q a").first.click()
        assert page.locator(".side").count() == 2
        _shot(page, "browse-side-by-side-question")

        # Human judgments: the filter to the pairs where people and exact match disagree
        # (their count: tests/test_browser_judged.py), then one of them
        page.goto(open_servers["judged"] + "/")
        page.select_option("select[name=human_em]", "disagree")
        page.wait_for_url("**/?*human_em=disagree*")
        shown = page.locator("table.nums tr", has_text="human ≠ exact match")
        assert shown.locator("td").first.inner_text().split("/")[0] == \
            page.locator("#total").inner_text() != "0"
        marks = page.locator("table.examples tbody td.c-disagree").all_inner_texts()
        assert marks and all("≠ EM" in m for m in marks)
        with page.expect_navigation():
            page.locator("table.examples tbody tr td.q a").first.click()
        assert page.locator("tr.j-em.disagree").is_visible()
        _shot(page, "browse-nq-open-judged")
    finally:
        ctx.close()
    assert not errors, errors


def _hostile_open_files(d: Path, canary: str) -> dict[str, Path]:
    """NQ-open and AmbigNQ gold and predictions whose questions, answers, predicted answers
    and predicted questions are the hostile payload."""
    payload = _hostile_payload(canary)
    qs = [f"who wrote {payload} part {i}" for i in range(6)]
    files = {"open": d / "open.jsonl", "a": d / "a.jsonl", "b": d / "b.jsonl",
             "ambig": d / "ambig.json", "ambig_pred": d / "ambig_pred.json"}
    files["open"].write_text("".join(json.dumps({"question": q, "answer": [payload, "x"]})
                                     + "\n" for q in qs), encoding="utf-8")
    files["a"].write_text("".join(json.dumps({"question": q, "prediction": payload}) + "\n"
                                  for q in qs), encoding="utf-8")
    files["b"].write_text("".join(json.dumps({"question": q, "prediction": "x"}) + "\n"
                                  for q in qs), encoding="utf-8")
    ambig = [{"id": str(i), "question": q, "annotations": [
        {"type": "multipleQAs", "qaPairs": [{"question": payload, "answer": [payload]},
                                            {"question": q, "answer": ["x"]}]},
        {"type": "singleAnswer", "answer": [payload]}]} for i, q in enumerate(qs)]
    files["ambig"].write_text(json.dumps(ambig), encoding="utf-8")
    files["ambig_pred"].write_text(json.dumps({str(i): [{"question": payload,
                                                         "answer": payload}]
                                               for i in range(len(qs))}), encoding="utf-8")
    return files


def test_hostile_data_in_open_views_runs_nothing_loads_nothing(
        browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # The same payload as the hostile page above, whose control shows that it reaches a
    # canary when opened as is; here it is the questions, gold answers, predicted answers
    # and predicted questions of NQ-open, AmbigQA and side-by-side views.
    with _canary() as canary:
        f = _hostile_open_files(tmp_path, canary.url)
        apps = [_open_app("nq-open", f["open"], [f["a"]]),
                _open_app("ambigqa", f["ambig"], [f["ambig_pred"]]),
                _open_app("nq-open", f["open"], [f["a"], f["b"]])]
        for make in apps:
            with _serving_app(make) as app:
                ctx = _context(browser, viewport={"width": 1280, "height": 900})
                requests: list[str] = []
                ctx.on("request", lambda r, seen=requests: seen.append(r.url))
                pg = ctx.new_page()
                try:
                    for path in ("/", "/qid/0"):
                        url = app + path
                        resp = pg.goto(url)
                        assert resp is not None and resp.status == 200, url
                        pg.wait_for_load_state("load")
                        # the payload shows as text, and its link and handlers are inert
                        assert "<script>window.__pwned=1" in pg.locator("main").inner_text()
                        # none of its elements exists (the app's pages have none of these,
                        # one script, from /static, and forms that go to /)
                        for el in ("img", "iframe", "object", "embed", "svg", "video",
                                   "audio", "base", "meta[http-equiv]", "style",
                                   "form:not([action='/'])", "input[type=image]", "button[id]",
                                   "script:not([src='/static/app.js'])", "[style]"):
                            assert pg.locator(el).count() == 0, (url, el)
                        assert pg.locator("[onclick], [onerror], [onload], [onmouseover], "
                                          "a[href^='javascript']").count() == 0, url
                        assert pg.locator(f"[src^='{canary.url}'], [href^='{canary.url}'], "
                                          f"[action^='{canary.url}']").count() == 0, url
                        assert pg.url == url and pg.title() != "PWNED", url
                        assert pg.evaluate("window.__pwned") is None, url
                    pg.wait_for_timeout(200)  # time for a late load or a refresh
                    assert pg.url == url and pg.evaluate("window.__pwned") is None
                finally:
                    ctx.close()
                assert all(u.startswith(app + "/") for u in requests), \
                    [u for u in requests if not u.startswith(app + "/")]
        assert canary.hits == [], canary.hits
