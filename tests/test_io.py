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


def test_atomic_directory_appears_whole_with_the_umask_mode(tmp_path, capsys):
    from nqkit.io import atomic_directory

    out = tmp_path / "new" / "index"
    old = os.umask(0o022)
    try:
        with atomic_directory(out) as tmp:
            assert tmp.parent == out.parent and tmp != out
            (tmp / "a.npy").write_bytes(b"x")
            assert not out.exists()  # nothing at the target until the block succeeds
    finally:
        os.umask(old)
    assert [p.name for p in out.iterdir()] == ["a.npy"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o755
    assert sorted(p.name for p in out.parent.iterdir()) == ["index"]  # no temp left
    assert capsys.readouterr().err == f"nqkit: note: created directory {out.parent}\n"


def test_atomic_directory_failure_removes_the_temp_and_the_parents_it_made(tmp_path, capsys):
    from nqkit.io import atomic_directory

    out = tmp_path / "a" / "b" / "index"
    with pytest.raises(KeyboardInterrupt), atomic_directory(out) as tmp:
        (tmp / "half.npy").write_bytes(b"x")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
    assert capsys.readouterr().err == ""  # no note for a directory that is gone again


def test_atomic_directory_refuses_a_file_or_a_non_empty_directory(tmp_path):
    from nqkit.io import atomic_directory

    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep").write_text("mine")
    (tmp_path / "file").write_text("mine")
    with pytest.raises(InputError, match=r"-o .*full: is not empty — give a new or empty "
                       r"directory \(an index is never overwritten in place\)"), \
            atomic_directory(tmp_path / "full", option="-o"):
        raise AssertionError("the block must not run")
    with pytest.raises(InputError, match="file: exists and is not a directory"), \
            atomic_directory(tmp_path / "file"):
        raise AssertionError("the block must not run")
    assert (tmp_path / "full" / "keep").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "full"]
    # an empty directory is replaced
    (tmp_path / "empty").mkdir()
    with atomic_directory(tmp_path / "empty") as tmp:
        (tmp / "x").write_text("1")
    assert (tmp_path / "empty" / "x").read_text() == "1"


def test_shared_atomic_directory_keeps_the_copy_finished_first(tmp_path):
    from nqkit.io import atomic_directory

    out = tmp_path / "store"
    with atomic_directory(out, shared=True) as tmp:
        (tmp / "mine").write_text("late")
        out.mkdir()  # another process finishes the same store meanwhile
        (out / "theirs").write_text("first")
    assert [p.name for p in tmp_path.iterdir()] == ["store"]
    assert [p.name for p in out.iterdir()] == ["theirs"]


def test_registry_names_come_from_the_installed_resolver(tmp_path):
    from nqkit.io import set_name_resolver

    data = tmp_path / "shard-0.jsonl"
    data.write_text("{}\n")
    asked: list[str] = []

    def resolver(text):
        asked.append(text)
        return [data] if text == "toy/dev" else None

    previous = set_name_resolver(None)
    try:
        with pytest.raises(InputError, match="toy/dev: input file does not exist"):
            expand_paths("toy/dev")
        set_name_resolver(resolver)
        assert expand_paths(["toy/dev"]) == [data]
        with pytest.raises(InputError, match="other/x: input file does not exist"):
            expand_paths("other/x")
        assert expand_paths(str(data)) == [data]  # an existing path never asks
        assert asked == ["toy/dev", "other/x"]
    finally:
        set_name_resolver(previous)


def test_expanded_paths_are_not_expanded_again(tmp_path):
    from nqkit.io import ExpandedPaths

    a = tmp_path / "a.jsonl"
    a.write_text("{}\n")
    given = ExpandedPaths([a], [str(tmp_path / "*.jsonl")])
    a.unlink()  # a second expansion would fail
    assert expand_paths(given) == [a]
    assert given.given == (str(tmp_path / "*.jsonl"),)


