"""Does a run reproduce a published NQ-open number (``--published``) or a released run
(``--released``), and if not, why?

A paper prints one number, say 44.1; a user's run of the same system scores 46.8 with
the official rule. The gap has three usual causes, and this module tells them apart:

* **the rule** — the paper scored under another convention (lm-eval's ``nq_open``,
  containment, ...) or another answer extraction: every convention × extraction is
  scored, and those whose score matches the published number are named;
* **noise** — two runs of one system differ by chance (sampling, seeds, hardware): a gap
  inside the *noise band* is not a failure to reproduce;
* **a real difference** — anything else.

**The noise band.** Two runs of a system of accuracy ``p`` on the same ``n`` questions
differ by at most what two independent samples of ``n`` answers would: the variance of
the difference is ``2·Σ p_i(1−p_i)/n²`` for per-question chances ``p_i`` of a correct
answer, and that is largest, ``2·p(1−p)/n``, when every question has the same chance. The
band is ``z·sqrt(2·p(1−p)/n)`` (``z`` = 1.96 for 95%) plus half a unit of the published
number's last digit (its rounding). Two runs of one system therefore fall outside it at
most 5% of the time (less when questions differ in difficulty, as they do); the
simulation in ``docs/nq-open-ambigqa.md`` measures both rates
(:func:`false_alarm_rate`). A run that is deterministic (greedy decoding, same
hardware) has no noise at all: then any gap is real, and the verdict says "within noise"
only in the sense above.

A number matches the published one at its precision when it rounds to it (46.81 → 46.8).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from nqkit.errors import InputError

__all__ = ["PARTS", "Published", "Reproduction", "Row", "RunPart", "RunReproduction",
           "false_alarm_rate", "parse_published", "reproduce", "reproduce_run"]

Z95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Published:
    """A published exact match: its value (a fraction), how it was written, the half
    unit of its last digit (as a fraction)."""

    value: float
    text: str
    half_unit: float
    percent: bool  # written in points (44.1) rather than as a fraction (0.441)

    def rounds_to(self, score: float) -> bool:
        """Whether ``score`` (a fraction) is printed as the published number."""
        decimals = len(self.text.partition(".")[2])
        shown = 100 * score if self.percent else score
        return f"{shown:.{decimals}f}" == f"{float(self.text):.{decimals}f}"


def parse_published(text: str) -> Published:
    """``44.1`` (points) or ``0.441`` (a fraction); one line for anything else."""
    try:
        x = float(text)
    except ValueError:
        x = math.nan
    if not math.isfinite(x) or x < 0 or x > 100 or "e" in text.lower():
        raise InputError(f"--published {text}", "expected an exact match as printed in "
                         "the paper, in points (44.1) or as a fraction (0.441)",
                         "give the number as the paper prints it")
    percent = x > 1
    decimals = len(text.partition(".")[2])
    half = 0.5 * 10.0 ** -decimals
    return Published(x / 100 if percent else x, text, half / 100 if percent else half,
                     percent)


@dataclass(frozen=True, slots=True)
class Row:
    """One convention × extraction: its score, the gap to the published number, the
    verdict (``equal``, ``within noise``, ``differs``)."""

    convention: str
    extract: str
    num_correct: int
    accuracy: float
    delta: float  # accuracy - published, as a fraction
    verdict: str


@dataclass(frozen=True)
class Reproduction:
    """Every convention × extraction against one published number."""

    published: Published
    num_total: int
    band: float  # the noise band at the chosen rule's accuracy, as a fraction
    chosen: Row  # the rule and extraction the user scored with
    rows: list[Row]  # every combination, closest to the published number first

    def matching(self) -> list[Row]:
        """The combinations whose score is the published number or within noise of it."""
        return [r for r in self.rows if r.verdict != "differs"]

    def interval(self) -> tuple[float, float]:
        """The chosen rule's gap with the noise band around it."""
        return self.chosen.delta - self.band, self.chosen.delta + self.band

    def summary(self) -> str:
        """The verdict in one sentence: how the chosen rule stands, and which rules
        would explain the published number."""
        p = self.published
        c = self.chosen
        unit = 100 if p.percent else 1
        digits = 2 if p.percent else 4
        lo, hi = (unit * x for x in self.interval())
        gap = (f"{unit * c.delta:+.{digits}f}{' points' if p.percent else ''} "
               f"[{lo:+.{digits}f}, {hi:+.{digits}f}]")
        rule = f"{c.convention}" + (f" with --extract {c.extract}" if c.extract != "none"
                                    else "")
        if c.verdict == "equal":
            head = f"reproduced: under {rule} the run scores the published {p.text}"
        elif c.verdict == "within noise":
            head = (f"within noise: under {rule} the run is {gap} from the published "
                    f"{p.text}, inside two runs' noise band")
        else:
            head = f"differs: under {rule} the run is {gap} from the published {p.text}"
        # one row per convention: an extraction that changes nothing adds no account
        others: list[Row] = []
        for r in self.matching():
            if r != c and all((o.convention, o.num_correct) != (r.convention, r.num_correct)
                              for o in [c, *others]):
                others.append(r)
        if c.verdict != "differs" or not others:
            if c.verdict == "differs":
                head += "; no convention or extraction explains the gap"
            return head
        names = ", ".join(f"{r.convention}" + (f" --extract {r.extract}"
                                               if r.extract != "none" else "")
                          + f" ({unit * r.accuracy:.{digits}f}, {r.verdict})"
                          for r in others[:3])
        return f"{head}; the published number is met under {names}"


