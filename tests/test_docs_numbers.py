"""Numbers and signatures shown in README.md, BENCHMARKS.md and docs/ agree with their
source: a signature with what the current code prints, a recall with the hit counts it
is made of, a timing with the measurement recorded in BENCHMARKS.md (issue 30: the docs
had drifted on all three)."""

from __future__ import annotations

import contextlib
import io
import re
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from nqkit.cli import main

from conftest import ROOT, SHARED

DOCS = [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]
SIGNATURE = re.compile(r"(?<![\w/.-])([a-z][a-z-]*(?:\|[^|\s`\"'\\]+)+\|v\d+\.\d+\.\d+)")


def _keys(signature: str) -> list[str]:
    """The setting names of a signature, in order (its name first; no version, no
    warnings, which depend on the data); a bare ``...`` (an elision) stays."""
    name, *parts, _version = signature.split("|")
    return [name, *(p.split(":", 1)[0] for p in parts if not p.startswith("warn:"))]


def _documented() -> list[tuple[str, str]]:
    return [(f"{doc.relative_to(ROOT)}", m.group(1)) for doc in DOCS
            for m in SIGNATURE.finditer(doc.read_text(encoding="utf-8"))]


def _recorded() -> set[str]:
    """Every signature the snapshots of tests/test_outputs_unchanged.py hold: what the
    current code prints (that test keeps them equal)."""
    text = (ROOT / "tests" / "snapshots" / "outputs.json").read_text(encoding="utf-8")
    return set(SIGNATURE.findall(text))


def _stub_index(retriever: str, settings: dict[str, Any]) -> Any:
    from nqkit.retrieval.open_index import OpenIndex

    params = {"retriever": retriever, "corpus": {"fingerprint": "0" * 64, "passages": 1},
              "settings": settings, "versions": {"bm25s": "x"}}
    return OpenIndex(Path("."), params, (), None, "0" * 64)  # type: ignore[arg-type]


def _built(recorded: set[str]) -> set[str]:
    """Signatures the snapshots cannot hold, built by the code that makes them: dense and
    hybrid runs (not recorded: their scores depend on the CPU's BLAS kernel) from stub
    indexes, behind the answer-recall part of a recorded run; NQ-open predictions read
    from a harness's file (tests/test_harness_files.py writes those files), also with
    judgments (tests/test_adjudicated.py); ``explain bm25`` from stub indexes."""
    from nqkit.metrics.nq_open import nq_open_signature
    from nqkit.retrieval.bm25_explain import explanation_signature
    from nqkit.retrieval.open_run import run_signature_settings
    from nqkit.signature import make_signature

    bm25 = _stub_index("bm25", {"k1": 0.9, "b": 0.4, "method": "lucene", "stopwords": "en",
                                "stemmer": "english", "fields": "title+text"})
    dense = _stub_index("dense", {"model_name": "m", "model_fingerprint": "model-0",
                                  "doc_text": "title+text", "ann": "exact", "device": "cpu"})
    run = next(s for s in recorded if s.startswith("retrieval|") and "|corpus:" in s)
    head = run[:run.index("|corpus:")].split("|")
    answer = {p.split(":", 1)[0]: p.split(":", 1)[1] for p in head[1:]}
    out = set()
    for indexes, fusion in (([dense], None), ([bm25, dense], "norm"), ([bm25, dense], "rrf")):
        out.add(make_signature("retrieval", {**answer, **run_signature_settings(
            indexes, fusion, 1.0, 1000)}))
    exact = _stub_index("bm25", {"k1": 0.9, "b": 0.4, "method": "lucene-exact",
                                 "stopwords": "lucene", "stemmer": "porter",
                                 "fields": "title+text"})
    out.add(explanation_signature(bm25, exact, 100, ["q"], []))  # nqkit explain bm25
    out.add(nq_open_signature(answer_field="answer", regex=False, missing="error",
                              convention="lm-eval-v4", split="nq-open/dev",
                              predictions_format="lm-eval-samples"))
    out.add(nq_open_signature(answer_field="answer", regex=False, missing="error",
                              predictions_format="oqaeval", adjudicated="a77f48c923f5"))
    return out


def _multi_compare() -> str:
    """The signature of ``nqkit compare`` over more than two systems (not recorded), from
    a quick run of that command."""
    g = SHARED / "golden" / "nq-open"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        assert main(["compare", "nq-open", "--gold",
                     str(SHARED / "data" / "nq-open" / "NQ-open.dev.jsonl"),
                     *(str(g / f"{n}.predictions.jsonl") for n in ("mixed", "shuffled", "empty")),
                     "--allow-missing", "--resamples", "50", "--trials", "50"]) == 0
    (sig,) = re.findall(r"^signature: (\S+)$", buf.getvalue(), re.M)
    return sig


def _matches(documented: list[str], produced: list[str]) -> bool:
    """``produced`` has the documented keys in their order; a bare ``...`` stands for any
    run of keys."""
    pattern = "\x1f".join(".*?" if k == "..." else re.escape(k) for k in documented)
    return re.fullmatch(pattern, "\x1f".join(produced)) is not None


def test_the_signature_finder_finds_them():
    found = _documented()
    assert any(doc == "docs/data.md" and s.startswith("nq-open|") for doc, s in found)
    assert sum(s.startswith("retrieval|") for _, s in found) >= 6
    assert _keys("nq|long-thr:2|warn:few-items|v0.1.0") == ["nq", "long-thr"]
    assert _matches(["a", "b", "...", "e"], ["a", "b", "c", "d", "e"])
    assert not _matches(["a", "c"], ["a", "b", "c"])


