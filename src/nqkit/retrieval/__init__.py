"""Retrievers behind one small interface (see :mod:`nqkit.retrieval.base`).

Import :func:`get_retriever` to build one by name; the heavy dependencies (bm25s,
sentence-transformers) load only when a retriever is used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["get_retriever", "retriever_class", "retriever_names"]


def _load_all() -> Any:
    from nqkit.retrieval import bm25, dense, hybrid  # noqa: F401 - they register themselves
    from nqkit.retrieval.base import RETRIEVERS

    return RETRIEVERS


def get_retriever(name: str, **options: Any) -> Any:
    """A retriever by registered name (``bm25``, ``dense``, ``hybrid``) with options."""
    return _load_all().get(name)(**options)


def retriever_names() -> list[str]:
    return list(_load_all().names())


def retriever_class(name: str) -> Any:
    """The registered retriever ``name``: ``PARAMS`` (its command-line settings) and
    ``from_settings(settings)`` build it from parsed options."""
    return _load_all().get(name)
