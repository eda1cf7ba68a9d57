"""NQ data statistics (nqkit.analysis.nq_data_stats, ``nqkit data stats``).

A tiny inline fixture with every count worked out by hand, then the real dev sample
(original and simplified) against numbers computed here with plain json loops.
"""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from pathlib import Path

import pytest

from nqkit.analysis.nq_data_stats import NqDataStats, nearest_rank, nq_data_stats
from nqkit.cli import main
from nqkit.formats.nq import read_nq

from conftest import shared_file

# 16 tokens, 6 words: <P> a b c </P> <Table> <Tr> x y </Tr> </Table> <Ul> <Li> z </Li> </Ul>
DOC = "<P> a b c </P> <Table> <Tr> x y </Tr> </Table> <Ul> <Li> z </Li> </Ul>"
CANDS = [(0, 5), (5, 11), (6, 10), (11, 16), (12, 15)]  # P, Table, Tr, Ul, Li


def _ann(cand: int = -1, shorts: tuple[tuple[int, int], ...] = (), yes_no: str = "NONE"):
    s, e = CANDS[cand] if cand >= 0 else (-1, -1)
    return {"annotation_id": 1, "yes_no_answer": yes_no,
            "long_answer": {"start_token": s, "end_token": e, "candidate_index": cand},
            "short_answers": [{"start_token": a, "end_token": b} for a, b in shorts]}


def _example(eid: int, question: str, annotations: list[dict]) -> dict:
    return {"question_text": question, "example_id": eid,
            "document_url": "https://en.wikipedia.org//w/index.php?title=T&oldid=1",
            "document_text": DOC,
            "long_answer_candidates": [{"start_token": s, "end_token": e, "top_level": True}
                                       for s, e in CANDS],
            "annotations": annotations}


FIXTURE = [
    # A: short, short, long only (table), null, yes/no
    _example(1, "who is a", [_ann(0, ((1, 2),)), _ann(0, ((1, 3),)), _ann(1), _ann(),
                             _ann(0, yes_no="YES")]),
    # B: one short answer in a list item, four nulls
    _example(2, "where is z found today", [_ann(4, ((13, 14),)), _ann(), _ann(), _ann(),
                                           _ann()]),
    # C: one annotation (train-like), long only, a table row
    _example(3, "x y", [_ann(2)]),
]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _share(count: int, total: int) -> dict:
    return {"count": count, "share": count / total}


