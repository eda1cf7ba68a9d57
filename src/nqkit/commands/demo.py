"""``nqkit demo``: the whole loop on the project's own toy data, in a second."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, output_param

NEXT_STEPS = """\
Where to go next:
  nqkit eval nq --gold 'nq-dev-*.jsonl.gz' --predictions preds.json   score your system
  nqkit eval nq ... --breakdown --bootstrap 1000 --pr-curve pr.png      analyse it
  nqkit simplify 'nq-dev-*.jsonl.gz' -o simplified-dev.jsonl.gz        the simplified format
  nqkit --help                                                          every command
  docs/ in the repository                                               guides per task"""


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from nqkit.baselines import get_baseline
    from nqkit.data.toy import TOY_PATH
    from nqkit.formats.nq import read_nq_original
    from nqkit.formats.nq_gold import read_nq_gold
    from nqkit.formats.nq_predictions import NqPrediction, write_nq_predictions
    from nqkit.io import atomic_output, check_output
    from nqkit.metrics.nq import evaluate_nq
    from nqkit.report import emit_result
    from nqkit.tasks.nq import nq_result

    if args.out:
        check_output(args.out, kind="dir", option="-o")
    examples = list(read_nq_original(TOY_PATH))
    n_long = sum(sum(a.has_long for a in ex.annotations) >= 2 for ex in examples)
    print(f"Toy Natural Questions: {len(examples)} examples, 5 annotations each, "
          f"{n_long} with a gold long answer (>=2 of 5 annotators).")
    for ex in examples[:3]:
        print(f"  - {ex.question_text!r} ({ex.document_title}, "
              f"{len(ex.long_answer_candidates)} candidates)")
    print("  ...")
    baseline = get_baseline("first_paragraph")
    preds: dict[int | str, NqPrediction] = {ex.example_id: baseline.predict(ex)
                                            for ex in examples}
    print(f"\nBaseline: {baseline.name} (answer with the page's first paragraph, paper §6.1)\n")
    gold = read_nq_gold(TOY_PATH, workers=1)
    result = evaluate_nq(gold, preds)
    emit_result(nq_result(result, gold))
    if args.out:
        out = Path(args.out)
        with atomic_output(out / "toy-nq-dev.jsonl", "wb") as f:
            f.write(TOY_PATH.read_bytes())
        write_nq_predictions(out / "first_paragraph.predictions.json", preds.values())
        print(f"\nWrote {out}/toy-nq-dev.jsonl and {out}/first_paragraph.predictions.json; "
              f"try:\n  nqkit eval nq --gold {out}/toy-nq-dev.jsonl "
              f"--predictions {out}/first_paragraph.predictions.json --breakdown")
    print("\n" + NEXT_STEPS)
    return 0


ORDER = 10  # where `nqkit --help` lists it
COMMANDS = (Command(
    "demo", "run a baseline on the built-in toy NQ data and score it",
    "Run the first-paragraph baseline on nqkit's toy NQ examples and score it with the "
    "official NQ metrics.",
    run, params=(
        output_param("also write the toy gold and the predictions here, to try the CLI on",
                     metavar="DIR", required=False, dest="out", deprecated=("--out",)),
    )),)
