"""The task contract: the worked examples of docs/contributing.md run as written, and the
old option spellings still work with one notice line.

The examples' code is taken from the document itself, so the document cannot drift from
what works. Expected numbers are derived by hand in the comments.
"""

from __future__ import annotations

import json
import re
import sys
import types

import pytest

from nqkit.cli import main
from nqkit.settings import Param

from conftest import ROOT, require

DOC = ROOT / "docs" / "contributing.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def _block(path: str) -> str:
    """The worked example whose first line names its module (``# src/nqkit/...``)."""
    (code,) = [b for b in _blocks() if b.startswith(f"# {path}\n")]
    return code


def _load(code: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses resolve annotations through sys.modules
    exec(compile(code, f"{DOC}:{name}", "exec"), module.__dict__)
    return module


@pytest.fixture
def registered():
    """Remove what a test registered, so other tests see the registries as shipped."""
    from nqkit.baselines.systems import SYSTEMS, system_names
    from nqkit.retrieval import retriever_names
    from nqkit.retrieval.base import RETRIEVERS

    system_names(), retriever_names()  # load the shipped entries first
    before = {id(r): dict(r._items) for r in (SYSTEMS, RETRIEVERS)}
    yield
    for r in (SYSTEMS, RETRIEVERS):
        r._items = before[id(r)]
    for name in ("doc_overlap", "nqkit.baselines.constant_answer"):
        sys.modules.pop(name, None)


SQUAD = {"version": "1.1", "data": [{"title": "t", "paragraphs": [
    {"context": "Paris is the capital of France. Berlin is in Germany.",
     "qas": [{"id": "1", "question": "what is the capital of france",
              "answers": [{"text": "Paris", "answer_start": 0}]},
             {"id": "3", "question": "which is the capital city of germany",
              "answers": [{"text": "Berlin", "answer_start": 32}]}]},
    {"context": "The sun is a star. Water boils at one hundred degrees.",
     "qas": [{"id": "2", "question": "at what temperature does water boil",
              "answers": [{"text": "one hundred degrees", "answer_start": 34}]}]}]}]}


def test_worked_example_retriever(tmp_path, capsys, registered):
    require("bm25s")
    _load(_block("src/nqkit/retrieval/overlap.py"), "doc_overlap")
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps(SQUAD), encoding="utf-8")
    assert main(["reqa", "build", "--from", "squad", str(squad), "-o", str(tmp_path / "t")]) == 0
    capsys.readouterr()
    assert main(["reqa", "run", "--gold", str(tmp_path / "t"), "--retriever", "overlap",
                 "--min-length", "3", "--no-per-item", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    # Words of >= 3 letters, split on spaces (so "france." keeps its period). Sentences:
    # s1 "Paris is the capital of France." {paris, the, capital, france.}
    # s2 "Berlin is in Germany." {berlin, germany.}   s3 "The sun is a star." {the, sun, star.}
    # s4 "Water boils at one hundred degrees." {water, boils, one, hundred, degrees.}
    # q1 {what, the, capital, france}: s1 2, s3 1, others 0 -> target s1 rank 1
    # q2 {what, temperature, does, water, boil}: s4 1, others 0 -> target s4 rank 1
    # q3 {which, the, capital, city, germany}: s1 2, s3 1, s2 0, s4 0 -> target s2 ties
    #    with s4 below two others: average rank 2 + (2 + 1) / 2 = 3.5
    assert got["sentence"]["mrr"] == pytest.approx((1 + 1 + 1 / 3.5) / 3)
    assert got["sentence"]["r@1"] == pytest.approx(2 / 3)
    assert got["sentence"]["r@5"] == 1.0
    assert "retriever:overlap|min-length:3" in got["signature"]
    with pytest.raises(SystemExit):
        main(["reqa", "run", "--help"])
    assert "--min-length" in capsys.readouterr().out

    # The same declaration on the sharded path: an index directory, then a retrieve run.
    corpus = tmp_path / "psgs.tsv"
    corpus.write_text("id\ttext\ttitle\n"
                      "p1\tParis is the capital of France.\tParis\n"
                      "p2\tBerlin is in Germany.\tBerlin\n"
                      "p3\tWater boils at one hundred degrees.\tWater\n", encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in [
        {"question": "what is the capital of france", "answer": ["Paris"]},
        {"question": "at what temperature does water boil", "answer": ["one hundred degrees"]},
        {"question": "where is berlin", "answer": ["Germany"]}]), encoding="utf-8")
    assert main(["index", "build", "--passages", str(corpus), "--retriever", "overlap",
                 "--min-length", "3", "-o", str(tmp_path / "idx"), "--cluster", "none",
                 "--shard-size", "2", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["shards"] == 2
    run = tmp_path / "run.json"
    assert main(["retrieve", "--index", str(tmp_path / "idx"), "--gold", str(questions),
                 "-o", str(run), "--hits", "2", "--eval", "--format", "json",
                 "--cluster", "none"]) == 0
    got = json.loads(capsys.readouterr().out)
    # Indexed text is title + " " + text. Words of >= 3 letters:
    # p1 {paris, the, capital, france.}  p2 {berlin, germany.}
    # p3 {water, boils, one, hundred, degrees.}
    # q1 {what, the, capital, france}: p1 2 (the, capital), others 0 -> only p1 retrieved
    # q2 {what, temperature, does, water, boil}: p3 1 (water) -> only p3
    # q3 {where, berlin}: p2 1 -> only p2; each top passage contains the answer
    ctxs = [[(c["id"], c["score"], c["has_answer"]) for c in r["ctxs"]]
            for r in json.loads(run.read_text(encoding="utf-8"))]
    assert ctxs == [[("p1", 2.0, True)], [("p3", 1.0, True)], [("p2", 1.0, True)]]
    assert got["recall"]["1"] == 1.0
    assert "retriever:overlap|min-length:3|" in got["signature"]


def test_the_worked_examples_are_the_five_additions():
    assert [b.split("\n", 1)[0] for b in _blocks()] == [
        "# src/nqkit/tasks/nq_open_f1.py", "# src/nqkit/retrieval/overlap.py",
        "# src/nqkit/conventions/strict.py", "# src/nqkit/commands/count.py",
        "# src/nqkit/baselines/constant_answer.py"]


def _open_files(tmp_path, gold, *systems):
    g = tmp_path / "gold.jsonl"
    g.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in gold),
                 encoding="utf-8")
    out = [str(g)]
    for i, preds in enumerate(systems):
        p = tmp_path / f"p{i}.jsonl"
        p.write_text("".join(json.dumps({"question": q, "prediction": x}) + "\n"
                             for q, x in preds), encoding="utf-8")
        out.append(str(p))
    return out


def _in_package(monkeypatch, tmp_path, package, base, registry, load, block: str) -> str:
    """Save the worked example ``block`` as a module of ``package`` (whose modules
    ``base.load()`` discovers into ``registry``), as if it shipped; the registry is as
    shipped again after the test. Returns the module's name."""
    name = block.rsplit("/", 1)[1].removesuffix(".py")
    folder = tmp_path / "package"
    folder.mkdir()
    (folder / f"{name}.py").write_text(_block(block), encoding="utf-8")
    load()  # the shipped ones first
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(folder)])
    monkeypatch.setattr(base, "_loaded", False)  # search the package again
    monkeypatch.setattr(registry, "_items", dict(registry._items))
    module = f"{package.__name__}.{name}"
    monkeypatch.delitem(sys.modules, module, raising=False)
    return module


