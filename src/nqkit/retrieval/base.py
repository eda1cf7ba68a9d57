"""The small interface every retriever implements, and the registry of retrievers.

A retriever indexes a list of texts (answers, sentences, paragraphs or NQ candidates,
optionally with a context each) and returns a :class:`SearchIndex`. Given a list of
queries, the index returns a *scorer*: a function ``scores(lo, hi)`` giving the
``(hi - lo, size)`` float32 matrix of query-by-document scores for queries ``lo..hi-1``
(higher is better). The query-side work (encoding, tokenizing) is done once; the matrix
is produced in row chunks, so memory stays bounded whatever the number of queries.
This is exactly what :func:`nqkit.metrics.ranking.rank_queries` consumes.

Dense retrievers are built from an :class:`Encoder` (``encode_queries(texts)`` and
``encode_docs(texts, contexts=None)`` returning L2-comparable float32 arrays); scores are
dot products, as in ReQA (Algorithm 2). Lexical retrievers score directly.

Retrievers are registered by name in :data:`RETRIEVERS` as factories taking keyword
options (``RETRIEVERS.get("bm25")(k1=1.2)``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from nqkit.registry import Registry

__all__ = ["RETRIEVERS", "Encoder", "Retriever", "ScoreFn", "SearchIndex", "missing_extra"]

ScoreFn = Callable[[int, int], np.ndarray]


class SearchIndex(Protocol):
    """An indexed collection that scores queries against all of its documents."""

    size: int  # number of indexed documents (columns of the score matrix)

    def scorer(self, queries: Sequence[str]) -> ScoreFn:
        """Prepare ``queries``; the result gives score rows ``lo..hi-1`` on demand."""
        ...


class Retriever(Protocol):
    """Something that indexes texts; ``settings`` names it in metric signatures."""

    name: str

    def settings(self) -> dict[str, object]:
        """Every setting that changes the scores (for signatures and ``params``)."""
        ...

    def index(self, docs: Sequence[str], contexts: Sequence[str] | None = None) -> SearchIndex:
        """Index ``docs`` (``contexts[i]`` is the text around ``docs[i]``, if any)."""
        ...


@runtime_checkable
class Encoder(Protocol):
    """A dual encoder: queries and documents encoded independently into vectors."""

    name: str  # identifies the model in cache keys and signatures

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 query embeddings."""
        ...

    def encode_docs(self, texts: Sequence[str],
                    contexts: Sequence[str] | None = None) -> np.ndarray:
        """``(len(texts), dim)`` float32 document embeddings (contexts optional)."""
        ...


RETRIEVERS: Registry[Callable[..., Any]] = Registry("retriever")


def missing_extra(package: str, extra: str) -> ImportError:
    """The error raised when an optional dependency is not installed (one clear CLI line)."""
    from nqkit.errors import MissingDependencyError

    return MissingDependencyError(package, extra)
