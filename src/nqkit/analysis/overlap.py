"""Test-train overlap: which test questions a model may have memorised, and its score on each part.

Lewis, Stenetorp and Riedel (2021), "Question and Answer Test-Train Overlap in
Open-Domain Question Answering Datasets" (EACL), split a test set three ways:

* **answer overlap** (§2): a test question overlaps when at least one of its gold
  answers, normalised, equals a normalised answer of *any* training question (63.6% of
  NQ-open's 3,610 test questions against the 87,925 NQ-open training questions). Computed
  here exactly, against whatever training file is given, with SQuAD normalisation
  (:func:`nqkit.text.normalize.normalize_answer`, the normalisation of the QA-Overlap
  evaluation) by default;
* **question overlap** (§3): a test question is a paraphrase of a training question.
  The paper's labels are human judgements of about 1,000 questions per test set
  (annotators compared each with the training questions sharing its answer). Without
  them nqkit offers an automatic **proxy**, and names it as one: the nearest training
  question by cosine similarity of TF-IDF vectors of lower-cased word unigrams and bigrams
  (:class:`nqkit.text.tfidf.TfidfIndex`: sublinear tf, smoothed idf,
  L2-normalised), searched among the training questions that share a normalised answer
  with the test question (``scope="same-answer"``, the paper's protocol) or among all of
  them (``scope="all"``); the test question overlaps when that similarity is at least
  the threshold. The human labels are read from the official annotation file
  (:func:`overlap_from_annotations`) when a user has it;
* **answer overlap only**: answer overlap without question overlap.

On those groups :func:`score_groups` reports any per-question metric with bootstrap
intervals and the difference between complementary groups; :func:`leak_report` lists
what a test file shares with a training file before a split is published.

The training set is named in every signature by its split fingerprint
(:func:`nqkit.splits.identify`): overlap against DPR's 79,168 training questions and
against NQ-open's 87,925 are different numbers.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nqkit.errors import InputError, examples
from nqkit.formats.qa_files import QaRecord, is_qa_file, iter_qa_file
from nqkit.formats.qa_overlap import LABELS, OverlapAnnotation, check_rows
from nqkit.io import PathLike, PathsLike, expand_paths
from nqkit.signature import ResultWarning, make_signature
from nqkit.text.normalize import normalize_answer, normalize_answer_nfd
from nqkit.text.tfidf import TfidfIndex

__all__ = [
    "ANSWER_NORMS",
    "DIFFERENCES",
    "GROUPS",
    "NQ_TEST_ROW_ORDER",
    "PROXY",
    "SCOPES",
    "GroupDifference",
    "GroupScore",
    "Leak",
    "LeakReport",
    "OverlapAnalysis",
    "OverlapItem",
    "OverlapScores",
    "QaRecord",
    "QaSet",
    "ambigqa_item_scores",
    "compute_overlap",
    "file_digest",
    "leak_report",
    "load_qa_set",
    "nq_open_item_scores",
    "overlap_from_annotations",
    "row_order",
    "row_order_warnings",
    "score_groups",
]

# answer normalisations by name: squad (the QA-Overlap evaluation's), orqa (NFD first)
ANSWER_NORMS: dict[str, Callable[[str], str]] = {"squad": normalize_answer,
                                                 "orqa": normalize_answer_nfd}
SCOPES = ("same-answer", "all")
PROXY = "tfidf-cos"  # the question-overlap proxy's name in signatures
# the official labels, then one extension: neither question nor answer overlap (the
# paper's Table 3 row "No overlap")
GROUPS: tuple[str, ...] = (*LABELS, "no_overlap")
# the differences reported between complementary groups: (group, minus group)
DIFFERENCES: tuple[tuple[str, str], ...] = (
    ("question_overlap", "no_question_overlap"),
    ("answer_overlap", "no_answer_overlap"),
    ("answer_overlap_only", "no_overlap"),
)


# --------------------------------------------------------------------------- inputs

@dataclass(frozen=True)
class QaSet:
    """The records of one or more question-answer files, in file order."""

    records: tuple[QaRecord, ...]
    files: tuple[str, ...]  # the files read
    split: str  # the split label of the questions (nqkit.splits.identify)

    @property
    def questions(self) -> list[str]:
        return [r.question for r in self.records]

    def __len__(self) -> int:
        return len(self.records)


def _read_qa_file(path: Path) -> Iterable[QaRecord]:
    if not is_qa_file(path):
        raise InputError(path, "unknown question-answer file type",
                         "give NQ-open / EfficientQA .jsonl, DPR .qa.tsv / .qa.csv or AmbigNQ "
                         ".json files (or a registry name such as nq-open/train)")
    return iter_qa_file(path)


def load_qa_set(paths: PathsLike, *, what: str = "input") -> QaSet:
    """Read question-answer files of any supported format (paths, globs or registry
    names): NQ-open / EfficientQA JSON lines, DPR ``*.qa.tsv`` / ``*.qa.csv``, AmbigNQ
    JSON (the answers of every annotation and every disambiguated pair)."""
    from nqkit.splits import identify

    files = expand_paths(paths, what=what)
    records = [r for f in files for r in _read_qa_file(f)]
    if not records:
        raise InputError(examples(files, width=None), f"the {what} files hold no question",
                         f"give non-empty {what} files")
    return QaSet(tuple(records), tuple(str(f) for f in files),
                 identify(r.question for r in records))


# The question order of nq-test.qa.csv (DPR's NQ test file, 3,610 lines), whose 0-based
# lines the ids of QA-Overlap's nq-annotations.jsonl are: row_order() of its questions.
NQ_TEST_ROW_ORDER = "cdb7ff6e5f87d742"


def row_order(questions: Iterable[str]) -> str:
    """16 hex digits naming a sequence of questions (normalised as split fingerprints
    normalise them): equal for two files exactly when their questions come in one order."""
    from nqkit.splits import normalize_key

    text = "\n".join(normalize_key(q) for q in questions)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def row_order_warnings(rows: QaSet) -> list[ResultWarning]:
    """A ``row-order`` warning when ``rows`` (the file annotation ids are rows of) holds the
    NQ-open test questions in another order than ``nq-test.qa.csv``: the official NQ
    annotations would then label the wrong questions."""
    if rows.split != "nq-open/dev" or row_order(rows.questions) == NQ_TEST_ROW_ORDER:
        return []
    return [ResultWarning(
        "row-order", f"{examples(rows.files, width=None)} holds the questions of nq-open/dev "
        "in another order than nq-test.qa.csv, whose 0-based rows the ids of the official "
        "nq-annotations.jsonl are: with that file every label would reach the wrong question "
        "— give dpr/nq-test.qa (nq-test.qa.csv) as the annotated test file, unless the "
        "annotations were made for this order")]


def file_digest(path: PathLike) -> str:
    """The first 12 hex digits of a file's SHA-256 (names an annotation file)."""
    from nqkit.io import sha256_file

    return sha256_file(Path(path))[:12]


