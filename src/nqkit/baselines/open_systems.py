"""The NQ-open and AmbigQA baselines as systems of ``nqkit baseline NAME``.

* ``nearest-question`` — TF-IDF nearest question for NQ-open (the answer of the most
  similar memory question); scored by exact match when the questions carry answers.
* ``ambigqa-answers`` — multiple answers from the nearest AmbigNQ training questions,
  ``k``/``tau`` tuned on a slice of train; scored by F1_ans.
* ``ambigqa-questions`` — question disambiguation given the gold answers: ``prompt``
  (always the prompt question) or ``nearest-edit``; scored by F1_BLEU and F1_EDIT-F1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from nqkit.baselines.systems import FORMAT, OUTPUT, SYSTEMS, System, SystemSettings
from nqkit.settings import Param, float_in, positive_int
from nqkit.vocabulary import ANSWER_FIELD, GOLD, TRAIN


@dataclass(frozen=True, kw_only=True)
class NearestQuestionSettings(SystemSettings):
    """The settings of ``nqkit baseline nearest-question``."""

    train: list[str]  # the memory: question-answer files whose answers are copied
    gold: str  # the NQ-open file to answer (and score)
    answer_field: str  # the gold field holding the answers


def run_nearest_question(s: NearestQuestionSettings) -> Any:
    from nqkit.baselines.open_nearest_question import TfidfIndex, load_qa_memory
    from nqkit.formats.nq_open import NqOpenPrediction, read_nq_open
    from nqkit.io import write_jsonl
    from nqkit.metrics.nq_open import score_nq_open
    from nqkit.report import progress, warn
    from nqkit.tasks.nq_open import nq_open_result

    memory = load_qa_memory(s.train)
    questions = list(read_nq_open(s.gold, answer_field=s.answer_field))
    index = TfidfIndex(memory.questions)
    memory_set = set(memory.questions)
    overlap = sum(1 for ex in questions if ex.question in memory_set)
    if overlap:
        warn(f"{overlap:,} question(s) also occur in the memory; their answers are copied "
             "(the memory should be disjoint from the questions)")
    preds = []
    for ex in progress(questions, desc="nearest question", unit="q"):
        (i, _), = index.nearest(ex.question, 1)
        preds.append(NqOpenPrediction(ex.question, memory.answers[i][0]))
    write_jsonl(s.output, ({"question": p.question, "prediction": p.prediction}
                           for p in preds))
    r = score_nq_open(questions, preds, answer_field=s.answer_field)
    result = nq_open_result(r, title=f"TF-IDF nearest question: memory "
                            f"{len(memory.questions):,} questions, {len(questions):,} "
                            "questions answered")
    result.official = {"memory_size": len(memory.questions), **result.official}
    return result


@dataclass(frozen=True, kw_only=True)
class AmbigQaAnswersSettings(SystemSettings):
    """The settings of ``nqkit baseline ambigqa-answers``."""

    train: str  # AmbigNQ train: the neighbours and their answers
    gold: str  # the AmbigNQ file to answer (and score)
    k: int | None  # neighbours (None, with tau None: tuned)
    tau: float | None  # relative similarity threshold (None, with k None: tuned)
    tune_slice: int  # the first training questions, used for tuning


def run_ambigqa_answers(s: AmbigQaAnswersSettings) -> Any:
    from nqkit.baselines.ambigqa_baselines import (
        NearestAnswersParams,
        nearest_answers,
        tune_nearest_answers,
    )
    from nqkit.baselines.open_nearest_question import TfidfIndex
    from nqkit.errors import InputError
    from nqkit.formats.ambignq import read_ambignq
    from nqkit.io import write_json
    from nqkit.metrics.ambigqa import score_ambigqa
    from nqkit.report import say
    from nqkit.tasks.ambigqa import ambigqa_result

    train = list(read_ambignq(s.train))
    questions = list(read_ambignq(s.gold))
    if s.k is not None and s.tau is not None:
        params, how = NearestAnswersParams(s.k, s.tau), "given"
    elif s.k is not None or s.tau is not None:
        raise InputError(None, "give both --k and --tau, or neither (then both are tuned)",
                         "e.g. --k 2 --tau 0.8")
    else:
        if not 0 < s.tune_slice < len(train):
            raise InputError(None, f"--tune-slice must be in 1..{len(train) - 1}",
                             "use about a tenth of the training questions")
        params, grid = tune_nearest_answers(train, slice_size=s.tune_slice)
        how = f"tuned on the first {s.tune_slice:,} training questions"
        for p, f1 in grid:
            say(f"tuning k={p.k} tau={p.tau}: F1_ans {f1:.4f}")
    index = TfidfIndex([ex.question for ex in train])
    preds = nearest_answers(questions, train, index, params)
    write_json(s.output, {k: list(v.answers) for k, v in preds.items()})
    r = score_ambigqa(questions, preds)
    result = ambigqa_result(r, title=f"nearest AmbigNQ train questions: k={params.k}, "
                            f"tau={params.tau} ({how})", metrics=["F1 answer"])
    result.official = {"k": params.k, "tau": params.tau, **result.official}
    return result


@dataclass(frozen=True, kw_only=True)
class AmbigQaQuestionsSettings(SystemSettings):
    """The settings of ``nqkit baseline ambigqa-questions``."""

    method: Literal["prompt", "nearest-edit"]  # how each answer's question is written
    gold: str  # the AmbigNQ file (its gold answers are used)
    train: str | None  # AmbigNQ train (needed by nearest-edit)


def run_ambigqa_questions(s: AmbigQaQuestionsSettings) -> Any:
    from nqkit.baselines.ambigqa_baselines import nearest_edit_questions, prompt_copy_questions
    from nqkit.errors import InputError
    from nqkit.formats.ambignq import AmbigQaPrediction, read_ambignq
    from nqkit.io import write_json
    from nqkit.metrics.ambigqa import QUESTION_METRICS, score_ambigqa
    from nqkit.tasks.ambigqa import ambigqa_result

    questions = list(read_ambignq(s.gold))
    if s.method == "prompt":
        pairs = prompt_copy_questions(questions)
    else:
        if not s.train:
            raise InputError(None, "--method nearest-edit needs --train",
                             "give AmbigNQ train, e.g. --train train_light.json")
        pairs = nearest_edit_questions(questions, list(read_ambignq(s.train)))
    write_json(s.output, pairs)
    preds = {k: AmbigQaPrediction(tuple(p["answer"] for p in v),
                                  tuple(p["question"] for p in v)) for k, v in pairs.items()}
    r = score_ambigqa(questions, preds)
    result = ambigqa_result(r, title="question disambiguation, gold answers given: "
                            f"{s.method}", metrics=["F1 answer", *QUESTION_METRICS])
    result.official = {"method": s.method, **result.official}
    return result


SYSTEMS.add("nearest-question", System(
    "nearest-question", "nq-open", "NQ-open: TF-IDF nearest question",
    description="Answer each question with the first answer of the most similar memory "
    "question (TF-IDF cosine of word unigrams+bigrams).",
    params=(
        TRAIN.but(help="the memory: question-answer files (NQ-open .jsonl, DPR .qa.tsv, "
                  "AmbigNQ .json) whose answers are copied", required=True, metavar="FILE",
                  deprecated=("--memory",)),
        GOLD.but(help="NQ-open JSONL to answer (and score)", nargs=None, metavar="FILE",
                 deprecated=("--questions",)),
        ANSWER_FIELD.but(help="gold field holding the answers (default: answer)"),
        OUTPUT, FORMAT),
    run=run_nearest_question, inputs=("train", "gold"),
    settings_type=NearestQuestionSettings))

SYSTEMS.add("ambigqa-answers", System(
    "ambigqa-answers", "ambigqa", "AmbigQA: answers of the nearest train questions",
    description="Predict the answer set of the nearest AmbigNQ training question, plus "
    "first answers of up to k-1 further neighbours within tau of the best similarity; k "
    "and tau are tuned on the first --tune-slice training questions (answered from the "
    "rest of train) unless given.",
    params=(
        TRAIN.but(help="AmbigNQ train (train_light.json)", required=True, nargs=None,
                  action=None, metavar="FILE"),
        GOLD.but(help="AmbigNQ file to answer (and score)", nargs=None, metavar="FILE",
                 deprecated=("--questions",)),
        OUTPUT,
        Param("k", "--k", "neighbours (default: tuned)", type=positive_int),
        Param("tau", "--tau", "relative similarity threshold (default: tuned)",
              type=float_in(0, 1)),
        Param("tune_slice", "--tune-slice", "training questions used for tuning "
              "(default: 1000)", default=1000, type=positive_int),
        FORMAT),
    run=run_ambigqa_answers, inputs=("train", "gold"),
    settings_type=AmbigQaAnswersSettings))

SYSTEMS.add("ambigqa-questions", System(
    "ambigqa-questions", "ambigqa", "AmbigQA: question disambiguation given gold answers",
    description="Write one question-answer pair per gold answer (first annotation): "
    "'prompt' asks the prompt question unchanged; 'nearest-edit' inserts the words that "
    "the nearest multi-answer training question's rewrite added to its prompt.",
    params=(
        Param("method", "--method", "prompt or nearest-edit", required=True,
              choices=("prompt", "nearest-edit")),
        GOLD.but(help="AmbigNQ file (gold answers are used)", nargs=None, metavar="FILE",
                 deprecated=("--questions",)),
        TRAIN.but(help="AmbigNQ train (needed by nearest-edit)", nargs=None, action=None,
                  metavar="FILE"),
        OUTPUT, FORMAT),
    run=run_ambigqa_questions, inputs=("gold", "train"),
    settings_type=AmbigQaQuestionsSettings))
