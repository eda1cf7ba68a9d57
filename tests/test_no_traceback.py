"""Inputs that used to end in a traceback (issue 30): each is one error line now, or works.

* a short answer that is a number or null instead of a span (``eval nq``, ``eval
  human-bounds``, ``baseline --eval``);
* ``index build -o LINK``, LINK a symbolic link to an empty folder: the index is built in
  that folder (it was built, then thrown away on a NotADirectoryError);
* a cache folder or an output the system refuses although the permission bits allow it
  (``/proc`` for root): one line, and before any warning.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nqkit.cli import main

from conftest import require, shared_file


@pytest.mark.parametrize("value", [[1], [None]])
def test_a_short_answer_that_is_no_span_is_one_line(tmp_path, capsys, value):
    import gzip

    with gzip.open(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz"), "rt",
                   encoding="utf-8") as f:
        lines = f.read().splitlines()
    first = json.loads(lines[0])
    first["annotations"][0]["short_answers"] = value
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join([json.dumps(first), *lines[1:3]]) + "\n", encoding="utf-8")
    preds = shared_file("golden", "nq-eval", "mixed0.predictions.json")
    for argv in (["eval", "nq", "--gold", str(gold), "--predictions", str(preds),
                  "--allow-extra", "--no-gold-cache"],
                 ["eval", "human-bounds", "--gold", str(gold), "--no-gold-cache"],
                 ["baseline", "first_paragraph", "--gold", str(gold), "-o",
                  str(tmp_path / "fp.json"), "--eval"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err == (f"nqkit: error: {gold}:1: annotations[0].short_answers[0] must be a "
                       f"JSON object (a span), found {type(value[0]).__name__} "
                       f"{value[0]!r} — check the file is in the Natural Questions format\n")


def test_an_index_built_through_a_link_to_an_empty_folder_lands_in_that_folder(tmp_path,
                                                                                capsys):
    require("bm25s")
    corpus = tmp_path / "c.tsv"
    corpus.write_text("id\ttext\ttitle\n1\tparis is in france\tParis\n"
                      "2\tberlin is in germany\tBerlin\n", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "empty")
    assert main(["index", "build", "--passages", str(corpus), "--retriever", "bm25", "-o",
                 str(link), "--cluster", "none", "--format", "json"]) == 0
    capsys.readouterr()
    assert link.is_symlink() and (tmp_path / "empty" / "params.json").is_file()
    assert main(["index", "verify", str(link)]) == 0


def test_an_output_the_system_refuses_is_one_line_before_any_warning(tmp_path, capsys):
    if not Path("/proc/self").is_dir():
        pytest.skip("needs /proc")
    run = tmp_path / "run.json"  # one question with one context: a short-lists warning
    run.write_text(json.dumps([{"question": "where is paris", "answers": ["france"],
                                "ctxs": [{"id": "1", "title": "Paris", "score": 1,
                                          "text": "paris is in france"}]}]),
                   encoding="utf-8")
    assert main(["eval", "retrieval", "--predictions", str(run), "--per-item",
                 "/proc/nqkit-none/p.jsonl"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("nqkit: error: /proc/nqkit-none")
    require("fastapi")
    assert main(["browse", "--gold", str(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")),
                 "--cache-dir", "/proc/nqkit-none", "--index-only"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["nqkit: error: --cache-dir /proc/nqkit-none: cannot be created (No such "
                   "file or directory) — choose a cache directory you can write to"]
