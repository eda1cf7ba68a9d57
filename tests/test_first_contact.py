"""What a new user reads first: usage lines, help texts and hints say what the command
does and needs, and following a hint works without a notice."""

from __future__ import annotations

import argparse
import re

import pytest

from nqkit.cli import build_parser, main
from nqkit.tasks.base import get_task, task_names


def subparser(*words: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for w in words:
        parser._ensure()  # type: ignore[attr-defined]  # subcommands added on first use
        (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = sub.choices[w]
    return parser


def usage(*words: str) -> str:
    return " ".join(subparser(*words).format_usage().split())


@pytest.mark.parametrize("name", task_names())
def test_eval_usage_shows_required_options_without_brackets(name):
    task = get_task(name)
    line = usage("eval", name)
    for p in task.all_params():
        if p.name in ("gold", "predictions"):
            assert p.flag in line, (name, p.flag, line)
            required = p.required and (p.name != "gold" or task.gold_required) and (
                p.name != "predictions" or task.predictions_required)
            assert (f"[{p.flag} " not in line) == required, (name, p.flag, line)
    # the common case by hand: NQ needs both
    if name == "nq":
        assert line.startswith("usage: nqkit eval nq [-h] --gold GOLD [GOLD ...] "
                               "--predictions FILE [--allow-missing]")


def test_an_optional_gold_keeps_its_brackets_and_says_what_stands_in():
    line = usage("eval", "retrieval")
    assert "[--gold GOLD [GOLD ...]] --predictions FILE" in line
    assert "optional" in get_task("retrieval").gold_help


def test_baseline_usage_shows_input_as_required():
    assert re.search(r"\[-h\] --gold GLOB \[GLOB \.\.\.\]", usage("baseline",
                                                                  "first_paragraph"))


def test_a_missing_required_option_is_still_one_line(capsys):
    assert main(["eval", "nq"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--gold is required" in err


def test_nq_allow_missing_says_null_not_wrong():
    # NQ scores a missing example as a null prediction (docs/nq-eval.md): no long or short
    # answer, right where the gold is null too; "wrong" would be a different number
    for words in (("eval", "nq"), ("compare", "nq")):
        text = " ".join(subparser(*words).format_help().split())
        (help_,) = re.findall(r"--allow-missing (score .*?\(default: error\))", text)
        assert "null" in help_ and "wrong" not in help_, help_
    # the other tasks keep theirs: NQ-open's official script scores a missing one as wrong
    assert "as wrong" in " ".join(subparser("eval", "nq-open").format_help().split())