def test_the_io_floor_imports_nothing_above_it():
    import ast
    import subprocess
    import sys

    from conftest import this_tree_env

    code = ("import sys, nqkit.io; "
            "print(sorted(m for m in sys.modules if m.startswith('nqkit.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=this_tree_env(), timeout=600).stdout
    # nqkit._version (one constant) comes with the package face, which installs the name
    # resolver; nothing of a layer above io is imported until a name is read
    assert ast.literal_eval(out) == ["nqkit._version", "nqkit.errors", "nqkit.io",
                                     "nqkit.io.content", "nqkit.io.paths",
                                     "nqkit.io.provenance", "nqkit.io.reading",
                                     "nqkit.io.writing"]


def test_registry_names_work_for_library_callers_and_the_cli(tmp_path):
    """Without the command line: the package installs the names for every library caller,
    whether it imports only a format reader, the datasets layer or the task registry."""
    import subprocess
    import sys

    from conftest import this_tree_env

    home = tmp_path / "home"
    # a two-question stand-in: under nq-open/train, whose content no checksum pins (one
    # under nq-open/dev is refused as another version of the file: its sha256 is pinned)
    (home / "data" / "nq-open" / "train").mkdir(parents=True)
    (home / "data" / "nq-open" / "train" / "NQ-open.train.jsonl").write_text(
        '{"question": "q1", "answer": ["paris"]}\n{"question": "q2", "answer": ["rome"]}\n',
        encoding="utf-8")
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"question": "q1", "prediction": "Paris"}\n'
                     '{"question": "q2", "prediction": "milan"}\n', encoding="utf-8")
    env = this_tree_env(NQKIT_HOME=str(home), NQKIT_REGISTRY="")
    programs = {
        "floor": "from nqkit.formats.nq_open import read_nq_open\n"
                 "print(len(list(read_nq_open('nq-open/train'))))",
        "datasets": "import nqkit.datasets\n"
                    "from nqkit.formats.nq_open import read_nq_open\n"
                    "print(len(list(read_nq_open('nq-open/train'))))",
        "tasks": "from nqkit.tasks.base import get_task\n"
                 "r = get_task('nq-open').run(gold=['nq-open/train'], "
                 f"predictions={str(preds)!r})\n"
                 "print(r.official['accuracy'])",
    }
    got = {}
    for name, code in programs.items():
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, timeout=600)
        got[name] = (p.returncode, p.stdout.strip(), p.stderr.strip().splitlines()[-1:])
    assert got["floor"] == (0, "2", [])
    assert got["datasets"] == (0, "2", [])
    assert got["tasks"] == (0, "0.5", [])  # q1 right (case is normalized away), q2 wrong
    p = subprocess.run([sys.executable, "-m", "nqkit", "eval", "nq-open", "--gold",
                        "nq-open/train", "--predictions", str(preds), "--format", "json"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0 and '"accuracy": 0.5' in p.stdout


def test_an_output_link_is_written_through_and_stays_a_link(tmp_path):
    from nqkit.io import atomic_output

    real = tmp_path / "data" / "real.txt"
    real.parent.mkdir()
    real.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with atomic_output(link) as f:
        f.write("new\n")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text(encoding="utf-8") == "new\n"
    assert sorted(p.name for p in real.parent.iterdir()) == ["real.txt"]  # no temp left
    # a link to a file not yet there, in a directory that is: the file is made
    fresh = tmp_path / "fresh.txt"
    fresh.symlink_to(tmp_path / "data" / "made.txt")
    with atomic_output(fresh) as f:
        f.write("made\n")
    assert fresh.is_symlink() and (tmp_path / "data" / "made.txt").read_text() == "made\n"


def test_an_output_link_into_a_missing_directory_is_refused_and_nothing_is_made(tmp_path):
    from nqkit.io import atomic_output

    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "nowhere" / "x.txt")
    with pytest.raises(InputError, match="whose directory does not exist"), \
            atomic_output(link) as f:
        f.write("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt"]
    assert link.is_symlink()


def test_a_command_writes_through_an_output_link(tmp_path, capsys):
    from nqkit.cli import main
    from nqkit.data.toy import TOY_PATH

    direct, real = tmp_path / "direct.jsonl", tmp_path / "real.jsonl"
    real.write_text("stale\n", encoding="utf-8")
    link = tmp_path / "out.jsonl"
    link.symlink_to(real)
    assert main(["simplify", str(TOY_PATH), "-o", str(direct)]) == 0
    assert main(["simplify", str(TOY_PATH), "-o", str(link)]) == 0
    assert link.is_symlink() and real.read_bytes() == direct.read_bytes()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
@pytest.mark.parametrize("argv", [
    ["simplify", "{toy}", "-o", "/proc/nqkit-x/out.jsonl"],
    ["convert", "nq-open", "{toy}", "-o", "/proc/nqkit-x/out.jsonl"],
    ["baseline", "first_paragraph", "--gold", "{toy}", "-o", "/proc/nqkit-x/p.json"],
    ["data", "stats", "{toy}", "--plot", "/proc/nqkit-x/p.png"],
    ["reqa", "build", "--from", "nq", "{toy}", "-o", "/proc/nqkit-x/task"],
])
def test_an_output_directory_the_system_refuses_is_one_line(argv, capsys):
    # /proc is a directory, writable by mode for root, where nothing can be created: the
    # error comes from mkdir itself, and is one line, not a traceback
    from nqkit.cli import main
    from nqkit.data.toy import TOY_PATH

    assert main([a.replace("{toy}", str(TOY_PATH)) for a in argv]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("nqkit: error: /proc/nqkit-x") and "cannot create" in err[-1]
    assert len([line for line in err if "error" in line]) == 1
    assert not os.path.exists("/proc/nqkit-x")


def test_a_file_given_twice_is_refused_naming_it(tmp_path):
    """Read twice, a file is counted twice (`data stats`) or its examples clash (`eval`):
    the same path, overlapping globs and a link to a given file are one file."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("{}\n")
    b.write_text("{}\n")
    (tmp_path / "link.jsonl").symlink_to(a)
    with pytest.raises(InputError) as e:
        expand_paths([str(a), str(b), str(a)], what="NQ")
    assert str(e.value) == (f"{a}: the NQ file is given twice: it would be read and counted "
                            "twice — give each file once")
    with pytest.raises(InputError) as e:  # the glob matches a.jsonl and the link to it
        expand_paths([str(tmp_path / "*.jsonl")])
    assert str(e.value).startswith(f"{tmp_path / 'link.jsonl'}: the input file is given "
                                   f"twice (twice in {tmp_path / '*.jsonl'})")
    with pytest.raises(InputError) as e:
        expand_paths([str(tmp_path / "[ab].jsonl"), str(b)])
    assert str(e.value).startswith(f"{b}: the input file is given twice (as "
                                   f"{tmp_path / '[ab].jsonl'} and {b})")
    with pytest.raises(InputError, match=r"given twice \(as .*a.jsonl and .*link.jsonl\)"):
        expand_paths([str(a), str(tmp_path / "link.jsonl")])
    # a caller gathering several options' files (memory and questions) may allow it
    assert expand_paths([str(a), str(a)], unique=False) == [a, a]
    assert expand_paths([str(a), str(b)]) == [a, b]
