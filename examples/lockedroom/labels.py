"""Labels of MiniGrid-LockedRoom, read from the unwrapped env (a ``minigrid.envs.LockedRoomEnv``).

The vocabulary is larger than lockedroom.pddl's. It also knows ``(side-room-open)``, the
mechanism the model leaves out, and ``(in-locked-room)``. Predicates read the public state only
(``grid``, ``carrying``, ``agent_pos``, door states) and never change the env. The locked room is
told apart by colour: its door has the key's colour. Where the doors stand and which colour is
the key's never change within a layout, so they are read once per grid.
"""
from minigrid.core.world_object import Door, Goal, Key

from asg.envs.plugins import LabelTable

LOCKEDROOM = LabelTable("lockedroom")


_LAYOUT: list = [None, None]  # [the grid it was read from, (doors, key colour)]: doors and colours never move


def _layout(env) -> tuple[list, str | None]:
    """(x, y, door) of every door, and the key's colour (the locked door's), read once per layout."""
    if _LAYOUT[0] is not env.grid:
        width = env.grid.width
        doors = [(i % width, i // width, cell) for i, cell in enumerate(env.grid.grid) if isinstance(cell, Door)]
        key = env.carrying if isinstance(env.carrying, Key) else next(
            (cell for cell in env.grid.grid if isinstance(cell, Key)), None)
        _LAYOUT[0], _LAYOUT[1] = env.grid, (doors, None if key is None else key.color)
    return _LAYOUT[1]


@LOCKEDROOM.atom("(has-key)")
def has_key(env) -> bool:
    return isinstance(env.carrying, Key)


@LOCKEDROOM.atom("(side-room-open)")  # the omitted mechanism: a door of another colour than the key's is open
def side_room_open(env) -> bool:
    doors, color = _layout(env)
    return any(door.is_open and door.color != color for _, _, door in doors)


@LOCKEDROOM.atom("(locked-door-open)")
def locked_door_open(env) -> bool:
    doors, color = _layout(env)
    return any(door.is_open and door.color == color for _, _, door in doors)


@LOCKEDROOM.atom("(in-locked-room)")
def in_locked_room(env) -> bool:
    """Beyond the locked door: on its far side from the hallway, within the room's five rows."""
    doors, color = _layout(env)
    x, y = (int(v) for v in env.agent_pos)
    for dx, dy, door in doors:
        if door.color == color:
            beyond = x < dx if dx < env.grid.width // 2 else x > dx
            return beyond and abs(y - dy) <= 2
    return False


@LOCKEDROOM.atom("(at-goal)")
def at_goal(env) -> bool:
    return isinstance(env.grid.get(*env.agent_pos), Goal)
