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

On those groups :mod:`nqkit.tasks.overlap` scores a system's predictions (with the
task contract's grouped scores, :mod:`nqkit.tasks.groups`); :func:`leak_report` lists
what a test file shares with a training file before a split is published.

The training set is named in every signature by its split fingerprint
(:func:`nqkit.splits.identify`): overlap against DPR's 79,168 training questions and
against NQ-open's 87,925 are different numbers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
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
    "Leak",
    "LeakReport",
    "OverlapAnalysis",
    "OverlapItem",
    "QaRecord",
    "QaSet",
    "compute_overlap",
    "file_digest",
    "leak_report",
    "load_qa_set",
    "overlap_from_annotations",
    "row_order",
    "row_order_warnings",
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
    from nqkit.report import progress

    index = TfidfIndex(list(train_questions))
    out: list[tuple[int | None, float]] = []
    # one sparse product with every training question per test question (79,168 in
    # NQ-open train): seconds to minutes
    for i, q in enumerate(progress(test_questions, desc="nearest training questions",
                                   unit="q")):
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
                             rows: QaSet, label: str,
                             source: Mapping[str, str] | None = None) -> OverlapAnalysis:
    """The labels of an official annotation file, for the questions of ``test``.

    ``rows`` is the test file the annotation ids index (``nq-test.qa.csv``: its 0-based
    lines); the labels reach the questions of ``test`` (which may be ordered otherwise,
    e.g. ``NQ-open.dev.jsonl``) through the question text, normalised as split
    fingerprints normalise it. ``label`` names the annotation file in the signature,
    ``source`` how its labels were made when they are not the human labels (after it).
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
    return OverlapAnalysis(tuple(items), test.split, {"labels": label, **(source or {}),
                                                      "rows": rows.split},
                           tuple(row_order_warnings(rows)))


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
