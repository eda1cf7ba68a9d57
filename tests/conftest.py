"""Test configuration: where the real data lives, and how absences are treated.

Tests that read real samples and official outputs find them under ``NQKIT_SHARED``
(default: ``../shared`` beside the project root). Tests that need an optional dependency
(fastapi, uvicorn, playwright, bm25s, sentence-transformers, ...) import it with
:func:`require`. Without the data or the module they skip with a reason, unless
``NQKIT_REQUIRE_SHARED=1`` (set by ``.ci/run``), where any absence is a failure: CI must
never pass with a whole area skipped. A plain ``pytest.importorskip`` skip is turned into a
failure there too (hooks below), so a forgotten one cannot hide.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Caches, verified-file records and downloads of the test run live in a home of its own,
# never in the user's ~/.cache (a test must not depend on, or leave, state outside it);
# tests that need an empty home of their own use the ``home`` fixture.
if not os.environ.get("NQKIT_HOME"):
    import atexit
    import shutil
    import tempfile

    os.environ["NQKIT_HOME"] = _SESSION_HOME = tempfile.mkdtemp(prefix="nqkit-test-home-")
    atexit.register(shutil.rmtree, _SESSION_HOME, True)
SHARED = Path(os.environ.get("NQKIT_SHARED", ROOT.parent / "shared")).resolve()
REQUIRE_SHARED = os.environ.get("NQKIT_REQUIRE_SHARED", "") not in ("", "0")

# Hypothesis: no per-example deadline and no "too slow" health check. Both measure wall
# time, so on a loaded machine (a 2-core CI box running Chromium or a JVM beside the
# suite) one slow example fails a correct test ("Unreliable test timings", "too_slow");
# what a property test checks is its assertions, never its speed. Loaded here, before any
# test module is imported, so every @settings(...) inherits it.
try:
    from hypothesis import HealthCheck, settings

    # derandomize and no example database: every run, on every machine, tries the same
    # examples, so a fresh clone's result never depends on an earlier run's leftovers.
    settings.register_profile("nqkit", deadline=None, derandomize=True, database=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("nqkit")
except ImportError:  # pragma: no cover - hypothesis is a dev dependency
    pass

MISSING_DEPENDENCY = "missing dependency"
# reasons of skips that come from an absent module: require()'s, pytest.importorskip's
_MISSING_MODULE_REASONS = (MISSING_DEPENDENCY, "could not import", "No module named")


def shared_file(*parts: str) -> Path:
    """Path of a file under the shared data; skip (or fail under CI) when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        msg = f"shared data not found: {path} (set NQKIT_SHARED)"
        if REQUIRE_SHARED:
            pytest.fail(msg)
        pytest.skip(msg)
    return path


def require(module: str) -> ModuleType:
    """Import ``module``; skip the test without it (fail under ``NQKIT_REQUIRE_SHARED=1``).

    Every module asked for here is declared in ``pyproject.toml`` (an extra or ``dev``).
    """
    try:
        return importlib.import_module(module)
    except ImportError as e:
        error = e
    msg = f"{MISSING_DEPENDENCY}: {module} ({error}); install nqkit[all]"
    if REQUIRE_SHARED:
        pytest.fail(msg, pytrace=False)
    pytest.skip(msg, allow_module_level=True)


@contextlib.contextmanager
def oqaeval_eval() -> Iterator[ModuleType]:
    """oqaeval's ``eval`` module from ``../shared/oracles`` (the test oracle of AnnotatedEM
    and its EM), importable offline: ``oqaeval.llm`` (its GPT judge, which imports openai)
    and, where absent, ``datasets`` and ``tqdm`` stood in for; ``sys.path`` and
    ``sys.modules`` restored afterwards."""
    import sys
    import types

    shared_file("oracles", "oqaeval", "eval.py")
    llm = types.ModuleType("oqaeval.llm")
    llm.OpenAIProxy = type("OpenAIProxy", (), {})  # type: ignore[attr-defined]
    stand_ins: dict[str, ModuleType] = {"oqaeval.llm": llm}
    if importlib.util.find_spec("datasets") is None:
        stand_ins["datasets"] = types.ModuleType("datasets")
    if importlib.util.find_spec("tqdm") is None:
        tqdm = types.ModuleType("tqdm")
        tqdm.tqdm = lambda x, **_: x  # type: ignore[attr-defined]
        stand_ins["tqdm"] = tqdm
    saved_path = list(sys.path)
    saved = {k: sys.modules.get(k) for k in [*stand_ins, "oqaeval", "oqaeval.eval",
                                            "oqaeval.data_utils", "oqaeval.squad_evaluate"]}
    try:
        sys.path.insert(0, str(SHARED / "oracles"))
        sys.modules.update(stand_ins)
        yield importlib.import_module("oqaeval.eval")
    finally:
        sys.path[:] = saved_path
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def this_tree_env(**extra: str) -> dict[str, str]:
    """Environment for a subprocess that must import nqkit from this tree's ``src``.

    Another copy of nqkit may be installed (e.g. editable from another checkout); this
    tree's ``src`` goes first on ``PYTHONPATH`` so the subprocess tests this code.
    """
    env = {**os.environ, **extra}
    parts = [str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])]
    env["PYTHONPATH"] = os.pathsep.join(parts)
    return env


