"""The test-train overlap evaluation (Lewis et al. 2021): a system's scores by overlap group.

``nqkit overlap score``, ``official``, ``labels`` and ``leak`` declare themselves in
:mod:`nqkit.commands.overlap` and call this module. The labels come from
:mod:`nqkit.analysis.overlap` (computed against a training set, or read from an official
annotation file); the per-question scores from the metrics the tasks use (exact match
under each named convention and SQuAD F1 for NQ-open / EfficientQA predictions, F1_ans
for AmbigQA); the scores by group, their bootstrap intervals and the differences between
complementary groups from the task contract's grouped scores
(:func:`nqkit.tasks.groups.score_groups`), so ``--resamples N --seed S`` mean what they
mean in ``nqkit eval``.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nqkit.errors import InputError, examples
from nqkit.settings import Param, format_param, int_in
from nqkit.signature import ResultWarning
from nqkit.vocabulary import (
    ALLOW_EXTRA,
    ALLOW_MISSING,
    ANNOTATED_TEST,
    ANNOTATIONS,
    CONVENTION,
    GOLD,
    OUTPUT,
    PER_ITEM,
    PREDICTIONS,
    RESAMPLES,
    SEED,
    TASK,
    THRESHOLD,
    TRAIN,
)

if TYPE_CHECKING:
    import numpy as np

    from nqkit.analysis.overlap import OverlapAnalysis, QaSet
    from nqkit.io import PathLike, PathsLike
    from nqkit.tasks.groups import GroupDifference, GroupScore

__all__ = [
    "LABELS_PARAMS",
    "LEAK_PARAMS",
    "OFFICIAL_PARAMS",
    "SCORE_PARAMS",
    "OverlapScores",
    "ambigqa_item_scores",
    "emit_leak",
    "emit_official",
    "emit_scores",
    "leak_files",
    "nq_open_item_scores",
    "overlap_groups",
    "score_overlap",
    "score_predictions",
    "scores_rows",
    "scores_table",
    "write_labels",
]

# ---------------------------------------------------------------------------- settings

# the test questions: --gold, as everywhere (--test was its spelling here)
TEST = GOLD.but(help="the test questions: NQ-open / EfficientQA .jsonl, DPR .qa.tsv/.qa.csv "
                "or AmbigNQ .json (paths, globs or registry names)",
                deprecated=("--test", "--references"))
OVERLAP_TRAIN = TRAIN.but(help="the training questions the model saw (same formats; "
                          "several files are one set), e.g. nq-open/train or "
                          "dpr/nq-train.qa")
SCOPE = Param("scope", "--scope", "question-overlap proxy: search the training questions "
              "that share a normalised answer (same-answer, default: the paper's protocol) "
              "or all of them", default="same-answer", choices=("same-answer", "all"))
ANSWER_NORM = Param("answer_norm", "--answer-norm", "answer normalisation of the answer "
                    "overlap: squad (default, as the QA-Overlap evaluation) or orqa (NFD "
                    "first)", default="squad", choices=("squad", "orqa"))


def _published_conventions() -> list[str]:
    """The conventions scored when none is named: the published rules (``equiv``, nqkit's
    own, only by name)."""
    from nqkit.conventions import convention_names

    return convention_names(published=True)


# where the labels come from: computed against --train, or the official annotations
LABEL_SOURCE = (
    OVERLAP_TRAIN,
    ANNOTATIONS.but(help="official annotation file (nq-annotations.jsonl, registry name "
                    "qa-overlap/nq-annotations) instead of --train"),
    ANNOTATED_TEST.but(help="the test file whose rows the annotation ids are (NQ: "
                       "dpr/nq-test.qa)"),
)
SCORE_PARAMS = (
    TEST,
    PREDICTIONS.but(help="predictions: NQ-open / EfficientQA JSON lines "
                    '{"question", "prediction"} or AmbigQA {id: [answers]}'),
    *LABEL_SOURCE,
    TASK.but(help="prediction format: nq-open (also EfficientQA), ambigqa, or auto "
             "(default: ambigqa for AmbigNQ .json test files)", default="auto",
             choices=("auto", "nq-open", "ambigqa"), metavar=None),
    CONVENTION.but(help="NQ-open exact-match convention (repeatable; default: every "
                   "published one: {names}; nqkit's own equiv by name); not for AmbigQA, "
                   "scored by F1_ans", action="append", default=None,
                   names=_published_conventions),
    THRESHOLD, SCOPE, ANSWER_NORM,
    ALLOW_MISSING.but(help="score test questions without a prediction as wrong (default: "
                      "error)"),
    ALLOW_EXTRA.but(help="ignore predictions for questions not in the test set (default: "
                    "error)"),
    RESAMPLES.but(help="95%% intervals from N bootstrap resamples (0: none)"),
    SEED,
    format_param("table", "json"),
    PER_ITEM.but(help="also write one JSON line per test question (labels, shared answers, "
                 "nearest training question, scores)"),
)
OFFICIAL_PARAMS = (
    ANNOTATIONS.but(help="annotation file in the official format", required=True),
    GOLD.but(help="the test file the ids are rows of (NQ: nq-test.qa.csv, registry name "
             "dpr/nq-test.qa)"),
    PREDICTIONS.but(help="row-ordered predictions"),
    format_param("table", "json", "official"),
)
LABELS_PARAMS = (
    TEST, OVERLAP_TRAIN.but(required=True), THRESHOLD, SCOPE, ANSWER_NORM,
    OUTPUT.but(help="annotation file to write (.jsonl)"),
)
LEAK_PARAMS = (
    GOLD.but(help="the test file(s) (any supported format, or a registry name)",
             required=False, deprecated=("--test",)),
    TRAIN.but(help="the training file(s)"),
    THRESHOLD.but(help="near-duplicate TF-IDF cosine (default 0.8)", default=0.8),
    ANSWER_NORM,
    Param("examples", "--examples", "examples shown per kind (default 5)", default=5,
          type=int_in(0), metavar="N"),
    format_param("table", "json"),
    # the earlier positional TEST TRAIN..., hidden
    Param("legacy", "legacy", argparse.SUPPRESS, nargs="*"),
)


# ---------------------------------------------------------------------------- labels

def _check_label_source(train: Any, annotations: Any, annotated_test: Any) -> None:
    """Exactly one source of labels: --train, or --annotations with --annotated-test."""
    from nqkit.errors import InputError

    if (train is None) == (annotations is None):
        raise InputError(None, "give either --train (labels computed against the training "
                         "set) or --annotations with --annotated-test (the official labels)",
                         "e.g. --train nq-open/train, or --annotations nq-annotations.jsonl "
                         "--annotated-test dpr/nq-test.qa")
    if annotations is not None and annotated_test is None:
        raise InputError(None, "--annotations needs --annotated-test: the test file its ids "
                         "are rows of", "for NQ: --annotated-test dpr/nq-test.qa "
                         "(nq-test.qa.csv)")


def overlap_groups(test: QaSet, *, train: PathsLike | None = None,
                   annotations: PathLike | None = None,
                   annotated_test: PathsLike | None = None, answer_norm: str = "squad",
                   threshold: float = 0.5, scope: str = "same-answer") -> OverlapAnalysis:
    """The overlap labels of the test questions: computed against ``train``, or read from
    ``annotations`` whose ids are rows of ``annotated_test``."""
    from nqkit.analysis.overlap import (
        compute_overlap,
        load_qa_set,
        overlap_from_annotations,
    )
    from nqkit.formats.qa_overlap import read_overlap_annotations

    _check_label_source(train, annotations, annotated_test)
    if annotations is not None:
        assert annotated_test is not None  # checked above
        rows = load_qa_set(annotated_test, what="annotated test")
        from nqkit.io import expand_paths

        (path,) = expand_paths(annotations, what="annotations")[:1]
        source = annotations_source(path, rows, "--annotated-test")
        return overlap_from_annotations(test, read_overlap_annotations(path), rows=rows,
                                        label=source.pop("labels"), source=source)
    assert train is not None  # checked above
    return compute_overlap(test, load_qa_set(train, what="training"),
                           answer_norm=answer_norm, threshold=threshold, scope=scope)


def annotations_source(path: PathLike, rows: QaSet, rows_option: str) -> dict[str, str]:
    """The signature fields that name an annotation file: ``labels:qa-overlap#DIGEST``
    for the official file (or any file of its format); for labels written by ``nqkit
    overlap labels`` (its sidecar, :mod:`nqkit.io.provenance`) ``labels:nqkit#DIGEST``
    and how they were made (``train``, ``answers``, ``qproxy``, ``qscope``), so a proxy's
    number never passes for the human labels'. Labels numbered by another test file than
    ``rows`` (given with ``rows_option``) are refused in one line."""
    from nqkit.analysis.overlap import file_digest
    from nqkit.io import read_provenance
    from nqkit.splits import check_numbering

    prov = read_provenance(path)
    if prov is None or prov.kind != "overlap":
        return {"labels": f"qa-overlap#{file_digest(path)}"}
    check_numbering(prov, rows.questions, first_qid=0, option="--annotations",
                    against=f"{rows_option} {rows.split}",
                    fix="give the test file the labels were computed for (its "
                    ".provenance.json names it), or compute them for this one with nqkit "
                    "overlap labels")
    made = {k: v for k, v in prov.parts().items() if k not in ("test", "warn")}
    return {"labels": f"nqkit#{file_digest(path)}", **made}


def write_labels(gold: PathsLike, train: PathsLike, output: PathLike, *,
                 answer_norm: str = "squad", threshold: float = 0.5,
                 scope: str = "same-answer") -> None:
    """``nqkit overlap labels``: each test question's labels computed against ``train``,
    written as an annotation file of the official format; counts and signature on
    stderr."""
    from nqkit.analysis.overlap import load_qa_set
    from nqkit.io import check_output, write_jsonl, write_provenance
    from nqkit.report import print_warnings, say
    from nqkit.splits import question_set

    check_output(output, [*_listed(gold), *_listed(train)], option="--output")
    test = load_qa_set(gold, what="test")
    analysis = overlap_groups(test, train=train, answer_norm=answer_norm,
                              threshold=threshold, scope=scope)
    print_warnings(analysis.warnings)
    n = write_jsonl(output, analysis.to_annotations())
    # how the labels were made, beside them: read back, a proxy stays named as one
    write_provenance(output, analysis.signature(), questions=question_set(test.questions))
    counts = analysis.counts()
    say(f"{n:,} test questions labelled: " + ", ".join(
        f"{g} {c:,}" for g, c in counts.items() if g != "total"))
    say(f"signature: {analysis.signature()}")


def _listed(paths: Any) -> list[Any]:
    import os

    return [paths] if isinstance(paths, str | os.PathLike) else list(paths)


# ---------------------------------------------------------------------------- scores

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


def score_overlap(analysis: OverlapAnalysis, per_item: Mapping[str, Any], *,
                  resamples: int = 0, seed: int = 0, settings: Mapping[str, object] = {},
                  warnings: Sequence[ResultWarning] = (), bootstrap: int | None = None,
                  ) -> OverlapScores:
    """Each metric's mean on each group of ``analysis`` (``per_item``: metric -> one
    score per test question, in the analysis' order), with percentile bootstrap 95%
    intervals from ``resamples`` resamples (each group resampled on its own) and the
    differences between complementary groups (the whole test set resampled): the task
    contract's :func:`~nqkit.tasks.groups.score_groups` on the overlap groups.
    ``settings`` are the scoring's own signature fields (task, conventions, missing
    policy); ``bootstrap`` is the earlier name of ``resamples``."""
    import numpy as np

    from nqkit.analysis.overlap import DIFFERENCES, GROUPS
    from nqkit.signature import make_signature
    from nqkit.stats import interval_warnings
    from nqkit.tasks.groups import score_groups

    if bootstrap is not None:
        import warnings as _warnings

        _warnings.warn("score_overlap(bootstrap=...) is deprecated and will be removed in "
                       "the next release; use resamples=", DeprecationWarning, stacklevel=2)
        resamples = bootstrap
    n = len(analysis.items)
    arrays = {m: np.asarray(v, dtype=np.float64) for m, v in per_item.items()}
    for m, v in arrays.items():
        if v.shape != (n,):
            raise ValueError(f"{m}: {v.shape[0]} scores for {n} test questions")
    members = {g: analysis.members(g) for g in GROUPS}
    grouped = score_groups(arrays, members, differences=DIFFERENCES, resamples=resamples,
                           seed=seed)
    out_warnings = [*analysis.warnings, *warnings]
    if grouped.undefined:
        out_warnings.append(ResultWarning(
            "no-interval", f"{', '.join(dict.fromkeys(grouped.undefined))}: no interval, "
            "since some resamples of the test set hold no question of one of the two groups "
            "(a group too small to resample) — score more questions or give the difference "
            "without an interval"))
    empty = [g for g in ("question_overlap", "answer_overlap") if not len(members[g])]
    if empty:
        out_warnings.append(ResultWarning(
            "empty-group", f"no test question is in {' or '.join(empty)}: those groups have "
            "no score"))
    if resamples:
        out_warnings.extend(interval_warnings(grouped.intervals))
    sig = make_signature("overlap", {"test": analysis.test, **analysis.source, **settings},
                         out_warnings)
    return OverlapScores(analysis, tuple(arrays), grouped.scores, grouped.differences, sig,
                         arrays, resamples, seed, out_warnings)


# ---------------------------------------------------------------------------- predictions

def nq_open_item_scores(test: QaSet, predictions: PathLike, *, allow_missing: bool = False,
                        conventions: Sequence[str] | None = None, allow_extra: bool = False,
                        ) -> tuple[dict[str, np.ndarray], dict[str, object],
                                   list[ResultWarning]]:
    """Per-question exact match under each named convention
    (:mod:`nqkit.metrics.em_conventions`) and SQuAD token F1 (max over the gold answers)
    of NQ-open / EfficientQA predictions ``{"question", "prediction"}``, joined to the
    test questions by question string as the official NQ-open evaluation joins them.

    Returns the scores (metric -> array in test order), the signature fields and the
    metric's warnings (missing predictions, another split, predictions for other questions
    and questions predicted twice: as ``nqkit eval nq-open``, which refuses predictions
    for questions not in the test set unless ``allow_extra``).
    """
    import os

    import numpy as np

    from nqkit.conventions import convention_names, get_convention
    from nqkit.formats.harness import PLAIN
    from nqkit.formats.nq_open import NqOpenExample, read_predictions
    from nqkit.metrics.nq_open import score_nq_open
    from nqkit.metrics.qa_overlap import squad_f1

    counts = Counter(r.question for r in test.records)
    repeats = [q for q, c in counts.items() if c > 1]
    if repeats:
        raise InputError(test.files[0], f"{len(repeats):,} test questions appear twice "
                         f"({examples(repeats, quote=True)}), so predictions joined by "
                         "question cannot tell them apart", "remove the duplicate lines")
    # the official rule first, then the others by name
    default = sorted(convention_names(published=True), key=lambda n: (n != "orqa", n))
    names = list(dict.fromkeys(get_convention(c).name for c in (conventions or default)))
    refs = [NqOpenExample(r.question, r.answers, r.where) for r in test.records]
    read = read_predictions(predictions)
    preds = list(read.predictions)
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
    # what eval nq-open says of the same predictions: extras are refused unless allowed,
    # then counted; a question predicted twice is scored with its last prediction
    from nqkit.tasks.nq_open import refuse_extra, result_warnings

    if result.unused_predictions and not allow_extra:
        refuse_extra(where, result.unused_predictions, refs, preds)
    codes = {w.code for w in warnings}
    warnings += [w for w in result_warnings(result)
                 if w.code in ("duplicates", "extra") and w.code not in codes]
    out["F1 squad"] = np.array(
        [max(squad_f1(it.prediction, g) for g in it.answers) if it.prediction is not None
         else 0.0 for it in result.items], dtype=np.float64)
    settings: dict[str, object] = {
        "task": "nq-open", "em": "+".join(names), "f1": "squad",
        "missing": "wrong" if allow_missing else "error"}
    if read.format != PLAIN:  # where the predictions came from, as eval nq-open says
        settings["preds"] = read.format
    if result.missing_predictions:
        warnings.append(ResultWarning(
            "missing", f"{result.missing_predictions:,} of {result.num_total:,} test "
            "questions have no prediction and are scored wrong"))
    return out, settings, warnings


def ambigqa_item_scores(test_paths: PathsLike, test: QaSet, predictions: PathLike, *,
                        allow_missing: bool = False, allow_extra: bool = False,
                        ) -> tuple[dict[str, np.ndarray], dict[str, object],
                                   list[ResultWarning]]:
    """Per-question F1_ans (the official AmbigQA metric, Min et al. 2020 §3.2) of AmbigQA
    predictions ``{id: [answers]}``, joined by id, in the order of ``test``."""
    import numpy as np

    from nqkit.formats.ambignq import read_ambignq, read_ambigqa_predictions
    from nqkit.io import expand_paths
    from nqkit.metrics.ambigqa import score_ambigqa

    refs = [ex for f in expand_paths(test_paths, what="test") for ex in read_ambignq(f)]
    if any(r.id is None for r in test.records):
        raise InputError(test.files[0], "AmbigQA predictions are keyed by id, and the test "
                         "file has no ids", "give the AmbigNQ file the predictions were "
                         "made for (e.g. dev_light.json)")
    result = score_ambigqa(refs, read_ambigqa_predictions(predictions),
                           missing="empty" if allow_missing else "error",
                           extra="ignore" if allow_extra else "error")
    scores = np.array([result.per_example[str(r.id)]["F1 answer"] for r in test.records],
                      dtype=np.float64)
    warnings = list(result.warnings)
    if result.extra_predictions:
        warnings.append(ResultWarning(
            "extra", f"{result.extra_predictions:,} predicted id(s) not in the test set were "
            "ignored"))
    if result.missing:
        warnings.append(ResultWarning(
            "missing", f"{len(result.missing):,} of {result.num_examples:,} test questions "
            "have no prediction and score 0"))
    return ({"F1 answer": scores},
            {"task": "ambigqa", "f1": "ambigqa-answer",
             "missing": "empty" if allow_missing else "error"}, warnings)


def score_predictions(settings: Mapping[str, Any]) -> OverlapScores:
    """``nqkit overlap score``: the predictions' scores by overlap group, the settings
    those of :data:`SCORE_PARAMS` (every one given)."""
    from nqkit.analysis.overlap import load_qa_set
    from nqkit.errors import InputError
    from nqkit.io import check_output

    s = settings
    _check_label_source(s["train"], s["annotations"], s["annotated_test"])
    if s["per_item"]:
        check_output(s["per_item"], [*s["gold"], s["predictions"]], option="--per-item")
    test = load_qa_set(s["gold"], what="test")
    task = s["task"]
    if task == "auto":
        task = "ambigqa" if all(f.lower().endswith((".json", ".json.gz"))
                                for f in test.files) else "nq-open"
    if task == "ambigqa" and s["convention"]:
        raise InputError(None, "--convention names an exact-match rule of NQ-open; AmbigQA "
                         "is scored with F1_ans (its own normalization)",
                         "leave out --convention for AmbigQA predictions")
    if task == "ambigqa":
        per_item, fields, warnings = ambigqa_item_scores(
            s["gold"], test, s["predictions"], allow_missing=s["allow_missing"],
            allow_extra=s["allow_extra"])
    else:
        per_item, fields, warnings = nq_open_item_scores(
            test, s["predictions"], allow_missing=s["allow_missing"],
            conventions=s["convention"], allow_extra=s["allow_extra"])
    analysis = overlap_groups(test, train=s["train"], annotations=s["annotations"],
                              annotated_test=s["annotated_test"],
                              answer_norm=s["answer_norm"], threshold=s["threshold"],
                              scope=s["scope"])
    return score_overlap(analysis, per_item, resamples=s["resamples"], seed=s["seed"],
                         settings=fields, warnings=warnings)


def _cell(score: float | None, low: float | None, high: float | None) -> str:
    if score is None:
        return "-"
    text = f"{100 * score:.2f}"
    return text if low is None or high is None else (
        f"{text} [{100 * low:.2f}, {100 * high:.2f}]")


def scores_rows(r: OverlapScores) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The headers and rows of the groups table of an :class:`OverlapScores`, as ``nqkit
    overlap score`` prints it."""
    from nqkit.analysis.overlap import GROUPS

    total = r.score("total", r.metrics[0]).n
    rows = []
    for g in GROUPS:
        n = r.score(g, r.metrics[0]).n
        rows.append((g, f"{n:,}", f"{100 * n / total:.1f}",
                     *(_cell(s.score, s.low, s.high)
                       for s in (r.score(g, m) for m in r.metrics))))
    ci = " [95% CI]" if r.resamples else ""
    return ("group", "n", "% of test", *(f"{m}{ci}" for m in r.metrics)), rows


