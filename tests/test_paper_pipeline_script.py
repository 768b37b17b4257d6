"""benchmarks/paper_pipeline.py: its MuJoCo evaluation gives the same figures in one process or in
several (``--jobs``), and keeps each suite's JSON so that a second call runs nothing again."""
from __future__ import annotations

import argparse
import importlib
import json
import shutil
from pathlib import Path

from asg.cli.progress import Stages
from asg.learning import fetch_programs as fp

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _figures(suites: dict[str, dict]) -> dict[str, dict]:
    """Each suite's result less its wall time."""
    return {name: {k: v for k, v in result.items() if k != "wall_seconds"} for name, result in suites.items()}


def _kept(folder: Path) -> dict[str, dict]:
    """The suites' JSON files as the evaluation kept them."""
    return _figures({path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))
                     if path.stem in ("atomic", "network", "plan", "replan")})


def test_evaluation_in_two_processes_equals_one(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # spawned workers import the script's module by name
    script = importlib.import_module("paper_pipeline")
    policy, model = str(fp.shipped("goal-policy")), str(fp.shipped("behaviour-model"))
    args = argparse.Namespace(atomic_episodes=1, table_episodes=1, seed=0, jobs=1)
    figures = {}
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        (out / "meta-controller").mkdir(parents=True)
        shutil.copy(fp.shipped("meta-controller"), out / "meta-controller" / fp.STAGE_FILE["meta-controller"])
        found = script.evaluate(out, policy, model, argparse.Namespace(**{**vars(args), "jobs": jobs}),
                                Stages(quiet=True))
        assert list(found) == ["atomic", "network", "plan", "replan"]
        assert len(found["atomic"]["programs"]) == 20
        assert all(r["episodes"] == 1 for r in found["atomic"]["programs"].values())
        assert set(found["replan"]["families"]) == set(script.PAPER_TABLE2)
        figures[jobs] = _kept(out / "eval")
        assert set(figures[jobs]) == {"atomic", "network", "plan", "replan"}
    assert figures[1] == figures[2]
    # a second call reads the kept JSONs: nothing runs, the same figures come back
    again = script.evaluate(tmp_path / "jobs2", policy, model, argparse.Namespace(**{**vars(args), "jobs": 2}),
                            Stages(quiet=True))
    assert _figures(again) == figures[2]
