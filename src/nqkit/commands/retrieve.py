"""``nqkit retrieve``: top-k passages per question from an index (or two, fused)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from nqkit.commands.base import Command
from nqkit.commands.index import CLUSTER_PARAMS
from nqkit.settings import Param, format_param, output_param, positive_int

if TYPE_CHECKING:
    from collections.abc import Iterator

ORDER = 110  # where `nqkit --help` lists it

KS = (1, 5, 20, 100)

PARAMS = (
    Param("index", "--index", "index directory; give a BM25 and a dense one for a hybrid run",
          action="append", required=True, metavar="DIR"),
    Param("questions", "--questions", "DPR .qa.tsv/.qa.csv, NQ-open .jsonl or AmbigNQ .json",
          required=True, metavar="FILE"),
    # Pyserini's names: --hits for the depth of a search, --topk for the cut-offs of its
    # evaluation (`nqkit eval retrieval --topk 1 5 20 100`)
    Param("topk", "--hits", "passages per question (default 100)", default=100,
          type=positive_int, metavar="K", deprecated=("--topk",)),
    output_param("DPR results JSON (optional with --trec or --eval)", required=False),
    Param("trec", "--trec", "write a TREC run (qid Q0 docid rank score tag)", metavar="FILE",
          output=True),
    Param("tag", "--tag", "TREC run tag (default nqkit-RETRIEVER)"),
    Param("eval", "--eval", "print top-1/5/20/100 answer recall (DPR has_answer) with a "
          "signature", action="store_true", default=False),
    Param("verify", "--verify", "hash every index file again before the search (default: "
          "the small files, and the large ones whose state changed since they were last "
          "verified)", action="store_true", default=False),
)
FORMAT = format_param("table", "json", help="how --eval prints (default table)")


def _add_params(p: argparse.ArgumentParser) -> None:
    """retrieve's options after its own: the search settings every retriever declares, then
    the cluster and --format."""
    from nqkit.retrieval.base import SEARCH, preset_param, retriever_params

    for param in (preset_param("pyserini-nq"), *retriever_params(SEARCH), *CLUSTER_PARAMS,
                  FORMAT):
        param.add_to(p)


def run(args: argparse.Namespace) -> int:
    import time

    from nqkit.cluster import open_cluster, validate_spec
    from nqkit.errors import InputError
    from nqkit.io import check_output, ensure_not_input
    from nqkit.retrieval.base import apply_preset
    from nqkit.retrieval.open_index import load_index
    from nqkit.retrieval.open_run import check_compatible, run_retrieval, search_options
    from nqkit.retrieval.questions import read_questions

    clock = _Clock()
    validate_spec(args.cluster)
    if len(args.index) > 2:
        raise InputError(None, f"give one or two --index directories, got {len(args.index)}",
                         "one for a bm25 or dense run, two for a hybrid run")
    if not (args.output or args.trec or args.eval):
        raise InputError(None, "nothing to write or print", "give -o FILE for the DPR "
                         "results, --trec FILE for a TREC run, or --eval for the answer recall")
    if args.tag and args.tag.split() != [args.tag]:  # refused before any work is done
        raise InputError(f"--tag {args.tag}", "the run tag must be one word",
                         "give a tag without spaces")
    if args.output:
        check_output(args.output, [args.questions], option="-o")
    if args.trec:
        if args.output:
            try:
                ensure_not_input(args.trec, [args.output])
            except InputError:
                raise InputError(f"--trec {args.trec}", "is also the -o output",
                                 "give the TREC run a file of its own") from None
        check_output(args.trec, [args.questions], option="--trec")
    _outside_indexes(args)
    indexes = [load_index(d, full=args.verify) for d in args.index]
    settings = apply_preset(vars(args))
    check_compatible(indexes, settings["fusion"])
    questions = read_questions(args.questions)
    options = search_options(indexes, settings)
    clock.lap("reading")
    with open_cluster(args.cluster, workers=args.workers) as cluster:
        clock.lap("cluster")
        t0 = time.perf_counter()  # the search, without starting the cluster
        result = run_retrieval(indexes, questions, args.topk, cluster, settings, options)
        seconds = time.perf_counter() - t0
        clock.lap("search")
    clock.lap("cluster")
    return _write(args, questions, indexes, result, seconds, clock)


class _Clock:
    """The command's time, step by step, for the closing ``time:`` line on stderr."""

    def __init__(self) -> None:
        import time

        self._now = time.perf_counter
        self.start = self.last = self._now()
        self.steps: dict[str, float] = {}

    def lap(self, label: str) -> None:
        now = self._now()
        self.steps[label] = self.steps.get(label, 0.0) + now - self.last
        self.last = now

    def line(self) -> str:
        steps = ", ".join(f"{label} {secs:.1f} s" for label, secs in self.steps.items()
                          if label != "cluster" or secs >= 0.05)
        return f"time: {steps}; total {self._now() - self.start:.1f} s"


