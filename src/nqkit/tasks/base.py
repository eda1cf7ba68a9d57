"""The task contract: what every evaluation declares, and the one result shape it returns.

A :class:`Task` declares how it reads gold and predictions, its settings as
:class:`Param` records (flag, type, default, help, signature key), the frozen record
they reach ``score()`` in (a subclass of :class:`Settings`, so mypy checks every use),
and ``score()``, which returns a :class:`Result`. The rest is built from those
declarations, once, for every task: the ``nqkit eval TASK`` and ``nqkit compare TASK``
command lines, the signature (sacrebleu's idea: every setting that changes a number, the
version last), bootstrap intervals of the headline metrics and paired significance tests
(:mod:`nqkit.stats`). Library callers go through the same path:
``get_task("nq-open").run(gold=[...], predictions=..., resamples=1000).to_table()``.

Tasks register themselves in :data:`TASKS` when their module is imported; every module of
:mod:`nqkit.tasks` is imported on first use (:func:`nqkit.registry.discover`), so adding a
task is adding a module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from nqkit.registry import Registry, discover
from nqkit.settings import Param, check_record, format_param, settings_values
from nqkit.signature import ResultWarning
from nqkit.vocabulary import (
    ALLOW_EXTRA,
    ALLOW_MISSING,
    GOLD,
    MAX_RESAMPLES,
    PER_ITEM,
    PREDICTIONS,
    RESAMPLES,
    SEED,
)

if TYPE_CHECKING:  # numpy stays out of start-up
    from nqkit.io import PathLike, PathsLike
    from nqkit.stats import Interval, ItemStats
    from nqkit.tasks.groups import GroupedScores

# The most bootstrap resamples `--resamples` accepts (its earlier name; the bound is
# declared in nqkit.vocabulary)
MAX_BOOTSTRAP = MAX_RESAMPLES

__all__ = [
    "COMMON",
    "TASKS",
    "Coverage",
    "Param",
    "Result",
    "Settings",
    "Task",
    "check_outputs",
    "get_task",
    "run_command",
    "task_names",
    "task_settings",
]


# Settings that every evaluation task has, in nqkit's one vocabulary (nqkit.vocabulary)
FORMAT = format_param("table", "json", "jsonl", help="table (default), json, or jsonl (one "
                      "line per item on stdout; the summary goes to stderr)")
COMMON: tuple[Param, ...] = (GOLD, PREDICTIONS, ALLOW_MISSING, ALLOW_EXTRA, FORMAT, PER_ITEM,
                             RESAMPLES, SEED)


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The settings of one evaluation, as ``score()`` receives them: the common ones of
    :data:`COMMON`, shared by every task (a task that does not declare one gets its
    default). A task's record adds its own settings as typed fields; the defaults, flags
    and help stay in the task's :class:`Param` declarations, so a record has no defaults
    and :meth:`Task.settings` builds it."""

    gold: PathsLike | None  # gold file(s): paths, globs or registry names
    predictions: PathLike | None  # the predictions file
    allow_missing: bool  # gold items without a prediction count as wrong (else an error)
    allow_extra: bool  # predictions for items not in the gold are ignored (else an error)
    format: str  # how the CLI prints the result: table, json or jsonl
    per_item: PathLike | None  # where the CLI writes one JSON line per gold item
    resamples: int  # bootstrap resamples of the headline metrics' intervals (0: none)
    seed: int  # seed of the resampling

    @property
    def bootstrap(self) -> int:
        """The earlier name of :attr:`resamples` (kept for one release)."""
        return self.resamples

    def inputs(self) -> tuple[PathsLike, str]:
        """The gold and the predictions file, for a task that requires both (given: the
        task's declarations require them)."""
        import os

        if self.gold is None or self.predictions is None:
            from nqkit.errors import InputError

            raise InputError(None, "--gold and --predictions are required",
                             "give the gold file(s) and a predictions file")
        return self.gold, os.fspath(self.predictions)


S = TypeVar("S", bound=Settings)


@dataclass(frozen=True, slots=True)
class Coverage:
    """How many gold items had a prediction."""

    predicted: int
    total: int

    def __str__(self) -> str:
        return f"{self.predicted:,}/{self.total:,} predicted"


