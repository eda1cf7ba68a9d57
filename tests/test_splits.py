"""Split identity (nqkit.splits): fingerprints of the known splits, the identification
rules, and the metrics that name their split and refuse predictions of another one.

Expected labels come from which file is which (the shared data README and the papers),
the relations between splits are re-derived here with plain loops over the files, and the
subset digest is recomputed from the documented hash spec.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import unicodedata
from pathlib import Path

import pytest

from nqkit.errors import InputError
from nqkit.formats.ambignq import AmbigQaPrediction, read_ambignq
from nqkit.formats.dpr import DprContext, DprResult
from nqkit.formats.nq_open import NqOpenExample, NqOpenPrediction
from nqkit.metrics.ambigqa import score_ambigqa
from nqkit.metrics.answer_recall import score_answer_recall
from nqkit.metrics.nq_open import score_nq_open
from nqkit.splits import check_split, identify, known_splits, match_split, normalize_key
from nqkit.tasks.base import get_task

from conftest import ROOT, SHARED, shared_file


def _jsonl_questions(*parts: str) -> list[str]:
    return [json.loads(line)["question"]
            for line in shared_file("data", *parts).read_text().splitlines()]


def _tsv_questions(*parts: str) -> list[str]:
    return [line.split("\t")[0] for line in shared_file("data", *parts).read_text().splitlines()]


def _ambignq(name: str) -> list[dict]:
    return json.loads(shared_file("data", "ambignq", name).read_text())


def nq_open_dev() -> list[str]:
    return _jsonl_questions("nq-open", "NQ-open.dev.jsonl")


def efficientqa_dev() -> list[str]:
    return _jsonl_questions("nq-open", "NQ-open.efficientqa.dev.1.1.jsonl")


def dpr_dev() -> list[str]:
    return _tsv_questions("dpr", "nq-dev.qa.tsv")


# --------------------------------------------------------------------------- the rules

def test_every_held_split_names_itself_and_dpr_test_is_nq_open_dev():
    assert identify(nq_open_dev()) == "nq-open/dev"
    assert identify(efficientqa_dev()) == "efficientqa/dev"
    assert identify(dpr_dev()) == "dpr/nq-dev.qa"
    # DPR's "nq-test" holds NQ-open's dev questions: the same split, one canonical name
    assert identify(_tsv_questions("dpr", "nq-test.qa.tsv")) == "nq-open/dev"
    assert identify([d["question"] for d in _ambignq("dev_light.json")]) == "ambignq/dev"
    assert identify([d["question"] for d in _ambignq("train_light.json")]) == "ambignq/train"
    assert identify([d["id"] for d in _ambignq("dev_light.json")], "id") == "ambignq/dev"
    # order and repeats do not matter
    assert identify(list(reversed(nq_open_dev())) * 2) == "nq-open/dev"


def test_the_relations_the_fingerprints_rely_on_hold_in_the_files():
    # plain re-derivation: AmbigNQ dev prompts (capitalised, with '?') are DPR/ORQA dev
    # questions, not NQ-open dev ones; AmbigNQ train shares none with DPR dev
    def plain(q: str) -> str:
        return q.lower().rstrip("?").strip()

    dev = {plain(q) for q in dpr_dev()}
    amb_dev = [plain(d["question"]) for d in _ambignq("dev_light.json")]
    amb_train = [plain(d["question"]) for d in _ambignq("train_light.json")]
    assert all(q in dev for q in amb_dev)
    assert not any(q in dev for q in amb_train)
    assert not set(amb_dev) & {plain(q) for q in nq_open_dev()}
    assert not set(nq_open_dev()) & set(efficientqa_dev())
    by_name = {s.name: s for s in known_splits()}
    assert by_name["ambignq/dev"].parent == "dpr/nq-dev.qa"
    assert by_name["dpr/nq-dev.qa"].parent == "nq-open/train"
    # published counts: NQ-open README; Lee et al. 2019 / DPR Table 1 (79,168 + 8,757)
    assert (by_name["nq-open/train"].count, by_name["dpr/nq-train.qa"].count,
            by_name["dpr/nq-dev.qa"].count) == (87_925, 79_168, 8_757)
    assert by_name["efficientqa/test"].held == "none"


def test_normalisation_joins_the_spellings_of_one_question():
    assert normalize_key("Who plays the doctor in  dexter season 1?") == \
        "who plays the doctor in dexter season 1"
    assert normalize_key("ﬁrst ?") == "first"  # NFKC ligature, space before '?'
    assert normalize_key(" 42 ", "id") == "42"


def _expected_digest(questions: list[str]) -> str:
    """The documented spec, re-implemented: BLAKE2b-64 of 'question' NUL normalised,
    little-endian, sorted unique, then BLAKE2b-24 of the concatenation."""
    def norm(q: str) -> str:
        q = " ".join(unicodedata.normalize("NFKC", q).casefold().split())
        return q[:-1].rstrip() if q.endswith("?") else q
    hs = sorted({int.from_bytes(hashlib.blake2b(b"question\0" + norm(q).encode(),
                                                digest_size=8).digest(), "little")
                 for q in questions})
    blob = b"".join(h.to_bytes(8, "little") for h in hs)
    return hashlib.blake2b(blob, digest_size=3).hexdigest()


def test_a_subset_names_the_smallest_split_holding_it_with_size_and_digest():
    dev = nq_open_dev()
    some = dev[:200:2]  # 100 questions, no stretch of the file
    assert identify(some) == f"nq-open/dev[100#{_expected_digest(some)}]"
    assert identify(dev[1:201:2]) != identify(some)  # same size, other questions
    amb = [d["question"] for d in _ambignq("dev_light.json")][:10]
    m = match_split(amb)
    assert (m.split, m.kind, m.size, m.split_size) == ("ambignq/dev", "subset", 10, 2002)
    # DPR dev questions outside AmbigNQ dev: a subset of dpr/nq-dev.qa
    amb_all = {normalize_key(d["question"]) for d in _ambignq("dev_light.json")}
    rest = [q for q in dpr_dev() if normalize_key(q) not in amb_all][:50]
    assert match_split(rest).split == "dpr/nq-dev.qa"
    # known members of two held sub-splits of NQ-open train: a subset of the train split
    both = dpr_dev()[:5] + [d["question"] for d in _ambignq("train_light.json")][:5]
    assert (match_split(both).split, match_split(both).kind) == ("nq-open/train", "subset")


def test_a_stretch_of_a_split_file_is_named_by_its_lines():
    # lm-eval --limit 1000 scores the first 1,000 questions in file order
    dev = nq_open_dev()
    assert identify(dev[:1000]) == "nq-open/dev[:1000]"
    assert identify(dev[1000:2500]) == "nq-open/dev[1000:2500]"
    assert identify(list(reversed(dev[:1000]))) == "nq-open/dev[:1000]"  # order: no matter
    m = match_split(dev[:1000])
    assert (m.split, m.kind, m.span) == ("nq-open/dev", "subset", (0, 1000))
    from nqkit.splits import describe

    assert describe(m) == "the first 1,000 of the 3,610 questions of nq-open/dev"
    # DPR's nq-test.qa holds NQ-open dev's questions in its own order: its first lines are
    # named as its own, the split staying nq-open/dev
    dpr_test = _tsv_questions("dpr", "nq-test.qa.tsv")
    assert dpr_test[:1000] != dev[:1000]
    m = match_split(dpr_test[:1000])
    assert (m.label, m.split) == ("dpr/nq-test.qa[:1000]", "nq-open/dev")
    assert describe(m).endswith("of nq-open/dev in dpr/nq-test.qa's order")
    assert identify(dpr_dev()[10:20]) == "dpr/nq-dev.qa[10:20]"
    amb = [d["question"] for d in _ambignq("dev_light.json")]
    assert identify(amb[:50]) == "ambignq/dev[:50]"


def test_mixtures_unknown_questions_and_count_only_splits_are_custom():
    assert identify(nq_open_dev() + efficientqa_dev()) == "custom"
    assert identify([*nq_open_dev()[:-1], "a question of my own"]) == "custom"
    assert identify([]) == "custom"
    # EfficientQA test is known by its count only: 1,800 questions are never named so
    assert identify([f"q{i}" for i in range(1800)]) == "custom"


def test_splits_held_in_part_are_named_by_count_and_known_members():
    train_known = dpr_dev() + [d["question"] for d in _ambignq("train_light.json")]
    fillers = [f"filler question {i}" for i in range(87_925 - len(train_known))]
    m = match_split(train_known + fillers)
    assert (m.label, m.kind) == ("nq-open/train", "count")
    # one known member missing, or one question of an unrelated split: not that split
    assert identify(train_known[1:] + fillers + ["another"]) == "custom"
    assert identify(train_known + fillers[1:] + [nq_open_dev()[0]]) == "custom"
    amb_train = [d["question"] for d in _ambignq("train_light.json")]
    dpr_train = amb_train + [f"f{i}" for i in range(79_168 - len(amb_train))]
    assert match_split(dpr_train).label == "dpr/nq-train.qa"
    # DPR dev questions are not DPR train questions
    assert identify([*dpr_train[:-1], dpr_dev()[0]]) == "custom"


def test_the_fingerprints_are_small_and_regenerate_from_the_shared_data(tmp_path):
    data = ROOT / "src" / "nqkit" / "data"
    size = sum((data / f"split-fingerprints.{ext}").stat().st_size for ext in ("json", "bin"))
    assert size < 1_000_000
    shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    spec = importlib.util.spec_from_file_location(
        "make_split_fingerprints", ROOT / "scripts" / "make_split_fingerprints.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main(["--shared", str(SHARED), "--check"]) == 0
    assert script.main(["--shared", str(SHARED), "--out", str(tmp_path)]) == 0
    for ext in ("json", "bin"):
        name = f"split-fingerprints.{ext}"
        assert (tmp_path / name).read_bytes() == (data / name).read_bytes()


# --------------------------------------------------------------------------- refusals

def test_check_split_names_both_splits_in_one_line():
    with pytest.raises(InputError) as e:
        check_split(set(nq_open_dev()), efficientqa_dev()[:5], where="p.jsonl")
    assert e.value.message == (
        "p.jsonl: the 5 predicted questions are the first 5 of the 1,800 questions of "
        "efficientqa/dev, the gold holds the questions of nq-open/dev: none of the "
        "predictions is in the gold — score the predictions against the gold of "
        "efficientqa/dev, or predict the questions of nq-open/dev")
    # the same split written differently (AmbigNQ's capitalised prompts against DPR dev)
    amb = [d["question"] for d in _ambignq("dev_light.json")][:2]
    with pytest.raises(InputError, match=r"written differently .*write the questions exactly"):
        check_split(set(dpr_dev()), amb, where="p.jsonl")
    # partly in the references: no refusal, the rest is named
    r = check_split(set(nq_open_dev()), nq_open_dev()[:3] + efficientqa_dev()[:2], where=None)
    assert (r.references.label, r.unused) == ("nq-open/dev", 2)
    assert r.unused_split is not None and r.unused_split.split == "efficientqa/dev"


def test_nq_open_signature_names_the_split_and_numbers_are_unchanged():
    refs = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    preds = shared_file("golden", "nq-open", "first_answer.predictions.jsonl")
    official = json.loads(shared_file("golden", "nq-open", "first_answer.official.json")
                          .read_text())
    r = get_task("nq-open").run(gold=[str(refs)], predictions=str(preds))
    assert r.signature.startswith("nq-open|split:nq-open/dev|answer-field:answer|")
    assert r.official["num_correct"] == official["num_correct"]


def test_nq_open_partly_other_split_warning_names_it():
    dev = nq_open_dev()
    refs = [NqOpenExample(q, ("x",)) for q in dev]
    preds = [NqOpenPrediction(q, "x") for q in dev[:-2]]
    preds += [NqOpenPrediction(q, "x") for q in efficientqa_dev()[:2]]
    r = score_nq_open(refs, preds, missing="wrong")
    (w,) = r.warnings
    assert w.code == "other-split"
    assert ("2 predictions are for questions not in the gold (they are the first 2 of the "
            "1,800 questions of efficientqa/dev) and 2 gold questions") in w.message
    assert r.signature.startswith("nq-open|split:nq-open/dev|")


def test_nq_open_task_refuses_dpr_dev_predictions_against_nq_open_dev(tmp_path):
    # the classic mix-up: ORQA/DPR "dev" predictions scored against NQ-open's dev file
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"question": q, "prediction": "x"}) + "\n"
                             for q in dpr_dev()))
    refs = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    with pytest.raises(InputError) as e:
        get_task("nq-open").run(gold=[str(refs)], predictions=str(preds), allow_missing=True)
    assert e.value.message == (
        f"{preds}: the 8,757 predicted questions are the questions of dpr/nq-dev.qa, the "
        "gold holds the questions of nq-open/dev: none of the predictions is in the "
        "gold — score the predictions against the gold of dpr/nq-dev.qa, or "
        "predict the questions of nq-open/dev")


def test_ambigqa_signature_and_ids_of_another_split():
    dev = list(read_ambignq(shared_file("data", "ambignq", "dev_light.json")))
    preds = {ex.id: AmbigQaPrediction(("x",), None) for ex in dev}
    r = score_ambigqa(dev, preds)
    assert r.signature.startswith("ambigqa|split:ambignq/dev|metrics:ans|")
    train_ids = [d["id"] for d in _ambignq("train_light.json")]
    with pytest.raises(InputError) as e:
        score_ambigqa(dev, {k: AmbigQaPrediction(("x",), None) for k in train_ids})
    assert e.value.message.startswith(
        "the 10,036 predicted ids are the ids of ambignq/train, the gold holds the ids of "
        "ambignq/dev: none of the predictions is in the gold")
    mixed = {**preds, train_ids[0]: AmbigQaPrediction(("x",), None)}
    with pytest.raises(InputError, match=r"1 predicted id\(s\) are not in the gold "
                       r"\(e.g. .*\); they are 1 of the 10,036 ids of ambignq/train"):
        score_ambigqa(dev, mixed)


def test_retrieval_signature_names_the_split_of_its_questions():
    ctx = (DprContext("1", "t", "some text"),)
    test_qs = _tsv_questions("dpr", "nq-test.qa.tsv")
    r = score_answer_recall([DprResult(q, ("text",), ctx) for q in test_qs], [1])
    assert r.signature.startswith("retrieval|split:nq-open/dev|recall:answer|")
    r = score_answer_recall([DprResult("my question", ("text",), ctx)], [1])
    assert r.signature.startswith("retrieval|split:custom|")


def test_shared_readme_counts_match_the_fingerprints():
    readme = Path(shared_file("data", "README.md")).read_text()
    assert "| 3,610 |" in readme and "| 8,757 |" in readme
    by_name = {s.name: s.count for s in known_splits()}
    assert (by_name["nq-open/dev"], by_name["dpr/nq-dev.qa"]) == (3610, 8757)
