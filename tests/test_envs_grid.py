"""The ASGRL grid envs: Gymnasium conformance, determinism, solvers, and the paper's traps."""
from __future__ import annotations

from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from asg.envs import household as hh
from asg.envs import mario as mo
from asg.envs import minecraft as mc
from asg.envs.domains import DOMAINS
from asg.envs.solver import SolverError, reachable, shortest_path

GRID_IDS = sorted({spec.env_id for spec in DOMAINS.values()})


def _search(env_id: str, **kwargs):
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(seed=0)
    return env, env.transition, int(env.action_space.n)


@pytest.mark.parametrize("env_id", GRID_IDS)
def test_check_env(env_id):
    check_env(gym.make(env_id, render_mode="rgb_array").unwrapped)


@pytest.mark.parametrize("env_id", GRID_IDS)
def test_same_seed_same_rollout(env_id):
    def rollout(seed: int):
        env = gym.make(env_id)
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        out = [obs]
        for _ in range(300):
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            out.append((obs, reward, terminated, truncated, info["is_success"],
                        env.unwrapped.hashable_state()))
            if terminated or truncated:
                obs, _ = env.reset()
                out.append(obs)
        return out

    a, b = rollout(7), rollout(7)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert gym.utils.env_checker.data_equivalence(x, y, exact=True)


@pytest.mark.parametrize("env_id", GRID_IDS)
def test_render_and_truncation(env_id):
    env = gym.make(env_id, render_mode="rgb_array", max_steps=5)
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    truncated = False
    for step in range(5):
        # Turning (household) or bumping the top wall (grid worlds) never ends an episode.
        _, _, terminated, truncated, _ = env.step(0)
        assert not terminated
        assert truncated == (step == 4)


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_solver_reaches_goal_from_many_seeds(name):
    spec = DOMAINS[name]
    env = spec.make_env()
    for seed in range(10):
        env.reset(seed=seed)
        plan = spec.solver.plan(env)
        for action in plan:
            _, reward, terminated, truncated, info = env.step(action)
        assert terminated and not truncated and info["is_success"] and reward == 1.0


@pytest.mark.parametrize("name", ["household-v1", "minecraft", "mario"])
def test_solver_replans_from_every_state_of_its_route(name):
    spec = DOMAINS[name]
    env = spec.make_env().unwrapped
    env.reset(seed=0)
    route, state = [env.hashable_state()], env.hashable_state()
    for action in spec.solver.plan(env):
        state, _ = env.transition(state, action)
        route.append(state)
    for state in route[:-1]:
        env.set_state(state)
        for action in spec.solver.plan(env):
            _, _, terminated, _, info = env.step(action)
        assert terminated and info["is_success"]


# ----------------------------------------------------------------------------- Mario
OFFICIAL_MAP = """\
###########
#A.......D#
#####L#T###
#####L#T###
#####L#T###
#k#h#L#T###
#.........#
###########"""


def test_mario_map_is_the_official_one():
    symbols = {mo.FLOOR_ID: ".", mo.AGENT_ID: "A", mo.WALL_ID: "#", mo.TUBE_ID: "T",
               mo.LADDER_ID: "L", mo.HIDDEN_KEY_ID: "h", mo.KEY_ID: "k", mo.DOOR_ID: "D"}
    env = gym.make("asg/Mario-v0")
    obs, _ = env.reset(seed=0)
    drawn = "\n".join("".join(symbols[int(v)] for v in row) for row in obs.reshape(8, 11))
    assert drawn == OFFICIAL_MAP


def test_mario_shortest_solution_is_34_moves_via_tube_then_ladder():
    env, step, n = _search("asg/Mario-v0")
    path = shortest_path(env.hashable_state(), lambda s: s.status == mo.SUCCESS, step, n)
    assert len(path) == 34
    assert len(DOMAINS["mario"].solver.plan(env)) == 34


def test_mario_ladder_first_strands_the_agent():
    env, step, n = _search("asg/Mario-v0")
    state = mo.MarioState(pos=(1, 5))
    for action in [mo.DOWN] * 5:
        state, terminated = step(state, action)
        assert not terminated
    assert state.pos == (6, 5) and all(state.worn)
    assert not any(s.status == mo.SUCCESS for s in reachable(state, step, n))
    env.set_state(state)
    with pytest.raises(SolverError):
        DOMAINS["mario"].solver.plan(env)


