"""BM25 with bm25s (Lucene variant), English stop words and the Snowball stemmer.

Declared once (:data:`SPEC`) for both paths. In memory (``nqkit reqa run``; ReQA's
Table 6 uses BM25 at paragraph level, index sentences for sentence level), scores of all
documents for one query come from ``bm25s.BM25.get_scores`` (a sparse matrix-vector
product), so a full score row costs about the size of the postings of the query terms.
Sharded (``nqkit index build``/``retrieve``): :mod:`nqkit.retrieval.bm25_index`, with
exactly the scores of one bm25s index over the whole corpus.

``--bm25-method lucene-exact`` is Pyserini's BM25 exactly instead (Lucene's English
analyzer from :mod:`nqkit.text.lucene`, Lucene's scoring from
:mod:`nqkit.retrieval.lucene_bm25`): in memory, every document's raw Lucene float32 score;
sharded, :mod:`nqkit.retrieval.lucene_index` (Lucene's tie order, Anserini's rounded
scores). Its stop words and stemmer are the analyzer's, so bm25s's do not apply.

``--bm25-fields text title`` (lucene-exact, ``index build``) indexes the title and the
text as two Lucene fields, each with its own length norm, searched together with
per-field weights: Anserini's multifield BM25 (``IndexCollection -fields title``,
``SearchCollection -fields contents=1.0 title=1.0``; :mod:`nqkit.retrieval.lucene_bm25`
says exactly what that is), the setup of DPR's BM25 (facebookresearch/DPR issue #57) and of
Pyserini's BEIR "multifield" runs, as against the flat ``title + "\n" + text`` of
Pyserini's DPR index (the default).

``k1`` and ``b`` default to the command's preset (:data:`nqkit.retrieval.base.PRESETS`):
ReQA's 1.5 / 0.75 for ``reqa run``, Pyserini's NQ 0.9 / 0.4 for ``index build``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nqkit.retrieval.base import (
    BUILD,
    MEMORY,
    RETRIEVERS,
    RetrieverSpec,
    ScoreFn,
    ShardedJobs,
    missing_extra,
)
from nqkit.retrieval.bm25_index import BM25_METHODS
from nqkit.settings import Param, float_in

FLAT_FIELDS = "title+text"  # nqkit.retrieval.lucene_bm25.FLAT (not imported: numpy)

__all__ = ["BM25_FLAVOURS", "LUCENE_EXACT", "PARAMS", "SPEC", "BM25Retriever"]

# Pyserini's BM25 exactly (Lucene's analyzer and scoring in numpy, no Java):
# nqkit.retrieval.lucene_bm25 and, on the sharded path, nqkit.retrieval.lucene_index
LUCENE_EXACT = "lucene-exact"
BM25_FLAVOURS = (*BM25_METHODS, LUCENE_EXACT)
# what lucene-exact analyzes with, in the places of bm25s's stop words and stemmer
LUCENE_STOP, LUCENE_STEM = "lucene", "porter"


PARAMS: tuple[Param, ...] = (
    Param("k1", "--k1", "BM25 k1 (default: the preset's; reqa 1.5, pyserini-nq 0.9)",
          type=float_in(0)),
    Param("b", "--b", "BM25 b (default: the preset's; reqa 0.75, pyserini-nq 0.4)",
          type=float_in(0, 1)),
    Param("bm25_method", "--bm25-method", "bm25s's BM25 variant (tf and idf; default "
          "lucene), or lucene-exact: Pyserini's BM25 exactly (Lucene's English analyzer, "
          "length bytes and tie order)", default="lucene", choices=BM25_FLAVOURS),
    Param("bm25_fields", "--bm25-fields", "what BM25 indexes: title+text (one field: the "
          "title, a line break, the text; the default) or the fields text and title, "
          "each with its own length norm, searched together as Anserini's multifield BM25 "
          "(lucene-exact only), optionally weighted, e.g. text title=0.5",
          nargs="+", metavar="FIELD[=WEIGHT]"),
)


def fields_setting(values: Sequence[str] | None) -> str:
    """``--bm25-fields``' values -> the canonical spelling recorded in params.json and the
    signature (``title+text``, or ``text=1,title=0.5``: names sorted, weights as float32
    texts); refused in one line when not one of those forms."""
    if not values or list(values) == [FLAT_FIELDS]:
        return FLAT_FIELDS
    from nqkit.retrieval.lucene_bm25 import FIELDS, field_weights, fields_spec

    try:
        return fields_spec(field_weights(",".join(values)))
    except ValueError:
        from nqkit.errors import InputError

        raise InputError("--bm25-fields", f"{' '.join(values)!r} is not {FLAT_FIELDS} nor "
                         f"fields among {' '.join(FIELDS)} each once, with positive weights",
                         "e.g. --bm25-fields text title, or text=1 title=0.5") from None


def signature_settings(k1: float, b: float, method: str, stopwords: str, stemmer: str
                       ) -> dict[str, object]:
    """The settings that change BM25 scores, as signatures name them (both paths).

    lucene-exact names its analyzer in the places of the stop words and the stemmer
    (``stop:lucene|stem:porter``: Lucene's 33 English stop words, its Porter stemmer).
    """
    return {"retriever": "bm25", "k1": k1, "b": b, "bm25": method, "stop": stopwords,
            "stem": stemmer}


def _import_bm25s() -> tuple[Any, Any]:
    try:
        import bm25s
        import Stemmer
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise missing_extra("bm25s and PyStemmer", "bm25") from e
    return bm25s, Stemmer


@dataclass
class _BM25Index:
    model: Any
    vocab: dict[str, int]
    size: int
    tokenize: Any

    def scorer(self, queries: Sequence[str]) -> ScoreFn:
        ids = [[self.vocab[t] for t in toks if t in self.vocab]
               for toks in self.tokenize(list(queries))]

        def scores(lo: int, hi: int) -> np.ndarray:
            out = np.zeros((hi - lo, self.size), dtype=np.float32)
            for r, q in enumerate(ids[lo:hi]):
                if q and self.model is not None:
                    out[r] = self.model.get_scores(q)
            return out

        return scores


@dataclass
class _LuceneIndex:
    """lucene-exact in memory: every document's raw Lucene float32 score (a full row has
    no rank order to adjust, so Anserini's rounding does not apply here)."""

    model: Any
    size: int

    @classmethod
    def build(cls, docs: Sequence[str], k1: float, b: float) -> _LuceneIndex:
        from nqkit.retrieval.lucene_bm25 import LuceneBM25, LuceneBM25Settings
        from nqkit.text.lucene import analyze

        ids = [str(i) for i in range(len(docs))]
        model = LuceneBM25.build([analyze(d) for d in docs], ids, LuceneBM25Settings(k1, b))
        return cls(model, len(docs))

    def scorer(self, queries: Sequence[str]) -> ScoreFn:
        from nqkit.text.lucene import analyze

        tokens = [analyze(q) for q in queries]

        def scores(lo: int, hi: int) -> np.ndarray:
            out = np.zeros((hi - lo, self.size), dtype=np.float32)
            for r, q in enumerate(tokens[lo:hi]):
                out[r] = self.model.scores(q)
            return out

        return scores


@dataclass
class BM25Retriever:
    """BM25 over the given texts (contexts are ignored)."""

    k1: float = 1.5
    b: float = 0.75
    method: str = "lucene"
    stopwords: str = "en"
    stemmer: str | None = "english"
    name: str = field(default="bm25", init=False)

    @classmethod
    def from_settings(cls, s: Mapping[str, Any]) -> BM25Retriever:
        """``s``: parsed options after :func:`nqkit.retrieval.base.apply_preset`."""
        return cls(k1=s["k1"], b=s["b"], method=s.get("bm25_method", "lucene"))

    def __post_init__(self) -> None:
        if self.method == LUCENE_EXACT and (self.stopwords, self.stemmer) != ("en", "english"):
            # the analyzer is Lucene's, whole: its stop words and stemmer are part of it
            raise ValueError("lucene-exact analyzes with Lucene's English analyzer (its own "
                             "stop words and Porter stemmer); stopwords and stemmer do not "
                             "apply: leave them unset or use another --bm25-method")

    def settings(self) -> dict[str, object]:
        if self.method == LUCENE_EXACT:
            return signature_settings(self.k1, self.b, self.method, LUCENE_STOP, LUCENE_STEM)
        return signature_settings(self.k1, self.b, self.method, self.stopwords,
                                  self.stemmer or "none")

    def _tokenizer(self) -> Any:
        bm25s, Stemmer = _import_bm25s()
        stem = Stemmer.Stemmer(self.stemmer) if self.stemmer else None

        def tokenize(texts: list[str]) -> list[list[str]]:
            out: list[list[str]] = bm25s.tokenize(texts, stopwords=self.stopwords, stemmer=stem,
                                                  return_ids=False, show_progress=False)
            return out

        return tokenize

    def index(self, docs: Sequence[str], contexts: Sequence[str] | None = None
              ) -> _BM25Index | _LuceneIndex:
        if self.method == LUCENE_EXACT:
            return _LuceneIndex.build(docs, self.k1, self.b)
        bm25s, _ = _import_bm25s()
        tokenize = self._tokenizer()
        tokens = tokenize(list(docs))
        model = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in toks] for toks in tokens]
        if not vocab:  # only stop words (or nothing): every query scores 0 everywhere
            return _BM25Index(None, vocab, len(docs), tokenize)
        model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
        return _BM25Index(model, vocab, len(docs), tokenize)


