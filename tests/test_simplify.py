"""nqkit simplify: byte-for-byte parity with the official simplified file, bad input,
parallel shards, and properties of the simplified text."""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nqkit.cli import main
from nqkit.errors import InputError
from nqkit.formats.simplify import (
    SIMPLIFIED_KEYS,
    document_text,
    dumps_simplified,
    simplify_example,
    simplify_files,
    simplify_line,
)

from conftest import shared_file, this_tree_env

ORIGINAL = ("data", "nq", "nq-dev-sample10.jsonl.gz")
OFFICIAL = ("data", "nq", "simplified-nq-dev-sample10.jsonl")


def _original_lines() -> list[bytes]:
    with gzip.open(shared_file(*ORIGINAL), "rb") as f:
        return [line for line in f if line.strip()]


def _official_lines() -> list[bytes]:
    return shared_file(*OFFICIAL).read_bytes().splitlines(keepends=True)


def _renumbered(line: bytes, example_id: int) -> bytes:
    """An original-format line with another example id (the official files' compact JSON)."""
    out, n = re.subn(rb'"example_id":-?\d+', b'"example_id":%d' % example_id, line)
    assert n == 1
    return out


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- parity

@pytest.mark.parametrize("jobs", [[], ["-j", "1"]])  # the file cut in two; one process
def test_cli_output_is_byte_identical_to_the_official_file(tmp_path, capsys, jobs):
    src = shared_file(*ORIGINAL)
    before = (_sha(src), src.stat().st_mtime_ns)
    out = tmp_path / "simplified.jsonl"
    assert main(["simplify", str(src), "-o", str(out), *jobs]) == 0
    got = out.read_bytes().splitlines(keepends=True)
    want = _official_lines()
    assert len(got) == len(want) == 10
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, f"line {i + 1} differs"
    assert (_sha(src), src.stat().st_mtime_ns) == before  # input untouched
    assert "simplified 10 examples from 1 file" in capsys.readouterr().out


def test_fast_and_generic_paths_both_match_the_official_lines():
    want = _official_lines()
    for i, line in enumerate(_original_lines()):
        assert simplify_line(line) == want[i]
        assert dumps_simplified(simplify_example(json.loads(line))) == want[i]


def test_simplify_example_builds_new_objects_and_leaves_its_input_alone():
    line = _original_lines()[3]  # has non-null long and short answers
    example = json.loads(line)
    snapshot = copy.deepcopy(example)
    record = simplify_example(example)
    assert example == snapshot
    assert list(record) == list(SIMPLIFIED_KEYS)
    # Nothing in the output is an object of the input (mutating one cannot touch the other).
    assert all(c is not d for c, d in zip(record["long_answer_candidates"],
                                          example["long_answer_candidates"], strict=True))
    assert record["annotations"][0] is not example["annotations"][0]
    assert record["annotations"][0]["long_answer"] is not example["annotations"][0]["long_answer"]
    assert "start_byte" in example["annotations"][0]["long_answer"]
    assert "start_byte" not in record["annotations"][0]["long_answer"]


def test_several_shards_in_parallel_keep_the_input_order_and_gzip(tmp_path):
    lines, want = _original_lines(), _official_lines()
    shards = []
    for k, (a, b) in enumerate([(0, 4), (4, 5), (5, 10)]):
        p = tmp_path / f"nq-dev-0{k}.jsonl.gz"
        with gzip.open(p, "wb") as f:
            f.writelines(lines[a:b])
        shards.append(p)
    from nqkit.formats.simplify import _plan

    # Two whole shards, then the third cut in two: no core idles at the end.
    assert [(i, lo) for i, lo, _ in _plan(shards, 2)][:3] == [(0, 0), (1, 0), (2, 0)]
    assert len(_plan(shards, 2)) == 4 and len(_plan(shards, 3)) == 3
    assert len(_plan(shards, 4)) == 3  # six parts on four cores would take two rounds
    assert len(_plan(shards[:1], 4)) == 2
    out = tmp_path / "out" / "simplified.jsonl.gz"
    result = simplify_files(str(tmp_path / "nq-dev-*.jsonl.gz"), out, jobs=2)
    assert result.examples == 10 and list(result.inputs) == shards
    with gzip.open(out, "rb") as f:
        assert f.read() == b"".join(want)
    assert sorted(os.listdir(out.parent)) == ["simplified.jsonl.gz"]  # no part files left


