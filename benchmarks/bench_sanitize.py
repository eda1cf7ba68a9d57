"""Benchmark: the browser's allow-list sanitizer against nh3 (ammonia), side by side.

Inputs, as the browser sanitizes them (``nqkit.browser.render``):

* ``pages``: every page of ``nq/nq-dev-sample10.jsonl.gz``, whole (the document view:
  :func:`highlight_original` over all tokens, then the sanitizer);
* ``candidates``: every long-answer candidate of those pages (the answer cards).

Sanitizers:

* ``nqkit``: :func:`nqkit.browser.render.sanitize` as shipped (stdlib ``HTMLParser``);
* ``nh3``: ``nh3.Cleaner`` configured as close to it as nh3 allows: the same kept tags, the
  same dropped-with-content tags, ``colspan``/``rowspan`` only as short numbers, ``id``
  only ``nqkit-...``, classes only the browser's mark classes on ``<mark>``, no ``rel``
  added, comments stripped (an ``attribute_filter`` callback does the value checks).

For each: the best of ``--repeat`` runs, the ratio nqkit / nh3, how many outputs are
byte-identical, and how many keep the same visible text (tags removed, entities decoded,
whitespace collapsed). Then every hostile and unclosed-element input of
``tests/test_browser_render.py`` run through nh3, with the cases where its output differs
from the tested one.

Run: ``python benchmarks/bench_sanitize.py`` (from the repository root; data from
``../shared`` or ``NQKIT_SHARED``; needs ``pip install nh3``).
"""

from __future__ import annotations

import argparse
import difflib
import html
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from nqkit.browser import render  # noqa: E402
from nqkit.formats.nq import read_nq_original  # noqa: E402

SHARED = Path(os.environ.get("NQKIT_SHARED", ROOT.parent / "shared"))


def nh3_sanitizer() -> Callable[[str], str]:
    try:
        import nh3
    except ImportError:
        sys.exit("bench_sanitize: needs nh3 (pip install nh3), which nqkit does not depend on")

    def keep(tag: str, attr: str, value: str) -> str | None:
        if attr in ("colspan", "rowspan"):
            return value if value.isdigit() and len(value) < 4 else None
        if attr == "id":
            ok = value.startswith("nqkit-") and value.replace("-", "").isalnum()
            return value if ok else None
        return value  # class: already filtered by allowed_classes

    cleaner = nh3.Cleaner(
        tags=set(render.ALLOWED_TAGS),
        clean_content_tags=set(render.DROPPED_TAGS),
        attributes={"*": {"id"}, "td": {"colspan", "rowspan"}, "th": {"colspan", "rowspan"}},
        allowed_classes={"mark": set(render.MARK_CLASSES)},
        attribute_filter=keep, link_rel=None, strip_comments=True, url_schemes=set())
    return cleaner.clean


def visible_text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def best_of(fn: Callable[[str], str], inputs: list[str], repeat: int) -> tuple[float, list[str]]:
    best, out = float("inf"), []
    for _ in range(repeat):
        t = time.perf_counter()
        out = [fn(x) for x in inputs]
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    examples = list(read_nq_original(SHARED / "data" / "nq" / "nq-dev-sample10.jsonl.gz"))
    pages = [render.highlight_original(ex, 0, len(ex.document_tokens), []) for ex in examples]
    cands = [ex.html_bytes[c.span.start_byte:c.span.end_byte].decode("utf-8", "replace")
             for ex in examples for c in ex.long_answer_candidates]
    clean = nh3_sanitizer()
    print(f"{'input':<11} {'n':>4} {'MB':>6} {'nqkit s':>8} {'nh3 s':>7} {'ratio':>6} "
          f"{'identical':>9} {'same text':>9}")
    for name, inputs in (("pages", pages), ("candidates", cands)):
        mb = sum(len(x.encode()) for x in inputs) / 1e6
        t_ours, ours = best_of(render.sanitize, inputs, args.repeat)
        t_nh3, theirs = best_of(clean, inputs, args.repeat)
        same = sum(a == b for a, b in zip(ours, theirs, strict=True))
        text = sum(visible_text(a) == visible_text(b) for a, b in zip(ours, theirs, strict=True))
        print(f"{name:<11} {len(inputs):>4} {mb:>6.1f} {t_ours:>8.3f} {t_nh3:>7.3f} "
              f"{t_ours / t_nh3:>5.1f}x {same:>9} {text:>9}")
        alt = sum('class="img-alt"' in a for a, b in zip(ours, theirs, strict=True)
                  if visible_text(a) != visible_text(b))
        print(f"{'':<11} text differs in {len(inputs) - text}, of which {alt} hold an image's "
              "alt text (nh3 drops it with the <img>)")
        if name == "candidates":
            cand_ours, cand_nh3 = ours, theirs

    import test_browser_render as t  # the tested expectations, as written there

    print("\nhostile inputs (tests/test_browser_render.py HOSTILE): nh3 output where it "
          "differs from the tested one")
    for raw, expected in t.HOSTILE:
        got = clean(raw)
        if got != expected:
            print(f"  {raw[:60]!r}\n     tested {expected!r}\n     nh3    {got!r}")
    print("\ncandidates whose markup differs, by kind (nqkit -> nh3), most frequent first")
    kinds: Counter[tuple[str, str]] = Counter()
    for a, b in zip(cand_ours, cand_nh3, strict=True):
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if op != "equal":
                kinds[(re.sub(r"\s.*", "", a[i1:i2][:12]), re.sub(r"\s.*", "", b[j1:j2][:12]))] += 1
    for (a, b), n in kinds.most_common(8):
        print(f"  {n:>5}  {a!r} -> {b!r}")

    print("\nunclosed dropped elements (UNCLOSED): is the gold mark and the text after it "
          "kept?")
    for el in t.UNCLOSED:
        raw = (f"<h2>Prizes</h2><p>Before <{el}><option>hidden "
               f'<p>{t.AFTER} <mark class="gs">{t.GOLD}</mark> in 1901.</p><p>Last paragraph.</p>')
        got = clean(raw)
        kept = f'<mark class="gs">{t.GOLD}</mark>' in got and visible_text(got).endswith(
            "Last paragraph.")
        print(f"  <{el}>: {'kept' if kept else 'LOST'}  {got[:90]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
