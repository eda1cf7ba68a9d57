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
    Annotation,
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
    path = shared_file("data", "nq", name)
    full = {ex.example_id: ex.annotations for ex in read_nq(path)}
    _fast_path_only(monkeypatch)
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
    import nqkit.formats.nq_gold as nq_gold

    real = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    real_direct = read_nq_gold(real, with_types=True, workers=1)
    assert load_nq_gold(real, with_types=True) == real_direct

    def refuse(*args, **kwargs):
        raise AssertionError("read the gold file although it is cached")

    with monkeypatch.context() as m:
        m.setattr(nq_gold, "_read_shard", refuse)  # one file: read in this process
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


# ---------------------------------------------------------------------------- pinned edges

@pytest.mark.parametrize("offsets", [
    (-1, -1, -1, -1), (0, -1, -1, -1), (-1, 0, -1, -1), (-1, -1, 0, -1), (-1, -1, -1, 0),
    (-1, -1, 0, 3), (0, 10, -1, -1), (0, 10, 0, 3), (-2, -7, -1, -3),
])
def test_span_is_null_exactly_when_every_offset_is_negative(offsets):
    # The official eval_utils.Span.is_null_span: start/end byte and token all < 0. A 0 is
    # an offset (the first byte or token), never "absent".
    expected = all(o < 0 for o in offsets)
    assert Span(*offsets).is_null is expected


def test_span_json_has_byte_offsets_by_default(tmp_path):
    # The official prediction format carries byte offsets (the official script reads
    # start_byte/end_byte); predictions written by nqkit keep them.
    from nqkit.formats.nq_predictions import NqPrediction, write_nq_predictions

    assert Span(3, 9, 1, 2).to_json() == {"start_byte": 3, "end_byte": 9, "start_token": 1,
                                          "end_token": 2}
    path = tmp_path / "p.json"
    write_nq_predictions(path, [NqPrediction(7, Span(3, 9, 1, 2), 1.5, (Span(3, 5, 1, 2),),
                                             0.5, "NONE")])
    assert json.loads(path.read_text()) == {"predictions": [{
        "example_id": 7,
        "long_answer": {"start_byte": 3, "end_byte": 9, "start_token": 1, "end_token": 2},
        "long_answer_score": 1.5,
        "short_answers": [{"start_byte": 3, "end_byte": 5, "start_token": 1, "end_token": 2}],
        "short_answers_score": 0.5,
        "yes_no_answer": "NONE"}]}


def test_gold_cache_entry_without_types_never_serves_a_read_with_types(tmp_path, monkeypatch):
    # Read without long-answer types first: that entry must not be found by a later read
    # that needs the types (it would give every long answer an empty type).
    monkeypatch.setenv("NQKIT_HOME", str(tmp_path / "home"))
    real = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    plain = load_nq_gold(real)
    assert all(ex.long_types == () for ex in plain.values())
    typed = load_nq_gold(real, with_types=True)
    assert typed == read_nq_gold(real, with_types=True, workers=1)
    assert any(ex.long_types for ex in typed.values())


def test_gold_cache_entry_name_is_the_documented_key(tmp_path, monkeypatch):
    # The key: SHA-256 of {"v": version, "types": ..., "files": [[absolute path, size,
    # mtime_ns, ctime_ns, inode, device], ...]} as compact JSON, its first 32 hex digits
    # (128 bits) naming the entry.
    import hashlib

    from nqkit.formats.gold_cache import CACHE_VERSION

    monkeypatch.setenv("NQKIT_HOME", str(tmp_path / "home"))
    gold = tmp_path / "dev.jsonl"
    gold.write_bytes(TOY_PATH.read_bytes())
    st = gold.stat()
    load_nq_gold(gold)
    blob = json.dumps({"v": CACHE_VERSION, "types": False,
                       "files": [[str(gold.resolve()), st.st_size, st.st_mtime_ns,
                                  st.st_ctime_ns, st.st_ino, st.st_dev]]},
                      separators=(",", ":"), ensure_ascii=False).encode()
    name = hashlib.sha256(blob).hexdigest()[:32]
    assert [p.name for p in cache_dir().iterdir()] == [f"{name}.json"]


