"""Benchmark: AmbigQA scoring of the golden prediction files on AmbigNQ dev.

Side by side, in one run, for each of the 4 prediction files of ``golden/ambigqa``:

* ``nqkit``: ``score_ambigqa`` as shipped (pure-Python PTB tokenizer, each distinct
  question string tokenized once);
* ``per-question``: the same scorer with the tokenizer called afresh for every question
  occurrence (no cache), the way a naive per-question tokenizer would run;
* ``whitespace``: SQuAD normalization only, no PTB splitting (faster, but not the
  official numbers; shown for scale).

* ``java CoreNLP``: the official design, when ``java`` and pycocoevalcap (which ships
  the CoreNLP 3.4.1 jar) are installed: all question strings written to a temporary
  file, one JVM running ``PTBTokenizer -preserveLines -lowerCase`` over it (as
  pycocoevalcap's wrapper does), output lines read back, punctuation tokens removed,
  then the same scoring.

Run: ``python benchmarks/bench_ambigqa.py`` (from the repository root; data from
``../shared`` or ``NQKIT_SHARED``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from nqkit.formats.ambignq import read_ambignq, read_ambigqa_predictions  # noqa: E402
from nqkit.metrics.ambigqa import score_ambigqa  # noqa: E402
from nqkit.text.normalize import normalize_answer  # noqa: E402
from nqkit.text.ptb import PTB_PUNCTUATION, eval_question  # noqa: E402


def all_questions(refs, preds) -> list[str]:
    """Every string the official script sends to the tokenizer, in its order."""
    out = []
    for ex in refs:
        out.append(ex.question)
        for ann in ex.annotations:
            for pair in getattr(ann, "qa_pairs", ()):
                out.extend(pair.phrasings)
    for ex in refs:
        out.extend(preds[ex.id].questions or ())
    return [q.replace("\n", " ") for q in out]


def find_jar() -> Path | None:
    spec = importlib.util.find_spec("pycocoevalcap")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        jar = Path(loc) / "tokenizer" / "stanford-corenlp-3.4.1.jar"
        if jar.exists():
            return jar
    return None


def java_corenlp_score(java: str, jar: Path, refs, preds) -> None:
    questions = all_questions(refs, preds)
    with tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False) as f:
        f.write("\n".join(questions).encode("utf-8"))
        path = f.name
    try:
        proc = subprocess.run([java, "-cp", str(jar), "edu.stanford.nlp.process.PTBTokenizer",
                               "-preserveLines", "-lowerCase", path], capture_output=True,
                              check=True)
    finally:
        os.unlink(path)
    lines = proc.stdout.decode("utf-8").split("\n")
    table = {}
    for q, line in zip(questions, lines, strict=False):
        words = [w for w in line.rstrip().split(" ") if w not in PTB_PUNCTUATION]
        table[q] = normalize_answer(" ".join(words))
    score_ambigqa(refs, preds, question_normalizer=lambda q: table[q])


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
    java = shutil.which("java")
    jar = find_jar() if java else None
    header = f"{'predictions':<22}{'nqkit':>8}{'per-question':>14}{'ratio':>8}" \
             f"{'whitespace':>12}" + (f"{'java CoreNLP':>14}{'ratio':>8}" if jar else "")
    print(header)
    print("-" * len(header))
    for name in NAMES:
        preds = read_ambigqa_predictions(SHARED / "golden" / "ambigqa"
                                         / f"{name}.predictions.json")
        fast = best_of(lambda p=preds: score_ambigqa(refs, p))
        naive = best_of(lambda p=preds: score_ambigqa(refs, p, question_normalizer=eval_question))
        plain = best_of(lambda p=preds: score_ambigqa(refs, p, tokenizer="whitespace"))
        line = f"{name:<22}{fast:>8.3f}{naive:>14.3f}{naive / fast:>7.1f}x{plain:>12.3f}"
        if jar and java and preds and next(iter(preds.values())).questions is not None:
            jt = best_of(lambda p=preds: java_corenlp_score(java, jar, refs, p))
            line += f"{jt:>14.3f}{jt / fast:>7.1f}x"
        elif jar:
            line += f"{'  (no questions)':>16}"
        print(line)
    if not jar:
        print("\njava or pycocoevalcap's CoreNLP jar not found: the official Java "
              "tokenization was not timed.")


if __name__ == "__main__":
    main()
