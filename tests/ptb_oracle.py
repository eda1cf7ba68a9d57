"""Stanford CoreNLP 3.4.1's PTBTokenizer (the jar pycocoevalcap ships) as a test oracle.

Runs the jar exactly as the AmbigQA evaluation does through pycocoevalcap's wrapper
(``java -cp stanford-corenlp-3.4.1.jar edu.stanford.nlp.process.PTBTokenizer
-preserveLines -lowerCase FILE``, one string per line), in ONE JVM for any number of
strings. Test and benchmark helper only: nqkit itself never runs Java.

Line handling: ``-preserveLines`` prints one output line per input line, where the lexer
breaks lines at ``\\n``, ``\\r``, U+000B, U+000C, U+0085, U+2028 and U+2029. The wrapper
replaces only ``\\n`` by a space, so a string holding one of the others would shift every
later line of the official run; :func:`java_tokenize` replaces all of them by a space (what
nqkit's tokenizer treats them as) and checks that the line count is preserved.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

_SEPARATOR = "x"
LINE_BREAKS = "\n\r\x0b\x0c\x85\u2028\u2029"
_TO_SPACE = str.maketrans({c: " " for c in LINE_BREAKS})


def find_jar() -> Path | None:
    """The CoreNLP 3.4.1 jar inside the installed pycocoevalcap, or None."""
    spec = importlib.util.find_spec("pycocoevalcap")
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        jar = Path(loc) / "tokenizer" / "stanford-corenlp-3.4.1.jar"
        if jar.exists():
            return jar
    return None


def find_java() -> str | None:
    return shutil.which("java")


def java_tokenize(strings: Sequence[str], jar: Path | None = None,
                  java: str | None = None) -> list[list[str]]:
    """Tokens of each string as the jar prints them (``-preserveLines -lowerCase``)."""
    jar = jar or find_jar()
    java = java or find_java()
    if jar is None or java is None:
        raise RuntimeError("the oracle needs java and pycocoevalcap's CoreNLP jar")
    # Strings are separated by a line "x": what follows a string is then always a line
    # break and a lower-case letter (what nqkit's tokenizer assumes), whatever the next
    # string. Only an abbreviation ending a string notices: before a blank line, an
    # upper-case letter or a sentence-starting word ("What") the jar also makes its period
    # a token of its own, which punctuation removal drops.
    lines = []
    for s in strings:
        lines += [s.translate(_TO_SPACE), _SEPARATOR]
    lines.append("end")  # a last line the jar always prints
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "strings.txt"
        path.write_bytes("\n".join(lines).encode("utf-8"))
        env = {**os.environ, "LC_ALL": "C.UTF-8"}
        out = subprocess.run(
            [java, "-Dfile.encoding=UTF-8", "-cp", str(jar),
             "edu.stanford.nlp.process.PTBTokenizer", "-preserveLines", "-lowerCase",
             "-encoding", "utf-8", str(path)],
            capture_output=True, check=True, env=env, timeout=600).stdout  # a hung JVM fails
    got = out.decode("utf-8").split("\n")
    if got[-1] == "":  # the newline after the last line
        got.pop()
    if len(got) != len(lines) or got[-1] != "end":
        raise RuntimeError(f"the jar printed {len(got)} lines for {len(lines)} strings")
    if any(line != _SEPARATOR for line in got[1:-1:2]):
        raise RuntimeError("the jar's output lines are not aligned with the strings")
    return [line.split(" ") if line else [] for line in got[:-1:2]]
