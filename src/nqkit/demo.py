"""``nqkit demo``: the whole loop on the project's own toy data, in a second."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nqkit.formats.nq import NqExample

NEXT_STEPS = """\
Where to go next:
  nqkit eval nq --gold 'nq-dev-*.jsonl.gz' --predictions preds.json   score your system
  nqkit eval nq ... --breakdown --resamples 1000 --pr-curve pr.png      analyse it
  nqkit compare nq --gold 'nq-dev-*.jsonl.gz' A.json B.json            is B better than A?
  nqkit simplify 'nq-dev-*.jsonl.gz' -o simplified-dev.jsonl.gz        the simplified format
  nqkit --help                                                          every command
  docs/ in the repository                                               guides per task"""

# the two baselines of the NQ paper's §6.1 the demo runs
BASELINES = ("first_paragraph", "closest_question")

# Long-answer F1 on NQ dev (7,830 examples) in the NQ paper's Table 3 (Kwiatkowski et al.
# 2019), quoted when the toy data orders a baseline above the single annotator; the same
# figures as docs/baselines.md and docs/human-bounds.md (a test checks they agree)
PAPER_LONG_F1 = {"first_paragraph": 27.8, "closest_question": 32.4, "single annotator": 73.4}
PAPER_NAMES = {"first_paragraph": "first paragraph", "closest_question": "closest question"}


def run_demo(output: str | None = None) -> None:
    """``nqkit demo``: two baselines of the NQ paper on nqkit's toy NQ data, scored with the
    official NQ metrics, beside a single human annotator; with ``output``, the toy gold
    and the predictions are written there to try the CLI on."""
    from nqkit.baselines.predict_files import load_system
    from nqkit.data.toy import TOY_PATH, TOY_TRAIN_PATH
    from nqkit.formats.nq import read_nq_original
    from nqkit.formats.nq_gold import read_nq_gold
    from nqkit.formats.nq_predictions import NqPrediction, write_nq_predictions
    from nqkit.io import atomic_output, check_output
    from nqkit.metrics.human import human_bounds
    from nqkit.metrics.nq import evaluate_nq
    from nqkit.report import format_table

    if output:
        check_output(output, kind="dir", option="-o")
    examples = list(read_nq_original(TOY_PATH))
    n_long = sum(sum(a.has_long for a in ex.annotations) >= 2 for ex in examples)
    print(f"Toy Natural Questions: {len(examples)} examples, 5 annotations each, "
          f"{n_long} with a gold long answer (>=2 of 5 annotators).")
    for ex in examples[:3]:
        print(f"  - {ex.question_text!r} ({ex.document_title}, "
              f"{len(ex.long_answer_candidates)} candidates)")
    print("  ...")
    gold = read_nq_gold(TOY_PATH, workers=1)
    rows, signatures = [], []
    predictions: dict[str, dict[int | str, NqPrediction]] = {}
    n_train = 0
    shorts: dict[str, float] = {}  # short-answer F1, said in words below
    for name in BASELINES:
        baseline, n = load_system(name, [str(TOY_TRAIN_PATH)], quiet=True)
        n_train = max(n_train, n)
        preds: dict[int | str, NqPrediction] = {ex.example_id: baseline.predict(ex)
                                                for ex in examples}
        result = evaluate_nq(gold, preds)
        predictions[name] = preds
        shorts[name] = result.short.best_f1
        rows.append((name, result.long.best_f1, result.long.best_precision,
                     result.long.best_recall))
        signatures.append(result.signature)
    print("\nNatural Questions, official metrics: two baselines of the paper (§6.1), long "
          "answers")
    print(format_table(("system", "F1", "precision", "recall"), rows))
    for sig in dict.fromkeys(signatures):
        print(f"signature: {sig}")
    short = ("Neither gives short\nanswers (their short-answer F1 is 0)." if not any(
        shorts.values()) else "Short-answer F1:\n" + ", ".join(
        f"{name} {f1:.4f}" for name, f1 in shorts.items()) + ".")
    print(f"first_paragraph answers with the page's first paragraph; closest_question with "
          f"the answer\nof the most similar of {n_train} toy training questions on the same "
          f"page. {short}")
    # what a person scores: each annotator against the other four, in turn (§5.2)
    hb = human_bounds([(i, g.annotations) for i, g in gold.items()], references=4,
                      splits="all")
    print(f"\nA single human annotator against the other four, each left out in turn "
          f"(paper §5.2; {hb.num_splits} splits)")
    print(format_table(("task", "F1", "precision", "recall"),
                       [(task, p.f1, p.precision, p.recall)
                        for task, p in (("long answer", hb.single_long),
                                        ("short answer", hb.single_short))]))
    print(f"signature: {hb.signature}")
    above = [name for name, row in zip(BASELINES, rows, strict=True)
             if row[1] >= hb.single_long.f1]
    if above:
        print("\n" + toy_caveat(above, examples, gold, TOY_TRAIN_PATH))
    if output:
        out = Path(output)
        with atomic_output(out / "toy-nq-dev.jsonl", "wb") as f:
            f.write(TOY_PATH.read_bytes())
        written = []
        for name, preds in predictions.items():
            write_nq_predictions(out / f"{name}.predictions.json", preds.values())
            written.append(f"{out}/{name}.predictions.json")
        a, b = written
        print(f"\nWrote {out}/toy-nq-dev.jsonl, {a} and {b}; try:\n"
              f"  nqkit eval nq --gold {out}/toy-nq-dev.jsonl --predictions {b} --breakdown\n"
              f"  nqkit compare nq --gold {out}/toy-nq-dev.jsonl {a} {b}")
    print("\n" + NEXT_STEPS)


def toy_caveat(above: list[str], examples: list[NqExample], gold: Mapping[int | str, Any],
               train_path: Path) -> str:
    """Why ``above`` (baselines) beat the single annotator on the toy data, in numbers of
    the toy data itself, beside the paper's dev figures (Table 3) that order them the
    other way."""
    import textwrap

    from nqkit.baselines.pages import page_keys
    from nqkit.formats.nq import read_nq
    from nqkit.metrics.nq import gold_has_long

    train_pages = {k for ex in read_nq(train_path) for k in page_keys(ex)}
    sizes = sorted(len(ex.long_answer_candidates) for ex in examples)
    answered = [ex for ex in examples if gold_has_long(gold[ex.example_id].annotations)]
    seen = sum(any(k in train_pages for k in page_keys(ex)) for ex in answered)
    paper = ", ".join(f"{PAPER_NAMES[n]} {PAPER_LONG_F1[n]}" for n in above)
    text = (f"Why {' and '.join(above)} beat{'s' if len(above) == 1 else ''} the annotator "
            f"here: the toy data is {len(examples)} hand-written questions on "
            f"{len({ex.document_title for ex in examples})} tiny pages ({sizes[0]} to "
            f"{sizes[-1]} candidates), and {'all' if seen == len(answered) else seen} "
            f"{len(answered) if seen == len(answered) else f'of the {len(answered)}'} with "
            f"a gold answer have training questions on their page. On NQ dev (7,830 "
            f"examples) the paper's Table 3 has it the other way: {paper}, a single "
            f"annotator {PAPER_LONG_F1['single annotator']} long-answer F1.")
    return textwrap.fill(text, width=90)
