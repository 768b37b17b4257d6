"""Labeler, goal setter Θ, exact behaviour model and the scripted controller of the Fetch world."""
from __future__ import annotations

import numpy as np
import pytest

from asg.envs.fetch import goal_setter, labeler
from asg.envs.fetch.behaviour_model import ExactBehaviourModel, plan_program
from asg.envs.fetch.env import FetchBlocksEnv
from asg.envs.fetch.layout import BLOCK_HALF, BLOCK_SIZE, EPSILON, OBS_DIM, REST_Z, ZONES
from asg.envs.fetch.runner import execute_program, multistep_programs, run_sequence
from asg.envs.fetch.scripted import ScriptedController, run_atomic
from asg.planning.programs import fetch_library
from asg.planning.task import Atom

SPOTS = np.array([[1.25, 0.70, REST_Z], [1.40, 0.70, REST_Z], [1.25, 0.82, REST_Z], [1.40, 0.82, REST_Z]])


def state(blocks, grip=(1.34, 0.75, 0.55), fingers=(0.0, 0.0)) -> np.ndarray:
    """A 70-d observation with the given block positions (velocities zero)."""
    obs = np.zeros(OBS_DIM)
    blocks = np.asarray(blocks, dtype=float)
    obs[:12] = blocks.ravel()
    obs[12:15] = grip
    obs[15:17] = fingers
    obs[22:34] = (blocks - np.asarray(grip)).ravel()
    return obs


def names(obs) -> set[str]:
    return set(map(str, labeler.atoms(obs)))


# -- labeler -----------------------------------------------------------------------------------
def test_labels_of_a_hand_built_tower_and_zone():
    blocks = SPOTS.copy()
    blocks[1] = blocks[0] + [0.01, -0.01, BLOCK_SIZE]       # b1 on b0, a little off centre
    blocks[2] = [*ZONES["orange"].slots()[0][:2], REST_Z]     # b2 in the orange zone
    got = names(state(blocks))
    assert {"(on b1 b0)", "(on-table b0)", "(in-zone b2 orange)", "(on-table b2)", "(clear b1)",
            "(clear b2)", "(clear b3)", "(hand-empty)"} <= got
    assert "(clear b0)" not in got and "(on-table b1)" not in got and "(in-zone b1 orange)" not in got
    assert not any(a.startswith("(zone-full") or a.startswith("(holding") for a in got)


def test_on_uses_the_epsilon_sphere():
    blocks = SPOTS.copy()
    blocks[1] = blocks[0] + [EPSILON * 0.9, 0, BLOCK_SIZE]
    assert "(on b1 b0)" in names(state(blocks))
    blocks[1] = blocks[0] + [EPSILON * 1.1, 0, BLOCK_SIZE]
    assert "(on b1 b0)" not in names(state(blocks))
    blocks[1] = blocks[0] + [0, 0, BLOCK_SIZE]
    blocks[2] = blocks[1] + [0, 0, BLOCK_SIZE]  # exactly ε above the spot on b0: not on b0
    assert {"(on b1 b0)", "(on b2 b1)"} <= names(state(blocks)) and "(on b2 b0)" not in names(state(blocks))


def test_zone_full_and_holding():
    blocks = SPOTS.copy()
    blocks[0], blocks[1] = ZONES["blue"].slots()
    got = names(state(blocks))
    assert {"(zone-full blue)", "(in-zone b0 blue)", "(in-zone b1 blue)"} <= got
    held = SPOTS.copy()
    held[3] = [1.3, 0.75, 0.55]
    got = names(state(held, grip=held[3], fingers=(0.024, 0.024)))
    assert "(holding b3)" in got and "(hand-empty)" not in got and "(on-table b3)" not in got
    assert "(holding b3)" not in names(state(held, grip=held[3], fingers=(0.05, 0.05)))  # open


# -- goal setter Θ --------------------------------------------------------------------------------
def test_theta_matches_the_worked_example_of_appendix_c():
    """Stack_1_2 of the paper (1-based) is Stack_0_1 here: block 0 on block 1, the others stay."""
    s0 = state(SPOTS)
    g = goal_setter.goal(s0, "Stack_0_1")
    x2, y2, z2 = SPOTS[1]
    d = BLOCK_HALF
    expected = [x2, y2, z2 + 2 * d, x2, y2, z2, *SPOTS[2], *SPOTS[3]]
    np.testing.assert_allclose(g, expected)
    assert goal_setter.applicable(s0, "Stack_0_1")
    covered = SPOTS.copy()
    covered[2] = SPOTS[1] + [0, 0, BLOCK_SIZE]  # "no other block is already on top of block 2"
    assert not goal_setter.applicable(state(covered), "Stack_0_1")


def test_theta_for_zones_takes_the_first_free_slot():
    s0 = state(SPOTS)
    slots = ZONES["orange"].slots()
    np.testing.assert_allclose(goal_setter.goal(s0, "Move_To_Zone_3_ORANGE")[9:], slots[0])
    np.testing.assert_allclose(goal_setter.goal(s0, "Move_To_Zone_3_ORANGE")[:9], SPOTS[:3].ravel())
    one = SPOTS.copy()
    one[0] = slots[0]
    np.testing.assert_allclose(goal_setter.goal(state(one), "Move_To_Zone_3_ORANGE")[9:], slots[1])
    full = one.copy()
    full[1] = slots[1]
    assert not goal_setter.applicable(state(full), "Move_To_Zone_3_ORANGE")
    with pytest.raises(goal_setter.NotApplicableError):
        goal_setter.goal(state(full), "Move_To_Zone_3_ORANGE")


