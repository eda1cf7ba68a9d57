"""``nqkit reqa build`` and ``nqkit reqa run``: ReQA tasks from SQuAD or NQ, and retrieval.

``build`` writes a task directory (index, queries, paragraphs, params.json); ``run``
indexes the task with a retriever, ranks every query's answer at sentence and paragraph
level, prints the ReQA table (MRR, R@1, R@5, R@10) and writes per-question ranks.
"""

from __future__ import annotations

import argparse
from typing import Any

from nqkit.commands.base import Command
from nqkit.settings import Param, format_param, output_param, positive_int

ORDER = 90  # where `nqkit --help` lists it

BUILD_PARAMS = (
    Param("source", "--from", "input format", choices=("squad", "nq"), required=True),
    Param("inputs", "inputs", "the SQuAD JSON file, or NQ .jsonl(.gz) files / globs",
          nargs="+", metavar="INPUT"),
    output_param("task directory", metavar="DIR"),
    Param("nq_annotations", "--nq-annotations", "NQ: convert the first annotation of each "
          "record (official, for train) or each (example, annotator) pair (dev); default: "
          "first", default="first", choices=("first", "each")),
    format_param("table", "json", help=""),
)

# `reqa run`: the task directory, then --retriever (its choices come from the registry),
# then the settings below, the preset and every retriever's (see run_params)
# --gold DIR, as `nqkit eval reqa --gold DIR` takes the same directory; the positional DIR
# is its old spelling (one release, hidden from --help, one note)
RUN_TASK = (Param("gold", "--gold", "task directory from `nqkit reqa build` (required)",
                  metavar="DIR"),
            Param("task", "task", argparse.SUPPRESS, nargs="?", metavar="DIR"))
RUN_OWN = (
    Param("level", "--level", "index sentences (both levels scored; default) or whole "
          "paragraphs (paragraph level only, the paper's Table 6 BM25 setting)",
          default="sentence", choices=("sentence", "paragraph")),
    Param("embedding_cache", "--embedding-cache", "dense: embedding cache directory "
          "(default: DIR/embeddings)", metavar="DIR", deprecated=("--cache-dir",)),
    Param("no_embedding_cache", "--no-embedding-cache", "dense: do not cache embeddings",
          action="store_true", default=False, deprecated=("--no-cache",)),
    Param("per_item", "--per-item", "per-question ranks (jsonl; default "
          "DIR/runs/<retriever>-<level>.ranks.jsonl)", metavar="FILE",
          deprecated=("--ranks",)),
    Param("no_per_item", "--no-per-item", "do not write per-question ranks",
          action="store_true", default=False, deprecated=("--no-ranks",)),
    Param("trec", "--trec", "also write the ranking as a TREC run (qid = query number "
          "as in the ranks file, docid s<index line> or p<paragraph id>; .gz "
          "compresses)", metavar="FILE", output=True),
    Param("trec_depth", "--trec-depth", "documents per query in the TREC run "
          "(default 100)", default=100, type=positive_int, metavar="K"),
    Param("limit", "--limit", "score only the first N queries", type=positive_int,
          metavar="N"),
    Param("chunk_size", "--chunk-size", "queries scored per chunk (default: from a "
          "256 MB budget)", type=positive_int, metavar="ROWS"),
    format_param("table", "json", help="table (default) or json"),
)


def _add_run_params(p: argparse.ArgumentParser) -> None:
    for param in run_params():
        param.add_to(p)


def run_params() -> list[Param]:
    """The settings of ``reqa run`` after the task directory: its own, then every
    registered retriever's (the registry is imported here, on first use of ``reqa run``)."""
    from nqkit.retrieval import retriever_names
    from nqkit.retrieval.base import MEMORY, RETRIEVERS, preset_param, retriever_params

    retriever = Param("retriever", "--retriever", "the retriever (default bm25)",
                      default="bm25", choices=tuple(
                          n for n in retriever_names()
                          if RETRIEVERS.get(n).in_memory is not None))
    return [retriever, *RUN_OWN, preset_param("reqa"), *retriever_params(MEMORY)]


