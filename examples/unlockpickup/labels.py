"""Labels of MiniGrid-UnlockPickup: the atoms of unlockpickup.pddl, read from the unwrapped env.

Written with the decorator form (``LabelTable``); each predicate receives ``env.unwrapped``
(a ``minigrid.envs.UnlockPickupEnv``) and must not change it.
"""
from minigrid.core.world_object import Box, Door, Key

from asg.envs.plugins import LabelTable

UNLOCKPICKUP = LabelTable("unlockpickup")


@UNLOCKPICKUP.atom("(has-key)")
def has_key(env) -> bool:
    return isinstance(env.carrying, Key)


@UNLOCKPICKUP.atom("(door-open)")  # not monotone: the agent can close the door again
def door_open(env) -> bool:
    return any(isinstance(cell, Door) and cell.is_open for cell in env.grid.grid)


@UNLOCKPICKUP.atom("(has-box)")
def has_box(env) -> bool:
    return isinstance(env.carrying, Box)
