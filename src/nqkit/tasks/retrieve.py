"""The open-domain retrieval pipeline: build an index, verify it, retrieve with it.

``nqkit index build``, ``nqkit index verify`` and ``nqkit retrieve`` declare themselves
in :mod:`nqkit.commands.index` and :mod:`nqkit.commands.retrieve` and call this module:
:func:`build` (a self-describing index directory from a passage corpus, by shard jobs on
a cluster), :func:`verify` (every file hashed again) and :func:`retrieve` (top-k passages
of every question, from one index or two fused, written as DPR results and a TREC run,
and scored with ``--eval`` through the retrieval task's own code,
:func:`nqkit.tasks.retrieval.recall_result`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from nqkit.settings import Param, format_param, positive_int
from nqkit.vocabulary import (
    CLUSTER,
    DEFAULT_CUTOFFS,
    EVAL,
    FIRST_QID,
    GOLD,
    HITS,
    INDEX,
    OUTPUT,
    PASSAGES,
    RETRIEVER,
    TAG,
    TREC,
    WORKERS,
)

if TYPE_CHECKING:
    from nqkit.io import PathLike, PathsLike

__all__ = ["BUILD_PARAMS", "QRELS_PARAMS", "RETRIEVE_PARAMS", "VERIFY_PARAMS", "build",
           "build_params", "explain_bm25_runs", "retrieve", "retrieve_params", "verify",
           "write_qrels"]

# ---------------------------------------------------------------------------- settings

CLUSTER_PARAMS = (CLUSTER, WORKERS)  # where shard jobs run: index build and retrieve
BUILD_PARAMS = (PASSAGES.but(help="DPR passage file (psgs_w100.tsv or .tsv.gz)",
                             required=True, metavar="FILE", deprecated=("--corpus",)),)
# the index verified: the object of the verb, a positional (as in `nqkit data verify NAME`)
VERIFY_PARAMS = (Param("index", "index", "index directory made by `nqkit index build`",
                       metavar="DIR", input=True),)

# `convert qrels`: the source of gold passages, the questions they are numbered by, the
# corpus
QRELS_PARAMS = (
    Param("oracle", "--oracle", "NQ-open oracle JSONL (nq-open-oracle.jsonl.gz)",
          metavar="FILE", input=True),
    Param("biencoder", "--biencoder", "DPR bi-encoder JSON (biencoder-nq-dev.json)",
          metavar="FILE", input=True),
    GOLD.but(help="the questions the qrels number (DPR .qa.tsv or NQ-open JSONL; NQ-open "
             "dev: nq-test.qa.tsv)", nargs=None, metavar="FILE", deprecated=("--questions",)),
    PASSAGES.but(help="the passage corpus (DPR psgs_w100.tsv format)", required=True),
    FIRST_QID.but(help="the qid of the first question (default 0, as Pyserini numbers DPR "
                  "topics)"),
    OUTPUT.but(help="output qrels file (.gz to compress)"),
)


def build_params() -> list[Any]:
    """``index build``'s settings after --passages: --retriever (its choices from the
    registry), its own, then the build settings every retriever declares; --format last.
    The retrievers load here, on first use of ``index build``."""
    from nqkit.retrieval.base import BUILD, preset_param, retriever_params
    from nqkit.retrieval.open_index import sharded_retrievers

    return [RETRIEVER.but(help="", choices=tuple(sharded_retrievers()), required=True,
                          metavar=None),
            OUTPUT.but(help="new index directory (must not exist or be empty)",
                       metavar="DIR"),
            *CLUSTER_PARAMS,
            Param("shard_size", "--shard-size", "passages per shard (default 131072; a "
                  "multiple of 64 x the batch size keeps dense embeddings independent of "
                  "it)", default=131072, type=positive_int, metavar="N"),
            preset_param("pyserini-nq"), *retriever_params(BUILD),
            format_param("table", "json", help="")]


# retrieve's own settings; then (retrieve_params) the search settings every retriever
# declares, the cluster and --format
RETRIEVE_PARAMS = (
    INDEX.but(help="index directory; give a BM25 and a dense one for a hybrid run",
              required=True),
    GOLD.but(help="the questions (and their answers, for --eval and the results): DPR "
             ".qa.tsv/.qa.csv, NQ-open .jsonl or AmbigNQ .json", nargs=None,
             metavar="FILE", deprecated=("--questions",)),
    # Pyserini's names: --hits for the depth of a search, --topk for the cut-offs of its
    # evaluation (`nqkit eval retrieval --topk 1 5 20 100`)
    HITS.but(help="passages per question (default 100)", deprecated=("--topk",)),
    OUTPUT.but(help="DPR results JSON (optional with --trec or --eval)", required=False),
    TREC.but(help="write a TREC run (qid Q0 docid rank score tag)"),
    TAG,
    EVAL.but(help="print top-1/5/20/100 answer recall (DPR has_answer) with a signature"),
    # (not a vocabulary term: only retrieve re-hashes an index before using it)
    Param("verify", "--verify", "hash every index file again before the search (default: "
          "the small files, and the large ones whose state changed since they were last "
          "verified)", action="store_true", default=False),
)


def retrieve_params() -> list[Any]:
    """The settings of ``retrieve`` after its own (the retrievers load here)."""
    from nqkit.retrieval.base import SEARCH, preset_param, retriever_params

    return [preset_param("pyserini-nq"), *retriever_params(SEARCH), *CLUSTER_PARAMS,
            format_param("table", "json", help="how --eval prints (default table)")]


# ---------------------------------------------------------------------------- index build

def refuse_others_settings(s: Mapping[str, Any]) -> None:
    """A setting given that only another retriever reads (``--bm25-method`` for a dense
    index) is refused in one line: taken silently, the user would believe it applied."""
    from nqkit.errors import InputError
    from nqkit.retrieval.base import BUILD, load_retrievers, retriever_params

    mine = {p.name for p in load_retrievers().get(s["retriever"]).params_for(BUILD)}
    given = [p for p in retriever_params(BUILD)
             if p.name not in mine and s.get(p.name, p.default) != p.default]
    if given:
        flags = ", ".join(p.flag for p in given)
        raise InputError(flags, f"{'is' if len(given) == 1 else 'are'} not a setting of "
                         f"--retriever {s['retriever']}",
                         f"drop {flags}, or choose the retriever it belongs to")


def build(settings: Mapping[str, Any]) -> None:
    """``nqkit index build``: the index directory ``output`` from the corpus ``passages``
    with ``retriever``, its shard jobs run on ``cluster``; prints what was written."""
    import json
    import time

    from nqkit.cluster import open_cluster, validate_spec
    from nqkit.io import expand_paths
    from nqkit.report import format_table, say
    from nqkit.retrieval.base import apply_preset
    from nqkit.retrieval.open_index import build_index, sharded_jobs

    s = settings
    validate_spec(s["cluster"])
    expand_paths(s["passages"], what="passage corpus")
    refuse_others_settings(s)
    retriever_settings = sharded_jobs(s["retriever"]).settings(apply_preset(s))
    t0 = time.perf_counter()
    with open_cluster(s["cluster"], workers=s["workers"]) as cluster:
        params = build_index(s["passages"], s["output"], s["retriever"], cluster,
                             shard_size=s["shard_size"], settings=retriever_settings)
        workers = cluster.workers
    seconds = time.perf_counter() - t0
    size = sum(e["bytes"] for e in params["files"].values())
    if s["format"] == "json":
        print(json.dumps({"index": s["output"], "retriever": s["retriever"],
                          "passages": params["corpus"]["passages"],
                          "fingerprint": params["corpus"]["fingerprint"],
                          "digest": params["digest"],
                          "shards": len(params["shards"]), "bytes": size,
                          "seconds": round(seconds, 2)}))
        return
    rows = [("retriever", s["retriever"]), ("passages", f"{params['corpus']['passages']:,}"),
            ("shards", len(params["shards"])),
            ("corpus fingerprint", params["corpus"]["fingerprint"][:12]),
            ("index digest", params["digest"][:12]),
            ("settings", " ".join(f"{k}={v}" for k, v in params["settings"].items()
                                  if k not in ("model", "model_fingerprint"))),
            ("size on disk", f"{size / 2**20:,.1f} MB")]
    print(format_table(["item", "value"], rows, title=f"index written to {s['output']}"))
    where = "" if s["cluster"] == "none" else f", {workers} worker{'s' * (workers != 1)}"
    say(f"built in {seconds:.1f} s (cluster {s['cluster']}{where})")


def verify(index: str, *, format: str = "table") -> None:
    """``nqkit index verify``: every file of an index directory hashed again and compared
    with the build's record; one row per file, and an error naming those that differ."""
    import json
    from pathlib import Path

    from nqkit.errors import InputError, examples
    from nqkit.report import format_table, say
    from nqkit.retrieval.open_index import verify_index

    params, checks = verify_index(index, full=True)
    bad = [c for c in checks if not c.ok]
    if format == "json":
        print(json.dumps({"index": index, "digest": params["digest"],
                          "ok": not bad, "files": [
                              {"path": str(c.path), "bytes": c.bytes, "status": c.status}
                              for c in checks]}))
    else:
        rows = [(str(c.path), f"{c.bytes:,}", c.status if c.ok else
                 {"missing": "MISSING", "size": f"SIZE {c.found}", "sha256":
                  f"DIFFERS {c.found[:12]}"}[c.status]) for c in checks]
        print(format_table(["file", "bytes", "status"], rows,
                           title=f"index {index} (digest {params['digest'][:12]})"))
    if bad:
        found = examples([c.problem(Path(index)) for c in bad], width=None)
        raise InputError(index, f"{len(bad)} of {len(checks)} files differ from the "
                         f"build ({found})", "rebuild it with `nqkit index build`, or copy it "
                         "again from its source")
    say(f"all {len(checks)} files verified: index digest {params['digest']}")


