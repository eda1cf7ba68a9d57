"""A pure-Python tokenizer equal to Stanford CoreNLP 3.4.1's PTBTokenizer on question text.

The AmbigQA evaluation (via pycocoevalcap) tokenizes every question with CoreNLP 3.4.1's
``PTBTokenizer -preserveLines -lowerCase`` in a Java subprocess, then drops the
punctuation tokens listed in :data:`PTB_PUNCTUATION`. That tokenizer is a JFlex scanner:
at each position every rule is tried, the longest match wins (a trailing context, written
``A/B`` in JFlex, counts towards the length but is not consumed), and among equally long
matches the earlier rule wins. This module is an independent re-implementation of that
behaviour with Python regular expressions, one per rule alternative, tried in the same
order (Penn Treebank tokenization guidelines; CoreNLP ``PTBLexer`` documentation):

* words are runs of Unicode letters (Java's ``Character.isLetter``) and combining marks;
  hyphenated words, numbers (``1,000.5``), dates, fractions (``1 1/2`` is one token with a
  no-break space), phone numbers, URLs, e-mail addresses, ``@names`` and ``#tags``,
  abbreviations (``Mr.``, ``U.S.``) and ASCII-only slash compounds (``US/UK``) are tokens;
* clitics are split off (``do n't``, ``he 's``), and ``cannot``, ``gonna``, ``gotta``,
  ``wanna``, ``gimme``, ``lemme``, ``'tis``, ``'twas`` are split in two;
* quotes become `` `` `` / ``''`` / `` ` `` / ``'``, brackets ``-LRB-`` etc., dashes
  (``–``, ``—``, ``---``) ``--``, ellipses ``...``; ``£`` becomes ``#``, ``€`` ``$``, ``¢``
  ``cents`` and ``½`` ``1/2``;
* an abbreviation that ends a sentence also gives its period as a token of its own;
* characters no rule knows (emoji and any character outside the Basic Multilingual
  Plane, control characters) are deleted.

Verified token by token against the jar on every question string of the shared data and
on 20,000 generated strings (see ``tests/test_ptb_oracle.py`` and docs/nq-open-ambigqa.md
for the few classes of strings where the two still differ). A string is tokenized as one
line of the official input file followed by a line break.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from nqkit.text.normalize import normalize_answer

__all__ = ["PTB_PUNCTUATION", "eval_question", "ptb_tokenize"]

# Tokens pycocoevalcap removes after PTB tokenization.
PTB_PUNCTUATION: frozenset[str] = frozenset([
    "''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-",
    "--", "...", ";",
])


def _ranges(pred: Callable[[str], bool]) -> str:
    """A character-class body of the BMP characters satisfying ``pred``."""
    out: list[str] = []
    start = None
    for cp in range(0x10000):
        ok = not 0xD800 <= cp <= 0xDFFF and pred(chr(cp))
        if ok and start is None:
            start = cp
        elif not ok and start is not None:
            out.append(_span(start, cp - 1))
            start = None
    if start is not None:
        out.append(_span(start, 0xFFFF))
    return "".join(out)


def _span(a: int, b: int) -> str:
    return f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}"


# JFlex's %caseless also matches the non-ASCII letters whose case maps to i, s or k
_CASELESS_EXTRA = {"i": "\u0130\u0131", "s": "\u017f", "k": "\u212a"}


def _ci(word: str) -> str:
    """A literal matched case-insensitively (JFlex ``%caseless``)."""
    return "".join(f"[{c.lower()}{c.upper()}{_CASELESS_EXTRA.get(c.lower(), '')}]"
                   if c.isalpha() and c.isascii() else re.escape(c) for c in word)


def _alts(*words: str) -> str:
    return "(?:" + "|".join(words) + ")"


def _words(text: str) -> list[str]:
    """Caseless literals, longest first (so that an alternation prefers the longest)."""
    return [_ci(w) for w in sorted(text.split(), key=len, reverse=True)]


# --------------------------------------------------------------------- character classes
_LETTER = "[" + _ranges(lambda c: unicodedata.category(c).startswith("L")) + "]"
_DIGIT = "[" + _ranges(lambda c: unicodedata.category(c) == "Nd") + "]"
_LD = "[" + _LETTER[1:-1] + _DIGIT[1:-1] + "]"
# letters, soft hyphen and the combining marks and modifier letters words may contain
_WORD_EXTRA = ("\u00ad\u0237-\u024f\u02c2-\u02c5\u02d2-\u02df\u02e5-\u02ff\u0300-\u036f"
               "\u0370-\u037d\u0384\u0385\u03cf\u03f6\u03fc-\u03ff\u0483-\u0487\u04cf"
               "\u04f6-\u04ff\u0510-\u0525\u055a-\u055f\u0591-\u05bd\u05bf\u05c1\u05c2"
               "\u05c4\u05c5\u05c7\u0615-\u061a\u063b-\u063f\u064b-\u065e\u0670"
               "\u06d6-\u06ef\u06fa-\u06ff\u070f\u0711\u0730-\u074f\u0750-\u077f"
               "\u07a6-\u07b1\u07ca-\u07f5\u07fa\u0900-\u0903\u093c\u093e-\u094e"
               "\u0951-\u0955\u0962-\u0963\u0981-\u0983\u09bc-\u09c4\u09c7\u09c8"
               "\u09cb-\u09cd\u09d7\u09e2\u09e3\u0a01-\u0a03\u0a3c\u0a3e-\u0a4f"
               "\u0a81-\u0a83\u0abc-\u0acf\u0b82\u0bbe-\u0bc2\u0bc6-\u0bc8\u0bca-\u0bcd"
               "\u0c01-\u0c03\u0c3e-\u0c56\u0d3e-\u0d44\u0d46-\u0d48\u0e30-\u0e3a"
               "\u0e47-\u0e4e\u0eb1-\u0ebc\u0ec8-\u0ecd")
_SPLET = "&[aeiouAEIOU]" + _alts(_ci("acute"), _ci("grave"), _ci("uml")) + ";"
_WCHAR = "(?:[" + _LETTER[1:-1] + _WORD_EXTRA + "]|" + _SPLET + ")"
_WPART = _WCHAR + "(?:" + _WCHAR + "|" + _DIGIT + ")*"
_WORD = _WPART + "(?:[.!?]" + _WPART + ")*"
_SPACE = "[ \t\u00a0\u2000-\u200a\u3000]"
_NEWLINE = "(?:\r\n|[\r\n\u2028\u2029\u000b\u000c\u0085])"
_SPACENL = "(?:" + _SPACE + "|" + _NEWLINE + ")"
_SGML = r"<\/?[A-Za-z!?][^<>\r\n]*>"
_UPPER = "[" + _ranges(lambda c: unicodedata.category(c) == "Lu") + "]"
_SENTEND = _SPACENL + "(?:" + _SPACENL + "|" + _UPPER + "|" + _SGML + ")"
_APOS = "(?:['\u0092\u2019]|" + _ci("&apos;") + ")"
_APOSETC = "(?:" + _APOS + "|[\u0091\u2018\u201b])"
_HYPHEN = "[-_\u058a\u2010\u2011]"
_NUM = "(?:" + _DIGIT + "*(?:[.:,\u00ad\u066b\u066c]" + _DIGIT + "+)+|" + _DIGIT + "+)"
_ACRO = _alts(r"[A-Za-z](?:\.[A-Za-z])+",
              _alts(*map(_ci, ("Canada", "Sino", "Korean", "EU", "Japan", "non"))) + _ci("-U.S"),
              _ci("U.S.-") + _alts(_ci("U.K"), _ci("U.S.S.R")))
# Abbreviations usually followed by a lower-case word (their period is also a sentence end
# before an upper-case word or a blank line), and those usually followed by a name.
_ABBREV1 = _alts(
    *_words("Thurs Tues Sept Jan Feb Mar Apr Jun Jul Aug Sep Oct Nov Dec Mon Tue Wed Thu "
            "Fri Ala Ariz Calif Colo Conn Dak Del Fla Ga Ind Kans Kan Ky La Md Mich Minn Mo "
            "Mont Neb Nev Okla Pa Penn Tenn Tex Va Vt Wisc Wis Wyo Bancorp Inc Cos Co Corp "
            "Pptys Ptys Ppty Pty Ltd Plc Dept Bhd Assn Univ Intl Sys Prop Ph tel est ext sq "
            "Jr Sr Bros Ed.D Ph.D Blvd Rd Esq etc al seq"),
    "A" + _ci("rk"), "I" + _ci("ll"), "M" + _ci("ass"), "M" + _ci("iss"), "O" + _ci("re"),
    "W" + _ci("ash")) + r"\."
_ABNUM = _alts(*_words("Nos No"))
_ABBREV4 = _alts(
    _ACRO, _ci("a.k.a"),
    *_words("Messrs Lieut Comdr Attys Supts Profs TREAS Cmdr Prof Sens Reps Atty Govs Capt "
            "Pres Brig Supt Alex Invt Elec Natl Mrs Drs Sen Rep Col Gen Gov Adm Rev Maj Sgt "
            "Cpl Pvt Ste Ave Hon Pfc Spc Det Cie Jos Mfg Mtg Mr Ms Dr Lt Mt St vs Wm cf ft"),
    "M" + _ci("iss"), "[A-Za-z]")
# After an acronym, these words (first letter as written) mark a sentence end.
_SENT_START_WORDS = (
    "About According Additionally After An A As At But Earlier He Her Here However If In "
    "It Last Many More Mr. Ms. Now Once One Other Our She Since So Some Such That The Then "
    "There These They This We When While What Yet You")
_SENT_START = _alts(*(w[0] + _ci(w[1:]) for w in _SENT_START_WORDS.split()))
_INSENTP = "[,;:\u3001]"
_URLX = " \t\n\f\r\"<>|()"
_FULLURL = ("https?://[^" + _URLX + "]+[^" + _URLX + ".!?{},-]")
# ",-_" is a range (U+002C-U+005F: digits, capitals, ":" and "/" are excluded)
_LIKELYURL = ("(?:www\\.(?:[^" + _URLX + ".!?{},]+\\.)+[a-zA-Z]{2,4}|(?:[^" + _URLX
              + "`'.!?{},-_$]+\\.)+" + _alts(*map(_ci, ("com", "net", "org", "edu"))) + ")"
              "(?:/[^" + _URLX + "]+[^" + _URLX + ".!?{},-])?")
_EMAILX = " \t\n\f\r\"<>|()\u00a0"
_EMAIL = ("[a-zA-Z0-9][^" + _EMAILX + "]*@(?:[^" + _EMAILX + ".]+\\.)*[^" + _EMAILX + ".]+")
_THING_PART = "(?:[dDoOlL]" + _APOSETC + _LD + ")?" + _LD + "+"
_THING = _THING_PART + "(?:" + _HYPHEN + _THING_PART + ")*"
_THINGA = "[A-Z]+(?:(?:[+&]|" + _ci("&amp;") + ")[A-Z]+)+"
_THING3 = r"[A-Za-z0-9]+(?:-[A-Za-z]+){0,2}(?:\\?/[A-Za-z0-9]+(?:-[A-Za-z]+){0,2}){1,2}"
_HTHING = (r"[A-Za-z0-9][A-Za-z0-9.,\u00ad]*(?:-(?:" + _ACRO + r"\.|[A-Za-z0-9\u00ad]+))+")
_REDAUX = _APOS + "(?:[msdMSD]|" + _alts(_ci("re"), _ci("ve"), _ci("ll")) + ")"
_SWORD = "[A-Za-z\u00ad]*[A-MO-Za-mo-z]\u00ad*"
_SREDAUX = _ci("n") + _APOSETC + _ci("t")
_PHONE = (r"(?:\([0-9]{2,3}\)[ \u00a0]?|(?:\+\+?)?(?:[0-9]{2,4}[\- \u00a0])?[0-9]{2,4}"
          r"[\- \u00a0])[0-9]{3,4}[\- \u00a0]?[0-9]{3,5}"
          r"|(?:(?:\+\+?)?[0-9]{2,4}\.)?[0-9]{2,4}\.[0-9]{3,4}\.[0-9]{3,5}")
_SMILEY = r"[<>]?[:;=][\-o*']?[()DPdpO\\{@|\[\]]"
_ASIAN_SMILEY = (r"[\^x=~<>]\.[\^x=~<>]|[\-\^x=~<>']_[\-\^x=~<>']"
                 r"|\([\-\^x=~<>'][_.]?[\-\^x=~<>']\)")
_QUOTECHARS = ("[`\u2018\u2019\u201a\u201b\u201c\u201d\u0091\u0092\u0093\u0094\u201e\u201f"
               "\u2039\u203a\u00ab\u00bb]")
_MISC = ("[+%&~^|\\\\\u00a6\u00a7\u00a8\u00a9\u00ac\u00ae\u00af\u00b0-\u00ba\u00d7\u00f7"
         "\u0387\u05be\u05c0\u05c3\u05c6\u05f3\u05f4\u0600-\u0603\u0606-\u060a\u060c\u0614"
         "\u061b\u061e\u066a\u066d\u0703-\u070d\u07f6-\u07f8\u0964\u0965\u0e4f\u1fbd\u2016"
         "\u2017\u2020-\u2023\u2030-\u2038\u203b\u203e-\u2042\u2044\u207a-\u207f"
         "\u208a-\u208e\u2100-\u214f\u2190-\u21ff\u2200-\u2bff\u3012\u30fb\uff01-\uff0f"
         "\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")

# ------------------------------------------------------------------------------- actions
_NBSP = "\u00a0"


def _keep(t: str) -> str:
    return t


def _soft(t: str) -> str:
    return t.replace("\u00ad", "") or "-"


def _nbsp(t: str) -> str:
    return t.replace(" ", _NBSP)


def _amp(t: str) -> str:
    return re.sub("(?i)&amp;", "&", t)


def _quotes(t: str, left: bool) -> str:
    t = re.sub("(?i)&apos;|'", "`" if left else "'", t)
    t = re.sub('(?i)"|&quot;', "``" if left else "''", t)
    t = re.sub("[\u0091\u2018\u201b\u2039]", "`", t)
    t = re.sub("[\u0092\u2019\u203a]", "'", t)
    t = re.sub("[\u0093\u201c\u00ab]", "``", t)
    return re.sub("[\u0094\u201d\u00bb]", "''", t)


def _left(t: str) -> str:
    return _quotes(t, True)


def _right(t: str) -> str:
    return _quotes(t, False)


_FRACTIONS = {"\u00bc": "1/4", "\u00bd": "1/2", "\u00be": "3/4", "\u2153": "1/3",
              "\u2154": "2/3"}
_CURRENCY = {"\u00a2": "cents", "\u00a3": "#", "\u0080": "$", "\u00a4": "$", "\u20a0": "$",
             "\u20ac": "$"}


def _frac2(t: str) -> str:
    return _FRACTIONS.get(t, t)


def _currency(t: str) -> str:
    return _CURRENCY.get(t, t)


def _phone(t: str) -> str:
    return t.replace(" ", _NBSP).replace("(", "-LRB-").replace(")", "-RRB-")


def _parens(t: str) -> str:
    return t.replace("(", "-LRB-").replace(")", "-RRB-")


def _hyphens(t: str) -> str:
    return "--" if 3 <= len(t) <= 4 else t


def _const(value: str) -> Callable[[str], str]:
    return lambda _t: value


_SKIP = None  # whitespace and untokenizable characters: no token
_PERIOD = "period"  # the token, then its final period again as a token of its own

# (pattern, action, split): the pattern's group "t", when present, is the token and what
# follows it is trailing context. ``split`` = (token length, next position) rules below.
_Rule = tuple[str, "Callable[[str], str] | str | None"]
_RULES: list[list[_Rule]] = [
    [(_ci("cannot"), "can")],
    [(_alts(_ci("gonna"), _ci("gotta"), _ci("lemme"), _ci("gimme"), _ci("wanna")), "split3")],
    [("'" + _ci("t") + _alts(_ci("is"), _ci("was")), "split2")],
    [(_SGML, _nbsp)],
    [("&" + _alts(_ci("MD"), _ci("mdash"), _ci("ndash")) + ";|[\u0096\u0097\u2013\u2014\u2015]",
      _const("--"))],
    [(_ci("&amp;"), _amp)],
    [("&" + _alts(*map(_ci, ("HT", "TL", "UR", "LR", "QC", "QL", "QR", "odq", "cdq")),
                  "#[0-9]+") + ";", _keep)],
    # an abbreviation before a single letter stays an abbreviation ("Inc.s": "Inc." "s")
    [("(?P<t>" + _ABBREV1 + ")" + _WCHAR + "(?!" + _WCHAR + ")", _keep)],
    [("(?P<t>" + _WORD + ")" + _REDAUX, _soft)],
    [("(?P<t>" + _SWORD + ")" + _SREDAUX, _soft)],
    [(_WORD, _soft)],
    [(p, _keep) for p in (
        _APOS + _ci("n") + _APOS + "?", "[lLdDjJ]" + _APOS, _ci("Dunkin") + _APOS,
        _ci("somethin") + _APOS, _ci("ol") + _APOS, _APOS + _ci("em"),
        "[A-HJ-XZn]" + _APOSETC + _LETTER + "{2,}", _APOS + "[2-9]0" + _ci("s"),
        _APOS + _ci("til") + _ci("l") + "?",
        _LETTER + "+[aeiouyAEIOUY]" + _APOSETC + "[aeiouA-Z]" + _LETTER + "*",
        _APOS + _ci("cause"), _ci("cont'd") + r"\.?", _ci("'twas"), _ci("nor'easter"),
        _ci("c'mon"), _ci("e'er"), _ci("s'mores"), _ci("ev'ry"), _ci("li'l"),
        _ci("nat'l"))],
    [("(?P<t>" + _ci("y") + _APOS + ")" + _LETTER, _keep)],
    [(_FULLURL, _keep)],
    [(_LIKELYURL, _keep)],
    [(_EMAIL, _keep)],
    [("@[a-zA-Z_][a-zA-Z_0-9]*", _keep), ("#" + _WCHAR + "+", _keep)],
    [("(?P<t>" + _REDAUX + ")[^A-Za-z]", _right)],
    [(_SREDAUX, _right)],
    [(_DIGIT + "{1,2}[-/]" + _DIGIT + "{1,2}[-/]" + _DIGIT + "{2,4}", _keep)],
    [("[-+]?" + _NUM, _soft)],
    [("[\u207a\u207b\u208a\u208b]?(?:[\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+"
      "|[\u2080-\u2089]+)", _keep)],
    [("(?:" + _DIGIT + "{1,4}[- \u00a0])?" + _DIGIT + "{1,4}(?:\\\\?/|\u2044)" + _DIGIT
      + "{1,4}", _nbsp)],
    [("[\u00bc\u00bd\u00be\u2153-\u215e]", _frac2)],
    [(_alts(*map(_ci, ("-RRB-", "-LRB-", "-RCB-", "-LCB-", "-RSB-", "-LSB-", "C.D.s", "pro-",
                       "anti-", "S&P-500", "S&amp;P-500", "S&Ls", "S&amp;Ls")),
            _ci("Cap") + _APOS + _ci("n"), _ci("c") + _APOS + _ci("est")), _amp)],
    [(_THING3, _keep)],
    [("[cCfF]#|[cC]\\+\\+", _keep)],
    [(r"[A-Z]*\$|#", _keep)],
    [("[\u00a2\u00a3\u00a4\u00a5\u0080\u20a0\u20ac\u060b\u0e3f\u20a4\uffe0\uffe1\uffe5"
      "\uffe6]", _currency)],
    [("(?P<t>" + _ACRO + r"\.)" + _SPACE + "+(?:" + _SENT_START + _SPACE + "|" + _SGML + ")",
      _PERIOD),
     ("(?P<t>[A-Za-z])" + r"\." + _SPACENL + "+" + _SENT_START + _SPACE, _keep)],
    [("(?P<t>" + _ABBREV1 + ")" + _SENTEND, _PERIOD)],
    [(_ABBREV1, _keep)],
    [("(?P<t>" + _ABNUM + r"\.)" + _SPACE + "*[0-9]", _keep)],
    [(_ABBREV4 + r"\.", _keep)],
    [("(?P<t>" + _ABBREV4 + ")" + _SPACE, _keep)],
    [("(?P<t>" + _ACRO + ")" + _SPACENL, _keep)],
    [("(?P<t>" + _APOS + "[0-9][0-9])" + _SPACENL, _keep)],
    [("(?P<t>" + _WORD + r"\.)" + _INSENTP, _soft)],
    [(_PHONE, _phone)],
    [("(?P<t>\"|" + _ci("&quot;") + ")[A-Za-z0-9$]", _left)],
    [('"|' + _ci("&quot;"), _right)],
    [("\u007f", _SKIP)],
    [("(?P<t>" + _SMILEY + ")[^A-Za-z0-9]", _parens),
     ("(?P<t>" + _ASIAN_SMILEY + ")[^A-Za-z0-9]", _parens)],
    [("<|" + _ci("&lt;"), _const("<"))],
    [(">|" + _ci("&gt;"), _const(">"))],
    [(r"\[", _const("-LSB-"))],
    [(r"\]", _const("-RSB-"))],
    [(r"\{", _const("-LCB-"))],
    [(r"\}", _const("-RCB-"))],
    [(r"\(", _const("-LRB-"))],
    [(r"\)", _const("-RRB-"))],
    [(r"-+", _hyphens)],
    [(r"\.{3,5}|(?:\.[ \u00a0]){2,4}\.|[\u0085\u2026]", _const("..."))],
    [("@+|#+|_+", _keep)],
    [(r"\*+|(?:\\\*){1,3}", _keep)],
    [(_INSENTP, _keep)],
    [("[?!]+", _keep)],
    [("[.\u00a1\u00bf\u037e\u0589\u061f\u06d4\u0700-\u0702\u07fa\u3002]", _keep)],
    [("=", _keep)],
    [("/", _keep)],
    [("(?P<t>" + _HTHING + r"\.)" + _INSENTP, _soft)],
    [(_HTHING, _soft)],
    [("(?P<t>" + _THING + r"\.)" + _INSENTP, _keep)],
    [(_THING, _keep)],
    [("(?P<t>" + _THINGA + r"\.)" + _INSENTP, _amp)],
    [(_THINGA, _amp)],
    [("(?P<t>')[A-Za-z][^ \t\n\r\u00a0]", _left)],
    [(_REDAUX, _right)],
    [("''|" + _QUOTECHARS + "{1,2}|" + _APOS, _right)],
    [("<<|>>", _keep)],
    [(_MISC, _keep)],
    [("\x00|" + _SPACE + "+|[\u200b\u200e\u200f\ufeff]", _SKIP)],
    [(_NEWLINE, _SKIP)],
    [(_ci("&nbsp;"), _SKIP)],
    [(".", _SKIP)],  # untokenizable: the official run deletes it (with a warning)
]
# Every alternative becomes a capturing lookahead of one regex, so that one match call gives
# the end of each alternative's match (or -1); the longest, then the earliest, wins.
_GROUPS: list[tuple[int, int | None, Callable[[str], str] | str | None]] = []
_combined: list[str] = []
_group = 1
for _alternatives in _RULES:
    for _pat, _act in _alternatives:
        _context = "(?P<t>" in _pat  # the token is group "t", the rest trailing context
        _combined.append("(?:(?=(" + _pat.replace("(?P<t>", "(") + "))|)")
        _GROUPS.append((_group, _group + 1 if _context else None, _act))
        _group += 2 if _context else 1
_ALL = re.compile("".join(_combined), re.DOTALL)
# Shortcuts for the commonest tokens, where no rule can match more (checked rule by rule):
# an ASCII word or number before a space (a number not followed by a digit, which could
# make a fraction or a phone number), spaces, and "?" or "," before a space.
_FAST = re.compile("([A-Za-z]+)(?=[ \t\n])|([0-9]+)(?=\n|[ \t][^0-9 \t\u00a0])|(" + _SPACE
                   + "+)|([?,])(?=[ \t\n])")
_FAST_EXCLUDE = frozenset(["cannot", "gonna", "gotta", "lemme", "gimme", "wanna"])


def _lex(text: str) -> list[str]:
    text += "\n"  # a line of the official input file (the next line is not looked at)
    n = len(text) - 1
    pos = 0
    tokens: list[str] = []
    while pos < n:
        fast = _FAST.match(text, pos)
        if fast is not None and fast.group().lower() not in _FAST_EXCLUDE:
            if fast.lastindex != 3:
                tokens.append(fast.group())
            pos = fast.end()
            continue
        regs = _ALL.match(text, pos).regs  # type: ignore[union-attr]
        best_end = pos
        best = _GROUPS[-1]
        for entry in _GROUPS:
            end = regs[entry[0]][1]
            if end > best_end:
                best_end = end
                best = entry
        _, tgroup, action = best
        tok = text[pos:regs[tgroup][1]] if tgroup is not None else text[pos:best_end]
        if action == "can" or action == "split3":
            tokens.append(tok[:3])
            pos += 3
        elif action == "split2":
            tokens.append(tok[:2])
            pos += 2
        elif action == _PERIOD:
            tok = tok.rstrip(" \t")
            tokens.append(tok)
            pos += len(tok) - 1
        else:
            pos += len(tok)
            if callable(action):
                tokens.append(action(tok))
    return tokens


def _is_cased(c: str) -> bool:
    return c.lower() != c or c.upper() != c


def _java_lower(tok: str) -> str:
    """``String.toLowerCase()`` of Java: a capital sigma is final (ς) only when no cased
    letter follows it in the token (Python also looks at the next character only)."""
    if "\u03a3" not in tok:
        return tok.lower()
    out = []
    for i, c in enumerate(tok):
        if c != "\u03a3":
            out.append(c.lower())
        elif any(_is_cased(x) for x in tok[:i]) and not any(_is_cased(x) for x in tok[i + 1:]):
            out.append("\u03c2")
        else:
            out.append("\u03c3")
    return "".join(out)


def ptb_tokenize(text: str, *, lower: bool = False) -> list[str]:
    """Split ``text`` into PTB tokens, as CoreNLP 3.4.1's PTBTokenizer does.

    ``lower=True`` lower-cases the tokens like the official ``-lowerCase`` option.
    """
    tokens = _lex(text)
    if lower:
        tokens = [_java_lower(t) for t in tokens]
    return tokens


def eval_question(text: str) -> str:
    """A question as the official AmbigQA evaluation compares it.

    PTB tokens, lower-cased, without :data:`PTB_PUNCTUATION`, joined by spaces, then SQuAD
    answer normalization (punctuation characters and articles removed, spaces collapsed).
    """
    words = [t for t in ptb_tokenize(text, lower=True) if t not in PTB_PUNCTUATION]
    return normalize_answer(" ".join(words))
