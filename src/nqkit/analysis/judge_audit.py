"""``nqkit judge audit``: read the human judgments and a judge's verdicts (a file, or an
exact-match convention applied to the judged pairs), compare them
(:func:`nqkit.metrics.judge_audit.audit_verdicts`), sort the disagreements by kind
(:mod:`nqkit.metrics.disagreement_kinds`) when the gold answers are known, and, given
systems' predictions, how much the judge reorders them
(:mod:`nqkit.metrics.system_order`); print the result.

The gold answers come from ``--gold`` (an NQ-open file, or a ``.tsv`` with ``Question``
and ``Gold answers`` columns as oqaeval's ``NQ301_BEM.tsv``), else from the judgments'
or the verdicts' own ``Gold answers`` column, else from the gold the ``--systems`` files
carry. A system's own gold, when its file carries
one (oqaeval's ``{question, answer, prediction}`` lines), scores that system, as
oqaeval's AnnotatedEM scores it.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nqkit.errors import InputError

__all__ = ["convention_verdicts", "judge_audit"]

EXAMPLES = 3  # example pairs shown per kind of disagreement
_CELL = 40  # characters of a question, answer or gold shown in the examples table


def _rate(rate: float, of: str) -> str:
    """``0.1234 of human yes``, or ``no human yes`` when there is none to be a rate of."""
    return f"no {of}" if math.isnan(rate) else f"{rate:.4f} of {of}"


def _digest(obj: Any) -> str:
    import orjson

    return hashlib.sha256(orjson.dumps(obj)).hexdigest()[:12]


def _read_gold(paths: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """--gold: TSVs with a Gold answers column (``.tsv``), or NQ-open files."""
    if paths and all(Path(p).suffix.lower() == ".tsv" for p in paths):
        from nqkit.formats.judgments import read_gold_answers

        out: dict[str, tuple[str, ...]] = {}
        for p in paths:
            for q, a in read_gold_answers(p).items():
                out.setdefault(q, a)
        return out
    from nqkit.formats.nq_open import read_nq_open

    return {ex.question: tuple(ex.answers) for ex in read_nq_open(paths)}


def _convention_judge(name: str) -> Any:
    from nqkit.conventions import get_convention

    rule = get_convention(name)
    return lambda question, answer, gold: rule.match(answer.strip(), tuple(gold)) is not None


def convention_verdicts(name: str, judgments: Sequence[Any], gold: str | Sequence[str]
                        ) -> tuple[list[Any], int]:
    """The verdicts of the convention ``name`` on each distinct judged pair whose question
    the ``gold`` file(s) hold (as ``--gold`` reads them), and how many judged pairs they
    do not hold: what ``judge audit --convention`` audits, for scripts."""
    from nqkit.metrics.judge_audit import run_judge

    run = run_judge(judgments, _convention_judge(name),
                    _read_gold([gold] if isinstance(gold, str) else gold))
    return list(run.verdicts), run.no_gold


def _kinds(compared: Sequence[Any], gold: Mapping[str, Sequence[str]]
           ) -> tuple[dict[str, dict[str, Any]], int]:
    """Per kind: missed and false yes and up to EXAMPLES pairs; and the disagreeing pairs
    whose question has no gold answers (not sorted)."""
    from nqkit.metrics.disagreement_kinds import KINDS, disagreement_kind
    from nqkit.metrics.judge_audit import pair_key

    answers = {pair_key(q): a for q, a in gold.items()}
    out: dict[str, dict[str, Any]] = {k: {"missed_yes": 0, "false_yes": 0, "examples": []}
                                      for k in KINDS}
    no_gold = 0
    for p in compared:
        if p.human == p.judge:
            continue
        g = answers.get(pair_key(p.question))
        if g is None:
            no_gold += 1
            continue
        kind = out[disagreement_kind(p.answer, g)]
        kind["missed_yes" if p.human else "false_yes"] += 1
        if len(kind["examples"]) < EXAMPLES:
            kind["examples"].append({"question": p.question, "answer": p.answer,
                                     "gold": list(g), "human": p.human, "judge": p.judge})
    return out, no_gold


def _read_systems(paths: Sequence[str]) -> list[tuple[str, str, Any]]:
    """Each system's name (its file's stem, or its path when stems repeat), file and
    predictions."""
    from nqkit.formats.nq_open import read_predictions

    names = [Path(p).stem for p in paths]
    return [(name if names.count(name) == 1 else str(path), str(path),
             read_predictions(path).predictions) for path, name in zip(paths, names,
                                                                       strict=True)]


def _carried_gold(systems: Sequence[tuple[str, str, Any]]) -> dict[str, tuple[str, ...]]:
    """The gold answers the systems' files carry (the first file's for a question)."""
    out: dict[str, tuple[str, ...]] = {}
    for _, _, predictions in systems:
        for p in predictions:
            if p.answers is not None:
                out.setdefault(p.question, tuple(p.answers))
    return out


def _system_rows(systems: Sequence[tuple[str, str, Any]],
                 gold: Mapping[str, Sequence[str]] | None
                 ) -> list[tuple[str, list[tuple[str, tuple[str, ...], str | None]]]]:
    """Each system's name and rows (question, gold, prediction): its own gold when it
    carries one, else the gold of the audit."""
    from nqkit.metrics.judge_audit import pair_key

    answers = {pair_key(q): tuple(a) for q, a in (gold or {}).items()}
    out = []
    for name, path, predictions in systems:
        rows: list[tuple[str, tuple[str, ...], str | None]] = []
        for p in predictions:
            g = p.answers if p.answers is not None else answers.get(pair_key(p.question))
            if g is None:
                raise InputError(path, f"the prediction of {p.question!r:.60} carries no gold "
                                 "answers and the audit has none for its question",
                                 "give --gold, or systems files of {question, answer, "
                                 "prediction} lines")
            rows.append((p.question, tuple(g), p.prediction))
        out.append((name, rows))
    return out


def judge_audit(args: Mapping[str, Any]) -> int:
    import orjson

    from nqkit.formats.judgments import read_judgments
    from nqkit.formats.verdicts import read_verdicts
    from nqkit.metrics.judge_audit import audit_verdicts, judge_judgments, run_judge
    from nqkit.report import format_table, warn
    from nqkit.signature import make_signature

    if not args.get("verdicts") and not args.get("convention"):
        raise InputError(None, "no judge given", "give --verdicts FILE or --convention NAME")
    human = read_judgments(args["judgments"])
    settings: dict[str, object] = {"judgments": human.sha256[:12]}
    judge = verdict_file = None
    verdicts: list[Any] = []
    abstained = 0
    warnings: list[str] = []  # said once everything is computed: none before a refusal
    gold: dict[str, tuple[str, ...]] | None = None
    if args.get("gold"):
        gold = _read_gold(args["gold"])
    elif human.gold is not None:
        gold = human.gold
    read = _read_systems(args["systems"]) if args.get("systems") else None
    if args.get("verdicts"):
        verdict_file = read_verdicts(args["verdicts"])
        verdicts, abstained = list(verdict_file.verdicts), verdict_file.abstained
        settings["verdicts"] = verdict_file.sha256[:12]
        if gold is None and verdict_file.gold is not None:
            gold = verdict_file.gold
    if gold is None and read is not None and _carried_gold(read):
        gold = _carried_gold(read)
    if not args.get("verdicts"):
        if gold is None:
            raise InputError("--convention", "the judgments file has no gold column, no "
                             "--gold was given and no system carries gold answers",
                             "give --gold, the NQ-open file of these questions' gold "
                             "answers")
        judge = _convention_judge(args["convention"])
        run = run_judge(human.judgments, judge, gold)
        verdicts, abstained = list(run.verdicts), run.abstained
        settings["convention"] = args["convention"]
        if run.no_gold:
            warnings.append(f"{run.no_gold:,} judged pairs are of questions --gold does not "
                            "hold: no verdict of the convention for them (counted in 'only "
                            "human')")
    if gold is not None:
        settings["gold"] = _digest(sorted(gold.items()))
    systems = None if read is None else _system_rows(read, gold)
    if systems is not None:
        settings["systems"] = _digest(systems)
    settings.update(resamples=args["resamples"], seed=args["seed"])
    r = audit_verdicts(human.judgments, verdicts, resamples=args["resamples"],
                       seed=args["seed"], abstained=abstained, where=str(args["judgments"]))
    order = None
    if systems is not None:
        from nqkit.metrics.system_order import order_systems

        order = order_systems(
            systems, human.judgments, resamples=args["resamples"], seed=args["seed"],
            where=str(args["judgments"]), judge=judge, files=args["systems"],
            judge_judgments=None if judge is not None
            else judge_judgments(human.judgments, verdicts))
    kinds = None
    if gold is None:
        warnings.append("no gold answers (no --gold, and no 'Gold answers' column in the "
                        "judgments or verdicts): the disagreements are not sorted by kind")
    else:
        kinds, no_gold = _kinds(r.compared, gold)
        if no_gold:
            warnings.append(f"{no_gold:,} disagreements are on questions the gold answers do "
                            "not hold: left out of the kinds")
    for message in warnings:
        warn(message)
    signature = make_signature("judge-audit", settings)
    ai, ki = r.accuracy_interval, r.kappa_interval
    if r.only_judge:
        warn(f"{r.only_judge:,} of the judge's verdicts are of pairs the human judgments "
             "do not judge (another question or answer spelling?): left out of the "
             "agreement")
    kappa = None if math.isnan(r.kappa) else r.kappa
    if kappa is None:
        warn("Cohen's kappa is undefined here: the humans and the judge give one same "
             "verdict to every pair (no chance agreement to correct for)")
    tau = None if order is None or math.isnan(order.tau) else order.tau
    if order is not None and tau is None:
        warn("Kendall's tau is undefined here: the humans or the judge give every system "
             "one same score")
    ti = None if order is None or tau is None else order.interval
    if ti is not None and (math.isnan(ti.low) or math.isnan(ti.high)):
        ti = None
        warn("Kendall's tau is undefined on some bootstrap resamples (one side ties every "
             "system there): no interval; give more questions or systems")
    if args.get("format") == "json":
        out: dict[str, Any] = {
            "pairs": r.pairs, "accuracy": r.accuracy, "kappa": kappa,
            "accuracy_interval": None if ai is None else [ai.low, ai.high],
            "kappa_interval": None if ki is None or kappa is None else [ki.low, ki.high],
            "missed_yes": r.missed_yes, "missed_yes_rate": r.missed_yes_rate,
            "false_yes": r.false_yes, "false_yes_rate": r.false_yes_rate,
            "human_yes": r.human_yes, "human_no": r.human_no,
            "only_human": r.only_human, "only_judge": r.only_judge,
            "abstained": abstained, "disagreements": kinds}
        if order is not None:
            out["systems"] = [{"name": s.name, "human": s.human,
                               "judge": None if math.isnan(s.judge) else s.judge,
                               "human_rank": s.human_rank, "judge_rank": s.judge_rank,
                               "questions": s.human_questions,
                               "judge_questions": s.judge_questions}
                              for s in order.systems]
            out["kendall_tau"] = tau
            out["kendall_tau_interval"] = None if ti is None else [ti.low, ti.high]
        out["signature"] = signature
        print(orjson.dumps(out).decode())
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
    if kinds is not None:
        print()
        print(format_table(("disagreement kind", "missed yes", "false yes"),
                           [(k, v["missed_yes"], v["false_yes"]) for k, v in kinds.items()]))
        examples = [(k, f"{'yes' if e['human'] else 'no'}/{'yes' if e['judge'] else 'no'}",
                     _cut(e["question"]), _cut(e["answer"]), _cut(" | ".join(e["gold"])))
                    for k, v in kinds.items() for e in v["examples"]]
        if examples:
            print()
            print(format_table(("kind", "human/judge", "question", "answer", "gold"),
                               examples, right=()))
    if order is not None:
        print()
        print(format_table(("system", "human", "judge", "human rank", "judge rank"),
                           [(s.name, s.human, s.judge, s.human_rank, s.judge_rank)
                            for s in order.systems]))
        print(f"Kendall's tau-b between the two orders: {_fmt(tau)}"
              + ("" if ti is None else f" [{ti.low:.4f}, {ti.high:.4f}]")
              + f" ({len(order.systems)} systems, {order.questions:,} questions)")
    print(signature)
    return 0


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _CELL else text[:_CELL - 3] + "..."
