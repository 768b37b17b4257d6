"""Dead-end landmark states (``HierarchicalConfig.dead_end_after``; ours, ASGRL's asg default, off in the
paper preset)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from toy_domains import corridor_binding

from asg.learning.asgrl.config import (
    DiversityConfig,
    HierarchicalConfig,
    QConfig,
    TrainConfig,
    default_learner,
    make_config,
    merge_overrides,
)
from asg.learning.asgrl.diversity import SkillSet
from asg.learning.errors import ConfigError
from asg.learning.registry import build_learner, make_subgoals


def test_on_for_asgrl_in_the_asg_preset_only():
    assert HierarchicalConfig().dead_end_after == 0
    for method in ("asgrl", "asgrl-curriculum", "landmark-hrl", "plan-hrl"):
        assert make_config("mario", method, "paper").learner.dead_end_after == 0
        assert make_config("mario", method).learner.dead_end_after == (20 if method == "asgrl" else 0)
    skills = SkillSet("(x)", 2, QConfig(), DiversityConfig(k=2), 4, np.random.default_rng(0))
    for _ in range(50):
        skills.on_continued(3, False)
    assert not skills.dead_ends(np.array([3])).any()


def test_a_state_the_next_skill_never_leaves_stops_paying_the_landmark_reward():
    skills = SkillSet("(x)", 2, QConfig(), DiversityConfig(k=2), 4, np.random.default_rng(0), dead_end_after=3)
    skills.on_success(0, 5)
    before = skills.bonus_fn(0)(np.array([5, 6]))
    for _ in range(3):
        skills.on_continued(5, False)
    assert skills.dead_ends(np.array([5, 6, 999, -1])).tolist() == [True, False, False, False]
    after = skills.bonus_fn(0)(np.array([5, 6]))
    assert after[0] == pytest.approx(before[0] - 1.0) and after[1] == before[1]  # R_L cancelled at 5 only
    skills.on_continued(5, True)  # the next landmark was reached from 5 once: no dead end any more
    assert not skills.dead_ends(np.array([5])).any()


def test_an_arrival_at_a_dead_end_neither_decays_epsilon_nor_feeds_self_imitation():
    skills = SkillSet("(x)", 1, QConfig(), DiversityConfig(k=1), 4, np.random.default_rng(0), dead_end_after=1)
    skill = skills.skills[0]
    skills.on_continued(7, False)
    skill.observe(0, 1, 7, 1.0, True)
    skills.on_success(0, 7)
    skills.on_segment_end(0, reached=True)
    assert skill.epsilon == 1.0 and len(skill.sil) == 0 and skill.successes == 0
    skill.observe(0, 2, 8, 1.0, True)
    skills.on_success(0, 8)
    skills.on_segment_end(0, reached=True)
    assert skill.epsilon < 1.0 and len(skill.sil) == 1 and skill.successes == 1
    assert skills.bonus_fn(0) is not None  # k = 1 and no diversity, but the dead-end term needs a bonus


def test_deep_skills_and_negative_counts_are_refused():
    with pytest.raises(ConfigError, match="dead_end_after"):
        dataclasses.replace(HierarchicalConfig(), dead_end_after=-1)
    with pytest.raises(ConfigError, match="dead_end_after"):
        dataclasses.replace(HierarchicalConfig(), dead_end_after=5, skills="deep",
                            meta=dataclasses.replace(HierarchicalConfig().meta, state="history"),
                            diversity=dataclasses.replace(HierarchicalConfig().diversity, abstraction="kmeans"))


def _config(dead_end_after: int, seed: int) -> TrainConfig:
    cfg = TrainConfig(domain="corridor", method="landmark-hrl", learner=default_learner("landmark-hrl"),
                      seed=seed, total_steps=40_000)
    return merge_overrides(cfg, {"learner": {"skill_max_steps": 30, "dead_end_after": dead_end_after}})


def _corridor(dead_end_after: int, seed: int) -> tuple[bool, object]:
    """Landmark-HRL (one skill per landmark) on the corridor: (at-side) holds in the pit, 2 steps
    from the start, and at cell 6, 4 steps away and the only way on to (at-goal)."""
    binding = corridor_binding()
    cfg = _config(dead_end_after, seed)
    learner = build_learner(cfg, make_subgoals(cfg, binding.task), 3)
    env = binding.make_env(max_steps=61)
    for episode in range(600):
        learner.train_episode(env, binding.labeler, episode, 10**6)
    return learner.greedy_episode(env, binding.labeler, 0).success, learner


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_landmark_hrl_leaves_the_pit_on_the_corridor_only_with_the_switch(seed):
    without, _ = _corridor(0, seed)
    solved, learner = _corridor(5, seed)
    assert not without  # the one (at-side) skill settles in the pit, the shorter way (the paper's failure)
    assert solved
    side = learner.skill_sets[0]
    pit = learner.index(np.array([0, 0], np.int8), learn=False)
    assert side.dead_ends(np.array([pit])).all()
    twin = build_learner(_config(5, seed), learner.subgoals, 3)  # the state survives a checkpoint
    twin.load_state_dict(learner.state_dict())
    assert np.array_equal(twin.skill_sets[0].downstream, side.downstream)
    assert list(twin.skill_sets[0].recent[0]) == list(side.recent[0])  # the end state on_segment_end reads
