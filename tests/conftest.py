"""Test configuration: where the real data lives, and how its absence is treated.

Tests that read real samples and official outputs find them under ``NQKIT_SHARED``
(default: ``../shared`` beside the project root). Without it they skip with a reason,
unless ``NQKIT_REQUIRE_SHARED=1`` (set by ``.ci/run``), where absence is a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NQKIT_SHARED", ROOT.parent / "shared")).resolve()
REQUIRE_SHARED = os.environ.get("NQKIT_REQUIRE_SHARED", "") not in ("", "0")


def shared_file(*parts: str) -> Path:
    """Path of a file under the shared data; skip (or fail under CI) when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        msg = f"shared data not found: {path} (set NQKIT_SHARED)"
        if REQUIRE_SHARED:
            pytest.fail(msg)
        pytest.skip(msg)
    return path


@pytest.fixture
def shared():
    """The ``shared_file`` helper as a fixture."""
    return shared_file