def test_worked_example_task(tmp_path, capsys, monkeypatch):
    """The module, saved in the tasks package, is `nqkit eval` and `nqkit compare` TASK."""
    import nqkit.tasks
    import nqkit.tasks.base as base

    module = _in_package(monkeypatch, tmp_path, nqkit.tasks, base, base.TASKS,
                         base.task_names, "src/nqkit/tasks/nq_open_f1.py")
    gold, a, b = _open_files(
        tmp_path, [("who won", ["The United States", "the US"]), ("where is it",
                                                                  ["Paris, France"]),
                   ("when", ["1990"])],
        [("who won", "United States"), ("where is it", "in Paris"), ("when", "1991")],
        [("who won", "the US"), ("where is it", "France"), ("when", "1990")])
    try:
        assert main(["eval", "nq-open-f1", "--gold", gold, "--predictions", a, "--format",
                     "json", "--resamples", "100"]) == 0
        got = json.loads(capsys.readouterr().out)
        # "united states" = "united states": 1; {in, paris} vs {paris, france}: p = r = 1/2,
        # F1 1/2; "1991" vs "1990": 0. Mean 1/2
        assert got["f1"] == pytest.approx(0.5)
        assert got["signature"].startswith("nq-open-f1|f1:squad|missing:error|")
        assert got["bootstrap"]["resamples"] == 100
        assert main(["compare", "nq-open-f1", "--gold", gold, a, b, "--resamples", "100",
                     "--trials", "100", "--format", "json"]) == 0
        out = json.loads(capsys.readouterr().out)
        # B: "us" = "us": 1; {france} vs {paris, france}: p 1, r 1/2, F1 2/3; 1990: 1
        (row,) = out["metrics"]
        assert (row["metric"], row["a"], row["b"]) == ("F1", pytest.approx(0.5),
                                                       pytest.approx((1 + 2 / 3 + 1) / 3))
        assert main(["eval", "nq-open-f1", "--gold", gold, "--predictions", a,
                     "--answer-field", "nope"]) == 2
        assert "missing answer field 'nope'" in capsys.readouterr().err
    finally:
        sys.modules.pop(module, None)


