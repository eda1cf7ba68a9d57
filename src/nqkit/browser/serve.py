"""``nqkit browse``: what it loads and how it serves, for the command and for Python.

:func:`browse_params` declares the command's settings: its own (host, port, cache), the
test-train overlap sources of ``nqkit overlap score`` and, for every task with a view
(:data:`nqkit.browser.open_views.LOADERS`), the settings of that task that its view
takes, as the task declares them (``nqkit eval TASK``'s own options: ``--answer-field``,
``--passages``, ``--qrels``, ``--first-qid``, ``--topk``): nothing is declared twice.
:func:`load_open` builds the open-domain view of one or two prediction files (two side by
side with the paired test of :mod:`nqkit.comparison`, as ``nqkit compare`` runs it);
:func:`serve` is the whole command.
"""

from __future__ import annotations

import argparse
import errno
import inspect
import os
import socket
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from nqkit.settings import Param, int_in
from nqkit.vocabulary import GOLD, JUDGMENTS, PREDICTIONS, TASK, VERDICTS

__all__ = ["BROWSE_PARAMS", "browse_params", "load_open", "serve", "view_settings"]

# the settings of `nqkit browse` that are its own (the views' come from the tasks)
BROWSE_PARAMS = (
    GOLD.but(help="gold files (globs): NQ files, original or simplified, .jsonl or "
             ".jsonl.gz; with --task, that task's gold (NQ-open JSONL, AmbigNQ JSON)",
             metavar="GLOB", deprecated=()),
    PREDICTIONS.but(help="predictions file in the task's format (optional for nq); two "
                    "files: the systems side by side, with the paired test of nqkit compare "
                    "(not for nq)", nargs="+", required=False),
)
SERVER_PARAMS = (
    Param("host", "--host", "address to listen on (default 127.0.0.1: this machine "
          "only)", default="127.0.0.1"),
    Param("port", "--port", "port (default 8080; 0: any free port, the URL printed "
          "shows which)", default=8080, type=int_in(0, 65535)),
    Param("allow_host", "--allow-host", "also answer requests addressed to NAME (a host "
          "name or address this machine is reached under, e.g. with --host 0.0.0.0); "
          "repeatable. Requests for any other host get 400 (DNS-rebinding protection)",
          default=[], action="append", metavar="NAME"),
    Param("cache_dir", "--cache-dir", "where the example index lives (default "
          "$NQKIT_HOME/cache/browse, else ~/.cache/nqkit/browse); never inside the data "
          "directories", metavar="DIR", output=True),
    Param("index_only", "--index-only", "build the on-disk index and exit without "
          "serving", default=False, action="store_true"),
)
# the human judgments of (question, prediction) pairs and a judge's verdicts on them, as
# `nqkit judge audit` takes them (nq-open only)
JUDGED_PARAMS = (
    JUDGMENTS.but(help=f"nq-open: {JUDGMENTS.help} (shows each judged prediction's human "
                  "verdict beside its exact match, with filters)"),
    VERDICTS.but(help=f"nq-open: {VERDICTS.help} (with --judgments: the judge's verdict "
                 "beside the human one)"),
)
# `--overlap FILE...` (training files or an annotation file, told apart by content) and
# `--overlap-rows`: the earlier spellings of overlap score's --train / --annotations and
# --annotated-test, one release, hidden
LEGACY_OVERLAP = (
    Param("overlap", "--overlap", argparse.SUPPRESS, nargs="+", metavar="FILE", input=True),
    Param("overlap_rows", "--overlap-rows", argparse.SUPPRESS, nargs="+", metavar="FILE",
          input=True),
)


def view_settings(task_name: str) -> list[Param]:
    """The settings of ``task_name`` that its view takes: the task's own declarations
    whose names the view's loader accepts as keywords."""
    from nqkit.browser.open_views import LOADERS
    from nqkit.tasks.base import get_task

    loader = LOADERS[task_name]
    accepted = {name for name, p in inspect.signature(loader).parameters.items()
                if p.kind is inspect.Parameter.KEYWORD_ONLY}
    return [p for p in get_task(task_name).params if p.name in accepted]


def _tasks() -> tuple[str, ...]:
    from nqkit.browser.open_views import LOADERS

    return ("nq", *LOADERS)


