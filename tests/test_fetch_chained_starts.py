"""Chained starts: states set up as inside a non-atomic program, built with the exact model's Θ."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from asg.envs.fetch import goal_setter
from asg.envs.fetch.env import INITIAL_STATES, FetchBlocksEnv
from asg.envs.fetch.expert import expert_actions
from asg.envs.fetch.initial_states import GRIPPER_CLEARANCE, TABLE, TRAINING, InitialStateConfig, sample_layout
from asg.envs.fetch.layout import BLOCK_HALF, BLOCK_SIZE, GRIP_POS, REST_Z, ZONES, block_positions
from asg.learning.errors import ConfigError
from asg.learning.goal_policy.carry import CURRICULUM_FIELDS
from asg.learning.goal_policy.config import ScheduleConfig, fast, paper, preset
from asg.learning.goal_policy.evaluate import evaluate_atomic
from asg.learning.goal_policy.normalizer import NormStats
from asg.learning.goal_policy.rollout import PolicySnapshot
from asg.learning.goal_policy.trainer import training_starts

HOME = np.array([1.34, 0.75, 0.53])


def _table(seed: int) -> np.ndarray:
    return sample_layout(np.random.default_rng(seed), TABLE, HOME).blocks


def _levels(positions: np.ndarray, block: int) -> int:
    """How many blocks lie under ``block`` (0 = on the table)."""
    return int(round((positions[block, 2] - REST_Z) / BLOCK_SIZE))


def test_stack_setting_puts_the_target_on_towers_of_every_height_and_keeps_phi():
    heights, in_zone = set(), 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        calls = goal_setter.setting_calls("Stack_0_1", rng)
        assert all(goal_setter.acting_block(c) != 0 for c in calls)  # the moved block stays put
        after = goal_setter.chain(_table(seed), calls, rng, jitter=0.01)
        assert goal_setter.applicable_to_positions(after, "Stack_0_1")
        assert _levels(after, 0) == 0
        heights.add(_levels(after, 1))
        tower = after[np.max(np.abs(after[:, :2] - after[1, :2]), axis=1) < BLOCK_SIZE]
        base = tower[np.argmin(tower[:, 2])]
        in_zone += bool(any(zone.contains_xy(base[:2]) for zone in ZONES.values()))
    assert heights == {0, 1, 2}  # the Stack lands on a tower of one, two or three
    assert 0 < in_zone < 60


def test_move_setting_half_fills_the_zone_or_raises_the_block():
    crowded, raised = 0, 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        calls = goal_setter.setting_calls("Move_To_Zone_2_BLUE", rng)
        after = goal_setter.chain(_table(seed), calls, rng)
        assert goal_setter.applicable_to_positions(after, "Move_To_Zone_2_BLUE")
        others = [b for b in range(4) if b != 2]
        crowded += int(ZONES["blue"].contains_xy(after[others]).sum() == 1)
        raised += _levels(after, 2) == 1
    assert 10 < crowded < 50 and 10 < raised < 50


def test_chain_applies_each_program_with_theta_and_skips_inapplicable_ones():
    start = _table(0)
    rng = np.random.default_rng(0)
    after = goal_setter.chain(start, ["Stack_1_0", "Stack_0_2"], rng)  # b0 is covered: the 2nd is skipped
    np.testing.assert_allclose(after[1], start[0] + [0, 0, BLOCK_SIZE])
    np.testing.assert_allclose(after[[0, 2, 3]], start[[0, 2, 3]])
    calls = goal_setter.random_calls(start, 3, np.random.default_rng(1))
    assert len(calls) == 3
    positions = start
    for call in calls:
        assert goal_setter.applicable_to_positions(positions, call)
        positions = goal_setter.goal_positions(positions, call)


def test_chained_env_starts_satisfy_phi_reach_four_high_goals_and_clear_the_gripper():
    env = FetchBlocksEnv(initial_state="chained", max_steps=None)
    four_high = 0
    for seed in range(24):
        program = "Stack_3_2" if seed % 2 else "Move_To_Zone_0_ORANGE"
        obs, info = env.reset(seed=seed, options={"program": program})
        assert info["applicable"], (program, seed)
        o = obs["observation"]
        blocks, grip = block_positions(o), o[GRIP_POS]
        near = np.max(np.abs(blocks[:, :2] - grip[:2]), axis=1) < GRIPPER_CLEARANCE
        assert np.all(blocks[near, 2] + BLOCK_HALF < grip[2])  # nothing starts inside the gripper
        four_high += _levels(env.goal.reshape(4, 3), 3) == 3 if program.startswith("Stack") else 0
    assert four_high >= 2


def test_chained_share_is_a_config_field_kept_by_annealing():
    config = replace(TRAINING, p_chained=0.3)
    assert config.annealed(1.0).p_chained == 0.3 and config.annealed(1.0).p_stacked == 0.0
    assert INITIAL_STATES["chained"].p_chained == 1.0
    with pytest.raises(ValueError):
        InitialStateConfig(p_chained=1.5)
    with pytest.raises(ConfigError, match="chained_starts"):
        ScheduleConfig(chained_starts=-0.1)
    assert fast().schedule.chained_starts > 0 and paper().schedule.chained_starts == 0.0
    assert training_starts(0.0) == "training" and training_starts(0.3).p_chained == 0.3


class _ExpertPolicy(PolicySnapshot):
    """The queryable expert behind the PolicySnapshot interface (identity normalisers)."""

    def act_normalized(self, o_norm: np.ndarray, g_norm: np.ndarray) -> np.ndarray:
        return expert_actions(o_norm, g_norm, 0)


def _expert() -> _ExpertPolicy:
    identity = lambda d: NormStats(np.zeros(d, np.float32), np.ones(d, np.float32), 1e6)  # noqa: E731
    return _ExpertPolicy(((np.zeros((4, 82), np.float32), np.zeros(4, np.float32)),), identity(70), identity(12), 1e6)


def test_the_expert_solves_chained_starts_so_they_are_fair_training_starts():
    result = evaluate_atomic(_expert(), episodes=3, programs=["Stack_1_0", "Move_To_Zone_3_BLUE"],
                             starts="chained")
    assert result["starts"] == "chained"
    assert result["mean_success"] == 1.0
    assert result["post_families"] == {"Move_To_Zone": 1.0, "Stack": 1.0}  # the expert sets ψ down, too
    assert result["mean_post_success"] == 1.0
    with pytest.raises(ValueError, match="starts"):
        evaluate_atomic(_expert(), episodes=1, starts="tower")


def test_handoff_starts_hold_the_block_the_last_call_placed():
    """A hand-off start is where a learned program ends: its block at the target, still grasped."""
    env = FetchBlocksEnv(initial_state="handoff", max_steps=None)
    held = 0
    for seed in range(12):
        obs, info = env.reset(seed=seed, options={"program": "Stack_1_0"})
        assert info["applicable"], seed
        atoms = {str(a) for a in env.atoms()}
        holding = [b for b in range(4) if f"(holding b{b})" in atoms]
        if holding:  # the setting calls moved a block (Θ's chain may be empty: nothing to hold)
            held += 1
            (b,) = holding
            assert b != 1  # the block Stack_1_0 moves is never the one a setting call placed
            grip = obs["observation"][GRIP_POS]
            assert np.max(np.abs(block_positions(obs["observation"])[b] - grip)) < BLOCK_HALF
    assert held >= 6
    assert INITIAL_STATES["handoff"].chain_handoff == 1.0
    assert INITIAL_STATES["chained"].chain_handoff == 0.0


def test_handoff_share_is_a_schedule_field_off_in_every_preset():
    assert training_starts(0.3, 0.5).chain_handoff == 0.5 and training_starts(0.3).chain_handoff == 0.0
    with pytest.raises(ValueError):
        InitialStateConfig(chain_handoff=2.0)
    with pytest.raises(ConfigError, match="chained_handoff"):
        ScheduleConfig(chained_handoff=1.5)
    assert fast().schedule.chained_handoff == 0.0 and paper().schedule.chained_handoff == 0.0



def test_placing_starts_hold_the_programs_block_above_its_target():
    """chain_place: the program's own block in the closed fingers, 2.5-5 cm above its target (a
    reverse curriculum), and the program still applicable there."""
    env = FetchBlocksEnv(initial_state="placing", max_steps=None)
    for program in ("Stack_1_0", "Move_To_Zone_3_BLUE"):
        block = goal_setter.acting_block(program)
        for seed in range(4):
            obs, info = env.reset(seed=seed, options={"program": program})
            assert info["applicable"], (program, seed)
            assert f"(holding b{block})" in {str(a) for a in env.atoms()}, (program, seed)
            above = block_positions(obs["observation"])[block] - obs["desired_goal"].reshape(4, 3)[block]
            assert 0.02 <= above[2] <= 0.055 and np.max(np.abs(above[:2])) <= 0.015, (program, seed, above)
    result = evaluate_atomic(_expert(), episodes=2, programs=["Stack_1_0"], starts="placing")
    assert result["mean_post_success"] == 1.0  # a fair start: the expert sets the block down from it


def test_placing_share_is_a_schedule_field_off_in_every_preset_that_a_carry_may_change():
    assert training_starts(0.3, 0.5, 0.4).chain_place == 0.4 and training_starts(0.3).chain_place == 0.0
    with pytest.raises(ValueError, match="chain_place"):
        InitialStateConfig(chain_place=-0.1)
    with pytest.raises(ValueError, match="place_height"):
        InitialStateConfig(place_height=(0.05, 0.01))
    with pytest.raises(ConfigError, match="chained_place"):
        ScheduleConfig(chained_place=1.5)
    assert all(preset(name).schedule.chained_place == 0.0 for name in ("paper", "fast", "learned"))
    assert "chained_place" in CURRICULUM_FIELDS


def test_placing_starts_can_be_kept_to_one_family():
    """``chained_place_family``: the Stack programs start placing, the Moves start as chained starts do."""
    config = replace(INITIAL_STATES["placing"], place_family="Stack")
    env = FetchBlocksEnv(initial_state=config, max_steps=None)
    for program, placing in (("Stack_1_0", True), ("Move_To_Zone_3_BLUE", False)):
        block = goal_setter.acting_block(program)
        for seed in range(3):
            env.reset(seed=seed, options={"program": program})
            assert (f"(holding b{block})" in {str(a) for a in env.atoms()}) == placing, (program, seed)
    assert training_starts(0.6, 0.5, 0.4, "Stack").place_family == "Stack"
    with pytest.raises(ValueError, match="place_family"):
        InitialStateConfig(place_family="Move")
    with pytest.raises(ConfigError, match="chained_place_family"):
        ScheduleConfig(chained_place_family="Move")
    assert "chained_place_family" in CURRICULUM_FIELDS


def test_chained_jitter_is_a_schedule_field_a_carry_may_change():
    """``chained_jitter``: how far off each placement of a chained start lands, as the policy's own do."""
    assert training_starts(0.6).chain_jitter == 0.01  # the value before the field existed
    assert training_starts(0.6, 0.5, 0.4, "Stack", 0.02).chain_jitter == 0.02
    assert all(preset(name).schedule.chained_jitter == 0.01 for name in ("paper", "fast", "learned"))
    with pytest.raises(ConfigError, match="chained_jitter"):
        ScheduleConfig(chained_jitter=0.025)
    assert "chained_jitter" in CURRICULUM_FIELDS
    widest = {}
    for jitter in (0.01, 0.02):
        env = FetchBlocksEnv(initial_state=replace(INITIAL_STATES["chained"], chain_jitter=jitter), max_steps=None)
        offsets = []
        for seed in range(8):
            obs, _ = env.reset(seed=seed, options={"program": "Stack_2_1"})
            blocks = obs["observation"][:12].reshape(4, 3)
            pairs = [(int(a.args[0][1]), int(a.args[1][1])) for a in env.atoms() if a.predicate == "on"]
            offsets += [float(np.abs(blocks[top, :2] - blocks[low, :2]).max()) for top, low in pairs]
        env.close()
        widest[jitter] = max(offsets)
    assert widest[0.01] <= 0.013 < widest[0.02], widest


