"""Unit tests of the browser's sanitizer, URL check and highlighting (no server, no browser).

Expected outputs are written out by hand; the highlight tests compute the expected marked
text straight from the raw JSON of the real dev sample (document tokens and annotation
offsets), never through nqkit's readers or helpers.
"""

from __future__ import annotations

import gzip
import html
import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest

from nqkit.browser.render import highlight_simplified, http_url, sanitize, token_text
from nqkit.formats.nq import SimplifiedNqExample, Span
from nqkit.text.display import space_between

from conftest import require, shared_file

# ------------------------------------------------------------------- hostile markup

# (input, exact sanitized output). Everything executable, loading or navigating goes; the
# text a reader needs stays.
HOSTILE = [
    ('<p>a<script>document.title="PWNED"</script>b</p>', "<p>ab</p>"),
    ('<p>a<iframe src="http://evil.example/">inner</iframe>b</p>', "<p>ab</p>"),
    ('<p>a<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>b</p>', "<p>ab</p>"),
    ('<p>a<object data="http://evil.example/x.swf"><param name=x value=y>fallback</object>b</p>',
     "<p>ab</p>"),
    ('<p>a<embed src="http://evil.example/x.swf">b</p>', "<p>ab</p>"),
    ('<p>a<svg onload="alert(1)"><script>alert(2)</script><circle r=1 /></svg>b</p>',
     "<p>ab</p>"),
    ('<meta http-equiv="refresh" content="0;url=http://evil.example/"><p>x</p>', "<p>x</p>"),
    ('<base href="http://evil.example/"><p>x</p>', "<p>x</p>"),
    ('<form action="http://evil.example/post" method=post><input name=q value=v>'
     '<button formaction="http://evil.example/b">go</button></form><p>x</p>', "<p>x</p>"),
    ('<img src="http://evil.example/x.png" onerror="alert(1)">', ""),
    ('<img src=x alt="A map" onerror="alert(1)">', '<span class="img-alt">[A map]</span>'),
    ('<p onclick="alert(1)" onmouseover="alert(2)" style="color:red" id="x">t</p>', "<p>t</p>"),
    ('<body onload="alert(1)"><p>t</p></body>', "<p>t</p>"),
    ('<a href="javascript:alert(1)" onclick="alert(2)">link</a>', "<a>link</a>"),
    ('<a href="https://en.wikipedia.org/wiki/X" target=_blank>w</a>', "<a>w</a>"),
    ('<link rel=stylesheet href="http://evil.example/x.css"><p>x</p>', "<p>x</p>"),
    ("<style>@import url(http://evil.example/i.css); p{background:url(x.png)}</style><p>x</p>",
     "<p>x</p>"),
    ('<div style="background:url(http://evil.example/bg.png)">x</div>', "<div>x</div>"),
    ('<video src="http://evil.example/v.mp4" poster="http://evil.example/p.png">v</video>'
     '<audio src="http://evil.example/a.mp3">a</audio>x', "x"),
    ('<table background="http://evil.example/t.png"><tr><td colspan=2 rowspan="3" '
     'background="x.png">c</td></tr></table>',
     '<table><tr><td colspan="2" rowspan="3">c</td></tr></table>'),
    ('<mark class="gs evil" onclick="alert(1)">g</mark>', '<mark class="gs">g</mark>'),
    ('<span id="nqkit-c1"></span><span id="x" name="y"></span>',
     '<span id="nqkit-c1"></span><span></span>'),
    ("<p>&lt;script&gt;alert(1)&lt;/script&gt; &amp; more</p>",
     "<p>&lt;script&gt;alert(1)&lt;/script&gt; &amp; more</p>"),
]


@pytest.mark.parametrize(("raw", "expected"), HOSTILE)
def test_hostile_markup_is_removed(raw: str, expected: str) -> None:
    assert sanitize(raw) == expected


def test_no_url_attribute_survives() -> None:
    out = sanitize("".join(raw for raw, _ in HOSTILE))
    for bad in ("<script", "<iframe", "<object", "<embed", "<svg", "<meta", "<base", "<form",
                "<input", "<button", "<img", "<link", "<style", "<video", "<audio",
                "javascript:", "evil.example", "href", "src", "action", "style=", "url("):
        assert bad not in out, bad
    assert not re.search(r"\son\w+\s*=", out)