def test_one_process_for_several_shards_gives_the_same_bytes(tmp_path):
    lines = _original_lines()
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(b"".join(lines[:6]))
    b.write_bytes(b"\n" + b"".join(lines[6:]))  # blank lines are skipped
    out1, out2 = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    simplify_files([a, b], out1, jobs=1)
    simplify_files([a, b], out2, jobs=2)
    assert out1.read_bytes() == out2.read_bytes() == b"".join(_official_lines())


def test_a_single_shard_is_cut_in_two_parts_that_meet_exactly(tmp_path):
    from nqkit.formats.simplify import _cut_point, _plan, _simplify_stream

    src = shared_file(*ORIGINAL)
    want = b"".join(_official_lines())
    cut = _cut_point(src)
    assert _plan([src], 2) == [(0, 0, cut), (0, cut, 1 << 62)]
    with gzip.open(src, "rb") as f:
        size = len(f.read())
    assert cut == size * 3 // 5  # from the gzip trailer's size, exact here
    for mid in (0, 1, 342_194, 342_195, cut, size, size + 1):
        first, second = tmp_path / "a", tmp_path / "b"
        with open(first, "wb") as a, open(second, "wb") as b:
            n1 = _simplify_stream(src, a, lambda _n: None, hi=mid)
            n2 = _simplify_stream(src, b, lambda _n: None, lo=mid)
        assert n1 + n2 == 10
        assert first.read_bytes() + second.read_bytes() == want, mid
    out = tmp_path / "out.jsonl"
    assert simplify_files(src, out, jobs=2).examples == 10
    assert out.read_bytes() == want


# --------------------------------------------------------------------------- bad input

def _example(**changes: Any) -> dict[str, Any]:
    ex: dict[str, Any] = {
        "annotations": [{"annotation_id": 7, "long_answer": {
            "candidate_index": 0, "end_byte": 9, "end_token": 3, "start_byte": 0,
            "start_token": 0}, "short_answers": [
            {"end_byte": 5, "end_token": 2, "start_byte": 3, "start_token": 1}],
            "yes_no_answer": "NONE"}],
        "document_html": "<P>a b</P>",
        "document_title": "T",
        "document_tokens": [
            {"end_byte": 3, "html_token": True, "start_byte": 0, "token": "<P>"},
            {"end_byte": 5, "html_token": False, "start_byte": 3, "token": "a b"},
            {"end_byte": 9, "html_token": True, "start_byte": 5, "token": "</P>"}],
        "document_url": "https://en.wikipedia.org//w/index.php?title=T&amp;oldid=1",
        "example_id": -12,
        "long_answer_candidates": [
            {"end_byte": 9, "end_token": 3, "start_byte": 0, "start_token": 0,
             "top_level": True}],
        "question_text": "who is t",
        "question_tokens": ["who", "is", "t"],
    }
    ex.update(changes)
    return ex


def test_hand_made_example_simplifies_as_specified():
    out = simplify_line(json.dumps(_example()).encode())
    assert out == (
        b'{"question_text": "who is t", "example_id": -12, "document_url": '
        b'"https://en.wikipedia.org//w/index.php?title=T&amp;oldid=1", "document_text": '
        b'"<P> a_b </P>", "long_answer_candidates": [{"end_token": 3, "start_token": 0, '
        b'"top_level": true}], "annotations": [{"annotation_id": 7, "long_answer": '
        b'{"candidate_index": 0, "end_token": 3, "start_token": 0}, "short_answers": '
        b'[{"end_token": 2, "start_token": 1}], "yes_no_answer": "NONE"}]}\n'
    )


def _drop(key: str) -> dict[str, Any]:
    ex = _example()
    del ex[key]
    return ex


def _bad_token() -> dict[str, Any]:
    ex = _example()
    ex["document_tokens"][1]["token"] = 5
    return ex


def _no_token_key() -> dict[str, Any]:
    ex = _example()
    del ex["document_tokens"][2]["token"]
    return ex


def _annotation(**changes: Any) -> dict[str, Any]:
    ex = _example()
    ex["annotations"][0].update(changes)
    return ex


