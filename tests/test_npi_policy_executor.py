"""Non-atomic programs in the real Fetch env with the learned goal policy running the atomic
programs; the evaluation's JSON contract and the Table 2 formatter."""
from __future__ import annotations

import json

import pytest

from asg.learning.errors import CheckpointError, ConfigError
from asg.learning.npi.config import NetConfig, NPIConfig, SearchConfig
from asg.learning.npi.pipeline import (
    PAPER_TABLE2,
    ProgramEvaluation,
    evaluate_programs,
    table2_lines,
    train_meta_controller,
)

LEVEL1 = "Move_All_To_Zone_ORANGE"
TINY = NPIConfig(net=NetConfig(lr=1e-3), search=SearchConfig(simulations=5, simulations_exploit=3), iterations=1,
                 episodes_per_iteration=2, batch_size=2, validation_episodes=1, programs=(LEVEL1,))


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("npi") / "run"
    train_meta_controller(out, config=TINY, seed=0, iterations=1)
    return out


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory):
    import torch

    from asg.learning.goal_policy.config import AgentConfig
    from asg.learning.goal_policy.ddpg import DDPGAgent
    from asg.learning.goal_policy.evaluate import save_policy

    torch.set_num_threads(1)
    policy = DDPGAgent(70, 12, 4, AgentConfig(hidden=(16, 16)), seed=0).snapshot()  # untrained
    return save_policy(policy, tmp_path_factory.mktemp("policy") / "policy.npz")


def test_the_goal_policy_runs_the_atomic_programs(checkpoint, policy_file, tmp_path, monkeypatch):
    from asg.envs.fetch.goal_setter import acting_block
    from asg.learning.goal_policy.evaluate import PolicyController

    blocks, actions = [], []
    reset, act = PolicyController.reset, PolicyController.act
    monkeypatch.setattr(PolicyController, "reset",
                        lambda self, obs, goal, block=None: (blocks.append(block), reset(self, obs, goal, block))[1])
    monkeypatch.setattr(PolicyController, "act", lambda self, obs: (actions.append(1), act(self, obs))[1])
    js = tmp_path / "eval.json"
    report = evaluate_programs(checkpoint, mode="replan", model="exact", world="real", episodes=1,
                               programs=[LEVEL1], controller_policy=policy_file, json_path=js)
    assert report.controller == str(policy_file)
    rate = report.programs[LEVEL1]["success_rate"]
    assert isinstance(rate, float) and 0.0 <= rate <= 1.0
    # Every atomic call ran the policy for T = 50 steps, focused on the block its program moves.
    atomic = [c.program for c in report.example.calls if c.atomic]
    assert atomic and blocks == [acting_block(name) for name in atomic] and len(actions) == 50 * len(atomic)
    saved = json.loads(js.read_text())
    assert saved == report.to_json()
    assert {"mode", "model", "programs"} <= set(saved) and saved["controller"] == str(policy_file)
    assert saved["programs"] == {LEVEL1: {"success_rate": rate, "episodes": 1}}
    assert isinstance(saved["programs"][LEVEL1]["episodes"], int)


def test_without_a_policy_the_scripted_controller_runs_them(checkpoint):
    report = evaluate_programs(checkpoint, mode="network", world="real", episodes=1, programs=[LEVEL1])
    assert report.controller == "scripted" and report.to_json()["controller"] == "scripted"
    assert "scripted controller" in report.table_lines()[0]


def test_policy_errors(checkpoint, policy_file, tmp_path):
    with pytest.raises(ConfigError, match="real world"):
        evaluate_programs(checkpoint, world="model", episodes=1, programs=[LEVEL1], controller_policy=policy_file)
    with pytest.raises(CheckpointError, match="no policy file"):
        evaluate_programs(checkpoint, world="real", episodes=1, programs=[LEVEL1],
                          controller_policy=tmp_path / "missing.npz")
    model_world = evaluate_programs(checkpoint, mode="network", world="model", episodes=1, programs=[LEVEL1])
    assert model_world.controller is None  # no controller in the model world


def test_table2_puts_the_papers_numbers_beside_ours():
    families = {f: 0.5 for f in PAPER_TABLE2}
    evaluations = [ProgramEvaluation(mode, "exact", "real", {}, dict(families))
                   for mode in ("network", "plan", "replan")]
    lines = table2_lines(evaluations)
    assert len(lines) == 1 + len(PAPER_TABLE2)
    clean = next(line for line in lines if line.startswith("Clean_Table")).split()
    assert clean[1:] == ["0.50", "0.02", "0.50", "0.54", "0.50", "0.63"]  # ours, paper per mode
    single = evaluations[2].table_lines()
    assert any(line.split()[1:] == ["0.50", "0.94"] for line in single if line.startswith("Stack_All_To_Zone"))
