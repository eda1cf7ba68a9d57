"""Canonical word forms of short answers: one spelling for numbers, dates, units and names.

Two answers a reader takes for the same one are often spelled apart: ``"2,579"`` and
``"2579"``, ``"two"`` and ``"2"``, ``"March 30, 2006"`` and ``"30 March 2006"``,
``"420 milligrams"`` and ``"420 mg"``, ``"Dáin"`` and ``"Dain"``, ``"B.R. Ambedkar"`` and
``"B. R. Ambedkar"``, ``"Mecklenburg-Strelitz"`` and ``"mecklenburg - strelitz"``.
:func:`canonical_tokens` turns an answer into a tuple of words on which such spellings are
equal, so that a matching rule (the ``equiv`` convention, :mod:`nqkit.conventions.equiv`)
compares words, not characters. The steps, in order:

1. text mis-decoded once (UTF-8 bytes read as Windows-1252: ``"DÃ¡in"``, ``"7Â\\xa0ml"``,
   as some released NQ-open gold lists are) is decoded again;
2. NFKD, combining marks dropped (accents), lower-cased; ``&`` is *and*, ``%`` *percent*;
   apostrophes deleted (``"grey's"`` -> ``greys``, as SQuAD's normalization does);
3. digits: thousands separators dropped (``2,579``), a dash between two numbers read as
   *to* (``200-500`` -> ``200 to 500``), decimals kept (``3.99``, ``5.0`` -> ``5``);
4. words are runs of letters and digits (every other character separates them: hyphens,
   slashes, periods);
5. number words become digits (``twenty one`` -> ``21``, ``seventh`` -> ``7th``), a scale
   after a number multiplies it (``1.5 million`` -> ``1500000``);
6. a unit after a number gets one name (``milligrams`` -> ``mg``, ``metres`` -> ``m``,
   ``°``/``degrees`` -> ``degree``);
7. a month name gets one name (``Sept.`` -> ``september``), and a date is written day
   first (``march 30 2006`` and ``30th of march 2006`` -> ``30 march 2006``);
   ``bce`` is ``bc``;
8. the articles *a*, *an*, *the* are dropped (as SQuAD's normalization drops them);
9. a run of two or more one-letter words (initials) is written as one word
   (``b r ambedkar`` -> ``br ambedkar``; ``u s`` -> ``us``), unless ``initials=False``.

Only (1) looks at the text as a whole; the rest are word rules, written for English.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["canonical_tokens", "dates", "fix_mojibake", "is_year"]

# characters that give away UTF-8 bytes decoded as Windows-1252 / Latin-1
_MOJIBAKE = re.compile("[\u00c2\u00c3\u00e2][\u0080-\u00bf\u0152-\u203a]")

_SMALL = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
          "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
          "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
          "eighteen": 18, "nineteen": 19}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
             "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11,
             "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
             "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
             "twentieth": 20, "thirtieth": 30}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000,
           "billion": 1_000_000_000, "trillion": 1_000_000_000_000}
# one name per unit, read only right after a number ("in", "m", "g" are words elsewhere)
_UNITS = {
    "mg": "mg", "milligram": "mg", "milligrams": "mg", "g": "g", "gram": "g", "grams": "g",
    "kg": "kg", "kilogram": "kg", "kilograms": "kg", "kilo": "kg", "kilos": "kg",
    "ml": "ml", "millilitre": "ml", "millilitres": "ml", "milliliter": "ml",
    "milliliters": "ml", "l": "l", "litre": "l", "litres": "l", "liter": "l", "liters": "l",
    "km": "km", "kilometre": "km", "kilometres": "km", "kilometer": "km",
    "kilometers": "km", "m": "m", "metre": "m", "metres": "m", "meter": "m", "meters": "m",
    "cm": "cm", "centimetre": "cm", "centimetres": "cm", "centimeter": "cm",
    "centimeters": "cm", "mm": "mm", "millimetre": "mm", "millimetres": "mm",
    "millimeter": "mm", "millimeters": "mm", "ft": "ft", "foot": "ft", "feet": "ft",
    "inch": "inch", "inches": "inch", "mi": "mile", "mile": "mile", "miles": "mile",
    "lb": "lb", "lbs": "lb", "pound": "lb", "pounds": "lb", "oz": "oz", "ounce": "oz",
    "ounces": "oz", "mph": "mph", "kmh": "kmh", "percent": "percent",
    "degree": "degree", "degrees": "degree", "deg": "degree", "year": "year",
    "years": "year", "yr": "year", "yrs": "year",
}
_MONTHS = {"january": "january", "jan": "january", "february": "february", "feb": "february",
           "march": "march", "mar": "march", "april": "april", "apr": "april", "may": "may",
           "june": "june", "jun": "june", "july": "july", "jul": "july", "august": "august",
           "aug": "august", "september": "september", "sep": "september",
           "sept": "september", "october": "october", "oct": "october",
           "november": "november", "nov": "november", "december": "december",
           "dec": "december"}
_MONTH_NAMES = frozenset(_MONTHS.values())
_ARTICLES = frozenset({"a", "an", "the"})
_WORD = re.compile(r"\d+(?:\.\d+)?[^\W_]*|[^\W\d_]+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_DAY = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?")


def fix_mojibake(text: str) -> str:
    """``text`` decoded again when it is UTF-8 read as Windows-1252 (``"DÃ¡in"`` ->
    ``"Dáin"``); otherwise as it is."""
    if not _MOJIBAKE.search(text):
        return text
    for codec in ("cp1252", "latin-1"):
        try:
            return text.encode(codec).decode("utf-8")
        except UnicodeError:
            continue
    return text


def _ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``, ``21st``: as digits write them."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _number_text(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKD", fix_mojibake(text))
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    text = text.replace("&", " and ").replace("%", " percent ").replace("°", " degree ")
    text = re.sub("['\u2019`]", "", text)
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)  # 2,579 and 1,000,000
    text = re.sub(r"(?<=\d)\s*[-\u2010-\u2015]\s*(?=\d)", " to ", text)  # 200-500
    return text


def _numbers(words: list[str]) -> list[str]:
    """Number words as digits, and a scale word after a number applied to it."""
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w in _ORDINALS:
            out.append(_ordinal(_ORDINALS[w]))
            i += 1
            continue
        if w in _SMALL or w in _TENS:
            value = _SMALL.get(w, _TENS.get(w, 0))
            i += 1
            if w in _TENS and i < len(words) and words[i] in _ORDINALS \
                    and _ORDINALS[words[i]] < 10:  # twenty-second
                out.append(_ordinal(value + _ORDINALS[words[i]]))
                i += 1
                continue
            if w in _TENS and i < len(words) and words[i] in _SMALL and _SMALL[words[i]] < 10:
                value += _SMALL[words[i]]
                i += 1
            out.append(str(value))
            continue
        if w in _SCALES and out and _NUMBER.fullmatch(out[-1]):
            out[-1] = _number_text(float(out[-1]) * _SCALES[w])
            i += 1
            continue
        if _NUMBER.fullmatch(w):
            w = _number_text(float(w)) if "." in w else w
        out.append(w)
        i += 1
    return out


def _units(words: list[str]) -> list[str]:
    return [_UNITS.get(w, w) if i and _NUMBER.fullmatch(words[i - 1]) else w
            for i, w in enumerate(words)]


def _dates(words: list[str]) -> list[str]:
    """Month names as one name; ``month day`` written ``day month``."""
    words = [_MONTHS.get(w, w) if w not in ("may", "mar") or _beside_number(words, i)
             else w for i, w in enumerate(words)]
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w in _MONTH_NAMES and i + 1 < len(words):
            day = _DAY.fullmatch(words[i + 1])
            if day and 1 <= int(day.group(1)) <= 31 and not (
                    i + 2 >= len(words) and len(words[i + 1]) >= 3):
                out += [day.group(1), w]
                i += 2
                continue
        if w in _MONTH_NAMES and len(out) >= 2 and out[-1] == "of" \
                and _DAY.fullmatch(out[-2]):
            out.pop()  # "30th of march"
        if w in _MONTH_NAMES and out:
            day = _DAY.fullmatch(out[-1])
            if day and 1 <= int(day.group(1)) <= 31:
                out[-1] = day.group(1)
        out.append(w)
        i += 1
    return ["bc" if w == "bce" else w for w in out]


def _beside_number(words: list[str], i: int) -> bool:
    return any(0 <= j < len(words) and _DAY.fullmatch(words[j]) is not None
               for j in (i - 1, i + 1))


def _initials(words: list[str]) -> list[str]:
    out: list[str] = []
    run: list[str] = []
    for w in [*words, ""]:
        if len(w) == 1 and w.isalpha():
            run.append(w)
            continue
        if len(run) >= 2:
            out.append("".join(run))
        else:
            out += run
        run = []
        if w:
            out.append(w)
    return out


@lru_cache(maxsize=1 << 16)
def canonical_tokens(text: str, *, initials: bool = True) -> tuple[str, ...]:
    """The canonical words of ``text`` (the steps of the module docstring)."""
    words = _WORD.findall(_clean(text))
    words = _dates(_units(_numbers(words)))
    words = [w for w in words if w not in _ARTICLES]
    return tuple(_initials(words)) if initials else tuple(words)


def is_year(word: str) -> bool:
    """A canonical word that reads as a year (three or four digits)."""
    return word.isdigit() and 3 <= len(word) <= 4


def dates(words: tuple[str, ...]) -> list[tuple[int, str | None, str | None]]:
    """The dates in canonical ``words``: ``(index of the year, month, day)``, the month
    and day None where the text does not give them (``1965``, ``august 1965``)."""
    found = []
    for i, w in enumerate(words):
        if not is_year(w):
            continue
        month = words[i - 1] if i >= 1 and words[i - 1] in _MONTH_NAMES else None
        day = (words[i - 2] if month is not None and i >= 2 and words[i - 2].isdigit()
               and len(words[i - 2]) <= 2 else None)
        found.append((i, month, day))
    return found
