"""Benchmark: AmbigQA scoring of the golden prediction files on AmbigNQ dev.

Side by side, in one run, for each of the 4 prediction files of ``golden/ambigqa``:

* ``nqkit``: ``score_ambigqa`` as shipped (pure-Python PTB tokenizer, each distinct
  question string tokenized once);
* ``per-question``: the same scorer with the tokenizer called afresh for every question
  occurrence (no cache), the way a naive per-question tokenizer would run;
* ``whitespace``: SQuAD normalization only, no PTB splitting (faster, but not the
  official numbers; shown for scale).

The official script tokenizes with Stanford CoreNLP 3.4.1 in one Java subprocess (all
questions written to a temporary file, one JVM, output lines read back). The CoreNLP jar
is not available offline here, so that run cannot be timed. When ``java`` is on the PATH,
the ``java stand-in`` column times the same architecture with a stand-in: a tiny Java
program (written here, lower-casing and splitting on whitespace — *not* PTB, so its
numbers are not the official ones) run as one subprocess over all questions, followed by
the same scoring. It is a lower bound on the cost of the official design; CoreNLP's own
start-up (loading its jar) comes on top.

Run: ``python benchmarks/bench_ambigqa.py`` (from the repository root; data from
``../shared`` or ``NQKIT_SHARED``).
"""

from __future__ import annotations

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

JAVA_STAND_IN = """
import java.io.*;
import java.nio.charset.StandardCharsets;
public class StandIn {
  public static void main(String[] args) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(
        new FileInputStream(args[0]), StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, "UTF-8");
    String line;
    while ((line = in.readLine()) != null) {
      out.println(String.join(" ", line.trim().toLowerCase().split("\\\\s+")));
    }
    out.flush();
  }
}
"""


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


def java_stand_in_score(java: str, class_dir: str, refs, preds) -> None:
    questions = all_questions(refs, preds)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as f:
        f.write("\n".join(questions))
        path = f.name
    try:
        proc = subprocess.run([java, "-cp", class_dir, "StandIn", path], capture_output=True,
                              check=True)
    finally:
        os.unlink(path)
    lines = proc.stdout.decode("utf-8").split("\n")
    table = {}
    for q, line in zip(questions, lines, strict=False):
        words = [w for w in line.split(" ") if w not in PTB_PUNCTUATION]
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
    javac = shutil.which("javac")
    class_dir = None
    if java and javac:
        class_dir = tempfile.mkdtemp(prefix="nqkit-bench-")
        src = Path(class_dir) / "StandIn.java"
        src.write_text(JAVA_STAND_IN)
        subprocess.run([javac, "-d", class_dir, str(src)], check=True)
    header = f"{'predictions':<22}{'nqkit':>8}{'per-question':>14}{'ratio':>8}" \
             f"{'whitespace':>12}" + (f"{'java stand-in':>15}{'ratio':>8}" if class_dir else "")
    print(header)
    print("-" * len(header))
    for name in NAMES:
        preds = read_ambigqa_predictions(SHARED / "golden" / "ambigqa"
                                         / f"{name}.predictions.json")
        fast = best_of(lambda p=preds: score_ambigqa(refs, p))
        naive = best_of(lambda p=preds: score_ambigqa(refs, p, question_normalizer=eval_question))
        plain = best_of(lambda p=preds: score_ambigqa(refs, p, tokenizer="whitespace"))
        line = f"{name:<22}{fast:>8.3f}{naive:>14.3f}{naive / fast:>7.1f}x{plain:>12.3f}"
        if class_dir and java and preds and next(iter(preds.values())).questions is not None:
            jt = best_of(lambda p=preds: java_stand_in_score(java, class_dir, refs, p))
            line += f"{jt:>15.3f}{jt / fast:>7.1f}x"
        elif class_dir:
            line += f"{'(no questions)':>15}"
        print(line)
    if class_dir:
        shutil.rmtree(class_dir, ignore_errors=True)
    if java:
        t = best_of(lambda: subprocess.run([java, "-version"], capture_output=True, check=False))
        print(f"\nJVM start alone (java -version, no CoreNLP loaded): {t:.3f} s; the CoreNLP "
              "3.4.1 jar is not available offline here, so the official Java tokenization "
              "itself was not timed.")
    else:
        print("\njava not found: the official Java tokenization was not timed.")


if __name__ == "__main__":
    main()
