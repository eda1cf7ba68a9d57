"""The registry of exact-match conventions and what a convention declares.

End-to-end NQ-open numbers differ across codebases because each normalizes answers its own
way. nqkit scores with the official ORQA rule by default and offers the other published
rules under their own names, so that a number always says which rule produced it
(``em:NAME`` in the signature). A convention is one module of :mod:`nqkit.conventions`
that calls :func:`register`; the modules are found and imported on first use
(:func:`nqkit.registry.discover`), so there is no list to edit.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nqkit.errors import InputError
from nqkit.registry import Registry, discover

__all__ = ["ALIASES", "CONVENTIONS", "EmConvention", "convention_names", "get_convention",
           "register"]


@dataclass(frozen=True, slots=True)
class EmConvention:
    """One exact-match rule: a normalization and how a prediction meets a gold answer."""

    name: str  # the name in the signature (em:NAME)
    source: str  # the public code that defines it
    normalize: Callable[[str], str]
    contains: bool  # gold answer is a substring of the prediction (else: equal)
    # what the rule's harness does to a generation before normalizing it (an evaluation
    # harness's stop sequences and filters; the gold answers never go through it); None:
    # the prediction is normalized as given. It returns None where the harness takes no
    # answer at all (qa-metrics refuses an empty candidate): then no gold answer is met
    extract: Callable[[str], str | None] | None = None
    # how a normalized gold answer meets the normalized prediction, for a rule that is
    # neither equality nor substring (DPR's token runs); None: ``contains`` says
    meets: Callable[[str, str], bool] | None = None
    # how the rule normalizes a question's whole gold list, for a rule where one answer's
    # normalization depends on the others (lm-eval's numpy arrays are as wide as their
    # longest string); None: each answer by ``normalize``
    normalize_answers: Callable[[Sequence[str]], list[str]] | None = None
    # how the normalized prediction meets the question's whole gold list, for a rule that
    # weighs the answers together (``equiv``: a list of more candidates than the question
    # has answers is not credited); it returns the gold answer met, or None. None: each
    # answer is met on its own (``meets`` / ``contains``)
    judge: Callable[[str, Sequence[str]], str | None] | None = None
    # a rule some published code defines (listed by ``--explain``, searched by
    # ``--published``); False for nqkit's own rules, selectable by name only
    published: bool = True

    def normalize_prediction(self, prediction: str) -> str:
        """The prediction as this rule compares it: extracted, then normalized (the empty
        string where the extraction takes no answer)."""
        pred = self._prediction(prediction)
        return "" if pred is None else pred

    def _prediction(self, prediction: str) -> str | None:
        if self.extract is not None:
            extracted = self.extract(prediction)
            if extracted is None:
                return None
            prediction = extracted
        return _normalized(self.normalize, prediction)

    def match(self, prediction: str, answers: Sequence[str]) -> str | None:
        """The first gold answer the prediction meets under this rule, else None."""
        pred = self._prediction(prediction)
        if pred is None:
            return None
        if self.judge is not None:
            return self.judge(pred, answers)
        return self._first_met(pred, answers, self._golds(answers))

    def _golds(self, answers: Sequence[str]) -> list[str]:
        if self.normalize_answers is not None:
            return _normalized_list(self.normalize_answers, tuple(answers))
        return [_normalized(self.normalize, answer) for answer in answers]

    def _first_met(self, pred: str, answers: Sequence[str], golds: list[str]) -> str | None:
        for answer, gold in zip(answers, golds, strict=True):
            if self.meets is not None:
                if self.meets(gold, pred):
                    return answer
            elif (gold in pred) if self.contains else (gold == pred):
                return answer
        return None

    def creditable(self, answers: Sequence[str]) -> bool:
        """Whether this rule credits the question when the prediction is one of its gold
        answers, verbatim. False for a question whose every gold answer the rule's
        extraction spoils (lm-eval's stops cut ``"Washington, D.C."`` at the ``,``): no
        verbatim answer scores it, so the rule's ceiling (the score of a system that
        always answers with a gold answer) is below 1."""
        if (self.extract is None and self.meets is None and self.normalize_answers is None
                and self.judge is None and answers):
            return True  # a normalized answer equals (and contains) itself
        if self.judge is not None:
            return any(self.match(answer, answers) is not None for answer in answers)
        golds = self._golds(answers)  # normalized once for every verbatim answer
        for answer in answers:
            pred = self._prediction(answer)
            if pred is not None and self._first_met(pred, answers, golds) is not None:
                return True
        return False


    def verdicts(self, prediction: str | None, answers: Sequence[str]) -> tuple[bool, bool]:
        """``(self.creditable(answers), self.match(prediction, answers) is not None)``
        (None: no prediction, not met), the gold answers normalized once for both:
        ``--explain`` asks both of every question under every rule."""
        if self.judge is not None:
            return (self.creditable(answers),
                    prediction is not None and self.match(prediction, answers) is not None)
        golds: list[str] | None = None
        if (self.extract is None and self.meets is None and self.normalize_answers is None
                and answers):
            can = True  # as in creditable: a normalized answer equals itself
        else:
            golds = self._golds(answers)
            can = any((p := self._prediction(a)) is not None
                      and self._first_met(p, answers, golds) is not None for a in answers)
        pred = None if prediction is None else self._prediction(prediction)
        if pred is None:
            return can, False
        if golds is None:
            golds = self._golds(answers)
        return can, self._first_met(pred, answers, golds) is not None

@functools.lru_cache(maxsize=1 << 18)
def _normalized(normalize: Callable[[str], str], text: str) -> str:
    """``normalize(text)``, remembered: ``--explain``, ceilings and gap causes normalize
    the same gold answers and predictions under every convention, and several
    conventions share one normalization (SQuAD's)."""
    return normalize(text)


@functools.lru_cache(maxsize=1 << 14)
def _normalized_list(normalize_answers: Callable[[Sequence[str]], list[str]],
                     answers: tuple[str, ...]) -> list[str]:
    """``normalize_answers(answers)``, remembered as :func:`_normalized` is."""
    return normalize_answers(answers)


CONVENTIONS: Registry[EmConvention] = Registry("exact-match convention")
# other names a convention answers to (the signature says its own name)
ALIASES: dict[str, str] = {}
_loaded = False


def register(convention: EmConvention, *, aliases: Sequence[str] = ()) -> EmConvention:
    """Register ``convention`` (and the other names it answers to); a name taken twice is
    refused."""
    for alias in aliases:
        if alias in ALIASES or alias in CONVENTIONS:
            raise ValueError(f"exact-match convention name {alias!r} is already taken")
        ALIASES[alias] = convention.name
    return CONVENTIONS.add(convention.name, convention)


def _load() -> None:
    global _loaded
    if not _loaded:
        discover("nqkit.conventions", skip=("base",))
        _loaded = True


def convention_names(*, published: bool = False) -> list[str]:
    """Every registered convention, by name; ``published``: only the rules some published
    code defines (what ``--explain`` and ``--published`` compare), not nqkit's own."""
    _load()
    return [n for n in CONVENTIONS.names() if not published or CONVENTIONS.get(n).published]


def get_convention(name: str) -> EmConvention:
    """The convention called ``name`` (or one of its aliases)."""
    _load()
    canonical = ALIASES.get(name, name)
    if canonical not in CONVENTIONS:
        known = ", ".join([*CONVENTIONS.names(), *sorted(ALIASES)])
        raise InputError(None, f"unknown exact-match convention {name!r}",
                         f"choose one of: {known}")
    return CONVENTIONS.get(canonical)
