"""Every output of every ``nqkit`` command, on fixed real inputs, equals a recorded snapshot.

The snapshots in ``tests/snapshots/`` were recorded from the code *before* the redesign of
issue 18 (one retriever declaration, commands as declarations, one I/O floor): whatever
that redesign moves around, what a user sees and gets must not change. Each case below is
one command line; the test is parametrized by case id, so a failure names the command and
shows a diff of what changed.

What a case records, after making it independent of this run's directories and timings
(:func:`normalise`):

* the exit code, stdout and stderr;
* every file the case names (a directory: every file in it), in full when it is text of at
  most ``FULL_LIMIT`` bytes, else as ``sha256:<hex> size:<bytes>``; an index's
  ``params.json`` keeps only its stable keys (no paths, seconds, memory or versions).

Two snapshot files, so that a deliberate change of help text (options unified, say) can
be re-recorded and reviewed apart from the outputs, which should never change:

* ``tests/snapshots/outputs.json``: the cases of :data:`CASES`;
* ``tests/snapshots/help.json``: ``nqkit ... --help`` of every command that existed
  (rendered at ``COLUMNS=100``).

Not recorded: dense retrieval (its scores and rankings depend on the CPU's BLAS kernel),
``--pr-curve`` and Parquet files (bytes of third-party writers), ``nqkit browse``.

Re-recording (``NQKIT_RECORD_SNAPSHOTS=1 pytest tests/test_outputs_unchanged.py``) rewrites
both files from the code of the tree it runs in. Do it only for a deliberate, reviewed
change of output, and say in the commit which cases changed and why.
"""

from __future__ import annotations

import contextlib
import csv
import difflib
import gzip
import hashlib
import io
import json
import logging
import os
import re
import shlex
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nqkit.cli import main

from conftest import ROOT, SHARED, shared_file

SNAPSHOTS = ROOT / "tests" / "snapshots"
OUTPUTS = SNAPSHOTS / "outputs.json"
HELP = SNAPSHOTS / "help.json"
RECORD = os.environ.get("NQKIT_RECORD_SNAPSHOTS", "") not in ("", "0")
FULL_LIMIT = 4096  # bytes: larger outputs are recorded as sha256 and size
HELP_COLUMNS = "100"

NQ_DEV = "{shared}/data/nq/nq-dev-sample10.jsonl.gz"
NQ_SIMPLE_DEV = "{shared}/data/nq/simplified-nq-dev-sample10.jsonl"
NQ_SIMPLE_TRAIN = "{shared}/data/nq/simplified-nq-train-sample10.jsonl"
OPEN_DEV = "{shared}/data/nq-open/NQ-open.dev.jsonl"
AMBIG_DEV = "{shared}/data/ambignq/dev_light.json"
G_NQ = "{shared}/golden/nq-eval"
G_YESNO = "{shared}/golden/nq-eval-yesno"
G_OPEN = "{shared}/golden/nq-open"
G_AMBIG = "{shared}/golden/ambigqa"
MIRROR_PATH = "google-research-datasets/natural-questions/master/nq_open/NQ-open.dev.jsonl"


@dataclass(frozen=True)
class Case:
    """One command line (``{shared}`` is the shared data; paths are relative to the case
    workspace, where the command runs) and the files it writes that are recorded."""

    id: str
    cmd: str
    files: tuple[str, ...] = ()


def _c(id: str, cmd: str, *files: str) -> Case:
    return Case(id, cmd, files)


