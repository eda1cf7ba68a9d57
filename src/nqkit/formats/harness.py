"""The per-question output files of evaluation harnesses, as NQ-open predictions and gold.

Most NQ-open numbers of LLMs are printed by a harness that scores the generations it
wrote; these files hold, per question, the question, the gold answers and the generation,
so nqkit reads them as they are (:func:`nqkit.formats.nq_open.read_nq_open_predictions`
recognises them by their content, never by their name):

* lm-evaluation-harness ``--log_samples`` (``samples_nq_open_<date>.jsonl``, written by
  ``EvaluationTracker.save_results_samples`` of lm-eval 0.4): one JSON object per
  question and filter, ``{"doc_id", "doc": {"question", "answer": [...]}, "target",
  "arguments", "resps": [[generation]], "filtered_resps": [answer], "filter", "metrics",
  "doc_hash", "prompt_hash", "target_hash", "exact_match"}``. The prediction is the raw
  generation ``resps[0][0]`` (first request, first sample): what the model wrote, before
  the task's filters, so that each convention extracts the answer its own way
  (``lm-eval-v4`` cuts it as the task's stops and filters do, and gives the same
  verdicts on ``filtered_resps``). A file with several filters has one line per question
  and filter, the same generation on each: the lines of the first filter are read.
* FlashRAG's ``intermediate_data.json`` (``Dataset.save``: ``json.dump`` of a list,
  indented): ``[{"id", "question", "golden_answers": [...], "output": {"pred", ...},
  "metadata"?}]``. The prediction is ``output.pred``, the answer its pipeline scored.
* oqaeval-style lines (Kamalloo et al. 2023, ``ehsk/OpenQA-eval`` model outputs):
  ``{"question", "answer": [...], "prediction"}``, the official predictions line with its
  gold list.

Each carries its gold, so the same file can be given as ``--gold`` and ``--predictions``.
"""

from __future__ import annotations

from typing import Any

from nqkit.errors import InputError, examples

__all__ = ["FLASHRAG", "FORMAT_NAMES", "LM_EVAL", "OQAEVAL", "PLAIN", "SHAPES_HINT",
           "FirstFilter", "flashrag_answers", "flashrag_prediction", "is_flashrag_item",
           "is_lm_eval_sample", "lm_eval_answers", "lm_eval_prediction", "lm_eval_question"]

PLAIN = "nqkit"  # {"question", "prediction"} lines, an object or a list of them
LM_EVAL = "lm-eval-samples"
FLASHRAG = "flashrag"
OQAEVAL = "oqaeval"
FORMAT_NAMES = {PLAIN: "NQ-open predictions", LM_EVAL: "lm-evaluation-harness samples",
                FLASHRAG: "FlashRAG intermediate data", OQAEVAL: "oqaeval-style lines"}
SHAPES_HINT = ('give JSON lines {"question", "prediction"}, an object {question: '
               "prediction}, lm-evaluation-harness --log_samples output or FlashRAG's "
               "intermediate_data.json")


def is_lm_eval_sample(obj: dict[str, Any]) -> bool:
    """An lm-eval ``--log_samples`` line: it has the task's ``doc`` and the ``resps``."""
    return "doc" in obj and "resps" in obj


def _sample_doc(obj: dict[str, Any], where: str) -> dict[str, Any]:
    doc = obj["doc"]
    if not isinstance(doc, dict):
        raise InputError(where, f"the sample's 'doc' must be an object, found "
                         f"{type(doc).__name__}", "give the samples file lm-eval wrote")
    return doc


def lm_eval_question(obj: dict[str, Any], where: str) -> str:
    """The question of a sample: its ``doc``'s ``question``, the NQ-open question."""
    question = _sample_doc(obj, where).get("question")
    if not isinstance(question, str):
        found = examples(sorted(_sample_doc(obj, where))) or "no keys"
        raise InputError(where, f"the sample's doc has no string 'question' (found {found})",
                         "give the samples of lm-eval's nq_open task")
    return question


def lm_eval_prediction(obj: dict[str, Any], where: str) -> str:
    """The raw generation of a sample: ``resps[0][0]``."""
    resps = obj["resps"]
    first = resps[0] if isinstance(resps, list) and resps else None
    generation = first[0] if isinstance(first, list) and first else None
    if not isinstance(generation, str):
        raise InputError(where, f"'resps' must hold the generation as [[\"...\"]], found "
                         f"{resps!r:.60}", "give the samples file lm-eval wrote")
    return generation


def lm_eval_answers(obj: dict[str, Any], where: str, answer_field: str) -> tuple[str, ...]:
    """The gold answers of a sample: its ``doc``'s ``answer_field`` (nq_open: ``answer``)."""
    answers = _sample_doc(obj, where).get(answer_field)
    if (not isinstance(answers, list) or not answers
            or not all(isinstance(a, str) for a in answers)):
        raise InputError(where, f"the sample's doc['{answer_field}'] must be a non-empty "
                         f"list of strings, found {answers!r:.60}",
                         "give the samples of lm-eval's nq_open task")
    return tuple(answers)


class FirstFilter:
    """Keeps the lines of the first filter of a samples file: lm-eval writes one line per
    question and filter, each with the same generation."""

    def __init__(self) -> None:
        self.name: object = None
        self.seen = False

    def keep(self, obj: dict[str, Any]) -> bool:
        name = obj.get("filter")
        if not self.seen:
            self.name, self.seen = name, True
        return name == self.name


def is_flashrag_item(obj: dict[str, Any]) -> bool:
    """An item of FlashRAG's ``Dataset.save``: ``golden_answers`` and an ``output``."""
    return "golden_answers" in obj and isinstance(obj.get("output"), dict)


def flashrag_prediction(obj: dict[str, Any], where: str) -> str:
    """The answer FlashRAG scored: ``output.pred``."""
    pred = obj["output"].get("pred")
    if not isinstance(pred, str):
        found = examples(sorted(obj["output"])) or "no keys"
        raise InputError(where, "the item's output has no string 'pred' "
                         f"(found {found})", "save the data after the pipeline's "
                         "generation (save_intermediate_data)")
    return pred


def flashrag_answers(obj: dict[str, Any], where: str) -> tuple[str, ...]:
    """The gold answers of an item: ``golden_answers``."""
    answers = obj["golden_answers"]
    if (not isinstance(answers, list) or not answers
            or not all(isinstance(a, str) for a in answers)):
        raise InputError(where, f"'golden_answers' must be a non-empty list of strings, "
                         f"found {answers!r:.60}", "give FlashRAG's saved data unchanged")
    return tuple(answers)
