"""The refill resume (``goal_policy/carry.py``): a goal-policy run continued on another machine from a
carry file (weights, normalisers, optimiser state, RNG, progress; no buffers), its replay buffer refilled."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from conftest import one_line

from asg.cli.main import main
from asg.learning import checkpoint
from asg.learning.errors import CheckpointError, ConfigError
from asg.learning.goal_policy import carry
from asg.learning.goal_policy.trainer import GoalPolicyTrainer, read_checkpoint, train_goal_policy

TINY = {
    "agent": {"hidden": [32, 32], "batch_size": 32},
    "replay": {"buffer_size": 5000, "state_buffer_size": 50},
    "schedule": {"epochs_phase1": 1, "epochs_phase2": 1, "cycles": 1, "batches": 2, "episodes_per_cycle": 2,
                 "eval_episodes": 2, "threads": 1, "checkpoint_every": 1,
                 "programs": ["Move_To_Zone_0_ORANGE", "Stack_1_0"]},
}


def tiny():
    from asg.learning import configio
    from asg.learning import fetch_programs as fp

    return configio.override(fp.goal_policy_config("learned"), TINY, "config")


@pytest.fixture(scope="module")
def first_epoch(tmp_path_factory):
    """A tiny ``learned`` run stopped after its first of two epochs."""
    out = tmp_path_factory.mktemp("carry") / "a"
    train_goal_policy(tiny(), out, seed=3, max_epochs=1)
    return out


def same_tensors(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_tensors(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_tensors(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def test_every_checkpoint_writes_a_small_carry_file_without_the_buffers(first_epoch):
    tree, meta = carry.read_carry(first_epoch / carry.CARRY_FILE)
    assert set(tree) == set(carry.CARRIED) and meta["epoch"] == 1
    full = read_checkpoint(first_epoch)
    assert same_tensors(tree["agent"], full["agent"]) and tree["progress"] == full["progress"]
    assert "buffer" in full and "states" in full and not {"buffer", "states", "labels", "demos"} & set(tree)
    # a run checkpointed before carry files existed: exported from its checkpoint, the same content
    exported = carry.export_carry(first_epoch, first_epoch.parent / "exported.npz")
    again, _ = carry.read_carry(exported)
    assert same_tensors(again["agent"], tree["agent"]) and again["progress"] == tree["progress"]


def test_a_carried_learner_is_the_saved_one_with_a_refilled_buffer(first_epoch):
    tree, _ = carry.read_carry(first_epoch / carry.CARRY_FILE)
    trainer = GoalPolicyTrainer(tiny(), seed=3)
    try:
        trainer.load_state_dict(tree)
        assert len(trainer.buffer) == 0 and len(trainer.states) == 0  # the buffers are what is lost
        state = trainer.state_dict()
        full = read_checkpoint(first_epoch)
        # weights, targets, both Adam states, normalisers, update count; the RNG and the progress
        assert same_tensors(state["agent"], full["agent"]) and state["rng"] == full["rng"]
        assert trainer.progress.epoch == 1 and trainer.progress.rows == full["progress"]["rows"]
        episodes_before = trainer.progress.episodes
        assert trainer.refill(5) == 5
        assert len(trainer.buffer) == 5 and trainer.progress.refilled == 5
        assert trainer.progress.episodes == episodes_before + 5
        assert same_tensors(trainer.agent.state_dict()["actor"], full["agent"]["actor"])  # no update in a refill
    finally:
        trainer.close()


def test_the_refill_resume_trains_on_in_a_new_folder_and_records_its_origin(first_epoch, tmp_path):
    out = train_goal_policy(None, tmp_path / "b", carry_from=first_epoch / carry.CARRY_FILE, refill_episodes=4)
    assert out["epochs"] == 2 and out["finished"] and out["refilled_episodes"] == 4
    config = json.loads((tmp_path / "b" / "config.json").read_text())
    assert config["carried_from"]["epoch"] == 1 and config["carried_from"]["refill_episodes"] == 4
    assert config["carried_from"]["sha256"] == checkpoint.sha256_file(first_epoch / carry.CARRY_FILE)
    rows = [json.loads(json.dumps(r)) for r in read_checkpoint(tmp_path / "b")["progress"]["rows"]]
    assert rows[0] == read_checkpoint(first_epoch)["progress"]["rows"][0]  # epoch 1 as carried
    # a carry never overwrites a run, and the carried config keeps all but epochs and speed
    with pytest.raises(CheckpointError, match="already holds a run"):
        train_goal_policy(None, tmp_path / "b", carry_from=first_epoch / carry.CARRY_FILE)
    from dataclasses import replace

    other = replace(tiny(), replay=replace(tiny().replay, strategy="final"))
    with pytest.raises(ConfigError, match="replay.strategy"):
        train_goal_policy(other, tmp_path / "c", carry_from=first_epoch / carry.CARRY_FILE)
    faster = replace(tiny(), schedule=replace(tiny().schedule, threads=2, epochs_phase2=2))
    more = train_goal_policy(faster, tmp_path / "d", carry_from=first_epoch / carry.CARRY_FILE, refill_episodes=2,
                             max_epochs=1)
    assert more["total_epochs"] == 3 and more["epochs"] == 2


def test_the_cli_carries_a_run_folder(first_epoch, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["train", "--domain", "fetch-programs", "--stage", "goal-policy", "--quiet", "--json"]
    out = CliRunner().invoke(main, [*args, "--carry", str(first_epoch), "--refill-episodes", "2", "--out", "e"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output[out.output.index("{"):])["refilled_episodes"] == 2
    (tmp_path / "speed.json").write_text(json.dumps({"schedule": {"threads": 2}}))
    out = CliRunner().invoke(main, [*args, "--carry", str(first_epoch), "--refill-episodes", "1", "--config",
                                    "speed.json", "--out", "g"])
    assert out.exit_code == 0, out.output
    assert json.loads((tmp_path / "g" / "config.json").read_text())["config"]["schedule"]["threads"] == 2
    (tmp_path / "other.json").write_text(json.dumps({"replay": {"strategy": "final"}}))
    line = one_line(CliRunner().invoke(main, [*args, "--carry", str(first_epoch), "--config", "other.json",
                                              "--out", "h"]))
    assert "replay.strategy" in line and not (tmp_path / "h" / "checkpoint.npz").exists()
    line = one_line(CliRunner().invoke(main, [*args, "--refill-episodes", "2", "--out", "f"]))
    assert "refill_episodes" in line or "--refill-episodes" in line
    line = one_line(CliRunner().invoke(main, ["train", "--domain", "fetch-programs", "--stage", "behaviour-model",
                                              "--carry", str(first_epoch)]))
    assert "--carry: not an option" in line


def test_a_carried_run_may_change_its_share_of_chained_starts_and_records_it(first_epoch, tmp_path):
    """The start distribution is the one curriculum field a continued run may change: its config
    holds the new share, ``carried_from.changed`` the old and new values, and its task uses it."""
    from dataclasses import replace

    before = tiny().schedule.chained_starts
    more = replace(tiny(), schedule=replace(tiny().schedule, chained_starts=0.9, epochs_phase2=2))
    out = train_goal_policy(more, tmp_path / "k", carry_from=first_epoch / carry.CARRY_FILE, refill_episodes=2,
                            max_epochs=1)
    assert out["total_epochs"] == 3
    config = json.loads((tmp_path / "k" / "config.json").read_text())
    assert config["config"]["schedule"]["chained_starts"] == 0.9
    assert config["carried_from"]["changed"] == {"schedule.chained_starts": [before, 0.9],
                                                 "schedule.epochs_phase2": [1, 2]}


def test_a_carried_run_may_fine_tune_at_a_lower_learning_rate_and_keeps_snapshots(first_epoch, tmp_path):
    """The learning rates are the optimiser fields a continued run may change (carry.FINETUNE_FIELDS): the
    carried Adam state is kept, its step size is the new config's, and the change is recorded.
    ``schedule.snapshot_every`` keeps the policy every N epochs for a later choice on held-out starts."""
    from dataclasses import replace

    from asg.learning.goal_policy.evaluate import load_policy

    base = tiny()
    slow = replace(base, agent=replace(base.agent, lr_actor=1e-4, lr_critic=2e-4),
                   schedule=replace(base.schedule, epochs_phase2=2, snapshot_every=1))
    out = train_goal_policy(slow, tmp_path / "f", carry_from=first_epoch / carry.CARRY_FILE, refill_episodes=2)
    assert out["epochs"] == 3
    config = json.loads((tmp_path / "f" / "config.json").read_text())
    assert config["carried_from"]["changed"] == {"agent.lr_actor": [1e-3, 1e-4], "agent.lr_critic": [1e-3, 2e-4],
                                                 "schedule.epochs_phase2": [1, 2]}
    saved = read_checkpoint(tmp_path / "f")["agent"]
    assert [g["lr"] for g in saved["actor_opt"]["param_groups"]] == [1e-4]
    assert [g["lr"] for g in saved["critic_opt"]["param_groups"]] == [2e-4]
    carried = carry.read_carry(first_epoch / carry.CARRY_FILE)[0]["agent"]["actor_opt"]["state"]
    assert carried and saved["actor_opt"]["state"].keys() == carried.keys()  # Adam's moments came along
    kept = sorted(p.name for p in (tmp_path / "f" / "snapshots").iterdir())
    assert kept == ["policy_e0002.npz", "policy_e0003.npz"]
    last = load_policy(tmp_path / "f" / "snapshots" / "policy_e0003.npz")
    final = load_policy(tmp_path / "f" / "policy.npz")
    assert all(np.array_equal(a, b) for (a, _), (b, _) in zip(last.layers, final.layers))


def test_a_carried_run_may_not_change_other_agent_fields(first_epoch, tmp_path):
    from dataclasses import replace

    other = replace(tiny(), agent=replace(tiny().agent, gamma=0.9))
    with pytest.raises(ConfigError, match="agent.gamma"):
        train_goal_policy(other, tmp_path / "g", carry_from=first_epoch / carry.CARRY_FILE, refill_episodes=2)


def test_a_carried_run_may_emulate_more_actors_and_records_it(first_epoch, tmp_path):
    """``schedule.actors`` (T5: 28) may change on a carry: twice the episodes a cycle from then on."""
    from dataclasses import replace

    base = tiny()
    more = replace(base, schedule=replace(base.schedule, actors=2, epochs_phase2=2))
    out = train_goal_policy(more, tmp_path / "a", carry_from=first_epoch / carry.CARRY_FILE, refill_episodes=0)
    config = json.loads((tmp_path / "a" / "config.json").read_text())
    assert config["carried_from"]["changed"] == {"schedule.actors": [1, 2], "schedule.epochs_phase2": [1, 2]}
    before = read_checkpoint(first_epoch)["progress"]["episodes"]
    assert out["epochs"] == 3  # epochs 2 and 3, each of one cycle of two actors' episodes
    assert out["episodes"] - before == 2 * 2 * base.schedule.cycles * base.schedule.episodes_per_cycle