@dataclass
class Result:
    """One evaluation's numbers, in the shape every task returns.

    ``rows`` under ``headers`` are the summary table; ``official`` is the JSON object
    (with the official scripts' key names where there are any); ``items`` are the
    per-item records; ``headline`` maps each headline metric to its per-item statistics
    for intervals and paired tests; ``warnings`` are printed first and stored in JSON.
    ``items`` and ``headline`` may be given as functions that build them, so a plain
    evaluation does not pay for per-item records it does not print
    (:meth:`item_list`, :meth:`headline_stats`).
    """

    task: str
    title: str
    headers: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    signature: str
    official: dict[str, Any]
    items: list[dict[str, Any]] | Callable[[], list[dict[str, Any]]] = field(
        default_factory=list)
    item_key: str = "id"  # the field of an item record that names the gold item
    coverage: Coverage | None = None
    headline: dict[str, ItemStats] | Callable[[], dict[str, ItemStats]] = field(
        default_factory=dict)
    warnings: list[ResultWarning] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # lines printed under the table
    intervals: dict[str, Interval] = field(default_factory=dict)
    digits: int = 4
    show_coverage: bool = True  # in the title of the table
    # What each item was scored against when the predictions carry their gold themselves
    # (retrieval results read without --gold: the answers inside them), in the order of
    # :meth:`item_list`; None when the gold comes from the settings. Comparisons refuse
    # systems whose item gold differ: they were scored on different gold.
    item_gold: list[Any] | None = None

    def item_list(self) -> list[dict[str, Any]]:
        """The per-item records (built on first use)."""
        if callable(self.items):
            self.items = self.items()
        return self.items

    def headline_stats(self) -> dict[str, ItemStats]:
        """Per-item statistics of the headline metrics (built on first use)."""
        if callable(self.headline):
            self.headline = self.headline()
        return self.headline

    def by_groups(self, groups: Mapping[str, Sequence[int]], *,
                  differences: Sequence[tuple[str, str]] = (), resamples: int = 0,
                  seed: int = 0) -> GroupedScores:
        """The headline metrics on named groups of the items (``groups``: group -> item
        positions, in the order of :meth:`item_list`), with the bootstrap of the whole
        set's intervals (``resamples``, ``seed``) and the ``differences`` asked for
        (:func:`nqkit.tasks.groups.score_groups`): overlap groups, breakdowns, the
        questions a human judged."""
        from nqkit.tasks.groups import score_groups

        return score_groups(self.headline_stats(), groups, differences=differences,
                            resamples=resamples, seed=seed)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.warnings:
            out["warnings"] = [w.to_json() for w in self.warnings]
        out.update(self.official)
        if self.coverage is not None and self.coverage.predicted != self.coverage.total:
            out["coverage"] = {"predicted": self.coverage.predicted,
                               "total": self.coverage.total}
        if self.intervals:
            iv0 = next(iter(self.intervals.values()))
            out["bootstrap"] = {"resamples": iv0.resamples, "seed": iv0.seed,
                                "confidence": iv0.confidence,
                                **{k: [iv.low, iv.high] for k, iv in self.intervals.items()}}
        out["signature"] = self.signature
        return out

    def summary_line(self) -> str:
        """The first row and the signature, in one line (stderr of ``--format jsonl``)."""
        from nqkit.report import fmt_value

        first = self.rows[0] if self.rows else ()
        text = " ".join(fmt_value(v, self.digits) for v in first)
        return f"{self.title}: {text}; signature: {self.signature}"

    def to_table(self) -> str:
        from nqkit.report import format_table

        show = self.coverage is not None and self.show_coverage
        title = self.title + (f" ({self.coverage})" if show else "")
        parts = [format_table(self.headers, self.rows, digits=self.digits, title=title)]
        if self.intervals:
            parts.append("")
            parts.append(format_table(
                ("metric", "score", "95% CI"),
                [(k, iv.score, f"{iv.low:.{self.digits}f}-{iv.high:.{self.digits}f}")
                 for k, iv in self.intervals.items()],
                digits=self.digits,
                title=f"bootstrap: {next(iter(self.intervals.values())).resamples:,} "
                f"resamples, seed {next(iter(self.intervals.values())).seed}"))
        parts.extend(self.notes)
        parts.append(f"signature: {self.signature}")
        return "\n".join(parts)


