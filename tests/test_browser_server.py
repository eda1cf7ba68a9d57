"""Server-side tests of ``nqkit browse`` through FastAPI's TestClient (no browser).

Expected example sets and outcome labels are worked out by hand (the real sample with
its annotator-0 predictions, checked against the official script's precision and recall;
the project's toy data), never taken from nqkit's scoring.
"""

from __future__ import annotations

import builtins
import gzip
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import require, shared_file

require("fastapi")
require("httpx")

from fastapi.testclient import TestClient

from nqkit.analysis.nq_breakdown import question_word
from nqkit.browser.app import create_app
from nqkit.browser.model import OUTCOMES, Dataset, load_dataset
from nqkit.data.toy import TOY_EXAMPLES, TOY_PATH, ToyAnnotation, ToyExample, build_example
from nqkit.errors import InputError
from nqkit.formats.nq_gold import read_nq_gold

NOBEL_ID = -3290814144789249484
ID_RE = re.compile(r'<div class="id">(-?\d+) ·')


BASE = "http://127.0.0.1:8080"  # the default address of ``nqkit browse``


def _client(ds: Dataset, raise_server_exceptions: bool = True) -> TestClient:
    return TestClient(create_app(ds), base_url=BASE,
                      raise_server_exceptions=raise_server_exceptions)


def _listing(d: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(d)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(d.rglob("*"))}


def _ids(html: str) -> list[int]:
    return [int(m) for m in ID_RE.findall(html)]


# ------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def sample_gold() -> Path:
    return shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")


@pytest.fixture(scope="module")
def sample_preds() -> Path:
    return shared_file("golden", "nq-eval", "annotator0.predictions.json")


@pytest.fixture(scope="module")
def sample_listing_before(sample_gold: Path) -> dict[str, tuple[int, int]]:
    return _listing(sample_gold.parent)