def assert_this_tree(module_file: str) -> None:
    """Fail unless a module file (``nqkit.__file__`` of a subprocess) is in this tree."""
    path = Path(module_file.strip()).resolve()
    assert path.is_relative_to(ROOT / "src" / "nqkit"), (
        f"the subprocess imported {path}, not this tree's {ROOT / 'src'}")


def small_reqa_task(dest: Path) -> Path:
    """A ReQA task directory built from the first four paragraphs of the first article of
    the real SQuAD 1.1 dev sample (what the TREC tests of ``reqa run`` rank)."""
    import json

    from nqkit.formats.reqa import build_from_squad, save_task
    from nqkit.formats.squad import squad_articles_from_json

    doc = json.loads(shared_file("data", "squad", "dev-v1.1.json").read_text())
    art = doc["data"][0]
    small = {"data": [{"title": art["title"], "paragraphs": art["paragraphs"][:4]}]}
    save_task(build_from_squad(squad_articles_from_json(small, "small"), {"source": "squad"}),
              dest)
    return dest


@pytest.fixture
def shared():
    """The ``shared_file`` helper as a fixture."""
    return shared_file


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``NQKIT_HOME`` for this test (downloads land there), with the shipped
    dataset registry (``NQKIT_REGISTRY`` unset)."""
    h = tmp_path / "nqkit-home"
    monkeypatch.setenv("NQKIT_HOME", str(h))
    monkeypatch.delenv("NQKIT_REGISTRY", raising=False)
    return h


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _fail_missing_module_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not (REQUIRE_SHARED and report.skipped):
        return
    reason = _skip_reason(report)
    if any(s in reason for s in _MISSING_MODULE_REASONS):
        report.outcome = "failed"
        report.longrepr = (f"skipped for a missing module under NQKIT_REQUIRE_SHARED=1 "
                           f"(CI must run every test): {reason}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    _fail_missing_module_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):  # type: ignore[no-untyped-def]
    outcome = yield
    _fail_missing_module_skip(outcome.get_result())


# ---------------------------------------------------------------------------- test tiers
# Every test carries exactly one tier marker, from its module: `pytest -m unit` (inline
# cases), `-m golden` (numbers against the official scripts' outputs in ../shared/golden),
# `-m property` (hypothesis invariants and differential tests against an oracle), `-m cli`
# (the command line end to end: exit codes, messages, files), `-m browser` (the web app).
TIERS = ("unit", "golden", "property", "cli", "browser")
_CLI_MODULES = {"test_catalogue", "test_cli_demo", "test_baseline_cli", "test_robust_io",
                "test_dead_ends", "test_datasets_cli", "test_input_validation",
                "test_nq_eval_errors", "test_contract", "test_compare", "test_packaging",
                "test_outputs_unchanged"}
_TIER_CACHE: dict[str, str] = {}


def tier_of(path: Path) -> str:
    """The tier of a test module (see :data:`TIERS`)."""
    if path.stem not in _TIER_CACHE:
        text = path.read_text(encoding="utf-8")
        if path.stem.startswith("test_browser"):
            tier = "browser"
        elif path.stem in _CLI_MODULES:
            tier = "cli"
        elif '"golden"' in text or "'golden'" in text:
            tier = "golden"
        elif "hypothesis" in text or "oracle" in path.stem:
            tier = "property"
        else:
            tier = "unit"
        _TIER_CACHE[path.stem] = tier
    return _TIER_CACHE[path.stem]


# ------------------------------------------------------------------- suite scheduling
# pytest-xdist runs each test file whole in one worker (--dist loadfile) and hands out the
# files in collection order (--no-loadscope-reorder, pyproject.toml): the longest first,
# so that the two workers end together (longest-processing-time-first) instead of one
# waiting on a long file handed out last. The order of the longest files, from a run's
# per-file times (junit XML, 2 workers, 2026-11-29); the rest follow by name. The files
# of one entry of SAME_WORKER go to one worker as one unit (pytest_xdist_make_scheduler
# below), so a session fixture they share is built once: `pyserini_run` (a JVM run over
# the real passages, ~20 s). Only the order and the grouping change: no test depends on
# either.
SAME_WORKER = {"test_lucene_bm25": "test_lucene_exact"}
LONGEST_FIRST = (
    "test_retrieval_index", "test_lucene_exact", "test_catalogue", "test_lucene_bm25",
    "test_outputs_unchanged", "test_harness_files", "test_lucene_analyzer", "test_overlap",
    "test_lucene_multifield",
    "test_browser_e2e", "test_reqa_run", "test_simplify", "test_adjudicated",
    "test_progress", "test_browser_runs", "test_lm_eval_convention",
    "test_lm_eval_end_to_end", "test_dpr_csv", "test_ptb_oracle",
    "test_flashrag_conventions", "test_splits", "test_browser_runs_e2e", "test_packaging",
    "test_results_io", "test_reqa_metrics", "test_robust_io", "test_open_baselines",
    "test_browser_open", "test_lm_eval_v3_convention", "test_qa_metrics_convention",
    "test_datasets_verify", "test_fast_paths", "test_reproduction", "test_judge_audit",
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's loadfile scheduling, with the files of :data:`SAME_WORKER` as one unit."""
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope: str = super()._split_scope(nodeid)
            path = Path(scope)
            return str(path.with_stem(SAME_WORKER.get(path.stem, path.stem)))

    return Scheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(getattr(pytest.mark, tier_of(Path(str(item.path)))))
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    # a stable sort: each file's tests keep their order and stay together
    items.sort(key=lambda item: rank.get(Path(str(item.path)).stem, len(rank)))


