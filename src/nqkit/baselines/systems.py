"""The one registry of baseline systems, by name, for ``nqkit baseline NAME``.

A :class:`System` declares its task, its settings (:class:`~nqkit.settings.Param`), the
frozen record they arrive in (a subclass of :class:`SystemSettings`) and a
``run(settings)`` that writes the predictions to ``settings.output`` and returns the
scores as a :class:`~nqkit.tasks.base.Result` (``None`` when nothing is scored). An NQ
baseline is a class with ``fit``/``predict(example)`` registered with
:func:`nq_baseline`, which makes it a system with the shared NQ settings that
``nqkit predict NAME`` runs too; the NQ-open and AmbigQA baselines register themselves in
:mod:`nqkit.baselines.open_systems`. Every module of :mod:`nqkit.baselines` is imported
on first use (:func:`nqkit.registry.discover`), so adding a system is one module with
one ``SYSTEMS.add(...)`` (see docs/contributing.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, Generic, TypeVar

from nqkit.registry import Registry, discover
from nqkit.settings import Param, check_record, format_param, output_param, settings_values
from nqkit.vocabulary import EVAL, GOLD, TRAIN

__all__ = ["FORMAT", "OUTPUT", "SYSTEMS", "NqBaselineSettings", "System", "SystemSettings",
           "get_system", "nq_baseline", "nq_params", "system_names"]


@dataclass(frozen=True, kw_only=True)
class SystemSettings:
    """The settings every system has (:data:`OUTPUT`, :data:`FORMAT`); a system's record
    adds its own as typed fields. Defaults stay in the :class:`Param` declarations."""

    output: str  # where to write the predictions
    format: str  # how the scores are printed: table or json


S = TypeVar("S", bound=SystemSettings)


@dataclass(frozen=True)
class System(Generic[S]):
    """A baseline the CLI can run: its task, declared settings and how to run it."""

    name: str
    task: str  # the task whose predictions it writes: "nq", "nq-open", "ambigqa"
    help: str
    params: tuple[Param, ...]
    run: Callable[[S], Any]  # settings -> Result | None
    description: str = ""
    inputs: tuple[str, ...] = ()  # settings that name input files (never overwritten)
    # NQ baselines: the class (or factory) with fit/predict(example) that `nqkit predict`
    # and nqkit.baselines.get_baseline build; None for systems that only run whole files
    predictor: Callable[..., Any] | None = None
    # the record run() takes, its fields the declared settings; None: the earlier form,
    # run() takes a dict (kept for one release for systems declared outside nqkit)
    settings_type: type[S] | None = None

    def __post_init__(self) -> None:
        if self.settings_type is not None:
            check_record("system", self.name, self.settings_type, self.params)

    def settings(self, **given: Any) -> S:
        """The record of the system's settings: the given ones over the declared defaults.
        A name the system does not declare is a ``TypeError`` that lists the known ones;
        a missing required setting is an :class:`~nqkit.errors.InputError`."""
        out = settings_values("system", self.name, self.params, given,
                              lambda p: f"see `nqkit baseline {self.name} --help`")
        if self.settings_type is None:
            return out  # type: ignore[return-value]  # the earlier form: a dict
        return self.settings_type(**out)


SYSTEMS: Registry[System[Any]] = Registry("baseline")
T = TypeVar("T", bound=Callable[..., Any])

OUTPUT = output_param("where to write the predictions")
FORMAT = format_param("table", "json")


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
    from nqkit.baselines.predict_files import run_system
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


def nq_baseline(name: str) -> Callable[[T], T]:
    """Register an NQ baseline class (``fit``, ``predict(example)``, see
    :class:`nqkit.baselines.NqBaseline`) as system ``name``: its help is the first
    paragraph of its docstring, its settings :func:`nq_params`."""

    def deco(cls: T) -> T:
        doc = " ".join((cls.__doc__ or name).strip().split("\n\n")[0].split())
        SYSTEMS.add(name, System(name, "nq", f"NQ: {doc}", nq_params(),
                                 partial(run_nq_baseline, name),
                                 description=f"{doc} Writes official NQ predictions.",
                                 inputs=("gold", "train"), predictor=cls,
                                 settings_type=NqBaselineSettings))
        return cls

    return deco


_loaded = False


def load_systems() -> None:
    """Import every module of :mod:`nqkit.baselines` once: the systems register themselves."""
    global _loaded
    if not _loaded:
        discover("nqkit.baselines")
        _loaded = True


def get_system(name: str) -> System[Any]:
    load_systems()
    return SYSTEMS.get(name)


def system_names() -> list[str]:
    load_systems()
    return list(SYSTEMS)
