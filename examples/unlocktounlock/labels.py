"""Labels of BabyAI-UnlockToUnlock, read from the unwrapped env (a ``minigrid.envs.babyai.UnlockToUnlock``).

The vocabulary is larger than unlocktounlock.pddl's. It also knows door B, ``(has-key-b)`` and
``(door-b-open)``, the mechanism the model leaves out, and ``(hands-empty)``. Predicates read the
public state only (``grid``, ``carrying``, door states) and never change the env. Door A is the
one nearer the ball's room on the left, that is the door with the smaller x. Door B is the other
one. A key belongs to the door of its colour.
"""
from minigrid.core.world_object import Ball, Door, Key

from asg.envs.plugins import LabelTable

UNLOCKTOUNLOCK = LabelTable("unlocktounlock")


def _door(env, which: str) -> Door | None:
    """Door ``a`` (the left one, to the ball's room) or ``b`` (the right one)."""
    width = env.grid.width
    doors = sorted((i % width, i) for i, cell in enumerate(env.grid.grid) if isinstance(cell, Door))
    if len(doors) != 2:
        return None
    return env.grid.grid[doors[0 if which == "a" else 1][1]]


def _has_key_of(env, which: str) -> bool:
    door = _door(env, which)
    return isinstance(env.carrying, Key) and door is not None and env.carrying.color == door.color


def _open(env, which: str) -> bool:
    door = _door(env, which)
    return door is not None and door.is_open


@UNLOCKTOUNLOCK.atom("(has-key-b)")  # the omitted mechanism: B's key ...
def has_key_b(env) -> bool:
    return _has_key_of(env, "b")


@UNLOCKTOUNLOCK.atom("(door-b-open)")  # ... and door B
def door_b_open(env) -> bool:
    return _open(env, "b")


@UNLOCKTOUNLOCK.atom("(hands-empty)")
def hands_empty(env) -> bool:
    return env.carrying is None


@UNLOCKTOUNLOCK.atom("(has-key-a)")
def has_key_a(env) -> bool:
    return _has_key_of(env, "a")


@UNLOCKTOUNLOCK.atom("(door-a-open)")
def door_a_open(env) -> bool:
    return _open(env, "a")


@UNLOCKTOUNLOCK.atom("(has-ball)")
def has_ball(env) -> bool:
    return isinstance(env.carrying, Ball)
