"""The Fetch 4-block, 2-zone goal environment of AlphaNPI-X (Section 3, Appendix C, D.1)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from asg.envs.fetch import goal_setter, labeler
from asg.envs.fetch.goal_setter import goals_reached
from asg.envs.fetch.initial_states import (
    TABLE,
    TRAINING,
    InitialStateConfig,
    Layout,
    LayoutError,
    clear_gripper,
    sample_layout,
)
from asg.envs.fetch.layout import EPSILON, GOAL_DIM, N_BLOCKS, OBS_DIM
from asg.envs.fetch.simulation import Simulation  # MuJoCo loads when one is built

INITIAL_STATES = {"training": TRAINING, "table": TABLE, "chained": replace(TABLE, p_chained=1.0),
                  "handoff": replace(TABLE, p_chained=1.0, chain_handoff=1.0),
                  "placing": replace(TABLE, p_chained=1.0, chain_place=1.0),
                  "other_zone": replace(TABLE, p_chained=1.0, chain_other_zone=1.0)}
ARM_SETTLE_STEPS = 3    # env steps for the arm to reach a random start (about 4 mm left)
BLOCK_SETTLE_STEPS = 2  # env steps for placed blocks and a grasp to come to rest
MAX_RESAMPLES = 200
T_ATOMIC = 50  # steps of one atomic program (the paper's T)
RESET_OPTIONS = {"program", "focus", "goal", "blocks", "gripper", "held", "sim_state"}


class FetchBlocksEnv(gym.Env):
    """Fetch arm, four indexed blocks (0, 1 orange; 2, 3 blue) and two zones (orange, blue).

    ## Description
    gymnasium-robotics' FetchPickAndPlace world (same robot, table, block size and mass,
    physics unchanged: 20 substeps of 0.002 s) with four blocks and two coloured zones on the
    table. Each episode pursues the goal of one atomic program (Stack_a_b, Move_To_Zone_b_Z),
    computed by the goal setter Θ from the initial state.

    ## Actions
    ``Box(-1, 1, (4,))``: gripper displacement (dx, dy, dz) times 0.05 m and the finger command.

    ## Observation
    A dict with ``observation`` (70: four block positions first, then gripper and velocities;
    the layout is in ``layout.py``), ``achieved_goal`` (12: the block positions) and
    ``desired_goal`` (12: the target of every block).

    ## Rewards
    ``compute_reward``: 0 when every block is within ε = 0.05 of its target, else -1
    (``reward_type="binary"`` gives the paper's 1/0). Vectorised over leading batch axes.

    ## Termination
    Never terminates (a goal task). Truncates after ``max_steps`` (T = 50, the length of an
    atomic program) steps since the last reset or :meth:`set_program`; ``None`` never truncates.

    ## Reset options
    ``program`` (atomic program name or index: its block is the focus block and its goal the
    episode goal; states are redrawn until its precondition holds), ``focus`` (block index),
    ``goal`` (12 values), ``blocks`` ((4, 3) resting positions) with optional ``gripper`` (3,)
    and ``held`` (that block starts grasped, at the gripper), or ``sim_state`` (a ``SimState``
    from ``env.sim.get_state()``).

    ## Registered ids
    ``asg/FetchBlocks-v0`` (the training distribution of Appendix D.1) and
    ``asg/FetchBlocksTable-v0`` (every block on the table: the evaluation distribution).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 25}

    def __init__(self, initial_state: str | InitialStateConfig = "training", reward_type: str = "sparse",
                 distance_threshold: float = EPSILON, max_steps: int | None = T_ATOMIC,
                 render_mode: str | None = None, width: int = 480, height: int = 480) -> None:
        if isinstance(initial_state, str):
            if initial_state not in INITIAL_STATES:
                raise ValueError(f"initial_state must be one of {sorted(INITIAL_STATES)}, got {initial_state!r}")
            initial_state = INITIAL_STATES[initial_state]
        if reward_type not in ("sparse", "binary"):
            raise ValueError(f"reward_type must be 'sparse' or 'binary', got {reward_type!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.base_config = initial_state
        self.config = initial_state
        self.reward_type = reward_type
        self.max_steps = max_steps
        self.elapsed = 0
        self.distance_threshold = float(distance_threshold)
        self.render_mode = render_mode
        self.width, self.height = width, height
        self.sim = Simulation()
        self.dt = self.sim.dt
        self.action_space = spaces.Box(-1.0, 1.0, shape=(4,), dtype=np.float32)
        box = lambda n: spaces.Box(-np.inf, np.inf, shape=(n,), dtype=np.float64)  # noqa: E731
        self.observation_space = spaces.Dict(
            {"observation": box(OBS_DIM), "achieved_goal": box(GOAL_DIM), "desired_goal": box(GOAL_DIM)})
        self.goal = np.zeros(GOAL_DIM)
        self.program: str | None = None
        self._renderer = None

    # -- GoalEnv ---------------------------------------------------------------------------
    def compute_reward(self, achieved_goal: np.ndarray, desired_goal: np.ndarray, info: Any) -> np.ndarray:
        """Sparse reward of (batches of) 12-d goals: every block within the threshold."""
        success = goals_reached(achieved_goal, desired_goal, self.distance_threshold)
        return success.astype(np.float64) - (1.0 if self.reward_type == "sparse" else 0.0)

    def compute_terminated(self, achieved_goal, desired_goal, info) -> bool:
        return False

    def compute_truncated(self, achieved_goal, desired_goal, info) -> bool:
        return False

    # -- Env -------------------------------------------------------------------------------
    def set_progress(self, progress: float) -> None:
        """Anneal the training distribution (Appendix D.1): 0 = as configured, 1 = all on the table."""
        self.config = self.base_config.annealed(progress)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - RESET_OPTIONS
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; known: {sorted(RESET_OPTIONS)}")
        program = options.get("program")
        program = None if program is None else goal_setter.atomic_name(program)
        if "sim_state" in options:
            self.sim.set_state(options["sim_state"])
            obs = self.sim.observe()
        elif "blocks" in options:
            self._build(self._given_layout(options))
            obs = self.sim.observe()
        else:
            if program is None and "goal" not in options and "focus" not in options:
                program = goal_setter.atomic_name(int(self.np_random.integers(len(goal_setter.atomic_programs()))))
            obs = self._sample_state(program, options.get("focus"))
        if "goal" in options:
            self.goal = np.asarray(options["goal"], dtype=np.float64).reshape(GOAL_DIM).copy()
            self.program = None
        else:
            if program is None:
                program = self._sample_program(obs)
            self.goal = goal_setter.goal(obs, program)
            self.program = program
        applicable = self.program is not None and goal_setter.applicable(obs, self.program)
        self.elapsed = 0
        return self._obs_dict(obs), {"program": self.program, "applicable": applicable}

    def step(self, action: np.ndarray):
        action = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0)
        if action.shape != (4,):
            raise ValueError(f"action must have shape (4,), got {action.shape}")
        self.sim.apply_action(action)
        obs = self.sim.observe()
        self.elapsed += 1
        success = bool(goals_reached(obs[:GOAL_DIM], self.goal, self.distance_threshold))
        reward = float(success) - (1.0 if self.reward_type == "sparse" else 0.0)  # = compute_reward
        truncated = self.max_steps is not None and self.elapsed >= self.max_steps
        return self._obs_dict(obs), reward, False, truncated, {"is_success": success}

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without render_mode='rgb_array'")
            return None
        if self._renderer is None:
            from gymnasium.envs.mujoco.mujoco_rendering import MujocoRenderer

            camera = {"distance": 1.1, "azimuth": 180.0, "elevation": -35.0,
                      "lookat": np.array([1.3, 0.75, 0.45])}
            self._renderer = MujocoRenderer(self.sim.model, self.sim.data, camera,
                                            width=self.width, height=self.height)
        self.sim.show_goal(self.goal)
        return self._renderer.render("rgb_array")

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    # -- helpers ---------------------------------------------------------------------------
    def set_program(self, program: str | int) -> tuple[dict[str, np.ndarray], bool]:
        """Pursue ``program`` from the current state without resetting (chaining programs).

        Returns the observation with the new goal Θ(s, program) and whether φ holds now.
        """
        obs = self.sim.observe()
        name = goal_setter.atomic_name(program)
        self.goal = goal_setter.goal(obs, name)
        self.program = name
        self.elapsed = 0
        return self._obs_dict(obs), goal_setter.applicable(obs, name)

    def observation(self) -> dict[str, np.ndarray]:
        """The current observation dict (no stepping)."""
        return self._obs_dict(self.sim.observe())

    def atoms(self):
        """The true symbolic atoms of the current state (see ``labeler.py``)."""
        return labeler.atoms(self.sim.observe())

    def _obs_dict(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        return {"observation": obs, "achieved_goal": obs[:GOAL_DIM].copy(), "desired_goal": self.goal.copy()}

    def _build(self, layout: Layout) -> None:
        self.sim.reset_home()
        if not np.allclose(layout.gripper, self.sim.home_grip):
            self.sim.move_gripper(layout.gripper, ARM_SETTLE_STEPS)
        self.sim.place_blocks(layout.blocks, layout.held)
        self.sim.settle(BLOCK_SETTLE_STEPS)

    def _given_layout(self, options: dict) -> Layout:
        blocks = np.asarray(options["blocks"], dtype=np.float64)
        if blocks.shape != (N_BLOCKS, 3):
            raise ValueError(f"blocks must have shape (4, 3), got {blocks.shape}")
        gripper = np.asarray(options.get("gripper", self.sim.home_grip), dtype=np.float64)
        held = options.get("held")
        if held is not None:
            if not 0 <= held < N_BLOCKS:
                raise ValueError(f"held must be a block index, got {held!r}")
            blocks = blocks.copy()
            blocks[held] = gripper  # the held block sits between the fingers
        return Layout(gripper, blocks, held)

    def _sample_state(self, program: str | None, focus: int | None) -> np.ndarray:
        if focus is None:
            focus = goal_setter.acting_block(program) if program else int(self.np_random.integers(N_BLOCKS))
        for _ in range(MAX_RESAMPLES):
            try:
                layout = self._sample_layout(focus, program)
            except LayoutError:  # a crowded draw found no free spot: draw again
                continue
            # φ is checked on the layout first: most rejections then cost no physics.
            if program is not None and not goal_setter.applicable_to_positions(layout.blocks, program):
                continue
            self._build(layout)
            obs = self.sim.observe()
            if program is None or goal_setter.applicable(obs, program):
                return obs
        raise RuntimeError(f"no initial state satisfies the precondition of {program} "
                           f"after {MAX_RESAMPLES} draws")

    def _sample_layout(self, focus: int, program: str | None) -> Layout:
        """D.1's layout or, with probability ``p_chained``, a chained start (``initial_states.py``)."""
        rng, config = self.np_random, self.config
        if config.p_chained == 0.0 or rng.uniform() >= config.p_chained:
            return sample_layout(rng, config, self.sim.home_grip, focus)
        layout = sample_layout(rng, config.annealed(1.0), self.sim.home_grip, focus)  # every block on the table
        if program is not None:
            calls = goal_setter.setting_calls(program, rng, config.tower_weights, config.chain_other_zone)
        else:
            calls = goal_setter.random_calls(layout.blocks, int(rng.integers(1, config.max_chain + 1)), rng)
        blocks = goal_setter.chain(layout.blocks, calls, rng, config.chain_jitter)
        placing = program is not None and config.chain_place > 0.0 and (
            config.place_family is None or program.startswith(config.place_family))
        if placing and rng.uniform() < config.chain_place:
            target = goal_setter.goal_positions(blocks, program)[focus]  # the program's block held above it
            grip = target + np.array([*rng.uniform(-config.chain_jitter, config.chain_jitter, 2),
                                      rng.uniform(*config.place_height)])
            blocks[focus] = grip
            return Layout(grip, blocks, focus)
        if calls and config.chain_handoff > 0.0 and rng.uniform() < config.chain_handoff:
            last = goal_setter.acting_block(calls[-1])  # the previous program ends holding its block
            return Layout(blocks[last].copy(), blocks, last)
        return Layout(clear_gripper(layout.gripper, blocks), blocks, None)

    def _sample_program(self, obs: np.ndarray) -> str:
        """A uniformly drawn atomic program applicable in ``obs``."""
        names = [p for p in goal_setter.atomic_programs() if goal_setter.applicable(obs, p)]
        if not names:  # cannot happen with 4 blocks and 2 zones, but fail loudly if it does
            raise RuntimeError("no atomic program is applicable in the initial state")
        return names[int(self.np_random.integers(len(names)))]

