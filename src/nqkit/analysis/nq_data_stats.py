"""Statistics of Natural Questions data (Kwiatkowski et al. 2019, §3.2–3.3, §4, Figures 2
and 4), original or simplified format, 1-way (train) or 5-way (dev) annotated.

* **Decision paths** (Figure 2), per annotation: ``null`` (no long answer: the paper's
  "bad question" 14% and "no answer" 37% together, which the release does not tell
  apart), ``long only`` (13%), ``yes/no`` (1%) and ``short answer`` (35%). A yes/no answer
  takes precedence over short spans, as in the figure's order of questions.
* **Long-answer types** (§3.3), per non-null long answer, from the first token of the
  annotated span: paragraph (73% in train), table (19%), table row (1%), list (3%), list
  item (3%), other.
* **Gold paths**, per example with several annotations, by the evaluation's rule (§5,
  ``h_beta`` with beta = ``threshold`` = 2): a gold long answer when at least 2 annotations
  have one; a gold short answer when at least 2 have a short answer (spans or yes/no); a
  gold short answer is ``yes/no`` when more of those annotations give yes/no than spans;
  the gold long type is the most common type of the non-null long answers (the first seen
  on ties), as :meth:`nqkit.formats.nq_gold.GoldExample.long_type`.
* **Annotator agreement** (Figure 4's μ, computed on the 5 annotations of dev instead of
  the paper's 25): the distribution of the number of annotators giving a non-null long
  answer, and a non-null short answer, per example.
* **Lengths** in words (HTML tags not counted): question, document, each non-null long
  answer, each non-null short-answer span; and long-answer candidates per document.
  Quantiles are nearest-rank (the smallest value with at least q·n values at or below).

:class:`NqDataStats` accumulates one example at a time in memory bounded by the number of
distinct lengths, and two accumulators merge (shards counted apart add up to the whole).
Pure: no I/O (``nqkit data stats`` reads the files).
"""

from __future__ import annotations

import io
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nqkit.formats.nq import Annotation, NqExample, SimplifiedNqExample, _is_tag, tag_type
from nqkit.io import PathLike, PathsLike
from nqkit.signature import make_signature

__all__ = [
    "LENGTHS",
    "PAPER_TRAIN_LONG_TYPES",
    "PAPER_TRAIN_PATHS",
    "PATHS",
    "TYPES",
    "NqDataStats",
    "annotation_path",
    "nearest_rank",
    "nq_data_stats",
]

PATHS: tuple[str, ...] = ("null", "long only", "yes/no", "short answer")
TYPES: tuple[str, ...] = ("paragraph", "table", "table row", "list", "list item", "other")
LENGTHS: tuple[str, ...] = ("question tokens", "document tokens", "long answer tokens",
                            "short answer tokens", "candidates")
# The paper's train figures: Figure 2 (proportions of the whole set; "null" is its bad
# question 14% + no answer 37%) and §3.3 (types, proportions of long answers).
PAPER_TRAIN_PATHS: dict[str, float] = {"null": 0.51, "long only": 0.13, "yes/no": 0.01,
                                       "short answer": 0.35}
PAPER_TRAIN_LONG_TYPES: dict[str, float] = {"paragraph": 0.73, "table": 0.19,
                                            "table row": 0.01, "list": 0.03,
                                            "list item": 0.03}
QUANTILES: tuple[tuple[str, float], ...] = (("median", 0.5), ("p90", 0.9), ("p99", 0.99))


def annotation_path(a: Annotation) -> str:
    """The Figure 2 path of one annotation (see the module docstring)."""
    if not a.has_long:
        return "null"
    if a.yes_no_answer != "NONE":
        return "yes/no"
    if any(not s.is_null for s in a.short_answers):
        return "short answer"
    return "long only"


def nearest_rank(counts: Mapping[int, int], q: float) -> int | None:
    """The nearest-rank ``q`` quantile of a histogram {value: count} (None when empty)."""
    n = sum(counts.values())
    if not n:
        return None
    need = max(1, math.ceil(q * n))
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        if seen >= need:
            return value
    return max(counts)  # pragma: no cover - unreachable: seen reaches n


def _words(ex: NqExample | SimplifiedNqExample) -> tuple[list[bool], list[str]]:
    """Per document token: is it a word (not an HTML tag), and its text."""
    if isinstance(ex, NqExample):
        return ([not t.html_token for t in ex.document_tokens],
                [t.token for t in ex.document_tokens])
    tokens = list(ex.tokens)
    return [not _is_tag(t) for t in tokens], tokens


