"""Build ``src/nqkit/datasets/registry.json`` from the official-sources table.

The facts (URL, md5 and size of every file) come from ``official-sources.tsv`` (a table of
where each dataset is officially published, with md5 and size where a public download
registry publishes them); the descriptions, licences, citations and the relations between
splits are written here, once, beside the facts they describe. Run it again whenever the
table changes; ``tests/test_datasets_registry.py`` checks that the shipped JSON equals what
this script builds from the table.

    python tools/make_registry.py [../shared/data/official-sources.tsv] [-o OUT]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TSV = Path(os.environ.get("NQKIT_SHARED", ROOT.parent / "shared")) / "data" / (
    "official-sources.tsv")
DEFAULT_OUT = ROOT / "src" / "nqkit" / "datasets" / "registry.json"

NQ_CITE = ("Kwiatkowski et al. 2019. Natural Questions: a Benchmark for Question Answering "
           "Research. TACL 7:453-466.")
ORQA_CITE = ("Lee, Chang and Toutanova 2019. Latent Retrieval for Weakly Supervised Open "
             "Domain Question Answering. ACL 2019.")
EQA_CITE = ("Min et al. 2021. NeurIPS 2020 EfficientQA Competition: Systems, Analyses and "
            "Lessons Learned. PMLR 133.")
AMBIG_CITE = ("Min, Michael, Hajishirzi and Zettlemoyer 2020. AmbigQA: Answering Ambiguous "
              "Open-domain Questions. EMNLP 2020.")
SQUAD_CITE = ("Rajpurkar, Zhang, Lopyrev and Liang 2016. SQuAD: 100,000+ Questions for "
              "Machine Comprehension of Text. EMNLP 2016.")
DPR_CITE = ("Karpukhin et al. 2020. Dense Passage Retrieval for Open-Domain Question "
            "Answering. EMNLP 2020.")
NQ_HOME = "https://ai.google.com/research/NaturalQuestions"
NQ_OPEN_HOME = "https://github.com/google-research-datasets/natural-questions/tree/master/nq_open"
AMBIG_HOME = "https://nlp.cs.washington.edu/ambigqa"
SQUAD_HOME = "https://rajpurkar.github.io/SQuAD-explorer/"
DPR_HOME = "https://github.com/facebookresearch/DPR"
NQ_LIC = "CC BY-SA 3.0"
DPR_LIC = "CC BY-NC 4.0"

# name -> what nqkit knows about the dataset beyond its files. Counts are from the papers
# and the official READMEs (cited in "description"); None where no source gives one.
CATALOG: dict[str, dict[str, Any]] = {
    "nq/dev": dict(
        title="Natural Questions dev, original format (5 shards)",
        format="nq", count=7830, unit="examples", licence=NQ_LIC, citation=NQ_CITE,
        homepage=NQ_HOME,
        description="The NQ development set with full Wikipedia HTML, tokens, long-answer "
        "candidates and 5 annotations per example (Kwiatkowski et al. 2019, §3); what "
        "`nqkit eval nq --gold` scores against. The official test set (7,842 examples) is "
        "not released.",
        relations=["nq-open/dev is derived from these examples (questions with a short "
                   "answer of at most 5 tokens)",
                   "no official simplified dev exists: make one with `nqkit simplify`"]),
    "nq/train": dict(
        title="Natural Questions train, original format (50 shards)",
        format="nq", count=307373, unit="examples", licence=NQ_LIC, citation=NQ_CITE,
        homepage=NQ_HOME,
        description="The NQ training set, one annotation per example, about 41 GB gzipped "
        "(307,373 examples per the paper and the README's statistics; the README's "
        "description says 307,372).",
        relations=["nq/simplified-train holds the same examples in the simplified format",
                   "nq-open/train is derived from these examples"]),
    "nq/simplified-train": dict(
        title="Natural Questions train, simplified format (one file)",
        format="nq-simplified", count=307373, unit="examples", licence=NQ_LIC,
        citation=NQ_CITE, homepage=NQ_HOME,
        description="nq/train after the official simplify_nq_example: document_text instead "
        "of HTML and token offsets only. No size or checksum is published.",
        relations=["the same examples as nq/train; no simplified dev is published"]),
    "nq-open/train": dict(
        title="NQ-open train (question, answers)",
        format="nq-open", count=87925, unit="questions", licence=NQ_LIC, citation=ORQA_CITE,
        homepage=NQ_OPEN_HOME,
        description="The open-domain version of NQ (Lee et al. 2019): NQ train questions "
        "whose short answer has at most 5 tokens, with their answers.",
        relations=["DPR split these questions in two: dpr/nq-train.qa (79,168) and "
                   "dpr/nq-dev.qa (8,757)",
                   "AmbigNQ (ambignq/*) train and dev questions are NQ-open train questions"]),
    "nq-open/dev": dict(
        title="NQ-open dev (question, answers): the usual NQ-open test set",
        format="nq-open", count=3610, unit="questions", licence=NQ_LIC, citation=ORQA_CITE,
        homepage=NQ_OPEN_HOME,
        description="NQ-open questions taken from NQ dev; papers (ORQA, DPR, RAG) report "
        "their NQ 'test' numbers on these 3,610 questions.",
        relations=["dpr/nq-test.qa has the questions of nq-open/dev",
                   "efficientqa/dev is NOT nq-open/dev: it is another set of questions",
                   "derived from nq/dev"]),
    "efficientqa/dev": dict(
        title="EfficientQA dev (question, answers)",
        format="nq-open", count=1800, unit="questions", licence=NQ_LIC, citation=EQA_CITE,
        homepage=NQ_OPEN_HOME,
        description="The development set of the NeurIPS 2020 EfficientQA competition, in "
        "the NQ-open format (version 1.1).",
        relations=["NOT nq-open/dev: a separate set of questions collected for the "
                   "competition; numbers on the two are not comparable"]),
    "efficientqa/test": dict(
        title="EfficientQA test (question, answers)",
        format="nq-open", count=None, unit="questions", licence=NQ_LIC, citation=EQA_CITE,
        homepage=NQ_OPEN_HOME,
        description="The EfficientQA competition's test set (version 1.1). Besides 'answer' "
        "it carries 'answer_and_def_correct_predictions' (answers plus predictions rated "
        "definitely correct): score with `--answer-field answer_and_def_correct_predictions`.",
        relations=["not nq-open/dev and not efficientqa/dev"]),
    "ambignq/light": dict(
        title="AmbigNQ light (train and dev), zip",
        format="ambignq", count=12038, unit="questions", licence=NQ_LIC, citation=AMBIG_CITE,
        homepage=AMBIG_HOME,
        description="AmbigNQ (Min et al. 2020, §4), inputs and outputs only: each question "
        "with a single answer or several disambiguated question/answer pairs; train 10,036 "
        "and dev 2,002 (Table 2). A zip archive: "
        "`nqkit data get` extracts it and `nqkit data path` lists the extracted files.",
        relations=["its dev questions are those of dpr/nq-dev.qa (the dev split ORQA and DPR "
                   "held out of nq-open/train), NOT nq-open/dev; its train questions are "
                   "nq-open/train questions (AmbigNQ capitalises them and adds '?')",
                   "ambignq/full holds the same examples with all annotation metadata"]),
    "ambignq/full": dict(
        title="AmbigNQ full (train and dev, with annotation metadata), zip",
        format="ambignq", count=12038, unit="questions", licence=NQ_LIC, citation=AMBIG_CITE,
        homepage=AMBIG_HOME,
        description="AmbigNQ with the annotation metadata (viewed_doc_titles, used_queries, "
        "nq_answer, nq_doc_title). A zip archive, extracted by `nqkit data get`.",
        relations=["the same examples as ambignq/light"]),
    "squad/dev-1.1": dict(
        title="SQuAD 1.1 dev",
        format="squad", count=10570, unit="questions", licence="CC BY-SA 4.0",
        citation=SQUAD_CITE, homepage=SQUAD_HOME,
        description="SQuAD v1.1 development set: 48 articles, 2,067 paragraphs, 10,570 "
        "questions with extractive answers.",
        relations=["ReQA SQuAD (Ahmad et al. 2019) is built from this file: "
                   "`nqkit reqa build --from squad squad/dev-1.1`"]),
    "squad/train-1.1": dict(
        title="SQuAD 1.1 train",
        format="squad", count=87599, unit="questions", licence="CC BY-SA 4.0",
        citation=SQUAD_CITE, homepage=SQUAD_HOME,
        description="SQuAD v1.1 training set.",
        relations=["ReQA uses SQuAD dev; train is for training answer-retrieval models"]),
    "dpr/psgs_w100": dict(
        title="DPR Wikipedia passages (100 words, Dec. 2018 dump)",
        format="dpr-passages", count=21015324, unit="passages",
        licence=f"{DPR_LIC} (DPR release; the text is Wikipedia's, CC BY-SA 3.0)",
        citation=DPR_CITE, homepage=DPR_HOME,
        description="The retrieval corpus of DPR (Karpukhin et al. 2020, §4.1): English "
        "Wikipedia of 2018-12-20 split into disjoint 100-word passages; TSV id, text, title.",
        relations=["the passage ids of dpr/biencoder-nq-* and of DPR retrieval results"]),
    "dpr/biencoder-nq-train": dict(
        title="DPR bi-encoder training data for NQ",
        format="dpr-biencoder", count=58880, unit="questions", licence=DPR_LIC,
        citation=DPR_CITE, homepage=DPR_HOME,
        description="Questions of dpr/nq-train.qa that have a gold passage (58,880 of "
        "79,168, DPR Table 1), with positive, negative and hard-negative (BM25) passages "
        "from dpr/psgs_w100. One JSON list (gzipped).",
        relations=["its questions are a subset of dpr/nq-train.qa, hence of nq-open/train"]),
    "dpr/biencoder-nq-dev": dict(
        title="DPR bi-encoder dev data for NQ",
        format="dpr-biencoder", count=None, unit="questions", licence=DPR_LIC,
        citation=DPR_CITE, homepage=DPR_HOME,
        description="Questions of dpr/nq-dev.qa with a gold passage, with positive, "
        "negative and hard-negative passages. One JSON list (gzipped).",
        relations=["its questions are from dpr/nq-dev.qa, hence from nq-open/train (not "
                   "nq-open/dev)"]),
    "dpr/nq-train.qa": dict(
        title="DPR NQ train questions (question TAB answers)",
        format="dpr-qa", count=79168, unit="questions", licence=DPR_LIC, citation=DPR_CITE,
        homepage=DPR_HOME,
        description="DPR's NQ training questions (DPR Table 1): question<TAB>Python list of "
        "answers. Named .csv but tab-separated.",
        relations=["with dpr/nq-dev.qa it makes up nq-open/train (79,168 + 8,757 = 87,925)"]),
    "dpr/nq-dev.qa": dict(
        title="DPR NQ dev questions: held out from NQ-open train",
        format="dpr-qa", count=8757, unit="questions", licence=DPR_LIC, citation=DPR_CITE,
        homepage=DPR_HOME,
        description="DPR's NQ development questions (DPR Table 1), tab-separated like "
        "dpr/nq-train.qa.",
        relations=["NOT nq-open/dev: these are nq-open/train questions held out by DPR",
                   "ambignq/* dev questions are among these"]),
    "dpr/nq-test.qa": dict(
        title="DPR NQ test questions = NQ-open dev",
        format="dpr-qa", count=3610, unit="questions", licence=DPR_LIC, citation=DPR_CITE,
        homepage=DPR_HOME,
        description="DPR's NQ test questions (DPR Table 1), tab-separated like "
        "dpr/nq-train.qa.",
        relations=["dpr/nq-test.qa has the questions of nq-open/dev"]),
}
ARCHIVES = {"ambignq/light": "zip", "ambignq/full": "zip"}


def read_sources(path: Path) -> dict[str, list[dict[str, Any]]]:
    """``dataset -> [file facts]`` in the table's order."""
    out: dict[str, list[dict[str, Any]]] = {}
    with open(path, encoding="utf-8", newline="") as f:
        rows = csv.reader((line for line in f if not line.startswith("#")), delimiter="\t")
        header = next(rows)
        if header[:5] != ["dataset", "file", "url", "md5", "size"]:
            sys.exit(f"{path}: unexpected header {header}")
        for row in rows:
            if not row:
                continue
            dataset, name, url, md5, size = (row + [""] * 5)[:5]
            out.setdefault(dataset, []).append({
                "name": name, "url": url, "md5": md5 or None,
                "size": int(size) if size else None})
    return out


def build(tsv: Path) -> dict[str, Any]:
    sources = read_sources(tsv)
    missing = sorted(set(CATALOG) ^ set(sources))
    if missing:
        sys.exit(f"catalog and {tsv} disagree on: {', '.join(missing)}")
    datasets = []
    for name, files in sources.items():
        meta = CATALOG[name]
        datasets.append({"name": name, **meta, "archive": ARCHIVES.get(name),
                         "files": files})
    return {"format": "nqkit-registry", "version": 1,
            "source": "official-sources.tsv (md5 and size where a public download registry "
                      "publishes them; null where unknown)",
            "datasets": datasets}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tsv", nargs="?", type=Path, default=DEFAULT_TSV)
    ap.add_argument("-o", "--output", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()
    text = json.dumps(build(args.tsv), indent=1, ensure_ascii=False) + "\n"
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
