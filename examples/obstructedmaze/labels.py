"""Labels of MiniGrid-ObstructedMaze-1Dl, read from the unwrapped env (a ``minigrid.envs.ObstructedMaze_1Dlhb``).

The vocabulary is larger than obstructedmaze.pddl's. It also knows ``(hands-empty)``, the
mechanism the model leaves out (one object at a time: the key goes down before the ball comes
up). Predicates read the public state only (``grid``, ``carrying``, door states) and never
change the env. The layout has one ball, the one the mission asks for.
"""
from minigrid.core.world_object import Ball, Door, Key

from asg.envs.plugins import LabelTable

OBSTRUCTEDMAZE = LabelTable("obstructedmaze")


@OBSTRUCTEDMAZE.atom("(has-key)")
def has_key(env) -> bool:
    return isinstance(env.carrying, Key)


@OBSTRUCTEDMAZE.atom("(hands-empty)")  # the omitted mechanism
def hands_empty(env) -> bool:
    return env.carrying is None


@OBSTRUCTEDMAZE.atom("(door-open)")
def door_open(env) -> bool:
    return any(isinstance(cell, Door) and cell.is_open for cell in env.grid.grid)


@OBSTRUCTEDMAZE.atom("(has-ball)")
def has_ball(env) -> bool:
    return isinstance(env.carrying, Ball)
