"""Household (ASGRL Sec. 1 and 5.2, Fig. 1) on minigrid, with the traps the paper describes.

The dynamics are the pure function ``transition(state, action)`` over the hashable
``HouseholdState``; ``HouseholdEnv`` is a ``MiniGridEnv`` whose grid objects (walls, keys,
the red door, the purple dock, the green goal) are kept in step with that state, so
minigrid draws it and encodes the observation.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from gymnasium import spaces
from minigrid.core.constants import COLOR_TO_IDX, OBJECT_TO_IDX, STATE_TO_IDX
from minigrid.core.grid import Grid
from minigrid.core.mission import MissionSpace
from minigrid.core.world_object import Door, Floor, Goal, Key
from minigrid.minigrid_env import MiniGridEnv

from asg.envs.labeling import Labeler
from asg.envs.solver import Stage, StagedSolver

WIDTH, HEIGHT = 11, 9
START, START_DIR = (4, 6), 3  # (x, y); minigrid directions: 0 east, 1 south, 2 west, 3 north
KEYS = {"yellow": (5, 5), "green": (1, 7), "red": (1, 1)}  # nearest to farthest from START
RIGHT_KEY = "red"
DOCK, DOOR, GOAL = (6, 7), (7, 4), (9, 1)
START_ROOM = frozenset((x, y) for x in range(1, DOOR[0]) for y in range(1, HEIGHT - 1))
FINAL_ROOM = frozenset((x, y) for x in range(DOOR[0] + 1, WIDTH - 1) for y in range(1, HEIGHT - 1))
FREE = START_ROOM | FINAL_ROOM | {DOOR}
DIR_VEC = ((1, 0), (0, 1), (-1, 0), (0, -1))
DIR_NAMES = ("east", "south", "west", "north")
TURN_LEFT, TURN_RIGHT, FORWARD, PICKUP, TOGGLE = range(5)
MINIGRID_ACTIONS = (0, 1, 2, 3, 5)  # minigrid's left, right, forward, pickup, toggle
LOCKED, OPEN, CLOSED = "locked", "open", "closed"
LOW, FULL, EMPTY = "low", "full", "empty"
BATTERY_LEVELS = (LOW, FULL, EMPTY)
RUNNING, SUCCESS, FAILED = "running", "success", "failed"


@dataclass(frozen=True, slots=True)
class HouseholdState:
    """The full Markov state; hashable. Keys not carried lie where they started.

    ``door``: ``locked`` -> ``open`` (unlocked with the red key) -> ``closed`` (shut behind
    the robot once it enters the final room). ``battery``: ``low`` at the start, ``full``
    after the dock, ``empty`` when the robot reaches the destination uncharged (terminal).
    """

    pos: tuple[int, int] = START
    dir: int = START_DIR
    carrying: str | None = None
    door: str = LOCKED
    battery: str = LOW
    status: str = RUNNING

    def __str__(self) -> str:
        return (f"household pos={self.pos} dir={DIR_NAMES[self.dir]} carrying={self.carrying or '-'} "
                f"door={self.door} battery={self.battery} status={self.status}")


def _key_at(state: HouseholdState, cell: tuple[int, int]) -> str | None:
    for color, where in KEYS.items():
        if where == cell and state.carrying != color:
            return color
    return None


def transition(state: HouseholdState, action: int) -> tuple[HouseholdState, bool]:
    """One step of the true dynamics: ``(next_state, terminated)``; terminal states absorb."""
    if state.status != RUNNING:
        return state, True
    if action == TURN_LEFT:
        return replace(state, dir=(state.dir - 1) % 4), False
    if action == TURN_RIGHT:
        return replace(state, dir=(state.dir + 1) % 4), False
    dx, dy = DIR_VEC[state.dir]
    front = (state.pos[0] + dx, state.pos[1] + dy)
    key = _key_at(state, front)
    if action == PICKUP:
        if key is not None and state.carrying is None:
            return replace(state, carrying=key), False
        return state, False
    if action == TOGGLE:
        if front == DOOR and state.door == LOCKED and state.carrying == RIGHT_KEY:
            return replace(state, door=OPEN), False
        return state, False
    if action != FORWARD:
        raise ValueError(f"invalid action {action!r}")
    if front not in FREE or key is not None or (front == DOOR and state.door != OPEN):
        return state, False
    door = CLOSED if state.pos == DOOR and front in FINAL_ROOM else state.door
    battery = FULL if front == DOCK else state.battery
    if front == GOAL and battery != FULL:  # the last stretch drains an uncharged battery: a dead end
        return replace(state, battery=EMPTY, status=FAILED), True
    status = SUCCESS if front == GOAL else RUNNING
    return HouseholdState(front, state.dir, state.carrying, door, battery, status), status != RUNNING


class HouseholdEnv(MiniGridEnv):
    """Household of ASGRL (Guan et al. 2022, Fig. 1): red key, charge, red door, green goal.

    ## Description
    An 11 x 9 minigrid (x right, y down). The starting room (x 1..6) holds three keys:
    yellow at (5, 5), next to the robot, green at (1, 7) and red at (1, 1), farthest; only
    the red key opens the locked red door at (7, 4). The purple charging dock is the floor
    tile (6, 7), off the way from the red key to the door. The final room (x 8..9) holds the
    green destination (9, 1)::

        ###########
        #r.....#.G#
        #......#..#
        #......#..#
        #......D..#      D locked red door
        #....y.#..#
        #...^..#..#      ^ robot at (4, 6) facing north
        #g....P#..#      P charging dock
        ###########

    Traps, as in the paper's Section 1: the robot carries one key and cannot drop it, so the
    nearest (yellow) or the green key is a dead end. The battery starts low and only the dock
    charges it; the door closes behind the robot (and cannot be opened from inside) once it
    steps from the doorway into the final room, and the last step onto the destination
    drains an uncharged battery (the robot stops short of it: terminated, failed). So the final room
    is reachable without charging, but that way is a dead end: a skill that learns the shortest way through the door
    (Landmark-HRL on Household-V2) never recharges. ``door-ajar`` (robot in the open doorway)
    and ``at-final-room`` never hold together.
    Choices the paper leaves open, made here: the fixed layout above, sized so that a uniformly
    random 700-step skill episode reaches the final room about 3% of the time (1.9% charged);
    charging by stepping on the dock, at any time; the key is kept after unlocking; toggling
    an open door does nothing.

    ## Actions
    ``Discrete(5)``: 0 turn left, 1 turn right, 2 forward, 3 pick up, 4 toggle (minigrid's
    actions without drop and done).

    ## Observation
    Fully observable ``Dict``: ``image`` ``Box(0, 255, (15, 11, 3), uint8)``, the minigrid
    encoding (object, colour, state) of every cell with the robot drawn as (agent, red,
    direction); ``direction`` ``Discrete(4)``; ``carrying`` ``Discrete(7)`` (0 nothing,
    1 + minigrid colour index); ``battery`` ``Discrete(3)`` (0 low, 1 full, 2 empty).
    ``hashable_state()`` returns the equivalent ``HouseholdState``.

    ## Rewards
    ``success_reward`` (default 1.0) on reaching the destination, else 0 (not minigrid's
    ``1 - 0.9 t/T``: ASGRL's goal reward is binary).

    ## Termination
    Terminated at the destination: success when charged, else failure (battery drained).
    Truncated after ``max_steps`` steps (default 2000).

    ## Registered ids
    ``asg/Household-v0`` (used with the models Household-V1 and V2). Deterministic;
    ``reset(seed=...)`` seeds ``np_random`` only.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, max_steps: int = 2000, success_reward: float = 1.0,
                 render_mode: str | None = None, tile_size: int = 32) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be positive, got {max_steps}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"unsupported render_mode {render_mode!r}")
        self.state = HouseholdState()
        self.success_reward = float(success_reward)
        super().__init__(
            mission_space=MissionSpace(mission_func=lambda: "reach the green destination"),
            width=WIDTH, height=HEIGHT, max_steps=max_steps, see_through_walls=True,
            render_mode=render_mode, highlight=False, tile_size=tile_size)
        self.action_space = spaces.Discrete(len(MINIGRID_ACTIONS))
        self.observation_space = spaces.Dict({
            "image": spaces.Box(0, 255, (WIDTH, HEIGHT, 3), np.uint8),
            "direction": spaces.Discrete(4),
            "carrying": spaces.Discrete(len(COLOR_TO_IDX) + 1),
            "battery": spaces.Discrete(len(BATTERY_LEVELS)),
        })

    def _gen_grid(self, width: int, height: int) -> None:
        self.grid = Grid(width, height)
        self.grid.wall_rect(0, 0, width, height)
        self.grid.vert_wall(DOOR[0], 1, height - 2)
        self.grid.set(*DOCK, Floor("purple"))
        self.put_obj(Goal(), *GOAL)
        self.door = Door("red", is_locked=True)
        self.put_obj(self.door, *DOOR)
        self._static = self.grid.encode()  # keys are patched in per observation
        self.agent_pos, self.agent_dir = self.state.pos, self.state.dir

    @staticmethod
    def transition(state: HouseholdState, action: int) -> tuple[HouseholdState, bool]:
        """Pure dynamics, ``(next_state, terminated)``; see module ``transition``."""
        return transition(state, action)

    def hashable_state(self) -> HouseholdState:
        """The current Markov state (frozen, hashable)."""
        return self.state

    def set_state(self, state: HouseholdState) -> dict:
        """Jump to ``state`` (tests, exploration); returns its observation."""
        self.state = state
        self._sync()
        return self.gen_obs()

    def _sync(self) -> None:
        """Make minigrid's agent, keys and door show ``self.state``."""
        state = self.state
        self.agent_pos, self.agent_dir = state.pos, state.dir
        for color, cell in KEYS.items():
            self.grid.set(*cell, None if state.carrying == color else Key(color))
        self.carrying = Key(state.carrying) if state.carrying else None
        self.door.is_open = state.door == OPEN
        self.door.is_locked = state.door == LOCKED

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.state = HouseholdState()
        super().reset(seed=seed, options=options)
        self._sync()
        return self.gen_obs(), self._info()

    def step(self, action):
        action = int(action)
        if not 0 <= action < self.action_space.n:  # Discrete.contains on an int, without its ~15 µs a step
            raise ValueError(f"invalid action {action!r}")
        self.step_count += 1
        self.state, terminated = transition(self.state, action)
        self._sync()
        success = self.state.status == SUCCESS
        truncated = not terminated and self.step_count >= self.max_steps
        reward = self.success_reward if success else 0.0
        return self.gen_obs(), reward, terminated, truncated, self._info()

    def gen_obs(self) -> dict:
        state = self.state
        image = self._static.copy()
        for color, cell in KEYS.items():
            if state.carrying != color:
                image[cell] = (OBJECT_TO_IDX["key"], COLOR_TO_IDX[color], 0)
        door_state = {LOCKED: "locked", OPEN: "open", CLOSED: "closed"}[state.door]
        image[DOOR] = (OBJECT_TO_IDX["door"], COLOR_TO_IDX["red"], STATE_TO_IDX[door_state])
        image[state.pos] = (OBJECT_TO_IDX["agent"], COLOR_TO_IDX["red"], state.dir)
        carrying = 0 if state.carrying is None else 1 + COLOR_TO_IDX[state.carrying]
        return {"image": image, "direction": state.dir, "carrying": carrying,
                "battery": BATTERY_LEVELS.index(state.battery)}

    def _info(self) -> dict:
        return {"is_success": self.state.status == SUCCESS}