def test_worked_example_convention(tmp_path, capsys, monkeypatch):
    """The module, saved in the conventions package, is a convention everywhere."""
    import nqkit.conventions
    import nqkit.conventions.base as base

    module = _in_package(monkeypatch, tmp_path, nqkit.conventions, base, base.CONVENTIONS,
                         base.convention_names, "src/nqkit/conventions/strict.py")
    gold, preds = _open_files(
        tmp_path, [("who sang", ["The Beatles"]), ("where", ["Paris"]), ("when", ["1990"])],
        [("who sang", "Beatles"), ("where", " PARIS "), ("when", "1990.")])
    try:
        assert main(["eval", "nq-open", "--gold", gold, "--predictions", preds,
                     "--convention", "strict", "--format", "json"]) == 0
        got = json.loads(capsys.readouterr().out)
        # only " PARIS " equals "Paris" once case and spaces are folded: 1 of 3
        assert (got["num_correct"], got["num_total"]) == (1, 3)
        assert "match:em-strict" in got["signature"]
        assert main(["eval", "nq-open", "--gold", gold, "--predictions", preds,
                     "--explain", "--format", "json"]) == 0
        got = json.loads(capsys.readouterr().out)
        assert got["conventions"]["strict"]["num_correct"] == 1
        assert got["conventions"]["orqa"]["num_correct"] == 3
        with pytest.raises(SystemExit):
            main(["eval", "nq-open", "--help"])
        assert ("best-subspan-em, containment, dpr-tokens, equiv, lm-eval-v3, lm-eval-v4, "
                "orqa, qa-metrics, squad, strict") in " ".join(  # argparse wraps at "-"
            capsys.readouterr().out.split()).replace("- ", "-")
    finally:
        sys.modules.pop(module, None)