@pytest.mark.parametrize(("url", "expected"), [
    ("https://en.wikipedia.org//w/index.php?title=X&oldid=1",
     "https://en.wikipedia.org//w/index.php?title=X&oldid=1"),
    ("http://example.org/a", "http://example.org/a"),
    ("HTTPS://example.org/", "HTTPS://example.org/"),
    ("  https://example.org/\n", "https://example.org/"),
    ("javascript:alert(1)", ""),
    ("JavaScript:alert(1)", ""),
    (" \x01javascript:alert(1)", ""),
    ("java\tscript:alert(1)", ""),
    ("java\nscript:alert(1)", ""),
    ("data:text/html,<script>alert(1)</script>", ""),
    ("vbscript:msgbox(1)", ""),
    ("file:///etc/passwd", ""),
    ("//evil.example/x", ""),
    ("/relative/path", ""),
    ("http:evil", ""),
    ("", ""),
])
def test_http_url(url: str, expected: str) -> None:
    assert http_url(url) == expected


# ------------------------------------------------------------------- unclosed dropped elements

AFTER = "After it, the prize went to"
GOLD = "Wilhelm Conrad Röntgen"
UNCLOSED = ["select", "noscript", "template", "textarea", "title", "plaintext", "math><style",
            "script", "style", "iframe", "object", "svg", "form><select"]


def _text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


@pytest.mark.parametrize("el", UNCLOSED)
def test_unclosed_dropped_element_keeps_the_rest_of_the_page(el: str) -> None:
    raw = (f"<h2>Prizes</h2><p>Before <{el}><option>hidden "
           f'<p>{AFTER} <mark class="gs">{GOLD}</mark> in 1901.</p><p>Last paragraph.</p>')
    out = sanitize(raw)
    assert f'<mark class="gs">{GOLD}</mark>' in out
    text = _text(out)
    assert text.startswith("Prizes Before ")
    assert text.endswith(f"{AFTER} {GOLD} in 1901. Last paragraph.")
    assert "<option" not in out and f"<{el.split('>')[0]}" not in out


@pytest.mark.parametrize("el", UNCLOSED)
def test_closed_dropped_element_is_dropped_with_its_content(el: str) -> None:
    closing = "".join(f"</{t}>" for t in reversed(el.split("><")))
    raw = f'<p>Before <{el}>hidden</{closing[2:]} {AFTER} <mark class="gs">{GOLD}</mark>.</p>'
    assert sanitize(raw) == f'<p>Before  {AFTER} <mark class="gs">{GOLD}</mark>.</p>'


def test_unclosed_inside_a_closed_one_and_inside_a_parent() -> None:
    assert sanitize("<noscript><select><option>x</noscript><p>rest</p>") == "<p>rest</p>"
    # A dropped element never closed before its parent ends: nothing of the page is lost.
    assert sanitize('<td><select><option>A</td><td><mark class="gs">B</mark></td>') == \
        '<td>A</td><td><mark class="gs">B</mark></td>'
    assert sanitize("<p>a<iframe/>b<script/>c</p>") == "<p>abc</p>"
    # Elements opened inside a dropped one close inside it (Wikipedia's search form).
    assert sanitize("<div><h3>Search</h3><form><div><input>x</div></form></div><p>b</p>") == \
        "<div><h3>Search</h3></div><p>b</p>"


def test_unclosed_element_on_a_later_line_is_cut_at_its_own_offsets() -> None:
    # The <select> starts on line 2 at column 4, i.e. offset 9 + 4 = 13 ("<p>a</p>" is 8
    # characters, the newline the 9th); removing exactly fragment[13:21] ("<select>") leaves
    # "<p>a</p>\n<p>bc</p>". An offset one off would cut "b<select" or "\n<selec" instead.
    assert sanitize("<p>a</p>\n<p>b<select>c</p>") == "<p>a</p>\n<p>bc</p>"
    assert sanitize("<p>a</p>\n\n<p>b<select>c</p>") == "<p>a</p>\n\n<p>bc</p>"


def test_unclosed_element_after_a_leading_newline() -> None:
    # A newline at offset 0 starts line 2 at offset 1: <select> lies at 1 + 4 = 5.
    assert sanitize("\n<p>b<select>c</p>") == "\n<p>bc</p>"


def test_end_of_an_outer_dropped_element_closes_the_dropped_ones_inside() -> None:
    # dropping = [form, select, option]; </form> closes the last "form" in that list, the
    # first one, and everything opened inside it, so "b" after it is page text again.
    assert sanitize("<p>a<form><select><option>x</form>b</p>") == "<p>ab</p>"