def test_gold_cache_entry_is_written_at_once_and_quietly(tmp_path, monkeypatch, capsys):
    # A cache entry is valid on its own: inside a command's output transaction it appears
    # at once (not when the command's outputs are committed), and creating the cache
    # directory prints no "created directory" note (that note is for the user's outputs).
    from nqkit.io import output_transaction

    monkeypatch.setenv("NQKIT_HOME", str(tmp_path / "home"))
    with output_transaction():
        load_nq_gold(TOY_PATH)
        assert len(list(cache_dir().glob("*.json"))) == 1
    assert capsys.readouterr().err == ""


def test_simplified_span_text_leaves_out_tags_only():
    # A tag token is "<", a name, ">": "<P>" and "</Td>" are tags; "->", ">", "<", "<>" and
    # "a>" are words (text of the page) and stay in the span text.
    ex = SimplifiedNqExample(1, "q", "u", "<P> x -> > < <> a> </Td>", (), ())
    assert ex.span_text(Span(-1, -1, 0, 8)) == "x -> > < <> a>"


# ---------------------------------------------------------------------------- gold fast path

def _fast_path_only(monkeypatch):
    """Make the gold reader fail if it parses a whole line: the fallback, or a tail that
    is nearly the whole line (more than 64 KB: the real lines are ~750 KB, the parts the
    fast path decodes a few KB)."""
    import types

    import nqkit.formats.nq_gold as nq_gold

    def refuse(*args, **kwargs):
        raise AssertionError("parsed a whole line")

    keys = nq_gold._KEYS

    def decode(raw):
        if len(raw) > 64_000:
            raise AssertionError(f"decoded {len(raw):,} bytes of one line")
        return keys.decode(raw)

    monkeypatch.setattr(nq_gold, "parse_json_line", refuse)
    monkeypatch.setattr(nq_gold, "_KEYS", types.SimpleNamespace(decode=decode))


def _toy(i=0):
    return json.loads(TOY_PATH.read_text().splitlines()[i])


def _compact(d):
    return json.dumps(d, separators=(",", ":"), ensure_ascii=False)


def _full(path):
    """The oracle: annotations and question of every example, from the full reader."""
    return {ex.example_id: (ex.annotations, ex.question_text) for ex in read_nq(path)}


def _gold(path, **kw):
    return {k: (g.annotations, g.question_text)
            for k, g in read_nq_gold(path, workers=1, **kw).items()}


def test_gold_fast_path_takes_lines_with_surrounding_whitespace(tmp_path, monkeypatch):
    # One space or tab around the object is still one JSON object: no full parse.
    path = tmp_path / "g.jsonl"
    path.write_text(" " + _compact(_toy(0)) + " \n\t" + _compact(_toy(1)) + "\t\n")
    expected = _full(path)
    _fast_path_only(monkeypatch)
    assert _gold(path) == expected


def test_gold_fast_path_skips_a_key_name_that_is_a_value(tmp_path, monkeypatch):
    # "annotations" first appears as the question's value (preceded by ':'): not a key.
    d = _toy(0)
    d = {"question_text": "annotations", **{k: v for k, v in d.items() if k != "question_text"}}
    path = tmp_path / "g.jsonl"
    path.write_text(_compact(d) + "\n")
    expected = _full(path)
    assert expected[d["example_id"]][1] == "annotations"
    _fast_path_only(monkeypatch)
    assert _gold(path) == expected


def _decoy_lines(tmp_path):
    """Official lines plus extra keys that nest decoy copies of the keys the fast path
    looks for, where a search from the end meets them first."""
    orig = _toy(0)
    orig["metadata"] = {"example_id": 7, "question_text": "decoy",
                        "annotations": [], "long_answer_candidates": []}
    orig_tokens = _toy(1)
    orig_tokens["question_tokens"] = [{"question_text": "decoy", "example_id": 8}]
    simp = _simplified(example_id=5, question_text="real question")
    simp["zz"] = {"annotations": [], "example_id": 9, "question_text": "decoy"}
    simplified_order = {k: simp[k] for k in ("document_text", "long_answer_candidates",
                                              "question_text", "annotations",
                                              "document_url", "example_id", "zz")}
    lines = [json.dumps(orig, sort_keys=True, separators=(",", ":")),
             json.dumps(orig_tokens, sort_keys=True, separators=(",", ":")),
             json.dumps(simplified_order)]
    path = tmp_path / "decoys.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_gold_fast_path_never_takes_a_nested_key(tmp_path):
    # A custom file may nest objects with the same key names after the real keys: the
    # reader takes the top-level values (here the oracle is the full reader), never the
    # decoys (7, 8, 9, "decoy", an empty annotation list).
    path = _decoy_lines(tmp_path)
    expected = _full(path)
    got = _gold(path)
    assert got == expected
    assert set(got) == {_toy(0)["example_id"], _toy(1)["example_id"], 5}
    assert "decoy" not in {q for _, q in got.values()}
    assert all(anns for anns, _ in got.values())