def pytest_configure(config: pytest.Config) -> None:
    for tier in TIERS:  # known even where this file is used without pyproject.toml
        config.addinivalue_line("markers", f"{tier}: test tier (see tests/conftest.py)")


def make_passages_module() -> ModuleType:
    """``benchmarks/make_passages.py`` (the 3,349 real passages), imported by path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_passages",
                                                  ROOT / "benchmarks" / "make_passages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def java21_home() -> Path:
    """The Java 21+ home the Anserini oracles run on (with pyserini, whose jar they
    load); a skip with the reason where either is missing, a failure under
    ``NQKIT_REQUIRE_SHARED=1``."""
    from lucene_bm25_oracle import find_java_home

    home = find_java_home()
    if home is None:
        msg = "Anserini's oracles need Java 21+ (JAVA_HOME or /usr/lib/jvm/temurin-*)"
        if REQUIRE_SHARED:
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    require("pyserini")
    return home


@pytest.fixture(scope="session")
def pyserini_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Pyserini's tokens, index statistics, Lucene top-100 and LuceneSearcher top-100 for
    the real passages and the 3,610 questions of nq-test.qa.tsv; built once per session
    (the scoring parity test and the CLI parity test of lucene-exact share it). The index
    and the two top-100 lists come from one child JVM running Anserini's own classes
    (tests/AnseriniFieldsSearch.java, flat: `IndexCollection`, then Lucene's
    `IndexSearcher` with Anserini's query and `SimpleSearcher.search`, which
    `LuceneSearcher.batch_search` calls per question): reading 722,000 hits through
    pyjnius took some 35 s of the fixture's time; the tokens and the index statistics are
    read in this process (pyjnius), from the same index."""

    shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
    shared_file("data", "nq-open", "nq-open-oracle.jsonl.gz")
    qa = shared_file("data", "dpr", "nq-test.qa.tsv")
    from lucene_bm25_oracle import Oracle

    home = java21_home()
    os.environ["JAVA_HOME"] = str(home)  # before pyjnius starts a JVM
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    # pyserini.pyclass puts Anserini's jar on pyjnius's class path before importing it
    require("pyserini.analysis")
    from nqkit.formats.dpr import read_dpr_qa_tsv

    passages = list(make_passages_module().real_passages(SHARED))
    questions = [q for q, _ in read_dpr_qa_tsv(qa)]
    tmp = tmp_path_factory.mktemp("pyserini")
    contents = [f"{p.title}\n{p.text}" for p in passages]  # Pyserini's DPR "contents"
    import numpy as np

    from lucene_fields_oracle import anserini_run

    # the flat index of Pyserini's DPR "contents" (title, newline, text), searched flat
    hits = anserini_run(passages, questions, tmp / "anserini", home)
    oracle = Oracle(home)

    def floats(run: list[list[tuple[str, str]]]) -> list[list[tuple[str, float]]]:
        return [[(d, float(np.float32(s))) for d, s in r] for r in run]

    return {"ids": [p.id for p in passages], "questions": questions,
            "doc_tokens": oracle.analyze(contents), "query_tokens": oracle.analyze(questions),
            "stats": oracle.index_stats(tmp / "anserini" / "index"),
            "lucene": floats(hits["lucene"]), "pyserini": floats(hits["anserini"])}


