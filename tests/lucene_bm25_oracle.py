"""Pyserini 1.6.0 (Anserini 1.7.1, Lucene 9.9.1) in this process, as a test oracle.

Test and benchmark helper only: nqkit itself never runs Java. Everything goes through one
JVM (pyjnius, started by ``pyserini.pyclass``), with the classes Pyserini's own Python
wrappers call: ``IndexCollection`` for ``python -m pyserini.index.lucene``,
``SimpleSearcher`` for ``LuceneSearcher`` (whose ``search`` and ``batch_search`` return
what it returns), the analyzer of ``pyserini.analysis.get_lucene_analyzer()``. Importing
``pyserini.search.lucene`` or ``pyserini.index.lucene`` would also need pandas (their
other features), which the oracle does not.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

JVM_ROOT = Path("/usr/lib/jvm")
MIN_JAVA = 21


def java_major(home: Path) -> int | None:
    """The feature version of the JDK at ``home`` (its ``release`` file), or None."""
    try:
        text = (home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = re.search(r'^JAVA_VERSION="(\d+)(?:\.(\d+))?', text, re.M)
    if m is None:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def find_java_home() -> Path | None:
    """A Java 21+ home: ``JAVA_HOME`` if it is one, else the newest Temurin under
    /usr/lib/jvm (the machines ship Temurin 25 beside Debian's Java 17)."""
    candidates = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(Path(os.environ["JAVA_HOME"]))
    candidates += sorted(JVM_ROOT.glob("temurin-*"), reverse=True)
    for home in candidates:
        major = java_major(home)
        if major is not None and major >= MIN_JAVA and (home / "bin" / "java").exists():
            return home
    return None


class Oracle:
    """Pyserini's analyzer, indexer and searcher; ``start`` once per test session."""

    def __init__(self, java_home: Path) -> None:
        os.environ["JAVA_HOME"] = str(java_home)  # read by pyjnius when the JVM starts
        os.environ.setdefault("OPENAI_API_KEY", "dummy")  # pyserini 1.6.0 wants one
        from pyserini.analysis import Analyzer, get_lucene_analyzer
        from pyserini.pyclass import autoclass

        self.autoclass = autoclass
        self.analyzer = Analyzer(get_lucene_analyzer())
        self._searchers: dict[str, Any] = {}

    def analyze(self, texts: Sequence[str]) -> list[list[str]]:
        return [list(self.analyzer.analyze(t)) for t in texts]

    def build_index(self, docs_dir: Path, index_dir: Path, fields: Sequence[str] = ()
                    ) -> None:
        """``python -m pyserini.index.lucene`` with the options of Pyserini's DPR index;
        ``fields``: also index these JSON keys as fields of their own (``-fields title``,
        as Anserini's multifield BEIR indexes are built: ``contents`` then holds the text
        only, what the JSON's ``contents`` holds)."""
        extra = ["-fields", *fields] if fields else []
        self.autoclass("io.anserini.index.IndexCollection").main([
            "-collection", "JsonCollection", "-input", str(docs_dir), "-index", str(index_dir),
            "-generator", "DefaultLuceneDocumentGenerator", "-threads", "1",
            "-storePositions", "-storeDocvectors", "-storeRaw", *extra])

    def searcher(self, index_dir: Path, k1: float = 0.9, b: float = 0.4) -> Any:
        key = f"{index_dir}|{k1}|{b}"
        if key not in self._searchers:
            s = self.autoclass("io.anserini.search.SimpleSearcher")(str(index_dir))
            s.set_bm25(float(k1), float(b))
            self._searchers[key] = s
        return self._searchers[key]

    def _fields(self, fields: dict[str, float]) -> Any:
        """A ``java.util.HashMap<String, Float>`` of field weights (what Pyserini's
        ``LuceneSearcher`` passes for ``fields=``, and ``SearchCollection -fields``)."""
        jmap = self.autoclass("java.util.HashMap")()
        jfloat = self.autoclass("java.lang.Float")
        for name, weight in fields.items():
            jmap.put(name, jfloat(float(weight)))
        return jmap

    def batch_search(self, index_dir: Path, questions: Sequence[str], k: int,
                     threads: int = 2, fields: dict[str, float] | None = None
                     ) -> list[list[tuple[str, float]]]:
        """``LuceneSearcher.batch_search``: per question, (docid, score) best first;
        ``fields`` (e.g. ``{"contents": 1.0, "title": 1.0}``): ``batch_search_fields``,
        SimpleSearcher's multifield search (``BagOfWordsQueryGenerator.buildQuery`` of
        the field map, as ``SearchCollection -fields`` builds it), no network look-up."""
        jlist = self.autoclass("java.util.ArrayList")
        qs, ids = jlist(), jlist()
        for i, q in enumerate(questions):
            qs.add(q)
            ids.add(str(i))
        if fields:
            res = self.searcher(index_dir).batch_search_fields(
                qs, ids, int(k), int(threads), self._fields(fields))
        else:
            res = self.searcher(index_dir).batch_search(qs, ids, int(k), int(threads))
        return [[(h.docid, h.score) for h in res.get(str(i))] for i in range(len(questions))]

    def _reader(self, index_dir: Path) -> Any:
        ac = self.autoclass
        path = ac("java.io.File")(str(index_dir)).toPath()
        return ac("org.apache.lucene.index.DirectoryReader").open(
            ac("org.apache.lucene.store.FSDirectory").open(path))

    def raw_lucene(self, index_dir: Path, questions: Sequence[str], k: int,
                   k1: float = 0.9, b: float = 0.4, fields: dict[str, float] | None = None
                   ) -> list[list[tuple[str, float]]]:
        """Lucene's own top-k and scores for SimpleSearcher's query and sort, before
        Anserini's ``ScoreTiesAdjusterReranker`` rounds the scores; ``fields``: the
        multifield query of :meth:`batch_search`, through Lucene's ``IndexSearcher``."""
        ac = self.autoclass
        reader = self._reader(index_dir)
        searcher = ac("org.apache.lucene.search.IndexSearcher")(reader.getContext())
        searcher.setSimilarity(
            ac("org.apache.lucene.search.similarities.BM25Similarity")(float(k1), float(b)))
        field = ac("org.apache.lucene.search.SortField")
        sort = ac("org.apache.lucene.search.Sort")(
            field.FIELD_SCORE, field("id", ac("org.apache.lucene.search.SortField$Type")
                                     .STRING_VAL))
        stored = reader.storedFields()
        ext = [stored.document(i).get("id") for i in range(reader.maxDoc())]
        gen = ac("io.anserini.search.query.BagOfWordsQueryGenerator")()
        jan = self.analyzer.analyzer
        out = []
        jfields = self._fields(fields) if fields else None
        for q in questions:
            query = (gen.buildQuery(jfields, jan, q) if jfields is not None
                     else gen.buildQuery("contents", jan, q))
            top = searcher.search(query, int(k), sort, True)
            out.append([(ext[sd.doc], sd.score) for sd in top.scoreDocs])
        reader.close()
        return out

    def index_stats(self, index_dir: Path, field: str = "contents") -> dict[str, Any]:
        """docCount, sumTotalTermFreq and every document's norm byte (by external id) of
        one field."""
        reader = self._reader(index_dir)
        stored = reader.storedFields()
        norms: dict[str, int] = {}
        leaves = reader.leaves()
        for j in range(leaves.size()):
            ctx = leaves.get(j)
            leaf = ctx.reader()
            nv = leaf.getNormValues(field)
            while True:
                d = nv.nextDoc()
                if d == 2147483647:  # DocIdSetIterator.NO_MORE_DOCS
                    break
                norms[stored.document(ctx.docBase + d).get("id")] = nv.longValue() & 0xFF
        out = {"doc_count": reader.getDocCount(field),
               "sum_total_term_freq": reader.getSumTotalTermFreq(field),
               "max_doc": reader.maxDoc(), "segments": leaves.size(), "norms": norms}
        reader.close()
        return out