def test_a_result_scores_its_headline_metrics_by_group(tmp_path):
    """Result.by_groups: the task contract's grouped scores, with the whole set's bootstrap."""
    from nqkit.stats import ItemStats, bootstrap_interval
    from nqkit.tasks.base import get_task

    rows = [(f"q{i}", [f"a{i}"]) for i in range(60)]
    gold, preds = _open_files(tmp_path, rows,
                              [(f"q{i}", f"a{i}" if i % 3 else "no") for i in range(60)])
    r = get_task("nq-open").run(gold=[gold], predictions=preds)
    even, odd = list(range(0, 60, 2)), list(range(1, 60, 2))
    g = r.by_groups({"even": even, "odd": odd}, differences=[("even", "odd")],
                    resamples=200, seed=4)
    # correct unless i % 3 == 0: 20 of the 30 even items are right (0, 6, ... 54 wrong),
    # and 20 of the 30 odd ones (3, 9, ... 57 wrong)
    s = g.score("even", "exact match")
    assert (s.n, s.score) == (30, pytest.approx(20 / 30))
    want = bootstrap_interval(ItemStats.of([float(i % 3 != 0) for i in even]),
                              resamples=200, seed=4)
    assert (s.low, s.high) == (want.low, want.high)
    (d,) = g.differences
    assert (d.group, d.minus, d.difference) == ("even", "odd", pytest.approx(0.0))
    assert d.low is not None and d.low <= 0 <= d.high


def test_worked_example_baseline(tmp_path, capsys, registered, monkeypatch):
    """The module, saved in the baselines package, is found with no registration."""
    import nqkit.baselines
    import nqkit.baselines.systems as systems

    package = tmp_path / "package"
    package.mkdir()
    (package / "constant_answer.py").write_text(_block("src/nqkit/baselines/constant_answer.py"),
                                                encoding="utf-8")
    monkeypatch.setattr(nqkit.baselines, "__path__", [*nqkit.baselines.__path__, str(package)])
    monkeypatch.setattr(systems, "_loaded", False)  # search the package again
    monkeypatch.delitem(sys.modules, "nqkit.baselines.constant_answer", raising=False)
    assert "constant-answer" not in systems.SYSTEMS
    assert "constant-answer" in systems.system_names()
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in [
        {"question": "who won", "answer": ["The United States"]},
        {"question": "where is it", "answer": ["Paris"]},
        {"question": "which country", "answer": ["France", "the US"]}]), encoding="utf-8")
    out = tmp_path / "preds.jsonl"
    assert main(["baseline", "constant-answer", "--gold", str(questions), "-o", str(out),
                 "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    # "the united states" matches "The United States" after normalization (articles and
    # case removed), and nothing else: 1 of 3
    assert (got["num_correct"], got["num_total"]) == (1, 3)
    assert [json.loads(line)["prediction"] for line in out.read_text().splitlines()] == [
        "the united states"] * 3
    # an input is never an output
    assert main(["baseline", "constant-answer", "--gold", str(questions), "-o",
                 str(questions)]) == 2


@pytest.mark.parametrize(("old", "new"), [
    (["--references"], ["--gold"]),
    (["--per-question", "{per}"], ["--per-item", "{per}"]),
])
def test_old_spellings_work_with_one_notice(tmp_path, capsys, old, new):
    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"question": "q", "answer": ["a"]}) + "\n", encoding="utf-8")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"question": "q", "prediction": "a"}) + "\n",
                     encoding="utf-8")
    per = str(tmp_path / "per.jsonl")
    base = ["eval", "nq-open", "--predictions", str(preds), "--format", "json"]

    def argv(words: list[str]) -> list[str]:
        words = [w.replace("{per}", per) for w in words]
        return [*base, *(words if words[0] in ("--gold", "--references") else
                         ["--gold", str(refs), *words])] + (
            [str(refs)] if words[0] in ("--gold", "--references") else [])

    assert main(argv(new)) == 0
    new_out, new_err = capsys.readouterr()
    assert main(argv(old)) == 0
    old_out, old_err = capsys.readouterr()
    assert old_out == new_out
    notice = [line for line in old_err.splitlines() if line not in new_err.splitlines()]
    assert notice == [f"nqkit: note: {old[0]} is deprecated and will be removed in the next "
                      f"release; use {new[0]}"]


