"""Benchmark: scoring NQ-open generations under every exact-match convention at once
against scoring them under one (issue 31: within 2x).

The input is built from the real samples, never committed: for each of the 3,610 NQ-open
dev questions one raw generation of the shapes an LLM prints (a gold answer or the released
FiD answer, with a trailing explanation, a second line, "The answer is ...", quotes,
articles, case), chosen by a seeded generator, written as ``{question, prediction}`` lines
to a temporary folder.

Side by side in one run, each repeated and interleaved: 1 in CPU seconds of this process
(median), 2 in wall-clock seconds (the fastest of the repeats: what a busy neighbour on
the machine adds is noise, never a saving):

1. in-process, the scoring only (files already read): ``score_nq_open`` under one
   convention (``orqa``; then ``lm-eval-v4``, the slowest single rule) against
   ``nq_open_result(..., explain=True)`` after it (every convention, ceilings and gap
   causes), the normalization cache cleared before every run;
2. whole commands, each a fresh ``python -m nqkit`` process: ``eval nq-open`` against
   ``eval nq-open --explain``, and ``--published`` (every convention x extraction).

    python benchmarks/bench_conventions.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NQKIT_SHARED", ROOT.parent / "shared"))


def build_generations(out: Path) -> tuple[Path, Path]:
    gold = SHARED / "data" / "nq-open" / "NQ-open.dev.jsonl"
    released = {}
    for line in (SHARED / "data" / "openqa-eval" / "model_outputs" /
                 "NQ_FiD.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        p = row["prediction"]
        released[row["question"]] = ", ".join(p) if isinstance(p, list) else p
    rng = random.Random(2026)
    lines = []
    for line in gold.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        a = rng.choice(row["answer"])
        said = released.get(row["question"], a)
        shape = rng.choice([
            said, f" {said}.\nQuestion: what else?", f"The answer is {said}.",
            f"{a}, because the passage says so.", f'"{said}"', f"the {a.lower()}",
            f"{said}\nExplanation: it is {a}.", a.upper(), f"Sure! {said}"])
        lines.append(json.dumps({"question": row["question"], "prediction": shape}))
    preds = out / "generations.jsonl"
    preds.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return gold, preds


def in_process(gold: Path, preds: Path, repeat: int) -> dict[str, float]:
    sys.path.insert(0, str(ROOT / "src"))
    from nqkit.conventions.base import _normalized
    from nqkit.formats.nq_open import read_nq_open, read_predictions
    from nqkit.metrics.nq_open import score_nq_open
    from nqkit.tasks.nq_open import nq_open_result
    from nqkit.text.normalize import normalize_answer

    references = list(read_nq_open(gold))
    predictions = list(read_predictions(preds).predictions)
    out: dict[str, list[float]] = {"orqa": [], "lm-eval-v4": [], "every (explain)": []}
    for _ in range(repeat):
        for name in ("orqa", "lm-eval-v4"):
            _normalized.cache_clear()
            normalize_answer.cache_clear()
            t = time.process_time()
            r = score_nq_open(references, predictions, convention=name)
            nq_open_result(r)
            out[name].append(time.process_time() - t)
        _normalized.cache_clear()
        normalize_answer.cache_clear()
        t = time.process_time()
        r = score_nq_open(references, predictions)
        nq_open_result(r, explain=True)
        out["every (explain)"].append(time.process_time() - t)
    return {k: statistics.median(v) for k, v in out.items()}


def commands(gold: Path, preds: Path, repeat: int) -> dict[str, float]:
    base = [sys.executable, "-m", "nqkit", "eval", "nq-open", "--gold", str(gold),
            "--predictions", str(preds), "--format", "json"]
    runs = {"eval (orqa)": base, "eval --explain": [*base, "--explain"],
            "eval --published 40.0": [*base, "--published", "40.0"]}
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(base, check=True, capture_output=True, env=env)  # bytecode compiled
    out: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeat):
        for name, argv in runs.items():
            t = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True, env=env)
            out[name].append(time.perf_counter() - t)
    return {k: min(v) for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from nqkit.conventions import convention_names

    with tempfile.TemporaryDirectory() as tmp:
        gold, preds = build_generations(Path(tmp))
        print(f"3,610 generations, {len(convention_names(published=True))} conventions "
              f"({', '.join(convention_names(published=True))}), median of {args.repeat}")
        inner = in_process(gold, preds, args.repeat)
        print("\nscoring only (in process)")
        for name, secs in inner.items():
            print(f"  {name:<22} {secs:7.3f} s CPU  {secs / inner['orqa']:5.2f}x orqa")
        outer = commands(gold, preds, args.repeat)
        print("\nwhole commands (fresh processes, fastest run)")
        for name, secs in outer.items():
            print(f"  {name:<22} {secs:7.3f} s  {secs / outer['eval (orqa)']:5.2f}x")


if __name__ == "__main__":
    main()
