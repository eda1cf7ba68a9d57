"""Every ``nqkit`` command shown in README.md and docs/ parses as written, with no
deprecation notice: a renamed or removed option fails here, not in a reader's terminal.
Every Python example there is valid Python whose ``from nqkit... import`` names exist.

Commands are taken from the documents' fenced code blocks (continuation lines joined,
comments and pipes cut), so a document cannot drift from the command line it shows.
Parsing is argparse's own: an unknown option, a missing required one or a bad choice
exits with code 2.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import re
import shlex

import pytest

from nqkit.cli import build_parser

from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _commands() -> list[tuple[str, str]]:
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M):
            joined = re.sub(r"\\\n\s*", " ", block)
            for line in joined.splitlines():
                line = line.strip().removeprefix("$ ")
                if not line.startswith("nqkit ") or "[" in line:  # "[...]": a synopsis
                    continue
                out.append((f"{doc.relative_to(ROOT)}: {line}", line))
    return out


COMMANDS = _commands()


@pytest.fixture(scope="module")
def parser():
    return build_parser()


def test_the_documents_show_commands():
    # the extraction itself works: README alone shows more than ten
    assert sum(where.startswith("README.md") for where, _ in COMMANDS) > 10


@pytest.mark.parametrize("line", [line for _, line in COMMANDS],
                         ids=[where[:90] for where, _ in COMMANDS])
def test_a_documented_command_parses_without_a_notice(parser, line):
    # shell variables: $B stands for a baseline name (docs/baselines.md), the others for paths
    line = re.sub(r"\$[A-Z]+", lambda m: "first_paragraph" if m[0] == "$B" else "x", line)
    words = shlex.split(line, comments=True)
    words = words[: words.index("|")] if "|" in words else words
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            parser.parse_args(words[1:])
        except SystemExit as e:
            pytest.fail(f"argparse refused it (exit {e.code}): {err.getvalue().strip()}")
    assert err.getvalue() == ""


def _python_blocks() -> list[tuple[str, str]]:
    return [(f"{doc.relative_to(ROOT)} #{i}", block) for doc in DOCS
            for i, block in enumerate(re.findall(r"^```python\n(.*?)^```",
                                                 doc.read_text(encoding="utf-8"), re.S | re.M))]


PYTHON = _python_blocks()


def test_the_documents_show_python():
    assert sum(where.startswith("README.md") for where, _ in PYTHON) >= 1


@pytest.mark.parametrize("code", [code for _, code in PYTHON], ids=[w for w, _ in PYTHON])
def test_a_documented_python_example_imports_what_exists(code):
    missing = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("nqkit"):
            module = importlib.import_module(str(node.module))
            for alias in node.names:
                if not hasattr(module, alias.name):
                    try:
                        importlib.import_module(f"{node.module}.{alias.name}")
                    except ImportError:
                        missing.append(f"{node.module}.{alias.name}")
    assert missing == []


def _install_steps() -> list[str]:
    """README.md's install-and-test command (the first code block after its first line),
    as single steps: ``&&`` split, comments cut."""
    block = re.findall(r"^```bash\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)[0]
    steps = []
    for line in block.splitlines()[1:]:
        steps += [s.strip() for s in line.split("#")[0].split("&&") if s.strip()]
    return steps


def test_ci_runs_the_readme_install_and_test_command_in_a_fresh_virtualenv():
    steps = _install_steps()
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.strip().startswith("#")]
    # README creates and enters a virtualenv, and CI does too, before its first install
    assert any(" -m venv " in s for s in steps) and any(
        s.startswith(". ") and s.endswith("/bin/activate") for s in steps), steps
    first_pip = next(i for i, line in enumerate(ci) if "pip install" in line)
    assert any(" -m venv " in line for line in ci[:first_pip]), ci
    assert any(line.startswith(". ") and line.endswith('/bin/activate"')
               for line in ci[:first_pip]), ci
    # every pip install of README, in the same order, as `python -m pip install -q ...`
    pips = [s.removeprefix("pip install ") for s in steps if s.startswith("pip install ")]
    ci_pips = [line.removeprefix("python -m pip install -q ") for line in ci
               if line.startswith("python -m pip install -q ")]
    assert pips == [p for p in ci_pips if p in pips] and set(pips) <= set(ci_pips), (
        pips, ci_pips)
    # the Debian packages README installs are the ones CI installs when missing
    apt = next(s for s in steps if s.startswith("apt-get install")).split()[3:]
    assert all(f"APT_PACKAGES+=({p})" in (ROOT / ".ci" / "run").read_text() for p in apt)
    # and the test command is the last step of both
    assert steps[-1] == ci[-1] == "python -m pytest -q"
