"""The Fetch 4-block, 2-zone MuJoCo environment (AlphaNPI-X Section 3, Appendix C, D.1)."""
from __future__ import annotations

import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import asg.envs  # noqa: F401  (registers the ids)
from asg.envs.fetch import goal_setter, labeler, permutation
from asg.envs.fetch.env import FetchBlocksEnv
from asg.envs.fetch.initial_states import TABLE, TRAINING, InitialStateConfig, sample_layout
from asg.envs.fetch.layout import (
    BLOCK_HALF,
    BLOCK_REL_POS,
    BLOCK_SIZE,
    GRIP_POS,
    MIN_SEPARATION,
    OBS_DIM,
    REST_Z,
    TABLE_TOP,
    ZONES,
    block_positions,
)
from asg.planning.programs import fetch_library

IDS = ("asg/FetchBlocks-v0", "asg/FetchBlocksTable-v0")


@pytest.fixture(scope="module")
def env():
    e = FetchBlocksEnv(initial_state="table")
    yield e
    e.close()


@pytest.mark.filterwarnings("ignore:.*Box observation space (minimum|maximum):UserWarning")
@pytest.mark.parametrize("env_id", IDS)
def test_registered_env_passes_the_checker_and_steps(env_id):
    env = gym.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert obs["observation"].shape == (OBS_DIM,) and obs["desired_goal"].shape == (12,)
    assert info["program"] in goal_setter.atomic_programs() and info["applicable"]
    for t in range(50):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert reward == env.unwrapped.compute_reward(obs["achieved_goal"], obs["desired_goal"], info)
        assert not terminated and truncated == (t == 49)
    env.close()


def test_same_seed_same_rollout():
    runs = []
    for _ in range(2):
        env = FetchBlocksEnv()
        obs, _ = env.reset(seed=7)
        rng = np.random.default_rng(3)
        trace = [obs["observation"]]
        for _ in range(20):
            trace.append(env.step(rng.uniform(-1, 1, 4))[0]["observation"])
        runs.append((np.array(trace), obs["desired_goal"]))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


def test_arm_moves_exactly_as_in_pick_and_place():
    """Same robot, same control, same physics: gripper and fingers follow PickAndPlace's path."""
    import gymnasium_robotics

    gym.register_envs(gymnasium_robotics)
    pnp = gym.make("FetchPickAndPlace-v4").unwrapped
    pnp.reset(seed=0)
    ours = FetchBlocksEnv(initial_state="table")
    far = np.array([[1.2, 0.6, REST_Z], [1.5, 0.6, REST_Z], [1.2, 0.9, REST_Z], [1.5, 0.9, REST_Z]])
    ours.reset(options={"blocks": far})
    actions = np.random.default_rng(0).uniform(-1, 1, (30, 4))
    actions[:, 2] = np.abs(actions[:, 2]) * 0.5  # upwards: nothing is touched
    for a in actions:
        theirs = pnp.step(a.astype(np.float32))[0]["observation"]
        mine = ours.step(a)[0]["observation"]
        np.testing.assert_allclose(mine[GRIP_POS], theirs[:3], atol=1e-4)   # grip_pos
        np.testing.assert_allclose(mine[15:17], theirs[9:11], atol=1e-4)     # finger joints
    pnp.close()


def test_scene_matches_the_layout_constants(env):
    m = env.sim.model
    for name, zone in ZONES.items():
        site = m.site(f"zone_{name}")
        centre = env.sim.data.site_xpos[site.id]
        np.testing.assert_allclose(centre[:2], zone.centre, atol=1e-9)
        np.testing.assert_allclose(site.size[:2], zone.half, atol=1e-9)
        assert abs(centre[2] - TABLE_TOP) < 1e-3
    for b in range(4):
        np.testing.assert_allclose(m.geom(f"object{b}").size, [BLOCK_HALF] * 3)
        assert m.body_mass[m.body(f"object{b}").id] == pytest.approx(2.0)


def test_observation_layout(env):
    obs, _ = env.reset(seed=1)
    o = obs["observation"]
    np.testing.assert_array_equal(o[:12], obs["achieved_goal"])
    np.testing.assert_allclose(o[BLOCK_REL_POS].reshape(4, 3), block_positions(o) - o[GRIP_POS])
    np.testing.assert_allclose(o[GRIP_POS], env.sim.data.site_xpos[env.sim.grip_site])
    assert np.all(np.abs(block_positions(o)[:, 2] - REST_Z) < 2e-3)  # table start: all resting


