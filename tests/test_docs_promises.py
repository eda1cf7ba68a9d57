"""The documents describe what exists: no promise of what has already landed (or of what
never will), and every ``nqkit`` command named in prose is a command of the CLI.

A sentence that promises future work ("will be accepted once the registry lands", "is to
come") goes stale silently when the work lands; each one found must be gone or listed in
``ALLOWED`` with the reason it stays.
"""

from __future__ import annotations

import argparse
import re

import pytest

from nqkit.cli import build_parser

from conftest import ROOT

DOCS = [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]

PROMISE = re.compile(
    r"\b(?:(?:is|are) (?:still )?to come|once [^.;]{0,80}? lands?|"
    r"will be (?:added|accepted|supported|available|implemented|possible)|not yet|"
    r"planned|coming soon|in a (?:future|later) (?:release|version)|TODO|TBD)\b",
    re.IGNORECASE)

# (document, the words around the promise) -> why it stays
ALLOWED = {
    ("docs/retrieval.md", "it is planned to become that preset's default"):
        "a plan with its reason stated (the switch changes every default run's lists, so "
        "it is a change of its own); every signature names the flavour, so the switch "
        "cannot go unnoticed",
    ("BENCHMARKS.md", "Against Pyserini it is not yet faster"):
        "a measurement of today, not a promise",
}


def _promises() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        text = " ".join(doc.read_text(encoding="utf-8").split())
        for m in PROMISE.finditer(text):
            found.append((str(doc.relative_to(ROOT)),
                          text[max(0, m.start() - 60):m.end() + 60]))
    return found


def test_no_document_promises_what_exists_or_is_unplanned():
    stale = [(doc, around) for doc, around in _promises()
             if not any(doc == d and words in around for d, words in ALLOWED)]
    assert not stale, "promises of future work (remove, or allow with a reason):\n" + \
        "\n".join(f"{d}: ...{a}..." for d, a in stale)


def test_every_allowed_promise_is_still_there():
    # an allow-list entry whose sentence is gone is removed with it
    found = _promises()
    for doc, words in ALLOWED:
        assert any(d == doc and words in around for d, around in found), (doc, words)


def test_the_promise_finder_finds_the_phrasings_it_is_for():
    for stale in ("names will be accepted once the dataset registry lands",
                  "`nqkit compare` is to come", "support is planned",
                  "not yet supported", "in a future release"):
        assert PROMISE.search(stale), stale
    assert not PROMISE.search("the bytes still to come are checked")


def _commands_in_prose() -> list[tuple[str, str]]:
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # blocks: parsed elsewhere
        for span in re.findall(r"`(nqkit [^`]+)`", text):
            out.append((str(doc.relative_to(ROOT)), span))
    return out


PROSE = _commands_in_prose()

# (document, the command word) -> why a command that does not exist is named there
HYPOTHETICAL = {
    ("docs/contributing.md", "constant-answer"): "the worked example of adding a baseline",
    ("docs/contributing.md", "count"): "the worked example of adding a command",
    ("docs/contributing.md", "nq-open-f1"): "the worked example of adding a task",
    ("docs/vocabulary.md", "evl"): "a typo, to show the suggestion",
}


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    parser._ensure()  # type: ignore[attr-defined]  # subcommands added on first use
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def _unknown(parser: argparse.ArgumentParser, words: list[str]) -> str | None:
    """The first word naming a command that does not exist, else None."""
    subs = _subcommands(parser)
    if not subs or not words or words[0].startswith("-") or not re.fullmatch(
            r"[a-z][a-z0-9_|-]*", words[0]):
        return None  # options, arguments and placeholders (TASK, NAME, ...) follow
    for word in words[0].split("|"):  # `nqkit compare nq-open|ambigqa|retrieval`
        if word not in subs:
            return word
        missing = _unknown(subs[word], words[1:])
        if missing:
            return missing
    return None


def test_the_documents_name_commands_in_prose():
    assert len(PROSE) > 50


@pytest.mark.parametrize(("doc", "span"), PROSE, ids=[f"{d}: {s}"[:80] for d, s in PROSE])
def test_a_command_named_in_prose_exists(doc, span):
    missing = _unknown(build_parser(), span.split()[1:])
    assert missing is None or (doc, missing) in HYPOTHETICAL, (
        f"{doc}: `{span}` names no command ({missing!r})")


def test_the_command_check_finds_a_command_that_does_not_exist():
    parser = build_parser()
    assert _unknown(parser, ["frobnicate"]) == "frobnicate"
    assert _unknown(parser, ["compare", "nq-open|bogus"]) == "bogus"
    assert _unknown(parser, ["data", "stats", "nq/dev"]) is None  # an argument follows
    assert _unknown(parser, ["eval", "TASK", "--gold"]) is None  # a placeholder