def scores_table(r: OverlapScores) -> str:
    """The groups table, the differences table and the signature of an
    :class:`OverlapScores`."""
    from nqkit.report import format_table

    headers, rows = scores_rows(r)
    ci = " [95% CI]" if r.resamples else ""
    parts = [format_table(headers, rows, title="scores (%) by test-train overlap group")]
    if r.differences:
        drows = [(f"{d.group} - {d.minus}", d.metric, _cell(d.difference, d.low, d.high))
                 for d in r.differences]
        parts += ["", format_table(("difference", "metric", f"points{ci}"), drows)]
    if r.resamples:
        parts.append(f"bootstrap: {r.resamples:,} resamples, seed {r.seed}")
    parts.append(f"signature: {r.signature}")
    return "\n".join(parts)


def emit_scores(r: OverlapScores, *, format: str = "table",
                per_item: PathLike | None = None) -> None:
    """Print an :class:`OverlapScores` as ``nqkit overlap score`` does (warnings first),
    and write its per-question records to ``per_item``."""
    import json

    from nqkit.io import write_jsonl, write_provenance
    from nqkit.report import print_warnings

    if per_item:  # first: a file that cannot be written is the one line, before warnings
        write_jsonl(per_item, r.item_records())
        write_provenance(per_item, r.signature)
    print_warnings(r.warnings)
    if format == "json":
        print(json.dumps(r.to_json(), indent=1, ensure_ascii=False))
    else:
        print(scores_table(r))


