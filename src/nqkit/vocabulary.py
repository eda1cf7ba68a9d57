"""nqkit's vocabulary: one spelling per concept, declared once.

Every setting that more than one command, task, system or retriever takes is declared
here, once, as a :class:`~nqkit.settings.Param`: its flag, the keyword a library function
takes (``Param.name``), its type, default and help. Everything else uses these
declarations (with :meth:`~nqkit.settings.Param.but` where a command needs another default
or a narrower help); a second ``Param(...)`` call with the same flag anywhere in nqkit is
refused by the tests. :data:`TERMS` ties each declaration to the concept it names and to
the key under which it enters a signature; ``docs/vocabulary.md`` is that table, with the
old spellings every command still accepts (:func:`nqkit.cli.vocabulary_table` builds it
from the commands themselves; a test keeps the two equal).

Old spellings stay accepted for one release, hidden from ``--help``, with a one-line
notice (``deprecated=`` of the declaration, or of a command's use of it).

Only :mod:`nqkit.settings` (``argparse``) is imported here, so ``nqkit --help`` stays
instant.
"""

from __future__ import annotations

from dataclasses import dataclass

from nqkit.settings import Param, float_in, int_in, output_param, positive_int

__all__ = [
    "ALLOW_EXTRA",
    "ALLOW_MISSING",
    "ANNOTATED_TEST",
    "ANNOTATIONS",
    "ANSWER_FIELD",
    "CLUSTER",
    "CONVENTION",
    "DEFAULT_CUTOFFS",
    "EVAL",
    "FIRST_QID",
    "GOLD",
    "GOLD_CACHE",
    "HITS",
    "INDEX",
    "INPUTS",
    "JOBS",
    "JUDGMENTS",
    "LONG_THRESHOLD",
    "MAX_RESAMPLES",
    "NAMES",
    "OUTPUT",
    "PASSAGES",
    "PER_ITEM",
    "PREDICTIONS",
    "QRELS",
    "REGISTRY",
    "RESAMPLES",
    "RETRIEVER",
    "SEED",
    "SHARDS",
    "SHORT_THRESHOLD",
    "TAG",
    "TASK",
    "TERMS",
    "THRESHOLD",
    "TRAIN",
    "TREC",
    "TRIALS",
    "VERDICTS",
    "WORKERS",
    "Term",
]

# The cut-offs k of top-k recall that DPR reports (Karpukhin et al. 2020, Table 2) and
# every retrieval command takes by default.
DEFAULT_CUTOFFS: tuple[int, ...] = (1, 5, 20, 100)

# The most bootstrap resamples any command accepts: far more than a 95% interval needs
# (1,000 to 10,000 is usual), and a bound on the time a mistyped count can cost.
MAX_RESAMPLES = 100_000

# ---------------------------------------------------------------------------- the data

GOLD = Param("gold", "--gold", "the questions and their gold answers: paths, globs or "
             "registry names", required=True, nargs="+", metavar="GOLD",
             deprecated=("--references",), input=True)
PREDICTIONS = Param("predictions", "--predictions", "predictions file", required=True,
                    metavar="FILE", input=True)
TRAIN = Param("train", "--train", "the training questions (a system's training set or "
              "memory; the training set of test-train overlap): paths, globs or registry "
              "names; several files are one set (repeatable)", nargs="+", action="extend",
              metavar="TRAIN", input=True)
PASSAGES = Param("passages", "--passages", "the passage corpus (DPR psgs_w100.tsv format: "
                 "id, text, title; .tsv or .tsv.gz)", metavar="TSV", input=True)
QRELS = Param("qrels", "--qrels", "TREC qrels of gold passages (qid 0 docid rel; qid = "
              "--first-qid + the question's position in --gold; nqkit convert qrels writes "
              "them)", metavar="FILE", input=True)
FIRST_QID = Param("first_qid", "--first-qid", "the query id of the first question, in a "
                  "TREC run and in --qrels (default 0, as Pyserini numbers DPR topics)",
                  default=0, type=int_in(0), metavar="N")
INDEX = Param("index", "--index", "index directory made by `nqkit index build`; give two "
              "for a hybrid run", action="append", metavar="DIR", input=True)
ANNOTATIONS = Param("annotations", "--annotations", "test-train overlap annotations in the "
                    "official format (nq-annotations.jsonl, registry name "
                    "qa-overlap/nq-annotations; or as nqkit overlap labels writes them)",
                    metavar="FILE", input=True)
