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

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from nqkit.cluster import Cluster
from nqkit.errors import InputError
from nqkit.formats.dpr import DprContext, DprResult
from nqkit.io import PathLike, atomic_output
from nqkit.retrieval.open_index import OpenIndex
from nqkit.retrieval.questions import Question
from nqkit.retrieval.topk import Hits
from nqkit.text.dpr_tokenize import AnswerCheck, fold

__all__ = ["Run", "check_compatible", "dpr_results", "run_retrieval", "run_signature_settings",
           "score_values", "search_options", "write_dpr_results"]

_ROW_LIMIT = 50_000  # passages whose JSON fragment, text and folded text are kept (~2.5 KB each)


@dataclass(frozen=True)
class Run:
    """Hit lists for every question, and what produced them."""

    hits: list[Hits]
    settings: dict[str, object]  # for the signature (corpus, retriever(s), fusion, depth)
    fused: bool
    peak_rss_mb: float


def hybrid_order(indexes: Sequence[OpenIndex]) -> list[OpenIndex]:
    """The two indexes of a hybrid run as its first and second part: in the order of the
    hybrid's declared parts (a bm25 index first, a dense one second), otherwise in the
    order given."""
    from nqkit.retrieval.base import load_retrievers

    parts = load_retrievers().get("hybrid").parts
    rank = {name: i for i, name in enumerate(parts)}
    return sorted(indexes, key=lambda index: rank.get(index.retriever, len(parts)))


def check_compatible(indexes: Sequence[OpenIndex], fusion: str | None = None) -> None:
    """Two indexes fuse only over the same corpus, as two different indexes, and with a
    fusion of top-depth hit lists."""
    if len(indexes) == 2:
        a, b = indexes
        if a.fingerprint != b.fingerprint:
            raise InputError(f"--index {b.root}", f"was built from another corpus (fingerprint "
                             f"{b.fingerprint[:12]}, the first index has {a.fingerprint[:12]})",
                             "build both indexes from the same corpus file")
        if a.digest == b.digest:
            raise InputError(f"--index {b.root}", f"is the same index as --index {a.root} "
                             f"(digest {a.digest[:12]}): fusing it with itself changes "
                             "nothing", "give two indexes of different retrievers or "
                             "settings over the corpus")
        from nqkit.retrieval.fusion import LIST_FUSIONS

        if fusion is not None and fusion not in LIST_FUSIONS:
            raise InputError(f"--fusion {fusion}", "needs the score of every passage; "
                             "retrieve fuses each index's top --depth hits",
                             "use --fusion " + " or ".join(LIST_FUSIONS))
    elif len(indexes) != 1:
        raise InputError(None, f"give one or two --index directories, got {len(indexes)}",
                         "one for a single run, two for a hybrid run")


def run_signature_settings(indexes: Sequence[OpenIndex], fusion: str | None, alpha: float,
                           depth: int) -> dict[str, object]:
    from nqkit.retrieval.hybrid import fusion_settings, part_settings

    first = indexes[0]
    out: dict[str, object] = {"corpus": first.fingerprint[:12], "passages": first.passages}
    if len(indexes) == 1:
        out.update(first.signature_settings())
        return out
    out["retriever"] = "hybrid"
    out.update(fusion_settings(str(fusion), 0.0, alpha))
    out["depth"] = depth
    out.update(part_settings([{"retriever": index.retriever, **index.signature_settings()}
                              for index in hybrid_order(indexes)]))
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
    """Search one index, or two indexes and fuse them (:func:`hybrid_order`).

    ``settings``: ``retrieve``'s parsed settings after
    :func:`nqkit.retrieval.base.apply_preset` (``fusion``, ``alpha``, ``depth`` and the
    retrievers' search settings); ``options``: :func:`search_options` of them.
    """
    from nqkit.retrieval.fusion import fuse_normalized, fuse_rrf
    from nqkit.retrieval.hybrid import hybrid_settings

    settings = hybrid_settings(settings)
    fusion, alpha = settings["fusion"], settings["alpha"]
    depth = max(settings["depth"], k)  # hits taken from each index before fusion
    check_compatible(indexes, fusion)
    if options is None:
        options = search_options(indexes, settings)
    texts = [q.question for q in questions]
    run_settings = run_signature_settings(indexes, fusion, alpha, depth)
    if len(indexes) == 1:
        hits, peak = indexes[0].search(texts, k, cluster, options[indexes[0].retriever])
        return Run(hits, run_settings, False, peak)
    lists = []
    peak = 0.0
    for index in hybrid_order(indexes):
        h, p = index.search(texts, depth, cluster, options[index.retriever])
        lists.append(h)
        peak = max(peak, p)
    first, second = lists
    if fusion == "norm":
        fused = [fuse_normalized(a, b, alpha, k) for a, b in zip(first, second, strict=True)]
    else:
        fused = [fuse_rrf([a, b], k) for a, b in zip(first, second, strict=True)]
    return Run(fused, run_settings, True, peak)


def score_values(scores: np.ndarray, fused: bool) -> list[float]:
    """One question's scores as written to the results and the TREC run: a fused float64
    score as it is, a single retriever's float32 score as the float of its shortest exact
    text (:func:`nqkit.formats.trec.float32_scores`)."""
    from nqkit.formats.trec import float32_scores

    return scores.tolist() if fused else float32_scores(scores)