def test_tower_weights_choose_how_tall_a_stacks_chained_start_is():
    """``chained_tower_weights``: None draws the towers as before (the same calls for the same seed);
    weights (0, 0, 1) put every Stack onto a tower of three, in the env too."""
    def under(weights, seed):
        calls = goal_setter.setting_calls("Stack_0_1", np.random.default_rng(seed), weights)
        return sum(c.startswith("Stack_") for c in calls)  # the Stacks that built the tower below

    assert [under(None, s) for s in range(40)] == [
        sum(c.startswith("Stack_") for c in goal_setter.setting_calls("Stack_0_1", np.random.default_rng(s)))
        for s in range(40)]
    assert {under(None, s) for s in range(40)} == {0, 1, 2}
    assert {under((0.0, 0.0, 1.0), s) for s in range(40)} == {2}
    assert np.mean([under((1.0, 1.0, 6.0), s) == 2 for s in range(400)]) > 0.6
    tall = replace(INITIAL_STATES["chained"], tower_weights=(0.0, 0.0, 1.0))
    env = FetchBlocksEnv(initial_state=tall, max_steps=None)
    for seed in range(3):
        obs, _ = env.reset(seed=seed, options={"program": "Stack_0_1"})
        assert obs["desired_goal"][2] == pytest.approx(REST_Z + 3 * BLOCK_SIZE, abs=0.015), seed  # b0 onto three
    env.close()
    assert training_starts(0.6, tower_weights=(1, 1, 2)).tower_weights == (1, 1, 2)
    with pytest.raises(ValueError, match="tower_weights"):
        InitialStateConfig(tower_weights=(0.0, 0.0, 0.0))
    with pytest.raises(ConfigError, match="chained_tower_weights"):
        ScheduleConfig(chained_tower_weights=(1.0, -1.0, 1.0))
    assert all(preset(name).schedule.chained_tower_weights is None for name in ("paper", "fast", "learned"))
    assert "chained_tower_weights" in CURRICULUM_FIELDS


