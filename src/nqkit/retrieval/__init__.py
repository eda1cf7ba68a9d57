"""Retrievers, each declared once for both paths (see :mod:`nqkit.retrieval.base`).

Import :func:`get_retriever` to build one by name; the retriever modules of this package
are found by scanning it, and their heavy dependencies (bm25s, sentence-transformers)
load only when a retriever is used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["get_retriever", "retriever_class", "retriever_names", "retriever_spec"]


def _load_all() -> Any:
    from nqkit.retrieval.base import load_retrievers

    return load_retrievers()


def get_retriever(name: str, **options: Any) -> Any:
    """An in-memory retriever by registered name (``bm25``, ``dense``, ``hybrid``)."""
    return retriever_class(name)(**options)


def retriever_names() -> list[str]:
    return list(_load_all().names())


def retriever_spec(name: str) -> Any:
    """The declaration of retriever ``name`` (:class:`nqkit.retrieval.base.RetrieverSpec`)."""
    return _load_all().get(name)


def retriever_class(name: str) -> Any:
    """The in-memory retriever class of ``name`` (``from_settings(settings)``, ``index``)."""
    from nqkit.errors import InputError

    cls = retriever_spec(name).in_memory
    if cls is None:
        raise InputError(None, f"retriever {name!r} has no in-memory index",
                         "use it with `nqkit index build` and `nqkit retrieve`")
    return cls