# ---------------------------------------------------------------------------- official

def emit_official(annotations: PathLike, gold: PathsLike, predictions: PathLike, *,
                  format: str = "table") -> None:
    """``nqkit overlap official``: facebookresearch/QA-Overlap's evaluate.py exactly (row
    join, SQuAD EM and F1 x 100 per label), printed as it prints them with ``format``
    "official"."""
    import json
    import os

    from nqkit.analysis.overlap import load_qa_set, row_order_warnings
    from nqkit.formats.qa_overlap import read_overlap_annotations, read_row_predictions
    from nqkit.io import expand_paths
    from nqkit.metrics.qa_overlap import score_overlap_official
    from nqkit.report import format_table, print_warnings

    refs = load_qa_set(gold, what="gold")
    (path,) = expand_paths(annotations, what="annotations")[:1]
    source = annotations_source(path, refs, "--gold")
    r = score_overlap_official([(x.question, x.answers) for x in refs.records],
                               read_row_predictions(predictions),
                               read_overlap_annotations(path),
                               annotations_label=source.pop("labels"), label_source=source,
                               where=os.fspath(predictions),
                               warnings=row_order_warnings(refs))
    print_warnings(r.warnings)
    if format == "official":
        print(r.official_text())
    elif format == "json":
        print(json.dumps({**r.official(), "signature": r.signature}, indent=1))
    else:
        rows = [(s.label, f"{s.n_examples:,}", "-" if s.exact_match is None
                 else repr(s.exact_match), "-" if s.f1_score is None else repr(s.f1_score))
                for s in r.labels]
        print(format_table(("label", "n", "exact match", "F1"), rows,
                           title="QA-Overlap evaluation (SQuAD EM and F1 x 100, row order)"))
        print(f"signature: {r.signature}")


