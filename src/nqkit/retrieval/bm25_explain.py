"""Why two BM25 runs of the same questions differ: each differing top-k list put down to
one named cause (issue 33, part 2; ``nqkit explain bm25``).

Published NQ BM25 numbers come from more than one setup (bm25s's tokenizer and scoring,
Pyserini's Lucene analyzer and scoring, flat or multifield, other k1 / b; facebookresearch/
DPR #57, beir #197, pyserini #336), and "my BM25 does not match the paper" needs an answer
per question, not a guess. The answer here is counterfactual: a chain of in-memory BM25
setups goes from run A's setup to run B's, swapping one named component at a time
(:data:`STEPS`), and every question whose two lists differ is put down to the **last**
step that changes its list -- the convention of
:func:`nqkit.metrics.em_conventions.gap_causes`, so the counts add up to the number of
differing lists. The components:

* ``passages``: the other index's corpus (only when the two corpora differ);
* ``analyzer``: bm25s's tokens (``(?u)\\b\\w\\w+\\b``, its English stop words,
  PyStemmer's Snowball English; ``title + " " + text``) -> Lucene's English analyzer
  (:func:`nqkit.text.lucene.analyze`; ``title + "\\n" + text``), scored by the same scorer
  (bm25s takes pre-tokenized corpora and queries);
* ``k1/b``: the other run's k1 and b (only when they differ);
* ``scoring``: bm25s's scoring (its idf and exact lengths, float32 sums, a repeated query
  word scored once per occurrence) -> Lucene's (:mod:`nqkit.retrieval.lucene_bm25`: its
  idf, lengths in one lossy byte, float32 clause scores added in double, a repeated word
  one clause boosted by its count);
* ``fields``: flat ``title+text`` <-> Anserini's multifield text and title (only when
  they differ; before ``scoring`` when going to flat, after it when going to multifield,
  since bm25s scores one field only);
* ``tie order``: equal scores ordered by corpus position (bm25s flavours) -> by passage id
  as a string (Anserini's sort): the remaining difference is only the order of equal scores.

Two causes are not steps: ``missing passages`` (a passage of one list is not in the other
run's corpus: no setup explains that) and ``not reproduced`` (the chain's first stage does
not give run A's list, or its last stage run B's, for that question: then the attribution
would be unreliable, and it is said, never hidden -- :class:`Bm25Explanation` counts the
questions each end reproduces, and a warning marks the signature).

Everything runs in memory over the whole corpus (every stage is a full index of it), so it
suits corpora of up to some 10^5 passages, not ``psgs_w100``'s 21 M.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from nqkit.retrieval.bm25 import LUCENE_EXACT
from nqkit.retrieval.lucene_bm25 import (
    FLAT,
    LuceneBM25,
    LuceneBM25Settings,
    MultiFieldBM25,
    field_texts,
    field_weights,
)

__all__ = ["CAUSES", "STEPS", "Bm25Explanation", "Bm25Setup", "explain_bm25",
           "explain_indexes", "explanation_json", "explanation_signature",
           "explanation_table", "ranked_lists", "setup_of_index"]

# the components swapped, in the order they are swapped (``fields`` moves: see above)
STEPS = ("passages", "analyzer", "k1/b", "scoring", "fields", "tie order")
MISSING = "missing passages"
UNREPRODUCED = "not reproduced"
CAUSES = (MISSING, *STEPS, UNREPRODUCED)
LUCENE = "lucene"  # the analyzer and the scoring of lucene-exact
POSITION, ID = "position", "id"  # tie orders: corpus position, passage id as a string


@dataclass(frozen=True, slots=True)
class Bm25Setup:
    """One BM25 setup: what each named component is."""

    analyzer: str  # "lucene", or "bm25s:STOPWORDS:STEMMER" (stemmer "none": no stemming)
    scoring: str  # "lucene", or "bm25s:METHOD" (lucene, robertson, atire, ...)
    k1: float
    b: float
    fields: str = FLAT  # "title+text", or multifield weights "text=1,title=1"
    ties: str = POSITION  # POSITION or ID

    def check(self) -> None:
        if self.fields != FLAT and self.scoring != LUCENE:
            raise ValueError(f"{self.fields}: multifield BM25 needs Lucene's scoring")


def setup_of_index(settings: Mapping[str, Any]) -> Bm25Setup:
    """The setup of a BM25 index directory's ``params.json`` settings."""
    if settings["method"] == LUCENE_EXACT:
        return Bm25Setup(LUCENE, LUCENE, float(settings["k1"]), float(settings["b"]),
                         settings.get("fields", FLAT), ID)
    return Bm25Setup(f"bm25s:{settings['stopwords']}:{settings['stemmer']}",
                     f"bm25s:{settings['method']}", float(settings["k1"]),
                     float(settings["b"]))


