"""Paired comparisons of systems on any task: is system B better than system A?

For every headline metric of a task (:class:`~nqkit.tasks.base.Task`): both scores, the
difference ``B - A`` with its paired-bootstrap interval, and the p-values of the paired
bootstrap test and of approximate randomization (:mod:`nqkit.stats`), over the same gold
items, every system scored with the same settings by the task's own ``run``. ``nqkit
compare TASK`` and the browser's side-by-side view call this module; any task with
headline metrics gets it.

The bootstrap p-value is the one its interval implies (the interval excludes 0 exactly when
p < 0.05). A p-value at its resolution floor (no resample or trial on the far side) is
printed as a bound, ``< 0.002``, and marked ``"p_bootstrap_bound": true`` (or
``p_randomization_bound``) in JSON. Too few items that differ between the systems, or none,
give a warning (stderr, JSON ``warnings``) and a mark in the signature
(:func:`nqkit.stats.paired_warnings`).

With three or more systems (:func:`compare_many`): every pair, or each system against a
baseline, each comparison equal to its own two-system run with the same seed; the
p-values adjusted per metric over the comparisons (``holm``, ``bonferroni`` or ``none``,
:func:`nqkit.stats.adjust_p_values`); a table of the systems' scores, one row per
comparison and metric, and one signature naming the design and the correction
(``docs/significance.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nqkit.settings import Param, format_param
from nqkit.vocabulary import RESAMPLES, TRIALS

__all__ = [
    "COMPARISON",
    "SYSTEMS",
    "Comparison",
    "compare",
    "compare_many",
    "compare_results",
    "compare_systems",
    "comparison_table",
    "emit_comparison",
    "format_p",
    "system_names",
]

# The systems of a comparison: their predictions files, A (the baseline) and B first
SYSTEMS = (
    Param("system_a", "A", "predictions of system A (the baseline)", metavar="A",
          input=True),
    Param("system_b", "B", "predictions of system B", metavar="B", input=True),
    Param("more", "C", "predictions of further systems: then every pair is compared, or "
          "each system against --baseline", nargs="*", metavar="C", default=(),
          input=True),
)
# The settings of a comparison (with two systems: --name names them in the title,
# --baseline picks A, and one comparison needs no correction)
COMPARISON = (
    Param("baseline", "--baseline", "compare each other system against this one only "
          "(its position 1..N, its name or its file; default: every pair)",
          metavar="SYSTEM"),
    Param("correction", "--correction", "multiple-testing correction of the p-values, per "
          "metric over the comparisons (default holm)", default="holm",
          choices=("holm", "bonferroni", "none")),  # nqkit.stats.CORRECTIONS
    Param("names", "--name", "a name for each system, in the order of the files (repeat "
          "for each; default: the file names)", action="append", metavar="NAME"),
    Param("test", "--test", "which test(s) to run (default: both)", default="both",
          choices=("both", "bootstrap", "randomization")),
    RESAMPLES.but(help="bootstrap resamples (default 1000)", default=1000,
                  type=TRIALS.type),
    TRIALS,
    format_param("table", "json"),
)
# The settings of a task that a comparison sets itself (each system's predictions, no
# intervals of its own, no per-item file) or prints itself (--format)
OWN = ("predictions", "per_item", "resamples", "format")


def compare(task: Any, settings: dict[str, Any], a: str, b: str, *, test: str = "both",
            resamples: int = 1000, trials: int = 10000, seed: int = 0) -> dict[str, Any]:
    """Score both systems with the same settings and test each headline metric."""
    ra, rb = _score(task, settings, [a, b])
    return compare_results(task, ra, rb, a, b, test=test, resamples=resamples, trials=trials,
                           seed=seed)


def compare_results(task: Any, ra: Any, rb: Any, a: str, b: str, *, test: str = "both",
                    resamples: int = 1000, trials: int = 10000, seed: int = 0
                    ) -> dict[str, Any]:
    """:func:`compare` on the two systems' results, already scored (``task.run`` with
    the same settings, per-item statistics included): what ``nqkit compare`` prints."""
    from nqkit.errors import InputError
    from nqkit.signature import make_signature
    from nqkit.stats import paired_warnings

    if _keys(ra) != _keys(rb):
        raise InputError(None, "the two systems were scored on different gold items",
                         "give both the same gold and settings")
    _check_same_gold(ra, rb, b, a)
    # the settings must be equal; warning marks (warn:...) may differ between systems
    base_a, base_b = _settings_part(ra.signature), _settings_part(rb.signature)
    if _comparable(ra.signature) != _comparable(rb.signature):
        raise InputError(None, f"the two results have different settings ({base_a} vs "
                         f"{base_b})",
                         "compare predictions of the same kind under the same settings")
    with _tests_bar(task, [(ra, rb)], test, resamples, trials) as bar:
        rows, tests = _test_pair(task, ra, rb, test=test, resamples=resamples,
                                 trials=trials, seed=seed, progress=bar.update)
    support = paired_warnings(tests)
    sig = make_signature("compare", {"test": test, "resamples": resamples, "trials": trials,
                                     "seed": seed, "task": base_a}, support)
    messages = [w.message for w in [*ra.warnings, *rb.warnings, *support]]
    return {"task": task.name, "a": a, "b": b, "metrics": rows, "signature": sig,
            "warnings": list(dict.fromkeys(messages))}


def compare_many(task: Any, settings: dict[str, Any], systems: list[str], *,
                 names: list[str] | None = None, baseline: str | None = None,
                 correction: str = "holm", test: str = "both", resamples: int = 1000,
                 trials: int = 10000, seed: int = 0) -> dict[str, Any]:
    """Compare three or more systems: every pair, or each against ``baseline``.

    Each system is scored once; every comparison ``(A, B)`` runs the tests of
    :func:`compare` on those scores with the same ``seed``, so its numbers equal those of
    a two-system run ``compare(task, settings, A, B)``. Pairs are ``(i, j)`` for ``i < j``
    in the order given (``B`` the later system); with a baseline, ``A`` is the baseline
    and ``B`` each other system in order. The p-values of each test are then adjusted by
    ``correction`` (Holm, Bonferroni or none) per metric, the family being that metric's
    comparisons; a comparison is ``significant`` when the adjusted p-value of every test
    run is below 0.05 (and the difference is not 0).
    """
    from nqkit.errors import InputError
    from nqkit.signature import ResultWarning, make_signature
    from nqkit.stats import adjust_p_values, paired_warnings, significance_level

    if len(systems) < 3:
        raise InputError(None, f"an N-way comparison needs at least 3 systems, found "
                         f"{len(systems)}", "compare two systems with compare()")
    _refuse_duplicates(systems)
    labels = system_names(systems, names)
    base = None if baseline is None else _find_system(baseline, systems, labels)
    results = _score(task, settings, systems, name_file=True)
    keys, base_sig = _keys(results[0]), _settings_part(results[0].signature)
    for i, r in enumerate(results[1:], 1):
        if _keys(r) != keys:
            raise InputError(systems[i], f"system {labels[i]} was scored on different gold "
                             f"items than {labels[0]}", "give all the same gold and settings")
        _check_same_gold(results[0], r, systems[i], systems[0])
        if _comparable(r.signature) != _comparable(results[0].signature):
            raise InputError(systems[i], f"system {labels[i]} has different settings "
                             f"({_settings_part(r.signature)} vs {base_sig})",
                             "compare predictions of the same kind under the same settings")
    if base is None:
        pairs = [(i, j) for i in range(len(systems)) for j in range(i + 1, len(systems))]
    else:
        pairs = [(base, j) for j in range(len(systems)) if j != base]
    comparisons: list[dict[str, Any]] = []
    support: list[ResultWarning] = []
    with _tests_bar(task, [(results[i], results[j]) for i, j in pairs], test, resamples,
                    trials) as bar:
        for i, j in pairs:
            rows, tests = _test_pair(task, results[i], results[j], test=test,
                                     resamples=resamples, trials=trials, seed=seed,
                                     progress=bar.update)
            support += paired_warnings(tests, (labels[i], labels[j]))
            comparisons.append({"a": labels[i], "b": labels[j], "metrics": rows})
    alpha = significance_level(0.95)
    kinds = [k for k, run in (("bootstrap", test in ("both", "bootstrap")),
                              ("randomization", test in ("both", "randomization"))) if run]
    metrics = [m["metric"] for m in comparisons[0]["metrics"]]
    for metric in metrics:  # one family per metric and test: its comparisons
        family = [next(m for m in c["metrics"] if m["metric"] == metric)
                  for c in comparisons]
        for kind in kinds:
            adjusted = adjust_p_values([m[f"p_{kind}"] for m in family],
                                       [m[f"p_{kind}_bound"] for m in family], correction)
            for m, (p, bound) in zip(family, adjusted, strict=True):
                m[f"p_{kind}_adjusted"], m[f"p_{kind}_adjusted_bound"] = p, bound
        for m in family:
            m["significant"] = m["difference"] != 0 and all(
                m[f"p_{kind}_adjusted"] < alpha for kind in kinds)
    design: dict[str, Any] = {"design": "pairs" if base is None else "baseline"}
    if base is not None:
        design["baseline"] = base + 1
    design.update(systems=len(systems), correction=correction)
    if correction != "none":
        design["family"] = "metric"
    sig = make_signature("compare", {**design, "test": test, "resamples": resamples,
                                     "trials": trials, "seed": seed, "task": base_sig},
                         support)
    messages = [f"{label}: {w.message}"
                for label, r in zip(labels, results, strict=True) for w in r.warnings]
    messages += [w.message for w in support]
    return {
        "task": task.name,
        "systems": [{"name": label, "path": path,
                     "scores": {m: r.headline_stats()[m].score() for m in metrics}}
                    for label, path, r in zip(labels, systems, results, strict=True)],
        "design": design["design"],
        "baseline": None if base is None else labels[base],
        "correction": correction,
        "family": "metric" if correction != "none" else None,
        "comparisons": comparisons,
        "signature": sig,
        "warnings": list(dict.fromkeys(messages)),
    }


def _score(task: Any, settings: dict[str, Any], systems: list[str], *,
           name_file: bool = False) -> list[Any]:
    """Each system's result, scored once (per-item statistics included). With
    ``name_file``, an error that names no file (missing predictions, say) names the
    system's file: among several systems it would not say which one."""
    from nqkit.errors import InputError
    from nqkit.report import progress

    out = []
    for path in progress(systems, desc="scoring systems", unit="system"):
        try:
            out.append(task.run(**{**settings, "predictions": path, "resamples": 0}))
        except InputError as e:
            if not name_file or e.where is not None:
                raise
            raise InputError(path, e.problem, e.fix) from None
    return out


