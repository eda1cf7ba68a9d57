"""``nqkit judge audit``: read the human judgments and a judge's verdicts (a file, or an
exact-match convention applied to the judged pairs), compare them
(:func:`nqkit.metrics.judge_audit.audit_verdicts`) and print the result."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from nqkit.errors import InputError
from nqkit.formats.verdicts import Verdict

__all__ = ["convention_verdicts", "judge_audit"]


def convention_verdicts(name: str, judgments: Any, gold: Any
                         ) -> tuple[list[Verdict], int]:
    """The convention's verdict on each judged pair whose question ``gold`` holds, and
    how many judged pairs it does not hold (their questions have no gold to judge by)."""
    from nqkit.conventions import get_convention
    from nqkit.formats.nq_open import read_nq_open
    from nqkit.metrics.judge_audit import pair_key

    if not gold:
        raise InputError("--convention", "the judgments file has no gold column and no "
                         "--gold was given", "give --gold, the NQ-open file of these "
                         "questions' gold answers")
    answers = {pair_key(ex.question): ex.answers for ex in read_nq_open(gold)}
    rule = get_convention(name)
    verdicts = [Verdict(j.question, j.answer,
                        rule.match(j.answer.strip(), answers[pair_key(j.question)]) is not None,
                        False, j.where)
                for j in judgments if pair_key(j.question) in answers]
    return verdicts, sum(pair_key(j.question) not in answers for j in judgments)


def _rate(rate: float, of: str) -> str:
    """``0.1234 of human yes``, or ``no human yes`` when there is none to be a rate of."""
    return f"no {of}" if math.isnan(rate) else f"{rate:.4f} of {of}"


def judge_audit(args: Mapping[str, Any]) -> int:
    import orjson

    from nqkit.formats.judgments import read_judgments
    from nqkit.formats.verdicts import read_verdicts
    from nqkit.metrics.judge_audit import audit_verdicts
    from nqkit.report import format_table
    from nqkit.signature import make_signature

    human = read_judgments(args["judgments"])
    settings: dict[str, object] = {"judgments": human.sha256[:12]}
    abstained = 0
    if args.get("verdicts"):
        v = read_verdicts(args["verdicts"])
        verdicts = list(v.verdicts)
        abstained = v.abstained
        settings["verdicts"] = v.sha256[:12]
    elif args.get("convention"):
        verdicts, no_gold = convention_verdicts(args["convention"], human.judgments,
                                                 args.get("gold"))
        settings["convention"] = args["convention"]
        if no_gold:
            from nqkit.report import warn

            warn(f"{no_gold:,} judged pairs are of questions --gold does not hold: no "
                 "verdict of the convention for them (counted in 'only human')")
    else:
        raise InputError(None, "no judge given", "give --verdicts FILE or --convention NAME")
    settings.update(resamples=args["resamples"], seed=args["seed"])
    r = audit_verdicts(human.judgments, verdicts, resamples=args["resamples"],
                       seed=args["seed"], where=str(args["judgments"]))
    signature = make_signature("judge-audit", settings)
    ai, ki = r.accuracy_interval, r.kappa_interval
    if r.only_judge:
        from nqkit.report import warn

        warn(f"{r.only_judge:,} of the judge's verdicts are of pairs the human judgments "
             "do not judge (another question or answer spelling?): left out of the "
             "agreement")
    kappa = None if math.isnan(r.kappa) else r.kappa
    if kappa is None:
        from nqkit.report import warn

        warn("Cohen's kappa is undefined here: the humans and the judge give one same "
             "verdict to every pair (no chance agreement to correct for)")
    if args.get("format") == "json":
        print(orjson.dumps({
            "pairs": r.pairs, "accuracy": r.accuracy, "kappa": kappa,
            "accuracy_interval": None if ai is None else [ai.low, ai.high],
            "kappa_interval": None if ki is None or kappa is None else [ki.low, ki.high],
            "missed_yes": r.missed_yes, "missed_yes_rate": r.missed_yes_rate,
            "false_yes": r.false_yes, "false_yes_rate": r.false_yes_rate,
            "human_yes": r.human_yes, "human_no": r.human_no,
            "only_human": r.only_human, "only_judge": r.only_judge,
            "abstained": abstained, "signature": signature}).decode())
        return 0
    rows = [("pairs", r.pairs, ""),
            ("accuracy", r.accuracy, "" if ai is None else f"[{ai.low:.4f}, {ai.high:.4f}]"),
            ("kappa", kappa, "" if ki is None or kappa is None
             else f"[{ki.low:.4f}, {ki.high:.4f}]"),
            ("missed yes", r.missed_yes, _rate(r.missed_yes_rate, "human yes")),
            ("false yes", r.false_yes, _rate(r.false_yes_rate, "human no")),
            ("only human", r.only_human, ""), ("only judge", r.only_judge, ""),
            ("abstained", abstained, "")]
    print(format_table(("metric", "value", "95% interval / rate"), rows))
    print(signature)
    return 0
