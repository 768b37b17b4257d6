"""benchmarks/fetch_tower_sites.py: the three chains of Stack_All_Blocks' tower, each call scored in MuJoCo and
by the behaviour model beforehand."""
from __future__ import annotations

import json

import pytest
from conftest import REPO, benchmark_script

PRETRAINED = REPO / "learning" / "pretrained"


def test_each_chain_stops_at_its_first_failed_call_and_the_model_is_asked_first(tmp_path):
    out = tmp_path / "sites.json"
    benchmark_script("fetch_tower_sites").main(["--policy", str(PRETRAINED / "fetch_goal_policy.npz"),
                                                "--behaviour-model", str(PRETRAINED / "fetch_behaviour_model.npz"),
                                                "--episodes", "2", "--seed", "5", "--out", str(out)])
    data = json.loads(out.read_text())
    assert data["seeds"] == [5, 6] and data["budget"] == {"episodes_per_chain": 2}
    assert set(data["chains"]) == {"table", "orange", "blue"}
    for chain in data["chains"].values():
        calls = chain["calls"]
        assert calls[0]["calls"] == 2
        for before, after in zip(calls, calls[1:]):  # only the calls whose ψ held go on
            assert after["calls"] == (round(before["calls"] * before["psi_rate"]) if before["calls"] else 0)
        last = calls[-1]
        assert chain["completed"] == (round(last["calls"] * last["psi_rate"]) if last["calls"] else 0)
        assert all("success_head_mean" not in c for c in calls)  # the shipped model has no success head
        assert all(c["model_psi_rate"] is None or 0.0 <= c["model_psi_rate"] <= 1.0 for c in calls)
    assert data["chains"]["orange"]["calls"][0]["program"] == "Move_To_Zone_0_ORANGE"


def test_a_missing_file_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        benchmark_script("fetch_tower_sites").main(["--policy", str(tmp_path / "none.npz"),
                                                    "--behaviour-model", str(tmp_path / "none.npz")])
    assert stop.value.code == 2 and "--policy" in capsys.readouterr().err