@dataclass(frozen=True)
class Task(Generic[S]):
    """A registered evaluation: its declarations and its scoring function.

    ``score(settings)`` receives a frozen record of type ``settings`` (a subclass of
    :class:`Settings` whose own fields are the task's ``params``), built by
    :meth:`settings` from the declared defaults and the given values, and returns a
    :class:`Result`; :meth:`run` checks the common settings and adds bootstrap intervals,
    for the CLI and for library callers alike.
    """

    name: str
    help: str
    description: str
    score: Callable[[S], Result]
    params: tuple[Param, ...] = ()  # the task's own settings
    common: tuple[str, ...] = ("gold", "predictions", "allow_missing", "allow_extra",
                               "format", "per_item", "resamples", "seed")
    gold_help: str = "gold file(s): paths or globs"
    predictions_help: str = "predictions file"
    allow_missing_help: str = ALLOW_MISSING.help  # how the task scores a missing prediction
    headline: tuple[str, ...] = ()  # metrics that get intervals and paired tests
    # the headline is every metric of the result's headline_stats, in their order (the
    # user chose them, as retrieval's --topk cut-offs), not the fixed names above
    headline_from_result: bool = False
    epilog: str = ""
    gold_required: bool = True
    predictions_required: bool = True
    # the setting an old positional argument of the command stood for (hidden, noticed)
    deprecated_positional: str | None = None
    gold_deprecated: tuple[str, ...] = ("--references",)  # old spellings of --gold
    # the record score() takes; None: the earlier form, score() takes a dict of the
    # settings (kept for one release for tasks declared outside nqkit)
    settings_type: type[S] | None = None
    # what its gold looks like (nqkit.formats.sniff: "nq", "nq-open", "ambigqa"), so that
    # another task's gold, or the files swapped, are named as such; None: not checked
    gold_kind: str | None = None

    def tested_metrics(self, sa: Mapping[str, Any], sb: Mapping[str, Any]) -> list[str]:
        """The headline metrics both results' headline statistics (``sa``, ``sb``) carry,
        in headline order: the ones bootstrap intervals and paired tests are given for."""
        names = list(sa) if self.headline_from_result else self.headline
        return [m for m in names if m in sa and m in sb]

    def __post_init__(self) -> None:
        # the record and the declarations name the same settings, or the task is not built
        if self.settings_type is not None:
            check_record("task", self.name, self.settings_type, self.params, Settings)

    def all_params(self) -> tuple[Param, ...]:
        by_name = {p.name: p for p in COMMON}
        out = []
        for name in self.common:
            p = by_name[name]
            if name == "gold":
                p = replace(p, help=self.gold_help, required=self.gold_required,
                            deprecated=self.gold_deprecated)
            elif name == "predictions":
                p = replace(p, help=self.predictions_help, required=self.predictions_required)
            elif name == "allow_missing":
                p = replace(p, help=self.allow_missing_help)
            out.append(p)
        return (*out, *self.params)

    def settings(self, **given: Any) -> S:
        """The record of every setting of the task: the given ones over the declared
        defaults (the common settings the task does not declare keep their defaults).
        A name the task does not declare is a ``TypeError`` that lists the known ones."""
        params = self.all_params()
        out = settings_values(
            "task", self.name, params, given,
            lambda p: f"nqkit eval {self.name} {p.flag} {p.metavar or p.name.upper()} ...",
            defaults=params if self.settings_type is None else (*COMMON, *params))
        if self.settings_type is None:
            out.setdefault("bootstrap", out.get("resamples"))  # its name before 0.2
            return out  # type: ignore[return-value]  # the earlier form: a dict
        return self.settings_type(**out)

    def run(self, **given: Any) -> Result:
        """Score with the given settings (defaults for the rest), intervals included."""
        settings = self.settings(**given)
        if isinstance(settings, dict):  # the earlier form
            resamples, seed = settings.get("resamples") or 0, settings.get("seed") or 0
        else:
            resamples, seed = settings.resamples or 0, settings.seed or 0
        if resamples and not 1 <= resamples <= MAX_RESAMPLES:
            from nqkit.errors import InputError

            raise InputError(None, f"--resamples must be between 0 and {MAX_RESAMPLES:,}, "
                             f"found {resamples:,}", "1,000 to 10,000 resamples are usual")
        if seed < 0:
            from nqkit.errors import InputError

            raise InputError(None, f"--seed must be a non-negative integer, found {seed}",
                             "give a seed such as 0 or 12345")
        result = self.score(settings)
        if resamples:
            self.add_intervals(result, resamples, seed)
        return result

    def add_intervals(self, result: Result, resamples: int, seed: int) -> None:
        """Bootstrap intervals of the headline metrics, a warning for each interval
        pulled down by resamples without gold, and one when the items are too few
        (:func:`nqkit.stats.interval_warnings`)."""
        from nqkit.report import progress_bar
        from nqkit.signature import mark_signature
        from nqkit.stats import bootstrap_interval, interval_warnings

        stats = result.headline_stats()
        names = self.tested_metrics(stats, stats)
        with progress_bar(desc="bootstrap intervals", total=len(names) * resamples,
                          unit="resample") as bar:
            result.intervals = {name: bootstrap_interval(stats[name], resamples=resamples,
                                                         seed=seed, progress=bar.update)
                                for name in names}
        added = []
        no_gold = any(w.code.startswith("no-gold") for w in result.warnings)
        for name, iv in result.intervals.items():
            # every resample without gold: no gold at all, which the task warns about
            if iv.degenerate and not (no_gold and iv.degenerate == resamples):
                added.append(ResultWarning(
                    "bootstrap-no-gold",
                    f"{iv.degenerate:,} of {resamples:,} bootstrap resamples have no gold "
                    f"answer for {name} and count as 0, which pulls its interval down — too "
                    "few gold answers for an interval; score more examples"))
        added.extend(interval_warnings(result.intervals))
        if added:
            result.warnings.extend(added)
            result.signature = mark_signature(result.signature, added)