BAD_LINES = [
    ('{"question_text": "x",', "malformed JSON (Expecting property name enclosed in double "
     "quotes at character 23) — each line must be one complete JSON object"),
    (b'{"question_text": "\xff"}', "malformed JSON ('utf-8' codec can't decode byte 0xff in "
     "position 19: invalid start byte) — each line must be one complete JSON object"),
    ("[1, 2]", "expected a JSON object, found array — each line must be one NQ example {...}"),
    (_drop("annotations"), "missing key 'annotations' in example — check the file is in the "
     "original Natural Questions format"),
    (_drop("document_tokens"), "missing key 'document_tokens' in example — check the file is "
     "in the original Natural Questions format"),
    (_example(example_id="12"), "example.example_id must be an integer, found string '12' — "
     "check the file is in the original Natural Questions format"),
    (_example(example_id=True), "example.example_id must be an integer, found boolean True — "
     "check the file is in the original Natural Questions format"),
    (_example(question_text=None), "example.question_text must be a string, found null — "
     "check the file is in the original Natural Questions format"),
    (_bad_token(), "document_tokens[1].token must be a string, found integer 5 — check the "
     "file is in the original Natural Questions format"),
    (_no_token_key(), "missing key 'token' in document_tokens[2] — check the file is in the "
     "original Natural Questions format"),
    (_example(long_answer_candidates=[[1, 2]]), "long_answer_candidates[0] must be an object, "
     "found array — check the file is in the original Natural Questions format"),
    (_annotation(long_answer=None), "annotations[0].long_answer must be an object, found null "
     "— check the file is in the original Natural Questions format"),
    (_annotation(short_answers={"start_token": 1}), "annotations[0].short_answers must be an "
     "array, found object — check the file is in the original Natural Questions format"),
    (_example(annotations=[3]), "annotations[0] must be an object, found integer 3 — check the "
     "file is in the original Natural Questions format"),
    (_example(document_tokens=[]), "document_tokens is empty (a page without tokens cannot be "
     "simplified) — remove the example or give its tokens"),
    # Impossible spans, refused as every reader refuses them (the official function would
    # copy them into its output).
    (_drop("document_html"), "missing key 'document_html' in example — check the file is in "
     "the original Natural Questions format"),
    (_annotation(long_answer={"candidate_index": 0, "start_byte": 0, "end_byte": 9,
                              "start_token": 2, "end_token": 1}),
     "annotations[0].long_answer has start_token >= end_token (2 >= 1) — end offsets are "
     "exclusive: end must exceed start"),
    (_annotation(long_answer={"candidate_index": 0, "start_byte": 0, "end_byte": 9,
                              "start_token": 0, "end_token": 4}),
     "annotations[0].long_answer ends at token 4, past the end of the document (3 tokens) — "
     "offsets must index the document; check the file is unmodified NQ data"),
    (_annotation(long_answer={"candidate_index": 0, "start_byte": 0, "end_byte": 11,
                              "start_token": 0, "end_token": 3}),
     "annotations[0].long_answer ends at byte 11, past the end of the document (10 bytes) — "
     "offsets must index the document; check the file is unmodified NQ data"),
    (_annotation(long_answer={"candidate_index": 0, "start_byte": -4, "end_byte": 9,
                              "start_token": 0, "end_token": 3}),
     "annotations[0].long_answer.start_byte is -4, not a position or -1 — offsets are "
     "positions in the document, -1 when absent"),
    (_annotation(long_answer={"candidate_index": 0, "start_byte": 0, "end_byte": 9,
                              "start_token": "0", "end_token": 3}),
     "annotations[0].long_answer.start_token must be int, found str '0' — check the file is "
     "in the Natural Questions format"),
    (_annotation(long_answer={"candidate_index": 1, "start_byte": 0, "end_byte": 9,
                              "start_token": 0, "end_token": 3}),
     "annotations[0].long_answer.candidate_index is 1 but the example has 1 candidates — "
     "check the file is unmodified NQ data"),
    (_annotation(yes_no_answer="MAYBE"), "annotations[0].yes_no_answer is 'MAYBE' — use YES, "
     "NO or NONE"),
    (_example(long_answer_candidates=[{"start_byte": 0, "end_byte": 9, "start_token": 0,
                                       "end_token": 30, "top_level": True}]),
     "long_answer_candidates[0] ends at token 30, past the end of the document (3 tokens) — "
     "offsets must index the document; check the file is unmodified NQ data"),
    (_example(example_id=-11), "duplicate example_id -11 (first at {src}:1) — give each "
     "example once (check for a file or shard given twice)"),
]


