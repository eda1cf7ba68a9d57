"""``nqkit convert nq-open``: NQ (original format) -> NQ-open question/answer lines
(:func:`nqkit.formats.nq_open.convert_nq_to_open`)."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, output_param
from nqkit.settings import Param, positive_int
from nqkit.vocabulary import INPUTS


def run(args: argparse.Namespace) -> int:
    from nqkit.formats.nq_open import convert_nq_to_open

    convert_nq_to_open(args.inputs, args.output, max_tokens=args.max_tokens)
    return 0


ORDER = 50  # where `nqkit --help` lists it
COMMANDS = (Command(
    "nq-open", "NQ original format -> NQ-open {question, answer} lines",
    "Convert NQ examples (original format, with document_html; shards and globs, plain or "
    "gzipped) to NQ-open as ORQA's convert_to_nq_open.py does: short answers of at most "
    "--max-tokens tokens, answer text = visible text of the HTML bytes of the span, "
    "examples without such an answer dropped, answers deduplicated. Output order follows "
    "the input (the original shuffles).",
    run, group="convert", params=(
        INPUTS.but(help="NQ JSONL files or globs (e.g. 'dev/*.jsonl.gz')"),
        output_param("output JSONL (.gz to compress)", metavar=None),
        Param("max_tokens", "--max-tokens", "longest short answer kept, in tokens "
              "(default: 5)", default=5, type=positive_int),
    )),)
