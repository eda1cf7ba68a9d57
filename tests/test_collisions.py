"""No output of a command is one of its inputs (issue 30): one mechanism at the I/O floor.

Every option a command declares as an output (``-o``, ``--per-item``, ``--trec``,
``--plot``, ``--pr-curve``, cache folders) is compared, before the command runs, with every
option it declares as an input (``--gold``, ``--passages``, ``--qrels``, ``--train``,
``--annotations``, ``--annotated-test``, positional files, ...): the same path, a symbolic
link to it, a hard link (same device and inode), a glob or registry name naming it. A
collision is one error line and exit code 2, and the input is left byte for byte as it was.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from nqkit.cli import main, walk_parsers
from nqkit.settings import DeprecatedOption
from nqkit.vocabulary import TERMS

from conftest import shared_file


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    corpus = tmp_path / "c.tsv"
    corpus.write_text("id\ttext\ttitle\n1\tparis is in france\tParis\n", encoding="utf-8")
    run = tmp_path / "run.json"
    run.write_text(json.dumps([{"question": "where is paris", "answers": ["france"],
                                "ctxs": [{"id": "1", "title": "Paris", "score": 1,
                                          "text": "paris is in france"}]}]),
                   encoding="utf-8")
    qrels = tmp_path / "q.qrels"
    qrels.write_text("0 0 1 1\n", encoding="utf-8")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"question": "where is paris", "answer": ["france"]}) + "\n",
                    encoding="utf-8")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"question": "where is paris", "prediction": "france"}) + "\n",
                     encoding="utf-8")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"id": 0, "labels": ["total", "no_question_overlap"]})
                      + "\n", encoding="utf-8")
    return {"corpus": corpus, "run": run, "qrels": qrels, "gold": gold, "preds": preds,
            "labels": labels}


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str], victim: Path) -> str:
    before = victim.read_bytes()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("nqkit: error: "), err
    assert victim.read_bytes() == before  # nothing written over the input
    return err


@pytest.mark.parametrize(("argv", "victim", "options"), [
    (["eval", "retrieval", "--predictions", "{run}", "--passages", "{corpus}", "--gold",
      "{gold}", "--per-item", "{corpus}"], "corpus", ("--per-item", "--passages")),
    (["eval", "retrieval", "--predictions", "{run}", "--qrels", "{qrels}", "--per-item",
      "{qrels}"], "qrels", ("--per-item", "--qrels")),
    (["overlap", "score", "--gold", "{gold}", "--train", "{corpus}", "--predictions",
      "{preds}", "--per-item", "{corpus}"], "corpus", ("--per-item", "--train")),
    (["overlap", "score", "--gold", "{gold}", "--annotations", "{labels}",
      "--annotated-test", "{gold}", "--predictions", "{preds}", "--per-item", "{labels}"],
     "labels", ("--per-item", "--annotations")),
    (["overlap", "score", "--gold", "{gold}", "--annotations", "{labels}",
      "--annotated-test", "{corpus}", "--predictions", "{preds}", "--per-item",
      "{corpus}"], "corpus", ("--per-item", "--annotated-test")),
    (["eval", "nq-open", "--gold", "{gold}", "--predictions", "{preds}", "--per-item",
      "{preds}"], "preds", ("--per-item", "--predictions")),
])
def test_an_output_over_an_input_is_refused_before_anything_is_written(
        files, capsys, argv, victim, options):
    words = [files[w[1:-1]].as_posix() if w.startswith("{") else w for w in argv]
    err = _refused(capsys, words, files[victim])
    assert f"{options[0]} {files[victim]}: the output path is one of the inputs " \
           f"({options[1]} " in err


def test_a_link_to_an_input_is_the_input(files, tmp_path, capsys):
    link = tmp_path / "link.tsv"
    link.symlink_to(files["corpus"])
    hard = tmp_path / "hard.tsv"
    os.link(files["corpus"], hard)
    for given in (link, hard):
        err = _refused(capsys, ["eval", "retrieval", "--predictions", str(files["run"]),
                                "--passages", str(files["corpus"]), "--gold",
                                str(files["gold"]), "--per-item", str(given)],
                       files["corpus"])
        assert f"--per-item {given}: the output path is one of the inputs (--passages" in err


def test_a_glob_names_its_files(files, tmp_path, capsys):
    pattern = str(tmp_path / "go*.jsonl")
    err = _refused(capsys, ["eval", "nq-open", "--gold", pattern, "--predictions",
                            str(files["preds"]), "--per-item", str(files["gold"])],
                   files["gold"])
    assert f"one of the inputs (--gold {tmp_path / 'go*.jsonl'})" in err


def test_two_outputs_on_one_path_are_refused(files, tmp_path, capsys):
    out = tmp_path / "same.json"
    assert main(["eval", "nq", "--gold", str(shared_file("data", "nq",
                                                         "nq-dev-sample10.jsonl.gz")),
                 "--predictions", str(shared_file("golden", "nq-eval",
                                                  "mixed0.predictions.json")),
                 "--per-item", str(out), "--pr-curve", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "is also the --per-item output" in err
    assert not out.exists()


def test_an_input_may_be_read_twice(files, capsys):
    # a file given for two inputs is no collision (the gold used as training set)
    assert main(["overlap", "score", "--gold", str(files["gold"]), "--train",
                 str(files["gold"]), "--predictions", str(files["preds"]),
                 "--format", "json"]) == 0
    capsys.readouterr()


def test_every_file_option_has_its_role():
    # the declarations give every file option its role: the terms of the vocabulary that
    # name files read are inputs wherever they appear, every output option is an output
    readers = {t.param.name for t in TERMS if t.param.input}
    assert {"gold", "predictions", "train", "passages", "qrels", "annotations",
            "annotated_test", "inputs", "index"} <= readers
    outputs = {"output", "per_item", "trec", "pr_curve", "plot", "cache_dir",
               "embedding_cache"}
    seen = set()
    for path, parser in walk_parsers():
        for action in parser._actions:
            if isinstance(action, DeprecatedOption):  # stores into the option it names
                continue
            role = getattr(action, "nqkit_role", None)
            if action.dest in readers and action.option_strings and \
                    not isinstance(action, argparse._StoreTrueAction):
                assert role == "input", (path, action.dest)
            if action.dest in outputs:
                seen.add(action.dest)
                assert role == "output", (path, action.dest)
    assert seen == outputs