@pytest.mark.parametrize(("content", "message"), BAD_LINES)
def test_bad_lines_give_one_clear_error_with_file_and_line(tmp_path, capsys, content, message):
    good = json.dumps(_example(example_id=-11))
    bad = content.encode() if isinstance(content, str) else (
        content if isinstance(content, bytes) else json.dumps(content).encode())
    src = tmp_path / "in.jsonl"
    src.write_bytes(good.encode() + b"\n" + bad + b"\n")
    out = tmp_path / "out.jsonl"
    assert main(["simplify", str(src), "-o", str(out)]) == 2
    message = message.replace("{src}", str(src))
    assert capsys.readouterr().err == f"nqkit: error: {src}:2: {message}\n"
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]  # no output, no temp file


def test_a_repeated_example_is_refused_across_shards_and_parallel_parts(tmp_path, capsys):
    # The same example in two shards, and twice in one shard that the plan cuts in two
    # parts run by different processes: one line naming both places, no output.
    lines = _original_lines()
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(b"".join(lines[:3]))
    b.write_bytes(b"".join([_renumbered(lines[0], 5), *lines[3:], lines[2]]))
    for jobs in ("1", "2"):
        assert main(["simplify", str(a), str(b), "-o", str(tmp_path / "o.jsonl"),
                     "-j", jobs]) == 2
        assert capsys.readouterr().err == (
            f"nqkit: error: {b}:9: duplicate example_id {json.loads(lines[2])['example_id']} "
            f"(first at {a}:3) — give each example once (check for a file or shard given "
            "twice)\n")
    one = tmp_path / "one.jsonl"
    one.write_bytes(b"".join([*lines, lines[7]]))
    for jobs in ("1", "2"):  # two processes: the shard is cut into two parts
        assert main(["simplify", str(one), "-o", str(tmp_path / "o.jsonl"), "-j", jobs]) == 2
        assert capsys.readouterr().err.startswith(
            f"nqkit: error: {one}:11: duplicate example_id "
            f"{json.loads(lines[7])['example_id']} (first at {one}:8)")
    assert sorted(os.listdir(tmp_path)) == ["a.jsonl", "b.jsonl", "one.jsonl"]


def test_library_function_raises_input_error_at_the_given_place():
    with pytest.raises(InputError, match=r"^f\.jsonl:7: missing key 'question_text'"):
        simplify_example(_drop("question_text"), "f.jsonl:7")
    with pytest.raises(InputError, match="lone UTF-16 surrogate"):
        simplify_line(json.dumps(_example(question_text="\ud800")).encode(), "f.jsonl:1")