def test_gold_fast_path_keeps_the_simplified_layout(tmp_path, monkeypatch):
    # The simplified files put question_text, annotations, document_url and example_id
    # last: the fast path reads them from that small tail, without a full parse.
    path = shared_file("data", "nq", "simplified-nq-dev-sample10.jsonl")
    expected = _full(path)
    _fast_path_only(monkeypatch)
    assert _gold(path) == expected


def test_gold_line_without_question_reads_with_an_empty_question(tmp_path):
    # No question_text: the full parse reads it (the question is only for breakdowns), and a
    # span ending at the last token (4 tokens, end_token 4) is inside the document.
    d = _simplified()
    del d["question_text"]
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps(d) + "\n")
    (g,) = read_nq_gold(path, workers=1).values()
    assert (g.question_text, g.annotations) == ("", _read_one(tmp_path, _simplified()).annotations)


def test_gold_fast_path_accepts_a_span_ending_at_the_last_byte(tmp_path, monkeypatch):
    # A short answer over the last two tokens of toy example 0 (71 tokens; the last,
    # "</html>", ends at byte 364, the end of the page): inside the document.
    d = _toy(0)
    toks = d["document_tokens"]
    d["annotations"][0]["short_answers"].append(
        {"start_byte": toks[69]["start_byte"], "end_byte": 364, "start_token": 69,
         "end_token": 71})
    path = tmp_path / "g.jsonl"
    path.write_text(_compact(d) + "\n")
    expected = _full(path)
    _fast_path_only(monkeypatch)
    assert _gold(path) == expected


@pytest.mark.parametrize(("end_byte", "end_token", "what"), [
    (364, 400, "token 400"),  # bytes inside the page, tokens past it
    (365, 71, "byte 365"),  # tokens inside, bytes past the page's last byte
])
def test_gold_fast_path_refuses_either_offset_past_the_document(tmp_path, end_byte,
                                                                 end_token, what):
    # Toy example 0: 71 tokens, the last ends at byte 364. A span is refused when either
    # its byte or its token end lies past that (a token covers at least one byte).
    d = _toy(0)
    toks = d["document_tokens"]
    d["annotations"][0]["short_answers"].append(
        {"start_byte": toks[69]["start_byte"], "end_byte": end_byte, "start_token": 69,
         "end_token": end_token})
    path = tmp_path / "g.jsonl"
    path.write_text(_compact(d) + "\n")
    n = len(d["annotations"][0]["short_answers"]) - 1
    with pytest.raises(InputError, match=re.escape(
            f"g.jsonl:1: annotations[0].short_answers[{n}] ends at {what}, past the end of "
            "the document (its last token ends at byte 364)")):
        read_nq_gold(path, workers=1)


def test_gold_fast_path_refuses_a_span_far_past_a_short_document(tmp_path):
    # Simplified, document_text last: after '"document_text":' there are 6 bytes ('"a b"}'),
    # so at most 6 // 2 + 1 = 4 tokens; a span ending at token 5 is refused without a parse.
    ann = {"annotation_id": 1, "yes_no_answer": "NONE",
           "long_answer": {"start_token": -1, "end_token": -1, "candidate_index": -1},
           "short_answers": [{"start_token": 4, "end_token": 5}]}
    path = tmp_path / "g.jsonl"
    path.write_text(_compact({"annotations": [ann], "example_id": 3, "question_text": "q",
                              "document_text": "a b"}) + "\n")
    with pytest.raises(InputError, match=re.escape(
            "g.jsonl:1: annotations[0].short_answers[0] ends at token 5, past the end of the "
            "document")):
        read_nq_gold(path, workers=1)


