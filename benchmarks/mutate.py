"""Mutation run: plant one small bug at a time and see whether the tests catch it.

Each mutant changes one token of one module (comparison ``>``/``>=``, ``<``/``<=``,
``==``/``!=``; integer literal ``n`` to ``n+1`` / ``n-1``; ``and``/``or``; ``min``/``max``;
a dropped ``not``; ``True``/``False``; ``return X`` to ``return None``). The tree is copied
to a temporary directory once; every mutant is written into the copy only, the tests mapped
to its module run there (``pytest -x -q -p no:cacheprovider`` with a timeout and
``PYTHONPATH`` on the copy's ``src``), and the original file is put back. The working tree
is never written to.

Mutants are sampled deterministically (``--seed``, ``--max``), spread over the modules in
proportion to their number of candidate sites, at least ``--min-per-module`` each: the
sites with the smallest keys, a hash of the seed, the module, the site's own line text,
column and change. An edit keeps every other site's key, so it adds or removes only the
sites it touches (and a quota may move by one); the sample of an unchanged module stays.

    python benchmarks/mutate.py [--root .] [--max 150] [--seed 13] [--timeout 120]
                                [--only metrics/nq_open.py,formats/nq.py:76]
                                [--json out.json]

``--root`` may point at another checkout (e.g. an export of an older commit) to measure
its tests against the same mutants: the sample depends only on the source files.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tokenize
from dataclasses import asdict, dataclass
from pathlib import Path

# module (relative to src/nqkit) -> the test files that exercise it
TEST_MAP: dict[str, list[str]] = {
    "metrics/ambigqa.py": ["test_ambigqa_eval.py", "test_open_properties.py",
                           "test_open_baselines.py"],
    "metrics/answer_recall.py": ["test_answer_recall.py", "test_open_properties.py"],
    "metrics/human.py": ["test_human_bounds.py"],
    "metrics/nq.py": ["test_nq_eval_golden.py", "test_nq_eval_properties.py",
                      "test_nq_eval_errors.py", "test_nq_analysis.py", "test_human_bounds.py"],
    "analysis/nq_breakdown.py": ["test_nq_analysis.py"],
    "analysis/nq_bayes.py": ["test_nq_bayes.py"],
    "metrics/nq_open.py": ["test_nq_open_eval.py", "test_open_properties.py",
                           "test_open_baselines.py"],
    "analysis/plots.py": ["test_nq_analysis.py"],
    "metrics/ranking.py": ["test_reqa_metrics.py", "test_reqa_run.py"],
    "formats/ambignq.py": ["test_ambigqa_eval.py", "test_open_properties.py"],
    "formats/dpr.py": ["test_answer_recall.py", "test_open_baselines.py", "test_trec.py"],
    "formats/gold_cache.py": ["test_formats_nq.py", "test_nq_eval_golden.py"],
    "formats/nq.py": ["test_formats_nq.py", "test_nq_baselines.py",
                      "test_nq_eval_properties.py", "test_fast_paths.py"],
    "formats/nq_gold.py": ["test_formats_nq.py", "test_nq_eval_golden.py",
                           "test_nq_eval_errors.py", "test_fast_paths.py"],
    "formats/nq_open.py": ["test_convert_nq_open.py", "test_nq_open_eval.py"],
    "formats/nq_predictions.py": ["test_nq_eval_errors.py", "test_nq_eval_golden.py",
                                  "test_fast_paths.py"],
    "formats/simplify.py": ["test_simplify.py"],
    "formats/squad.py": ["test_reqa_tasks.py", "test_reqa_run.py"],
    "formats/trec.py": ["test_trec.py"],
    "metrics/em_conventions.py": ["test_em_conventions.py", "test_nq_open_eval.py"],
    "analysis/nq_data_stats.py": ["test_nq_data_stats.py"],
    "browser/render.py": ["test_browser_render.py", "test_browser_server.py"],
}
# the frozen-records check covers every module of formats/ and metrics/; the dead-end
# tests (warnings and refusals of every metric family) every metric module they call
for _module, _tests in TEST_MAP.items():
    if _module.startswith(("formats/", "metrics/")):
        _tests.append("test_records_frozen.py")
    if _module in ("metrics/ambigqa.py", "metrics/answer_recall.py", "metrics/human.py",
                   "metrics/nq.py", "metrics/nq_open.py", "metrics/ranking.py"):
        _tests.append("test_dead_ends.py")

_OP_SWAP = {">": ">=", ">=": ">", "<": "<=", "<=": "<", "==": "!=", "!=": "=="}
_NAME_SWAP = {"and": "or", "or": "and", "True": "False", "False": "True"}
_CALL_SWAP = {"min": "max", "max": "min"}


@dataclass(frozen=True)
class Mutant:
    module: str  # relative to src/nqkit
    line: int
    col: int
    old: str
    new: str
    end_line: int = 0  # for multi-token replacements (return values)
    end_col: int = 0

    @property
    def id(self) -> str:
        """``module:line:col``: names one site (``--only`` takes it, or ``module:line``)."""
        return f"{self.module}:{self.line}:{self.col}"

    def label(self) -> str:
        old = self.old if len(self.old) <= 50 else self.old[:47] + "..."
        return f"{self.id}: {old!r} -> {self.new!r}"


def selected(m: Mutant, only: list[str]) -> bool:
    """``--only`` entries: a module, ``module:line`` or ``module:line:col`` (comma lists)."""
    keys = {k.strip() for item in only for k in item.split(",") if k.strip()}
    return bool({m.module, f"{m.module}:{m.line}", m.id} & keys)


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                lines.update(range(value.lineno, (value.end_lineno or value.lineno) + 1))
    return lines


def candidates(module: str, text: str) -> list[Mutant]:
    """Every single-token mutation site of one module, in source order."""
    tree = ast.parse(text)
    skip = _docstring_lines(tree)
    out: list[Mutant] = []
    toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    for i, tok in enumerate(toks):
        (line, col), s = tok.start, tok.string
        if line in skip:
            continue
        nxt = toks[i + 1].string if i + 1 < len(toks) else ""
        if tok.type == tokenize.OP and s in _OP_SWAP:
            out.append(Mutant(module, line, col, s, _OP_SWAP[s]))
        elif tok.type == tokenize.NAME and s in _NAME_SWAP:
            out.append(Mutant(module, line, col, s, _NAME_SWAP[s]))
        elif tok.type == tokenize.NAME and s in _CALL_SWAP and nxt == "(":
            out.append(Mutant(module, line, col, s, _CALL_SWAP[s]))
        elif tok.type == tokenize.NAME and s == "not" and nxt != "in":
            prev = toks[i - 1].string if i else ""
            if prev != "is":  # "is not" -> "is" is a comparison swap, kept simple here
                out.append(Mutant(module, line, col, "not ", ""))
        elif tok.type == tokenize.NUMBER and s.isdigit():
            n = int(s)
            out.append(Mutant(module, line, col, s, str(n + 1)))
            if n > 0:
                out.append(Mutant(module, line, col, s, str(n - 1)))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Return) and node.value is not None
                and not (isinstance(node.value, ast.Constant) and node.value.value is None)):
            v = node.value
            out.append(Mutant(module, v.lineno, v.col_offset, ast.get_source_segment(text, v)
                              or "", "None", v.end_lineno or v.lineno, v.end_col_offset or 0))
    out.sort(key=lambda m: (m.line, m.col, m.new))
    return out


def apply(text: str, m: Mutant) -> str:
    lines = text.splitlines(keepends=True)
    if m.end_line:
        start = sum(len(x) for x in lines[:m.line - 1]) + _byte_to_char(lines[m.line - 1], m.col)
        end = (sum(len(x) for x in lines[:m.end_line - 1])
               + _byte_to_char(lines[m.end_line - 1], m.end_col))
        return text[:start] + m.new + text[end:]
    line = lines[m.line - 1]
    assert line[m.col:m.col + len(m.old)] == m.old, (m, line)
    lines[m.line - 1] = line[:m.col] + m.new + line[m.col + len(m.old):]
    return "".join(lines)


def _byte_to_char(line: str, col: int) -> int:
    # ast offsets are UTF-8 byte offsets
    return len(line.encode("utf-8")[:col].decode("utf-8"))


def _site_keys(pool: list[Mutant], text: str, seed: int) -> dict[Mutant, str]:
    """A pseudo-random key per mutant that depends only on its own line's text, its column
    in that line, the change and the seed (plus a count for identical lines), not on where
    the line sits in the file: an edit elsewhere leaves the other sites' keys alone."""
    lines = text.splitlines()
    seen: dict[str, int] = {}
    keys: dict[Mutant, str] = {}
    for m in pool:
        line = lines[m.line - 1]
        indent = len(line) - len(line.lstrip())
        base = f"{seed}|{m.module}|{line.strip()}|{m.col - indent}|{m.old}|{m.new}"
        k = seen[base] = seen.get(base, -1) + 1
        keys[m] = hashlib.sha256(f"{base}|{k}".encode()).hexdigest()
    return keys


