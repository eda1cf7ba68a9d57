"""lm-evaluation-harness end to end: ``lm_eval.simple_evaluate`` on its own ``nq_open``
task, the model a replay of recorded generations, against ``--convention lm-eval-v4``
(issue 31).

The task is lm-eval 0.4.13's installed ``nq_open.yaml`` with one change: the dataset is
read from ``NQ-open.dev.jsonl`` (the questions of the Hugging Face ``nq_open`` validation
split) instead of the hub, its cache in the test's folder; nothing loads from a hub. The
model answers every request with a recorded generation cut as lm-eval's Hugging Face
backend cuts it (``postprocess_generated_text`` at the request's ``until``): one of 24
shapes an LLM prints per question (``em_strings.llm_shapes``), each shape on 150
questions. lm-eval then runs its own filters, metric, any-gold rule and aggregation, and
writes its ``--log_samples`` file with its own ``EvaluationTracker``; nqkit reads that
file as gold and predictions. Needs lm-eval installed with its requirements (``datasets``,
``evaluate``, ...), as README's test command does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nqkit.cli import main

from conftest import require, shared_file
from em_strings import llm_shapes

SHAPES = 24


@pytest.fixture(scope="module")
def lm_eval_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    require("lm_eval.evaluator")
    require("datasets")
    import lm_eval
    import yaml
    from lm_eval.api.model import LM
    from lm_eval.evaluator import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.models.utils import postprocess_generated_text
    from lm_eval.tasks import TaskManager

    root = tmp_path_factory.mktemp("lm-eval-e2e")
    dev = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    config = yaml.safe_load((Path(lm_eval.__file__).parent / "tasks" / "nq_open" /
                             "nq_open.yaml").read_text(encoding="utf-8"))
    assert config["metadata"]["version"] == 4.0
    config.update(task="nq_open_local", dataset_path="json",
                  dataset_kwargs={"data_files": {"train": str(dev), "validation": str(dev)},
                                  "cache_dir": str(root / "cache")})
    (root / "tasks").mkdir()
    (root / "tasks" / "nq_open_local.yaml").write_text(yaml.safe_dump(config),
                                                       encoding="utf-8")
    cases = llm_shapes()
    questions = [json.loads(x)["question"] for x in dev.read_text(encoding="utf-8").splitlines()]
    assert len(cases) == SHAPES * len(questions)
    said = {q: cases[SHAPES * i + i % SHAPES][0] for i, q in enumerate(questions)}

    class Replay(LM):
        def generate_until(self, requests, disable_tqdm=False):
            return [postprocess_generated_text(said[r.doc["question"]], r.args[1]["until"],
                                               None) for r in requests]

        def loglikelihood(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError

    out = simple_evaluate(model=Replay(), tasks=["nq_open_local"], num_fewshot=0,
                          task_manager=TaskManager(include_path=str(root / "tasks"),
                                                   include_defaults=False),
                          log_samples=True)
    # written as lm_eval's command line writes --log_samples: the aggregated results
    # first (which dates the run), then each task's samples
    tracker = EvaluationTracker(output_path=str(root / "out"))
    tracker.general_config_tracker.model_name_sanitized = "replay"
    samples = out.pop("samples")
    tracker.save_results_aggregated(results=out, samples=samples)
    tracker.save_results_samples(task_name="nq_open_local", samples=samples["nq_open_local"])
    (path,) = (root / "out").rglob("samples_nq_open_local_*.jsonl")
    return {"results": out["results"]["nq_open_local"], "samples": path, "said": said,
            "root": root}


def test_lm_evals_own_number_and_verdicts_are_nqkits(lm_eval_run, tmp_path, capsys):
    samples = [json.loads(x) for x in
               lm_eval_run["samples"].read_text(encoding="utf-8").splitlines()]
    assert len(samples) == 3610
    # nqkit on the generations as plain lines, against the official gold file
    preds = tmp_path / "said.jsonl"
    preds.write_text("".join(json.dumps({"question": q, "prediction": s}) + "\n"
                             for q, s in lm_eval_run["said"].items()), encoding="utf-8")
    items = tmp_path / "items.jsonl"
    dev = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    assert main(["eval", "nq-open", "--gold", str(dev), "--predictions", str(preds),
                 "--convention", "lm-eval-v4", "--format", "json",
                 "--per-item", str(items)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["accuracy"] == lm_eval_run["results"]["exact_match,remove_whitespace"]
    theirs = {s["doc"]["question"]: s["exact_match"] == 1.0 for s in samples}
    ours = {x["question"]: x["correct"] for x in
            map(json.loads, items.read_text(encoding="utf-8").splitlines())}
    assert ours == theirs
    assert 0.2 < got["accuracy"] < 0.8  # both verdicts are common: not trivially equal


def test_lm_evals_samples_file_is_read_as_gold_and_predictions(lm_eval_run, capsys):
    path = str(lm_eval_run["samples"])
    assert main(["eval", "nq-open", "--gold", path, "--predictions", path,
                 "--convention", "lm-eval-v4", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["accuracy"] == lm_eval_run["results"]["exact_match,remove_whitespace"]
    assert "|preds:lm-eval-samples|" in got["signature"]
    assert got["signature"].startswith("nq-open|split:nq-open/dev|")
