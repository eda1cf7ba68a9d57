"""Long work is visible (issue 30): every long step shows its progress on stderr.

On a terminal a tqdm bar; anywhere else (a log, CI) a plain line at most every
``nqkit.report.PLAIN_INTERVAL`` seconds, the first only after that long, so a short run
prints nothing more. The tests set the interval to 0 through that module constant (no
test waits or measures time) and look for the lines of the steps themselves; stdout, the
files written and the numbers stay those of a run at the default interval.
"""

from __future__ import annotations

import io
import re

import pytest

import nqkit.report
from nqkit.report import plain_line, progress, progress_bar

# a progress line off a terminal: "nqkit: DESC: 12,000/21,000 (57%), 41 s" or, without a
# total, "nqkit: DESC: 1,234 passages, 41 s"
LINE = re.compile(r"^nqkit: (?P<desc>.+?): (?P<done>[\d,]+(?:/[\d,]+ \(\d+%\)| \w+)), "
                  r"[\d,]+ s$")


def _lines(err: str) -> list[tuple[str, str]]:
    """(desc, count) of every progress line of ``err``."""
    return [(m["desc"], m["done"]) for m in map(LINE.match, err.splitlines()) if m]


@pytest.fixture
def every_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """A progress line at every step, from the first (the interval set to 0)."""
    monkeypatch.setattr(nqkit.report, "PLAIN_INTERVAL", 0.0)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# ------------------------------------------------------------------------- the helper

def test_off_a_terminal_each_step_is_one_plain_line(every_step: None) -> None:
    out = io.StringIO()
    assert list(progress(range(3), desc="encoding passages", file=out)) == [0, 1, 2]
    lines = out.getvalue().splitlines()
    assert [line.rsplit(", ", 1)[0] for line in lines] == [
        "nqkit: encoding passages: 0/3 (0%)", "nqkit: encoding passages: 1/3 (33%)",
        "nqkit: encoding passages: 2/3 (66%)", "nqkit: encoding passages: 3/3 (100%)"]
    assert all(LINE.match(line) for line in lines)
    assert "\r" not in out.getvalue()  # lines for a log, no bar redrawn in place


def test_a_short_step_prints_nothing_at_the_default_interval() -> None:
    assert nqkit.report.PLAIN_INTERVAL == 10.0
    out = io.StringIO()
    assert sum(progress(range(10_000), desc="x", file=out)) == sum(range(10_000))
    with progress_bar(desc="y", total=10, unit="B", unit_scale=True, file=out) as bar:
        bar.reset(total=100)  # a download learning its size: no line before the interval
        bar.update(50)
    assert out.getvalue() == ""


def test_on_a_terminal_it_is_a_tqdm_bar() -> None:
    out = _Terminal()
    assert list(progress(range(3), desc="encoding passages", file=out)) == [0, 1, 2]
    assert "\r" in out.getvalue() and "encoding passages" in out.getvalue()


@pytest.mark.parametrize(("d", "line"), [
    ({"n": 12_000, "total": 21_000, "unit": "passage", "unit_scale": False},
     "nqkit: encoding passages: 12,000/21,000 (57%), 41 s"),
    ({"n": 1_234_567, "total": None, "unit": "passage", "unit_scale": False},
     "nqkit: encoding passages: 1,234,567 passages, 41 s"),
    ({"n": 1, "total": None, "unit": "passage", "unit_scale": False},
     "nqkit: encoding passages: 1 passage, 41 s"),
    ({"n": 7, "total": None, "unit": "q", "unit_scale": False},
     "nqkit: encoding passages: 7 q, 41 s"),
    ({"n": 5, "total": 4, "unit": "it", "unit_scale": False},  # past a wrong total
     "nqkit: encoding passages: 5 it, 41 s"),
    ({"n": 1_200_000_000, "total": 3_000_000_000, "unit": "B", "unit_scale": True},
     "nqkit: encoding passages: 1.20GB/3.00GB (40%), 41 s"),
])
def test_plain_line(d: dict[str, object], line: str) -> None:
    assert plain_line({**d, "prefix": "encoding passages", "elapsed": 41.4,
                       "unit_divisor": 1000}) == line