def sample(all_mutants: dict[str, list[Mutant]], texts: dict[str, str], total: int,
           seed: int, min_per_module: int) -> list[Mutant]:
    n_all = sum(len(v) for v in all_mutants.values())
    chosen: list[Mutant] = []
    for module in sorted(all_mutants):
        pool = all_mutants[module]
        quota = max(min_per_module, math.ceil(total * len(pool) / max(n_all, 1)))
        quota = min(quota, len(pool))
        keys = _site_keys(pool, texts[module], seed)
        picks = sorted(pool, key=keys.__getitem__)[:quota]
        chosen.extend(sorted(picks, key=lambda m: (m.line, m.col, m.new)))
    return chosen


def run_tests(tree: Path, tests: list[str], timeout: float, *, show: bool = False
              ) -> tuple[str, float]:
    """Run the tests; ``show`` prints pytest's last lines when they fail."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "HF_HUB_OFFLINE": "1",
           "PYTHONDONTWRITEBYTECODE": "1", "NQKIT_REQUIRE_SHARED": "1"}
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
           "-m", "not slow", *[str(tree / "tests" / t) for t in tests]]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "killed (timeout)", time.perf_counter() - t0
    dt = time.perf_counter() - t0
    if proc.returncode == 0:
        return "survived", dt
    if show:
        print("\n".join(proc.stdout.splitlines()[-15:]), file=sys.stderr)
    if proc.returncode in (1, 2, 3):
        return "killed", dt
    return f"error (pytest exit {proc.returncode})", dt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = Path(__file__).resolve().parents[1]
    ap.add_argument("--root", type=Path, default=here, help="checkout whose tests run")
    ap.add_argument("--src-root", type=Path, default=here,
                    help="checkout whose source is mutated (default: this one)")
    ap.add_argument("--max", type=int, default=150)
    ap.add_argument("--min-per-module", type=int, default=3)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--only", action="append", default=[], help="modules or mutant ids to "
                    "run, comma-separated: metrics/nq_open.py, metrics/nq_open.py:211 or "
                    "metrics/nq_open.py:211:30 as --list prints them (the sample is drawn "
                    "first, then filtered)")
    ap.add_argument("--list", action="store_true", help="print the sample and stop")
    ap.add_argument("--json", type=Path, help="write every outcome here")
    args = ap.parse_args(argv)
    # the copy sits in a temporary directory: point it at the shared data explicitly
    os.environ.setdefault("NQKIT_SHARED", str((args.root.parent / "shared").resolve()))

    src_pkg = args.src_root / "src" / "nqkit"
    texts = {mod: (src_pkg / mod).read_text(encoding="utf-8") for mod in TEST_MAP}
    all_mutants = {mod: candidates(mod, text) for mod, text in texts.items()}
    chosen = sample(all_mutants, texts, args.max, args.seed, args.min_per_module)
    if args.only:
        chosen = [m for m in chosen if selected(m, args.only)]
    if args.list:
        for m in chosen:
            print(m.label())
        return 0

    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="nqkit-mutate-") as tmp:
        tree = Path(tmp)
        shutil.copytree(args.src_root / "src", tree / "src",
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        shutil.copytree(args.root / "tests", tree / "tests",
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(args.root / "pyproject.toml", tree / "pyproject.toml")
        for module in sorted({m.module for m in chosen}):
            status, dt = run_tests(tree, TEST_MAP[module], args.timeout * 3, show=True)
            if status != "survived":
                print(f"{module}: the unmutated tree fails its tests ({status}); fix first",
                      file=sys.stderr)
                return 1
        by_module: dict[str, list[Mutant]] = {}
        for m in chosen:
            by_module.setdefault(m.module, []).append(m)
        for module, mutants in by_module.items():
            path = tree / "src" / "nqkit" / module
            original = path.read_text(encoding="utf-8")
            for m in mutants:
                mutated = apply(original, m)
                try:
                    compile(mutated, str(path), "exec")
                except SyntaxError:
                    results.append({**asdict(m), "status": "invalid", "seconds": 0.0})
                    continue
                path.write_text(mutated, encoding="utf-8")
                try:
                    status, dt = run_tests(tree, TEST_MAP[module], args.timeout)
                finally:
                    path.write_text(original, encoding="utf-8")
                results.append({**asdict(m), "status": status, "seconds": round(dt, 1)})
                print(f"{status:>16}  {dt:5.1f}s  {m.label()}", flush=True)

    print("\n| module | mutants | caught | survived | caught % |")
    print("|---|---:|---:|---:|---:|")
    tot_n = tot_k = 0
    for module in sorted({str(r["module"]) for r in results}):
        rs = [r for r in results if r["module"] == module and r["status"] != "invalid"]
        k = sum(1 for r in rs if str(r["status"]).startswith("killed"))
        tot_n += len(rs)
        tot_k += k
        print(f"| {module} | {len(rs)} | {k} | {len(rs) - k} | {100 * k / max(len(rs), 1):.0f} |")
    print(f"| **all** | {tot_n} | {tot_k} | {tot_n - tot_k} | "
          f"{100 * tot_k / max(tot_n, 1):.1f} |")
    survivors = [r for r in results if r["status"] == "survived"]
    if survivors:
        print("\nsurvivors:")
        for r in survivors:
            print(f"  {Mutant(**{k: r[k] for k in Mutant.__dataclass_fields__}).label()}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
