"""Top-k answer recall of retrieval results (DPR, Karpukhin et al. 2020, §5.1).

A question counts as answered at k when one of its first k retrieved passages *has the
answer*: an answer's token sequence occurs in the passage text under DPR's simple
tokenizer (NFD, lower-cased; :mod:`nqkit.text.dpr_tokenize`). The passage title is not
searched, as in DPR's ``has_answer`` check.

Results where no question could ever count (no question, no context anywhere, or no answer
with a token) are refused; questions with fewer contexts than the largest k, or without
any answer token, lower the recall whatever the retriever did and carry warnings. The
signature names the split of the questions (``split:nq-open/dev`` for DPR's nq-test
results, :mod:`nqkit.splits`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from nqkit.errors import InputError, for_example
from nqkit.formats.dpr import DprResult
from nqkit.signature import ResultWarning, make_signature
from nqkit.splits import identify
from nqkit.text.dpr_tokenize import AnswerCheck, has_answer, simple_tokenize, tokenize_answer

__all__ = ["AnswerRecallResult", "answer_recall_settings", "passage_has_answer",
           "score_answer_recall"]


def passage_has_answer(answers: Iterable[str], text: str) -> bool:
    """DPR's string check: an answer's tokens occur contiguously in the text's tokens."""
    return has_answer([tokenize_answer(a) for a in answers], simple_tokenize(text))


@dataclass(frozen=True)
class AnswerRecallResult:
    recall: dict[int, float]  # k -> fraction of questions answered within the top k
    num_questions: int
    first_hit: list[int | None] = field(repr=False)  # per question: 1-based rank or None
    short_lists: int = 0  # questions with fewer contexts than the largest k
    flag_disagreements: int = 0  # contexts whose file flag differs from our check
    signature: str = ""
    warnings: tuple[ResultWarning, ...] = ()  # what limits the meaning of the recall


def answer_recall_settings(questions: Iterable[str]) -> dict[str, object]:
    """The signature keys of the computation: the split of the questions, the recall kind,
    the tokenizer and the field searched (the same for ``nqkit eval retrieval`` and
    ``nqkit retrieve --eval``)."""
    return {"split": identify(questions), "recall": "answer", "tok": "dpr-simple-nfd",
            "field": "text"}


def score_answer_recall(results: Iterable[DprResult], ks: Sequence[int], *,
                        where: str | None = None, check: AnswerCheck | None = None,
                        run_settings: Mapping[str, object] | None = None,
                        ) -> AnswerRecallResult:
    """Top-k answer recall for each k in ``ks`` (positive integers).

    ``results`` is read once, in order, and not kept (a stream of a large results file
    stays a stream). ``where`` names the results in messages. ``check`` is the
    has-answer check (:class:`nqkit.text.dpr_tokenize.AnswerCheck`, a fresh one by
    default); a caller that has already checked the same passages passes its own, whose
    cache is warm. ``run_settings`` (what produced the results: corpus, retriever, ...)
    follow the computation's keys (:func:`answer_recall_settings`) in the signature.
    """
    ks = sorted(set(ks))
    if not ks or ks[0] < 1:
        raise ValueError("ks must be positive integers")
    found_in = check if check is not None else AnswerCheck()
    depth = ks[-1]
    first: list[int | None] = []
    short = disagree = longest = 0
    no_ctx: list[str] = []
    no_tokens: list[str] = []
    questions: list[str] = []
    for res in results:
        questions.append(res.question)
        answers = found_in.answers(res.answers)
        if not answers.firsts:
            no_tokens.append(repr(res.question))
        if not res.ctxs:
            no_ctx.append(repr(res.question))
        hit: int | None = None
        if len(res.ctxs) < depth:
            short += 1
        longest = max(longest, len(res.ctxs))
        top = res.ctxs[:depth]
        flagged = any(c.has_answer is not None for c in top)
        for rank, ctx in enumerate(top, 1):
            found = found_in(answers, ctx.text)
            if ctx.has_answer is not None and ctx.has_answer != found:
                disagree += 1
            if found and hit is None:
                hit = rank
                if not flagged:
                    break  # nothing to cross-check further down the list
        first.append(hit)
    n = len(first)
    if not n:
        raise InputError(where, "the results hold no question", "give retrieval results")
    if len(no_ctx) == n:
        raise InputError(where, f"none of the {n:,} questions has a retrieved context, so "
                         "every recall would be 0", "give the retriever's output with its "
                         "ctxs lists")
    if len(no_tokens) == n:
        raise InputError(where, f"none of the {n:,} questions has an answer with a token "
                         f"({for_example(no_tokens)}), so no passage can ever contain one",
                         "give results whose questions carry their gold answers")
    warnings: list[ResultWarning] = []
    if short:
        # the cause: every list cut shorter than the depth asked (retrieve deeper), or only
        # some questions' lists, where the retriever found fewer passages to return
        # the retriever is named only when the run says which it was (a results file
        # alone does not)
        bm25 = (run_settings or {}).get("retriever") == "bm25"
        why = (f"no list holds more than {longest}: retrieve {depth} passages per question"
               if longest < depth else
               "the retriever returned fewer for them than for the others (" + (
                   "BM25 returns only passages that share a term with the question)" if bm25
                   else "a lexical retriever such as BM25 returns only passages that share "
                   "a term with the question; an approximate index can return fewer)"))
        warnings.append(ResultWarning(
            "short-lists", f"{short:,} of {n:,} questions have fewer than {depth} contexts "
            f"({len(no_ctx):,} have none); their recall counts only what is there — {why}"))
    if no_tokens:
        warnings.append(ResultWarning(
            "no-answer-tokens", f"{len(no_tokens):,} of {n:,} questions have no answer with a "
            f"token ({for_example(no_tokens)}), so they can never count as answered"))
    recall = {k: sum(1 for h in first if h is not None and h <= k) / n for k in ks}
    sig = make_signature("retrieval", {**answer_recall_settings(questions),
                                       **(run_settings or {})}, warnings)
    return AnswerRecallResult(recall, n, first, short, disagree, sig, tuple(warnings))
