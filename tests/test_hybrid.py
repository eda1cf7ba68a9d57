"""A hybrid is any two declared retrievers fused (issue 29): two indexes of any kinds over
one corpus, in ``nqkit retrieve`` as in ``nqkit reqa run`` (tests/test_reqa_run.py), with
one signature vocabulary (the parts numbered ``1.`` and ``2.``).

The fused lists are checked against Pyserini's normalized fusion written here from its
definition (mid-range normalization of each list, a passage missing from one list given
that list's minimum, ``alpha * first + second``, ties by passage order), applied to the two
single-index runs that the hybrid fuses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nqkit.cli import main

from conftest import SHARED, make_passages_module, require, shared_file


@pytest.fixture(scope="module")
def two_bm25(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three BM25 indexes of the real passages (bm25s's flavour with Pyserini's k1 0.9 b
    0.4 and with ReQA's 1.5 0.75, and Lucene's) and the first 100 questions of NQ-open
    dev (DPR's nq-test.qa)."""
    require("bm25s")
    qa = shared_file("data", "dpr", "nq-test.qa.tsv")
    d = tmp_path_factory.mktemp("hybrid")
    module = make_passages_module()
    out = {"passages": d / "real.tsv", "qa": d / "qa100.tsv", "a": d / "bm25s",
           "b": d / "bm25s-reqa", "c": d / "lucene"}
    module.write_passages(out["passages"], module.real_passages(SHARED))
    out["qa"].write_text("".join(qa.read_text(encoding="utf-8").splitlines(keepends=True)
                                 [:100]), encoding="utf-8")
    for key, more in (("a", []), ("b", ["--k1", "1.5", "--b", "0.75"]),
                      ("c", ["--bm25-method", "lucene-exact"])):
        assert main(["index", "build", "--passages", str(out["passages"]), "--retriever",
                     "bm25", "-o", str(out[key]), "--cluster", "none", *more]) == 0
    return out


def _run(out: Path, *argv: str) -> list[dict[str, Any]]:
    assert main(["retrieve", *argv, "-o", str(out), "--cluster", "none"]) == 0
    results: list[dict[str, Any]] = json.loads(out.read_text(encoding="utf-8"))
    return results


def _expected(a: list[dict[str, Any]], b: list[dict[str, Any]], rows: dict[str, int],
              alpha: float, k: int) -> list[list[tuple[str, float]]]:
    out = []
    for ra, rb in zip(a, b, strict=True):
        normed = []
        for r in (ra, rb):
            # a single run's scores are float32, written as their shortest text
            scores = {c["id"]: float(np.float32(c["score"])) for c in r["ctxs"]}
            normed.append(scores)
        ids = set(normed[0]) | set(normed[1])
        total = dict.fromkeys(ids, 0.0)
        for weight, scores in ((alpha, normed[0]), (1.0, normed[1])):
            lo, hi = min(scores.values()), max(scores.values())
            for pid in ids:
                s = scores.get(pid, lo)
                total[pid] += weight * ((s - (lo + hi) / 2) / (hi - lo) if hi > lo else 0.0)
        ranked = sorted(ids, key=lambda pid: (-total[pid], rows[pid]))[:k]
        out.append([(pid, total[pid]) for pid in ranked])
    return out


def test_two_indexes_of_any_kind_fuse_as_their_lists_do(two_bm25, tmp_path, capsys):
    d = two_bm25
    rows = {line.split("\t", 1)[0]: i for i, line in enumerate(
        d["passages"].read_text(encoding="utf-8").splitlines()[1:])}
    a = _run(tmp_path / "a.json", "--index", str(d["a"]), "--gold", str(d["qa"]), "--hits",
             "40")
    b = _run(tmp_path / "b.json", "--index", str(d["b"]), "--gold", str(d["qa"]), "--hits",
             "40")
    capsys.readouterr()
    fused = _run(tmp_path / "ab.json", "--index", str(d["a"]), "--index", str(d["b"]),
                 "--gold", str(d["qa"]), "--hits", "10", "--depth", "40", "--alpha", "0.7",
                 "--eval", "--format", "json")
    sig = json.loads(capsys.readouterr().out)["signature"]
    want = _expected(a, b, rows, 0.7, 10)
    got = [[(c["id"], float(c["score"])) for c in r["ctxs"]] for r in fused]
    assert [[pid for pid, _ in q] for q in got] == [[pid for pid, _ in q] for q in want]
    assert all(g == pytest.approx(w, abs=1e-12) for q, p in zip(got, want, strict=True)
               for (_, g), (_, w) in zip(q, p, strict=True))
    # both parts are bm25 indexes: taken in the order given, numbered in the signature
    assert "|retriever:hybrid|fusion:norm|alpha:0.7|depth:40|1.retriever:bm25|" in sig
    assert sig.index("1.k1:0.9|1.b:0.4|") < sig.index("2.k1:1.5|2.b:0.75|")


def test_the_parts_of_a_hybrid_are_named_in_its_signature(two_bm25, tmp_path, capsys):
    d = two_bm25
    for first, second in (("c", "a"), ("a", "c")):
        _run(tmp_path / "x.json", "--index", str(d[first]), "--index", str(d[second]),
             "--gold", str(d["qa"]), "--hits", "5", "--eval", "--format", "json")
        sig = json.loads(capsys.readouterr().out)["signature"]
        flavours = {"a": "lucene", "c": "lucene-exact"}
        assert f"|1.bm25:{flavours[first]}|" in sig and f"|2.bm25:{flavours[second]}|" in sig


def test_a_hybrid_of_one_index_with_itself_is_refused(two_bm25, tmp_path, capsys):
    d = two_bm25
    assert main(["retrieve", "--index", str(d["a"]), "--index", str(d["a"]), "--gold",
                 str(d["qa"]), "-o", str(tmp_path / "x.json"), "--cluster", "none"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "fusing it with itself changes nothing" in err
    assert not (tmp_path / "x.json").exists()


def test_a_fused_run_on_dask_workers_equals_one_process(two_bm25, tmp_path):
    d = two_bm25
    argv = ["--index", str(d["c"]), "--index", str(d["a"]), "--gold", str(d["qa"]),
            "--hits", "20", "--depth", "50", "--fusion", "rrf"]
    assert main(["retrieve", *argv, "-o", str(tmp_path / "one.json"), "--cluster",
                 "none"]) == 0
    assert main(["retrieve", *argv, "-o", str(tmp_path / "two.json"), "--cluster", "local",
                 "--workers", "2"]) == 0
    assert (tmp_path / "one.json").read_bytes() == (tmp_path / "two.json").read_bytes()