def test_mario_tube_goes_down_only_and_worn_ladder_blocks():
    in_tube = mo.MarioState(pos=(3, 7))
    assert mo.transition(in_tube, mo.UP) == (in_tube, False)
    assert mo.transition(mo.MarioState(pos=(2, 7)), mo.UP)[0].pos == (2, 7)
    assert mo.transition(mo.MarioState(pos=(6, 7)), mo.UP)[0].pos == (6, 7)
    assert mo.transition(mo.MarioState(pos=(1, 7)), mo.DOWN)[0].pos == (2, 7)
    worn_below = mo.MarioState(pos=(6, 5), worn=(False, False, False, True))
    assert mo.transition(worn_below, mo.UP) == (worn_below, False)


def test_mario_early_stops():
    # Back off the ladder through the end it was entered, unused cells remaining.
    state, _ = mo.transition(mo.MarioState(pos=(1, 5)), mo.DOWN)
    state, terminated = mo.transition(state, mo.UP)
    assert terminated and state.status == mo.FAILED and state.pos == (1, 5)
    state, _ = mo.transition(mo.MarioState(pos=(6, 5)), mo.UP)
    assert mo.transition(state, mo.DOWN)[0].status == mo.FAILED
    # The door with one key only.
    one_key = mo.MarioState(pos=(1, 8), has_key=True)
    assert mo.transition(one_key, mo.RIGHT) == (mo.MarioState((1, 9), True, status=mo.FAILED), True)
    # Climbing the whole ladder up is fine.
    state = mo.MarioState(pos=(6, 5), has_key=True, has_hidden_key=True)
    for _ in range(5):
        state, terminated = mo.transition(state, mo.UP)
    assert state.pos == (1, 5) and not terminated


def test_mario_door_without_keys_ends_the_episode_unrewarded():
    env = gym.make("asg/Mario-v0")
    env.reset(seed=0)
    for _ in range(8):
        _, reward, terminated, _, info = env.step(mo.RIGHT)
    assert terminated and reward == 0.0 and not info["is_success"]


def test_mario_official_info_flags_are_sticky():
    spec = DOMAINS["mario"]
    env = spec.make_env()
    env.reset(seed=0)
    seen_bottom_then_left = False
    for action in spec.solver.plan(env):
        _, _, _, _, info = env.step(action)
        if info["visited_bottom"] and env.unwrapped.hashable_state().pos[0] != mo.BOTTOM_ROW:
            seen_bottom_then_left = True
    assert seen_bottom_then_left
    assert all(info[k] for k in ("visited_tube", "visited_ladder", "picked_key",
                                 "picked_hidden_key", "back_to_upper", "door_opened"))


def test_pixel_mario_has_mario_dynamics_and_image_observations():
    a, b = gym.make("asg/Mario-v0"), gym.make("asg/PixelMario-v0")
    a.reset(seed=0)
    obs, _ = b.reset(seed=0)
    assert obs.shape == (64, 88, 3) and obs.dtype == np.uint8
    rng = np.random.default_rng(0)
    images = {}
    for _ in range(200):
        action = int(rng.integers(4))
        ra, rb = a.step(action), b.step(action)
        assert a.unwrapped.hashable_state() == b.unwrapped.hashable_state()
        assert ra[1:4] == rb[1:4]
        images.setdefault(b.unwrapped.hashable_state(), rb[0].tobytes())
        if ra[2] or ra[3]:
            a.reset(), b.reset()
    assert len(set(images.values())) == len(images)  # distinct states, distinct images


# ----------------------------------------------------------------------------- Household
def test_household_nearest_key_is_a_wrong_one():
    env, step, n = _search("asg/Household-v0")
    start = env.hashable_state()
    cost = {c: len(shortest_path(start, lambda s, c=c: s.carrying == c, step, n)) for c in hh.KEYS}
    assert min(cost, key=cost.get) != hh.RIGHT_KEY
    assert max(cost, key=cost.get) == hh.RIGHT_KEY
    for wrong in set(hh.KEYS) - {hh.RIGHT_KEY}:
        holding = hh.HouseholdState(carrying=wrong)
        assert not any(s.status == hh.SUCCESS for s in reachable(holding, step, n))


