"""Hybrid retrieval: any two declared retrievers fused (:mod:`nqkit.retrieval.fusion`).

A hybrid is a composition, not a retriever of its own: its parts are two registered
retrievers, the first and the second (by default the lexical ``bm25`` and the ``dense``
one, the hybrid of Ma et al. 2021), declared once (:data:`SPEC`) for both paths with one
``--fusion`` setting and one signature vocabulary: the hybrid's own keys, then each
part's settings prefixed by its position, ``1.retriever:bm25|1.k1:0.9|...|2.retriever:
dense|2.model:...``.

* ``nqkit reqa run --retriever hybrid [--parts A B]`` scores every document with both
  retrievers and fuses whole score rows: ``zscore`` (the default of the ``reqa`` preset:
  ``weight * z(second) + (1 - weight) * z(first)``, ``--weight``), ``norm`` (``alpha *
  first + second`` on mid-range normalized rows, ``--alpha``) or ``rrf``;
* ``nqkit retrieve --index A_DIR --index B_DIR`` fuses each question's top ``--depth``
  hits of any two indexes over the same corpus with ``norm`` (the default of the
  ``pyserini-nq`` preset) or ``rrf``; z-scores need every document's score, so
  ``zscore`` is refused. The parts are taken in the order of :data:`SPEC`'s parts (a
  bm25 index first, a dense one second, whatever the order of ``--index``), otherwise in
  the order given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any

import numpy as np

from nqkit.retrieval.base import MEMORY, RETRIEVERS, SEARCH, RetrieverSpec, ScoreFn
from nqkit.retrieval.bm25 import BM25Retriever
from nqkit.retrieval.dense import DenseRetriever
from nqkit.retrieval.fusion import FUSIONS, RRF_K, fuse_rows, zscore_rows
from nqkit.settings import Param, float_in, positive_int

__all__ = ["DEFAULTS", "PARAMS", "SPEC", "HybridRetriever", "check_parts", "fusion_settings",
           "hybrid_settings", "part_settings", "refuse_hybrid_settings", "zscore_rows"]

PARAMS: tuple[Param, ...] = (
    Param("fusion", "--fusion", "hybrid: zscore (z-scores over every document; reqa run "
          "only), norm (Pyserini's normalized scores) or rrf (reciprocal rank fusion) "
          "(default: the preset's; reqa zscore, pyserini-nq norm)", choices=FUSIONS),
    # default None: given or not is known, so that a setting of a hybrid given to a single
    # retriever is refused, not ignored (DEFAULTS fills them in)
    Param("weight", "--weight", "hybrid zscore: weight of the second part's z-scores, "
          "fused = weight * second + (1 - weight) * first (default 0.5, not tuned)",
          type=float_in(0, 1)),
    Param("alpha", "--alpha", "hybrid norm: weight of the first part's normalized score, "
          "fused = alpha * first + second (Pyserini's convention, the first being BM25; "
          "default 1.0, not tuned)", type=float_in(0)),
    Param("depth", "--depth", "hybrid: hits taken from each retriever before fusion "
          "(default 1000)", type=positive_int),
    Param("parts", "--parts", "hybrid: the two retrievers fused, first and second "
          "(default: bm25 dense)", nargs=2, metavar="NAME"),
)

# the values of the hybrid's settings not given
DEFAULTS: dict[str, Any] = {"weight": 0.5, "alpha": 1.0, "depth": 1000}


def hybrid_settings(s: Mapping[str, Any]) -> dict[str, Any]:
    """``s`` with the hybrid's settings not given (None) set to :data:`DEFAULTS`."""
    return {**s, **{k: v for k, v in DEFAULTS.items() if s.get(k) is None}}


def refuse_hybrid_settings(s: Mapping[str, Any], why: str, fix: str) -> None:
    """One line for the settings of a hybrid given to a run that is none (they would be
    ignored); ``why`` and ``fix`` say what the run is and what to do."""
    from nqkit.errors import InputError

    given = [f"--{name}" for name in ("fusion", "weight", "alpha", "depth", "parts")
             if s.get(name) is not None]
    if given:
        raise InputError(" ".join(given), f"set a hybrid's fusion, and {why}", fix)


def fusion_settings(fusion: str, weight: float, alpha: float) -> dict[str, object]:
    """The fusion's part of a signature: its name and the one setting it reads."""
    if fusion == "zscore":
        return {"fusion": fusion, "weight": weight}
    if fusion == "norm":
        return {"fusion": fusion, "alpha": alpha}
    return {"fusion": fusion, "rrf-k": RRF_K}


