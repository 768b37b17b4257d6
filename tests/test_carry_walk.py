"""``benchmarks/carry_walk.py``: the walk starts with the right key in hand, and a walk that never
lets go of it opens the door where the uniform walk does not (issues 39, 40)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("minigrid")
import gymnasium as gym  # noqa: E402
import minigrid  # noqa: E402, F401  (registers the ids)
from minigrid.core.world_object import Key  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import carry_walk  # noqa: E402  (benchmarks/, a script folder)


@pytest.mark.parametrize("world", sorted(carry_walk.WORLDS))
def test_the_walk_starts_with_the_key_of_its_door_in_hand(world):
    env_id, setup = carry_walk.WORLDS[world]
    env = gym.make(env_id).unwrapped
    env.reset(seed=3)
    keys_before = sum(isinstance(c, Key) for c in env.grid.grid)
    door = setup(env)
    assert isinstance(env.carrying, Key) and env.carrying.color == door.color
    assert not door.is_open and sum(isinstance(c, Key) for c in env.grid.grid) == keys_before - (world != "keyinbox")
    assert env.grid.get(*env.agent_pos) is None  # the agent stands where the env put it


def test_dropping_the_key_is_what_the_uniform_walk_loses_on_keyinbox():
    rng = np.random.default_rng(0)
    uniform = [carry_walk.walk("BabyAI-KeyInBox-v0", carry_walk.keyinbox, i, list(range(7)), rng) for i in range(40)]
    keep = [carry_walk.walk("BabyAI-KeyInBox-v0", carry_walk.keyinbox, i, [0, 1, 2, 3, 5, 6], rng) for i in range(40)]
    assert sum(t is not None for t, _, _ in keep) >= sum(t is not None for t, _, _ in uniform) + 5
    assert all(let_go == 576 for _, let_go, _ in keep)  # without drop the key never leaves the hand
    assert np.mean([let_go for _, let_go, _ in uniform]) < 60
    assert all(n == (576 if t is None else t) for t, _, n in uniform)


def test_the_protected_score_cuts_each_walk_where_it_lets_go():
    """The ``protected`` row counts a door only when it opened before the key first left the hand,
    and charges each walk its steps up to that cut: never more doors than the uncut walk, never
    more steps a walk than the key stayed in hand."""
    row = carry_walk.measure("keyinbox", 30, 0)
    cut, uncut = row["protected"], row["uniform"]
    assert cut["opened"] <= uncut["opened"] and cut["walks"] == uncut["walks"] == 30
    assert cut["mean_steps_per_walk"] <= uncut["mean_steps_to_let_go"]
    per_1000 = 1000 * cut["opened"] / (30 * cut["mean_steps_per_walk"])
    assert cut["opened_per_1000_steps"] == pytest.approx(per_1000, rel=0.01)
