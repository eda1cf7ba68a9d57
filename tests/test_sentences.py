"""The ReQA-compatible sentence breaker: unit cases and golden parity on SQuAD 1.1 dev."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nqkit.text.sentences import sentence_spans, split_sentences

from conftest import shared_file


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One sentence.", ["One sentence."]),
        ("First one. Second one.", ["First one.", "Second one."]),
        ("He left! Then 3 came? Yes.", ["He left!", "Then 3 came?", "Yes."]),
        ('He said "go." Then he went.', ['He said "go."', "Then he went."]),
        # a lower-case word after the period is no sentence start
        ("It cost 5 ft. and more.", ["It cost 5 ft. and more."]),
        # titles, ranks, months and initials do not end a sentence
        ("Dr. Smith met Gen. Lee in Jan. 1865.", ["Dr. Smith met Gen. Lee in Jan. 1865."]),
        ("J. R. R. Tolkien wrote it.", ["J. R. R. Tolkien wrote it."]),
        ("The U.S. 101 runs north.", ["The U.S. 101 runs north."]),
        # ... but a frequent sentence opener cuts again after an abbreviation
        ("He met Dr. The end.", ["He met Dr.", "The end."]),
        # editorial marks stay with the sentence they follow
        ("It rained.[citation needed] Then it stopped.",
         ["It rained.[citation needed]", "Then it stopped."]),
        ("It rained.[1][2] Then it stopped.", ["It rained.[1][2]", "Then it stopped."]),
        ("See No. 5 for more.", ["See No. 5 for more."]),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_offsets_exclude_whitespace_and_newlines_count_as_spaces() -> None:
    text = "  A x.\nC y.  "
    spans = sentence_spans(text)
    assert spans == [(2, 6), (7, 11)]
    assert [text[a:b] for a, b in spans] == ["A x.", "C y."]


def test_life_dates_are_not_sentence_ends() -> None:
    # "b." (born) before a capital or a digit is joined back
    assert split_sentences("Ada (b. 1815) wrote. Notes b. London.") == [
        "Ada (b. 1815) wrote.", "Notes b. London."]


def test_blank_text_gives_one_empty_span() -> None:
    assert sentence_spans("") == [(0, 0)]


def test_golden_squad_dev_sentence_breaks() -> None:
    squad = orjson.loads(shared_file("data", "squad", "dev-v1.1.json").read_bytes())
    gold_path = shared_file("golden", "reqa-squad-dev", "sentence-breaks.jsonl")
    gold = [orjson.loads(line) for line in gold_path.read_bytes().splitlines() if line]
    contexts = [p["context"] for a in squad["data"] for p in a["paragraphs"]]
    assert len(contexts) == len(gold) == 2067
    differ = [i for i, (c, g) in enumerate(zip(contexts, gold, strict=True))
              if [list(s) for s in sentence_spans(c)] != g]
    assert differ == []


_WORDS = st.sampled_from(["The", "cat", "Dr.", "U.S.", "sat.", "It", "ran!", "3.", "J.",
                          "(b.", "1900)", "\"Hi.\"", "e.g.", "[1]", "Yes?", "In", " ", "\n"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, max_size=40).map(" ".join))
def test_spans_partition_the_text(text: str) -> None:
    spans = sentence_spans(text)
    prev_end = 0
    for a, b in spans:
        assert prev_end <= a <= b <= len(text)
        assert text[a:b] == text[a:b].strip()
        assert text[prev_end:a].strip() == ""  # only whitespace between sentences
        prev_end = b
    assert text[prev_end:].strip() == ""
