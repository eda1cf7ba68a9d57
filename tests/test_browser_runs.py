"""The browser's retrieval runs (:mod:`nqkit.browser.run_model`): what it shows against
``nqkit eval retrieval`` run as a command, against plain loops over the files, and by hand.

The real runs are BM25 runs over the 3,349 real passages for 200 NQ-open dev questions,
made by ``nqkit index build`` / ``nqkit retrieve`` (the session fixture
``real_bm25_runs`` of conftest.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from nqkit.browser.render import mark_spans
from nqkit.browser.run_model import RetrievalRun, load_run, rank_buckets
from nqkit.cli import main
from nqkit.errors import InputError
from nqkit.text.dpr_tokenize import (
    TokenOffsets,
    answer_char_spans,
    has_answer,
    simple_token_offsets,
    simple_tokenize,
    tokenize_answer,
)

from conftest import RUN_PAIR_TESTS, require


def _eval_table(capsys: pytest.CaptureFixture[str], args: list[str]) -> list[str]:
    capsys.readouterr()
    assert main(["eval", "retrieval", *args]) == 0
    return capsys.readouterr().out.splitlines()


def _runs(r: dict[str, Path]) -> dict[str, dict[str, Any]]:
    """The inputs of each real run, as load_run's keywords."""
    trec = {"gold": str(r["qa"]), "passages": str(r["passages"])}
    return {
        "json": {"predictions": r["json"], "gold": str(r["qa"])},
        "json-no-gold": {"predictions": r["json"]},
        "trec-qrels": {"predictions": r["trec"], **trec, "qrels": str(r["qrels"])},
        "trec2-gold-first": {"predictions": r["trec2"], **trec, "qrels": str(r["qrels"]),
                             "recall": "gold-passage", "topk": [1, 3, 10, 100]},
    }


@pytest.fixture(scope="module")
def loaded(real_bm25_runs: dict[str, Path]) -> dict[str, RetrievalRun]:
    return {name: load_run(**kw) for name, kw in _runs(real_bm25_runs).items()}


