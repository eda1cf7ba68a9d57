"""The one registry of baseline systems, by name, for ``nqkit baseline NAME``.

A :class:`System` declares its task, its settings (:class:`~nqkit.settings.Param`) and a
``run(settings)`` that writes the predictions to ``settings["output"]`` and returns the
scores as a :class:`~nqkit.tasks.base.Result` (``None`` when nothing is scored). An NQ
baseline is a class with ``fit``/``predict(example)`` registered with
:func:`nq_baseline`, which makes it a system with the shared NQ settings that
``nqkit predict NAME`` runs too; the NQ-open and AmbigQA baselines register themselves in
:mod:`nqkit.baselines.open_systems`. Every module of :mod:`nqkit.baselines` is imported
on first use (:func:`nqkit.registry.discover`), so adding a system is one module with
one ``SYSTEMS.add(...)`` (see docs/contributing.md).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, TypeVar

from nqkit.registry import Registry, discover
from nqkit.settings import Param

__all__ = ["FORMAT", "OUTPUT", "SYSTEMS", "System", "get_system", "nq_baseline", "nq_params",
           "system_names"]


@dataclass(frozen=True)
class System:
    """A baseline the CLI can run: its task, declared settings and how to run it."""

    name: str
    task: str  # the task whose predictions it writes: "nq", "nq-open", "ambigqa"
    help: str
    params: tuple[Param, ...]
    run: Callable[[dict[str, Any]], Any]  # settings -> Result | None
    description: str = ""
    inputs: tuple[str, ...] = ()  # settings that name input files (never overwritten)
    # NQ baselines: the class (or factory) with fit/predict(example) that `nqkit predict`
    # and nqkit.baselines.get_baseline build; None for systems that only run whole files
    predictor: Callable[..., Any] | None = None


SYSTEMS: Registry[System] = Registry("baseline")
T = TypeVar("T", bound=Callable[..., Any])

OUTPUT = Param("output", "--output", "where to write the predictions", required=True,
               metavar="FILE", short="-o", output=True)
FORMAT = Param("format", "--format", "table (default) or json", default="table",
               choices=("table", "json"))


@cache
def nq_params() -> tuple[Param, ...]:
    """The settings every NQ baseline takes (built on first use: they need the NQ task)."""
    from nqkit.tasks.nq import THRESHOLDS

    return (
        Param("input", "--input", "examples to predict (original or simplified NQ, with or "
              "without annotations; globs of shards)", required=True, nargs="+",
              metavar="GLOB", deprecated=("--gold-or-input",)),
        Param("train", "--train", "training files (original or simplified), for baselines "
              "that learn", nargs="+", metavar="GLOB"),
        OUTPUT,
        Param("eval", "--eval", "then score the predictions against the input's annotations "
              "(as `nqkit eval nq` does)", action="store_true", default=False),
        *THRESHOLDS, FORMAT,
    )


def run_nq_baseline(name: str, s: dict[str, Any]) -> Any:
    """Fit (when it learns) and run NQ baseline ``name``; score it with ``--eval``."""
    from nqkit.baselines.run import run_system
    from nqkit.io import staged_path

    gold = None
    if s["eval"]:
        from nqkit.tasks.nq import load_gold_for_eval

        # Refuse a gold the scores cannot mean anything on before predicting anything.
        gold = load_gold_for_eval(s["input"], long_threshold=s["long_threshold"],
                                  short_threshold=s["short_threshold"], cache=False)
    baseline, summary = run_system(name, s["train"], s["input"], s["output"])
    trained = f", trained on {summary.num_train:,} examples" if baseline.needs_train else ""
    print(f"{summary.system}: {summary.num_examples:,} predictions "
          f"({summary.num_answered:,} with a long answer{trained}) written to {s['output']}",
          file=sys.stderr)
    if not s["eval"]:
        return None
    from nqkit.tasks.nq import evaluate_files, nq_result

    r, _ = evaluate_files(s["input"], str(staged_path(s["output"])), cache=False,
                          long_threshold=s["long_threshold"],
                          short_threshold=s["short_threshold"], gold_examples=gold)
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
                                 inputs=("input", "train"), predictor=cls))
        return cls

    return deco


_loaded = False


def load_systems() -> None:
    """Import every module of :mod:`nqkit.baselines` once: the systems register themselves."""
    global _loaded
    if not _loaded:
        discover("nqkit.baselines")
        _loaded = True


def get_system(name: str) -> System:
    load_systems()
    return SYSTEMS.get(name)


def system_names() -> list[str]:
    load_systems()
    return list(SYSTEMS)
