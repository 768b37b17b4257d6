"""The queryable expert (phase read off the state) and the DAgger labels built on it."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from asg.envs.fetch import goal_setter
from asg.envs.fetch.env import FetchBlocksEnv
from asg.envs.fetch.expert import expert_action, expert_actions
from asg.envs.fetch.layout import FINGER_POS, GRIP_POS
from asg.envs.fetch.permutation import rotate_goal, rotate_observation


def run_expert(env, program: str, steps: int = 50, disturb=None):
    block = goal_setter.acting_block(program)
    obs = env.observation()
    info = {"is_success": False}
    for t in range(steps):
        action = expert_action(obs["observation"], env.goal, block)
        if disturb is not None:
            action = disturb(t, action)
        obs, _, _, _, info = env.step(action)
    return obs["observation"], bool(info["is_success"])


@pytest.mark.parametrize("program", ["Stack_0_1", "Stack_3_2", "Move_To_Zone_1_ORANGE", "Move_To_Zone_2_BLUE"])
def test_expert_executes_programs_closed_loop(program):
    env = FetchBlocksEnv(initial_state="table", max_steps=None)
    for seed in range(2):
        env.reset(seed=seed, options={"program": program})
        final, success = run_expert(env, program)
        block = goal_setter.acting_block(program)
        assert success, (program, seed)
        # it lets go: the fingers end open and the gripper above the block
        assert final[FINGER_POS].mean() > 0.028 and final[GRIP_POS][2] > final[3 * block + 2] + 0.03


def test_expert_lets_go_with_a_full_command_a_learner_can_clone():
    """Fingers move by the command (a position delta): a release labelled with a few millimetres
    is lost among the -1 labels of every grasping state, and a cloned policy never lets go."""
    env = FetchBlocksEnv(initial_state="table", max_steps=None)
    env.reset(seed=3, options={"program": "Stack_2_0"})
    obs, release = env.observation()["observation"], None
    for _ in range(50):
        action = expert_action(obs, env.goal, 2)
        was_closed = obs[FINGER_POS].mean() < 0.026
        obs = env.step(action)[0]["observation"]
        if was_closed and release is None and obs[FINGER_POS].mean() > 0.03:
            release = action[3]
    assert release == 1.0
    assert obs[FINGER_POS].mean() > 0.028  # and the fingers stay open while it waits


def test_expert_recovers_where_the_scripted_controller_cannot_start():
    """States off any scripted trajectory: a block already held over its zone, and a random first half."""
    env = FetchBlocksEnv(initial_state="table", max_steps=None)
    env.reset(seed=0, options={"program": "Move_To_Zone_0_BLUE"})
    target = env.goal[:3]
    blocks = env.observation()["observation"][:12].reshape(4, 3).copy()
    grip = target + np.array([0.0, 0.0, 0.06])
    env.reset(options={"blocks": blocks, "gripper": grip, "held": 0, "goal": env.goal})
    final, success = run_expert(env, "Move_To_Zone_0_BLUE", steps=25)
    assert success and final[FINGER_POS].mean() > 0.028

    rng = np.random.default_rng(0)
    wins = 0
    for seed in range(6):
        env.reset(seed=seed, options={"program": "Stack_1_2"})
        _, success = run_expert(env, "Stack_1_2", disturb=lambda t, a: rng.uniform(-1, 1, 4)
                                if t < 8 and rng.random() < 0.5 else a)
        wins += success
    assert wins >= 5


def test_expert_is_equivariant_under_the_circular_permutation():
    env = FetchBlocksEnv(initial_state="training", max_steps=None)
    for seed, program in enumerate(["Stack_2_0", "Move_To_Zone_3_ORANGE", "Stack_1_3"]):
        env.set_progress(0.5)
        obs, _ = env.reset(seed=seed, options={"program": program})
        block = goal_setter.acting_block(program)
        for _ in range(12):  # a few steps in, so that the expert is mid-phase
            obs, *_ = env.step(expert_action(obs["observation"], env.goal, block))
        o, g = obs["observation"], env.goal
        rotated = expert_actions(rotate_observation(o, block)[None], rotate_goal(g, block)[None], block=0)[0]
        np.testing.assert_allclose(rotated, expert_action(o, g, block), atol=1e-6)


def test_expert_labels_ring_buffer_and_episode_labelling():
    from asg.envs.fetch import FetchTask
    from asg.learning.goal_policy.config import AgentConfig
    from asg.learning.goal_policy.dagger import ExpertLabels, label_episodes
    from asg.learning.goal_policy.ddpg import DDPGAgent
    from asg.learning.goal_policy.rollout import EpisodeSpec, RolloutWorker

    policy = DDPGAgent(70, 12, 4, AgentConfig(hidden=(16,)), seed=0).snapshot()
    worker = RolloutWorker(replace(FetchTask(), horizon=4), 2)
    episodes = worker.run([EpisodeSpec(1, program="Stack_0_1"), EpisodeSpec(2, program=None, focus=2)], policy)
    o, g, u = label_episodes(episodes)
    assert o.shape == (4, 70) and g.shape == (4, 12) and u.shape == (4, 4)  # the uniform-goal episode is skipped
    np.testing.assert_allclose(u[0], expert_action(episodes.o[0, 0], episodes.g[0], 0), atol=1e-6)
    assert np.all(np.abs(u) <= 1.0)

    labels = ExpertLabels(6, 70, 12, 4)
    labels.add(o, g, u)
    labels.add(o, g, u + 0.5)
    assert len(labels) == 6 and labels.next == 2
    back = ExpertLabels.from_state_dict(labels.state_dict())
    assert len(back) == 6 and back.next == 2 and np.array_equal(back.u, labels.u)
    so, sg, su = back.sample(10, np.random.default_rng(0))
    assert so.shape == (10, 70) and su.shape == (10, 4)
