"""Labels of MiniGrid-BlockedUnlockPickup, read from the unwrapped env (a
``minigrid.envs.BlockedUnlockPickupEnv``).

The vocabulary is larger than blockedunlockpickup.pddl's. It also knows the mechanisms the model
leaves out: ``(door-clear)`` (nothing lies on the cell in front of the door, on the agent's side:
the ball that blocks it has been moved), ``(has-ball)`` and ``(hands-empty)`` (the agent holds one
object at a time). Predicates read the public state only (``grid``, ``carrying``, door states)
and never change the env. The layout has one door, one key, one ball and one box.
"""
from minigrid.core.world_object import Ball, Box, Door, Key

from asg.envs.plugins import LabelTable

BLOCKEDUNLOCKPICKUP = LabelTable("blockedunlockpickup")


def _door(env) -> tuple[Door, int, int]:
    """The door, and the cell in front of it on the agent's side (the room on the left)."""
    width = env.grid.width
    index, door = next((i, cell) for i, cell in enumerate(env.grid.grid) if isinstance(cell, Door))
    return door, index % width - 1, index // width


@BLOCKEDUNLOCKPICKUP.atom("(has-key)")
def has_key(env) -> bool:
    return isinstance(env.carrying, Key)


@BLOCKEDUNLOCKPICKUP.atom("(door-open)")
def door_open(env) -> bool:
    return _door(env)[0].is_open


@BLOCKEDUNLOCKPICKUP.atom("(has-box)")
def has_box(env) -> bool:
    return isinstance(env.carrying, Box)


@BLOCKEDUNLOCKPICKUP.atom("(door-clear)")  # omitted: the ball blocks the door
def door_clear(env) -> bool:
    _, x, y = _door(env)
    return env.grid.get(x, y) is None


@BLOCKEDUNLOCKPICKUP.atom("(has-ball)")
def has_ball(env) -> bool:
    return isinstance(env.carrying, Ball)


@BLOCKEDUNLOCKPICKUP.atom("(hands-empty)")  # omitted: one object at a time
def hands_empty(env) -> bool:
    return env.carrying is None