class _Fragments:
    """Each passage's part of a context in the results file, made once per row: the
    passage, ``{"id":...,"title":...,"text":...,"score":`` as ``orjson`` writes that dict
    (so a context is that fragment, the score's text and the flag's: the bytes orjson
    gives the whole record), and the text with its :func:`~nqkit.text.dpr_tokenize.fold`
    for the has-answer check (which tokenizes a text only when an answer may be in it). A
    run lists the same passage for many questions; the cache is emptied when it holds
    ``_ROW_LIMIT`` rows."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.cache: dict[int, tuple[bytes, str, str]] = {}

    def add(self, row: int) -> tuple[bytes, str, str]:
        if len(self.cache) >= _ROW_LIMIT:
            self.cache.clear()
        p = self._store.get(row)
        head = orjson.dumps({"id": p.id, "title": p.title, "text": p.text})[:-1]
        entry = self.cache[row] = (head + b',"score":', p.text, fold(p.text))
        return entry


_FLAG = (b',"has_answer":false},', b',"has_answer":true},')  # a context's end and comma


def _score_texts(scores: np.ndarray, fused: bool) -> list[bytes]:
    """Each score's JSON text, as orjson writes the float of :func:`score_values`.

    A fused (float64) score is orjson's text of it. A float32 score is numpy's shortest
    text of the float32 (``astype(str)``), which is the text orjson writes for the float
    of that text, as :func:`nqkit.formats.trec.float32_scores` makes it, except in its
    notation outside [1e-3, 1e15) (``1e-05`` / orjson ``1e-5`` or ``0.00001``): those go
    through orjson itself, and so do non-finite values."""
    if not scores.shape[0]:
        return []
    if fused:
        return orjson.dumps(scores.tolist())[1:-1].split(b",")
    values = scores.astype(np.float32)
    texts = values.astype(str)
    codes = texts.view(np.uint32).reshape(texts.shape[0], -1)  # UCS-4 code points
    mag = np.abs(values)
    redo = (codes == ord("e")).any(axis=1) | ~((mag >= 1e-3) & (mag < 1e15))
    out = ",".join(texts.tolist()).encode("ascii").split(b",")
    for i in np.flatnonzero(redo).tolist():
        out[i] = orjson.dumps(float(texts[i]))
    return out


_BLOCK = 1024  # questions whose scores are formatted together


def _hit_texts(run: Run) -> Iterator[tuple[list[int], list[bytes]]]:
    """Each question's rows and score texts; the scores formatted by blocks of questions
    (one numpy cast per block, not per question)."""
    for lo in range(0, len(run.hits), _BLOCK):
        hits = run.hits[lo:lo + _BLOCK]
        rows = np.concatenate([h[0] for h in hits]).tolist()
        dtype = np.float64 if run.fused else np.float32
        texts = _score_texts(np.concatenate([h[1] for h in hits]).astype(dtype), run.fused)
        at = 0
        for h in hits:
            n = h[0].shape[0]
            yield rows[at:at + n], texts[at:at + n]
            at += n


def write_dpr_results(path: PathLike, questions: Sequence[Question], run: Run,
                      index: OpenIndex, *, check: AnswerCheck | None = None) -> None:
    """Write the DPR results file: for each question ``{"question", "answers", "ctxs":
    [{"id", "title", "text", "score", "has_answer"}]}``, one question per line, the bytes
    of ``orjson.dumps`` of those dicts, assembled from per-passage fragments
    (:class:`_Fragments`) and per-hit score and flag texts. ``check`` is the has-answer
    check to use (a fresh one by default); ``nqkit retrieve --eval`` passes the one it
    scores with, whose cache is then warm."""
    from nqkit.report import progress

    check = check if check is not None else AnswerCheck()
    fragments = _Fragments(index.store)
    cache, add = fragments.cache, fragments.add
    with atomic_output(path, "wb") as f:
        f.write(b"[\n")
        for i, (q, (rows, texts)) in enumerate(progress(
                zip(questions, _hit_texts(run), strict=True), desc="writing results",
                total=len(questions), unit="q")):
            answers = check.answers(q.answers)
            parts = [b",\n" if i else b"", b'{"question":', orjson.dumps(q.question),
                     b',"answers":', orjson.dumps(list(q.answers)), b',"ctxs":[']
            for row, score in zip(rows, texts, strict=True):
                head, text, folded = cache.get(row) or add(row)
                parts += (head, score, _FLAG[check(answers, text, folded)])
            if len(parts) > 6:
                parts[-1] = parts[-1][:-1]  # no comma after the last context
            parts.append(b"]}")
            f.write(b"".join(parts))
        f.write(b"\n]\n")


def dpr_results(questions: Sequence[Question], run: Run, index: OpenIndex
                ) -> Iterator[DprResult]:
    """The run as :class:`~nqkit.formats.dpr.DprResult` s, for scoring: the passages'
    ids, titles and texts in rank order (no score, no flag: the scoring reads the text),
    each passage made once per row and shared by the questions that retrieved it."""
    contexts: dict[int, DprContext] = {}

    def context(row: int) -> DprContext:
        c = contexts.get(row)
        if c is None:
            if len(contexts) >= _ROW_LIMIT:
                contexts.clear()
            p = index.store.get(row)
            c = contexts[row] = DprContext(p.id, p.title, p.text)
        return c

    for q, (rows, _scores) in zip(questions, run.hits, strict=True):
        yield DprResult(q.question, q.answers, tuple(map(context, rows.tolist())))