def _outside_indexes(args: argparse.Namespace) -> None:
    """Refuse an output inside an --index directory: the index is an input, never
    modified (results over its params.json would destroy it)."""
    from pathlib import Path

    from nqkit.errors import InputError

    for option, path in (("-o", args.output), ("--trec", args.trec)):
        if not path:
            continue
        target = Path(path).resolve()
        for d in args.index:
            root = Path(d).resolve()
            if target == root or root in target.parents:
                raise InputError(f"{option} {path}", f"is inside the index directory {d}",
                                 "write the results outside the index; an index is never "
                                 "modified")


def _write(args: argparse.Namespace, questions: list[Any], indexes: list[Any], result: Any,
           seconds: float, clock: _Clock) -> int:
    import math

    from nqkit.formats.trec import write_trec_blocks
    from nqkit.report import progress, say
    from nqkit.retrieval.open_run import write_dpr_results
    from nqkit.text.dpr_tokenize import AnswerCheck

    check = AnswerCheck()  # shared by the results' flags and --eval: one tokenization a text
    if args.output:
        write_dpr_results(args.output, questions, result, indexes[0], check=check)
        clock.lap("results")
    retriever = str(result.settings["retriever"])
    if args.trec:
        tag = args.tag or f"nqkit-{retriever}"
        blocks = _trec_blocks(questions, result, indexes[0].store)
        write_trec_blocks(args.trec, progress(blocks, desc="writing the TREC run", unit="block",
                                              total=math.ceil(len(questions) / TREC_BLOCK)),
                          tag=tag)
        clock.lap("TREC run")
    # the search alone ("bm25: 5.8 s", which benchmarks/bench_retrieval.py reads); the
    # closing time line gives every step
    n = len(questions)
    say(f"searched {n:,} question{'s' * (n != 1)}, top-{args.topk}, {retriever}: "
        f"{seconds:.1f} s"
        + (f"; results written to {args.output}" if args.output else "")
        + (f"; TREC run written to {args.trec}" if args.trec and not args.output else ""))
    if args.eval:
        _print_eval(args, questions, indexes, result, check, retriever)
        clock.lap("eval")
    say(clock.line())
    return 0


def _print_eval(args: argparse.Namespace, questions: list[Any], indexes: list[Any],
                result: Any, check: Any, retriever: str) -> None:
    """Answer recall of the run, computed as ``nqkit eval retrieval`` computes it on the
    results file (the same function, the same signature keys, then the run's)."""
    import json

    from nqkit.metrics.answer_recall import score_answer_recall
    from nqkit.report import format_table, print_warnings, progress
    from nqkit.retrieval.open_run import dpr_results
    from nqkit.tasks.retrieval import result_warnings

    ks = sorted({k for k in KS if k <= args.topk} | {args.topk})
    results = progress(dpr_results(questions, result, indexes[0]), desc="answer recall",
                       total=len(questions), unit="q")
    r = score_answer_recall(results, ks, where=args.output, check=check,
                            run_settings=result.settings)
    print_warnings(result_warnings(r))
    if args.format == "json":
        print(json.dumps({"recall": {str(k): v for k, v in r.recall.items()},
                          "num_questions": r.num_questions, "signature": r.signature,
                          **({"warnings": [w.to_json() for w in r.warnings]}
                             if r.warnings else {})}, indent=2))
    else:
        print(format_table(("top-k", "answer recall"),
                           [(f"top-{k}", v) for k, v in r.recall.items()],
                           title=f"{retriever} over {indexes[0].passages:,} passages, "
                           f"{r.num_questions:,} questions"))
        print(f"signature: {r.signature}")


TREC_BLOCK = 1024  # questions per block of the TREC run: bounds the writer's memory


def _trec_blocks(questions: list[Any], result: Any, store: Any) -> Iterator[Any]:
    """The run's hits as :class:`nqkit.formats.trec.TrecBlock` s, each passage id read
    from the store once per block (not once per line), scores as the results file has
    them (:func:`nqkit.retrieval.open_run.score_values`): float32 text for one retriever,
    float64 for a fused run."""
    import numpy as np

    from nqkit.formats.trec import TrecBlock

    dtype = np.float64 if result.fused else np.float32
    for lo in range(0, len(questions), TREC_BLOCK):
        hits = result.hits[lo:lo + TREC_BLOCK]
        rows = [h[0] for h in hits]
        distinct = np.unique(np.concatenate(rows)) if rows else np.empty(0, np.int64)
        yield TrecBlock([q.qid for q in questions[lo:lo + TREC_BLOCK]],
                        store.ids(distinct.tolist()),
                        [np.searchsorted(distinct, r) for r in rows],
                        [s.astype(dtype) for _, s in hits])


COMMANDS = (Command(
    "retrieve", "retrieve passages for questions from an index (DPR results format)",
    "Retrieve the top-k passages of every question from an index built by `nqkit index "
    "build` and write DPR's results format (question, answers, ctxs with id, title, text, "
    "score, has_answer). Two --index directories (BM25 and dense over the same corpus) give "
    "a hybrid run.",
    run, params=PARAMS,
    populate=_add_params),)  # the retrievers load only when `retrieve` is used