def _verdict(p: Published, accuracy: float, band: float) -> str:
    if p.rounds_to(accuracy):
        return "equal"
    return "within noise" if abs(accuracy - p.value) <= band else "differs"


def noise_band(accuracy: float, n: int, published: Published, z: float = Z95) -> float:
    """``z·sqrt(2·p(1−p)/n)`` plus the published number's rounding (module doc)."""
    return z * math.sqrt(2 * accuracy * (1 - accuracy) / n) + published.half_unit


def reproduce(items: Sequence[tuple[str | None, Sequence[str]]], published: Published, *,
              convention: str, extract: str, conventions: Sequence[str] | None = None,
              extracts: Sequence[str] | None = None) -> Reproduction:
    """Score ``(prediction, answers)`` items (None: no prediction, wrong) under every
    convention × extraction and judge each against ``published``; ``convention`` and
    ``extract`` are the user's own choice, judged with the band at its accuracy."""
    from nqkit.conventions import convention_names, get_convention
    from nqkit.text.extract import EXTRACTORS, get_extractor

    n = len(items)
    if not n:
        raise InputError(None, "no question to score", "give the gold questions")
    rules = [get_convention(c) for c in (conventions or convention_names(published=True))]
    cuts = [get_extractor(e) for e in (extracts or list(EXTRACTORS))]
    chosen_rule, chosen_cut = get_convention(convention).name, get_extractor(extract).name
    correct: dict[tuple[str, str], int] = {}
    for cut in cuts:
        said = [None if pred is None else cut.apply(pred)[0] for pred, _ in items]
        for rule in rules:
            correct[rule.name, cut.name] = sum(
                s is not None and rule.match(s, answers) is not None
                for s, (_, answers) in zip(said, items, strict=True))
    if (chosen_rule, chosen_cut) not in correct:
        raise ValueError("the chosen convention and extraction must be among those scored")
    mine = correct[chosen_rule, chosen_cut] / n
    band = noise_band(mine, n, published)
    rows = []
    for (rule_name, cut_name), k in correct.items():
        acc = k / n
        # every combination is judged with the band of its own accuracy
        rows.append(Row(rule_name, cut_name, k, acc, acc - published.value,
                        _verdict(published, acc, noise_band(acc, n, published))))
    # closest first; among equal scores the user's extraction, then none (the simplest
    # account of the number), then by name
    rows.sort(key=lambda r: (abs(r.delta), r.extract != chosen_cut, r.extract != "none",
                             r.convention, r.extract))
    chosen = next(r for r in rows if (r.convention, r.extract) == (chosen_rule, chosen_cut))
    return Reproduction(published, n, band, chosen, rows)