def test_gold_ids_of_two_kinds_in_one_shard(tmp_path):
    a, b = _simplified(), _simplified(example_id="x2")
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps(a) + "\n" + json.dumps(b) + "\n")
    with pytest.raises(InputError) as e:
        read_nq_gold(path, workers=1)
    assert str(e.value) == (
        f"{path}:2: example_id 'x2' is a string, but the ids before it (from line 1) are "
        "integers — write every example_id of the gold data the same way")


def test_gold_shard_of_one_example(tmp_path):
    # a later shard with a single example: its id kind is checked against the first shard's
    lines = TOY_PATH.read_text().splitlines()
    (tmp_path / "a.jsonl").write_text("\n".join(lines[:2]) + "\n")
    (tmp_path / "b.jsonl").write_text(lines[2] + "\n")
    gold = read_nq_gold([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], workers=1)
    assert list(gold) == [json.loads(x)["example_id"] for x in lines[:3]]


# ---------------------------------------------------------------------------- reader edges

def test_validate_names_a_token_without_its_keys():
    # The raw-JSON check used by conversions refuses what read_nq refuses: a token missing
    # "html_token" (toy example 0, token 3).
    from nqkit.formats.nq import example_from_json, validate_nq_json

    d = _toy(0)
    del d["document_tokens"][3]["html_token"]
    message = ("x.jsonl:1: missing key 'html_token' in document_tokens[3] — check the file is "
               "in the Natural Questions format")
    for check in (validate_nq_json, example_from_json):
        with pytest.raises(InputError) as e:
            check(d, "x.jsonl:1")
        assert str(e.value) == message


def test_offsets_at_byte_and_token_zero_are_positions(tmp_path):
    # Token 0 of the toy page is "<html>", bytes 0-6: a span there is a real span.
    d = _toy(0)
    d["annotations"][0]["short_answers"] = [{"start_byte": 0, "end_byte": 6, "start_token": 0,
                                             "end_token": 1}]
    ex = _read_one(tmp_path, d)
    assert ex.annotations[0].short_answers == (Span(0, 6, 0, 1),)


@pytest.mark.parametrize("eid", [-2**63, 2**63 - 1])
def test_example_ids_at_the_int64_limits_read(tmp_path, eid):
    d = _toy(0)
    d["example_id"] = eid
    assert _read_one(tmp_path, d).example_id == eid


def test_candidate_index_one_past_the_last_candidate_is_refused():
    # toy example 0 has 6 candidates (indexes 0-5)
    from nqkit.formats.nq import example_from_json

    d = _toy(0)
    d["annotations"][0]["long_answer"]["candidate_index"] = 6
    with pytest.raises(InputError) as e:
        example_from_json(d, "x:1")
    assert str(e.value) == ("x:1: annotations[0].long_answer.candidate_index is 6 but the "
                            "example has 6 candidates — check the file is unmodified NQ data")


def test_candidate_depth_counts_the_first_candidate_as_a_container(tmp_path):
    # Toy example 0 keeping candidates 2-4 only: tokens 40-69 (a list), 41-51 and 51-59 (its
    # items). The list is now candidate 0 and holds the other two: depth 1, parent 0.
    d = _toy(0)
    d["long_answer_candidates"] = d["long_answer_candidates"][2:5]
    d["annotations"] = []
    ex = _read_one(tmp_path, d)
    spans = [(c.span.start_token, c.span.end_token) for c in ex.long_answer_candidates]
    assert spans == [(40, 69), (41, 51), (51, 59)]
    assert ex.candidate_parents == (-1, 0, 0)
    assert [ex.candidate_depth(i) for i in range(3)] == [0, 1, 1]


def test_annotation_has_long_and_has_short_follow_the_official_rule():
    # a short answer is a non-null span or a yes/no answer; a null span is no answer
    span, null = Span(1, 5, 0, 2), Span(-1, -1, -1, -1)
    cases = [((span, (), "NONE"), (True, False)),
             ((null, (), "YES"), (False, True)),
             ((null, (), "NO"), (False, True)),
             ((span, (span,), "NONE"), (True, True)),
             ((span, (null,), "NONE"), (True, False)),
             ((null, (null, span), "NONE"), (False, True)),
             ((null, (), "NONE"), (False, False))]
    for (long_answer, shorts, yes_no), expected in cases:
        a = Annotation(0, long_answer, 0 if long_answer == span else -1, shorts, yes_no)
        assert (a.has_long, a.has_short) == expected, (long_answer, shorts, yes_no)
