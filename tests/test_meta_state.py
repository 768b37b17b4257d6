"""The meta-state switch (App. E, F.3): history of (subgoal, skill) pairs vs the low-level state."""
from __future__ import annotations

import pytest
from toy_domains import corridor_binding

from asg.learning.asgrl.config import TrainConfig, default_learner, merge_overrides
from asg.learning.registry import build_learner, make_subgoals


def _learner(state: str):
    binding = corridor_binding()
    cfg = TrainConfig(domain="corridor", method="asgrl", learner=default_learner("asgrl"), seed=0)
    cfg = merge_overrides(cfg, {"learner": {"skill_max_steps": 30, "diversity": {"k": 2},
                                            "meta": {"state": state}}})
    return binding, build_learner(cfg, make_subgoals(cfg, binding.task), 3)


@pytest.mark.parametrize("state", ["history", "low-level"])
def test_meta_q_is_keyed_by_the_chosen_meta_state(state):
    binding, learner = _learner(state)
    env = binding.make_env(max_steps=61)
    for episode in range(20):
        learner.train_episode(env, binding.labeler, episode, 10**6)
    keys = set(learner.meta.q)
    start = learner.index(env.reset(seed=0)[0], learn=False)  # the low-level state at reset
    if state == "history":
        assert () in keys  # the empty history opens every episode
        assert all(isinstance(k, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in k) for k in keys)
    else:
        assert ((), start) in keys  # (achieved subgoals, low-level state id) at reset
        assert all(isinstance(k[0], tuple) and isinstance(k[1], int) for k in keys)
        after_side = {k for k in keys if k[0] == (0,)}
        assert after_side and all(k[1] != start for k in after_side)  # the state the side skill stopped in
    learner.greedy_episode(env, binding.labeler, 0)  # the greedy path reads the same key


def test_the_two_meta_states_differ_on_the_same_run():
    keys = {}
    for state in ("history", "low-level"):
        binding, learner = _learner(state)
        env = binding.make_env(max_steps=61)
        learner.train_episode(env, binding.labeler, 0, 10**6)
        keys[state] = set(learner.meta.q)
    assert keys["history"].isdisjoint(keys["low-level"])
