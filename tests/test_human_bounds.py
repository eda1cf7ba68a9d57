"""Human upper bounds (paper §5.2) on synthetic k-way data, values derived by hand."""

from __future__ import annotations

import pytest

from nqkit.errors import InputError
from nqkit.formats.nq import NULL_SPAN, Annotation, Span
from nqkit.metrics.human import human_bounds, pool_votes

A = Span(10, 20, 1, 3)  # a long answer early in the page
B = Span(30, 40, 5, 8)  # a later one
S1 = Span(12, 14, 2, 3)  # a short span inside A


def ann(long: Span | None, shorts: tuple[Span, ...] = (), yes_no: str = "NONE") -> Annotation:
    return Annotation(0, long or NULL_SPAN, -1 if long is None else 0, shorts, yes_no)


N = ann(None)
a, b = ann(A), ann(B)

# k = 7: five references, then a pool of two.
EXAMPLES = [
    (1, [a, a, N, N, N, a, b]),  # gold (2 of 5); pool A (right), B (wrong)
    (2, [N, N, N, N, b, b, N]),  # no gold (1 of 5); pool B (predicted, wrong), NULL
    (3, [a, b, b, N, N, N, N]),  # gold (3 of 5); pool all NULL
]


def test_single_annotator_by_hand():
    hb = human_bounds(EXAMPLES, references=5)
    s = hb.single_long
    # predictions: 1:A right, 1:B wrong, 2:B wrong -> 1 correct of 3 predicted;
    # gold counts once per pool annotator: ex 1 twice, ex 3 twice -> 4
    assert (s.correct, s.predicted, s.gold) == (1, 3, 4)
    assert s.precision == pytest.approx(1 / 3)
    assert s.recall == pytest.approx(1 / 4)
    assert s.f1 == pytest.approx(2 / 7)  # 2 (1/3)(1/4) / (1/3 + 1/4)


@pytest.mark.parametrize(("votes", "counts", "prf"), [
    # votes=1: ex 1 pool {A, B} tie -> the earlier A (right); ex 2 B (wrong); ex 3 NULL
    (1, (1, 2, 2), (0.5, 0.5, 0.5)),
    # votes=2: ex 1 A (2 votes); ex 2 only 1 vote -> NULL; ex 3 NULL
    (2, (1, 1, 2), (1.0, 0.5, 2 / 3)),
])
def test_super_annotator_vote_threshold(votes, counts, prf):
    s = human_bounds(EXAMPLES, references=5, votes=votes).super_long
    assert (s.correct, s.predicted, s.gold) == counts
    assert (s.precision, s.recall, s.f1) == pytest.approx(prf)


def test_votes_above_the_pool_are_refused():
    # votes=3 with a pool of 2: the super-annotator could never answer (a silent 0)
    with pytest.raises(InputError, match=r"^--votes 3 is more than the pool of 2 annotation"):
        human_bounds(EXAMPLES, references=5, votes=3)


def test_default_votes_scale_the_papers_8_of_20():
    assert pool_votes(20, None) == 8
    assert pool_votes(2, None) == 1  # round(0.8)
    assert pool_votes(1, None) == 1
    assert pool_votes(20, 5) == 5
    auto = human_bounds(EXAMPLES, references=5).super_long
    assert auto == human_bounds(EXAMPLES, references=5, votes=1).super_long


def test_all_splits_average_over_every_reference_choice():
    # k=6, 5 references: 6 splits. Leaving out an A: refs A A N N N -> gold, A right (3x).
    # Leaving out an N: refs A A A N N -> gold, pool NULL (3x).
    hb = human_bounds([(1, [a, a, a, N, N, N])], references=5, splits="all")
    assert hb.num_splits == 6
    s = hb.single_long
    assert (s.correct, s.predicted, s.gold) == (3, 3, 6)
    assert (s.precision, s.recall) == (1.0, 0.5)
    # with one annotator in the pool and votes=1 the super-annotator is that annotator
    assert hb.super_long == hb.single_long
    first = human_bounds([(1, [a, a, a, N, N, N])], references=5, splits="first")
    assert first.num_splits == 1 and first.single_long.gold == 1


