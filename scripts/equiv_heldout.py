"""Agreement of the ``equiv`` convention with the human judges, by half of the questions.

The rules of :mod:`nqkit.conventions.equiv` were written by reading the disagreements of
the development half of the judged questions only
(:func:`nqkit.metrics.judge_audit.judged_half`: the parity of the first byte of the
SHA-256 of the question's join key, fixed before any judgment was read); the held-out
half measures them. This prints, for each half and for all the questions, each rule's
agreement with ``NQ301_human.tsv`` as ``nqkit judge audit --convention NAME`` computes it
(the same verdicts, :func:`nqkit.analysis.judge_audit.convention_verdicts`; the same
kappa and seeded bootstrap intervals, :func:`nqkit.metrics.judge_audit.audit_verdicts`),
so the table of docs/nq-open-ambigqa.md is reproduced by:

    python scripts/equiv_heldout.py [--format markdown]

(data from ``../shared`` or ``NQKIT_SHARED``; gold answers from the released DPR answers
file, which carries every judged question's gold list, as in the docs' other audits).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from nqkit.analysis.judge_audit import convention_verdicts  # noqa: E402
from nqkit.formats.judgments import read_judgments  # noqa: E402
from nqkit.metrics.judge_audit import (  # noqa: E402
    AuditResult,
    audit_verdicts,
    judged_half,
    pair_key,
)
from nqkit.report import format_table  # noqa: E402
from nqkit.signature import make_signature  # noqa: E402

SHARED = Path(os.environ.get("NQKIT_SHARED", ROOT.parent / "shared")).resolve()
DATA = SHARED / "data" / "openqa-eval"
HALVES = ("dev", "held-out", "all")
RULES = ("equiv", "containment", "orqa")


def audits(judgments: Path, gold: Path, *, resamples: int = 1000, seed: int = 0
           ) -> dict[tuple[str, str], tuple[int, AuditResult]]:
    """``(half, rule) -> (questions, audit)`` for every half of :data:`HALVES` and rule
    of :data:`RULES`."""
    human = read_judgments(judgments).judgments
    out = {}
    for half in HALVES:
        chosen = [j for j in human if half == "all" or judged_half(j.question) == half]
        questions = len({pair_key(j.question) for j in chosen})
        for rule in RULES:
            verdicts, _ = convention_verdicts(rule, chosen, str(gold))
            out[half, rule] = (questions, audit_verdicts(chosen, verdicts,
                                                         resamples=resamples, seed=seed))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--judgments", type=Path, default=DATA / "NQ301_human.tsv")
    ap.add_argument("--gold", type=Path, default=DATA / "model_outputs" / "NQ_DPR.jsonl")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--format", choices=("table", "markdown"), default="table")
    args = ap.parse_args()
    results = audits(args.judgments, args.gold, resamples=args.resamples, seed=args.seed)
    header = ("half", "questions", "rule", "pairs", "kappa [95%]", "agreement",
              "false yes", "missed yes")
    rows = []
    for (half, rule), (questions, r) in results.items():
        ki = r.kappa_interval
        kappa = f"{r.kappa:.4f}" + ("" if ki is None else f" [{ki.low:.4f}, {ki.high:.4f}]")
        rows.append((half, str(questions), rule, str(r.pairs), kappa, f"{r.accuracy:.4f}",
                     str(r.false_yes), str(r.missed_yes)))
    if args.format == "markdown":
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for row in rows:
            print("| " + " | ".join(f"`{c}`" if c in RULES else c for c in row) + " |")
    else:
        print(format_table(header, rows))
    print(make_signature("equiv-heldout", {
        "judgments": read_judgments(args.judgments).sha256[:12], "gold": args.gold.name,
        "split": "sha256-key-parity", "resamples": args.resamples, "seed": args.seed}))


if __name__ == "__main__":
    main()