# In order: later cases read what earlier ones wrote (index -> retrieve, reqa build -> run).
CASES: list[Case] = [
    # ------------------------------------------------------------------ demo
    _c("demo", "demo"),
    _c("demo-output", "demo -o demo", "demo"),
    # ------------------------------------------------------------------ eval nq
    _c("eval-nq-table", f"eval nq --gold {NQ_DEV} --predictions {G_NQ}/mixed0.predictions.json"),
    _c("eval-nq-json",
       f"eval nq --gold {NQ_DEV} --predictions {G_NQ}/annotator0.predictions.json --format json"),
    _c("eval-nq-simplified-gold",
       f"eval nq --gold {NQ_SIMPLE_DEV} --predictions {G_NQ}/random1.predictions.json"),
    _c("eval-nq-yesno",
       f"eval nq --gold {G_YESNO}/gold.jsonl.gz --predictions {G_YESNO}/mixed2.predictions.json "
       "--format json"),
    _c("eval-nq-breakdown",
       f"eval nq --gold {NQ_DEV} --predictions {G_NQ}/mixed1.predictions.json --breakdown"),
    _c("eval-nq-bootstrap-per-item",
       f"eval nq --gold {NQ_DEV} --predictions {G_NQ}/mixed3.predictions.json --resamples 200 "
       "--seed 7 --per-item nq-items.jsonl --format json", "nq-items.jsonl"),
    _c("eval-nq-jsonl",
       f"eval nq --gold {NQ_DEV} --predictions {G_NQ}/dup_short_spans.predictions.json "
       "--format jsonl"),
    _c("eval-nq-thresholds",
       f"eval nq --gold {NQ_DEV} --predictions {G_NQ}/annotator2.predictions.json "
       "--long-threshold 1 --short-threshold 3 --no-gold-cache"),
    # ------------------------------------------------------------------ eval nq-open
    _c("eval-nq-open-table",
       f"eval nq-open --gold {OPEN_DEV} --predictions {G_OPEN}/first_answer.predictions.jsonl"),
    _c("eval-nq-open-json-missing",
       f"eval nq-open --gold {OPEN_DEV} --predictions {G_OPEN}/mixed.predictions.jsonl "
       "--allow-missing --format json"),
    _c("eval-nq-open-explain",
       f"eval nq-open --gold {OPEN_DEV} --predictions {G_OPEN}/last_answer_perturbed."
       "predictions.jsonl --explain"),
    _c("eval-nq-open-convention-squad",
       f"eval nq-open --gold {OPEN_DEV} --predictions {G_OPEN}/shuffled.predictions.jsonl "
       "--convention squad --format json"),
    _c("eval-nq-open-bootstrap-per-item",
       f"eval nq-open --gold {OPEN_DEV} --predictions {G_OPEN}/empty.predictions.jsonl "
       "--resamples 100 --seed 3 --per-item open-items.jsonl", "open-items.jsonl"),
    _c("eval-nq-open-jsonl",
       f"eval nq-open --gold {OPEN_DEV} --predictions {G_OPEN}/first_answer.predictions.jsonl "
       "--format jsonl"),
    # ------------------------------------------------------------------ eval ambigqa
    _c("eval-ambigqa-qa-table",
       f"eval ambigqa --gold {AMBIG_DEV} --predictions {G_AMBIG}/qa_edited.predictions.json"),
    _c("eval-ambigqa-answers-json",
       f"eval ambigqa --gold {AMBIG_DEV} --predictions {G_AMBIG}/answers_noisy.predictions.json "
       "--format json"),
    _c("eval-ambigqa-optimal-per-item",
       f"eval ambigqa --gold {AMBIG_DEV} --predictions "
       f"{G_AMBIG}/answers_first_alias.predictions.json --matching optimal "
       "--per-item ambig-items.jsonl", "ambig-items.jsonl"),
    _c("eval-ambigqa-bootstrap",
       f"eval ambigqa --gold {AMBIG_DEV} --predictions {G_AMBIG}/qa_prompt_copy.predictions.json "
       "--resamples 50 --seed 1 --format json"),
    # ------------------------------------------------------------------ eval human-bounds
    _c("eval-human-bounds-table",
       f"eval human-bounds --gold {NQ_DEV} --num-references 4 --splits all"),
    _c("eval-human-bounds-json",
       f"eval human-bounds --gold {NQ_DEV} --num-references 2 --format json"),
    _c("eval-human-bounds-votes",
       f"eval human-bounds --gold {NQ_DEV} --num-references 3 --beta 1 --votes 1"),
    _c("legacy-human-bounds", f"human-bounds --gold {NQ_DEV} --num-references 4"),
    # ------------------------------------------------------------------ compare
    _c("compare-nq-open-table",
       f"compare nq-open --gold {OPEN_DEV} {G_OPEN}/first_answer.predictions.jsonl "
       f"{G_OPEN}/shuffled.predictions.jsonl --resamples 200 --trials 300"),
    _c("compare-nq-open-json",
       f"compare nq-open --gold {OPEN_DEV} {G_OPEN}/last_answer_perturbed.predictions.jsonl "
       f"{G_OPEN}/mixed.predictions.jsonl --allow-missing --test bootstrap --resamples 100 "
       "--seed 5 --format json"),
    _c("compare-nq",
       f"compare nq --gold {NQ_DEV} {G_NQ}/random0.predictions.json "
       f"{G_NQ}/annotator1.predictions.json --resamples 100 --trials 100"),
    _c("compare-ambigqa",
       f"compare ambigqa --gold {AMBIG_DEV} {G_AMBIG}/answers_noisy.predictions.json "
       f"{G_AMBIG}/answers_first_alias.predictions.json --resamples 100 --trials 100 "
       "--format json"),
    # ------------------------------------------------------------------ simplify, convert
    _c("simplify", f"simplify {NQ_DEV} -o simplified.jsonl -j 1", "simplified.jsonl"),
    _c("convert-nq-open", f"convert nq-open {NQ_DEV} -o open.jsonl", "open.jsonl"),
    _c("convert-nq-open-max-tokens",
       f"convert nq-open {NQ_DEV} -o open10.jsonl --max-tokens 10", "open10.jsonl"),
    # ------------------------------------------------------------------ NQ baselines, predict
    _c("baseline-first_paragraph",
       f"baseline first_paragraph --gold {NQ_DEV} -o b-first.json --eval", "b-first.json"),
    _c("baseline-first_paragraph-json",
       f"baseline first_paragraph --gold {NQ_SIMPLE_DEV} -o b-first-s.json --eval "
       "--format json", "b-first-s.json"),
    _c("baseline-bm25_candidates",
       f"baseline bm25_candidates --gold {NQ_DEV} -o b-bm25.json --eval", "b-bm25.json"),
    _c("baseline-closest_question",
       f"baseline closest_question --gold {NQ_DEV} --train {NQ_SIMPLE_DEV} -o b-closest.json "
       "--eval --long-threshold 1", "b-closest.json"),
    _c("baseline-most_frequent",
       f"baseline most_frequent --gold {NQ_DEV} --train {NQ_SIMPLE_DEV} {NQ_SIMPLE_TRAIN} "
       "-o b-frequent.json --eval --format json", "b-frequent.json"),
    _c("baseline-most_frequent-no-eval",
       f"baseline most_frequent --gold {NQ_SIMPLE_TRAIN} --train {NQ_SIMPLE_TRAIN} "
       "-o b-frequent-train.json", "b-frequent-train.json"),
    _c("predict-first_paragraph",
       f"predict first_paragraph --gold {NQ_DEV} -o p-first.json", "p-first.json"),
    _c("predict-bm25_candidates",
       f"predict bm25_candidates --gold {NQ_DEV} -o p-bm25.json", "p-bm25.json"),
    _c("predict-closest_question",
       f"predict closest_question --gold {NQ_DEV} -o p-closest.json --train {NQ_SIMPLE_DEV}",
       "p-closest.json"),
    _c("eval-nq-of-baseline", f"eval nq --gold {NQ_DEV} --predictions p-bm25.json"),
    # ------------------------------------------------------------------ NQ-open, AmbigQA baselines
    _c("baseline-nearest-question",
       "baseline nearest-question --train {shared}/data/dpr/nq-dev.qa.tsv "
       "--gold open300.jsonl -o b-nearest.jsonl", "b-nearest.jsonl"),
    _c("baseline-nearest-question-json",
       "baseline nearest-question --train amb-train.json {shared}/data/dpr/nq-dev.qa.tsv "
       "--gold open300.jsonl -o b-nearest2.jsonl --format json", "b-nearest2.jsonl"),
    _c("legacy-baseline-open",
       "baseline-open nearest-question --train {shared}/data/dpr/nq-dev.qa.tsv "
       "--gold open300.jsonl -o b-nearest-old.jsonl", "b-nearest-old.jsonl"),
    _c("baseline-ambigqa-answers-tuned",
       "baseline ambigqa-answers --train amb-train.json --gold amb-dev.json "
       "-o b-amb-answers.json --tune-slice 200", "b-amb-answers.json"),
    _c("baseline-ambigqa-answers-given",
       "baseline ambigqa-answers --train amb-train.json --gold amb-dev.json "
       "-o b-amb-answers2.json --k 3 --tau 0.9 --format json", "b-amb-answers2.json"),
    _c("baseline-ambigqa-questions-prompt",
       "baseline ambigqa-questions --method prompt --gold amb-dev.json "
       "-o b-amb-prompt.json", "b-amb-prompt.json"),
    _c("baseline-ambigqa-questions-nearest-edit",
       "baseline ambigqa-questions --method nearest-edit --train amb-train.json "
       "--gold amb-dev.json -o b-amb-edit.json --format json", "b-amb-edit.json"),
    _c("eval-nq-open-of-baseline",
       "eval nq-open --gold open300.jsonl --predictions b-nearest.jsonl --format json"),
    # ------------------------------------------------------------------ ReQA
    _c("reqa-build-squad", "reqa build --from squad squad-small.json -o reqa-squad",
       "reqa-squad"),
    _c("reqa-build-nq-each",
       f"reqa build --from nq {NQ_DEV} -o reqa-nq --nq-annotations each --format json",
       "reqa-nq"),
    _c("reqa-build-nq-first", f"reqa build --from nq {NQ_DEV} -o reqa-nq1", "reqa-nq1"),
    _c("reqa-run-bm25",
       "reqa run --gold reqa-squad --trec reqa-bm25.trec --per-item reqa-bm25.ranks.jsonl",
       "reqa-bm25.trec", "reqa-bm25.ranks.jsonl"),
    _c("reqa-run-bm25-default-per-item",
       "reqa run --gold reqa-squad --k1 1.2 --b 0.5 --format json",
       "reqa-squad/runs"),
    _c("reqa-run-paragraph",
       "reqa run --gold reqa-squad --level paragraph --no-per-item --trec reqa-par.trec "
       "--hits 5", "reqa-par.trec"),
    _c("reqa-run-limit",
       "reqa run --gold reqa-squad --limit 50 --chunk-size 7 --per-item reqa-limit.ranks.jsonl",
       "reqa-limit.ranks.jsonl"),
    _c("reqa-run-nq", "reqa run --gold reqa-nq --per-item reqa-nq.ranks.jsonl --format json",
       "reqa-nq.ranks.jsonl"),
    _c("eval-reqa-table", "eval reqa --gold reqa-squad --predictions reqa-bm25.ranks.jsonl"),
    _c("eval-reqa-json",
       "eval reqa --gold reqa-squad --predictions reqa-bm25.ranks.jsonl --format json "
       "--resamples 100 --per-item reqa-items.jsonl", "reqa-items.jsonl"),
    _c("compare-reqa",
       "compare reqa --gold reqa-squad reqa-bm25.ranks.jsonl "
       "reqa-squad/runs/bm25-sentence.ranks.jsonl --resamples 100 --trials 100"),
    # ------------------------------------------------------------------ index, retrieve
    _c("index-build-bm25",
       "index build --passages passages.tsv --retriever bm25 -o idx --cluster none", "idx"),
    _c("index-build-bm25-shards-json",
       "index build --passages passages.tsv --retriever bm25 -o idx2 --cluster none "
       "--shard-size 1000 --k1 1.2 --b 0.75 --bm25-method robertson --format json", "idx2"),
    _c("index-verify", "index verify idx"),
    _c("retrieve-bm25-trec-eval",
       "retrieve --cluster none --index idx --gold qa200.tsv --hits 20 -o run.json "
       "--trec run.trec --eval", "run.json", "run.trec"),
    _c("retrieve-bm25-json",
       "retrieve --cluster none --index idx --gold qa200.tsv --hits 100 -o run100.json "
       "--eval --format json", "run100.json"),
    _c("retrieve-bm25-shards-tag",
       "retrieve --cluster none --index idx2 --gold open300.jsonl --hits 10 -o run2.json "
       "--trec run2.trec --tag my-run", "run2.json", "run2.trec"),
    _c("retrieve-bm25-ambignq-questions",
       "retrieve --cluster none --index idx --gold amb-dev.json --hits 5 -o run3.json "
       "--eval", "run3.json"),
    _c("eval-retrieval-table", "eval retrieval --predictions run100.json"),
    _c("eval-retrieval-json-topk",
       "eval retrieval --predictions run.json --topk 1 5 20 --format json "
       "--per-item retrieval-items.jsonl", "retrieval-items.jsonl"),
    _c("eval-retrieval-gold",
       "eval retrieval --predictions run100.json --gold qa200.tsv --resamples 100"),
    _c("eval-retrieval-trec",
       "eval retrieval --predictions run.trec --passages passages.tsv --gold qa200.tsv "
       "--topk 1 5 20"),
    _c("eval-retrieval-trec-first-qid",
       "eval retrieval --predictions run2.trec --passages passages.tsv --gold open300.jsonl "
       "--topk 1 10 --format json"),
    _c("compare-retrieval",
       "compare retrieval run.json run100.json --resamples 100 --trials 100"),
    # recorded before the redesign of issue 29 (engines out of the commands): lucene-exact,
    # qrels, the overlap commands
    _c("index-build-lucene-exact",
       "index build --passages passages.tsv --retriever bm25 --bm25-method lucene-exact "
       "-o idx3 --cluster none --shard-size 1500", "idx3"),
    _c("retrieve-lucene-exact-eval",
       "retrieve --cluster none --index idx3 --gold open300.jsonl --hits 20 "
       "--trec run3.trec --eval --format json", "run3.trec"),
    _c("convert-qrels-oracle",
       "convert qrels --oracle {shared}/data/nq-open/nq-open-oracle.jsonl.gz --gold "
       "open300.jsonl --passages passages.tsv -o oracle.qrels", "oracle.qrels"),
    _c("eval-retrieval-qrels",
       "eval retrieval --predictions run3.trec --passages passages.tsv --gold open300.jsonl "
       "--qrels oracle.qrels --topk 1 5 20 --resamples 50"),
    _c("overlap-labels",
       "overlap labels --gold open300.jsonl --train {shared}/data/dpr/nq-dev.qa.tsv "
       "-o labels.jsonl", "labels.jsonl"),
    _c("overlap-score-train",
       "overlap score --gold open300.jsonl --train {shared}/data/dpr/nq-dev.qa.tsv "
       "--predictions b-nearest.jsonl --resamples 100 --seed 2 --per-item overlap-items.jsonl "
       # the four conventions of docs/overlap.md's example (the default is every one)
       "--convention orqa --convention containment --convention lm-eval-v4 "
       "--convention squad", "overlap-items.jsonl"),
    _c("overlap-score-annotations-json",
       "overlap score --gold open300.jsonl --annotations labels.jsonl --annotated-test "
       "open300.jsonl --predictions b-nearest.jsonl --convention orqa --format json"),
    _c("overlap-score-ambigqa",
       "overlap score --gold amb-dev.json --train amb-train.json --predictions "
       "b-amb-answers.json --threshold 0.6 --scope all"),
    _c("overlap-official",
       "overlap official --annotations labels.jsonl --gold open300.jsonl "
       "--predictions rows300.txt"),
    _c("overlap-official-format",
       "overlap official --annotations labels.jsonl --gold open300.jsonl "
       "--predictions rows300.txt --format official"),
    _c("overlap-leak",
       "overlap leak --gold qa200.tsv --train {shared}/data/dpr/nq-dev.qa.tsv --examples 3"),
    _c("overlap-leak-json",
       "overlap leak --gold amb-dev.json --train amb-train.json --threshold 0.7 --answer-norm orqa "
       "--format json"),
    # ------------------------------------------------------------------ data
    _c("data-list", "data list"),
    _c("data-list-json", "data list --format json"),
    _c("data-info", "data info nq-open/dev"),
    _c("data-info-json", "data info dpr/nq-dev.qa --format json"),
    _c("data-get", "data get nq-open/dev --mirror mirror", "home/data/nq-open"),
    _c("data-info-on-disk", "data info nq-open/dev"),
    _c("data-path", "data path nq-open/dev"),
    _c("data-list-on-disk", "data list"),
    _c("data-export-jsonl", "data export nq-open/dev -o export.jsonl", "export.jsonl"),
    _c("data-export-stdout", "data export nq-open/dev -o -"),
    _c("eval-nq-open-by-name",
       f"eval nq-open --gold nq-open/dev --predictions {G_OPEN}/first_answer.predictions.jsonl"),
    _c("data-stats", f"data stats {NQ_DEV}"),
    _c("data-stats-json", f"data stats {NQ_SIMPLE_DEV} {NQ_SIMPLE_TRAIN} --format json"),
]