@pytest.mark.parametrize("name", ["json", "json-no-gold", "trec-qrels", "trec2-gold-first"])
def test_summary_is_the_eval_table(loaded: dict[str, RetrievalRun], name: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The numbers, their formatting and the signature are those the command prints for
    the same inputs (run with the command line the browser names)."""
    import shlex

    run = loaded[name]
    lines = _eval_table(capsys, shlex.split(run.eval_command)[3:])
    headers, rows = run.summary_table()
    assert lines[-1] == f"signature: {run.signature}"
    table_rows = [ln.split() for ln in lines if re.match(r"top-\d", ln)]
    assert table_rows == [list(row) for row in rows]
    assert len(rows) == len(run.ks) and rows[0][0] == f"top-{run.ks[0]}"
    header_line = next(ln for ln in lines if ln.startswith("top-k"))
    assert header_line.split() == " ".join(headers).split()


def test_per_question_values_are_the_per_item_records(
        loaded: dict[str, RetrievalRun], real_bm25_runs: dict[str, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    run = loaded["trec-qrels"]
    items = tmp_path / "items.jsonl"
    _eval_table(capsys, [*run.eval_args, "--per-item", str(items)])
    records = [json.loads(ln) for ln in items.read_text(encoding="utf-8").splitlines()]
    assert [(r["question"], r["first_hit"], r["first_gold"], r["first_hit_kind"])
            for r in records] == [(q.question, q.first_hit, q.first_gold, q.hit_kind)
                                  for q in run.questions]


def test_passages_scores_and_gold_marks_against_the_files(
        loaded: dict[str, RetrievalRun], real_bm25_runs: dict[str, Path]) -> None:
    """Ranked passages and scores as the DPR results file lists them; gold passages as the
    qrels file lists them (read here with plain Python)."""
    raw = json.loads(real_bm25_runs["json"].read_text(encoding="utf-8"))
    run = loaded["json"]
    assert len(run.questions) == len(raw) == 200
    for q, r in zip(run.questions, raw, strict=True):
        views = run.passages_of(q)
        assert [(v.passage.id, v.passage.title, v.passage.text, v.score) for v in views] == \
            [(c["id"], c["title"], c["text"], c["score"]) for c in r["ctxs"]]
        assert all(v.is_gold is None for v in views)  # no qrels: nothing is known
    # each distinct passage is kept once, shared by the questions that retrieved it
    assert len(run.passages) == len({c["id"] for r in raw for c in r["ctxs"]}) < 3349
    gold: dict[int, set[str]] = {}
    for line in real_bm25_runs["qrels"].read_text().splitlines():
        qid, _, pid, rel = line.split()
        if int(rel) > 0:
            gold.setdefault(int(qid), set()).add(pid)
    trec = loaded["trec-qrels"]
    marked = 0
    for i, q in enumerate(trec.questions):
        assert q.gold == (frozenset(gold[i]) if i in gold else None)
        views = trec.passages_of(q)
        marks = [v.is_gold for v in views]
        if i not in gold:
            assert marks == [None] * len(views)
        else:
            assert marks == [v.passage.id in gold[i] for v in views]
            ranks = [v.rank for v in views if v.is_gold]
            assert q.first_gold == (ranks[0] if ranks else None)
            marked += len(ranks)
    assert marked > 100


def test_highlights_iff_has_answer_on_every_real_passage(
        loaded: dict[str, RetrievalRun]) -> None:
    """Over every ranked passage of every real run: the passage has highlight spans
    exactly when DPR's has_answer holds for it (each text tokenized once here, with and
    without offsets: the same tokens); each span holds an answer's tokens; the first
    passage with spans (within the largest k) is the command's first hit."""
    tokens: dict[str, tuple[list[str], TokenOffsets]] = {}
    checked = with_spans = 0
    for run in (loaded["json"], loaded["trec2-gold-first"]):
        for q in run.questions:
            answers = [tokenize_answer(a) for a in q.answers]
            first = None
            for v in run.passages_of(q):
                text = v.passage.text
                if text not in tokens:
                    tokens[text] = (simple_tokenize(text), simple_token_offsets(text))
                    assert tokens[text][1][0] == tokens[text][0]
                toks, offsets = tokens[text]
                has = has_answer(answers, toks)
                spans = answer_char_spans(answers, text, offsets=offsets)
                assert v.has_answer == has == bool(spans), (q.question, v.rank)
                assert list(v.spans) == spans
                for a, b in spans:
                    words = simple_tokenize(text[a:b])
                    assert any(words[i:i + len(ans)] == list(ans) for ans in answers if ans
                               for i in range(len(words))), (text[a:b], q.answers)
                if has and first is None and v.counted:
                    first = v.rank
                checked += 1
                with_spans += has
            assert q.first_hit == first
    assert checked > 39_000 and with_spans > 500


def test_spans_by_hand(tmp_path: Path) -> None:
    text = "Paris is the capital of France. PARIS, Texas; Ro\u0308ntgen and Röntgen."
    results = [{"question": "capital of france?", "answers": ["Paris", "röntgen"],
                "ctxs": [{"id": "1", "title": "<b>T</b>", "text": text, "score": 2.5},
                         {"id": "2", "title": "x", "text": "Parisian sparis", "score": 1}]}]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    run = load_run(path, topk=[1, 2])
    first, second = run.passages_of(run.questions[0])
    # "Paris" at 0, "PARIS" at 32, "Ro" + combining diaeresis + "ntgen" (8 characters)
    # at 46, the precomposed "Röntgen" at 59
    assert first.spans == ((0, 5), (32, 37), (46, 54), (59, 66))
    assert [text[a:b] for a, b in first.spans] == ["Paris", "PARIS", "Ro\u0308ntgen",
                                                    "Röntgen"]
    assert second.spans == () and not second.has_answer
    assert run.questions[0].first_hit == 1
    assert mark_spans(text[:12], first.spans) == '<mark class="hl">Paris</mark> is the'


def test_mark_spans_escapes_everything_but_its_marks() -> None:
    text = '<script>alert(1)</script> & "x" <mark>y</mark>'
    out = mark_spans(text, [(8, 13), (26, 27)])
    assert out == ('&lt;script&gt;<mark class="hl">alert</mark>(1)&lt;/script&gt; '
                   '<mark class="hl">&amp;</mark> &quot;x&quot; &lt;mark&gt;y&lt;/mark&gt;')
    with pytest.raises(ValueError, match="not a mark class"):
        mark_spans("x", [], cls='x" onclick="')