def test_theta_goal_state_satisfies_the_symbolic_post():
    """f(s, Θ(s, i)) = ψ_i: the goal configuration is labelled with the program's effect."""
    s0 = state(SPOTS)
    for program in fetch_library().atomic:
        goal = goal_setter.goal(s0, program.name)
        reached = state(goal.reshape(4, 3))
        assert goal_setter.goals_reached(reached[:12], goal)
        assert program.post.holds(labeler.atoms(reached)), program.name


# -- exact behaviour model and planner --------------------------------------------------------------
def test_behaviour_model_predicts_theta_when_phi_holds():
    model = ExactBehaviourModel()
    s0 = state(SPOTS)
    nxt, ok = model.predict(s0, "Stack_2_3")
    assert ok
    np.testing.assert_allclose(nxt[:12], goal_setter.goal(s0, "Stack_2_3"))
    assert Atom("on", ("b2", "b3")) in labeler.atoms(nxt)
    same, ok = model.predict(nxt, "Stack_0_3")  # b3 is covered now: φ fails, nothing moves
    assert not ok and np.array_equal(same, nxt)
    batch, oks = model.predict_batch(np.stack([s0, nxt]), np.array([0, 11]))
    assert batch.shape == (2, OBS_DIM) and list(oks) == [True, False]


@pytest.mark.parametrize("program", [p.name for p in fetch_library().non_atomic])
def test_plans_over_the_exact_model_reach_psi(program):
    lib = fetch_library()
    s0 = state(SPOTS)
    tree = plan_program(s0, program)
    assert tree is not None and tree.program == program
    obs = s0
    for name in tree.atomic_sequence():
        obs, ok = ExactBehaviourModel().predict(obs, name)
        assert ok, name
    assert lib.get(program).post.holds(labeler.atoms(obs))
    expected_calls = {"Stack_All_Blocks": 3, "Clean_Table": 4, "Clean_And_Stack": 4}
    assert len(tree.atomic_sequence()) == expected_calls.get(program, 2)


def test_level_two_plans_use_level_one_programs():
    tree = plan_program(state(SPOTS), "Clean_And_Stack")
    assert [c.program for c in tree.calls] == ["Stack_All_To_Zone_ORANGE", "Stack_All_To_Zone_BLUE"]


def test_level_two_plans_pick_the_cheaper_order():
    """Blues stacked on b0: clearing them into the blue zone first needs 4 moves, not 6."""
    blocks = SPOTS.copy()
    blocks[3] = blocks[0] + [0, 0, BLOCK_SIZE]
    blocks[2] = blocks[3] + [0, 0, BLOCK_SIZE]
    tree = plan_program(state(blocks), "Clean_Table")
    assert [c.program for c in tree.calls] == ["Move_All_To_Zone_BLUE", "Move_All_To_Zone_ORANGE"]
    assert tree.atomic_sequence() == ["Move_To_Zone_2_BLUE", "Move_To_Zone_3_BLUE", "Move_To_Zone_0_ORANGE",
                                      "Move_To_Zone_1_ORANGE"]


# -- scripted controller in the real env ---------------------------------------------------------
@pytest.fixture(scope="module")
def env():
    e = FetchBlocksEnv(initial_state="training", max_steps=None)
    yield e
    e.close()


@pytest.mark.parametrize("program", ["Stack_0_1", "Stack_3_2", "Move_To_Zone_1_BLUE", "Move_To_Zone_2_ORANGE"])
def test_scripted_controller_executes_atomic_programs(env, program):
    for seed in range(3):
        env.reset(seed=seed, options={"program": program})
        run = run_atomic(env, program)
        assert run.applicable and run.success, (program, seed)
        assert goal_setter.post_holds(run.final, program)


def test_scripted_controller_does_not_run_an_inapplicable_program(env):
    env.reset(seed=0, options={"blocks": np.array([SPOTS[0], SPOTS[1], SPOTS[1] + [0, 0, BLOCK_SIZE], SPOTS[3]])})
    run = run_atomic(env, "Stack_0_1")
    assert not run.applicable and not run.success and run.steps == 0


def test_multistep_stacking_builds_a_tower():
    env = FetchBlocksEnv(initial_state="table", max_steps=None)
    env.reset(seed=3)
    programs = multistep_programs("stacking", np.random.default_rng(0))
    assert len(programs) == 3 and run_sequence(env, programs).success
    assert fetch_library().get("Stack_All_Blocks").post.holds(env.atoms())


def test_non_atomic_program_runs_with_replanning():
    env = FetchBlocksEnv(initial_state="table", max_steps=None)
    env.reset(seed=2)
    result = execute_program(env, "Stack_All_To_Zone_BLUE")
    assert result.success and [c.program for c in result.calls] == result.plan.atomic_sequence()
    assert all(c.success for c in result.calls)


def test_a_controller_that_does_nothing_fails(env):
    class Idle(ScriptedController):
        def act(self, obs):
            return np.zeros(4)

    env.reset(seed=0, options={"program": "Stack_1_0"})
    assert not run_atomic(env, "Stack_1_0", Idle()).success


@pytest.mark.slow
def test_scripted_controller_on_every_atomic_program(env):
    for program in goal_setter.atomic_programs():
        wins = 0
        for seed in range(10):
            env.reset(seed=100 + seed, options={"program": program})
            wins += run_atomic(env, program).success
        assert wins >= 9, (program, wins)
