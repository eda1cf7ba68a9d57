"""Server-side tests of ``nqkit browse`` through FastAPI's TestClient (no browser).

Expected example sets are computed independently of the browser's filter code: from the
gold reader and the official scoring (``nqkit.metrics.nq``) for the real sample, and by
hand for the project's toy data.
"""

from __future__ import annotations

import builtins
import gzip
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import require, shared_file

require("fastapi")
require("httpx")

from fastapi.testclient import TestClient

from nqkit.browser.app import create_app
from nqkit.browser.model import Dataset, load_dataset
from nqkit.data.toy import TOY_EXAMPLES, TOY_PATH, ToyAnnotation, ToyExample, build_example
from nqkit.errors import InputError
from nqkit.formats.nq_gold import read_nq_gold
from nqkit.formats.nq_predictions import read_nq_predictions
from nqkit.metrics.nq import AnswerStat, evaluate_nq, gold_has_long, gold_has_short
from nqkit.metrics.nq_analysis import question_word

NOBEL_ID = -3290814144789249484
ID_RE = re.compile(r'<div class="id">(-?\d+) ·')


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
    return TestClient(create_app(sample_ds))


@pytest.fixture(scope="module")
def scored(sample_pred_ds: Dataset) -> TestClient:
    return TestClient(create_app(sample_pred_ds))


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
    return TestClient(create_app(ds))


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
    yield TestClient(create_app(ds)), before


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
    return TestClient(create_app(ds)), ids


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


def _expected_outcome(stat: AnswerStat, threshold: float) -> str:
    # Written from the module docstring of nqkit.browser.model (the labels' definition).
    if stat.pred_has_answer and stat.score >= threshold:
        if stat.is_correct:
            return "correct"
        return "wrong" if stat.gold_has_answer else "false positive"
    return "missed" if stat.gold_has_answer else "null"


def test_filters_on_sample(scored: TestClient, sample_gold: Path, sample_preds: Path) -> None:
    gold = read_nq_gold(sample_gold, with_types=True)
    order = list(gold)

    def check(params: dict[str, str], keep: Any) -> None:
        r = scored.get("/", params=params)
        assert r.status_code == 200
        assert _ids(r.text) == [i for i in order if keep(i)], params

    check({"gold": "long"}, lambda i: gold_has_long(gold[i].annotations))
    check({"gold": "nolong"}, lambda i: not gold_has_long(gold[i].annotations))
    check({"gold": "short"}, lambda i: gold_has_short(gold[i].annotations))
    check({"gold": "long-noshort"}, lambda i: gold_has_long(gold[i].annotations)
          and not gold_has_short(gold[i].annotations))

    def yes_no(i: int | str) -> bool:
        yn = [a.yes_no_answer for a in gold[i].annotations]
        return yn.count("YES") >= 2 or yn.count("NO") >= 2

    check({"gold": "yesno"}, yes_no)
    types = {gold[i].long_type() for i in order}
    assert len(types) >= 2
    for t in types:
        check({"type": str(t)}, lambda i, t=t: gold[i].long_type() == t)
    for w in {question_word(gold[i].question_text) for i in order}:
        check({"word": w}, lambda i, w=w: question_word(gold[i].question_text) == w)

    res = evaluate_nq(gold, read_nq_predictions(sample_preds), missing="null", allow_extra=True)
    long_lab = {i: _expected_outcome(s, res.long.best_threshold)
                for i, s in zip(res.example_ids, res.long_stats, strict=True)}
    short_lab = {i: _expected_outcome(s, res.short.best_threshold)
                 for i, s in zip(res.example_ids, res.short_stats, strict=True)}
    seen = 0
    for o in ("correct", "wrong", "missed", "false positive", "null"):
        check({"long": o}, lambda i, o=o: long_lab[i] == o)
        check({"short": o}, lambda i, o=o: short_lab[i] == o)
        seen += sum(v == o for v in long_lab.values())
    assert seen == len(order)
    # The outcome counts on top add up to the metric's precision and recall.
    counts = {o: sum(v == o for v in long_lab.values()) for o in long_lab.values()}
    pred = counts.get("correct", 0) + counts.get("wrong", 0) + counts.get("false positive", 0)
    if pred:
        assert counts.get("correct", 0) / pred == pytest.approx(res.long.best_precision)


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
    client = TestClient(create_app(sample_pred_ds), raise_server_exceptions=False)
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


def test_example_pages_show_the_labels(toy: TestClient) -> None:
    for i in TOY_TYPE:
        r = toy.get(f"/example/{i}")
        assert r.status_code == 200
        badges = re.search(r'<div class="badges">(.*?)</div>', r.text, re.S)
        assert badges is not None
        text = re.sub(r"<[^>]+>", "", badges.group(1))
        text = re.sub(r"\s+", " ", text)
        long_type = TOY_TYPE[i]
        assert f"gold long: {long_type}" in text, (i, text)
        assert f"gold short: {'yes' if i in TOY_HAS_SHORT else 'no'}" in text, (i, text)
        assert f"question word: {TOY_WORD[i]}" in text, (i, text)
        assert f"long prediction {TOY_LONG_OUTCOME[i]}" in text, (i, text)
        assert f"short prediction {TOY_SHORT_OUTCOME[i]}" in text, (i, text)
