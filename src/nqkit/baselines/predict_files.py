"""Running a baseline over files: fit on training shards, predict input shards, write the
official predictions file. Shared by ``nqkit baseline`` and ``nqkit predict``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from nqkit.baselines import NqBaseline, get_baseline
from nqkit.errors import InputError
from nqkit.formats.nq import read_nq
from nqkit.formats.nq_predictions import write_nq_predictions
from nqkit.io import PathsLike, ensure_not_input, expand_paths
from nqkit.report import note, progress

T = TypeVar("T")


@dataclass(frozen=True)
class PredictSummary:
    """What a run wrote."""

    system: str
    output: str
    num_examples: int  # predictions written (one per input example)
    num_answered: int  # of which with a non-null long answer
    num_train: int  # training examples seen (0 when the system needs none)


def _counted(items: Iterable[T], counter: list[int]) -> Iterator[T]:
    for item in items:
        counter[0] += 1
        yield item


def load_system(name: str, train: PathsLike | None, *, quiet: bool = False
                ) -> tuple[NqBaseline, int]:
    """Build baseline ``name`` and fit it on ``train`` when it needs training data."""
    baseline = get_baseline(name)
    n_train = 0
    if baseline.needs_train:
        if not train:
            raise InputError(None, f"the {name} baseline learns from training data, but no "
                             "training files were given",
                             "pass --train 'simplified-nq-train*.jsonl*' (original or simplified)")
        counted = [0]
        files = expand_paths(train, what="training")
        baseline.fit(_counted(progress(read_nq(files), desc=f"{name}: reading train",
                                       unit="ex"), counted))
        n_train = counted[0]
    elif train and not quiet:
        note(f"{name} needs no training data; --train is ignored")
    return baseline, n_train


def predict_files(baseline: NqBaseline, inputs: PathsLike, output: str, *,
                  train_files: Sequence[str] = (), num_train: int = 0) -> PredictSummary:
    """Predict every example of ``inputs`` (with or without annotations) and write
    ``output`` atomically in the official format."""
    files = expand_paths(inputs, what="input")
    ensure_not_input(output, [*files, *train_files])
    # read_nq refuses an example id given twice (one prediction per example), naming
    # both lines
    preds = [baseline.predict(ex) for ex in progress(
        read_nq(files), desc=f"{baseline.name}: predicting", unit="ex")]
    write_nq_predictions(output, preds)
    answered = sum(not p.long_answer.is_null for p in preds)
    return PredictSummary(baseline.name, output, len(preds), answered, num_train)


def run_system(name: str, train: Sequence[str] | None, inputs: PathsLike, output: str
               ) -> tuple[NqBaseline, PredictSummary]:
    """Build system ``name``, fit it on ``train`` if it learns, predict ``inputs`` into
    ``output``: what ``nqkit baseline`` and ``nqkit predict`` both do."""
    train_files = [str(p) for p in expand_paths(train, what="training")] if train else []
    baseline, n_train = load_system(name, train_files)
    summary = predict_files(baseline, inputs, output, train_files=train_files,
                            num_train=n_train)
    return baseline, summary


# the command line `nqkit predict` takes (and names in its messages)
PREDICT_USE = "NAME --gold INPUT_PATTERN -o OUTPUT.json"


def predict(name: str | None, gold: PathsLike | None, output: str | None, *,
            train: Sequence[str] | None = None, legacy: Sequence[str] = (),
            system: str | None = None) -> PredictSummary:
    """``nqkit predict NAME --gold INPUT -o OUTPUT``: the competition's contract, examples
    in, one predictions file out. ``legacy`` (positional INPUT OUTPUT) and ``system``
    (``--system NAME INPUT OUTPUT``) are the earlier forms, each with one notice."""
    from nqkit.io import check_output
    from nqkit.report import say

    positionals = list(legacy)
    if system is not None:  # the oldest form: --system NAME INPUT OUTPUT
        name, positionals = system, [p for p in (name, *positionals) if p]
    if positionals and (gold is not None or output is not None):
        raise InputError(None, "give the input and output either as --gold/-o or as "
                         "positional arguments, not both", f"nqkit predict {PREDICT_USE}")
    if len(positionals) > 2:
        raise InputError(None, f"unexpected argument(s) {' '.join(positionals[2:])}",
                         f"nqkit predict {PREDICT_USE}")
    inputs, out = (gold, output) if not positionals else (
        positionals[0], positionals[1] if len(positionals) == 2 else None)
    if name is None or inputs is None or out is None:
        raise InputError(None, f"expected {PREDICT_USE}",
                         "nqkit predict first_paragraph --gold 'nq-test-*.jsonl.gz' "
                         "-o preds.json")
    # the old forms: one notice, once the command line is known to be complete
    if system is not None:
        note(f"--system is deprecated and will be removed in the next release; use "
             f"{PREDICT_USE}")
    elif positionals:
        note("positional INPUT_PATTERN OUTPUT.json are deprecated and will be removed in "
             f"the next release; use {PREDICT_USE}")
    files = expand_paths(inputs, what="input")
    train_files = expand_paths(train, what="training") if train else []
    check_output(out, [*files, *train_files], option="-o" if not positionals else "OUTPUT")
    _, summary = run_system(name, train, inputs, out)
    say(f"{summary.system}: {summary.num_examples:,} predictions written to {out}")
    return summary
