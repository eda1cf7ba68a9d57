"""Which version of the gold answers a file carries, against the gold it is scored with.

Harness outputs and released prediction files carry their own gold lists (lm-eval's
samples, FlashRAG's ``golden_answers``, oqaeval's ``answer``), and those lists are not
always Google's: the released files of Kamalloo et al. (2023) hold 965 of the 3,610
NQ-open dev lists in another order, 94 with mojibake (``"54Â\\xa0Mbit/s"``: UTF-8 read as
Latin-1 or cp1252) and one with another answer. Scored against the official file, the
same predictions can get another number than against their own lists; this module names
the difference per question so the report can say so and give both numbers.

Kinds, per question held by both: ``identical`` (the same list), ``reordered`` (the same
answers in another order), ``mojibake`` (the same answers once mojibake is repaired on
either side, duplicates merged), ``different``; questions of one side only are counted
apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["KINDS", "AnswerVersions", "compare_versions", "repair_mojibake"]

KINDS = ("identical", "reordered", "mojibake", "different")


def repair_mojibake(text: str) -> str:
    """``text`` with UTF-8-read-as-cp1252 (or as Latin-1) undone, when that is what it
    is (it encodes in that code page and the bytes decode as UTF-8); else unchanged."""
    for codepage in ("cp1252", "latin-1"):
        try:
            fixed = text.encode(codepage).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
        return fixed
    return text


def _kind(carried: Sequence[str], reference: Sequence[str]) -> str:
    if list(carried) == list(reference):
        return "identical"
    if sorted(carried) == sorted(reference):
        return "reordered"
    if ({repair_mojibake(a) for a in carried}
            == {repair_mojibake(a) for a in reference}):
        return "mojibake"
    return "different"


@dataclass(frozen=True, slots=True)
class AnswerVersions:
    """The per-question kinds of a carried gold against a reference gold."""

    counts: dict[str, int]  # kind -> questions
    only_carried: int  # questions the carried file has and the reference does not
    only_reference: int
    # the first questions of each kind but identical: (question, carried, reference)
    examples: dict[str, list[tuple[str, tuple[str, ...], tuple[str, ...]]]] = field(
        default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict, repr=False)  # question -> kind

    @property
    def same(self) -> bool:
        """Every shared question has the identical list, and no question is one-sided."""
        return (self.counts["identical"] == sum(self.counts.values())
                and not self.only_carried and not self.only_reference)

    def describe(self) -> str:
        """``3,610 questions: 2,550 identical, 965 reordered, 94 mojibake, 1 different``."""
        shared = sum(self.counts.values())
        parts = [f"{self.counts[k]:,} {k}" for k in KINDS if self.counts[k]]
        extra = []
        if self.only_carried:
            extra.append(f"{self.only_carried:,} only in the file")
        if self.only_reference:
            extra.append(f"{self.only_reference:,} only in the gold")
        return f"{shared:,} shared questions: " + ", ".join(parts + extra)


def compare_versions(carried: Mapping[str, Sequence[str]],
                     reference: Mapping[str, Sequence[str]], *, keep: int = 3
                     ) -> AnswerVersions:
    """The kind of each question's carried list against the reference list."""
    counts = dict.fromkeys(KINDS, 0)
    examples: dict[str, list[tuple[str, tuple[str, ...], tuple[str, ...]]]] = {
        k: [] for k in KINDS[1:]}
    kinds: dict[str, str] = {}
    for question, answers in carried.items():
        if question not in reference:
            continue
        kind = _kind(answers, reference[question])
        counts[kind] += 1
        kinds[question] = kind
        if kind != "identical" and len(examples[kind]) < keep:
            examples[kind].append((question, tuple(answers), tuple(reference[question])))
    only_carried = sum(q not in reference for q in carried)
    only_reference = sum(q not in carried for q in reference)
    return AnswerVersions(counts, only_carried, only_reference, examples, kinds)
