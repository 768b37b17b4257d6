"""Packages and data files by construction, so a wheel can never miss one.

The repository root is the package ``asg`` (``package_dir`` in setup.cfg): every folder below
it that holds an ``__init__.py`` is a subpackage, and every other file inside a subpackage's
folder tree (PDDL models, MuJoCo assets, shipped weights, vendored scripts) ships with it.
Metadata and dependencies stay in setup.cfg.
"""
from __future__ import annotations

from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
NOT_SHIPPED = ["tests", "tests.*", "benchmarks", "benchmarks.*", "scripts", "scripts.*", "docs", "build"]
SKIP_PARTS = {"__pycache__", "build", "dist", ".git"}
SKIP_SUFFIXES = {".py", ".pyc", ".pyo"}


def subpackages() -> list[str]:
    """``asg.<name>`` for every package folder below the root, tests and tooling left out."""
    return [f"asg.{name}" for name in find_packages(str(ROOT), exclude=NOT_SHIPPED)]


def data_files(package: str) -> list[str]:
    """Every non-Python file in the package's folder and its non-package subfolders."""
    folder = ROOT.joinpath(*package.split(".")[1:])
    found: list[str] = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if (not path.is_file() or path.suffix in SKIP_SUFFIXES
                or any(part in SKIP_PARTS or part.startswith(".") or part.endswith(".egg-info")
                       for part in rel.parts)):
            continue
        owner = path.parent
        while owner != folder and not (owner / "__init__.py").is_file():
            owner = owner.parent
        if owner == folder:  # files of a nested package belong to that package
            found.append(rel.as_posix())
    return found


class BuildPy(build_py):
    """The root folder is the package ``asg``: keep this build script out of it."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if not (package == "asg" and m[1] == "setup")]


PACKAGES = subpackages()
setup(
    cmdclass={"build_py": BuildPy},
    packages=["asg", *PACKAGES],
    package_data={name: data_files(name) for name in PACKAGES if data_files(name)},
)