def test_old_command_names_work_with_one_notice(capsys):
    from nqkit.data.toy import TOY_PATH

    assert main(["eval", "human-bounds", "--gold", str(TOY_PATH), "--num-references", "4",
                 "--no-gold-cache", "--format", "json"]) == 0
    new = capsys.readouterr()
    assert main(["human-bounds", "--gold", str(TOY_PATH), "--references", "4",
                 "--no-cache", "--format", "json"]) == 0
    old = capsys.readouterr()
    assert old.out == new.out
    assert old.err.splitlines() == [
        "nqkit: note: --references is deprecated and will be removed in the next release; "
        "use --num-references",
        "nqkit: note: --no-cache is deprecated and will be removed in the next release; use "
        "--no-gold-cache",
        "nqkit: note: `nqkit human-bounds` is deprecated and will be removed in the next "
        "release; use `nqkit eval human-bounds`"]


def test_every_task_has_an_eval_command_with_the_common_options(capsys):
    from nqkit.tasks.base import get_task, task_names

    assert set(task_names()) >= {"nq", "nq-open", "ambigqa", "retrieval", "reqa",
                                 "human-bounds"}
    for name in task_names():
        with pytest.raises(SystemExit):
            main(["eval", name, "--help"])
        text = capsys.readouterr().out
        for option in ("--gold", "--format"):
            assert option in text, (name, option)
        if "predictions" in get_task(name).common:
            for option in ("--predictions", "--per-item", "--allow-missing", "--resamples"):
                assert option in text, (name, option)