# ---------------------------------------------------------------------------- leak

def leak_files(gold: Sequence[str] | None, train: Sequence[str] | None,
               legacy: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """The test and training files of ``nqkit overlap leak``: ``--gold`` and ``--train``,
    or the earlier positional ``TEST TRAIN...`` (with a one-line notice)."""
    from nqkit.report import note

    if legacy:
        if gold or train or len(legacy) < 2:
            raise InputError(None, "give the files as --gold TEST --train TRAIN",
                             "e.g. nqkit overlap leak --gold test.jsonl --train train.jsonl")
        note("positional TEST TRAIN are deprecated and will be removed in the next release; "
             f"use --gold {legacy[0]} --train {' '.join(legacy[1:])}")
        return [legacy[0]], list(legacy[1:])
    if not gold or not train:
        raise InputError(None, "--gold and --train are required",
                         "nqkit overlap leak --gold TEST --train TRAIN")
    return list(gold), list(train)


def emit_leak(gold: PathsLike, train: PathsLike, *, threshold: float = 0.8,
              answer_norm: str = "squad", examples: int = 5, format: str = "table") -> None:
    """``nqkit overlap leak``: what a test file shares with a training file (exact
    duplicate questions, answer overlap, near-duplicate questions), counts and
    ``examples`` of each."""
    import json

    from nqkit.analysis.overlap import leak_report, load_qa_set
    from nqkit.report import format_table

    test = load_qa_set(gold, what="test")
    train_set = load_qa_set(train, what="training")
    r = leak_report(test, train_set, threshold=threshold, answer_norm=answer_norm)
    if format == "json":
        print(json.dumps(r.to_json(limit=examples), indent=1, ensure_ascii=False))
        return
    n = len(test)
    counts = r.counts()
    rows = [(what, f"{counts[key]:,}", f"{100 * counts[key] / n:.1f}")
            for what, key in (("exact duplicate questions", "exact_question_duplicates"),
                              ("answer overlap", "answer_overlap"),
                              (f"near-duplicate questions (cos >= {r.threshold:g})",
                               "near_duplicate_questions"))]
    parts = [format_table(("test questions that ...", "count", "% of test"), rows,
                          title=f"leak report: {n:,} test questions ({test.split}) against "
                          f"{len(train_set):,} training questions ({train_set.split})")]
    for title, leaks, detail in (("exact duplicate questions", r.exact_questions, None),
                                 ("answer overlap", r.answer_overlap, "shared answer"),
                                 ("near-duplicate questions", r.near_questions, "cosine")):
        if not leaks or not examples:
            continue
        shown = leaks[:examples]
        headers = ("test row", "test question", "train row", "train question",
                   *((detail,) if detail else ()))
        parts += ["", format_table(
            headers, [(x.test_row, x.test_question[:60], x.train_row,
                       (x.train_question or "")[:60], *((x.detail[:30],) if detail else ()))
                      for x in shown], right=(0, 2),
            title=f"{title}: the first {len(shown)} of {len(leaks):,}")]
    parts.append(f"signature: {r.signature}")
    print("\n".join(parts))
