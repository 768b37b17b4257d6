"""benchmarks/fetch_handoff.py: the hand-off from one learned program to the next, measured against
the same next program after a release; its tiny version writes the JSON with its provenance."""
from __future__ import annotations

import json

from conftest import REPO, benchmark_script

POLICY = REPO / "learning" / "pretrained" / "fetch_goal_policy.npz"


def test_the_tiny_hand_off_benchmark_counts_held_blocks_and_stacks(tmp_path):
    out = tmp_path / "handoff.json"
    benchmark_script("fetch_handoff").main(["--policy", str(POLICY), "--episodes", "2", "--out", str(out)])
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
