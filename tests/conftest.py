"""Shared fixtures: the IPC corpus in ../shared (skipped with a reason where absent)."""
from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
IPC = SHARED / "benchmarks" / "ipc"
PITFALLS = SHARED / "research" / "pitfalls"
DATA = Path(__file__).resolve().parent / "data"
BENCHMARKS = REPO / "benchmarks"


def benchmark_script(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module, a fresh one per call (it imports benchmarks/provenance.py
    as ``python benchmarks/<name>.py`` does, so that folder goes on the path)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def one_line(result, code: int = 2) -> str:
    """The one non-blank line a CLI run printed, after checking its exit code and that no traceback
    was printed (a click ``CliRunner`` result)."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def ipc_rows(fragment: str | None = "strips") -> list[dict]:
    """Rows of the IPC manifest (empty when ../shared is absent)."""
    manifest = IPC / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    with open(manifest) as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [r for r in rows if fragment is None or r["fragment"] == fragment]


def ipc_paths(row: dict) -> tuple[Path, Path]:
    return IPC / row["domain_file"], IPC / row["problem_file"]


@pytest.fixture
def need_ipc():
    if not (IPC / "MANIFEST.tsv").is_file():
        pytest.skip(f"the IPC corpus is not at {IPC} (../shared is absent in this checkout)")


@pytest.fixture
def need_pitfalls():
    if not PITFALLS.is_dir():
        pytest.skip(f"the pitfall probes are not at {PITFALLS} (../shared is absent)")
