"""Labels of BabyAI-KeyInBox, read from the unwrapped env (a ``minigrid.envs.babyai.KeyInBox``).

The vocabulary is larger than keyinbox.pddl's. It also knows ``(box-opened)``, the mechanism
the model leaves out: the key is out of its box (on the floor or in hand; a toggled box leaves
its key in its place). Predicates read the public state only (``grid``, ``carrying``, door
states) and never change the env.
"""
from minigrid.core.world_object import Door, Key

from asg.envs.plugins import LabelTable

KEYINBOX = LabelTable("keyinbox")


@KEYINBOX.atom("(box-opened)")  # the omitted mechanism
def box_opened(env) -> bool:
    return isinstance(env.carrying, Key) or any(isinstance(cell, Key) for cell in env.grid.grid)


@KEYINBOX.atom("(has-key)")
def has_key(env) -> bool:
    return isinstance(env.carrying, Key)


@KEYINBOX.atom("(door-open)")
def door_open(env) -> bool:
    return any(isinstance(cell, Door) and cell.is_open for cell in env.grid.grid)