def test_every_documented_signature_has_the_settings_the_code_prints():
    """A signature in the docs names the settings, in order, of one the current code
    prints. docs/data.md once showed ``nq-open|answer-field:...`` without the ``split:``
    the command prints, and docs/retrieval.md its runs without their ``index:`` digest."""
    if not SHARED.exists():
        pytest.skip("needs ../shared")
    recorded = _recorded()
    produced = [_keys(s) for s in recorded | _built(recorded) | {_multi_compare()}]
    stale = [(doc, sig) for doc, sig in _documented()
             if not any(_matches(_keys(sig), keys) for keys in produced)]
    assert not stale, "signatures the code no longer prints:\n" + "\n".join(
        f"{doc}: {sig}" for doc, sig in stale)


# ------------------------------------------------------------------ docs/retrieval.md

def _table_rows(text: str, header: str) -> list[list[str]]:
    rows = []
    for line in text[text.index(header):].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def _percent(n: int, total: int) -> str:
    """n / total in percent with one decimal, rounded once from the exact fraction."""
    exact = Fraction(100 * n, total)
    return str((Decimal(exact.numerator) / Decimal(exact.denominator)).quantize(
        Decimal("0.1"), rounding=ROUND_HALF_UP))


def test_retrieval_recalls_agree_with_their_hit_counts():
    """docs/retrieval.md gives the same runs twice: answer recall at 1/5/20/100 in the
    first table, and in the qrels table the answer-recall hits (questions) behind each.
    Both must be those counts over the 3,610 questions, rounded once. The dense top-20
    was 79.0 in one and 78.9 in the other: 2,850 / 3,610 = 78.947 %, and 79.0 came from
    rounding the command's 0.7895 a second time."""
    text = (ROOT / "docs" / "retrieval.md").read_text(encoding="utf-8")
    first = _table_rows(text, "| retriever | top-1 |")
    qrels = _table_rows(text, "| retriever | k | answer recall |")
    questions = 3610
    assert "the 3,610 NQ-open dev questions" in " ".join(text.split())
    by_run: dict[str, dict[str, tuple[str, int]]] = {}
    run = ""
    for row in qrels:
        run = row[0] or run
        by_run.setdefault(run, {})[row[1]] = (row[2], int(row[7].replace(",", "")))
    # the two tables name the runs a little differently: match on the leading words
    names = {"BM25 (k1": "BM25 (bm25s", "BM25 `lucene-exact`": "BM25 `lucene-exact`",
             "dense (all-MiniLM-L6-v2, exact)": "dense (all-MiniLM-L6-v2, exact)"}
    checked = 0
    for row in first:
        key = next((k for k in names if row[0].startswith(k)), None)
        if key is None:
            continue  # hybrid runs: no qrels table to check them against
        (run,) = [r for r in by_run if r.startswith(names[key])]
        for k, value in zip(("1", "5", "20", "100"), row[1:5], strict=True):
            recall, hits = by_run[run][k]
            assert value == recall == _percent(hits, questions), (row[0], k, value, recall,
                                                                  hits)
            checked += 1
    assert checked == 12


# ------------------------------------------------------------------ timings

def _benchmark_seconds() -> dict[str, float]:
    """The dense timings BENCHMARKS.md records: its table of dense runs over the 3,349
    real passages (command -> seconds) and the dense row of its ReQA table."""
    text = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    out = {row[0].strip("`"): float(row[1])
           for row in _table_rows(text, "| dense run, 3,349 real passages |")}
    (reqa,) = [row for row in _table_rows(text, "| step | seconds | note |")
               if row[0].startswith("dense end to end (all-MiniLM-L6-v2")]
    out["nqkit reqa run --retriever dense"] = float(reqa[1])
    return out


def _said(clause: str, seconds: float) -> bool:
    """``clause`` gives ``seconds`` rounded, and any minutes it gives are those seconds."""
    minutes = re.findall(r"(?:about|~) ?(\d+(?:\.\d+)?) min", clause)
    return f"{seconds:.0f} s" in clause and all(abs(float(m) - seconds / 60) <= 0.5
                                                 for m in minutes)


def test_dense_timings_in_the_docs_are_the_measured_ones():
    """A dense run's duration in the docs is the one BENCHMARKS.md records for it (in
    seconds, and minutes that agree). The docs said "~6 min" for `reqa run --retriever
    dense` (BENCHMARKS.md: 206 s) and "about 10 minutes" for the dense index of the
    3,349 real passages (170 s; the dense retrieval over them, 87 s, was not said)."""
    measured = _benchmark_seconds()
    assert set(measured) == {"nqkit index build --retriever dense",
                             "nqkit retrieve --index dense", "nqkit reqa run --retriever dense"}
    reqa = (ROOT / "docs" / "reqa.md").read_text(encoding="utf-8")
    (clause,) = re.findall(r"--retriever dense +# ([^\n]*)", reqa)
    assert _said(clause, measured["nqkit reqa run --retriever dense"]), clause
    retrieval = " ".join((ROOT / "docs" / "retrieval.md").read_text(encoding="utf-8").split())
    (clause,) = re.findall(r"To reproduce \(([^()]*?dense index[^()]*)\):", retrieval)
    index, search = clause.split(", and ")
    assert "dense index" in index and _said(index, measured[
        "nqkit index build --retriever dense"]), index
    assert "dense retrieval" in search and _said(search, measured[
        "nqkit retrieve --index dense"]), search
    assert not _said("about 10 min, 600 s", 170) and not _said("~6 min", 206)