def test_truncated_gzip(tmp_path, capsys):
    data = shared_file(*ORIGINAL).read_bytes()
    src = tmp_path / "trunc.jsonl.gz"
    src.write_bytes(data[: len(data) // 2])
    assert main(["simplify", str(src), "-o", str(tmp_path / "out.jsonl")]) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(rf"nqkit: error: {re.escape(str(src))}:\d+: the compressed file is "
                        r"truncated or corrupt \(.+\) — download or copy the file again\n", err)
    assert sorted(os.listdir(tmp_path)) == ["trunc.jsonl.gz"]


def test_error_in_a_later_shard_of_a_parallel_run(tmp_path, capsys):
    good = tmp_path / "a.jsonl"
    good.write_text(json.dumps(_example()) + "\n")
    bad = tmp_path / "b.jsonl"
    bad.write_text(json.dumps(_example(example_id=-13)) + "\n"
                   + json.dumps(_drop("annotations")) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["simplify", str(good), str(bad), "-o", str(out), "-j", "2"]) == 2
    assert capsys.readouterr().err.startswith(f"nqkit: error: {bad}:2: missing key 'annotations'")
    assert sorted(os.listdir(tmp_path)) == ["a.jsonl", "b.jsonl"]


def test_simplified_input_is_recognised(tmp_path, capsys):
    src = shared_file(*OFFICIAL)
    assert main(["simplify", str(src), "-o", str(tmp_path / "o.jsonl")]) == 2
    assert capsys.readouterr().err == (
        f"nqkit: error: {src}:1: this example is already in the simplified format "
        "(document_text, no document_tokens) — give the original-format files (with "
        "document_html and document_tokens)\n")


def test_parallel_run_reports_the_first_error_in_input_order(tmp_path, capsys):
    # The second shard fails at once, the first only after twelve real pages (more than a
    # worker processes between checks for failures elsewhere): the error shown must still
    # be the first shard's, as in a one-process run.
    lines = _original_lines()
    again = [_renumbered(line, k) for k, line in enumerate(lines[:2])]  # ids are unique
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(b"".join(lines + again) + b"[]\n")
    b.write_bytes(b"{}\n" + b"".join(lines[:2]))
    for jobs in ("1", "2"):
        assert main(["simplify", str(a), str(b), "-o", str(tmp_path / "o.jsonl"),
                     "-j", jobs]) == 2
        assert capsys.readouterr().err == (
            f"nqkit: error: {a}:13: expected a JSON object, found array — each line must be "
            "one NQ example {...}\n")
    assert sorted(os.listdir(tmp_path)) == ["a.jsonl", "b.jsonl"]


def test_empty_input_and_output_over_input(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert main(["simplify", str(empty), "-o", str(tmp_path / "o.jsonl")]) == 2
    assert capsys.readouterr().err == (
        f"nqkit: error: {empty}: no examples found (the input is empty) — give non-empty NQ "
        ".jsonl or .jsonl.gz files\n")
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(_example()) + "\n")
    before = src.read_bytes()
    assert main(["simplify", str(src), "-o", str(src)]) == 2
    assert capsys.readouterr().err == (
        f"nqkit: error: -o {src}: the output path is one of the inputs (IN {src}): writing it "
        "would destroy it — choose another output path; inputs are never modified\n")
    assert src.read_bytes() == before


# --------------------------------------------------------------------------- properties

# Token texts with the characters that matter: spaces (to become "_"), other whitespace that
# must stay as it is, quotes, backslashes, control characters and non-ASCII.
token_text = st.text(
    alphabet=st.sampled_from([" ", "a", "Z", "_", "\t", "\n", "\u3000", "\u180e", '"', "\\",
                              "\x00", "\x1f", "\x7f", "é", "\u2028", "😀", "<", ">"]),
    max_size=6,
)
# Values the fast decoder must keep exactly as json.loads does: any size of integer, floats
# (infinity takes the generic path), text, null.
extra_value = st.one_of(st.none(), st.text(max_size=3), st.floats(allow_nan=False),
                        st.integers(), st.booleans())


@st.composite
def valid_span(draw: st.DrawFn, n_tokens: int, n_bytes: int, *, null: bool | None = None
               ) -> dict[str, Any]:
    """A span every reader accepts: each offset pair -1 (absent) or inside the page; not
    null unless ``null`` (``None``: either). Keys in any order, sometimes an extra key."""
    def pair(n: int, absent: bool) -> tuple[int, int]:
        if absent or n < 1:
            return -1, -1
        start = draw(st.integers(0, n - 1))
        return start, draw(st.integers(start + 1, n))

    is_null = draw(st.booleans()) if null is None else null
    st_, et = pair(n_tokens, is_null or draw(st.integers(0, 5)) == 0)
    sb, eb = pair(n_bytes, is_null or draw(st.integers(0, 5)) == 0)
    if not is_null and st_ < 0 and sb < 0:
        st_, et = pair(n_tokens, False)  # tokens are never empty here
    span: dict[str, Any] = {"start_token": st_, "end_token": et, "start_byte": sb,
                            "end_byte": eb}
    if draw(st.booleans()):
        span["extra"] = draw(extra_value)
    keys = draw(st.permutations(list(span)))
    return {k: span[k] for k in keys}


@st.composite
def original_examples(draw: st.DrawFn) -> dict[str, Any]:
    """Original-format examples that pass every check: the output must be the official
    function's, on either path."""
    tokens = draw(st.lists(token_text, min_size=1, max_size=30))
    html = draw(st.text(max_size=20))
    n, n_bytes = len(tokens), len(html.encode("utf-8", errors="surrogatepass"))
    candidates = draw(st.lists(valid_span(n, n_bytes, null=False), max_size=5))
    annotations = []
    for _ in range(draw(st.integers(0, 5))):
        k = draw(st.integers(-1, len(candidates) - 1))
        long_answer = {"candidate_index": k,
                       **draw(valid_span(n, n_bytes, null=k < 0))}
        annotations.append({
            "annotation_id": draw(st.integers(0, 2**64 - 1)),
            "long_answer": long_answer,
            "short_answers": draw(st.lists(valid_span(n, n_bytes, null=False), max_size=3)),
            "yes_no_answer": draw(st.sampled_from(["NONE", "YES", "NO", "yes"])),
        })
    ex = {
        "annotations": annotations,
        "document_html": html,
        # inside the page, as every reader requires (the last ones empty on a short page)
        "document_tokens": [{"token": t, "start_byte": min(i, n_bytes),
                             "end_byte": min(i + 1, n_bytes), "html_token": t.startswith("<")}
                            for i, t in enumerate(tokens)],
        "document_url": draw(st.text(max_size=10)),
        "example_id": draw(st.integers(-(2**63), 2**63 - 1)),
        "long_answer_candidates": candidates,
        "question_text": draw(st.text(max_size=10)),
    }
    # Any key order: the output order must not depend on it.
    keys = draw(st.permutations(list(ex)))
    return {k: ex[k] for k in keys}


@settings(max_examples=150, deadline=None)
@given(original_examples(), st.booleans())
def test_fast_path_equals_generic_path_and_keeps_every_token(example, compact):
    snapshot = copy.deepcopy(example)
    line = (json.dumps(example, separators=(",", ":"), ensure_ascii=False) if compact
            else json.dumps(example)).encode()
    out = simplify_line(line)
    assert out == dumps_simplified(simplify_example(json.loads(line)))
    assert example == snapshot
    record = json.loads(out)
    assert list(record) == list(SIMPLIFIED_KEYS)
    tokens = [t["token"] for t in example["document_tokens"]]
    pieces = record["document_text"].split(" ")
    assert len(pieces) == len(tokens)  # token offsets stay valid
    assert pieces == [t.replace(" ", "_") for t in tokens]
    for c, orig in zip(record["long_answer_candidates"], example["long_answer_candidates"],
                       strict=True):
        assert list(c) == [k for k in orig if k not in ("start_byte", "end_byte")]
    for a in record["annotations"]:
        for span in [a["long_answer"], *a["short_answers"]]:
            assert "start_byte" not in span and "end_byte" not in span


any_span = st.fixed_dictionaries(
    {"start_token": st.integers(-3, 12), "end_token": st.integers(-3, 12)},
    optional={"start_byte": st.integers(-3, 30), "end_byte": st.integers(-3, 30),
              "candidate_index": st.one_of(st.integers(-2, 3), st.text(max_size=1))},
)


def _both_paths(example: dict) -> tuple[bytes | str, bytes | str]:
    """The simplified line (or the one error) of the generic path and of the fast path."""
    line = json.dumps(example).encode()
    out: list[bytes | str] = []
    for run in (lambda: dumps_simplified(simplify_example(json.loads(line), "f:1")),
                lambda: simplify_line(line, "f:1")):
        try:
            out.append(run())
        except InputError as e:
            out.append(str(e))
    return out[0], out[1]


@settings(max_examples=200, deadline=None)
@given(st.lists(any_span, max_size=3), st.lists(any_span, max_size=3),
       st.lists(any_span, max_size=2), st.sampled_from(["NONE", "YES", "no", "MAYBE", ""]),
       st.sampled_from(["", "ab", "<P>a é b</P>", "\\u00e9\n"]))
def test_fast_and_generic_paths_accept_and_refuse_the_same_spans(candidates, longs, shorts,
                                                                  yes_no, html):
    # Spans of any shape, inside the page or not: both paths give the same line, or the
    # same one error (the fast path hands every doubtful line to the generic one).
    example = _example(long_answer_candidates=candidates, document_html=html, annotations=[
        {"long_answer": la, "short_answers": shorts, "yes_no_answer": yes_no}
        for la in longs])
    generic, fast = _both_paths(example)
    assert fast == generic


token_value = st.one_of(st.integers(-2, 12), st.booleans(), st.none(), st.text(max_size=2),
                        st.floats(0, 12), st.just(2**63))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2), st.sampled_from(["token", "start_byte", "end_byte", "html_token"]),
       st.one_of(st.just("drop"), token_value))
