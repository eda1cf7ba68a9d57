"""Build DPR passage corpora from the real passages in ../shared (never committed).

The real corpus: every passage of ``dpr/biencoder-nq-dev-sample5.json`` (positive,
negative and hard-negative contexts, with their psgs_w100 ids) and the gold passage of
every question of ``nq-open/nq-open-oracle.jsonl.gz`` (which carries no psgs_w100 id:
it is named ``oracle-<line>``), each distinct (title, text) once, in that order:
3,349 passages. Tabs and newlines inside a text become spaces (a passage is one line, as
in psgs_w100.tsv).

The tiled corpus (``--size N``): the real corpus repeated with new ids
(``t<copy>-<id>``) up to N passages — the texts repeat, so vocabulary and posting lists
are those of 3,349 passages repeated, not of N distinct passages.

Usage (from the repository root):

    python benchmarks/make_passages.py -o bench-data/passages/real.tsv
    python benchmarks/make_passages.py --size 1000000 -o bench-data/passages/tiled-1m.tsv
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from nqkit.retrieval.corpus import Passage, write_passages  # noqa: E402

SHARED = Path(os.environ.get("NQKIT_SHARED", ROOT.parent / "shared"))
BIENCODER = ("data", "dpr", "biencoder-nq-dev-sample5.json")
ORACLE = ("data", "nq-open", "nq-open-oracle.jsonl.gz")


def real_passages(shared: Path = SHARED) -> Iterator[Passage]:
    """The real passages, in the order described in the module docstring."""
    seen: set[tuple[str, str]] = set()
    ids: set[str] = set()
    with open(shared.joinpath(*BIENCODER), encoding="utf-8") as f:
        records = json.load(f)
    for rec in records:
        for key in ("positive_ctxs", "negative_ctxs", "hard_negative_ctxs"):
            for c in rec[key]:
                pid = str(c["passage_id"])
                if pid in ids or (c["title"], c["text"]) in seen:
                    continue
                ids.add(pid)
                seen.add((c["title"], c["text"]))
                yield Passage(pid, c["text"], c["title"])
    with gzip.open(shared.joinpath(*ORACLE), "rt", encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            c = json.loads(line)["ctxs"][0]
            if (c["title"], c["text"]) in seen:
                continue
            seen.add((c["title"], c["text"]))
            yield Passage(f"oracle-{line_no}", c["text"], c["title"])


def tiled_passages(size: int, shared: Path = SHARED) -> Iterator[Passage]:
    """``size`` passages: the real ones repeated with new ids ``t<copy>-<id>``."""
    real = list(real_passages(shared))
    n = 0
    copy = 0
    while n < size:
        for p in real:
            if n == size:
                return
            yield Passage(f"t{copy}-{p.id}" if copy else p.id, p.text, p.title)
            n += 1
        copy += 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True, help="corpus file (.tsv or .tsv.gz)")
    ap.add_argument("--size", type=int, help="tile the real passages to this many")
    args = ap.parse_args()
    passages = tiled_passages(args.size) if args.size else real_passages()
    n = write_passages(args.output, passages)
    print(f"{n:,} passages written to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
