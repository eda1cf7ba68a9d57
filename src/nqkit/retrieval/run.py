"""Open-domain retrieval runs: search one index (or fuse two) and write DPR results.

The results file is DPR's format (``dense_retriever.py``): a JSON list of
``{"question", "answers", "ctxs": [{"id", "title", "text", "score", "has_answer"}]}`` in
rank order, ``has_answer`` being DPR's string check
(:func:`nqkit.metrics.answer_recall.passage_has_answer`, what ``nqkit eval retrieval``
computes). Scores are JSON numbers (DPR writes them as strings; both read back the same):
a single retriever's float32 score in its shortest exact decimal form, a fused float64
score as Python prints it. The optional TREC run has the same lists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from nqkit.cluster import Cluster
from nqkit.errors import InputError
from nqkit.io import PathLike, atomic_output
from nqkit.retrieval.open_index import OpenIndex
from nqkit.retrieval.questions import Question
from nqkit.retrieval.topk import Hits

__all__ = ["Run", "check_compatible", "memoized_dpr_tokenizer", "run_retrieval",
           "run_signature_settings", "score_values", "search_options", "write_dpr_results"]

_MEMO_LIMIT = 200_000  # passages whose DPR tokens are kept (about 100 MB of token lists)


class _Memo:
    """DPR simple tokens of passage texts, computed once per distinct text.

    A run lists the same passage for many questions (3,610 x 100 contexts over a
    3,349-passage corpus: each passage about 100 times), and DPR's tokenizer costs about
    0.5 ms a passage here; the cache is cleared when it holds ``_MEMO_LIMIT`` texts.
    """

    def __init__(self) -> None:
        from nqkit.text.dpr_tokenize import simple_tokenize

        self._tokenize = simple_tokenize
        self._cache: dict[str, list[str]] = {}

    def __call__(self, text: str) -> list[str]:
        tokens = self._cache.get(text)
        if tokens is None:
            if len(self._cache) >= _MEMO_LIMIT:
                self._cache.clear()
            tokens = self._cache[text] = self._tokenize(text)
        return tokens


class _AnswerCheck:
    """DPR's ``has_answer`` (:mod:`nqkit.text.dpr_tokenize`, as
    :func:`nqkit.metrics.answer_recall.passage_has_answer` composes it), with the answers
    tokenized once per question and each passage's tokens (and their set) once per text.
    ``has_answer`` runs only when an answer's first token is among the passage's tokens —
    without it no answer can occur, so the result is the same."""

    def __init__(self) -> None:
        self._memo = _Memo()
        self._sets: dict[str, frozenset[str]] = {}

    @staticmethod
    def answers(answers: Sequence[str]) -> list[tuple[str, ...]]:
        from nqkit.text.dpr_tokenize import tokenize_answer

        return [tokenize_answer(a) for a in answers]

    def __call__(self, answers: list[tuple[str, ...]], text: str) -> bool:
        from nqkit.text.dpr_tokenize import has_answer

        tokens = self._memo(text)
        vocab = self._sets.get(text)
        if vocab is None:
            if len(self._sets) >= _MEMO_LIMIT:
                self._sets.clear()
            vocab = self._sets[text] = frozenset(tokens)
        if not any(a and a[0] in vocab for a in answers):
            return False
        return has_answer(answers, tokens)


def memoized_dpr_tokenizer() -> _Memo:
    """DPR's passage tokenizer, tokenizing each distinct text once (for
    :func:`nqkit.metrics.answer_recall.score_answer_recall`'s ``tokenize``)."""
    return _Memo()


@dataclass(frozen=True)
class Run:
    """Hit lists for every question, and what produced them."""

    hits: list[Hits]
    settings: dict[str, object]  # for the signature (corpus, retriever(s), fusion, depth)
    fused: bool
    peak_rss_mb: float


def _hybrid_parts() -> tuple[str, str]:
    """The (lexical, dense) retrievers a two-index run fuses, from the hybrid's declaration."""
    from nqkit.retrieval.base import load_retrievers

    lexical, dense = load_retrievers().get("hybrid").parts
    return lexical, dense


def check_compatible(indexes: Sequence[OpenIndex], fusion: str | None = None) -> None:
    """Two indexes fuse only over the same corpus, as one lexical plus one dense, and with
    a fusion of top-depth hit lists."""
    if len(indexes) == 2:
        a, b = indexes
        if a.fingerprint != b.fingerprint:
            raise InputError(f"--index {b.root}", f"was built from another corpus (fingerprint "
                             f"{b.fingerprint[:12]}, the first index has {a.fingerprint[:12]})",
                             "build both indexes from the same corpus file")
        lexical, dense = _hybrid_parts()
        if {a.retriever, b.retriever} != {lexical, dense}:
            raise InputError(f"--index {b.root}", f"a hybrid run fuses one {lexical} and one "
                             f"{dense} index, got {a.retriever} and {b.retriever}",
                             "give --index BM25_DIR --index DENSE_DIR")
        from nqkit.retrieval.fusion import LIST_FUSIONS

        if fusion is not None and fusion not in LIST_FUSIONS:
            raise InputError(f"--fusion {fusion}", "needs the score of every passage; "
                             "retrieve fuses each index's top --depth hits",
                             "use --fusion " + " or ".join(LIST_FUSIONS))
    elif len(indexes) != 1:
        raise InputError(None, f"give one or two --index directories, got {len(indexes)}",
                         "one for a bm25 or dense run, two for a hybrid run")