@dataclass(frozen=True, slots=True)
class Corpus:
    """Passages in corpus order."""

    ids: tuple[str, ...]
    titles: tuple[str, ...]
    texts: tuple[str, ...]


def _analyzer(name: str) -> Callable[[list[str]], list[list[str]]]:
    if name == LUCENE:
        from nqkit.text.lucene import analyze_many

        return analyze_many
    from nqkit.retrieval.bm25 import _import_bm25s

    _, stopwords, stemmer = name.split(":")
    bm25s, Stemmer = _import_bm25s()
    stem = Stemmer.Stemmer(stemmer) if stemmer != "none" else None

    def tokenize(texts: list[str]) -> list[list[str]]:
        out: list[list[str]] = bm25s.tokenize(texts, stopwords=stopwords, stemmer=stem,
                                              return_ids=False, show_progress=False)
        return out

    return tokenize


def _field_texts(corpus: Corpus, analyzer: str, name: str) -> list[str]:
    """What a field holds: the flat field joins title and text as each flavour does
    (bm25s with a space, Lucene with a line break; neither is a token of either)."""
    if name == FLAT and analyzer != LUCENE:
        return [f"{t} {x}" for t, x in zip(corpus.titles, corpus.texts, strict=True)]
    return [field_texts(t, x, name) for t, x in zip(corpus.titles, corpus.texts, strict=True)]


Candidates = tuple[np.ndarray, np.ndarray]  # matched rows, their float32 scores


def _bm25s_scorer(docs: list[list[str]], setup: Bm25Setup
                  ) -> Callable[[list[str]], Candidates]:
    """bm25s's scores over token lists (its public ``index`` and ``get_scores``, as
    :class:`nqkit.retrieval.bm25.BM25Retriever` calls them); a passage is a match when its
    score is above 0, as the sharded bm25s search keeps it."""
    from nqkit.retrieval.bm25 import _import_bm25s

    bm25s, _ = _import_bm25s()
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in toks] for toks in docs]
    model = bm25s.BM25(k1=setup.k1, b=setup.b, method=setup.scoring.split(":", 1)[1])
    if vocab:
        model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)

    def score(query: list[str]) -> Candidates:
        q = [vocab[t] for t in query if t in vocab]
        if not q:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        row = np.asarray(model.get_scores(q), dtype=np.float32)
        hit = np.flatnonzero(row > 0)
        return hit.astype(np.int64), row[hit]

    return score


def _lucene_scorer(fields: Mapping[str, list[list[str]]], ids: Sequence[str],
                   setup: Bm25Setup) -> Callable[[list[str]], Candidates]:
    settings = LuceneBM25Settings(setup.k1, setup.b)
    if setup.fields == FLAT:
        return LuceneBM25.build(fields[FLAT], ids, settings).matches
    return MultiFieldBM25.build(dict(fields), ids, field_weights(setup.fields),
                                settings).matches


def _order(cand: np.ndarray, vals: np.ndarray, key: np.ndarray, k: int) -> np.ndarray:
    """The k best rows: score descending, then ``key`` ascending (every candidate is kept
    until the sort, so ties at the k-th place are decided by the key, not by chance)."""
    return cand[np.lexsort((key[cand], -vals.astype(np.float64)))[:k]]


def ranked_lists(corpus: Corpus, setup: Bm25Setup, questions: Sequence[str], k: int,
                 cache: dict[Any, Any] | None = None) -> list[tuple[str, ...]]:
    """Each question's top-k passage ids under ``setup`` over ``corpus`` (in memory).

    ``cache`` keeps token lists across calls (the key names the corpus object, so one
    cache serves one explanation)."""
    setup.check()
    cache = {} if cache is None else cache
    analyze = _analyzer(setup.analyzer)

    def tokens(name: str) -> list[list[str]]:
        key = (id(corpus), setup.analyzer, name)
        if key not in cache:
            cache[key] = analyze(_field_texts(corpus, setup.analyzer, name))
        return cache[key]

    qkey = (id(questions), setup.analyzer, "questions")
    if qkey not in cache:
        cache[qkey] = analyze(list(questions))
    queries: list[list[str]] = cache[qkey]
    names = [FLAT] if setup.fields == FLAT else sorted(field_weights(setup.fields))
    if setup.scoring == LUCENE:
        score = _lucene_scorer({n: tokens(n) for n in names}, corpus.ids, setup)
    else:
        score = _bm25s_scorer(tokens(FLAT), setup)
    if setup.ties == ID:
        order = sorted(range(len(corpus.ids)), key=corpus.ids.__getitem__)
        key = np.empty(len(corpus.ids), dtype=np.int64)
        key[order] = np.arange(len(corpus.ids))
    else:
        key = np.arange(len(corpus.ids), dtype=np.int64)
    out = []
    for q in queries:
        rows = _order(*score(q), key, k)
        out.append(tuple(corpus.ids[r] for r in rows.tolist()))
    return out