def _holding(color: str):
    return lambda s: s.carrying == color


# F(s, f) for the Household models of Appendix H.1/H.2, plus atoms a fuller model could use.
HOUSEHOLD_LABELER = Labeler.from_table("household", {
    "(at-starting-room)": lambda s: s.pos in START_ROOM,
    "(has-key)": lambda s: s.carrying is not None,
    **{f"(holding {color})": _holding(color) for color in KEYS},
    "(charged)": lambda s: s.battery == FULL,
    "(door-open)": lambda s: s.door == OPEN,
    "(door-ajar)": lambda s: s.pos == DOOR and s.door == OPEN,
    "(at-final-room)": lambda s: s.pos in FINAL_ROOM,
    "(at-destination)": lambda s: s.pos == GOAL,
    "(at-dock)": lambda s: s.pos == DOCK,
    "(battery-empty)": lambda s: s.battery == EMPTY,
    "(door-locked)": lambda s: s.door == LOCKED,
}, monotone=("(has-key)", *(f"(holding {c})" for c in KEYS), "(charged)", "(at-destination)",
             "(battery-empty)"))

# The paper's intended route: red key, dock, door, through it, destination.
HOUSEHOLD_SOLVER = StagedSolver((
    Stage("red key, not yet charged", lambda s: s.carrying == RIGHT_KEY and s.battery == LOW),
    Stage("charged at the dock", lambda s: s.battery == FULL),
    Stage("door unlocked", lambda s: s.door == OPEN and s.status == RUNNING),
    Stage("in the final room", lambda s: s.pos in FINAL_ROOM),
    Stage("at the destination", lambda s: s.status == SUCCESS),
))
