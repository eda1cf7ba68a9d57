"""Install like a real package: the wheel and the sdist build, and the wheel installed in
a fresh virtualenv runs ``nqkit demo`` (package data, templates and toy data included)."""

from __future__ import annotations

import shutil
import site
import subprocess
import sys
import sysconfig
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
        ".mypy_cache", ".ruff_cache", "artifacts", ".venv"))
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


def running_site_dirs() -> list[str]:
    """The site directories of the environment this suite runs in, whatever it is: the
    system interpreter, a virtualenv or a conda environment. ``venv
    --system-site-packages`` would see the *base* interpreter's instead, which inside a
    virtualenv lacks the dependencies the user installed there."""
    dirs = [*site.getsitepackages(), sysconfig.get_paths()["purelib"],
            sysconfig.get_paths()["platlib"]]
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dict.fromkeys(dirs) if Path(d).is_dir()]


def test_the_dependencies_come_from_the_running_environment() -> None:
    # the fresh virtualenv below must see the packages of this environment: where
    # msgspec (a core dependency) was installed is one of the directories it is given
    import msgspec

    where = Path(msgspec.__file__).resolve().parent.parent
    assert any(where == Path(d).resolve() for d in running_site_dirs()), where


def test_the_wheel_runs_the_demo_in_a_fresh_virtualenv(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("nqkit-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, timeout=300)
    # then the dependencies: the environment running this suite, appended after the
    # virtualenv's own site-packages (addsitedir also runs their .pth files, as that
    # environment does), so nqkit itself still comes only from the wheel
    purelib = subprocess.run([str(py), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "_running_environment.pth").write_text(
        "".join(f"import site; site.addsitedir({d!r})\n" for d in running_site_dirs()))
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
