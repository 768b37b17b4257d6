"""The curriculum's second stop (Sec. 4.2): k stops growing when no new skill terminal state is found."""
from __future__ import annotations

import numpy as np
from toy_domains import corridor_binding

from asg.learning.asgrl.config import DiversityConfig, QConfig, TrainConfig, default_learner, merge_overrides
from asg.learning.asgrl.diversity import SkillSet
from asg.learning.registry import build_learner, make_subgoals


def _converge(skills: SkillSet, z: int, terminal: int) -> None:
    """Run skill ``z`` to the landmark in state ``terminal`` until the curriculum acts."""
    active, stopped = skills.active, skills.stopped
    while skills.active == active and skills.stopped == stopped:
        skills.on_rollout(z)
        skills.on_success(z, terminal)
        skills.on_segment_end(z, reached=True)


def test_a_skill_ending_where_an_earlier_one_ends_is_retired_and_k_stops():
    skills = SkillSet("(x)", 5, QConfig(), DiversityConfig(k=5, curriculum=True, stop_on_no_new_terminal=True), 4,
                       np.random.default_rng(0))
    _converge(skills, 0, terminal=10)
    _converge(skills, 1, terminal=11)  # a new terminal state: grow
    assert skills.active == 3 and not skills.stopped
    _converge(skills, 2, terminal=10)  # skill 0's terminal state: nothing new
    assert skills.active == 2 and skills.stopped
    skills.on_segment_end(0, reached=True)
    assert skills.active == 2  # stopped for good


def test_without_the_stop_the_curriculum_grows_to_the_maximum():
    cfg = DiversityConfig(k=3, curriculum=True, stop_on_no_new_terminal=False)
    skills = SkillSet("(x)", 3, QConfig(), cfg, 4, np.random.default_rng(0))
    _converge(skills, 0, terminal=10)
    _converge(skills, 1, terminal=10)
    assert skills.active == 3 and not skills.stopped


def test_terminal_state_is_the_mode_of_the_recent_successes():
    cfg = DiversityConfig(k=2, curriculum=True, stop_on_no_new_terminal=True, stop_window=4)
    skills = SkillSet("(x)", 2, QConfig(), cfg, 4, np.random.default_rng(0))
    assert skills.terminal_state(0) is None and skills.discovered_new(1) is None
    for s in (7, 3, 3, 7, 3):  # the window keeps the last 4: 3, 3, 7, 3
        skills.on_success(0, s)
    skills.on_success(1, 9, reached=False)  # a counted failure terminal is no convergence evidence
    assert skills.terminal_state(0) == 3 and skills.terminal_state(1) is None


def test_curriculum_stops_at_the_number_of_terminal_states_on_the_corridor():
    # (at-side) holds in exactly two states (the pit, cell 0, and cell 6); (at-goal) in one.
    binding = corridor_binding()
    cfg = TrainConfig(domain="corridor", method="asgrl-curriculum", learner=default_learner("asgrl-curriculum"),
                      seed=0, total_steps=15_000)
    cfg = merge_overrides(cfg, {"learner": {"skill_max_steps": 30,
                                            "diversity": {"k": 4, "stop_on_no_new_terminal": True}}})
    learner = build_learner(cfg, make_subgoals(cfg, binding.task), 3)
    env = binding.make_env(max_steps=61)
    for episode in range(3000):
        learner.train_episode(env, binding.labeler, episode, 10**6)
        if all(sk.stopped for sk in learner.skill_sets):
            break
    assert learner.skill_counts() == {"(at-side)": 2, "(at-goal)": 1}
    side = learner.skill_sets[0]
    assert {side.terminal_state(0), side.terminal_state(1)} == {learner.index(obs, learn=False) for obs in
                                                                 _side_observations()}


def _side_observations():
    return [np.array([0, 0], np.int8), np.array([6, 0], np.int8)]