def test_an_output_option_expands_the_inputs_once_and_refuses_an_input(tmp_path, capsys,
                                                                        monkeypatch):
    import nqkit.io.paths

    for i, (q, a) in enumerate((("q1", "paris"), ("q2", "rome"))):
        (tmp_path / f"refs-{i}.jsonl").write_text(json.dumps({"question": q, "answer": [a]})
                                                  + "\n", encoding="utf-8")
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"question": "q1", "prediction": "Paris"}\n'
                     '{"question": "q2", "prediction": "milan"}\n', encoding="utf-8")
    calls = []

    def counting_glob(pattern, *args, **kwargs):
        calls.append(pattern)
        return real_glob(pattern, *args, **kwargs)

    real_glob = nqkit.io.paths.glob.glob
    monkeypatch.setattr(nqkit.io.paths.glob, "glob", counting_glob)
    per = tmp_path / "per.jsonl"
    gold = str(tmp_path / "refs-*.jsonl")
    assert main(["eval", "nq-open", "--gold", gold, "--predictions", str(preds),
                 "--per-item", str(per), "--format", "json"]) == 0
    # q1 right (case is normalized away), q2 wrong: 1/2, one item line per question
    assert json.loads(capsys.readouterr().out)["accuracy"] == 0.5
    assert len(per.read_text(encoding="utf-8").splitlines()) == 2
    assert calls == [gold]  # the check's expansion is the one the task reads
    # an output over a file the pattern matches: one line, before any work
    before = (tmp_path / "refs-1.jsonl").read_bytes()
    assert main(["eval", "nq-open", "--gold", gold, "--predictions", str(preds),
                 "--per-item", str(tmp_path / "refs-1.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the output path is one of the inputs" in err[0]
    assert (tmp_path / "refs-1.jsonl").read_bytes() == before


def test_eval_reqa_per_item_takes_the_task_directory_as_gold(tmp_path, capsys):
    from nqkit.formats.reqa import build_from_squad, save_task
    from nqkit.formats.squad import squad_articles_from_json

    context = "Paris is in France. Berlin is in Germany."
    doc = {"data": [{"title": "T", "paragraphs": [{"context": context, "qas": [
        {"id": "1", "question": "Where is Paris?",
         "answers": [{"text": "France", "answer_start": 12}]}]}]}]}
    task = tmp_path / "task"
    save_task(build_from_squad(squad_articles_from_json(doc, "t"), {"source": "squad"}), task)
    ranks = tmp_path / "ranks.jsonl"
    ranks.write_text(json.dumps({"query": 0, "question": "Where is Paris?",
                                 "sentence_rank": 2, "paragraph_rank": 1}) + "\n",
                     encoding="utf-8")
    per = tmp_path / "per.jsonl"
    assert main(["eval", "reqa", "--gold", str(task), "--predictions", str(ranks),
                 "--per-item", str(per), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["sentence"]["mrr"] == 0.5 and got["paragraph"]["mrr"] == 1.0  # 1/2, 1/1
    assert [json.loads(x) for x in per.read_text(encoding="utf-8").splitlines()] == [
        {"question": "Where is Paris?", "sentence_rank": 2.0, "paragraph_rank": 1.0}]
    # the task's files are inputs: an output over one is refused in one line
    queries = task / "queries.jsonl"
    before = queries.read_bytes()
    assert main(["eval", "reqa", "--gold", str(task), "--predictions", str(ranks),
                 "--per-item", str(queries)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the output path is one of the inputs" in err[0]
    assert queries.read_bytes() == before


def test_a_command_module_is_found_and_listed_in_its_order(tmp_path, monkeypatch, capsys):
    """A new module in nqkit.commands is a new command, listed where its ORDER says:
    between `demo` (10) and `simplify` (40) here, and a helper module `_*` is not
    imported at all."""
    import nqkit.commands
    from nqkit.cli import build_parser, command_modules

    package = tmp_path / "package"
    package.mkdir()
    (package / "hello.py").write_text(
        "from nqkit.commands.base import Command\n\n"
        "ORDER = 15\n"
        "COMMANDS = (Command('hello', 'say hello', 'Say hello.',\n"
        "                    lambda args: print('hello') or 0),)\n", encoding="utf-8")
    (package / "_helper.py").write_text("raise AssertionError('imported')\n",
                                        encoding="utf-8")
    monkeypatch.setattr(nqkit.commands, "__path__", [*nqkit.commands.__path__, str(package)])
    monkeypatch.delitem(sys.modules, "nqkit.commands.hello", raising=False)
    try:
        names = [m.__name__.rsplit(".", 1)[1] for m in command_modules()]
        assert names[:4] == ["demo", "hello", "eval", "compare"]
        assert main(["hello"]) == 0
        assert capsys.readouterr().out == "hello\n"
        listed = [line.split()[0] for line in build_parser().format_help().splitlines()
                  if line.startswith("    ") and not line.startswith("      ")]
        assert listed.index("demo") + 1 == listed.index("hello") < listed.index("simplify")
    finally:
        sys.modules.pop("nqkit.commands.hello", None)


def test_score_receives_a_typed_frozen_record_of_the_declared_settings(tmp_path):
    import dataclasses

    from nqkit.tasks.base import Settings, Task, get_task
    from nqkit.tasks.nq_open import NqOpenSettings

    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"question": "q", "answer": ["a"]}) + "\n", encoding="utf-8")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"question": "q", "prediction": "A"}) + "\n",
                     encoding="utf-8")
    task = get_task("nq-open")
    s = task.settings(gold=[str(refs)], predictions=str(preds), convention="squad")
    assert isinstance(s, NqOpenSettings)
    # the given values, and the declared defaults for the rest
    assert (s.convention, s.answer_field, s.regex, s.resamples, s.format) == (
        "squad", "answer", False, 0, "table")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.convention = "orqa"  # type: ignore[misc]
    # the library call of the docs: 1 of 1 correct ("A" normalizes to "a")
    r = task.run(gold=[str(refs)], predictions=str(preds), resamples=10)
    assert r.official["accuracy"] == 1.0 and "exact match" in r.intervals
    # an unknown name is an error that lists the valid ones
    with pytest.raises(TypeError, match=r"no setting\(s\) \['bootstraps'\]; known: .*'resamples'"):
        task.run(gold=[str(refs)], predictions=str(preds), bootstraps=10)

    # a record whose fields are not the declared settings: the task is refused
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Wrong(Settings):
        threshold: int

    with pytest.raises(TypeError, match=r"fields of Wrong \['threshold'\] are not its "
                                        r"declared settings \['level'\]"):
        Task("wrong", "h", "d", score=lambda s: None,  # type: ignore[arg-type,return-value]
             params=(Param("level", "--level", "h", default=1),), settings_type=Wrong)


def test_worked_example_command(tmp_path, monkeypatch, capsys):
    """The module, saved in the commands package, is a command listed at its ORDER."""
    import nqkit.commands
    from nqkit.cli import build_parser

    package = tmp_path / "package"
    package.mkdir()
    (package / "count.py").write_text(_block("src/nqkit/commands/count.py"), encoding="utf-8")
    monkeypatch.setattr(nqkit.commands, "__path__", [*nqkit.commands.__path__, str(package)])
    monkeypatch.delitem(sys.modules, "nqkit.commands.count", raising=False)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(json.dumps(r) + "\n" for r in [
        {"question": "who won", "answer": ["The United States", "the US"]},
        {"question": "where is it", "answer": ["Paris"]}]), encoding="utf-8")
    b.write_text(json.dumps({"question": "which one", "answer": ["x", "y", "z"]}) + "\n",
                 encoding="utf-8")
    try:
        assert main(["count", str(a), str(b), "--format", "json"]) == 0
        # a: 2 questions with 2 + 1 answers; b: 1 question with 3
        assert json.loads(capsys.readouterr().out) == [
            {"file": str(a), "questions": 2, "answers": 3},
            {"file": str(b), "questions": 1, "answers": 3}]
        assert main(["count", str(a)]) == 0
        assert capsys.readouterr().out.split("\n")[2].split() == [str(a), "2", "3"]
        # bad input: one line, exit code 2
        assert main(["count", str(tmp_path / "none.jsonl")]) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith("nqkit: error:") and "none.jsonl" in err[0]
        listed = [line.split()[0] for line in build_parser().format_help().splitlines()
                  if line.startswith("    ") and not line.startswith("      ")]
        assert listed.index("simplify") + 1 == listed.index("count") < listed.index("baseline")
    finally:
        sys.modules.pop("nqkit.commands.count", None)