# ---------------------------------------------------------------------------- retrieve

def retrieve(settings: Mapping[str, Any]) -> None:
    """``nqkit retrieve``: the top ``hits`` passages of every question of ``gold`` from
    ``index`` (one directory, or two fused), written as DPR results (``output``) and a
    TREC run (``trec``), and scored with ``eval``; the time of each step on stderr."""
    import time

    from nqkit.cluster import open_cluster, validate_spec
    from nqkit.errors import InputError
    from nqkit.io import check_output, ensure_not_input
    from nqkit.retrieval.base import apply_preset
    from nqkit.retrieval.open_index import load_index
    from nqkit.retrieval.open_run import check_compatible, run_retrieval, search_options
    from nqkit.retrieval.questions import read_questions

    s = settings
    clock = _Clock()
    validate_spec(s["cluster"])
    if len(s["index"]) > 2:
        raise InputError(None, f"give one or two --index directories, got {len(s['index'])}",
                         "one for a bm25 or dense run, two for a hybrid run")
    if not (s["output"] or s["trec"] or s["eval"]):
        raise InputError(None, "nothing to write or print", "give -o FILE for the DPR "
                         "results, --trec FILE for a TREC run, or --eval for the answer recall")
    if s["tag"] and s["tag"].split() != [s["tag"]]:  # refused before any work is done
        raise InputError(f"--tag {s['tag']}", "the run tag must be one word",
                         "give a tag without spaces")
    if s["gold"] is None:
        raise InputError(None, "--gold is required", "give the questions: nqkit retrieve "
                         "--index DIR --gold FILE ...")
    if s["output"]:
        check_output(s["output"], [s["gold"]], option="-o")
    if s["trec"]:
        if s["output"]:
            try:
                ensure_not_input(s["trec"], [s["output"]])
            except InputError:
                raise InputError(f"--trec {s['trec']}", "is also the -o output",
                                 "give the TREC run a file of its own") from None
        check_output(s["trec"], [s["gold"]], option="--trec")
    _outside_indexes(s)
    if len(s["index"]) == 1:
        from nqkit.retrieval.hybrid import refuse_hybrid_settings

        refuse_hybrid_settings(s, "one --index is no hybrid run",
                               "drop them, or give a second --index to fuse with")
    indexes = [load_index(d, full=s["verify"]) for d in s["index"]]
    search = apply_preset(s)
    check_compatible(indexes, search["fusion"])
    questions = read_questions(s["gold"])
    options = search_options(indexes, search)
    clock.lap("reading")
    with open_cluster(s["cluster"], workers=s["workers"]) as cluster:
        cluster.ready()  # it starts in the background
        clock.lap("cluster")
        t0 = time.perf_counter()  # the search, without starting the cluster
        result = run_retrieval(indexes, questions, s["hits"], cluster, search, options)
        seconds = time.perf_counter() - t0
        clock.lap("search")
    clock.lap("cluster")
    _write(s, questions, indexes, result, seconds, clock)


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


