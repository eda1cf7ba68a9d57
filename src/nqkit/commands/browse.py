"""``nqkit browse``: a local web browser for NQ examples, annotations and predictions, and
for open-domain predictions (``--task nq-open``, ``ambigqa``): one system, or two side by
side with the paired test of ``nqkit compare``."""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
from typing import Any

from nqkit.commands.base import Command
from nqkit.settings import Param, int_in, positive_int


def run(args: argparse.Namespace) -> int:
    from nqkit.errors import InputError, install_hint
    from nqkit.io import check_output

    if args.cache_dir:
        check_output(args.cache_dir, kind="dir", option="--cache-dir")
    try:
        import fastapi  # noqa: F401
        import jinja2  # noqa: F401
        import uvicorn
    except ImportError as e:
        raise InputError(None, f"the browser needs FastAPI, Jinja2 and uvicorn ({e})",
                         install_hint("web")) from None
    from nqkit.browser.open_views import TASKS, check_gold_kind

    task = args.task
    predictions: list[str] = list(args.predictions or ())
    if task not in TASKS:  # argparse checks the choices; library callers too
        raise InputError(None, f"--task {task!r} is not one of {', '.join(TASKS)}",
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
    if args.answer_field != "answer" and task != "nq-open":
        raise InputError(None, "--answer-field is for --task nq-open (EfficientQA)",
                         "drop --answer-field")
    given = [flag for flag, on in (("--passages", args.passages), ("--qrels", args.qrels),
                                   ("--first-qid", args.first_qid),
                                   ("--topk", args.topk != [1, 5, 20, 100])) if on]
    if given and task != "retrieval":
        raise InputError(None, f"{' '.join(given)}: for --task retrieval only",
                         f"drop {' '.join(given)}, or add --task retrieval")
    if (args.overlap or args.overlap_rows) and task != "nq-open":
        raise InputError(None, "--overlap is for --task nq-open",
                         "score the overlap groups of other predictions with nqkit overlap "
                         "score")
    if args.overlap_rows and not args.overlap:
        raise InputError(None, "--overlap-rows needs --overlap (the annotation file)",
                         "give --overlap nq-annotations.jsonl --overlap-rows dpr/nq-test.qa")
    check_gold_kind(task, args.gold)

    if not 0 <= args.port < 65536:
        raise InputError(None, f"--port {args.port} is not a valid port", "use 0-65535")
    # Take the port before the (possibly long) load, so a port in use fails at once, with
    # one line and before any "open http://..." is printed.
    sock = None if args.index_only else _listen(args.host, args.port)
    try:
        if task == "nq":
            from nqkit.browser.app import create_app
            from nqkit.browser.model import load_dataset

            ds = load_dataset(args.gold, predictions[0] if predictions else None,
                              cache_dir=args.cache_dir)
            n = len(ds.rows)
            print(f"nqkit browse: {n:,} examples from {len(ds.store.files)} file(s)"
                  + (f", predictions {ds.predictions_name}" if ds.has_predictions else ""),
                  file=sys.stderr)

            def make_app(port: int) -> Any:
                return create_app(ds, host=args.host, port=port, allow_hosts=args.allow_host)
        else:
            from nqkit.browser.open_app import create_open_app

            view = load_open(task, args.gold, predictions, args)
            print(f"nqkit browse: {len(view.rows):,} questions of {view.title}, predictions "
                  f"{view.predictions_name}", file=sys.stderr)

            def make_app(port: int) -> Any:
                return create_open_app(view, host=args.host, port=port,
                                       allow_hosts=args.allow_host)
        if sock is None:
            return 0
        port = sock.getsockname()[1]  # the one the system chose for --port 0
        app = make_app(port)
        host = f"[{args.host}]" if ":" in args.host else args.host
        # Listening before the URL is printed: a browser (or script) that opens it at once
        # waits in the backlog until uvicorn accepts, instead of being refused while
        # uvicorn is still starting.
        sock.listen(2048)
        print(f"nqkit browse: open http://{host}:{port}/  (Ctrl-C to stop)",
              file=sys.stderr)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        server.run(sockets=[sock])
    finally:
        if sock is not None:
            sock.close()
    return 0


def load_open(task: str, gold: Any, predictions: list[str], args: Any, *,
              resamples: int = 1000, trials: int = 10000) -> Any:
    """The open-domain view of one predictions file, or of two side by side with the
    paired test exactly as ``nqkit compare TASK A B --gold G`` runs it (its defaults:
    both tests, 1,000 resamples, 10,000 trials, seed 0; ``resamples`` and ``trials`` as
    its ``--resamples`` and ``--trials``) on the same scores."""
    from nqkit.browser.open_model import PairView
    from nqkit.browser.open_views import load_view

    options: dict[str, Any] = {}
    if task == "nq-open":
        options = {"answer_field": args.answer_field}
    elif task == "retrieval":
        options = {k: v for k, v in (("passages", args.passages), ("qrels", args.qrels),
                                     ("first_qid", args.first_qid), ("topk", args.topk))
                   if v not in (None, 0, [1, 5, 20, 100])}
    views = [load_view(task, gold, p, **options) for p in predictions]
    if len(views) == 2 and views[0].allow_missing != views[1].allow_missing:
        # `nqkit compare --allow-missing` scores both systems so: one policy, one signature
        views = [v if v.allow_missing else load_view(task, gold, p, allow_missing=True,
                                                     **options)
                 for v, p in zip(views, predictions, strict=True)]
    if getattr(args, "overlap", None):
        add_overlap_groups(views, gold, predictions, args.overlap,
                           getattr(args, "overlap_rows", None))
    if len(views) == 1:
        return views[0]
    return PairView(views[0], views[1], comparison_of(task, gold, views, predictions,
                                                      options, resamples, trials))


def add_overlap_groups(views: list[Any], gold: Any, predictions: list[str],
                       overlap: list[str], rows: list[str] | None) -> None:
    """Each question's test-train overlap group (Lewis et al. 2021) in the views, and each
    system's scores by group as ``nqkit overlap score`` prints them, from that command's
    code: the labels computed against a training set (its default settings), or read
    from an annotation file in the official format whose ids are rows of the gold, or of
    ``rows`` (``--overlap-rows``, ``nqkit overlap score --annotated-test``)."""
    from argparse import Namespace

    from nqkit.analysis.overlap import load_qa_set, nq_open_item_scores, score_groups
    from nqkit.browser.open_views import add_overlap, is_overlap_annotations
    from nqkit.commands.overlap import ANSWER_NORM, SCOPE, THRESHOLD, _analysis, scores_rows

    test = load_qa_set(gold, what="test")
    annotations = rows is not None or is_overlap_annotations(overlap[0])
    if annotations and len(overlap) > 1:
        from nqkit.errors import InputError

        raise InputError(None, "--overlap takes one annotation file",
                         "give one annotation file, or training files")
    golds = [os.fspath(gold)] if isinstance(gold, str | os.PathLike) else list(gold)
    settings = Namespace(train=None if annotations else overlap,
                         annotations=overlap[0] if annotations else None,
                         annotated_test=(rows or golds) if annotations else None,
                         answer_norm=ANSWER_NORM.default, threshold=THRESHOLD.default,
                         scope=SCOPE.default)
    analysis = _analysis(settings, test)
    source = (f"--annotations {overlap[0]} --annotated-test "
              f"{' '.join(map(str, settings.annotated_test))}" if annotations
              else "--train " + " ".join(overlap))
    for view, path in zip(views, predictions, strict=True):
        per_item, fields, warnings = nq_open_item_scores(
            test, path, allow_missing=view.allow_missing)
        r = score_groups(analysis, per_item, settings=fields, warnings=warnings)
        headers, table = scores_rows(r)
        command = (f"nqkit overlap score --test {' '.join(golds)} {source} --predictions {path}"
                   + (" --allow-missing" if view.allow_missing else ""))
        add_overlap(view, analysis, ("scores (%) by test-train overlap group", headers,
                                     table), r.signature, command)


def comparison_of(task_name: str, gold: Any, views: list[Any], predictions: list[str],
                  options: dict[str, Any], resamples: int = 1000, trials: int = 10000
                  ) -> Any:
    """``nqkit compare``'s numbers for the two views' results, as that command prints
    them (its table, title and signature), with the command line that prints them."""
    from nqkit.browser.open_model import Summary
    from nqkit.commands.compare import compare_results, comparison_table
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
                     for k, v in options.items() if v != "answer")
    if views[0].allow_missing:
        flags += " --allow-missing"
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


