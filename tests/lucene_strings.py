"""Strings for the Lucene analyzer's differential test against Pyserini's analyzer.

:func:`real_strings` gathers every text string of the shared data (questions, answers,
titles, passages, contexts; NQ's HTML pages only through their question, title, answer
spans and the simplified files' ``document_text``); :func:`generated_strings` builds
strings from fixed seeds (the same list on every run and machine): real text with words
of other scripts, emoji sequences, numbers, URLs and marks inserted, and short random
sequences over the character classes of the tokenizer's grammar.
"""

from __future__ import annotations

import csv
import gzip
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ptb_strings import POOLS


def _leaves(obj: Any) -> Iterator[str]:
    """Every string value of a JSON document (keys are names, not text)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _leaves(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _leaves(v)


def _json(path: Path) -> Iterator[str]:
    yield from _leaves(json.loads(path.read_text(encoding="utf-8")))


def _jsonl(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield from _leaves(json.loads(line))


def _tsv(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            yield from row


def _nq_original(path: Path) -> Iterator[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            ex = json.loads(line)
            yield ex["question_text"]
            yield ex["document_title"]
            toks = ex["document_tokens"]
            for ann in ex["annotations"]:
                spans = [ann["long_answer"], *ann["short_answers"]]
                for sp in spans:
                    if sp["start_token"] >= 0:
                        yield " ".join(t["token"] for t in toks[sp["start_token"]:sp["end_token"]]
                                       if not t["html_token"])


def _nq_simplified(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            ex = json.loads(line)
            yield ex["question_text"]
            yield ex["document_text"]
            words = ex["document_text"].split(" ")
            for cand in ex["long_answer_candidates"]:
                yield " ".join(words[cand["start_token"]:cand["end_token"]])


SOURCES: dict[str, tuple[tuple[str, ...], Callable[[Path], Iterator[str]]]] = {
    "ambignq dev": (("data", "ambignq", "dev_light.json"), _json),
    "ambignq train": (("data", "ambignq", "train_light.json"), _json),
    "ambignq dev full": (("data", "ambignq", "dev_full_sample5.json"), _json),
    "ambignq train full": (("data", "ambignq", "train_full_sample5.json"), _json),
    "nq-open dev": (("data", "nq-open", "NQ-open.dev.jsonl"), _jsonl),
    "efficientqa dev": (("data", "nq-open", "NQ-open.efficientqa.dev.1.1.jsonl"), _jsonl),
    "nq-open oracle": (("data", "nq-open", "nq-open-oracle.jsonl.gz"), _jsonl),
    "squad dev": (("data", "squad", "dev-v1.1.json"), _json),
    "dpr nq dev": (("data", "dpr", "nq-dev.qa.tsv"), _tsv),
    "dpr nq test": (("data", "dpr", "nq-test.qa.tsv"), _tsv),
    "dpr biencoder": (("data", "dpr", "biencoder-nq-dev-sample5.json"), _json),
    "nq dev sample": (("data", "nq", "nq-dev-sample10.jsonl.gz"), _nq_original),
    "nq simplified dev": (("data", "nq", "simplified-nq-dev-sample10.jsonl"), _nq_simplified),
    "nq simplified train": (("data", "nq", "simplified-nq-train-sample10.jsonl"),
                            _nq_simplified),
}


def real_strings(shared_file: Callable[..., Path]) -> list[str]:
    """Every text string of the shared data, deduplicated, in a fixed order."""
    seen: dict[str, None] = {}
    for parts, reader in SOURCES.values():
        for s in reader(shared_file(*parts)):
            seen.setdefault(s, None)
    return list(seen)


# What the tokenizer's grammar treats apart, beyond the PTB pools.
LUCENE_POOLS: dict[str, list[str]] = {
    "southeast-asian": ["ภาษาไทย", "สวัสดีครับ", "ພາສາລາວ", "ភាសាខ្មែរ", "မြန်မာဘာသာ",
                        "ᦑᦲᧈ", "ꪼꪕ", "ᨅᨔ", "ไทย123", "กข.คง", "ก่", "\u0e31"],
    "hangul": ["한국어", "서울특별시", "ᄀᄁ", "ㄱㄴ", "한글123", "한국's", "ｱｲｳ", "ﾊﾝｸﾞﾙ"],
    "japanese": ["カタカナ", "コーヒー", "ヴァイオリン", "テスト・ケース", "ひらがな", "ゝゞ",
                 "々", "〻", "〆", "ー", "ｰ", "カ_タ", "ア1", "漢字カナ", "𛀁", "\U00016fe3"],
    "hebrew": ["שלום", "צה\"ל", "צה״ל", "ג'ירפה", "א'", "ב\"", "תשע\"ה", "עב'ר"],
    "emoji": ["👨\u200d👩\u200d👧\u200d👦", "👩🏽\u200d💻", "🏳️\u200d🌈", "🇯🇵", "🇺🇸🇬🇧",
              "🇫", "1️⃣", "#️⃣", "*⃣", "9⃣", "👍🏿", "🏻", "a🏻", "☝️", "✌🏼", "❤️\u200d🔥",
              "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f", "😀😀",
              "\u200d😀", "😀\u200d", "🫠", "🥱", "🪐", "ℹ️", "Ⓜ", "ℹ\u200d👩", "™", "〰",
              "〽️", "©️", "®", "↔️", "⌚", "🈁", "🈚", "㊗️", "🀄", "🃏", "\u2764\ufe0e",
              "🧑\u200d🤝\u200d🧑", "😀\ufe0f\u200d😀", "👁\u200d🗨"],
    "numbers": ["1,000.5", "3.14", "1.000.000", "12:30", "1'000", "1_000", "0x1F", "2,5",
                "１２３", "٣٤٥", "१२३", "１,０００", "1.2.3.4", "10.5%", "1..2", "1,,2",
                "3.", ".5", "v1.2", "a1.b2", "1a.b", "a.1", "1.a", "1;2", "1’2"],
    "apostrophe": ["dog's", "dogs'", "DOG'S", "dog’s", "dog＇s", "o'clock", "rock'n'roll",
                   "'tis", "''", "'s", "s'", "it's", "don't", "I’m", "ʼs", "dog`s",
                   "l'homme", "d’Artagnan"],
    "hyphen": ["e-mail", "state-of-the-art", "--", "a-", "-a", "co‐operate", "x–y",
               "well‑known", "1-2", "a_b", "_a", "a_", "__init__", "snake_case_name",
               "a‿b", "a⁀b", "a︳b", "＿x"],
    "url": ["http://www.example.com/a_b-c?d=1&e=2#frag", "foo@bar.com", "first.last@x.org",
            "user_name@sub.domain.co.uk", "www.wikipedia.org", "192.168.0.1", "C:\\dir\\f.txt",
            "a.b.c", "file.tar.gz", "x@y", "@handle", "#hashtag"],
    "control": ["\x00", "\x01", "\x1f", "\x7f", "\u0085", "\u2028", "\t", "\r\n", "\x0b",
                "\ufeff", "\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "a\u00adb",
                "a\u200bb", "a\u200db", "a\u200cb", "a\u2060b", "\ufffc", "\ufffd"],
    "combining": ["e\u0301", "a\u0308\u0301", "\u0301a", "1\u0301", "_\u0301a",
                  "x\u20dd", "a\u0300'\u0301b", "\u093f", "क्‍ष", "ña\u0303"],
    "new-unicode": ["\U00010d50\U00010d51", "\U00030000", "\u9ffc", "\U00010e80",
                    "\U00011f04", "\u0d04", "\U0001e4d0", "a\U00010d50", "\U0001fae0",
                    "\u32ff", "\u1c90\u1c91", "\U00010570"],
    "case": ["İSTANBUL", "ΟΔΟΣ", "ΣΣ", "ǅ", "ẞ", "Ω", "K", "Å", "ᲐᲑᲒ", "ꭰ", "Ꭰ",
             "\U00010400", "\U0001e900", "ﬁ", "Ϊ", "ϴ"],
    "stem": ["visibly", "possibly", "analogical", "generalization", "running", "ponies",
             "caresses", "agreed", "hopping", "sky", "hopeful", "electricity", "relational",
             "conditional", "rational", "valenci", "digitizer", "conformabli", "radicalli",
             "differentli", "vileli", "analogousli", "vietnamization", "predication",
             "operator", "feudalism", "decisiveness", "hopefulness", "callousness",
             "formaliti", "sensitiviti", "sensibiliti", "triplicate", "formative",
             "formalize", "electriciti", "electrical", "goodness", "revival", "allowance",
             "inference", "airliner", "gyroscopic", "adjustable", "defensible", "irritant",
             "replacement", "adjustment", "dependent", "adoption", "homologou", "communism",
             "activate", "angulariti", "homologous", "effective", "bowdlerize", "probate",
             "rate", "cease", "controll", "roll", "ies", "eed", "ing", "ion", "ied", "yes",
             "sses", "s", "is", "ys", "cats's", "𝐚𝐛s", "😀😀s", "x\U0001d41aing"],
}


def _random_class_string(rng: random.Random) -> str:
    chars = "".join(w for pool in LUCENE_POOLS.values() for w in pool)
    alphabet = sorted(set(chars) | set("aZé1٣_.,:;'’\"-‐ \u0301\u200d\ufe0f\u20e3#*@/"))
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))


def _long_token(rng: random.Random) -> str:
    unit = rng.choice(["x", "ab", "1", "a_", "𝐚", "é", "a'b", "1,2", "カ", "한", "ก",
                       "e\u0301", "_", "x.", "😀"])
    n = rng.randint(100, 700) // len(unit)
    edge = rng.choice(["", "'", ".", "_", " ", "\u0301", "s", "'s"])
    return rng.choice(["", "The ", "a "]) + unit * n + edge + rng.choice(["", "x", " end"])


def generated_strings(texts: list[str], n: int = 12000, seed: int = 2001) -> list[str]:
    """``n`` strings: half real texts (cut to at most 40 words) with 1-5 inserted words
    or marks, a quarter random sequences over the grammar's character classes, and the
    rest tokens around and over the 255-unit limit."""
    rng = random.Random(seed)
    pools = {**POOLS, **LUCENE_POOLS}
    classes = sorted(pools)
    base = sorted(set(texts))
    out: list[str] = []
    for i in range(n):
        kind = i % 4
        if kind in (0, 1):
            words = rng.choice(base).split(" ")
            start = rng.randrange(len(words))
            words = words[start:start + 40]
            for _ in range(rng.randint(1, 5)):
                w = rng.choice(pools[rng.choice(classes)])
                if rng.random() < 0.3:
                    w = rng.choice(["", "'", "’", "-", "_", ".", "s", "1", "\u0301"]) + w
                words.insert(rng.randint(0, len(words)), w)
            glue = rng.choice([" ", " ", " ", "", "-", "_"])
            out.append(glue.join(words) if glue != " " else " ".join(words))
        elif kind == 2:
            out.append(_random_class_string(rng))
        else:
            out.append(_long_token(rng) if rng.random() < 0.5 else
                       " ".join(_random_class_string(rng) for _ in range(rng.randint(2, 6))))
    return out
