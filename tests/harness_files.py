"""Harness output files written by the harnesses' own code, from released predictions.

* :func:`write_lm_eval_samples`: lm-evaluation-harness 0.4.13's ``--log_samples`` file of
  the ``nq_open`` task. Each sample dict is built as ``lm_eval.evaluator.evaluate`` builds
  it (``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``, ``filtered_resps``,
  ``filter``, ``metrics``, the three hashes, the metric), its generation stored as lm-eval's
  backends store it (cut at the task's ``until`` by ``postprocess_generated_text``, unless
  ``cut=False``), the filters and the metric run by lm-eval's own functions; the file is
  written by lm-eval's own ``EvaluationTracker.save_results_samples``. Running
  ``simple_evaluate`` needs the ``datasets`` package and a model, neither available
  offline; the tracker module is loaded by path with a stand-in for the two ``datasets``
  names it imports at the top and never calls when saving samples.
* :func:`write_flashrag_data`: FlashRAG's ``intermediate_data.json`` written by
  ``flashrag.dataset.dataset.Dataset.save`` (flashrag-dev 0.1.2), the items built as its
  pipelines leave them (``prompt``, ``raw_pred``, ``pred``).
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

from conftest import require


def lm_eval_task_config() -> dict[str, Any]:
    import yaml

    lm_eval = require("lm_eval")
    path = Path(lm_eval.__file__).parent / "tasks" / "nq_open" / "nq_open.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _evaluation_tracker() -> Any:
    lm_eval = require("lm_eval")
    stand_in = {"datasets": types.ModuleType("datasets"),
                "datasets.utils": types.ModuleType("datasets.utils"),
                "datasets.utils.metadata": types.ModuleType("datasets.utils.metadata")}
    stand_in["datasets"].load_dataset = None  # type: ignore[attr-defined]
    stand_in["datasets.utils.metadata"].MetadataConfigs = None  # type: ignore[attr-defined]
    saved = {name: sys.modules.get(name) for name in stand_in}
    sys.modules.update(stand_in)
    try:
        path = Path(lm_eval.__file__).parent / "loggers" / "evaluation_tracker.py"
        spec = importlib.util.spec_from_file_location("lm_eval_evaluation_tracker", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
    return module.EvaluationTracker


def write_lm_eval_samples(out_dir: Path, rows: list[tuple[str, list[str], str]], *,
                          model: str = "model", cut: bool = True) -> Path:
    """The samples file of one ``nq_open`` run over ``rows`` (question, gold answers,
    the model's generation), in ``out_dir``; returns its path."""
    require("lm_eval")
    import ast
    import json

    from lm_eval.api.metrics import exact_match_hf_evaluate
    from lm_eval.filters.extraction import WhitespaceFilter
    from lm_eval.filters.selection import TakeFirstFilter
    from lm_eval.models.utils import postprocess_generated_text
    from lm_eval.utils import apply_template, handle_non_serializable, hash_string

    config = lm_eval_task_config()
    until = config["generation_kwargs"]["until"]
    (metric,) = config["metric_list"]
    settings = {k: metric[k] for k in ("ignore_case", "ignore_punctuation",
                                       "regexes_to_ignore")}
    (filters,) = config["filter_list"]
    samples = []
    for doc_id, (question, answers, generation) in enumerate(rows):
        doc = {"question": question, "answer": answers}
        context = config["description"] + apply_template(config["doc_to_text"], doc)
        target = ast.literal_eval(apply_template(config["doc_to_target"], doc))
        args = (context, dict(config["generation_kwargs"]))
        resp = postprocess_generated_text(generation, until, None) if cut else generation
        filtered = TakeFirstFilter().apply(WhitespaceFilter().apply([[resp]], [doc]), [doc])
        (answer,) = filtered
        score = exact_match_hf_evaluate(references=target, predictions=[answer] * len(target),
                                        **settings)["exact_match"]
        samples.append({
            "doc_id": doc_id, "doc": doc, "target": target, "arguments": [args],
            "resps": [[resp]], "filtered_resps": [answer], "filter": filters["name"],
            "metrics": ["exact_match"],
            "doc_hash": hash_string(json.dumps(doc, indent=2, default=handle_non_serializable,
                                               ensure_ascii=False)),
            "prompt_hash": hash_string(context), "target_hash": hash_string(str(target)),
            "exact_match": 1.0 if score > 0.0 else 0.0})
    tracker = _evaluation_tracker()(output_path=str(out_dir))
    tracker.general_config_tracker.model_name_sanitized = model
    tracker.date_id = "2025-01-01T00-00-00.000000"  # set by save_results_aggregated
    tracker.save_results_samples(task_name="nq_open", samples=samples)
    (path,) = (out_dir / model).glob("samples_nq_open_*.jsonl")
    return path


def write_flashrag_data(path: Path, rows: list[tuple[str, list[str], str]]) -> Path:
    """FlashRAG's saved data of one NQ run over ``rows`` (question, gold answers, the
    generation its pipeline answered), written by ``Dataset.save``."""
    dataset = require("flashrag.dataset.dataset")
    items = [{"id": f"test_{i}", "question": q, "golden_answers": answers}
             for i, (q, answers, _) in enumerate(rows)]
    data = dataset.Dataset(config={"dataset_name": "nq"},
                           data=[dataset.Item(x) for x in items])
    data.update_output("prompt", [f"Answer the question based on the given document.\n"
                                  f"Question: {q}\nAnswer:" for q, _, _ in rows])
    data.update_output("raw_pred", [p for _, _, p in rows])
    data.update_output("pred", [p for _, _, p in rows])
    data.save(str(path))
    return path
