"""The pure-Python PTB tokenizer against CoreNLP 3.4.1's PTBTokenizer itself (the jar).

One JVM run over (a) every question string of the shared data and (b) 20,000 generated
strings mixing other scripts, combining marks, ligatures, quotes, dashes, slashes,
ellipses, currency, fractions, abbreviations, emoji and URLs into real questions, compared
token by token with ``ptb_tokenize(text, lower=True)``. Skipped when java or pycocoevalcap
is missing, a failure under ``NQKIT_REQUIRE_SHARED=1``.
"""

from __future__ import annotations

import difflib

import pytest

from nqkit.text.ptb import ptb_tokenize
from ptb_oracle import LINE_BREAKS, find_jar, find_java, java_tokenize
from ptb_strings import generated_strings, real_questions

from conftest import REQUIRE_SHARED, shared_file

N_GENERATED = 20000


def _require_oracle() -> None:
    missing = [name for name, found in (("java", find_java()),
                                        ("pycocoevalcap's CoreNLP jar", find_jar()))
               if found is None]
    if missing:
        msg = f"the tokenizer oracle needs {' and '.join(missing)}"
        if REQUIRE_SHARED:
            pytest.fail(msg + " (apt-get install default-jre-headless; pip install "
                        "pycocoevalcap)")
        pytest.skip(msg)


@pytest.fixture(scope="module")
def oracle() -> dict[str, tuple[list[str], list[list[str]]]]:
    _require_oracle()
    real = real_questions(shared_file)
    gen = generated_strings(real, N_GENERATED)
    out = java_tokenize(real + gen)
    return {"real": (real, out[:len(real)]), "generated": (gen, out[len(real):])}


def _disagreements(strings: list[str], java: list[list[str]]) -> list[str]:
    bad = []
    for s, want in zip(strings, java, strict=True):
        got = ptb_tokenize(s.translate({ord(c): " " for c in LINE_BREAKS}), lower=True)
        if got != want:
            diff = [f"{got[a1:a2]} vs jar {want[b1:b2]}" for op, a1, a2, b1, b2
                    in difflib.SequenceMatcher(a=got, b=want, autojunk=False).get_opcodes()
                    if op != "equal"]
            bad.append(f"{s!r}: {'; '.join(diff)}")
    return bad


def test_every_real_question_is_tokenized_as_by_the_jar(oracle) -> None:
    strings, java = oracle["real"]
    assert len(strings) > 50000  # AmbigNQ dev+train with rewrites, NQ-open, SQuAD, DPR
    bad = _disagreements(strings, java)
    assert not bad, f"{len(bad)} of {len(strings)} differ, e.g.\n" + "\n".join(bad[:5])


def test_generated_strings_agree_with_the_jar(oracle) -> None:
    strings, java = oracle["generated"]
    assert len(strings) == N_GENERATED
    bad = _disagreements(strings, java)
    # at least 99.99%: the known residual class (docs/nq-open-ambigqa.md) is rare
    assert len(bad) <= N_GENERATED // 10000, (
        f"{len(bad)} of {len(strings)} differ, e.g.\n" + "\n".join(bad[:5]))


def test_the_generated_strings_exercise_the_hard_cases(oracle) -> None:
    # the jar does not keep these as they are, so the comparison above covers them
    strings, java = oracle["generated"]
    text = "\n".join(strings)
    for needle in ("Kraków", "\u0301", "ﬁ", "“", "—", "…", "€", "½", "J.R.R.", "😀",
                   "https://", "Σ", "東京"):
        assert needle in text, needle
    by_string = dict(zip(strings, java, strict=True))
    assert not any("😀" in t for tokens in by_string.values() for t in tokens)


@pytest.mark.parametrize(("text", "tokens"), [
    # expected tokens as printed by the jar (-preserveLines -lowerCase)
    ("Kraków/Łódź", ["kraków", "/", "łódź"]),
    ("café/bar", ["café", "/", "bar"]),
    ("1A\u0301 x", ["1a", "\u0301", "x"]),
    ("x\u0301y and cafe\u0301", ["x\u0301y", "and", "cafe\u0301"]),
    ("€5 £3 ¢5 ¥5 1½", ["$", "5", "#", "3", "cents", "5", "¥", "5", "1", "1/2"]),
    ("emoji 😀 here", ["emoji", "here"]),
    ("ΣΟΦΟΣ ΟΔΥΣΣΕΥΣ-channel", ["σοφος", "οδυσσευσ-channel"]),
    ("[y] {z} <w> :) C++ c#", ["-lsb-", "y", "-rsb-", "-lcb-", "z", "-rcb-", "<w>", ":-rrb-",
                               "c++", "c#"]),
    ("U.S. He said no. of No. 5 etc. Co. Inc.s", ["u.s.", ".", "he", "said", "no", ".", "of",
                                                  "no.", "5", "etc.", ".", "co.", ".",
                                                  "inc.", "s"]),
    ("gonna 'tis don't I'm-a y'all", ["gon", "na", "'t", "is", "do", "n't", "i", "'m", "-",
                                      "a", "y'", "all"]),
    ("1 1/2 (555) 123-4567", ["1\u00a01/2", "-lrb-555-rrb-\u00a0123-4567"]),
])
def test_known_jar_outputs(text: str, tokens: list[str]) -> None:
    assert ptb_tokenize(text, lower=True) == tokens