TASKS: Registry[Task[Any]] = Registry("task")
# Modules of nqkit.tasks that declare no task: this one, the grouped scores and the
# test-train overlap evaluation built on them.
NOT_TASKS = ("base", "groups", "overlap")
_loaded = False


def _load() -> None:
    global _loaded
    if not _loaded:
        discover("nqkit.tasks", skip=NOT_TASKS)
        _loaded = True


def get_task(name: str) -> Task[Any]:
    _load()
    return TASKS.get(name)


def task_names() -> list[str]:
    _load()
    return TASKS.names()


# ---------------------------------------------------------------------------- the command

def task_settings(task: Task[Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """The task's settings from a command's parsed arguments (``vars(args)``; old
    spellings resolved)."""
    from nqkit.report import note

    settings = {p.name: given[p.name] for p in task.all_params() if p.name in given}
    legacy = given.get("legacy_positional")
    if legacy is not None and task.deprecated_positional:
        new = next(p.flag for p in task.all_params() if p.name == task.deprecated_positional)
        note(f"a positional {task.deprecated_positional} is deprecated and will be removed "
             f"in the next release; use {new} {legacy}")
        settings[task.deprecated_positional] = legacy
    return settings


def check_outputs(task: Task[Any], settings: dict[str, Any]) -> dict[str, Any]:
    """Refuse output files that are inputs, before any work; returns the settings to score
    with.

    The gold files expanded for this check are passed on as
    :class:`~nqkit.io.ExpandedPaths` (which keep the paths as given for messages), so the
    task reads exactly these files without expanding its globs or registry names again. A
    directory given as gold (a ReQA task) stands for the files in it and is passed on as
    given; so is the predictions file (one file, named as given in messages).
    """
    import os
    from pathlib import Path

    from nqkit.io import ExpandedPaths, check_output, expand_paths

    outputs = [p for p in task.all_params() if p.output and settings.get(p.name)]
    if not outputs:
        return settings
    settings = dict(settings)
    files: list[Path] = []
    for name in ("gold", "predictions"):
        given = settings.get(name)
        if not given:
            continue
        items = [given] if isinstance(given, str | os.PathLike) else list(given)
        dirs = [Path(g) for g in items if name == "gold" and os.path.isdir(g)]
        files += [f for d in dirs for f in d.iterdir() if f.is_file()]
        rest = [g for g in items if Path(g) not in dirs]
        if rest:
            expanded = expand_paths(rest, what=name)
            files += expanded
            if name == "gold" and not dirs:
                settings[name] = ExpandedPaths(expanded, items)
    for p in outputs:
        check_output(settings[p.name], files, option=p.flag)
    return settings


def check_kinds(task: Task[Any], settings: Mapping[str, Any], *, command: str) -> None:
    """One line, before any reading, when the gold is clearly another task's (``use
    nqkit eval ambigqa``) or the gold and the predictions were given the wrong way round
    (:mod:`nqkit.formats.sniff`)."""
    if task.gold_kind is None or not settings.get("gold"):
        return
    from nqkit.formats.sniff import check_gold_kind, check_not_swapped

    predictions = settings.get("predictions")
    if predictions:
        check_not_swapped(task.gold_kind, settings["gold"], predictions)
    check_gold_kind(task.gold_kind, settings["gold"], command=command)


def run_command(task_name: str, given: Mapping[str, Any]) -> None:
    """``nqkit eval TASK``: the task run with a command's parsed arguments (``given``),
    its outputs checked against its inputs first, the result printed
    (:func:`nqkit.report.emit_result`)."""
    from nqkit.report import emit_result

    task = get_task(task_name)
    settings = check_outputs(task, task_settings(task, given))
    check_kinds(task, settings, command="eval")
    result = task.run(**settings)
    emit_result(result, format=settings.get("format", "table"),
                per_item=settings.get("per_item"))
