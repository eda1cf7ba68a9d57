"""The ReQA task: MRR and R@k of a ranking run over a ReQA task (Ahmad et al. 2019, §3),
and the ReQA pipeline.

``nqkit reqa build`` (:func:`build_reqa`) writes a task directory from SQuAD or NQ;
``nqkit reqa run --gold TASK`` (:func:`run_reqa`) indexes it with any registered
retriever, ranks and scores in one go (and writes the per-query ranks with
``--per-item``); ``nqkit eval reqa --gold TASK --predictions RANKS.jsonl`` scores such a
ranks file again, and ``nqkit compare reqa --gold TASK A.jsonl B.jsonl`` tests two runs.
A question asked by several queries counts once, with its best rank (the paper's Eq. 1-2).
"""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from nqkit.settings import Param, format_param, positive_int
from nqkit.tasks.base import TASKS, Result, Settings, Task
from nqkit.vocabulary import GOLD, HITS, INPUTS, OUTPUT, PER_ITEM, RETRIEVER, TREC

if TYPE_CHECKING:
    from collections.abc import Mapping

    from nqkit.metrics.ranking import QueryRanks, RankingResult

LEVELS = (("sentence", "sentence"), ("document", "paragraph"))  # metric level -> table name


def ranking_result(questions: Sequence[str], ranks: QueryRanks, r: RankingResult, *,
                   title: str = "ReQA") -> Result:
    """A ReQA ranking as the :class:`~nqkit.tasks.base.Result` every task returns.

    JSON keys follow the table: ``queries``, ``distinct_questions``, ``index_size`` and a
    block per level named ``sentence`` / ``paragraph``.
    """
    rows = []
    official: dict[str, Any] = {"index_size": r.index_size, "queries": r.questions,
                                "distinct_questions": r.distinct_questions}
    for name, label in LEVELS:
        if name in r.levels:
            m = r.levels[name]
            rows.append((label, *m.values()))
            official[label] = dict(m)
    headers = ("level", *(k.upper() for k in next(iter(r.levels.values()))))

    @functools.cache
    def best() -> dict[str, dict[str, float]]:
        # Per level, each distinct question's best rank (first-seen order): computed once,
        # when the per-item records or the headline statistics are first asked for.
        out: dict[str, dict[str, float]] = {}
        for name, label in LEVELS:
            arr = getattr(ranks, name)
            if arr is None:
                continue
            b: dict[str, float] = {}
            for q, rank in zip(questions, arr.tolist(), strict=True):
                b[q] = min(rank, b.get(q, float("inf")))
            out[label] = b
        return out

    def items() -> list[dict[str, Any]]:
        per = best()
        return [{"question": q, **{f"{label}_rank": per[label][q] for label in per}}
                for q in dict.fromkeys(questions)]

    def headline() -> dict[str, Any]:
        import numpy as np

        from nqkit.stats import ItemStats

        out: dict[str, Any] = {}
        ks = [int(k[2:]) for k in next(iter(r.levels.values())) if k.startswith("r@")]
        for label, per in best().items():
            arr = np.fromiter(per.values(), dtype=float, count=len(per))
            out[f"{label} MRR"] = ItemStats.of(1.0 / arr)
            for k in ks:
                out[f"{label} R@{k}"] = ItemStats.of((arr <= k).astype(float))
        return out

    return Result(task="reqa", title=title, headers=headers, rows=rows,
                  signature=r.signature, official=official, items=items, item_key="question",
                  headline=headline, digits=3)


