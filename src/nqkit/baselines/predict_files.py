"""The NQ baselines as systems, and running one over files: fit on training shards,
predict input shards, write the official predictions file. Shared by ``nqkit baseline``
and ``nqkit predict``.

An NQ baseline is a class with ``fit``/``predict(example)`` (:class:`NqBaseline`)
registered with :func:`nq_baseline`: that makes it a system of
:data:`nqkit.baselines.systems.SYSTEMS` with the shared NQ settings (:func:`nq_params`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, Protocol, TypeVar

from nqkit.baselines.systems import (
    FORMAT,
    OUTPUT,
    SYSTEMS,
    System,
    SystemSettings,
    load_systems,
)
from nqkit.errors import InputError
from nqkit.formats.nq import NqExample, SimplifiedNqExample, read_nq
from nqkit.formats.nq_predictions import NqPrediction, write_nq_predictions
from nqkit.io import PathsLike, ensure_not_input, expand_paths
from nqkit.report import note, progress
from nqkit.settings import Param
from nqkit.vocabulary import EVAL, GOLD, TRAIN

T = TypeVar("T")
AnyNqExample = NqExample | SimplifiedNqExample
_F = TypeVar("_F", bound=Callable[..., Any])


class NqBaseline(Protocol):
    """What every NQ baseline offers."""

    name: str
    needs_train: bool  # True when fit() must see training data

    def fit(self, train: Iterable[AnyNqExample]) -> None: ...

    def predict(self, example: AnyNqExample) -> NqPrediction: ...


class _NqBaselines:
    """The NQ baselines among :data:`nqkit.baselines.systems.SYSTEMS` (the one registry),
    as the name -> class mapping that earlier versions kept apart: ``BASELINES.get(name)``
    and the ``@BASELINES.register(name)`` decorator (now
    :func:`nq_baseline`) keep working for one release."""

    def register(self, name: str) -> Callable[[_F], _F]:
        return nq_baseline(name)

    def get(self, name: str) -> Callable[..., NqBaseline]:
        system = SYSTEMS.get(name) if name in SYSTEMS else None
        if system is None or system.predictor is None:
            known = ", ".join(self.names()) or "none"
            raise InputError(None, f"unknown baseline {name!r}", f"choose one of: {known}")
        factory: Callable[..., NqBaseline] = system.predictor
        return factory

    def names(self) -> list[str]:
        return [n for n in SYSTEMS if SYSTEMS.get(n).predictor is not None]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


BASELINES = _NqBaselines()


def get_baseline(name: str, **options: object) -> NqBaseline:
    """Instantiate a registered NQ baseline by name."""
    load_systems()
    baseline: NqBaseline = BASELINES.get(name)(**options)
    return baseline


def baseline_names() -> list[str]:
    """Names of every registered NQ baseline (the systems ``nqkit predict`` can run)."""
    load_systems()
    return BASELINES.names()


@cache
def nq_params() -> tuple[Param, ...]:
    """The settings every NQ baseline takes (built on first use: they need the NQ task)."""
    from nqkit.tasks.nq import THRESHOLDS

    return (
        GOLD.but(help="examples to predict (original or simplified NQ, with or without "
                 "annotations; globs of shards): their annotations are the gold of --eval",
                 metavar="GLOB", deprecated=("--input", "--gold-or-input")),
        TRAIN.but(help="training files (original or simplified), for baselines that learn",
                  metavar="GLOB"),
        OUTPUT,
        EVAL.but(help="then score the predictions against the input's annotations (as "
                 "`nqkit eval nq` does)"),
        *THRESHOLDS, FORMAT,
    )


@dataclass(frozen=True, kw_only=True)
class NqBaselineSettings(SystemSettings):
    """The settings of every NQ baseline (:func:`nq_params`)."""

    gold: list[str]  # examples to predict: paths or globs of shards
    train: list[str] | None  # training files, for baselines that learn
    eval: bool  # then score the predictions against the input's annotations
    long_threshold: int  # as in `nqkit eval nq`
    short_threshold: int


def run_nq_baseline(name: str, s: NqBaselineSettings) -> Any:
    """Fit (when it learns) and run NQ baseline ``name``; score it with ``--eval``."""
    from nqkit.io import staged_path

    gold = None
    if s.eval:
        from nqkit.tasks.nq import load_gold_for_eval

        # Refuse a gold the scores cannot mean anything on before predicting anything.
        gold = load_gold_for_eval(s.gold, long_threshold=s.long_threshold,
                                  short_threshold=s.short_threshold, cache=False)
    baseline, summary = run_system(name, s.train, s.gold, s.output)
    trained = f", trained on {summary.num_train:,} examples" if baseline.needs_train else ""
    from nqkit.report import say

    say(f"{summary.system}: {summary.num_examples:,} predictions "
        f"({summary.num_answered:,} with a long answer{trained}) written to {s.output}")
    if not s.eval:
        return None
    from nqkit.tasks.nq import evaluate_files, nq_result

    r, _ = evaluate_files(s.gold, str(staged_path(s.output)), cache=False,
                          long_threshold=s.long_threshold,
                          short_threshold=s.short_threshold, gold_examples=gold)
    return nq_result(r)


def nq_baseline(name: str) -> Callable[[_F], _F]:
    """Register an NQ baseline class (``fit``, ``predict(example)``, see
    :class:`nqkit.baselines.NqBaseline`) as system ``name``: its help is the first
    paragraph of its docstring, its settings :func:`nq_params`."""

    def deco(cls: _F) -> _F:
        doc = " ".join((cls.__doc__ or name).strip().split("\n\n")[0].split())
        SYSTEMS.add(name, System(name, "nq", f"NQ: {doc}", nq_params(),
                                 partial(run_nq_baseline, name),
                                 description=f"{doc} Writes official NQ predictions.",
                                 inputs=("gold", "train"), predictor=cls,
                                 settings_type=NqBaselineSettings))
        return cls

    return deco





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
