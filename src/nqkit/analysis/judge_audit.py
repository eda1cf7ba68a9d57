"""``nqkit judge audit``: read the human judgments and a judge's verdicts (a file, or an
exact-match convention applied to the judged pairs), compare them
(:func:`nqkit.metrics.judge_audit.audit_verdicts`) and print the result."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nqkit.errors import InputError
from nqkit.formats.verdicts import Verdict

__all__ = ["judge_audit"]


def _convention_verdicts(name: str, judgments: Any, gold: Any) -> list[Verdict]:
    from nqkit.conventions import get_convention
    from nqkit.formats.nq_open import read_nq_open
    from nqkit.metrics.judge_audit import _key

    if not gold:
        raise InputError("--convention", "the judgments file has no gold column and no "
                         "--gold was given", "give --gold, the NQ-open file of these "
                         "questions' gold answers")
    answers = {_key(ex.question): ex.answers for ex in read_nq_open(gold)}
    rule = get_convention(name)
    return [Verdict(j.question, j.answer, rule.match(j.answer.strip(), answers[_key(j.question)])
                    is not None, False, j.where)
            for j in judgments if _key(j.question) in answers]


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
        verdicts = _convention_verdicts(args["convention"], human.judgments, args.get("gold"))
        settings["convention"] = args["convention"]
    else:
        raise InputError(None, "no judge given", "give --verdicts FILE or --convention NAME")
    settings.update(resamples=args["resamples"], seed=args["seed"])
    r = audit_verdicts(human.judgments, verdicts, resamples=args["resamples"],
                       seed=args["seed"], where=str(args["judgments"]))
    signature = make_signature("judge-audit", settings)
    ai, ki = r.accuracy_interval, r.kappa_interval
    if args.get("format") == "json":
        print(orjson.dumps({
            "pairs": r.pairs, "accuracy": r.accuracy, "kappa": r.kappa,
            "accuracy_interval": None if ai is None else [ai.low, ai.high],
            "kappa_interval": None if ki is None else [ki.low, ki.high],
            "missed_yes": r.missed_yes, "missed_yes_rate": r.missed_yes_rate,
            "false_yes": r.false_yes, "false_yes_rate": r.false_yes_rate,
            "human_yes": r.human_yes, "human_no": r.human_no,
            "only_human": r.only_human, "only_judge": r.only_judge,
            "abstained": abstained, "signature": signature}).decode())
        return 0
    rows = [("pairs", r.pairs, ""),
            ("accuracy", r.accuracy, "" if ai is None else f"[{ai.low:.4f}, {ai.high:.4f}]"),
            ("kappa", r.kappa, "" if ki is None else f"[{ki.low:.4f}, {ki.high:.4f}]"),
            ("missed yes", r.missed_yes, f"{r.missed_yes_rate:.4f} of human yes"),
            ("false yes", r.false_yes, f"{r.false_yes_rate:.4f} of human no"),
            ("only human", r.only_human, ""), ("only judge", r.only_judge, ""),
            ("abstained", abstained, "")]
    print(format_table(("metric", "value", "95% interval / rate"), rows))
    print(signature)
    return 0