def test_mark_classes_only_on_marks() -> None:
    # The browser's classes are kept on <mark> only: a page's own <p class="gs"> must not
    # look like a gold answer; a mark keeps its classes and its nqkit- anchor id.
    assert sanitize('<p class="gs hl">x</p>') == "<p>x</p>"
    assert sanitize('<mark class="gs" id="nqkit-a1">x</mark>') == \
        '<mark class="gs" id="nqkit-a1">x</mark>'


def test_end_tag_inside_a_dropped_element_closes_only_its_own_element() -> None:
    # Inside the dropped <form>, </b> closes the inner <b> only; the inner <div> stays open
    # until its own </div>, so that </div> never ends the outer <div> (which would leave
    # the form "unclosed" and bring back x and y on a second pass).
    assert sanitize("<div>a<form><div><b>x</b></div>y</form>z</div>") == "<div>az</div>"


@pytest.mark.parametrize(("chain", "expected"), [
    # k unclosed script/style start tags, each hiding the next as raw text: pass i removes
    # the i-th, pass k + 1 parses the rest. Passes 1-4 drop dropped elements with their
    # content; pass 5 (the last resort) keeps their text. So with k <= 3 the closed
    # <iframe> is dropped with "hidden"; with k >= 4 its text is kept.
    ("", "<p>ab</p>"),
    ("<script><style><script>", "<p>ab</p>"),
    ("<script><style><script><style>", "<p>ahiddenb</p>"),
    ("<script><style><script><style><script>", "<p>ahiddenb</p>"),
    # A self-closing dropped element is empty, not left open: it costs no pass (else the
    # fourth pass would find it unclosed and the fifth keep "hidden").
    ("<script><style><script><iframe/>", "<p>ab</p>"),
])
def test_last_resort_pass_is_the_fifth(chain: str, expected: str) -> None:
    assert sanitize(chain + "<p>a<iframe>hidden</iframe>b</p>") == expected


# ------------------------------------------------------------------- simplified pages

# Tokens 0-4 of a simplified page: a 3-character tag, a word, a 2-character word that only
# looks like a tag ("<>" is not a tag: a tag has a name), a word, a closing tag.
SIMPLE = SimplifiedNqExample(1, "q", "https://en.wikipedia.org/w/index.php?title=X",
                             "<P> a <> b </P>", (), ())


def test_simplified_highlight_rebuilds_tags_and_escapes_words() -> None:
    # Span tokens 1-4 ("a <> b") marked gs: the tag <P> is written back lower-cased as
    # markup, "<>" is a word (escaped), the spaces between marked words stay inside the
    # mark, the mark closes right after the last word, before </P>.
    assert highlight_simplified(SIMPLE, 0, 5, [(Span(-1, -1, 1, 4), "gs")]) == \
        '<p> <mark class="gs">a &lt;&gt; b</mark></p> '
    # Only "b" marked: the words before it carry no mark at all (not an empty one), and
    # the space before it is outside the mark.
    assert highlight_simplified(SIMPLE, 0, 5, [(Span(-1, -1, 3, 4), "gs")]) == \
        '<p> a &lt;&gt; <mark class="gs">b</mark></p> '


# NQ tokens of "Wilhelm Conrad Röntgen, of Germany (1901)." with a closing quote, a
# clitic, a hyphen and an opening quote, as a simplified page: tokens 0-20, tags at 0, 20.
READER = SimplifiedNqExample(
    2, "q", "https://en.wikipedia.org/w/index.php?title=X",
    "<P> Wilhelm Conrad Röntgen , of Germany ( 1901 ) . `` X-rays '' , Nobel 's high - "
    "pressure </P>", (), ())


def test_simplified_text_is_spaced_as_a_reader_expects() -> None:
    # By hand: no space before , ) . '' 's, none after ( ``, none around a hyphen token.
    assert token_text(READER, 0, 22) == \
        'Wilhelm Conrad Röntgen, of Germany (1901). "X-rays", Nobel\'s high-pressure'
    assert token_text(READER, 1, 7) == "Wilhelm Conrad Röntgen, of Germany"
    assert token_text(READER, 1, 22, limit=4) == "Wilhelm Conrad Röntgen, …"
    # The highlight of tokens 3-7 ("Röntgen , of Germany") covers exactly those words.
    out = highlight_simplified(READER, 0, 10, [(Span(-1, -1, 3, 7), "gs")])
    assert out == '<p> Wilhelm Conrad <mark class="gs">Röntgen, of Germany</mark> (1901)'


