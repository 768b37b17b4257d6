"""Labels of MiniGrid-DoorKey: the atoms of doorkey.pddl, read from the unwrapped minigrid env.

Each predicate receives ``env.unwrapped`` (a ``minigrid.envs.DoorKeyEnv``) and must not change it.
"""
from minigrid.core.world_object import Door, Goal, Key


def door_open(env) -> bool:
    """The (single) door of the layout is open."""
    return any(isinstance(cell, Door) and cell.is_open for cell in env.grid.grid)


def at_goal(env) -> bool:
    """The agent stands on the goal square."""
    return isinstance(env.grid.get(*env.agent_pos), Goal)


DOORKEY = {
    "(has-key)": lambda env: isinstance(env.carrying, Key),
    "(door-open)": door_open,
    "(at-goal)": at_goal,
}