ANNOTATED_TEST = Param("annotated_test", "--annotated-test", "the test file whose rows the "
                       "ids of --annotations are (NQ: dpr/nq-test.qa)", nargs="+",
                       metavar="ROWS", input=True)
INPUTS = Param("inputs", "inputs", "input files (globs allowed)", nargs="+", metavar="IN",
               input=True)
NAMES = Param("names", "names", "registry names, e.g. nq/dev", nargs="+", metavar="NAME")
REGISTRY = Param("registry", "--registry", "also read datasets from this registry file "
                 "(nqkit's registry JSON, see docs/data.md, or a TSV: dataset file url md5 "
                 "size); repeatable; NQKIT_REGISTRY lists more (':'-separated)", default=[],
                 action="append", metavar="FILE", input=True)
JUDGMENTS = Param("judgments", "--judgments", "human judgments of (question, answer) pairs: "
                  "oqaeval's annotation TSV (Question, Model answer, Acceptable?; annotator "
                  "columns optional)", metavar="TSV", input=True)
VERDICTS = Param("verdicts", "--verdicts", "a judge's verdicts on (question, answer) pairs: "
                 "oqaeval's judge TSV or JSON lines of {question, answer, verdict}",
                 metavar="FILE", input=True)
SHARDS = Param("shards", "--shards", "only these files of a sharded dataset, numbered from "
               "0 like the official names: 0-1, 0,3, 5-7", metavar="SPEC")

# ---------------------------------------------------------------------------- scoring

TASK = Param("task", "--task", "what the files are: the task whose formats they have",
             metavar="TASK")
ALLOW_MISSING = Param("allow_missing", "--allow-missing",
                      "score gold items without a prediction as wrong (default: error)",
                      action="store_true", default=False)
ALLOW_EXTRA = Param("allow_extra", "--allow-extra",
                    "ignore predictions for items not in the gold (default: error)",
                    action="store_true", default=False)
ANSWER_FIELD = Param("answer_field", "--answer-field", "gold field holding the answers "
                     "(default: answer; EfficientQA test: answer_and_def_correct_predictions)",
                     default="answer", metavar="FIELD")
def _convention_names() -> list[str]:
    from nqkit.conventions import convention_names

    return convention_names()


CONVENTION = Param("convention", "--convention", "exact-match rule, by name: {names} "
                   "(default orqa, the official NQ-open rule; each is a module of "
                   "nqkit.conventions, docs/nq-open-ambigqa.md says what it does)",
                   default="orqa", metavar="NAME", names=_convention_names)
def _extractor_names() -> list[str]:
    from nqkit.text.extract import EXTRACTORS

    return list(EXTRACTORS)


EXTRACT = Param("extract", "--extract", "answer extraction from a raw generation before "
                "matching, by name: {names} (default none: the prediction as given; "
                "docs/nq-open-ambigqa.md says what each does)", default="none",
                metavar="NAME", names=_extractor_names)
LONG_THRESHOLD = Param("long_threshold", "--long-threshold", "gold has a long answer when "
                       ">= K annotators gave one (default 2; 1 for 1-way train gold)",
                       default=2, type=positive_int, metavar="K")
SHORT_THRESHOLD = Param("short_threshold", "--short-threshold", "gold has a short answer "
                        "when >= K annotators gave one (default 2; 1 for 1-way train gold)",
                        default=2, type=positive_int, metavar="K")
GOLD_CACHE = Param("gold_cache", "--gold-cache", "read and write the gold annotation cache "
                   "(default; --no-gold-cache to skip it)", action="boolean", default=True,
                   deprecated=("--no-cache",))
TOPK = Param("topk", "--topk", "the cut-offs k of top-k recall (default: "
             f"{' '.join(map(str, DEFAULT_CUTOFFS))})", default=list(DEFAULT_CUTOFFS),
             type=positive_int, nargs="+", metavar="K")
THRESHOLD = Param("threshold", "--threshold", "question-overlap proxy: the TF-IDF cosine "
                  "at or above which the nearest training question counts as a paraphrase "
                  "(default 0.5)", default=0.5, type=float_in(0.0, 1.0), metavar="COS")

# ---------------------------------------------------------------------------- statistics

RESAMPLES = Param("resamples", "--resamples", "bootstrap resamples: 95%% confidence "
                  "intervals of the headline metrics from N resamples (0: none, the "
                  f"default; at most {MAX_RESAMPLES:,})", default=0,
                  type=int_in(0, MAX_RESAMPLES), metavar="N", deprecated=("--bootstrap",))
SEED = Param("seed", "--seed", "seed of the resampling, a non-negative integer (default 0)",
             default=0, type=int_in(0))