# --------------------------------------------------------------------------- overlap

@dataclass(frozen=True, slots=True)
class OverlapItem:
    """What one test question shares with the training set, and its labels."""

    row: int  # 0-based position in the test file
    question: str
    answers: tuple[str, ...]
    answer_overlap: bool | None  # None: not known (an annotation file without the label)
    shared_answers: tuple[str, ...]  # the test answers found among the training answers
    question_overlap: bool | None  # None: not judged (human labels cover a subset)
    nearest_row: int | None  # the nearest training question (proxy), None without one
    nearest_question: str | None
    similarity: float | None  # its TF-IDF cosine
    labels: tuple[str, ...]  # among GROUPS


def _labels(answer: bool | None, question: bool | None) -> tuple[str, ...]:
    out = ["total"]
    if question is not None:
        out.append("question_overlap" if question else "no_question_overlap")
    if answer is not None:
        out.append("answer_overlap" if answer else "no_answer_overlap")
    if answer and question is False:
        out.append("answer_overlap_only")
    if answer is False and question is False:
        out.append("no_overlap")
    return tuple(out)


@dataclass(frozen=True)
class OverlapAnalysis:
    """The labels of every test question and the settings that produced them."""

    items: tuple[OverlapItem, ...]
    test: str  # split label of the test questions
    source: dict[str, str]  # signature fields: how the labels were made
    warnings: tuple[ResultWarning, ...] = ()  # what limits the meaning of the labels

    def members(self, group: str) -> np.ndarray:
        """Indexes of the items in ``group``."""
        return np.array([i for i, it in enumerate(self.items) if group in it.labels],
                        dtype=np.int64)

    def counts(self) -> dict[str, int]:
        return {g: len(self.members(g)) for g in GROUPS}

    def signature(self) -> str:
        return make_signature("overlap", {"test": self.test, **self.source}, self.warnings)

    def to_annotations(self) -> list[dict[str, Any]]:
        """The labels in the official annotation format (``no_overlap`` left out)."""
        return [{"id": it.row, "labels": [x for x in it.labels if x in LABELS]}
                for it in self.items]