def _read_ranks(path: str, task: Any, *, allow_missing: bool, allow_extra: bool,
                ) -> tuple[list[str], Any]:
    import numpy as np

    from nqkit.errors import InputError, for_example
    from nqkit.io import iter_jsonl
    from nqkit.metrics.ranking import QueryRanks

    n = len(task.queries)
    sentence = np.full(n, np.inf)
    document = np.full(n, np.inf)
    seen = np.zeros(n, dtype=bool)
    has = {"sentence": False, "document": False}
    extra: list[str] = []
    for lineno, rec in enumerate(iter_jsonl(path, what="ranks"), 1):
        where = f"{path}:{lineno}"
        q = rec.get("query")
        if not isinstance(q, int) or isinstance(q, bool) or q < 0:
            raise InputError(where, f"'query' must be a query number, found {q!r:.40}",
                             "give the ranks written by `nqkit reqa run --per-item`")
        if q >= n:
            extra.append(str(q))
            continue
        if rec.get("question") is not None and rec["question"] != task.queries[q].question:
            raise InputError(where, f"query {q} is {rec['question']!r:.60} here but "
                             f"{task.queries[q].question!r:.60} in the task",
                             "score the ranks against the task they were computed on")
        for key, arr, level in (("sentence_rank", sentence, "sentence"),
                                ("paragraph_rank", document, "document")):
            v = rec.get(key)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int | float) or not v >= 1:
                raise InputError(where, f"{key} must be a rank >= 1, found {v!r:.40}",
                                 "ranks start at 1 (ties averaged)")
            arr[q] = float(v)
            has[level] = True
        seen[q] = True
    if extra and not allow_extra:
        raise InputError(path, f"{len(extra):,} query number(s) beyond the task's {n:,} "
                         f"queries ({for_example(extra)})",
                         "check the task directory, or pass --allow-extra to ignore them")
    missing = np.flatnonzero(~seen)
    if len(missing) == n:
        raise InputError(path, "no ranks for any query of the task",
                         "give the ranks written by `nqkit reqa run --per-item`")
    if len(missing) and not allow_missing:
        raise InputError(path, f"{len(missing):,} of {n:,} queries have no ranks "
                         f"({for_example(str(i) for i in missing)})",
                         "rank every query, or pass --allow-missing to count them as misses")
    ranks = QueryRanks(sentence if has["sentence"] else None,
                       document if has["document"] else None)
    if ranks.sentence is None and ranks.document is None:
        raise InputError(path, "no sentence_rank or paragraph_rank in any line",
                         "give the ranks written by `nqkit reqa run --per-item`")
    return [q.question for q in task.queries], ranks


def score(s: Settings) -> Result:
    from nqkit.errors import InputError
    from nqkit.formats.reqa import load_task
    from nqkit.metrics.ranking import aggregate_ranks

    gold, path = s.inputs()
    dirs = [gold] if isinstance(gold, str | os.PathLike) else list(gold)
    if len(dirs) != 1:
        raise InputError(None, f"--gold takes one ReQA task directory, got {len(dirs)}",
                         "nqkit eval reqa --gold TASK_DIR --predictions RANKS.jsonl")
    task = load_task(dirs[0])
    questions, ranks = _read_ranks(path, task, allow_missing=s.allow_missing,
                                   allow_extra=s.allow_extra)
    settings = {"missing": "miss"} if s.allow_missing else {}
    r = aggregate_ranks(questions, ranks, index_size=len(task.index), settings=settings)
    source = task.params.get("source", "?")
    return ranking_result(questions, ranks, r, title=f"ReQA {source}: ranks of {path}")


TASK = TASKS.add("reqa", Task(
    name="reqa", help="ReQA MRR and R@k of a ranks file (from `nqkit reqa run --per-item`)",
    description="Score per-query ranks ({query, question, sentence_rank, paragraph_rank} "
    "JSON lines, ties averaged) against a ReQA task directory: MRR and R@1/5/10 over "
    "distinct questions, each with its best rank (ReQA, Eq. 1-2).",
    score=score, settings_type=Settings,
    gold_help="the ReQA task directory (from `nqkit reqa build`)",
    predictions_help="per-query ranks (JSON lines from `nqkit reqa run --per-item`)",
    headline=("sentence MRR", "sentence R@1", "paragraph MRR", "paragraph R@1"),
))


# ---------------------------------------------------------------------------- build

BUILD_PARAMS = (
    Param("source", "--from", "input format", choices=("squad", "nq"), required=True),
    INPUTS.but(help="the SQuAD JSON file, or NQ .jsonl(.gz) files / globs", metavar="INPUT"),
    OUTPUT.but(help="task directory", metavar="DIR"),
    Param("nq_annotations", "--nq-annotations", "NQ: convert the first annotation of each "
          "record (official, for train) or each (example, annotator) pair (dev); default: "
          "first", default="first", choices=("first", "each")),
    format_param("table", "json", help=""),
)