def _keys(result: Any) -> list[Any]:
    return [item.get(result.item_key) for item in result.item_list()]


def _check_same_gold(first: Any, other: Any, where: str, first_path: str) -> None:
    """Refuse two systems scored on different gold although on the same items: results
    that carry their own gold (retrieval results read without --gold, scored on the
    answers inside them; :attr:`~nqkit.tasks.base.Result.item_gold`) made for different
    answer lists, or scored with --gold A and --gold B before."""
    from pathlib import Path

    from nqkit.errors import InputError, examples, for_example

    ga, gb = first.item_gold, other.item_gold
    if ga is None and gb is None:
        return
    if ga is None or gb is None or len(ga) != len(gb):
        differ = [item.get(first.item_key) for item in first.item_list()]
    else:
        differ = [item.get(first.item_key) for item, x, y
                  in zip(first.item_list(), ga, gb, strict=True) if x != y]
    if differ:
        raise InputError(where, f"other gold answers than in {Path(first_path).name} for "
                         f"{len(differ):,} of {len(first.item_list()):,} questions "
                         f"({for_example(examples([q], quote=True, width=26) for q in differ)})"
                         ": the systems were scored on different gold",
                         "give the gold once with --gold, to score every system on it")


def _tests_bar(task: Any, pairs: list[tuple[Any, Any]], test: str, resamples: int,
               trials: int) -> Any:
    """A progress display of the paired tests of ``pairs`` of results, counted in
    resamples and trials: minutes with thousands of items, several metrics and systems."""
    from nqkit.report import progress_bar

    each = ((resamples if test in ("both", "bootstrap") else 0)
            + (trials if test in ("both", "randomization") else 0))
    metrics = sum(len(task.tested_metrics(ra.headline_stats(), rb.headline_stats()))
                  for ra, rb in pairs)
    return progress_bar(desc="paired tests", total=metrics * each, unit="resample")