def _outside_indexes(s: Mapping[str, Any]) -> None:
    """Refuse an output inside an --index directory: the index is an input, never
    modified (results over its params.json would destroy it)."""
    from pathlib import Path

    from nqkit.errors import InputError

    for option, path in (("-o", s["output"]), ("--trec", s["trec"])):
        if not path:
            continue
        target = Path(path).resolve()
        for d in s["index"]:
            root = Path(d).resolve()
            if target == root or root in target.parents:
                raise InputError(f"{option} {path}", f"is inside the index directory {d}",
                                 "write the results outside the index; an index is never "
                                 "modified")


def _write(s: Mapping[str, Any], questions: list[Any], indexes: list[Any], result: Any,
           seconds: float, clock: _Clock) -> None:
    import math

    from nqkit.formats.trec import write_trec_blocks
    from nqkit.io import write_provenance
    from nqkit.report import progress, say
    from nqkit.retrieval.open_run import write_dpr_results
    from nqkit.signature import make_signature
    from nqkit.splits import question_set
    from nqkit.text.dpr_tokenize import AnswerCheck

    check = AnswerCheck()  # shared by the results' flags and --eval: one tokenization a text
    # what made the run, beside each file written (the TREC run's qids are lines of the
    # questions: tied to them when read back)
    made_by = make_signature("run", result.settings)
    asked = question_set(q.question for q in questions)
    if s["output"]:
        write_dpr_results(s["output"], questions, result, indexes[0], check=check)
        write_provenance(s["output"], made_by, questions=asked)
        clock.lap("results")
    retriever = str(result.settings["retriever"])
    if s["trec"]:
        tag = s["tag"] or default_tag(result.settings)
        blocks = trec_blocks(questions, result, indexes[0].store)
        write_trec_blocks(s["trec"], progress(blocks, desc="writing the TREC run",
                                              unit="block",
                                              total=math.ceil(len(questions) / TREC_BLOCK)),
                          tag=tag)
        write_provenance(s["trec"], made_by, questions=asked)
        clock.lap("TREC run")
    # the search alone ("bm25: 5.8 s", which benchmarks/bench_retrieval.py reads); the
    # closing time line gives every step
    n = len(questions)
    say(f"searched {n:,} question{'s' * (n != 1)}, top-{s['hits']}, {retriever}: "
        f"{seconds:.1f} s"
        + (f"; results written to {s['output']}" if s["output"] else "")
        + (f"; TREC run written to {s['trec']}" if s["trec"] and not s["output"] else ""))
    if s["eval"]:
        _print_eval(s, questions, indexes, result, check, retriever)
        clock.lap("eval")
    say(clock.line())


