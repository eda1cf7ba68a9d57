"""``nqkit compare TASK --gold G A B``: is system B better than system A, and by how much?

For every headline metric of the task: both scores, the difference ``B - A`` with its
paired-bootstrap interval, and the p-values of the paired bootstrap test and of approximate
randomization (:mod:`nqkit.stats`), over the same gold items. The task's own settings are
accepted as in ``nqkit eval TASK``.

The bootstrap p-value is the one its interval implies (the interval excludes 0 exactly when
p < 0.05). A p-value at its resolution floor (no resample or trial on the far side) is
printed as a bound, ``< 0.002``, and marked ``"p_bootstrap_bound": true`` (or
``p_randomization_bound``) in JSON. Too few items that differ between the systems, or none,
give a warning (stderr, JSON ``warnings``) and a mark in the signature
(:func:`nqkit.stats.paired_warnings`).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from nqkit.commands.base import Command, format_param
from nqkit.settings import Param, positive_int

# The settings of every `nqkit compare TASK`, after the task's own
SYSTEMS = (
    Param("system_a", "A", "predictions of system A (the baseline)", metavar="A"),
    Param("system_b", "B", "predictions of system B", metavar="B"),
)
TESTS = (
    Param("test", "--test", "which test(s) to run (default: both)", default="both",
          choices=("both", "bootstrap", "randomization")),
    Param("resamples", "--resamples", "bootstrap resamples (default 1000)", default=1000,
          type=positive_int, metavar="N"),
    Param("trials", "--trials", "approximate randomization trials (default 10000)",
          default=10000, type=positive_int, metavar="N"),
    format_param("table", "json"),
)


def add_tasks(parser: argparse.ArgumentParser) -> None:
    """``nqkit compare TASK`` for every registered task with headline metrics."""
    from nqkit.tasks.base import get_task, task_names

    subparsers = parser.add_subparsers(dest="compare_command", metavar="TASK")
    for name in task_names():
        task = get_task(name)
        if not task.headline or "predictions" not in task.common:
            continue
        p = subparsers.add_parser(
            name, help=f"paired significance tests for {name}",
            description=f"Compare two systems on {name}: {task.help}. For each headline "
            "metric, the difference B - A with its 95% paired-bootstrap interval and the "
            "p-values of the paired bootstrap and approximate randomization tests.")
        for param in task.all_params():
            if param.name in ("predictions", "per_item", "bootstrap", "format"):
                continue
            if param.name == "gold":  # one value per --gold, so that A and B stay positional
                param = replace(param, action="append", nargs=None, deprecated=(),
                                help=param.help + " (repeat for several)")
            param.add_to(p)
        for param in (*SYSTEMS, *TESTS):
            param.add_to(p)
        p.set_defaults(func=run, task_name=name)


def compare(task: Any, settings: dict[str, Any], a: str, b: str, *, test: str = "both",
            resamples: int = 1000, trials: int = 10000, seed: int = 0) -> dict[str, Any]:
    """Score both systems with the same settings and test each headline metric."""
    from nqkit.errors import InputError
    from nqkit.stats import (
        PairedTest,
        approximate_randomization,
        paired_bootstrap,
        paired_warnings,
    )

    ra = task.run(**{**settings, "predictions": a, "bootstrap": 0})
    rb = task.run(**{**settings, "predictions": b, "bootstrap": 0})
    keys_a = [item.get(ra.item_key) for item in ra.item_list()]
    keys_b = [item.get(rb.item_key) for item in rb.item_list()]
    if keys_a != keys_b:
        raise InputError(None, "the two systems were scored on different gold items",
                         "give both the same gold and settings")
    # the settings must be equal; warning marks (warn:...) may differ between systems
    base_a, base_b = _settings_part(ra.signature), _settings_part(rb.signature)
    if base_a != base_b:
        raise InputError(None, f"the two results have different settings ({base_a} vs "
                         f"{base_b})",
                         "compare predictions of the same kind under the same settings")
    rows = []
    tests: dict[str, PairedTest] = {}
    ha, hb = ra.headline_stats(), rb.headline_stats()
    for name in task.headline:
        if name not in ha or name not in hb:
            continue
        row: dict[str, Any] = {"metric": name}
        if test in ("both", "bootstrap"):
            t = tests[name] = paired_bootstrap(ha[name], hb[name], resamples=resamples,
                                               seed=seed)
            row.update(a=t.score_a, b=t.score_b, difference=t.difference, low=t.low,
                       high=t.high, p_bootstrap=t.p_value, p_bootstrap_bound=t.p_bound)
        if test in ("both", "randomization"):
            r = tests[name] = approximate_randomization(ha[name], hb[name], trials=trials,
                                                        seed=seed)
            row.update(a=r.score_a, b=r.score_b, difference=r.difference,
                       p_randomization=r.p_value, p_randomization_bound=r.p_bound)
        row.update(items=tests[name].items, differing=tests[name].differing)
        rows.append(row)
    from nqkit.signature import make_signature

    support = paired_warnings(tests)
    sig = make_signature("compare", {"test": test, "resamples": resamples, "trials": trials,
                                     "seed": seed, "task": base_a}, support)
    messages = [w.message for w in [*ra.warnings, *rb.warnings, *support]]
    return {"task": task.name, "a": a, "b": b, "metrics": rows, "signature": sig,
            "warnings": list(dict.fromkeys(messages))}


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


def run(args: argparse.Namespace) -> int:
    import sys

    import orjson

    from nqkit.report import format_table, warn
    from nqkit.tasks.base import get_task

    task = get_task(args.task_name)
    settings = {p.name: getattr(args, p.name) for p in task.all_params()
                if hasattr(args, p.name)}
    settings.pop("predictions", None)
    out = compare(task, settings, args.system_a, args.system_b, test=args.test,
                  resamples=args.resamples, trials=args.trials, seed=settings.get("seed", 0))
    for w in out["warnings"]:
        warn(w)
    if args.format == "json":
        sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    headers = ["metric", "A", "B", "B - A"]
    if args.test in ("both", "bootstrap"):
        headers += ["95% CI", "p (bootstrap)"]
    if args.test in ("both", "randomization"):
        headers += ["p (randomization)"]
    rows = []
    for m in out["metrics"]:
        row: list[Any] = [m["metric"], m["a"], m["b"], m["difference"]]
        if "low" in m:
            row += [f"{m['low']:+.4f} .. {m['high']:+.4f}",
                    format_p(m["p_bootstrap"], m["p_bootstrap_bound"])]
        if "p_randomization" in m:
            row.append(format_p(m["p_randomization"], m["p_randomization_bound"]))
        rows.append(row)
    print(format_table(headers, rows, title=f"{task.name}: B = {args.system_b} against "
                       f"A = {args.system_a}"))
    print(f"signature: {out['signature']}")
    return 0


ORDER = 30  # where `nqkit --help` lists it (in the place of the group `compare`)
COMMANDS = (Command(
    "compare", "paired significance tests of two systems on a task",
    "paired significance tests of two systems on a task", None, populate=add_tasks),)
