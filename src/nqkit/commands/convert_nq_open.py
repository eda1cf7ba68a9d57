"""``nqkit convert nq-open``: NQ (original format) -> NQ-open question/answer lines."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, output_param
from nqkit.settings import Param, positive_int


def run(args: argparse.Namespace) -> int:
    from nqkit.errors import InputError, examples, location
    from nqkit.formats.nq import ExampleIds, validate_nq_json
    from nqkit.formats.nq_open import nq_open_from_nq, nq_open_to_json
    from nqkit.io import check_output, expand_paths, iter_lines, parse_json_line, write_jsonl
    from nqkit.report import progress, say

    if args.max_tokens < 1:
        raise InputError(None, f"--max-tokens must be positive, found {args.max_tokens}",
                         "the official conversion uses 5")
    paths = expand_paths(args.inputs, what="NQ")
    check_output(args.output, paths, option="-o")
    counts = {"read": 0, "kept": 0}

    def converted():
        ids = ExampleIds(paths)  # a repeated example would be a repeated question
        for file_no, path in enumerate(paths):
            for lineno, raw in progress(iter_lines(path), desc=path.name, unit="ex"):
                where = location(path, lineno) or str(path)
                obj = parse_json_line(raw, where)
                if not isinstance(obj, dict):
                    raise InputError(where, f"expected a JSON object, found "
                                     f"{type(obj).__name__}", "give NQ JSON lines")
                counts["read"] += 1
                ex = nq_open_from_nq(obj, where, max_tokens=args.max_tokens)
                validate_nq_json(obj, where)  # after the conversion's own, pointed checks
                ids.add(obj["example_id"], file_no, lineno)
                if ex is not None:
                    counts["kept"] += 1
                    yield nq_open_to_json(ex)
        if counts["read"] == 0:
            raise InputError(examples(paths, width=None), "the NQ input holds no example",
                             "give non-empty NQ files")

    write_jsonl(args.output, converted())
    say(f"{counts['kept']:,} of {counts['read']:,} examples have a short answer of at most "
        f"{args.max_tokens} tokens; wrote {args.output}")
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
        Param("inputs", "inputs", "NQ JSONL files or globs (e.g. 'dev/*.jsonl.gz')",
              nargs="+"),
        output_param("output JSONL (.gz to compress)", metavar=None),
        Param("max_tokens", "--max-tokens", "longest short answer kept, in tokens "
              "(default: 5)", default=5, type=positive_int),
    )),)
