"""benchmarks/replan_stop_trace.py: every atomic call of re-plan episodes in MuJoCo, with what it left;
here, the Moves that leave their zone's two slots taken by one block."""
from __future__ import annotations

import json

import numpy as np
from conftest import REPO, benchmark_script

from asg.envs.fetch.labeler import slot_occupancy
from asg.envs.fetch.layout import REST_Z, ZONES

STAGES = REPO / "benchmarks" / "results" / "fetch_programs" / "expert_free"


def test_a_block_between_the_slots_takes_both_and_the_trace_counts_it():
    centre = np.array([[*ZONES["orange"].centre, REST_Z], [1.30, 0.75, REST_Z], [1.20, 0.80, REST_Z],
                       [1.45, 0.85, REST_Z]])
    assert slot_occupancy(centre, "orange").all()  # one block, both slots: the zone's next Move has none
    on_slot = centre.copy()
    on_slot[0, :2] = ZONES["orange"].slots()[0, :2]
    assert not slot_occupancy(on_slot, "orange").all()
    trace = benchmark_script("replan_stop_trace")
    episodes = [[{"zone_blocked_after": True}, {"zone_blocked_after": None}],
                [{"zone_blocked_after": False}, {"zone_blocked_after": False}]]
    assert trace.blocked_zones(episodes) == {"moves": 3, "blocked": 1, "episodes_rate": 0.5}


def test_the_trace_records_each_moves_zone(tmp_path):
    out = tmp_path / "calls.json"
    benchmark_script("replan_stop_trace").main([
        "--checkpoint", str(STAGES / "meta-controller-seeds" / "view-s3"), "--program", "Move_All_To_Zone_BLUE",
        "--episodes", "1", "--quiet", "--policy", str(STAGES / "goal-policy-soup" / "policy.npz"),
        "--behaviour-model", str(STAGES / "behaviour-model-soup" / "behaviour_model.npz"), "--out", str(out)])
    data = json.loads(out.read_text())
    calls = data["episodes"][0]
    moves = [c for c in calls if c["program"].startswith("Move_To_Zone")]
    assert moves and all(isinstance(c["zone_blocked_after"], bool) for c in moves)
    assert all(c["zone_blocked_after"] is None for c in calls if c["program"].startswith("Stack"))
    assert data["moves_leaving_the_zone_blocked"]["moves"] == len(moves)