TRIALS = Param("trials", "--trials", "approximate randomization trials (default 10000)",
               default=10000, type=positive_int, metavar="N")

# ---------------------------------------------------------------------------- outputs

OUTPUT = output_param("the file to write")
PER_ITEM = Param("per_item", "--per-item", "also write one JSON line per gold item",
                 metavar="FILE", output=True,
                 deprecated=("--per-question", "--per-example", "--ranks"))
TREC = Param("trec", "--trec", "also write the ranking as a TREC run (qid Q0 docid rank "
             "score tag; .gz compresses)", metavar="FILE", output=True)
TAG = Param("tag", "--tag", "TREC run tag (one word; default nqkit-RETRIEVER, with the BM25 "
            "flavour when not the default: nqkit-bm25-lucene-exact)")
HITS = Param("hits", "--hits", "passages (or documents) per question in a run (default 100)",
             default=100, type=positive_int, metavar="K")
EVAL = Param("eval", "--eval", "then score what was written against the gold, as `nqkit "
             "eval` does", action="store_true", default=False)

# ---------------------------------------------------------------------------- running

RETRIEVER = Param("retriever", "--retriever", "the retriever", metavar="NAME")
CLUSTER = Param("cluster", "--cluster", "where shard jobs run: none (this process), local "
                "(a Dask LocalCluster of worker processes, one per core or --workers), or "
                "a scheduler address tcp://HOST:8786 (default: local)", default="local",
                metavar="none|local|tcp://HOST:PORT")
WORKERS = Param("workers", "--workers", "--cluster local: number of worker processes "
                "(default: one per core)", type=positive_int, metavar="N")
JOBS = Param("jobs", "--jobs", "processes working at once (default: one per core)",
             type=positive_int, metavar="N", short="-j")


# ---------------------------------------------------------------------------- the table

@dataclass(frozen=True, slots=True)
class Term:
    """One concept of the vocabulary: its declaration and where it shows."""

    concept: str  # what it is, in a few words
    param: Param  # the declaration: flag and library argument (``param.name``)
    signature: str = ""  # the signature key(s) that carry it ("" : none)


TERMS: tuple[Term, ...] = (
    Term("questions with their gold answers", GOLD, "split (its fingerprint); test in "
         "overlap"),
    Term("a system's predictions", PREDICTIONS),
    Term("training questions", TRAIN, "train"),
    Term("passage corpus", PASSAGES, "corpus (fingerprint), passages (count)"),
    Term("gold passages (TREC qrels)", QRELS, "qrels"),
    Term("query id of the first question", FIRST_QID, "first-qid"),
    Term("index directory", INDEX, "index (digest)"),
    Term("overlap annotations", ANNOTATIONS, "labels"),
    Term("rows the annotation ids refer to", ANNOTATED_TEST, "rows"),
    Term("input files of a conversion", INPUTS),
    Term("dataset names", NAMES),
    Term("an extra dataset registry", REGISTRY),
    Term("some files of a sharded dataset", SHARDS),
    Term("human judgments of answers", JUDGMENTS, "judgments (fingerprint)"),
    Term("a judge's verdicts on answers", VERDICTS, "verdicts (fingerprint)"),
    Term("the task of the files", TASK, "task"),
    Term("missing predictions scored as wrong", ALLOW_MISSING, "missing"),
    Term("extra predictions ignored", ALLOW_EXTRA),
    Term("gold field of the answers", ANSWER_FIELD, "answer-field"),
    Term("exact-match rule", CONVENTION, "em"),
    Term("NQ long-answer gold threshold", LONG_THRESHOLD, "long-thr"),
    Term("NQ short-answer gold threshold", SHORT_THRESHOLD, "short-thr"),
    Term("NQ gold annotation cache", GOLD_CACHE),
    Term("cut-offs of top-k recall", TOPK, "recall keys top-K"),
    Term("question-overlap cosine threshold", THRESHOLD, "qproxy, near"),
    Term("bootstrap resamples", RESAMPLES, "resamples"),
    Term("seed of the resampling", SEED, "seed"),
    Term("approximate randomization trials", TRIALS, "trials"),
    Term("the file written", OUTPUT),
    Term("per-item records written", PER_ITEM),
    Term("TREC run written", TREC),
    Term("TREC run tag", TAG),
    Term("run depth (hits per question)", HITS),
    Term("score after writing", EVAL),
    Term("retriever", RETRIEVER, "retriever"),
    Term("where shard jobs run", CLUSTER),
    Term("worker processes of a local cluster", WORKERS),
    Term("processes working at once", JOBS),
)