def _test_pair(task: Any, ra: Any, rb: Any, *, test: str, resamples: int, trials: int,
               seed: int, progress: Callable[[int], object] | None = None
               ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows of one comparison (B against A, one per headline metric) and the tests
    behind them (metric -> the last test run), from the two systems' results;
    ``progress`` is told of the resamples and trials done."""
    from nqkit.stats import PairedTest, approximate_randomization, paired_bootstrap

    rows = []
    tests: dict[str, PairedTest] = {}
    ha, hb = ra.headline_stats(), rb.headline_stats()
    for name in task.tested_metrics(ha, hb):
        row: dict[str, Any] = {"metric": name}
        if test in ("both", "bootstrap"):
            t = tests[name] = paired_bootstrap(ha[name], hb[name], resamples=resamples,
                                               seed=seed, progress=progress)
            row.update(a=t.score_a, b=t.score_b, difference=t.difference, low=t.low,
                       high=t.high, p_bootstrap=t.p_value, p_bootstrap_bound=t.p_bound)
        if test in ("both", "randomization"):
            r = tests[name] = approximate_randomization(ha[name], hb[name], trials=trials,
                                                        seed=seed, progress=progress)
            row.update(a=r.score_a, b=r.score_b, difference=r.difference,
                       p_randomization=r.p_value, p_randomization_bound=r.p_bound)
        row.update(items=tests[name].items, differing=tests[name].differing)
        rows.append(row)
    return rows, tests


def system_names(paths: list[str], given: list[str] | None = None) -> list[str]:
    """Display names of the systems: ``given`` (one per system, all different), or each
    file's stem (without ``.gz`` and one more suffix), with as many parent directories as
    it takes to tell equal stems apart (``run1/predictions``, ``run2/predictions``), and
    the path as given when even that cannot."""
    from pathlib import PurePath

    from nqkit.errors import InputError

    if given:
        if len(given) != len(paths):
            raise InputError(None, f"--name given {len(given)} time(s) for {len(paths)} "
                             "systems", "give one --name per system, in the order of the files")
        twice = sorted({n for n in given if given.count(n) > 1})
        if twice:
            raise InputError(None, f"--name {twice[0]!r} is given to more than one system",
                             "give every system its own name")
        return list(given)

    def levels(path: str) -> list[str]:
        p = PurePath(path)
        stem = p.name.removesuffix(".gz")
        stem = stem[:stem.rindex(".")] if "." in stem[1:] else stem
        parents = [x for x in p.parent.parts if x not in ("/", ".")]
        out = ["/".join([*parents[len(parents) - k:], stem]) if k else stem
               for k in range(len(parents) + 1)]
        return [*out, path]

    options = [levels(path) for path in paths]
    level = [0] * len(paths)
    while True:
        names = [o[min(k, len(o) - 1)] for o, k in zip(options, level, strict=True)]
        clash = [i for i, n in enumerate(names) if names.count(n) > 1]
        if not clash or all(level[i] >= len(options[i]) - 1 for i in clash):
            return names
        for i in clash:
            level[i] += 1


def _refuse_duplicates(systems: list[str]) -> None:
    """Two system arguments naming one file would make a comparison of a system with
    itself part of the family (and enlarge the correction): refused."""
    import os

    from nqkit.errors import InputError

    seen: dict[str, int] = {}
    for i, path in enumerate(systems):
        real = os.path.realpath(path)
        if real in seen:
            raise InputError(path, f"the same file is given twice, as systems "
                             f"{seen[real] + 1} and {i + 1}",
                             "give each system once (to compare a system with itself, "
                             "give just the two)")
        seen[real] = i


def _find_system(spec: str, systems: list[str], names: list[str]) -> int:
    """``--baseline``: a position (1..N), a system's name, or a file given as a system."""
    import os

    from nqkit.errors import InputError

    if spec.isdigit() and 1 <= int(spec) <= len(systems) and spec not in names:
        return int(spec) - 1
    if spec in names:
        return names.index(spec)
    real = [os.path.realpath(p) for p in systems]
    if os.path.realpath(spec) in real:
        return real.index(os.path.realpath(spec))
    raise InputError(None, f"--baseline {spec!r} is none of the {len(systems)} systems",
                     f"give its position (1-{len(systems)}), its name ({', '.join(names[:3])}"
                     f"{', ...' if len(names) > 3 else ''}) or its file")


def format_p(p: float, bound: bool) -> str:
    """A p-value for a table: 4 decimals, or ``< X`` when it is a bound (``X`` the floor
    rounded up to one significant digit: ``2 / 1001`` gives ``< 0.002``)."""
    import math

    if not bound:
        return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"
    exponent = math.floor(math.log10(p))
    digit = math.ceil(p / 10.0**exponent - 1e-9)
    if digit == 10:
        digit, exponent = 1, exponent + 1
    return f"< {digit * 10.0**exponent:.{max(0, -exponent)}f}"


def _settings_part(signature: str) -> str:
    """A result signature without its warning marks and version."""
    return "|".join(p for p in signature.split("|")[:-1] if not p.startswith("warn:"))


def _comparable(signature: str) -> str:
    """What two results must share to be compared: the settings, but not the shape the
    predictions were read from (``preds:``: an lm-eval run against a released file of
    plain lines is one rule on two systems)."""
    return "|".join(p for p in _settings_part(signature).split("|")
                    if not p.startswith("preds:"))


def comparison_table(out: dict[str, Any], test: str) -> tuple[list[str], list[list[Any]]]:
    """The table of a two-system comparison (:func:`compare`'s output): headers and rows,
    the scores as numbers, the interval and p-values as the command prints them."""
    headers = ["metric", "A", "B", "B - A"]
    if test in ("both", "bootstrap"):
        headers += ["95% CI", "p (bootstrap)"]
    if test in ("both", "randomization"):
        headers += ["p (randomization)"]
    rows = []
    for m in out["metrics"]:
        row: list[Any] = [m["metric"], m["a"], m["b"], m["difference"]]
        if "low" in m:
            row += [_interval(m), format_p(m["p_bootstrap"], m["p_bootstrap_bound"])]
        if "p_randomization" in m:
            row.append(format_p(m["p_randomization"], m["p_randomization_bound"]))
        rows.append(row)
    return headers, rows


_CORRECTION_NAMES = {"holm": "Holm's step-down method", "bonferroni": "Bonferroni"}


def _interval(m: dict[str, Any]) -> str:
    return f"{m['low']:+.4f} .. {m['high']:+.4f}"


def _many_text(task: Any, out: dict[str, Any], n: int, test: str) -> str:
    """Three or more systems (:func:`compare_many`'s output): a table of scores, then one
    row per comparison and metric, the verdict rule and the signature."""
    from nqkit.report import format_table

    metrics = list(out["systems"][0]["scores"])
    m = len(out["comparisons"])
    parts = [format_table(["system", *metrics, "file"],
                          [[s["name"], *s["scores"].values(), s["path"]]
                           for s in out["systems"]],
                          title=f"{task.name}: {n} systems", right=range(1, len(metrics) + 1)),
             ""]
    correction = out["correction"]
    adjusted = correction != "none"
    title = (f"each against A = {out['baseline']}" if out["baseline"] is not None
             else "every pair") + f": {m} comparisons of B against A"
    if adjusted:
        title += (f"; p-values adjusted by {_CORRECTION_NAMES[correction]} per metric "
                  f"(family: its {m} comparisons)")
    headers = ["metric", "B", "A", "B - A"]
    if test in ("both", "bootstrap"):
        headers += ["95% CI", "p (bootstrap)"] + ([correction] if adjusted else [])
    if test in ("both", "randomization"):
        headers += ["p (randomization)"] + ([correction] if adjusted else [])
    headers.append("verdict")
    rows = []
    for metric in metrics:
        for c in out["comparisons"]:
            r = next(x for x in c["metrics"] if x["metric"] == metric)
            row: list[Any] = [metric, c["b"], c["a"], r["difference"]]
            for kind in ("bootstrap", "randomization"):
                if f"p_{kind}" not in r:
                    continue
                if kind == "bootstrap":
                    row.append(_interval(r))
                row.append(format_p(r[f"p_{kind}"], r[f"p_{kind}_bound"]))
                if adjusted:
                    row.append(format_p(r[f"p_{kind}_adjusted"], r[f"p_{kind}_adjusted_bound"]))
            row.append(("B > A" if r["difference"] > 0 else "B < A") if r["significant"]
                       else "n.s.")
            rows.append(row)
    parts.append(format_table(headers, rows, title=title, right=range(3, len(headers) - 1)))
    tests = {"both": "both tests", "bootstrap": "the paired bootstrap",
             "randomization": "approximate randomization"}[test]
    ci = "; each 95% CI is that of its one comparison" if test != "randomization" else ""
    parts.append(f"verdict: B > A or B < A where the {'adjusted ' if adjusted else ''}"
                 f"p-value is below 0.05 in {tests}, else n.s.{ci}")
    parts.append(f"signature: {out['signature']}")
    return "\n".join(parts)


@dataclass
class Comparison:
    """A comparison as ``nqkit compare`` shows it: the JSON document (:func:`compare` or
    :func:`compare_many`), its table, and the notes that go before it on stderr."""

    out: dict[str, Any]  # the JSON document
    text: str  # the table and the signature
    notes: list[str] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        return list(self.out["warnings"])


def compare_systems(task_name: str, settings: dict[str, Any], systems: list[str], *,
                    names: list[str] | None = None, baseline: str | None = None,
                    correction: str = "holm", test: str = "both", resamples: int = 1000,
                    trials: int = 10000) -> Comparison:
    """``nqkit compare TASK``: two systems (``systems`` = [A, B]; ``baseline`` may name
    B as the baseline, which swaps them) or three and more, scored with the task's
    ``settings`` (its own, ``gold`` and ``seed`` among them)."""
    import os

    from nqkit.tasks.base import check_kinds, get_task

    task = get_task(task_name)
    settings = {k: v for k, v in settings.items() if k != "predictions"}
    for path in systems:
        check_kinds(task, {**settings, "predictions": path}, command="compare")
    seed = settings.get("seed", 0)
    if len(systems) > 2:
        out = compare_many(task, settings, systems, names=names, baseline=baseline,
                           correction=correction, test=test, resamples=resamples,
                           trials=trials, seed=seed)
        return Comparison(out, _many_text(task, out, len(systems), test))
    a, b = systems
    labels = system_names(systems, names)
    # the title shows the paths, as it always has, unless --name names the systems
    shown = dict(zip(systems, labels if names else systems, strict=True))
    if baseline is not None and _find_system(baseline, systems, labels) == 1:
        a, b = b, a
    out = compare(task, settings, a, b, test=test, resamples=resamples, trials=trials,
                  seed=seed)
    notes = []
    if os.path.realpath(a) == os.path.realpath(b):
        notes.append(f"A and B are the same file ({b}): every difference is 0 and every "
                     "p-value 1 by construction — a check of the setup, not a comparison "
                     "of two systems")
    from nqkit.report import format_table

    headers, rows = comparison_table(out, test)
    text = "\n".join([format_table(headers, rows, title=f"{task.name}: B = {shown[b]} "
                                   f"against A = {shown[a]}"),
                      f"signature: {out['signature']}"])
    return Comparison(out, text, notes)


def emit_comparison(c: Comparison, *, format: str = "table") -> None:
    """Print a comparison: its notes and warnings on stderr, then the table (or JSON)."""
    import sys

    import orjson

    from nqkit.report import note, warn

    for line in c.notes:
        note(line)
    for w in c.warnings:
        warn(w)
    if format == "json":
        sys.stdout.write(orjson.dumps(c.out, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print(c.text)
