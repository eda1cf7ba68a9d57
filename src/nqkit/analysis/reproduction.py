"""Does a run reproduce a published NQ-open number, and if not, why? (``--published``)

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

__all__ = ["Published", "Reproduction", "Row", "false_alarm_rate", "parse_published",
           "reproduce"]

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
