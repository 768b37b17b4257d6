"""The four baselines: every one runs on the same budget; their rewards mean what they say."""
from __future__ import annotations

import numpy as np
import pytest
from toy_domains import Corridor, corridor_binding

from asg import pddl_models
from asg.learning.asgrl.baselines import FlatLearner
from asg.learning.asgrl.config import FlatConfig, TrainConfig, default_learner, merge_overrides
from asg.learning.asgrl.subgoals import landmark_subgoals
from asg.learning.asgrl.trainer import train
from asg.learning.registry import METHODS, build_learner, make_subgoals
from asg.planning import load_task


@pytest.mark.parametrize("method", [m for m in METHODS if m != "plan-hrl"])
def test_every_method_runs_on_the_same_budget(method):
    cfg = TrainConfig(domain="corridor", method=method, learner=default_learner(method), seed=0,
                      total_steps=3000, eval_interval=1000, eval_episodes=1, early_stop_evals=0)
    key = "skill_max_steps" if cfg.learner.kind == "hierarchical" else "episode_max_steps"
    cfg = merge_overrides(cfg, {"learner": {key: 40}})
    result = train(cfg, corridor_binding())
    assert result.env_steps == 3000 and result.status == "finished"
    assert 0.0 <= result.success_rate <= 1.0 and result.episodes > 0


def test_plan_hrl_runs_and_has_one_subgoal_per_plan_operator():
    cfg = TrainConfig(domain="corridor", method="plan-hrl", learner=default_learner("plan-hrl"), seed=0,
                      total_steps=3000, eval_interval=1000, eval_episodes=1, early_stop_evals=0)
    binding = corridor_binding()
    subgoals = make_subgoals(cfg, binding.task)
    assert subgoals.source == "plan" and subgoals.names() == ["(go_side)", "(climb)"]
    result = train(merge_overrides(cfg, {"learner": {"skill_max_steps": 40}}), binding)
    assert result.env_steps == 3000


def test_plan_hrl_on_mario_follows_the_ladder_plan():
    from asg.learning.asgrl.config import make_config

    cfg = make_config("mario", "plan-hrl")
    subgoals = make_subgoals(cfg, load_task(pddl_models.path("mario")))
    assert subgoals.names() == ["(go_down_the_ladder)", "(pickup_key)", "(go_up_the_ladder)", "(unlock_door)"]
    assert [sorted(map(str, sg.atoms)) for sg in subgoals.subgoals] == [
        ["(at-bottom)"], ["(has-key)"], ["(at-upper-platform-with-key)"], ["(door-open)"]]


def _flat(reward: str, seed: int = 0) -> tuple[FlatLearner, Corridor]:
    binding = corridor_binding()
    cfg = FlatConfig(reward=reward, episode_max_steps=200)  # type: ignore[arg-type]
    return FlatLearner(cfg, landmark_subgoals(binding.task), 3, seed), Corridor(max_steps=200)


@pytest.mark.parametrize("seed", range(6))
def test_landmark_shaping_pays_each_landmark_once_per_episode(seed):
    learner, env = _flat("landmark-shaping", seed)
    stats = learner.train_episode(env, corridor_binding().labeler, seed, 10_000)
    rewards = learner.agent.replay.data["r"][: len(learner.agent.replay)]
    assert rewards.sum() == pytest.approx(len(stats.reached))  # side once (+ goal once)
    assert np.count_nonzero(rewards) == len(stats.reached) and rewards.max() <= 1.0


@pytest.mark.parametrize("seed", range(4))
def test_goal_q_is_rewarded_only_at_the_goal(seed):
    learner, env = _flat("goal", seed)
    stats = learner.train_episode(env, corridor_binding().labeler, seed, 10_000)
    rewards = learner.agent.replay.data["r"][: len(learner.agent.replay)]
    assert rewards.sum() == float(stats.success)
    assert learner.agent.epsilon == pytest.approx(0.995)  # annealed after every episode (App. G)


def test_greedy_episode_changes_nothing_in_a_flat_learner():
    import pickle

    learner, env = _flat("goal")
    learner.train_episode(env, corridor_binding().labeler, 0, 500)
    before = pickle.dumps(learner)
    learner.greedy_episode(env, corridor_binding().labeler, 1)
    assert pickle.dumps(learner) == before


def test_landmark_hrl_and_asgrl_share_the_learner_but_not_the_skill_count():
    binding = corridor_binding()
    cfg = TrainConfig(domain="corridor", method="landmark-hrl", learner=default_learner("landmark-hrl"))
    learner = build_learner(cfg, landmark_subgoals(binding.task), 3)
    assert learner.skill_counts() == {"(at-side)": 1, "(at-goal)": 1}
    assert all(sk.bonus_fn(0) is None for sk in learner.skill_sets)
    asgrl = build_learner(TrainConfig(domain="corridor", method="asgrl", learner=default_learner("asgrl")),
                          landmark_subgoals(binding.task), 3)
    assert asgrl.skill_counts() == {"(at-side)": 3, "(at-goal)": 3}


def test_curves_are_held_on_a_common_step_grid_with_a_band():
    from asg.learning.asgrl.evaluation import curve_on_grid, mean_band, step_grid

    grid = step_grid(100, points=4)  # 0, 25, 50, 75, 100
    held = curve_on_grid([0, 30, 60], [0.0, 0.5, 1.0], grid)
    assert held.tolist() == [0.0, 0.0, 0.5, 1.0, 1.0]  # an early-stopped run keeps its last value
    curves = np.stack([held, curve_on_grid([0, 80], [0.0, 1.0], grid)])
    mean, low, high = mean_band(curves)
    assert mean.tolist() == [0.0, 0.0, 0.25, 0.5, 1.0]
    assert np.all(low <= mean) and np.all(mean <= high) and low[-1] == high[-1] == 1.0
