"""What every benchmark's results JSON says about how it was made, and the atomic write of it.

A results file quoted in README.md or docs/ carries four keys besides its figures:

``command``
    The command line that wrote it, as a reader would type it from the repository root.
``commit``
    The git commit the code was at (``git rev-parse --short HEAD``; ``+dirty`` when tracked
    files differed from it). For files stamped after the fact, the commit that committed the
    file, which ``provenance`` then says.
``budget``
    What each run was allowed: a dict such as ``{"env_steps": 500000}`` or ``{"epochs": 10}``,
    or ``{"timeout_s": 300}`` for a planning benchmark.
``seeds``
    The seeds used, a list of ints; ``None`` where nothing random is involved (planning
    benchmarks), which ``provenance`` or the script's docstring then says.

``python benchmarks/X.py`` puts benchmarks/ on ``sys.path``, so the scripts ``import provenance``.
"""
from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from asg.learning.atomic import atomic_write

REQUIRED = ("command", "commit", "budget", "seeds")
REPO = Path(__file__).resolve().parent.parent


def git_commit(repo: Path = REPO) -> str:
    """The checkout's short commit, ``+dirty`` when a tracked file differs; ``unknown`` outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=repo, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=repo, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def command_line(script: str, argv: Sequence[str] | None = None) -> str:
    """``python benchmarks/SCRIPT.py ARGS`` with the arguments this process got (or ``argv``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    return shlex.join(["python", f"benchmarks/{Path(script).name}", *args])


def stamp(data: dict[str, Any], command: str, budget: dict[str, Any] | None,
          seeds: Sequence[int] | None, commit: str | None = None) -> dict[str, Any]:
    """``data`` with the four provenance keys first (``commit`` defaults to the checkout's)."""
    meta = {"command": command, "commit": commit if commit is not None else git_commit(),
            "budget": budget, "seeds": None if seeds is None else [int(s) for s in seeds]}
    return {**meta, **{k: v for k, v in data.items() if k not in meta}}


def write_json(path: str | Path, data: Any, indent: int = 2, sort_keys: bool = False) -> None:
    """``data`` as JSON at ``path``, atomically (a temp file beside it, then ``os.replace``)."""
    atomic_write(Path(path), (json.dumps(data, indent=indent, sort_keys=sort_keys) + "\n").encode())


def write_result(path: str | Path, data: dict[str, Any], command: str, budget: dict[str, Any] | None,
                 seeds: Sequence[int] | None, **dumps: Any) -> dict[str, Any]:
    """Stamp ``data`` (see :func:`stamp`) and write it atomically; returns what was written."""
    stamped = stamp(data, command, budget, seeds)
    write_json(path, stamped, **dumps)
    return stamped


def named_path(what: str) -> Callable[[str], tuple[str, Path]]:
    """An argparse ``type`` for the ``NAME=PATH`` arguments of the benchmarks that compare named runs
    (``what`` names the path in the message: ``DIR``, ``FILE``, ``RUN_DIR``)."""
    def parse(spec: str) -> tuple[str, Path]:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise argparse.ArgumentTypeError(f"expected NAME={what}, got {spec!r}")
        return name, Path(path)
    return parse


def missing(data: Any) -> list[str]:
    """The provenance keys ``data`` (a results file's JSON) lacks; a non-object lacks all four."""
    if not isinstance(data, dict):
        return list(REQUIRED)
    return [key for key in REQUIRED if key not in data]