def test_the_earlier_forms_kept_for_one_release_still_work(registered, tmp_path):
    """A task whose score() takes a dict (no settings record), a system whose run() does,
    and an NQ baseline registered with @BASELINES.register: declared outside nqkit the
    old way, they keep working for one release."""
    from nqkit.baselines import BASELINES, get_baseline
    from nqkit.baselines.systems import System
    from nqkit.settings import Param
    from nqkit.tasks.base import Result, Task

    seen: dict = {}

    def score(s):
        seen.update(s)
        return Result(task="t", title="t", headers=("metric", "value"), rows=[("m", 1.0)],
                      signature="t|v0", official={"m": 1.0})

    task = Task("old-form", "h", "d", score=score,
                params=(Param("x", "--x", "x", default=3),))
    assert task.run(gold=["g.jsonl"], predictions="p.jsonl", x=5).official == {"m": 1.0}
    assert (seen["x"], seen["gold"], seen["predictions"]) == (5, ["g.jsonl"], "p.jsonl")
    system = System("old-system", "nq-open", "h",
                    params=(Param("y", "--y", "y", default="a"),), run=lambda s: s)
    assert system.settings(y="b") == {"y": "b"}

    @BASELINES.register("old_baseline")
    class Old:
        name = "old_baseline"
        needs_train = False

        def fit(self, train):
            pass

        def predict(self, example):
            raise AssertionError("not called")

    assert "old_baseline" in BASELINES and "old_baseline" in list(BASELINES)
    assert isinstance(get_baseline("old_baseline"), Old)
