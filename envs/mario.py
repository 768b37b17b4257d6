"""Mario and Pixel-Mario: the official ASGRL grid Mario (8 x 11), exactly, as Gymnasium envs.

The map and rules follow the official ``env_mario.py`` with ``hard_exploration=True``
(see ``../shared/research/reference_code.md`` section 1.3). The dynamics are the pure
function ``transition(state, action)`` over the hashable ``MarioState``; the env classes add
observations, rewards, step limits and the official sticky ``info`` flags.
"""
from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from asg.envs.camera import RENDER_NOISES, CameraConfig, CameraLook, camera_image, draw_look
from asg.envs.labeling import Labeler
from asg.envs.solver import Stage, StagedSolver

HEIGHT, WIDTH = 8, 11
START = (1, 1)
DOOR = (1, 9)
KEY = (5, 1)
HIDDEN_KEY = (5, 3)
LADDER = ((2, 5), (3, 5), (4, 5), (5, 5))
TUBE = ((2, 7), (3, 7), (4, 7), (5, 7))
UPPER_ROW, BOTTOM_ROW = 1, 6
FLOOR = frozenset([(UPPER_ROW, c) for c in range(1, 9)] + [(BOTTOM_ROW, c) for c in range(1, 10)])
UP, DOWN, LEFT, RIGHT = 0, 1, 2, 3
MOVES = ((-1, 0), (1, 0), (0, -1), (0, 1))

# Cell ids of the official grid observation.
FLOOR_ID, AGENT_ID, WALL_ID, TUBE_ID, LADDER_ID, WORN_ID, HIDDEN_KEY_ID, KEY_ID, DOOR_ID = range(9)
DEAD_ID = 9  # only drawn by the official non-hard variant; kept so the id range matches
COLORS = np.array([
    (0, 0, 0), (214, 39, 40), (140, 86, 75), (99, 222, 99), (255, 221, 51),
    (255, 127, 14), (31, 119, 180), (148, 103, 189), (44, 160, 44), (127, 127, 127),
], dtype=np.uint8)  # one RGB colour per cell id

RUNNING, SUCCESS, FAILED = "running", "success", "failed"
_LADDER_INDEX = {cell: i for i, cell in enumerate(LADDER)}


@dataclass(frozen=True, slots=True)
class MarioState:
    """The full Markov state; hashable, so tabular learners key on it directly.

    ``worn[i]`` is True once the agent has left ladder cell ``LADDER[i]`` (rows 2..5).
    ``status`` is ``"running"``, ``"success"`` (door opened with both keys) or
    ``"failed"`` (an early stop: the door without both keys, or leaving the ladder back
    through the end it was entered while unused ladder cells remain).
    """

    pos: tuple[int, int] = START
    has_key: bool = False
    has_hidden_key: bool = False
    worn: tuple[bool, bool, bool, bool] = (False, False, False, False)
    status: str = RUNNING

    def __str__(self) -> str:
        worn = ",".join(str(LADDER[i][0]) for i, w in enumerate(self.worn) if w) or "none"
        return (f"mario pos={self.pos} key={int(self.has_key)} hidden_key={int(self.has_hidden_key)} "
                f"worn_ladder_rows={worn} status={self.status}")


def _cell_id(state: MarioState, cell: tuple[int, int]) -> int:
    """The id the official grid shows at ``cell`` (ignoring the agent)."""
    if cell in FLOOR:
        return FLOOR_ID
    if cell in _LADDER_INDEX:
        return WORN_ID if state.worn[_LADDER_INDEX[cell]] else LADDER_ID
    if cell in TUBE:
        return TUBE_ID
    if cell == KEY:
        return FLOOR_ID if state.has_key else KEY_ID
    if cell == HIDDEN_KEY:
        return FLOOR_ID if state.has_hidden_key else HIDDEN_KEY_ID
    if cell == DOOR:
        return DOOR_ID
    return WALL_ID


def _unused_ladder(state: MarioState, cell: tuple[int, int]) -> bool:
    return cell in _LADDER_INDEX and not state.worn[_LADDER_INDEX[cell]]