# -- the sharded path: nqkit.retrieval.bm25_index, its settings from the same options ----

def _index_settings(s: Mapping[str, Any]) -> dict[str, Any]:
    from nqkit.retrieval.bm25_index import BM25Settings

    fields = fields_setting(s.get("bm25_fields"))
    if s["bm25_method"] == LUCENE_EXACT:
        return BM25Settings(k1=s["k1"], b=s["b"], method=LUCENE_EXACT, stopwords=LUCENE_STOP,
                            stemmer=LUCENE_STEM, fields=fields).as_dict()
    if fields != FLAT_FIELDS:
        from nqkit.errors import InputError

        raise InputError("--bm25-fields", f"{fields} needs --bm25-method lucene-exact (the "
                         f"bm25s flavours index {FLAT_FIELDS} only)",
                         "add --bm25-method lucene-exact, or leave --bm25-fields out")
    return BM25Settings(k1=s["k1"], b=s["b"], method=s["bm25_method"]).as_dict()


def _build(root: Any, shards: Any, settings: dict[str, Any], cluster: Any) -> dict[str, Any]:
    from nqkit.retrieval.bm25_index import BM25Settings, build_bm25

    if settings["method"] == LUCENE_EXACT:
        from nqkit.retrieval.lucene_index import build_lucene

        return build_lucene(root, shards, settings["k1"], settings["b"], cluster,
                            settings.get("fields", FLAT_FIELDS))
    return build_bm25(root, shards, BM25Settings(**settings), cluster)