def chain(a: Bm25Setup, b: Bm25Setup, same_corpus: bool) -> list[tuple[str, Bm25Setup]]:
    """The setups from ``a`` to ``b``, each after the step (of :data:`STEPS`) that made it;
    steps whose component is the same in both are left out."""
    out: list[tuple[str, Bm25Setup]] = []
    cur = a
    if not same_corpus:
        out.append(("passages", cur))
    swaps: list[tuple[str, dict[str, Any]]] = [
        ("analyzer", {"analyzer": b.analyzer}), ("k1/b", {"k1": b.k1, "b": b.b})]
    fields = ("fields", {"fields": b.fields})
    scoring = ("scoring", {"scoring": b.scoring})
    # bm25s scores one flat field: go to flat before leaving Lucene, to multifield after
    swaps += [fields, scoring] if b.fields == FLAT else [scoring, fields]
    swaps.append(("tie order", {"ties": b.ties}))
    for name, change in swaps:
        nxt = replace(cur, **change)
        if nxt != cur:
            out.append((name, nxt))
            cur = nxt
    return out


@dataclass(frozen=True)
class Bm25Explanation:
    """Why run B's top-k lists differ from run A's, question by question.

    ``counts[cause]`` over :data:`CAUSES` add up to ``differing``; ``examples[cause]``: the
    first questions (input order) of each cause; ``reproduced_a`` / ``reproduced_b``: the
    questions whose list the chain's first / last stage gives exactly as run A / run B did
    (of ``questions``); ``steps``: the steps of the chain, in order; ``changed[step]``: the
    differing lists that step changes at all (a list may be changed by several steps; the
    cause is the last of them).
    """

    questions: int
    differing: int
    counts: dict[str, int]
    examples: dict[str, list[str]]
    reproduced_a: int
    reproduced_b: int
    steps: tuple[str, ...]
    changed: dict[str, int]
    per_question: list[str | None] = field(repr=False)  # each question's cause (None: same)

    @property
    def reliable(self) -> bool:
        return self.reproduced_a == self.questions and self.reproduced_b == self.questions


def explain_bm25(corpus_a: Corpus, setup_a: Bm25Setup, lists_a: Sequence[Sequence[str]],
                 corpus_b: Corpus, setup_b: Bm25Setup, lists_b: Sequence[Sequence[str]],
                 questions: Sequence[str], k: int, *, keep: int = 3) -> Bm25Explanation:
    """Put each question whose list differs between run A (``lists_a``, passage ids, best
    first) and run B down to one cause (module docstring). ``k``: the runs' depth."""
    if not (len(lists_a) == len(lists_b) == len(questions)):
        raise ValueError(f"{len(lists_a)} and {len(lists_b)} lists for {len(questions)} "
                         "questions")
    same = corpus_a == corpus_b
    steps = chain(setup_a, setup_b, same)
    cache: dict[Any, Any] = {}
    stages = [ranked_lists(corpus_a, setup_a, questions, k, cache)]
    stages += [ranked_lists(corpus_a if same else corpus_b, s, questions, k, cache)
               for _, s in steps]
    names = [name for name, _ in steps]
    ids_a, ids_b = set(corpus_a.ids), set(corpus_b.ids)
    counts = dict.fromkeys(CAUSES, 0)
    examples: dict[str, list[str]] = {c: [] for c in CAUSES}
    changed = dict.fromkeys(names, 0)
    per_question: list[str | None] = []
    rep_a = rep_b = differing = 0
    for i, (la, lb) in enumerate(zip(lists_a, lists_b, strict=True)):
        marks = [stage[i] for stage in stages]
        ok_a, ok_b = marks[0] == tuple(la), marks[-1] == tuple(lb)
        rep_a += ok_a
        rep_b += ok_b
        if tuple(la) == tuple(lb):
            per_question.append(None)
            continue
        differing += 1
        for j in range(1, len(marks)):
            changed[names[j - 1]] += marks[j] != marks[j - 1]
        if not set(la) <= ids_b or not set(lb) <= ids_a:
            cause = MISSING
        elif not (ok_a and ok_b):
            cause = UNREPRODUCED
        else:  # the last step whose list differs from the one before it
            cause = names[max(j for j in range(1, len(marks)) if marks[j] != marks[j - 1]) - 1]
        counts[cause] += 1
        per_question.append(cause)
        if len(examples[cause]) < keep:
            examples[cause].append(questions[i])
    return Bm25Explanation(len(questions), differing, counts, examples, rep_a, rep_b,
                           tuple(names), changed, per_question)