# The cases whose command line is spelled anew (issue 29: one spelling per concept) and
# the command each was recorded with: the old spellings still work, with a note, but the
# case runs the new one; what it prints and writes must be what the old one did.
RESPELLED: dict[str, str] = {
    "eval-nq-bootstrap-per-item":
        "eval nq --gold {shared}/data/nq/nq-dev-sample10.jsonl.gz --predictions "
        "{shared}/golden/nq-eval/mixed3.predictions.json --bootstrap 200 --seed 7 "
        "--per-item nq-items.jsonl --format json",
    "eval-nq-open-bootstrap-per-item":
        "eval nq-open --gold {shared}/data/nq-open/NQ-open.dev.jsonl --predictions "
        "{shared}/golden/nq-open/empty.predictions.jsonl --bootstrap 100 --seed 3 "
        "--per-item open-items.jsonl",
    "eval-ambigqa-bootstrap":
        "eval ambigqa --gold {shared}/data/ambignq/dev_light.json --predictions "
        "{shared}/golden/ambigqa/qa_prompt_copy.predictions.json --bootstrap 50 --seed 1 "
        "--format json",
    "baseline-first_paragraph":
        "baseline first_paragraph --input {shared}/data/nq/nq-dev-sample10.jsonl.gz -o "
        "b-first.json --eval",
    "baseline-first_paragraph-json":
        "baseline first_paragraph --input "
        "{shared}/data/nq/simplified-nq-dev-sample10.jsonl -o b-first-s.json --eval "
        "--format json",
    "baseline-bm25_candidates":
        "baseline bm25_candidates --input {shared}/data/nq/nq-dev-sample10.jsonl.gz -o "
        "b-bm25.json --eval",
    "baseline-closest_question":
        "baseline closest_question --input {shared}/data/nq/nq-dev-sample10.jsonl.gz "
        "--train {shared}/data/nq/simplified-nq-dev-sample10.jsonl -o b-closest.json "
        "--eval --long-threshold 1",
    "baseline-most_frequent":
        "baseline most_frequent --input {shared}/data/nq/nq-dev-sample10.jsonl.gz --train "
        "{shared}/data/nq/simplified-nq-dev-sample10.jsonl "
        "{shared}/data/nq/simplified-nq-train-sample10.jsonl -o b-frequent.json --eval "
        "--format json",
    "baseline-most_frequent-no-eval":
        "baseline most_frequent --input "
        "{shared}/data/nq/simplified-nq-train-sample10.jsonl --train "
        "{shared}/data/nq/simplified-nq-train-sample10.jsonl -o b-frequent-train.json",
    "predict-first_paragraph":
        "predict first_paragraph --input {shared}/data/nq/nq-dev-sample10.jsonl.gz -o "
        "p-first.json",
    "predict-bm25_candidates":
        "predict bm25_candidates --input {shared}/data/nq/nq-dev-sample10.jsonl.gz -o "
        "p-bm25.json",
    "predict-closest_question":
        "predict closest_question --input {shared}/data/nq/nq-dev-sample10.jsonl.gz -o "
        "p-closest.json --train {shared}/data/nq/simplified-nq-dev-sample10.jsonl",
    "baseline-nearest-question":
        "baseline nearest-question --memory {shared}/data/dpr/nq-dev.qa.tsv --questions "
        "open300.jsonl -o b-nearest.jsonl",
    "baseline-nearest-question-json":
        "baseline nearest-question --memory amb-train.json "
        "{shared}/data/dpr/nq-dev.qa.tsv --questions open300.jsonl -o b-nearest2.jsonl "
        "--format json",
    "legacy-baseline-open":
        "baseline-open nearest-question --memory {shared}/data/dpr/nq-dev.qa.tsv "
        "--questions open300.jsonl -o b-nearest-old.jsonl",
    "baseline-ambigqa-answers-tuned":
        "baseline ambigqa-answers --train amb-train.json --questions amb-dev.json -o "
        "b-amb-answers.json --tune-slice 200",
    "baseline-ambigqa-answers-given":
        "baseline ambigqa-answers --train amb-train.json --questions amb-dev.json -o "
        "b-amb-answers2.json --k 3 --tau 0.9 --format json",
    "baseline-ambigqa-questions-prompt":
        "baseline ambigqa-questions --method prompt --questions amb-dev.json -o "
        "b-amb-prompt.json",
    "baseline-ambigqa-questions-nearest-edit":
        "baseline ambigqa-questions --method nearest-edit --train amb-train.json "
        "--questions amb-dev.json -o b-amb-edit.json --format json",
    "reqa-run-paragraph":
        "reqa run --gold reqa-squad --level paragraph --no-per-item --trec reqa-par.trec "
        "--trec-depth 5",
    "eval-reqa-json":
        "eval reqa --gold reqa-squad --predictions reqa-bm25.ranks.jsonl --format json "
        "--bootstrap 100 --per-item reqa-items.jsonl",
    "index-build-bm25":
        "index build --corpus passages.tsv --retriever bm25 -o idx --cluster none",
    "index-build-bm25-shards-json":
        "index build --corpus passages.tsv --retriever bm25 -o idx2 --cluster none "
        "--shard-size 1000 --k1 1.2 --b 0.75 --bm25-method robertson --format json",
    "retrieve-bm25-trec-eval":
        "retrieve --cluster none --index idx --questions qa200.tsv --hits 20 -o run.json "
        "--trec run.trec --eval",
    "retrieve-bm25-json":
        "retrieve --cluster none --index idx --questions qa200.tsv --hits 100 -o "
        "run100.json --eval --format json",
    "retrieve-bm25-shards-tag":
        "retrieve --cluster none --index idx2 --questions open300.jsonl --hits 10 -o "
        "run2.json --trec run2.trec --tag my-run",
    "retrieve-bm25-ambignq-questions":
        "retrieve --cluster none --index idx --questions amb-dev.json --hits 5 -o "
        "run3.json --eval",
    "eval-retrieval-gold":
        "eval retrieval --predictions run100.json --gold qa200.tsv --bootstrap 100",
    "index-build-lucene-exact":
        "index build --corpus passages.tsv --retriever bm25 --bm25-method lucene-exact -o "
        "idx3 --cluster none --shard-size 1500",
    "retrieve-lucene-exact-eval":
        "retrieve --cluster none --index idx3 --questions open300.jsonl --hits 20 --trec "
        "run3.trec --eval --format json",
    "convert-qrels-oracle":
        "convert qrels --oracle {shared}/data/nq-open/nq-open-oracle.jsonl.gz --questions "
        "open300.jsonl --passages passages.tsv -o oracle.qrels",
    "eval-retrieval-qrels":
        "eval retrieval --predictions run3.trec --passages passages.tsv --gold "
        "open300.jsonl --qrels oracle.qrels --topk 1 5 20 --bootstrap 50",
    "overlap-labels":
        "overlap labels --test open300.jsonl --train {shared}/data/dpr/nq-dev.qa.tsv -o "
        "labels.jsonl",
    "overlap-score-train":
        "overlap score --test open300.jsonl --train {shared}/data/dpr/nq-dev.qa.tsv "
        "--predictions b-nearest.jsonl --bootstrap 100 --seed 2 --per-item "
        "overlap-items.jsonl",
    "overlap-score-annotations-json":
        "overlap score --test open300.jsonl --annotations labels.jsonl --annotated-test "
        "open300.jsonl --predictions b-nearest.jsonl --convention orqa --format json",
    "overlap-score-ambigqa":
        "overlap score --test amb-dev.json --train amb-train.json --predictions "
        "b-amb-answers.json --threshold 0.6 --scope all",
    "overlap-official":
        "overlap official --annotations labels.jsonl --references open300.jsonl "
        "--predictions rows300.txt",
    "overlap-official-format":
        "overlap official --annotations labels.jsonl --references open300.jsonl "
        "--predictions rows300.txt --format official",
    "overlap-leak":
        "overlap leak qa200.tsv {shared}/data/dpr/nq-dev.qa.tsv --examples 3",
    "overlap-leak-json":
        "overlap leak amb-dev.json amb-train.json --threshold 0.7 --answer-norm orqa "
        "--format json",
}