def test_hand_counted_fixture(tmp_path, capsys):
    path = _write(tmp_path / "tiny.jsonl", FIXTURE)
    assert main(["data", "stats", str(path), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["examples"], got["annotations"]) == (3, 11)
    assert got["annotations_per_example"] == {"1": 1, "5": 2}
    assert got["decision_paths"] == {"null": _share(5, 11), "long only": _share(2, 11),
                                     "yes/no": _share(1, 11), "short answer": _share(3, 11)}
    assert got["long_answer_share"] == 6 / 11
    assert got["long_answer_types"] == {
        "paragraph": _share(3, 6), "table": _share(1, 6), "table row": _share(1, 6),
        "list": _share(0, 6), "list item": _share(1, 6), "other": _share(0, 6)}
    assert got["yes_no"] == {"YES": 1, "NO": 0}
    # A: 4 long, 3 short (2 spans > 1 yes/no) -> short answer; B: 1 long -> null
    assert got["gold"]["examples"] == 2
    assert got["gold"]["paths"] == {"null": _share(1, 2), "long only": _share(0, 2),
                                    "yes/no": _share(0, 2), "short answer": _share(1, 2)}
    assert got["gold"]["long_answer_types"]["paragraph"] == _share(1, 1)
    assert got["agreement"]["long"] == {"0/5": 0, "1/5": 1, "2/5": 0, "3/5": 0, "4/5": 1,
                                        "5/5": 0}
    assert got["agreement"]["short"] == {"0/5": 0, "1/5": 1, "2/5": 0, "3/5": 1, "4/5": 0,
                                         "5/5": 0}
    lengths = got["lengths"]
    assert lengths["question tokens"] == {"count": 3, "mean": 10 / 3, "median": 3, "p90": 5,
                                          "p99": 5, "max": 5}
    assert lengths["document tokens"] == {"count": 3, "mean": 6.0, "median": 6, "p90": 6,
                                          "p99": 6, "max": 6}
    # long answers: P 3, P 3, Table 2, P 3, Li 1, Tr 2 words
    assert lengths["long answer tokens"] == {"count": 6, "mean": 14 / 6, "median": 2,
                                             "p90": 3, "p99": 3, "max": 3}
    assert lengths["short answer tokens"] == {"count": 3, "mean": 4 / 3, "median": 1,
                                              "p90": 2, "p99": 2, "max": 2}
    assert lengths["candidates"]["median"] == 5
    assert got["signature"].startswith("nq-data|paths:per-annotation|gold-thr:2|tokens:words|")


def test_two_way_example_with_exactly_threshold_long_answers(tmp_path):
    # Two annotators, both with a long answer (the paragraph, the table), no short answer:
    # 2 of 2 reach the threshold 2, so the gold is "long only", its type the first of the
    # tied types (paragraph); no annotation is null, so the long-answer share is 2/2.
    path = _write(tmp_path / "two.jsonl", [_example(4, "q", [_ann(0), _ann(1)])])
    got = nq_data_stats(read_nq(path)).to_json()
    assert (got["annotations"], got["long_answer_share"]) == (2, 1.0)
    assert got["decision_paths"]["long only"] == _share(2, 2)
    assert got["gold"]["examples"] == 1
    assert got["gold"]["paths"]["long only"] == _share(1, 1)
    assert got["gold"]["long_answer_types"]["paragraph"] == _share(1, 1)
    assert got["agreement"] == {"long": {"0/2": 0, "1/2": 0, "2/2": 1},
                                "short": {"0/2": 1, "1/2": 0, "2/2": 0}}


def test_shards_add_up_and_parallel_equals_serial(tmp_path, capsys):
    a = _write(tmp_path / "a.jsonl", FIXTURE[:1])
    b = _write(tmp_path / "b.jsonl", FIXTURE[1:])
    whole = _write(tmp_path / "whole.jsonl", FIXTURE)
    outs = []
    for argv in ([str(whole)], [str(a), str(b), "-j", "2"], [str(tmp_path / "[ab].jsonl")]):
        assert main(["data", "stats", *argv, "--format", "json"]) == 0
        d = json.loads(capsys.readouterr().out)
        d.pop("files")
        outs.append(d)
    assert outs[0] == outs[1] == outs[2]
    merged = nq_data_stats(read_nq(a)).merge(nq_data_stats(read_nq(b)))
    assert merged.to_json() == nq_data_stats(read_nq(whole)).to_json()
    with pytest.raises(ValueError, match="thresholds"):
        NqDataStats(threshold=3).merge(NqDataStats())


def test_nearest_rank_is_the_textbook_definition():
    values = [5, 1, 1, 2, 9, 9, 9, 3]
    for q in (0.01, 0.25, 0.5, 0.9, 0.99, 1.0):
        assert nearest_rank(Counter(values), q) == sorted(values)[math.ceil(q * len(values)) - 1]
    assert nearest_rank(Counter(), 0.5) is None


# --------------------------------------------------------------------------- real data

_TYPE = {"p": "paragraph", "table": "table", "tr": "table row", "ul": "list", "ol": "list",
         "dl": "list", "li": "list item", "dd": "list item", "dt": "list item"}


def _plain_stats(path: Path) -> dict:
    """The same statistics from the raw JSON, written independently of nqkit."""
    paths: Counter[str] = Counter()
    types: Counter[str] = Counter()
    gold: Counter[str] = Counter()
    agree_long: Counter[int] = Counter()
    agree_short: Counter[int] = Counter()
    doc_words, long_words, short_words, questions = [], [], [], []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = f.read().splitlines()
    for line in lines:
        d = json.loads(line)
        toks = d["document_tokens"]
        questions.append(len(d["question_tokens"]))
        doc_words.append(sum(1 for t in toks if not t["html_token"]))
        n_long = n_short = n_yes_no = n_spans = 0
        for a in d["annotations"]:
            la = a["long_answer"]
            has_long = la["start_token"] >= 0
            spans = [s for s in a["short_answers"] if s["start_token"] >= 0]
            if not has_long:
                paths["null"] += 1
            elif a["yes_no_answer"] != "NONE":
                paths["yes/no"] += 1
                n_yes_no += 1
            elif spans:
                paths["short answer"] += 1
                n_spans += 1
            else:
                paths["long only"] += 1
            if has_long:
                n_long += 1
                tag = toks[la["start_token"]]["token"].strip("<>/ ").lower()
                types[_TYPE.get(tag, "other")] += 1
                long_words.append(sum(1 for t in toks[la["start_token"]:la["end_token"]]
                                      if not t["html_token"]))
            if spans or a["yes_no_answer"] != "NONE":
                n_short += 1
            for s in spans:
                short_words.append(sum(1 for t in toks[s["start_token"]:s["end_token"]]
                                       if not t["html_token"]))
        agree_long[n_long] += 1
        agree_short[n_short] += 1
        gold["null" if n_long < 2 else "long only" if n_short < 2
             else "yes/no" if n_yes_no > n_spans else "short answer"] += 1
    return {"paths": paths, "types": types, "gold": gold, "agree_long": agree_long,
            "agree_short": agree_short, "doc": doc_words, "long": long_words,
            "short": short_words, "question": questions}


@pytest.mark.parametrize("name", ["nq-dev-sample10.jsonl.gz", "simplified-nq-dev-sample10.jsonl"])
def test_dev_sample_matches_a_plain_json_count(name, capsys):
    plain = _plain_stats(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz"))
    assert main(["data", "stats", str(shared_file("data", "nq", name)), "--format",
                 "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["examples"] == 10 and got["annotations"] == 50
    assert {k: v["count"] for k, v in got["decision_paths"].items() if v["count"]} == \
        dict(plain["paths"])
    assert {k: v["count"] for k, v in got["long_answer_types"].items() if v["count"]} == \
        dict(plain["types"])
    assert {k: v["count"] for k, v in got["gold"]["paths"].items() if v["count"]} == \
        dict(plain["gold"])
    assert got["agreement"]["long"] == {f"{k}/5": plain["agree_long"][k] for k in range(6)}
    assert got["agreement"]["short"] == {f"{k}/5": plain["agree_short"][k] for k in range(6)}
    for key, values in (("document tokens", plain["doc"]), ("long answer tokens", plain["long"]),
                        ("short answer tokens", plain["short"]),
                        ("question tokens", plain["question"])):
        s = sorted(values)
        assert got["lengths"][key] == {
            "count": len(s), "mean": pytest.approx(sum(s) / len(s), rel=1e-12),
            "median": s[math.ceil(0.5 * len(s)) - 1], "p90": s[math.ceil(0.9 * len(s)) - 1],
            "p99": s[math.ceil(0.99 * len(s)) - 1], "max": s[-1]}, key
    # the shared README's description of this sample: 4/10 gold long, 2/10 gold short,
    # 5/10 with at least one non-null long annotation, no yes/no answers
    assert got["gold"]["paths"]["null"]["count"] == 6
    assert got["gold"]["paths"]["short answer"]["count"] == 2
    assert 10 - got["agreement"]["long"]["0/5"] == 5
    assert got["yes_no"] == {"YES": 0, "NO": 0}


def test_table_output_and_picture(tmp_path, capsys):
    dev = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    png = tmp_path / "stats.png"
    assert main(["data", "stats", str(dev), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "decision paths (Figure 2)" in out and "annotator agreement" in out
    assert "long answer (any)     15  30.0%          49%" in out
    assert out.rstrip().splitlines()[-1].startswith("signature: nq-data|")
    blob = png.read_bytes()
    # the PNG signature, then IHDR: 10 x 7.5 inches at 100 dpi = 1000 x 750 pixels
    assert blob[:8] == b"\x89PNG\r\n\x1a\n" and blob[12:16] == b"IHDR"
    assert (int.from_bytes(blob[16:20], "big"), int.from_bytes(blob[20:24], "big")) == (
        1000, 750)


def test_train_sample_has_no_gold_or_agreement(capsys):
    train = shared_file("data", "nq", "simplified-nq-train-sample10.jsonl")
    assert main(["data", "stats", str(train), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["annotations_per_example"] == {"1": 10}
    assert "gold" not in got and "agreement" not in got
    plain = Counter()
    for line in train.read_text().splitlines():
        (a,) = json.loads(line)["annotations"]
        has_long = a["long_answer"]["start_token"] >= 0
        plain["null" if not has_long else "yes/no" if a["yes_no_answer"] != "NONE"
              else "short answer" if a["short_answers"] else "long only"] += 1
    assert {k: v["count"] for k, v in got["decision_paths"].items() if v["count"]} == \
        dict(plain)


def test_bad_input_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_text": "q"}\n')
    assert main(["data", "stats", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"nqkit: error: {bad}:1:")


def test_gold_header_reads_as_a_sentence_and_the_histogram_counts_whole_examples(capsys):
    dev = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    assert main(["data", "stats", str(dev)]) == 0
    assert ("gold paths (an answer when >= 2 annotators gave one), per example with >= 2 "
            "annotations (10 examples)") in capsys.readouterr().out
    import matplotlib.pyplot as plt

    fig = nq_data_stats(read_nq(dev)).figure()
    try:
        ticks = fig.axes[3].get_yticks()  # document lengths: counts of examples
        assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks), ticks
    finally:
        plt.close(fig)