def transition(state: MarioState, action: int) -> tuple[MarioState, bool]:
    """The official hard-exploration rules: ``(next_state, terminated)``; terminal states absorb."""
    if state.status != RUNNING:
        return state, True
    (row, col), (d_row, d_col) = state.pos, MOVES[action]
    target = (row + d_row, col + d_col)
    kind = _cell_id(state, target)
    status, has_key, has_hidden = RUNNING, state.has_key, state.has_hidden_key
    if kind in (WALL_ID, WORN_ID):
        return state, False  # bump: a worn ladder cell is as solid as a wall
    if kind == TUBE_ID and action != DOWN:
        return state, False  # the tube only goes down
    if kind == FLOOR_ID:
        if state.pos in TUBE and action == UP:
            return state, False  # no climbing out of the tube's top
        below, above = (row + 1, col), (row - 1, col)
        if state.pos in _LADDER_INDEX and (
                (action == UP and _unused_ladder(state, below))
                or (action == DOWN and _unused_ladder(state, above))):
            status = FAILED  # stepped back off the ladder through the end it was entered
    elif kind == KEY_ID:
        has_key = True
    elif kind == HIDDEN_KEY_ID:
        has_hidden = True
    elif kind == DOOR_ID:
        status = SUCCESS if (has_key and has_hidden) else FAILED
    worn = state.worn
    if state.pos in _LADDER_INDEX:
        index = _LADDER_INDEX[state.pos]
        worn = worn[:index] + (True,) + worn[index + 1:]
    nxt = MarioState(target, has_key, has_hidden, worn, status)
    return nxt, status != RUNNING


_INITIAL_GRID = np.array([[_cell_id(MarioState(), (r, c)) for c in range(WIDTH)]
                          for r in range(HEIGHT)], dtype=np.int16)


def grid_ids(state: MarioState) -> np.ndarray:
    """The official observation: cell ids, shape (8, 11), agent drawn on top."""
    grid = _INITIAL_GRID.copy()
    if state.has_key:
        grid[KEY] = FLOOR_ID
    if state.has_hidden_key:
        grid[HIDDEN_KEY] = FLOOR_ID
    for cell, worn in zip(LADDER, state.worn):
        if worn:
            grid[cell] = WORN_ID
    grid[state.pos] = AGENT_ID
    return grid


def render_rgb(state: MarioState, cell_px: int) -> np.ndarray:
    """An RGB image of the grid, each cell a ``cell_px`` square: shape (8*px, 11*px, 3) uint8."""
    ids = grid_ids(state)
    return np.repeat(np.repeat(COLORS[ids], cell_px, axis=0), cell_px, axis=1)


_TERRAIN_GRID = _INITIAL_GRID.copy()
for _cell in (KEY, HIDDEN_KEY, DOOR, START):
    _TERRAIN_GRID[_cell] = FLOOR_ID  # under the sprites


def render_camera(state: MarioState, cell_px: int, look: CameraLook, rng: np.random.Generator,
                  cfg: CameraConfig) -> np.ndarray:
    """A camera frame of the grid (``asg.envs.camera``): terrain cells, then the door, the keys
    still lying there and the agent as jittered sprites; shape (8*px, 11*px, 3) uint8."""
    ids = _TERRAIN_GRID.copy()
    for cell, worn in zip(LADDER, state.worn):
        if worn:
            ids[cell] = WORN_ID
    sprites = [(*DOOR, COLORS[DOOR_ID])]
    if not state.has_key:
        sprites.append((*KEY, COLORS[KEY_ID]))
    if not state.has_hidden_key:
        sprites.append((*HIDDEN_KEY, COLORS[HIDDEN_KEY_ID]))
    sprites.append((*state.pos, COLORS[AGENT_ID]))
    return camera_image(COLORS[ids], sprites, cell_px, look, rng, cfg)