@dataclass(frozen=True)
class NqDataStats:
    """Counts over NQ examples; add examples with :meth:`add`, shards with :meth:`merge`.

    Frozen: the fields are counters that grow in place; totals are derived from them.
    """

    threshold: int = 2  # the gold rule's beta (§5)
    formats: Counter[str] = field(default_factory=Counter)  # "original"/"simplified" -> n
    annotations_per_example: Counter[int] = field(default_factory=Counter)  # n -> examples
    paths: Counter[str] = field(default_factory=Counter)  # per annotation
    long_types: Counter[str] = field(default_factory=Counter)  # per non-null long answer
    yes_no: Counter[str] = field(default_factory=Counter)  # "YES"/"NO" per annotation
    gold_paths: Counter[str] = field(default_factory=Counter)  # per multi-way example
    gold_long_types: Counter[str] = field(default_factory=Counter)
    long_agreement: Counter[tuple[int, int]] = field(default_factory=Counter)  # (k, n)
    short_agreement: Counter[tuple[int, int]] = field(default_factory=Counter)
    lengths: dict[str, Counter[int]] = field(
        default_factory=lambda: {k: Counter() for k in LENGTHS})

    @property
    def examples(self) -> int:
        return sum(self.annotations_per_example.values())

    @property
    def annotations(self) -> int:
        return sum(n * c for n, c in self.annotations_per_example.items())

    @property
    def multi_way(self) -> int:
        """Examples with at least 2 annotations (the gold rule and agreement use them)."""
        return sum(c for n, c in self.annotations_per_example.items() if n >= 2)

    # ------------------------------------------------------------------ accumulate
    def add(self, ex: NqExample | SimplifiedNqExample) -> None:
        """Count one example."""
        original = isinstance(ex, NqExample)
        self.formats["original" if original else "simplified"] += 1
        question = (len(ex.question_tokens) if isinstance(ex, NqExample)
                    else len(ex.question_text.split()))
        word, text = _words(ex)
        lengths = self.lengths
        lengths["question tokens"][question] += 1
        lengths["document tokens"][sum(word)] += 1
        lengths["candidates"][len(ex.long_answer_candidates)] += 1
        n = len(ex.annotations)
        self.annotations_per_example[n] += 1
        types: list[str] = []
        paths: list[str] = []
        for a in ex.annotations:
            path = annotation_path(a)
            paths.append(path)
            self.paths[path] += 1
            if a.yes_no_answer != "NONE":
                self.yes_no[a.yes_no_answer] += 1
            if a.has_long and a.long_answer.has_tokens:
                s = a.long_answer
                kind = tag_type(text[s.start_token])
                types.append(kind)
                self.long_types[kind] += 1
                lengths["long answer tokens"][sum(word[s.start_token:s.end_token])] += 1
            for sa in a.short_answers:
                if sa.has_tokens:
                    lengths["short answer tokens"][sum(word[sa.start_token:sa.end_token])] += 1
        if n >= 2:
            n_long = sum(a.has_long for a in ex.annotations)
            n_short = sum(a.has_short for a in ex.annotations)
            self.long_agreement[n_long, n] += 1
            self.short_agreement[n_short, n] += 1
            if n_long < self.threshold:
                gold = "null"
            elif n_short < self.threshold:
                gold = "long only"
            else:
                gold = ("yes/no" if paths.count("yes/no") > paths.count("short answer")
                        else "short answer")
            self.gold_paths[gold] += 1
            if n_long >= self.threshold and types:
                self.gold_long_types[Counter(types).most_common(1)[0][0]] += 1

    def merge(self, other: NqDataStats) -> NqDataStats:
        """Add the counts of ``other`` (same threshold) to these; returns self."""
        if other.threshold != self.threshold:
            raise ValueError("cannot merge statistics computed with different thresholds")
        for name in ("formats", "annotations_per_example", "paths", "long_types", "yes_no",
                     "gold_paths", "gold_long_types", "long_agreement", "short_agreement"):
            getattr(self, name).update(getattr(other, name))
        for key, counts in other.lengths.items():
            self.lengths[key].update(counts)
        return self

    # ------------------------------------------------------------------ report
    @property
    def signature(self) -> str:
        return make_signature("nq-data", {"paths": "per-annotation",
                                          "gold-thr": self.threshold, "tokens": "words",
                                          "quantiles": "nearest-rank"})

    def length_summary(self, key: str) -> dict[str, float | int | None]:
        counts = self.lengths[key]
        n = sum(counts.values())
        out: dict[str, float | int | None] = {
            "count": n,
            "mean": math.fsum(v * c for v, c in counts.items()) / n if n else None}
        for name, q in QUANTILES:
            out[name] = nearest_rank(counts, q)
        out["max"] = max(counts) if counts else None
        return out

    def agreement(self, which: str) -> dict[str, int]:
        """``{"k/n": examples}`` for ``which`` = "long" or "short", ordered by n then k."""
        counts = self.long_agreement if which == "long" else self.short_agreement
        ns = sorted({n for _, n in counts})
        return {f"{k}/{n}": counts.get((k, n), 0) for n in ns for k in range(n + 1)}

    def to_json(self) -> dict[str, Any]:
        def shares(c: Counter[str], keys: Iterable[str], total: int) -> dict[str, Any]:
            return {k: {"count": c.get(k, 0), "share": c.get(k, 0) / total if total else None}
                    for k in keys}

        with_long = self.annotations - self.paths.get("null", 0)
        out: dict[str, Any] = {
            "examples": self.examples,
            "formats": dict(self.formats),
            "annotations": self.annotations,
            "annotations_per_example": {str(k): v for k, v in
                                        sorted(self.annotations_per_example.items())},
            "decision_paths": shares(self.paths, PATHS, self.annotations),
            "long_answer_share": with_long / self.annotations if self.annotations else None,
            "long_answer_types": shares(self.long_types, TYPES, sum(self.long_types.values())),
            "yes_no": {"YES": self.yes_no.get("YES", 0), "NO": self.yes_no.get("NO", 0)},
        }
        if self.multi_way:
            out["gold"] = {
                "rule": f">= {self.threshold} annotations",
                "examples": self.multi_way,
                "paths": shares(self.gold_paths, PATHS, self.multi_way),
                "long_answer_types": shares(self.gold_long_types, TYPES,
                                            sum(self.gold_long_types.values())),
            }
            out["agreement"] = {"long": self.agreement("long"),
                                "short": self.agreement("short")}
        out["lengths"] = {k: self.length_summary(k) for k in LENGTHS}
        out["paper_train"] = {"decision_paths": PAPER_TRAIN_PATHS,
                              "long_answer_types": PAPER_TRAIN_LONG_TYPES,
                              "source": "Kwiatkowski et al. 2019, Figure 2 and §3.3"}
        out["signature"] = self.signature
        return out

    def tables(self) -> list[tuple[str, tuple[str, ...], list[tuple[Any, ...]]]]:
        """(title, headers, rows) of each table ``nqkit data stats`` prints."""
        def pct(count: int, total: int) -> str:
            return f"{100 * count / total:.1f}%" if total else "-"

        def paper(value: float | None) -> str:
            return f"{100 * value:.0f}%" if value is not None else ""

        ann = self.annotations
        out: list[tuple[str, tuple[str, ...], list[tuple[Any, ...]]]] = []
        rows: list[tuple[Any, ...]] = [
            (p, f"{self.paths.get(p, 0):,}", pct(self.paths.get(p, 0), ann),
             paper(PAPER_TRAIN_PATHS.get(p))) for p in PATHS]
        rows.append(("long answer (any)", f"{ann - self.paths.get('null', 0):,}",
                     pct(ann - self.paths.get("null", 0), ann), "49%"))
        out.append((f"decision paths (Figure 2), per annotation ({ann:,} annotations of "
                    f"{self.examples:,} examples)", ("path", "count", "share", "paper train"),
                    rows))
        n_long = sum(self.long_types.values())
        out.append((f"long-answer types (§3.3), per non-null long answer ({n_long:,})",
                    ("type", "count", "share", "paper train"),
                    [(t, f"{self.long_types.get(t, 0):,}", pct(self.long_types.get(t, 0),
                                                                n_long),
                      paper(PAPER_TRAIN_LONG_TYPES.get(t))) for t in TYPES]))
        if self.multi_way:
            m = self.multi_way
            out.append((f"gold paths (an answer when >= {self.threshold} annotators gave one), "
                        f"per example with >= 2 annotations ({m:,} examples)",
                        ("path", "count", "share"),
                        [(p, f"{self.gold_paths.get(p, 0):,}", pct(self.gold_paths.get(p, 0),
                                                                    m)) for p in PATHS]))
            long_a, short_a = self.agreement("long"), self.agreement("short")
            out.append(("annotator agreement (Figure 4's μ on the 5-way annotations): examples "
                        "by non-null answers", ("annotators", "long", "share", "short",
                                                "share"),
                        [(k, f"{long_a[k]:,}", pct(long_a[k], m), f"{short_a[k]:,}",
                          pct(short_a[k], m)) for k in long_a]))
        rows = []  # the lengths table
        for key in LENGTHS:
            s = self.length_summary(key)
            rows.append((key, f"{s['count']:,}",
                         f"{s['mean']:.1f}" if s["mean"] is not None else "-",
                         *(s[name] if s[name] is not None else "-"
                           for name in ("median", "p90", "p99", "max"))))
        out.append(("lengths in words (HTML tags not counted)",
                    ("what", "count", "mean", "median", "p90", "p99", "max"), rows))
        return out

    def plot_png(self, title: str = "Natural Questions") -> bytes:
        """A PNG: decision paths and long-answer types beside the paper's train figures,
        annotator agreement (5-way data) and the distribution of document lengths."""
        import matplotlib.pyplot as plt

        fig = self.figure(title)
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
        return buf.getvalue()

    def figure(self, title: str = "Natural Questions") -> Any:
        """The matplotlib figure :meth:`plot_png` draws (the caller closes it)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator

        fig, axes = plt.subplots(2, 2, figsize=(10, 7.5), dpi=100)
        ann = self.annotations or 1
        n_long = sum(self.long_types.values()) or 1
        for ax, keys, counts, total, ref, name in (
                (axes[0][0], PATHS, self.paths, ann, PAPER_TRAIN_PATHS,
                 "decision paths (share of annotations)"),
                (axes[0][1], TYPES, self.long_types, n_long, PAPER_TRAIN_LONG_TYPES,
                 "long-answer types (share of long answers)")):
            xs = range(len(keys))
            ax.bar(xs, [counts.get(k, 0) / total for k in keys], color="#1f6fb4",
                   label="this data")
            ax.scatter(xs, [ref.get(k, math.nan) for k in keys], color="#d95f02", zorder=3,
                       marker="D", label="paper, train")
            ax.set_xticks(list(xs), list(keys), rotation=20, fontsize=8)
            ax.set_ylim(0, 1)
            ax.set_title(name, fontsize=9)
            ax.legend(fontsize=7)
        ax = axes[1][0]
        if self.multi_way:
            long_a, short_a = self.agreement("long"), self.agreement("short")
            labels = list(long_a)
            xs = range(len(labels))
            ax.bar([x - 0.2 for x in xs], [long_a[k] / self.multi_way for k in labels], 0.4,
                   label="long", color="#1f6fb4")
            ax.bar([x + 0.2 for x in xs], [short_a[k] / self.multi_way for k in labels], 0.4,
                   label="short", color="#d95f02")
            ax.set_xticks(list(xs), labels, fontsize=8)
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "1 annotation per example:\nno agreement to show",
                    ha="center", va="center", fontsize=9)
        ax.set_title("annotators giving a non-null answer (share of examples)", fontsize=9)
        ax = axes[1][1]
        docs = self.lengths["document tokens"]
        if docs:
            values = sorted(docs)
            ax.hist(values, weights=[docs[v] for v in values], bins=30, color="#1f6fb4")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts of examples
        ax.set_title("document length in words (examples)", fontsize=9)
        fig.suptitle(f"{title} — {self.examples:,} examples", fontsize=11)
        fig.tight_layout()
        return fig


def nq_data_stats(examples: Iterable[NqExample | SimplifiedNqExample], *,
                  threshold: int = 2) -> NqDataStats:
    """Statistics of NQ examples (one pass; see :class:`NqDataStats`)."""
    stats = NqDataStats(threshold=threshold)
    for ex in examples:
        stats.add(ex)
    return stats


def _file_stats(path: str) -> Any:
    """The statistics of one file (a worker's job)."""
    from nqkit.formats.nq import read_nq

    return nq_data_stats(read_nq(path, unique=False))


def emit_data_stats(inputs: PathsLike, *, format: str = "table", plot: PathLike | None = None,
                    jobs: int = 1) -> None:
    """``nqkit data stats``: the statistics of NQ files, streaming (``jobs`` shards in
    parallel), printed as tables (or JSON), with an optional picture (``plot``)."""
    import json

    from nqkit.formats.nq import read_nq
    from nqkit.io import atomic_output, check_output, expand_paths
    from nqkit.report import format_table, progress, say

    files = expand_paths(inputs, what="NQ")
    if plot:
        check_output(plot, files, option="--plot")
    stats = NqDataStats()
    if jobs > 1 and len(files) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=min(jobs, len(files))) as pool:
            for part in progress(pool.map(_file_stats, [str(f) for f in files]),
                                 desc="stats", total=len(files), unit="file"):
                stats.merge(part)
    else:
        # Repeats are counted as read, in both paths alike: the -j workers read a file
        # each and could not see one repeated across files (refusing them is open).
        for ex in progress(read_nq(files, unique=False), desc="stats", unit="ex"):
            stats.add(ex)
    if plot:
        png = stats.plot_png(title=files[0].name if len(files) == 1
                             else f"{files[0].name} (+{len(files) - 1} files)")
        with atomic_output(plot, "wb") as f:
            f.write(png)
        say(f"picture written to {plot}")
    if format == "json":
        print(json.dumps({"files": [str(f) for f in files], **stats.to_json()}, indent=1))
        return
    for title, headers, rows in stats.tables():
        print(format_table(headers, rows, title=title))
        print()
    print("paper train: Kwiatkowski et al. 2019, Figure 2 ('null' = bad question 14% + no "
          "answer 37%) and §3.3")
    print(f"signature: {stats.signature}")
