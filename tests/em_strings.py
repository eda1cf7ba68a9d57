"""The (prediction, gold answers) pairs every exact-match convention is compared with its
harness's own code on: all the real strings held in ``shared/data`` and generated hard ones.

* :func:`llm_shapes`: 24 shapes an LLM prints, for each of the 3,610 NQ-open dev
  questions, built from its gold answers and FiD's released prediction (86,640 pairs);
* :func:`released`: the 12 released systems' predictions of ``openqa-eval/model_outputs``
  against their own gold lists and against the NQ-open dev gold of the same question;
* :func:`hard`: articles, punctuation, case, Unicode (combining marks beside articles,
  "İ", superscripts, circled letters, curly quotes), NUL, empty and whitespace strings,
  each against gold lists made of the same pieces.
"""

from __future__ import annotations

import itertools
import json
import random

from conftest import shared_file

Pair = tuple[str, list[str]]


def _jsonl(*parts: str) -> list[dict]:
    return [json.loads(line) for line in
            shared_file(*parts).read_text(encoding="utf-8").splitlines() if line.strip()]


def _text(prediction: str | list[str]) -> str:
    return ", ".join(prediction) if isinstance(prediction, list) else prediction


def llm_shapes() -> list[Pair]:
    """Every shape an LLM prints, for each of the 3,610 NQ-open dev questions."""
    gold = _jsonl("data", "nq-open", "NQ-open.dev.jsonl")
    fid = {r["question"]: _text(r["prediction"])
           for r in _jsonl("data", "openqa-eval", "model_outputs", "NQ_FiD.jsonl")}
    rng = random.Random(31)
    out = []
    for g in gold:
        answers = g["answer"]
        a, b = rng.choice(answers), rng.choice(answers)
        said = fid.get(g["question"], a)
        shapes = [a, f"  {a}\n", a.upper(), a.lower(), f"The {a}.", f"the {a.lower()}",
                  f"An {a} ", f"a {a}", f"{a}, {b}", f"{a} and {b}", f"The answer is {a}.",
                  f"Sure!\n{a}", f"{a}\nExplanation: {b}.", f'"{a}"!', f"({a})",
                  f"{a}\0", f"{a}; {b}", f"{a}'s", f"{a}. It is {b}.", said, f" {said}.",
                  f"Answer: {said}", f"{a.replace(' ', '  ')}", f"{a}\t"]
        out.extend((s, answers) for s in shapes)
    return out


SYSTEMS = ("NQ301_text-davinci-003_fewshot-n64", "NQ301_text-davinci-003_zeroshot",
           "NQ_ANCE-plus_FiD", "NQ_Contriever_FiD", "NQ_DPR", "NQ_EMDR2", "NQ_EviGen",
           "NQ_FiD-KD", "NQ_FiD", "NQ_GAR-plus_FiD", "NQ_R2D2", "NQ_Rocketv2_FiD")


def released() -> list[Pair]:
    """Each released prediction against its own gold list and the NQ-open dev gold."""
    dev = {g["question"]: g["answer"] for g in _jsonl("data", "nq-open", "NQ-open.dev.jsonl")}
    out = []
    for system in SYSTEMS:
        for r in _jsonl("data", "openqa-eval", "model_outputs", f"{system}.jsonl"):
            said = _text(r["prediction"])
            out.append((said, list(r["answer"])))
            if r["question"] in dev:
                out.append((said, dev[r["question"]]))
    return out


PIECES = ("", " ", "\t\n", "a", "A", "an", "An", "the", "The", "THE", "Paris", "PARIS",
          "paris", "Pa-ris", "the Beatles", "Beatles", "The Beatles!", "a.b", "A.B", "1",
          "1990", "in 1990", "U.S.", "U S", "Washington, D.C.", "Washington DC",
          "Pel\u00e9", "Pele\u0301", "the\u0301 end", "a\u0308 b", "an\u0301", "the\u00b2",
          "\u24b6 the", "\u24d0an", "\u0130stanbul", "\u0130", "i\u0307stanbul", "x\0",
          "x\0!", "\0", "rock \u2019n\u2019 roll", "rock 'n' roll", "don't", "\u00bfqu\u00e9?",
          "\u2014", "\u00ab\u00a0the end\u00a0\u00bb", "\x08an", "the\x08", "\x08", "na\u00efve",
          "ca\u0327a", "\u3000", "\u4e2d\u6587", "\u0391\u0398\u0397\u039d\u0391",
          "1,000", "$5", "50%", "co-op", "a_b", "the_a", "\u00c5ngstr\u00f6m")


def hard() -> list[Pair]:
    """The pieces alone, in pairs and with articles and stops around them, against gold
    lists of one or two pieces."""
    preds = list(PIECES)
    preds += [f"{x} {y}" for x, y in itertools.product(PIECES[:30], PIECES[:30])]
    preds += [f"{x}{y}" for x, y in itertools.product(PIECES[26:], PIECES[:12])]
    preds += [
        s for x in PIECES for s in (f"The {x}.", f" {x}\n", f"{x}, a {x}", f"  {x}")]
    golds = [[x] for x in PIECES] + [[x, y] for x, y in itertools.pairwise(PIECES)]
    rng = random.Random(7)
    out = []
    for p in preds:
        out.extend((p, g) for g in rng.sample(golds, 12))
    out.extend((p, [p]) for p in preds)
    return out


def every_pair() -> list[Pair]:
    return llm_shapes() + released() + hard()