def run_signature_settings(indexes: Sequence[OpenIndex], fusion: str | None, alpha: float,
                           depth: int) -> dict[str, object]:
    from nqkit.retrieval.hybrid import fusion_settings

    first = indexes[0]
    out: dict[str, object] = {"corpus": first.fingerprint[:12], "passages": first.passages}
    if len(indexes) == 1:
        out.update(first.signature_settings())
        return out
    out["retriever"] = "hybrid"
    out.update(fusion_settings(str(fusion), 0.0, alpha))
    out["depth"] = depth
    for prefix, name in zip(("sparse", "dense"), _hybrid_parts(), strict=True):
        index = next(i for i in indexes if i.retriever == name)
        for key, value in index.signature_settings().items():
            if key != "retriever":
                out[f"{prefix}.{key}"] = value
    return out


def search_options(indexes: Sequence[OpenIndex], settings: Mapping[str, Any]
                   ) -> dict[str, dict[str, Any]]:
    """Each index's search options from ``retrieve``'s parsed settings (checked now, before
    any work: ``--device cuda`` without a GPU is refused here)."""
    from nqkit.retrieval.open_index import sharded_jobs

    return {i.retriever: sharded_jobs(i.retriever).search_options(settings) for i in indexes}


def run_retrieval(indexes: Sequence[OpenIndex], questions: Sequence[Question], k: int,
                  cluster: Cluster, settings: Mapping[str, Any],
                  options: Mapping[str, Mapping[str, Any]] | None = None) -> Run:
    """Search one index, or a lexical and a dense index and fuse them.

    ``settings``: ``retrieve``'s parsed settings after
    :func:`nqkit.retrieval.base.apply_preset` (``fusion``, ``alpha``, ``depth`` and the
    retrievers' search settings); ``options``: :func:`search_options` of them.
    """
    from nqkit.retrieval.fusion import fuse_normalized, fuse_rrf

    fusion, alpha, depth = settings["fusion"], settings["alpha"], settings["depth"]
    check_compatible(indexes, fusion)
    if options is None:
        options = search_options(indexes, settings)
    texts = [q.question for q in questions]
    run_settings = run_signature_settings(indexes, fusion if len(indexes) == 2 else None,
                                          alpha, max(depth, k))
    if len(indexes) == 1:
        hits, peak = indexes[0].search(texts, k, cluster, options[indexes[0].retriever])
        return Run(hits, run_settings, False, peak)
    depth = max(depth, k)
    by_kind = {}
    peak = 0.0
    for index in indexes:
        h, p = index.search(texts, depth, cluster, options[index.retriever])
        by_kind[index.retriever] = h
        peak = max(peak, p)
    lexical, dense = (by_kind[name] for name in _hybrid_parts())
    if fusion == "norm":
        fused = [fuse_normalized(s, d, alpha, k) for s, d in zip(lexical, dense, strict=True)]
    else:
        fused = [fuse_rrf([s, d], k) for s, d in zip(lexical, dense, strict=True)]
    return Run(fused, run_settings, True, peak)


def score_values(scores: np.ndarray, fused: bool) -> list[float]:
    """One question's scores as written to the results and the TREC run: a fused float64
    score as it is, a single retriever's float32 score as the float of its shortest exact
    text (:func:`nqkit.formats.trec.float32_scores`)."""
    from nqkit.formats.trec import float32_scores

    return scores.tolist() if fused else float32_scores(scores)


def write_dpr_results(path: PathLike | None, questions: Sequence[Question], run: Run,
                      index: OpenIndex, *, keep: bool = False
                      ) -> tuple[list[list[bool]], list[list[Any]]]:
    """Write the DPR results file (when ``path``); returns ``has_answer`` per context and,
    with ``keep``, the contexts themselves (for ``--eval``)."""
    from nqkit.formats.dpr import DprContext

    flags: list[list[bool]] = []
    kept: list[list[Any]] = []
    check = _AnswerCheck()
    passages: dict[int, Any] = {}  # rows repeat across questions: parse each once

    def records() -> Any:
        for q, (rows, scores) in zip(questions, run.hits, strict=True):
            ctxs = []
            qflags = []
            qkept = []
            answers = check.answers(q.answers)
            for row, value in zip(rows.tolist(), score_values(scores, run.fused),
                                  strict=True):
                p = passages.get(row)
                if p is None:
                    if len(passages) >= _MEMO_LIMIT:
                        passages.clear()
                    p = passages[row] = index.store.get(row)
                found = check(answers, p.text)
                qflags.append(found)
                ctxs.append({"id": p.id, "title": p.title, "text": p.text,
                             "score": value, "has_answer": found})
                if keep:
                    qkept.append(DprContext(p.id, p.title, p.text, value, None))
            flags.append(qflags)
            kept.append(qkept)
            yield {"question": q.question, "answers": list(q.answers), "ctxs": ctxs}

    if path is None:
        for _ in records():
            pass
        return flags, kept
    with atomic_output(path, "wb") as f:
        f.write(b"[\n")
        for i, rec in enumerate(records()):
            if i:
                f.write(b",\n")
            f.write(orjson.dumps(rec))
        f.write(b"\n]\n")
    return flags, kept