def part_settings(parts: Sequence[Mapping[str, object]]) -> dict[str, object]:
    """The parts' settings in a hybrid's signature: each part's, prefixed by its position
    (``1.retriever``, ``1.k1``, ..., ``2.retriever``, ...), its retriever first."""
    out: dict[str, object] = {}
    for i, settings in enumerate(parts, 1):
        out[f"{i}.retriever"] = settings["retriever"]
        out.update((f"{i}.{k}", v) for k, v in settings.items() if k != "retriever")
    return out


@dataclass
class _HybridIndex:
    first: Any
    second: Any
    retriever: HybridRetriever
    size: int

    def scorer(self, queries: Sequence[str]) -> ScoreFn:
        second, first = self.second.scorer(queries), self.first.scorer(queries)
        r = self.retriever

        def scores(lo: int, hi: int) -> np.ndarray:
            s = second(lo, hi)
            return fuse_rows(r.fusion, first(lo, hi), s, weight=r.weight, alpha=r.alpha)

        return scores


@dataclass
class HybridRetriever:
    """Two retrievers, fused per query (see the module doc). ``lexical`` and ``dense`` are
    the earlier names of ``first`` and ``second`` (kept for one release)."""

    first: Any = None
    second: Any = None
    weight: float = 0.5
    fusion: str = "zscore"
    alpha: float = 1.0
    lexical: InitVar[Any] = None
    dense: InitVar[Any] = None
    name: str = field(default="hybrid", init=False)

    @classmethod
    def from_settings(cls, s: Mapping[str, Any]) -> HybridRetriever:
        """``s``: parsed options after :func:`nqkit.retrieval.base.apply_preset`; the
        parts are ``s["parts"]`` (default: the hybrid's declared parts)."""
        from nqkit.retrieval import retriever_class

        names = tuple(s.get("parts") or SPEC.parts)
        check_parts(names)
        s = hybrid_settings(s)
        first, second = (retriever_class(n).from_settings(s) for n in names)
        return cls(first=first, second=second, weight=s["weight"],
                   fusion=s.get("fusion") or "zscore", alpha=s["alpha"])

    def __post_init__(self, lexical: Any, dense: Any) -> None:
        if lexical is not None:
            self.first = lexical
        if dense is not None:
            self.second = dense
        if not 0.0 <= self.weight <= 1.0:
            raise ValueError("weight must be in [0, 1]")
        if self.fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {FUSIONS}")
        if self.first is None:
            self.first = BM25Retriever()
        if self.second is None:
            self.second = DenseRetriever()

    def settings(self) -> dict[str, object]:
        return {"retriever": self.name, **fusion_settings(self.fusion, self.weight, self.alpha),
                **part_settings([self.first.settings(), self.second.settings()])}

    def index(self, docs: Sequence[str], contexts: Sequence[str] | None = None) -> _HybridIndex:
        # the second part first: with the default parts, an encoder that fails stops the
        # run before anything is tokenized in vain
        second = self.second.index(docs, contexts)
        return _HybridIndex(self.first.index(docs, contexts), second, self, len(docs))


def check_parts(names: Sequence[str]) -> None:
    """Two registered retrievers with an in-memory index, not the same one twice (whose
    settings would be the same: two flavours of one retriever are two indexes, fused by
    ``nqkit retrieve``), and not a hybrid."""
    from nqkit.errors import InputError
    from nqkit.retrieval import retriever_names, retriever_spec

    known = [n for n in retriever_names() if n != "hybrid"
             and retriever_spec(n).in_memory is not None]
    if len(names) != 2 or any(n not in known for n in names):
        raise InputError(f"--parts {' '.join(names)}", "a hybrid fuses two of the "
                         f"retrievers {', '.join(known)}", "e.g. --parts bm25 dense")
    if names[0] == names[1]:
        raise InputError(f"--parts {' '.join(names)}", "the two parts are one retriever "
                         "with one set of settings: fusing it with itself changes nothing",
                         "fuse two retrievers, or two indexes of different settings with "
                         "nqkit retrieve --index A --index B")


SPEC = RETRIEVERS.add("hybrid", RetrieverSpec(
    "hybrid", "two retrievers, fused", PARAMS,
    uses={MEMORY: ("fusion", "weight", "alpha", "parts"), SEARCH: ("fusion", "alpha",
                                                                   "depth")},
    in_memory=HybridRetriever,
    parts=("bm25", "dense")))  # the default parts, in order: first and second
