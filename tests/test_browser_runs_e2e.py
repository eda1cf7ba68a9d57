"""End-to-end tests of ``nqkit browse --task retrieval`` in a real browser (Debian's
Chromium, headless): a real BM25 run over the real passages (200 NQ-open dev questions,
``real_bm25_runs`` of conftest.py), two runs side by side, and a run whose every field
carries hostile markup. The numbers read off the rendered pages are checked against
``nqkit eval retrieval`` and ``nqkit compare retrieval`` run as commands. Screenshots go to
``artifacts/browser/`` (gitignored).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nqkit.cli import main
from test_browser_e2e import (
    _canary,
    _context,
    _doc_shot,
    _hostile_payload,
    _serving_app,
    _shot,
    chromium,
)
from test_browser_runs import TESTS, hostile_run

from conftest import require

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def servers(real_bm25_views: dict[str, Any]) -> Iterator[dict[str, str]]:
    """One server over the run, one over the two runs side by side."""
    require("uvicorn")
    from nqkit.browser.open_app import create_open_app

    one, two = real_bm25_views["one"], real_bm25_views["pair"]
    with _serving_app(lambda port: create_open_app(one, port=port)) as url1, \
            _serving_app(lambda port: create_open_app(two, port=port)) as url2:
        yield {"one": url1, "two": url2}


def _cells(page: Any, table: str) -> list[list[str]]:  # the cells as the browser shows them
    return [[c.strip() for c in row.locator("th, td").all_inner_texts()]
            for row in page.locator(f"table#{table} tr").all()]


def _printed(*argv: str, capsys: pytest.CaptureFixture[str]) -> list[list[str]]:
    capsys.readouterr()
    assert main(list(argv)) == 0
    lines = capsys.readouterr().out.splitlines()
    return [re.split(r"\s{2,}", ln.strip()) for ln in lines
            if re.match(r"(top-|metric )", ln)]


def test_run_index_filters_and_question(servers: dict[str, str], browser: Any,
                                        real_bm25_runs: dict[str, Path],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    r = real_bm25_runs
    printed = _printed("eval", "retrieval", "--gold", str(r["qa"]), "--predictions",
                       str(r["trec"]), "--passages", str(r["passages"]), "--qrels",
                       str(r["qrels"]), capsys=capsys)
    ctx = _context(browser, viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(servers["one"] + "/")
        assert _cells(page, "metrics") == printed
        rows = page.locator("table.examples tbody tr")
        assert page.locator("#total").inner_text() == "200"
        _doc_shot(page, "browse-retrieval-index")
        # a filter applies as soon as it is chosen (app.js): no answer in the top 20
        misses = 200 - round(float(printed[3][1]) * 200)
        page.select_option("select[name=top20]", "miss")
        page.wait_for_url("**/?*top20=miss*")
        assert page.locator("#total").inner_text() == str(misses)
        page.select_option("select[name=top20]", "hit")
        page.wait_for_url("**/?*top20=hit*")
        page.select_option("select[name=kind]", "coincidence")
        page.wait_for_url("**/?*kind=coincidence*")
        kinds = page.locator("table.examples tbody td.c-kind").all_inner_texts()
        assert kinds and all(k.strip() == "coincidence" for k in kinds)
        # a question: its ranked passages, the answer strings marked, the first hit's
        # passage the first marked one, not a gold passage (a coincidence)
        with page.expect_navigation():
            rows.first.locator("td.q a").click()
        first = int(page.locator("td.firsthit b").inner_text())
        marked = page.locator("li.psg.has")
        assert marked.count() >= 1
        assert int(marked.first.get_attribute("data-rank") or 0) == first
        assert marked.first.locator("mark.hl").count() >= 1
        assert marked.first.locator(".oc-firsthit").count() == 1
        assert "gold" not in (marked.first.get_attribute("class") or "").split()
        assert page.locator("li.psg").count() == 100
        _shot(page, "runs-02-question")
        # by hand from the run file: "what was the city of beijing previously known as"
        # has the answer at ranks 2 and 3; its gold passage (the qrels') is rank 3, so
        # rank 2, the first hit, is a coincidence
        page.goto(servers["one"] + "/qid/47")
        assert page.locator("li.psg.has").evaluate_all(
            "els => els.slice(0, 2).map(e => e.dataset.rank)") == ["2", "3"]
        assert page.locator("li.psg.gold").first.get_attribute("data-rank") == "3"
        assert page.locator("td.firsthit .oc").inner_text() == "coincidence"
        _doc_shot(page, "browse-retrieval")
        assert not errors, errors
    finally:
        ctx.close()


def test_two_runs_side_by_side(servers: dict[str, str], browser: Any,
                               real_bm25_runs: dict[str, Path],
                               capsys: pytest.CaptureFixture[str]) -> None:
    r = real_bm25_runs
    printed = _printed("compare", "retrieval", "--gold", str(r["qa"]), "--passages",
                       str(r["passages"]), "--qrels", str(r["qrels"]), "--resamples",
                       str(TESTS[0]), "--trials", str(TESTS[1]), str(r["trec"]),
                       str(r["trec2"]), capsys=capsys)
    ctx = _context(browser, viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    try:
        page.goto(servers["two"] + "/")
        assert _cells(page, "cmptable") == printed
        _shot(page, "runs-03-pair-index")
        with page.expect_navigation():
            page.locator("table.examples tbody tr").first.locator("td.q a").click()
        assert page.locator(".side").count() == 2
        assert page.locator(".side-a li.psg").count() >= 1
        assert page.locator(".side-b li.psg").count() >= 1
        page.evaluate("window.scrollTo(0, document.querySelector('.pair').offsetTop - 60)")
        _doc_shot(page, "browse-retrieval-side-by-side")
    finally:
        ctx.close()


def test_hostile_run_runs_nothing_loads_nothing(browser: Any, tmp_path: Path) -> None:
    require("uvicorn")

    from nqkit.browser.open_app import create_open_app
    from nqkit.browser.serve import load_open

    with _canary() as canary:
        payload = _hostile_payload(canary.url)
        files = hostile_run(tmp_path, payload)
        view = load_open("retrieval", str(files["gold"]), [str(files["run"])])
        with _serving_app(lambda port: create_open_app(view, port=port)) as app:
            ctx = _context(browser, viewport={"width": 1280, "height": 900})
            requests: list[str] = []
            ctx.on("request", lambda q: requests.append(q.url))
            page = ctx.new_page()
            try:
                for path in ("/", "/?q=script", "/qid/0", "/qid/1"):
                    resp = page.goto(app + path)
                    assert resp is not None and resp.status == 200
                    page.wait_for_load_state("load")
                    if path.startswith("/item"):
                        # the answer "<script>" is marked, as text
                        marks = page.locator("mark.hl").all_inner_texts()
                        assert "<script>" in marks
                        assert payload in page.locator(".ptext").first.inner_text()
                        assert payload in page.locator("h1.question").inner_text()
                    # the parts that show the run's data: the rows, the question, the cards
                    data = ":is(table.examples, section.qhead, section.card)"
                    assert page.locator(f"{data} :is(script, iframe, img, object, embed, "
                                        "form, input, button, svg, video, audio, link, "
                                        "meta, base)").count() == 0
                    assert page.locator(f"{data} :is([onerror], [onload], [onclick], [src], "
                                        "[action], [style])").count() == 0
                    page.wait_for_timeout(200)  # time for a late load or a refresh
                    assert page.url == app + path
                    assert page.title() != "PWNED"
                    assert page.evaluate("window.__pwned") is None
            finally:
                ctx.close()
        assert canary.hits == [], canary.hits
        assert requests and all(u.startswith(app + "/") for u in requests), requests