def test_rank_buckets() -> None:
    assert rank_buckets([100, 1, 5, 20]) == [("1", 1, 1), ("2-5", 2, 5), ("6-20", 6, 20),
                                             ("21-100", 21, 100)]
    assert rank_buckets([3, 10]) == [("1-3", 1, 3), ("4-10", 4, 10)]


def test_bad_input_is_the_command_error(real_bm25_runs: dict[str, Path],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A TREC run without its corpus: the one-line error of ``nqkit eval retrieval``."""
    with pytest.raises(InputError) as e:
        load_run(real_bm25_runs["trec"], gold=str(real_bm25_runs["qa"]))
    assert main(["eval", "retrieval", "--predictions", str(real_bm25_runs["trec"]),
                 "--gold", str(real_bm25_runs["qa"])]) == 2
    assert e.value.message in capsys.readouterr().err


# ------------------------------------------------------------------------- the pages

BASE = "http://127.0.0.1:8080"
TESTS = RUN_PAIR_TESTS  # resamples and trials of the paired tests (the command line says so)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def _options(r: dict[str, Path]) -> dict[str, Any]:
    return {"passages": str(r["passages"]), "qrels": str(r["qrels"]), "first_qid": 0,
            "topk": [1, 5, 20, 100]}


@pytest.fixture(scope="module")
def client(real_bm25_views: dict[str, Any]) -> Any:
    require("fastapi")
    require("httpx")
    from fastapi.testclient import TestClient

    from nqkit.browser.open_app import create_open_app

    return TestClient(create_open_app(real_bm25_views["one"]), base_url=BASE)


@pytest.fixture(scope="module")
def pair(real_bm25_views: dict[str, Any]) -> Any:
    require("fastapi")
    require("httpx")
    from fastapi.testclient import TestClient

    from nqkit.browser.open_app import create_open_app

    return TestClient(create_open_app(real_bm25_views["pair"]), base_url=BASE)


def _total(client: Any, query: str) -> int:
    m = re.search(r'<b id="total">([\d,]+)</b>', client.get("/?" + query).text)
    assert m is not None, query
    return int(m.group(1).replace(",", ""))


def test_index_is_what_eval_prints(client: Any, real_bm25_runs: dict[str, Path],
                                   capsys: pytest.CaptureFixture[str]) -> None:
    from test_browser_open import _cli_table, _page_table, _signature, _text

    r = real_bm25_runs
    page = client.get("/").text
    args = ["--gold", str(r["qa"]), "--predictions", str(r["trec"]), "--passages",
            str(r["passages"]), "--qrels", str(r["qrels"])]
    out = _cli(capsys, "eval", "retrieval", *args)
    table = _cli_table(out, "Top-k answer recall")
    assert _page_table(page, "metrics") == table[:5]  # the header and top-1 .. top-100
    assert table[5:] == [[note] for note in re.findall(r'<p class="dim small">(questions: '
                                                       r'[^<]*)</p>', page)]
    assert re.findall(r'<span class="sig" id="signature">([^<]*)</span>', page) == \
        [_signature(out)]
    assert _text(re.search(r'<code id="evalcmd">(.*?)</code>', page).group(1)) == \
        "nqkit eval retrieval " + " ".join(args)
    # the filters add up to the command's numbers (its JSON)
    got = json.loads(_cli(capsys, "eval", "retrieval", *args, "--format", "json"))
    n = got["num_questions"]
    assert _total(client, "") == n == 200
    for k in (1, 5, 20, 100):
        assert _total(client, f"top{k}=hit") == round(got["answer_recall"][str(k)] * n)
        assert _total(client, f"top{k}=hit") + _total(client, f"top{k}=miss") == n
    split = got["hits"]["100"]
    assert _total(client, "kind=gold+passage") == split["gold"]
    assert _total(client, "kind=coincidence") == split["coincidence"]
    assert _total(client, "kind=gold+unknown") == split["gold_unknown"]
    known = got["gold_known"]
    assert _total(client, "gold=found") == round(got["gold_passage_recall"]["100"] * known)
    assert _total(client, "gold=unknown") == n - known
    # the first-hit buckets partition the hits within each k
    assert _total(client, "first=1") == _total(client, "top1=hit")
    assert _total(client, "first=2-5") == _total(client, "top5=hit") - \
        _total(client, "top1=hit")
    assert _total(client, "first=none") == _total(client, "top100=miss")
    assert _total(client, "first=bogus") == n  # unknown values are ignored


def test_question_page_marks_what_the_run_file_flags(client: Any,
                                                     real_bm25_runs: dict[str, Path]) -> None:
    """Per question, the passages with marks are those the results file (written by
    ``nqkit retrieve``) flags has_answer, in its order; each mark is an answer's text up to
    case and accents; gold passages are the qrels'."""
    import html

    raw = json.loads(real_bm25_runs["json"].read_text(encoding="utf-8"))
    gold: dict[int, set[str]] = {}
    for line in real_bm25_runs["qrels"].read_text().splitlines():
        qid, _, pid, _ = line.split()
        gold.setdefault(int(qid), set()).add(pid)
    seen = 0
    for i in (*range(0, 200, 10), 199):
        page = client.get(f"/qid/{i}").text
        items = re.findall(r'<li class="psg([^"]*)" id="r(\d+)" data-rank="\d+">(.*?)</li>',
                           page, re.S)
        ctxs = raw[i]["ctxs"]
        assert [int(rank) for _, rank, _ in items] == list(range(1, len(ctxs) + 1))
        for (cls, _, body), c in zip(items, ctxs, strict=True):
            marks = re.findall(r'<mark class="hl">(.*?)</mark>', body, re.S)
            assert bool(marks) == c["has_answer"] == ("has" in cls.split())
            assert ("gold" in cls.split()) == (c["id"] in gold.get(i, ()))
            folded = [simple_tokenize(a) for a in raw[i]["answers"]]
            for m in marks:
                assert simple_tokenize(html.unescape(m)) in folded or any(
                    _contains(simple_tokenize(html.unescape(m)), f) for f in folded)
            seen += len(marks)
        first = next((k + 1 for k, c in enumerate(ctxs) if c["has_answer"]), None)
        badges = [int(rank) for _, rank, body in items if "oc-firsthit" in body]
        assert badges == ([] if first is None else [first])
        assert (f"rank <b>{first}</b>" in page) == (first is not None)
    assert seen > 20


def _qid_page(client: Any, n: int) -> tuple[str, list[str], list[str]]:
    """The question page /qid/N: its text, its passage ids in rank order, the gold ones."""
    import html

    page = client.get(f"/qid/{n}", follow_redirects=False)
    assert page.status_code == 200, n
    ids = re.findall(r'<span class="pid id">([^<]*)</span>', page.text)
    gold = re.findall(r'<li class="psg[^"]* gold[^"]*".*?<span class="pid id">([^<]*)</span>',
                      page.text)
    return html.unescape(page.text), ids, gold


def test_a_question_is_named_and_routed_by_its_trec_qid(
        client: Any, real_bm25_runs: dict[str, Path], tmp_path: Path) -> None:
    """The browser names a question by the number its files give it (issue 30: it showed
    /item/23 for what the TREC run and the qrels call qid 22). Read with plain Python: the
    qid N of the TREC run is line N of the questions (0-based, Pyserini's numbering); the
    page /qid/N shows that question, says "qid N", lists the run's passages for qid N in
    its ranks and marks the qrels' gold passages of qid N; the index lists the same N."""
    r = real_bm25_runs
    questions = [ln.split("\t")[0] for ln in r["qa"].read_text(encoding="utf-8").splitlines()]
    run: dict[int, dict[int, str]] = {}
    for line in r["trec"].read_text(encoding="utf-8").splitlines():
        qid, _, docid, rank, *_ = line.split()
        run.setdefault(int(qid), {})[int(rank)] = docid
    gold: dict[int, set[str]] = {}
    for line in r["qrels"].read_text(encoding="utf-8").splitlines():
        qid, _, pid, rel = line.split()
        if int(rel) > 0:
            gold.setdefault(int(qid), set()).add(pid)
    index = client.get("/").text
    assert re.findall(r'<tr data-key="([^"]+)">', index)[:3] == \
        re.findall(r'<td class="num key">([^<]*)</td>', index)[:3] == ["0", "1", "2"]
    assert re.search(r'<th class="num"><a [^>]*>qid\b', index)  # the column says what it is
    with_gold = 0
    for n in (0, 1, 22, 47, 199):
        text, ids, marked = _qid_page(client, n)
        assert questions[n] in text and f"qid {n}" in text, n
        assert ids == [run[n][k] for k in sorted(run[n])], n
        assert set(marked) == {pid for pid in ids if pid in gold.get(n, set())}, n
        with_gold += bool(marked)
    assert with_gold >= 2
    assert client.get("/qid/200").status_code == 404  # 200 questions: qids 0 to 199
    # the earlier links (the 1-based line) lead to the same question, filters kept
    old = client.get("/item/23?top20=hit", follow_redirects=False)
    assert old.status_code == 301 and old.headers["location"] == "/qid/22?top20=hit"
    assert client.get("/item/0", follow_redirects=False).status_code == 404
    # a run numbered from 1 (--first-qid 1): its qid 1 is the first question
    shifted = {}
    for name in ("trec", "qrels"):
        lines = r[name].read_text(encoding="utf-8").splitlines()
        shifted[name] = tmp_path / f"from1.{name}"
        shifted[name].write_text("".join(" ".join([str(int(ln.split()[0]) + 1),
                                                   *ln.split()[1:]]) + "\n"
                                         for ln in lines), encoding="utf-8")
    from fastapi.testclient import TestClient

    from nqkit.browser.open_app import create_open_app
    from nqkit.browser.open_views import load_view

    view = load_view("retrieval", str(r["qa"]), str(shifted["trec"]),
                     passages=str(r["passages"]), qrels=str(shifted["qrels"]), first_qid=1)
    assert [row.key for row in view.rows[:3]] == ["1", "2", "3"]
    from1 = TestClient(create_open_app(view), base_url=BASE)
    for n in (1, 23, 200):
        text, ids, marked = _qid_page(from1, n)
        assert questions[n - 1] in text and f"qid {n}" in text, n
        assert ids == [run[n - 1][k] for k in sorted(run[n - 1])], n
        assert set(marked) == {pid for pid in ids if pid in gold.get(n - 1, set())}, n
    assert from1.get("/qid/0").status_code == 404


def test_a_results_file_in_another_order_keeps_the_gold_line_as_qid(tmp_path: Path) -> None:
    """DPR results need not follow the gold's order: a question's qid stays its line in
    --gold (what the qrels of `nqkit convert qrels --gold` number it by), and without
    --gold it is its place in the results (as `eval retrieval --qrels` numbers them)."""
    from nqkit.browser.open_views import load_view

    f = _tiny(tmp_path)
    results = json.loads(Path(f["run"]).read_text(encoding="utf-8"))
    results.reverse()  # largest planet (gold line 1), then capital of france (line 0)
    Path(f["run"]).write_text(json.dumps(results), encoding="utf-8")
    view = load_view("retrieval", f["gold"], f["run"], topk=[1, 2])
    assert [(r.key, r.question) for r in view.rows] == [
        ("1", "largest planet"), ("0", "capital of france"), ("2", "who wrote hamlet")]
    alone = load_view("retrieval", None, f["run"], topk=[1, 2])
    assert [(r.key, r.question) for r in alone.rows] == [
        ("0", "largest planet"), ("1", "capital of france")]


def _contains(words: list[str], run: list[str]) -> bool:
    return any(words[i:i + len(run)] == run for i in range(len(words)))


def test_side_by_side_is_what_compare_prints(pair: Any, real_bm25_runs: dict[str, Path],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from test_browser_open import _cli_table, _page_table, _signature, _text

    r = real_bm25_runs
    page = pair.get("/").text
    args = ["--gold", str(r["qa"]), "--passages", str(r["passages"]), "--qrels",
            str(r["qrels"]), "--resamples", str(TESTS[0]), "--trials", str(TESTS[1]),
            str(r["trec"]), str(r["trec2"])]
    out = _cli(capsys, "compare", "retrieval", *args)
    assert _text(re.search(r'<code id="cmpcmd">(.*?)</code>', page).group(1)) == \
        "nqkit compare retrieval " + " ".join(args)
    title = next(line for line in out.splitlines() if line.startswith("retrieval: B = "))
    assert _page_table(page, "cmptable") == _cli_table(out, title)
    assert re.findall(r'<span class="sig" id="cmpsignature">([^<]*)</span>', page) == \
        [_signature(out)]
    # the questions first: those whose hits differ at some k (from the two runs, here)
    a = load_run(r["trec"], gold=str(r["qa"]), passages=str(r["passages"]))
    b = load_run(r["trec2"], gold=str(r["qa"]), passages=str(r["passages"]))
    differ = [qa.position for qa, qb in zip(a.questions, b.questions, strict=True)
              if any(qa.hit_within(k) != qb.hit_within(k) for k in (1, 5, 20, 100))]
    assert 0 < len(differ) < 200
    assert _total(pair, "differs=differ") == len(differ)
    keys = [int(k) for k in re.findall(r'<tr data-key="(\d+)">', page)]
    assert sorted(keys[:len(differ)]) == differ
    item = pair.get(f"/qid/{keys[0]}").text
    assert item.count('class="side side-') == 2


HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


def hostile_run(d: Path, payload: str = HOSTILE) -> dict[str, Path]:
    """A DPR results file (and its gold) whose questions, answers, titles and passage texts
    carry ``payload``; the answers occur in the texts, so the marks cut through the markup
    (the answer ``<script>`` is the tokens < script >)."""
    questions = [f"what is {payload} number {i}" for i in range(12)]
    results = []
    for i, q in enumerate(questions):
        ctxs = [{"id": f"p{i}-{j}", "title": f"{payload} title {j}",
                 "text": f"text {j} of {i}: {payload} <u>{i}</u> and <script> too",
                 "score": 10.0 - j} for j in range(3)]
        results.append({"question": q, "answers": ["<script>", f"<u>{i}</u>"],
                        "ctxs": ctxs})
    d.mkdir(parents=True, exist_ok=True)
    gold, run = d / "gold.jsonl", d / "results.json"
    gold.write_text("".join(json.dumps({"question": r["question"], "answer": r["answers"]})
                            + "\n" for r in results), encoding="utf-8")
    run.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return {"gold": gold, "run": run}


def test_markup_in_questions_answers_and_passages_is_text(tmp_path: Path) -> None:
    require("fastapi")
    require("httpx")
    from fastapi.testclient import TestClient

    from nqkit.browser.app import APP_CSP
    from nqkit.browser.open_app import create_open_app
    from nqkit.browser.serve import load_open

    files = hostile_run(tmp_path)
    opts = {**_options({"passages": Path(""), "qrels": Path("")}), "passages": None,
            "qrels": None}
    for preds in ([files["run"]], [files["run"], files["run"]]):
        view = load_open("retrieval", str(files["gold"]), [str(p) for p in preds],
                         resamples=TESTS[0], trials=TESTS[1], **opts)
        client = TestClient(create_open_app(view), base_url=BASE)
        for url in ("/", "/?q=script", "/qid/0", "/qid/1?q=pwned", "/qid/11"):
            r = client.get(url)
            assert r.status_code == 200, url
            assert r.headers["content-security-policy"] == APP_CSP
            assert "<script>window" not in r.text and "<img" not in r.text, url
            assert "<u>" not in r.text, url
            assert re.findall(r"<script[^>]*>", r.text) == \
                ['<script src="/static/app.js" defer>'], url
            assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in r.text, url
            assert set(re.findall(r"<mark[^>]*>", r.text)) <= {'<mark class="hl">'}, url
        page = client.get("/qid/1").text
        # every passage has both answers: "<script>" twice (in the payload and at the
        # end) and "<u>1</u>", each marked as escaped text; the answers list marks both
        assert page.count('<mark class="hl">&lt;script&gt;</mark>') == 7 * len(preds)
        assert page.count('<mark class="hl">&lt;u&gt;1&lt;/u&gt;</mark>') == 4 * len(preds)
        assert TestClient(create_open_app(view), base_url="http://evil.example:8080").get(
            "/qid/0").status_code == 400


def _tiny(tmp_path: Path) -> dict[str, str]:
    """Three gold questions; results for the first two only (by hand: q0 has its answer
    at rank 2, q1 at rank 1; q2, missing, counts as not found)."""
    gold = tmp_path / "qa.tsv"
    gold.write_text("capital of france\t['Paris']\nlargest planet\t['Jupiter']\n"
                    "who wrote hamlet\t['Shakespeare']\n", encoding="utf-8")
    ctx = [{"id": "p1", "title": "t", "text": "Lyon is large", "score": 2.0},
           {"id": "p2", "title": "t", "text": "Paris is the capital", "score": 1.0}]
    results = [{"question": "capital of france", "answers": ["Paris"], "ctxs": ctx},
               {"question": "largest planet", "answers": ["Jupiter"],
                "ctxs": [{"id": "p3", "title": "t", "text": "Jupiter", "score": 3.0}]}]
    run = tmp_path / "run.json"
    run.write_text(json.dumps(results), encoding="utf-8")
    return {"gold": str(gold), "run": str(run)}


def test_missing_questions_are_scored_as_eval_does_with_allow_missing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from nqkit.browser.open_views import load_view

    f = _tiny(tmp_path)
    view = load_view("retrieval", f["gold"], f["run"], topk=[1, 2])
    assert view.summary.command == (f"nqkit eval retrieval --gold {f['gold']} --predictions "
                                    f"{f['run']} --topk 1 2 --allow-missing")
    # the command refuses the files without the flag, and prints these numbers with it
    assert main(["eval", "retrieval", "--gold", f["gold"], "--predictions", f["run"],
                 "--topk", "1", "2"]) == 2
    out = _cli(capsys, "eval", "retrieval", "--gold", f["gold"], "--predictions", f["run"],
               "--topk", "1", "2", "--allow-missing")
    assert [ln.split() for ln in out.splitlines() if re.match(r"top-\d", ln)] == \
        [list(r) for r in view.summary.rows] == [["top-1", "0.3333"], ["top-2", "0.6667"]]
    assert [(r.key, r.values["first_hit"], r.tags["first"]) for r in view.rows] == \
        [("0", 2, "2"), ("1", 1, "1"), ("2", None, "none")]


def test_two_runs_are_compared_at_the_cut_offs_asked_for(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--topk 1 2` is what the user asked to compare: compare and the side-by-side view
    test top-1 and top-2 (once, compare tested only the fixed 1/5/20/100 and printed an
    empty table)."""
    f = _tiny(tmp_path)
    # system B finds Paris at rank 1 (A at rank 2); both find Jupiter at 1; q2 missing
    b = json.loads(Path(f["run"]).read_text(encoding="utf-8"))
    b[0]["ctxs"].reverse()
    run_b = tmp_path / "b.json"
    run_b.write_text(json.dumps(b), encoding="utf-8")
    out = _cli(capsys, "compare", "retrieval", "--gold", f["gold"], f["run"], str(run_b),
               "--topk", "1", "2", "--allow-missing", "--format", "json",
               "--resamples", "100", "--trials", "100")
    rows = json.loads(out)["metrics"]
    # by hand, over 3 questions: top-1 A 1/3 (Jupiter), B 2/3; top-2 both 2/3
    assert [(r["metric"], round(r["a"], 4), round(r["b"], 4)) for r in rows] == [
        ("top-1", 0.3333, 0.6667), ("top-2", 0.6667, 0.6667)]
    assert main(["browse", "--task", "retrieval", "--gold", f["gold"], "--predictions",
                 f["run"], str(run_b), "--topk", "1", "2", "--index-only"]) == 0
    # and eval's intervals cover every cut-off asked for, not only those of 1/5/20/100
    out = _cli(capsys, "eval", "retrieval", "--gold", f["gold"], "--predictions", str(run_b),
               "--topk", "1", "2", "--allow-missing", "--resamples", "100", "--format",
               "json")
    boot = json.loads(out)["bootstrap"]
    assert [k for k in boot if k.startswith("top-")] == ["top-1", "top-2"]