@pytest.mark.parametrize(("prev", "cur", "space"), [
    ("Röntgen", ",", False), ("1901", ")", False), ("(", "1901", False), ("Nobel", "'s", False),
    ("do", "n't", False), ("``", "X", False), ("X", "''", False), ("high", "-", False),
    ("-", "pressure", False), ("25", "%", False), ("Jump", "to", True), ("to", ":", False),
    (":", "navigation", True), ("1966", "/", True), ("prize", "twice", True),
])
def test_space_between(prev: str, cur: str, space: bool) -> None:
    assert space_between(prev, cur) is space


@pytest.mark.parametrize(("limit", "expected"), [
    (0, "a <> b"),  # no limit: the three words, tags left out
    (2, "a <> …"),  # cut to 2 of 3 words
    (3, "a <> b"),  # exactly 3 words: nothing cut, no ellipsis
    (4, "a <> b"),
])
def test_simplified_token_text(limit: int, expected: str) -> None:
    assert token_text(SIMPLE, 0, 5, limit) == expected


# ------------------------------------------------------------------- highlight exactness

NOBEL_ID = -3290814144789249484
DEADPOOL_ID = 8851020722386421469


@pytest.fixture(scope="module")
def raw_examples() -> dict[int, dict[str, Any]]:
    path = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return {d["example_id"]: d for d in map(json.loads, f)}


class _MarkText(HTMLParser):
    """Text inside ``<mark>`` elements carrying a given class (marks never nest)."""

    def __init__(self, cls: str) -> None:
        super().__init__(convert_charrefs=True)
        self.cls = cls
        self.inside = False
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "mark":
            self.inside = self.cls in (dict(attrs).get("class") or "").split()

    def handle_endtag(self, tag: str) -> None:
        if tag == "mark":
            self.inside = False

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.parts.append(data)


def marked(page: str, cls: str) -> str:
    """All text marked with ``cls``, whitespace removed (tokens are compared glued)."""
    p = _MarkText(cls)
    p.feed(page)
    return "".join("".join(p.parts).split())


def token_union(d: dict[str, Any], spans: list[dict[str, Any]]) -> str:
    """The word tokens covered by any of ``spans``, in document order, glued together.

    NQ tokens are normalized (``--`` for a dash, PTB quotes), so this names an answer in
    the tests, while pages are compared with :func:`html_text` of the byte offsets.
    """
    covered = sorted({i for s in spans for i in range(s["start_token"], s["end_token"])})
    toks = d["document_tokens"]
    return "".join(toks[i]["token"] for i in covered if not toks[i]["html_token"])


def surface_text(d: dict[str, Any], spans: list[dict[str, Any]]) -> str:
    """What the page's HTML says at the word tokens covered by ``spans`` (each token cut
    from the HTML by its own byte offsets), glued: exactly what marks over those spans
    show. Text between tokens that NQ did not tokenize (reference markers like ``[5]``)
    is not part of a span, so it is not marked."""
    raw = d["document_html"].encode("utf-8")
    covered = sorted({i for s in spans for i in range(s["start_token"], s["end_token"])})
    toks = [d["document_tokens"][i] for i in covered]
    text = "".join(raw[t["start_byte"]:t["end_byte"]].decode("utf-8") for t in toks
                   if not t["html_token"])
    return "".join(html.unescape(text).split())


def html_text(d: dict[str, Any], spans: list[dict[str, Any]]) -> str:
    """The text of the page's HTML under the byte ranges of ``spans`` (merged), tags
    stripped, entities decoded, whitespace removed: what a highlight of exactly those
    spans shows."""
    raw = d["document_html"].encode("utf-8")
    ranges = sorted((s["start_byte"], s["end_byte"]) for s in spans)
    merged: list[list[int]] = []
    for a, b in ranges:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    text = "".join(raw[a:b].decode("utf-8") for a, b in merged)
    return "".join(html.unescape(re.sub(r"<[^>]*>", "", text)).split())


def _short_spans(d: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for a in d["annotations"] for s in a["short_answers"]]


def _long_spans(d: dict[str, Any]) -> list[dict[str, Any]]:
    return [a["long_answer"] for a in d["annotations"] if a["long_answer"]["start_token"] >= 0]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Any:
    require("fastapi")
    from fastapi.testclient import TestClient

    from nqkit.browser.app import create_app
    from nqkit.browser.model import load_dataset

    ds = load_dataset(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz"),
                      cache_dir=tmp_path_factory.mktemp("cache"), progress=False)
    return TestClient(create_app(ds), base_url="http://127.0.0.1:8080")


def gold_card(page: str) -> str:
    """The rendered gold long answer of an example page."""
    m = re.search(r'<section class="card answer gold">.*?<div class="rendered">(.*?)</div>\n'
                  r"</section>", page, re.S)
    assert m is not None
    return m.group(1)