def build_reqa(source: str, inputs: Sequence[str], output: str, *,
               nq_annotations: Literal["first", "each"] = "first") -> dict[str, Any]:
    """Write a ReQA task directory (index, queries, paragraphs, params.json; for NQ also
    the NQ-as-SQuAD JSON) from a SQuAD file (``source`` "squad") or NQ shards ("nq");
    returns its counts."""
    from pathlib import Path

    from nqkit.errors import InputError, examples
    from nqkit.formats.reqa import build_from_nq, build_from_squad, save_task
    from nqkit.io import check_output, expand_paths, write_json

    out = Path(output)
    files = expand_paths(inputs, what="SQuAD" if source == "squad" else "NQ")
    check_output(out, kind="dir", option="-o")
    for name in ("index.jsonl", "queries.jsonl", "paragraphs.jsonl", "params.json",
                 "nq-as-squad.json"):
        check_output(out / name, files, option="-o")
    if source == "squad":
        if len(files) != 1:
            raise InputError(None, f"--from squad takes one JSON file, got {len(files)}",
                             "give a single SQuAD file")
        from nqkit.formats.squad import iter_squad_articles

        task = build_from_squad(iter_squad_articles(files[0]),
                                {"source": "squad", "inputs": [str(files[0])]})
    else:
        from nqkit.report import progress

        task, squad = build_from_nq(files, nq_annotations, progress)
    if not task.queries:
        raise InputError(examples(files, width=None), "no query could be built",
                         "NQ: keep examples with one short answer inside a <P> long answer")
    if source == "nq":
        write_json(out / "nq-as-squad.json", squad, indent=False)
    save_task(task, out, files)
    return dict(task.params["counts"])


def emit_build(counts: Mapping[str, Any], source: str, output: str, *,
               format: str = "table") -> None:
    """Print what :func:`build_reqa` wrote, as ``nqkit reqa build`` does."""
    import json

    from nqkit.report import format_table

    if format == "json":
        print(json.dumps({"task": str(output), **counts}))
    else:
        print(format_table(["item", "count"], list(counts.items()),
                           title=f"ReQA task ({source}) written to {output}"))


# ---------------------------------------------------------------------------- run

# `reqa run`: --gold DIR (as `nqkit eval reqa --gold DIR` takes the same directory; the
# positional DIR is its old spelling, one release, hidden from --help, one note), then
# --retriever (its choices come from the registry), then the settings below, the preset
# and every retriever's (see run_params)
RUN_TASK = (GOLD.but(help="task directory from `nqkit reqa build` (required)", nargs=None,
                     required=False, metavar="DIR", deprecated=()),
            Param("task", "task", argparse.SUPPRESS, nargs="?", metavar="DIR", input=True))
RUN_OWN = (
    Param("level", "--level", "index sentences (both levels scored; default) or whole "
          "paragraphs (paragraph level only, the paper's Table 6 BM25 setting)",
          default="sentence", choices=("sentence", "paragraph")),
    Param("embedding_cache", "--embedding-cache", "dense: embedding cache directory "
          "(default: DIR/embeddings)", metavar="DIR", deprecated=("--cache-dir",),
          output=True),
    Param("no_embedding_cache", "--no-embedding-cache", "dense: do not cache embeddings",
          action="store_true", default=False, deprecated=("--no-cache",)),
    PER_ITEM.but(help="per-question ranks (jsonl; default "
                 "DIR/runs/<retriever>-<level>.ranks.jsonl)",
                 deprecated=("--ranks",)),
    Param("no_per_item", "--no-per-item", "do not write per-question ranks",
          action="store_true", default=False, deprecated=("--no-ranks",)),
    TREC.but(help="also write the ranking as a TREC run (qid = query number as in the "
             "ranks file, docid s<index line> or p<paragraph id>; .gz compresses)"),
    HITS.but(help="documents per query in the TREC run (default 100)",
             deprecated=("--trec-depth",)),
    Param("limit", "--limit", "score only the first N queries", type=positive_int,
          metavar="N"),
    Param("chunk_size", "--chunk-size", "queries scored per chunk (default: from a "
          "256 MB budget)", type=positive_int, metavar="ROWS"),
    format_param("table", "json", help="table (default) or json"),
)


