"""Question strings for the PTB tokenizer's differential test against CoreNLP 3.4.1.

:func:`real_questions` gathers every question string of the shared data;
:func:`generated_strings` mixes words from many scripts and punctuation classes into real
questions with a fixed seed (the same list on every run and machine).
"""

from __future__ import annotations

import csv
import gzip
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path


def _ambignq(path: Path) -> Iterator[str]:
    for ex in json.loads(path.read_text(encoding="utf-8")):
        yield ex["question"]
        for ann in ex.get("annotations", []):
            for pair in ann.get("qaPairs", []) or []:
                yield pair["question"]
        for q in ex.get("used_queries", []) or []:
            yield q["query"]


def _jsonl(path: Path, key: str) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)[key]


def _squad(path: Path) -> Iterator[str]:
    for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                yield qa["question"]


def _dpr_tsv(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            yield row[0]


def _dpr_json(path: Path) -> Iterator[str]:
    for rec in json.loads(path.read_text(encoding="utf-8")):
        yield rec["question"]


SOURCES: dict[str, tuple[tuple[str, ...], Callable[[Path], Iterator[str]]]] = {
    "ambignq dev": (("data", "ambignq", "dev_light.json"), _ambignq),
    "ambignq train": (("data", "ambignq", "train_light.json"), _ambignq),
    "ambignq dev full": (("data", "ambignq", "dev_full_sample5.json"), _ambignq),
    "ambignq train full": (("data", "ambignq", "train_full_sample5.json"), _ambignq),
    "nq-open dev": (("data", "nq-open", "NQ-open.dev.jsonl"),
                    lambda p: _jsonl(p, "question")),
    "efficientqa dev": (("data", "nq-open", "NQ-open.efficientqa.dev.1.1.jsonl"),
                        lambda p: _jsonl(p, "question")),
    "nq-open oracle": (("data", "nq-open", "nq-open-oracle.jsonl.gz"),
                       lambda p: _jsonl(p, "question")),
    "squad dev": (("data", "squad", "dev-v1.1.json"), _squad),
    "dpr nq dev": (("data", "dpr", "nq-dev.qa.tsv"), _dpr_tsv),
    "dpr nq test": (("data", "dpr", "nq-test.qa.tsv"), _dpr_tsv),
    "dpr biencoder": (("data", "dpr", "biencoder-nq-dev-sample5.json"), _dpr_json),
    "nq dev sample": (("data", "nq", "nq-dev-sample10.jsonl.gz"),
                      lambda p: _jsonl(p, "question_text")),
    "nq simplified dev": (("data", "nq", "simplified-nq-dev-sample10.jsonl"),
                          lambda p: _jsonl(p, "question_text")),
    "nq simplified train": (("data", "nq", "simplified-nq-train-sample10.jsonl"),
                            lambda p: _jsonl(p, "question_text")),
}


def real_questions(shared_file: Callable[..., Path]) -> list[str]:
    """Every question string of the shared data, deduplicated, in a fixed order."""
    seen: dict[str, None] = {}
    for parts, reader in SOURCES.values():
        for q in reader(shared_file(*parts)):
            seen.setdefault(q, None)
    return list(seen)


# Words and marks inserted into real questions, by class.
POOLS: dict[str, list[str]] = {
    "latin": ["Kraków", "Łódź", "café", "naïve", "Zürich", "São", "Paulo", "Ångström",
              "Dvořák", "Øresund", "Þór", "straße", "Ærø", "Ñandú", "garçon", "Škoda",
              "İstanbul", "Ğ", "façade", "Ǆemal", "ǈ", "Ａｂｃ", "ﬁnal", "ﬂow", "œuvre",
              "Œdipus", "Æsir", "ĳssel", "Āloha", "Hawaiʻi", "Ꞌa", "résumé", "déjà-vu",
              "L'Oréal", "O'Connor", "d'Artagnan", "McDonald's", "Tōkyō", "ŌSAKA"],
    "cyrillic": ["Москва", "Пётр", "Достоевский", "ЁЖИК", "україна", "Її", "Ђорђе",
                 "Ўзбек", "Қазақ", "русский-язык", "Жуков"],
    "greek": ["Αθήνα", "ΟΔΥΣΣΕΥΣ", "λόγος", "Σίσυφος", "ΣΟΦΟΣ", "ἀρετή", "Ἀθῆναι", "ϐ",
              "µ", "Ωmega", "ΐ", "ΰ"],
    "cjk": ["東京", "北京市", "ひらがな", "カタカナ", "한국어", "漢字かな", "中文", "ｶﾀｶﾅ",
            "〜", "「引用」", "『本』", "。", "、", "・", "𠀋", "𪚲"],
    "arabic": ["القاهرة", "عربي", "مُحَمَّد", "שָׁלוֹם", "עברית", "٣٤", "۱۲۳", "ـ",
               "हिन्दी", "தமிழ்", "ไทย", "ქართული", "Հայերեն", "አማርኛ"],
    "combining": ["cafe\u0301", "e\u0301", "\u0301", "a\u0308b", "n\u0303o",
                  "A\u030a", "x\u0336y", "\u20dd", "o\u0302\u0323", "ı\u0307", "\u0301x",
                  "\u0300\u0301", "q\u0327", "s\u0307\u0323"],
    "ligature": ["ﬁ", "ﬂ", "ﬀ", "ﬃ", "ﬄ", "ﬅ", "ﬆ", "Ĳ", "ǅ", "ŉ", "ﬁrst", "eﬀort"],
    "quote": ['"', "'", "“", "”", "‘", "’", "„", "‚", "«", "»", "‹", "›", "`", "``", "''",
              "\u201b", "\u201f", "″", "′", "＂", "＇"],
    "dash": ["-", "--", "–", "—", "‐", "‑", "‒", "―", "−", "⁃", "﹘", "－", "­", "~", "_",
             "__"],
    "slash": ["/", "//", "\\", "⁄", "∕", "／", "|", "and/or", "1/2", "24/7", "w/o", "a/b/c"],
    "ellipsis": ["...", "…", "..", "....", ". . .", "?!", "!!", "??", "?..."],
    "currency": ["$", "€", "£", "¥", "₹", "¢", "₽", "₩", "US$", "$5", "€20", "£3.50",
                 "¥1000", "5¢", "₹10", "A$", "C$", "HK$", "#", "＄"],
    "number": ["50%", "%", "‰", "3.14", "1,000", "1.000.000", "12:30", "1990s", "'90s",
               "4th", "½", "¼", "¾", "⅓", "⅔", "1½", "2¼", "3/4", "1 1/2", "10-12",
               "+1", "-5", "−5", "1e10", "5x", "2×3", "°C", "45°", "#1", "No.1", "²", "³",
               "№"],
    "abbreviation": ["U.S.", "U.S.A.", "e.g.", "i.e.", "etc.", "Dr.", "Mr.", "Mrs.",
                     "St.", "Jr.", "vs.", "Inc.", "Ltd.", "Co.", "a.m.", "p.m.", "Ph.D.",
                     "No.", "Gen.", "Mt.", "Ft.", "U.K.", "D.C.", "approx.", "cf."],
    "initials": ["J.R.R.", "J. K.", "T.S.", "A.", "W.E.B.", "J.F.K.", "H.G.", "Á.", "É.",
                 "Ö.", "Ж.", "Ł."],
    "emoji": ["😀", "👍🏽", "❤", "❤️", "☺", "★", "✓", "✔", "🇺🇸", "👨‍👩‍👧", "©", "®", "™",
              "§", "¶", "•", "†", "♪", "→", "←", "∞", "≈", "±", "≠", "×", "÷", "•"],
    "url": ["http://example.com", "https://en.wikipedia.org/wiki/Kraków",
            "www.google.com", "example.org/path?a=1&b=2", "foo@bar.com",
            "https://t.co/AbC123", "ftp://files.example.net/x.tar.gz", "@user", "#tag",
            "<b>", "</i>", "&amp;", "&quot;", "AT&T", "R&D", "C++", "C#", ".NET",
            "node.js"],
    "space": ["\u00a0", "\u2009", "\u200b", "\u3000", "\t", "\u2002", "\ufeff", "\u200e",
              "\u00ad", "\u2060"],
    "bracket": ["(", ")", "[", "]", "{", "}", "<", ">", "（", "）", "【", "】", "〈", "〉"],
    "other": ["&", "*", "+", "=", "@", "^", "?", "!", ";", ":", ",", ".", "¿", "¡", "·",
              "‧", "※", "§2", "¡Hola!", "¿Qué?"],
}
# What may sit right before or after an inserted word without a space.
_GLUE = ["/", "-", "–", "—", "'", "’", '"', "“", "”", ".", ",", "(", ")", ":", "…", "’s",
         "n't", "s", "1", "é", "\u0301", "$", "%", "&", "+", "_", "*"]


def generated_strings(questions: list[str], n: int = 20000, seed: int = 3401) -> list[str]:
    """``n`` real questions, each with 1-4 inserted words or marks (deterministic)."""
    rng = random.Random(seed)
    classes = sorted(POOLS)
    pool = sorted(set(questions))
    out = []
    for _ in range(n):
        words = rng.choice(pool).split(" ")
        for _ in range(rng.randint(1, 4)):
            insert = rng.choice(POOLS[rng.choice(classes)])
            r = rng.random()
            if r < 0.3:
                insert = rng.choice(_GLUE) + insert
            elif r < 0.6:
                insert = insert + rng.choice(_GLUE)
            elif r < 0.7:
                insert = rng.choice(POOLS[rng.choice(classes)]) + insert
            pos = rng.randint(0, len(words))
            if rng.random() < 0.25 and words and pos < len(words):
                # glued onto an existing word
                words[pos] = (words[pos] + insert) if rng.random() < 0.5 else (
                    insert + words[pos])
            else:
                words.insert(pos, insert)
        out.append(" ".join(words))
    return out
