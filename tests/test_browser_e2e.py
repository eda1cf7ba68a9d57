"""End-to-end tests of ``nqkit browse`` in a real browser (Debian's Chromium, headless).

The app runs under uvicorn on 127.0.0.1 (a free port) in a background thread; Playwright
drives Chromium through the pages as a user would. Screenshots are saved under
``artifacts/browser/`` (gitignored) for a person to look at.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import REQUIRE_SHARED, ROOT, require, shared_file

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("NQKIT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-quic", "--no-first-run", "--disable-component-update",
                 "--disable-sync"]
ARTIFACTS = ROOT / "artifacts" / "browser"
NOBEL_ID = -3290814144789249484


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    uvicorn = require("uvicorn")
    from nqkit.browser.app import create_app
    from nqkit.browser.model import load_dataset

    gold = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    preds = shared_file("golden", "nq-eval", "annotator0.predictions.json")
    ds = load_dataset(gold, str(preds), cache_dir=tmp_path_factory.mktemp("cache"),
                      progress=False)
    port = _free_port()
    config = uvicorn.Config(create_app(ds), host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the browser app did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    sync_api = require("playwright.sync_api")
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        msg = f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
        if REQUIRE_SHARED:  # CI installs Chromium: its absence there is a failure
            pytest.fail(msg)
        pytest.skip(msg)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM if os.path.exists(CHROMIUM)
                              else shutil.which("chromium"), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
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
    page.locator("table.examples tbody tr td.q a").first.click()
    seen = [page.locator("h1.question").inner_text()]
    for _ in range(n - 1):
        page.keyboard.press("j")
        page.wait_for_load_state()
        seen.append(page.locator("h1.question").inner_text())
    assert len(set(seen)) == n
    assert page.locator("#next").count() == 0  # the last one of the filtered list