def false_alarm_rate(p: Sequence[float], *, trials: int, seed: int = 0,
                     published_text: str = "50.0", z: float = Z95) -> float:
    """How often two runs of one system fall outside the noise band: each trial draws two
    runs, question ``i`` correct with chance ``p[i]`` in each, prints the first as a
    paper would (to the precision of ``published_text``) and judges the second against
    it. ``p`` all equal is the worst case (the band is exactly 95% wide there)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    probs = np.asarray(p, dtype=float)
    n = len(probs)
    decimals = len(published_text.partition(".")[2])
    alarms = 0
    for _ in range(trials):
        a = (rng.random(n) < probs).mean()
        b = (rng.random(n) < probs).mean()
        paper = parse_published(f"{100 * a:.{decimals}f}")
        alarms += _verdict(paper, float(b), noise_band(float(b), n, paper, z)) == "differs"
    return alarms / trials


# --- a released run (--released) ------------------------------------------------------
#
# Two files of predictions, the user's run and a run its authors released, scored under
# one rule. The gap between the run's number (over the --gold questions) and the released
# run's (as released: over its own questions, against the gold lists it carries, if any)
# is split into parts that add up to it exactly:
#
# * questions only in the run: the run over all its questions minus the run over the
#   questions both hold;
# * predictions: on the shared questions, against --gold, the run minus the released run
#   (the paired difference; the only part two runs of one system vary in, so the only
#   part with a noise interval);
# * answer version: the released run against --gold minus against its own gold lists, on
#   the shared questions;
# * questions only in the released run: its score on the shared questions minus on all of
#   its own (only where it carries gold lists: without them its other questions cannot
#   be scored, and are left out).
#
# The interval of the predictions part is the normal one of a mean of paired differences
# d_i = run_i - released_i in {-1, 0, 1}: d ± z·sd(d)/sqrt(n). Two runs of one system have
# E[d_i] = 0 on every question (the same chance of being right), so an interval that
# holds 0 is "within noise"; it is exact in the limit and needs no resampling seed.

PARTS = ("questions only in the run", "predictions", "answer version",
         "questions only in the released run")


@dataclass(frozen=True, slots=True)
class RunPart:
    """One part of the gap between a run and a released run."""

    cause: str  # one of PARTS
    delta: float  # its share of the gap (run minus released), as a fraction
    questions: int  # the questions behind it


@dataclass(frozen=True)
class RunReproduction:
    """A run against a released run of the same questions, under one rule."""

    accuracy: float  # the run over the --gold questions
    num_total: int
    released_accuracy: float  # the released run as released (own questions, own gold)
    released_total: int
    shared: int  # questions both hold
    same_predictions: int  # shared questions with equal predictions once extracted and
    # normalized by the rule
    only_run_right: int  # shared questions the run gets right and the released run not
    only_released_right: int
    unscorable: int  # released questions outside --gold with no gold list of their own
    paired: tuple[float, float, float]  # predictions part: mean difference, CI low, high
    parts: list[RunPart]
    verdict: str  # "reproduced", "within noise" or "differs"

    @property
    def delta(self) -> float:
        return self.accuracy - self.released_accuracy

    def interval(self) -> tuple[float, float]:
        """The whole gap with the predictions part's noise interval around it."""
        mean, lo, hi = self.paired
        return self.delta - (mean - lo), self.delta + (hi - mean)

    def summary(self) -> str:
        """The verdict in one sentence, with the parts that make up the gap."""
        lo, hi = self.interval()
        gap = f"{100 * self.delta:+.2f} points [{100 * lo:+.2f}, {100 * hi:+.2f}]"
        if self.verdict == "reproduced":
            return (f"reproduced: the run scores the released run's "
                    f"{100 * self.released_accuracy:.2f}, with the same verdict on every "
                    f"one of the {self.shared:,} questions both hold")
        if self.verdict == "within noise" and not any(p.questions for p in self.parts):
            # the files differ only by released questions nothing can score
            return (f"within noise: the run scores the released run's "
                    f"{100 * self.released_accuracy:.2f}, with the same verdict on every "
                    f"one of the {self.shared:,} questions both hold; the released run's "
                    f"{self.unscorable:,} other questions have no gold answers and are "
                    "not scored")
        if self.verdict == "within noise":
            return (f"within noise: the run is {gap} from the released run's "
                    f"{100 * self.released_accuracy:.2f}; the {self.shared:,} questions both "
                    f"hold, scored alike, differ no more than two runs of one system do")
        _, plo, phi = self.paired
        why = []
        for p in self.parts:
            if p.cause == "predictions":
                if p.questions:
                    noisy = "within noise" if plo <= 0 <= phi else "beyond noise"
                    why.append(f"predictions {100 * p.delta:+.2f} ({noisy}: "
                               f"[{100 * plo:+.2f}, {100 * phi:+.2f}], {p.questions:,} "
                               "questions with different verdicts)")
            elif p.delta or p.questions:
                why.append(f"{p.cause} {100 * p.delta:+.2f} ({p.questions:,} questions)")
        return (f"differs: the run is {gap} from the released run's "
                f"{100 * self.released_accuracy:.2f}; the gap is " + "; ".join(why))