def test_compute_reward_is_per_block_and_vectorised(env):
    goal = np.tile([1.3, 0.75, REST_Z], 4)
    assert env.compute_reward(goal, goal, {}) == 0.0
    off = goal.copy()
    off[3] += 0.049
    assert env.compute_reward(off, goal, {}) == 0.0
    off[3] += 0.002  # one block 5.1 cm away: the 12-d norm is small, but that block fails
    assert np.linalg.norm(off - goal) < 0.06 and env.compute_reward(off, goal, {}) == -1.0
    batch = np.stack([goal, off, goal])
    np.testing.assert_array_equal(env.compute_reward(batch, goal, {}), [0.0, -1.0, 0.0])
    assert env.compute_reward(np.stack([batch] * 5), np.stack([batch] * 5), {}).shape == (5, 3)
    binary = FetchBlocksEnv(reward_type="binary")
    np.testing.assert_array_equal(binary.compute_reward(batch, goal, {}), [1.0, 0.0, 1.0])


def test_a_height_tolerance_fails_a_block_carried_over_its_target():
    goal = np.tile([1.3, 0.75, REST_Z], 4)
    carried = goal.copy()
    carried[2] += 0.03  # 3 cm above its slot: inside the 5 cm ball, not on the table for ψ
    assert goal_setter.goals_reached(carried, goal)
    assert not goal_setter.goals_reached(carried, goal, z_tolerance=0.02)
    assert not labeler.block_relations(carried)[1][0, 0]  # ψ's on-table agrees with the tolerance
    nudged = goal.copy()
    nudged[:2] += 0.03  # 4.2 cm away sideways, at rest height: both tests pass
    assert goal_setter.goals_reached(nudged, goal, z_tolerance=0.02)
    from asg.envs.fetch import FetchTask
    task = FetchTask("table", z_tolerance=0.02)
    np.testing.assert_array_equal(task.compute_reward(np.stack([goal, carried]), goal), [0.0, -1.0])


def test_a_horizontal_tolerance_fails_a_block_that_takes_both_slots_of_a_zone():
    """``goal_xy_tolerance``: the 5 cm ball passes a Move whose block lands 4 cm off its slot, towards
    the zone's other slot; that block takes both slots, so the zone's next Move has no free one.
    A 2 cm horizontal tolerance fails it and passes a block 1.5 cm off, which leaves the other free."""
    from asg.envs.fetch import FetchTask
    from asg.envs.fetch.layout import ZONES
    from asg.learning.errors import ConfigError
    from asg.learning.goal_policy.carry import CURRICULUM_FIELDS
    from asg.learning.goal_policy.config import ScheduleConfig, preset

    slots = ZONES["orange"].slots()
    start = np.array([[1.30, 0.75, REST_Z], [1.40, 0.75, REST_Z], [1.20, 0.80, REST_Z], [1.45, 0.85, REST_Z]])
    goal = start.copy()
    goal[0] = slots[0]
    off, near = goal.copy(), goal.copy()
    off[0, 0] += 0.04  # towards the other slot
    near[0, 0] += 0.015
    assert goal_setter.goals_reached(off.ravel(), goal.ravel(), z_tolerance=0.02)
    assert not goal_setter.goals_reached(off.ravel(), goal.ravel(), z_tolerance=0.02, xy_tolerance=0.02)
    assert goal_setter.goals_reached(near.ravel(), goal.ravel(), z_tolerance=0.02, xy_tolerance=0.02)
    assert labeler.slot_occupancy(off, "orange").all()  # the 5 cm ball's pass took both slots
    assert not labeler.slot_occupancy(near, "orange").all()
    task = FetchTask("table", z_tolerance=0.02, xy_tolerance=0.02)
    np.testing.assert_array_equal(task.compute_reward(np.stack([goal.ravel(), off.ravel(), near.ravel()]),
                                                      goal.ravel()), [0.0, -1.0, 0.0])
    assert task.make_batch(1).reached(off.ravel()[None], goal.ravel()[None]).tolist() == [False]
    assert FetchTask("table").make_batch(1).reached(off.ravel()[None], goal.ravel()[None]).tolist() == [True]
    assert all(preset(name).schedule.goal_xy_tolerance is None for name in ("paper", "fast", "learned"))
    assert "goal_xy_tolerance" in CURRICULUM_FIELDS  # a continuation may ask for it
    with pytest.raises(ConfigError, match="goal_xy_tolerance"):
        ScheduleConfig(goal_xy_tolerance=0.0)