def run_params() -> list[Param]:
    """The settings of ``reqa run`` after the task directory: its own, then every
    registered retriever's (the registry is imported here, on first use of ``reqa run``)."""
    from nqkit.retrieval import retriever_names
    from nqkit.retrieval.base import MEMORY, RETRIEVERS, preset_param, retriever_params

    retriever = RETRIEVER.but(help="the retriever (default bm25)", default="bm25",
                              metavar=None, choices=tuple(
                                  n for n in retriever_names()
                                  if RETRIEVERS.get(n).in_memory is not None))
    return [retriever, *RUN_OWN, preset_param("reqa"), *retriever_params(MEMORY)]


def _task_dir(gold: str | None, task: str | None) -> str:
    """The task directory from ``--gold DIR`` (or the old positional DIR, with one note)."""
    from nqkit.errors import InputError
    from nqkit.report import note

    if task is not None and gold is not None:
        raise InputError(None, "the task directory is given twice (DIR and --gold)",
                         "give --gold DIR only")
    if task is not None:
        note("a positional task directory is deprecated and will be removed in the next "
             f"release; use --gold {task}")
        return task
    if gold is None:
        raise InputError(None, "no task directory", "give --gold DIR, a directory made by "
                         "`nqkit reqa build`")
    return gold


def _default_ranks_path(task_dir: str, retriever: str, level: str) -> str:
    return os.path.join(task_dir, "runs", f"{retriever}-{level}.ranks.jsonl")


@dataclass
class ReqaRun:
    """What :func:`run_reqa` computed: the result, and where the time went."""

    result: Result
    seconds: dict[str, float]  # indexing, ranking, total