def test_household_final_room_without_charging_is_a_dead_end():
    west_of_door = (hh.DOOR[0] - 1, hh.DOOR[1])
    at_door = hh.HouseholdState(pos=west_of_door, dir=0, carrying="red")
    opened, terminated = hh.transition(at_door, hh.TOGGLE)
    assert not terminated and opened.door == hh.OPEN and opened.battery == hh.LOW
    wrong, _ = hh.transition(hh.HouseholdState(pos=west_of_door, dir=0, carrying="yellow"), hh.TOGGLE)
    assert wrong.door == hh.LOCKED
    # Through the door uncharged: the final room is reached, but no state after it succeeds,
    # and the step onto the destination fails with the battery drained.
    env, step, n = _search("asg/Household-v0")
    entered = [s for s in reachable(opened, step, n) if s.pos in hh.FINAL_ROOM and s.battery == hh.LOW]
    assert entered
    assert not any(s.status == hh.SUCCESS for e in entered[:5] for s in reachable(e, step, n))
    below_goal = hh.HouseholdState(pos=(hh.GOAL[0], hh.GOAL[1] + 1), dir=3, carrying="red", door=hh.CLOSED)
    dead, terminated = hh.transition(below_goal, hh.FORWARD)
    assert terminated and dead.status == hh.FAILED and dead.battery == hh.EMPTY and dead.pos == below_goal.pos
    alive, terminated = hh.transition(replace(below_goal, battery=hh.FULL), hh.FORWARD)
    assert terminated and alive.status == hh.SUCCESS and alive.pos == hh.GOAL


def test_household_door_closes_behind_the_robot():
    env, step, n = _search("asg/Household-v0")
    states = reachable(env.hashable_state(), step, n)
    assert any(s.pos == hh.DOOR and s.door == hh.OPEN for s in states)
    assert not any(s.pos in hh.FINAL_ROOM and s.door == hh.OPEN for s in states)
    inside = hh.HouseholdState(pos=(hh.DOOR[0] + 1, hh.DOOR[1]), dir=2, carrying="red",
                               door=hh.CLOSED, battery=hh.FULL)
    assert hh.transition(inside, hh.FORWARD) == (inside, False)
    assert hh.transition(inside, hh.TOGGLE) == (inside, False)


def test_household_grid_objects_follow_the_state():
    env = gym.make("asg/Household-v0").unwrapped
    env.reset(seed=0)
    env.set_state(hh.HouseholdState(pos=hh.DOOR, dir=0, carrying="red", door=hh.OPEN,
                                    battery=hh.FULL))
    assert env.grid.get(*hh.KEYS["red"]) is None and env.carrying.color == "red"
    assert env.grid.get(*hh.KEYS["yellow"]).type == "key" and env.door.is_open
    obs = env.gen_obs()
    assert tuple(obs["image"][hh.DOOR][:2]) == (10, 0)  # the agent stands in the doorway
    assert obs["carrying"] == 1 and obs["battery"] == 1


# ----------------------------------------------------------------------------- MineCraft
def test_minecraft_one_piece_of_wood_is_a_dead_end():
    env, step, n = _search("asg/MineCraft-v0")
    one = shortest_path(env.hashable_state(), lambda s: s.kiln_used, step, n)
    state = env.hashable_state()
    for action in one:
        state, _ = step(state, action)
    assert state.processed_wood == 1  # the myopic route: nearest wood, straight to the kiln
    assert not any(s.status == mc.SUCCESS for s in reachable(state, step, n))
    two = shortest_path(env.hashable_state(), lambda s: s.kiln_used and s.processed_wood >= 2, step, n)
    state = env.hashable_state()
    for action in two:
        state, _ = step(state, action)
    assert shortest_path(state, lambda s: s.status == mc.SUCCESS, step, n) is not None


def test_minecraft_recipe_is_a_parameter():
    env, step, n = _search("asg/MineCraft-v0", plank_wood=2, stick_wood=1)
    two = mc.MineCraftState(pos=mc.KILN, processed_wood=2, kiln_used=True, wood_left=(False,) * 3)
    assert not any(s.status == mc.SUCCESS for s in reachable(two, step, n))
    env.reset(seed=0)
    for action in DOMAINS["minecraft"].solver.plan(env):
        _, _, terminated, _, info = env.step(action)
    assert terminated and info["is_success"]
    with pytest.raises(ValueError):
        mc.Recipe(plank_wood=3, stick_wood=1)