def test_short_answers_yes_no_and_spans():
    s1, yes = ann(A, (S1,)), ann(A, (), "YES")
    ex = [(1, [s1, s1, a, a, a, yes, s1])]  # refs: 2 of 5 give short S1 -> gold short
    hb = human_bounds(ex, references=5)
    # single: YES wrong (no reference said YES), S1 right
    assert (hb.single_short.correct, hb.single_short.predicted, hb.single_short.gold) == (1, 2, 2)
    # super (votes 1 of a pool of 2): YES and S1 tie -> the first in annotation order: YES
    assert (hb.super_short.correct, hb.super_short.predicted, hb.super_short.gold) == (0, 1, 1)
    # its long answer is A (2 votes), right
    assert hb.super_long.correct == 1


def test_beta_changes_the_gold():
    # with beta=3, example 1 (2 of 5 non-null references) has no gold long answer
    hb = human_bounds(EXAMPLES, references=5, beta=3)
    assert hb.single_long.gold == 2  # only example 3, twice
    assert "beta:3" in hb.signature


def test_signature_lists_the_settings():
    hb = human_bounds(EXAMPLES, references=5, votes=2)
    # EXAMPLES have no short answer at all: the short scores are marked as meaningless
    assert hb.signature.startswith("nq-human|refs:5|beta:2|votes:2|splits:first|"
                                   "warn:no-gold-short|v")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"references": 5}, "1: the example has 5 annotations, fewer than references + 1 = 6 — "
                        "use fewer references"),
    ({"references": 4, "beta": 5}, "beta must be between 1 and references (4), got 5"),
    ({"references": 4, "votes": 0}, "votes must be at least 1, got 0"),
])
def test_bad_settings(kwargs, message):
    with pytest.raises(InputError) as e:
        human_bounds([(1, [a, a, N, N, N])], **kwargs)
    assert message in str(e.value)


def test_five_way_real_sample_leave_one_annotator_out(shared):
    from nqkit.formats.nq_gold import read_nq_gold

    gold = read_nq_gold(shared("data", "nq", "nq-dev-sample10.jsonl.gz"), workers=1)
    hb = human_bounds([(i, g.annotations) for i, g in gold.items()], references=4,
                      splits="all")
    assert hb.num_splits == 50
    # Long-answer annotations per example (candidate index, -1 = NULL), from the data README
    # and the file: [-1,-1,-1,0,0], [2,1,1,1,1], [28]*5, [-1,17,-1,-1,29], [-1,-1,13,-1,-1],
    # the other five all NULL. Leaving each annotator out in turn, by hand:
    #   ex 1: out NULL (3x) -> gold, no prediction; out 0 (2x) -> no gold, wrong prediction
    #   ex 3: gold 5x; the left-out 2 is wrong, the four 1s are right
    #   ex 5: gold 5x, right 5x
    #   ex 8: out NULL (3x) -> gold; out 17 or 29 -> no gold, wrong prediction (2x)
    #   ex 10: out 13 -> no gold, wrong prediction
    s = hb.single_long
    assert (s.correct, s.predicted, s.gold) == (9, 2 + 5 + 5 + 2 + 1, 3 + 5 + 5 + 3)
    assert hb.super_long == hb.single_long  # a pool of one, votes 1


S2 = Span(15, 17, 3, 4)  # another short span inside A


