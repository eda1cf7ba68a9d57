"""AmbigQA metrics (Min et al. 2020, §3.2): F1_ans, F1_BLEU-n and F1_EDIT-F1.

Faithful to the official ``ambigqa_evaluate_script.py`` (shown by the outputs in
``golden/ambigqa``), in pure Python:

* Answers are compared by SQuAD normalization (no NFD); a gold answer is a set of aliases.
* **F1_ans** of one annotation: predicted answers are matched one-to-one to gold answers
  greedily in order (gold answer by gold answer, first unmatched equal prediction); with
  ``k`` matches of ``n`` gold and ``m`` predicted answers, F1 = 2PR/(P+R), P = k/m, R = k/n.
* **F1_BLEU-n / F1_EDIT-F1** of a multiple-answer annotation: every (gold pair, predicted
  pair) whose answers match gets a question score ``f`` (BLEU-n of the predicted question
  against every ``|``-separated phrasing of the gold rewrite, pycocoevalcap's BleuScorer
  with the "closest" reference length; or Edit-F1, the F1 between the multisets of
  added/deleted words of the predicted and of a gold phrasing relative to
  the prompt question; the best phrasing counts, 1 when neither edits the prompt, 0 when
  only one does). Pairs are taken greedily by decreasing
  ``f`` (ties in pair order), one-to-one, and F1_f = 2 * sum(f) / (n + m).
* A single-answer annotation gives its F1_ans to every metric (so "all" means of the
  question metrics mix in answer F1; the paper reports them on multi only).
* The score of an example is the maximum over its annotations; "multi" examples are those
  without any single-answer annotation.
* Questions are tokenized like the official run (Stanford PTB tokenizer, lower-cased, its
  punctuation tokens removed), then SQuAD-normalized: :func:`nqkit.text.ptb.eval_question`.

Beyond the official script: an empty prediction list scores 0 instead of crashing (a run
whose lists are all empty is flagged by a warning, as are predicted answers that count as
correct only because both they and a gold answer normalize to the empty string), predicted
ids that are not in the gold are refused (naming the split they are from, when known:
:mod:`nqkit.splits`), the signature names the references' split (``split:ambignq/dev``),
and
``matching="optimal"`` replaces both greedy matchings by maximum-weight bipartite
matchings. Optimal matching can give different, never lower numbers; it is reported under
different metric names (``... [optimal]``) and its own signature.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from nqkit.errors import InputError, for_example
from nqkit.formats.ambignq import AmbigNqExample, AmbigQaPrediction, MultipleQAs, SingleAnswer
from nqkit.signature import ResultWarning, make_signature
from nqkit.splits import CUSTOM, check_split, describe, identify, match_split
from nqkit.text.normalize import normalize_answer

__all__ = [
    "ANSWER_METRICS",
    "QUESTION_METRICS",
    "AmbigQaResult",
    "AnnotationTrace",
    "bleu_scores",
    "edit_f1",
    "explain_example",
    "max_weight_matching",
    "score_ambigqa",
]

ANSWER_METRICS: tuple[str, ...] = ("F1 answer",)
QUESTION_METRICS: tuple[str, ...] = ("F1 bleu1", "F1 bleu2", "F1 bleu3", "F1 bleu4",
                                     "F1 edit-f1")
MATCHINGS = ("greedy", "optimal")
TOKENIZERS = ("ptb", "whitespace")

_TINY = 1e-15
_SMALL = 1e-9


# --------------------------------------------------------------------------- question scores

def bleu_scores(hypothesis: str, references: Sequence[str], n: int = 4) -> list[float]:
    """BLEU-1..n of one hypothesis against references (pycocoevalcap ``BleuScorer``).

    Words are whitespace-separated; clipped n-gram counts use the maximum count over the
    references; the brevity penalty uses the reference length closest to the hypothesis
    length (the shorter one on ties); ``1e-15``/``1e-9`` smoothing as in the original.
    """
    words = hypothesis.split()
    testlen = len(words)
    hyp_counts: Counter[tuple[str, ...]] = Counter()
    for k in range(1, n + 1):
        for i in range(testlen - k + 1):
            hyp_counts[tuple(words[i:i + k])] += 1
    maxcounts: dict[tuple[str, ...], int] = {}
    reflens = []
    for ref in references:
        rw = ref.split()
        reflens.append(len(rw))
        rc: Counter[tuple[str, ...]] = Counter()
        for k in range(1, n + 1):
            for i in range(len(rw) - k + 1):
                rc[tuple(rw[i:i + k])] += 1
        for ng, c in rc.items():
            if c > maxcounts.get(ng, 0):
                maxcounts[ng] = c
    reflen = min((abs(L - testlen), L) for L in reflens)[1]
    guess = [max(0, testlen - k + 1) for k in range(1, n + 1)]
    correct = [0] * n
    for ng, c in hyp_counts.items():
        correct[len(ng) - 1] += min(maxcounts.get(ng, 0), c)
    out = []
    bleu = 1.0
    for k in range(n):
        bleu *= float(correct[k] + _TINY) / (guess[k] + _SMALL)
        out.append(bleu ** (1.0 / (k + 1)))
    ratio = (testlen + _TINY) / (reflen + _SMALL)
    if ratio < 1:
        bp = math.exp(1 - 1 / ratio)
        out = [b * bp for b in out]
    return out


def _edits(prompt: list[str], question: list[str]) -> Counter[str]:
    """Deleted and added words of ``question`` relative to ``prompt`` (multisets)."""
    p, q = Counter(prompt), Counter(question)
    out: Counter[str] = Counter()
    for w, c in (p - q).items():
        out["-" + w] = c
    for w, c in (q - p).items():
        out["+" + w] = c
    return out


def edit_f1(prompt: str, references: Sequence[str], generated: str) -> float:
    """Edit-F1 (§3.2) of normalized questions, the maximum over the reference phrasings.

    For each phrasing: 1 when neither the phrasing nor the generated question edits the
    prompt (rare: a rewrite identical to the prompt after normalization), 0 when only one
    of them does, else the F1 between the two multisets of edits. Words are split on single
    spaces, as in the official script (an empty question is one empty word).
    """
    pred = _edits(prompt.split(" "), generated.split(" "))
    n_pred = sum(pred.values())
    best = 0.0
    for ref in references:
        gold = _edits(prompt.split(" "), ref.split(" "))
        n_gold = sum(gold.values())
        if n_gold == 0 and n_pred == 0:
            best = 1.0
        elif n_gold == 0 or n_pred == 0:
            continue
        else:
            k = sum((gold & pred).values())
            a, b = k / n_pred, k / n_gold
            if a + b > 0:
                best = max(best, 2 * a * b / (a + b))
    return best


# --------------------------------------------------------------------------- matchings

def max_weight_matching(weights: Sequence[Sequence[float]]) -> float:
    """Total weight of a maximum-weight one-to-one matching (rows to columns, weights >= 0).

    Hungarian algorithm with potentials on the square zero-padded matrix, O(n^3).
    """
    n_rows = len(weights)
    n_cols = max((len(r) for r in weights), default=0)
    size = max(n_rows, n_cols)
    if size == 0:
        return 0.0
    # Minimize cost = -weight; padded cells cost 0.
    cost = [[0.0] * size for _ in range(size)]
    for i, row in enumerate(weights):
        for j, w in enumerate(row):
            cost[i][j] = -float(w)
    inf = float("inf")
    u = [0.0] * (size + 1)
    v = [0.0] * (size + 1)
    match_col = [0] * (size + 1)  # match_col[j] = row (1-based) assigned to column j
    way = [0] * (size + 1)
    for i in range(1, size + 1):
        match_col[0] = i
        j0 = 0
        minv = [inf] * (size + 1)
        used = [False] * (size + 1)
        while True:
            used[j0] = True
            i0 = match_col[j0]
            delta = inf
            j1 = 0
            for j in range(1, size + 1):
                if not used[j]:
                    cur = cost[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(size + 1):
                if used[j]:
                    u[match_col[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if match_col[j0] == 0:
                break
        while True:
            j1 = way[j0]
            match_col[j0] = match_col[j1]
            j0 = j1
            if j0 == 0:
                break
    total = 0.0
    for j in range(1, size + 1):
        i = match_col[j]
        if i and i - 1 < n_rows and j - 1 < len(weights[i - 1]):
            total += float(weights[i - 1][j - 1])
    return total


def _answer_f1_greedy(gold: Sequence[frozenset[str]], pred: Sequence[str],
                      matched: list[tuple[int, int]] | None = None) -> float:
    used_gold = [False] * len(gold)
    used_pred = [False] * len(pred)
    for i, aliases in enumerate(gold):
        for j, p in enumerate(pred):
            if used_gold[i] or used_pred[j]:
                continue
            if p in aliases:
                used_gold[i] = used_pred[j] = True
                if matched is not None:
                    matched.append((i, j))
    k = sum(used_gold)
    a, b = k / len(gold), k / len(pred)
    return 0.0 if a + b == 0 else 2 * a * b / (a + b)


def _answer_f1_optimal(gold: Sequence[frozenset[str]], pred: Sequence[str],
                       matched: list[tuple[int, int]] | None = None) -> float:
    k = max_weight_matching([[1.0 if p in aliases else 0.0 for p in pred] for aliases in gold])
    a, b = k / len(gold), k / len(pred)
    return 0.0 if a + b == 0 else 2 * a * b / (a + b)


def _pairs_f1_greedy(pairs: list[tuple[int, int, float]], n_gold: int, n_pred: int,
                     chosen: list[tuple[int, int, float]] | None = None) -> float:
    used_gold = [False] * n_gold
    used_pred = [False] * n_pred
    total = 0.0
    # Stable sort: ties keep (gold, prediction) order, as Python's sorted(reverse=True).
    for i, j, s in sorted(pairs, key=lambda x: x[2], reverse=True):
        if used_gold[i] or used_pred[j]:
            continue
        used_gold[i] = used_pred[j] = True
        total += s
        if chosen is not None:
            chosen.append((i, j, s))
    return 2 * total / (n_gold + n_pred)


def _pairs_f1_optimal(pairs: list[tuple[int, int, float]], n_gold: int, n_pred: int,
                      chosen: list[tuple[int, int, float]] | None = None) -> float:
    w = [[0.0] * n_pred for _ in range(n_gold)]
    for i, j, s in pairs:
        w[i][j] = s
    return 2 * max_weight_matching(w) / (n_gold + n_pred)


# --------------------------------------------------------------------------- the metric

@dataclass(frozen=True)
class AmbigQaResult:
    """Per-example scores and their means over all and over multi-answer examples."""

    metrics: dict[str, dict[str, float]]  # name -> {"all": mean, "multi": mean}
    per_example: dict[str, dict[str, float]]  # id -> name -> score
    is_multi: dict[str, bool]
    signature: str
    matching: str
    num_examples: int
    num_multi: int
    missing: list[str] = field(default_factory=list)  # ids scored as empty predictions
    empty_predictions: int = 0  # examples whose prediction list is empty
    extra_predictions: int = 0  # predicted ids not in the gold, left out (extra="ignore")
    warnings: tuple[ResultWarning, ...] = ()  # what limits the meaning of the numbers


def ambigqa_signature(*, with_questions: bool, matching: str, tokenizer: str,
                      missing: str, warnings: Sequence[ResultWarning] = (),
                      split: str = CUSTOM) -> str:
    """``ambigqa|split:<split>|metrics:...|matching:...|[tok:...|]missing:...|v...``;
    ``split`` labels the references' prompt questions (:func:`nqkit.splits.identify`)."""
    settings: dict[str, object] = {"split": split,
                                   "metrics": "ans+qg" if with_questions else "ans",
                                   "matching": matching}
    if with_questions:
        settings["tok"] = "ptb-lower-nopunct" if tokenizer == "ptb" else tokenizer
    settings["missing"] = missing
    return make_signature("ambigqa", settings, warnings)


