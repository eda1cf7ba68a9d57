"""NQ records and readers on the real sample and on the project's toy data."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from nqkit.data.toy import TOY_PATH, build_toy_lines
from nqkit.errors import InputError
from nqkit.formats.gold_cache import cache_dir, load_nq_gold
from nqkit.formats.nq import (
    NqExample,
    SimplifiedNqExample,
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
    assert load_nq_gold(gold) == first
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
