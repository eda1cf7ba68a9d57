"""The front door: ``nqkit --help`` and ``nqkit demo``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from nqkit.cli import main

from conftest import assert_this_tree, this_tree_env


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for name in ("demo", "eval"):
        assert name in out


def test_building_the_cli_imports_nothing_heavy():
    heavy = ["torch", "sentence_transformers", "fastapi", "matplotlib", "bm25s", "numpy"]
    code = ("import sys, nqkit.cli; nqkit.cli.build_parser(); "
            f"print([m for m in {heavy!r} if m in sys.modules]); print(nqkit.cli.__file__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=this_tree_env()).stdout.splitlines()
    assert_this_tree(out[1])
    assert out[0] == "[]"


def test_subprocess_env_imports_this_tree():
    code = "import nqkit, nqkit.cli; print(nqkit.__file__); print(nqkit.cli.__file__)"
    files = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=this_tree_env()).stdout.splitlines()
    assert len(files) == 2
    for f in files:
        assert_this_tree(f)


def test_demo_numbers_derived_by_hand(capsys, tmp_path):
    """The first <P> of each toy page is a gold long answer only for 'what products does
    google make' (annotator 3 chose it; 4 of 5 annotators answered); the moon example has
    one non-null annotation (no gold). So 1 correct of 7 predicted, 6 with gold:
    P = 1/7, R = 1/6, F1 = 2/13. No short answers are predicted: short F1 = 0."""
    assert main(["demo", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "7 examples" in out and "Where to go next" in out
    assert main(["eval", "nq", "--gold", str(tmp_path / "toy-nq-dev.jsonl"), "--predictions",
                 str(tmp_path / "first_paragraph.predictions.json"), "--format", "json",
                 "--no-gold-cache"]) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["long-best-threshold-precision"] == pytest.approx(1 / 7)
    assert m["long-best-threshold-recall"] == pytest.approx(1 / 6)
    assert m["long-best-threshold-f1"] == pytest.approx(2 / 13)
    assert m["short-best-threshold-f1"] == 0.0
    assert f"{2 / 13:.4f}" in out