def _whitespace_question(text: str) -> str:
    return normalize_answer(text)


def _question_normalizer(tokenizer: str) -> Callable[[str], str]:
    if tokenizer == "ptb":
        from nqkit.text.ptb import eval_question

        return lru_cache(maxsize=None)(eval_question)
    if tokenizer == "whitespace":
        return lru_cache(maxsize=None)(_whitespace_question)
    raise ValueError(f"tokenizer must be one of {TOKENIZERS}, not {tokenizer!r}")


def score_ambigqa(
    references: Sequence[AmbigNqExample],
    predictions: Mapping[str, AmbigQaPrediction],
    *,
    matching: str = "greedy",
    tokenizer: str = "ptb",
    missing: str = "error",
    question_normalizer: Callable[[str], str] | None = None,
    extra: str = "error",
) -> AmbigQaResult:
    """Score AmbigQA predictions (answers, or question-answer pairs) against AmbigNQ.

    ``matching`` is ``"greedy"`` (official) or ``"optimal"``; ``tokenizer`` is ``"ptb"``
    (official) or ``"whitespace"`` (no PTB splitting, for comparison); ``missing`` is
    ``"error"`` or ``"empty"`` (score a missing id as an empty prediction, i.e. 0). Ids in
    the predictions that are not in the gold raise :class:`InputError`, or with ``extra``
    ``"ignore"`` are left out (counted in ``extra_predictions``); none of the predictions
    in the gold is refused either way.
    ``question_normalizer`` overrides the tokenizer (text -> normalized words).
    """
    if matching not in MATCHINGS:
        raise ValueError(f"matching must be one of {MATCHINGS}, not {matching!r}")
    if missing not in ("error", "empty"):
        raise ValueError(f"missing must be 'error' or 'empty', not {missing!r}")
    ref_ids = {ex.id for ex in references}
    if not references:
        raise InputError(None, "the gold holds no example", "give the AmbigNQ gold")
    if not predictions:
        raise InputError(None, "there is no prediction, so every score would be 0",
                         "predict the ids of the gold")
    if extra not in ("error", "ignore"):
        raise ValueError(f"extra must be 'error' or 'ignore', not {extra!r}")
    unknown = [k for k in predictions if k not in ref_ids]
    if unknown:
        # none of the ids in the references: refused naming both splits where known
        check_split(ref_ids, predictions.keys(), where=None, kind="id")
        if extra == "error":
            other = match_split(unknown, "id")
            which = f"; they are {describe(other, 'ids')}" if other.known else ""
            raise InputError(None, f"{len(unknown):,} predicted id(s) are not in the gold "
                             f"({for_example(unknown)}){which}",
                             "check that the gold is the right split, or pass "
                             "--allow-extra to ignore them")
        predictions = {k: v for k, v in predictions.items() if k in ref_ids}
    absent = [ex.id for ex in references if ex.id not in predictions]
    if absent and missing == "error":
        raise InputError(None, f"{len(absent):,} of {len(references):,} gold ids have no "
                         f"prediction ({for_example(absent)})",
                         "predict every id, or pass --allow-missing to score them as 0")
    with_questions = any(p.questions is not None for p in predictions.values())
    names = ANSWER_METRICS + (QUESTION_METRICS if with_questions else ())
    norm_q = question_normalizer or (_question_normalizer(tokenizer) if with_questions
                                     else _whitespace_question)
    pair_f1 = _pairs_f1_greedy if matching == "greedy" else _pairs_f1_optimal
    ans_f1 = _answer_f1_greedy if matching == "greedy" else _answer_f1_optimal

    per_example: dict[str, dict[str, float]] = {}
    is_multi: dict[str, bool] = {}
    empty = 0
    empty_matches: list[str] = []  # ids where an empty-normalizing answer met an empty gold
    for ex in references:
        pred = predictions.get(ex.id, AmbigQaPrediction((), () if with_questions else None))
        is_multi[ex.id] = ex.is_multi
        if not pred.answers:
            empty += 1
        elif "" in [normalize_answer(a) for a in pred.answers] and any(
                "" in _gold_norms(ann) for ann in ex.annotations):
            empty_matches.append(ex.id)
        per_example[ex.id] = _score_example(ex, pred, names, norm_q, ans_f1, pair_f1,
                                            with_questions)

    warnings: list[ResultWarning] = []
    predicted = len(references) - len(absent)
    if predicted and empty - len(absent) == predicted:
        warnings.append(ResultWarning(
            "all-empty", f"all {predicted:,} prediction lists are empty, so every score is 0 "
            "— check that the system wrote its answers"))
    if empty_matches:
        warnings.append(ResultWarning(
            "empty-match", f"{len(empty_matches):,} examples have a predicted answer and a gold "
            f"answer that both normalize to the empty string ({for_example(empty_matches)}); they "
            "match, as in the official script, though neither says anything"))
    if matching == "optimal":
        per_example = {k: {f"{n} [optimal]": v for n, v in s.items()}
                       for k, s in per_example.items()}
        names = tuple(f"{n} [optimal]" for n in names)
    multi_ids = [k for k, m in is_multi.items() if m]
    metrics: dict[str, dict[str, float]] = {}
    for name in names:
        all_scores = [per_example[k][name] for k in per_example]
        multi_scores = [per_example[k][name] for k in multi_ids]
        metrics[name] = {
            "all": math.fsum(all_scores) / len(all_scores),
            "multi": math.fsum(multi_scores) / len(multi_scores) if multi_scores else math.nan,
        }
    return AmbigQaResult(
        metrics=metrics,
        per_example=per_example,
        is_multi=is_multi,
        signature=ambigqa_signature(with_questions=with_questions, matching=matching,
                                    tokenizer=tokenizer if question_normalizer is None
                                    else "custom", missing=missing,
                                    warnings=warnings,
                                    split=identify(ex.question for ex in references)),
        matching=matching,
        num_examples=len(per_example),
        num_multi=len(multi_ids),
        missing=absent,
        empty_predictions=empty,
        extra_predictions=len(unknown),
        warnings=tuple(warnings),
    )


