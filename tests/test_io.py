"""Shared file handling: atomic outputs, paths and globs."""

from __future__ import annotations

import os
import stat

import pytest

from nqkit.errors import InputError
from nqkit.io import atomic_output, ensure_not_input, expand_paths, write_jsonl


def test_atomic_output_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.jsonl"
    with pytest.raises(RuntimeError), atomic_output(target) as f:
        f.write("partial")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_atomic_output_keeps_the_old_file_on_failure(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_output(target) as f:
        f.write("new")
        raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    assert list(tmp_path.iterdir()) == [target]


def test_atomic_output_follows_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_jsonl(tmp_path / "a.jsonl", [{"x": 1}])
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.jsonl").stat().st_mode) == 0o644


def test_expand_paths_sorts_globs_and_keeps_given_order(tmp_path):
    for name in ("b-01.jsonl", "b-00.jsonl", "c.jsonl"):
        (tmp_path / name).write_text("{}\n")
    got = expand_paths([str(tmp_path / "c.jsonl"), str(tmp_path / "b-*.jsonl")])
    assert [p.name for p in got] == ["c.jsonl", "b-00.jsonl", "b-01.jsonl"]


def test_expand_paths_errors(tmp_path):
    with pytest.raises(InputError, match="file does not exist"):
        expand_paths(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="is a directory"):
        expand_paths(tmp_path)


def test_ensure_not_input(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{}")
    with pytest.raises(InputError, match="the output path is one of the inputs"):
        ensure_not_input(str(tmp_path / "." / "x.json"), [p])


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 16])
@pytest.mark.parametrize("gz", [False, True])
def test_iter_line_spans_equals_iter_lines(tmp_path, chunk, gz):
    import gzip

    from nqkit.io import iter_line_spans, iter_lines

    text = b'{"a": 1}\n\n   \n{"b": "x y"}\n' + b"z" * 100 + b"\n  lead\nlast-no-newline"
    path = tmp_path / ("f.jsonl.gz" if gz else "f.jsonl")
    path.write_bytes(gzip.compress(text) if gz else text)
    spans = [(n, buf[lo:hi]) for n, buf, lo, hi in iter_line_spans(path, chunk_size=chunk)]
    lines = [(n, line.rstrip(b"\n")) for n, line in iter_lines(path)]
    assert spans == lines


def test_iter_line_spans_truncated_gzip(tmp_path):
    import gzip

    from nqkit.io import iter_line_spans

    data = gzip.compress(b"".join(b'{"i": %d}\n' % i for i in range(5000)))
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"t\.jsonl\.gz:\d+: the compressed file is truncated"):
        list(iter_line_spans(path))