def _print_eval(s: Mapping[str, Any], questions: list[Any], indexes: list[Any],
                result: Any, check: Any, retriever: str) -> None:
    """Answer recall of the run, scored by the retrieval task's own code on the run in
    memory, as ``nqkit eval retrieval`` scores the results file (the same signature keys,
    then the run's)."""
    import json

    from nqkit.report import format_table, print_warnings, progress
    from nqkit.retrieval.open_run import dpr_results
    from nqkit.tasks.retrieval import recall_result

    ks = sorted({k for k in DEFAULT_CUTOFFS if k <= s["hits"]} | {s["hits"]})
    results = progress(dpr_results(questions, result, indexes[0]), desc="answer recall",
                       total=len(questions), unit="q")
    r = recall_result(results, ks, where=s["output"], check=check,
                      run_settings=result.settings)
    print_warnings(r.warnings)
    recall = r.official["recall"]
    if s["format"] == "json":
        print(json.dumps({"recall": recall, "num_questions": r.official["num_questions"],
                          "signature": r.signature,
                          **({"warnings": [w.to_json() for w in r.warnings]}
                             if r.warnings else {})}, indent=2))
    else:
        print(format_table(("top-k", "answer recall"),
                           [(f"top-{k}", v) for k, v in recall.items()],
                           title=f"{retriever} over {indexes[0].passages:,} passages, "
                           f"{r.official['num_questions']:,} questions"))
        print(f"signature: {r.signature}")