def browse_params() -> list[Param]:
    """Every setting of ``nqkit browse``, each declared once (see the module doc)."""
    from nqkit.tasks.overlap import LABEL_SOURCE

    tasks = _tasks()
    out: list[Param] = [*BROWSE_PARAMS, TASK.but(
        help="what the files are: nq (default: NQ examples, original or simplified), "
        "nq-open (NQ-open / EfficientQA predictions), ambigqa (AmbigQA predictions), "
        "retrieval", default="nq", choices=tasks, metavar=None)]
    seen: set[str] = set()
    for name in tasks[1:]:
        for p in view_settings(name):
            if p.name not in seen:
                seen.add(p.name)
                out.append(p.but(help=f"{name}: {p.help}"))
    out += [p.but(help=f"nq-open: {p.help} (shows each question's test-train overlap group "
                  "and the scores by group, as nqkit overlap score)")
            for p in LABEL_SOURCE]
    return [*out, *JUDGED_PARAMS, *SERVER_PARAMS, *LEGACY_OVERLAP]


def _given_view_settings(task: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The view settings given (those not at their declared default), checked against
    the task's view: a setting of another task's view is refused in one line."""
    from nqkit.errors import InputError

    own = {p.name for p in view_settings(task)} if task != "nq" else set()
    given: dict[str, Any] = {}
    foreign: dict[str, list[str]] = {}
    for name in _tasks()[1:]:
        for p in view_settings(name):
            value = settings.get(p.name, p.default)
            if value is None or value == p.default:
                continue
            if p.name in own:
                given[p.name] = value
            else:
                foreign.setdefault(name, []).append(p.flag)
    for name, flags in foreign.items():
        listed = " ".join(dict.fromkeys(flags))
        raise InputError(None, f"{listed}: for --task {name} only",
                         f"drop {listed}, or add --task {name}")
    return given


def _check_judged(task: str, judgments: Any, verdicts: Any) -> None:
    """Refuse --verdicts without --judgments, and either for a task other than nq-open."""
    from nqkit.errors import InputError

    if verdicts and not judgments:
        raise InputError(None, "--verdicts needs --judgments (the judge is shown against the "
                         "human verdicts)", "add --judgments TSV, or drop --verdicts")
    if judgments and task != "nq-open":
        raise InputError(None, f"--judgments is for --task nq-open, not {task}",
                         "drop --judgments, or browse NQ-open predictions with --task "
                         "nq-open")


def _overlap_source(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The overlap source of the settings: --train, or --annotations (and
    --annotated-test); the earlier --overlap / --overlap-rows resolved with a note."""
    from nqkit.browser.open_views import is_overlap_annotations
    from nqkit.errors import InputError
    from nqkit.report import note

    train, annotations = settings.get("train"), settings.get("annotations")
    rows = settings.get("annotated_test")
    legacy, legacy_rows = settings.get("overlap"), settings.get("overlap_rows")
    if legacy_rows:
        note("--overlap-rows is deprecated and will be removed in the next release; use "
             "--annotated-test")
        rows = rows or legacy_rows
    if legacy:
        annotated = rows is not None or is_overlap_annotations(legacy[0])
        if annotated and len(legacy) > 1:
            raise InputError(None, "--overlap takes one annotation file",
                             "give one annotation file, or training files")
        new = "--annotations" if annotated else "--train"
        note(f"--overlap is deprecated and will be removed in the next release; use {new}")
        if annotated:
            annotations = annotations or legacy[0]
        else:
            train = [*(train or []), *legacy]
    if rows is not None and annotations is None:
        raise InputError(None, "--annotated-test needs --annotations (the annotation file)",
                         "give --annotations nq-annotations.jsonl --annotated-test "
                         "dpr/nq-test.qa")
    if train is not None and annotations is not None:
        raise InputError(None, "give either --train or --annotations, not both",
                         "training files, or one annotation file")
    return {"train": train, "annotations": annotations, "annotated_test": rows}


def serve(settings: Mapping[str, Any]) -> None:
    """``nqkit browse``: load the view of the task and serve it on ``host``:``port``
    until Ctrl-C (or, with ``index_only``, build the NQ example index and stop)."""
    from nqkit.errors import InputError, install_hint
    from nqkit.io import check_output

    s = settings
    if s.get("cache_dir"):
        check_output(s["cache_dir"], kind="dir", option="--cache-dir")
    try:
        import fastapi  # noqa: F401
        import jinja2  # noqa: F401
        import uvicorn
    except ImportError as e:
        raise InputError(None, f"the browser needs FastAPI, Jinja2 and uvicorn ({e})",
                         install_hint("web")) from None
    from nqkit.browser.open_views import check_gold_kind

    task = s["task"]
    predictions: list[str] = list(s.get("predictions") or ())
    if task not in _tasks():  # argparse checks the choices; library callers too
        raise InputError(None, f"--task {task!r} is not one of {', '.join(_tasks())}",
                         "choose one of them")
    if len(predictions) > 2:
        raise InputError(None, f"--predictions takes one file, or two to compare, found "
                         f"{len(predictions)}", "give one or two prediction files")
    if task == "nq" and len(predictions) == 2:
        raise InputError(None, "nqkit browse --task nq shows one predictions file",
                         "give one --predictions file (side by side: --task nq-open, "
                         "ambigqa)")
    if task != "nq" and not predictions:
        raise InputError(None, f"nqkit browse --task {task} needs --predictions",
                         "give one predictions file, or two to compare")
    options = _given_view_settings(task, s)
    overlap = _overlap_source(s)
    if (overlap["train"] or overlap["annotations"]) and task != "nq-open":
        raise InputError(None, "the overlap groups (--train, --annotations) are for --task "
                         "nq-open", "score the overlap groups of other predictions with "
                         "nqkit overlap score")
    judgments, verdicts = s.get("judgments"), s.get("verdicts")
    _check_judged(task, judgments, verdicts)
    check_gold_kind(task, s["gold"])
    port = s["port"]
    if not 0 <= port < 65536:
        raise InputError(None, f"--port {port} is not a valid port", "use 0-65535")
    host = s["host"]
    # Take the port before the (possibly long) load, so a port in use fails at once, with
    # one line and before any "open http://..." is printed.
    sock = None if s.get("index_only") else _listen(host, port)
    try:
        if task == "nq":
            from nqkit.browser.app import create_app
            from nqkit.browser.model import load_dataset

            ds = load_dataset(s["gold"], predictions[0] if predictions else None,
                              cache_dir=s.get("cache_dir"))
            n = len(ds.rows)
            print(f"nqkit browse: {n:,} examples from {len(ds.store.files)} file(s)"
                  + (f", predictions {ds.predictions_name}" if ds.has_predictions else ""),
                  file=sys.stderr)

            def make_app(port: int) -> Any:
                return create_app(ds, host=host, port=port, allow_hosts=s["allow_host"])
        else:
            from nqkit.browser.open_app import create_open_app

            view = load_open(task, s["gold"], predictions, **overlap, judgments=judgments,
                             verdicts=verdicts, **options)
            print(f"nqkit browse: {len(view.rows):,} questions of {view.title}, predictions "
                  f"{view.predictions_name}", file=sys.stderr)

            def make_app(port: int) -> Any:
                return create_open_app(view, host=host, port=port,
                                       allow_hosts=s["allow_host"])
        if sock is None:
            return
        port = sock.getsockname()[1]  # the one the system chose for --port 0
        app = make_app(port)
        shown = f"[{host}]" if ":" in host else host
        # Listening before the URL is printed: a browser (or script) that opens it at once
        # waits in the backlog until uvicorn accepts, instead of being refused while
        # uvicorn is still starting.
        sock.listen(2048)
        print(f"nqkit browse: open http://{shown}:{port}/  (Ctrl-C to stop)",
              file=sys.stderr)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        server.run(sockets=[sock])
    finally:
        if sock is not None:
            sock.close()


def load_open(task: str, gold: Any, predictions: Sequence[str], *, resamples: int = 1000,
              trials: int = 10000, train: Sequence[str] | None = None,
              annotations: str | None = None, annotated_test: Sequence[str] | None = None,
              judgments: str | None = None, verdicts: str | None = None,
              **options: Any) -> Any:
    """The open-domain view of one predictions file, or of two side by side with the
    paired test exactly as ``nqkit compare TASK A B --gold G`` runs it (its defaults:
    both tests, 1,000 resamples, 10,000 trials, seed 0; ``resamples`` and ``trials`` as
    its ``--resamples`` and ``--trials``) on the same scores. ``options``: the task's
    settings its view takes (:func:`view_settings`); ``train`` or ``annotations`` (with
    ``annotated_test``): the test-train overlap groups, as ``nqkit overlap score`` takes
    them; ``judgments`` (with ``verdicts``): each judged prediction's human verdict
    beside its exact match and the judge's
    (:func:`nqkit.browser.open_views.add_judgments`), for nq-open."""
    from nqkit.browser.open_model import PairView
    from nqkit.browser.open_views import add_judgments, load_view

    _check_judged(task, judgments, verdicts)

    unknown = sorted(set(options) - {p.name for name in _tasks()[1:]
                                     for p in view_settings(name)})
    if unknown:
        raise TypeError(f"no view takes the setting(s) {unknown}")
    options = _given_view_settings(task, options)
    views = [load_view(task, gold, p, **options) for p in predictions]
    if len(views) == 2 and views[0].allow_missing != views[1].allow_missing:
        # `nqkit compare --allow-missing` scores both systems so: one policy, one signature
        views = [v if v.allow_missing else load_view(task, gold, p, allow_missing=True,
                                                     **options)
                 for v, p in zip(views, predictions, strict=True)]
    if train or annotations:
        add_overlap_groups(views, gold, list(predictions), train=train,
                           annotations=annotations, annotated_test=annotated_test)
    if judgments:
        for view in views:
            add_judgments(view, judgments, verdicts)
    if len(views) == 1:
        return views[0]
    return PairView(views[0], views[1], comparison_of(task, gold, views, list(predictions),
                                                      options, resamples, trials))


def add_overlap_groups(views: list[Any], gold: Any, predictions: list[str], *,
                       train: Sequence[str] | None = None, annotations: str | None = None,
                       annotated_test: Sequence[str] | None = None) -> None:
    """Each question's test-train overlap group (Lewis et al. 2021) in the views, and each
    system's scores by group as ``nqkit overlap score`` prints them, from its code: the
    labels computed against ``train`` (its default settings), or read from
    ``annotations`` whose ids are rows of ``annotated_test`` (default: the gold)."""
    from nqkit.analysis.overlap import load_qa_set
    from nqkit.browser.open_views import add_overlap
    from nqkit.tasks.overlap import (
        nq_open_item_scores,
        overlap_groups,
        score_overlap,
        scores_rows,
    )

    test = load_qa_set(gold, what="test")
    golds = [os.fspath(gold)] if isinstance(gold, str | os.PathLike) else list(gold)
    rows = list(annotated_test) if annotated_test else golds
    analysis = overlap_groups(test, train=None if annotations else train,
                              annotations=annotations,
                              annotated_test=rows if annotations else None)
    source = (f"--annotations {annotations} --annotated-test {' '.join(map(str, rows))}"
              if annotations else "--train " + " ".join(train or ()))
    for view, path in zip(views, predictions, strict=True):
        per_item, fields, warnings = nq_open_item_scores(
            test, path, allow_missing=view.allow_missing, allow_extra=view.allow_extra)
        r = score_overlap(analysis, per_item, settings=fields, warnings=warnings)
        headers, table = scores_rows(r)
        command = (f"nqkit overlap score --gold {' '.join(golds)} {source} --predictions "
                   f"{path}" + (" --allow-missing" if view.allow_missing else "")
                   + (" --allow-extra" if view.allow_extra else ""))
        add_overlap(view, analysis, ("scores (%) by test-train overlap group", headers,
                                     table), r.signature, command)


def comparison_of(task_name: str, gold: Any, views: list[Any], predictions: list[str],
                  options: Mapping[str, Any], resamples: int = 1000, trials: int = 10000
                  ) -> Any:
    """``nqkit compare``'s numbers for the two views' results, as that command prints
    them (its table, title and signature), with the command line that prints them."""
    from nqkit.browser.open_model import Summary
    from nqkit.comparison import compare_results, comparison_table
    from nqkit.report import fmt_value
    from nqkit.tasks.base import get_task

    task = get_task(task_name)
    a, b = predictions
    out = compare_results(task, views[0].result, views[1].result, a, b,
                          resamples=resamples, trials=trials)
    headers, rows = comparison_table(out, "both")
    golds = [gold] if isinstance(gold, str | os.PathLike) else list(gold)
    flags = "".join(f" --gold {os.fspath(g)}" for g in golds)
    flags += "".join(f" --{k.replace('_', '-')} "
                     + (" ".join(map(str, v)) if isinstance(v, list) else str(v))
                     for k, v in options.items())
    if views[0].allow_missing:
        flags += " --allow-missing"
    if any(v.allow_extra for v in views):
        flags += " --allow-extra"
    if resamples != 1000:
        flags += f" --resamples {resamples}"
    if trials != 10000:
        flags += f" --trials {trials}"
    return Summary(title=f"{task.name}: B = {b} against A = {a}", headers=tuple(headers),
                   rows=[tuple(fmt_value(v) for v in r) for r in rows],
                   signature=out["signature"],
                   command=f"nqkit compare {task.name}{flags} {a} {b}",
                   warnings=out["warnings"])


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (uvicorn listens on it), or a one-line error."""
    from nqkit.errors import InputError

    where = f"{'[' + host + ']' if ':' in host else host}:{port}"
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as e:
        raise InputError(None, f"--host {host!r} cannot be resolved ({e.strerror or e})",
                         "give an address of this machine such as 127.0.0.1") from None
    family, kind, proto, _, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise InputError(None, f"cannot listen on {where}: the port is already in use",
                             "stop the program using it or choose another with --port"
                             ) from None
        raise InputError(None, f"cannot listen on {where}: {e.strerror or e}",
                         "choose another --host or --port") from None
    return sock