def test_gold_short_highlight_is_exactly_the_gold_tokens(raw_examples: dict[int, Any],
                                                         client: Any) -> None:
    d = raw_examples[NOBEL_ID]
    # Two annotators marked "Wilhelm Conrad Röntgen", two "Wilhelm Conrad Röntgen, of
    # Germany": the union is what the page marks, and nothing around it.
    assert token_union(d, _short_spans(d)) == "WilhelmConradRöntgen,ofGermany"
    expected = html_text(d, _short_spans(d))
    assert expected == surface_text(d, _short_spans(d)) == "WilhelmConradRöntgen,ofGermany"
    doc = client.get(f"/example/{NOBEL_ID}/document")
    assert marked(doc.text, "gs") == expected
    card = gold_card(client.get(f"/example/{NOBEL_ID}").text)
    assert marked(card, "gs") == expected
    d = raw_examples[DEADPOOL_ID]
    assert token_union(d, _short_spans(d)) == "May18,2018"
    assert marked(client.get(f"/example/{DEADPOOL_ID}/document").text, "gs") == "May18,2018"


@pytest.mark.parametrize("example_id", [DEADPOOL_ID, NOBEL_ID, -7660771254611710392])
def test_gold_long_highlight_is_exactly_the_gold_tokens(raw_examples: dict[int, Any],
                                                        client: Any, example_id: int) -> None:
    d = raw_examples[example_id]
    expected = surface_text(d, _long_spans(d))
    assert len(expected) > 50
    assert marked(client.get(f"/example/{example_id}/document").text, "gl") == expected


def test_gold_long_card_is_exactly_the_gold_long_answer(raw_examples: dict[int, Any],
                                                        client: Any) -> None:
    # The card shows the long answer most annotators chose: tokens 233-388 (4 of 5) of the
    # Nobel page, a table of laureates; all its words and nothing else.
    d = raw_examples[NOBEL_ID]
    spans = _long_spans(d)
    assert [(s["start_token"], s["end_token"]) for s in spans].count((233, 388)) == 4
    card = gold_card(client.get(f"/example/{NOBEL_ID}").text)
    text = "".join(html.unescape(re.sub(r"<[^>]+>", "", card)).split())
    assert text == html_text(d, [s for s in spans if s["start_token"] == 233])
    assert text.startswith("ThefirstNobelPrizeinPhysics")


def test_highlight_ends_where_the_span_ends(raw_examples: dict[int, Any], client: Any) -> None:
    # The tokens right around the Deadpool short answer are not marked (a span one token
    # too long or too short changes the marked text).
    d = raw_examples[DEADPOOL_ID]
    toks = d["document_tokens"]
    s = d["annotations"][0]["short_answers"][0]
    assert (toks[s["start_token"] - 1]["token"], toks[s["end_token"]]["token"]) == ("on", ".")
    doc = client.get(f"/example/{DEADPOOL_ID}/document").text
    assert 'on</mark> <mark class="gl gs">May 18, 2018</mark><mark class="gl">. A sequel' in doc


def test_short_answer_text_reads_as_the_page_in_both_formats(
        raw_examples: dict[int, Any]) -> None:
    # The oracle: the page's HTML under the answer's byte range, tags stripped, entities
    # decoded, runs of whitespace made one space. Every gold short answer of the sample
    # reads exactly so, from the original format (the page's words and spacing) and from
    # the simplified one (spacing rebuilt from the tokens alone).
    from nqkit.formats.nq import example_from_json, simplified_from_json

    with open(shared_file("data", "nq", "simplified-nq-dev-sample10.jsonl"),
              encoding="utf-8") as f:
        simplified = {d["example_id"]: simplified_from_json(d) for d in map(json.loads, f)}
    seen = []
    for ex_id, d in raw_examples.items():
        ex, simple = example_from_json(d), simplified[ex_id]
        raw = d["document_html"].encode("utf-8")
        for s in _short_spans(d):
            page = html.unescape(re.sub(r"<[^>]*>", "",
                                        raw[s["start_byte"]:s["end_byte"]].decode("utf-8")))
            want = " ".join(page.split())
            assert token_text(ex, s["start_token"], s["end_token"]) == want
            assert token_text(simple, s["start_token"], s["end_token"]) == want
            seen.append(want)
    # Tokens 245-251 of the Nobel page: "Röntgen , of" in NQ's tokens, not on the page.
    assert "Wilhelm Conrad Röntgen, of Germany" in seen
    assert len(seen) >= 8
