"""Labels of MiniGrid-MultiRoom-N4-S5, read from the unwrapped env (a ``minigrid.envs.MultiRoomEnv``).

The vocabulary is larger than multiroom.pddl's. It also knows the doors, ``(door-1-open)`` to
``(door-3-open)``, the mechanism the model leaves out. Predicates read the public state only
(``grid``, ``agent_pos``, door states) and never change the env.

Rooms are numbered from the grid alone. A cell's distance to the goal counts the doors on the way
(walls block, and a door counts whether open or not), so the goal's room is at 0 and the start
room at 3. Room k is the cells at 4 - k doors, and door k (from room k to k + 1) the door cell at
4 - k. A door's cell belongs to the room before it. The walls never move, so the map is computed
once per layout.
"""
from collections import deque

from minigrid.core.world_object import Door, Goal, Wall

from asg.envs.plugins import LabelTable

MULTIROOM = LabelTable("multiroom")
ROOMS = 4
_MAP: list = [None, None]  # [the grid the map was computed for, {(x, y): doors to the goal}]


def doors_to_goal(env) -> dict[tuple[int, int], int]:
    """(x, y) -> the fewest doors between the cell and the goal (0-1 breadth-first search)."""
    if _MAP[0] is env.grid:
        return _MAP[1]
    grid = env.grid
    start = next((i % grid.width, i // grid.width) for i, cell in enumerate(grid.grid) if isinstance(cell, Goal))
    dist, queue = {start: 0}, deque([start])
    while queue:
        x, y = queue.popleft()
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if not (0 <= nx < grid.width and 0 <= ny < grid.height):
                continue
            cell = grid.get(nx, ny)
            if isinstance(cell, Wall):
                continue
            d = dist[(x, y)] + isinstance(cell, Door)
            if d < dist.get((nx, ny), 1 << 30):
                dist[(nx, ny)] = d
                queue.appendleft((nx, ny)) if d == dist[(x, y)] else queue.append((nx, ny))
    _MAP[0], _MAP[1] = grid, dist
    return dist


def room_of_agent(env) -> int | None:
    """The number (1..4) of the room the agent is in."""
    d = doors_to_goal(env).get(tuple(int(v) for v in env.agent_pos))
    return None if d is None else ROOMS - d


def door_open(env, k: int) -> bool:
    """Door k, leading from room k to room k + 1, is open."""
    for (x, y), d in doors_to_goal(env).items():
        cell = env.grid.get(x, y)
        if d == ROOMS - k and isinstance(cell, Door):
            return cell.is_open
    return False


for _k in range(2, ROOMS + 1):
    MULTIROOM.atom(f"(in-room-{_k})")(lambda env, k=_k: room_of_agent(env) == k)
for _k in range(1, ROOMS):  # the omitted mechanism
    MULTIROOM.atom(f"(door-{_k}-open)")(lambda env, k=_k: door_open(env, k))


@MULTIROOM.atom("(at-goal)")
def at_goal(env) -> bool:
    return isinstance(env.grid.get(*env.agent_pos), Goal)
