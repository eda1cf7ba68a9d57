"""AmbigQA baselines: multiple answers from nearest training questions, and question
disambiguation given the gold answers (AmbigQA paper, Min et al. 2020, §6 and Table 4).

* :func:`nearest_answers` — the answer set of the most similar AmbigNQ training question
  (TF-IDF, :class:`~nqkit.baselines.open_nearest_question.TfidfIndex`), extended with the first
  answer of up to ``k - 1`` further neighbours whose similarity is at least ``tau`` times
  the best one. ``k`` and ``tau`` are chosen by :func:`tune_nearest_answers` on a slice of
  the training data (the slice queried against the rest of train), never on dev.
* :func:`prompt_copy_questions` — "always the prompt question": one pair per gold answer,
  each asking the prompt unchanged (Table 4: F1_BLEU 47.4, F1_EDIT-F1 0.0).
* :func:`nearest_edit_questions` — the prompt plus the words that the nearest multi-answer
  training question's rewrite added to its own prompt (rewrite ``i mod m`` for the
  ``i``-th gold answer), inserted before the final question mark.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from nqkit.baselines.open_nearest_question import TfidfIndex
from nqkit.formats.ambignq import AmbigNqExample, AmbigQaPrediction, MultipleQAs
from nqkit.text.normalize import normalize_answer

__all__ = [
    "NearestAnswersParams",
    "example_answers",
    "gold_answers",
    "nearest_answers",
    "nearest_edit_questions",
    "prompt_copy_questions",
    "tune_nearest_answers",
]

_WORD = re.compile(r"\w+", re.UNICODE)


def example_answers(ex: AmbigNqExample) -> tuple[str, ...]:
    """The answers of an example's first annotation (first alias of each answer)."""
    ann = ex.annotations[0]
    if isinstance(ann, MultipleQAs):
        return tuple(p.answers[0] for p in ann.qa_pairs)
    return (ann.answers[0],)


gold_answers = example_answers


@dataclass(frozen=True, slots=True)
class NearestAnswersParams:
    k: int = 1  # neighbours consulted
    tau: float = 1.0  # a further neighbour counts when its cosine >= tau * the best cosine


def _dedup(answers: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for a in answers:
        key = normalize_answer(a)
        if key not in seen:
            seen.add(key)
            out.append(a)
    return out


def nearest_answers(questions: Sequence[AmbigNqExample], memory: Sequence[AmbigNqExample],
                    index: TfidfIndex, params: NearestAnswersParams,
                    *, leave_out: dict[str, int] | None = None
                    ) -> dict[str, AmbigQaPrediction]:
    """Answers-only predictions from the nearest memory questions (see module doc)."""
    out: dict[str, AmbigQaPrediction] = {}
    for ex in questions:
        exclude = leave_out.get(ex.id) if leave_out else None
        hits = index.nearest(ex.question, params.k, exclude=exclude)
        best_i, best_s = hits[0]
        answers = list(example_answers(memory[best_i]))
        for i, s in hits[1:]:
            if best_s > 0 and s >= params.tau * best_s:
                answers.append(example_answers(memory[i])[0])
        out[ex.id] = AmbigQaPrediction(tuple(_dedup(answers)), None)
    return out


def tune_nearest_answers(
    train: Sequence[AmbigNqExample], *, slice_size: int = 1000,
    ks: Sequence[int] = (1, 2, 3, 5), taus: Sequence[float] = (0.6, 0.7, 0.8, 0.9, 0.95),
) -> tuple[NearestAnswersParams, list[tuple[NearestAnswersParams, float]]]:
    """Choose ``(k, tau)`` maximizing mean F1_ans (all) of the first ``slice_size`` train
    questions, answered from the remaining training questions. Returns the best and the
    whole grid with its scores."""
    from nqkit.metrics.ambigqa import score_ambigqa

    queries, rest = list(train[:slice_size]), list(train[slice_size:])
    index = TfidfIndex([ex.question for ex in rest])
    grid = [NearestAnswersParams(1, 1.0)] + [NearestAnswersParams(k, t) for k in ks if k > 1
                                             for t in taus]
    scored = []
    for params in grid:
        preds = nearest_answers(queries, rest, index, params)
        f1 = score_ambigqa(queries, preds).metrics["F1 answer"]["all"]
        scored.append((params, f1))
    best = max(scored, key=lambda x: x[1])[0]
    return best, scored


def prompt_copy_questions(questions: Sequence[AmbigNqExample]) -> dict[str, list[dict[str, str]]]:
    """One ``{question: prompt, answer}`` pair per gold answer (first annotation)."""
    return {ex.id: [{"question": ex.question, "answer": a} for a in gold_answers(ex)]
            for ex in questions}


def _added_words(prompt: str, rewrite: str) -> list[str]:
    """Words of ``rewrite`` not in ``prompt`` (multiset, case-insensitive), in order."""
    have = Counter(w.lower() for w in _WORD.findall(prompt))
    out = []
    for w in _WORD.findall(rewrite):
        if have[w.lower()] > 0:
            have[w.lower()] -= 1
        else:
            out.append(w)
    return out


def _insert(prompt: str, words: Sequence[str]) -> str:
    if not words:
        return prompt
    body = prompt.rstrip()
    mark = ""
    if body.endswith("?"):
        body, mark = body[:-1].rstrip(), "?"
    return f"{body} {' '.join(words)}{mark}"


def nearest_edit_questions(questions: Sequence[AmbigNqExample],
                           train: Sequence[AmbigNqExample]) -> dict[str, list[dict[str, str]]]:
    """Prompt + the added words of the nearest multi-answer training rewrite (module doc)."""
    multi = [(ex, ann) for ex in train
             if isinstance(ann := ex.annotations[0], MultipleQAs)]
    index = TfidfIndex([ex.question for ex, _ in multi])
    out: dict[str, list[dict[str, str]]] = {}
    for ex in questions:
        answers = gold_answers(ex)
        if len(answers) == 1:
            out[ex.id] = [{"question": ex.question, "answer": answers[0]}]
            continue
        (i, _), = index.nearest(ex.question, 1)
        neighbour, ann = multi[i]
        rewrites = [p.phrasings[0] if p.phrasings else neighbour.question for p in ann.qa_pairs]
        pairs = []
        for j, a in enumerate(answers):
            added = _added_words(neighbour.question, rewrites[j % len(rewrites)])
            pairs.append({"question": _insert(ex.question, added), "answer": a})
        out[ex.id] = pairs
    return out
