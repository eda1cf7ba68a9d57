"""Under CI (NQKIT_REQUIRE_SHARED=1) a test skipped for a missing module is a failure.

Runs pytest in a subprocess on a scratch directory holding a copy of this conftest and
tests that need a module that does not exist.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SCRATCH_TESTS = '''
import pytest

from conftest import require


def test_require():
    require("nqkit_no_such_module")


def test_importorskip():
    pytest.importorskip("nqkit_no_such_module")


def test_other_skip():
    pytest.skip("no AVX2 here")  # not about a module: stays a skip


def test_ok():
    pass
'''

SCRATCH_MODULE_LEVEL = '''
from conftest import require

require("nqkit_no_such_module")


def test_never_runs():
    pass
'''


def _pytest(tmp_path: Path, require_shared: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "NQKIT_REQUIRE_SHARED"}
    env["NQKIT_REQUIRE_SHARED"] = require_shared
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfEs",
           "--continue-on-collection-errors", str(tmp_path)]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_a.py").write_text(SCRATCH_TESTS)
    (tmp_path / "test_b.py").write_text(SCRATCH_MODULE_LEVEL)
    return tmp_path


def test_missing_modules_fail_under_ci(scratch: Path):
    out = _pytest(scratch, "1")
    assert out.returncode == 1, out.stdout + out.stderr
    last = out.stdout.strip().splitlines()[-1]
    assert "2 failed, 1 passed, 1 skipped, 1 error" in last, out.stdout
    # require() fails by itself (in a test and at module level: the error); a plain
    # importorskip is turned into a failure by the conftest hook; the other skip stays
    assert "FAILED test_a.py::test_require - Failed: missing dependency: nqkit_no_such" in (
        out.stdout)
    assert "FAILED test_a.py::test_importorskip - skipped for a missing module under " in (
        out.stdout)
    assert "ERROR test_b.py - Failed: missing dependency: nqkit_no_such_module" in out.stdout
    assert "SKIPPED [1] test_a.py:16: no AVX2 here" in out.stdout


def test_missing_modules_skip_outside_ci(scratch: Path):
    out = _pytest(scratch, "0")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 passed, 4 skipped" in out.stdout.strip().splitlines()[-1], out.stdout
