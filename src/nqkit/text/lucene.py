"""Lucene's English analysis as Pyserini indexes DPR's passages, in pure Python.

Pyserini's BM25 over Wikipedia (its prebuilt ``wikipedia-dpr`` index, and any index that
``pyserini.index`` / Anserini's ``IndexCollection`` builds with the default ``-language
en``) analyses text with Anserini's ``DefaultEnglishAnalyzer.newStemmingInstance("porter")``
-- what ``pyserini.analysis.get_lucene_analyzer()`` returns. In Anserini 1.7.1 (the jar of
pyserini 1.6.0, built on Lucene 9.9.1) that is the chain

1. ``StandardTokenizer`` (Lucene's ``StandardTokenizerImpl.jflex``, compiled by JFlex with
   ``%unicode 12.1``): the word-break rules of Unicode UAX #29 (WB4-WB13c; the grammar's
   ``WORD``, ``NUMERIC``, ``HANGUL`` and ``KATAKANA`` rules), runs of
   ``Line_Break=Complex_Context`` characters kept together (Thai, Lao, Myanmar, Khmer),
   every Han ideograph and every Hiragana character a token of its own, and emoji
   sequences (UTS #51 ``emoji_sequence``: presentation, modifier, keycap, flag, ZWJ and tag
   sequences) as tokens; anything else is dropped. The scanner takes the longest match at
   each position (JFlex semantics), but reads at most ``maxTokenLength`` = 255 UTF-16 code
   units from a token's start: a longer run is cut at the longest match inside those 255
   units and scanning resumes after it (so ``"x" * 300`` gives 255 + 45 characters, and a
   position where no match fits skips one character).
2. ``EnglishPossessiveFilter``: a trailing ``'s``, ``’s`` or ``＇s`` (or ``S``) removed.
3. ``LowerCaseFilter``: ``Character.toLowerCase`` per code point (simple case mapping, so
   ``"İ"`` gives ``"i"`` and a final ``"Σ"`` gives ``"σ"``, unlike :meth:`str.lower`).
4. ``StopFilter`` with ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (:data:`STOP_WORDS`, 33).
5. ``PorterStemFilter``: Lucene's ``PorterStemmer`` (Porter's own C implementation of
   the 1980 algorithm, with its departures ``-bli -> -ble`` and ``-logi -> -log``; words of
   at most two UTF-16 units untouched), run over UTF-16 code units as Java runs it. It
   differs from Snowball's ``porter`` (PyStemmer): ``visibly`` is ``visibl`` here,
   ``visibli`` there.

Pyserini's ``Analyzer.analyze`` then drops empty terms (``AnalyzerUtils.analyze``).

The Unicode 12.1 property tables are generated once (``scripts/gen_lucene_unicode.py``:
the ``regex`` module's Unicode properties restricted to the code points Unicode 12.1
assigns, and Extended_Pictographic as emoji-data.txt 11.0-15.0 defines it) into
:mod:`nqkit.text._lucene_unicode`, so nothing here depends on the Unicode version of the
running Python or of the installed ``regex``. Lower-casing is :meth:`str.lower` (Python's
Unicode) apart from its two departures from Java's per-code-point mapping (``"İ"`` and the
final-sigma rule); no other difference is known for the characters a token can hold.

Verified against Pyserini 1.6.0 itself (``tests/test_lucene_analyzer.py``): identical
terms for all 148,207 text strings of the shared data and all 12,000 generated strings.

Speed (BENCHMARKS.md): one :func:`re.findall` per text gives the tokens, with a greedy
pattern whose first match is the longest wherever only one rule can start; ASCII texts
take the pattern cut to ASCII classes, texts without astral characters the one cut to the
BMP. Texts with a character that can start two rules, or a Hebrew letter before a quote
(WB7a-c, where the longest match needs POSIX leftmost-longest matching), and tokens over
255 units go through a per-token scan. Terms are cached per raw token form, as bm25s caches
stems. Each pattern is compiled on first use (compiling them all took a second per process).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

import regex

from nqkit.text._lucene_unicode import CLASSES

__all__ = ["ASCII_SEPARATORS", "MAX_TOKEN_LENGTH", "SEPARATOR", "STOP_WORDS", "analyze",
           "analyze_many", "analyze_word", "chunks", "porter_stem", "quotes_neutral",
           "tokenize"]

LUCENE_VERSION = "9.9.1"
ANSERINI_VERSION = "1.7.1"
UNICODE_VERSION = "12.1"
MAX_TOKEN_LENGTH = 255  # StandardAnalyzer.DEFAULT_MAX_TOKEN_LENGTH, in UTF-16 code units

# EnglishAnalyzer.ENGLISH_STOP_WORDS_SET
STOP_WORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with"))

CACHE_LIMIT = 1 << 21  # raw token forms whose terms are kept (cleared when full)


# ----------------------------------------------------------------------- character classes
def _cps(*names: str) -> set[int]:
    out: set[int] = set()
    for name in names:
        for part in CLASSES[name].split():
            a, _, b = part.partition("-")
            out.update(range(int(a, 16), int(b or a, 16) + 1))
    return out


def _esc(cp: int) -> str:
    # the character itself (escaped where ASCII: ``]``, ``-``, ``\\``, ``^`` ... mean
    # something in a class): re parses a class of literals 2-3x faster than one of
    # ``\\U........`` escapes (the tables' classes compile to the same code either way),
    # and every process that tokenizes compiles them once
    return re.escape(chr(cp)) if cp < 128 else chr(cp)


def _cls(cps: Iterable[int]) -> str:
    """A regex character class of the code points (ranges of characters)."""
    s = sorted(cps)
    parts: list[str] = []
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        parts.append(_esc(s[i]) if i == j else f"{_esc(s[i])}-{_esc(s[j])}")
        i = j + 1
    return "[" + "".join(parts) + "]"


_AH = _cps("ALetter", "Hebrew_Letter")
_HL = _cps("Hebrew_Letter")
_NUM = _cps("Numeric", "Halfwidth_Nd")
_KAT = _cps("Katakana")
_ML = _cps("MidLetter", "MidNumLet", "Single_Quote")
_MN = _cps("MidNum", "MidNumLet", "Single_Quote")
_ENL = _cps("ExtendNumLet")
_X = _cps("Format", "Extend", "ZWJ")
_XS = _X - {0xFE0E, 0xFE0F}  # ExtFmtZwjSansPresSel
_SQ = _cps("Single_Quote")
_DQ = _cps("Double_Quote")
_RI = _cps("Regional_Indicator")
_SA = _cps("Complex_Context")
_HAN = _cps("Han")
_HIRA = _cps("Hiragana")
_ZWJ = _cps("ZWJ")
_EM = _cps("Emoji_Modifier")
_EMB = _cps("Emoji_Modifier_Base")
_KEYCAP_BASE = {ord(c) for c in "0123456789#*"}
# EmojiChar = Extended_Pictographic | (Emoji - (Regional_Indicator | keycap bases |
# "accidental" emoji | Emoji_Modifier))
_EMOJI_CHAR = _cps("Extended_Pictographic") | (
    _cps("Emoji") - (_RI | _KEYCAP_BASE | {ord(c) for c in "©®™\u3030\u303d"} | _EM))


def _rules(star: str, keep: set[int] | None = None) -> list[str]:
    """Lucene StandardTokenizer's WORD, SOUTH_EAST_ASIAN, IDEOGRAPHIC and HIRAGANA rules as
    regexes (types are not kept: no filter of the English chain reads them). ``star`` is
    the quantifier after a character's Extend/Format/ZWJ run (possessive or not); ``keep``
    restricts every class to those code points (rules left without one are dropped)."""

    def k(cps: set[int]) -> set[int]:
        return cps if keep is None else cps & keep

    x = _cls(k(_X)) + star if k(_X) else ""

    def ex(cps: set[int]) -> str:  # UAX#29 WB4: a character and its Extend/Format/ZWJ
        return _cls(k(cps)) + x if k(cps) else ""

    ah, hl, num, kat = ex(_AH), ex(_HL), ex(_NUM), ex(_KAT)
    ml, mn, enl, sq, dq = ex(_ML), ex(_MN), ex(_ENL), ex(_SQ), ex(_DQ)
    enls = f"(?:{enl}){star}" if enl else ""
    # WB5-WB13b: katakana runs, and runs of letters and digits with their mid-word
    # punctuation, joined by ExtendNumLet (Lucene's WORD rule; NUMERIC, HANGUL and
    # KATAKANA match subsets of it, which only changes the type)
    # A run of one class is matched as blocks of adjacent characters joined by
    # ExtendNumLet or mid-word punctuation: the same language as the grammar's
    # ``X ((ExtendNumLet* | Mid) X)*``, with far less backtracking per character.
    plus = "++" if star == "*+" else "+"
    enlp = f"(?:{enl}){plus}" if enl else ""

    def run(c: str, mid: str) -> str:
        joins = "|".join(j for j in (enlp, mid) if j)
        return f"(?:{c}){plus}(?:(?:{joins})(?:{c}){plus})*" if joins else f"(?:{c}){plus}"

    items = []
    if hl:
        items.append(f"{hl}(?:{sq}|{dq}{hl})" if dq else f"{hl}{sq}")
    items.append(run(num, mn))
    items.append(run(ah, ml))
    units = [f"(?:{'|'.join(items)})+"]
    if kat:
        units.insert(0, run(kat, ""))
    unit = f"(?:{'|'.join(units)})"
    rules = [f"{enls}{unit}(?:(?:{enl})+{unit})*{enls}"]
    if k(_SA):
        rules.append(f"(?:{ex(_SA)})+")
    rules += [ex(cps) for cps in (_HAN, _HIRA) if k(cps)]
    return rules


def _emoji_rule(keep: set[int] | None = None) -> str:
    """Lucene's EMOJI rule (UTS #51 emoji_sequence: presentation, modifier, ZWJ, tag,
    keycap and flag sequences) as a greedy regex whose first match is the longest: a ZWJ
    after an emoji is taken as an extender only where no emoji follows it (else the ZWJ
    sequence goes on through it). ``keep`` as for :func:`_rules` (it keeps U+FE0F, U+20E3
    and the ZWJ)."""

    def k(cps: set[int]) -> set[int]:
        return cps if keep is None else cps & keep

    zwj = _cls(_ZWJ)
    start = _cls(k(_EMOJI_CHAR | _EMB | _EM))
    xs = f"(?:{_cls(k(_XS - _ZWJ))}|{zwj}(?!{zwj}*{start}))*"
    ecpm = [f"{zwj}*{_cls(k(_EMOJI_CHAR))}{xs}\\U0000FE0F?"]
    if k(_EM):
        ecpm.append(f"(?:{zwj}*{_cls(k(_EMB))}{xs})?{_cls(k(_EM))}{xs}")
    one = f"(?:{'|'.join(ecpm)})"
    tags = "[\\U000E0020-\\U000E007E]+\\U000E007F"
    seq = f"{one}(?:{tags}|(?:{zwj}{one})*)" if keep is None else f"{one}(?:{zwj}{one})*"
    keycap = f"{_cls(_KEYCAP_BASE)}{xs}\\U0000FE0F?\\U000020E3{xs}"
    ri = _cls(k(_RI)) + _cls(k(_X)) + "*" if k(_RI) else ""
    return "|".join([seq, keycap] + ([f"{ri}{ri}"] if ri else []))


_WORD, _SA_RULE, _HAN_RULE, _HIRA_RULE = _rules("*+")
_RULES = (_WORD, _emoji_rule(), _SA_RULE, _HAN_RULE, _HIRA_RULE)
_BMP_KEEP = set(range(0x10000))
_EMOJI_START = _ZWJ | _EMOJI_CHAR | _EMB | _EM | _RI | {ord("#"), ord("*")}
_STARTS = [_AH | _NUM | _KAT | _ENL, _EMOJI_START, _SA, _HAN, _HIRA]
_CONFLICT = set().union(*(a & b for i, a in enumerate(_STARTS) for b in _STARTS[i + 1:]))
_CONFLICT_STR = frozenset(map(chr, _CONFLICT))


class _Patterns:
    """The compiled patterns, each compiled on first use: compiling the large classes
    takes most of a second, and most texts need only the ASCII one (a process that never
    meets an astral character or a Hebrew quote never compiles theirs)."""

    @functools.cached_property
    def fast(self) -> re.Pattern[str]:
        # A greedy backtracking pattern: its first match at a position is the longest one
        # of the rule that matches there, and at most one rule can match at a position
        # whose character is not in _CONFLICT. A digit starts both the keycap and the
        # WORD rule, but WORD's match is never shorter (a digit's Extend run covers U+FE0F
        # and U+20E3), and WORD comes first. The standard library's re runs these large
        # classes about 3x faster than regex.
        return re.compile("|".join(_RULES))

    @functools.cached_property
    def single(self) -> list[re.Pattern[str]]:
        return [re.compile(r) for r in _RULES]

    @functools.cached_property
    def ascii(self) -> re.Pattern[str]:
        # The same rules over ASCII text, where only WORD is left (no ASCII character is
        # Extend, Format, ZWJ, Hebrew, Katakana or an emoji without U+20E3): most
        # passages are ASCII.
        return re.compile("|".join(_rules("*+", set(range(128)))))

    @functools.cached_property
    def bmp(self) -> re.Pattern[str]:
        # ... and over text without astral characters: re tests a BMP character against
        # a class by a bitmap, but then still walks the class's astral ranges when the
        # test fails
        return re.compile("|".join([_rules("*+", _BMP_KEEP)[0], _emoji_rule(_BMP_KEEP),
                                    *_rules("*+", _BMP_KEEP)[1:]]))

    @functools.cached_property
    def word_posix(self) -> regex.Pattern[str]:
        # WORD where a Hebrew letter meets a quote needs leftmost-longest (POSIX)
        # matching (WB7a-c: the greedy letter run would take the letter that starts
        # Hebrew_Letter (Single_Quote | Double_Quote Hebrew_Letter))
        return regex.compile("(?p)" + _rules("*")[0], regex.V0)

    @functools.cached_property
    def hebrew_quote(self) -> re.Pattern[str]:
        return re.compile(_cls(_HL) + _cls(_X) + "*" + _cls(_SQ | _DQ))

    @functools.cached_property
    def slow(self) -> re.Pattern[str]:
        return re.compile(_cls(_CONFLICT) + "|" + self.hebrew_quote.pattern)


_P = _Patterns()

# A character no rule's match can hold: every class a rule reads, and the literals
# (U+FE0F, U+20E3, the tag characters U+E0020-U+E007F), leave it out.
SEPARATOR = " "
_IN_TOKENS = (_AH | _NUM | _KAT | _ML | _MN | _ENL | _X | _SQ | _DQ | _RI | _SA | _HAN
              | _HIRA | _ZWJ | _EM | _EMB | _EMOJI_CHAR | _KEYCAP_BASE
              | {0xFE0F, 0x20E3} | set(range(0xE0020, 0xE0080)))
if ord(SEPARATOR) in _IN_TOKENS:  # pragma: no cover - a property of the tables
    raise ImportError("the Lucene tables put U+0020 in a token class")
# ... and none holds any of the ASCII whitespace that bytes.split() cuts at (tab, line
# feed, vertical tab, form feed, carriage return, space): :func:`chunks` holds for them too
ASCII_SEPARATORS = " \t\n\x0b\x0c\r"
if _IN_TOKENS & set(map(ord, ASCII_SEPARATORS)):  # pragma: no cover - as above
    raise ImportError("the Lucene tables put ASCII whitespace in a token class")
# A double quote (U+0022) is in one class only, Double_Quote, which joins nothing but two
# Hebrew letters (WB7b-c): in a text without a Hebrew letter no token holds one
if 0x22 not in _DQ or 0x22 in _IN_TOKENS - _DQ:  # pragma: no cover - as above
    raise ImportError("the Lucene tables give U+0022 a class other than Double_Quote")
_HEBREW = re.compile(_cls(_HL))


def quotes_neutral(text: str) -> bool:
    """True when doubling a ``"`` in ``text``, or adding or dropping one at either end,
    cannot change its terms (what CSV quoting does to a field): there is no Hebrew letter
    in it, so no token holds a ``"``; a character outside every token only ends the token
    before it and is dropped by the scan, two of them alike, and one at an end ends
    nothing."""
    return _HEBREW.search(text) is None


def _u16(s: str) -> int:
    """Length of ``s`` in UTF-16 code units (what Lucene's 255 counts)."""
    return len(s) + sum(1 for c in s if c > "\uffff") if not s.isascii() else len(s)


def _window_end(text: str, start: int) -> int:
    """The end of the longest slice from ``start`` that fits in 255 UTF-16 units."""
    end = min(len(text), start + MAX_TOKEN_LENGTH)
    units = _u16(text[start:end])
    while units > MAX_TOKEN_LENGTH:
        end -= 1
        units -= 2 if text[end] > "\uffff" else 1
    return end


def _scan_exact(text: str) -> list[str]:
    """StandardTokenizer's scan: at each position the longest match of any rule within
    255 UTF-16 units; where none fits, one character is dropped (the ``[^]`` rule)."""
    out: list[str] = []
    pos = 0
    n = len(text)
    hebrew = _P.hebrew_quote.search(text) is not None
    rules: list[re.Pattern[str] | regex.Pattern[str]] = list(_P.single)
    if hebrew:
        rules[0] = _P.word_posix
    fast = _P.fast
    while True:
        m = fast.search(text, pos)
        if m is None:
            return out
        p = m.start()
        lim = _window_end(text, p) if n - p > MAX_TOKEN_LENGTH // 2 else n
        best = p
        if hebrew or text[p] in _CONFLICT_STR or lim < m.end():
            for rule in rules:
                mm = rule.match(text, p, lim)
                if mm is not None and mm.end() > best:
                    best = mm.end()
        else:
            best = m.end()
        if best == p:
            pos = p + 1  # no match fits in 255 units: the [^] rule drops one character
            continue
        out.append(text[p:best])
        pos = best


# ASCII punctuation in no token class, or in the Mid* classes only (which join two letters
# or two digits, never a letter to the text's end): letters with only these at their ends
# are one word, the letters (a chunk of text ``"(word),"`` gives ``word``)
_EDGE = "()[],.;:!?"
if {ord(c) for c in _EDGE} & (_IN_TOKENS - _ML - _MN):  # pragma: no cover - as above
    raise ImportError("the Lucene tables put edge punctuation in a token class")


def tokenize(text: str) -> list[str]:
    """Lucene StandardTokenizer's tokens of ``text`` (max token length 255), unfiltered."""
    if text.isascii():
        core = text.strip(_EDGE)
        if core.isalpha() and len(core) <= MAX_TOKEN_LENGTH:  # the common chunk: a word
            return [core]
        toks: list[str] = _P.ascii.findall(text)
    elif _P.slow.search(text) is not None:
        return _scan_exact(text)
    elif max(text) <= "\uffff":
        toks = _P.bmp.findall(text)
    else:
        toks = _P.fast.findall(text)
    # every token within 255 UTF-16 units: the windowed scan gives the same tokens
    if toks and len(max(toks, key=len)) > MAX_TOKEN_LENGTH // 2 and any(
            _u16(t) > MAX_TOKEN_LENGTH for t in toks):
        return _scan_exact(text)
    return toks