ORDER = 120  # where `nqkit --help` lists it
COMMANDS = (Command(
    "browse", "browse NQ examples, annotations and predictions in a web browser",
    "Start a local web app over NQ files (original or simplified format): an index with "
    "search, filters and the official metrics, one page per example with its five "
    "annotations, candidate tree and prediction, and the full page with gold and predicted "
    "spans highlighted. The first run over a file builds an on-disk index (once, with a "
    "progress bar); later runs start in seconds. With --task nq-open or ambigqa: "
    "open-domain predictions against their gold, per question, with the numbers of nqkit "
    "eval; two prediction files side by side with the paired test of nqkit compare. With "
    "--task retrieval: a retrieval run (DPR results JSON, or a TREC run with --passages) "
    "over the questions of --gold, the ranked passages with the answers highlighted where "
    "has_answer finds them, and the recall of nqkit eval retrieval.",
    run, params=(
        Param("gold", "--gold", "gold files (globs): NQ files, original or simplified, .jsonl "
              "or .jsonl.gz; with --task, that task's gold (NQ-open JSONL, AmbigNQ JSON)",
              required=True, nargs="+", metavar="GLOB"),
        Param("task", "--task", "what the files are: nq (default: NQ examples, original or "
              "simplified), nq-open (NQ-open / EfficientQA predictions), ambigqa (AmbigQA "
              "predictions), retrieval", default="nq",
              choices=("nq", "nq-open", "ambigqa", "retrieval")),
        Param("predictions", "--predictions", "predictions file in the task's format "
              "(optional for nq); two files: the systems side by side, with the paired "
              "test of nqkit compare (not for nq)", nargs="+", metavar="FILE"),
        Param("passages", "--passages", "retrieval: the passage corpus of a TREC run (DPR "
              "psgs_w100.tsv format); as in nqkit eval retrieval", metavar="TSV"),
        Param("qrels", "--qrels", "retrieval: TREC qrels of gold passages (nqkit convert "
              "qrels): marks them, adds gold-passage recall and the gold / coincidence "
              "split of the hits; as in nqkit eval retrieval", metavar="FILE"),
        Param("first_qid", "--first-qid", "retrieval: the query id of the first question in "
              "a TREC run and in --qrels (default 0)", default=0, type=int_in(0)),
        Param("topk", "--topk", "retrieval: the cut-offs k (default: 1 5 20 100)",
              default=[1, 5, 20, 100], type=positive_int, nargs="+", metavar="K"),
        Param("overlap", "--overlap", "nq-open: show each question's test-train overlap "
              "group and the scores by group (nqkit overlap score): the training set the "
              "model saw (files as nqkit overlap --train takes them), or an annotation file "
              "in the official format (as nqkit overlap labels writes it)", nargs="+",
              metavar="FILE"),
        Param("overlap_rows", "--overlap-rows", "the test file whose rows the ids of the "
              "--overlap annotation file are (default: the gold; for QA-Overlap's "
              "nq-annotations: dpr/nq-test.qa)", nargs="+", metavar="FILE"),
        Param("answer_field", "--answer-field", "nq-open: gold field holding the answers "
              "(default: answer; EfficientQA test: answer_and_def_correct_predictions)",
              default="answer", metavar="FIELD"),
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
              "directories", metavar="DIR"),
        Param("index_only", "--index-only", "build the on-disk index and exit without "
              "serving", default=False, action="store_true"),
    )),)
