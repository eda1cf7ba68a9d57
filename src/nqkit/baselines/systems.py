"""The one registry of baseline systems, by name, for ``nqkit baseline NAME``.

A :class:`System` declares its task, its settings (:class:`~nqkit.settings.Param`), the
frozen record they arrive in (a subclass of :class:`SystemSettings`) and a
``run(settings)`` that writes the predictions to ``settings.output`` and returns the
scores as a :class:`~nqkit.tasks.base.Result` (``None`` when nothing is scored). An NQ
baseline is a class with ``fit``/``predict(example)`` registered with
:func:`nqkit.baselines.predict_files.nq_baseline`, which makes it a system with the
shared NQ settings that ``nqkit predict NAME`` runs too; the NQ-open and AmbigQA
baselines register themselves in
:mod:`nqkit.baselines.open_systems`. Every module of :mod:`nqkit.baselines` is imported
on first use (:func:`nqkit.registry.discover`), so adding a system is one module with
one ``SYSTEMS.add(...)`` (see docs/contributing.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from nqkit.registry import Registry, discover
from nqkit.settings import Param, check_record, format_param, output_param, settings_values

__all__ = ["FORMAT", "OUTPUT", "SYSTEMS", "System", "SystemSettings", "get_system",
           "run_command", "system_names"]


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


def run_command(system_name: str, given: Mapping[str, Any]) -> None:
    """``nqkit baseline NAME``: system ``system_name`` run with a command's parsed
    arguments (``given``), never over one of its inputs; its scores printed, if any."""
    from nqkit.io import check_output, expand_paths
    from nqkit.report import emit_result

    system = get_system(system_name)
    # an old spelling may stand in for a required option: checked here, not by argparse
    settings = system.settings(**{p.name: given[p.name] for p in system.params})
    values = settings if isinstance(settings, dict) else vars(settings)  # dict: earlier form
    inputs = [v for name in system.inputs
              for v in ([values[name]] if isinstance(values[name], str) else
                        values[name] or [])]
    # several options' files at once: one file may serve two of them (memory and questions)
    check_output(values["output"], expand_paths(inputs, what="input", unique=False),
                 option="-o")
    result = system.run(settings)
    if result is not None:
        emit_result(result, format=values.get("format") or "table")