def _answer_index(train: QaSet, norm: Callable[[str], str]) -> dict[str, list[int]]:
    """Normalised training answer -> the training rows that have it."""
    index: dict[str, list[int]] = {}
    for j, r in enumerate(train.records):
        for a in dict.fromkeys(norm(x) for x in r.answers):
            index.setdefault(a, []).append(j)
    return index


def _nearest(test_questions: Sequence[str], train_questions: Sequence[str],
             candidates: Sequence[np.ndarray] | None) -> list[tuple[int | None, float]]:
    """For each test question, the most similar training question (lowest row among
    ties) and its TF-IDF cosine, within its candidates when given."""
    index = TfidfIndex(list(train_questions))
    out: list[tuple[int | None, float]] = []
    for i, q in enumerate(test_questions):
        s = index.scores(q)
        if candidates is None:
            j = int(np.argmax(s))
        else:
            c = candidates[i]
            if not len(c):
                out.append((None, 0.0))
                continue
            j = int(c[int(np.argmax(s[c]))])  # candidates ascending: the lowest row on ties
        out.append((j, float(s[j])))
    return out


def compute_overlap(test: QaSet, train: QaSet, *, answer_norm: str = "squad",
                    threshold: float = 0.5, scope: str = "same-answer") -> OverlapAnalysis:
    """Answer overlap (exact, Lewis et al. §2) and the question-overlap proxy of every
    test question against ``train`` (see the module docstring)."""
    if answer_norm not in ANSWER_NORMS:
        raise InputError(None, f"unknown answer normalisation {answer_norm!r}",
                         f"choose one of: {', '.join(ANSWER_NORMS)}")
    if scope not in SCOPES:
        raise InputError(None, f"unknown question-overlap scope {scope!r}",
                         f"choose one of: {', '.join(SCOPES)}")
    if not 0.0 < threshold <= 1.0:
        raise InputError(None, f"the similarity threshold must be in (0, 1], found {threshold}",
                         "a cosine threshold such as 0.5")
    norm = ANSWER_NORMS[answer_norm]
    index = _answer_index(train, norm)
    shared: list[tuple[str, ...]] = []
    candidates: list[np.ndarray] = []
    for r in test.records:
        found = tuple(a for a in r.answers if norm(a) in index)
        shared.append(found)
        if scope == "same-answer":
            rows = sorted({j for a in found for j in index[norm(a)]})
            candidates.append(np.asarray(rows, dtype=np.int64))
    near = _nearest(test.questions, train.questions,
                    candidates if scope == "same-answer" else None)
    items = []
    for i, (r, found, (j, sim)) in enumerate(zip(test.records, shared, near, strict=True)):
        answer = bool(found)
        question = j is not None and sim >= threshold
        items.append(OverlapItem(
            i, r.question, r.answers, answer, found, question, j,
            train.records[j].question if j is not None else None,
            sim if j is not None else None, _labels(answer, question)))
    warnings = []
    # by the definition an answer that normalises to "" ("---", ")") equals any other such
    # answer: counted, as the definition counts it, and said
    empty = [it.question for it in items
             if it.shared_answers and all(norm(a) == "" for a in it.shared_answers)]
    if empty:
        warnings.append(ResultWarning(
            "empty-answer-overlap", f"{len(empty):,} test question(s) have answer overlap only "
            "through a gold answer that normalises to the empty string, as a training answer "
            f"does ({examples(empty, quote=True)}); counted, as the definition counts them"))
    return OverlapAnalysis(tuple(items), test.split, {
        "train": train.split, "answers": answer_norm,
        "qproxy": f"{PROXY}>={threshold:g}", "qscope": scope}, tuple(warnings))