@dataclass(frozen=True, slots=True)
class AnnotationTrace:
    """How one annotation scored one prediction (:func:`explain_example`).

    ``answer_matches``: the (gold answer, predicted answer) index pairs the F1_ans
    matching took; ``pair_scores``: for a multiple-answer annotation and a prediction with
    questions, every (gold pair, predicted pair, [BLEU-1..4, EDIT-F1]) whose answers
    match; ``chosen``: for each question metric, the pairs its matching took with their
    scores; ``scores``: the annotation's score per metric (the example's score is the
    maximum over annotations).
    """

    answer_matches: list[tuple[int, int]] = field(default_factory=list)
    pair_scores: list[tuple[int, int, list[float]]] = field(default_factory=list)
    chosen: dict[str, list[tuple[int, int, float]]] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)


def _score_example(ex: AmbigNqExample, pred: AmbigQaPrediction, names: tuple[str, ...],
                   norm_q: Callable[[str], str], ans_f1: Callable[..., float],
                   pair_f1: Callable[..., float], with_questions: bool,
                   traces: list[AnnotationTrace] | None = None) -> dict[str, float]:
    """One example's score per metric: the maximum over its annotations. With
    ``traces``, one :class:`AnnotationTrace` per annotation is appended to it."""
    scores = dict.fromkeys(names, 0.0)
    if not pred.answers:
        return scores
    pred_norm = [normalize_answer(a) for a in pred.answers]
    gen_norm = ([norm_q(q.replace("\n", " ")) for q in pred.questions]
                if with_questions and pred.questions is not None else None)
    prompt_norm = norm_q(ex.question.replace("\n", " ")) if gen_norm is not None else ""
    for ann in ex.annotations:
        trace = AnnotationTrace() if traces is not None else None
        if traces is not None and trace is not None:
            traces.append(trace)
        if isinstance(ann, SingleAnswer):
            f1 = ans_f1([frozenset(normalize_answer(a) for a in ann.answers)], pred_norm,
                        trace.answer_matches if trace else None)
            for name in names:
                scores[name] = max(scores[name], f1)
            if trace is not None:
                trace.scores.update(dict.fromkeys(names, f1))
            continue
        gold = [frozenset(normalize_answer(a) for a in qa.answers) for qa in ann.qa_pairs]
        f1 = ans_f1(gold, pred_norm, trace.answer_matches if trace else None)
        scores["F1 answer"] = max(scores["F1 answer"], f1)
        if trace is not None:
            trace.scores["F1 answer"] = f1
        if gen_norm is None:
            continue
        matched: list[tuple[int, int, list[float]]] = []
        for i, qa in enumerate(ann.qa_pairs):
            refs_norm: list[str] | None = None
            for j, p in enumerate(pred_norm):
                if p not in gold[i]:
                    continue
                if refs_norm is None:
                    refs_norm = [norm_q(s.replace("\n", " ")) for s in qa.phrasings]
                if not refs_norm:
                    raise InputError(f"id {ex.id}", "a gold rewrite has no phrasing",
                                     "check the gold")
                qs = bleu_scores(gen_norm[j], refs_norm)
                qs.append(edit_f1(prompt_norm, refs_norm, gen_norm[j]))
                matched.append((i, j, qs))
        if trace is not None:
            trace.pair_scores.extend(matched)
        for m, name in enumerate(QUESTION_METRICS):
            chosen: list[tuple[int, int, float]] | None = [] if trace is not None else None
            f = pair_f1([(i, j, s[m]) for i, j, s in matched], len(gold), len(pred_norm),
                        chosen)
            scores[name] = max(scores[name], f)
            if trace is not None and chosen is not None:
                trace.chosen[name] = chosen
                trace.scores[name] = f
    return scores


def explain_example(ex: AmbigNqExample, pred: AmbigQaPrediction, *, with_questions: bool,
                    tokenizer: str = "ptb") -> tuple[dict[str, float], list[AnnotationTrace]]:
    """One example scored as :func:`score_ambigqa` scores it with the official greedy
    matching (the same code), and how: the scores per metric and one
    :class:`AnnotationTrace` per annotation. ``with_questions``: the run's predictions
    carry questions (then the question metrics are scored, as for the whole file)."""
    names = ANSWER_METRICS + (QUESTION_METRICS if with_questions else ())
    norm_q = _question_normalizer(tokenizer) if with_questions else _whitespace_question
    traces: list[AnnotationTrace] = []
    scores = _score_example(ex, pred, names, norm_q, _answer_f1_greedy, _pairs_f1_greedy,
                            with_questions, traces)
    return scores, traces


def _gold_norms(ann: SingleAnswer | MultipleQAs) -> set[str]:
    """Every normalized gold answer of one annotation."""
    if isinstance(ann, SingleAnswer):
        return {normalize_answer(a) for a in ann.answers}
    return {normalize_answer(a) for qa in ann.qa_pairs for a in qa.answers}