def _zone_of(positions: np.ndarray, block: int) -> str | None:
    return next((name for name, z in ZONES.items()
                 if np.all(np.abs(positions[block, :2] - np.asarray(z.centre)) <= np.asarray(z.half) + 0.02)), None)


def test_other_zone_first_fills_the_zone_the_setting_leaves_alone():
    """``chained_other_zone``: at 0 the calls and the draws after them are those of before; at 1 the blocks
    a setting leaves unused go first into the zone it does not use (Clean_And_Stack's other half), stacked
    or side by side, the program's φ holds after them, and the env builds such starts."""
    before = {  # setting_calls before the switch (commit 9e5942a), seeds 0-5, and the rng's next uniform after it
        "Stack_0_1": ([("Move_To_Zone_1_BLUE",), (), (), (), ("Move_To_Zone_3_ORANGE", "Stack_2_3", "Stack_1_2"),
                       ("Stack_2_3", "Stack_1_2")], [0.81327, 0.311831, 0.091916, 0.094129, 0.607356, 0.285801]),
        "Move_To_Zone_2_ORANGE": ([("Move_To_Zone_0_ORANGE", "Stack_2_1"), ("Move_To_Zone_0_ORANGE",), ("Stack_2_0",),
                                   (), ("Stack_2_0",), ("Stack_2_1",)],
                                  [0.81327, 0.311831, 0.600101, 0.094129, 0.607356, 0.053931])}
    for name, (calls_then, next_then) in before.items():
        for seed, (then, after) in enumerate(zip(calls_then, next_then)):
            rng = np.random.default_rng(seed)
            assert goal_setter.setting_calls(name, rng, None, 0.0) == then, (name, seed)
            assert rng.uniform() == pytest.approx(after, abs=1e-6), (name, seed)
    stacked = beside = 0
    for seed in range(80):
        rng = np.random.default_rng(seed)
        plain = goal_setter.setting_calls("Stack_0_1", np.random.default_rng(seed), (1.0, 0.0, 0.0))
        calls = goal_setter.setting_calls("Stack_0_1", rng, (1.0, 0.0, 0.0), 1.0)  # b0 onto b1 alone
        assert calls[len(calls) - len(plain):] == plain  # the setting's own calls come last, unchanged
        first = calls[:len(calls) - len(plain)]
        assert [goal_setter.acting_block(c) for c in first if c.startswith("Move")] and all(
            goal_setter.acting_block(c) in (2, 3) for c in first)
        after = goal_setter.chain(_table(seed), calls, rng, jitter=0.01)
        assert goal_setter.applicable_to_positions(after, "Stack_0_1"), calls
        zones = {_zone_of(after, k) for k in (2, 3)}
        assert len(zones) == 1 and None not in zones, (calls, zones)  # both spare blocks in one zone
        if plain:  # b1 went into a zone: the spare blocks are in the other one
            assert _zone_of(after, 1) not in zones
        stacked += any(c == "Stack_3_2" for c in first)
        beside += sum(c.startswith("Move") for c in first) == 2
    assert stacked > 20 and beside > 20, (stacked, beside)
    move = goal_setter.setting_calls("Move_To_Zone_0_BLUE", np.random.default_rng(3), None, 1.0)
    assert any(c.endswith("_ORANGE") for c in move), move
    assert INITIAL_STATES["other_zone"] == replace(INITIAL_STATES["chained"], chain_other_zone=1.0)
    other = replace(INITIAL_STATES["other_zone"], tower_weights=(1.0, 0.0, 0.0))
    env = FetchBlocksEnv(initial_state=other, max_steps=None)
    for seed in range(3):
        obs, _ = env.reset(seed=seed, options={"program": "Stack_0_1"})
        blocks = block_positions(obs["observation"])
        assert _zone_of(blocks, 2) is not None and _zone_of(blocks, 2) == _zone_of(blocks, 3), seed
    env.close()
    assert training_starts(0.6, other_zone=0.5).chain_other_zone == 0.5
    with pytest.raises(ValueError, match="chain_other_zone"):
        InitialStateConfig(chain_other_zone=1.5)
    with pytest.raises(ConfigError, match="chained_other_zone"):
        ScheduleConfig(chained_other_zone=-0.1)
    assert all(preset(name).schedule.chained_other_zone == 0.0 for name in ("paper", "fast", "learned"))
    assert "chained_other_zone" in CURRICULUM_FIELDS
