"""Every runnable baseline system, by name, for ``nqkit baseline NAME``.

A :class:`System` declares its task, its settings (:class:`~nqkit.settings.Param`) and a
``run(settings)`` that writes the predictions to ``settings["output"]`` and returns the
scores as a :class:`~nqkit.tasks.base.Result` (``None`` when nothing is scored). The NQ
baselines of :data:`nqkit.baselines.BASELINES` become systems with the shared NQ settings;
the NQ-open and AmbigQA baselines register themselves in
:mod:`nqkit.baselines.open_systems`. Adding a system is one module and one
``SYSTEMS.add(...)`` (see docs/contributing.md).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from nqkit.registry import Registry
from nqkit.settings import Param

__all__ = ["NQ_PARAMS", "OUTPUT", "SYSTEMS", "System", "get_system", "system_names"]


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


SYSTEMS: Registry[System] = Registry("baseline")

OUTPUT = Param("output", "--output", "where to write the predictions", required=True,
               metavar="FILE", short="-o", output=True)
FORMAT = Param("format", "--format", "table (default) or json", default="table",
               choices=("table", "json"))


def _nq_params() -> tuple[Param, ...]:
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


NQ_PARAMS: tuple[Param, ...] = ()  # filled on first use (the NQ task module is heavy)


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


def _load() -> None:
    global NQ_PARAMS
    if NQ_PARAMS:
        return
    from nqkit.baselines import BASELINES, baseline_names

    NQ_PARAMS = _nq_params()
    for name in baseline_names():
        doc = " ".join((BASELINES.get(name).__doc__ or name).strip().split("\n\n")[0]
                       .split())
        SYSTEMS.add(name, System(name, "nq", f"NQ: {doc}", NQ_PARAMS, partial(run_nq_baseline,
                                                                              name),
                                 description=f"{doc} Writes official NQ predictions.",
                                 inputs=("input", "train")))
    import nqkit.baselines.open_systems  # noqa: F401  (registers the open-domain systems)


def get_system(name: str) -> System:
    _load()
    return SYSTEMS.get(name)


def system_names() -> list[str]:
    _load()
    return list(SYSTEMS)