def default_tag(run_settings: Mapping[str, object]) -> str:
    """The TREC tag of a run: ``nqkit-RETRIEVER``, and the BM25 flavour when it is not the
    default one (``nqkit-bm25-lucene-exact``), and ``-multifield`` when BM25 indexed the
    title and the text as fields of their own, so that such runs are told apart."""
    tag = f"nqkit-{run_settings['retriever']}"
    method = run_settings.get("bm25")
    if run_settings["retriever"] == "bm25" and method not in (None, "lucene"):
        tag += f"-{method}"
    if run_settings["retriever"] == "bm25" and run_settings.get("fields") not in (
            None, "title+text"):
        tag += "-multifield"
    return tag


TREC_BLOCK = 1024  # questions per block of the TREC run: bounds the writer's memory


def trec_blocks(questions: list[Any], result: Any, store: Any) -> Iterator[Any]:
    """The run's hits as :class:`nqkit.formats.trec.TrecBlock` s, each passage id read
    from the store once per block (not once per line), scores as the results file has
    them (:func:`nqkit.retrieval.open_run.score_values`): float32 text for one retriever,
    float64 for a fused run."""
    import numpy as np

    from nqkit.arrays import distinct as unique_rows
    from nqkit.formats.trec import TrecBlock

    dtype = np.float64 if result.fused else np.float32
    for lo in range(0, len(questions), TREC_BLOCK):
        hits = result.hits[lo:lo + TREC_BLOCK]
        rows = [h[0] for h in hits]
        distinct = unique_rows(np.concatenate(rows)) if rows else np.empty(0, np.int64)
        yield TrecBlock([q.qid for q in questions[lo:lo + TREC_BLOCK]],
                        store.ids(distinct.tolist()),
                        [np.searchsorted(distinct, r) for r in rows],
                        [s.astype(dtype) for _, s in hits])


# ---------------------------------------------------------------------------- qrels