def test_compute_reward_agrees_with_psi(env):
    """Blocks put at Θ(s, i): the goal reward says success and the symbolic ψ_i holds."""
    obs, _ = env.reset(seed=2)
    start = obs["observation"]
    for program in fetch_library().atomic:
        goal = goal_setter.goal(start, program.name)
        reached, _ = env.reset(options={"blocks": goal.reshape(4, 3)})
        assert env.compute_reward(reached["achieved_goal"], goal, {}) == 0.0, program.name
        assert program.post.holds(labeler.atoms(reached["observation"])), program.name
        moved = goal.reshape(4, 3).copy()
        moved[goal_setter.acting_block(program.name), :2] += 0.06
        assert env.compute_reward(moved.ravel(), goal, {}) == -1.0


def test_reset_options(env):
    obs, info = env.reset(seed=4, options={"program": "Stack_2_3"})
    assert info == {"program": "Stack_2_3", "applicable": True}
    np.testing.assert_allclose(obs["desired_goal"][6:9], obs["observation"][9:12] + [0, 0, BLOCK_SIZE])
    obs, info = env.reset(seed=4, options={"program": 5})
    assert info["program"] == goal_setter.atomic_programs()[5]
    goal = np.arange(12.0)
    obs, info = env.reset(seed=4, options={"goal": goal})
    np.testing.assert_array_equal(obs["desired_goal"], goal)
    assert info["program"] is None
    blocks = np.array([[1.25, 0.7, REST_Z], [1.4, 0.7, REST_Z], [1.25, 0.85, REST_Z], [1.4, 0.85, REST_Z]])
    obs, _ = env.reset(options={"blocks": blocks, "gripper": [1.33, 0.6, 0.52], "held": 2})
    got = labeler.label(obs["observation"])
    assert got.holding[2] and got.on_table[[0, 1, 3]].all()
    np.testing.assert_allclose(block_positions(obs["observation"])[[0, 1, 3]], blocks[[0, 1, 3]], atol=2e-3)
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"nope": 1})
    with pytest.raises(goal_setter.UnknownProgramError):
        env.reset(options={"program": "Stack_0_0"})


def test_sim_state_round_trip(env):
    env.reset(seed=5)
    state = env.sim.get_state()
    actions = np.random.default_rng(0).uniform(-1, 1, (10, 4))
    first = [env.step(a)[0]["observation"] for a in actions]
    env.reset(options={"sim_state": state})
    second = [env.step(a)[0]["observation"] for a in actions]
    np.testing.assert_array_equal(np.array(first), np.array(second))


def test_set_program_chains_without_reset(env):
    env.reset(seed=6)
    before = env.observation()["observation"]
    obs, applicable = env.set_program("Move_To_Zone_3_BLUE")
    assert applicable and env.elapsed == 0
    np.testing.assert_array_equal(obs["observation"], before)
    np.testing.assert_allclose(obs["desired_goal"][9:], ZONES["blue"].slots()[0])


# -- permutation trick ----------------------------------------------------------------------
def test_permutation_helpers_are_inverse_and_move_block_j_first():
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(3, OBS_DIM))
    for j in range(4):
        rot = permutation.rotate_observation(obs, j)
        np.testing.assert_array_equal(permutation.unrotate_observation(rot, j), obs)
        np.testing.assert_array_equal(rot[:, 0:3], obs[:, 3 * j:3 * j + 3])
        np.testing.assert_array_equal(rot[:, 22:25], obs[:, 22 + 3 * j:25 + 3 * j])
        np.testing.assert_array_equal(rot[:, 12:22], obs[:, 12:22])  # gripper part untouched
        np.testing.assert_array_equal(rot[:, :12], permutation.rotate_goal(obs[:, :12], j))
        goal = obs[:, :12]
        np.testing.assert_array_equal(permutation.unrotate_goal(permutation.rotate_goal(goal, j), j), goal)
        assert list(permutation.block_order(j)) == [(j + k) % 4 for k in range(4)]
    d = {"observation": obs[0], "achieved_goal": obs[0, :12], "desired_goal": obs[1, :12]}
    back = permutation.unrotate_dict(permutation.rotate_dict(d, 3), 3)
    assert all(np.array_equal(back[k], d[k]) for k in d)
    with pytest.raises(ValueError):
        permutation.rotate_goal(obs[:, :12], 4)


