"""A minimal TREC run writer for ``nqkit retrieve --trec`` (private to retrieval).

One line per retrieved passage: ``qid Q0 docid rank score tag`` (rank from 1), the format
``trec_eval`` and Pyserini read.
"""

from __future__ import annotations

from collections.abc import Iterable

from nqkit.io import PathLike, atomic_output

__all__ = ["write_trec"]


def write_trec(path: PathLike, rows: Iterable[tuple[str, list[tuple[str, str]]]], tag: str
               ) -> int:
    """Write ``(qid, [(docid, score_text), ...])`` rows (best first); returns the lines."""
    if not tag or any(c.isspace() for c in tag):
        raise ValueError("the run tag must be one word")
    n = 0
    with atomic_output(path) as f:
        for qid, hits in rows:
            for rank, (docid, score) in enumerate(hits, 1):
                f.write(f"{qid} Q0 {docid} {rank} {score} {tag}\n")
                n += 1
    return n
