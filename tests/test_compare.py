"""`nqkit compare TASK`: paired tests of two systems, values derived by hand or from the
official outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nqkit.cli import main
from nqkit.comparison import format_p
from nqkit.stats import approximate_randomization
from nqkit.tasks.base import get_task

from conftest import shared_file


def _nq_open_files(tmp_path):
    refs = [("q1", ["a"]), ("q2", ["b"]), ("q3", ["c"]), ("q4", ["d"])]
    r = tmp_path / "refs.jsonl"
    r.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in refs))
    a = tmp_path / "a.jsonl"  # right on q1, q2
    a.write_text("".join(json.dumps({"question": q, "prediction": p}) + "\n"
                         for q, p in [("q1", "a"), ("q2", "b"), ("q3", "x"), ("q4", "y")]))
    b = tmp_path / "b.jsonl"  # right on all four
    b.write_text("".join(json.dumps({"question": q, "prediction": p}) + "\n"
                         for q, p in [("q1", "a"), ("q2", "b"), ("q3", "c"), ("q4", "d")]))
    return str(r), str(a), str(b)


def test_nq_open_by_hand(tmp_path, capsys):
    refs, a, b = _nq_open_files(tmp_path)
    assert main(["compare", "nq-open", "--gold", refs, a, b, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (m,) = out["metrics"]
    assert (m["metric"], m["a"], m["b"], m["difference"]) == ("exact match", 0.5, 1.0, 0.5)
    # q3 and q4 favour B by one point each; of the 4 swap patterns only "none" and "both"
    # keep |difference| = 1/2: the exact p-value is 2/4
    task = get_task("nq-open")
    ra, rb = task.run(gold=[refs], predictions=a), task.run(gold=[refs], predictions=b)
    exact = approximate_randomization(ra.headline_stats()["exact match"],
                                      rb.headline_stats()["exact match"],
                                      exact=True)
    assert exact.p_value == 0.5
    assert m["p_randomization"] == pytest.approx(0.5, abs=0.02)  # 10,000 random trials
    assert out["signature"].startswith("compare|test:both|resamples:1000|trials:10000|seed:0|"
                                       "task:nq-open|split:custom|answer-field:answer|"
                                       "match:em-nfd|")


def test_a_system_against_itself_is_never_significant(tmp_path, capsys):
    refs, a, _ = _nq_open_files(tmp_path)
    assert main(["compare", "nq-open", "--gold", refs, a, a, "--format", "json"]) == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    (m,) = out["metrics"]
    assert (m["difference"], m["low"], m["high"]) == (0.0, 0.0, 0.0)
    assert (m["p_bootstrap"], m["p_randomization"]) == (1.0, 1.0)
    assert (m["p_bootstrap_bound"], m["p_randomization_bound"]) == (False, False)
    assert (m["items"], m["differing"]) == (4, 0)
    # all ties: warned on stderr and in JSON, and marked in the signature
    message = ("A and B score the same on every one of the 4 items for exact match: no test "
               "can tell them apart (p = 1) — compare systems that differ, or on other items")
    assert f"nqkit: warning: {message}" in cap.err.splitlines()
    assert out["warnings"][-1] == message
    assert out["signature"].endswith("|warn:all-ties|v" + out["signature"].split("|v")[-1])


def test_nq_headline_is_the_official_f1(capsys):
    gold = str(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz"))
    preds = shared_file("golden", "nq-eval", "annotator0.predictions.json")
    official = json.loads(shared_file("golden", "nq-eval", "annotator0.official.json")
                          .read_text())
    r = get_task("nq").run(gold=[gold], predictions=str(preds), gold_cache=False)
    for t in ("long", "short"):
        assert r.headline_stats()[f"{t}-best-threshold-f1"].score() == pytest.approx(
            official[f"{t}-best-threshold-f1"], abs=1e-9)
    assert main(["compare", "nq", "--gold", gold, str(preds), str(preds), "--no-gold-cache",
                 "--test", "randomization", "--trials", "200"]) == 0
    out = capsys.readouterr().out
    assert "p (randomization)" in out and "p (bootstrap)" not in out


def test_bad_input_is_one_line(tmp_path, capsys):
    refs, a, _ = _nq_open_files(tmp_path)
    assert main(["compare", "nq-open", "--gold", refs, a, str(tmp_path / "nope.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("nqkit: error:")
    assert main(["compare", "nq-open", "--gold", refs, a, a, "--resamples", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_retrieval_by_hand(tmp_path, capsys):
    """Five questions; A ranks a positive passage first nowhere, B everywhere (DPR's
    has_answer on the real bi-encoder passages decides which passages carry an answer)."""
    records = json.loads(shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
                         .read_text())

    def results(first_positive: bool):
        out = []
        for r in records:
            ctxs = [*r["hard_negative_ctxs"][:3], r["positive_ctxs"][0]]
            if first_positive:
                ctxs = ctxs[::-1]
            out.append({"question": r["question"], "answers": r["answers"],
                        "ctxs": [{"id": str(i), "title": c["title"], "text": c["text"],
                                  "score": str(10 - i)} for i, c in enumerate(ctxs)]})
        return out

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(results(False)))
    b.write_text(json.dumps(results(True)))
    task = get_task("retrieval")
    ra = task.run(predictions=str(a), topk=[1, 5])
    rb = task.run(predictions=str(b), topk=[1, 5])
    assert (ra.headline_stats()["top-1"].score(),
            rb.headline_stats()["top-1"].score()) == (0.0, 1.0)
    # all five items favour B: only "swap none" and "swap all" keep |difference| = 1
    exact = approximate_randomization(ra.headline_stats()["top-1"],
                                      rb.headline_stats()["top-1"], exact=True)
    assert exact.p_value == 2 / 32
    assert main(["compare", "retrieval", str(a), str(b), "--topk", "1", "5",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {m["metric"]: m for m in out["metrics"]}
    assert (rows["top-1"]["difference"], rows["top-5"]["difference"]) == (1.0, 0.0)
    # five items that all differ on top-1 and none on top-5: both cases are warned about
    assert (rows["top-1"]["differing"], rows["top-5"]["differing"]) == (5, 0)
    assert "|warn:all-ties+few-items|" in out["signature"]


def test_retrieval_systems_scored_on_different_gold_are_refused(tmp_path, capsys):
    """Issue 30: DPR results carry the answers they were scored on (``nqkit retrieve
    --gold A`` writes A's). Two runs made for different answer lists were compared
    without a word; now that is one line, and --gold (one gold for every system) is the
    way to compare them."""
    records = json.loads(shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
                         .read_text())

    def results(answers_of, order=1):
        return [{"question": r["question"], "answers": answers_of(i, r),
                 "ctxs": [{"id": str(c["passage_id"]), "title": c["title"],
                           "text": c["text"], "score": str(10 - j)}
                          for j, c in enumerate([*r["hard_negative_ctxs"][:3],
                                                 r["positive_ctxs"][0]][::order])]}
                for i, r in enumerate(records)]

    a, b, c = (tmp_path / n for n in ("a.json", "b.json", "c.json"))
    a.write_text(json.dumps(results(lambda i, r: r["answers"])))
    b.write_text(json.dumps(results(lambda i, r: r["answers"], -1)))  # the same gold
    # another gold file: one question's answer list has another alias
    c.write_text(json.dumps(results(lambda i, r: r["answers"] + ["alias"] * (i == 3))))
    assert main(["compare", "retrieval", str(a), str(b)]) == 0
    capsys.readouterr()
    for argv in ([str(a), str(c)], [str(a), str(b), str(c)]):
        assert main(["compare", "retrieval", *argv]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        head, _, tail = line.partition(" (e.g. ")
        assert head == (f"nqkit: error: {c}: other gold answers than in a.json for 1 of 5 "
                        "questions")
        assert tail[1:23] == records[3]["question"][:22]
        assert tail.endswith("...): the systems were scored on different gold — give the "
                             "gold once with --gold, to score every system on it")
    # the gold given once: every system is scored on it, as eval retrieval --gold scores it
    qa = tmp_path / "qa.tsv"
    qa.write_text("".join(f"{r['question']}\t{r['answers']!r}\n" for r in records))
    assert main(["compare", "retrieval", "--gold", str(qa), str(a), str(c),
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    task = get_task("retrieval")
    for key, path in (("a", a), ("b", c)):
        alone = task.run(gold=[str(qa)], predictions=str(path)).headline_stats()
        assert all(m[key] == alone[m["metric"]].score() for m in out["metrics"])


def test_library_result_shapes(tmp_path):
    refs, _, b = _nq_open_files(tmp_path)
    r = get_task("nq-open").run(gold=[refs], predictions=b, resamples=200, seed=1)
    iv = r.intervals["exact match"]
    assert (iv.score, iv.low, iv.high, iv.resamples, iv.seed) == (1.0, 1.0, 1.0, 200, 1)
    assert r.to_json()["bootstrap"] == {"resamples": 200, "seed": 1, "confidence": 0.95,
                                        "exact match": [1.0, 1.0]}
    lines = [" ".join(line.split()) for line in r.to_table().splitlines()]
    assert "exact match 1.0000" in lines and "exact match 1.0000 1.0000-1.0000" in lines
    # four questions cannot support an interval: a warning, and its mark in the signature
    assert r.warnings[-1].code == "few-items" and "only 4 items" in r.warnings[-1].message
    assert "+few-items|v" in r.signature


def _many(tmp_path, n):
    """n questions; A answers the first n // 2, B all of them."""
    r, a, b = (tmp_path / f"{x}{n}.jsonl" for x in "rab")
    r.write_text("".join(json.dumps({"question": f"q{i}", "answer": [f"a{i}"]}) + "\n"
                         for i in range(n)))
    for path, right in ((a, n // 2), (b, n)):
        path.write_text("".join(json.dumps({"question": f"q{i}", "prediction":
                                            f"a{i}" if i < right else "x"}) + "\n"
                                for i in range(n)))
    return str(r), str(a), str(b)


def test_bootstrap_warns_below_thirty_items(tmp_path, capsys):
    for n, warned in ((29, True), (30, False)):
        refs, _, b = _many(tmp_path, n)
        assert main(["eval", "nq-open", "--gold", refs, "--predictions", b,
                     "--resamples", "100", "--format", "json"]) == 0
        cap = capsys.readouterr()
        out = json.loads(cap.out)
        assert ("few-items" in out["signature"]) == warned
        assert ("nqkit: warning: bootstrap intervals of exact match from only 29 items"
                in cap.err) == warned
        assert out["bootstrap"]["exact match"] == [1.0, 1.0]


EXAMPLE = ["compare", "nq", "--gold", "{dev}", "{g}/random0.predictions.json",
           "{g}/mixed0.predictions.json", "--no-gold-cache"]


def test_ten_items_interval_and_p_values_agree_and_are_warned_about(capsys):
    """The issue's example: ten NQ dev examples. A answers none correctly; B answers
    examples 1 and 5 (long) and 5 (short). So a resample favours B exactly when it draws
    one of those, and ties otherwise: p = 2 (1 + #resamples drawing none) / 1001, about
    2 * 0.8**10 = 0.21 and 2 * 0.9**10 = 0.70; the 25th smallest difference is such a tie,
    so the interval starts at 0 — interval and p-value agree, and ten items get a warning."""
    dev = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    g = shared_file("golden", "nq-eval", "random0.predictions.json").parent
    argv = [a.format(dev=dev, g=g) for a in EXAMPLE]
    task = get_task("nq")
    ra, rb = (task.run(gold=[str(dev)], predictions=argv[i], gold_cache=False) for i in (4, 5))
    draws = np.random.default_rng(0).integers(0, 10, size=(1000, 10))
    p = {}
    for t in ("long", "short"):
        assert not any(item[f"{t}_correct"] for item in ra.item_list())
        right = [i for i, item in enumerate(rb.item_list()) if item[f"{t}_correct"]]
        none = int((~np.isin(draws, right).any(axis=1)).sum())
        p[t] = 2 * (1 + none) / 1001
    assert right == [4] and p["long"] == pytest.approx(2 * 0.8**10, abs=0.05)
    assert p["short"] == pytest.approx(2 * 0.9**10, abs=0.05)

    assert main(argv) == 0
    cap = capsys.readouterr()
    assert cap.out.splitlines()[1:] == [
        "metric                        A       B   B - A              95% CI  p (bootstrap)"
        "  p (randomization)",
        "-----------------------  ------  ------  ------  ------------------  -------------"
        "  -----------------",
        f"long-best-threshold-f1   0.0000  0.6667  0.6667  +0.0000 .. +1.0000         "
        f"{p['long']:.4f}             0.2492",
        f"short-best-threshold-f1  0.0000  0.6667  0.6667  +0.0000 .. +1.0000         "
        f"{p['short']:.4f}             1.0000",
        "signature: compare|test:both|resamples:1000|trials:10000|seed:0|task:nq|long-thr:2|"
        "short-thr:2|missing:error|warn:few-items|v" + cap.out.split("|v")[-1].strip()]
    assert cap.err.splitlines() == [
        "nqkit: warning: 10 of 10 items differ between A and B for long-best-threshold-f1, "
        "short-best-threshold-f1, fewer than the 30 a paired test needs: the interval and "
        "p-values are too coarse to support a conclusion — compare on more items"]


def test_p_values_at_the_floor_are_bounds(tmp_path, capsys):
    # 80 questions, A right on the first 40, B on all: 40 items favour B. A resample ties
    # only if it draws none of them (2**-80) and a random swap keeps |difference| = 1/2 only
    # if it swaps all or none of them (2**-39): no resample or trial reaches the far side,
    # so both p-values sit at their floors, 2 / 1001 and 1 / 10001, and are bounds.
    refs, a, b = _many(tmp_path, 80)
    assert main(["compare", "nq-open", "--gold", refs, a, b, "--format", "json"]) == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    (m,) = out["metrics"]
    assert (m["p_bootstrap"], m["p_bootstrap_bound"]) == (2 / 1001, True)
    assert (m["p_randomization"], m["p_randomization_bound"]) == (1 / 10001, True)
    # a resampled difference is the mean of 80 draws of 1 (an item B wins) or 0, each with
    # probability 1/2: about 0.5 +- 1.96 * 0.5 / sqrt(80) = 0.5 +- 0.11
    assert (m["low"], m["high"]) == (pytest.approx(0.39, abs=0.02), pytest.approx(0.61, abs=0.02))
    assert (m["items"], m["differing"]) == (80, 40)
    assert out["warnings"] == [] and "warn:" not in out["signature"] and cap.err == ""
    assert main(["compare", "nq-open", "--gold", refs, a, b]) == 0
    row = capsys.readouterr().out.splitlines()[3]
    assert row.endswith("  +0.3875 .. +0.6000        < 0.002           < 0.0001")


@pytest.mark.parametrize(("p", "bound", "text"), [
    (2 / 1001, True, "< 0.002"),  # the paired bootstrap's floor at 1,000 resamples
    (2 / 1000, True, "< 0.002"),  # at 999: exactly 0.002, still no more than that
    (1 / 1001, True, "< 0.001"),
    (1 / 10001, True, "< 0.0001"),  # approximate randomization's at 10,000 trials
    (2 / 41, True, "< 0.05"),  # the fewest resamples of a 95% interval
    (0.2118, False, "0.2118"),
    (2 / 2**20, False, "1.9e-06"),  # an exact test's p-value is never a bound
])
def test_format_p(p, bound, text):
    assert format_p(p, bound) == text


# ---------------------------------------------------------------- three or more systems

NQ_SYSTEMS = ("random0", "mixed0", "annotator1")
ADJUSTED = ("p_bootstrap_adjusted", "p_bootstrap_adjusted_bound", "p_randomization_adjusted",
            "p_randomization_adjusted_bound", "significant")


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _holm_by_hand(p):
    """Holm's adjusted p-values for three p-values, written out: sorted ascending, times
    3, 2 and 1, capped at 1, each at least the one before."""
    order = sorted(range(3), key=lambda i: p[i])
    first = min(1.0, 3 * p[order[0]])
    second = max(first, min(1.0, 2 * p[order[1]]))
    third = max(second, min(1.0, p[order[2]]))
    out = [0.0] * 3
    for i, v in zip(order, (first, second, third), strict=True):
        out[i] = v
    return out


def test_three_systems_equal_three_two_way_runs(capsys):
    """Ten NQ dev examples, three of the official prediction files: every pair of the
    three-way run has the numbers of its own two-way run with the same seed, each system's
    score is the official script's, and the adjusted p-values are Holm's over the three
    comparisons of each metric."""
    dev = str(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz"))
    g = shared_file("golden", "nq-eval", "random0.predictions.json").parent
    files = [str(g / f"{s}.predictions.json") for s in NQ_SYSTEMS]
    opts = ["--no-gold-cache", "--resamples", "200", "--trials", "300", "--seed", "7"]
    out = _json(capsys, ["compare", "nq", "--gold", dev, *files, *opts, "--format", "json"])
    names = [f"{s}.predictions" for s in NQ_SYSTEMS]
    assert [s["name"] for s in out["systems"]] == names
    for s, system in zip(out["systems"], NQ_SYSTEMS, strict=True):
        official = json.loads((g / f"{system}.official.json").read_text())
        assert s["scores"] == {k: pytest.approx(official[k], abs=1e-9)
                               for k in ("long-best-threshold-f1", "short-best-threshold-f1")}
    assert [(c["a"], c["b"]) for c in out["comparisons"]] == [
        (names[0], names[1]), (names[0], names[2]), (names[1], names[2])]
    for c, (i, j) in zip(out["comparisons"], [(0, 1), (0, 2), (1, 2)], strict=True):
        two = _json(capsys, ["compare", "nq", "--gold", dev, files[i], files[j], *opts,
                             "--format", "json"])
        assert [{k: v for k, v in m.items() if k not in ADJUSTED} for m in c["metrics"]] \
            == two["metrics"]
    for metric in ("long-best-threshold-f1", "short-best-threshold-f1"):
        rows = [next(m for m in c["metrics"] if m["metric"] == metric)
                for c in out["comparisons"]]
        for kind in ("bootstrap", "randomization"):
            raw = [m[f"p_{kind}"] for m in rows]
            assert [m[f"p_{kind}_adjusted"] for m in rows] == pytest.approx(
                _holm_by_hand(raw), abs=1e-15)
            assert not any(m[f"p_{kind}_bound"] or m[f"p_{kind}_adjusted_bound"]
                           for m in rows)
        assert [m["significant"] for m in rows] == [
            m["p_bootstrap_adjusted"] < 0.05 and m["p_randomization_adjusted"] < 0.05
            for m in rows]
    assert out["signature"].startswith(
        "compare|design:pairs|systems:3|correction:holm|family:metric|test:both|"
        "resamples:200|trials:300|seed:7|task:nq|long-thr:2|short-thr:2|missing:error|"
        "warn:few-items|v")
    # with a baseline: the other two against it, each equal to its two-way run
    out = _json(capsys, ["compare", "nq", "--gold", dev, *files, *opts, "--baseline", "2",
                         "--correction", "bonferroni", "--format", "json"])
    assert (out["design"], out["baseline"], out["correction"]) == ("baseline", names[1],
                                                                   "bonferroni")
    assert [(c["a"], c["b"]) for c in out["comparisons"]] == [(names[1], names[0]),
                                                              (names[1], names[2])]
    two = _json(capsys, ["compare", "nq", "--gold", dev, files[1], files[0], *opts,
                         "--format", "json"])
    first = out["comparisons"][0]["metrics"]
    assert [{k: v for k, v in m.items() if k not in ADJUSTED} for m in first] \
        == two["metrics"]
    assert [m["p_randomization_adjusted"] for m in first] == [
        min(1.0, 2 * m["p_randomization"]) for m in two["metrics"]]
    assert "|design:baseline|baseline:2|systems:3|correction:bonferroni|" in out["signature"]


def test_two_systems_keep_the_two_system_output(tmp_path, capsys):
    refs, a, b = _nq_open_files(tmp_path)
    plain = _json(capsys, ["compare", "nq-open", "--gold", refs, a, b, "--format", "json"])
    # one comparison: no correction to make, the output is the two-system one
    for extra in (["--correction", "bonferroni"], ["--correction", "none"],
                  ["--baseline", "1"], ["--baseline", a]):
        assert _json(capsys, ["compare", "nq-open", "--gold", refs, a, b, *extra,
                              "--format", "json"]) == plain
    # --baseline naming the second file makes it A
    swapped = _json(capsys, ["compare", "nq-open", "--gold", refs, a, b, "--baseline", "2",
                             "--format", "json"])
    assert (swapped["a"], swapped["b"]) == (b, a)
    assert swapped["metrics"][0]["difference"] == -0.5
    # ... as does its name, the file's stem
    assert _json(capsys, ["compare", "nq-open", "--gold", refs, a, b, "--baseline", "b",
                          "--format", "json"]) == swapped
    # --name names the two in the title of the table
    assert main(["compare", "nq-open", "--gold", refs, a, b, "--name", "small",
                 "--name", "big"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "nq-open: B = big against A = small"


def test_three_systems_at_the_floor_give_adjusted_bounds(tmp_path, capsys):
    """200 questions: A right on the first 100, B on all, C on the first 150. Every pair
    differs on 50 or more items that all favour one system, so no resample ties or
    crosses zero and no random swap reaches the observed difference (chance below
    2**-49): every p-value is its floor, a bound, and Holm's adjusted value of three
    bounds at the floor is 3 times the floor — a bound as well."""
    refs, a, b = _many(tmp_path, 200)
    c = tmp_path / "c200.jsonl"
    c.write_text("".join(json.dumps({"question": f"q{i}", "prediction":
                                     f"a{i}" if i < 150 else "x"}) + "\n" for i in range(200)))
    argv = ["compare", "nq-open", "--gold", refs, a, b, str(c)]
    out = _json(capsys, [*argv, "--format", "json"])
    assert [s["scores"]["exact match"] for s in out["systems"]] == [0.5, 1.0, 0.75]
    assert [c["metrics"][0]["differing"] for c in out["comparisons"]] == [100, 50, 50]
    for comp in out["comparisons"]:
        (m,) = comp["metrics"]
        assert (m["p_bootstrap"], m["p_bootstrap_bound"]) == (2 / 1001, True)
        assert (m["p_bootstrap_adjusted"], m["p_bootstrap_adjusted_bound"]) == (6 / 1001, True)
        assert (m["p_randomization_adjusted"], m["p_randomization_adjusted_bound"]) == (
            3 / 10001, True)
        assert m["significant"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "nq-open: 3 systems"
    assert [" ".join(x.split()[:3]) for x in lines[3:6]] == [
        "a200 0.5000 " + a, "b200 1.0000 " + b, "c200 0.7500 " + str(c)]
    assert lines[7] == ("every pair: 3 comparisons of B against A; p-values adjusted by "
                        "Holm's step-down method per metric (family: its 3 comparisons)")
    rows = [x.split() for x in lines[10:13]]
    assert [r[2:5] for r in rows] == [["b200", "a200", "0.5000"], ["c200", "a200", "0.2500"],
                                      ["c200", "b200", "-0.2500"]]
    # raw and adjusted, for both tests, then the verdict
    assert [r[-11:] for r in rows] == [
        ["<", "0.002", "<", "0.006", "<", "0.0001", "<", "0.0003", "B", ">", "A"],
        ["<", "0.002", "<", "0.006", "<", "0.0001", "<", "0.0003", "B", ">", "A"],
        ["<", "0.002", "<", "0.006", "<", "0.0001", "<", "0.0003", "B", "<", "A"]]
    assert lines[-1].startswith("signature: compare|design:pairs|systems:3|correction:holm|"
                                "family:metric|test:both|")


def test_three_systems_bad_input(tmp_path, capsys):
    refs, a, b = _nq_open_files(tmp_path)
    c = tmp_path / "sub" / "a.jsonl"
    c.parent.mkdir()
    c.write_text((tmp_path / "a.jsonl").read_text())
    again = str(tmp_path / "sub" / ".." / "a.jsonl")  # the same file as a, spelled otherwise
    cases = [
        ([a, b, again], f"nqkit: error: {again}: the same file is given twice, as systems 1 "
         "and 3 — give each system once (to compare a system with itself, give just the two)"),
        # two files named a.jsonl: both names get their directory
        ([a, b, str(c), "--baseline", "4"], "nqkit: error: --baseline '4' is none of the 3 "
         f"systems — give its position (1-3), its name ({tmp_path.name}/a, b, sub/a) or its "
         "file"),
        ([a, b, str(c), "--name", "x", "--name", "y"], "nqkit: error: --name given 2 time(s) "
         "for 3 systems — give one --name per system, in the order of the files"),
        ([a, b, str(c), "--name", "x", "--name", "y", "--name", "x"], "nqkit: error: --name "
         "'x' is given to more than one system — give every system its own name"),
    ]
    for argv, message in cases:
        assert main(["compare", "nq-open", "--gold", refs, *argv]) == 2
        cap = capsys.readouterr()
        assert (cap.out, cap.err.splitlines()) == ("", [message])
    # a system without a prediction for every question: the missing rule, naming its file
    short = tmp_path / "short.jsonl"
    short.write_text("".join((tmp_path / "b.jsonl").read_text().splitlines(True)[:3]))
    assert main(["compare", "nq-open", "--gold", refs, a, b, str(short)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"nqkit: error: {short}: 1 of 4 gold "
                                               "questions have no prediction")
    # ... and with --allow-missing it is scored as wrong there
    out = _json(capsys, ["compare", "nq-open", "--gold", refs, a, b, str(short),
                         "--allow-missing", "--format", "json"])
    assert [s["scores"]["exact match"] for s in out["systems"]] == [0.5, 1.0, 0.75]


def test_system_names():
    from nqkit.comparison import system_names

    assert system_names(["x/run.jsonl", "y/other.json.gz", "plain"]) == ["run", "other",
                                                                         "plain"]
    # equal stems: as many parent directories as it takes
    assert system_names(["/r/a/p.json", "/r/b/p.json", "/s/b/p.json", "q.json"]) == [
        "a/p", "r/b/p", "s/b/p", "q"]
    # equal even with every directory: the paths as given
    assert system_names(["d/p.json", "d/p.jsonl"]) == ["d/p.json", "d/p.jsonl"]
    assert system_names(["a", "b"], ["first", "second"]) == ["first", "second"]


def test_correction_choices_are_the_library_ones():
    # the command declares its choices without importing nqkit.stats (--help stays light)
    from nqkit.comparison import COMPARISON
    from nqkit.stats import CORRECTIONS

    (correction,) = [p for p in COMPARISON if p.name == "correction"]
    assert correction.choices == CORRECTIONS and correction.default == CORRECTIONS[0]


def test_a_system_against_itself_is_named_for_what_it_is(tmp_path, capsys):
    refs, a, _ = _nq_open_files(tmp_path)
    (tmp_path / "sub").mkdir()
    again = f"{tmp_path}/sub/../a.jsonl"  # the same file, spelled otherwise
    assert main(["compare", "nq-open", "--gold", refs, a, again, "--resamples", "100",
                 "--trials", "100"]) == 0
    cap = capsys.readouterr()
    assert f"nqkit: note: A and B are the same file ({again}): every difference is 0" in cap.err
    # the numbers are still printed: A = B, a difference of 0 (a right on 2 of 4)
    row = next(line for line in cap.out.splitlines() if line.startswith("exact match "))
    assert row.split()[2:5] == ["0.5000", "0.5000", "0.0000"]
    # two different files: no such note
    assert main(["compare", "nq-open", "--gold", refs, a, _nq_open_files(tmp_path)[2],
                 "--resamples", "100", "--trials", "100"]) == 0
    assert "same file" not in capsys.readouterr().err