def _corpus(index: Any) -> Corpus:
    from nqkit.retrieval.passage_store import iter_shard

    ids: list[str] = []
    titles: list[str] = []
    texts: list[str] = []
    for shard in index.shards:
        for p in iter_shard(index.root, shard):
            ids.append(p.id)
            titles.append(p.title)
            texts.append(p.text)
    return Corpus(tuple(ids), tuple(titles), tuple(texts))


def explain_indexes(index_a: Any, index_b: Any, questions: Sequence[str], k: int,
                    cluster: Any) -> tuple[Bm25Explanation, list[list[str]], list[list[str]]]:
    """Search both BM25 index directories (:class:`nqkit.retrieval.open_index.OpenIndex`)
    as ``nqkit retrieve`` does and explain their differing lists; also returns the two
    runs' lists (passage ids)."""
    from nqkit.errors import InputError

    for name, ix in (("A", index_a), ("B", index_b)):
        if ix.retriever != "bm25":
            raise InputError(str(ix.root), f"index {name} is a {ix.retriever} index; "
                             "explain bm25 compares two BM25 indexes",
                             "give two index directories built with --retriever bm25")
    texts = list(questions)
    runs = []
    for ix in (index_a, index_b):
        hits, _ = ix.search(texts, k, cluster, {})
        runs.append([ix.store.ids(rows.tolist()) for rows, _ in hits])
    corpus_a = _corpus(index_a)
    corpus_b = corpus_a if index_b.fingerprint == index_a.fingerprint else _corpus(index_b)
    return (explain_bm25(corpus_a, setup_of_index(index_a.settings()), runs[0], corpus_b,
                         setup_of_index(index_b.settings()), runs[1], texts, k),
            runs[0], runs[1])


def explanation_signature(index_a: Any, index_b: Any, k: int, questions: Sequence[str],
                          warnings: Sequence[Any]) -> str:
    """The questions (their split, :func:`nqkit.splits.identify`), both indexes (digest:
    their settings and passages), their corpora's fingerprints and flavours, the depth."""
    from nqkit.signature import make_signature
    from nqkit.splits import identify

    settings: dict[str, object] = {"split": identify(questions)}
    for name, ix in (("a", index_a), ("b", index_b)):
        s = ix.settings()
        settings |= {f"{name}-index": ix.digest[:12], f"{name}-corpus": ix.fingerprint[:12],
                     f"{name}-bm25": s["method"], f"{name}-k1": s["k1"], f"{name}-b": s["b"],
                     f"{name}-fields": s.get("fields", FLAT)}
    return make_signature("explain", {**settings, "hits": k}, warnings)


def _shown(e: Bm25Explanation) -> list[str]:
    """The causes printed: the chain's steps in its order, the others when they occur."""
    return ([MISSING] * (e.counts[MISSING] > 0) + list(e.steps)
            + [UNREPRODUCED] * (e.counts[UNREPRODUCED] > 0))


def explanation_json(e: Bm25Explanation, signature: str, warnings: Sequence[Any]
                     ) -> dict[str, Any]:
    return {"questions": e.questions, "differing": e.differing, "steps": list(e.steps),
            "causes": [{"cause": c, "questions": e.counts[c], "examples": e.examples[c]}
                       for c in _shown(e)],
            "changed_by_step": e.changed, "reproduced_a": e.reproduced_a,
            "reproduced_b": e.reproduced_b, "warnings": [w.to_json() for w in warnings],
            "signature": signature}


def explanation_table(e: Bm25Explanation, signature: str) -> str:
    from nqkit.report import format_table

    rows = [(c, f"{e.counts[c]:,}", f"{e.changed[c]:,}" if c in e.changed else "-",
             " | ".join(q[:50] for q in e.examples[c]))
            for c in _shown(e)]
    rows.append(("all differing lists", f"{e.differing:,}", "", ""))
    return "\n".join([
        format_table(["cause (last step)", "questions", "lists it changes", "examples"], rows,
                     right={1, 2}),
        f"{e.differing:,} of {e.questions:,} top-k lists differ; the chain's first stage "
        f"gives run A's list for {e.reproduced_a:,}, its last run B's for "
        f"{e.reproduced_b:,}",
        signature])