# -- initial states (Appendix D.1) ------------------------------------------------------------
def test_training_distribution_frequencies():
    rng = np.random.default_rng(0)
    home = np.array([1.342, 0.749, 0.535])
    held = under = stacked = 0
    n = 3000
    for _ in range(n):
        layout = sample_layout(rng, TRAINING, home, focus=2)
        held += layout.held == 2
        under += layout.held is None and np.allclose(layout.blocks[2, :2], layout.gripper[:2])
        stacked += int(np.sum(layout.blocks[:, 2] > REST_Z + 0.01)) - (layout.held == 2)
        _check_collision_free(layout)
    assert abs(held / n - 0.2) < 0.025 and abs(under / n - 0.4) < 0.03
    assert 0.3 < stacked / (3 * n) < 0.4  # 0.4 per block, less when no tower is free to take it


def test_annealing_reaches_the_table_distribution():
    rng = np.random.default_rng(1)
    assert TRAINING.annealed(1.0) == TABLE
    half = TRAINING.annealed(0.5)
    assert (half.p_in_gripper, half.p_under_gripper, half.p_stacked) == (0.1, 0.2, 0.2)
    for _ in range(500):
        layout = sample_layout(rng, TABLE, np.array([1.342, 0.749, 0.535]), focus=0)
        assert layout.held is None and np.allclose(layout.blocks[:, 2], REST_Z)
        _check_collision_free(layout)
    with pytest.raises(ValueError):
        InitialStateConfig(p_in_gripper=0.7, p_under_gripper=0.4)


def _check_collision_free(layout):
    table = [b for b in range(4) if abs(layout.blocks[b, 2] - REST_Z) < 1e-9 and b != layout.held]
    for i in table:
        for k in table:
            if i < k:
                assert np.max(np.abs(layout.blocks[i, :2] - layout.blocks[k, :2])) >= MIN_SEPARATION - 1e-9
    for b in range(4):  # every raised block sits exactly on another one (or is held)
        if layout.blocks[b, 2] > REST_Z + 1e-9 and b != layout.held:
            below = layout.blocks[b] - [0, 0, BLOCK_SIZE]
            assert any(np.allclose(below, layout.blocks[k]) for k in range(4) if k != b)


def test_env_training_starts_put_the_focus_block_in_the_gripper():
    env = FetchBlocksEnv(initial_state="training")
    held = sum(labeler.label(env.reset(seed=s, options={"focus": 1})[0]["observation"]).holding[1]
               for s in range(30))
    assert 2 <= held <= 12  # p = 0.2 of 30 draws


# -- lazy imports and rendering ------------------------------------------------------------------
def test_importing_envs_does_not_import_mujoco():
    code = "import asg.envs, asg.envs.fetch, sys; print('mujoco' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


RENDER_PROBE = """
from asg.envs.fetch.env import FetchBlocksEnv
env = FetchBlocksEnv(render_mode="rgb_array", width=64, height=48)
env.reset(seed=0)
frame = env.render()
env.close()
print(frame.shape, frame.dtype, int(frame.std() > 5))
"""


def test_rgb_array_rendering():
    """Renders where an offscreen GL backend exists (EGL or OSMesa); skips, saying why, elsewhere."""
    backends = [os.environ["MUJOCO_GL"]] if os.environ.get("MUJOCO_GL") else ["egl", "osmesa"]
    errors = []
    for backend in backends:
        out = subprocess.run([sys.executable, "-c", RENDER_PROBE], capture_output=True, text=True,
                             env={**os.environ, "MUJOCO_GL": backend}, timeout=120)
        if out.returncode == 0:
            assert out.stdout.strip().splitlines()[-1] == "(48, 64, 3) uint8 1"
            return
        errors.append(f"{backend}: {(out.stderr.strip().splitlines() or ['?'])[-1]}")
    pytest.skip("no offscreen GL backend for MuJoCo (" + "; ".join(errors) + "); on Debian: "
                "apt-get install libosmesa6 and set MUJOCO_GL=osmesa")