@pytest.fixture(scope="session")
def real_bm25_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two real BM25 runs over the 3,349 real passages, made by the project's own
    commands, for the first 200 questions of nq-test.qa.tsv (NQ-open dev): ``json`` (DPR
    results, k1 0.9 b 0.4) and ``trec`` (the same run as TREC), ``trec2`` (TREC, k1 1.5
    b 0.75); with ``passages``, ``qa`` (the 200 questions) and ``qrels`` (their gold
    passages from the NQ-open oracle file, ``nqkit convert qrels``). Built once per
    session (about 5 s) for the browser's tests of retrieval runs."""
    require("bm25s")
    from nqkit.cli import main

    oracle = shared_file("data", "nq-open", "nq-open-oracle.jsonl.gz")
    qa = shared_file("data", "dpr", "nq-test.qa.tsv")
    d = tmp_path_factory.mktemp("bm25-runs")
    module = make_passages_module()
    out = {"passages": d / "real.tsv", "qa": d / "qa200.tsv", "json": d / "run.json",
           "trec": d / "run.trec", "trec2": d / "run2.trec", "qrels": d / "gold.qrels"}
    module.write_passages(out["passages"], module.real_passages(SHARED))
    out["qa"].write_text("".join(qa.read_text(encoding="utf-8").splitlines(keepends=True)
                                 [:200]), encoding="utf-8")
    for idx, run, more, k1b in (("idx", out["json"], ["--trec", str(out["trec"])],
                                 ["--k1", "0.9", "--b", "0.4"]),
                                ("idx2", None, ["--trec", str(out["trec2"])],
                                 ["--k1", "1.5", "--b", "0.75"])):
        assert main(["index", "build", "--passages", str(out["passages"]), "--retriever",
                     "bm25", "-o", str(d / idx), "--cluster", "none", *k1b]) == 0
        assert main(["retrieve", "--index", str(d / idx), "--gold", str(out["qa"]),
                     *(["-o", str(run)] if run else []), *more, "--cluster", "none"]) == 0
    assert main(["convert", "qrels", "--oracle", str(oracle), "--gold", str(out["qa"]),
                 "--passages", str(out["passages"]), "-o", str(out["qrels"])]) == 0
    return out


RUN_PAIR_TESTS = (200, 1000)  # resamples and trials of the retrieval runs' paired test


@pytest.fixture(scope="session")
def real_bm25_views(real_bm25_runs: dict[str, Path]) -> dict[str, Any]:
    """The browser's views of ``real_bm25_runs`` (TREC runs with the passages and qrels):
    ``one`` the first run, ``pair`` both side by side (the paired test with
    RUN_PAIR_TESTS resamples and trials); loaded once for the page and e2e tests."""
    from nqkit.browser.serve import load_open

    r = real_bm25_runs
    options = {"passages": str(r["passages"]), "qrels": str(r["qrels"]), "first_qid": 0,
               "topk": [1, 5, 20, 100]}
    return {"one": load_open("retrieval", str(r["qa"]), [str(r["trec"])], **options),
            "pair": load_open("retrieval", str(r["qa"]), [str(r["trec"]), str(r["trec2"])],
                              resamples=RUN_PAIR_TESTS[0], trials=RUN_PAIR_TESTS[1],
                              **options)}
