"""Pyserini's own analyzer (Anserini 1.7.1, Lucene 9.9.1) as a test oracle.

Runs what ``pyserini.analysis.Analyzer(get_lucene_analyzer()).analyze`` runs -- Anserini's
``DefaultEnglishAnalyzer.newStemmingInstance("porter")``, the analyzer Pyserini indexes
DPR's passages with, through ``AnalyzerUtils.analyze`` -- in ONE child JVM for any number
of strings (``AnseriniAnalyze.java`` beside this file, against the jar Pyserini ships), so
a test or a benchmark pays the JVM start once and no JNI call per string. Test and
benchmark helper only: nqkit itself never runs Java.

Strings go in as JSON lines on a file, term lists come back as JSON lines (non-ASCII
escaped); ``java`` is that of a Java 21+ runtime (:func:`find_java_home`).

``via="pyjnius"`` runs instead this file as a script in a child Python, calling
``Analyzer.analyze`` once per string through pyjnius, as a Python user of Pyserini does
(the benchmark's figure for Pyserini from Python); ``OPENAI_API_KEY`` is set to a dummy
there (pyserini 1.6.0 builds an OpenAI client on some imports). Both give the same terms
(measured: the 160,207 strings of the analyzer tests).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from lucene_bm25_oracle import MIN_JAVA, find_java_home
from lucene_bm25_oracle import java_major as _java_major
from lucene_fields_oracle import anserini_jar

PROGRAM = Path(__file__).resolve().parent / "AnseriniAnalyze.java"

__all__ = ["_java_major", "find_java_home", "has_pyserini", "oracle_analyze"]


def has_pyserini() -> bool:
    """Pyserini (for its jar) is installed."""
    return importlib.util.find_spec("pyserini") is not None


def oracle_analyze(strings: Sequence[str], java_home: Path | None = None,
                   timing: dict[str, float] | None = None, via: str = "java"
                   ) -> list[list[str]]:
    """Tokens of each string as Pyserini's default English analyzer gives them.

    ``timing`` (when given) receives ``jvm_start`` and ``analyze`` seconds measured inside
    the child (until the analyzer is ready; the analysis), so a benchmark can leave the
    JVM's start out of a throughput figure; ``via``: see the module's docstring.
    """
    java_home = java_home or find_java_home()
    if java_home is None:
        raise RuntimeError(f"the Lucene oracle needs a Java {MIN_JAVA}+ runtime")
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.jsonl", Path(tmp) / "out.jsonl"
        with src.open("w", encoding="utf-8") as f:
            for s in strings:
                f.write(json.dumps(s) + "\n")
        if via == "java":
            cmd, env = [str(java_home / "bin" / "java"), "-cp", str(anserini_jar()),
                        str(PROGRAM)], None
        elif via == "pyjnius":
            cmd = [sys.executable, __file__]
            env = {**os.environ, "JAVA_HOME": str(java_home),
                   "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY") or "dummy"}
        else:
            raise ValueError(f"via: 'java' or 'pyjnius', not {via!r}")
        subprocess.run([*cmd, str(src), str(dst)], env=env, check=True, timeout=1800)
        lines = dst.read_text(encoding="utf-8").split("\n")
    meta = json.loads(lines[0])
    if timing is not None:
        timing.update(meta)
    out = [json.loads(line) for line in lines[1:] if line]
    if len(out) != len(strings):
        raise RuntimeError(f"the oracle returned {len(out)} results for {len(strings)} strings")
    return out


def _child(src: str, dst: str) -> None:  # pragma: no cover - runs in the child process
    t0 = time.perf_counter()
    from pyserini.analysis import Analyzer, get_lucene_analyzer

    analyzer = Analyzer(get_lucene_analyzer())
    analyzer.analyze("warm up")
    t1 = time.perf_counter()
    with open(src, encoding="utf-8") as f:
        strings = [json.loads(line) for line in f]
    results = [analyzer.analyze(s) for s in strings]
    t2 = time.perf_counter()
    with open(dst, "w", encoding="utf-8") as f:
        f.write(json.dumps({"jvm_start": t1 - t0, "analyze": t2 - t1}) + "\n")
        for toks in results:
            f.write(json.dumps(toks) + "\n")


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