def overlap_from_annotations(test: QaSet, annotations: Iterable[OverlapAnnotation], *,
                             rows: QaSet, label: str) -> OverlapAnalysis:
    """The labels of an official annotation file, for the questions of ``test``.

    ``rows`` is the test file the annotation ids index (``nq-test.qa.csv``: its 0-based
    lines); the labels reach the questions of ``test`` (which may be ordered otherwise,
    e.g. ``NQ-open.dev.jsonl``) through the question text, normalised as split
    fingerprints normalise it. ``label`` names the annotation file in the signature.
    """
    from nqkit.splits import normalize_key

    anns = list(annotations)
    check_rows((a.id for a in anns), len(rows), "annotations",
               anns[0].where if anns else None)
    by_key: dict[str, OverlapAnnotation] = {}
    by_id = {a.id: a for a in anns}
    for i, r in enumerate(rows.records):
        by_key[normalize_key(r.question)] = by_id[i]
    absent = [r.question for r in test.records if normalize_key(r.question) not in by_key]
    if absent:
        raise InputError(None, f"{len(absent):,} of {len(test):,} test questions are not in "
                         f"the annotated test file ({examples(absent, quote=True)})",
                         "score the predictions of the test set the annotations were made "
                         "for (NQ: the questions of dpr/nq-test.qa = nq-open/dev)")
    items = []
    for i, r in enumerate(test.records):
        a = by_key[normalize_key(r.question)]
        answer = (True if "answer_overlap" in a.labels else False
                  if "no_answer_overlap" in a.labels else None)
        question = (True if "question_overlap" in a.labels else False
                    if "no_question_overlap" in a.labels else None)
        labels = tuple(x for x in a.labels if x in LABELS)
        if answer is False and question is False:
            labels = (*labels, "no_overlap")
        items.append(OverlapItem(i, r.question, r.answers, answer, (), question, None, None,
                                 None, labels))
    return OverlapAnalysis(tuple(items), test.split, {"labels": label, "rows": rows.split},
                           tuple(row_order_warnings(rows)))


# --------------------------------------------------------------------------- scores

@dataclass(frozen=True, slots=True)
class GroupScore:
    """One metric on one group."""

    group: str
    metric: str
    n: int
    score: float | None  # mean over the group's questions, None for an empty group
    low: float | None = None  # bootstrap 95% interval, when asked for
    high: float | None = None


@dataclass(frozen=True, slots=True)
class GroupDifference:
    """``score(group) - score(minus)`` for one metric, with its bootstrap interval (the
    whole test set resampled, so that group sizes vary as they would in a new sample)."""

    group: str
    minus: str
    metric: str
    difference: float
    low: float | None = None
    high: float | None = None


@dataclass
class OverlapScores:
    """Every metric on every group, and the differences between complementary groups."""

    analysis: OverlapAnalysis
    metrics: tuple[str, ...]
    scores: list[GroupScore]
    differences: list[GroupDifference]
    signature: str
    per_item: dict[str, np.ndarray]  # metric -> score of each item
    resamples: int = 0
    seed: int = 0
    warnings: list[ResultWarning] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # the task's own numbers

    def score(self, group: str, metric: str) -> GroupScore:
        return next(s for s in self.scores if s.group == group and s.metric == metric)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.warnings:
            out["warnings"] = [w.to_json() for w in self.warnings]
        groups: dict[str, Any] = {}
        for s in self.scores:
            g = groups.setdefault(s.group, {"n": s.n})
            g[s.metric] = s.score
            if s.low is not None:
                g.setdefault("ci95", {})[s.metric] = [s.low, s.high]
        out["groups"] = groups
        out["differences"] = [
            {"group": d.group, "minus": d.minus, "metric": d.metric,
             "difference": d.difference,
             **({"ci95": [d.low, d.high]} if d.low is not None else {})}
            for d in self.differences]
        if self.resamples:
            out["bootstrap"] = {"resamples": self.resamples, "seed": self.seed,
                                "confidence": 0.95}
        out.update(self.extra)
        out["signature"] = self.signature
        return out

    def item_records(self) -> list[dict[str, Any]]:
        """One JSON record per test question: its labels, overlap evidence and scores."""
        out = []
        for i, it in enumerate(self.analysis.items):
            rec: dict[str, Any] = {
                "row": it.row, "question": it.question, "answers": list(it.answers),
                "labels": list(it.labels), "shared_answers": list(it.shared_answers),
                "nearest_train_row": it.nearest_row,
                "nearest_train_question": it.nearest_question,
                "similarity": it.similarity}
            rec.update({m: float(v[i]) for m, v in self.per_item.items()})
            out.append(rec)
        return out


