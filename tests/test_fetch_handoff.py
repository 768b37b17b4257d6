"""benchmarks/fetch_handoff.py: the hand-off from one learned program to the next, measured against
the same next program after a release; its tiny version writes the JSON with its provenance."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
POLICY = Path(__file__).resolve().parent.parent / "learning" / "pretrained" / "fetch_goal_policy.npz"


def _load():
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location("fetch_handoff", BENCHMARKS / "fetch_handoff.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tiny_hand_off_benchmark_counts_held_blocks_and_stacks(tmp_path):
    out = tmp_path / "handoff.json"
    _load().main(["--policy", str(POLICY), "--episodes", "2", "--out", str(out)])
    data = json.loads(out.read_text())
    assert data["command"].startswith("python benchmarks/fetch_handoff.py") and data["seeds"] == [0, 1]
    assert set(data["zones"]) == {"ORANGE", "BLUE"}
    for zone in data["zones"].values():
        released = zone["released"]
        assert released["move_successes"] == 2  # the scripted Move succeeds on every table start
        assert released["held_after_move"] == 0  # and lets go: the comparator the policy is measured against
        for row in (zone["policy"], released):
            assert 0 <= row["held_after_move"] <= row["move_successes"] <= row["episodes"] == 2
            assert 0 <= row["stack_successes"] <= row["move_successes"]
