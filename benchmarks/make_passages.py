"""Build DPR passage corpora from the real passages in ../shared (never committed).

The real corpus: every passage of ``dpr/biencoder-nq-dev-sample5.json`` (positive,
negative and hard-negative contexts, with their psgs_w100 ids) and the gold passage of
every question of ``nq-open/nq-open-oracle.jsonl.gz`` (which carries no psgs_w100 id:
it is named ``oracle-<line>``), each distinct (title, text) once, in that order:
3,349 passages. Tabs and newlines inside a text become spaces here (a passage is one line,
as in psgs_w100.tsv), so the corpora keep the bytes they had when the writer did that
itself (it now quotes such a field, as csv.writer does).

The tiled corpus (``--size N --tiled``): the real corpus repeated with new ids
(``t<copy>-<id>``) up to N passages — the texts repeat, so vocabulary and posting lists
are those of 3,349 passages repeated, and every per-text cache hits: it flatters.

The distinct corpus (``--size N``, the default kind): copy 0 is the real corpus; every
later passage is a real passage (cycled) whose words are varied so that every text is
distinct and the vocabulary grows with the number of words as real text does (Heaps'
law ``V = K n^beta``, fitted on the real passages themselves: word forms against words
read, over a random order of the 3,349 passages; about ``K = 13``, ``beta = 0.61``):

* new words: as the corpus grows past the real one, each passage receives exactly the
  number of never-seen words that keeps the word forms on the fitted curve (pseudo-words
  of consonant-vowel syllables, numbered, so they are distinct and stable under
  stemming); each replaces a word at a random position;
* reused words: a further ``REUSE`` share of each passage's words is replaced by
  earlier new words drawn by a Zipf law over their age (older words are more frequent),
  so the new vocabulary has realistic posting lists, not only words seen once;
* titles: the passages of one article in one copy share a title, the real title plus
  one word of that copy (``o`` and a pseudo-word: never one of the new words), as
  psgs_w100's passages of one article share theirs.

It is seeded, so the same ``--size`` gives the same bytes. Extrapolated with the same
fit, DPR's 21,015,324 passages (about 1.8 billion words) would have about 6 million word
forms; the corpus at ``--size`` has what the curve gives at its size.

Usage (from the repository root):

    python benchmarks/make_passages.py -o bench-data/passages/real.tsv
    python benchmarks/make_passages.py --size 200000 -o bench-data/passages/distinct-200k.tsv
    python benchmarks/make_passages.py --size 1000000 --tiled -o bench-data/passages/tiled-1m.tsv
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


def _one_line(text: str) -> str:
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")


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
                yield Passage(pid, _one_line(c["text"]), _one_line(c["title"]))
    with gzip.open(shared.joinpath(*ORACLE), "rt", encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            c = json.loads(line)["ctxs"][0]
            if (c["title"], c["text"]) in seen:
                continue
            seen.add((c["title"], c["text"]))
            yield Passage(f"oracle-{line_no}", _one_line(c["text"]), _one_line(c["title"]))


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


REUSE = 0.08  # share of a varied passage's words replaced by earlier new words
_CONSONANTS = "bdfgklmnprtvz"
_VOWELS = "aeiou"
_SYLLABLES = [c + v for c in _CONSONANTS for v in _VOWELS]  # 65


def pseudo_word(i: int) -> str:
    """The ``i``-th new word: at least three consonant-vowel syllables (``i`` in base 65),
    so distinct indices give distinct words and no English word is among them often."""
    out = []
    while True:
        i, r = divmod(i, len(_SYLLABLES))
        out.append(_SYLLABLES[r])
        if i == 0 and len(out) >= 3:
            return "".join(out)


def heaps_fit(passages: list[Passage], seed: int = 0) -> tuple[float, float]:
    """``(K, beta)`` of ``V = K n^beta`` (word forms against words read) over the real
    passages in a random order: a least-squares line in log-log space."""
    import re

    import numpy as np

    order = np.random.default_rng(seed).permutation(len(passages))
    seen: set[str] = set()
    n = 0
    points = []
    for i, j in enumerate(order.tolist(), 1):
        p = passages[j]
        words = [w.lower() for w in re.findall(r"\w+", f"{p.title} {p.text}")]
        n += len(words)
        seen.update(words)
        if i % 100 == 0:
            points.append((n, len(seen)))
    x = np.log([a for a, _ in points])
    y = np.log([b for _, b in points])
    beta, log_k = np.polyfit(x, y, 1)
    return float(np.exp(log_k)), float(beta)


def distinct_passages(size: int, shared: Path = SHARED, seed: int = 0) -> Iterator[Passage]:
    """``size`` passages with distinct texts and a growing vocabulary (module doc)."""
    import numpy as np

    real = list(real_passages(shared))
    k, beta = heaps_fit(real, seed)
    rng = np.random.default_rng(seed)
    words_read = sum(len(f"{p.title} {p.text}".split()) for p in real)
    base_forms = k * words_read ** beta  # where the curve stands at the real corpus
    minted = 0
    n = 0
    copy = 0
    while n < size:
        titles: dict[str, str] = {}
        for p in real:
            if n == size:
                return
            n += 1
            if copy == 0:
                yield p
                continue
            words = p.text.split()
            words_read += len(words) + len(p.title.split())
            want = k * words_read ** beta - base_forms - minted
            new = int(want) + (rng.random() < want - int(want)) if want > 0 else 0
            new = min(new, len(words))
            spots = rng.permutation(len(words))
            for s in spots[:new].tolist():
                words[s] = pseudo_word(minted)
                minted += 1
            reuse = spots[new:new + max(1, round(REUSE * len(words)))].tolist() if minted else []
            ranks = rng.zipf(1.3, size=len(reuse))
            for s, r in zip(reuse, ranks.tolist(), strict=True):
                words[s] = pseudo_word(max(0, minted - 1 - (r - 1) % minted))
            title = titles.get(p.title)
            if title is None:
                title = titles[p.title] = f"{p.title} o{pseudo_word(copy)}"
            yield Passage(f"d{copy}-{p.id}", " ".join(words), title)
        copy += 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True, help="corpus file (.tsv or .tsv.gz)")
    ap.add_argument("--size", type=int, help="this many passages (distinct texts, growing "
                    "vocabulary; see the module doc)")
    ap.add_argument("--tiled", action="store_true", help="with --size: repeat the real "
                    "texts instead (the old, flattering corpus)")
    args = ap.parse_args()
    if not args.size:
        passages = real_passages()
    else:
        passages = (tiled_passages if args.tiled else distinct_passages)(args.size)
    n = write_passages(args.output, passages)
    print(f"{n:,} passages written to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