# The commands whose --help is recorded (every command and subcommand before the redesign).
HELP_COMMANDS: list[str] = [
    "", "eval", "eval ambigqa", "eval human-bounds", "eval nq", "eval nq-open", "eval reqa",
    "eval retrieval", "compare", "compare ambigqa", "compare nq", "compare nq-open",
    "compare reqa", "compare retrieval", "convert", "convert nq-open", "reqa", "reqa build",
    "reqa run", "data", "data list", "data info", "data get", "data path", "data export",
    "data stats", "index", "index build", "index verify", "demo", "simplify", "baseline",
    "baseline ambigqa-answers", "baseline ambigqa-questions", "baseline bm25_candidates",
    "baseline closest_question", "baseline dense_candidates", "baseline first_paragraph",
    "baseline most_frequent", "baseline nearest-question", "predict", "human-bounds",
    "baseline-open", "baseline-open ambigqa-answers", "baseline-open ambigqa-questions",
    "baseline-open nearest-question", "retrieve", "browse",
    # added before the redesign of issue 29
    "convert qrels", "data verify", "overlap", "overlap score", "overlap official",
    "overlap labels", "overlap leak",
]


# ---------------------------------------------------------------------------- inputs

def _write_inputs(work: Path) -> None:
    """The small inputs the cases read, cut from the shared data by this test's own code."""
    qa = shared_file("data", "dpr", "nq-test.qa.tsv").read_text(encoding="utf-8")
    (work / "qa200.tsv").write_text("".join(qa.splitlines(keepends=True)[:200]),
                                    encoding="utf-8")
    dev = shared_file("data", "nq-open", "NQ-open.dev.jsonl").read_text(encoding="utf-8")
    (work / "open300.jsonl").write_text("".join(dev.splitlines(keepends=True)[:300]),
                                        encoding="utf-8")
    amb_dev = json.loads(shared_file("data", "ambignq", "dev_light.json").read_text("utf-8"))
    (work / "amb-dev.json").write_text(json.dumps(amb_dev[:200]), encoding="utf-8")
    amb_train = json.loads(shared_file("data", "ambignq", "train_light.json").read_text("utf-8"))
    (work / "amb-train.json").write_text(json.dumps(amb_train[:2000]), encoding="utf-8")
    squad = json.loads(shared_file("data", "squad", "dev-v1.1.json").read_text("utf-8"))
    art = squad["data"][0]
    small = {"version": squad["version"],
             "data": [{"title": art["title"], "paragraphs": art["paragraphs"][:20]}]}
    (work / "squad-small.json").write_text(json.dumps(small), encoding="utf-8")
    _write_passages(work / "passages.tsv")
    # row-ordered predictions of open300.jsonl (nqkit overlap official): the first gold
    # answer of every third question, a wrong one of the others
    rows = [json.loads(line) for line in dev.splitlines()[:300]]
    (work / "rows300.txt").write_text(
        "".join((r["answer"][0] if i % 3 == 0 else "none") + "\n" for i, r in enumerate(rows)),
        encoding="utf-8")
    mirrored = work / "mirror" / MIRROR_PATH
    mirrored.parent.mkdir(parents=True)
    shutil.copyfile(shared_file("data", "nq-open", "NQ-open.dev.jsonl"), mirrored)


