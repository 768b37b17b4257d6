"""MineCraft (ASGRL Sec. 5.2, Fig. 2a; after Andreas et al. 2017): make a ladder from wood.

The dynamics are the pure function ``transition(state, action, recipe)`` over the hashable
``MineCraftState``; ``MineCraftEnv`` adds observations, rewards and step limits.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from asg.envs.labeling import Labeler
from asg.envs.solver import Stage, StagedSolver

SIZE = 14
START = (6, 6)  # (row, col), row 0 at the top
WOOD = ((5, 6), (1, 1), (11, 2))  # nearest first
KILN, PLANK_SHOP, STICK_SHOP, LADDER_SHOP = (1, 12), (11, 12), (12, 12), (12, 1)
UP, DOWN, LEFT, RIGHT, USE = range(5)
MOVES = ((-1, 0), (1, 0), (0, -1), (0, 1))
FLOOR_ID, AGENT_ID, WALL_ID, WOOD_ID, KILN_ID, SPENT_KILN_ID, PLANK_ID, STICK_ID, LADDER_ID = range(9)
INVENTORY = ("raw_wood", "processed_wood", "planks", "sticks")
MAX_COUNT = 15
COLORS = np.array([
    (0, 0, 0), (214, 39, 40), (127, 127, 127), (140, 86, 75), (255, 127, 14),
    (120, 60, 10), (255, 221, 51), (188, 189, 34), (23, 190, 207),
], dtype=np.uint8)  # one RGB colour per cell id
ITEM_COLORS = np.array([(140, 86, 75), (222, 184, 135), (255, 221, 51), (188, 189, 34)], np.uint8)
RUNNING, SUCCESS = "running", "success"


@dataclass(frozen=True)
class Recipe:
    """Processed wood one plank and one stick cost (the model believes one piece makes both)."""

    plank_wood: int = 1
    stick_wood: int = 1

    def __post_init__(self) -> None:
        if self.plank_wood < 1 or self.stick_wood < 1:
            raise ValueError("a plank and a stick each cost at least one processed wood")
        if self.plank_wood + self.stick_wood > len(WOOD):
            raise ValueError(f"the map holds only {len(WOOD)} pieces of wood")


@dataclass(frozen=True, slots=True)
class MineCraftState:
    """The full Markov state; hashable. ``wood_left[i]``: wood still lies at ``WOOD[i]``."""

    pos: tuple[int, int] = START
    wood_left: tuple[bool, ...] = (True,) * len(WOOD)
    raw_wood: int = 0
    processed_wood: int = 0
    planks: int = 0
    sticks: int = 0
    kiln_used: bool = False
    status: str = RUNNING

    def __str__(self) -> str:
        return (f"minecraft pos={self.pos} wood_left={sum(self.wood_left)} raw={self.raw_wood} "
                f"processed={self.processed_wood} planks={self.planks} sticks={self.sticks} "
                f"kiln_used={int(self.kiln_used)} status={self.status}")


def _use(state: MineCraftState, recipe: Recipe) -> MineCraftState:
    pos = state.pos
    if pos in WOOD and state.wood_left[WOOD.index(pos)]:
        i = WOOD.index(pos)
        left = state.wood_left[:i] + (False,) + state.wood_left[i + 1:]
        return replace(state, wood_left=left, raw_wood=state.raw_wood + 1)
    if pos == KILN and not state.kiln_used and state.raw_wood > 0:
        # The kiln has fuel for one batch: it processes all the raw wood carried, once.
        return replace(state, raw_wood=0, processed_wood=state.processed_wood + state.raw_wood,
                       kiln_used=True)
    if pos == PLANK_SHOP and state.processed_wood >= recipe.plank_wood:
        return replace(state, processed_wood=state.processed_wood - recipe.plank_wood,
                       planks=state.planks + 1)
    if pos == STICK_SHOP and state.processed_wood >= recipe.stick_wood:
        return replace(state, processed_wood=state.processed_wood - recipe.stick_wood,
                       sticks=state.sticks + 1)
    if pos == LADDER_SHOP and state.planks and state.sticks:
        return replace(state, planks=state.planks - 1, sticks=state.sticks - 1, status=SUCCESS)
    return state


def transition(state: MineCraftState, action: int,
               recipe: Recipe = Recipe()) -> tuple[MineCraftState, bool]:
    """One step of the true dynamics: ``(next_state, terminated)``; the goal state absorbs."""
    if state.status != RUNNING:
        return state, True
    if action == USE:
        nxt = _use(state, recipe)
        return nxt, nxt.status != RUNNING
    d_row, d_col = MOVES[action]
    row, col = state.pos[0] + d_row, state.pos[1] + d_col
    if not (0 < row < SIZE - 1 and 0 < col < SIZE - 1):
        return state, False
    return replace(state, pos=(row, col)), False


def _initial_grid() -> np.ndarray:
    grid = np.full((SIZE, SIZE), WALL_ID, np.int16)
    grid[1:-1, 1:-1] = FLOOR_ID
    for cell in WOOD:
        grid[cell] = WOOD_ID
    for cell, cid in ((KILN, KILN_ID), (PLANK_SHOP, PLANK_ID), (STICK_SHOP, STICK_ID),
                      (LADDER_SHOP, LADDER_ID)):
        grid[cell] = cid
    return grid


_INITIAL_GRID = _initial_grid()


def grid_ids(state: MineCraftState) -> np.ndarray:
    """Cell ids, shape (14, 14), agent drawn on top."""
    grid = _INITIAL_GRID.copy()
    for cell, left in zip(WOOD, state.wood_left):
        if not left:
            grid[cell] = FLOOR_ID
    if state.kiln_used:
        grid[KILN] = SPENT_KILN_ID
    grid[state.pos] = AGENT_ID
    return grid


def render_rgb(state: MineCraftState, cell_px: int) -> np.ndarray:
    """The grid plus an inventory bar (one square per item): shape ((14+1)*px, 14*px, 3) uint8."""
    image = np.zeros((SIZE + 1, SIZE, 3), np.uint8)
    image[:SIZE] = COLORS[grid_ids(state)]
    items = [i for i, name in enumerate(INVENTORY) for _ in range(getattr(state, name))][:SIZE]
    for slot, item in enumerate(items):
        image[SIZE, slot] = ITEM_COLORS[item]
    return np.repeat(np.repeat(image, cell_px, axis=0), cell_px, axis=1)


class MineCraftEnv(gym.Env):
    """MineCraft ladder task of ASGRL (Guan et al. 2022, Fig. 2a), after Andreas et al. 2017.

    ## Description
    A 14 x 14 grid (a 12 x 12 room; row 0 at the top) with three pieces of raw wood and four
    workshops::

        ##############
        #w..........K#      K workshop 1 (kiln): processes raw wood
        #............#
        #............#
        #............#
        #.....w......#      w raw wood, at (5, 6), (1, 1), (11, 2)
        #.....A......#      A start (6, 6)
        #............#
        #............#
        #............#
        #............#
        #.w.........P#      P workshop 2: plank
        #L..........S#      S workshop 3: stick;  L workshop 4: ladder
        ##############

    A ladder needs a plank and a stick; a plank costs ``plank_wood`` processed wood and a
    stick ``stick_wood`` (default 1 each), so the real recipe needs two pieces of wood,
    while the model (Appendix H.3) believes one processed wood makes both. The kiln has fuel
    for one batch: the first ``use`` there with raw wood processes all the raw wood carried
    and the kiln is spent. So carrying a single piece to the kiln (the myopic
    ``get_processed_wood`` skill of Plan-HRL and Landmark-HRL) is a dead end; diverse skills
    that reach the kiln with different amounts of wood find the way (the paper's Sec. 5.2).
    Choices the paper leaves open, made here: the layout (sized so that a uniformly random
    policy makes the ladder in about 1% of 2000-step episodes), the one-batch kiln, ``use``
    acting on the agent's own cell, and no limit on what the agent carries.

    ## Actions
    ``Discrete(5)``: 0 up, 1 down, 2 left, 3 right, 4 use (collect wood / run a workshop).

    ## Observation
    ``Box(0, 15, (200,), int16)``: the 196 cell ids (0 floor, 1 agent, 2 wall, 3 wood, 4 kiln,
    5 spent kiln, 6 plank shop, 7 stick shop, 8 ladder shop) followed by the inventory
    counts raw wood, processed wood, planks, sticks. ``hashable_state()`` returns the
    equivalent ``MineCraftState``.

    ## Rewards
    ``success_reward`` (default 1.0) when the ladder is made, else 0.

    ## Termination
    Terminated when the ladder is made. Truncated after ``max_steps`` (default 2000).

    ## Registered ids
    ``asg/MineCraft-v0``. Deterministic; ``reset(seed=...)`` seeds ``np_random`` only.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, max_steps: int = 2000, success_reward: float = 1.0,
                 plank_wood: int = 1, stick_wood: int = 1,
                 render_mode: str | None = None, render_cell_px: int = 16) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be positive, got {max_steps}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"unsupported render_mode {render_mode!r}")
        self.recipe = Recipe(plank_wood, stick_wood)
        self.transition = partial(transition, recipe=self.recipe)
        self.max_steps = max_steps
        self.success_reward = float(success_reward)
        self.render_mode = render_mode
        self.render_cell_px = render_cell_px
        self.action_space = spaces.Discrete(5)
        self.observation_space = spaces.Box(0, MAX_COUNT, (SIZE * SIZE + len(INVENTORY),), np.int16)
        self.state = MineCraftState()
        self.step_count = 0

    def hashable_state(self) -> MineCraftState:
        """The current Markov state (frozen, hashable)."""
        return self.state

    def set_state(self, state: MineCraftState) -> np.ndarray:
        """Jump to ``state`` (tests, exploration); returns its observation."""
        self.state = state
        return self._obs()

    def _obs(self) -> np.ndarray:
        counts = [min(getattr(self.state, name), MAX_COUNT) for name in INVENTORY]
        return np.concatenate([grid_ids(self.state).reshape(-1), np.array(counts, np.int16)])

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.step_count = 0
        return self.set_state(MineCraftState()), self._info()

    def step(self, action):
        action = int(action)
        if not 0 <= action < self.action_space.n:  # Discrete.contains on an int, without its ~15 µs a step
            raise ValueError(f"invalid action {action!r}")
        self.state, terminated = self.transition(self.state, action)
        self.step_count += 1
        success = self.state.status == SUCCESS
        truncated = not terminated and self.step_count >= self.max_steps
        return self._obs(), self.success_reward if success else 0.0, terminated, truncated, self._info()

    def _info(self) -> dict:
        return {"is_success": self.state.status == SUCCESS}

    def render(self):
        if self.render_mode == "rgb_array":
            return render_rgb(self.state, self.render_cell_px)
        return None


# F(s, f) for the MineCraft model of Appendix H.3, plus atoms a fuller model could use.
MINECRAFT_LABELER = Labeler.from_table("minecraft", {
    "(at-starting-location)": lambda s: s.pos == START,
    "(wood-processed)": lambda s: s.processed_wood > 0,
    "(plank_made)": lambda s: s.planks > 0,
    "(stick_made)": lambda s: s.sticks > 0,
    "(ladder_made)": lambda s: s.status == SUCCESS,
    "(has-raw-wood)": lambda s: s.raw_wood > 0,
    "(has-two-raw-wood)": lambda s: s.raw_wood >= 2,
    "(kiln-used)": lambda s: s.kiln_used,
}, monotone=("(ladder_made)", "(kiln-used)"))

# Collect every piece of wood, process it all in one batch, plank, stick, ladder.
MINECRAFT_SOLVER = StagedSolver((
    Stage("all raw wood collected", lambda s: not any(s.wood_left) and not s.kiln_used),
    Stage("wood processed", lambda s: s.kiln_used),
    Stage("plank made", lambda s: s.planks > 0),
    Stage("stick made", lambda s: s.sticks > 0),
    Stage("ladder made", lambda s: s.status == SUCCESS),
))