@pytest.fixture(scope="module")
def sample_ds(sample_gold: Path, sample_listing_before: Any,
              tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return load_dataset(sample_gold, cache_dir=tmp_path_factory.mktemp("cache"), progress=False)


@pytest.fixture(scope="module")
def sample_pred_ds(sample_gold: Path, sample_preds: Path, sample_listing_before: Any,
                   tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return load_dataset(sample_gold, str(sample_preds), cache_dir=tmp_path_factory.mktemp("cache"),
                        progress=False)


@pytest.fixture(scope="module")
def plain(sample_ds: Dataset) -> TestClient:
    return _client(sample_ds)


@pytest.fixture(scope="module")
def scored(sample_pred_ds: Dataset) -> TestClient:
    return _client(sample_pred_ds)


def _span(d: dict[str, Any]) -> dict[str, int]:
    return {k: d[k] for k in ("start_byte", "end_byte", "start_token", "end_token")}


def _toy_predictions() -> dict[str, Any]:
    """Hand-made predictions on the toy set, all at score 1 (so every one counts)."""
    ex = {s.example_id: build_example(s) for s in TOY_EXAMPLES}

    def cand_starting(eid: int, word: str) -> dict[str, int]:
        d = ex[eid]
        toks = d["document_tokens"]
        for c in d["long_answer_candidates"]:
            words = [t["token"] for t in toks[c["start_token"]:c["end_token"]]
                     if not t["html_token"]]
            if words and " ".join(words).startswith(word):
                return _span(c)
        raise AssertionError(word)

    def phrase(eid: int, text: str) -> dict[str, int]:
        toks = ex[eid]["document_tokens"]
        w = text.split()
        for i in range(len(toks)):
            if [t["token"] for t in toks[i:i + len(w)]] == w:
                return {"start_byte": toks[i]["start_byte"], "end_byte": toks[i + len(w) - 1]
                        ["end_byte"], "start_token": i, "end_token": i + len(w)}
        raise AssertionError(text)

    null = {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1}

    def pred(eid: int, long: dict[str, int], shorts: list[dict[str, int]]) -> dict[str, Any]:
        return {"example_id": eid, "long_answer": long, "long_answer_score": 1.0,
                "short_answers": shorts, "short_answers_score": 1.0, "yes_no_answer": "NONE"}

    return {"predictions": [
        pred(101, cand_starting(101, "Google was founded"),
             [phrase(101, "Larry Page"), phrase(101, "Sergey Brin")]),
        pred(102, cand_starting(102, "Google LLC"), []),
        pred(104, null, []),
        pred(105, cand_starting(105, "France Paris"), [phrase(105, "Paris")]),
        pred(107, cand_starting(107, "The Moon is"), []),
    ]}


# By hand from the toy specifications (src/nqkit/data/toy.py) and the predictions above.
TOY_HAS_LONG = {101, 102, 103, 104, 105, 106}
TOY_HAS_SHORT = {101, 102, 103, 105, 106}
TOY_YESNO = {103}
TOY_TYPE = {101: "paragraph", 102: "paragraph", 103: "paragraph", 104: "list item",
            105: "table row", 106: "paragraph", 107: "null"}
TOY_WORD = {101: "who", 102: "when", 103: "other", 104: "what", 105: "what", 106: "who",
            107: "who"}
TOY_LONG_OUTCOME = {101: "correct", 102: "wrong", 103: "missed", 104: "missed",
                    105: "correct", 106: "missed", 107: "false positive"}
TOY_SHORT_OUTCOME = {101: "correct", 102: "missed", 103: "missed", 104: "null",
                     105: "correct", 106: "missed", 107: "null"}


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    d = tmp_path_factory.mktemp("toypred")
    pf = d / "toy.predictions.json"
    pf.write_text(json.dumps(_toy_predictions()), encoding="utf-8")
    ds = load_dataset(TOY_PATH, str(pf), cache_dir=tmp_path_factory.mktemp("cache"),
                      progress=False)
    return _client(ds)


EVIL_ID = 666
EVIL_HTML = (
    '<html><head><link rel=stylesheet href="http://evil.example/x.css"></head>'
    '<body style="background:url(http://evil.example/bg.png)"><H1>Evil page</H1>'
    '<P style="color:red">Click <a href="javascript:alert(3)">here</a> '
    "<script>alert(1)</script> <img src=x onerror=\"alert(2)\"> now .</P>"
    "<P>Another paragraph .</P></body></html>"
)


@pytest.fixture(scope="module")
def evil_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("evildata")
    spec = ToyExample(EVIL_ID, "who wrote the evil page", "Evil page", EVIL_HTML,
                      [ToyAnnotation("Click here", ["here"]) for _ in range(3)]
                      + [ToyAnnotation(None), ToyAnnotation("Another paragraph")])
    with gzip.open(d / "evil.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write(json.dumps(build_example(spec)) + "\n")
    return d


@pytest.fixture(scope="module")
def evil(evil_dir: Path, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[tuple[TestClient, dict[str, tuple[int, int]]]]:
    before = _listing(evil_dir)
    ds = load_dataset(evil_dir / "evil.jsonl.gz", cache_dir=tmp_path_factory.mktemp("cache"),
                      progress=False)
    yield _client(ds), before


# ------------------------------------------------------------------------- routes

def test_every_route_answers(scored: TestClient) -> None:
    r = scored.get("/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert "annotator0.predictions.json" in r.text
    assert len(_ids(r.text)) == 10
    r = scored.get(f"/example/{NOBEL_ID}")
    assert r.status_code == 200
    assert "who got the first nobel prize in physics" in r.text
    assert "Wilhelm Conrad Röntgen" in r.text
    r = scored.get(f"/example/{NOBEL_ID}/page")
    assert r.status_code == 200
    assert re.search(r'<iframe[^>]*sandbox=""[^>]*src="/example/' + str(NOBEL_ID)
                     + '/document', r.text)
    r = scored.get(f"/example/{NOBEL_ID}/document")
    assert r.status_code == 200 and "Röntgen" in r.text
    for name, ctype in (("style.css", "text/css"), ("app.js", "text/javascript"),
                        ("favicon.svg", "image/svg+xml")):
        r = scored.get(f"/static/{name}")
        assert r.status_code == 200 and r.headers["content-type"].startswith(ctype)
        assert r.content
    r = scored.get("/pr-curve.png")
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert r.content.startswith(b"\x89PNG\r\n\x1a\n")


def test_without_predictions(plain: TestClient) -> None:
    r = plain.get("/")
    assert r.status_code == 200 and len(_ids(r.text)) == 10
    assert "prcurve" not in r.text
    assert plain.get("/pr-curve.png").status_code == 404
    assert plain.get(f"/example/{NOBEL_ID}").status_code == 200
    assert plain.get(f"/example/{NOBEL_ID}/document").status_code == 200


def test_app_csp_on_every_page(scored: TestClient) -> None:
    r = scored.get("/")
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "unsafe-inline" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"


# ------------------------------------------------------------------------- index queries

def test_search_by_question_and_by_id(scored: TestClient, sample_gold: Path) -> None:
    gold = read_nq_gold(sample_gold)
    r = scored.get("/", params={"q": "NOBEL"})
    assert _ids(r.text) == [NOBEL_ID]
    word = "the"
    expected = [i for i, g in gold.items() if word in g.question_text.lower()]
    assert _ids(scored.get("/", params={"q": word}).text) == expected
    r = scored.get("/", params={"q": str(NOBEL_ID)}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/example/{NOBEL_ID}"
    r = scored.get("/", params={"q": "zzzz no such question"})
    assert r.status_code == 200 and _ids(r.text) == []


def test_sorting(scored: TestClient, sample_gold: Path) -> None:
    gold = read_nq_gold(sample_gold)
    order = list(gold)
    assert _ids(scored.get("/").text) == order
    assert _ids(scored.get("/", params={"desc": "1"}).text) == order[::-1]
    by_q = sorted(gold, key=lambda i: gold[i].question_text.lower())
    assert _ids(scored.get("/", params={"sort": "question"}).text) == by_q
    assert _ids(scored.get("/", params={"sort": "id", "desc": "1"}).text) == sorted(
        gold, reverse=True)


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> tuple[TestClient, list[int]]:
    """120 toy examples (ids 1000..1119) for paging."""
    d = tmp_path_factory.mktemp("many")
    ids = list(range(1000, 1120))
    with open(d / "many.jsonl", "w", encoding="utf-8") as f:
        for k, i in enumerate(ids):
            spec = TOY_EXAMPLES[k % len(TOY_EXAMPLES)]
            ex = ToyExample(i, spec.question, spec.title, spec.html, spec.annotations)
            f.write(json.dumps(build_example(ex)) + "\n")
    ds = load_dataset(d / "many.jsonl", cache_dir=tmp_path_factory.mktemp("cache"),
                      progress=False)
    return _client(ds), ids


def test_paging(many: tuple[TestClient, list[int]]) -> None:
    client, ids = many
    assert _ids(client.get("/").text) == ids[:50]
    assert _ids(client.get("/?page=2").text) == ids[50:100]
    assert _ids(client.get("/?page=3").text) == ids[100:]
    # Out-of-range and malformed pages give a sane page, never an error.
    for bad, expect in (("0", ids[:50]), ("-3", ids[:50]), ("abc", ids[:50]),
                        ("99999999999999999999", ids[100:]), ("4", ids[100:])):
        r = client.get("/", params={"page": bad})
        assert r.status_code == 200, bad
        assert _ids(r.text) == expect, bad
    assert _ids(client.get("/?page=2&sort=id&desc=1").text) == ids[::-1][50:100]


# The real sample with the annotator-0 predictions, by hand from the raw annotations and
# the predictions file. The official thresholds for this file (annotator0.official.json)
# are 2.0 (long) and 6.0 (short). Gold long: at least 2 of 5 annotators chose a long
# answer; gold short: at least 2 gave a short answer. Annotator 0's two long answers (on
# the Nobel page, score 2.0, and the Deadpool page, score 4.0) equal an annotator's long
# answer, so they are correct; its only short answer ("May 18, 2018" on Deadpool, score
# 6.0) equals the gold. Every other prediction is null: "missed" where there is gold.
SAMPLE_HAS_LONG = {5225754983651766092, NOBEL_ID, 8851020722386421469, -7660771254611710392}
SAMPLE_HAS_SHORT = {NOBEL_ID, 8851020722386421469}
SAMPLE_LONG_OUTCOME = {NOBEL_ID: "correct", 8851020722386421469: "correct",
                       5225754983651766092: "missed", -7660771254611710392: "missed"}
SAMPLE_SHORT_OUTCOME = {8851020722386421469: "correct", NOBEL_ID: "missed"}


def test_filters_on_sample(scored: TestClient, sample_gold: Path) -> None:
    gold = read_nq_gold(sample_gold, with_types=True)
    order = list(gold)

    def check(params: dict[str, str], keep: Any) -> None:
        r = scored.get("/", params=params)
        assert r.status_code == 200
        assert _ids(r.text) == [i for i in order if keep(i)], params

    check({"gold": "long"}, lambda i: i in SAMPLE_HAS_LONG)
    check({"gold": "nolong"}, lambda i: i not in SAMPLE_HAS_LONG)
    check({"gold": "short"}, lambda i: i in SAMPLE_HAS_SHORT)
    check({"gold": "long-noshort"}, lambda i: i in SAMPLE_HAS_LONG - SAMPLE_HAS_SHORT)
    check({"gold": "yesno"}, lambda i: False)  # no yes/no answers in the sample
    types = {gold[i].long_type() for i in order}
    assert len(types) >= 2
    for t in types:
        check({"type": str(t)}, lambda i, t=t: gold[i].long_type() == t)
    for w in {question_word(gold[i].question_text) for i in order}:
        check({"word": w}, lambda i, w=w: question_word(gold[i].question_text) == w)

    long_lab = {i: SAMPLE_LONG_OUTCOME.get(i, "null") for i in order}
    short_lab = {i: SAMPLE_SHORT_OUTCOME.get(i, "null") for i in order}
    for o in ("correct", "wrong", "missed", "false positive", "null"):
        check({"long": o}, lambda i, o=o: long_lab[i] == o)
        check({"short": o}, lambda i, o=o: short_lab[i] == o)
    # The labels add up to the official precision and recall (annotator0.official.json).
    official = json.loads(shared_file("golden", "nq-eval", "annotator0.official.json")
                          .read_text(encoding="utf-8"))
    for task, lab in (("long", long_lab), ("short", short_lab)):
        n = {o: sum(v == o for v in lab.values()) for o in OUTCOMES}
        predicted = n["correct"] + n["wrong"] + n["false positive"]
        with_gold = n["correct"] + n["wrong"] + n["missed"]
        assert n["correct"] / predicted == official[f"{task}-best-threshold-precision"]
        assert n["correct"] / with_gold == official[f"{task}-best-threshold-recall"]
    # And the outcome counts shown on the index are these.
    r = scored.get("/")
    for o in ("correct", "missed"):
        want = sum(v == o for v in long_lab.values())
        assert re.search(rf'oc-{o}[^"]*" href="[^"]*long={o}[^"]*">{o} <b>{want}</b>', r.text), o


def test_filters_and_outcomes_on_toy(toy: TestClient) -> None:
    allids = list(TOY_TYPE)

    def got(**params: str) -> set[int]:
        r = toy.get("/", params=params)
        assert r.status_code == 200
        return set(_ids(r.text))

    assert _ids(toy.get("/").text) == allids
    assert got(gold="long") == TOY_HAS_LONG
    assert got(gold="nolong") == set(allids) - TOY_HAS_LONG
    assert got(gold="short") == TOY_HAS_SHORT
    assert got(gold="yesno") == TOY_YESNO
    assert got(gold="long-noshort") == TOY_HAS_LONG - TOY_HAS_SHORT
    for t in set(TOY_TYPE.values()):
        assert got(type=t) == {i for i, v in TOY_TYPE.items() if v == t}, t
    for w in ("who", "when", "what", "where", "how", "which", "other"):
        assert got(word=w) == {i for i, v in TOY_WORD.items() if v == w}, w
    for o in ("correct", "wrong", "missed", "false positive", "null"):
        assert got(long=o) == {i for i, v in TOY_LONG_OUTCOME.items() if v == o}, o
        assert got(short=o) == {i for i, v in TOY_SHORT_OUTCOME.items() if v == o}, o
    assert got(gold="long", long="missed", word="who") == {106}


def test_unknown_filter_values_are_ignored(scored: TestClient) -> None:
    everything = _ids(scored.get("/").text)
    for params in ({"gold": "bogus"}, {"type": "<script>"}, {"word": "why"},
                   {"long": "maybe"}, {"sort": "__class__"}, {"desc": "x"}):
        r = scored.get("/", params=params)
        assert r.status_code == 200, params
        assert _ids(r.text) == everything, params
        assert "<script>" not in r.text


# ------------------------------------------------------------------------- errors

ODD_URLS = ["/?q=%ff", "/?q=%00", "/?q=" + "a" * 20000, "/?page=%ff", "/?page=1e5",
            "/?page=-99999999999999999999", "/?gold=long&gold=short", "/?sort=agree&desc=1",
            "/?sort=type", "/?sort=short_score", "/?sort=title&desc=yes",
            "/example/%00", "/example/%ff", "/example/" + "9" * 5000, "/example/%2e%2e",
            "/example/.", "/static/", "/static/%2e%2e", "/example/1_000",
            f"/example/{NOBEL_ID}?page=-5&sort=%ff&long=%00",
            f"/example/{NOBEL_ID}/page?at=c99999",
            f"/example/{NOBEL_ID}/page?at=%22%3E%3Cscript%3Ealert(1)%3C/script%3E",
            f"/example/{NOBEL_ID}?q=nobel&long=correct&sort=question&desc=1"]


def test_odd_requests_never_500(sample_pred_ds: Dataset) -> None:
    client = _client(sample_pred_ds, raise_server_exceptions=False)
    for url in ODD_URLS:
        r = client.get(url, follow_redirects=False)
        assert r.status_code in (200, 303, 404), (url, r.status_code)
        assert "<script>alert" not in r.text, url

def test_unknown_example_is_404_with_search(scored: TestClient) -> None:
    for url in ("/example/12345", "/example/12345/page", "/example/12345/document",
                "/example/abc", "/nothing/here", "/static/nope.css"):
        r = scored.get(url)
        assert r.status_code == 404, url
        assert 'class="bigsearch"' in r.text and 'name="q"' in r.text, url


def test_path_traversal_never_reaches_files(scored: TestClient,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real_open = builtins.open
    real_os_open = os.open

    def spy_open(file: Any, *a: Any, **k: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *a, **k)

    def spy_os_open(path: Any, *a: Any, **k: Any) -> Any:
        opened.append(str(path))
        return real_os_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    urls = ["/example/..%2F..%2Fetc%2Fpasswd", "/example/..%2F..%2Fetc%2Fpasswd/page",
            "/example/..%2F..%2Fetc%2Fpasswd/document", "/static/..%2F..%2Fetc%2Fpasswd",
            "/static/..%2Fapp.py", "/static/%2Fetc%2Fpasswd", "/example/%2e%2e/%2e%2e/etc/passwd",
            "/../../etc/passwd", "/?q=../../etc/passwd", "/?q=..%2F..%2Fetc%2Fpasswd",
            f"/example/{NOBEL_ID}?q=../../etc/passwd&sort=../../x&page=../1",
            f"/example/{NOBEL_ID}/page?at=../../etc/passwd"]
    for url in urls:
        r = scored.get(url)
        assert r.status_code in (200, 404), (url, r.status_code)
        assert "root:" not in r.text, url
    assert not [p for p in opened if "passwd" in p or ".." in p or "app.py" in p], opened


# ------------------------------------------------------------------------- safety

FORBIDDEN = ("<script>alert", "onerror", "javascript:", "evil.example")
DOC_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
           "sandbox; base-uri 'none'; form-action 'none'; frame-ancestors 'self'")


def test_hostile_page_never_reaches_a_page_unsandboxed(
        evil: tuple[TestClient, dict[str, tuple[int, int]]], evil_dir: Path) -> None:
    client, before = evil
    # The hostile markup is really in the data (else this test would prove nothing).
    with gzip.open(evil_dir / "evil.jsonl.gz", "rt", encoding="utf-8") as f:
        raw = f.read()
    for bad in FORBIDDEN:
        assert bad.replace("<", "\\u003c") in raw or bad in raw, bad
    index = client.get("/")
    ex = client.get(f"/example/{EVIL_ID}")
    full = client.get(f"/example/{EVIL_ID}/page")
    doc = client.get(f"/example/{EVIL_ID}/document")
    for r in (index, ex, full, doc):
        assert r.status_code == 200
        for bad in FORBIDDEN:
            assert bad not in r.text.lower(), (r.url, bad)
        assert 'style="color:red' not in r.text and "url(" not in r.text
    # The answer itself is shown, sanitized, with the gold short answer marked inside it.
    assert '<a><mark class="gs">here</mark></a>' in ex.text
    assert '<mark class="gl gs">here</mark>' in doc.text and "Another paragraph" in doc.text
    assert re.search(r'<iframe[^>]*sandbox=""', full.text)
    assert doc.headers["content-security-policy"] == DOC_CSP
    for page in (index, ex, full):
        csp = page.headers["content-security-policy"]
        assert "unsafe-inline" not in csp and "script-src 'self'" in csp
    assert _listing(evil_dir) == before


def test_app_never_writes_into_the_data_dir(sample_gold: Path, sample_listing_before: Any,
                                            scored: TestClient, plain: TestClient) -> None:
    for client in (scored, plain):
        client.get("/")
        client.get(f"/example/{NOBEL_ID}")
        client.get(f"/example/{NOBEL_ID}/document")
    assert _listing(sample_gold.parent) == sample_listing_before


def test_cache_dir_in_data_dir_is_refused(evil_dir: Path) -> None:
    with pytest.raises(InputError, match="the cache directory is a data directory"):
        load_dataset(evil_dir / "evil.jsonl.gz", cache_dir=evil_dir, progress=False)


def test_malformed_gold_same_error_as_cli(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from nqkit.cli import main

    bad = tmp_path / "data" / "bad.jsonl"
    bad.parent.mkdir()
    good_line = TOY_PATH.read_text(encoding="utf-8").splitlines()[0]
    bad.write_text(good_line + "\n{\"example_id\": 5, \"annotations\": \n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_dataset(bad, cache_dir=tmp_path / "c1", progress=False)
    assert str(e.value).startswith(f"{bad}:2")
    code = main(["browse", "--gold", str(bad), "--cache-dir", str(tmp_path / "c2"),
                 "--index-only"])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"nqkit: error: {e.value}"
    assert sorted(os.listdir(bad.parent)) == ["bad.jsonl"]


# The annotator counts of the badges, by hand from the toy specifications: "k of n" counts,
# of all 5 annotators, those who chose the gold long answer (the one most chose), and
# those who gave any short answer (or answered the gold's YES/NO).
TOY_LONG_CHIP = {
    101: "4 of 5 annotators chose this paragraph; 1 gave no long answer",
    102: "4 of 5 annotators chose this paragraph; 1 gave no long answer",
    103: "4 of 5 annotators chose this paragraph; 1 gave no long answer",
    # "Google Search" 3, "Google LLC" 1, null 1
    104: "3 of 5 annotators chose this list item; 1 chose another candidate, 1 gave no long "
         "answer",
    # "France Paris" 4, the header row "Country Capital" 1
    105: "4 of 5 annotators chose this table row; 1 chose another candidate",
    106: "4 of 5 annotators chose this paragraph; 1 gave no long answer",
    107: "1 of 5 annotators gave a long answer; at least 2 needed",
}
TOY_SHORT_CHIP = {
    101: "“Larry Page / Sergey Brin” · 3 of 5 annotators gave a short answer",
    102: "“1998” · 4 of 5 annotators gave a short answer",
    103: "YES (a yes/no answer) · 3 of 5 annotators answered YES",
    104: "null · 0 of 5 annotators gave a short answer",
    105: "“Paris” · 3 of 5 annotators gave a short answer",
    106: "“Wilhelm Conrad Röntgen” · 4 of 5 annotators gave a short answer",
    107: "null · 0 of 5 annotators gave a short answer",
}


def test_example_pages_show_the_labels(toy: TestClient) -> None:
    for i in TOY_TYPE:
        r = toy.get(f"/example/{i}")
        assert r.status_code == 200
        badges = re.search(r'<div class="badges">(.*?)</div>', r.text, re.S)
        assert badges is not None
        text = re.sub(r"<[^>]+>", "", badges.group(1))
        text = re.sub(r"\s+", " ", text)
        assert f"gold long answer: {TOY_TYPE[i]} · {TOY_LONG_CHIP[i]}" in text, (i, text)
        assert f"gold short answer: {TOY_SHORT_CHIP[i]}" in text, (i, text)
        assert "gold short answer: yes" not in text.lower() or i in TOY_YESNO
        assert f"question word: {TOY_WORD[i]}" in text, (i, text)
        assert f"long prediction {TOY_LONG_OUTCOME[i]}" in text, (i, text)
        assert f"short prediction {TOY_SHORT_OUTCOME[i]}" in text, (i, text)


# ------------------------------------------------------------------- links, hosts, HEAD, port

def _toy_dataset(tmp_path: Path, examples: list[dict[str, Any]]) -> Dataset:
    data = tmp_path / "data"
    data.mkdir()
    with open(data / "t.jsonl", "w", encoding="utf-8") as f:
        for d in examples:
            f.write(json.dumps(d) + "\n")
    return load_dataset(data / "t.jsonl", cache_dir=tmp_path / "cache", progress=False)


DOC_URLS = {301: "javascript:alert(1)", 302: "JaVaScRiPt:alert(1)", 303: " java\tscript:alert(1)",
            304: "data:text/html,<script>alert(1)</script>", 305: "vbscript:x",
            306: "//evil.example/x", 307: "https://en.wikipedia.org/wiki/Nobel_Prize"}


def test_document_url_is_a_link_only_when_http(tmp_path: Path) -> None:
    examples = []
    for i, url in DOC_URLS.items():
        d = build_example(TOY_EXAMPLES[0])
        d["example_id"], d["document_url"] = i, url
        examples.append(d)
    client = _client(_toy_dataset(tmp_path, examples))
    for i, url in DOC_URLS.items():
        r = client.get(f"/example/{i}")
        assert r.status_code == 200
        links = re.findall(r'<a class="ext" href="([^"]*)"', r.text)
        if i == 307:
            assert links == [url]
        else:
            assert links == [], (url, links)
            assert "script:" not in r.text.lower() and "evil.example" not in r.text


UNCLOSED_ELEMENTS = ["select", "noscript", "template", "textarea", "title", "plaintext",
                     "math><style"]


def test_unclosed_elements_do_not_hide_the_answer(tmp_path: Path) -> None:
    examples = []
    for k, el in enumerate(UNCLOSED_ELEMENTS):
        page = (f"<html><body><h1>Nobel</h1><p>Intro text <{el}><option>choice</p>"
                "<p>The first prize went to Wilhelm Conrad Röntgen in 1901 .</p>"
                "<p>Closing words here .</p></body></html>")
        spec = ToyExample(400 + k, "who won the first nobel prize in physics", "Nobel", page,
                          [ToyAnnotation("The first prize", ["Wilhelm Conrad Röntgen"])] * 3
                          + [ToyAnnotation(None)] * 2)
        examples.append(build_example(spec))
    client = _client(_toy_dataset(tmp_path, examples))
    for k, el in enumerate(UNCLOSED_ELEMENTS):
        doc = client.get(f"/example/{400 + k}/document").text
        body = doc[doc.index("<body>"):]
        text = " ".join(re.sub(r"<[^>]+>", " ", body).split())
        assert text.endswith("The first prize went to Wilhelm Conrad Röntgen in 1901 . "
                             "Closing words here ."), (el, text)
        assert '<mark class="gl gs">Wilhelm Conrad Röntgen</mark>' in body, el
        card = client.get(f"/example/{400 + k}").text
        assert '<mark class="gs">Wilhelm Conrad Röntgen</mark>' in card, el
        assert f"<{el.split('>')[0]}" not in body, el


def test_foreign_host_header_is_refused(sample_ds: Dataset) -> None:
    app = create_app(sample_ds)  # served on 127.0.0.1:8080 (the defaults)
    for base in ("http://127.0.0.1:8080", "http://localhost:8080", "http://LOCALHOST:8080",
                 "http://[::1]:8080"):
        r = TestClient(app, base_url=base).get("/")
        assert r.status_code == 200 and len(_ids(r.text)) == 10, base
    for base in ("http://evil.example:8080", "http://127.0.0.1.evil.example:8080",
                 "http://127.0.0.1:9999", "http://localhost", "http://127.0.0.1"):
        for url in ("/", f"/example/{NOBEL_ID}", f"/example/{NOBEL_ID}/document",
                    "/static/app.js"):
            r = TestClient(app, base_url=base).get(url)
            assert r.status_code == 400, (base, url)
            assert "Röntgen" not in r.text and "nobel" not in r.text.lower()
            assert r.headers["content-type"].startswith("text/plain")
    client = TestClient(app, base_url=BASE)
    for host in ("evil.example", "127.0.0.1:8080.evil.example", "", "127.0.0.1:8080 "):
        assert client.get("/", headers={"host": host}).status_code == 400, host
    # Listening on all interfaces, reached under a name the user allowed.
    app = create_app(sample_ds, host="0.0.0.0", port=8123, allow_hosts=["nq-box.lan"])
    for base, status in (("http://nq-box.lan:8123", 200), ("http://0.0.0.0:8123", 200),
                         ("http://127.0.0.1:8123", 200), ("http://other.lan:8123", 400),
                         ("http://nq-box.lan:8080", 400)):
        assert TestClient(app, base_url=base).get("/").status_code == status, base


def test_head_on_every_get_route(scored: TestClient) -> None:
    for url in ("/", "/?q=nobel", f"/example/{NOBEL_ID}", f"/example/{NOBEL_ID}/page",
                f"/example/{NOBEL_ID}/document", "/static/style.css", "/static/app.js",
                "/pr-curve.png"):
        get, head = scored.get(url), scored.head(url)
        assert head.status_code == 200, url
        assert head.content == b"", url
        assert head.headers["content-type"] == get.headers["content-type"], url
        assert head.headers["content-security-policy"] == get.headers["content-security-policy"]
        if "example" not in url or url.endswith("/document"):  # no timing in the body
            assert head.headers["content-length"] == str(len(get.content)), url
    assert scored.head("/example/12345").status_code == 404
    assert scored.post("/").status_code == 405


def test_port_in_use_is_one_error_line(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from nqkit.cli import main

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        code = main(["browse", "--gold", str(TOY_PATH), "--port", str(port),
                     "--cache-dir", str(tmp_path / "cache")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"nqkit: error: cannot listen on 127.0.0.1:{port}: the port is already in use — "
        "stop the program using it or choose another with --port"]
    assert not (tmp_path / "cache").exists()  # refused before any work


def test_cli_serves_on_the_port_it_prints(tmp_path: Path) -> None:
    # --port 0: the system chooses a free port (no other process can take it between a
    # test's choice and the server's bind) and the printed URL names it
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "nqkit", "browse", "--gold", str(TOY_PATH),
                             "--port", "0", "--cache-dir", str(tmp_path / "cache")],
                            env=env, stderr=subprocess.PIPE, text=True)
    # Only a safety net: a server that never prints its lines is killed (its stderr then
    # ends) instead of blocking the test forever.
    watchdog = threading.Timer(120, proc.kill)
    watchdog.start()
    try:
        assert proc.stderr is not None
        lines = [proc.stderr.readline(), proc.stderr.readline()]
        url = re.fullmatch(r"nqkit browse: open http://127\.0\.0\.1:(\d+)/  \(Ctrl-C to stop\)\n",
                           lines[1])
        assert url, lines
        port = int(url[1])
        assert port > 0
        # The URL works as soon as it is printed: the port already listens (a request made
        # before uvicorn runs waits in the backlog), so no retry on a refused connection.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        conn.request("HEAD", "/")
        r = conn.getresponse()
        assert r.status == 200 and r.read() == b""
        conn.request("GET", "/", headers={"Host": "rebound.example"})
        r = conn.getresponse()
        assert r.status == 400 and b"rebound.example" in r.read()
        conn.close()
    finally:
        watchdog.cancel()
        proc.terminate()
        proc.wait(timeout=120)
        proc.stderr.close()


def test_annotator_counts_on_the_real_sample(scored: TestClient) -> None:
    # By hand from the raw annotations of nq-dev-sample10: on the Nobel page annotators
    # 1-4 chose candidate 1 (a paragraph), annotator 0 chose candidate 2; 4 of them gave
    # a short answer, "Wilhelm Conrad Röntgen, of Germany" twice (the most common).
    def badges(ex_id: int) -> str:
        r = scored.get(f"/example/{ex_id}")
        assert r.status_code == 200
        m = re.search(r'<div class="badges">(.*?)</div>', r.text, re.S)
        assert m is not None
        return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", m.group(1)))

    text = badges(NOBEL_ID)
    assert ("gold long answer: paragraph · 4 of 5 annotators chose this paragraph; 1 chose "
            "another candidate") in text
    assert ("gold short answer: “Wilhelm Conrad Röntgen, of Germany” · 4 of 5 annotators gave "
            "a short answer") in text
    # The trade-winds page: 2 chose candidate 0, 3 none; 1 short answer (too few).
    text = badges(5225754983651766092)
    assert "paragraph · 2 of 5 annotators chose this paragraph; 3 gave no long answer" in text
    assert "gold short answer: null · 1 of 5 annotators gave a short answer; at least 2 " \
        "needed" in text
    # Fortnite: candidates 17 and 29, one annotator each, 3 none.
    assert ("2 different candidates chosen by 1 of 5 annotators each; 3 gave no long "
            "answer") in badges(-7660771254611710392)
    # The index shows the same count, with the sentence as its title.
    assert ('title="4 of 5 annotators chose this paragraph; 1 chose another candidate">4/5'
            in scored.get("/").text)


SIG_RE = re.compile(r'<span class="sig" id="signature">([^<]*)</span>')
CMD_RE = re.compile(r'<code id="evalcmd">([^<]*)</code>')


def _eval_nq(capsys: pytest.CaptureFixture[str], gold: Path, preds: Path, *flags: str
             ) -> tuple[int, str]:
    """Exit code and the signature line of ``nqkit eval nq`` on the files."""
    from nqkit.cli import main

    capsys.readouterr()
    code = main(["eval", "nq", "--gold", str(gold), "--predictions", str(preds),
                 "--no-gold-cache", *flags])
    out = capsys.readouterr().out
    sigs = [line.removeprefix("signature: ") for line in out.splitlines()
            if line.startswith("signature: ")]
    return code, sigs[0] if len(sigs) == 1 else ""


def test_index_signature_is_what_eval_nq_prints(
        sample_gold: Path, capsys: pytest.CaptureFixture[str],
        tmp_path_factory: pytest.TempPathFactory) -> None:
    cache = tmp_path_factory.mktemp("sigcache")
    golden = sorted(shared_file("golden", "nq-eval", "all_null.predictions.json").parent
                    .glob("*.predictions.json"))
    assert len(golden) >= 10
    for preds in golden:  # every example predicted: the command's default policy
        code, want = _eval_nq(capsys, sample_gold, preds)
        assert code == 0 and want.startswith("nq|"), preds.name
        page = _client(load_dataset(sample_gold, str(preds), cache_dir=cache,
                                    progress=False)).get("/").text
        assert SIG_RE.findall(page) == [want], preds.name
        assert CMD_RE.findall(page) == ["nqkit eval nq"], preds.name
    assert "missing:error" in want and "missing:error|warn:all-null" in _eval_nq(
        capsys, sample_gold, golden[0])[1]  # all_null comes first, with its warning mark

    # Predictions for 6 of the 10 examples: `eval nq` refuses them, and with the flag the
    # browser names it scores them as null, with the signature it prints then.
    d = tmp_path_factory.mktemp("sigpart")
    part = d / "part.predictions.json"
    rows = json.loads(shared_file("golden", "nq-eval", "mixed0.predictions.json")
                      .read_text(encoding="utf-8"))["predictions"]
    part.write_text(json.dumps({"predictions": rows[:6]}), encoding="utf-8")
    assert _eval_nq(capsys, sample_gold, part)[0] == 2
    code, want = _eval_nq(capsys, sample_gold, part, "--allow-missing")
    assert code == 0 and "|missing:null|" in want
    page = _client(load_dataset(sample_gold, str(part), cache_dir=cache,
                                progress=False)).get("/").text
    assert SIG_RE.findall(page) == [want]
    assert CMD_RE.findall(page) == ["nqkit eval nq --allow-missing"]
