"""Benchmark: AmbigQA scoring of the golden prediction files on AmbigNQ dev.

Side by side, in one run, for each of the 4 prediction files of ``golden/ambigqa``:

* ``nqkit``: ``score_ambigqa`` as shipped (pure-Python PTB tokenizer, each distinct
  question string tokenized once);
* ``per-question``: the same scorer with the tokenizer called afresh for every question
  occurrence (no cache), the way a naive per-question tokenizer would run;
* ``whitespace``: SQuAD normalization only, no PTB splitting (faster, but not the
  official numbers; shown for scale).

The official script tokenizes with Stanford CoreNLP 3.4.1 in one Java subprocess. The
CoreNLP jar is not available offline here, so that run cannot be timed; when ``java`` is
on the PATH the script times a bare JVM start (``java -version``), a lower bound on what
the official subprocess costs before it tokenizes anything.

Run: ``python benchmarks/bench_ambigqa.py`` (from the repository root; data from
``../shared`` or ``NQKIT_SHARED``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from nqkit.formats.ambignq import read_ambignq, read_ambigqa_predictions  # noqa: E402
from nqkit.metrics.ambigqa import score_ambigqa  # noqa: E402
from nqkit.text.ptb import eval_question  # noqa: E402

SHARED = Path(os.environ.get("NQKIT_SHARED", ROOT.parent / "shared"))
NAMES = ["answers_first_alias", "answers_noisy", "qa_edited", "qa_prompt_copy"]
REPEATS = 3


def best_of(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    refs = list(read_ambignq(SHARED / "data" / "ambignq" / "dev_light.json"))
    print(f"AmbigNQ dev: {len(refs):,} questions; best of {REPEATS} runs, seconds "
          "(reading files excluded)")
    header = f"{'predictions':<22}{'nqkit':>8}{'per-question':>14}{'ratio':>8}" \
             f"{'whitespace':>12}"
    print(header)
    print("-" * len(header))
    for name in NAMES:
        preds = read_ambigqa_predictions(SHARED / "golden" / "ambigqa"
                                         / f"{name}.predictions.json")
        fast = best_of(lambda p=preds: score_ambigqa(refs, p))
        naive = best_of(lambda p=preds: score_ambigqa(refs, p, question_normalizer=eval_question))
        plain = best_of(lambda p=preds: score_ambigqa(refs, p, tokenizer="whitespace"))
        print(f"{name:<22}{fast:>8.3f}{naive:>14.3f}{naive / fast:>7.1f}x{plain:>12.3f}")
    java = shutil.which("java")
    if java:
        t = best_of(lambda: subprocess.run([java, "-version"], capture_output=True, check=False))
        print(f"\nJVM start alone (java -version, no CoreNLP loaded): {t:.3f} s; the CoreNLP "
              "3.4.1 jar is not available offline here, so the official Java tokenization "
              "itself was not timed.")
    else:
        print("\njava not found: the official Java tokenization was not timed.")


if __name__ == "__main__":
    main()
