"""Exact match and F1 per overlap label, as the QA-Overlap evaluation computes them.

Reproduces ``evaluate.py`` of ``facebookresearch/QA-Overlap`` (Lewis et al. 2021, §4):
predictions, references and annotations are joined by row (the ``id`` of each record is
the 0-based line of ``nq-test.qa.csv``; all three must cover the same rows); for every
label, the questions carrying it in the annotation file (in file order) are scored with
SQuAD v1.1 exact match and token F1 (:func:`nqkit.text.normalize.normalize_answer`, no
Unicode NFD), each the maximum over the gold answers, and reported as ``100 * sum /
count`` with no rounding. The official script prints exact match only; F1 is computed the
same way and returned beside it.

A label no question carries would make the official script divide by zero; here its
count is 0 and its scores are ``None``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nqkit.errors import InputError, examples
from nqkit.formats.qa_overlap import LABELS, OverlapAnnotation, RowPrediction, check_rows
from nqkit.signature import ResultWarning, make_signature
from nqkit.text.normalize import normalize_answer

__all__ = [
    "LabelScore",
    "OfficialOverlapResult",
    "score_overlap_official",
    "squad_em",
    "squad_f1",
]


def squad_em(prediction: str, gold: str) -> bool:
    """SQuAD v1.1 exact match of one prediction against one gold answer."""
    return normalize_answer(prediction) == normalize_answer(gold)


def squad_f1(prediction: str, gold: str) -> float:
    """SQuAD v1.1 token F1: bag-of-words overlap of the normalized strings; 0 when no
    token is shared (so an empty prediction or gold answer scores 0)."""
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(gold).split()
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision = 1.0 * same / len(pred)
    recall = 1.0 * same / len(ref)
    return (2 * precision * recall) / (precision + recall)


@dataclass(frozen=True, slots=True)
class LabelScore:
    """The official numbers of one label."""

    label: str
    n_examples: int
    exact_match: float | None  # 100 * mean, None when no question carries the label
    f1_score: float | None


@dataclass(frozen=True)
class OfficialOverlapResult:
    """Per-label scores in the official order, and the per-row scores behind them."""

    labels: tuple[LabelScore, ...]
    em: tuple[bool, ...]  # per row of the test file
    f1: tuple[float, ...]
    signature: str
    warnings: tuple[ResultWarning, ...] = ()

    def official(self) -> dict[str, dict[str, float | int | None]]:
        """The dict the official ``get_scores`` returns."""
        return {s.label: {"exact_match": s.exact_match, "f1_score": s.f1_score,
                          "n_examples": s.n_examples} for s in self.labels}

    def official_text(self) -> str:
        """What the official script prints (exact match only, Python's float repr)."""
        out = []
        for s in self.labels:
            out.append("-" * 50)
            out.append(f"Label       : {s.label}")
            out.append(f"N examples  :  {s.n_examples}")
            out.append(f"Exact Match :  {s.exact_match}")
        return "\n".join(out)


def score_overlap_official(
    references: Sequence[tuple[str, Sequence[str]]],
    predictions: Iterable[RowPrediction],
    annotations: Iterable[OverlapAnnotation],
    *,
    labels: Sequence[str] = LABELS,
    annotations_label: str = "custom",
    label_source: Mapping[str, str] | None = None,
    where: str | None = None,
    warnings: Sequence[ResultWarning] = (),
) -> OfficialOverlapResult:
    """Score row-ordered predictions per annotation label, as the official script.

    ``references`` are the rows of the test file (question, gold answers), in order;
    ``annotations_label`` names the annotation file in the signature (e.g. its digest),
    ``label_source`` how its labels were made when they are no human labels (after it);
    ``warnings`` (found by the caller, e.g. a row order unlike the annotated file's) mark it.
    """
    n = len(references)
    preds = {p.id: p.prediction for p in predictions}
    anns = list(annotations)
    check_rows(preds, n, "predictions", where)
    check_rows((a.id for a in anns), n, "annotations", anns[0].where if anns else None)
    empty = [i for i, (_, golds) in enumerate(references) if not golds]
    if empty:
        raise InputError(None, f"{len(empty):,} test rows have no gold answer (rows "
                         f"{examples(empty)})", "give every row at least one answer")
    em = tuple(max(squad_em(preds[i], g) for g in golds)
               for i, (_, golds) in enumerate(references))
    f1 = tuple(max(squad_f1(preds[i], g) for g in golds)
               for i, (_, golds) in enumerate(references))
    scores = []
    for label in labels:
        ids = [a.id for a in anns if label in a.labels]  # annotation-file order
        if not ids:
            scores.append(LabelScore(label, 0, None, None))
            continue
        # the official expression, term for term: 100 * sum(...) / len(...)
        scores.append(LabelScore(label, len(ids),
                                 100 * sum(em[i] for i in ids) / len(ids),
                                 100 * sum(f1[i] for i in ids) / len(ids)))
    sig = make_signature("qa-overlap-official", {
        "annotations": annotations_label, **(label_source or {}), "rows": n,
        "match": "em-squad", "f1": "squad", "join": "row"}, warnings)
    return OfficialOverlapResult(tuple(scores), em, f1, sig, tuple(warnings))