def _one_line(text: str) -> str:
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")


def _write_passages(path: Path) -> None:
    """A DPR passage file (id, text, title) of the real passages: every context of the
    biencoder sample, then the gold passage of every NQ-open oracle question (named
    ``oracle-<line>``), each distinct (title, text) once: 3,349 passages."""
    rows: list[tuple[str, str, str]] = []
    seen: set[tuple[str, str]] = set()
    ids: set[str] = set()

    def add(pid: str, text: str, title: str) -> None:
        if pid in ids or (title, text) in seen:
            return
        ids.add(pid)
        seen.add((title, text))
        rows.append((pid, _one_line(text), _one_line(title)))

    records = json.loads(shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
                         .read_text(encoding="utf-8"))
    for rec in records:
        for key in ("positive_ctxs", "negative_ctxs", "hard_negative_ctxs"):
            for c in rec[key]:
                add(str(c["passage_id"]), c["text"], c["title"])
    with gzip.open(shared_file("data", "nq-open", "nq-open-oracle.jsonl.gz"), "rt",
                   encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            c = json.loads(line)["ctxs"][0]
            add(f"oracle-{line_no}", c["text"], c["title"])
    with open(path, "w", encoding="utf-8", newline="") as out:
        w = csv.writer(out, delimiter="\t", lineterminator="\n")
        w.writerow(("id", "text", "title"))
        w.writerows(rows)


# ---------------------------------------------------------------------------- normalising

_TIME = re.compile(r"\b\d+(?:\.\d+)?(?: ?(?:s|ms|min|sec|seconds))\b")
_RATE = re.compile(r"\b\d+(?:\.\d+)? ?(?:[kKMGT]i?B|B|items|it|questions|passages)/s\b")
_JSON_TIME = re.compile(r'("\w*seconds\w*": )-?\d+(?:\.\d+)?(?:e-?\d+)?')
_TIMESTAMP = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")
# a downloaded file's stamp in its record (size, mtime in ns, inode: this file system's)
_STAMP = re.compile(r'("stamp": )\[[\d,\s]*\]')


def normalise(text: str, work: Path) -> str:
    """``text`` without this run's directories, timings and clock times."""
    text = text.replace(str(work), "{work}").replace(str(SHARED), "{shared}")
    text = _TIMESTAMP.sub("<timestamp>", text)
    text = _STAMP.sub(r"\1<stamp>", text)
    text = _JSON_TIME.sub(r"\1<time>", text)
    text = _RATE.sub("<rate>", text)
    return _TIME.sub("<time>", text)


# keys of an index's params.json that do not depend on where, when or with what it was built
_PARAMS_DROP = {"corpus": ("path",), "facts": ("peak_rss_mb",)}
_PARAMS_DROP_TOP = ("build", "versions")


def _stable_params(data: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in data.items() if k not in _PARAMS_DROP_TOP}
    for key, drop in _PARAMS_DROP.items():
        if isinstance(out.get(key), dict):
            out[key] = {k: v for k, v in out[key].items() if k not in drop}
    return out


def _blob(data: bytes, work: Path) -> str | list[str]:
    """Text of at most FULL_LIMIT bytes as its lines; anything else as sha256 and size of
    its bytes with this run's directories replaced (its timings, if any, are kept)."""
    if len(data) <= FULL_LIMIT:
        try:
            return normalise(data.decode("utf-8"), work).split("\n")
        except UnicodeDecodeError:
            pass
    data = (data.replace(os.fsencode(work), b"{work}")
            .replace(os.fsencode(SHARED), b"{shared}"))
    return f"sha256:{hashlib.sha256(data).hexdigest()} size:{len(data)}"


def _record_file(path: Path, work: Path) -> str | list[str]:
    data = path.read_bytes()
    if path.name == "params.json" and b'"nqkit-passage-index"' in data:
        stable = json.dumps(_stable_params(json.loads(data)), indent=1, sort_keys=True)
        return normalise(stable, work).split("\n")
    return _blob(data, work)


def _record_files(names: tuple[str, ...], work: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        path = work / name
        if path.is_dir():
            # lock files are how a download guards itself, not an output; the provenance
            # sidecars came after these snapshots (tests/test_provenance.py checks them)
            for f in sorted(p for p in path.rglob("*") if p.is_file() and p.suffix != ".lock"
                            and not p.name.endswith(".provenance.json")):
                out[f.relative_to(work).as_posix()] = _record_file(f, work)
        elif path.exists():
            out[name] = _record_file(path, work)
        else:
            out[name] = "(missing)"
    return out


# ---------------------------------------------------------------------------- running

@contextlib.contextmanager
def _in(work: Path, **env: str) -> Iterator[None]:
    old_cwd = Path.cwd()
    old_env = {k: os.environ.get(k) for k in (*env, "NQKIT_REGISTRY")}
    os.environ.pop("NQKIT_REGISTRY", None)
    os.environ.update(env)
    os.chdir(work)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _run(argv: list[str]) -> tuple[int, bytes, str]:
    """Exit code, stdout bytes and stderr of ``nqkit argv`` run in this process."""
    out_bytes = io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", newline="\n", write_through=True)
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:  # --help
            code = e.code if isinstance(e.code, int) else 0
        except Exception as e:  # recorded, so that only this case fails
            code = -1
            err.write(f"EXCEPTION {type(e).__name__}: {e}\n")
        out.flush()
    return code, out_bytes.getvalue(), err.getvalue()


def _argv(cmd: str) -> list[str]:
    return shlex.split(cmd.replace("{shared}", str(SHARED)))


def run_case(case: Case, work: Path) -> dict[str, Any]:
    code, out, err = _run(_argv(case.cmd))
    return {"cmd": f"nqkit {case.cmd}", "exit": code, "stdout": _blob(out, work),
            "stderr": normalise(err, work).split("\n"),
            "files": _record_files(case.files, work)}


def run_help(cmd: str, work: Path) -> dict[str, Any]:
    code, out, err = _run([*cmd.split(), "--help"])
    return {"exit": code, "stdout": normalise(out.decode("utf-8"), work).split("\n"),
            "stderr": normalise(err, work).split("\n")}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every case and every help text, run once, in order, in one workspace."""
    work = tmp_path_factory.mktemp("outputs")
    _write_inputs(work)
    (work / "home").mkdir()
    got: dict[str, dict[str, Any]] = {}
    # bm25s logs every index build at DEBUG: kept out of the report of a failure
    bm25s_log = logging.getLogger("bm25s")
    level = bm25s_log.level
    bm25s_log.setLevel(logging.WARNING)
    with _in(work, NQKIT_HOME=str(work / "home"), COLUMNS=HELP_COLUMNS):
        for case in CASES:
            got[case.id] = run_case(case, work)
        for cmd in HELP_COMMANDS:
            got[f"help:{cmd}"] = run_help(cmd, work)
    bm25s_log.setLevel(level)
    if RECORD:
        SNAPSHOTS.mkdir(exist_ok=True)
        _dump(OUTPUTS, {c.id: got[c.id] for c in CASES})
        _dump(HELP, {cmd or "nqkit": got[f"help:{cmd}"] for cmd in HELP_COMMANDS})
    return got


def _dump(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        pytest.fail(f"{path.relative_to(ROOT)} is missing: record it with "
                    "NQKIT_RECORD_SNAPSHOTS=1 (see this module's docstring)")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _render(entry: dict[str, Any]) -> list[str]:
    """An entry as lines, so that a failure shows a readable diff."""
    lines: list[str] = []
    for key, value in entry.items():
        if key == "files":
            for name, content in value.items():
                lines += _render_value(f"file {name}", content)
        else:
            lines += _render_value(key, value)
    return lines


def _render_value(key: str, value: Any) -> list[str]:
    if isinstance(value, list):
        return [f"--- {key}", *value]
    return [f"--- {key}: {value}"]


def _compare(expected: dict[str, Any] | None, got: dict[str, Any], what: str) -> None:
    if RECORD:
        return
    if expected is None:
        pytest.fail(f"{what}: not in the snapshot (a new case? record it deliberately)")
    # what a case prints and writes, not how it was spelled (test_recorded_commands)
    expected = {k: v for k, v in expected.items() if k != "cmd"}
    got = {k: v for k, v in got.items() if k != "cmd"}
    if got != expected:
        diff = "\n".join(difflib.unified_diff(_render(expected), _render(got),
                                              "recorded", "now", lineterm="", n=2))
        pytest.fail(f"{what} changed:\n{diff}", pytrace=False)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_output_unchanged(case: Case, results: dict[str, dict[str, Any]]) -> None:
    got = results[case.id]
    assert got["exit"] != -1 or RECORD, "\n".join(got["stderr"])
    _compare(_load(OUTPUTS).get(case.id) if not RECORD else None, got, f"`{got['cmd']}`")


@pytest.mark.parametrize("cmd", HELP_COMMANDS, ids=[c or "nqkit" for c in HELP_COMMANDS])
def test_help_unchanged(cmd: str, results: dict[str, dict[str, Any]]) -> None:
    got = results[f"help:{cmd}"]
    _compare(_load(HELP).get(cmd or "nqkit") if not RECORD else None, got,
             f"`nqkit {cmd} --help`".replace("  ", " "))


def test_recorded_commands() -> None:
    # each case runs the command it was recorded with, or that command spelled anew
    if RECORD:
        return
    recorded = _load(OUTPUTS)
    for case in CASES:
        assert recorded[case.id]["cmd"] == "nqkit " + RESPELLED.get(case.id, case.cmd), case.id
    assert set(RESPELLED) <= {c.id for c in CASES}
    assert all(RESPELLED[c.id] != c.cmd for c in CASES if c.id in RESPELLED)


def test_every_recorded_case_is_still_run() -> None:
    # a case deleted from CASES (or a command dropped from HELP_COMMANDS) would otherwise
    # silently stop being checked
    if RECORD:
        return
    assert sorted(_load(OUTPUTS)) == sorted(c.id for c in CASES)
    assert sorted(_load(HELP)) == sorted(c or "nqkit" for c in HELP_COMMANDS)


def test_normalise_strips_paths_and_timings(tmp_path: Path) -> None:
    text = (f"index written to {tmp_path}/idx in 2.3 s (12.5 MB/s); {SHARED}/data/x "
            "3,349 passages, 3.5 MB, k1 0.9, top-20 "
            '{"seconds": 0.28, "store_seconds": 1e-05, "bytes": 381} 2026-11-25T09:13:56Z')
    assert normalise(text, tmp_path) == (
        "index written to {work}/idx in <time> (<rate>); {shared}/data/x 3,349 passages, "
        '3.5 MB, k1 0.9, top-20 {"seconds": <time>, "store_seconds": <time>, "bytes": 381} '
        "<timestamp>")