def reproduce_run(run: Sequence[tuple[str, str | None, bool]],
                  released: Sequence[tuple[str, str, Sequence[str] | None]],
                  gold: dict[str, Sequence[str]], *, convention: str, extract: str,
                  z: float = Z95) -> RunReproduction:
    """Judge a run against a released run (module notes above, "a released run").

    ``run`` holds the run's scored items ``(question, prediction, correct)`` over the
    ``gold`` questions (``{question: answers}``); ``released`` the released predictions
    ``(question, prediction, own gold answers or None)`` in file order (a question given
    twice: the last, as the official script does). Both are scored under ``convention``
    after ``extract``.
    """
    from nqkit.conventions import get_convention
    from nqkit.text.extract import get_extractor

    rule, cut = get_convention(convention), get_extractor(extract)

    def said(prediction: str | None) -> str | None:
        return None if prediction is None else cut.apply(prediction)[0]

    def right(prediction: str | None, answers: Sequence[str]) -> bool:
        s = said(prediction)
        return s is not None and rule.match(s, answers) is not None

    theirs: dict[str, tuple[str, Sequence[str] | None]] = {}
    for question, prediction, own in released:
        theirs[question] = (prediction, own)
    if not run:
        raise InputError(None, "no question to score", "give the gold questions")
    mine = {q: (p, c) for q, p, c in run}
    shared = [q for q in mine if q in theirs]
    if not shared:
        raise InputError("--released", f"the released run holds none of the "
                         f"{len(mine):,} gold questions",
                         "give a released run of the same questions (the same split)")
    run_shared = [mine[q][1] for q in shared]
    rel_gold = [right(theirs[q][0], gold[q]) for q in shared]
    rel_own = [right(theirs[q][0], theirs[q][1] or gold[q]) for q in shared]
    # the released run's other questions count only with gold lists of their own
    extra = [q for q in theirs if q not in mine]
    scorable = [q for q in extra if theirs[q][1]]
    rel_extra = [right(theirs[q][0], theirs[q][1] or ()) for q in scorable]
    n, m = len(mine), len(shared)
    accuracy = sum(c for _, c in mine.values()) / n
    released_total = m + len(scorable)
    released_accuracy = (sum(rel_own) + sum(rel_extra)) / released_total
    d = [int(a) - int(b) for a, b in zip(run_shared, rel_gold, strict=True)]
    mean = sum(d) / m
    var = sum((x - mean) ** 2 for x in d) / (m - 1) if m > 1 else 0.0
    half = z * math.sqrt(var / m)
    a_shared, g_shared, o_shared = sum(run_shared) / m, sum(rel_gold) / m, sum(rel_own) / m
    parts = [
        RunPart(PARTS[0], accuracy - a_shared, n - m),
        RunPart(PARTS[1], a_shared - g_shared, sum(x != 0 for x in d)),
        RunPart(PARTS[2], g_shared - o_shared,
                sum(a != b for a, b in zip(rel_gold, rel_own, strict=True))),
        RunPart(PARTS[3], o_shared - released_accuracy, len(scorable)),
    ]
    same = sum(rule.normalize_prediction(s) == rule.normalize_prediction(t)
               if (s := said(mine[q][0])) is not None and (t := said(theirs[q][0])) is not None
               else s is None and t is None for q in shared)
    if all(p.questions == 0 for p in parts) and not (len(extra) - len(scorable)):
        verdict = "reproduced"
    elif -half <= mean <= half and all(p.questions == 0 for p in parts if p.cause != PARTS[1]):
        verdict = "within noise"
    else:
        verdict = "differs"
    return RunReproduction(
        accuracy=accuracy, num_total=n, released_accuracy=released_accuracy,
        released_total=released_total, shared=m, same_predictions=same,
        only_run_right=sum(x > 0 for x in d), only_released_right=sum(x < 0 for x in d),
        unscorable=len(extra) - len(scorable), paired=(mean, mean - half, mean + half),
        parts=parts, verdict=verdict)