def write_qrels(gold: PathsLike, passages: PathLike, output: PathLike, *,
                oracle: PathLike | None = None, biencoder: PathLike | None = None,
                first_qid: int = 0) -> None:
    """``nqkit convert qrels``: TREC qrels of the gold passages of the questions of
    ``gold`` (qid = ``first_qid`` + the question's line), from the NQ-open oracle's
    contexts matched by content or DPR's positive_ctxs by id, over the corpus
    ``passages``; the counts on stderr, the signature on stdout."""
    from nqkit.errors import InputError, examples, for_example
    from nqkit.formats.dpr import read_dpr_biencoder, read_dpr_passages
    from nqkit.formats.gold_qrels import (
        qrels_from_biencoder,
        qrels_from_oracle,
        question_numbers,
        read_nq_open_oracle,
    )
    from nqkit.formats.trec import read_questions_answers, write_trec_qrels
    from nqkit.io import check_output, expand_paths, write_provenance
    from nqkit.report import progress, say, warn
    from nqkit.retrieval.corpus import CorpusFingerprint, Passage, PassageIds
    from nqkit.signature import make_signature
    from nqkit.splits import question_set

    if (oracle is None) == (biencoder is None):
        raise InputError(None, "give one source of gold passages",
                         "--oracle nq-open-oracle.jsonl.gz or --biencoder biencoder-nq-dev.json")
    source = oracle if oracle is not None else biencoder
    assert source is not None  # one of the two, checked above
    inputs = [*expand_paths(source, what="gold passages"),
              *expand_paths(gold, what="questions"),
              *expand_paths(passages, what="passages TSV")]
    check_output(output, inputs, option="-o")
    questions = [q for q, _ in read_questions_answers(gold)]
    where = examples(expand_paths(gold, what="questions"), width=None)
    qids = question_numbers(questions, where, first_qid)
    fingerprint = CorpusFingerprint()
    ids = PassageIds()  # an id given to two passages would make its qrels name either

    def corpus() -> Iterator[Any]:
        for c in progress(read_dpr_passages(passages), desc="reading the passages",
                          unit="passage"):
            fingerprint.update(Passage(c.id, c.text, c.title))
            ids.add(c.id)
            yield c

    if oracle is not None:
        kind = "nq-open-oracle"
        d = qrels_from_oracle(read_nq_open_oracle(oracle), qids, corpus(),
                              where=str(oracle))
    else:
        kind = "dpr-biencoder"
        d = qrels_from_biencoder(read_dpr_biencoder(source), qids, corpus(),
                                 where=str(source))
    ids.check(expand_paths(passages, what="passages TSV"))
    if d.not_in_questions:
        warn(f"{len(d.not_in_questions):,} of {d.source_questions:,} questions of {source} "
             f"are not in {gold} and get no qrels "
             f"({for_example(map(repr, d.not_in_questions))})")
    if d.unmatched:
        warn(f"{len(d.unmatched):,} of {d.gold_passages:,} gold passages are not in the "
             f"corpus (match:{d.match}); a question none of whose gold passages is there is "
             f"gold unknown ({for_example(map(repr, d.unmatched))})")
    write_trec_qrels(output, d.qrels)
    signature = make_signature("qrels", {"source": kind, "match": d.match,
                                         "corpus": fingerprint.hexdigest()[:12],
                                         "passages": fingerprint.count,
                                         "first-qid": first_qid})
    # the qrels' numbers are lines of these questions: tied to them when read back
    write_provenance(output, signature, questions=question_set(questions,
                                                               first_qid=first_qid))
    say(f"{len(d.qrels):,} qrels for {d.questions_with_gold:,} of {len(questions):,} "
        f"questions ({d.source_questions:,} in the source, {d.without_gold:,} without a gold "
        f"passage); wrote {output}")
    print(signature)


def explain_bm25_runs(settings: Mapping[str, Any]) -> None:
    """``nqkit explain bm25 --index A --index B --gold Q``: the two runs, the explanation,
    printed as a table or JSON with its signature
    (:mod:`nqkit.retrieval.bm25_explain`)."""
    import orjson

    from nqkit.cluster import open_cluster, validate_spec
    from nqkit.errors import InputError
    from nqkit.report import print_warnings
    from nqkit.retrieval.bm25_explain import (
        explain_indexes,
        explanation_json,
        explanation_signature,
        explanation_table,
    )
    from nqkit.retrieval.open_index import load_index
    from nqkit.retrieval.questions import read_questions
    from nqkit.signature import ResultWarning

    s = settings
    validate_spec(s["cluster"])
    if len(s["index"]) != 2:
        raise InputError(None, f"give two --index directories, got {len(s['index'])}",
                         "--index A --index B: the two BM25 runs to explain")
    questions = [q.question for q in read_questions(s["gold"])]
    a, b = (load_index(p) for p in s["index"])
    with open_cluster(s["cluster"], workers=s.get("workers")) as cluster:
        e, _, _ = explain_indexes(a, b, questions, s["hits"], cluster)
    warnings = []
    if not e.reliable:
        warnings.append(ResultWarning("unreproduced", (
            f"the chain of in-memory setups reproduces run A for {e.reproduced_a:,} and run "
            f"B for {e.reproduced_b:,} of {e.questions:,} questions: the lists it does not "
            "reproduce are counted as 'not reproduced', and the other attributions may be "
            "less reliable; please report it")))
    signature = explanation_signature(a, b, s["hits"], questions, warnings)
    print_warnings(warnings)
    if s["format"] == "json":
        print(orjson.dumps(explanation_json(e, signature, warnings),
                           option=orjson.OPT_INDENT_2).decode())
    else:
        print(explanation_table(e, signature))