def _job_modules(settings: Mapping[str, Any]) -> tuple[str, ...]:
    return (("nqkit.retrieval.lucene_index",) if settings["method"] == LUCENE_EXACT
            else ("nqkit.retrieval.bm25_index",))


def _search(index: Any, questions: list[str], k: int, cluster: Any,
            options: Mapping[str, Any]) -> tuple[list[Any], float]:
    from nqkit.retrieval.bm25_index import BM25Settings, search_bm25

    s = index.settings()
    if s["method"] == LUCENE_EXACT:
        from nqkit.retrieval.lucene_bm25 import LuceneBM25Settings
        from nqkit.retrieval.lucene_index import search_lucene

        return search_lucene(index.root, index.shards, LuceneBM25Settings(s["k1"], s["b"]),
                             index.params["facts"], questions, k, cluster,
                             s.get("fields", FLAT_FIELDS))
    return search_bm25(index.root, index.shards, BM25Settings(**s), questions, k, cluster)


def _index_signature(params: Mapping[str, Any]) -> dict[str, object]:
    s = params["settings"]
    out = {**signature_settings(s["k1"], s["b"], s["method"], s["stopwords"], s["stemmer"]),
           "fields": s["fields"]}
    if s["method"] == LUCENE_EXACT:
        from nqkit.retrieval.lucene_index import SCORES

        # the analyzer is nqkit's own (its version is the signature's last field)
        return {**out, "scores": SCORES}
    return {**out, "bm25s": params["versions"]["bm25s"]}


def _versions(settings: Mapping[str, Any]) -> dict[str, str]:
    if settings.get("method") == LUCENE_EXACT:
        return {}  # the analyzer and the scoring are nqkit's own (its version is recorded)
    from nqkit.retrieval.bm25_index import bm25_versions

    return bm25_versions()


SPEC = RETRIEVERS.add("bm25", RetrieverSpec(
    "bm25", "BM25 (bm25s, English stop words, Snowball stemmer)", PARAMS,
    uses={MEMORY: ("k1", "b", "bm25_method"),
          BUILD: ("k1", "b", "bm25_method", "bm25_fields")},
    in_memory=BM25Retriever,
    sharded=ShardedJobs(_index_settings, _build, _search, _index_signature, _versions,
                        ("bm25s", "PyStemmer"), job_modules=_job_modules)))