def run_reqa(settings: Mapping[str, Any]) -> ReqaRun:
    """``nqkit reqa run``: index a ReQA task with a retriever, rank every query's answer
    at sentence and paragraph level, write the per-question ranks (``per_item``, unless
    ``no_per_item``) and the TREC run (``trec``, ``hits`` deep); ``settings`` are the
    command's (:data:`RUN_TASK`, :data:`RUN_OWN`, :func:`run_params`), every one given."""
    import time
    from collections.abc import Iterator
    from pathlib import Path

    from nqkit.errors import InputError
    from nqkit.formats.reqa import load_task
    from nqkit.io import check_output, write_jsonl, write_provenance
    from nqkit.metrics.ranking import RankTargets, aggregate_ranks, rank_queries
    from nqkit.report import progress, say
    from nqkit.retrieval import retriever_class
    from nqkit.retrieval.base import apply_preset

    s = dict(settings)
    start = time.perf_counter()
    if s["retriever"] != "hybrid":
        from nqkit.retrieval.hybrid import refuse_hybrid_settings

        refuse_hybrid_settings(s, f"--retriever {s['retriever']} is no hybrid",
                               "drop them, or use --retriever hybrid")
    task_dir = _task_dir(s.get("gold"), s.get("task"))
    task = load_task(task_dir)
    # The task directory's own files are inputs: no output may land on one of them.
    task_files = [p for p in Path(task_dir).iterdir() if p.is_file()]
    ranks_path = None
    if not s["no_per_item"]:
        ranks_path = s["per_item"] or _default_ranks_path(task_dir, s["retriever"],
                                                          s["level"])
        check_output(ranks_path, task_files, option="--per-item")
    if s["embedding_cache"] and not s["no_embedding_cache"]:
        check_output(s["embedding_cache"], kind="dir", option="--embedding-cache")
    if s["trec"]:
        check_output(s["trec"], task_files, option="--trec")
    queries = task.queries[: s["limit"]] if s["limit"] else task.queries
    if not queries:
        raise InputError(task_dir, "the task has no queries", "rebuild it")
    questions = [q.question for q in queries]
    targets = RankTargets.from_sentences([c.sentence for c in task.index],
                                         [c.doc_id for c in task.index],
                                         [q.answer_sentence for q in queries])
    s = apply_preset(s)
    s["cache_dir"] = None if s["no_embedding_cache"] else (
        s["embedding_cache"] or os.path.join(task_dir, "embeddings"))
    retriever = retriever_class(s["retriever"]).from_settings(s)
    t0 = time.perf_counter()
    if s["level"] == "sentence":
        docs = [c.sentence for c in task.index]
        contexts = [task.context_of(c.doc_id) for c in task.index]
        index = retriever.index(docs, contexts)
    else:
        docs = [task.context_of(int(d)) for d in targets.doc_ids]
        index = retriever.index(docs, None)
    indexed = time.perf_counter()
    scorer = index.scorer(questions)
    level = "sentence" if s["level"] == "sentence" else "document"
    best: list[tuple[Any, Any]] = []  # per chunk: top-k columns and scores, for --trec

    def scores(lo: int, hi: int) -> Any:
        out = scorer(lo, hi)
        if s["trec"]:
            from nqkit.formats.trec import top_k

            best.append(top_k(out, s["hits"]))
        return out

    ranks = rank_queries(scores, targets, level=level, chunk_size=s["chunk_size"],
                         progress=lambda it: progress(it, desc="ranking", unit="chunk"))
    ranked = time.perf_counter()
    run_settings = {"index": s["level"], **retriever.settings()}
    if s["limit"]:
        run_settings["limit"] = s["limit"]
    result = aggregate_ranks(questions, ranks, index_size=index.size, settings=run_settings)
    if ranks_path is not None:
        sent = ranks.sentence.tolist() if ranks.sentence is not None else [None] * len(queries)
        doc = ranks.document.tolist() if ranks.document is not None else [None] * len(queries)
        write_jsonl(ranks_path, ({"query": i, "question": q, "sentence_rank": si,
                                  "paragraph_rank": d}
                                 for i, (q, si, d) in enumerate(zip(questions, sent, doc,
                                                                    strict=True))))
        write_provenance(ranks_path, result.signature)
        say(f"per-question ranks written to {ranks_path}")
    if s["trec"]:
        import numpy as np

        from nqkit.formats.trec import TrecBlock, write_trec_blocks

        docids = ([f"s{i}" for i in range(len(task.index))] if s["level"] == "sentence"
                  else [f"p{int(d)}" for d in targets.doc_ids])
        tag = f"nqkit-{s['retriever']}-{s['level']}"

        def blocks() -> Iterator[TrecBlock]:
            q = 0
            for cols, vals in best:
                # float32 scores (whatever the retriever's dtype), written as retrieve
                # writes them: the shortest text of the float32
                yield TrecBlock([str(i) for i in range(q, q + len(cols))], docids, cols,
                                vals.astype(np.float32, copy=False))
                q += len(cols)

        n = write_trec_blocks(s["trec"], blocks(), tag=tag)
        write_provenance(s["trec"], result.signature)
        say(f"TREC run ({n:,} lines) written to {s['trec']}")
    source = task.params.get("source", "?")
    what = "sentences" if s["level"] == "sentence" else "paragraphs"
    out = ranking_result(questions, ranks, result, title=(
        f"ReQA {source}: {s['retriever']} over {index.size:,} {what}, "
        f"{result.questions:,} queries ({result.distinct_questions:,} distinct questions)"))
    out.official = {"task": task_dir, "source": source, **out.official}
    return ReqaRun(out, {"indexing": indexed - t0, "ranking": ranked - indexed,
                         "start": start})


def emit_run(run: ReqaRun, *, format: str = "table") -> None:
    """Print a ReQA run as ``nqkit reqa run`` does: the result, then where the time went
    (the index and the ranking, as the bare seconds used to count them, then the whole
    run)."""
    import time

    from nqkit.report import emit_result, say

    emit_result(run.result, format=format)
    t = run.seconds
    say(f"time: indexing {t['indexing']:.1f} s, ranking {t['ranking']:.1f} s; total "
        f"{time.perf_counter() - t['start']:.1f} s")
