"""Split identity: which published split a set of questions is (issue 11 §3).

The most common source of wrong comparisons in open-domain QA is the split: DPR's
``nq-test.qa`` has the questions of NQ-open's ``NQ-open.dev.jsonl`` (Lee et al. 2019 call
it *test*); DPR's ``nq-dev.qa`` is ORQA's held-out dev, 8,757 questions of the published
NQ-open *train* file; AmbigNQ's dev questions are among those 8,757 (Min et al. 2020, §4:
"split consistently with NQ-open"); EfficientQA dev is a different set from NQ-open dev.
This module names the split of a set of questions from fingerprints shipped with the
package, so that results carry ``split:<name>`` in their signature and predictions made
for another split are refused by name.

**Fingerprints** (``nqkit/data/split-fingerprints.{json,bin}``, written by
``scripts/make_split_fingerprints.py`` from ``../shared/data``): every question of a split
we hold in full is normalised (:func:`normalize_key`: NFKC, case-folded, whitespace
collapsed, a trailing ``?`` dropped, so that AmbigNQ's ``"Who plays ...?"`` is NQ-open's
``"who plays ..."``) and hashed to 8 bytes (BLAKE2b); the sorted hashes are stored with
one bit per held split (about 24,000 questions, 220 KB). AmbigNQ ids are fingerprinted
the same way, for predictions keyed by id. Splits we do not hold carry their published
count only; where some of their questions are known through a held sub-split (AmbigNQ
train and DPR's nq-dev.qa within NQ-open train), those are their *known members*.

**Rules** of :func:`match_split` (``questions`` are normalised and de-duplicated first):

* ``full``: the questions are exactly those of a split held in full → its name
  (``nq-open/dev``; an alias such as ``dpr/nq-test.qa`` gives the canonical name).
* ``count``: for a split held in part, the number of questions equals its published count,
  every known member is there and no question of an unrelated known split is → its name.
  This is weaker than ``full`` (the unknown questions are not checked) and says so in
  :attr:`SplitMatch.kind`.
* ``subset``: every question is a known member of a split → the smallest such split, as
  ``name[N#digest]`` (``nq-open/dev[1000#3fa2c1]``: 1,000 of its questions; the digest of
  the question set tells two subsets of one size apart, so equal signatures still mean
  equal question sets).
* otherwise ``custom``. A split known by count only (EfficientQA test) is never named.

Hash collisions are harmless here: a name needs *every* question to be a member, and
2^-64 per question makes a false member of ~10^5 stored hashes vanishingly rare.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from nqkit.arrays import distinct
from nqkit.errors import InputError, examples, for_example

if TYPE_CHECKING:
    from nqkit.io.provenance import Provenance

__all__ = [
    "CUSTOM",
    "KINDS",
    "KnownSplit",
    "SplitCheck",
    "SplitMatch",
    "check_numbering",
    "check_split",
    "describe",
    "digest",
    "identify",
    "key_hash",
    "known_splits",
    "match_split",
    "normalize_key",
    "question_set",
]

CUSTOM = "custom"
KINDS = ("question", "id")  # what a fingerprint is of: question texts, or example ids
FINGERPRINT_FORMAT = 2  # bumped when normalisation, hashing or the layout changes
_WS = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class KnownSplit:
    """One published split and what the package knows of its questions."""

    name: str  # canonical name, as in the dataset registry where it has one
    count: int  # questions in the split: counted where held, published otherwise
    held: str  # "full": every question fingerprinted; "part": some known; "none": count only
    parent: str | None  # the split whose questions this one's are drawn from
    aliases: tuple[str, ...]  # other published names of the same question set
    source: str  # the file the fingerprint was computed from, or who publishes the count
    note: str  # how it relates to the other splits


@dataclass(frozen=True, slots=True)
class SplitMatch:
    """What :func:`match_split` found for a set of questions (or ids)."""

    split: str | None  # the known split, None for custom
    kind: str  # "full", "count", "subset" or "custom"
    size: int  # distinct normalised questions given
    split_size: int | None  # questions of the named split
    digest: str  # short digest of the normalised question set
    # a subset that is one stretch of a file of the split, lines [start, stop): the
    # split's own file, or an alias's (``span_file``: DPR's nq-test.qa orders NQ-open dev
    # its own way)
    span: tuple[int, int] | None = None
    span_file: str | None = None

    @property
    def label(self) -> str:
        """The signature value: ``nq-open/dev``, ``nq-open/dev[:1000]`` (its first 1,000
        questions in file order), ``nq-open/dev[1000:2000]``, ``nq-open/dev[1000#3fa2c1]``
        (any other 1,000 of them) or ``custom``."""
        if self.split is None:
            return CUSTOM
        if self.kind == "subset":
            if self.span is not None:
                start, stop = self.span
                return f"{self.span_file or self.split}[{start or ''}:{stop}]"
            return f"{self.split}[{self.size}#{self.digest}]"
        return self.split

    @property
    def known(self) -> bool:
        return self.split is not None


@dataclass(frozen=True, slots=True)
class SplitCheck:
    """The split of references and of predictions not in them (see :func:`check_split`)."""

    references: SplitMatch
    unused: int  # predicted keys that are not in the gold
    unused_split: SplitMatch | None  # the split of those, when there are any


def normalize_key(text: str, kind: str = "question") -> str:
    """The form a question (or id) is fingerprinted in.

    Questions: NFKC, case-folded, runs of whitespace as one space, stripped, a trailing
    ``?`` removed — the differences between the same question in NQ-open, DPR and AmbigNQ
    files. Ids: the string stripped.
    """
    if kind == "id":
        return str(text).strip()
    q = _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
    return q[:-1].rstrip() if q.endswith("?") else q


def key_hash(text: str, kind: str = "question") -> int:
    """The 8-byte fingerprint of one question (or id), as an unsigned integer."""
    data = (kind + "\0" + normalize_key(text, kind)).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def _hashes(keys: Iterable[str], kind: str) -> np.ndarray:
    return distinct(np.fromiter((key_hash(k, kind) for k in keys), dtype=np.uint64))


def digest(keys: Iterable[str], kind: str = "question") -> str:
    """Six hex digits naming a set of questions (order and repeats do not matter)."""
    return hashlib.blake2b(_hashes(keys, kind).astype("<u8").tobytes(),
                           digest_size=3).hexdigest()


# --------------------------------------------------------------------------- fingerprints

@dataclass(frozen=True)
class _Table:
    """Sorted hashes of one kind, each with the bit mask of the held splits holding it."""

    hashes: np.ndarray  # uint64, sorted, unique
    masks: np.ndarray  # uint16, one bit per held split
    bits: dict[str, int]  # held split -> its bit

    def lookup(self, hashes: np.ndarray) -> np.ndarray:
        """The mask of each hash (0 for a hash of no held split)."""
        if not len(self.hashes):
            return np.zeros(len(hashes), dtype=np.uint16)
        idx = np.searchsorted(self.hashes, hashes)
        idx = np.minimum(idx, len(self.hashes) - 1)
        found = self.hashes[idx] == hashes
        return np.where(found, self.masks[idx], 0).astype(np.uint16)


@dataclass(frozen=True)
class _Fingerprints:
    splits: dict[str, KnownSplit]  # canonical name -> split, in file order
    alias: dict[str, str]  # every name and alias -> canonical name
    tables: dict[str, _Table]  # kind -> table
    # kind -> split -> [(the file's name: the split's or an alias's, line positions of
    # the split's members in sorted-hash order)], for the splits held in their own file
    order: dict[str, dict[str, list[tuple[str, np.ndarray]]]]

    def lineage(self, name: str) -> list[str]:
        """``name`` and its ancestors, nearest first."""
        out = [name]
        while (parent := self.splits[out[-1]].parent) is not None:
            out.append(parent)
        return out

    def related(self, a: str, b: str) -> bool:
        """One split is drawn from the other (or they are the same)."""
        return a in self.lineage(b) or b in self.lineage(a)

    def members_mask(self, name: str, kind: str) -> int:
        """Bits of the held splits whose questions are known members of ``name``."""
        table = self.tables[kind]
        return sum(1 << bit for held, bit in table.bits.items() if name in self.lineage(held))


def _package_file(name: str) -> Any:
    return resources.files("nqkit.data").joinpath(name)


@lru_cache(maxsize=1)
def _fingerprints() -> _Fingerprints:
    meta = json.loads(_package_file("split-fingerprints.json").read_text(encoding="utf-8"))
    if meta.get("format") != FINGERPRINT_FORMAT:
        raise RuntimeError("nqkit's split fingerprints are of another format; regenerate them "
                           "with scripts/make_split_fingerprints.py")
    blob = _package_file("split-fingerprints.bin").read_bytes()
    splits: dict[str, KnownSplit] = {}
    alias: dict[str, str] = {}
    for s in meta["splits"]:
        split = KnownSplit(s["name"], s["count"], s["held"], s.get("parent"),
                           tuple(s.get("aliases", ())), s["source"], s["note"])
        splits[split.name] = split
        for n in (split.name, *split.aliases):
            alias[n] = split.name
    tables: dict[str, _Table] = {}
    for kind, t in meta["tables"].items():
        n, off = t["count"], t["offset"]
        hashes = np.frombuffer(blob, dtype="<u8", count=n, offset=off).astype(np.uint64)
        masks = np.frombuffer(blob, dtype="<u2", count=n, offset=off + 8 * n).astype(np.uint16)
        tables[kind] = _Table(hashes, masks, dict(t["bits"]))
    order: dict[str, dict[str, list[tuple[str, np.ndarray]]]] = {}
    for kind, t in meta["tables"].items():
        for name, o in t.get("order", {}).items():
            positions = np.frombuffer(blob, dtype="<u4", count=o["count"],
                                      offset=o["offset"]).astype(np.int64)
            order.setdefault(kind, {}).setdefault(o["split"], []).append((name, positions))
    return _Fingerprints(splits, alias, tables, order)


def known_splits() -> list[KnownSplit]:
    """Every split the package knows, held or not."""
    return list(_fingerprints().splits.values())


# --------------------------------------------------------------------------- identification

def match_split(keys: Iterable[str], kind: str = "question") -> SplitMatch:
    """The known split of a set of questions (``kind="question"``) or example ids
    (``kind="id"``), by the rules in the module docstring."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    items = list(keys)
    hashes = _hashes(items, kind)
    size = len(hashes)
    dig = hashlib.blake2b(hashes.astype("<u8").tobytes(), digest_size=3).hexdigest()
    custom = SplitMatch(None, "custom", size, None, dig)
    if not size:
        return custom
    fp = _fingerprints()
    table = fp.tables.get(kind)
    if table is None:
        return custom
    masks = table.lookup(hashes)
    by_size = sorted(fp.splits.values(), key=lambda s: s.count)
    for split in by_size:
        bit = table.bits.get(split.name)
        if split.held == "full" and bit is not None:
            members = int(np.count_nonzero(table.masks & (1 << bit)))
            if size == members and bool(np.all(masks & (1 << bit))):
                return SplitMatch(split.name, "full", size, split.count, dig)
    for split in by_size:
        if split.held != "part" or split.count not in (size, len(items)):
            continue
        mask = fp.members_mask(split.name, kind)
        if not mask:
            continue
        known_members = int(np.count_nonzero(table.masks & mask))
        unrelated = sum(1 << b for held, b in table.bits.items()
                        if not fp.related(held, split.name))
        if (int(np.count_nonzero(masks & mask)) == known_members
                and not np.any(masks & unrelated)):
            return SplitMatch(split.name, "count", size, split.count, dig)
    for split in by_size:
        mask = fp.members_mask(split.name, kind)
        if mask and bool(np.all(masks & mask)):
            name, span = _span(fp, table, kind, split.name, hashes)
            return SplitMatch(split.name, "subset", size, split.count, dig, span,
                              None if name == split.name else name)
    return custom


def _span(fp: _Fingerprints, table: _Table, kind: str, name: str, hashes: np.ndarray
          ) -> tuple[str, tuple[int, int] | None]:
    """The file (the split's own, else an alias's: DPR's nq-test.qa has NQ-open dev's
    questions in another order) in which the (sorted, distinct) ``hashes`` are exactly
    the questions of lines ``[start, stop)``, with those lines; else ``(name, None)``."""
    files = fp.order.get(kind, {}).get(name, [])
    bit = table.bits.get(name)
    if not files or bit is None or len(hashes) < 2:  # one question is no stretch
        return name, None
    members = table.hashes[(table.masks & (1 << bit)) != 0]
    idx = np.searchsorted(members, hashes)
    if np.any(idx >= len(members)) or np.any(members[np.minimum(idx, len(members) - 1)]
                                              != hashes):
        return name, None
    for file_name, order in files:
        positions = order[idx]
        start, stop = int(positions.min()), int(positions.max()) + 1
        if stop - start == len(hashes):
            return file_name, (start, stop)
    return name, None


def identify(questions: Iterable[str], kind: str = "question") -> str:
    """The signature label of a set of questions: a split name, ``name[N#digest]`` for a
    subset of one, or ``"custom"`` (see :func:`match_split`)."""
    return match_split(questions, kind).label


def describe(m: SplitMatch, noun: str = "questions") -> str:
    """``the questions of nq-open/dev``, ``100 of the 3,610 questions of nq-open/dev`` or
    ``custom questions``, for messages."""
    if m.split is None:
        return f"custom {noun}"
    if m.kind == "subset":
        if m.span is not None:
            start, stop = m.span
            order = f" in {m.span_file}'s order" if m.span_file else ""
            which = (f"the first {m.size:,}" if not start
                     else f"lines {start + 1:,} to {stop:,}")
            return f"{which} of the {m.split_size:,} {noun} of {m.split}{order}"
        return f"{m.size:,} of the {m.split_size:,} {noun} of {m.split}"
    return f"the {noun} of {m.split}"


def check_split(references: Collection[str], predictions: Collection[str], *,
                where: str | None, kind: str = "question",
                reference_match: SplitMatch | None = None) -> SplitCheck:
    """Refuse predictions made for another split than the references.

    ``references`` and ``predictions`` are the join keys (question strings or ids), joined
    exactly as the metric joins them. When no predicted key is in the references, raise
    :class:`InputError` in one line naming both splits (or saying that the questions are
    those of the references written differently). Otherwise return the references' split
    and the split of the predicted keys that are not in the gold, for warnings.
    ``reference_match`` saves identifying the references twice.
    """
    ref = reference_match or match_split(references, kind)
    unused = [p for p in predictions if p not in references]
    noun = "questions" if kind == "question" else "ids"
    if predictions and len(unused) == len(predictions):
        pred = match_split(predictions, kind)
        n = len(predictions)
        fp = _fingerprints()
        if pred.split is not None and ref.split is not None and not fp.related(pred.split,
                                                                              ref.split):
            raise InputError(
                where, f"the {n:,} predicted {noun} are {describe(pred, noun)}, the "
                f"gold holds {describe(ref, noun)}: none of the predictions is in the gold",
                f"score the predictions against the gold of {pred.split}, or predict "
                f"the {noun} of {ref.split}")
        if pred.split is not None and ref.split is not None:
            raise InputError(
                where, f"none of the {n:,} predicted {noun} is in the gold, though they "
                f"are {describe(pred, noun)} and the gold holds {describe(ref, noun)}: they "
                f"are written differently ({for_example(repr(q) for q in predictions)})",
                f"write the {noun} exactly as in the gold")
        of = f" of {ref.split}" if ref.split is not None else ""
        from_ = f"; they are {describe(pred, noun)}" if pred.split is not None else ""
        raise InputError(
            where, f"none of the {n:,} predicted {noun} is in the gold{of} "
            f"({for_example(repr(q) for q in predictions)}){from_}, so every "
            f"{'question' if kind == 'question' else 'example'} would be scored wrong",
            "score the predictions against the gold of the split they were made for "
            f"({noun} must match exactly)")
    return SplitCheck(ref, len(unused), match_split(unused, kind) if unused else None)


# ------------------------------------------------------------ numbering of a question set
# A TREC run's or qrels' qids and overlap labels' ids are positions in a question file:
# the set a file was numbered by goes into its provenance (nqkit.io.provenance) and is
# checked when the file is read with questions.

def _keys(questions: Iterable[str]) -> np.ndarray:
    """Four bytes of each question's split fingerprint (:func:`nqkit.splits.key_hash`),
    in order: enough to tell which question a number names (1 in 4 billion collides)."""
    return np.fromiter((key_hash(q) & 0xFFFFFFFF for q in questions), dtype="<u4")


def question_set(questions: Iterable[str], *, first_qid: int = 0) -> dict[str, Any]:
    """The question set a file's numbers refer to (qid = ``first_qid`` + a question's
    position): its split label (:func:`nqkit.splits.identify`), its size, the first qid
    and ``keys``, four bytes of each question's fingerprint in order (base64; 4.8 KB for
    the 3,610 NQ-open test questions, 470 KB for the 87,925 training questions)."""
    qs = list(questions)
    return {"split": identify(qs), "count": len(qs), "first-qid": first_qid,
            "keys": base64.b64encode(_keys(qs).tobytes()).decode("ascii")}


def _describe(q: Mapping[str, Any]) -> str:
    return f"{q.get('split', 'custom')} ({q.get('count', 0):,} questions)"


def _misnumbered(keys: np.ndarray, first: int, asked: np.ndarray, first_qid: int
                 ) -> np.ndarray:
    """Positions in ``asked`` whose qid names no question, or another, in ``keys``."""
    j = np.arange(len(asked)) + (first_qid - first)
    inside = (j >= 0) & (j < len(keys))
    wrong = ~inside
    wrong[inside] = keys[j[inside]] != asked[inside]
    return np.flatnonzero(wrong)


def check_numbering(prov: Provenance | None, questions: Iterable[str], *, first_qid: int,
                    option: str, against: str, fix: str) -> None:
    """Refuse, in one line, a file whose numbers name other questions than
    ``questions`` (numbered from ``first_qid``) do: each question's qid must name the
    same question in the set the file was numbered by (a prefix or any subset numbered
    alike is fine: the first 300 questions against qrels of all 3,610). ``option``
    names the file's option, ``against`` where the questions come from, ``fix`` what to
    do."""
    if prov is None or prov.questions is None or "keys" not in prov.questions:
        return
    want = prov.questions
    try:
        keys = np.frombuffer(base64.b64decode(want["keys"]), dtype="<u4")
        first = int(want.get("first-qid", 0))
    except (ValueError, TypeError):
        return  # a sidecar nqkit did not write: the file is read as a foreign one
    qs = list(questions)
    asked = _keys(qs)
    wrong = _misnumbered(keys, first, asked, first_qid)
    if not len(wrong):
        return
    if first != first_qid and not len(_misnumbered(keys, first, asked, first)):
        what = f"numbered from qid {first}, not --first-qid {first_qid}"
    else:
        got = question_set(qs, first_qid=first_qid)
        what = (f"numbered by the questions of {_describe(want)}: for {len(wrong):,} of the "
                f"{len(qs):,} questions of {against} ({_describe(got)}) the qid names "
                f"another question there (qid "
                + examples([f"{first_qid + i} {qs[i]!r:.40}" for i in wrong[:3]],
                           width=None, more=False) + ")")
    raise InputError(f"{option} {prov.path}", what, fix)
