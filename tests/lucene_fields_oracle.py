"""Anserini's multifield (and flat) BM25 as a test oracle, in child JVMs (no pyjnius).

Test helper only: nqkit itself never runs Java. :func:`anserini_run` indexes passages with
the jar Pyserini 1.6.0 ships (Anserini 1.7.1, Lucene 9.9.1) the way Anserini indexes a
corpus with ``IndexCollection -collection JsonCollection -fields title`` (multifield:
``contents`` holds the text alone and ``title`` the title, as Anserini's
``BeirMultifieldCollection`` puts them; flat: ``contents`` is ``title + "\\n" + text``,
Pyserini's DPR index), then searches every question with the query
``SearchCollection -fields contents=1.0 title=1.0`` builds, through Lucene's
``IndexSearcher`` and through ``SimpleSearcher.search_fields``, both offline:
``AnseriniFieldsSearch.java`` (beside this file), one ``java`` process for both steps
and any number of corpora (:func:`anserini_runs`), whose hits come back as one text file
instead of one JNI call per hit.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEARCH = HERE / "AnseriniFieldsSearch.java"
# Anserini's field names for nqkit's (lucene_bm25.FIELDS): the text is ``contents``
ANSERINI_FIELD = {"text": "contents", "title": "title"}


def anserini_jar() -> Path:
    """The Anserini jar inside the installed pyserini package."""
    import importlib.util

    spec = importlib.util.find_spec("pyserini")
    if spec is None or spec.origin is None:
        raise RuntimeError("pyserini is not installed")
    jars = sorted((Path(spec.origin).parent / "resources" / "jars").glob("anserini-*-fatjar.jar"))
    if not jars:
        raise RuntimeError("pyserini ships no anserini-*-fatjar.jar")
    return jars[-1]


def anserini_run(passages: Sequence[Any], questions: Sequence[str], workdir: Path,
                 java_home: Path, fields: dict[str, float] | None = None, k: int = 100,
                 k1: float = 0.9, b: float = 0.4) -> dict[str, list[list[tuple[str, str]]]]:
    """Per question, Lucene's raw top-k (``"lucene"``) and SimpleSearcher's returned list
    (``"anserini"``), each a list of ``(docid, score text)`` (the text of a Java float:
    read it with ``numpy.float32``). ``passages``: records with ``id``, ``title``,
    ``text``; ``fields``: nqkit's field names with weights (``{"text": 1.0, "title":
    1.0}``), or None for the flat index and search."""
    return anserini_runs([Job(passages, questions, workdir, fields, k, k1, b)], java_home)[0]


@dataclass(frozen=True)
class Job:
    """One corpus indexed and searched (:func:`anserini_run`'s arguments)."""

    passages: Sequence[Any]
    questions: Sequence[str]
    workdir: Path
    fields: dict[str, float] | None = None
    k: int = 100
    k1: float = 0.9
    b: float = 0.4


def anserini_runs(jobs: Sequence[Job], java_home: Path
                  ) -> list[dict[str, list[list[tuple[str, str]]]]]:
    """:func:`anserini_run` of each job, all in one JVM (its start and the compilation of
    the search program, some 10 s, are paid once)."""
    args: list[str] = []
    for job in jobs:
        if any("\n" in q or "\r" in q for q in job.questions):
            raise ValueError("a question holds a line break: the oracle reads one per line")
        docs = job.workdir / "docs"
        docs.mkdir(parents=True, exist_ok=True)
        with open(docs / "docs.jsonl", "w", encoding="utf-8") as f:
            for p in job.passages:
                doc = ({"id": p.id, "contents": p.text, "title": p.title} if job.fields
                       else {"id": p.id, "contents": f"{p.title}\n{p.text}"})
                f.write(json.dumps(doc) + "\n")
        qfile = job.workdir / "questions.txt"
        qfile.write_text("".join(q + "\n" for q in job.questions), encoding="utf-8")
        spec = (",".join(f"{ANSERINI_FIELD[n]}={w!r}" for n, w in job.fields.items())
                if job.fields else "-")
        args += [str(job.workdir / "index"), str(qfile), str(job.k), repr(float(job.k1)),
                 repr(float(job.b)), spec, str(job.workdir / "hits.tsv"), str(docs)]
    done = subprocess.run([str(java_home / "bin" / "java"), "-cp", str(anserini_jar()),
                           str(SEARCH), *args], capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"AnseriniFieldsSearch failed: {done.stderr[-2000:]}")
    out = []
    name = {"L": "lucene", "A": "anserini"}
    for job in jobs:
        runs: dict[str, list[list[tuple[str, str]]]] = {
            "lucene": [[] for _ in job.questions], "anserini": [[] for _ in job.questions]}
        with open(job.workdir / "hits.tsv", encoding="utf-8") as f:
            for line in f:
                qi, kind, docid, score = line.rstrip("\n").split("\t")
                runs[name[kind]][int(qi)].append((docid, score))
        out.append(runs)
    return out