def test_fast_and_generic_paths_accept_and_refuse_the_same_tokens(i, key, value):
    # One field of one token dropped or set to anything (issue 30: the fast path read only
    # the text): both paths give the same line, or the same one error.
    example = _example()
    if value == "drop":
        del example["document_tokens"][i][key]
    else:
        example["document_tokens"][i][key] = value
    generic, fast = _both_paths(example)
    assert fast == generic


@given(st.lists(token_text, min_size=1, max_size=40))
def test_document_text_maps_spaces_inside_tokens_to_underscores(tokens):
    text = document_text(tokens)
    assert text.split(" ") == [t.replace(" ", "_") for t in tokens]
    assert text.count(" ") == len(tokens) - 1


def test_jobs_must_be_positive(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(_example()) + "\n")
    assert main(["simplify", str(src), "-o", str(tmp_path / "o.jsonl"), "-j", "0"]) == 2
    assert capsys.readouterr().err == (
        "nqkit: error: nqkit simplify: argument -j/--jobs: must be >= 1, found 0 — see "
        "`nqkit simplify --help`\n")


@pytest.mark.parametrize("kernel", ["works", "refuses", "stops-halfway"])
def test_parts_are_appended_whole_with_or_without_copy_file_range(tmp_path, monkeypatch,
                                                                   kernel):
    from nqkit.formats import simplify as mod

    real = os.copy_file_range
    calls = []

    def fake(src: int, dst: int, count: int) -> int:
        calls.append(count)
        if kernel == "refuses" or (kernel == "stops-halfway" and len(calls) > 1):
            raise OSError("EXDEV")
        return real(src, dst, 3 if kernel == "stops-halfway" else count)

    monkeypatch.setattr(mod.os, "copy_file_range", fake)
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"first part\n")
    b.write_bytes(b"second part\n")
    with open(tmp_path / "out", "wb") as out:
        out.write(b"head\n")
        mod._append(str(a), out)
        mod._append(str(b), out)
        out.write(b"tail\n")
    assert (tmp_path / "out").read_bytes() == b"head\nfirst part\nsecond part\ntail\n"
    assert calls