# ----------------------------------------------------------------------- Porter (Lucene)
# Lucene's PorterStemmer works on a buffer b[0..k] with a suffix start j set by ends();
# here the word b[0..k] is a string ``w`` and j a local set where a suffix is found
# (only step 6 reads past k, and it keeps the word it started with), so suffix tests
# and cuts are string operations, in one function (a call per step cost as much as
# the steps).
_VOWEL_RUN_THEN_CONSONANT = re.compile("[aeiou]+[^aeiou]")


def _cons(w: str, i: int) -> bool:
    """PorterStemmer.cons: w[i] is a consonant (y is one after a vowel or first)."""
    c = w[i]
    if c in "aeiou":
        return False
    if c == "y":
        return True if i == 0 else not _cons(w, i - 1)
    return True


def _m(w: str, j: int) -> int:
    """Number of vowel-consonant sequences VC in w[0..j] (a run of vowels followed by a
    consonant counts once)."""
    p = w[:j + 1]
    if "y" not in p:
        return len(_VOWEL_RUN_THEN_CONSONANT.findall(p))
    n = 0
    prev = True  # w[i - 1] is a consonant
    for i, c in enumerate(p):
        cons = False if c in "aeiou" else (True if i == 0 or c != "y" else not prev)
        n += cons and not prev
        prev = cons
    return n


