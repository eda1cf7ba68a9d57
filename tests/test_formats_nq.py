"""NQ records and readers on the real sample and on the project's toy data."""

from __future__ import annotations

import gzip
import json
import os
import re

import pytest

from nqkit.data.toy import TOY_PATH, build_toy_lines
from nqkit.errors import InputError
from nqkit.formats.gold_cache import cache_dir, load_nq_gold
from nqkit.formats.nq import (
    NqExample,
    SimplifiedNqExample,
    Span,
    read_nq,
    read_nq_original,
    tag_type,
    write_nq,
)
from nqkit.formats.nq_gold import read_nq_gold

from conftest import shared_file


def test_shipped_toy_file_is_what_the_builder_makes():
    assert TOY_PATH.read_text(encoding="utf-8").splitlines() == build_toy_lines()


def test_toy_offsets_are_consistent():
    for ex in read_nq_original(TOY_PATH):
        for t in ex.document_tokens:
            assert ex.html_bytes[t.start_byte:t.end_byte].decode() == t.token
        for a in ex.annotations:
            if a.has_long:
                c = ex.long_answer_candidates[a.candidate_index].span
                assert c == a.long_answer
                for s in a.short_answers:
                    assert c.start_token <= s.start_token < s.end_token <= c.end_token


def test_real_sample_reads_both_formats_alike():
    orig = list(read_nq(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")))
    simp = list(read_nq(shared_file("data", "nq", "simplified-nq-dev-sample10.jsonl")))
    assert [type(e) for e in orig] == [NqExample] * 10
    assert [type(e) for e in simp] == [SimplifiedNqExample] * 10
    for o, s in zip(orig, simp, strict=True):
        assert o.example_id == s.example_id and o.question_text == s.question_text
        assert s.document_title == o.document_title != ""  # read from the URL
        assert len(s.tokens) == len(o.document_tokens)
        for i, (co, cs) in enumerate(zip(o.long_answer_candidates, s.long_answer_candidates,
                                         strict=True)):
            assert (co.span.start_token, co.span.end_token) == (cs.span.start_token,
                                                                cs.span.end_token)
            assert o.candidate_type(i) == s.candidate_type(i)
            assert o.span_text(co) == s.span_text(cs)
        assert o.candidate_parents == s.candidate_parents


def test_candidate_nesting_agrees_with_top_level_flag():
    for ex in read_nq(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")):
        for i, c in enumerate(ex.long_answer_candidates):
            assert (ex.candidate_parents[i] == -1) == c.top_level


def test_candidate_parents_and_depths_equal_a_brute_force_nesting():
    # parent = the innermost earlier candidate whose token span contains this one;
    # depth = the number of candidates containing it
    deepest = 0
    for ex in read_nq(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")):
        spans = [(c.span.start_token, c.span.end_token) for c in ex.long_answer_candidates]
        for i, (a, b) in enumerate(spans):
            containers = [j for j in range(i) if spans[j][0] <= a and b <= spans[j][1]]
            assert ex.candidate_parents[i] == (containers[-1] if containers else -1), i
            assert ex.candidate_depth(i) == len(containers), i
            deepest = max(deepest, len(containers))
    assert deepest >= 3  # nested tables: the sample exercises deep nesting


def _simplified(**changes) -> dict:
    d = {"example_id": 1, "question_text": "q", "document_text": "<P> a b </P>",
         "document_url": "https://en.wikipedia.org//w/index.php?title=Tom_and_Jerry&oldid=1",
         "long_answer_candidates": [{"start_token": 0, "end_token": 4, "top_level": True}],
         "annotations": [{"annotation_id": 7, "long_answer": {
             "start_token": 0, "end_token": 4, "candidate_index": 0},
             "short_answers": [{"start_token": 1, "end_token": 2}], "yes_no_answer": "NONE"}]}
    d.update(changes)
    return d


def _read_one(tmp_path, d):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(d) + "\n")
    return next(read_nq(path))


def test_offsets_at_zero_are_not_null(tmp_path):
    ex = _read_one(tmp_path, _simplified())
    long = ex.annotations[0].long_answer
    assert (long.start_token, long.end_token, long.has_tokens, long.is_null) == (0, 4, True,
                                                                                 False)
    assert (long.has_bytes, ex.annotations[0].candidate_index) == (False, 0)
    assert ex.document_title == "Tom and Jerry"
    assert Span(0, 3, -1, -1).has_bytes and not Span(0, 3, -1, -1).has_tokens
    assert Span(-1, -1, -1, -1).is_null and not Span(0, 3, -1, -1).is_null


def test_candidate_index_defaults_to_null(tmp_path):
    d = _simplified()
    d["annotations"][0]["long_answer"] = {"start_token": -1, "end_token": -1}
    assert _read_one(tmp_path, d).annotations[0].candidate_index == -1


@pytest.mark.parametrize(("span", "message"), [
    ({"start_token": 2, "end_token": 2}, "has start_token >= end_token (2 >= 2)"),
    ({"start_token": 1, "end_token": 2, "start_byte": 5, "end_byte": 5},
     "has start_byte >= end_byte (5 >= 5)"),
    ({"start_token": 1, "end_token": -1}, "is half null (start_token=1, end_token=-1)"),
])
def test_empty_and_half_null_spans_are_refused(tmp_path, span, message):
    d = _simplified()
    d["annotations"][0]["short_answers"] = [span]
    with pytest.raises(InputError, match=re.escape(message)):
        _read_one(tmp_path, d)


def test_an_empty_file_is_refused(tmp_path):
    (tmp_path / "e.jsonl").write_text("")
    with pytest.raises(InputError, match="no examples found"):
        list(read_nq(tmp_path / "e.jsonl"))


@pytest.mark.parametrize("name", ["nq-dev-sample10.jsonl.gz",
                                  "simplified-nq-dev-sample10.jsonl"])
def test_gold_reader_takes_the_fast_path_on_official_files(monkeypatch, name):
    # Official lines are read by seeking the few keys the evaluation needs; parsing the
    # whole line (megabytes of page) is the fallback for odd input only. The result must
    # equal the full reader's, and the full parser must not be called.
    import nqkit.formats.nq_gold as nq_gold

    path = shared_file("data", "nq", name)
    full = {ex.example_id: ex.annotations for ex in read_nq(path)}

    def refuse(*args, **kwargs):
        raise AssertionError("parsed a whole official line")

    monkeypatch.setattr(nq_gold, "parse_json_line", refuse)
    gold = read_nq_gold(path, workers=1, with_types=name.endswith(".gz"))
    assert {k: g.annotations for k, g in gold.items()} == full


def test_gold_reader_fast_path_handles_spaced_json(tmp_path):
    # other writers put spaces after ':' and ','; the result must not change
    src = shared_file("data", "nq", "simplified-nq-dev-sample10.jsonl")
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("".join(json.dumps(json.loads(x), indent=None) + "\n"
                              for x in src.read_text().splitlines()))
    assert read_nq_gold(spaced, workers=1) == read_nq_gold(src, workers=1)


@pytest.mark.parametrize(("value", "shown"), [("true", "True"), ("1.5", "1.5"),
                                              ("null", "None")])
def test_gold_example_id_must_be_an_integer(tmp_path, value, shown):
    line = json.dumps(_simplified()).replace('"example_id": 1', f'"example_id": {value}')
    (tmp_path / "g.jsonl").write_text(line + "\n")
    with pytest.raises(InputError, match=f"example_id must be an integer, found {shown}"):
        read_nq_gold(tmp_path / "g.jsonl", workers=1)


def test_nobel_example_accessors():
    ex = next(e for e in read_nq_original(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz"))
              if "nobel" in e.question_text)
    shorts = {ex.span_text(s) for a in ex.annotations for s in a.short_answers}
    assert "Wilhelm Conrad Röntgen" in shorts
    assert "Wilhelm Conrad Röntgen , of Germany" in shorts
    html = {ex.span_html(s) for a in ex.annotations for s in a.short_answers}
    assert any("Röntgen" in h for h in html)
    types = {ex.candidate_type(a.candidate_index) for a in ex.annotations if a.has_long}
    assert types == {"table", "paragraph"}


@pytest.mark.parametrize(("token", "kind"), [("<P>", "paragraph"), ("<Table>", "table"),
                                             ("<Tr>", "table row"), ("<Ul>", "list"),
                                             ("<Dd>", "list item"), ("<H2>", "other"),
                                             ("word", "other")])
def test_tag_type(token, kind):
    assert tag_type(token) == kind


def test_examples_are_frozen():
    ex = next(iter(read_nq(TOY_PATH)))
    with pytest.raises(AttributeError):
        ex.question_text = "x"  # type: ignore[misc]


def test_reader_is_lazy_over_globs_and_shards(tmp_path):
    lines = TOY_PATH.read_text().splitlines()
    (tmp_path / "a-00.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines[:3]) + "\n").encode()))
    (tmp_path / "a-01.jsonl").write_text("\n".join(lines[3:]) + "\n")
    ids = [e.example_id for e in read_nq(str(tmp_path / "a-0*"))]
    assert ids == [json.loads(x)["example_id"] for x in lines]
    it = read_nq(str(tmp_path / "a-0*"))
    assert next(it).example_id == ids[0]


def test_invalid_span_in_gold_is_reported_with_line(tmp_path):
    lines = TOY_PATH.read_text().splitlines()
    d = json.loads(lines[0])
    d["annotations"][0]["long_answer"]["end_token"] = d["annotations"][0]["long_answer"][
        "start_token"]
    lines[0] = json.dumps(d)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"bad.jsonl:1: annotations\[0\].long_answer has "
                       r"start_token >= end_token"):
        list(read_nq(bad))
    with pytest.raises(InputError, match=r"bad\.jsonl:1"):
        read_nq_gold(bad, workers=1)


def test_fast_gold_reader_equals_full_parse():
    path = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    fast = read_nq_gold(path, with_types=True, workers=2)
    for ex in read_nq_original(path):
        g = fast[ex.example_id]
        assert g.annotations == ex.annotations
        assert g.question_text == ex.question_text
        assert g.long_types == tuple(ex.candidate_type(a.candidate_index) if a.has_long else None
                                     for a in ex.annotations)


def test_fast_gold_reader_handles_other_key_orders(tmp_path):
    """Compact, reordered JSON falls back to (or passes) the exact path with equal results."""
    lines = TOY_PATH.read_text().splitlines()
    reordered = [json.dumps(dict(reversed(list(json.loads(x).items()))), separators=(",", ":"))
                 for x in lines]
    (tmp_path / "r.jsonl").write_text("\n".join(reordered) + "\n")
    a = read_nq_gold(TOY_PATH, with_types=True, workers=1)
    b = read_nq_gold(tmp_path / "r.jsonl", with_types=True, workers=1)
    assert a == b


def test_gold_cache_hits_and_is_never_stale(tmp_path, monkeypatch):
    monkeypatch.setenv("NQKIT_HOME", str(tmp_path / "home"))
    gold = tmp_path / "dev.jsonl"
    gold.write_bytes(TOY_PATH.read_bytes())
    first = load_nq_gold(gold)
    entries = list(cache_dir().glob("*.json"))
    assert len(entries) == 1 and str(cache_dir()).startswith(str(tmp_path / "home"))
    # the second load is served by the cache (reading the file again would fail), for the
    # toy and for the real sample with long-answer types, equal to a direct read
    import nqkit.formats.gold_cache as gold_cache

    real = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    real_direct = read_nq_gold(real, with_types=True, workers=1)
    assert load_nq_gold(real, with_types=True) == real_direct

    def refuse(*args, **kwargs):
        raise AssertionError("read the gold file although it is cached")

    with monkeypatch.context() as m:
        m.setattr(gold_cache, "read_nq_gold", refuse)
        assert load_nq_gold(gold) == first
        assert load_nq_gold(real, with_types=True) == real_direct
        assert load_nq_gold(real) == real_direct  # an entry with types serves without
    # change the file: one annotation fewer -> a new key, the new content
    lines = gold.read_text().splitlines()
    gold.write_text("\n".join(lines[:-1]) + "\n")
    st = gold.stat()
    os.utime(gold, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert len(load_nq_gold(gold)) == len(first) - 1
    # a corrupt entry is ignored and rebuilt
    for e in cache_dir().glob("*.json"):
        e.write_text("{not json")
    assert len(load_nq_gold(gold)) == len(first) - 1


def test_cache_dir_follows_nqkit_home_then_xdg_then_home(tmp_path, monkeypatch):
    monkeypatch.setenv("NQKIT_HOME", str(tmp_path / "nh"))
    assert cache_dir() == tmp_path / "nh" / "cache" / "gold"
    monkeypatch.delenv("NQKIT_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "nqkit" / "gold"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "nqkit" / "gold"


def test_no_cache_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("NQKIT_HOME", str(tmp_path / "home"))
    load_nq_gold(TOY_PATH, cache=False)
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize("name", ["real", "toy"])
def test_writer_round_trips_byte_identical(tmp_path, name):
    src = (shared_file("data", "nq", "nq-dev-sample10.jsonl.gz") if name == "real"
           else TOY_PATH)
    out = tmp_path / "out.jsonl.gz"
    assert write_nq(out, read_nq(src)) == len(list(read_nq(src)))
    original = src.read_bytes()
    if str(src).endswith(".gz"):
        original = gzip.decompress(original)
    assert gzip.decompress(out.read_bytes()) == original


def test_simplified_records_write_back_the_same_objects(tmp_path):
    src = shared_file("data", "nq", "simplified-nq-dev-sample10.jsonl")
    out = tmp_path / "s.jsonl"
    write_nq(out, read_nq(src))
    got = [json.loads(x) for x in out.read_text().splitlines()]
    want = [json.loads(x) for x in src.read_text().splitlines()]
    assert got == want