def test_orjson_writes_every_string_exactly_as_json_dumps():
    # The fast path writes strings with orjson; this is the equivalence it relies on.
    import orjson

    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert orjson.dumps(every) == json.dumps(every, ensure_ascii=False).encode()


# --------------------------------------------------------------------------- worker lifetime

def _run_python(code: str) -> subprocess.CompletedProcess[str]:
    # a child of this test process: its parent (us) is alive throughout
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=this_tree_env(), timeout=120)


@pytest.mark.skipif(sys.platform != "linux", reason="prctl is Linux-only")
def test_worker_is_killed_with_its_parent_by_the_kernel_on_linux():
    # die_with_parent arms prctl(PR_SET_PDEATHSIG = 1, SIGKILL); PR_GET_PDEATHSIG (2)
    # reads it back. No watcher thread is needed then.
    r = _run_python(
        "import ctypes, os, threading\n"
        "from nqkit.workers import die_with_parent\n"
        "die_with_parent(os.getppid())\n"
        "sig = ctypes.c_int(-1)\n"
        "assert ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0) == 0\n"
        "print(sig.value, [t.name for t in threading.enumerate()])\n")
    assert (r.returncode, r.stdout) == (0, f"{int(signal.SIGKILL)} ['MainThread']\n"), r.stderr


def test_watcher_thread_keeps_a_worker_whose_parent_lives():
    # Without prctl (no libc here), a daemon thread polls the parent: while the parent
    # lives it keeps polling (it ends the process only once the parent is gone).
    r = _run_python(
        "import ctypes, os, threading\n"
        "def no_libc(*args, **kwargs):\n"
        "    raise OSError('no libc')\n"
        "ctypes.CDLL = no_libc\n"
        "from nqkit.workers import die_with_parent\n"
        "die_with_parent(os.getppid())\n"
        "(w,) = [t for t in threading.enumerate() if t.name == 'nqkit-parent-watch']\n"
        "w.join(0.3)\n"
        "print('watching', w.is_alive(), w.daemon)\n")
    assert (r.returncode, r.stdout) == (0, "watching True True\n"), r.stderr


def test_a_gzip_too_short_to_hold_its_size_is_a_truncated_input_when_cut(tmp_path, capsys):
    # Three bytes with the gzip magic: with two processes the one shard is cut in two, and
    # the cut point reads the gzip size field (the last 4 bytes of a member of at least 18
    # bytes) only when there is one; the error is the reader's, as with one process.
    tiny = tmp_path / "tiny.jsonl.gz"
    tiny.write_bytes(b"\x1f\x8b\x08")
    for jobs in ("2", "1"):
        assert main(["simplify", str(tiny), "-o", str(tmp_path / "o.jsonl"), "-j", jobs]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"nqkit: error: {tiny}:1: the compressed file is truncated or "
                              "corrupt ("), err
        assert err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["tiny.jsonl.gz"]