def _vowel_in(w: str, j: int) -> bool:
    """w[0..j] holds a vowel: one of aeiou, or a y that is not first (after a
    consonant it is a vowel; after a y that is a vowel, that one is)."""
    p = w[:j + 1]
    return "a" in p or "e" in p or "i" in p or "o" in p or "u" in p or p.find("y", 1) > 0


def _doublec(w: str, j: int) -> bool:
    return j >= 1 and w[j] == w[j - 1] and _cons(w, j)


def _cvc(w: str, i: int) -> bool:
    return (i >= 2 and _cons(w, i) and not _cons(w, i - 1) and _cons(w, i - 2)
            and w[i] not in "wxy")


_STEP3: dict[str, tuple[tuple[str, str], ...]] = {
    "a": (("ational", "ate"), ("tional", "tion")),
    "c": (("enci", "ence"), ("anci", "ance")),
    "e": (("izer", "ize"),),
    "l": (("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
          ("ousli", "ous")),
    "o": (("ization", "ize"), ("ation", "ate"), ("ator", "ate")),
    "s": (("alism", "al"), ("iveness", "ive"), ("fulness", "ful"),
          ("ousness", "ous")),
    "t": (("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")),
    "g": (("logi", "log"),)}
_STEP4: dict[str, tuple[tuple[str, str], ...]] = {
    "e": (("icate", "ic"), ("ative", ""), ("alize", "al")),
    "i": (("iciti", "ic"),),
    "l": (("ical", "ic"), ("ful", "")),
    "s": (("ness", ""),)}
_STEP5: dict[str, tuple[str, ...]] = {
    "a": ("al",), "c": ("ance", "ence"), "e": ("er",), "i": ("ic",),
    "l": ("able", "ible"), "n": ("ant", "ement", "ment", "ent"),
    "s": ("ism",), "t": ("ate", "iti"), "u": ("ous",), "v": ("ive",),
    "z": ("ize",)}


def _replace_suffix(w: str, rules: tuple[tuple[str, str], ...]) -> str:
    """Steps 3 and 4: the first suffix of ``rules`` that ends ``w`` decides; it is
    replaced when the stem before it has a measure above 0."""
    for suffix, repl in rules:
        if w.endswith(suffix):
            j = len(w) - len(suffix) - 1
            return w[:j + 1] + repl if _m(w, j) > 0 else w
    return w


def _stem(w: str) -> str:
    """Lucene's PorterStemmer steps 1-6 on a word of at least 3 UTF-16 units."""
    # step 1: plurals, -ed, -ing
    if w[-1] == "s":
        if w.endswith("sses") or w.endswith("ies"):
            w = w[:-2]  # -ies -> -i
        elif w[-2] != "s":
            w = w[:-1]
    if w.endswith("eed"):
        if _m(w, len(w) - 4) > 0:
            w = w[:-1]
    else:
        j = len(w) - 3 if w.endswith("ed") else len(w) - 4 if w.endswith("ing") else -9
        if j > -9 and _vowel_in(w, j):
            w = w[:j + 1]
            if w.endswith("at") or w.endswith("bl") or w.endswith("iz"):
                w += "e"  # -ate, -ble, -ize
            else:
                k = len(w) - 1
                if _doublec(w, k):
                    if w[k] not in "lsz":
                        w = w[:-1]
                elif _m(w, k) == 1 and _cvc(w, k):
                    w += "e"
    # step 2: y -> i when the stem has a vowel
    if w[-1] == "y" and _vowel_in(w, len(w) - 2):
        w = w[:-1] + "i"
    # step 3: double suffixes (keyed by the next-to-last letter)
    if len(w) > 1:
        w = _replace_suffix(w, _STEP3.get(w[-2], ()))
    # step 4: -ic-, -full, -ness, ... (keyed by the last letter)
    w = _replace_suffix(w, _STEP4.get(w[-1], ()))
    # step 5: -ant, -ence, ... in context <c>vcvc<v>
    if len(w) > 1:
        key = w[-2]
        j = -9
        if key == "o":
            if w.endswith("ion") and len(w) >= 4 and w[-4] in "st":
                j = len(w) - 4
            elif w.endswith("ou"):
                j = len(w) - 3
        else:
            for suffix in _STEP5.get(key, ()):
                if w.endswith(suffix):
                    j = len(w) - len(suffix) - 1
                    break
        if j > -9 and _m(w, j) > 1:
            w = w[:j + 1]
    # step 6: final -e, -ll (both tests measure the word as it came in)
    j = len(w) - 1
    v = w
    if w[-1] == "e":
        a = _m(v, j)
        if a > 1 or (a == 1 and not _cvc(v, j - 1)):
            w = w[:-1]
    k = len(w) - 1
    if w[k] == "l" and _doublec(w, k) and _m(v, j) > 1:
        w = w[:-1]
    return w


def _to_units(word: str) -> list[str]:
    """The UTF-16 code units of ``word``, one (surrogate) character each."""
    out: list[str] = []
    for c in word:
        o = ord(c)
        if o > 0xFFFF:
            o -= 0x10000
            out += [chr(0xD800 + (o >> 10)), chr(0xDC00 + (o & 0x3FF))]
        else:
            out.append(c)
    return out


def porter_stem(word: str) -> str:
    """Lucene's ``PorterStemmer.stem`` of a lower-cased word."""
    astral = not word.isascii() and any(c > "\uffff" for c in word)
    units = "".join(_to_units(word)) if astral else word
    if len(units) <= 2:
        return word
    out = _stem(units)
    return out.encode("utf-16-le", "surrogatepass").decode("utf-16-le") if astral else out


# ----------------------------------------------------------------------- the filter chain
_APOSTROPHES = "'\u2019\uff07"


def _lower(tok: str) -> str:
    """``Character.toLowerCase`` per code point: simple mappings, no final-sigma context."""
    if tok.isascii():
        return tok.lower()
    return tok.replace("\u0130", "i").replace("\u03a3", "\u03c3").lower()


def _term(tok: str) -> str:
    """The indexed term of one StandardTokenizer token ("" for a dropped one)."""
    if len(tok) >= 2 and tok[-1] in "sS" and tok[-2] in _APOSTROPHES:
        tok = tok[:-2]  # EnglishPossessiveFilter
    low = _lower(tok)
    if low in STOP_WORDS:
        return ""
    return porter_stem(low)


class _TermCache(dict[str, str]):
    def __missing__(self, tok: str) -> str:
        if len(self) >= CACHE_LIMIT:
            self.clear()
        term = self[tok] = _term(tok)
        return term


_CACHE = _TermCache()


def analyze(text: str) -> list[str]:
    """The terms Pyserini's default English analyzer gives for ``text`` (see the module
    docstring): ``pyserini.analysis.Analyzer(get_lucene_analyzer()).analyze(text)``."""
    return list(filter(None, map(_CACHE.__getitem__, tokenize(text))))


def analyze_word(word: str) -> list[str]:
    """:func:`analyze` of a word of ASCII letters (``word.isascii() and word.isalpha()``,
    at most :data:`MAX_TOKEN_LENGTH` of them): its term, or none for a stop word,
    without the token cache (for a caller that keeps what it analyzes)."""
    low = word.lower()  # the one token is the word (no possessive: no apostrophe)
    return [] if low in STOP_WORDS else [porter_stem(low)]


def chunks(text: str) -> list[str]:
    """``text`` cut at every :data:`SEPARATOR` (U+0020): the terms of ``text`` are the
    terms of its chunks, in order (``analyze(text) == [t for c in chunks(text) for t in
    analyze(c)]``), so the terms of a chunk can be cached whatever surrounds it.

    Why: no rule's match holds U+0020 (checked at import), so no token crosses one, and
    the scan at a position inside a chunk never reads past its end: a match stops before
    the space; the 255-unit window only limits matches, which stop there anyway; and the
    one lookahead of the grammar (the emoji rule's, after a ZWJ) fails at a space as at
    the end of the text. A space itself starts no match and is skipped, so the scan
    resumes at the next chunk's first character, where a scan of that chunk starts.
    Everything after the tokenizer works token by token. The same holds for every
    character of :data:`ASCII_SEPARATORS` (checked at import), so the pieces of
    ``text.encode().split()`` are chunks too (``bytes.split`` cuts at exactly those).
    """
    return text.split(SEPARATOR)


def analyze_many(texts: Iterable[str]) -> list[list[str]]:
    """:func:`analyze` of each text."""
    get = _CACHE.__getitem__
    return [list(filter(None, map(get, tokenize(text)))) for text in texts]