@pytest.mark.parametrize(("pool", "votes", "counts"), [
    # "votes" counts pool annotators with a short answer; the answer is the most common
    # one (ties: the earliest annotator's). S1 is the gold short answer.
    # S2, S1, S1: S1 has 2 of 3 -> right (the first annotator's S2 would be wrong)
    ([ann(A, (S2,)), ann(A, (S1,)), ann(A, (S1,))], 2, (1, 1, 1)),
    # S2, S1: a tie, the earlier S2 -> wrong
    ([ann(A, (S2,)), ann(A, (S1,))], 2, (0, 1, 1)),
    # YES, S1, S1: a YES and a span are different answers; S1 wins -> right
    ([ann(A, yes_no="YES"), ann(A, (S1,)), ann(A, (S1,))], 2, (1, 1, 1)),
    # S1, YES, YES: YES wins -> predicted, wrong against the gold span
    ([ann(A, (S1,)), ann(A, yes_no="YES"), ann(A, yes_no="YES")], 2, (0, 1, 1)),
    # only one pool annotator has a short answer: fewer than 2 votes -> no answer
    ([ann(A, (S1,)), ann(A), ann(A)], 2, (0, 0, 1)),
])
def test_super_annotator_short_answers_vote_on_exact_spans(pool, votes, counts):
    refs = [ann(A, (S1,)), ann(A, (S1,)), N, N, N]  # gold short answer S1 (2 of 5)
    s = human_bounds([(1, refs + pool)], references=5, votes=votes).super_short
    assert (s.correct, s.predicted, s.gold) == counts


def test_paper_defaults_five_references_and_beta_up_to_references():
    ex = [(1, [a, a, N, N, N, a]), (2, [a, N, N, N, N, b])]
    assert human_bounds(ex) == human_bounds(ex, references=5, beta=2)
    # beta may equal the number of references: gold needs all five non-null
    five = human_bounds([(1, [a, a, a, a, a, a])], references=5, beta=5).single_long
    assert (five.correct, five.predicted, five.gold) == (1, 1, 1)


def test_official_gold_rule_defaults_to_2_of_5():
    from nqkit.metrics.nq import gold_has_long, gold_has_short

    s1 = ann(A, (S1,))
    # the official evaluation: gold when at least 2 of the 5 annotations are non-null
    assert gold_has_long([a, a, N, N, N]) and not gold_has_long([a, N, N, N, N])
    assert gold_has_short([s1, s1, N, N, N]) and not gold_has_short([s1, a, N, N, N])


def test_beta_may_be_one():
    # beta = 1: one non-null reference makes a gold long answer; the pool's A is right
    s = human_bounds([(1, [a, N, N, N, N, a])], references=5, beta=1).single_long
    assert (s.correct, s.predicted, s.gold) == (1, 1, 1)
    with pytest.raises(InputError):
        human_bounds([(1, [a, N, N, N, N, a])], references=5, beta=0)


def test_the_signature_names_the_vote_threshold_each_pool_got():
    # 8/20 of a pool of two rounds to 1: "auto(1/2)", not the paper's "8/20" it did not use
    assert "|votes:auto(1/2)|" in human_bounds(EXAMPLES, references=5).signature
    twenty = [(1, [a] * 5 + [a] * 8 + [N] * 12)]  # a pool of 20: the paper's 8 of 20
    assert "|votes:auto(8/20)|" in human_bounds(twenty, references=5).signature
    mixed = [*EXAMPLES, (4, [a] * 6)]  # pools of two and of one
    assert "|votes:auto(1/1,1/2)|" in human_bounds(mixed, references=5).signature
    assert "|votes:2|" in human_bounds(EXAMPLES, references=5, votes=2).signature


def test_splits_are_counted_per_example():
    # k=7 with 5 references: C(7,5) = 21 splits of each of the three examples
    hb = human_bounds(EXAMPLES, references=5, splits="all")
    assert (hb.num_splits, hb.splits_per_example) == (63, (21,))
    assert human_bounds(EXAMPLES, references=5).splits_per_example == (1,)


def test_too_few_annotations_hint_at_the_current_option_name():
    with pytest.raises(InputError) as e:
        human_bounds([(1, [a] * 5)], references=5)
    assert "--num-references 4 --splits all" in str(e.value)
    assert "--references " not in str(e.value)
