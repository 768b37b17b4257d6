"""The wheel holds every subpackage and data file of the checkout, and nothing of the tooling.

Built from a copy of the files git tracks (a clean checkout), the way `pip install .` builds it.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_DIRS = ("planning", "envs", "learning", "cli", "pddl_models")
NOT_SHIPPED_DIRS = ("tests", "benchmarks", "scripts", "docs", ".ci")


def _tracked_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, check=True).stdout
    return sorted(f for f in out.decode().split("\0") if f and (ROOT / f).is_file())


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> tuple[list[str], list[str]]:
    tracked = _tracked_files()
    src = tmp_path_factory.mktemp("checkout")
    for name in tracked:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(dist)], check=True, capture_output=True)
    (wheel,) = dist.glob("asg-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return tracked, archive.namelist()


def test_every_shipped_file_is_in_the_wheel(wheel_names):
    tracked, names = wheel_names
    expected = {f"asg/{f}" for f in tracked
                if f == "__init__.py" or (f.split("/", 1)[0] in SHIPPED_DIRS and not f.endswith((".pyc",)))}
    missing = sorted(expected - set(names))
    assert not missing, f"not in the wheel: {missing[:10]}"
    for sub in ("asg/planning/landmarks/__init__.py", "asg/pddl_models/mario.pddl",
                "asg/envs/fetch/assets/fetch_blocks.xml", "asg/learning/pretrained/MANIFEST.json"):
        assert sub in names


def test_tooling_is_not_in_the_wheel(wheel_names):
    _, names = wheel_names
    leaked = [n for n in names if n.split("/")[1] in NOT_SHIPPED_DIRS or n.startswith(NOT_SHIPPED_DIRS)]
    assert not leaked, leaked[:10]
    assert not [n for n in names if n.startswith("asg/") and n.count("/") == 1 and n != "asg/__init__.py"]
