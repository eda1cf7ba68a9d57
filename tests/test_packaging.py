"""Install like a real package: the wheel and the sdist build, and the wheel installed in
a fresh virtualenv runs ``nqkit demo`` (package data, templates and toy data included)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, require


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require("build")
    out = tmp_path_factory.mktemp("dist")
    # a copy of the tree, so the build leaves nothing (egg-info, build/) in this one
    src = tmp_path_factory.mktemp("tree") / "nqkit"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", "bench-data",
        ".mypy_cache", ".ruff_cache", "artifacts"))
    # without isolation: setuptools comes from this environment (no index needed)
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel",
                           "--sdist", "--outdir", str(out), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return out


def test_wheel_and_sdist_carry_the_package_data(dist: Path) -> None:
    (wheel,) = dist.glob("nqkit-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("nqkit/data/toy-nq-dev.jsonl", "nqkit/data/toy-nq-train.jsonl",
                   "nqkit/datasets/official-sources.tsv",
                   "nqkit/datasets/catalog.json", "nqkit/browser/templates/example.html",
                   "nqkit/py.typed", "nqkit/data/split-fingerprints.json"):
        assert needed in names, needed
    (sdist,) = dist.glob("nqkit-*.tar.gz")
    with tarfile.open(sdist) as tar:
        members = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
    assert {"pyproject.toml", "README.md", "src/nqkit/cli.py"} <= members


def test_the_wheel_runs_the_demo_in_a_fresh_virtualenv(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("nqkit-*.whl")
    venv = tmp_path / "venv"
    # the dependencies come from this environment; nqkit itself only from the wheel
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=300)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, timeout=300)
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path),
           "HF_HUB_OFFLINE": "1"}
    where = subprocess.run([str(py), "-c", "import nqkit; print(nqkit.__file__)"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, check=True)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout
    demo = subprocess.run([str(venv / "bin" / "nqkit"), "demo", "-o", str(tmp_path / "d")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert "Natural Questions, official metrics" in demo.stdout
    assert (tmp_path / "d" / "toy-nq-dev.jsonl").read_bytes() == (
        ROOT / "src" / "nqkit" / "data" / "toy-nq-dev.jsonl").read_bytes()