class MarioEnv(gym.Env):
    """Grid Mario of ASGRL (Guan et al. 2022, Sec. 5.2), the official map and rules exactly.

    ## Description
    An 8 x 11 grid (row 0 at the top). The agent starts at (1, 1) on the upper platform; the
    door is at (1, 9). A one-use ladder (cells (2..5, 5)) and a down-only tube (cells
    (2..5, 7)) lead to the bottom floor (row 6). The key is at (5, 1); a hidden key, absent
    from the symbolic model, is at (5, 3). The door opens only with both keys. Going down
    the ladder wears it out, which strands the agent on the bottom floor, so the only way
    to the door is: tube down, both keys, ladder up, door (34 moves at least)::

        ###########
        #A.......D#
        #####L#T###
        #####L#T###
        #####L#T###
        #k#h#L#T###
        #.........#
        ###########

    ## Actions
    ``Discrete(4)``: 0 up, 1 down, 2 left, 3 right. Stepping onto a key takes it. There is
    no pick-up action.

    ## Observation
    ``Box(0, 9, (88,), int16)``: the flattened official grid of cell ids (0 floor, 1 agent,
    2 wall, 3 tube, 4 ladder, 5 worn ladder, 6 hidden key, 7 key, 8 door, 9 unused).
    ``hashable_state()`` returns the equivalent ``MarioState`` (hashable, Markov).

    ## Rewards
    ``success_reward`` (default 1.0) when the door opens, else 0. The official code uses 0
    for ASGRL and the planning baselines (their reward comes from landmarks) and 1 for
    vanilla Q.

    ## Termination
    Terminated on success (door with both keys) and on the official early stops: the door
    without both keys; stepping off the ladder back through the end it was entered while
    unused ladder cells remain. A worn ladder cell blocks like a wall (no early stop).
    Truncated after ``max_steps`` steps (default 2000, the flat baselines' episode length;
    ASGRL learners pass their own budget, e.g. 4 landmarks x 701 steps).
    ``info`` carries ``is_success`` and the official sticky flags ``visited_ladder``,
    ``visited_tube``, ``picked_hidden_key``, ``picked_key``, ``visited_bottom`` (reached
    row 6), ``back_to_upper`` (entered row 1 from another row) and ``door_opened``.

    ## Registered ids
    ``asg/Mario-v0``. The env is deterministic; ``reset(seed=...)`` only seeds
    ``np_random`` for API conformance.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, max_steps: int = 2000, success_reward: float = 1.0,
                 render_mode: str | None = None, render_cell_px: int = 16) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be positive, got {max_steps}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"unsupported render_mode {render_mode!r}")
        self.max_steps = max_steps
        self.success_reward = float(success_reward)
        self.render_mode = render_mode
        self.render_cell_px = render_cell_px
        self.action_space = spaces.Discrete(4)
        self.observation_space = self._make_observation_space()
        self.state = MarioState()
        self.step_count = 0
        self.flags: dict[str, bool] = {}

    def _make_observation_space(self) -> spaces.Space:
        return spaces.Box(0, DEAD_ID, (HEIGHT * WIDTH,), np.int16)

    def _obs(self) -> np.ndarray:
        return grid_ids(self.state).reshape(-1)

    def _begin_episode(self) -> None:
        """Per-episode observation noise (none here; Pixel-Mario's camera draws its look)."""

    @staticmethod
    def transition(state: MarioState, action: int) -> tuple[MarioState, bool]:
        """Pure dynamics, ``(next_state, terminated)``; see module ``transition``."""
        return transition(state, action)

    def hashable_state(self) -> MarioState:
        """The current Markov state (frozen, hashable)."""
        return self.state

    def set_state(self, state: MarioState) -> np.ndarray:
        """Jump to ``state`` (tests, exploration); sticky flags restart from what it shows."""
        self.state = state
        self.flags = self._flags_of(state, None)
        return self._obs()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._begin_episode()
        self.step_count = 0
        obs = self.set_state(MarioState())
        return obs, self._info()

    def step(self, action):
        action = int(action)
        if not 0 <= action < self.action_space.n:  # Discrete.contains on an int, without its ~15 µs a step
            raise ValueError(f"invalid action {action!r}")
        previous = self.state
        self.state, terminated = transition(previous, action)
        self.step_count += 1
        for name, value in self._flags_of(self.state, previous).items():
            self.flags[name] = self.flags.get(name, False) or value
        success = self.state.status == SUCCESS
        reward = self.success_reward if success else 0.0
        truncated = not terminated and self.step_count >= self.max_steps
        return self._obs(), reward, terminated, truncated, self._info()

    @staticmethod
    def _flags_of(state: MarioState, previous: MarioState | None) -> dict[str, bool]:
        row = state.pos[0]
        return {
            "visited_ladder": state.pos in _LADDER_INDEX or any(state.worn),
            "visited_tube": state.pos in TUBE,
            "picked_hidden_key": state.has_hidden_key,
            "picked_key": state.has_key,
            "visited_bottom": row == BOTTOM_ROW,
            "back_to_upper": previous is not None and row == UPPER_ROW and previous.pos[0] != UPPER_ROW,
            "door_opened": state.status == SUCCESS,
        }

    def _info(self) -> dict:
        return {"is_success": self.state.status == SUCCESS, **self.flags}

    def render(self):
        if self.render_mode == "rgb_array":
            return render_rgb(self.state, self.render_cell_px)
        return None


class PixelMarioEnv(MarioEnv):
    """Pixel-Mario (ASGRL Appendix D/F.1): Mario's dynamics with an RGB image observation.

    ## Description
    Identical to ``MarioEnv`` (same map, rules, rewards, termination, ``hashable_state``
    and labeler); only the observation differs.

    ## Observation
    ``Box(0, 255, (8*obs_cell_px, 11*obs_cell_px, 3), uint8)`` (default 8, so 64 x 88 x 3).
    ``render_noise`` chooses how the grid is drawn:

    * ``"camera"`` (default): as a camera would see it (``asg.envs.camera``). Per episode a
      contrast gain, a brightness offset, a colour tint and a background texture; per frame the
      agent, the keys and the door are squares two pixels smaller than a cell, each shifted by up
      to ``camera.jitter_px`` pixels, plus Gaussian pixel noise. One grid state gives many images;
      the same ``reset(seed=)`` and actions give the same images.
    * ``"none"``: one flat colour per cell id, noise-free and one-to-one with the grid state (the
      official code resized a 20-pixel render to 84 x 84; whole-pixel cells keep every state's
      image distinct and need no resampling library). A table keyed on image bytes is then exactly
      tabular Mario.

    ## Registered ids
    ``asg/PixelMario-v0`` (camera noise; pass ``render_noise="none"`` to ``gym.make`` for the
    deterministic render).
    """

    def __init__(self, max_steps: int = 2000, success_reward: float = 1.0,
                 render_mode: str | None = None, render_cell_px: int = 16,
                 obs_cell_px: int = 8, render_noise: str = "camera",
                 camera: CameraConfig | None = None) -> None:
        if obs_cell_px < 1:
            raise ValueError(f"obs_cell_px must be positive, got {obs_cell_px}")
        if render_noise not in RENDER_NOISES:
            raise ValueError(f"render_noise must be one of {RENDER_NOISES}, got {render_noise!r}")
        self.obs_cell_px = obs_cell_px
        self.render_noise = render_noise
        self.camera = camera or CameraConfig()
        self._look: CameraLook | None = None
        super().__init__(max_steps, success_reward, render_mode, render_cell_px)

    def _make_observation_space(self) -> spaces.Space:
        shape = (HEIGHT * self.obs_cell_px, WIDTH * self.obs_cell_px, 3)
        return spaces.Box(0, 255, shape, np.uint8)

    def _begin_episode(self) -> None:
        if self.render_noise == "camera":
            shape = (HEIGHT * self.obs_cell_px, WIDTH * self.obs_cell_px)
            self._look = draw_look(self.np_random, shape, self.camera)

    def _obs(self) -> np.ndarray:
        if self.render_noise == "none":
            return render_rgb(self.state, self.obs_cell_px)
        if self._look is None:  # set_state before the first reset
            self._begin_episode()
        assert self._look is not None
        return render_camera(self.state, self.obs_cell_px, self._look, self.np_random, self.camera)


def _row(state: MarioState) -> int:
    return state.pos[0]


# F(s, f) for the Mario model of Appendix H.4, plus a few atoms a fuller model could use.
MARIO_LABELER = Labeler.from_table("mario", {
    "(at-upper-platform)": lambda s: _row(s) == UPPER_ROW,
    "(at-bottom)": lambda s: _row(s) == BOTTOM_ROW,
    "(has-key)": lambda s: s.has_key,
    "(at-upper-platform-with-key)": lambda s: _row(s) == UPPER_ROW and s.has_key,
    "(door-open)": lambda s: s.status == SUCCESS,
    "(has-hidden-key)": lambda s: s.has_hidden_key,
    "(in-tube)": lambda s: s.pos in TUBE,
    "(on-ladder)": lambda s: s.pos in _LADDER_INDEX,
    "(ladder-broken)": lambda s: any(s.worn),
}, monotone=("(has-key)", "(door-open)", "(has-hidden-key)", "(ladder-broken)"))

# Tube down, both keys, then up the ladder and through the door.
MARIO_SOLVER = StagedSolver((
    Stage("both keys, ladder unused",
          lambda s: s.has_key and s.has_hidden_key and not any(s.worn) and s.status == RUNNING),
    Stage("door opened", lambda s: s.status == SUCCESS),
))