def run_build(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from nqkit.errors import InputError, examples
    from nqkit.formats.reqa import build_from_nq, build_from_squad, save_task
    from nqkit.io import check_output, expand_paths, write_json
    from nqkit.report import format_table

    out = Path(args.output)
    files = expand_paths(args.inputs, what="SQuAD" if args.source == "squad" else "NQ")
    check_output(out, kind="dir", option="-o")
    for name in ("index.jsonl", "queries.jsonl", "paragraphs.jsonl", "params.json",
                 "nq-as-squad.json"):
        check_output(out / name, files, option="-o")
    if args.source == "squad":
        if len(files) != 1:
            raise InputError(None, f"--from squad takes one JSON file, got {len(files)}",
                             "give a single SQuAD file")
        from nqkit.formats.squad import iter_squad_articles

        task = build_from_squad(iter_squad_articles(files[0]),
                                {"source": "squad", "inputs": [str(files[0])]})
    else:
        task, squad = build_from_nq(files, args.nq_annotations)
    if not task.queries:
        raise InputError(examples(files, width=None), "no query could be built",
                         "NQ: keep examples with one short answer inside a <P> long answer")
    if args.source == "nq":
        write_json(out / "nq-as-squad.json", squad, indent=False)
    save_task(task, out, files)
    counts = dict(task.params["counts"])
    if args.format == "json":
        print(json.dumps({"task": str(out), **counts}))
    else:
        print(format_table(["item", "count"], list(counts.items()),
                           title=f"ReQA task ({args.source}) written to {out}"))
    return 0


def _default_ranks_path(task_dir: str, retriever: str, level: str) -> str:
    import os

    return os.path.join(task_dir, "runs", f"{retriever}-{level}.ranks.jsonl")


def _task_dir(args: argparse.Namespace) -> None:
    """``args.task`` from ``--gold DIR`` (or the old positional DIR, with one note)."""
    from nqkit.errors import InputError
    from nqkit.report import note

    if args.task is not None and args.gold is not None:
        raise InputError(None, "the task directory is given twice (DIR and --gold)",
                         "give --gold DIR only")
    if args.task is not None:
        note("a positional task directory is deprecated and will be removed in the next "
             f"release; use --gold {args.task}")
    elif args.gold is None:
        raise InputError(None, "no task directory", "give --gold DIR, a directory made by "
                         "`nqkit reqa build`")
    else:
        args.task = args.gold


def run_run(args: argparse.Namespace) -> int:
    import os
    import time
    from collections.abc import Iterator
    from pathlib import Path

    from nqkit.errors import InputError
    from nqkit.formats.reqa import load_task
    from nqkit.io import check_output, write_jsonl
    from nqkit.metrics.ranking import RankTargets, aggregate_ranks, rank_queries
    from nqkit.report import emit_result, progress, say
    from nqkit.retrieval import retriever_class
    from nqkit.retrieval.base import apply_preset
    from nqkit.tasks.reqa import ranking_result

    start = time.perf_counter()
    _task_dir(args)
    task = load_task(args.task)
    # The task directory's own files are inputs: no output may land on one of them.
    task_files = [p for p in Path(args.task).iterdir() if p.is_file()]
    ranks_path = None
    if not args.no_per_item:
        ranks_path = args.per_item or _default_ranks_path(args.task, args.retriever,
                                                          args.level)
        check_output(ranks_path, task_files, option="--per-item")
    if args.embedding_cache and not args.no_embedding_cache:
        check_output(args.embedding_cache, kind="dir", option="--embedding-cache")
    if args.trec:
        check_output(args.trec, task_files, option="--trec")
    queries = task.queries[: args.limit] if args.limit else task.queries
    if not queries:
        raise InputError(args.task, "the task has no queries", "rebuild it")
    questions = [q.question for q in queries]
    targets = RankTargets.from_sentences([c.sentence for c in task.index],
                                         [c.doc_id for c in task.index],
                                         [q.answer_sentence for q in queries])
    settings = apply_preset(vars(args))
    settings["cache_dir"] = None if args.no_embedding_cache else (
        args.embedding_cache or os.path.join(args.task, "embeddings"))
    retriever = retriever_class(args.retriever).from_settings(settings)
    t0 = time.perf_counter()
    if args.level == "sentence":
        docs = [c.sentence for c in task.index]
        contexts = [task.context_of(c.doc_id) for c in task.index]
        index = retriever.index(docs, contexts)
    else:
        docs = [task.context_of(int(d)) for d in targets.doc_ids]
        index = retriever.index(docs, None)
    indexed = time.perf_counter()
    scorer = index.scorer(questions)
    level = "sentence" if args.level == "sentence" else "document"
    best: list[tuple[Any, Any]] = []  # per chunk: top-k columns and scores, for --trec

    def scores(lo: int, hi: int) -> Any:
        s = scorer(lo, hi)
        if args.trec:
            from nqkit.formats.trec import top_k

            best.append(top_k(s, args.trec_depth))
        return s

    ranks = rank_queries(scores, targets, level=level, chunk_size=args.chunk_size,
                         progress=lambda it: progress(it, desc="ranking", unit="chunk"))
    ranked = time.perf_counter()
    run_settings = {"index": args.level, **retriever.settings()}
    if args.limit:
        run_settings["limit"] = args.limit
    result = aggregate_ranks(questions, ranks, index_size=index.size, settings=run_settings)
    if ranks_path is not None:
        sent = ranks.sentence.tolist() if ranks.sentence is not None else [None] * len(queries)
        doc = ranks.document.tolist() if ranks.document is not None else [None] * len(queries)
        write_jsonl(ranks_path, ({"query": i, "question": q, "sentence_rank": s,
                                  "paragraph_rank": d}
                                 for i, (q, s, d) in enumerate(zip(questions, sent, doc,
                                                                   strict=True))))
        say(f"per-question ranks written to {ranks_path}")
    if args.trec:
        import numpy as np

        from nqkit.formats.trec import TrecBlock, write_trec_blocks

        docids = ([f"s{i}" for i in range(len(task.index))] if args.level == "sentence"
                  else [f"p{int(d)}" for d in targets.doc_ids])
        tag = f"nqkit-{args.retriever}-{args.level}"

        def blocks() -> Iterator[TrecBlock]:
            q = 0
            for cols, vals in best:
                # float32 scores (whatever the retriever's dtype), written as retrieve
                # writes them: the shortest text of the float32
                yield TrecBlock([str(i) for i in range(q, q + len(cols))], docids, cols,
                                vals.astype(np.float32, copy=False))
                q += len(cols)

        n = write_trec_blocks(args.trec, blocks(), tag=tag)
        say(f"TREC run ({n:,} lines) written to {args.trec}")
    source = task.params.get("source", "?")
    what = "sentences" if args.level == "sentence" else "paragraphs"
    out = ranking_result(questions, ranks, result, title=(
        f"ReQA {source}: {args.retriever} over {index.size:,} {what}, {result.questions:,} "
        f"queries ({result.distinct_questions:,} distinct questions)"))
    out.official = {"task": args.task, "source": source, **out.official}
    emit_result(out, format=args.format)
    # the index and the ranking, as the bare seconds used to count them, then the whole run
    say(f"time: indexing {indexed - t0:.1f} s, ranking {ranked - indexed:.1f} s; total "
        f"{time.perf_counter() - start:.1f} s")
    return 0


COMMANDS = (
    Command("build", "build a ReQA task directory from SQuAD JSON or NQ original shards",
            "Build a ReQA task (answer index + queries) from SQuAD 1.1 JSON (--from squad "
            "FILE) or Natural Questions original-format shards (--from nq GLOB).",
            run_build, params=BUILD_PARAMS, group="reqa"),
    Command("run", "run a retriever on a ReQA task and print MRR and R@k",
            "Index a ReQA task with a retriever, rank every query's target at sentence and "
            "paragraph level, print MRR/R@1/R@5/R@10 and write per-question ranks.",
            run_run, params=RUN_TASK, group="reqa",
            # the retrievers load only when `reqa run` is used
            populate=_add_run_params),
)