def _difference(scores: np.ndarray, a: np.ndarray, b: np.ndarray, n: int) -> Any:
    from nqkit.stats import ItemStats

    in_a = np.zeros(n)
    in_a[a] = 1.0
    in_b = np.zeros(n)
    in_b[b] = 1.0

    def compute(sums: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return sums[..., 0] / sums[..., 1] - sums[..., 2] / sums[..., 3]

    return ItemStats(np.stack([scores * in_a, in_a, scores * in_b, in_b], axis=1), compute)


def score_groups(analysis: OverlapAnalysis, per_item: Mapping[str, Any], *,
                 bootstrap: int = 0, seed: int = 0, settings: Mapping[str, object] = {},
                 warnings: Sequence[ResultWarning] = ()) -> OverlapScores:
    """Each metric's mean on each group of ``analysis`` (``per_item``: metric -> one
    score per test question, in the analysis' order), with percentile bootstrap 95%
    intervals from ``bootstrap`` resamples (each group resampled on its own) and the
    differences of :data:`DIFFERENCES` (the whole test set resampled). ``settings`` are
    the scoring's own signature fields (task, conventions, missing policy)."""
    from nqkit.stats import bootstrap_interval, interval_warnings

    n = len(analysis.items)
    arrays = {m: np.asarray(v, dtype=np.float64) for m, v in per_item.items()}
    for m, v in arrays.items():
        if v.shape != (n,):
            raise ValueError(f"{m}: {v.shape[0]} scores for {n} test questions")
    members = {g: analysis.members(g) for g in GROUPS}
    scores: list[GroupScore] = []
    intervals = {}
    for g in GROUPS:
        idx = members[g]
        for m, v in arrays.items():
            if not len(idx):
                scores.append(GroupScore(g, m, 0, None))
                continue
            score = float(v[idx].mean())
            if bootstrap:
                iv = bootstrap_interval(v[idx], resamples=bootstrap, seed=seed)
                intervals[f"{m} on {g}"] = iv
                scores.append(GroupScore(g, m, len(idx), score, iv.low, iv.high))
            else:
                scores.append(GroupScore(g, m, len(idx), score))
    diffs = []
    undefined: list[str] = []  # differences some resample leaves without one of its groups
    for a, b in DIFFERENCES:
        if not len(members[a]) or not len(members[b]):
            continue
        for m, v in arrays.items():
            d = float(v[members[a]].mean() - v[members[b]].mean())
            if bootstrap:
                iv = bootstrap_interval(_difference(v, members[a], members[b], n),
                                        resamples=bootstrap, seed=seed)
                if np.isfinite(iv.low) and np.isfinite(iv.high):
                    diffs.append(GroupDifference(a, b, m, d, iv.low, iv.high))
                    continue
                undefined.append(f"{a} - {b}")
            diffs.append(GroupDifference(a, b, m, d))
    out_warnings = [*analysis.warnings, *warnings]
    if undefined:
        out_warnings.append(ResultWarning(
            "no-interval", f"{', '.join(dict.fromkeys(undefined))}: no interval, since some "
            "resamples of the test set hold no question of one of the two groups (a group "
            "too small to resample) — score more questions or give the difference without "
            "an interval"))
    empty = [g for g in ("question_overlap", "answer_overlap") if not len(members[g])]
    if empty:
        out_warnings.append(ResultWarning(
            "empty-group", f"no test question is in {' or '.join(empty)}: those groups have "
            "no score"))
    few = [w for w in interval_warnings(intervals)] if bootstrap else []
    out_warnings.extend(few)
    sig = make_signature("overlap", {"test": analysis.test, **analysis.source, **settings},
                         out_warnings)
    return OverlapScores(analysis, tuple(arrays), scores, diffs, sig, arrays, bootstrap,
                         seed, out_warnings)


# --------------------------------------------------------------------------- leak report

@dataclass(frozen=True, slots=True)
class Leak:
    """One test question that a training file shares something with."""

    test_row: int
    test_question: str
    train_row: int | None
    train_question: str | None
    detail: str  # the shared answer, or the similarity


@dataclass(frozen=True)
class LeakReport:
    """What a test file shares with a training file."""

    test: QaSet
    train: QaSet
    exact_questions: list[Leak]  # same question after fingerprint normalisation
    answer_overlap: list[Leak]  # a normalised gold answer among the training answers
    near_questions: list[Leak]  # TF-IDF cosine >= threshold, not an exact duplicate
    threshold: float
    signature: str

    def counts(self) -> dict[str, int]:
        return {"test_questions": len(self.test), "train_questions": len(self.train),
                "exact_question_duplicates": len(self.exact_questions),
                "answer_overlap": len(self.answer_overlap),
                "near_duplicate_questions": len(self.near_questions)}

    def to_json(self, limit: int | None = None) -> dict[str, Any]:
        def rows(leaks: list[Leak]) -> list[dict[str, Any]]:
            return [{"test_row": x.test_row, "test_question": x.test_question,
                     "train_row": x.train_row, "train_question": x.train_question,
                     "detail": x.detail} for x in leaks[:limit]]

        return {"test": self.test.split, "train": self.train.split, **self.counts(),
                "examples": {"exact_question_duplicates": rows(self.exact_questions),
                             "answer_overlap": rows(self.answer_overlap),
                             "near_duplicate_questions": rows(self.near_questions)},
                "signature": self.signature}


def leak_report(test: QaSet, train: QaSet, *, threshold: float = 0.8,
                answer_norm: str = "squad") -> LeakReport:
    """Exact duplicate questions (normalised as split fingerprints are), test questions
    with answer overlap, and near-duplicate questions (the nearest training question of
    any answer with TF-IDF cosine at least ``threshold``) between two files."""
    from nqkit.splits import normalize_key

    if not 0.0 < threshold <= 1.0:
        raise InputError(None, f"the similarity threshold must be in (0, 1], found {threshold}",
                         "a cosine threshold such as 0.8")
    if answer_norm not in ANSWER_NORMS:
        raise InputError(None, f"unknown answer normalisation {answer_norm!r}",
                         f"choose one of: {', '.join(ANSWER_NORMS)}")
    norm = ANSWER_NORMS[answer_norm]
    train_keys: dict[str, int] = {}
    answers: dict[str, int] = {}
    for k, r in enumerate(train.records):
        train_keys.setdefault(normalize_key(r.question), k)
        for a in r.answers:
            answers.setdefault(norm(a), k)
    exact, shared, near = [], [], []
    for i, r in enumerate(test.records):
        same = train_keys.get(normalize_key(r.question))
        if same is not None:
            exact.append(Leak(i, r.question, same, train.records[same].question,
                              "same question"))
        hit = next((a for a in r.answers if norm(a) in answers), None)
        if hit is not None:
            k = answers[norm(hit)]
            shared.append(Leak(i, r.question, k, train.records[k].question, hit))
    exact_rows = {x.test_row for x in exact}
    for i, (j, sim) in enumerate(_nearest(test.questions, train.questions, None)):
        if j is not None and sim >= threshold and i not in exact_rows:
            near.append(Leak(i, test.records[i].question, j, train.records[j].question,
                             f"{sim:.3f}"))
    near.sort(key=lambda x: -float(x.detail))
    sig = make_signature("overlap-leak", {"test": test.split, "train": train.split,
                                          "questions": "nfkc-casefold",
                                          "answers": answer_norm,
                                          "near": f"{PROXY}>={threshold:g}"})
    return LeakReport(test, train, exact, shared, near, threshold, sig)



# --------------------------------------------------------------------------- predictions

TASKS = ("nq-open", "ambigqa")  # prediction formats: NQ-open / EfficientQA, AmbigQA


def nq_open_item_scores(test: QaSet, predictions: PathLike, *, allow_missing: bool = False,
                        conventions: Sequence[str] | None = None,
                        ) -> tuple[dict[str, np.ndarray], dict[str, object],
                                   list[ResultWarning]]:
    """Per-question exact match under each named convention
    (:mod:`nqkit.metrics.em_conventions`) and SQuAD token F1 (max over the gold answers)
    of NQ-open / EfficientQA predictions ``{"question", "prediction"}``, joined to the
    test questions by question string as the official NQ-open evaluation joins them.

    Returns the scores (metric -> array in test order), the signature fields and the
    metric's warnings (missing predictions, another split: as ``nqkit eval nq-open``).
    """
    import os

    from nqkit.formats.nq_open import NqOpenExample, read_nq_open_predictions
    from nqkit.metrics.em_conventions import CONVENTIONS, get_convention
    from nqkit.metrics.nq_open import score_nq_open
    from nqkit.metrics.qa_overlap import squad_f1

    counts = Counter(r.question for r in test.records)
    repeats = [q for q, c in counts.items() if c > 1]
    if repeats:
        raise InputError(test.files[0], f"{len(repeats):,} test questions appear twice "
                         f"({examples(repeats, quote=True)}), so predictions joined by "
                         "question cannot tell them apart", "remove the duplicate lines")
    # the official rule first, then the others by name
    default = sorted(CONVENTIONS.names(), key=lambda n: (n != "orqa", n))
    names = list(dict.fromkeys(get_convention(c).name for c in (conventions or default)))
    refs = [NqOpenExample(r.question, r.answers, r.where) for r in test.records]
    preds = list(read_nq_open_predictions(predictions))
    where = os.fspath(predictions)
    out: dict[str, np.ndarray] = {}
    warnings: list[ResultWarning] = []
    result = None
    for name in names:
        result = score_nq_open(refs, preds, missing="wrong" if allow_missing else "error",
                               convention=name, where=where)
        out[f"EM {name}"] = np.array([it.correct for it in result.items], dtype=np.float64)
        for w in result.warnings:
            if w.code not in {x.code for x in warnings}:
                warnings.append(w)
    assert result is not None  # at least one convention
    out["F1 squad"] = np.array(
        [max(squad_f1(it.prediction, g) for g in it.answers) if it.prediction is not None
         else 0.0 for it in result.items], dtype=np.float64)
    settings: dict[str, object] = {
        "task": "nq-open", "em": "+".join(names), "f1": "squad",
        "missing": "wrong" if allow_missing else "error"}
    if result.missing_predictions:
        warnings.append(ResultWarning(
            "missing", f"{result.missing_predictions:,} of {result.num_total:,} test "
            "questions have no prediction and are scored wrong"))
    return out, settings, warnings


def ambigqa_item_scores(test_paths: PathsLike, test: QaSet, predictions: PathLike, *,
                        allow_missing: bool = False,
                        ) -> tuple[dict[str, np.ndarray], dict[str, object],
                                   list[ResultWarning]]:
    """Per-question F1_ans (the official AmbigQA metric, Min et al. 2020 §3.2) of AmbigQA
    predictions ``{id: [answers]}``, joined by id, in the order of ``test``."""
    from nqkit.formats.ambignq import read_ambignq, read_ambigqa_predictions
    from nqkit.metrics.ambigqa import score_ambigqa

    refs = [ex for f in expand_paths(test_paths, what="test") for ex in read_ambignq(f)]
    if any(r.id is None for r in test.records):
        raise InputError(test.files[0], "AmbigQA predictions are keyed by id, and the test "
                         "file has no ids", "give the AmbigNQ file the predictions were "
                         "made for (e.g. dev_light.json)")
    result = score_ambigqa(refs, read_ambigqa_predictions(predictions),
                           missing="empty" if allow_missing else "error")
    scores = np.array([result.per_example[str(r.id)]["F1 answer"] for r in test.records],
                      dtype=np.float64)
    warnings = list(result.warnings)
    if result.missing:
        warnings.append(ResultWarning(
            "missing", f"{len(result.missing):,} of {result.num_examples:,} test questions "
            "have no prediction and score 0"))
    return ({"F1 answer": scores},
            {"task": "ambigqa", "f1": "ambigqa-answer",
             "missing": "empty" if allow_missing else "error"}, warnings)
