"""``schedule.actors``: the paper's parallel DDPG actors emulated in one learner (more episodes per
cycle, larger update batches), one actor being every earlier run exactly, and the field's config."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from test_ddpg_train import PointReachTask, metrics_without_time, reach_config, tiny_fetch

from asg.learning.errors import ConfigError
from asg.learning.goal_policy import config as C
from asg.learning.goal_policy import trainer as trainer_mod
from asg.learning.goal_policy.evaluate import load_policy
from asg.learning.goal_policy.trainer import GoalPolicyTrainer, train_goal_policy


def with_actors(cfg: C.GoalPolicyConfig, actors: int) -> C.GoalPolicyConfig:
    return replace(cfg, schedule=replace(cfg.schedule, actors=actors))


def without_actors(data: dict) -> dict:
    """A config dict as written before the field existed."""
    return {**data, "schedule": {k: v for k, v in data["schedule"].items() if k != "actors"}}


def one_cycle(cfg: C.GoalPolicyConfig, task=None, seed: int = 0) -> GoalPolicyTrainer:
    trainer = GoalPolicyTrainer(cfg, task, seed=seed)
    trainer.prepare_demos()
    trainer.cycle(0)
    return trainer


def test_a_cycle_collects_the_episodes_of_every_actor():
    base = reach_config(epochs=1)
    per_actor = base.schedule.episodes_per_cycle
    counts = {}
    for actors in (1, 3):
        trainer = one_cycle(with_actors(base, actors), PointReachTask())
        try:
            p = trainer.progress
            counts[actors] = (len(trainer.buffer), p.episodes, p.env_steps)
        finally:
            trainer.close()
    assert counts[1] == (per_actor, per_actor, per_actor * 10)
    assert counts[3] == tuple(3 * n for n in counts[1])


def test_workers_share_out_the_actors_episodes():
    sch = C.ScheduleConfig(episodes_per_cycle=2, actors=3)
    assert [sch.cycle_episodes(w) for w in (1, 2, 3, 5)] == [6, 6, 6, 10]  # >= 2 per worker, as before
    assert C.ScheduleConfig().cycle_episodes(4) == 8  # one actor: episodes_per_cycle per worker
    assert C.paper().schedule.cycle_episodes() == 56  # T5: 28 actors x 2 episodes per cycle


def update_rows(cfg: C.GoalPolicyConfig, monkeypatch) -> list[tuple[int, int, int]]:
    """(RL rows, demo rows, DAgger labels) of each update of one cycle, read from the agent's input."""
    trainer = GoalPolicyTrainer(cfg, seed=0)
    trainer.prepare_demos()
    sizes, update = [], trainer.agent.update

    def spy(*args):  # update(batch, demo, bc_weight, q_filter, q_weight, expert, expert_weight)
        sizes.append((len(args[0]), len(args[1]), len(args[5][0])))
        return update(*args)

    monkeypatch.setattr(trainer.agent, "update", spy)
    try:
        trainer.cycle(0)
    finally:
        trainer.close()
    return sizes


def test_every_update_takes_actors_times_each_batch(monkeypatch):
    """Fetch with demos and DAgger: RL rows, demo rows and labels all scale with the actors."""
    cfg = tiny_fetch(epochs1=1, epochs2=0)
    cfg = replace(cfg, demos=replace(cfg.demos, dagger=True, dagger_batch=16))
    rows = (cfg.agent.batch_size, cfg.demos.batch_size, 16)
    assert update_rows(cfg, monkeypatch) == [rows] * cfg.schedule.batches
    assert update_rows(with_actors(cfg, 3), monkeypatch) == [tuple(3 * n for n in rows)] * cfg.schedule.batches


def test_one_actor_is_a_run_of_a_config_without_the_field(tmp_path):
    cfg = reach_config(epochs=2, phase2=1)
    legacy = C.from_dict(without_actors(C.to_dict(cfg)))
    assert legacy == cfg and legacy.schedule.actors == 1
    train_goal_policy(legacy, tmp_path / "legacy", task=PointReachTask(), seed=3)
    train_goal_policy(with_actors(cfg, 1), tmp_path / "one", task=PointReachTask(), seed=3)
    train_goal_policy(with_actors(cfg, 2), tmp_path / "two", task=PointReachTask(), seed=3)
    one = metrics_without_time(tmp_path / "one")
    assert metrics_without_time(tmp_path / "legacy") == one != metrics_without_time(tmp_path / "two")
    for (wa, ba), (wb, bb) in zip(load_policy(tmp_path / "legacy").layers, load_policy(tmp_path / "one").layers):
        np.testing.assert_array_equal(wa, wb)
        np.testing.assert_array_equal(ba, bb)
    assert int(one[-1]["episodes"]) == 3 * 10 * 8 and int(metrics_without_time(tmp_path / "two")[-1]["episodes"]) \
        == 2 * 3 * 10 * 8


def test_a_run_saved_before_the_field_resumes_exactly(tmp_path, monkeypatch):
    cfg = reach_config(epochs=1, phase2=1)
    train_goal_policy(cfg, tmp_path / "whole", task=PointReachTask(), seed=2)
    written = trainer_mod.cfgmod.to_dict
    monkeypatch.setattr(trainer_mod.cfgmod, "to_dict", lambda c: without_actors(written(c)))  # the older code
    train_goal_policy(cfg, tmp_path / "old", task=PointReachTask(), seed=2, max_epochs=1)
    assert "actors" not in json.loads((tmp_path / "old" / "config.json").read_text())["config"]["schedule"]
    assert "actors" not in trainer_mod.read_checkpoint(tmp_path / "old")["config"]["schedule"]
    monkeypatch.undo()
    resumed = train_goal_policy(None, "ignored", resume=tmp_path / "old", task=PointReachTask())
    assert resumed["finished"] and metrics_without_time(tmp_path / "old") == metrics_without_time(tmp_path / "whole")


def test_the_field_round_trips_and_the_presets():
    assert C.paper().schedule.actors == C.PAPER_ACTORS == 28 and C.fast().schedule.actors == 1
    assert C.ScheduleConfig().actors == 1 and C.from_dict({}).schedule.actors == 1
    for cfg in (C.paper(), C.fast(), with_actors(C.fast(), 5)):
        data = json.loads(json.dumps(C.to_dict(cfg)))
        assert data["schedule"]["actors"] == cfg.schedule.actors and C.from_dict(data) == cfg
    assert C.from_dict(without_actors(C.to_dict(C.paper()))) == with_actors(C.paper(), 1)
    assert C.from_dict({"schedule": {"actors": 4}}).schedule.actors == 4


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "28", None])
def test_bad_actor_counts_are_one_line_errors(bad):
    with pytest.raises(ConfigError, match=r"^config\.schedule\.actors: expected an int") as err:
        C.from_dict({"schedule": {"actors": bad}})
    assert "\n" not in str(err.value)
    if isinstance(bad, int) and not isinstance(bad, bool):
        with pytest.raises(ConfigError, match=rf"^schedule\.actors: expected an int >= 1, got {bad}$"):
            C.ScheduleConfig(actors=bad)
